//! Descriptions of spawned entities for other tools, read off the compiled model: the URDF
//! ([`urdf`], `roqsim export urdf`, and the `robot_description` topic).

pub mod urdf;
