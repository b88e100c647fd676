//! URDF export of a spawned entity, read off the compiled model (`roqsim export urdf`).
//!
//! Every body of the entity (all of its file's top-level bodies, see `crate::model_import`)
//! becomes a link named as the model names it (the entity's prefix removed, so link names equal
//! the TF frames roqsim publishes); every hinge/slide joint a joint of the same name (the names
//! /joint_states reports). A root with a free joint is the fixed root (a floating base belongs in
//! TF, `odom → base_link`, not in the description); another top-level body hangs from the root by
//! a fixed joint at its compiled pose, except a free body (a prop in the file), which is left out.
//!
//! URDF puts a joint's rotation centre at its child link's origin; a MuJoCo joint may sit anywhere
//! in its body (`pos=`). The link frame is therefore the body frame moved to the joint anchor (same
//! orientation), and the inertial, visual and collision origins are shifted back by the anchor:
//! the link frame is where MuJoCo's `xanchor` is. For the common joint at the body origin the link
//! frame IS the body frame.
//!
//! Per joint: `revolute` (limited hinge) / `continuous` (unlimited) / `prismatic`, `axis` in the
//! link frame, `limit` lower/upper from the range, `effort` from the driving actuator's force range
//! times its gear (else the joint's actuator force range, else 0), `velocity` from a velocity
//! actuator's ctrlrange (else 0: the model states none). Inertials: mass, centre of mass and the
//! principal inertia with its rotation. Geometry: primitives (a capsule is written as the cylinder
//! of its segment; planes, ellipsoids and height fields are not written) and meshes as the model's
//! own mesh files with their scale, placed where MuJoCo places them ([`crate::export::mesh`]:
//! `package://roqsim/models/...` for a bundled model, else `file://`). Every named site
//! of the entity (vendor frames, sensor and tool frames: shell_link, imu_link, attachment_site)
//! becomes a fixed link.
//!
//! Refused: a body with more than one joint or with a ball joint (a URDF link has one 1-DoF joint).

use std::collections::BTreeMap;
use std::fmt::Write;

use mujoco_rs::mujoco_c::{mjtJoint, mjtTrn};
use mujoco_rs::prelude::*;

use crate::context::entities::{Entity, Pose};
use crate::export::mesh::{bundled_roots, mesh_geometry};
use crate::math::{arr3, quat as quat_of, relative, rpy_of, vec3};
use crate::plugins::shared::{entity_roots, in_entity, unprefixed};

fn origin(xyz: [f64; 3], quat: &[f64; 4]) -> String {
    let rpy = rpy_of(&quat_of(quat));
    format!(
        "<origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>",
        xyz[0], xyz[1], xyz[2], rpy[0], rpy[1], rpy[2]
    )
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One exported link's joint anchor (the link frame's offset in its body frame).
fn anchor(model: &MjModel, b: usize) -> [f64; 3] {
    let n = model.body_jntnum()[b] as usize;
    if n == 1 {
        let j = model.body_jntadr()[b] as usize;
        if matches!(model.jnt_type()[j], mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE) {
            return model.jnt_pos()[j];
        }
    }
    [0.0; 3]
}

/// The URDF of entity `entity` of the compiled `model` (see the module docs), joints named as the
/// model names them.
pub fn export_urdf(model: &MjModel, entity: &Entity) -> Result<String, String> {
    export_urdf_named(model, entity, &BTreeMap::new())
}

/// The URDF of entity `ent` as the world runs it: joints named as its controllers report them
/// (an `arm_controller`'s `joint_prefix`, recorded in the robot's controller registry), so the
/// description's joint names equal `/joint_states`.
pub fn export_for(ctx: &crate::context::SimContext, ent: &Entity) -> Result<String, String> {
    export_urdf_named(ctx.model(), ent, &reported_joint_names(ctx, &ent.name))
}

/// Model joint name -> reported name for entity `name` (empty when every joint is reported as the
/// model names it).
pub fn reported_joint_names(
    ctx: &crate::context::SimContext,
    name: &str,
) -> BTreeMap<String, String> {
    crate::handles::controllers::Registry::get(ctx, name)
        .map(|r| r.joint_names())
        .unwrap_or_default()
}

/// [`export_urdf`] with joints renamed by `joint_names` (model name, entity prefix removed ->
/// the URDF's name).
pub fn export_urdf_named(
    model: &MjModel,
    entity: &Entity,
    joint_names: &BTreeMap<String, String>,
) -> Result<String, String> {
    let roots = entity_roots(model, entity)?;
    let root = roots[0];
    let keep = exported_bodies(model, &roots);
    let roots_m = bundled_roots();
    let mut out = String::new();
    let _ = writeln!(out, "<?xml version=\"1.0\"?>");
    let _ = writeln!(
        out,
        "<!-- Exported by roqsim from the compiled model of entity `{}` (model `{}`). -->",
        xml_escape(&entity.name),
        xml_escape(&entity.model)
    );
    let _ = writeln!(out, "<robot name=\"{}\">", xml_escape(&entity.name.replace('.', "_")));
    for b in (1..keep.len()).filter(|&b| keep[b]) {
        write_link(&mut out, model, entity, b, &roots_m);
        if b != root {
            write_joint(&mut out, model, entity, b, root, &keep, joint_names)?;
        }
    }
    write_site_links(&mut out, model, entity, &keep);
    let _ = writeln!(out, "</robot>");
    Ok(out)
}

/// A body's link name: as the model names it without the entity's prefix (`body<id>` unnamed).
fn link_name(model: &MjModel, entity: &Entity, b: usize) -> String {
    let n = model.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("");
    if n.is_empty() {
        format!("body{b}")
    } else {
        unprefixed(n, &entity.prefix).to_string()
    }
}

/// Whether body `b` has a free joint.
fn has_free_joint(model: &MjModel, b: usize) -> bool {
    let (a, n) = (model.body_jntadr()[b] as usize, model.body_jntnum()[b] as usize);
    (a..a + n).any(|j| model.jnt_type()[j] == mjtJoint::mjJNT_FREE)
}

/// Exported bodies (indexed by body id, tree order): the entity's, minus free bodies other than
/// the root (and everything below them).
fn exported_bodies(model: &MjModel, roots: &[usize]) -> Vec<bool> {
    let nb = model.ffi().nbody as usize;
    let parent = model.body_parentid();
    let mut keep = vec![false; nb];
    for b in 1..nb {
        if !in_entity(model, b, roots) {
            continue;
        }
        let p = parent[b] as usize;
        keep[b] = if b == roots[0] {
            true
        } else if p == 0 || !in_entity(model, p, roots) {
            !has_free_joint(model, b)
        } else {
            keep[p] && !has_free_joint(model, b)
        };
    }
    keep
}

/// Body `b`'s `<link>`: its inertial and each of its geoms as a visual (groups 0-2) and/or a
/// collision (when it collides), origins relative to the link frame at the joint anchor.
fn write_link(
    out: &mut String,
    model: &MjModel,
    entity: &Entity,
    b: usize,
    roots_m: &[std::path::PathBuf],
) {
    let a = anchor(model, b);
    let _ = writeln!(out, "  <link name=\"{}\">", xml_escape(&link_name(model, entity, b)));
    let mass = model.body_mass()[b];
    if mass > 0.0 {
        let i = model.body_inertia()[b];
        let _ = writeln!(
            out,
            "    <inertial>{}<mass value=\"{mass}\"/><inertia ixx=\"{}\" ixy=\"0\" ixz=\"0\" iyy=\"{}\" iyz=\"0\" izz=\"{}\"/></inertial>",
            origin(sub(model.body_ipos()[b], a), &model.body_iquat()[b]),
            i[0],
            i[1],
            i[2]
        );
    }
    let ng = model.ffi().ngeom as usize;
    for g in (0..ng).filter(|&g| model.geom_bodyid()[g] as usize == b) {
        let s = model.geom_size()[g];
        let (shape, pos, quat) = match model.geom_type()[g] {
            MjtGeomBase::mjGEOM_BOX => (
                format!("<box size=\"{} {} {}\"/>", 2.0 * s[0], 2.0 * s[1], 2.0 * s[2]),
                model.geom_pos()[g],
                model.geom_quat()[g],
            ),
            MjtGeomBase::mjGEOM_SPHERE => (
                format!("<sphere radius=\"{}\"/>", s[0]),
                model.geom_pos()[g],
                model.geom_quat()[g],
            ),
            MjtGeomBase::mjGEOM_CYLINDER | MjtGeomBase::mjGEOM_CAPSULE => (
                format!("<cylinder radius=\"{}\" length=\"{}\"/>", s[0], 2.0 * s[1]),
                model.geom_pos()[g],
                model.geom_quat()[g],
            ),
            MjtGeomBase::mjGEOM_MESH => match mesh_geometry(model, g, roots_m) {
                Ok(m) => (m.element, m.frame.pos, m.frame.quat),
                Err(why) => {
                    let _ = writeln!(
                        out,
                        "    <!-- mesh geom {g} not written: {} -->",
                        xml_escape(&why).replace("--", "- -")
                    );
                    continue;
                }
            },
            _ => continue,
        };
        let o = origin(sub(pos, a), &quat);
        let gname = model.id_to_name(MjtObjBase::mjOBJ_GEOM, g).unwrap_or("");
        let nm = if gname.is_empty() {
            String::new()
        } else {
            format!(" name=\"{}\"", xml_escape(unprefixed(gname, &entity.prefix)))
        };
        if model.geom_group()[g] <= 2 {
            let _ = writeln!(out, "    <visual{nm}>{o}<geometry>{shape}</geometry></visual>");
        }
        if model.geom_contype()[g] != 0 || model.geom_conaffinity()[g] != 0 {
            let _ = writeln!(out, "    <collision{nm}>{o}<geometry>{shape}</geometry></collision>");
        }
    }
    let _ = writeln!(out, "  </link>");
}

/// The `<joint>` that hangs body `b` (not the root) from its parent link: `fixed` without a
/// joint (another top-level body: from the root at its compiled pose), else its one hinge or
/// slide joint, renamed by `joint_names`. Refused: more than one joint, or a ball joint.
fn write_joint(
    out: &mut String,
    model: &MjModel,
    entity: &Entity,
    b: usize,
    root: usize,
    keep: &[bool],
    joint_names: &BTreeMap<String, String>,
) -> Result<(), String> {
    let ln = link_name(model, entity, b);
    let a = anchor(model, b);
    let p = model.body_parentid()[b] as usize;
    let jn = model.body_jntnum()[b] as usize;
    let ja = model.body_jntadr()[b] as usize;
    if jn > 1 {
        return Err(format!(
            "body `{ln}` has {jn} joints; a URDF link has one joint: split the body in the model"
        ));
    }
    if jn == 1 && model.jnt_type()[ja] == mjtJoint::mjJNT_BALL {
        return Err(format!(
            "body `{ln}` has a ball joint, which URDF cannot express (its joints are 1-DoF)"
        ));
    }
    // The child link frame in the parent link frame.
    let (pname, o) = if p == 0 || !keep[p] {
        // Another top-level body: fixed to the root at its compiled pose.
        let root_pose = Pose { pos: model.body_pos()[root], quat: model.body_quat()[root] };
        let rel =
            relative(&root_pose, &Pose { pos: model.body_pos()[b], quat: model.body_quat()[b] });
        let at = vec3(&rel.pos) + quat_of(&rel.quat) * vec3(&a);
        (link_name(model, entity, root), (arr3(&at), rel.quat))
    } else {
        let ap = anchor(model, p);
        let q = model.body_quat()[b];
        let at = vec3(&model.body_pos()[b]) + quat_of(&q) * vec3(&a) - vec3(&ap);
        (link_name(model, entity, p), (arr3(&at), q))
    };
    let orig = origin(o.0, &o.1);
    if jn == 0 {
        let _ = writeln!(
            out,
            "  <joint name=\"{}_fixed\" type=\"fixed\"><parent link=\"{}\"/><child link=\"{}\"/>{orig}</joint>",
            xml_escape(&ln),
            xml_escape(&pname),
            xml_escape(&ln)
        );
        return Ok(());
    }
    let j = ja;
    let jname =
        unprefixed(model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or(""), &entity.prefix)
            .to_string();
    let jname = joint_names.get(&jname).cloned().unwrap_or(jname);
    let hinge = model.jnt_type()[j] == mjtJoint::mjJNT_HINGE;
    let limited = model.jnt_limited()[j];
    let kind = match (hinge, limited) {
        (true, true) => "revolute",
        (true, false) => "continuous",
        (false, _) => "prismatic",
    };
    let ax = model.jnt_axis()[j];
    let (effort, velocity) = joint_limits(model, j);
    let range = model.jnt_range()[j];
    let limit = if limited || !hinge {
        let (lo, hi) = if limited { (range[0], range[1]) } else { (0.0, 0.0) };
        format!(
            "<limit lower=\"{lo}\" upper=\"{hi}\" effort=\"{effort}\" velocity=\"{velocity}\"/>"
        )
    } else {
        format!("<limit effort=\"{effort}\" velocity=\"{velocity}\"/>")
    };
    let _ = writeln!(
        out,
        "  <joint name=\"{}\" type=\"{kind}\"><parent link=\"{}\"/><child link=\"{}\"/>{orig}<axis xyz=\"{} {} {}\"/>{limit}</joint>",
        xml_escape(&jname),
        xml_escape(&pname),
        xml_escape(&ln),
        ax[0],
        ax[1],
        ax[2]
    );
    Ok(())
}

/// Sites (vendor frames, sensor and tool frames: imu_link, attachment_site, ...): fixed links on
/// their body's link, unless a body already has the name.
fn write_site_links(out: &mut String, model: &MjModel, entity: &Entity, keep: &[bool]) {
    let links: std::collections::BTreeSet<String> =
        (1..keep.len()).filter(|&b| keep[b]).map(|b| link_name(model, entity, b)).collect();
    let ns = model.ffi().nsite as usize;
    for site in 0..ns {
        let b = model.site_bodyid()[site] as usize;
        let full = model.id_to_name(MjtObjBase::mjOBJ_SITE, site).unwrap_or("");
        let f = unprefixed(full, &entity.prefix);
        if full.is_empty() || b == 0 || !keep[b] || links.contains(f) {
            continue;
        }
        let a = anchor(model, b);
        let _ = writeln!(out, "  <link name=\"{}\"/>", xml_escape(f));
        let _ = writeln!(
            out,
            "  <joint name=\"{}_joint\" type=\"fixed\"><parent link=\"{}\"/><child link=\"{}\"/>{}</joint>",
            xml_escape(f),
            xml_escape(&link_name(model, entity, b)),
            xml_escape(f),
            origin(sub(model.site_pos()[site], a), &model.site_quat()[site])
        );
    }
}

/// `urdf` with the static frames the world's plugins publish in entity `ent`'s namespace appended
/// as fixed links: a mounted device's frames (`rplidar_link`), a frame a sensor plugin names itself
/// (the IMU's `imu_link`), camera optical frames. A frame joins under the link (or earlier frame) it
/// hangs from; one already a link, or hanging from nothing in the description, is left out. Read
/// after a reset (static frames are published then).
pub fn with_static_frames(ctx: &crate::context::SimContext, ent: &Entity, urdf: &str) -> String {
    let Ok((mut links, _)) = crate::spawn::urdf::tree(urdf) else { return urdf.to_string() };
    let mut frames: Vec<crate::context::payload::Transform> = Vec::new();
    for (id, ep) in ctx.interface.all().iter().enumerate() {
        if ep.get_hint("ros2", "tf") != Some("static") || ep.namespace != ent.namespace {
            continue;
        }
        if let Some((crate::context::payload::Payload::Transforms(v), _)) =
            ctx.interface.get(id).latest()
        {
            frames.extend(v.iter().cloned());
        }
    }
    let mut extra = String::new();
    loop {
        let before = links.len();
        for t in &frames {
            if links.contains(&t.child) || !links.contains(&t.parent) {
                continue;
            }
            let [x, y, z, w] = t.rotation;
            let _ = writeln!(extra, "  <link name=\"{}\"/>", xml_escape(&t.child));
            let _ = writeln!(
                extra,
                "  <joint name=\"{}_joint\" type=\"fixed\"><parent link=\"{}\"/><child link=\"{}\"/>{}</joint>",
                xml_escape(&t.child),
                xml_escape(&t.parent),
                xml_escape(&t.child),
                origin(t.translation, &[w, x, y, z])
            );
            links.push(t.child.clone());
        }
        if links.len() == before {
            break;
        }
    }
    match urdf.rfind("</robot>") {
        Some(i) if !extra.is_empty() => format!("{}{extra}{}", &urdf[..i], &urdf[i..]),
        _ => urdf.to_string(),
    }
}

/// The `robot_description` endpoint of one entity: its URDF ([`export_urdf`]) as a
/// `std_msgs/msg/String`, reliable and transient local (a late subscriber such as RViz's
/// RobotModel or move_group gets it), on `<namespace>/robot_description` as robot_state_publisher
/// publishes it. Register in `configure`; [`DescriptionPublisher::publish`] on every reset and on
/// the first step. Nothing is published (and the run log says why) when another robot or arm
/// shares the namespace (one topic cannot carry two descriptions), or when the model cannot be
/// expressed as a URDF.
#[derive(Debug, Clone, Default)]
pub struct DescriptionPublisher {
    endpoint: Option<crate::context::EndpointId>,
    urdf: String,
    /// The entity, when its description is the export (gains the static frames at the first step).
    exported: Option<String>,
    /// The entity, until the first publication (when every controller has configured: the
    /// export then takes the joint names they report, a URDF source is checked against them).
    pending: Option<String>,
}

impl DescriptionPublisher {
    /// Register the endpoint for entity `name` (see the type's docs).
    pub fn register(ctx: &mut crate::context::SimContext, name: &str) -> Self {
        use crate::context::entities::EntityKind;
        let Some(ent) = ctx.entities.get(name).cloned() else { return Self::default() };
        let shared: Vec<String> = ctx
            .entities
            .all()
            .iter()
            .filter(|e| e.name != ent.name && e.namespace == ent.namespace)
            .filter(|e| matches!(e.kind, EntityKind::Robot | EntityKind::Arm))
            .map(|e| e.name.clone())
            .collect();
        if !shared.is_empty() {
            crate::spawn::import::note(
                ctx,
                false,
                format!(
                    "robot_description: `{}` shares namespace `{}` with [{}]: no description is published there; give each robot its own namespace",
                    ent.name,
                    ent.namespace,
                    shared.join(", ")
                ),
            );
            return Self::default();
        }
        // A robot spawned from a URDF publishes that URDF (its names are the ones kept).
        let own =
            ctx.blackboard.get::<String>(&crate::spawn::urdf::source_key(&ent.name)).ok().cloned();
        let exported = own.is_none().then(|| ent.name.clone());
        let urdf = match own.map(Ok).unwrap_or_else(|| export_urdf(ctx.model(), &ent)) {
            Ok(u) => u,
            Err(e) => {
                crate::spawn::import::note(
                    ctx,
                    true,
                    format!("robot_description: `{}` is not published: {e}", ent.name),
                );
                return Self::default();
            }
        };
        let ep = crate::context::Endpoint::out("robot_description")
            .owner(Some(&ent.name))
            .namespace(&ent.namespace)
            .hint("ros2", "type", "std_msgs/msg/String")
            .hint("ros2", "qos", "transient_local");
        let id = ctx.interface.add(ep);
        DescriptionPublisher { endpoint: Some(id), urdf, exported, pending: Some(ent.name.clone()) }
    }

    /// Publish the description at the current tick. At the first step an exported description
    /// gains the static frames the world's plugins published at reset ([`with_static_frames`]).
    pub fn publish(&mut self, ctx: &mut crate::context::SimContext) {
        if let Some(name) = self.pending.take() {
            let names = reported_joint_names(ctx, &name);
            if let Some(ent) = ctx.entities.get(&name).cloned() {
                if self.exported.is_some() {
                    if let Ok(u) = export_urdf_named(ctx.model(), &ent, &names) {
                        self.urdf = u;
                    }
                } else if let Err(e) = check_joint_names(&self.urdf, &names) {
                    crate::spawn::import::note(
                        ctx,
                        true,
                        format!("robot_description: `{name}`: {e}"),
                    );
                }
            }
        }
        if ctx.tick == 1 {
            if let Some(name) = self.exported.take() {
                if let Some(ent) = ctx.entities.get(&name).cloned() {
                    self.urdf = with_static_frames(ctx, &ent, &self.urdf);
                }
            }
        }
        if let Some(id) = self.endpoint {
            let tick = ctx.tick;
            ctx.interface.publish(
                id,
                tick,
                crate::context::payload::Payload::String(self.urdf.clone()),
            );
        }
    }

    /// The URDF it carries (empty when nothing is published).
    pub fn urdf(&self) -> &str {
        &self.urdf
    }
}

/// Refuse a URDF (a robot's own description) whose joints a controller reports under other names
/// (`joint_names`: model name -> reported name): its joint names would not equal `/joint_states`.
pub fn check_joint_names(urdf: &str, joint_names: &BTreeMap<String, String>) -> Result<(), String> {
    let Some((m, r)) = joint_names.iter().find(|(m, r)| m != r) else { return Ok(()) };
    let (_, joints) = crate::spawn::urdf::tree(urdf)?;
    if joints.iter().any(|j| &j.name == r) {
        return Ok(());
    }
    Err(format!(
        "its URDF names joint `{m}`, which the arm controller reports as `{r}` (joint_prefix): a description spawned from a URDF keeps the URDF's joint names, so drop `joint_prefix` from its arm_controller"
    ))
}

/// `(effort, velocity)` of joint `j`: the driving actuators' force range times gear (N·m or N),
/// else the joint's actuator force range; a velocity actuator's ctrlrange (rad/s or m/s). 0 when
/// the model states none.
fn joint_limits(model: &MjModel, j: usize) -> (f64, f64) {
    let nu = model.ffi().nu as usize;
    let mut effort: f64 = 0.0;
    let mut velocity: f64 = 0.0;
    for a in 0..nu {
        let t = model.actuator_trntype()[a];
        if !(t == mjtTrn::mjTRN_JOINT || t == mjtTrn::mjTRN_JOINTINPARENT)
            || model.actuator_trnid()[a][0] as usize != j
        {
            continue;
        }
        let gear = model.actuator_gear()[a][0].abs();
        if model.actuator_forcelimited()[a] {
            let r = model.actuator_forcerange()[a];
            effort = effort.max(gear * r[0].abs().max(r[1].abs()));
        }
        let b = model.actuator_biasprm()[a];
        let g = model.actuator_gainprm()[a];
        let is_velocity = b[1] == 0.0 && b[2] != 0.0 && g[0] != 0.0;
        if is_velocity && model.actuator_ctrllimited()[a] && gear > 0.0 {
            let r = model.actuator_ctrlrange()[a];
            velocity = velocity.max(r[0].abs().max(r[1].abs()) / gear);
        }
    }
    if effort == 0.0 && model.jnt_actfrclimited()[j] {
        let r = model.jnt_actfrcrange()[j];
        effort = r[0].abs().max(r[1].abs());
    }
    (effort, velocity)
}
