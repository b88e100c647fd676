//! Cross-plugin handles: objects one plugin puts on the blackboard (or registers) in `configure`
//! and another plugin, the standalone driver or the ROS transport uses. They hold shared state on
//! the physics thread (`Rc<RefCell<..>>`), so cloning a handle shares it; no plugin imports
//! another plugin to reach one.
//!
//! - [`arm_command`]: an arm's command port, where a second command source (a Cartesian
//!   controller) hands joint targets to the arm's one actuator writer (`arm_command:<entity>`);
//! - [`robot`]: `RobotHandle`, a base controller's drive/odometry handle (`robot:<entity>`);
//! - [`controllers`]: the controller registry of one robot (ros2_control semantics), with
//!   [`controller_params`], the parameters each controller node declares;
//! - [`wrench`]: a force/torque sensor's `WrenchReader` (`ft:<label>`);
//! - [`override_switch`]: the SetBool switch a fault is driven by (endpoints, handle, verdict
//!   words), shared by [`sensor_fault`] and the `model_override` plugin;
//! - [`sensor_fault`]: a sensor's `fault:` block and its switch.

pub mod arm_command;
pub mod controller_params;
pub mod controllers;
pub mod override_switch;
pub mod robot;
pub mod sensor_fault;
pub mod wrench;
