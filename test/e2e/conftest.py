"""pytest fixtures for roqsim's end-to-end tests: the real binary, driven by a real ROS 2 peer.

scripts/test.sh runs this suite with the ROS environment of scripts/env.sh, inside a private
network namespace (``unshare --net``, ``lo`` up with multicast): no DDS traffic leaves the run, and
parallel runs never see each other. On top of that each test gets its own ROS domain id, so a node
left over from one test is never discovered by the next.

Fixtures:
  roqsim_bin   path of the binary under test: $ROQSIM_BIN, else target/release/roqsim
               (build it with `cargo build --release --features ros`).
  domain_id    this test's ROS_DOMAIN_ID (the launched binary and the ``ros`` peer share it).
  roqsim       factory: ``sim = roqsim("sim", "worlds/demo.yaml", "--seconds", "5")`` starts the
               binary (cwd = repo root); ``wait_ready=`` a topic ("/clock": wait for a publisher)
               or a regex its stdout/stderr must match. The process is stopped (SIGINT, then SIGKILL) at teardown; on a failing
               test its output is printed. ``sim.stop()`` returns the exit code.
  ros          an rclpy node in a private context (``ros.node``), with helpers: ``spin(seconds)``,
               ``spin_until(predicate, timeout)``, ``wait_for_topic``, ``wait_for_node``,
               ``wait_for_message``, ``collect``, ``call``.

Example::

    def test_clock(roqsim, ros):
        from rosgraph_msgs.msg import Clock
        roqsim("sim", "worlds/demo.yaml", "--seconds", "5", wait_ready="/clock")
        msg = ros.wait_for_message("/clock", Clock, timeout=10)
        assert msg.clock.sec >= 0
"""

import itertools
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_domain_ids = itertools.cycle(range(1, 101))  # 1..100: valid Fast DDS ports for localhost


def pytest_report_header(config):
    netns = "private network namespace" if os.environ.get("ROQSIM_E2E_NETNS") else "host network (not isolated!)"
    return f"roqsim e2e: {netns}; RMW={os.environ.get('RMW_IMPLEMENTATION', '?')}"


@pytest.fixture(scope="session")
def roqsim_bin():
    path = Path(os.environ.get("ROQSIM_BIN") or ROOT / "target" / "release" / "roqsim")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{path} missing: run `cargo build --release --features ros` (scripts/test.sh does)")
    return str(path)


@pytest.fixture
def domain_id():
    return next(_domain_ids)


class RoqsimProcess:
    """The roqsim binary as a child process; output goes to a log file (no pipe can fill up)."""

    def __init__(self, argv, env, log_path):
        self.argv = argv
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "w+b")
        self.proc = subprocess.Popen(argv, cwd=str(ROOT), env=env, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def running(self):
        return self.proc.poll() is None

    def output(self):
        """Everything the process printed so far (stdout and stderr interleaved)."""
        if not self._log.closed:  # still readable after stop()
            self._log.flush()
        return self.log_path.read_bytes().decode("utf-8", "replace")

    def wait_output(self, pattern, timeout=20.0):
        """Wait until the output matches regex ``pattern``; returns the match."""
        rx = re.compile(pattern, re.M)
        end = time.monotonic() + timeout
        while True:
            m = rx.search(self.output())
            if m:
                return m
            if not self.running():
                raise AssertionError(f"roqsim exited ({self.proc.returncode}) before printing /{pattern}/:\n{self.output()[-4000:]}")
            if time.monotonic() > end:
                raise AssertionError(f"roqsim printed no /{pattern}/ in {timeout} s:\n{self.output()[-4000:]}")
            time.sleep(0.05)

    def wait(self, timeout=30.0):
        """Wait for the process to exit by itself; returns its exit code."""
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout=10.0):
        """SIGINT (a clean shutdown), then SIGKILL after ``timeout``; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._log.close()
        return self.proc.returncode


class RosPeer:
    """An rclpy node in its own context on this test's domain."""

    def __init__(self, domain_id, name):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def close(self):
        try:
            self.executor.shutdown()
            self.node.destroy_node()
        finally:
            if self.context.ok():
                self.rclpy.shutdown(context=self.context)

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def spin_until(self, predicate, timeout=10.0, what="condition"):
        end = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.05)

    def wait_for_topic(self, topic, timeout=15.0):
        """Wait until some node publishes ``topic``; returns its type names."""
        def found():
            for name, types in self.node.get_topic_names_and_types():
                if name == topic and self.node.count_publishers(topic) > 0:
                    return types
            return None
        return self.spin_until(found, timeout, f"a publisher of {topic}")

    def wait_for_node(self, name, timeout=15.0):
        """Wait until a node named ``name`` (plain or fully qualified) is in the graph."""
        def found():
            for n, ns in self.node.get_node_names_and_namespaces():
                if name in (n, (ns.rstrip("/") + "/" + n)):
                    return True
            return False
        return self.spin_until(found, timeout, f"node {name}")

    def collect(self, topic, msg_type, qos=10):
        """Subscribe now; returns the list the received messages are appended to."""
        got = []
        self.node.create_subscription(msg_type, topic, got.append, qos)
        return got

    def wait_for_message(self, topic, msg_type, timeout=15.0, qos=10, predicate=None):
        """The first message on ``topic`` (that satisfies ``predicate``, if given)."""
        got = self.collect(topic, msg_type, qos)
        ok = (lambda: next((m for m in got if predicate(m)), None)) if predicate else (lambda: got[0] if got else None)
        return self.spin_until(ok, timeout, f"a message on {topic}")

    def call(self, srv_type, name, request, timeout=15.0):
        """Call service ``name``; returns the response."""
        client = self.node.create_client(srv_type, name)
        self.spin_until(lambda: client.service_is_ready(), timeout, f"service {name}")
        future = client.call_async(request)
        self.spin_until(future.done, timeout, f"the reply of {name}")
        return future.result()


@pytest.fixture
def ros(domain_id, request):
    peer = RosPeer(domain_id, "e2e_" + re.sub(r"\W", "_", request.node.name)[:40])
    yield peer
    peer.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def roqsim(roqsim_bin, domain_id, ros, tmp_path, request):
    procs = []

    def start(*args, env=None, wait_ready=None, timeout=20.0):
        e = dict(os.environ)
        e["ROS_DOMAIN_ID"] = str(domain_id)
        e.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        e.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        e.setdefault("HOME", str(tmp_path))
        e.update(env or {})
        p = RoqsimProcess([roqsim_bin, *map(str, args)], e, tmp_path / f"roqsim-{len(procs)}.log")
        procs.append(p)
        if wait_ready:
            if wait_ready.startswith("/"):
                peer = ros
                end = time.monotonic() + timeout

                def alive_and_published():
                    if not p.running():
                        raise AssertionError(f"roqsim exited ({p.proc.returncode}):\n{p.output()[-4000:]}")
                    return any(n == wait_ready for n, _ in peer.node.get_topic_names_and_types()) \
                        and peer.node.count_publishers(wait_ready) > 0
                peer.spin_until(alive_and_published, max(0.0, end - time.monotonic()), f"a publisher of {wait_ready}")
            else:
                p.wait_output(wait_ready, timeout)
        return p

    yield start

    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for i, p in enumerate(procs):
        rc = p.stop()
        if failed:
            print(f"\n----- roqsim #{i} {' '.join(p.argv)} (exit {rc}) -----\n{p.output()[-6000:]}")
