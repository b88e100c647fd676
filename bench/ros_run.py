#!/usr/bin/env python3
"""One ROS 2 run of the benchmark suite, inside its own network namespace (rows 4 and 5).

bench/run.py calls this under `unshare --net` (loopback up, multicast on), once per run, so no two
runs — and nothing else on the machine — share a DDS domain.

    ros_run.py discover NODE OUT.json -- CMD...
        Start CMD (a simulator node named NODE), wait until NODE's set of published topics has
        been stable for 1.5 s, write [{topic, type, reliability, durability}] to OUT.json and stop
        CMD (SIGINT). /rosout and /parameter_events are left out.

    ros_run.py measure TOPICS.json [--native BIN] -- CMD...
        Create one subscriber per topic of TOPICS.json (the publisher's reliability and
        durability, depth 10), start CMD, wait for it, stop the subscribers. The subscribers are
        one rclpy node spun in a thread of this process, or with --native one
        `bench_subscriber` process (examples/bench_subscriber.rs: r2r, serialized takes) — a
        native consumer like Nav2 or MoveIt, which leaves the simulator the CPU a Python peer
        takes. Prints one JSON object: CMD's exit code, its stdout, its peak RSS (KiB, from
        wait4's rusage), its CPU seconds (user + sys, the whole process) and the messages
        received per topic.

Nothing here asserts a timing.
"""

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

SKIP = {"/rosout", "/parameter_events"}


def msg_class(type_name):
    """The rclpy class of `pkg/msg/Name`, or of an action's hidden-topic message
    (`pkg/action/Name_FeedbackMessage` -> `pkg.action.Name.Impl.FeedbackMessage`)."""
    pkg, kind, name = type_name.split("/")
    mod = importlib.import_module(f"{pkg}.{kind}")
    if kind == "action" and "_" in name:
        base, part = name.rsplit("_", 1)
        return getattr(getattr(mod, base).Impl, part)
    return getattr(mod, name)


def start(cmd, **kw):
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wait_rusage(p):
    """Wait for `p`; return (exit code, stdout, stderr, peak RSS KiB). Output is drained by
    threads so a chatty child never blocks on a full pipe."""
    out, err = [], []
    ts = [threading.Thread(target=lambda s=s, b=b: b.append(s.read()), daemon=True) for s, b in ((p.stdout, out), (p.stderr, err))]
    for t in ts:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.cpu_s = ru.ru_utime + ru.ru_stime
    for t in ts:
        t.join()
    return p.returncode, "".join(out), "".join(err), ru.ru_maxrss


def discover(node_name, out_path, cmd):
    import rclpy
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    rclpy.init()
    node = rclpy.create_node("bench_discover")
    p = start(cmd)
    found, stable_since, deadline = None, None, time.monotonic() + 60
    try:
        while time.monotonic() < deadline and p.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.1)
            try:
                now = sorted((t, ty[0]) for t, ty in node.get_publisher_names_and_types_by_node(node_name, "/") if t not in SKIP)
            except Exception:  # the node is not on the graph yet
                now = None
            if not now:
                continue
            if now != found:
                found, stable_since = now, time.monotonic()
            elif time.monotonic() - stable_since >= 1.5:
                break
        if not found:
            if p.poll() is None:
                p.kill()
            o, e = p.communicate()
            print(json.dumps({"error": f"node `{node_name}` published nothing (exit {p.returncode})", "stdout": o[-2000:], "stderr": e[-2000:]}))
            sys.exit(3)
        topics = []
        for t, ty in found:
            infos = [i for i in node.get_publishers_info_by_topic(t) if i.node_name == node_name]
            q = infos[0].qos_profile if infos else None
            rel = "best_effort" if q is not None and q.reliability == ReliabilityPolicy.BEST_EFFORT else "reliable"
            dur = "transient_local" if q is not None and q.durability == DurabilityPolicy.TRANSIENT_LOCAL else "volatile"
            topics.append({"topic": t, "type": ty, "reliability": rel, "durability": dur})
        subs = sorted((t, ty[0]) for t, ty in node.get_subscriber_names_and_types_by_node(node_name, "/") if t not in SKIP)
        with open(out_path, "w") as f:
            json.dump({"node": node_name, "publishes": topics, "subscribes": [{"topic": t, "type": ty} for t, ty in subs]}, f, indent=1)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        node.destroy_node()
        rclpy.shutdown()


def stamp_of(msg):
    """The sim-time stamp of a message, or None when it has none."""
    if hasattr(msg, "clock"):
        return msg.clock
    if hasattr(msg, "header"):
        return msg.header.stamp
    if getattr(msg, "transforms", None):
        return msg.transforms[0].header.stamp
    return None


class Peer(threading.Thread):
    """One rclpy node with one subscription per topic, spun in this thread; counts messages."""

    def __init__(self, topics):
        super().__init__(daemon=True)
        self.topics = topics
        self.count = {t["topic"]: 0 for t in topics}
        self.done = threading.Event()
        self.ready = threading.Event()
        self.error = None

    def run(self):
        try:
            import rclpy
            from rclpy.executors import SingleThreadedExecutor
            from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

            ctx = rclpy.Context()
            rclpy.init(context=ctx)
            node = rclpy.create_node("bench_peer", context=ctx)
            for t in self.topics:
                qos = QoSProfile(
                    history=HistoryPolicy.KEEP_LAST,
                    depth=10,
                    reliability=ReliabilityPolicy.BEST_EFFORT if t["reliability"] == "best_effort" else ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.TRANSIENT_LOCAL if t["durability"] == "transient_local" else DurabilityPolicy.VOLATILE,
                )
                name = t["topic"]
                latched = t["durability"] == "transient_local"  # /tf_static: stamped 0, counted

                def cb(msg, name=name, latched=latched):
                    # count what the timed loop produced: stamped after sim time 0 (roqsim's bridge
                    # re-publishes the t = 0 /clock while it idles waiting for subscribers)
                    st = None if latched else stamp_of(msg)
                    if st is None or st.sec or st.nanosec:
                        self.count[name] += 1

                node.create_subscription(msg_class(t["type"]), name, cb, qos)
            ex = SingleThreadedExecutor(context=ctx)
            ex.add_node(node)
        except Exception as e:  # reported by measure()
            self.error = repr(e)
            self.ready.set()
            return
        self.ready.set()
        while not self.done.is_set():
            ex.spin_once(timeout_sec=0.05)
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)

    def stop(self):
        self.done.set()
        self.join(15)


class NativePeer:
    """The `bench_subscriber` process: started, waited for its `ready`, stopped with SIGINT."""

    def __init__(self, binary, topics_path):
        self.p = start([binary, topics_path])
        self.error = None
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            self.p.kill()
            o, e = self.p.communicate()
            self.error = f"bench_subscriber did not start (exit {self.p.returncode}): {(line + o)[-500:]} {e[-1500:]}"

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        try:
            o, e = self.p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            o, e = self.p.communicate()
        j = json.loads(o.strip().splitlines()[-1])
        if j["unsubscribed"]:
            print(f"measure: bench_subscriber could not subscribe to: {j['unsubscribed']}", file=sys.stderr)
        return j["received"]


def measure(topics_path, cmd, native=None):
    with open(topics_path) as f:
        topics = json.load(f)["publishes"]
    if native:
        peer = NativePeer(native, topics_path)
    else:
        peer = Peer(topics)
        peer.start()
        peer.ready.wait(30)
    if peer.error:
        sys.exit(f"measure: the subscriber node failed: {peer.error}")
    time.sleep(0.5)  # the subscriptions exist before the simulator starts
    p = start(cmd)
    rc, out, err, rss = wait_rusage(p)
    cpu = p.cpu_s
    time.sleep(0.3)  # the last messages in flight
    if native:
        count = peer.stop()
    else:
        peer.stop()
        count = peer.count
    print(json.dumps({"rc": rc, "stdout": out, "stderr": err[-2000:], "maxrss_kb": rss, "cpu_s": cpu, "received": count}))


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    i = sys.argv.index("--")
    head, cmd = sys.argv[1:i], sys.argv[i + 1:]
    if head[:1] == ["discover"] and len(head) == 3:
        discover(head[1], head[2], cmd)
    elif head[:1] == ["measure"] and len(head) == 2:
        measure(head[1], cmd)
    elif head[:1] == ["measure"] and len(head) == 4 and head[2] == "--native":
        measure(head[1], cmd, native=head[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
