#!/usr/bin/env python3
"""Verify every bundled model: models/<name>/<name>.xml + <name>.manifest.yaml.

For each model this script
  1. compiles the MJCF standalone (MuJoCo's own loader, no floor);
  2. attaches it, under a name prefix as the simulator does, into a test scene with a floor plane and
     steps it at the default world timestep (0.002 s) with the default (Euler) integrator;
  3. asserts the state stays finite, a mobile base settles at the manifest's rest_height (+-5 mm), the
     manifest parses as YAML and every actuator/joint/site/body/frame it names exists in the model;
  4. runs a behaviour test chosen by the manifest's components:
       diff_drive       wheel-velocity command for 0.2 m/s -> achieved speed within 10 %;
                        with slip_factor: compensated in-place yaw within 10 % of the command
       omni_drive       planar-drive command vx / vy / wz -> achieved within 10 %
       ackermann_drive  0.2 m/s straight; a constant-steer arc against the bicycle relation (reported)
       arm_controller   (arm) hold the `rest` pose 2 s under gravity, with body gravcomp=1 on the arm
                        (what the simulator applies to position-servoed arms) and without (reported)
       arm_controller   (gripper only) close on a 0.5 kg box and lift it 0.15 m
       lidar            (device) welded in the air: finite, scan site present
       camera plugins   (device) welded in the air: the capture plugin's MJCF camera exists and
                        looks along the mount's +x
and prints a table. Exit status is non-zero if any check fails.

Usage:  python3 models/check_models.py [--floor-friction 1.0] [--only NAME ...]
Needs:  mujoco==3.17.0 numpy pyyaml
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import mujoco
import numpy as np
import yaml

MODELS = Path(__file__).resolve().parent
DT = 0.002
PREFIX = "m_"
REST_TOL = 0.005
SPEED_TOL = 0.10


# --------------------------------------------------------------------------- helpers


def load_manifest(name: str) -> dict:
    path = MODELS / name / f"{name}.manifest.yaml"
    with path.open() as fh:
        doc = yaml.safe_load(fh)
    if not isinstance(doc, dict):
        raise AssertionError(f"{path.name}: top level is not a mapping")
    return doc


def components(manifest: dict) -> list[tuple[str, dict, dict]]:
    """(plugin ref, config, whole entry) for every component entry."""
    out = []
    for entry in manifest.get("components") or []:
        refs = [k for k in entry if k not in ("name", "enabled", "components")]
        if len(refs) != 1:
            raise AssertionError(f"component entry must have exactly one plugin ref: {entry}")
        out.append((refs[0], dict(entry[refs[0]] or {}), entry))
    return out


def component(manifest: dict, ref: str) -> dict | None:
    for r, cfg, _ in components(manifest):
        if r == ref:
            return cfg
    return None


def name2id(model, kind, name):
    return mujoco.mj_name2id(model, kind, PREFIX + name)


def as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


ACTUATOR_KEYS = {"left_actuator", "right_actuator", "left_actuators", "right_actuators",
                 "vx_actuator", "vy_actuator", "wz_actuator", "wheel_actuators",
                 "steer_actuators", "drive_actuators", "gripper_actuator"}
JOINT_KEYS = {"left_joint", "right_joint", "left_joints", "right_joints", "base_joint", "joints",
              "steer_joints", "drive_joints", "gripper_joint"}
SITE_KEYS = {"site"}
BODY_KEYS = {"body", "base_body", "exclude_body", "tf_parent"}


def referenced_names(manifest: dict, model) -> list[str]:
    """Resolve every name the manifest references; return a list of problems (empty = fine)."""
    problems = []
    frame_names = {f["name"] for f in manifest.get("frames") or []}

    def has(kind, name):
        return name2id(model, kind, name) >= 0

    def check(kind, name, where):
        if not isinstance(name, str) or "{" in name:
            return  # placeholders are filled in by the mount
        if not has(kind, name):
            problems.append(f"{where}: {kind.name[6:].lower()} '{name}' not in model")

    for frame in manifest.get("frames") or []:
        parent = frame["parent"]
        if "{" not in parent and not has(mujoco.mjtObj.mjOBJ_BODY, parent) and parent not in frame_names:
            problems.append(f"frames.{frame['name']}: parent '{parent}' is neither a body nor a frame")
    for ref, cfg, _ in components(manifest):
        for key, value in cfg.items():
            where = f"{ref}.{key}"
            if key in ACTUATOR_KEYS:
                for n in as_list(value):
                    check(mujoco.mjtObj.mjOBJ_ACTUATOR, n, where)
            elif key in JOINT_KEYS:
                for n in as_list(value):
                    check(mujoco.mjtObj.mjOBJ_JOINT, n, where)
            elif key in SITE_KEYS:
                check(mujoco.mjtObj.mjOBJ_SITE, value, where)
            elif key in BODY_KEYS:
                check(mujoco.mjtObj.mjOBJ_BODY, value, where)
            elif key == "rest" and isinstance(value, dict):
                for n in value:
                    check(mujoco.mjtObj.mjOBJ_JOINT, n, where)
            elif key == "wheels":
                for stem in value:
                    check(mujoco.mjtObj.mjOBJ_JOINT, f"{stem}_joint", where)
                    if "wheel_actuators" not in cfg:
                        check(mujoco.mjtObj.mjOBJ_ACTUATOR, f"{stem}_motor", where)
            elif key == "parent_frame":
                if not has(mujoco.mjtObj.mjOBJ_BODY, value) and value not in frame_names:
                    problems.append(f"{where}: '{value}' is neither a body nor a manifest frame")
            elif key == "model" and ref.startswith("spawn_"):
                if not (MODELS / value / f"{value}.xml").exists():
                    problems.append(f"{where}: model '{value}' not found under models/")
    return problems


def build_scene(name: str, *, floor_friction: float, pos=(0, 0, 0), quat=(1, 0, 0, 0),
                parent_body=None, extra=None):
    """Attach models/<name>/<name>.xml under PREFIX into a scene with a floor plane."""
    scene = mujoco.MjSpec()
    scene.option.timestep = DT
    floor = scene.worldbody.add_geom()
    floor.name = "floor"
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [20, 20, 0.05]
    floor.friction = [floor_friction, 0.005, 0.0001]
    if extra is not None:
        parent_body = extra(scene)
    child = mujoco.MjSpec.from_file(str(MODELS / name / f"{name}.xml"))
    holder = (parent_body or scene.worldbody).add_frame()
    holder.pos = list(pos)
    holder.quat = list(quat)
    holder.attach_body(child.worldbody.first_body(), PREFIX, "")
    return scene


def finite(data) -> bool:
    return bool(np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel)))


def yaw_of(quat) -> float:
    w, x, y, z = quat
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def step_for(model, data, seconds, each=None):
    for _ in range(int(round(seconds / model.opt.timestep))):
        if each is not None:
            each()
        mujoco.mj_step(model, data)
        if not finite(data):
            raise AssertionError(f"state went non-finite at t={data.time:.3f}")


def set_ctrl(model, data, name, value):
    aid = name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
    if aid < 0:
        raise AssertionError(f"actuator {name} missing")
    data.ctrl[aid] = value


def root_free_joint(model) -> int:
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return j
    return -1


class Results:
    def __init__(self):
        self.rows = []
        self.failed = False

    def add(self, model, check, value, ok, note=""):
        self.rows.append((model, check, value, "ok" if ok else "FAIL", note))
        if not ok:
            self.failed = True

    def print(self):
        widths = [max(len(str(r[i])) for r in self.rows + [("model", "check", "measured", "", "")])
                  for i in range(5)]
        head = ("model", "check", "measured", "result", "note")
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        print("  ".join("-" * w for w in widths))
        for row in self.rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


# --------------------------------------------------------------------------- behaviour tests


def settle_base(name, manifest, friction):
    scene = build_scene(name, floor_friction=friction,
                        pos=(0, 0, float(manifest.get("rest_height", 0.0)) + 0.005))
    model = scene.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    step_for(model, data, 2.0)
    return model, data


def planar_motion(model, data, seconds, ctrl_fn, window):
    """Run for `seconds`; return (forward speed, lateral speed, yaw rate) over the final `window` s,
    in the base frame at the start of the window."""
    jid = root_free_joint(model)
    qadr = model.jnt_qposadr[jid]
    step_for(model, data, seconds - window, ctrl_fn)
    p0 = data.qpos[qadr:qadr + 2].copy()
    yaw0 = yaw_of(data.qpos[qadr + 3:qadr + 7])
    yaw_acc, prev = 0.0, yaw0
    n = int(round(window / model.opt.timestep))
    dadr = model.jnt_dofadr[jid]
    path = 0.0
    for _ in range(n):
        ctrl_fn()
        mujoco.mj_step(model, data)
        path += float(np.linalg.norm(data.qvel[dadr:dadr + 2])) * model.opt.timestep
        if not finite(data):
            raise AssertionError(f"state went non-finite at t={data.time:.3f}")
        cur = yaw_of(data.qpos[qadr + 3:qadr + 7])
        yaw_acc += (cur - prev + math.pi) % (2 * math.pi) - math.pi
        prev = cur
    d = data.qpos[qadr:qadr + 2] - p0
    c, s = math.cos(yaw0), math.sin(yaw0)
    fwd = (c * d[0] + s * d[1]) / window
    lat = (-s * d[0] + c * d[1]) / window
    planar_motion.path_speed = path / window
    return fwd, lat, yaw_acc / window


def test_diff_drive(name, manifest, cfg, res, friction):
    r = float(cfg["wheel_radius"])
    half = float(cfg["wheel_separation"]) / 2
    left = as_list(cfg.get("left_actuators") or cfg.get("left_actuator"))
    right = as_list(cfg.get("right_actuators") or cfg.get("right_actuator"))
    slip = float(cfg.get("slip_factor", 1.0))

    def drive(v, w, k):
        def fn():
            wl = (v - w * k * half) / r
            wr = (v + w * k * half) / r
            for a in left:
                set_ctrl(model, data, a, wl)
            for a in right:
                set_ctrl(model, data, a, wr)
        return fn

    model, data = settle_base(name, manifest, friction)
    fwd, lat, _ = planar_motion(model, data, 4.0, drive(0.2, 0.0, 1.0), 2.0)
    res.add(name, "drive 0.2 m/s", f"{fwd:.4f} m/s (lat {lat:+.4f})",
            abs(fwd - 0.2) <= SPEED_TOL * 0.2, "wheel cmd v/r")
    vmax = float(cfg.get("max_linear_vel", 0.0))
    if vmax:
        model, data = settle_base(name, manifest, friction)
        fwd, _, _ = planar_motion(model, data, 5.0, drive(vmax, 0.0, 1.0), 2.0)
        res.add(name, f"drive max {vmax} m/s", f"{fwd:.4f} m/s", abs(fwd - vmax) <= SPEED_TOL * vmax)
    w_cmd = 0.5
    model, data = settle_base(name, manifest, friction)
    _, _, wz = planar_motion(model, data, 5.0, drive(0.0, w_cmd, 1.0), 3.0)
    res.add(name, f"yaw {w_cmd} rad/s, slip 1", f"{wz:.4f} rad/s ({wz / w_cmd:.3f})",
            True if slip != 1.0 else abs(wz - w_cmd) <= SPEED_TOL * w_cmd,
            "uncompensated" if slip != 1.0 else "true diff drive")
    if slip != 1.0:
        model, data = settle_base(name, manifest, friction)
        _, _, wz = planar_motion(model, data, 5.0, drive(0.0, w_cmd, slip), 3.0)
        res.add(name, f"yaw {w_cmd} rad/s, slip {slip}", f"{wz:.4f} rad/s ({wz / w_cmd:.3f})",
                abs(wz - w_cmd) <= SPEED_TOL * w_cmd, "slip-compensated")


def test_omni_drive(name, manifest, cfg, res, friction):
    vx_a = cfg.get("vx_actuator", "base_vx")
    vy_a = cfg.get("vy_actuator", "base_vy")
    wz_a = cfg.get("wz_actuator", "base_wz")
    r = float(cfg.get("wheel_radius", 0.0762))
    lx = float(cfg.get("axis_separation", 0.488)) / 2
    ly = float(cfg.get("wheel_separation", 0.44715)) / 2
    stems = cfg.get("wheels", [])
    acts = cfg.get("wheel_actuators") or [f"{s}_motor" for s in stems]

    for label, (vx, vy, wz) in (("vx 0.2", (0.2, 0, 0)), ("vy 0.2", (0, 0.2, 0)), ("wz 0.5", (0, 0, 0.5))):
        model, data = settle_base(name, manifest, friction)
        jid = root_free_joint(model)
        qadr = model.jnt_qposadr[jid]

        def fn():
            yaw = yaw_of(data.qpos[qadr + 3:qadr + 7])
            c, s = math.cos(yaw), math.sin(yaw)
            set_ctrl(model, data, vx_a, c * vx - s * vy)   # body -> world (free-joint frame)
            set_ctrl(model, data, vy_a, s * vx + c * vy)
            set_ctrl(model, data, wz_a, wz)
            # mecanum inverse kinematics, observational only (order: fl, fr, rl, rr)
            k = lx + ly
            speeds = {"front_left": vx - vy - k * wz, "front_right": vx + vy + k * wz,
                      "rear_left": vx + vy - k * wz, "rear_right": vx - vy + k * wz}
            for stem, act in zip(stems, acts):
                set_ctrl(model, data, act, speeds.get(stem, 0.0) / r)

        fwd, lat, yaw_rate = planar_motion(model, data, 3.0, fn, 1.5)
        got = {"vx 0.2": fwd, "vy 0.2": lat, "wz 0.5": yaw_rate}[label]
        want = {"vx 0.2": 0.2, "vy 0.2": 0.2, "wz 0.5": 0.5}[label]
        res.add(name, f"planar {label}", f"{got:.4f} (fwd {fwd:+.3f} lat {lat:+.3f} wz {yaw_rate:+.3f})",
                abs(got - want) <= SPEED_TOL * want)


def test_ackermann(name, manifest, cfg, res, friction):
    r = float(cfg["wheel_radius"])
    L = float(cfg["wheelbase"])
    track = float(cfg["track"])
    steer_track = float(cfg.get("steer_track", track))
    sl, sr = cfg["steer_actuators"]
    dl, dr = cfg["drive_actuators"]

    def command(v, delta):
        def fn():
            if abs(delta) < 1e-9:
                dl_, dr_ = 0.0, 0.0
                vl = vr = v
            else:
                R = L / math.tan(delta)            # turn radius of the rear-axle centre
                dl_ = math.atan(L / (R - steer_track / 2))
                dr_ = math.atan(L / (R + steer_track / 2))
                w = v / R
                vl, vr = w * (R - track / 2), w * (R + track / 2)
            set_ctrl(model, data, sl, dl_)
            set_ctrl(model, data, sr, dr_)
            set_ctrl(model, data, dl, vl / r)
            set_ctrl(model, data, dr, vr / r)
        return fn

    model, data = settle_base(name, manifest, friction)
    fwd, lat, _ = planar_motion(model, data, 4.0, command(0.2, 0.0), 2.0)
    res.add(name, "drive 0.2 m/s", f"{fwd:.4f} m/s (lat {lat:+.4f})", abs(fwd - 0.2) <= SPEED_TOL * 0.2)
    delta = 0.3
    model, data = settle_base(name, manifest, friction)
    _, _, wz = planar_motion(model, data, 5.0, command(0.5, delta), 2.0)
    speed = planar_motion.path_speed
    ideal = speed * math.tan(delta) / L
    res.add(name, f"arc v 0.5 delta {delta}", f"speed {speed:.3f}, wz {wz:.4f} vs bicycle {ideal:.4f} ({wz / ideal:.3f})",
            0.8 <= wz / ideal <= 1.1, "bicycle relation at the achieved speed")
    # in-place yaw is impossible for a car: v = 0 with the rack at full lock must not turn it
    model, data = settle_base(name, manifest, friction)
    _, _, wz = planar_motion(model, data, 2.0, command(0.0, float(cfg["max_steer_angle"])), 1.0)
    res.add(name, "v 0, full lock", f"wz {wz:+.5f} rad/s", abs(wz) < 0.01, "a car cannot turn in place")


def arm_rest_targets(model, rest):
    targets = {}
    for aid in range(model.nu):
        if model.actuator_trntype[aid] != mujoco.mjtTrn.mjTRN_JOINT:
            continue
        jid = model.actuator_trnid[aid][0]
        jname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, jid)[len(PREFIX):]
        if jname in rest:
            targets[aid] = (jid, float(rest[jname]))
    return targets


def test_arm(name, manifest, cfg, res, friction):
    rest = cfg.get("rest") or {}
    site = cfg.get("_check_site", "attachment_site")
    for gravcomp in (True, False):
        scene = build_scene(name, floor_friction=friction)
        if gravcomp:
            for body in scene.bodies:
                if body.name.startswith(PREFIX):
                    body.gravcomp = 1.0
        model = scene.compile()
        data = mujoco.MjData(model)
        targets = arm_rest_targets(model, rest)
        if len(targets) != len(rest):
            res.add(name, "rest joints actuated", f"{len(targets)}/{len(rest)}", False)
            return
        for aid, (jid, q) in targets.items():
            data.qpos[model.jnt_qposadr[jid]] = q
            data.ctrl[aid] = q
        mujoco.mj_forward(model, data)
        sid = name2id(model, mujoco.mjtObj.mjOBJ_SITE, site)
        p0 = data.site_xpos[sid].copy()
        step_for(model, data, 2.0)
        sag = float(np.linalg.norm(data.site_xpos[sid] - p0))
        qerr = max(abs(data.qpos[model.jnt_qposadr[j]] - q) for j, q in targets.values())
        ncon = sum(1 for i in range(data.ncon)
                   if model.geom_bodyid[data.contact[i].geom1] != 0
                   and model.geom_bodyid[data.contact[i].geom2] != 0)
        label = "hold rest, gravcomp=1" if gravcomp else "hold rest, no gravcomp"
        res.add(name, label, f"flange {sag * 1000:.2f} mm, max joint err {qerr:.5f} rad, self-contacts {ncon}",
                (sag < 0.003 and ncon == 0) if gravcomp else True,
                "what the simulator runs" if gravcomp else "reported only")


def test_gripper(name, manifest, cfg, res, friction):
    act = cfg["gripper_actuator"]
    pinch_site = cfg.get("_check_site", "pinch")
    # A carriage on a vertical slide (position servo) holds the gripper pointing DOWN (-z).
    box_half = (0.025, 0.025, 0.025)

    def extra(scene):
        carriage = scene.worldbody.add_body()
        carriage.name = "carriage"
        carriage.pos = [0, 0, 0.40]
        j = carriage.add_joint()
        j.name = "lift"
        j.type = mujoco.mjtJoint.mjJNT_SLIDE
        j.axis = [0, 0, 1]
        j.range = [-0.5, 0.5]
        j.damping = [200, 0, 0]   # MuJoCo 3.17: damping is a 3-vector (polynomial coefficients)
        g = carriage.add_geom()
        g.type = mujoco.mjtGeom.mjGEOM_BOX
        g.size = [0.02, 0.02, 0.02]
        g.mass = 2.0
        g.contype = g.conaffinity = 0
        a = scene.add_actuator()
        a.name = "lift_servo"
        a.target = "lift"
        a.trntype = mujoco.mjtTrn.mjTRN_JOINT
        a.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        a.gainprm[0] = 20000
        a.biasprm[0:3] = [0, -20000, -2000]
        box = scene.worldbody.add_body()
        box.name = "box"
        box.pos = [0, 0, box_half[2]]
        box.add_freejoint()
        bg = box.add_geom()
        bg.name = "box_geom"
        bg.type = mujoco.mjtGeom.mjGEOM_BOX
        bg.size = list(box_half)
        bg.mass = 0.5
        bg.friction = [0.8, 0.005, 0.0001]
        return carriage

    # first pass: find the pinch height so the box centre can be brought to it
    scene = build_scene(name, floor_friction=friction, quat=(0, 1, 0, 0), extra=extra)
    model = scene.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    sid = name2id(model, mujoco.mjtObj.mjOBJ_SITE, pinch_site)
    lift = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "lift_servo")
    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "box")
    aid = name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, act)
    lo, hi = model.actuator_ctrlrange[aid]
    open_c = lo if cfg.get("gripper_open", 0.0) <= cfg.get("gripper_close", 1.0) else hi
    close_c = hi if open_c == lo else lo
    down = box_half[2] - data.site_xpos[sid][2]         # lower the pinch to the box centre
    z_box0 = float(data.xpos[bid][2])
    data.ctrl[aid] = open_c
    data.ctrl[lift] = 0.0
    step_for(model, data, 0.3)
    for i in range(int(1.0 / DT)):                     # descend over 1 s
        data.ctrl[lift] = down * min(1.0, (i + 1) / (0.8 / DT))
        mujoco.mj_step(model, data)
    data.ctrl[aid] = close_c
    step_for(model, data, 1.0)
    gap = float(data.site_xpos[sid][2] - data.xpos[bid][2])
    for i in range(int(1.0 / DT)):                     # lift 0.15 m over 1 s
        data.ctrl[lift] = down + 0.15 * min(1.0, (i + 1) / (0.8 / DT))
        mujoco.mj_step(model, data)
    step_for(model, data, 1.0)                           # hold
    rise = float(data.xpos[bid][2] - z_box0)
    slip = float((data.site_xpos[sid][2] - data.xpos[bid][2]) - gap)
    rel0 = float(data.site_xpos[sid][2] - data.xpos[bid][2])
    step_for(model, data, 5.0)                           # long hold: soft-friction creep rate
    creep = (float(data.site_xpos[sid][2] - data.xpos[bid][2]) - rel0) / 5.0
    jid = name2id(model, mujoco.mjtObj.mjOBJ_JOINT, cfg["gripper_joint"])
    jpos = float(data.qpos[model.jnt_qposadr[jid]])
    force = float(data.actuator_force[aid])
    res.add(name, "grasp+lift 0.5 kg box 0.15 m",
            f"box rose {rise * 1000:.1f} mm, slip {slip * 1000:+.2f} mm, jaw {jpos:.4f}, "
            f"actuator force {force:.1f} N", rise > 0.14 and abs(slip) < 0.005)
    res.add(name, "hold 5 s more (creep)", f"{creep * 1000:.2f} mm/s", abs(creep) < 0.002,
            "pyramidal cone default; world options remove it")


def test_device(name, manifest, res, friction):
    scene = build_scene(name, floor_friction=friction, pos=(0, 0, 0.5))
    model = scene.compile()
    data = mujoco.MjData(model)
    step_for(model, data, 1.0)
    site = None
    for ref, cfg, _ in components(manifest):
        if "site" in cfg:
            site = cfg["site"]
    cam = next((cfg["camera"] for _, cfg, _ in components(manifest) if "camera" in cfg), None)
    if cam is not None:
        # a camera device: its capture plugin's MJCF camera exists and looks along the mount's +x
        cid = name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, cam)
        if cid < 0:
            res.add(name, "welded 1 s, camera", f"no camera '{cam}'", False)
            return
        fwd = -data.cam_xmat[cid].reshape(3, 3)[:, 2]
        res.add(name, "welded 1 s, camera", f"camera '{cam}' fovy {model.cam_fovy[cid]:g}, looks along "
                f"{np.round(fwd, 6).tolist()}", bool(np.allclose(fwd, [1, 0, 0], atol=1e-9)))
        return
    sid = name2id(model, mujoco.mjtObj.mjOBJ_SITE, site) if site else -1
    res.add(name, "welded 1 s, scan site", f"site '{site}' at z {data.site_xpos[sid][2]:.4f}"
            if sid >= 0 else "no site", sid >= 0)


def test_arm_with_gripper(res, friction, arm="ur5e", gripper="parallel_gripper"):
    """spawn_arm's end_effector path: the gripper welded at the arm's attachment_site BEFORE the
    arm is attached (so the arm's prefix covers it), gravcomp on every arm body, hold rest, close."""
    man = load_manifest(arm)
    rest = component(man, "arm_controller")["rest"]
    gcfg = component(load_manifest(gripper), "arm_controller")
    arm_spec = mujoco.MjSpec.from_file(str(MODELS / arm / f"{arm}.xml"))
    grip_spec = mujoco.MjSpec.from_file(str(MODELS / gripper / f"{gripper}.xml"))
    # spawn_arm's end_effector prefix defaults to ""; a non-empty one here only keeps MuJoCo from
    # logging its empty-prefix warning to MUJOCO_LOG.TXT
    arm_spec.site("attachment_site").attach_body(grip_spec.worldbody.first_body(), "ee_", "")
    scene = mujoco.MjSpec()
    scene.option.timestep = DT
    floor = scene.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [5, 5, 0.05]
    floor.friction = [friction, 0.005, 0.0001]
    scene.worldbody.add_frame().attach_body(arm_spec.worldbody.first_body(), PREFIX, "")
    for body in scene.bodies:
        if body.name.startswith(PREFIX):
            body.gravcomp = 1.0
    model = scene.compile()
    data = mujoco.MjData(model)
    targets = arm_rest_targets(model, rest)
    for aid, (jid, q) in targets.items():
        data.qpos[model.jnt_qposadr[jid]] = q
        data.ctrl[aid] = q
    mujoco.mj_forward(model, data)
    sid = name2id(model, mujoco.mjtObj.mjOBJ_SITE, "ee_pinch")
    gid = name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "ee_" + gcfg["gripper_actuator"])
    jid = name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "ee_" + gcfg["gripper_joint"])
    p0 = data.site_xpos[sid].copy()
    data.ctrl[gid] = model.actuator_ctrlrange[gid][1]          # close on nothing
    step_for(model, data, 2.0)
    drift = float(np.linalg.norm(data.site_xpos[sid] - p0))
    jaw = float(data.qpos[model.jnt_qposadr[jid]])
    res.add(f"{arm}+{gripper}", "rest hold + close, gravcomp=1",
            f"pinch at {np.round(p0, 4).tolist()}, drift {drift * 1000:.2f} mm, jaw {jaw:.4f}, "
            f"contacts {data.ncon}", drift < 0.003 and data.ncon == 0 and jaw > 0.04)


# --------------------------------------------------------------------------- driver


def check_model(name: str, res: Results, friction: float):
    xml = MODELS / name / f"{name}.xml"
    head = xml.read_text().lstrip()
    res.add(name, "headline comment", head[:60].replace("\n", " ") + "...", head.startswith("<!--"))
    try:
        standalone = mujoco.MjModel.from_xml_path(str(xml))
    except Exception as exc:  # noqa: BLE001
        res.add(name, "standalone compile", str(exc)[:80], False)
        return
    total = float(sum(standalone.body_mass))
    res.add(name, "standalone compile",
            f"nbody {standalone.nbody} njnt {standalone.njnt} nu {standalone.nu} mass {total:.3f} kg", True)
    try:
        manifest = load_manifest(name)
    except Exception as exc:  # noqa: BLE001
        res.add(name, "manifest YAML", str(exc)[:80], False)
        return
    ok = bool(manifest.get("license")) and bool(manifest.get("source"))
    res.add(name, "manifest YAML", f"{len(manifest.get('components') or [])} components", ok,
            "" if ok else "license/source missing")

    scene = build_scene(name, floor_friction=friction)
    model = scene.compile()
    problems = referenced_names(manifest, model)
    res.add(name, "manifest names resolve", "all found" if not problems else "; ".join(problems),
            not problems)

    free = root_free_joint(standalone)
    if free >= 0:
        if standalone.jnt_bodyid[free] != 1:
            res.add(name, "free joint on root body", "no", False)
        rest = float(manifest.get("rest_height", 0.0))
        model, data = settle_base(name, manifest, friction)
        qadr = model.jnt_qposadr[root_free_joint(model)]
        z = float(data.qpos[qadr + 2])
        tilt = math.degrees(math.acos(max(-1.0, min(1.0, 1 - 2 * (data.qpos[qadr + 4] ** 2
                                                                   + data.qpos[qadr + 5] ** 2)))))
        res.add(name, "rest height (2 s settle)", f"z {z:+.5f} (manifest {rest:+.4f}), tilt {tilt:.2f} deg",
                abs(z - rest) <= REST_TOL)

    ran = False
    for ref, cfg, _ in components(manifest):
        if ref == "diff_drive":
            test_diff_drive(name, manifest, cfg, res, friction)
            ran = True
        elif ref == "omni_drive":
            test_omni_drive(name, manifest, cfg, res, friction)
            ran = True
        elif ref == "ackermann_drive":
            test_ackermann(name, manifest, cfg, res, friction)
            ran = True
        elif ref == "arm_controller":
            if cfg.get("rest"):
                test_arm(name, manifest, cfg, res, friction)
            elif cfg.get("gripper_actuator"):
                test_gripper(name, manifest, cfg, res, friction)
            ran = True
    if not ran and manifest.get("frame_id"):
        test_device(name, manifest, res, friction)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floor-friction", type=float, default=1.0,
                    help="sliding friction of the test floor (MuJoCo default 1.0)")
    ap.add_argument("--only", nargs="*", default=None, help="model names to check")
    args = ap.parse_args(argv)
    names = sorted(p.name for p in MODELS.iterdir()
                   if p.is_dir() and (p / f"{p.name}.xml").exists())
    if args.only:
        names = [n for n in names if n in args.only]
    print(f"MuJoCo {mujoco.__version__}, timestep {DT}, integrator Euler, floor friction "
          f"{args.floor_friction}, models: {', '.join(names)}\n")
    res = Results()
    for name in names:
        try:
            check_model(name, res, args.floor_friction)
        except Exception as exc:  # noqa: BLE001
            res.add(name, "exception", f"{type(exc).__name__}: {exc}"[:120], False)
    if not args.only or {"ur5e", "parallel_gripper"} <= set(args.only):
        try:
            test_arm_with_gripper(res, args.floor_friction)
        except Exception as exc:  # noqa: BLE001
            res.add("ur5e+parallel_gripper", "exception", f"{type(exc).__name__}: {exc}"[:120], False)
    res.print()
    print()
    print("FAILED" if res.failed else "all checks passed")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
