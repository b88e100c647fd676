//! Descriptions of spawned entities for other tools, read off the compiled model: the URDF
//! ([`urdf`], `roqsim export urdf`, and the `robot_description` topic), the SRDF ([`srdf`],
//! `roqsim export srdf`) and the MoveIt configuration folder ([`moveit`], `roqsim export moveit`).

pub mod mesh;
pub mod moveit;
pub mod srdf;
pub mod urdf;
