//! Navigation helpers movers share (ROS-free): local collision avoidance (`orca`).

pub mod orca;
