#!/usr/bin/env python3
"""CPU-time A/B of the engine against the bare mj_step loop, for a loaded machine.

    bench/ab_cpu.py --bare BENCH_ROWS --engine NAME=BENCH_ROWS [--engine ...] \
        --world worlds/X.yaml --steps N --rounds R --work DIR

Prepares and traces the world once (with the first engine binary), then runs R rounds, each
round every configuration once in turn (interleaved): `bench_rows bare` (row 1) and `bench_rows
engine` (row 3) for each binary. Per run it reports the process's user+sys CPU seconds (wait4
rusage: the whole process, start-up included), and for the engine the loop's own CPU
(`cpu_s`). Checks every run ended in the same final state digest. Prints one Markdown table
with the median (min-max) per configuration and the ratio bare/engine of the medians.
Asserts nothing about timing: it only reports.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(cmd):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        out = os.open(ARGS.work + "/out.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{cmd}: exit status {status}")
    with open(ARGS.work + "/out.json") as f:
        out = json.loads(f.read().strip().splitlines()[-1])
    return ru.ru_utime + ru.ru_stime, out


ap = argparse.ArgumentParser()
ap.add_argument("--bare", required=True)
ap.add_argument("--engine", action="append", required=True)
ap.add_argument("--world", required=True)
ap.add_argument("--steps", type=int, default=50000)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--work", required=True)
ARGS = ap.parse_args()
os.makedirs(ARGS.work, exist_ok=True)
engines = [e.split("=", 1) for e in ARGS.engine]
prefix = ARGS.work + "/w"
subprocess.run([ARGS.bare, "prepare", ARGS.world, prefix], check=True, capture_output=True)
subprocess.run([ARGS.bare, "trace", ARGS.world, str(ARGS.steps), prefix], check=True, capture_output=True)
res = {"bare": []}
loop = {}
digests = set()
for r in range(ARGS.rounds):
    cpu, out = run([ARGS.bare, "bare", prefix, str(ARGS.steps)])
    assert out["same_physics"], out
    digests.add(out["final_digest"])
    res["bare"].append(cpu)
    for name, binary in engines:
        cpu, out = run([binary, "engine", ARGS.world, str(ARGS.steps)])
        digests.add(out["final_digest"])
        res.setdefault(name, []).append(cpu)
        loop.setdefault(name, []).append(out["cpu_s"])
    print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in res.items()), file=sys.stderr)
bare = statistics.median(res["bare"])
print(f"\n{ARGS.world}, {ARGS.steps} steps, {ARGS.rounds} interleaved rounds; final digests: {sorted(digests)}\n")
print("| configuration | process CPU s, median (min-max) | engine loop CPU s, median | bare ÷ this (process CPU) |")
print("| --- | ---: | ---: | ---: |")
for k, v in res.items():
    lp = f"{statistics.median(loop[k]):.3f}" if k in loop else ""
    print(f"| {k} | {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}) | {lp} | {bare / statistics.median(v):.3f} |")
