//! A recorded state sample put back into a world rebuilt from the recording's provenance, and
//! what is done with it: `roqsim state FILE --at T --sensor ADDRESS` re-runs one sensor on it,
//! `roqsim render FILE` draws it.
//!
//! A sample holds the physics state (qpos, qvel, act, ctrl, mocap, presence) and the run's clock
//! (time, tick, episode): restoring it sets all of them and runs `mj_forward`, so positions,
//! contacts and sensors are those of the recorded step, and a sensor's noise draws (keyed by seed,
//! episode and sim time) are the recorded ones. A plugin's own memory (a fault toggled over ROS,
//! a filter's history) is not in a sample: it is what the rebuilt world holds after its reset.

use serde_json::{json, Value as Json};

use crate::context::Direction;
use crate::engine::Engine;
use crate::record::replay::{rebuild, state_at, Recording};
use crate::record::state::StateSample;

fn sizes(what: &str, have: usize, recorded: usize) -> Result<(), String> {
    if have == recorded {
        return Ok(());
    }
    Err(format!(
        "the state sample holds {recorded} {what} values, the rebuilt world {have}: it is not the recorded world (a model file changed on disk?)"
    ))
}

/// Put sample `s` into `engine`: presence, qpos, qvel, act, ctrl, mocap, then `mj_forward`; tick,
/// episode and sim time as recorded.
pub fn restore(engine: &mut Engine, s: &StateSample) -> Result<(), String> {
    let ctx = &mut engine.ctx;
    {
        let d = ctx.data();
        sizes("qpos", d.qpos().len(), s.qpos.len())?;
        sizes("qvel", d.qvel().len(), s.qvel.len())?;
        sizes("act", d.act().len(), s.act.len())?;
        sizes("ctrl", d.ctrl().len(), s.ctrl.len())?;
        sizes("mocap_pos", d.mocap_pos().len() * 3, s.mocap_pos.len())?;
        sizes("mocap_quat", d.mocap_quat().len() * 4, s.mocap_quat.len())?;
    }
    for (name, &present) in s.entities.iter().zip(&s.present) {
        if ctx.entities.get(name).is_some_and(|e| e.present != present) {
            crate::engine::presence::set_present(ctx, name, present)?;
        }
    }
    let d = ctx.data_mut();
    d.qpos_mut().copy_from_slice(&s.qpos);
    d.qvel_mut().copy_from_slice(&s.qvel);
    d.act_mut().copy_from_slice(&s.act);
    d.ctrl_mut().copy_from_slice(&s.ctrl);
    for (i, p) in d.mocap_pos_mut().iter_mut().enumerate() {
        p.copy_from_slice(&s.mocap_pos[3 * i..3 * i + 3]);
    }
    for (i, q) in d.mocap_quat_mut().iter_mut().enumerate() {
        q.copy_from_slice(&s.mocap_quat[4 * i..4 * i + 4]);
    }
    d.forward();
    ctx.tick = s.tick;
    ctx.episode = s.episode;
    ctx.time_offset = s.time - ctx.data().time();
    Ok(())
}

/// The device mount of the sensors family: it publishes the device's static transforms, no
/// sensor output, so it is not a sensor to re-run.
const DEVICE_MOUNT: &str = "spawn_sensor";

/// Addresses of the rebuilt world's sensor plugins (the sensors family, with a post_step; the
/// device mount `spawn_sensor` is not one).
pub fn sensor_addresses(engine: &Engine) -> Vec<String> {
    let family: Vec<&str> = crate::plugins::sensors::descriptors().iter().map(|d| d.name).collect();
    engine
        .plugins()
        .into_iter()
        .filter(|(a, p)| {
            p != DEVICE_MOUNT && family.contains(&p.as_str()) && engine.has_post_step(a)
        })
        .map(|(a, _)| a)
        .collect()
}

/// The sensor `--sensor ADDRESS` names: the address itself when it is a sensor; else, when it is
/// a plugin holding exactly one sensor below it (a device mount such as `robot.rplidar`), that
/// sensor, with a note; else refused, naming the choices.
fn resolve_sensor(engine: &Engine, address: &str) -> Result<(String, Option<String>), String> {
    let sensors = sensor_addresses(engine);
    if sensors.iter().any(|a| a == address) {
        return Ok((address.to_string(), None));
    }
    let plugin = engine.plugins().into_iter().find(|(a, _)| a == address).map(|(_, p)| p);
    let below: Vec<&String> = sensors
        .iter()
        .filter(|a| a.strip_prefix(address).is_some_and(|r| r.starts_with('.')))
        .collect();
    match (plugin, below.as_slice()) {
        (Some(p), [one]) => Ok((
            one.to_string(),
            Some(format!(
                "--sensor {address} is a {p} plugin, not a sensor; its one sensor {one} is re-run"
            )),
        )),
        (Some(p), []) => Err(format!(
            "--sensor {address}: that is a {p} plugin, not a sensor, and holds none; sensors: {}",
            list(&sensors)
        )),
        (Some(p), many) => Err(format!(
            "--sensor {address}: that is a {p} plugin holding {} sensors, not a sensor; give one of: {}",
            many.len(),
            many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        )),
        (None, _) => Err(format!(
            "--sensor {}: the recorded world has no sensor at that address; sensors: {}",
            crate::error::clip(address),
            list(&sensors)
        )),
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// `roqsim state FILE --at T --sensor ADDRESS`: restore the sample nearest `t` into the world
/// rebuilt from the recording, run the sensor at `address` on it (its rate gate forced open, so a
/// sample between two of its publications still gets one) and return one JSON object: the
/// sample's time, step, tick and episode, and every payload the sensor published, by endpoint.
/// Also returns the rebuild's notes on inputs that changed on disk since the recording.
pub fn rerun_sensor(rec: &Recording, t: f64, address: &str) -> Result<(Json, Vec<String>), String> {
    let sample = state_at(rec, t)?.clone();
    let (mut engine, mut notes) = rebuild(rec)?;
    let (address, note) = resolve_sensor(&engine, address)?;
    notes.extend(note);
    let address = address.as_str();
    restore(&mut engine, &sample)?;
    let tick = sample.tick;
    let n = engine.ctx.interface.all().len();
    for id in 0..n {
        let ep = engine.ctx.interface.get_mut(id);
        if ep.direction == Direction::Out {
            ep.snapped = None;
            ep.has_subscribers = Some(true);
        }
    }
    engine.ctx.interface.clear();
    engine.post_step_of(address).map_err(|e| e.to_string())?;
    let mut outputs = serde_json::Map::new();
    let published: Vec<usize> = engine.ctx.interface.published_at(tick).collect();
    for id in published {
        let ep = engine.ctx.interface.get(id);
        if let Some((p, _)) = ep.latest() {
            let v = serde_json::to_value(p).map_err(|e| format!("{}: {e}", ep.name))?;
            outputs.insert(crate::ros::plan::label(ep), v);
        }
    }
    engine.shutdown();
    let line = json!({
        "sensor": address,
        "time": sample.time,
        "step": sample.step,
        "tick": sample.tick,
        "episode": sample.episode,
        "outputs": outputs,
    });
    Ok((line, notes))
}
