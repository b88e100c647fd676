//! roqsim_sensors: sensor devices and their capture plugins.

pub mod spawn_sensor;
