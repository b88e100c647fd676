//! The one camera vocabulary of the window and of `roqsim render`: `sim.view` (lookat, distance,
//! azimuth, elevation, track, follow_heading), resolved against a compiled model.
//!
//! Keys left out keep MuJoCo's default free camera (`mjv_defaultFreeCamera`): lookat the model's
//! `stat.center`, distance `1.5 × stat.extent`, azimuth and elevation from `<visual><global>`.
//! A resolved camera prints back in the same vocabulary ([`ViewCamera::to_view_arg`]), so a shot
//! is reproduced by passing that string to `--view`.

use mujoco_rs::mujoco_c::{mj_name2id, mjtObj};
use mujoco_rs::prelude::MjModel;

use crate::context::{Data, SimContext};
use crate::world::sim::View;

/// A `sim.view` with every value filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewCamera {
    /// World point looked at (m); with `track`, the offset from the tracked body's origin.
    pub lookat: [f64; 3],
    /// Distance from lookat (m).
    pub distance: f64,
    /// Azimuth (deg); with `follow_heading`, relative to the tracked entity's yaw.
    pub azimuth: f64,
    /// Elevation (deg).
    pub elevation: f64,
    /// The tracked entity, if any.
    pub track: Option<Track>,
}

/// A tracked entity: its name and its root body in the compiled model.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// Entity name (as `sim.view.track` gave it).
    pub entity: String,
    /// Root body id.
    pub body: usize,
    /// Turn with the entity's heading.
    pub follow_heading: bool,
}

/// Where the camera is this frame (tracking applied): what a renderer's free camera takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraPose {
    /// World point looked at (m).
    pub lookat: [f64; 3],
    /// Distance (m).
    pub distance: f64,
    /// Azimuth (deg).
    pub azimuth: f64,
    /// Elevation (deg).
    pub elevation: f64,
}

impl ViewCamera {
    /// Resolve `view` against the engine's model and entities. An unknown `track` entity is
    /// refused naming the key and the entities that exist.
    pub fn resolve(view: &View, ctx: &SimContext) -> Result<ViewCamera, String> {
        let m = ctx.model();
        let track = match &view.track {
            None => None,
            Some(name) => {
                let Some(e) = ctx.entities.get(name) else {
                    let mut known: Vec<&str> =
                        ctx.entities.all().iter().map(|e| e.name.as_str()).collect();
                    known.sort();
                    return Err(format!(
                        "sim.view.track: no entity `{name}` in this world (--view track=...); entities: {}",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ));
                };
                let body = body_id(m, &e.body).ok_or_else(|| {
                    format!(
                        "sim.view.track: entity `{name}` has no body `{}` in the compiled model",
                        e.body
                    )
                })?;
                Some(Track {
                    entity: name.clone(),
                    body,
                    follow_heading: view.follow_heading.unwrap_or(false),
                })
            }
        };
        let d = default_free_camera(m);
        let lookat = match (view.lookat, &track) {
            (Some(l), _) => l,
            (None, Some(_)) => [0.0; 3],
            (None, None) => d.lookat,
        };
        Ok(ViewCamera {
            lookat,
            distance: view.distance.unwrap_or(d.distance),
            azimuth: view.azimuth.unwrap_or(d.azimuth),
            elevation: view.elevation.unwrap_or(d.elevation),
            track,
        })
    }

    /// The camera this frame: a tracked body moves lookat (and, following its heading, turns the
    /// azimuth and the lookat offset with its yaw).
    pub fn pose(&self, data: &Data) -> CameraPose {
        let Some(t) = &self.track else {
            return CameraPose {
                lookat: self.lookat,
                distance: self.distance,
                azimuth: self.azimuth,
                elevation: self.elevation,
            };
        };
        let xpos = &data.xpos()[t.body];
        let (mut off, mut az) = (self.lookat, self.azimuth);
        if t.follow_heading {
            let q = &data.xquat()[t.body];
            let yaw = crate::math::yaw_of(&[q[0], q[1], q[2], q[3]]);
            let (s, c) = yaw.sin_cos();
            off = [c * off[0] - s * off[1], s * off[0] + c * off[1], off[2]];
            az += yaw.to_degrees();
        }
        CameraPose {
            lookat: [xpos[0] + off[0], xpos[1] + off[1], xpos[2] + off[2]],
            distance: self.distance,
            azimuth: az,
            elevation: self.elevation,
        }
    }

    /// The `--view` argument that reproduces this camera (Rust's shortest round-trip floats).
    pub fn to_view_arg(&self) -> String {
        let l = self.lookat;
        let mut s = format!(
            "lookat=[{},{},{}],distance={},azimuth={},elevation={}",
            l[0], l[1], l[2], self.distance, self.azimuth, self.elevation
        );
        if let Some(t) = &self.track {
            s.push_str(&format!(",track={},follow_heading={}", t.entity, t.follow_heading));
        }
        s
    }

    /// The same camera as a JSON object in `sim.view`'s keys.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "lookat": self.lookat,
            "distance": self.distance,
            "azimuth": self.azimuth,
            "elevation": self.elevation,
        });
        if let Some(t) = &self.track {
            v["track"] = serde_json::Value::String(t.entity.clone());
            v["follow_heading"] = serde_json::Value::Bool(t.follow_heading);
        }
        v
    }
}

/// MuJoCo's default free camera for `m` (the values `mjv_defaultFreeCamera` sets).
pub fn default_free_camera(m: &MjModel) -> CameraPose {
    let f = m.ffi();
    CameraPose {
        lookat: f.stat.center,
        distance: 1.5 * f.stat.extent,
        azimuth: f.vis.global.azimuth as f64,
        elevation: f.vis.global.elevation as f64,
    }
}

/// A body's id by (prefixed) name.
pub fn body_id(m: &MjModel, name: &str) -> Option<usize> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: a read-only name lookup in a valid compiled model with a NUL-terminated name.
    let id = unsafe { mj_name2id(m.ffi(), mjtObj::mjOBJ_BODY as i32, c.as_ptr()) };
    usize::try_from(id).ok()
}

/// Split a `--view` argument (`key=value,key=value`) into `(key, value)` pairs. Commas inside
/// brackets belong to the value (`lookat=[1,2,0]`).
pub fn split_view_arg(arg: &str) -> Result<Vec<(String, String)>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, ch) in arg.char_indices() {
        match ch {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&arg[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&arg[start..]);
    let mut out = Vec::new();
    for p in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = p.split_once('=') else {
            return Err(format!(
                "--view takes key=value pairs separated by commas (keys: lookat, distance, azimuth, \
                 elevation, track, follow_heading), got `{p}`"
            ));
        };
        let k = k.trim();
        if k.is_empty() || k.contains('.') {
            return Err(format!("--view: `{p}` has no plain key before `=`"));
        }
        out.push((k.to_string(), v.trim().to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_top_level_commas_only() {
        let p = split_view_arg("lookat=[1, 2.5,0],distance=3,track=robot").unwrap();
        assert_eq!(
            p,
            vec![
                ("lookat".to_string(), "[1, 2.5,0]".to_string()),
                ("distance".to_string(), "3".to_string()),
                ("track".to_string(), "robot".to_string())
            ]
        );
        assert!(split_view_arg("").unwrap().is_empty());
        assert_eq!(
            split_view_arg("azimuth").unwrap_err(),
            "--view takes key=value pairs separated by commas (keys: lookat, distance, azimuth, \
             elevation, track, follow_heading), got `azimuth`"
        );
    }
}
