//! `cartesian_admittance`: Cartesian end-effector control of an arm's site — the FZI
//! cartesian_controllers' three controllers (motion, force, compliance) as a second command
//! source of the arm.
//!
//! **The law** (world frame, per axis i of the twist [linear; angular], at `rate_hz`):
//! - `cartesian_motion_controller`: twist = kp ⊙ e, e the pose error (target − site position;
//!   the rotation vector from the site's orientation to the target's);
//! - `cartesian_force_controller`: M v̇ + D v = w_d − w, w the wrench the tool applies (the F/T
//!   reading, sign-corrected by the sensor's `invert` so it is the tool's action on what it
//!   touches, rotated into the world frame) — no stiffness, so no equilibrium but the wrench;
//! - `cartesian_compliance_controller`: M v̇ + D v = w_d − w + C ⊙ e; an axis with zero
//!   stiffness stays under pure force control while the others track the target.
//!
//! The twist is masked by `axes`, clamped to `max_linear_vel` / `max_angular_vel` (magnitudes;
//! the admittance state is clamped with it, so nothing winds up against the clamp), and turned
//! into joint velocities by damped least squares on the site's Jacobian
//! (`dq = Jᵀ (J Jᵀ + λ² I)⁻¹ v`, λ = `ik_damping`, [`crate::mujoco::jacobian`]); the joint
//! position targets integrate dq over the control period, clamped to the joint ranges.
//!
//! **The arm.** The plugin never writes ctrl: it attaches to the arm's command port
//! ([`crate::handles::arm_command`]) and `arm_controller`, the one writer, pulls its targets each
//! step while this controller is active. It declares its controller in the robot's registry
//! (type `cartesian_<type>_controller/Cartesian<Type>Controller`, claiming `<joint>/position` of
//! the arm's joints), so `list_controllers` shows it and one command source per arm holds: two
//! active at once are refused naming both, and a hand-over with the trajectory controller is a
//! `switch_controller` naming both. On activation it starts from the measured joints and the
//! site's current pose; deactivated, the arm holds the measured position.
//!
//! **Endpoints**, named as FZI's controllers name them under `<controller_name>/`:
//! `target_frame` (in, geometry_msgs/PoseStamped; motion and compliance), `target_wrench` (in,
//! geometry_msgs/WrenchStamped; force and compliance) and `current_pose` (out, PoseStamped in the
//! arm's base frame at `rate_hz`). A command overrides the configured default until a reset;
//! until one arrives the config stands (the target pose is where the site was at activation; a
//! command waiting at activation applies from it).
//! Frames: a command's `frame_id` is the arm's base frame (`base_link` for the ur5e, or empty)
//! or `world`; anything else is ignored with a warning. Blackboard: `cartesian:<entity>` (the
//! first such controller of the arm) and `cartesian:<entity>/<controller>` hold a
//! [`CartesianHandle`] with the same reach for an in-process task plugin.

use std::cell::RefCell;
use std::rc::Rc;

use crate::context::entities::Pose;
use crate::context::payload::{Payload, PoseTwist};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::HookResult;
use crate::handles::arm_command::{CommandPort, JointSource};
use crate::handles::controller_params::{ParamSpec, ParamValue};
use crate::handles::controllers::{ControllerSpec, Registry, State};
use crate::handles::wrench::{reader_key as ft_key, FtFrame, WrenchReader};
use crate::math::{
    arr3, compose, quat, quat_from_mat, relative, rotation_error, vec3, wxyz, wxyz_to_xyzw,
};
use crate::mujoco::jacobian::{damped_least_squares, site_jacobian};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

mod config;
mod law;

pub use config::*;
use law::*;

/// Blackboard key of an arm's (first) Cartesian handle.
pub fn handle_key(entity: &str) -> String {
    format!("cartesian:{entity}")
}

/// A pose: position (m) and orientation [w, x, y, z], world frame.
pub type WorldPose = ([f64; 3], [f64; 4]);

#[derive(Debug, Default)]
struct HandleState {
    target_frame: Option<WorldPose>,
    target_wrench: Option<[f64; 6]>,
    current: Option<WorldPose>,
}

/// In-process door onto a Cartesian controller (blackboard `cartesian:<entity>`): commands taken
/// at the next control update, as the endpoints' are.
#[derive(Debug, Clone, Default)]
pub struct CartesianHandle(Rc<RefCell<HandleState>>);

impl CartesianHandle {
    /// Track this world-frame pose (position m, orientation [w, x, y, z]).
    pub fn set_target_frame(&self, position: [f64; 3], orientation: [f64; 4]) {
        self.0.borrow_mut().target_frame = Some((position, orientation));
    }
    /// Apply this wrench [fx, fy, fz, tx, ty, tz] (N, N·m, world frame; what the tool applies).
    pub fn set_target_wrench(&self, wrench: [f64; 6]) {
        self.0.borrow_mut().target_wrench = Some(wrench);
    }
    /// The controlled site's world pose at the last control update (None before one).
    pub fn current_pose(&self) -> Option<WorldPose> {
        self.0.borrow().current
    }
}

/// The controller's state: the port's source, shared with the plugin.
#[derive(Debug)]
struct Core {
    name: String,
    address: String,
    kind: ControllerType,
    cfg: CartesianAdmittanceConfig,
    site: usize,
    qpos: Vec<usize>,
    dofs: Vec<usize>,
    ranges: Vec<Option<[f64; 2]>>,
    base_body: usize,
    base_name: String,
    reader: Option<WrenchReader>,
    ep_frame: Option<EndpointId>,
    ep_wrench: Option<EndpointId>,
    /// Physics steps per control update, and the control period (s).
    every: u64,
    dt_c: f64,
    started: bool,
    q_cmd: Vec<f64>,
    v: [f64; 6],
    target: Option<WorldPose>,
    wrench: [f64; 6],
    computed: Option<u64>,
    next: u64,
    warned: bool,
    handle: CartesianHandle,
}

impl Core {
    fn site_pose(&self, ctx: &SimContext) -> WorldPose {
        let d = ctx.data();
        (d.site_xpos()[self.site], quat_from_mat(&d.site_xmat()[self.site]))
    }

    fn base_pose(&self, ctx: &SimContext) -> WorldPose {
        let d = ctx.data();
        (d.xpos()[self.base_body], d.xquat()[self.base_body])
    }

    /// Whether a command in `frame` is in the base frame (`Some(true)`), the world
    /// (`Some(false)`), or neither (warned once).
    fn frame_of(&mut self, frame: &str, what: &str) -> Option<bool> {
        if frame.is_empty() || frame == self.base_name {
            Some(true)
        } else if frame == "world" {
            Some(false)
        } else {
            if !self.warned {
                self.warned = true;
                tracing::warn!(
                    "[{}] {}/{what} in frame `{frame}` ignored: give it in `{}` (the arm's base) or `world`",
                    self.address,
                    self.name,
                    self.base_name
                );
            }
            None
        }
    }

    /// Take the latest commands (endpoints, then the handle).
    fn poll(&mut self, ctx: &mut SimContext) {
        if let Some(id) = self.ep_frame {
            match ctx.interface.take_latest(id) {
                Some(Payload::PoseTwist(p)) => {
                    if let Some(in_base) = self.frame_of(&p.frame_id, "target_frame") {
                        let o = p.orientation;
                        let given =
                            Pose { pos: p.position, quat: wxyz(&quat(&[o[3], o[0], o[1], o[2]])) };
                        let t = if in_base {
                            let (pos, quat) = self.base_pose(ctx);
                            compose(&Pose { pos, quat }, &given)
                        } else {
                            given
                        };
                        self.target = Some((t.pos, t.quat));
                    }
                }
                Some(other) => tracing::warn!(
                    "[{}] {}/target_frame: ignored a {} payload",
                    self.address,
                    self.name,
                    other.kind()
                ),
                None => {}
            }
        }
        if let Some(id) = self.ep_wrench {
            match ctx.interface.take_latest(id) {
                Some(Payload::Wrench(w)) => {
                    let all = w.force.iter().chain(&w.torque).all(|x| x.is_finite());
                    if !all {
                        tracing::warn!(
                            "[{}] {}/target_wrench: a non-finite wrench ignored",
                            self.address,
                            self.name
                        );
                    } else if let Some(in_base) = self.frame_of(&w.frame_id, "target_wrench") {
                        let (f, t) = if in_base {
                            let bq = quat(&self.base_pose(ctx).1);
                            (arr3(&(bq * vec3(&w.force))), arr3(&(bq * vec3(&w.torque))))
                        } else {
                            (w.force, w.torque)
                        };
                        self.wrench = [f[0], f[1], f[2], t[0], t[1], t[2]];
                    }
                }
                Some(other) => tracing::warn!(
                    "[{}] {}/target_wrench: ignored a {} payload",
                    self.address,
                    self.name,
                    other.kind()
                ),
                None => {}
            }
        }
        let mut h = self.handle.0.borrow_mut();
        if let Some(t) = h.target_frame.take() {
            self.target = Some(t);
        }
        if let Some(w) = h.target_wrench.take() {
            self.wrench = w;
        }
    }

    /// Start from the measured joints and the site where it is.
    fn start(&mut self, ctx: &SimContext) {
        let q = ctx.data().qpos();
        self.q_cmd = self.qpos.iter().map(|&a| q[a]).collect();
        self.v = [0.0; 6];
        self.target = None;
        self.next = ctx.tick;
        self.started = true;
    }

    fn update(&mut self, ctx: &SimContext) -> Result<(), String> {
        let (p, q) = self.site_pose(ctx);
        let (tp, tq) = *self.target.get_or_insert((p, q));
        let r = rotation_error(&quat(&tq), &quat(&q));
        let e = [tp[0] - p[0], tp[1] - p[1], tp[2] - p[2], r[0], r[1], r[2]];
        let cfg = &self.cfg;
        let mut tw = [0.0; 6];
        if self.kind == ControllerType::CartesianMotionController {
            for i in 0..6 {
                tw[i] = cfg.kp[i] * e[i];
            }
        } else {
            let reader = self.reader.as_ref().ok_or("cartesian_admittance: no F/T reader")?;
            let w = reader.read_in(ctx, FtFrame::World)?;
            let s = if reader.inverted() { -1.0 } else { 1.0 };
            let applied =
                [w.force[0], w.force[1], w.force[2], w.torque[0], w.torque[1], w.torque[2]];
            let mut f = [0.0; 6];
            for i in 0..6 {
                f[i] = self.wrench[i] - s * applied[i];
                if self.kind == ControllerType::CartesianComplianceController {
                    f[i] += cfg.stiffness[i] * e[i];
                }
            }
            admittance_step(&mut self.v, &f, &cfg.mass, &cfg.damping, self.dt_c);
            tw = self.v;
        }
        for (x, on) in tw.iter_mut().zip(&cfg.axes) {
            if *on == 0 {
                *x = 0.0;
            }
        }
        clamp_twist(&mut tw, cfg.max_linear_vel, cfg.max_angular_vel);
        if self.kind.uses_wrench() {
            self.v = tw;
        }
        let jac = site_jacobian(ctx.data(), self.site, &self.dofs);
        let dq = damped_least_squares(&jac, &tw, cfg.ik_damping);
        for (i, x) in self.q_cmd.iter_mut().enumerate() {
            *x += dq[i] * self.dt_c;
            if let Some([lo, hi]) = self.ranges[i] {
                *x = x.clamp(lo, hi);
            }
        }
        self.handle.0.borrow_mut().current = Some((p, q));
        Ok(())
    }

    fn reset(&mut self) {
        self.started = false;
        self.target = None;
        self.wrench = self.cfg.target_wrench;
        self.v = [0.0; 6];
        self.computed = None;
        *self.handle.0.borrow_mut() = HandleState::default();
    }
}

impl JointSource for Core {
    fn controller(&self) -> String {
        self.name.clone()
    }

    fn targets(&mut self, ctx: &mut SimContext) -> Result<Vec<f64>, String> {
        if self.computed == Some(ctx.tick) {
            return Ok(self.q_cmd.clone());
        }
        self.computed = Some(ctx.tick);
        if !self.started {
            self.start(ctx);
        }
        self.poll(ctx);
        if ctx.tick >= self.next {
            self.next = ctx.tick + self.every;
            self.update(ctx)?;
        }
        Ok(self.q_cmd.clone())
    }

    fn idle(&mut self) {
        self.started = false;
    }
}

/// The `cartesian_admittance` plugin.
pub struct CartesianAdmittance {
    cfg: CartesianAdmittanceConfig,
    address: String,
    owner: Option<String>,
    name: String,
    registry: Registry,
    core: Option<Rc<RefCell<Core>>>,
    ep_pose: EndpointId,
}

impl CartesianAdmittance {
    /// Construct from config.
    pub fn new(cfg: CartesianAdmittanceConfig, args: &PluginArgs) -> Self {
        CartesianAdmittance {
            name: cfg.name(),
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            registry: Registry::default(),
            core: None,
            ep_pose: 0,
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "cartesian_admittance",
        "Cartesian motion / force / compliance control of an arm's site (FZI cartesian_controllers' topics and types), damped-least-squares IK, through arm_controller.",
        CartesianAdmittanceConfig,
        CartesianAdmittance
    )
    .requires_owner()
}

impl Plugin for CartesianAdmittance {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "cartesian_admittance", self.owner.as_deref())?;
        let port = CommandPort::of(ctx, &entity.name).ok_or_else(|| {
            format!(
                "entity `{}` has no arm_controller configured before this cartesian_admittance (blackboard `arm_command:{}`), so there is no arm to drive; \
                 nest it under a spawn_arm entry whose model brings an arm_controller, after that controller",
                entity.name, entity.name
            )
        })?;
        let kind = self.cfg.kind();
        let model = ctx.model();
        let site = common::resolve_site(model, &entity, "site", &self.cfg.site)?;
        let base_body = common::entity_body(model, &entity)?;
        let base_name = common::unprefixed(&entity.body, &entity.prefix).to_string();
        let reader = if kind.uses_wrench() {
            let key = ft_key(&self.cfg.ft);
            Some(ctx.blackboard.get::<WrenchReader>(&key).cloned().map_err(|_| {
                let known: Vec<&str> =
                    ctx.blackboard.keys().filter_map(|k| k.strip_prefix("ft:")).collect();
                format!(
                    "ft: no force_torque sensor labelled `{}` is configured before this {} (blackboard `{key}`), and its wrench loop needs one; \
                     list the force_torque entry (name: {}) before it. Sensors configured so far: [{}]",
                    self.cfg.ft,
                    kind.key(),
                    self.cfg.ft,
                    known.join(", ")
                )
            })?)
        } else {
            None
        };
        let joints = port.joints();
        let every = ((1.0 / (self.cfg.rate_hz * ctx.dt)).round() as u64).max(1);
        let dt_c = every as f64 * ctx.dt;
        // Registry: claims the arm's joints, so one command source per arm holds.
        let reg = Registry::of(ctx, &entity.name);
        let initial = State::parse(&self.cfg.initial_state).unwrap_or(State::Active);
        reg.declare(
            ControllerSpec {
                name: self.name.clone(),
                type_name: kind.type_name().into(),
                command_interfaces: joints.iter().map(|j| format!("{}/position", j.name)).collect(),
                state_interfaces: joints
                    .iter()
                    .flat_map(|j| [format!("{}/position", j.name), format!("{}/velocity", j.name)])
                    .collect(),
                update_rate: (1.0 / dt_c).round() as u32,
                initial_state: initial,
                owner: self.address.clone(),
                parameters: vec![
                    ParamSpec::fixed(
                        "joints",
                        ParamValue::Strings(joints.iter().map(|j| j.name.clone()).collect()),
                        false,
                        "the arm's joints (the controller drives all of them through the arm's command port)",
                    ),
                    ParamSpec::fixed(
                        "command_interfaces",
                        ParamValue::Strings(vec!["position".into()]),
                        false,
                        "the arm's MuJoCo actuators are position servos",
                    ),
                ],
            },
            ctx.sim_time(),
        )?;
        self.registry = reg;
        // Endpoints.
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        let topics = &self.cfg.topics;
        let name = self.name.clone();
        let topic =
            |role: &str| topics.get(role).cloned().unwrap_or_else(|| format!("{name}/{role}"));
        let mk = |ep: Endpoint| {
            ep.owner(Some(&scope.owner))
                .namespace(&scope.namespace)
                .frame_prefix(&scope.frame_prefix)
        };
        let ep_frame = kind.tracks_pose().then(|| {
            ctx.interface.add(mk(Endpoint::input("target_frame")
                .hint("ros2", "type", "geometry_msgs/msg/PoseStamped")
                .hint("ros2", "topic", topic("target_frame"))))
        });
        let ep_wrench = kind.uses_wrench().then(|| {
            ctx.interface.add(mk(Endpoint::input("target_wrench")
                .hint("ros2", "type", "geometry_msgs/msg/WrenchStamped")
                .hint("ros2", "topic", topic("target_wrench"))))
        });
        self.ep_pose = ctx.interface.add(mk(Endpoint::out("current_pose")
            .rate(self.cfg.rate_hz)
            .hint("ros2", "type", "geometry_msgs/msg/PoseStamped")
            .hint("ros2", "topic", topic("current_pose"))));
        let handle = CartesianHandle::default();
        let core = Rc::new(RefCell::new(Core {
            name: self.name.clone(),
            address: self.address.clone(),
            kind,
            cfg: self.cfg.clone(),
            site,
            qpos: joints.iter().map(|j| j.qpos).collect(),
            dofs: joints.iter().map(|j| j.dof).collect(),
            ranges: joints.iter().map(|j| j.range).collect(),
            base_body,
            base_name,
            reader,
            ep_frame,
            ep_wrench,
            every,
            dt_c,
            started: false,
            q_cmd: Vec::new(),
            v: [0.0; 6],
            target: None,
            wrench: self.cfg.target_wrench,
            computed: None,
            next: 0,
            warned: false,
            handle: handle.clone(),
        }));
        port.attach(core.clone());
        self.core = Some(core);
        if !ctx.blackboard.contains(&handle_key(&entity.name)) {
            ctx.blackboard.set(handle_key(&entity.name), handle.clone());
        }
        ctx.blackboard.set(format!("{}/{}", handle_key(&entity.name), self.name), handle);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.registry.restore(&self.name, ctx.sim_time());
        if let Some(c) = &self.core {
            c.borrow_mut().reset();
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(core) = &self.core else { return Ok(()) };
        if self.registry.is_active(&self.name) {
            core.borrow_mut().targets(ctx)?;
        } else {
            core.borrow_mut().idle();
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.interface.is_due(self.ep_pose, ctx.tick) {
            return Ok(());
        }
        let Some(core) = &self.core else { return Ok(()) };
        let (pose, base, site_name) = {
            let c = core.borrow();
            (c.site_pose(ctx), c.base_pose(ctx), c.cfg.site.clone())
        };
        let rel =
            relative(&Pose { pos: base.0, quat: base.1 }, &Pose { pos: pose.0, quat: pose.1 });
        let base_name = core.borrow().base_name.clone();
        let p = Payload::PoseTwist(PoseTwist {
            stamp: ctx.sim_time(),
            frame_id: base_name,
            child_frame_id: site_name,
            position: rel.pos,
            orientation: wxyz_to_xyzw(&rel.quat),
            linear: [0.0; 3],
            angular: [0.0; 3],
        });
        let tick = ctx.tick;
        ctx.interface.publish(self.ep_pose, tick, p);
        Ok(())
    }
}
