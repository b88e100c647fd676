"""End-to-end tests of the roqsim ROS 2 node (issue 4): the real binary with `--ros`, driven by a
real ROS 2 peer (rclpy from the venv), each test on its own ROS domain inside the private network
namespace scripts/test.sh runs the suite in (see conftest.py).

Every test asserts measured message contents: distances, frame ids, ray layout, exact stamps,
error texts. Sim-time windows are used wherever a wall-clock cadence would blur a number.
"""

import ast
import math
import subprocess
from pathlib import Path

import pytest
import yaml
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TWO_ROBOTS = HERE / "worlds" / "two_turtlebots.yaml"

RELIABLE = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
CLOCK_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(
    depth=100,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


def ns(stamp):
    """builtin_interfaces/Time -> integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def yaw(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def clock_s(clock):
    return ns(clock[-1].clock) * 1e-9


# ----------------------------------------------------------------------------------- driving


def test_cmd_vel_drives_odom_one_metre_and_tf_agrees(roqsim, ros):
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from tf2_msgs.msg import TFMessage

    odom = ros.collect("/odom", Odometry, RELIABLE)
    clock = ros.collect("/clock", Clock, CLOCK_QOS)
    tf = ros.collect("/tf", TFMessage, QoSProfile(depth=1000))
    pub = ros.node.create_publisher(Twist, "/cmd_vel", 10)
    sim = roqsim("sim", "worlds/turtlebot_empty.yaml", "--ros", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin_until(lambda: odom and clock and pub.get_subscription_count() > 0, 20, "odom, /clock and roqsim's cmd_vel subscription")
    ros.spin(0.2)
    x0 = odom[-1].pose.pose.position.x
    assert abs(x0) < 1e-3, f"the robot starts at the odom origin, got x = {x0}"

    # 0.2 m/s for 5 s of SIM time (the window is read from /clock, not from the wall clock)
    cmd = Twist()
    cmd.linear.x = 0.2
    t0 = clock_s(clock)
    while clock_s(clock) < t0 + 5.0:
        assert sim.running(), sim.output()[-3000:]
        pub.publish(cmd)
        ros.spin(0.02)
    t1 = clock_s(clock)
    for _ in range(3):
        pub.publish(Twist())
        ros.spin(0.02)
    ros.spin_until(lambda: clock_s(clock) > t1 + 1.0, 10, "1 s of sim time to stop")
    assert 4.98 < t1 - t0 < 5.05, f"command window {t1 - t0:.3f} s of sim time"

    last = odom[-1]
    x = last.pose.pose.position.x - x0
    assert x == pytest.approx(1.00, abs=0.05), f"odom x after 0.2 m/s for 5 s of sim time: {x:.4f} m"
    assert abs(last.pose.pose.position.y) < 0.02
    assert abs(yaw(last.pose.pose.orientation)) < 0.02
    assert abs(last.twist.twist.linear.x) < 0.01, "stopped after the zero command"
    assert (last.header.frame_id, last.child_frame_id) == ("odom", "base_link")

    # /tf odom -> base_link at the same stamp carries the same pose (the two topics arrive on
    # separate subscriptions, so the /tf message of that stamp may still be in flight: wait for it)
    def same_stamp():
        return [
            t
            for m in tf
            for t in m.transforms
            if (t.header.frame_id, t.child_frame_id) == ("odom", "base_link") and ns(t.header.stamp) == ns(last.header.stamp)
        ]

    ros.spin_until(lambda: same_stamp() or any(ns(t.header.stamp) > ns(last.header.stamp) + 10**9 for m in tf for t in m.transforms), 10, "/tf at the odom stamp")
    same = same_stamp()
    assert same, f"no /tf odom->base_link stamped {ns(last.header.stamp)} ns ({len(tf)} /tf messages)"
    tr = same[-1].transform
    p = last.pose.pose
    assert (tr.translation.x, tr.translation.y, tr.translation.z) == pytest.approx((p.position.x, p.position.y, p.position.z), abs=1e-9)
    assert (tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w) == pytest.approx(
        (p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w), abs=1e-9
    )
    assert sim.stop() == 0, sim.output()[-3000:]


# ----------------------------------------------------------------------------------- scan


def test_scan_layout_frame_and_wall_distance(roqsim, ros):
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage

    manifest = yaml.safe_load((ROOT / "models" / "rplidar_a1" / "rplidar_a1.manifest.yaml").read_text())
    lidar = next(c["lidar"] for c in manifest["components"] if "lidar" in c)
    tb = yaml.safe_load((ROOT / "models" / "turtlebot4" / "turtlebot4.manifest.yaml").read_text())
    frame_id = next(c["spawn_sensor"]["frame_id"] for c in tb["components"] if "spawn_sensor" in c)

    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    static = ros.collect("/tf_static", TFMessage, LATCHED)
    sim = roqsim("sim", "worlds/turtlebot_floorplan.yaml", "--ros", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin_until(lambda: len(scans) >= 3 and static, 20, "three scans and /tf_static")

    s = scans[-1]
    n = lidar["rays"]
    assert s.header.frame_id == frame_id == "rplidar_link"
    assert len(s.ranges) == n == 360
    assert s.angle_min == pytest.approx(lidar["angle_min"], abs=1e-6)
    assert s.angle_max == pytest.approx(lidar["angle_max"], abs=1e-6)
    assert s.angle_increment == pytest.approx((lidar["angle_max"] - lidar["angle_min"]) / (n - 1), rel=1e-6)
    assert s.range_min == pytest.approx(lidar["range_min"], abs=1e-6)
    assert s.range_max == pytest.approx(lidar["max_range"], abs=1e-6)
    assert s.scan_time == pytest.approx(1.0 / lidar["rate_hz"], abs=1e-6)
    stamps = [ns(m.header.stamp) for m in scans[-3:]]
    assert [b - a for a, b in zip(stamps, stamps[1:])] == [100_000_000] * 2, f"10 Hz scans on sim time: {stamps}"

    # The scanner's bearing of world +x from the static TF chain base_link -> shell_link -> rplidar_link
    tfs = {t.child_frame_id: t for m in static for t in m.transforms}
    assert {"shell_link", frame_id} <= set(tfs), sorted(tfs)
    assert tfs[frame_id].header.frame_id == "shell_link"
    mount_yaw = yaw(tfs[frame_id].transform.rotation) + yaw(tfs["shell_link"].transform.rotation)
    bearing = -mount_yaw  # robot yaw 0: world +x seen from the scanner
    i = round((bearing - s.angle_min) / s.angle_increment)
    off = bearing - (s.angle_min + i * s.angle_increment)
    # worlds/turtlebot_floorplan.yaml: the divider's face is 2.000 m ahead of the scanner along +x
    expected = 2.0 / math.cos(off)
    assert s.ranges[i] == pytest.approx(expected, abs=0.005), f"ray {i} ({math.degrees(bearing):.1f} deg) reads {s.ranges[i]}"
    # and it is the nearest return in a +-10 deg cone (a wall, not a prop)
    cone = [r for k, r in enumerate(s.ranges) if abs(k - i) <= 10 and math.isfinite(r)]
    assert min(cone) == pytest.approx(2.0, abs=0.005)
    assert sim.stop() == 0


# ----------------------------------------------------------------------------------- clock


def test_clock_at_100hz_reaches_exactly_n_steps_and_stamps_are_sim_time(roqsim, ros):
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import LaserScan

    n, dt = 1500, 0.002
    clock = ros.collect("/clock", Clock, RELIABLE)
    odom = ros.collect("/odom", Odometry, RELIABLE)
    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    sim = roqsim("sim", "worlds/turtlebot_empty.yaml", "--ros", "--pacing", "realtime", "--steps", str(n), "-q")
    ros.spin_until(lambda: not sim.running(), 30, "the bounded run to end")
    ros.spin(0.5)
    assert sim.stop() == 0, sim.output()[-3000:]
    assert f"run finished (steps): {n} steps, sim time 3.000 s" in sim.output()

    c = [ns(m.clock) for m in clock]
    # /clock at the default 100 Hz: every 5th step of the 500 Hz physics
    # (the subscription may match only after discovery, a second or more into the 3 s run on a
    # loaded machine: the count is bounded loosely; the spacing below says none was missed after)
    assert len(c) > 20, f"only {len(c)} /clock messages"
    step = round(dt * 1e9)
    assert c[-1] == n * step, f"final /clock {c[-1]} ns, expected {n} x {dt} s"
    assert all(b - a == 5 * step for a, b in zip(c, c[1:])), "every /clock advances by exactly five timesteps (100 Hz)"

    o = [ns(m.header.stamp) for m in odom]
    s = [ns(m.header.stamp) for m in scans]
    assert len(o) > 50 and len(s) > 5, (len(o), len(s))
    clock_set = set(c)
    assert all(t in clock_set for t in o[-50:]), "odom stamps are sim times the clock published"
    assert all(t % step == 0 and 0 < t <= n * step for t in o + s), "stamps on the physics grid, within the run"
    assert {b - a for a, b in zip(o, o[1:])} == {20_000_000}, "odom at 50 Hz of sim time"
    assert {b - a for a, b in zip(s, s[1:])} == {100_000_000}, "scan at 10 Hz of sim time"
    assert o[-1] == n * step, "the last step's odom (t = n dt) arrived before roqsim exited"
    assert s[-1] >= n * step - 100_000_000, "scans (best effort) up to the end of the run"


# ----------------------------------------------------------------------------------- watchdog


def test_type_mismatch_ends_the_run_naming_both_sides(roqsim, ros):
    from geometry_msgs.msg import TwistStamped

    pub = ros.node.create_publisher(TwistStamped, "/cmd_vel", 10)
    sim = roqsim("sim", "worlds/turtlebot_empty.yaml", "--ros", "--pacing", "realtime", "--seconds", "60", "-q")
    ros.spin_until(lambda: not sim.running(), 20, "roqsim to end the run on the mismatch")
    assert pub.get_subscription_count() == 0, "the middleware never matched the two types"
    rc = sim.wait(10)
    out = sim.output()
    assert rc != 0, out[-3000:]
    expected = (
        "error: topic /cmd_vel: roqsim subscribes geometry_msgs/msg/Twist (endpoint cmd_vel) but a peer publishes "
        f"geometry_msgs/msg/TwistStamped (node /{ros.node.get_name()})"
    )
    assert expected in out, out[-3000:]


# ----------------------------------------------------------------------------------- namespaces


def test_two_namespaced_robots_topics_and_frames(roqsim, ros):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage

    o1 = ros.collect("/robot1/odom", Odometry, RELIABLE)
    o2 = ros.collect("/robot2/odom", Odometry, RELIABLE)
    scan1 = ros.collect("/robot1/scan", LaserScan, qos_profile_sensor_data)
    plain = ros.collect("/odom", Odometry, RELIABLE)
    static = ros.collect("/tf_static", TFMessage, LATCHED)
    tf = ros.collect("/tf", TFMessage, QoSProfile(depth=1000))
    sim = roqsim("sim", str(TWO_ROBOTS), "--ros", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin_until(lambda: o1 and o2 and scan1 and static and len(tf) > 10, 20, "both robots' odom, a scan and TF")

    for m, r in ((o1[-1], "robot1"), (o2[-1], "robot2")):
        assert (m.header.frame_id, m.child_frame_id) == (f"{r}/odom", f"{r}/base_link")
    assert scan1[-1].header.frame_id == "robot1/rplidar_link"
    assert plain == [], "nothing on the un-namespaced /odom"
    topics = {n for n, _ in ros.node.get_topic_names_and_types()}
    for r in ("robot1", "robot2"):
        assert {f"/{r}/odom", f"/{r}/scan", f"/{r}/imu", f"/{r}/cmd_vel", f"/{r}/joint_states"} <= topics, sorted(topics)
    statics = {(t.header.frame_id, t.child_frame_id) for m in static for t in m.transforms}
    for r in ("robot1", "robot2"):
        assert {(f"{r}/base_link", f"{r}/shell_link"), (f"{r}/shell_link", f"{r}/rplidar_link"), (f"{r}/base_link", f"{r}/imu_link")} <= statics, statics
    dyn = {(t.header.frame_id, t.child_frame_id) for m in tf for t in m.transforms}
    assert {("robot1/odom", "robot1/base_link"), ("robot2/odom", "robot2/base_link")} <= dyn, dyn
    assert sim.stop() == 0


def test_tf_namespace_moves_tf_topics_not_frames(roqsim, ros):
    from tf2_msgs.msg import TFMessage

    ns_tf = ros.collect("/robot1/tf", TFMessage, QoSProfile(depth=100))
    ns_static = ros.collect("/robot1/tf_static", TFMessage, LATCHED)
    glob = ros.collect("/tf", TFMessage, QoSProfile(depth=100))
    sim = roqsim("sim", "worlds/turtlebot_empty.yaml", "--tf-namespace", "robot1", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin_until(lambda: len(ns_tf) > 5 and ns_static, 20, "TF on /robot1/tf and /robot1/tf_static")
    assert glob == []
    assert ("odom", "base_link") in {(t.header.frame_id, t.child_frame_id) for m in ns_tf for t in m.transforms}
    assert ("base_link", "shell_link") in {(t.header.frame_id, t.child_frame_id) for m in ns_static for t in m.transforms}
    assert sim.stop() == 0


# ----------------------------------------------------------------------------------- transport flags


def test_no_communication_publishes_nothing(roqsim, ros, tmp_path):
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from tf2_msgs.msg import TFMessage

    # A world whose author declared the bridge: --no-communication drops it
    world = tmp_path / "declares_bridge.yaml"
    doc = yaml.safe_load((ROOT / "worlds" / "turtlebot_empty.yaml").read_text())
    doc["components"].append({"ros2_bridge": {}})
    world.write_text(yaml.safe_dump(doc))
    got = [ros.collect(t, ty, RELIABLE) for t, ty in (("/clock", Clock), ("/odom", Odometry), ("/tf", TFMessage))]
    sim = roqsim("sim", str(world), "--no-communication", "--pacing", "realtime", "--seconds", "3")
    ros.spin(2.0)
    assert sim.running(), sim.output()[-3000:]
    graph = {n for n, _ in ros.node.get_topic_names_and_types()}
    nodes = ros.node.get_node_names()
    assert sim.wait(30) == 0, sim.output()[-3000:]
    ros.spin(0.3)
    assert [len(g) for g in got] == [0, 0, 0], "nothing received on /clock, /odom, /tf"
    assert "roqsim" not in nodes, nodes
    assert not ({"/cmd_vel", "/scan", "/imu", "/joint_states", "/tf_static"} & graph), sorted(graph)
    assert [ros.node.count_publishers(t) for t in ("/clock", "/odom", "/tf")] == [0, 0, 0]
    out = sim.output()
    assert "--no-communication: this run communicates with nothing (dropped ros2_bridge)" in out, out[-2000:]
    assert "nothing is published (no /clock, no TF, no sensor topics, no odometry)" in out
    assert "run finished (seconds): 1500 steps" in out


def test_ros_and_no_communication_are_refused_together(roqsim_bin):
    p = subprocess.run(
        [roqsim_bin, "sim", "worlds/turtlebot_empty.yaml", "--ros", "--no-communication", "--steps", "1"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=str(ROOT),
    )
    assert p.returncode == 2, p.stderr
    assert "--no-communication and --ros/--tf-namespace/--sim-control are refused together: choose one" in p.stderr


# ----------------------------------------------------------------------------------- launch


def test_launch_file_syntax_and_arguments():
    path = ROOT / "launch" / "sim.launch.py"
    subprocess.run(["python3", "-m", "py_compile", str(path)], check=True)
    tree = ast.parse(path.read_text())
    declared = [
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "DeclareLaunchArgument" and n.args and isinstance(n.args[0], ast.Constant)
    ]
    assert declared == ["world", "namespace", "use_sim_time", "extra_args"]
    funcs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert "generate_launch_description" in funcs
    src = path.read_text()
    assert 'package="roqsim"' in src and 'executable="roqsim"' in src and '["sim", world, "--ros"]' in src


# ----------------------------------------------------------------------------------- lazy endpoints


def test_lazy_scan_is_produced_once_a_subscriber_appears(roqsim, ros):
    """A lazy lidar is skipped while /scan has no subscriber (the bridge reports
    has_subscribers = false at the first step) and produced again within about a second of one
    appearing (the bridge refreshes the count once a second)."""
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import LaserScan

    clock = ros.collect("/clock", Clock, CLOCK_QOS)
    sim = roqsim(
        "sim", "worlds/turtlebot_empty.yaml", "--ros", "--set", "components.robot.rplidar.lidar.lazy=true",
        "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock",
    )
    ros.spin_until(lambda: clock, 10, "/clock")
    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    t_sub = clock_s(clock)
    ros.spin_until(lambda: len(scans) >= 3, 10, "scans after subscribing to a lazy /scan")
    first = ns(scans[0].header.stamp) * 1e-9
    assert first - t_sub < 2.5, f"first scan {first - t_sub:.2f} s of sim time after subscribing"
    assert len(scans[-1].ranges) == 360
    assert sim.stop() == 0
