//! `/<namespace>/controller_manager/*`: ros2_control's controller manager services, served from
//! each robot's [`Registry`] with `controller_manager_msgs` (Jazzy, 4.48.1) — seed 003
//! "Switching an arm between controllers"; semantics in [`crate::handles::controllers`].
//!
//! A robot that registers controllers is served a controller manager; nothing in a world asks
//! for it, and a robot with no controllers is served none. The bridge discovers the registries on
//! the blackboard (`controllers:<entity>`) in its `configure` (so the controller plugins, which
//! declare in their own `configure`, must come before the bridge — `--ros` appends it last), and
//! honours its `owners` filter and outer `namespace`.
//!
//! | service | from the registry |
//! | --- | --- |
//! | `list_controllers` | [`Registry::list`]: name, state label, type, update rate, claimed / required interfaces |
//! | `switch_controller` | [`Registry::switch`] (strictness 0 = best effort; `activate_asap`, `timeout` have nothing to wait for: it switches before the next step) |
//! | `load_controller` / `configure_controller` | [`Registry::load`] / [`Registry::configure`] |
//! | `unload_controller` | [`Registry::unload`] (refused while active) |
//! | `list_hardware_interfaces` | [`Registry::hardware_interfaces`] (`data_type` `double`) |
//!
//! The registry is `Rc` (physics-thread only), so every request is a command posted to the
//! physics thread that runs the call there, stamped with the sim time it happens at (the
//! controller's plugin then publishes `<controller>/transition_event` with that stamp); the
//! answer comes back on a channel. load/configure/unload answer only `ok`, as upstream: the
//! reason for a refusal is logged (warning) with the service's name, as upstream's controller
//! manager logs it.

use r2r::controller_manager_msgs::msg::{ControllerState, HardwareInterface as HwMsg};
use r2r::controller_manager_msgs::srv::{
    ConfigureController, ListControllers, ListHardwareInterfaces, LoadController, SwitchController,
    UnloadController,
};
use r2r::{QosProfile, WrappedServiceTypeSupport};

use crate::context::{CommandSender, SimContext};
use crate::handles::controllers::{registry_key, ControllerInfo, HardwareInterface, Registry};
use crate::ros::config::BridgeConfig;
use crate::ros::convert::Task;
use crate::ros::names;
use crate::ros::services::{recv_async, serve_loop, REPLY_TIMEOUT};

/// The services under `<namespace>/controller_manager/`.
pub const SERVICES: [&str; 6] = [
    "list_controllers",
    "switch_controller",
    "load_controller",
    "configure_controller",
    "unload_controller",
    "list_hardware_interfaces",
];

/// One robot's controller manager: the entity and its absolute base name.
#[derive(Debug, Clone, PartialEq)]
pub struct Manager {
    /// The entity whose registry it serves.
    pub entity: String,
    /// `/<bridge ns>/<robot ns>/controller_manager`.
    pub base: String,
}

/// Every controller manager the bridge serves: one per registry with a declared controller whose
/// entity passes the owner filter. The namespace is the one the robot's controllers publish their
/// `transition_event` in (an endpoint with a `controller` hint naming one of them), else the
/// entity's. Two robots with controllers in one namespace are refused (one controller manager per
/// namespace, as on a real robot), naming both and the fix.
pub fn managers(ctx: &SimContext, cfg: &BridgeConfig) -> Result<Vec<Manager>, String> {
    let prefix = registry_key("");
    let mut out = Vec::new();
    for key in ctx.blackboard.keys() {
        let Some(entity) = key.strip_prefix(&prefix) else { continue };
        let Some(reg) = Registry::get(ctx, entity) else { continue };
        let declared = reg.declared();
        if declared.is_empty() || !names::owner_matches(cfg.owners.as_deref(), Some(entity)) {
            continue;
        }
        let ns = ctx
            .interface
            .all()
            .iter()
            .find(|ep| {
                ep.owner.as_deref() == Some(entity)
                    && ep
                        .get_hint("ros2", "controller")
                        .is_some_and(|c| declared.iter().any(|d| d == c))
            })
            .map(|ep| ep.namespace.clone())
            .or_else(|| ctx.entities.get(entity).map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let base = names::join_absolute(&[&cfg.namespace, &ns, "controller_manager"]);
        if let Some(other) = out.iter().find(|m: &&Manager| m.base == base) {
            return Err(format!(
                "robots `{}` and `{entity}` both have controllers and would both be served at {base}: one controller_manager per namespace. \
                 Give one of them its own `namespace:` (on its spawn entry, or on its controller plugin)",
                other.entity
            ));
        }
        out.push(Manager { entity: entity.to_string(), base });
    }
    Ok(out)
}

/// Create the six services of every manager; returns the tasks serving them.
pub fn serve_all(
    node: &mut r2r::Node,
    ctx: &SimContext,
    cfg: &BridgeConfig,
    commands: &CommandSender,
) -> Result<Vec<Task>, String> {
    let mut tasks = Vec::new();
    for m in managers(ctx, cfg)? {
        tasks.push(service::<ListControllers::Service>(
            node,
            &m,
            "list_controllers",
            commands,
            |r, _, _, _| ListControllers::Response {
                controller: r.list().iter().map(controller_state).collect(),
            },
        )?);
        tasks.push(service::<SwitchController::Service>(
            node,
            &m,
            "switch_controller",
            commands,
            switch,
        )?);
        tasks.push(service::<LoadController::Service>(
            node,
            &m,
            "load_controller",
            commands,
            |r, q, t, n| LoadController::Response { ok: logged(n, &q.name, r.load(&q.name, t)) },
        )?);
        tasks.push(service::<ConfigureController::Service>(
            node,
            &m,
            "configure_controller",
            commands,
            |r, q, t, n| ConfigureController::Response {
                ok: logged(n, &q.name, r.configure(&q.name, t)),
            },
        )?);
        tasks.push(service::<UnloadController::Service>(
            node,
            &m,
            "unload_controller",
            commands,
            |r, q, t, n| UnloadController::Response {
                ok: logged(n, &q.name, r.unload(&q.name, t)),
            },
        )?);
        tasks.push(service::<ListHardwareInterfaces::Service>(
            node,
            &m,
            "list_hardware_interfaces",
            commands,
            |r, _, _, _| {
                let hw = r.hardware_interfaces();
                ListHardwareInterfaces::Response {
                    command_interfaces: hw
                        .iter()
                        .filter(|h| h.is_command)
                        .map(hardware_interface)
                        .collect(),
                    state_interfaces: hw
                        .iter()
                        .filter(|h| !h.is_command)
                        .map(hardware_interface)
                        .collect(),
                }
            },
        )?);
        tracing::info!(
            "controller_manager for robot `{}` at {} ({} services)",
            m.entity,
            m.base,
            SERVICES.len()
        );
    }
    Ok(tasks)
}

/// controller_manager_msgs/ControllerState of a registry row.
pub fn controller_state(c: &ControllerInfo) -> ControllerState {
    ControllerState {
        name: c.name.clone(),
        state: c.state.label().to_string(),
        type_: c.type_name.clone(),
        is_async: false,
        update_rate: c.update_rate.min(u16::MAX as u32) as u16,
        claimed_interfaces: c.claimed_interfaces.clone(),
        required_command_interfaces: c.required_command_interfaces.clone(),
        required_state_interfaces: c.required_state_interfaces.clone(),
        ..Default::default()
    }
}

/// controller_manager_msgs/HardwareInterface of a registry row.
pub fn hardware_interface(h: &HardwareInterface) -> HwMsg {
    HwMsg {
        name: h.name.clone(),
        data_type: "double".into(),
        is_available: h.is_available,
        is_claimed: h.is_claimed,
    }
}

fn switch(
    r: &Registry,
    q: SwitchController::Request,
    t: f64,
    service: &str,
) -> SwitchController::Response {
    match r.switch(&q.activate_controllers, &q.deactivate_controllers, q.strictness, t) {
        Ok(rep) => {
            let message = rep.message();
            tracing::info!("{service} at t = {t:.3} s: {message}");
            SwitchController::Response { ok: true, message }
        }
        Err(message) => {
            tracing::warn!("{service} refused: {message}");
            SwitchController::Response { ok: false, message }
        }
    }
}

fn logged(service: &str, controller: &str, r: Result<(), String>) -> bool {
    match r {
        Ok(()) => {
            tracing::info!("{service}: `{controller}` done");
            true
        }
        Err(e) => {
            tracing::warn!("{service} refused: {e}");
            false
        }
    }
}

/// What runs on the physics thread for one request: (registry, request, sim time, service name).
type OnPhysics<S> = fn(
    &Registry,
    <S as WrappedServiceTypeSupport>::Request,
    f64,
    &str,
) -> <S as WrappedServiceTypeSupport>::Response;

fn service<S>(
    node: &mut r2r::Node,
    m: &Manager,
    srv: &str,
    commands: &CommandSender,
    f: OnPhysics<S>,
) -> Result<Task, String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Request: Send + 'static,
    S::Response: Send + 'static,
{
    let name = format!("{}/{srv}", m.base);
    let stream = node
        .create_service::<S>(&name, QosProfile::services_default())
        .map_err(|e| format!("cannot create the controller_manager service {name}: {e}"))?;
    let (commands, entity) = (commands.clone(), m.entity.clone());
    Ok(serve_loop(stream, move |req: r2r::ServiceRequest<S>| {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (entity, n, msg) = (entity.clone(), name.clone(), req.message.clone());
        commands.post(move |ctx: &mut SimContext| {
            let resp = Registry::get(ctx, &entity)
                .map(|r| f(&r, msg, ctx.sim_time(), &n))
                .unwrap_or_default();
            let _ = tx.send(resp);
        });
        let name = name.clone();
        Box::pin(async move {
            let resp = match recv_async(rx, REPLY_TIMEOUT).await {
                Some(r) => r,
                None => {
                    tracing::warn!("{name}: no answer from the simulation within {} s; replying with a default (failed) response", REPLY_TIMEOUT.as_secs());
                    S::Response::default()
                }
            };
            if let Err(e) = req.respond(resp) {
                tracing::warn!("{name}: cannot send the response: {e}");
            }
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::controllers::State;
    use crate::{load_world_str, Engine, EngineOptions, LoadOptions};

    fn engine(yaml: &str) -> Engine {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds");
        let w = load_world_str(yaml, &base, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("load failed: {e}"));
        Engine::new(w, EngineOptions { profile: false, seed: Some(1) })
            .unwrap_or_else(|e| panic!("engine failed: {e}"))
    }

    #[test]
    fn one_manager_per_robot_with_controllers_in_its_namespace() {
        let two = "sim: {timestep: 0.002}
components:
  - spawn_arm: {model: ur5e, namespace: left, prefix: l_, pos: [0.0, 0.0, 0.5], pedestal: true}
    name: arm_l
  - spawn_arm: {model: ur5e, namespace: right, prefix: r_, pos: [1.0, 0.0, 0.5], pedestal: true}
    name: arm_r
  - box: {pose: {position: {x: 3.0, y: 0.0}}, size: [0.2, 0.2, 0.2]}
    name: crate
";
        let e = engine(two);
        let all = managers(&e.ctx, &BridgeConfig::default()).unwrap();
        assert_eq!(
            all,
            vec![
                Manager { entity: "arm_l".into(), base: "/left/controller_manager".into() },
                Manager { entity: "arm_r".into(), base: "/right/controller_manager".into() },
            ],
            "the crate has no controllers: no manager"
        );
        let cfg = BridgeConfig {
            namespace: "sim".into(),
            owners: Some(vec!["arm_r".into()]),
            ..Default::default()
        };
        assert_eq!(
            managers(&e.ctx, &cfg).unwrap(),
            vec![Manager { entity: "arm_r".into(), base: "/sim/right/controller_manager".into() }]
        );
        // Two robots with controllers in one namespace: refused, naming both and the fix.
        let e = engine(&two.replace("namespace: right", "namespace: left"));
        let err = managers(&e.ctx, &BridgeConfig::default()).unwrap_err();
        assert!(err.contains("robots `arm_l` and `arm_r` both have controllers and would both be served at /left/controller_manager"), "{err}");
        assert!(err.contains("Give one of them its own `namespace:`"), "{err}");
        // A world with no controllers is served none.
        let none = engine("sim: {timestep: 0.002}\ncomponents:\n  - box: {pose: {position: {x: 1.0, y: 0.0}}, size: [0.2, 0.2, 0.2]}\n    name: crate\n");
        assert!(managers(&none.ctx, &BridgeConfig::default()).unwrap().is_empty());
    }

    #[test]
    fn rows_map_to_controller_manager_msgs() {
        let e = engine(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/ur_pick.yaml"),
            )
            .unwrap(),
        );
        let reg = Registry::get(&e.ctx, "ur").expect("registry");
        let rows = reg.list();
        let jtc = controller_state(&rows[0]);
        assert_eq!(
            (jtc.name.as_str(), jtc.state.as_str(), jtc.type_.as_str()),
            (
                "scaled_joint_trajectory_controller",
                "active",
                "joint_trajectory_controller/JointTrajectoryController"
            )
        );
        assert_eq!(jtc.update_rate, 500);
        assert_eq!(jtc.claimed_interfaces.len(), 6);
        assert!(!jtc.is_chainable && !jtc.is_chained && jtc.chain_connections.is_empty());
        reg.switch(
            &[],
            &["scaled_joint_trajectory_controller".into()],
            crate::handles::controllers::STRICT,
            1.0,
        )
        .unwrap();
        let jtc = controller_state(&reg.list()[0]);
        assert_eq!(jtc.state, State::Inactive.label());
        assert!(jtc.claimed_interfaces.is_empty() && jtc.required_command_interfaces.len() == 6);
        let hw: Vec<HwMsg> = reg.hardware_interfaces().iter().map(hardware_interface).collect();
        assert!(hw.iter().all(|h| h.data_type == "double" && h.is_available));
        assert_eq!(
            hw.iter().filter(|h| h.is_claimed).count(),
            1,
            "only the gripper's command interface is held now"
        );
    }
}
