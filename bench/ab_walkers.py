#!/usr/bin/env python3
"""Interleaved CPU-time A/B of the walker rows (bench/README.md, "Walker rows"), for a loaded
machine. Prints, asserts nothing.

    bench/ab_walkers.py WORK WORLDS ROUNDS NAME=BENCH_ROWS [NAME=BENCH_ROWS ...]

WORLDS: comma-separated names of bench/worlds/*.yaml. Each round runs every world with every
binary in turn, each its own process: `bench_rows engine bench/worlds/<world>.yaml 20000` (the
loop's own `cpu_s`), or, for a binary named `bare`, the bare `mj_step` replay of WORK/<world>
(`bench_rows bare`: the compiled model with the engine run's recorded inputs and no plugin; its
user+sys CPU from wait4, start-up included) — prepare it first with `bench_rows prepare
bench/worlds/<world>.yaml WORK/<world>` and `bench_rows trace bench/worlds/<world>.yaml 20000
WORK/<world>`. Run from the repository root. Prints per world and binary the CPU seconds of
every round, the median and the minimum in µs per step, and the final state digests seen.
"""
import json
import os
import statistics
import sys

STEPS = 20000
work, worlds, rounds = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
binaries = [a.split("=", 1) for a in sys.argv[4:]]


def run(cmd):
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        os.dup2(os.open(work + "/out.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{cmd}: exit status {status}")
    with open(work + "/out.json") as f:
        out = json.loads(f.read().strip().splitlines()[-1])
    return ru.ru_utime + ru.ru_stime, out


res = {}
for r in range(rounds):
    for w in worlds:
        for name, b in binaries:
            if name == "bare":
                cpu, out = run([b, "bare", f"{work}/{w}", str(STEPS)])
                if not out["same_physics"]:
                    sys.exit(f"bare {w}: {out}")
            else:
                _, out = run([b, "engine", f"bench/worlds/{w}.yaml", str(STEPS)])
                cpu = out["cpu_s"]
            res.setdefault((w, name), []).append((cpu, out["final_digest"]))
    print(f"round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
print("| world | binary | CPU s per round | median µs/step | min µs/step | final digests |")
print("| --- | --- | --- | ---: | ---: | --- |")
for w in worlds:
    for name, _ in binaries:
        v = res[(w, name)]
        xs = [x for x, _ in v]
        ds = ", ".join(sorted({d for _, d in v}))
        print(f"| {w} | {name} | {' '.join(f'{x:.3f}' for x in xs)} | "
              f"{statistics.median(xs) / STEPS * 1e6:.1f} | {min(xs) / STEPS * 1e6:.1f} | {ds} |")
