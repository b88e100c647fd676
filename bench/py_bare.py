#!/usr/bin/env python3
"""Row 2 of the benchmark suite: a Python `mujoco.mj_step` loop on the compiled model roqsim saved,
replaying the inputs the engine run recorded (`bench_rows trace`) before every step, as row 1 does.

Usage: py_bare.py PREFIX STEPS   (PREFIX.mjb from `bench_rows prepare`; PREFIX.trace's dense
copies PREFIX.user, PREFIX.phys, PREFIX.last from `bench_rows trace`)
Prints one JSON object: steps, wall_s, same_physics (the final mjSTATE_INTEGRATION state bitwise
equal to the engine run's) and, when false, the first differing field. Asserts nothing.
"""

import json
import sys
import time

import mujoco
import numpy as np


def main():
    prefix, steps = sys.argv[1], int(sys.argv[2])
    m = mujoco.MjModel.from_binary_path(prefix + ".mjb")
    d = mujoco.MjData(m)
    S = mujoco.mjtState
    sig_all, sig_user = S.mjSTATE_INTEGRATION, S.mjSTATE_USER
    sig_phys = S.mjSTATE_FULLPHYSICS | S.mjSTATE_WARMSTART
    n_user, n_phys = mujoco.mj_stateSize(m, sig_user), mujoco.mj_stateSize(m, sig_phys)
    user = np.fromfile(prefix + ".user", dtype="<f8").reshape(-1, n_user)
    phys_flat = np.fromfile(prefix + ".phys", dtype="<f8").reshape(-1, 1 + n_phys)
    last = np.fromfile(prefix + ".last", dtype="<f8")
    if user.shape[0] != steps:
        sys.exit(f"{prefix}.user holds {user.shape[0]} steps, asked for {steps}")
    # The trace's initial state: the physics part of step 0 is the engine's post-reset state,
    # which the .state file of `bench_rows prepare` holds in full.
    state = np.fromfile(prefix + ".state", dtype="<f8")
    mujoco.mj_setState(m, d, state, sig_all)
    mujoco.mj_forward(m, d)
    phys = {int(row[0]): np.ascontiguousarray(row[1:]) for row in phys_flat}
    # Set the user inputs only on the steps where they changed (as row 1 does).
    u0 = np.empty(n_user)
    mujoco.mj_getState(m, d, u0, sig_user)
    prev = np.vstack([u0[None, :], user[:-1]])
    changed = np.any(user.view("<u8") != prev.view("<u8"), axis=1)
    rows = [np.ascontiguousarray(u) if c else None for u, c in zip(user, changed)]
    step, set_state = mujoco.mj_step, mujoco.mj_setState
    t = time.perf_counter()
    for k in range(steps):
        p = phys.get(k)
        if p is not None:
            set_state(m, d, p, sig_phys)
        u = rows[k]
        if u is not None:
            set_state(m, d, u, sig_user)
        step(m, d)
    wall = time.perf_counter() - t
    now = np.empty(mujoco.mj_stateSize(m, sig_all))
    mujoco.mj_getState(m, d, now, sig_all)
    same = now.shape == last.shape and bool(np.all(now.view("<u8") == last.view("<u8")))
    out = {"steps": steps, "wall_s": wall, "sim_s": steps * m.opt.timestep, "mujoco": mujoco.__version__, "same_physics": same}
    if not same:
        fields = [("time", 1), ("qpos", m.nq), ("qvel", m.nv), ("act", m.na)]
        off = 0
        for name, n in fields:
            diff = np.nonzero(now[off:off + n].view("<u8") != last[off:off + n].view("<u8"))[0]
            if diff.size:
                i = int(diff[0])
                out["divergence"] = f"{name}[{i}]: recorded {last[off + i]:e}, replayed {now[off + i]:e} at the end"
                break
            off += n
        else:
            out["divergence"] = "a field after act differs at the end"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
