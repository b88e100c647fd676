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
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import ray

__all__ = ["run_campaign", "run_trial"]

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


def _status(res, timeout_s, attempts):
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
    elif "results.json" not in res["files"]:
        status, note = "failed", "exited 0 without writing results.json"
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


def run_campaign(address, exe, root, indices, quiet=False, max_retries=3, num_cpus=1):
    """Run the trials `indices` of the campaign folder `root` as Ray tasks; returns the number
    that did not end ok."""
    # The workers import this package from what the driver ships (no install on the nodes).
    here = os.path.dirname(os.path.abspath(__file__))
    ray.init(address=address, log_to_driver=False, logging_level="ERROR",
             runtime_env={"py_modules": [here]})
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
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        i = pending.pop(ref)
        td = _trial_dir(root, i)
        starts = ray.get(counter.get.remote()).get(i, 1)
        try:
            res = ray.get(ref)
        except ray.exceptions.RayError as e:
            # Out of retries: the trial is marked, never dropped.
            res = {"code": None, "timed_out": False, "wall_s": 0.0, "stdout": b"",
                   "stderr": str(e).encode(), "files": {}}
            status = _status(res, trials[i]["wall_timeout_s"], _previous_attempts(td) + starts)
            status.update(status="crashed", note=f"the Ray task failed after {starts} start(s): {type(e).__name__}")
        else:
            status = _status(res, trials[i]["wall_timeout_s"], _previous_attempts(td) + starts)
        _write(td, res, status)
        done += 1
        if status["status"] != "ok":
            failed += 1
            print(f"trial {i}: {status['status']} ({status['note']})", file=sys.stderr)
        if not quiet:
            print(f"ray: {done}/{len(indices)} trials done, {failed} failed", file=sys.stderr)
    ray.shutdown()
    return failed
