#!/usr/bin/env python3
"""Measure the Husky A200 model's skid-steer slip_factor (diff_drive's yaw-term inflation).

A four-wheel skid-steer turns by scrubbing its tyres sideways, so commanding the ideal
differential-drive wheel speeds for a yaw rate w yields only a fraction of w. diff_drive multiplies
the yaw term of the wheel command by slip_factor (and divides it back out of odometry):

    omega_left  = (v - w * slip_factor * track / 2) / r
    omega_right = (v + w * slip_factor * track / 2) / r

This script compiles husky_a200.xml on a floor plane with MuJoCo's Python bindings (timestep 0.002,
default Euler integrator), lets it settle, commands an in-place yaw rate by that formula and
measures the achieved yaw rate (mean over the last 3 s of a 5 s run):

  1. with slip_factor = 1 -> ratio achieved/commanded, first estimate = commanded/achieved;
  2. then iterates  s <- s * commanded/achieved  until the compensated turn is within 1 %
     (the relation is not linear: wheels spinning faster also slip longitudinally).

Usage:  python3 models/husky_a200/calibrate_slip.py [--floor-friction 1.0 2.0] [--rates 0.3 0.5 1.0]
The tyre geoms have friction 1.0; MuJoCo combines a contact's friction as the max of the two geoms,
so the floor's sliding friction is what varies the result.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import mujoco
import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
XML = HERE / "husky_a200.xml"
MANIFEST = HERE / "husky_a200.manifest.yaml"
DT = 0.002


def diff_cfg():
    doc = yaml.safe_load(MANIFEST.read_text())
    for entry in doc["components"]:
        if "diff_drive" in entry:
            return entry["diff_drive"]
    raise SystemExit("no diff_drive in the manifest")


def build(friction: float):
    scene = mujoco.MjSpec()
    scene.option.timestep = DT
    floor = scene.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [20, 20, 0.05]
    floor.friction = [friction, 0.005, 0.0001]
    child = mujoco.MjSpec.from_file(str(XML))
    frame = scene.worldbody.add_frame()
    frame.pos = [0, 0, 0.14]
    frame.attach_body(child.worldbody.first_body(), "h_", "")
    model = scene.compile()
    data = mujoco.MjData(model)
    for _ in range(int(2.0 / DT)):          # settle onto the wheels
        mujoco.mj_step(model, data)
    return model, data


def yaw(q):
    w, x, y, z = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def achieved_yaw_rate(friction, w_cmd, slip, cfg, seconds=5.0, window=3.0):
    model, data = build(friction)
    r = cfg["wheel_radius"]
    half = cfg["wheel_separation"] / 2
    ids = {name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "h_" + name)
           for name in cfg["left_actuators"] + cfg["right_actuators"]}
    wl = -w_cmd * slip * half / r
    wr = +w_cmd * slip * half / r
    for name in cfg["left_actuators"]:
        data.ctrl[ids[name]] = wl
    for name in cfg["right_actuators"]:
        data.ctrl[ids[name]] = wr
    n_total, n_win = int(seconds / DT), int(window / DT)
    acc, prev = 0.0, yaw(data.qpos[3:7])
    for i in range(n_total):
        mujoco.mj_step(model, data)
        if not np.all(np.isfinite(data.qpos)):
            raise RuntimeError("simulation diverged")
        cur = yaw(data.qpos[3:7])
        if i >= n_total - n_win:
            acc += (cur - prev + math.pi) % (2 * math.pi) - math.pi
        prev = cur
    sat = max(abs(data.actuator_force[i]) / model.actuator_forcerange[i][1] for i in ids.values())
    return acc / window, sat


def calibrate(friction, w_cmd, cfg):
    w0, _ = achieved_yaw_rate(friction, w_cmd, 1.0, cfg)
    slip = w_cmd / w0
    for _ in range(8):
        w, sat = achieved_yaw_rate(friction, w_cmd, slip, cfg)
        if abs(w - w_cmd) <= 0.01 * w_cmd:
            break
        slip *= w_cmd / w
    return w0, slip, w, sat


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floor-friction", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--rates", type=float, nargs="+", default=[0.3, 0.5, 1.0])
    args = ap.parse_args()
    cfg = diff_cfg()
    print(f"MuJoCo {mujoco.__version__}, dt {DT}, Euler; r {cfg['wheel_radius']}, "
          f"track {cfg['wheel_separation']}, manifest slip_factor {cfg.get('slip_factor')}")
    print(f"{'floor mu':>8} {'w_cmd':>6} {'ratio@1':>8} {'1/ratio':>8} {'slip(iter)':>10} "
          f"{'w@slip':>7} {'torque/limit':>12}")
    for mu in args.floor_friction:
        for w_cmd in args.rates:
            w0, slip, w, sat = calibrate(mu, w_cmd, cfg)
            print(f"{mu:8.2f} {w_cmd:6.2f} {w0 / w_cmd:8.3f} {w_cmd / w0:8.3f} {slip:10.3f} "
                  f"{w:7.3f} {sat:12.2f}")
        ms = cfg.get("slip_factor")
        if ms:
            for w_cmd in args.rates:
                w, _ = achieved_yaw_rate(mu, w_cmd, ms, cfg)
                print(f"{mu:8.2f} {w_cmd:6.2f}  with manifest slip {ms}: achieved {w:.3f} "
                      f"({w / w_cmd:.3f})")


if __name__ == "__main__":
    main()
