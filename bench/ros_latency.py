#!/usr/bin/env python3
"""Benchmark of the ROS 2 node (not a test: it prints numbers, asserts nothing).

1. Step rate of the turtlebot world at `--pacing asap`, transport off vs on (`--ros` with nobody
   listening, and `--ros` with an rclpy peer subscribed to /odom, /scan, /tf and /clock). Each
   configuration runs `--repeat` times; the best wall time counts (least disturbed by the other
   load on the machine). Prints the on/off ratios (issue 4's target: >= 0.80x).
2. Latency from the physics step that produced an odom message to its receipt in rclpy. The
   bridge's `latency_trace` (set with `--set components.ros2_bridge.latency_trace=FILE`) records
   the wall time right after the step that produced each message; the peer records the wall time
   of receipt; both are CLOCK_REALTIME on one machine. Prints median / p90 / max, at realtime
   pacing and at asap.

Usage (after `scripts/setup.sh --ros` and `cargo build --release --features ros`):

    . scripts/env.sh
    python bench/ros_latency.py                  # re-runs itself in a private network namespace
    python bench/ros_latency.py --steps 20000 --repeat 5 --world worlds/turtlebot_empty.yaml

ROQSIM_BIN selects the binary (default target/release/roqsim).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def in_netns():
    """Re-exec inside `unshare --net` (lo up, multicast on) unless already there or impossible."""
    if os.environ.get("ROQSIM_BENCH_NETNS") or not shutil.which("unshare"):
        return
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        print("(no private network namespace available: running on the host network)", file=sys.stderr)
        return
    env = dict(os.environ, ROQSIM_BENCH_NETNS="1")
    cmd = ["unshare", "--net", "sh", "-c", 'ip link set lo up && ip link set lo multicast on && exec "$@"', "sh", sys.executable] + sys.argv
    sys.exit(subprocess.run(cmd, env=env).returncode)


def binary():
    b = os.environ.get("ROQSIM_BIN") or str(ROOT / "target" / "release" / "roqsim")
    if not os.access(b, os.X_OK):
        sys.exit(f"{b} missing: cargo build --release --features ros (or set ROQSIM_BIN)")
    return b


SUMMARY = re.compile(r"run finished \((\w+)\): (\d+) steps, sim time ([\d.]+) s, wall ([\d.]+) s")


def run_sim(args, peer_topics=None, trace=None):
    """Run roqsim; with `peer_topics`, an rclpy peer subscribes them for the whole run.
    Returns (steps, wall_s, receipts {topic: [(stamp_ns, recv_wall_ns)]})."""
    argv = [binary(), "sim"] + args + ["-q"]
    if trace:
        argv += ["--set", f"components.ros2_bridge.latency_trace={trace}"]
    receipts = {}
    peer = None
    if peer_topics:
        peer = Peer(peer_topics)
        peer.start()
        time.sleep(0.5)  # the peer's subscriptions exist before the node starts
    p = subprocess.run(argv, capture_output=True, text=True, cwd=str(ROOT))
    if peer:
        time.sleep(0.5)
        receipts = peer.stop()
    m = SUMMARY.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"roqsim failed ({p.returncode}): {' '.join(argv)}\n{p.stdout}\n{p.stderr[-3000:]}")
    return int(m.group(2)), float(m.group(4)), receipts


class Peer(threading.Thread):
    """An rclpy node subscribed to `topics` in a thread, recording (stamp, receipt wall time)."""

    def __init__(self, topics):
        super().__init__(daemon=True)
        self.topics = topics
        self.got = {t: [] for t in topics}
        self.done = threading.Event()
        self.ready = threading.Event()

    def run(self):
        import rclpy
        from nav_msgs.msg import Odometry
        from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import LaserScan
        from tf2_msgs.msg import TFMessage

        types = {"/odom": (Odometry, 100), "/scan": (LaserScan, "sensor"), "/tf": (TFMessage, 100), "/clock": (Clock, "clock")}
        ctx = rclpy.Context()
        rclpy.init(context=ctx)
        node = rclpy.create_node("bench_peer", context=ctx)
        for t in self.topics:
            ty, q = types[t]
            qos = qos_profile_sensor_data if q == "sensor" else QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT) if q == "clock" else q

            def cb(m, t=t):
                now = time.time_ns()
                st = m.clock if t == "/clock" else (m.transforms[0].header.stamp if t == "/tf" else m.header.stamp)
                self.got[t].append((st.sec * 1_000_000_000 + st.nanosec, now))

            node.create_subscription(ty, t, cb, qos)
        from rclpy.executors import SingleThreadedExecutor

        ex = SingleThreadedExecutor(context=ctx)
        ex.add_node(node)
        self.ready.set()
        while not self.done.is_set():
            ex.spin_once(timeout_sec=0.01)
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)

    def stop(self):
        self.done.set()
        self.join(10)
        return self.got


def throughput(world, steps, repeat):
    base = ["--pacing", "asap", "--steps", str(steps), "--seed", "1"]
    configs = [
        ("transport off", [world] + base, None),
        ("--ros, no subscribers", [world, "--ros"] + base, None),
        ("--ros, rclpy on /odom /scan /tf /clock", [world, "--ros"] + base, ["/odom", "/scan", "/tf", "/clock"]),
    ]
    best = {}
    for _ in range(repeat):  # interleaved, so slow phases of the machine hit every configuration
        for name, args, topics in configs:
            n, wall, _ = run_sim(args, topics)
            best[name] = min(best.get(name, float("inf")), wall)
    off = best["transport off"]
    print(f"\n## Step rate, {Path(world).name} at --pacing asap, {steps} steps, best of {repeat}\n")
    print("| configuration | wall (s) | steps/s | real-time factor | vs off |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, _, _ in configs:
        w = best[name]
        print(f"| {name} | {w:.3f} | {steps / w:,.0f} | {steps * 0.002 / w:.1f}x | {off / w:.2f}x |")


def latency(world, seconds, pacing):
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.txt")
        _, _, rec = run_sim([world, "--ros", "--pacing", pacing, "--seconds", str(seconds), "--seed", "1"], ["/odom"], trace)
        sent = {}
        for line in Path(trace).read_text().splitlines():
            topic, stamp, wall = line.split()
            if topic == "/odom":
                sent[int(stamp)] = int(wall)
    lat = sorted((recv - sent[st]) / 1e6 for st, recv in rec["/odom"] if st in sent)
    if not lat:
        print(f"| {pacing} | no odom received |")
        return
    p90 = lat[int(0.9 * (len(lat) - 1))]
    print(f"| {pacing} | {len(lat)} / {len(sent)} | {statistics.median(lat):.3f} | {p90:.3f} | {lat[-1]:.3f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", default=str(ROOT / "worlds" / "turtlebot_floorplan.yaml"))
    ap.add_argument("--steps", type=int, default=20000, help="steps per throughput run (default 20000 = 40 s of sim time)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0, help="sim seconds of each latency run")
    a = ap.parse_args()
    in_netns()
    throughput(a.world, a.steps, a.repeat)
    print(f"\n## Latency: physics step that produced /odom -> receipt in rclpy ({Path(a.world).name}, {a.seconds} s of sim time)\n")
    print("| pacing | received / sent | median (ms) | p90 (ms) | max (ms) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    latency(a.world, a.seconds, "realtime")
    latency(a.world, a.seconds, "asap")


if __name__ == "__main__":
    main()
