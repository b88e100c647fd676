//! Navigation inside the simulator, shared by every plugin that moves something by itself
//! (`navigator`, `walker`): the occupancy grid rasterised from the compiled model's static
//! geometry (`grid`), A* over it with line-of-sight smoothing (`astar`), and route geometry
//! on polylines — arc length, projection, the pure-pursuit carrot (`path`).
//!
//! Nothing here touches MuJoCo state after the grid is built: planning and tracking are plain
//! functions of the grid and the poses a plugin reads on the physics thread.

pub mod astar;
pub mod grid;
pub mod path;
