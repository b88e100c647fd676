//! Third-party models spawned as plain MuJoCo compiles them.
//!
//! A spawn plugin (`spawn_arm`, its `end_effector:`, `spawn_robot`) attaches a model file it did
//! not write: a Menagerie arm, a vendor gripper, a bimanual cell. What this module keeps from the
//! file, and why:
//! - **the root frames**: every top-level body keeps the pose the file gives it, and the spawn
//!   pose is the frame they are attached in ([`top_level_bodies`], [`resolved_quat`]), so an arm
//!   whose base the file turns by 180° still faces the way its authors built it;
//! - **every top-level body** belongs to the entity: the spawn records them all
//!   ([`ROOTS_META`]) and name resolution (`joints:`, `home:`, `ground_truth_pose`) walks all of
//!   them, not only the first;
//! - **keyframes**: MuJoCo carries an attached model's keyframes into the world, mapped onto its
//!   joints. Each is renamed to a unique name before the attach ([`KeyframeMap`]) so it can be
//!   found after compile, and the one named `home` (else the first) is the default home pose
//!   ([`KeyframeMap::home`]);
//! - **asset names**: an attach copies the model's meshes, materials and textures under the
//!   spawn's prefix; two models that both define `black` under the same (often empty) prefix
//!   would collide. [`prefix_colliding_assets`] renames only the child's meshes, materials,
//!   height fields and skins that would collide, with every reference to them, so entity and MJCF
//!   names stay as written;
//! - **`<option>`**: the world has one set of solver options (the `sim:` block) and an attach
//!   keeps the world's. Each option the file states that differs from what the world runs is
//!   warned once, naming the `sim.` key that restores it ([`StatedOptions`]). The file's
//!   `<compiler>` settings need no warning: MuJoCo applies them to the attached model's own
//!   elements (its masses compile the same attached as alone).
//!
//! Notes (the home keyframe used, option differences) are logged and collected on the blackboard
//! under [`NOTES_KEY`] ([`ImportNotes`]) so a run record or a test can read them.

use std::collections::BTreeSet;

use mujoco_rs::mujoco_c::{mjOption, mjs_resolveOrientation, mjtJoint};
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::{MjsBody, MjtOrientation, SpecItem};

use crate::context::SimContext;

/// Entity meta key listing every top-level body of the spawned file (prefixed, comma-separated).
pub const ROOTS_META: &str = "roots";

/// Blackboard key of the [`ImportNotes`].
pub const NOTES_KEY: &str = "model_import_notes";

/// Notes collected while importing models (each also logged once).
#[derive(Debug, Clone, Default)]
pub struct ImportNotes {
    /// The notes, in the order they were made.
    pub lines: Vec<String>,
}

/// Log `msg` (warning or info) once per run and keep it in the [`ImportNotes`].
pub fn note(ctx: &mut SimContext, warn: bool, msg: String) {
    if !ctx.blackboard.contains(NOTES_KEY) {
        ctx.blackboard.set(NOTES_KEY, ImportNotes::default());
    }
    let notes = ctx.blackboard.get_mut::<ImportNotes>(NOTES_KEY).expect("just set");
    if notes.lines.contains(&msg) {
        return;
    }
    if warn {
        tracing::warn!("{msg}");
    } else {
        tracing::info!("{msg}");
    }
    notes.lines.push(msg);
}

/// Names of the bodies directly under a spec's world body, in file order (unnamed ones skipped).
pub fn top_level_bodies(spec: &MjSpec) -> Vec<String> {
    spec.world_body()
        .body_iter(false)
        .map(|b| b.name().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// A body's orientation as a quaternion `[w, x, y, z]`, resolving an alternative the file used
/// (`euler`, `axisangle`, `xyaxes`, `zaxis`) with the spec's own angle unit and Euler sequence.
pub fn resolved_quat(spec: &MjSpec, body: &MjsBody) -> [f64; 4] {
    let alt = body.alt();
    if alt.type_ == MjtOrientation::mjORIENTATION_QUAT {
        return *body.quat();
    }
    let c = spec.compiler();
    let mut q = [1.0, 0.0, 0.0, 0.0];
    // SAFETY: `q` is a valid 4-array, the sequence is the spec's 3-char array (read as 3 chars),
    // `alt` is the body's live orientation struct; MuJoCo only reads them.
    let err =
        unsafe { mjs_resolveOrientation(&mut q, c.degree() as u8, c.eulerseq().as_ptr(), alt) };
    if !err.is_null() {
        return *body.quat();
    }
    q
}

// ------------------------------------------------------------------------------------------
// keyframes
// ------------------------------------------------------------------------------------------

/// The keyframes of a model, renamed before its attach so they can be found after compile.
#[derive(Debug, Clone, Default)]
pub struct KeyframeMap {
    /// `(name as written, name in the child spec after renaming)`, file order.
    pub keys: Vec<(String, String)>,
}

impl KeyframeMap {
    /// Rename every keyframe of `child` to `<tag>key<i>` (unique across spawns when `tag` is the
    /// spawn's address), remembering the written name.
    pub fn rename(child: &mut MjSpec, tag: &str) -> Result<KeyframeMap, String> {
        let mut keys = Vec::new();
        for (i, k) in child.key_iter_mut().enumerate() {
            let written = k.name().to_string();
            let new = format!("{}__key{i}", tag.replace('.', "_"));
            k.set_name(&new).map_err(|e| format!("cannot rename keyframe `{written}`: {e}"))?;
            keys.push((written, new));
        }
        Ok(KeyframeMap { keys })
    }

    /// The default home: the keyframe named `home`, else the first. Returns its written name and
    /// `(qpos address, value)` for every hinge/slide joint in `joints` (compiled ids), read from
    /// the compiled keyframe (`prefix` is the attach prefix).
    pub fn home(
        &self,
        model: &MjModel,
        prefix: &str,
        joints: &[usize],
    ) -> Option<(String, Vec<(usize, f64)>)> {
        let (written, renamed) =
            self.keys.iter().find(|(w, _)| w == "home").or_else(|| self.keys.first())?;
        let k = model.name_to_id(MjtObjBase::mjOBJ_KEY, &format!("{prefix}{renamed}"))?;
        let nq = model.ffi().nq as usize;
        let kq = &model.key_qpos()[k * nq..(k + 1) * nq];
        let out = joints
            .iter()
            .filter(|&&j| {
                matches!(model.jnt_type()[j], mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE)
            })
            .map(|&j| {
                let adr = model.jnt_qposadr()[j] as usize;
                (adr, kq[adr])
            })
            .collect();
        Some((written.clone(), out))
    }
}

// ------------------------------------------------------------------------------------------
// asset names
// ------------------------------------------------------------------------------------------

/// Rename the assets of `child` (meshes, materials, height fields, skins) whose attached
/// name `<prefix><name>` already exists in `parent`, to `<tag><name>` (made unique), and point
/// every reference in `child` at the new name. Returns `(old, new)` per renamed asset. Bodies,
/// joints and every other name stay as written. Textures are not renamed (a material's texture
/// references cannot be read back through the spec API); a texture collision is refused by the
/// attach, whose message names the spawn's `prefix`.
pub fn prefix_colliding_assets(
    parent: &MjSpec,
    child: &mut MjSpec,
    prefix: &str,
    tag: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    taken.extend(parent.mesh_iter().map(|x| x.name().to_string()));
    taken.extend(parent.material_iter().map(|x| x.name().to_string()));
    taken.extend(parent.hfield_iter().map(|x| x.name().to_string()));
    taken.extend(parent.skin_iter().map(|x| x.name().to_string()));
    let tag = tag.replace('.', "_");
    let fresh = |old: &str, taken: &BTreeSet<String>| -> String {
        let mut n = format!("{tag}_{old}");
        let mut i = 2;
        while taken.contains(&format!("{prefix}{n}")) {
            n = format!("{tag}{i}_{old}");
            i += 1;
        }
        n
    };
    let mut mesh = Vec::new();
    let mut mat = Vec::new();
    let mut hf = Vec::new();
    let mut skin = Vec::new();
    macro_rules! rename_kind {
        ($iter:ident, $out:ident) => {
            for x in child.$iter() {
                let old = x.name().to_string();
                if !old.is_empty() && taken.contains(&format!("{prefix}{old}")) {
                    let new = fresh(&old, &taken);
                    taken.insert(format!("{prefix}{new}"));
                    x.set_name(&new).map_err(|e| format!("cannot rename asset `{old}`: {e}"))?;
                    $out.push((old, new));
                }
            }
        };
    }
    rename_kind!(mesh_iter_mut, mesh);
    rename_kind!(material_iter_mut, mat);
    rename_kind!(hfield_iter_mut, hf);
    rename_kind!(skin_iter_mut, skin);
    let map = |v: &[(String, String)], s: &str| -> Option<String> {
        v.iter().find(|(o, _)| o == s).map(|(_, n)| n.clone())
    };
    for g in child.geom_iter_mut() {
        if let Some(n) = map(&mesh, g.meshname()) {
            g.set_meshname(&n);
        }
        if let Some(n) = map(&mat, g.material()) {
            g.set_material(&n);
        }
        if let Some(n) = map(&hf, g.hfieldname()) {
            g.set_hfieldname(&n);
        }
    }
    for s in child.site_iter_mut() {
        if let Some(n) = map(&mat, s.material()) {
            s.set_material(&n);
        }
        if let Some(n) = map(&mesh, s.meshname()) {
            s.set_meshname(&n);
        }
    }
    for t in child.tendon_iter_mut() {
        if let Some(n) = map(&mat, t.material()) {
            t.set_material(&n);
        }
    }
    for s in child.skin_iter_mut() {
        if let Some(n) = map(&mat, s.material()) {
            s.set_material(&n);
        }
    }
    let mut all = mesh;
    all.extend(mat);
    all.extend(hf);
    all.extend(skin);
    Ok(all)
}

// ------------------------------------------------------------------------------------------
// element names
// ------------------------------------------------------------------------------------------

fn element_names(spec: &MjSpec) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = Vec::new();
    v.extend(spec.world_body().body_iter(true).map(|x| ("body", x.name().to_string())));
    v.extend(spec.joint_iter().map(|x| ("joint", x.name().to_string())));
    v.extend(spec.geom_iter().map(|x| ("geom", x.name().to_string())));
    v.extend(spec.site_iter().map(|x| ("site", x.name().to_string())));
    v.extend(spec.camera_iter().map(|x| ("camera", x.name().to_string())));
    v.extend(spec.light_iter().map(|x| ("light", x.name().to_string())));
    v.extend(spec.actuator_iter().map(|x| ("actuator", x.name().to_string())));
    v.extend(spec.tendon_iter().map(|x| ("tendon", x.name().to_string())));
    v.extend(spec.sensor_iter().map(|x| ("sensor", x.name().to_string())));
    v.extend(spec.equality_iter().map(|x| ("equality", x.name().to_string())));
    v.retain(|(_, n)| !n.is_empty());
    v
}

/// The named elements of `child` whose attached name `<prefix><name>` already exists in `parent`
/// under the same kind (`body `base``, ...), in `child`'s order: an attach of them would fail (or
/// the compile would), so the caller refuses naming the key that separates them.
pub fn name_collisions(parent: &MjSpec, child: &MjSpec, prefix: &str) -> Vec<String> {
    let have: BTreeSet<(&'static str, String)> = element_names(parent).into_iter().collect();
    element_names(child)
        .into_iter()
        .filter(|(k, n)| have.contains(&(*k, format!("{prefix}{n}"))))
        .map(|(k, n)| format!("{k} `{prefix}{n}`"))
        .collect()
}

/// [`name_collisions`] as a refusal at `key`, listing at most eight.
pub fn check_name_collisions(
    parent: &MjSpec,
    child: &MjSpec,
    prefix: &str,
    key: &str,
    what: &str,
    example: &str,
) -> Result<(), String> {
    let c = name_collisions(parent, child, prefix);
    if c.is_empty() {
        return Ok(());
    }
    let more = if c.len() > 8 { format!(" and {} more", c.len() - 8) } else { String::new() };
    Err(format!(
        "{key}: {what}'s names collide with names already there: {}{more}; give it its own prefix (e.g. `{key}: {example}`)",
        c.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
    ))
}

// ------------------------------------------------------------------------------------------
// <option>
// ------------------------------------------------------------------------------------------

/// The `<option>` settings a model file states (MuJoCo's authored-field mask) with their values.
#[derive(Debug, Clone)]
pub struct StatedOptions {
    /// Which model (for the message).
    pub model: String,
    /// The file's option values.
    opt: mjOption,
    /// MuJoCo's authored bitmask over the mjOption fields.
    authored: u64,
}

// Bit positions of mjOption fields in the authored mask (MuJoCo's field order).
const BIT_TIMESTEP: u32 = 0;
const BIT_IMPRATIO: u32 = 1;
const BIT_GRAVITY: u32 = 7;
const BIT_WIND: u32 = 8;
const BIT_DENSITY: u32 = 10;
const BIT_VISCOSITY: u32 = 11;
const BIT_INTEGRATOR: u32 = 16;
const BIT_CONE: u32 = 17;
const BIT_SOLVER: u32 = 19;
const BIT_ITERATIONS: u32 = 20;
const BIT_LS_ITERATIONS: u32 = 21;
const BIT_NOSLIP_ITERATIONS: u32 = 22;

fn integrator_name(v: i32) -> &'static str {
    match v {
        0 => "euler",
        1 => "rk4",
        2 => "implicit",
        3 => "implicitfast",
        _ => "?",
    }
}

fn cone_name(v: i32) -> &'static str {
    match v {
        0 => "pyramidal",
        1 => "elliptic",
        _ => "?",
    }
}

fn solver_name(v: i32) -> &'static str {
    match v {
        0 => "pgs",
        1 => "cg",
        2 => "newton",
        _ => "?",
    }
}

fn vec3(v: &[f64; 3]) -> String {
    format!("[{}, {}, {}]", v[0], v[1], v[2])
}

impl StatedOptions {
    /// Read what `spec` (a freshly loaded model file) states in its `<option>`.
    pub fn of(spec: &MjSpec, model: &str) -> StatedOptions {
        let f = spec.ffi();
        StatedOptions {
            model: model.to_string(),
            opt: f.option.clone(),
            authored: f.authored.option,
        }
    }

    fn stated(&self, bit: u32) -> bool {
        self.authored & (1u64 << bit) != 0
    }

    /// Every stated setting that differs from `world` (the compiled model's options), as
    /// `(sim key, the file's value, the world's value)`, in MuJoCo's field order.
    pub fn differences(&self, world: &mjOption) -> Vec<(&'static str, String, String)> {
        let (f, w) = (&self.opt, world);
        let mut out = Vec::new();
        let mut num = |bit: u32, key: &'static str, a: f64, b: f64| {
            if self.stated(bit) && a != b {
                out.push((key, a.to_string(), b.to_string()));
            }
        };
        num(BIT_TIMESTEP, "timestep", f.timestep, w.timestep);
        num(BIT_IMPRATIO, "impratio", f.impratio, w.impratio);
        num(BIT_DENSITY, "density", f.density, w.density);
        num(BIT_VISCOSITY, "viscosity", f.viscosity, w.viscosity);
        for (bit, key, a, b) in
            [(BIT_GRAVITY, "gravity", &f.gravity, &w.gravity), (BIT_WIND, "wind", &f.wind, &w.wind)]
        {
            if self.stated(bit) && a != b {
                out.push((key, vec3(a), vec3(b)));
            }
        }
        let mut name = |bit: u32, key: &'static str, a: i32, b: i32, n: fn(i32) -> &'static str| {
            if self.stated(bit) && a != b {
                out.push((key, n(a).to_string(), n(b).to_string()));
            }
        };
        name(BIT_INTEGRATOR, "integrator", f.integrator, w.integrator, integrator_name);
        name(BIT_CONE, "cone", f.cone, w.cone, cone_name);
        name(BIT_SOLVER, "solver", f.solver, w.solver, solver_name);
        for (bit, key, a, b) in [
            (BIT_ITERATIONS, "iterations", f.iterations, w.iterations),
            (BIT_LS_ITERATIONS, "ls_iterations", f.ls_iterations, w.ls_iterations),
            (BIT_NOSLIP_ITERATIONS, "noslip_iterations", f.noslip_iterations, w.noslip_iterations),
        ] {
            if self.stated(bit) && a != b {
                out.push((key, a.to_string(), b.to_string()));
            }
        }
        out
    }

    /// Warn (once per model and key) about each stated setting the world does not run.
    pub fn warn_differences(&self, ctx: &mut SimContext) {
        let world = ctx.model().opt().clone();
        for (key, file, run) in self.differences(&world) {
            note(
                ctx,
                true,
                format!(
                    "model `{}` states <option {key}=\"{file}\"> but the world runs {key} = {run}: set `sim.{key}: {file}` to run it as its authors tuned it",
                    self.model
                ),
            );
        }
    }
}

/// Blackboard key of a spawned model's keyframes: `(attach prefix, KeyframeMap)`, for readers
/// after compile (the SRDF export's group states).
pub fn keyframes_key(entity: &str) -> String {
    format!("keyframes:{entity}")
}

/// Blackboard key of a spawned model's home vector (`Vec<(joint name unprefixed, angle)>`: the
/// `home:` a spawn states, else the model's keyframe), for in-process consumers (a custom plugin,
/// a test) that need the pose the robot or arm is reset to.
pub fn home_key(entity: &str) -> String {
    format!("arm_home:{entity}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"<mujoco><option cone="elliptic" impratio="10" integrator="RK4"/>
      <asset><material name="black" rgba="0 0 0 1"/><material name="tm" rgba="1 0 0 1"/></asset>
      <worldbody><body name="a" euler="0 0 90"><geom size="0.1" material="black"/></body>
        <body name="b" pos="1 0 0"><geom size="0.1" material="tm"/></body></worldbody>
      <keyframe><key name="other"/><key name="home"/></keyframe></mujoco>"#;

    #[test]
    fn roots_quat_and_stated_options() {
        let s = MjSpec::from_xml_string(TWO).unwrap();
        assert_eq!(top_level_bodies(&s), vec!["a".to_string(), "b".to_string()]);
        let q = resolved_quat(&s, s.body("a").unwrap());
        let h = std::f64::consts::FRAC_PI_4;
        assert!((q[0] - h.cos()).abs() < 1e-12 && (q[3] - h.sin()).abs() < 1e-12, "{q:?}");
        let st = StatedOptions::of(&s, "two");
        let mut world = s.ffi().option.clone();
        world.cone = 0;
        world.impratio = 1.0;
        world.integrator = 3;
        world.timestep = 0.001; // not stated: no difference reported
        let d = st.differences(&world);
        assert_eq!(
            d,
            vec![
                ("impratio", "10".to_string(), "1".to_string()),
                ("integrator", "rk4".to_string(), "implicitfast".to_string()),
                ("cone", "elliptic".to_string(), "pyramidal".to_string()),
            ]
        );
    }

    #[test]
    fn colliding_assets_are_renamed_with_their_references() {
        let parent = MjSpec::from_xml_string(TWO).unwrap();
        let mut child = MjSpec::from_xml_string(TWO).unwrap();
        let r = prefix_colliding_assets(&parent, &mut child, "", "grip").unwrap();
        assert_eq!(
            r,
            vec![
                ("black".to_string(), "grip_black".to_string()),
                ("tm".to_string(), "grip_tm".to_string()),
            ]
        );
        let mats: Vec<String> = child.geom_iter().map(|g| g.material().to_string()).collect();
        assert_eq!(mats, vec!["grip_black".to_string(), "grip_tm".to_string()]);
        // With a distinct prefix nothing collides and nothing is renamed.
        let mut c2 = MjSpec::from_xml_string(TWO).unwrap();
        assert!(prefix_colliding_assets(&parent, &mut c2, "g_", "grip").unwrap().is_empty());
    }

    #[test]
    fn keyframes_renamed_home_preferred() {
        let mut s = MjSpec::from_xml_string(TWO).unwrap();
        let k = KeyframeMap::rename(&mut s, "cell.arm").unwrap();
        assert_eq!(
            k.keys,
            vec![
                ("other".to_string(), "cell_arm__key0".to_string()),
                ("home".to_string(), "cell_arm__key1".to_string())
            ]
        );
    }
}
