#!/usr/bin/env python3
"""What 20 walkers cost MuJoCo alone, and how much of it is collision: the compiled walkers_0 and
walkers_20 models (`bench_rows prepare` + `bench_rows trace`, 20000 steps, into WORK) stepped by
`mujoco.mj_step` replaying the engine run's recorded inputs (as py_bare.py), and walkers_20 once
more with the walkers' geoms and bodies taken out of collision (contype = conaffinity = 0).
Interleaved rounds, `time.process_time()` around the loop. Prints, asserts nothing.

    walker_floor.py WORK ROUNDS      (the venv's Python: it needs mujoco 3.17.0)
"""
import statistics
import sys
import time

import mujoco
import numpy as np

STEPS = 20000


def replay(prefix, m):
    d = mujoco.MjData(m)
    S = mujoco.mjtState
    n_user = mujoco.mj_stateSize(m, S.mjSTATE_USER)
    user = np.fromfile(prefix + ".user", dtype="<f8").reshape(-1, n_user)
    mujoco.mj_setState(m, d, np.fromfile(prefix + ".state", dtype="<f8"), S.mjSTATE_INTEGRATION)
    mujoco.mj_forward(m, d)
    u0 = np.empty(n_user)
    mujoco.mj_getState(m, d, u0, S.mjSTATE_USER)
    prev = np.vstack([u0[None, :], user[:-1]])
    changed = np.any(user.view("<u8") != prev.view("<u8"), axis=1)
    rows = [np.ascontiguousarray(u) if c else None for u, c in zip(user, changed)]
    t = time.process_time()
    for k in range(STEPS):
        if rows[k] is not None:
            mujoco.mj_setState(m, d, rows[k], S.mjSTATE_USER)
        mujoco.mj_step(m, d)
    return time.process_time() - t


work, rounds = sys.argv[1], int(sys.argv[2])
load = lambda w: mujoco.MjModel.from_binary_path(f"{work}/{w}.mjb")
out = load("walkers_20")
walkers = {b for b in range(out.nbody) if out.body_mocapid[b] >= 0}
for g in range(out.ngeom):
    if out.geom_bodyid[g] in walkers:
        out.geom_contype[g] = out.geom_conaffinity[g] = 0
for b in walkers:
    out.body_contype[b] = out.body_conaffinity[b] = 0
variants = [("walkers_0", "walkers_0", load("walkers_0")),
            ("walkers_20", "walkers_20", load("walkers_20")),
            ("walkers_20, walkers out of collision", "walkers_20", out)]
res = {k: [] for k, _, _ in variants}
for _ in range(rounds):
    for k, w, m in variants:
        res[k].append(replay(f"{work}/{w}", m))
print("| model | CPU s per round | median µs/step | min µs/step |")
print("| --- | --- | ---: | ---: |")
for k, xs in res.items():
    print(f"| {k} | {' '.join(f'{x:.3f}' for x in xs)} | {statistics.median(xs) / STEPS * 1e6:.1f} | {min(xs) / STEPS * 1e6:.1f} |")
