//! Helpers every entity-owned plugin shares (no plugin lives here), one concept per file:
//! [`owner`] (the owning entity, endpoint scope, presence, the base-controller claim),
//! [`resolve`] (the entity's actuators, joints, bodies and sites by model name), [`joints`]
//! (joint_states), [`latest`] (a shared latest value), [`contact_watch`] (the geoms an observer
//! watches and its contact pass), [`report`] (an observer's report endpoint and publish), [`nav_goal`] (nav2 goals: result codes,
//! failures, world-frame goals), [`nav_grid`] (the planner grid movers share), and for the ray sensors [`scan`] (the per-ray
//! keys, their checks and the resolved values), [`ray_mount`] (the static mount transform) and
//! [`cloud`] (the 3D lidars' pattern and scanner) and [`cloud_lidar`] (the 3D lidar plugin and
//! its config, parameterised by a device's defaults table); for every sensor [`sensor_keys`]
//! (the shared key checks: non-negative noise, a ray sensor's site/frame/topics, the `fault:`
//! block's degraded values).
//! The first three are re-exported here.

pub mod cloud;
pub mod cloud_lidar;
pub mod contact_watch;
pub mod joints;
pub mod latest;
pub mod nav_goal;
pub mod nav_grid;
pub mod owner;
pub mod ray_mount;
pub mod report;
pub mod resolve;
pub mod scan;
pub mod sensor_keys;

pub use joints::*;
pub use owner::*;
pub use resolve::*;
