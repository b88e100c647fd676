#!/usr/bin/env python3
"""The benchmark suite's driver (bench/README.md). Called by bench/run.sh after the release build;
runs every row, prints one Markdown report and writes it to bench/results/<date>-<commit>.md.

Every figure is the median of --runs runs (default 3); the configurations of a table are
interleaved round by round, so a slow phase of the machine hits all of them alike. Each run is its
own process (its peak RSS comes from wait4's rusage). ROS runs each get a private network
namespace. Nothing asserts a timing.
"""

import argparse
import datetime
import json
import os
import platform
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
BENCH = ROOT / "bench"
PY = sys.executable

WORLDS = [
    ("turtlebot_floorplan", "worlds/turtlebot_floorplan.yaml"),
    ("ur_pick", "worlds/ur_pick.yaml"),
    ("ten_robots", "worlds/ten_robots.yaml"),
]


def log(msg):
    print(f"[bench {time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


T0 = time.monotonic()


class Failed(Exception):
    """A run that failed: its command, exit code and output."""

    def __init__(self, cmd, rc, out, err):
        super().__init__(f"command failed ({rc}): {' '.join(map(str, cmd))}\n{out[-3000:]}\n{err[-3000:]}")
        self.rc, self.out, self.err = rc, out, err

    def reason(self):
        """The first error line of the output, for the report."""
        for text in (self.err, self.out):
            for line in text.splitlines():
                if "error" in line.lower():
                    return re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        return f"exit code {self.rc}"


def run_proc(cmd, cwd=ROOT, env=None, check=True):
    """Run `cmd`; return (stdout, peak RSS KiB). Raises Failed on a non-zero exit."""
    p = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = [], []
    ts = [threading.Thread(target=lambda s=s, b=b: b.append(s.read()), daemon=True) for s, b in ((p.stdout, out), (p.stderr, err))]
    for t in ts:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    for t in ts:
        t.join()
    rc = os.waitstatus_to_exitcode(status)
    p.returncode = rc
    if rc != 0 and check:
        raise Failed(cmd, rc, "".join(out), "".join(err))
    return "".join(out), ru.ru_maxrss


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON line in: {text[-500:]}")


def netns_prefix():
    """The command prefix that runs something in a fresh network namespace with multicast on lo."""
    ns = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--net", "--map-root-user"]
    return ns + ["sh", "-c", 'ip link set lo up && ip link set lo multicast on && exec "$@"', "sh"]


def median(xs):
    return statistics.median(xs)


# ------------------------------------------------------------------------------------------ rows


ROW_4 = 4  # `--ros` with the native subscriber process
ROW_4B = 4.5  # `--ros` with the rclpy subscriber; shown as "4b"
ROW_4C = 4.7  # `--ros`, native subscribers on the Python node's topics only; shown as "4c"


class Suite:
    def __init__(self, a):
        self.a = a
        self.work = Path(tempfile.mkdtemp(prefix="roqsim-bench-"))
        self.rows = {}  # key -> {"rates": [...], "rss": [...], ...}
        self.notes = []
        self.ros_ok = a.ros

    def add(self, key, rate, rss, **extra):
        r = self.rows.setdefault(key, {"rates": [], "rss": []})
        r["rates"].append(rate)
        r["rss"].append(rss)
        for k, v in extra.items():
            r.setdefault(k, []).append(v)

    # row 6 + the shared compiled models
    def prepare(self):
        self.load = {}
        for r in range(self.a.runs):
            for name, path in WORLDS:
                out, rss = run_proc([self.a.bench_rows, "prepare", path, str(self.work / name)])
                j = last_json(out)
                j["rss"] = rss
                self.load.setdefault(name, []).append(j)
            log(f"row 6 load + compile: round {r + 1}/{self.a.runs} done")

    def prefix(self, name):
        return str(self.work / name)

    def traces(self):
        """The same-physics record: one untimed engine run per world (deterministic: every run
        of the same world and seed steps the same physics), replayed by rows 1 and 2."""
        self.trace = {}
        for name, path in WORLDS:
            out, _ = run_proc([self.a.bench_rows, "trace", path, str(self.a.steps), self.prefix(name)])
            self.trace[name] = last_json(out)
        log("same-physics traces recorded")

    def rows_123(self):
        steps = self.a.steps
        self.traces()
        for r in range(self.a.runs):
            for name, path in WORLDS:
                out, rss = run_proc([self.a.bench_rows, "bare", self.prefix(name), str(steps)])
                j = last_json(out)
                self.add((1, name), steps / j["wall_s"], rss, same=j["same_physics"], why=j.get("divergence"), digest=j["final_digest"])
                out, rss = run_proc([PY, str(BENCH / "py_bare.py"), self.prefix(name), str(steps)])
                j = last_json(out)
                self.add((2, name), steps / j["wall_s"], rss, same=j["same_physics"], why=j.get("divergence"))
                out, rss = run_proc([self.a.bench_rows, "engine", path, str(steps)])
                j = last_json(out)
                self.add((3, name), j["steps"] / j["wall_s"], rss, digest=j["final_digest"], cpu=j["cpu_s"] / j["sim_s"])
            log(f"rows 1-3: round {r + 1}/{self.a.runs} done")

    def ros_cmd(self, sub, *args):
        return netns_prefix() + [PY, str(BENCH / "ros_run.py"), sub, *args]

    def rows_45(self):
        steps = self.a.ros_steps
        # Which topics each simulator publishes (and with which QoS): asked from the ROS graph,
        # each discovery in its own namespace too.
        topics = {}
        self.ros_skipped = {}
        for name, path in WORLDS:
            f = self.work / f"topics-{name}.json"
            try:
                run_proc(self.ros_cmd("discover", "roqsim", str(f), "--", self.a.roqsim, "sim", path, "--ros", "--pacing", "realtime", "--seconds", "60", "--seed", "1", "-q"))
            except Failed as e:
                j = last_json(e.out) if "{" in e.out else {}
                why = Failed([], e.rc, j.get("stdout", ""), j.get("stderr", e.err)).reason()
                self.ros_skipped[name] = why
                log(f"row 4 {name}: `roqsim sim --ros` does not run: {why}")
                continue
            topics[name] = f
        fpy = self.work / "topics-py_sim.json"
        run_proc(self.ros_cmd("discover", "py_sim", str(fpy), "--", PY, str(BENCH / "py_sim_node.py"), self.prefix("turtlebot_floorplan"), "1000000"))
        self.topics = {k: json.loads(Path(v).read_text()) for k, v in topics.items()}
        self.topics["py_sim"] = json.loads(fpy.read_text())
        log("rows 4-5: topics discovered: " + ", ".join(f"{k} {len(v['publishes'])}" for k, v in self.topics.items()))

        # Row 4: a native (r2r) subscriber process per run; row 4b: the rclpy peer in-process
        # of ros_run.py. Row 5 is measured with the native subscriber too.
        peers = [(ROW_4, ["--native", self.a.bench_subscriber])] if self.a.bench_subscriber else []
        peers.append((ROW_4B, []))
        # Row 4c: roqsim doing row 5's job — subscribers on the Python node's topics only (plus
        # roqsim's latched ones, published once), so the TurtleBot's lazy range sensors, which the
        # Python node does not have, cast and publish nothing.
        same_job = None
        if "turtlebot_floorplan" in self.topics:
            rq = self.topics["turtlebot_floorplan"]["publishes"]
            py = {t["topic"] for t in self.topics["py_sim"]["publishes"]}
            sel = [t for t in rq if t["topic"] in py or t["durability"] == "transient_local"]
            self.same_job_topics = sorted(t["topic"] for t in sel)
            same_job = self.work / "topics-same-job.json"
            same_job.write_text(json.dumps({"node": "roqsim", "publishes": sel}))
        for r in range(self.a.runs):
            for name, path in WORLDS:
                if name not in topics:
                    continue
                for row, peer in peers:
                    out, _ = run_proc(self.ros_cmd("measure", str(topics[name]), *peer, "--", self.a.bench_rows_ros, "engine", path, str(steps), "--ros"))
                    j = last_json(out)
                    if j["rc"] != 0:
                        sys.exit(f"bench: bench_rows engine --ros failed ({j['rc']}):\n{j['stdout']}\n{j['stderr']}")
                    s = last_json(j["stdout"])
                    self.add((row, name), s["steps"] / s["wall_s"], j["maxrss_kb"], received=j["received"], cpu=s["cpu_s"] / s["sim_s"])
            out, _ = run_proc(self.ros_cmd("measure", str(fpy), *peers[0][1], "--", PY, str(BENCH / "py_sim_node.py"), self.prefix("turtlebot_floorplan"), str(steps)))
            j = last_json(out)
            if j["rc"] != 0:
                sys.exit(f"bench: py_sim_node failed ({j['rc']}):\n{j['stdout']}\n{j['stderr']}")
            s = last_json(j["stdout"])
            self.add((5, "turtlebot_floorplan"), s["steps"] / s["wall_s"], j["maxrss_kb"], received=j["received"], cpu=s["cpu_s"] / s["sim_s"])
            if self.a.bench_subscriber and same_job:
                name, path = WORLDS[0]
                out, _ = run_proc(self.ros_cmd("measure", str(same_job), "--native", self.a.bench_subscriber, "--", self.a.bench_rows_ros, "engine", path, str(steps), "--ros", "--lazy-unsubscribed"))
                j = last_json(out)
                if j["rc"] != 0:
                    sys.exit(f"bench: bench_rows engine --ros (row 4c) failed ({j['rc']}):\n{j['stdout']}\n{j['stderr']}")
                s = last_json(j["stdout"])
                self.add((ROW_4C, name), s["steps"] / s["wall_s"], j["maxrss_kb"], received=j["received"], cpu=s["cpu_s"] / s["sim_s"])
            log(f"rows 4-5: round {r + 1}/{self.a.runs} done")

    def row_7(self):
        self.pacing = []
        for r in range(self.a.runs):
            out, rss = run_proc([self.a.bench_rows, "pacing", "worlds/turtlebot_floorplan.yaml", str(self.a.pacing_seconds)])
            j = last_json(out)
            j["rss"] = rss
            self.pacing.append(j)
            log(f"row 7 pacing: run {r + 1}/{self.a.runs} done")

    def interleaved_ab(self, label, configs):
        """Rows 10 and 11: the engine row once per configuration `(mode, world, extra args, after)`
        per round, the configurations interleaved run by run; each run's JSON (with its peak RSS,
        then passed to `after` when given) collected per mode."""
        runs = {mode: [] for mode, _, _, _ in configs}
        for r in range(self.a.runs):
            for mode, world, extra, after in configs:
                out, rss = run_proc([self.a.bench_rows, "engine", world, str(self.a.steps), *extra])
                j = last_json(out)
                j["rss"] = rss
                if after:
                    after(j)
                runs[mode].append(j)
            log(f"{label}: round {r + 1}/{self.a.runs} done")
        return runs

    def only_report(self, row, interleaved, section):
        """The report of one row run alone (--record-only, --contacts-only)."""
        L = [f"# roqsim benchmark, row {row} alone — {self.date} — commit {self.commit}", ""]
        L.append(f"- CPU: {self.cpu} ({os.cpu_count()} logical CPUs visible); kernel {platform.release()}; {self.rustc}")
        L.append(f"- every figure: the median of {self.a.runs} runs, each run its own process; {interleaved} interleaved run by run")
        L.append("- command: `" + " ".join(["bench/run.sh", *self.a.passthrough]) + "`")
        L.append(f"- load average before the run: {self.loadavg}; after it: {self.loadavg_end}")
        L.extend(section)
        L.append("")
        L.extend(f"- {n}" for n in self.notes)
        L.append("")
        return "\n".join(L)

    # row 10: what `--record` costs (state at 50 Hz + every topic vs no recording)
    def row_record(self):
        out_file = self.work / "rec.mcap"

        def file_size(j):
            j["file_bytes"] = out_file.stat().st_size
            out_file.unlink()

        world = "worlds/turtlebot_floorplan.yaml"
        self.rec = self.interleaved_ab(
            "row 10 recording",
            (("off", world, [], None), ("on", world, ["--record", str(out_file)], file_size)),
        )

    def record_report(self):
        L = ["", "## Recording (row 10)", ""]
        if not getattr(self, "rec", None):
            L.append("Not measured (--no-record).")
            return L
        steps = self.a.steps
        rate = {m: median([j["steps"] / j["wall_s"] for j in self.rec[m]]) for m in ("off", "on")}
        cpu = {m: median([j["cpu_s"] / j["sim_s"] for j in self.rec[m]]) for m in ("off", "on")}
        size = median([j["file_bytes"] for j in self.rec["on"]])
        L.append(
            f"worlds/turtlebot_floorplan.yaml, asap, no transport, {steps} steps per run; `--record` as `roqsim sim --record` writes it: "
            "state samples at 50 Hz, every endpoint output as CDR, /tf, /tf_static, /clock at 100 Hz, the inbound log (engine `--record` in examples/bench_rows.rs). Goal: recording costs ≤ 10 % of the step rate."
        )
        L.append("")
        L.append("| recording | steps/s | real-time factor | × no recording | cost | simulator CPU s per sim s | file (MiB) | peak RSS (MiB) |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        dt = self.rec["off"][0]["sim_s"] / self.rec["off"][0]["steps"]
        for m, name in (("off", "off"), ("on", "state 50 Hz + all topics")):
            ratio = rate[m] / rate["off"]
            cost = f"{(1 - ratio) * 100:.1f} %" if m == "on" else ""
            mb = f"{size / 2**20:.1f}" if m == "on" else ""
            L.append(f"| {name} | {rate[m]:,.0f} | {rate[m] * dt:,.1f}× | {ratio:.3f} | {cost} | {cpu[m]:.3f} | {mb} | {median([j['rss'] for j in self.rec[m]]) / 1024.0:.1f} |")
        return L

    # row 11: what the contact-sensing observers cost (bench/worlds/contacts_on.yaml vs its base)
    CONTACT_WORLDS = (("off", "worlds/turtlebot_floorplan.yaml"), ("on", "bench/worlds/contacts_on.yaml"))

    def row_contacts(self):
        self.contacts = self.interleaved_ab(
            "row 11 contact sensing", tuple((mode, world, [], None) for mode, world in self.CONTACT_WORLDS)
        )

    def contacts_report(self):
        L = ["", "## Contact sensing (row 11)", ""]
        if not getattr(self, "contacts", None):
            L.append("Not measured (--no-contacts).")
            return L
        rate = {m: median([j["steps"] / j["wall_s"] for j in self.contacts[m]]) for m in ("off", "on")}
        cpu = {m: median([j["cpu_s"] / j["sim_s"] for j in self.contacts[m]]) for m in ("off", "on")}
        cpu_step = {m: median([j["cpu_s"] / j["steps"] * 1e6 for j in self.contacts[m]]) for m in ("off", "on")}
        j0 = self.contacts["off"][0]
        dt = j0["sim_s"] / j0["steps"]
        L.append(
            f"worlds/turtlebot_floorplan.yaml against bench/worlds/contacts_on.yaml (the same world plus bumper, contact_monitor, contact_impulse "
            f"and contact_location on the robot, contact_impulse and contact_location on the resting parcel), asap, no transport, {self.a.steps} steps per run, "
            "the two interleaved run by run. The cost per step is the difference of the wall time per step, and of the simulator's CPU time per step "
            "(the figure that holds on a loaded machine, where the wall time also counts the waits for a core)."
        )
        L.append("")
        L.append("| contact sensing | steps/s | real-time factor | × off | wall cost per step (µs) | simulator CPU per step (µs) | CPU cost per step (µs) | × off (CPU) | peak RSS (MiB) |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for m, name in (("off", "off (base world)"), ("on", "6 observers")):
            ratio = rate[m] / rate["off"]
            cost = f"{(1 / rate['on'] - 1 / rate['off']) * 1e6:.2f}" if m == "on" else ""
            cpu_cost = f"{cpu_step['on'] - cpu_step['off']:.2f}" if m == "on" else ""
            L.append(
                f"| {name} | {rate[m]:,.0f} | {rate[m] * dt:,.1f}× | {ratio:.3f} | {cost} | {cpu_step[m]:.2f} | {cpu_cost} | "
                f"{cpu_step[m] / cpu_step['off']:.3f} | {median([j['rss'] for j in self.contacts[m]]) / 1024.0:.1f} |"
            )
        return L

    def contacts_only_report(self):
        return self.only_report(11, "with and without the observers", self.contacts_report())

    # rows 8-9: cameras (examples/camera_bench.rs)
    def rows_camera(self):
        self.cam_frames, self.cam_steps = {}, {}
        for r in range(self.a.runs):
            out, _ = run_proc([self.a.camera_bench, "frames", "--frames", str(self.a.camera_frames)])
            for line in out.splitlines():
                if line.startswith("{"):
                    j = json.loads(line)
                    key = (j["shadows"], j["width"], j["height"], j["streams"])
                    self.cam_frames.setdefault(key, []).append(j["ms_per_frame"])
                    self.cam_device = f"{j['device']} ({j['renderer']})"
            for mode in ("none", "unsubscribed", "15", "30"):
                out, _ = run_proc([self.a.camera_bench, "steps", "worlds/turtlebot_d435.yaml", str(self.a.camera_steps), mode])
                self.cam_steps.setdefault(mode, []).append(last_json(out))
            log(f"rows 8-9 cameras: round {r + 1}/{self.a.runs} done")

    def camera_report(self):
        L = ["", "## Cameras (rows 8-9)", ""]
        if not getattr(self, "cam_frames", None):
            L.append("Not measured (no --camera-bench).")
            return L
        L.append(f"Row 8: milliseconds per frame through the shared render service, on {self.cam_device}; a room of five primitives under one light; points = the organised xyz+rgb cloud built on the CPU; labels = a segmentation_camera's id pass decoded to geom ids.")
        L.append("")
        L.append("| shadows | resolution | colour (ms) | colour+depth (ms) | colour+depth+points (ms) | labels (ms) | colour+labels (ms) |")
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for shadows in (False, True):
            for w, h in ((320, 240), (640, 480), (1280, 720)):
                cells = [median(self.cam_frames.get((shadows, w, h, k), [float("nan")])) for k in ("color", "color+depth", "color+depth+points", "labels", "color+labels")]
                L.append(f"| {'on' if shadows else 'off (sensor default)'} | {w}×{h} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
        L.append("")
        L.append(f"Row 9: step rate of worlds/turtlebot_d435.yaml (TurtleBot 4 + D435 640×480 colour+depth+points), asap, {self.a.camera_steps} steps per run, no transport. 'Unsubscribed' sets every camera stream's has_subscribers to false, as the ROS bridge reports a topic nobody reads; a rate renders every frame, as for subscribers.")
        L.append("")
        L.append("| camera | steps/s | real-time factor | × no camera | frames rendered |")
        L.append("| --- | ---: | ---: | ---: | ---: |")
        base = median([j["steps_per_s"] for j in self.cam_steps["none"]])
        names = {"none": "disabled (no camera)", "unsubscribed": "mounted, unsubscribed", "15": "subscribed, 15 Hz", "30": "subscribed, 30 Hz"}
        for mode in ("none", "unsubscribed", "15", "30"):
            js = self.cam_steps[mode]
            rate = median([j["steps_per_s"] for j in js])
            L.append(f"| {names[mode]} | {rate:,.0f} | {median([j['realtime_factor'] for j in js]):.2f}× | {rate / base:.3f} | {js[0]['frames']} |")
        return L

    # ------------------------------------------------------------------------------------ report

    def record_only_report(self):
        return self.only_report(10, "with and without recording", self.record_report())

    def cpu_goals(self):
        """The transport goals, from the simulator-CPU column: row 4 against row 3 (what `--ros`
        costs the simulator with native consumers) and row 5 against row 4 (a Python node)."""
        cpu = lambda row, name: median(self.rows[(row, name)]["cpu"]) if self.rows.get((row, name), {}).get("cpu") else None  # noqa: E731
        L = []
        for name, _ in WORLDS:
            c3, c4, c4b = cpu(3, name), cpu(ROW_4, name), cpu(ROW_4B, name)
            if c3 and c4:
                line = f"- {name}: `--ros` with native subscribers costs the simulator {c4 / c3:.2f}× the CPU per simulated second of no transport (goal on turtlebot_floorplan: ≤ 1.25×)"
                if c4b:
                    line += f"; with rclpy subscribers {c4b / c3:.2f}×"
                L.append(line)
        c4c, c5 = cpu(ROW_4C, "turtlebot_floorplan"), cpu(5, "turtlebot_floorplan")
        if c4c and c5:
            L.append(f"- turtlebot_floorplan: the Python + rclpy node spends {c5 / c4c:.1f}× the CPU per simulated second of roqsim `--ros` doing the same job (row 4c: the same topics, both with native subscribers; goal: ≥ 10×)")
        if getattr(self, "same_job_topics", None):
            L.append(f"- row 4c subscribes to: {', '.join(self.same_job_topics)}")
        if L:
            L.insert(0, "Simulator CPU: user + sys of the simulator process over the timed loop (every thread: bridge, DDS), from `CLOCK_PROCESS_CPUTIME_ID` in bench_rows and `time.process_time()` in py_sim_node.py, divided by the sim time the loop covered. Subscribers run in other processes (row 4b: in ros_run.py's) and are not counted.")
            L.insert(1, "")
        return L

    def report(self):
        a = self.a
        dt = {n: self.load[n][0]["timestep"] for n, _ in WORLDS}
        mib = lambda kb: kb / 1024.0  # noqa: E731
        L = []
        L.append(f"# roqsim benchmark — {self.date} — commit {self.commit}")
        L.append("")
        L.append(f"- CPU: {self.cpu} ({os.cpu_count()} logical CPUs visible); kernel {platform.release()}")
        L.append(f"- load average before the run: {self.loadavg}; during it: see the note at the end")
        L.append(f"- MuJoCo 3.17.0 (Rust: mujoco-rs 7.0.0; Python: mujoco {self.pymj}); {self.rustc}; Python {platform.python_version()}")
        L.append(f"- every figure: the median of {a.runs} runs, each run its own process; configurations interleaved round by round")
        L.append(f"- rows 1-3: {a.steps} steps per run; rows 4-5: {a.ros_steps} steps per run; row 7: {a.pacing_seconds:g} s of sim time per run")
        L.append("- command: `" + " ".join(["bench/run.sh", *a.passthrough]) + "`")
        L.append("")
        L.append("## Step rate (rows 1-5)")
        L.append("")
        L.append("| row | configuration | world | steps/s | real-time factor | × row 1 | row 4c ÷ row 5 | simulator CPU s per sim s | peak RSS (MiB) |")
        L.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        label = {
            1: "bare `mj_step` loop, Rust",
            2: "`mujoco.mj_step` loop, Python",
            3: "roqsim engine, no transport, asap",
            ROW_4: "roqsim `--ros`, native (r2r) subscriber per topic, another process",
            ROW_4B: "roqsim `--ros`, rclpy subscriber per topic",
            ROW_4C: "roqsim `--ros`, native subscribers on row 5's topics only (lazy sensors idle)",
            5: "Python + rclpy simulator node (bench/py_sim_node.py), native subscribers",
        }
        shown = {ROW_4B: "4b", ROW_4C: "4c"}
        r45 = None
        if (ROW_4C, "turtlebot_floorplan") in self.rows and (5, "turtlebot_floorplan") in self.rows:
            r45 = median(self.rows[(ROW_4C, "turtlebot_floorplan")]["rates"]) / median(self.rows[(5, "turtlebot_floorplan")]["rates"])
        refused = {}
        for name, _ in WORLDS:
            base = self.rows.get((1, name))
            b = median(base["rates"]) if base else None
            # The same-physics check: the bare rows replay the engine run's inputs; a ratio is
            # printed only when every bare run ended bitwise where the engine runs ended.
            if base:
                digests = set(base.get("digest", [])) | set(self.rows.get((3, name), {}).get("digest", []))
                whys = [w for row in (1,) for w, ok in zip(self.rows.get((row, name), {}).get("why", []), self.rows.get((row, name), {}).get("same", [])) if not ok]
                if whys or len(digests) > 1 or not all(base.get("same", [False])):
                    refused[name] = whys[0] if whys else f"final states differ between runs (digests {sorted(digests)})"
                    b = None
            for row in (1, 2, 3, ROW_4, ROW_4B, ROW_4C, 5):
                r = self.rows.get((row, name))
                if r is None:
                    continue
                rate = median(r["rates"])
                ratio = f"{rate / b:.3f}" if b else "—"
                if row == 2 and not all(r.get("same", [True])):
                    ratio = "— (not the same physics: " + next(w for w, ok in zip(r["why"], r["same"]) if not ok) + ")"
                x45 = f"{r45:.1f}" if (row in (ROW_4C, 5) and name == "turtlebot_floorplan" and r45) else ""
                cpu = f"{median(r['cpu']):.3f}" if r.get("cpu") else ""
                L.append(f"| {shown.get(row, row)} | {label[row]} | {name} | {rate:,.0f} | {rate * dt[name]:,.1f}× | {ratio} | {x45} | {cpu} | {mib(median(r['rss'])):.1f} |")
        L.append("")
        L.extend(self.cpu_goals())
        L.append("")
        for name, _ in WORLDS:
            t = getattr(self, "trace", {}).get(name)
            if name in refused:
                L.append(f"- **{name}: no ratio** — the bare loop did not step the engine's physics: {refused[name]}")
            elif t:
                L.append(
                    f"- {name}: same physics — rows 1 and 2 replayed the engine run's {t['user_changes']:,} input changes "
                    f"(mjSTATE_USER, {t['user_len']} numbers) and {t['physics_overwritten']:,} overwritten physics states; every run's final state is bitwise the engine's (digest {t['final_digest']})"
                )
        if not self.ros_ok:
            L.append("")
            L.append(f"Rows 4 and 5 not measured: {self.ros_reason}")
        for name, why in getattr(self, "ros_skipped", {}).items():
            L.append("")
            L.append(f"Row 4 not measured for {name}: `roqsim sim worlds/{name}.yaml --ros` stops at startup: {why}")
        L.append("")
        L.append("## Load + compile (row 6)")
        L.append("")
        L.append("| world | plugins | bodies / geoms / actuators | parse + expand + instantiate (ms) | MJCF world + plugin build (ms) | compile (ms) | total, file to first step (ms) | peak RSS (MiB) |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, _ in WORLDS:
            js = self.load[name]
            f = lambda k: median([j[k] for j in js]) * 1e3  # noqa: E731
            j0 = js[0]
            L.append(
                f"| {name} | {j0['plugins']} | {j0['nbody']} / {j0['ngeom']} / {j0['nu']} | {f('load_s'):.1f} | {f('build_s'):.1f} | {f('compile_s'):.1f} | {f('total_s'):.1f} | {mib(median([j['rss'] for j in js])):.1f} |"
            )
        L.append("")
        L.append("## Realtime pacing (row 7)")
        L.append("")
        ps = self.pacing
        g = lambda k: median([p[k] for p in ps])  # noqa: E731
        if not ps:
            L.append("Not measured (--no-pacing).")
        else:
            L.append("| world | sim time per run | steps | step-spacing error p50 / p99 / max (µs) | lateness p50 / p99 / max (µs) | wall − sim at the end (ms) | debt dropped (s) | CPU s per sim s | peak RSS (MiB) |")
            L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            L.append(
                f"| turtlebot_floorplan | {a.pacing_seconds:g} s | {ps[0]['steps']} | {g('spacing_p50_us'):.0f} / {g('spacing_p99_us'):.0f} / {g('spacing_max_us'):.0f} | "
                f"{g('late_p50_us'):.0f} / {g('late_p99_us'):.0f} / {g('late_max_us'):.0f} | {g('end_drift_ms'):.2f} | {g('dropped_s'):.3f} | {g('cpu_per_sim_s'):.3f} | {mib(median([p['rss'] for p in ps])):.1f} |"
            )
        L.extend(self.camera_report())
        L.extend(self.record_report())
        L.extend(self.contacts_report())
        L.append("")
        L.append("## Notes")
        L.append("")
        if hasattr(self, "topics"):
            hz = 1.0 / dt["turtlebot_floorplan"]
            L.append(
                f"- rows 4/5 run {a.ros_steps} steps ({a.ros_steps * dt['turtlebot_floorplan']:g} s of sim time): /clock is published {a.ros_steps * 100 / hz:,.0f} times "
                f"(100 Hz, the default), a 100 Hz topic {a.ros_steps * 100 / hz:,.0f}, 50 Hz {a.ros_steps * 50 / hz:,.0f}, 10 Hz {a.ros_steps * 10 / hz:,.0f}. "
                "Received counts below that are messages the subscribers could not take in time (KEEP_LAST, depth 10)."
            )
            for k, v in self.topics.items():
                L.append(f"- {k} publishes {len(v['publishes'])} topics, each given one subscriber (native in rows 4 and 5, rclpy in 4b): {group_topics([t['topic'] for t in v['publishes']])}")
            for key in sorted(k for k in self.rows if k[0] in (ROW_4, ROW_4B, ROW_4C, 5)):
                rec = self.rows[key].get("received")
                if rec:
                    counts = {t: median([r[t] for r in rec]) for t in rec[0]}
                    L.append(f"- row {shown.get(key[0], key[0])} {key[1]}: messages received per run (median; stamped after the run began): {group_counts(counts)}")
        L.append(f"- load average after the run: {self.loadavg_end}")
        L.extend(f"- {n}" for n in self.notes)
        L.append("")
        return "\n".join(L)


def _groups(topics):
    """Topics that differ only in a numbered namespace (/robot3/odom) grouped as /robotN/odom."""
    out = {}
    for t in topics:
        out.setdefault(re.sub(r"^/([A-Za-z_]+)\d+/", r"/\1N/", t), []).append(t)
    return out


def group_topics(topics):
    return ", ".join(k if len(v) == 1 else f"{k} (x{len(v)})" for k, v in _groups(topics).items())


def group_counts(counts):
    parts = []
    for k, v in _groups(counts).items():
        lo, hi = min(counts[t] for t in v), max(counts[t] for t in v)
        parts.append(f"{k} {lo:,.0f}" if len(v) == 1 else f"{k} {lo:,.0f}-{hi:,.0f} each (x{len(v)})" if lo != hi else f"{k} {lo:,.0f} each (x{len(v)})")
    return ", ".join(parts)


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git(*args):
    return subprocess.run(["git", *args], cwd=str(ROOT), capture_output=True, text=True).stdout.strip()


def row_alone(s, row, report, tag):
    """Run one row alone (--record-only, --contacts-only); its report is printed and, with --save,
    written to bench/results/<date>-<tag>-<commit>.md."""
    try:
        log(f"work dir {s.work}; CPU {s.cpu}; commit {s.commit}")
        row()
        s.loadavg_end = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        text = report()
    except Failed as e:
        sys.exit(f"bench: {e}")
    finally:
        shutil.rmtree(s.work, ignore_errors=True)
    print(text)
    if s.a.save:
        out = BENCH / "results" / f"{s.date}-{tag}-{s.commit}.md"
        out.write_text(text)
        log(f"written to {out.relative_to(ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-rows", required=True, help="the bench_rows example, release, ROS-free build")
    ap.add_argument("--bench-rows-ros", help="the bench_rows example, release, `--features ros` build (row 4)")
    ap.add_argument("--bench-subscriber", help="the bench_subscriber example, release, `--features ros` build (row 4's native subscriber; without it row 4 is skipped and only 4b runs)")
    ap.add_argument("--roqsim", help="the roqsim binary, release, `--features ros` build (topic discovery for row 4)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure; the median is reported (default 3, minimum 3)")
    ap.add_argument("--steps", type=int, default=20000, help="steps per run of rows 1-3 (default 20000 = 40 s of sim time)")
    ap.add_argument("--ros-steps", type=int, default=10000, help="steps per run of rows 4-5 (default 10000 = 20 s of sim time)")
    ap.add_argument("--pacing-seconds", type=float, default=60.0, help="sim seconds per row-7 run (default 60)")
    ap.add_argument("--no-ros", dest="ros", action="store_false", help="skip rows 4 and 5")
    ap.add_argument("--no-pacing", dest="pacing", action="store_false", help="skip row 7")
    ap.add_argument("--camera-bench", help="the camera_bench example, release, ROS-free build (rows 8-9)")
    ap.add_argument("--camera-frames", type=int, default=20, help="frames per configuration per run of row 8 (default 20)")
    ap.add_argument("--camera-steps", type=int, default=5000, help="steps per run of row 9 (default 5000 = 10 s of sim time)")
    ap.add_argument("--no-record", dest="record", action="store_false", help="skip row 10 (the cost of --record)")
    ap.add_argument("--record-only", action="store_true", help="run row 10 alone (the cost of --record); written to bench/results/<date>-record-<commit>.md")
    ap.add_argument("--no-contacts", dest="contacts", action="store_false", help="skip row 11 (the cost of contact sensing)")
    ap.add_argument("--contacts-only", action="store_true", help="run row 11 alone (the cost of contact sensing); written to bench/results/<date>-contacts-<commit>.md")
    ap.add_argument("--no-save", dest="save", action="store_false", help="print only; write nothing under bench/results/")
    ap.add_argument("passthrough", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.runs < 3:
        sys.exit("bench: --runs must be at least 3 (every figure is a median of at least 3 runs)")
    s = Suite(a)
    s.cpu = cpu_model()
    s.commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        s.notes.append("the working tree had uncommitted changes to tracked files when this ran (`git status`): the commit above is the base")
    s.date = datetime.date.today().isoformat()
    s.loadavg = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    s.rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip() or "rustc ?"
    s.pymj = subprocess.run([PY, "-c", "import mujoco; print(mujoco.__version__)"], capture_output=True, text=True).stdout.strip()
    s.ros_reason = "--no-ros was given" if not a.ros else ""
    if a.ros and not (a.roqsim and a.bench_rows_ros):
        s.ros_ok, s.ros_reason = False, "no `--features ros` build was given (--roqsim, --bench-rows-ros)"
    if a.ros and os.environ.get("ROQSIM_HAVE_ROS") != "1":
        s.ros_ok, s.ros_reason = False, "the ROS 2 environment is missing (scripts/setup.sh --ros, then . scripts/env.sh)"
    if s.ros_ok and subprocess.run(netns_prefix() + ["true"], capture_output=True).returncode != 0:
        s.ros_ok, s.ros_reason = False, "no private network namespace could be made (`unshare --net` failed)"
    if a.contacts_only:
        return row_alone(s, s.row_contacts, s.contacts_only_report, "contacts")
    if a.record_only:
        return row_alone(s, s.row_record, s.record_only_report, "record")
    try:
        log(f"work dir {s.work}; CPU {s.cpu}; commit {s.commit}")
        s.prepare()
        s.rows_123()
        if s.ros_ok:
            s.rows_45()
        s.pacing = []
        if a.pacing:
            s.row_7()
        if a.camera_bench:
            s.rows_camera()
        if a.record:
            s.row_record()
        if a.contacts:
            s.row_contacts()
        s.loadavg_end = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        text = s.report()
    except Failed as e:
        sys.exit(f"bench: {e}")
    finally:
        shutil.rmtree(s.work, ignore_errors=True)
    print(text)
    if a.save:
        out = BENCH / "results" / f"{s.date}-{s.commit}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        log(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
