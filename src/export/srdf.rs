//! SRDF export of a spawned robot (`roqsim export srdf`), read off the compiled model and the
//! controllers the world declares, over the links of the robot's `robot_description` (the URDF it
//! was spawned from, else the URDF export), so every name matches it.
//!
//! - **groups**: one per `arm_controller` trajectory controller, named as the controller without
//!   its `_controller` suffix (`arm_controller` → `arm`): a `<chain>` from the parent link of its
//!   first joint to the child link of its last when those joints are exactly that chain's moving
//!   joints, else its `<joint>`s; one per gripper controller (`gripper`: the gripper joint and every
//!   link below the arm's tip), with an `<end_effector>` on the arm's tip link;
//! - **group_states**: `home` (the posture the arm is reset to, as the arm controller holds it) and
//!   one per model keyframe (its written name);
//! - **virtual_joint**: a base on a free joint gets a `planar` one from `odom` (the floating base
//!   TF carries); a welded base gets none (MoveIt's spelling of a bolted-down robot);
//! - **disable_collisions**, with the reasons and order of the MoveIt setup assistant: `Adjacent`
//!   (links joined by a joint, also through a link without collision geometry), `Default` (in
//!   collision at home), `Always` (in collision in at least 95% of the samples) and `Never` (in
//!   collision in none of the samples). Collision is geometric (`mj_geomDistance` < 0 between the
//!   links' collision geoms, whatever their contype/conaffinity), as the assistant's checker sees
//!   the URDF's geometry; the samples draw every moving joint of the robot uniformly inside its
//!   range (an unlimited one in [-π, π]) from a seeded generator, so the file is the same every run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use mujoco_rs::mujoco_c::{mj_geomDistance, mjtJoint};
use mujoco_rs::prelude::*;

use crate::context::entities::Entity;
use crate::context::SimContext;
use crate::plugins::shared::{entity_roots, in_entity, unprefixed};
use crate::spawn::urdf::UrdfJoint;

/// The MoveIt setup assistant's default number of random configurations sampled.
pub const DEFAULT_SAMPLES: usize = 10_000;
/// Most random configurations `--samples` may ask for: 100 times the default (a few minutes for
/// an arm; a larger count would run for days).
pub const MAX_SRDF_SAMPLES: usize = 1_000_000;

/// The share of samples in collision above which a pair is `Always` (the assistant's 95%).
pub const ALWAYS_FRACTION: f64 = 0.95;

/// One planning group of an arm controller.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmGroup {
    /// Group name.
    pub name: String,
    /// Controller it comes from.
    pub controller: String,
    /// Joints, controller order.
    pub joints: Vec<String>,
    /// Chain base link.
    pub base_link: String,
    /// Chain tip link: the child link of its last joint, or the `--tip-site` frame link fixed
    /// to it.
    pub tip_link: String,
    /// The child link of its last joint (where the gripper hangs).
    pub flange: String,
    /// True when written as a `<chain>`.
    pub chain: bool,
    /// Gripper controller and joint, when the arm has one.
    pub gripper: Option<(String, String)>,
}

/// The exported SRDF and what it was built from.
#[derive(Debug, Clone)]
pub struct Srdf {
    /// The SRDF text.
    pub text: String,
    /// The arm groups.
    pub groups: Vec<ArmGroup>,
    /// Disabled pairs `(link1, link2) -> reason` (link1 < link2).
    pub disabled: BTreeMap<(String, String), &'static str>,
    /// Random configurations sampled.
    pub samples: usize,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The URDF text an entity publishes as `robot_description`: the URDF it was spawned from, else
/// the export with its joints named as its controllers report them. Refused: a URDF source whose
/// joints a controller reports under other names (`joint_prefix`).
pub fn description(ctx: &SimContext, ent: &Entity) -> Result<String, String> {
    match ctx.blackboard.get::<String>(&crate::spawn::urdf::source_key(&ent.name)) {
        Ok(s) => {
            let names = crate::export::urdf::reported_joint_names(ctx, &ent.name);
            crate::export::urdf::check_joint_names(s, &names)?;
            Ok(s.clone())
        }
        Err(_) => crate::export::urdf::export_for(ctx, ent),
    }
}

fn pair(a: &str, b: &str) -> (String, String) {
    if a < b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// Small deterministic generator (SplitMix64) for the collision samples.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The arm groups of entity `ent` from its controller registry.
pub fn arm_groups(ctx: &mut SimContext, ent: &Entity, joints: &[UrdfJoint]) -> Vec<ArmGroup> {
    let reg = crate::handles::controllers::Registry::of(ctx, &ent.name);
    let specs = reg.declared_specs();
    let iface_joints = |s: &crate::handles::controllers::ControllerSpec| -> Vec<String> {
        s.command_interfaces
            .iter()
            .filter_map(|c| c.rsplit_once('/').map(|(j, _)| j.to_string()))
            .collect()
    };
    let grippers: Vec<(String, String)> = specs
        .iter()
        .filter(|s| s.type_name.ends_with("GripperActionController"))
        .filter_map(|s| iface_joints(s).first().map(|j| (s.name.clone(), j.clone())))
        .collect();
    let by_child: BTreeMap<&str, &UrdfJoint> =
        joints.iter().map(|j| (j.child.as_str(), j)).collect();
    let mut out = Vec::new();
    for s in specs.iter().filter(|s| s.type_name.ends_with("JointTrajectoryController")) {
        let js = iface_joints(s);
        let find = |n: &str| joints.iter().find(|j| j.name == n);
        let (Some(first), Some(last)) =
            (js.first().and_then(|n| find(n)), js.last().and_then(|n| find(n)))
        else {
            continue;
        };
        let base_link = first.parent.clone();
        let tip_link = last.child.clone();
        // The moving joints from the tip up to the base.
        let mut chain_joints = Vec::new();
        let mut l = tip_link.as_str();
        let mut reached = false;
        while let Some(j) = by_child.get(l) {
            if j.kind != "fixed" {
                chain_joints.push(j.name.clone());
            }
            l = j.parent.as_str();
            if l == base_link {
                reached = true;
                break;
            }
        }
        chain_joints.reverse();
        let chain = reached && chain_joints == js;
        let name =
            s.name.strip_suffix("_controller").filter(|n| !n.is_empty()).unwrap_or(s.name.as_str());
        // The gripper of this arm: one declared by the same plugin.
        let gripper = specs
            .iter()
            .filter(|g| g.owner == s.owner && g.type_name.ends_with("GripperActionController"))
            .find_map(|g| grippers.iter().find(|(n, _)| *n == g.name).cloned());
        out.push(ArmGroup {
            name: name.to_string(),
            controller: s.name.clone(),
            joints: js,
            base_link,
            flange: tip_link.clone(),
            tip_link,
            chain,
            gripper,
        });
    }
    out
}

/// Move the tip of the arm group whose last link `site` (a site's frame link) is fixed to onto
/// that frame. Refused, naming what is available: a site the robot's description lacks, one not
/// fixed to any arm group's last link.
fn set_tip_site(
    groups: &mut [ArmGroup],
    joints: &[UrdfJoint],
    sites: &[String],
    robot: &str,
    site: &str,
) -> Result<(), String> {
    if !sites.iter().any(|s| s == site) {
        return Err(format!(
            "--tip-site: robot `{robot}` has no site `{site}`; its sites: [{}]",
            sites.join(", ")
        ));
    }
    let by_child: BTreeMap<&str, &UrdfJoint> =
        joints.iter().map(|j| (j.child.as_str(), j)).collect();
    let mut claimed = false;
    for g in groups.iter_mut() {
        let mut l = site;
        loop {
            if l == g.flange {
                g.tip_link = site.to_string();
                claimed = true;
                break;
            }
            match by_child.get(l) {
                Some(j) if j.kind == "fixed" => l = j.parent.as_str(),
                _ => break,
            }
        }
    }
    if claimed {
        return Ok(());
    }
    let lasts: Vec<String> = groups.iter().map(|g| format!("{}: {}", g.name, g.flange)).collect();
    Err(format!(
        "--tip-site `{site}` is not fixed to the last link of an arm group ([{}]): a tip frame hangs from it through fixed joints only (a site on a finger moves with the gripper); its sites: [{}]",
        lasts.join(", "),
        sites.join(", ")
    ))
}

/// The entity's named sites that are links of its description (the URDF export writes each as a
/// fixed frame link), names as the description has them.
pub fn site_links(model: &MjModel, ent: &Entity, links: &[String]) -> Vec<String> {
    let Ok(roots) = entity_roots(model, ent) else { return Vec::new() };
    let body_links: BTreeSet<String> = (1..model.ffi().nbody as usize)
        .filter(|&b| in_entity(model, b, &roots))
        .map(|b| {
            unprefixed(model.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or(""), &ent.prefix)
                .to_string()
        })
        .collect();
    (0..model.ffi().nsite as usize)
        .filter(|&s| in_entity(model, model.site_bodyid()[s] as usize, &roots))
        .filter_map(|s| model.id_to_name(MjtObjBase::mjOBJ_SITE, s))
        .map(|n| unprefixed(n, &ent.prefix).to_string())
        .filter(|n| links.contains(n) && !body_links.contains(n))
        .collect()
}

/// The SRDF of entity `ent` (see the module docs), sampling `samples` configurations from `seed`;
/// `tip_site` names the site whose frame ends the arm chain (default: its last joint's link).
pub fn export_srdf(
    ctx: &mut SimContext,
    ent: &Entity,
    samples: usize,
    seed: u64,
    tip_site: Option<&str>,
) -> Result<Srdf, String> {
    let urdf = description(ctx, ent)?;
    let (links, joints) = crate::spawn::urdf::tree(&urdf)?;
    let mut groups = arm_groups(ctx, ent, &joints);
    if let Some(site) = tip_site {
        let sites = site_links(ctx.model(), ent, &links);
        set_tip_site(&mut groups, &joints, &sites, &ent.name, site)?;
    }
    let roots = entity_roots(ctx.model(), ent)?;
    let geoms = collision_links(ctx.model(), ent, &roots, &links);
    let mut disabled = adjacent_pairs(&geoms, &joints);
    sampled_disables(ctx, &roots, &geoms, samples, seed, &mut disabled);

    let mut out = String::new();
    let _ = writeln!(out, "<?xml version=\"1.0\"?>");
    let _ = writeln!(
        out,
        "<!-- Exported by roqsim from entity `{}` (model `{}`): disable_collisions from {samples} random configurations (seed {seed}), the MoveIt setup assistant's method. -->",
        esc(&ent.name),
        esc(&ent.model)
    );
    let robot = urdf_robot_name(&urdf).unwrap_or_else(|| ent.name.replace('.', "_"));
    let _ = writeln!(out, "<robot name=\"{}\">", esc(&robot));
    write_groups(&mut out, &groups, &joints);
    write_group_states(&mut out, ctx, ent, &groups);
    if ent.free_joint.is_some() {
        let root = links.first().cloned().unwrap_or_default();
        let _ = writeln!(
            out,
            "  <virtual_joint name=\"virtual_joint\" type=\"planar\" parent_frame=\"odom\" child_link=\"{}\"/>",
            esc(&root)
        );
    }
    for ((a, b), why) in &disabled {
        let _ = writeln!(
            out,
            "  <disable_collisions link1=\"{}\" link2=\"{}\" reason=\"{why}\"/>",
            esc(a),
            esc(b)
        );
    }
    let _ = writeln!(out, "</robot>");
    Ok(Srdf { text: out, groups, disabled, samples })
}

/// The entity's links (of its description) that have collision geometry, with their geoms.
fn collision_links(
    model: &MjModel,
    ent: &Entity,
    roots: &[usize],
    links: &[String],
) -> BTreeMap<String, Vec<usize>> {
    let mut geoms: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for b in (1..model.ffi().nbody as usize).filter(|&b| in_entity(model, b, roots)) {
        let full = model.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("");
        let n = unprefixed(full, &ent.prefix).to_string();
        if !links.contains(&n) {
            continue;
        }
        let gs: Vec<usize> = (0..model.ffi().ngeom as usize)
            .filter(|&g| model.geom_bodyid()[g] as usize == b)
            .filter(|&g| model.geom_contype()[g] != 0 || model.geom_conaffinity()[g] != 0)
            .collect();
        if !gs.is_empty() {
            geoms.insert(n, gs);
        }
    }
    geoms
}

/// The `Adjacent` pairs: colliding links joined by a joint, also through links without collision
/// geometry.
fn adjacent_pairs(
    geoms: &BTreeMap<String, Vec<usize>>,
    joints: &[UrdfJoint],
) -> BTreeMap<(String, String), &'static str> {
    let mut disabled = BTreeMap::new();
    let parent_of: BTreeMap<&str, &str> =
        joints.iter().map(|j| (j.child.as_str(), j.parent.as_str())).collect();
    for l in geoms.keys() {
        let mut p = parent_of.get(l.as_str()).copied();
        while let Some(pl) = p {
            if geoms.contains_key(pl) {
                disabled.entry(pair(l, pl)).or_insert("Adjacent");
                break;
            }
            p = parent_of.get(pl).copied();
        }
    }
    disabled
}

/// The `Default` (in collision at home), `Never` and `Always` pairs among the colliding links
/// not disabled yet, from `samples` configurations drawn from `seed` on a copy of the state.
fn sampled_disables(
    ctx: &SimContext,
    roots: &[usize],
    geoms: &BTreeMap<String, Vec<usize>>,
    samples: usize,
    seed: u64,
    disabled: &mut BTreeMap<(String, String), &'static str>,
) {
    let model = ctx.model();
    let colliding: Vec<&String> = geoms.keys().collect();
    let pairs: Vec<(String, String)> = colliding
        .iter()
        .enumerate()
        .flat_map(|(i, a)| colliding[i + 1..].iter().map(move |b| pair(a, b)))
        .filter(|p| !disabled.contains_key(p))
        .collect();
    let mut d = ctx.data().clone();
    let m: *const mujoco_rs::mujoco_c::mjModel = model.ffi();
    let touch = |d: &mut MjData<_>, a: &str, b: &str| -> bool {
        for &g1 in &geoms[a] {
            for &g2 in &geoms[b] {
                let mut ft = [0.0; 6];
                // SAFETY: model and data are live and match; geom ids are in range; fromto is a
                // valid 6-array.
                let dist =
                    unsafe { mj_geomDistance(m, d.ffi_mut(), g1 as i32, g2 as i32, 0.01, &mut ft) };
                if dist < 0.0 {
                    return true;
                }
            }
        }
        false
    };
    // Default: in collision at home (the state after reset).
    d.kinematics();
    for p in &pairs {
        if touch(&mut d, &p.0, &p.1) {
            disabled.insert(p.clone(), "Default");
        }
    }
    let rest: Vec<(String, String)> =
        pairs.iter().filter(|p| !disabled.contains_key(*p)).cloned().collect();
    let moving: Vec<(usize, [f64; 2])> = (0..model.ffi().njnt as usize)
        .filter(|&j| matches!(model.jnt_type()[j], mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE))
        .filter(|&j| in_entity(model, model.jnt_bodyid()[j] as usize, roots))
        .map(|j| {
            let r = if model.jnt_limited()[j] {
                model.jnt_range()[j]
            } else {
                [-std::f64::consts::PI, std::f64::consts::PI]
            };
            (model.jnt_qposadr()[j] as usize, r)
        })
        .collect();
    let mut rng = Mix(seed);
    let mut hits = vec![0usize; rest.len()];
    for _ in 0..samples {
        for &(adr, r) in &moving {
            d.qpos_mut()[adr] = r[0] + (r[1] - r[0]) * rng.next();
        }
        d.kinematics();
        for (i, p) in rest.iter().enumerate() {
            if touch(&mut d, &p.0, &p.1) {
                hits[i] += 1;
            }
        }
    }
    for (p, &h) in rest.iter().zip(&hits) {
        if h == 0 {
            disabled.insert(p.clone(), "Never");
        } else if samples > 0 && h as f64 >= ALWAYS_FRACTION * samples as f64 {
            disabled.insert(p.clone(), "Always");
        }
    }
}

/// Each arm group (a `<chain>`, else its `<joint>`s) and its gripper group: the gripper joint and
/// the links below the arm's last link, except the tip frame's path to it (those belong to the
/// arm's chain).
fn write_groups(out: &mut String, groups: &[ArmGroup], joints: &[UrdfJoint]) {
    for g in groups {
        let _ = writeln!(out, "  <group name=\"{}\">", esc(&g.name));
        if g.chain {
            let _ = writeln!(
                out,
                "    <chain base_link=\"{}\" tip_link=\"{}\"/>",
                esc(&g.base_link),
                esc(&g.tip_link)
            );
        } else {
            for j in &g.joints {
                let _ = writeln!(out, "    <joint name=\"{}\"/>", esc(j));
            }
        }
        let _ = writeln!(out, "  </group>");
        if let Some((_, gj)) = &g.gripper {
            let gname = gripper_group(g);
            let _ = writeln!(out, "  <group name=\"{}\">", esc(&gname));
            let mut path: BTreeSet<String> = BTreeSet::new();
            let mut l = g.tip_link.as_str();
            while l != g.flange {
                path.insert(l.to_string());
                match joints.iter().find(|j| j.child == l) {
                    Some(j) => l = j.parent.as_str(),
                    None => break,
                }
            }
            for l in below(joints, &g.flange).into_iter().filter(|l| !path.contains(l)) {
                let _ = writeln!(out, "    <link name=\"{}\"/>", esc(&l));
            }
            let _ = writeln!(out, "    <joint name=\"{}\"/>", esc(gj));
            let _ = writeln!(out, "  </group>");
        }
    }
}

/// Each group's states (`home`, then every keyframe under its written name) and, for an arm with
/// a gripper, its `<end_effector>`.
fn write_group_states(out: &mut String, ctx: &SimContext, ent: &Entity, groups: &[ArmGroup]) {
    let home: Vec<(String, f64)> = ctx
        .blackboard
        .get::<Vec<(String, f64)>>(&crate::spawn::import::home_key(&ent.name))
        .cloned()
        .unwrap_or_default();
    let keys: Option<(String, crate::spawn::import::KeyframeMap)> = ctx
        .blackboard
        .get::<(String, crate::spawn::import::KeyframeMap)>(&crate::spawn::import::keyframes_key(
            &ent.name,
        ))
        .ok()
        .cloned();
    // Reported joint name (a controller's `joint_prefix`) -> model name.
    let model_names: BTreeMap<String, String> =
        crate::export::urdf::reported_joint_names(ctx, &ent.name)
            .into_iter()
            .map(|(m, r)| (r, m))
            .collect();
    let model_name =
        |j: &str| -> String { model_names.get(j).cloned().unwrap_or_else(|| j.to_string()) };
    let model = ctx.model();
    let data_q = ctx.data().qpos().to_vec();
    let qpos_of = |name: &str, src: &[f64]| -> Option<f64> {
        let name = model_name(name);
        let id = model.name_to_id(MjtObjBase::mjOBJ_JOINT, &format!("{}{name}", ent.prefix))?;
        src.get(model.jnt_qposadr()[id] as usize).copied()
    };
    let nq = model.ffi().nq as usize;
    for g in groups {
        let mut states: Vec<(String, Vec<f64>)> = Vec::new();
        // home: the posture the arm is reset to (its home vector applied, else qpos after reset).
        let hv: Vec<f64> = g
            .joints
            .iter()
            .map(|j| {
                home.iter()
                    .find(|(n, _)| *n == model_name(j))
                    .map(|(_, v)| *v)
                    .or_else(|| qpos_of(j, &data_q))
                    .unwrap_or(0.0)
            })
            .collect();
        states.push(("home".into(), hv));
        if let Some((prefix, km)) = &keys {
            for (written, renamed) in &km.keys {
                let Some(k) =
                    model.name_to_id(MjtObjBase::mjOBJ_KEY, &format!("{prefix}{renamed}"))
                else {
                    continue;
                };
                let kq = &model.key_qpos()[k * nq..(k + 1) * nq];
                let v: Vec<f64> = g.joints.iter().map(|j| qpos_of(j, kq).unwrap_or(0.0)).collect();
                let n = if written.is_empty() { renamed.clone() } else { written.clone() };
                if n != "home" {
                    states.push((n, v));
                }
            }
        }
        for (n, v) in states {
            let _ =
                writeln!(out, "  <group_state name=\"{}\" group=\"{}\">", esc(&n), esc(&g.name));
            for (j, q) in g.joints.iter().zip(v) {
                let _ = writeln!(out, "    <joint name=\"{}\" value=\"{q}\"/>", esc(j));
            }
            let _ = writeln!(out, "  </group_state>");
        }
        if g.gripper.is_some() {
            let _ = writeln!(
                out,
                "  <end_effector name=\"{}\" parent_link=\"{}\" group=\"{}\" parent_group=\"{}\"/>",
                esc(&format!("{}_ee", g.name)),
                esc(&g.tip_link),
                esc(&gripper_group(g)),
                esc(&g.name)
            );
        }
    }
}

/// The gripper group's name for an arm group (`gripper`, or `<arm>_gripper` for an arm not named
/// `arm`).
pub fn gripper_group(g: &ArmGroup) -> String {
    if g.name == "arm" {
        "gripper".into()
    } else {
        format!("{}_gripper", g.name)
    }
}

/// Every link below `link` (its descendants), file order of the joints.
fn below(joints: &[UrdfJoint], link: &str) -> Vec<String> {
    let mut set: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    let mut frontier = vec![link.to_string()];
    while let Some(l) = frontier.pop() {
        for j in joints.iter().filter(|j| j.parent == l) {
            if set.insert(j.child.clone()) {
                out.push(j.child.clone());
                frontier.push(j.child.clone());
            }
        }
    }
    out
}

fn urdf_robot_name(urdf: &str) -> Option<String> {
    let i = urdf.find("<robot")?;
    let rest = &urdf[i..];
    let end = rest.find('>')?;
    let tag = &rest[..end];
    let k = tag.find("name=")?;
    let q = tag[k + 5..].chars().next()?;
    let v = &tag[k + 6..];
    Some(v[..v.find(q)?].to_string())
}
