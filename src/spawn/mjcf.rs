//! MJCF/MjSpec helpers shared by build-phase plugins: the built-in world definition, attaching a
//! child model (file or XML text) at a pose under a prefix.

use std::path::Path;

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::{Attach, MjsBody};

/// Half-extent of the built-in `empty_room` (m): the room spans ±[`EMPTY_ROOM_HALF`] in x and y.
pub const EMPTY_ROOM_HALF: f64 = 5.0;

/// The built-in `empty_room`: a checker ground plane named `floor`, an overhead light and four
/// 0.5 m walls enclosing a 10 m × 10 m room.
pub fn empty_room_xml() -> String {
    let h = EMPTY_ROOM_HALF;
    let t = 0.05; // wall half-thickness
    let z = 0.25; // wall half-height
    format!(
        r#"<mujoco model="empty_room">
  <asset>
    <texture name="checker" type="2d" builtin="checker" rgb1="0.82 0.82 0.82" rgb2="0.74 0.74 0.76" width="512" height="512"/>
    <material name="floor_mat" texture="checker" texrepeat="10 10" reflectance="0.1"/>
  </asset>
  <worldbody>
    <light name="ceiling_light" pos="0 0 6" dir="0 0 -1" directional="true" diffuse="0.7 0.7 0.7"/>
    <geom name="floor" type="plane" size="{h} {h} 0.1" material="floor_mat"/>
    <geom name="wall_north" type="box" pos="0 {yn} {z}" size="{l} {t} {z}" rgba="0.7 0.7 0.72 1"/>
    <geom name="wall_south" type="box" pos="0 {ys} {z}" size="{l} {t} {z}" rgba="0.7 0.7 0.72 1"/>
    <geom name="wall_east" type="box" pos="{yn} 0 {z}" size="{t} {l} {z}" rgba="0.7 0.7 0.72 1"/>
    <geom name="wall_west" type="box" pos="{ys} 0 {z}" size="{t} {l} {z}" rgba="0.7 0.7 0.72 1"/>
  </worldbody>
</mujoco>"#,
        yn = h + t,
        ys = -(h + t),
        l = h + 2.0 * t,
    )
}

/// An empty spec (for worlds whose ground comes from a plugin).
pub fn empty_spec_xml() -> &'static str {
    "<mujoco model=\"roqsim\"><worldbody/></mujoco>"
}

/// Load a child spec from a file (`.xml`) or MJCF text.
pub fn child_spec_from_file(path: &Path) -> Result<MjSpec, String> {
    MjSpec::from_xml(path).map_err(|e| format!("cannot load MJCF `{}`: {e}", path.display()))
}

/// Load a child spec from MJCF text.
pub fn child_spec_from_str(xml: &str) -> Result<MjSpec, String> {
    MjSpec::from_xml_string(xml).map_err(|e| format!("invalid generated MJCF: {e}"))
}

/// Attach `child` (its whole world body) into `parent` under body `parent_body` (`None` = the
/// world body), through a new frame at `pos` / `quat` ([w, x, y, z]), with every name prefixed.
pub fn attach(
    parent: &mut MjSpec,
    parent_body: Option<&str>,
    child: &mut MjSpec,
    pos: [f64; 3],
    quat: [f64; 4],
    prefix: &str,
) -> Result<(), String> {
    let body: &mut MjsBody = match parent_body {
        None => parent.world_body_mut(),
        Some(name) => {
            parent.body_mut(name).ok_or_else(|| format!("no body `{name}` to attach to"))?
        }
    };
    let frame = body.add_frame().with_pos(pos).with_quat(quat);
    frame
        .attach_by_deep_copy(child, prefix, "")
        .map_err(|e| format!("attach failed (prefix `{prefix}`): {e}"))
}
