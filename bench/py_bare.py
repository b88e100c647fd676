#!/usr/bin/env python3
"""Row 2 of the benchmark suite: a Python `mujoco.mj_step` loop on the compiled model roqsim saved.

Usage: py_bare.py PREFIX STEPS   (PREFIX.mjb and PREFIX.state from `bench_rows prepare`)
Prints one JSON object: steps, wall_s. Asserts nothing.
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
    sig = mujoco.mjtState.mjSTATE_INTEGRATION
    state = np.fromfile(prefix + ".state", dtype="<f8")
    if state.size != mujoco.mj_stateSize(m, sig):
        sys.exit(f"{prefix}.state holds {state.size} numbers, the model's state has {mujoco.mj_stateSize(m, sig)}")
    mujoco.mj_setState(m, d, state, sig)
    mujoco.mj_forward(m, d)
    step = mujoco.mj_step
    t = time.perf_counter()
    for _ in range(steps):
        step(m, d)
    wall = time.perf_counter() - t
    print(json.dumps({"steps": steps, "wall_s": wall, "sim_s": steps * m.opt.timestep, "mujoco": mujoco.__version__}))


if __name__ == "__main__":
    main()
