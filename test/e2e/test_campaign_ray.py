"""`roqsim campaign run --ray`: the same campaign on a local Ray cluster (started here with
`ray start --head`, two worker slots) gives the local run's table, and a worker killed
mid-trial is re-scheduled by Ray: every trial still completes once, the retried one says so.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

WORLD = """sim: {timestep: 0.002, world: empty_room}
components:
  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}}}
    name: robot
    components:
      - contact_monitor: {}
      - navigator: {speed: 0.3, goals: [GOAL], arrival_radius: 0.2}
"""

CAMPAIGN = """worlds: [open.yaml, turn.yaml]
factors:
  components.robot.rplidar.lidar.range_stddev: [0.0, 0.02]
repetitions: 2
seed: 40
limits: {seconds: 40.0, wall_timeout_s: 120}
collect:
  poses: [robot]
  endpoints: [/scan]
"""


def ray_bin():
    return str(Path(sys.executable).parent / "ray")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    # Ray's socket paths must stay short: a temp dir directly under /tmp.
    tmp = tempfile.mkdtemp(prefix="rq-ray-", dir="/tmp")
    port = free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    start = subprocess.run(
        [ray_bin(), "start", "--head", "--num-cpus=2", "--node-ip-address=127.0.0.1",
         f"--port={port}", f"--temp-dir={tmp}", "--include-dashboard=false",
         "--disable-usage-stats"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    try:
        assert start.returncode == 0, start.stdout + start.stderr
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray_bin(), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)


def folder(tmp_path):
    (tmp_path / "open.yaml").write_text(WORLD.replace("GOAL", "[2.0, 1.0]"))
    (tmp_path / "turn.yaml").write_text(WORLD.replace("GOAL", "[0.5, -2.0]"))
    (tmp_path / "campaign.yaml").write_text(CAMPAIGN)
    return tmp_path


def rows(out):
    return [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]


def ray_workers_running_a_trial():
    """(worker pid, roqsim pid) for each `roqsim sim` whose parent is a Ray worker."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            if len(cmd) < 2 or not cmd[0].endswith(b"roqsim") or cmd[1] != b"sim":
                continue
            ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            parent = (Path("/proc") / str(ppid) / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent.startswith(b"ray::"):
            found.append((ppid, int(p.name)))
    return found


def test_a_ray_campaign_matches_the_local_table_after_a_worker_dies(cluster, roqsim_bin, tmp_path):
    d = folder(tmp_path)
    local = subprocess.run(
        [str(roqsim_bin), "campaign", "run", "campaign.yaml", "-o", "local", "--jobs", "2", "-q"],
        cwd=d, capture_output=True, text=True, timeout=300,
    )
    assert local.returncode == 0, local.stdout + local.stderr
    proc = subprocess.Popen(
        [str(roqsim_bin), "campaign", "run", "campaign.yaml", "-o", "onray", "--ray", cluster, "-q"],
        cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, ROQSIM_PYTHON=sys.executable),
    )
    # Kill the Ray worker process running the first trial seen, mid-trial.
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        running = ray_workers_running_a_trial()
        if running:
            worker, trial_pid = running[0]
            time.sleep(0.3)
            os.kill(worker, signal.SIGKILL)
            killed = trial_pid
        time.sleep(0.05)
    out, err = proc.communicate(timeout=300)
    assert killed is not None, "never saw a trial running on a Ray worker:\n" + err
    assert proc.returncode == 0, out + err
    assert "campaign: 8 trials: 8 ran (8 ok, 0 not), 0 skipped" in out, out + err
    a, b = rows(d / "local"), rows(d / "onray")
    assert len(a) == len(b) == 8
    retried = [r["trial"] for r in b if r["attempts"] == 2]
    assert len(retried) == 1, b
    assert all(r["attempts"] in (1, 2) for r in b)
    for ra, rb in zip(a, b):
        for k in ("wall_s", "attempts"):
            ra.pop(k)
            rb.pop(k)
        assert ra == rb
        assert rb["status"] == "ok"
        assert rb["reason"] == "seconds" and rb["steps"] == 20000
    # Bitwise: each trial's results.json is the same file on Ray as locally.
    for i in range(8):
        fa = (d / "local" / "trials" / f"{i:04}" / "results.json").read_bytes()
        fb = (d / "onray" / "trials" / f"{i:04}" / "results.json").read_bytes()
        assert fa == fb, f"trial {i}"


def summary(steps, seed=9):
    """A complete results.json, as `roqsim sim --summary` writes it."""
    return json.dumps({"reason": "steps", "stop_reason": None, "error": None, "steps": steps,
                       "sim_time": steps * 0.002, "seed": seed, "episode": 0, "poses": {},
                       "monitors": {}, "endpoints": {}}).encode() + b"\n"


def test_a_failed_ray_rerun_keeps_the_good_results(tmp_path):
    """The Ray driver writes a finished task's files by the local run's rules: a failed re-run's
    summary goes aside (results.failed.json) and the good results.json stays byte for byte; a
    later ok run replaces it and clears the aside copy. A results.json that is not a complete
    summary for the trial's seed is no result."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "campaign"))
    from roqsim_ray import _status, _write

    td = tmp_path / "0003"
    td.mkdir()
    good = summary(50)
    (td / "results.json").write_bytes(good)
    failed_run = {"code": 2, "timed_out": False, "wall_s": 0.1, "stdout": b"", "stderr": b"boom\n",
                  "files": {"results.json": b'{"reason": "error"}\n'}}
    st = _status(failed_run, 10.0, 1, 9)
    assert st["status"] == "failed" and st["note"] == "exited with code 2; see stderr.txt"
    _write(str(td), failed_run, st)
    assert (td / "results.json").read_bytes() == good
    assert (td / "results.failed.json").read_bytes() == b'{"reason": "error"}\n'
    assert json.loads((td / "status.json").read_text())["status"] == "failed"
    assert (td / "stderr.txt").read_bytes() == b"boom\n"

    for partial in (b'{"reason": "steps", "steps": 60}\n', summary(60, seed=10), b"[]"):
        st = _status(dict(failed_run, code=0, files={"results.json": partial}), 10.0, 2, 9)
        assert st["status"] == "failed", partial
        assert st["note"] == "exited 0 without writing complete results (results.json)"

    ok_run = dict(failed_run, code=0, stderr=b"", files={"results.json": summary(60)})
    st = _status(ok_run, 10.0, 2, 9)
    assert st["status"] == "ok"
    _write(str(td), ok_run, st)
    assert (td / "results.json").read_bytes() == summary(60)
    assert not (td / "results.failed.json").exists()
    assert sorted(p.name for p in td.iterdir()) == ["results.json", "status.json", "stderr.txt", "stdout.txt"]


def test_an_unreachable_ray_address_fails_naming_it(roqsim_bin, tmp_path):
    """Nothing listens at the address: the campaign fails at once (exit 2), naming the address
    and how to start a cluster; no trial ran."""
    d = folder(tmp_path)
    port = free_port()
    p = subprocess.run(
        [str(roqsim_bin), "campaign", "run", "campaign.yaml", "-o", "out", "--ray",
         f"127.0.0.1:{port}", "-q"],
        cwd=d, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, ROQSIM_PYTHON=sys.executable),
    )
    assert p.returncode == 2, p.stdout + p.stderr
    assert (f"error: --ray 127.0.0.1:{port}: no Ray cluster answers at this address (Connection "
            f"refused): start one there with `ray start --head --port={port}`") in p.stderr, p.stderr
    assert "error: --ray: the roqsim_ray driver failed (exit status: 3); its error is above" in p.stderr
    assert not list((d / "out" / "trials").glob("*/status.json"))


def drivers_running(out):
    """Pids of roqsim_ray drivers working on the campaign folder `out`."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"roqsim_ray" in cmd and str(out).encode() in cmd:
            found.append(int(p.name))
    return found


def test_a_stopped_ray_campaign_ends_its_driver_and_trials(cluster, roqsim_bin, tmp_path):
    """SIGTERM to `campaign run --ray`: the driver cancels its tasks (their trial processes die
    with their workers) and exits; the campaign writes its table and exits 130; nothing of it
    keeps running."""
    d = folder(tmp_path)
    (d / "campaign.yaml").write_text("world: open.yaml\nrepetitions: 2\nlimits: {seconds: 100000}\n")
    proc = subprocess.Popen(
        [str(roqsim_bin), "campaign", "run", "campaign.yaml", "-o", "out", "--ray", cluster, "-q"],
        cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, ROQSIM_PYTHON=sys.executable),
    )
    out = (d / "out").resolve()
    deadline = time.monotonic() + 120
    while len(ray_workers_running_a_trial()) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "the trials never ran on the cluster"
        time.sleep(0.05)
    assert drivers_running(out)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    assert "campaign: stopped by a signal" in stderr, stderr
    assert "ray: stopped by a signal; 2 trial(s) cancelled" in stderr, stderr
    assert drivers_running(out) == []
    deadline = time.monotonic() + 60
    while ray_workers_running_a_trial():
        assert time.monotonic() < deadline, "a trial outlived its cancelled task"
        time.sleep(0.1)
    # The cancelled trials keep no status: they run again on resume.
    assert [r["status"] for r in rows(out)] == ["pending", "pending"]
