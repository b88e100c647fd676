//! roqsim: a plugin-driven MuJoCo simulator (ROS-free core library).
