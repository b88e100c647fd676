"""roqsim campaigns on a Ray cluster: one Ray task per trial.

`roqsim campaign run campaign.yaml -o DIR --ray ADDRESS` validates the campaign, writes every
trial's folder (trial.json with the exact `roqsim` arguments, override.yaml) and hands the
pending trial indices to this package (`python -m roqsim_ray`). Each task runs the roqsim binary
on whichever node Ray picks, in a scratch folder of its own, and returns the files the trial
wrote; the driver writes them into DIR exactly where a local run puts them, so the table roqsim
builds afterwards is the same. A worker that dies mid-trial is Ray's to re-schedule
(`max_retries`); each start of a trial is counted and reported as the trial's `attempts`.

The roqsim binary and the campaign's world files must be at the same paths on every node (a
shared install); the trial's override document travels with the task.

An address no cluster answers at is refused within CONNECT_TIMEOUT_S (exit code 3), naming the
address and how to start a cluster. SIGTERM, SIGINT or SIGHUP (roqsim passes a stop of the
campaign on as SIGTERM) cancels every task not yet returned, killing its worker and with it the
trial's process, and the driver exits with code 130; those trials keep their previous state in
their folders (they run again on resume).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import ray

__all__ = ["run_campaign", "run_trial", "CONNECT_TIMEOUT_S", "STOPPED", "UNREACHABLE"]

# The longest the driver waits for the cluster to answer (connect and ray.init) before it gives
# up; docs/bounds.md.
CONNECT_TIMEOUT_S = 60.0
# Exit codes: the campaign was stopped by a signal; no cluster answered at the address.
STOPPED = 130
UNREACHABLE = 3

# Files a trial writes into its folder and the driver copies back.
_OUTPUTS = ("results.json", "record.mcap")


def _die_with_parent():
    """In the trial's child: get SIGKILL when the Ray worker running it dies."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


@ray.remote
class Attempts:
    """Counts the starts of each trial (a retried task starts again)."""

    def __init__(self):
        self.starts = {}

    def start(self, index):
        self.starts[index] = self.starts.get(index, 0) + 1
        return self.starts[index]

    def get(self):
        return dict(self.starts)


def run_trial(exe, trial, override_text, trial_dir, counter=None):
    """Run one trial's `roqsim` arguments in a scratch folder; return what it wrote."""
    if counter is not None:
        ray.get(counter.start.remote(trial["index"]))
    scratch = tempfile.mkdtemp(prefix="roqsim-trial-")
    try:
        with open(os.path.join(scratch, "override.yaml"), "w") as f:
            f.write(override_text)
        # The arguments name the trial's files relative to its folder (older trial.json files
        # named them absolute, in the driver's folder): run here, pointing both here.
        args = [a.replace(trial_dir, scratch) for a in trial["args"]]
        start = time.monotonic()
        timed_out = False
        try:
            p = subprocess.run(
                [exe] + args,
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=trial["wall_timeout_s"],
                preexec_fn=_die_with_parent,
            )
            code, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            timed_out = True
            code, out, err = None, e.stdout or b"", e.stderr or b""
        wall = time.monotonic() - start
        files = {}
        for name in _OUTPUTS:
            path = os.path.join(scratch, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    files[name] = f.read()
        return {
            "index": trial["index"],
            "code": code,
            "timed_out": timed_out,
            "wall_s": wall,
            "stdout": out,
            "stderr": err,
            "files": files,
            "node": ray.get_runtime_context().get_node_id(),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _complete(data, seed=None):
    """A complete results.json, by the local run's rule (src/campaign/run.rs, complete_results):
    the summary of a run that ended at its limit or a stop request, for the trial's seed."""
    try:
        v = json.loads(data)
    except ValueError:
        return False
    if not isinstance(v, dict):
        return False

    def whole(x):
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    return (isinstance(v.get("reason"), str)
            and "error" in v and v["error"] is None
            and whole(v.get("steps"))
            and isinstance(v.get("sim_time"), (int, float)) and not isinstance(v.get("sim_time"), bool)
            and whole(v.get("seed")) and (seed is None or v["seed"] == seed)
            and all(isinstance(v.get(k), dict) for k in ("poses", "monitors", "endpoints")))


def _status(res, timeout_s, attempts, seed=None):
    """status.json, by the same rules as a local run."""
    code = res["code"]
    signal_no = -code if code is not None and code < 0 else None
    exit_code = code if code is not None and code >= 0 else None
    if res["timed_out"]:
        status, note = "timeout", f"killed at the wall timeout of {_num(timeout_s)} s"
    elif signal_no is not None:
        status, note = "crashed", f"ended by signal {signal_no}"
    elif exit_code != 0:
        status, note = "failed", f"exited with code {exit_code}; see stderr.txt"
    elif not _complete(res["files"].get("results.json", b""), seed):
        status, note = "failed", "exited 0 without writing complete results (results.json)"
    elif json.loads(res["files"]["results.json"]).get("reason") == "interrupted":
        status, note = "interrupted", "the run was interrupted (SIGINT/SIGTERM) before its limit"
    else:
        status, note = "ok", ""
    return {
        "status": status,
        "exit_code": exit_code,
        "signal": signal_no,
        "wall_s": res["wall_s"],
        "attempts": attempts,
        "note": note,
    }


def _num(x):
    """A number as Rust's `{}` prints an f64 (1.5, 600)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _trial_dir(root, index):
    return os.path.join(root, "trials", f"{index:04}")


def _previous_attempts(td):
    try:
        with open(os.path.join(td, "status.json")) as f:
            return int(json.load(f).get("attempts", 0))
    except (OSError, ValueError):
        return 0


def _write(td, res, status):
    """Write a finished task's files into its trial folder, by a local run's rules: an output
    replaces the previous one only when the run is ok (or there was none); a failed run's output
    is kept aside as `results.failed.json` (`record.failed.mcap`), so a failed re-run never
    replaces good results. Each file is written whole, then renamed into place."""

    def put(path, data, mode="wb"):
        tmp = path + ".tmp"
        with open(tmp, mode) as f:
            f.write(data)
        os.replace(tmp, path)

    put(os.path.join(td, "stdout.txt"), res["stdout"])
    put(os.path.join(td, "stderr.txt"), res["stderr"])
    ok = status["status"] == "ok"
    for name in _OUTPUTS:
        stem, ext = name.rsplit(".", 1)
        kept, failed = os.path.join(td, name), os.path.join(td, f"{stem}.failed.{ext}")
        if os.path.exists(failed):  # an earlier failure's output never stands in for this run's
            os.remove(failed)
        if name in res["files"]:
            put(kept if ok or not os.path.exists(kept) else failed, res["files"][name])
    put(os.path.join(td, "status.json"), json.dumps(status, indent=2) + "\n", "w")


class Unreachable(Exception):
    """No Ray cluster answers at the address."""


def _fix(address):
    port = address.rsplit(":", 1)[-1] if ":" in address else "6379"
    if address in ("auto", ""):
        return ("start one with `ray start --head` on this machine, or name a running cluster's "
                "address (HOST:PORT, as `ray start --head` printed it)")
    return (f"start one there with `ray start --head --port={port}` (or pass the address "
            "`ray start --head` printed), or use --ray auto on a node of a running cluster")


def _check_reachable(address, timeout):
    """Refuse HOST:PORT (or ray://HOST:PORT) when nothing accepts a connection there."""
    if address in ("auto", "local", ""):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise Unreachable(e.strerror or str(e) or type(e).__name__) from e


def _connect(address, runtime_env, timeout=CONNECT_TIMEOUT_S):
    """ray.init, bounded: the driver gives up (exit UNREACHABLE) if the cluster does not answer
    within `timeout` seconds, naming the address and how to start a cluster."""

    def give_up(why):
        print(f"error: --ray {address}: no Ray cluster answers at this address ({why}): "
              f"{_fix(address)}", file=sys.stderr, flush=True)
        os._exit(UNREACHABLE)

    try:
        _check_reachable(address, min(timeout, 10.0))
    except Unreachable as e:
        give_up(str(e))
    # ray.init can wait on an address that accepts connections but is no cluster: a watchdog.
    dog = threading.Timer(timeout, give_up, args=(f"no answer within {timeout:g} s",))
    dog.daemon = True
    dog.start()
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR",
                 runtime_env=runtime_env)
    except (ConnectionError, RuntimeError, ValueError) as e:
        give_up(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    finally:
        dog.cancel()


def run_campaign(address, exe, root, indices, quiet=False, max_retries=3, num_cpus=1):
    """Run the trials `indices` of the campaign folder `root` as Ray tasks; returns the number
    that did not end ok, or None when a signal stopped the run (its tasks cancelled)."""
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    def trap():
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, on_signal)

    trap()
    # The workers import this package from what the driver ships (no install on the nodes).
    here = os.path.dirname(os.path.abspath(__file__))
    _connect(address, {"py_modules": [here]})
    trap()  # ray.init installs a SIGTERM handler of its own (sys.exit)
    if stop.is_set():
        ray.shutdown()
        return None
    counter = Attempts.remote()
    task = ray.remote(num_cpus=num_cpus, max_retries=max_retries)(run_trial)
    pending = {}
    trials = {}
    for i in indices:
        td = _trial_dir(root, i)
        with open(os.path.join(td, "trial.json")) as f:
            trial = json.load(f)
        with open(os.path.join(td, "override.yaml")) as f:
            override_text = f.read()
        trials[i] = trial
        ref = task.remote(exe, trial, override_text, td, counter)
        pending[ref] = i
    failed = 0
    done = 0
    while pending:
        if stop.is_set():
            # Cancel what has not returned: force kills the worker, and its trial's process dies
            # with it (PR_SET_PDEATHSIG); no status is written for them.
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - a task that just finished cannot be cancelled
                    pass
            ray.shutdown()
            print(f"ray: stopped by a signal; {len(pending)} trial(s) cancelled", file=sys.stderr)
            return None
        # A bounded wait, so a signal is seen between waits.
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
        if not ready:
            continue
        ref = ready[0]
        i = pending.pop(ref)
        td = _trial_dir(root, i)
        starts = ray.get(counter.get.remote()).get(i, 1)
        seed = trials[i].get("seed")
        try:
            res = ray.get(ref)
        except ray.exceptions.RayError as e:
            # Out of retries: the trial is marked, never dropped.
            res = {"code": None, "timed_out": False, "wall_s": 0.0, "stdout": b"",
                   "stderr": str(e).encode(), "files": {}}
            status = _status(res, trials[i]["wall_timeout_s"], _previous_attempts(td) + starts, seed)
            status.update(status="crashed", note=f"the Ray task failed after {starts} start(s): {type(e).__name__}")
        else:
            status = _status(res, trials[i]["wall_timeout_s"], _previous_attempts(td) + starts, seed)
        _write(td, res, status)
        done += 1
        if status["status"] != "ok":
            failed += 1
            print(f"trial {i}: {status['status']} ({status['note']})", file=sys.stderr)
        if not quiet:
            print(f"ray: {done}/{len(indices)} trials done, {failed} failed", file=sys.stderr)
    ray.shutdown()
    return failed
