"""Recording (``roqsim sim --record``) read by the real MCAP readers from PyPI (``mcap``,
``mcap-ros2-support``), a run driven over ROS 2 replayed offline bit for bit, SIGINT finalising
the file, and ``roqsim replay`` / ``roqsim state`` on the command line."""

import json
import math
import struct
import subprocess
import time
from collections import Counter

import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

WORLD = "worlds/turtlebot_empty.yaml"
# worlds/turtlebot_empty.yaml's sensor plugins, by address (its lidar first)
LIDAR = "robot.rplidar.lidar"
SENSORS = ("robot.rplidar.lidar, robot.imu, robot.cliff_side_left, robot.cliff_side_right, robot.cliff_front_left, "
           "robot.cliff_front_right, robot.ir_intensity_side_left, robot.ir_intensity_left, robot.ir_intensity_front_left, "
           "robot.ir_intensity_front_center_left, robot.ir_intensity_front_center_right, robot.ir_intensity_front_right, "
           "robot.ir_intensity_right")


def read_all(path):
    """(metadata by name, [(topic, schema name, log_time, decoded message)]) of a recording."""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        meta = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        msgs = []
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            if channel.topic == "/roqsim/inbound":
                # std_msgs/String whose data is the event's JSON: every channel has a ROS 2
                # schema, as rosbag2's MCAP storage requires
                assert schema.name == "std_msgs/msg/String" and channel.message_encoding == "cdr"
                decoded = json.loads(decoded.data)
            msgs.append((channel.topic, schema.name, message.log_time, decoded))
    return meta, msgs


def ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def run(roqsim_bin, *args, timeout=300):
    return subprocess.run([roqsim_bin, *args], capture_output=True, text=True, timeout=timeout)


def test_recording_opens_with_the_python_readers_and_matches_its_rates(roqsim_bin, tmp_path):
    out = tmp_path / "run.mcap"
    p = run(roqsim_bin, "sim", WORLD, "--seconds", "4", "--pacing", "asap", "--seed", "3", "-q", "--record", str(out))
    assert p.returncode == 0, p.stderr
    meta, msgs = read_all(out)
    prov = meta["roqsim.provenance"]
    assert prov["format_version"] == "2" and prov["seed"] == "3"
    assert prov["world_yaml"] == open(WORLD).read()
    assert meta["roqsim.summary"]["finished"] == "true" and meta["roqsim.summary"]["steps"] == "2000"

    counts = Counter(t for t, _, _, _ in msgs)
    states = [(lt, m) for t, _, lt, m in msgs if t == "/roqsim/state"]
    # 50 Hz on the 500 Hz grid: every 10th step, plus the state after the initial reset
    assert len(states) == 201
    assert [m.step for _, m in states[:3]] == [0, 10, 20]
    by_log_time = {lt: m for lt, m in states}
    steps = 2000

    # Every recorded endpoint's count is what its rate gives over the run.
    topics = json.loads(prov["topics"])
    assert {"/odom", "/scan", "/imu", "/joint_states"} <= set(topics), sorted(topics)
    for topic, row in topics.items():
        if topic.endswith("/robot_description"):
            # latched: published once at configure, as robot_state_publisher does, not at a rate
            assert counts[topic] == 1, (topic, row, counts[topic])
            continue
        assert counts[topic] == steps // row["every_steps"], (topic, row, counts[topic])
    # /clock at the bridge's default 100 Hz: every 5th step (the last step's time is among them),
    # and the t = 0 the start's reset leaves, as the bridge publishes it
    assert counts["/clock"] == steps // 5 + 1
    rates = {r["name"]: r for r in json.loads(prov["endpoint_rates"])}
    assert rates["record /roqsim/state"]["every_steps"] == 10
    assert (rates["record /clock"]["realised_hz"], rates["record /clock"]["every_steps"]) == (100.0, 5)

    # Header stamps are sim time, equal to the state sample taken at the same step.
    matched = 0
    for topic, schema, lt, m in msgs:
        if hasattr(m, "header") and lt in by_log_time:
            assert ns(m.header.stamp) == round(by_log_time[lt].time * 1e9), (topic, lt)
            matched += 1
    assert matched > 300
    odom = [m for t, _, _, m in msgs if t == "/odom"]
    assert (odom[0].header.frame_id, odom[0].child_frame_id) == ("odom", "base_link")
    scan = [m for t, _, _, m in msgs if t == "/scan"]
    assert scan[0].header.frame_id == "rplidar_link" and len(scan[0].ranges) > 100
    tf = [m for t, _, _, m in msgs if t == "/tf"]
    assert any(tr.child_frame_id == "base_link" for m in tf for tr in m.transforms)

    r = run(roqsim_bin, "replay", str(out), "--verify")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "replay ok: 2000 steps, 0 inbound events applied, 201 state samples bitwise identical"
    s = run(roqsim_bin, "state", str(out), "--at", "1.0")
    assert s.returncode == 0, s.stderr
    line = json.loads(s.stdout)
    assert line["step"] == 500 and line["time"] == pytest.approx(1.0, abs=1e-9)
    assert line["qpos"] == list(by_log_time[1_000_000_000].qpos)

    # The lidar re-run on the restored sample at t = 1.0 s (seed and episode from the recording)
    # publishes exactly the scan the run published at that step, noise draws included.
    s = run(roqsim_bin, "state", str(out), "--at", "1.0", "--sensor", LIDAR)
    assert s.returncode == 0, s.stderr
    assert len(s.stdout.splitlines()) == 1, s.stdout[:300]
    j = json.loads(s.stdout)
    assert (j["sensor"], j["step"], j["tick"], j["episode"]) == (LIDAR, 500, 500, 0)
    rescan = j["outputs"]["scan"]["LaserScan"]
    recorded = [m for t, _, lt, m in msgs if t == "/scan" and lt == 1_000_000_000]
    assert len(recorded) == 1
    rec = recorded[0]
    assert round(rescan["stamp"] * 1e9) == ns(rec.header.stamp)
    # JSON carries the f32 ranges as their shortest decimal: back to f32 they are the recorded bits
    # (a non-finite range prints as null)
    f32 = [None if x is None else struct.unpack("<f", struct.pack("<f", x))[0] for x in rescan["ranges"]]
    want = [x if math.isfinite(x) else None for x in rec.ranges]
    assert f32 == want
    assert sum(1 for x in want if x is not None) > 100
    assert len(set(want)) > 50  # noisy ranges, not a constant


def test_state_sensor_refuses_an_unknown_address_naming_the_sensors(roqsim_bin, tmp_path):
    out = tmp_path / "run.mcap"
    p = run(roqsim_bin, "sim", WORLD, "--seconds", "0.2", "--seed", "3", "-q", "--record", str(out))
    assert p.returncode == 0, p.stderr
    s = run(roqsim_bin, "state", str(out), "--at", "0.1", "--sensor", "robot.sonar")
    assert s.returncode == 2 and s.stdout == ""
    # (the rebuild logs its rate notes first)
    assert s.stderr.strip().splitlines()[-1] == (
        f"error: {out}: --sensor robot.sonar: the recorded world has no sensor at that address; sensors: {SENSORS}"
    )


@pytest.mark.parametrize("world, want", [
    ("worlds/first_run.yaml", {"sensor_msgs/msg/BatteryState", "sensor_msgs/msg/JointState", "sensor_msgs/msg/LaserScan"}),
    ("test/e2e/worlds/catalog_sensors.yaml", {"sensor_msgs/msg/Range", "sensor_msgs/msg/NavSatFix", "nav_msgs/msg/Odometry"}),
])
def test_every_recorded_type_decodes_and_only_camera_and_cloud_topics_are_left_out(roqsim_bin, tmp_path, world, want):
    out = tmp_path / "run.mcap"
    p = run(roqsim_bin, "sim", world, "--seconds", "1", "--pacing", "asap", "--seed", "2", "-q", "--record", str(out))
    assert p.returncode == 0, p.stderr
    meta, msgs = read_all(out)  # every message decoded by mcap-ros2-support
    types = {schema for _, schema, _, _ in msgs if schema}
    print(world, sorted(types))
    assert want <= types, sorted(types)
    left_out = json.loads(meta["roqsim.provenance"]["not_recorded"])
    print("not_recorded:", left_out)
    no_encoder = ("sensor_msgs/msg/PointCloud2", "sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/CameraInfo")
    assert all(n.endswith("): no recording encoder") and any(t in n for t in no_encoder) for n in left_out), left_out
    battery = [m for _, s, _, m in msgs if s == "sensor_msgs/msg/BatteryState"]
    for b in battery:
        assert b.present == (not math.isnan(b.percentage)) and b.power_supply_status in (0, 1, 2, 3)
    if "first_run" in world:
        modelled = [b for b in battery if b.present]
        assert modelled and 0.9 < modelled[-1].percentage < 1.0 and modelled[-1].voltage == pytest.approx(14.4)
        assert modelled[-1].power_supply_status == 2  # discharging


def test_unwritable_record_path_is_refused_before_the_build(roqsim_bin):
    p = run(roqsim_bin, "sim", WORLD, "--seconds", "1", "--record", "/nonexistent-dir/run.mcap")
    assert p.returncode == 2
    assert "error: --record /nonexistent-dir/run.mcap: cannot create the file: No such file or directory" in p.stderr


def test_a_ros_run_with_no_subscriber_records_its_lazy_topics_and_its_bridge_settings_replay(roqsim_bin, domain_id, tmp_path):
    # Nobody subscribes over ROS: the lazy IMU and range sensors are still produced for the
    # recording; a --set on the bridge (dropped by the offline replay) does not stop the replay.
    import os

    out = tmp_path / "lazy.mcap"
    p = subprocess.run([roqsim_bin, "sim", WORLD, "--ros", "--seconds", "2", "--pacing", "asap", "--seed", "2", "-q",
                        "--set", "components.ros2_bridge.clock_rate_hz=500", "--record", str(out)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "ROS_DOMAIN_ID": str(domain_id)})
    assert p.returncode == 0, p.stderr
    meta, msgs = read_all(out)
    counts = Counter(t for t, _, _, _ in msgs)
    assert counts["/imu"] == 200, counts  # 100 Hz for 2 s
    assert counts["/cliff_front_left"] == 125 and counts["/ir_intensity_right"] == 125, counts  # 62.5 Hz
    assert counts["/clock"] == 1001, counts  # clock_rate_hz 500: every step, and t = 0 at the start's reset
    r = run(roqsim_bin, "replay", str(out), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("replay ok: 1000 steps"), r.stdout


def test_sigint_finalises_the_recording(roqsim, tmp_path):
    out = tmp_path / "run.mcap"
    sim = roqsim("sim", WORLD, "--pacing", "realtime", "--seconds", "60", "--seed", "1", "--record", str(out), wait_ready=r"t = ")
    time.sleep(0.5)
    assert sim.stop() == 0, sim.output()[-3000:]
    meta, msgs = read_all(out)
    summary = meta["roqsim.summary"]
    assert summary["finished"] == "true"
    steps = int(summary["steps"])
    assert steps > 250
    assert sum(1 for t, _, _, _ in msgs if t == "/roqsim/state") == steps // 10 + 1


def test_a_run_driven_over_ros_replays_offline_bitwise(roqsim, ros, roqsim_bin, tmp_path):
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    out = tmp_path / "ros_run.mcap"
    odom = ros.collect("/odom", Odometry, 10)
    pub = ros.node.create_publisher(Twist, "/cmd_vel", 10)
    sim = roqsim("sim", WORLD, "--ros", "--pacing", "realtime", "--seconds", "60", "--seed", "5", "-q",
                 "--record", str(out), wait_ready="/clock")
    ros.spin_until(lambda: odom and pub.get_subscription_count() > 0, 20, "odom and roqsim's cmd_vel subscription")
    cmd = Twist()
    for i in range(40):
        cmd.linear.x = 0.2
        cmd.angular.z = 0.5 if i < 20 else -0.5
        pub.publish(cmd)
        ros.spin(0.05)
    pub.publish(Twist())
    ros.spin(0.3)
    assert sim.stop() == 0, sim.output()[-3000:]
    assert odom[-1].pose.pose.position.x > 0.1

    meta, msgs = read_all(out)
    inbound = [m for t, _, _, m in msgs if t == "/roqsim/inbound"]
    assert all(e["endpoint"] == "cmd_vel" and "Twist" in e["payload"] for e in inbound), inbound[:3]
    cmd_vel = [m for t, _, _, m in msgs if t == "/cmd_vel"]
    assert len(cmd_vel) >= 30, len(cmd_vel)
    assert cmd_vel[0].linear.x == 0.2

    # Offline: no ROS, no world file edits matter; every state sample bitwise.
    r = run(roqsim_bin, "replay", str(out), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("replay ok: "), r.stdout
    applied = int(r.stdout.split(" inbound events")[0].rsplit(" ", 1)[1])
    assert applied == len(cmd_vel), (r.stdout, len(cmd_vel), len(inbound))


def test_every_inbound_kind_replays_offline_bitwise(roqsim, ros, roqsim_bin, tmp_path):
    """A run driven over ROS 2 with every kind of inbound command: a cmd_vel stream, a
    FollowJointTrajectory goal run to its end, another cancelled midway, SpawnEntity with a pose,
    SetEntityState (pose and twist), DeleteEntity and ResetSimulation — each logged with the step
    it acted before, and the replay (no ROS) bitwise on every state sample."""
    from arm_helpers import CANCELED, SUCCEEDED, Arm, plus
    from geometry_msgs.msg import Twist
    from simulation_interfaces.srv import DeleteEntity, ResetSimulation, SetEntityState, SpawnEntity

    out = tmp_path / "driven.mcap"
    arm = Arm(ros, ns="/husky")
    pub = ros.node.create_publisher(Twist, "/husky/cmd_vel", 10)
    sim = roqsim("sim", "test/e2e/worlds/record_driven.yaml", "--ros", "--sim-control", "--pacing", "realtime",
                 "--seconds", "600", "-q", "--record", str(out), wait_ready="/clock")
    arm.wait_ready(gripper=False, timeout=60)
    ros.spin_until(lambda: pub.get_subscription_count() > 0, 20, "roqsim's /husky/cmd_vel subscription")

    def drive(n):
        cmd = Twist()
        cmd.linear.x, cmd.angular.z = 0.3, 0.4
        for _ in range(n):
            pub.publish(cmd)
            ros.spin(0.05)
        pub.publish(Twist())

    def ok(srv, name, req):
        r = ros.call(srv, name, req, timeout=30)
        assert r.result.result == 1, (name, r.result.error_message)

    drive(20)
    status, _ = arm.run([(1.0, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    assert status == SUCCEEDED
    goal = arm.send([(4.0, plus([-0.6, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    arm.wait_sim(0.6)
    fut = goal.cancel_goal_async()
    ros.spin_until(fut.done, 20, "the cancel response")
    status, _ = arm.result(goal)
    assert status == CANCELED

    spawn = SpawnEntity.Request()
    spawn.entity_resource.uri = "box"
    spawn.initial_pose.pose.position.x, spawn.initial_pose.pose.position.y, spawn.initial_pose.pose.position.z = 1.5, -1.0, 0.6
    spawn.initial_pose.pose.orientation.w = 1.0
    ok(SpawnEntity, "/spawn_entity", spawn)
    move = SetEntityState.Request(entity="crate", set_pose=True, set_twist=True)
    move.state.pose.position.x, move.state.pose.position.y, move.state.pose.position.z = -1.0, 2.0, 0.5
    move.state.pose.orientation.w = 1.0
    move.state.twist.linear.x = 0.8
    ok(SetEntityState, "/set_entity_state", move)
    arm.wait_sim(0.4)
    ok(DeleteEntity, "/delete_entity", DeleteEntity.Request(entity="crate"))
    arm.wait_sim(0.2)
    ok(ResetSimulation, "/reset_simulation", ResetSimulation.Request())
    drive(10)
    arm.wait_sim(0.3)
    assert sim.stop() in (0, 130), sim.output()[-3000:]

    meta, msgs = read_all(out)
    inbound = [m for t, _, _, m in msgs if t == "/roqsim/inbound"]
    steps = [e["step"] for e in inbound]
    assert steps == sorted(steps), "events are logged in the order they acted"
    goals = [e for e in inbound if "goal" in e]
    assert [(e["goal"], e["endpoint"]) for e in goals] == [(0, "husky/follow_joint_trajectory"), (1, "husky/follow_joint_trajectory")], goals
    assert "Trajectory" in goals[0]["payload"]["Goal"]
    cancels = [e for e in inbound if "cancel" in e]
    assert [(e["cancel"], e["endpoint"]) for e in cancels] == [(1, goals[1]["endpoint"])]
    assert goals[1]["step"] < cancels[0]["step"]
    world = [e["world"] for e in inbound if "world" in e]
    assert [next(iter(w)) for w in world] == ["spawn", "set_entity_state", "delete"], world
    assert world[0]["spawn"]["uri"] == "box" and world[0]["spawn"]["pose"] == [[1.5, -1.0, 0.6], [0.0, 0.0, 0.0, 1.0]]
    assert world[1]["set_entity_state"]["twist"] == [[0.8, 0.0, 0.0], [0.0, 0.0, 0.0]]
    resets = [e for e in inbound if "reset" in e]
    assert [e["reset"] for e in resets] == [{"time": True, "state": True, "spawned": True}]
    cmd_vel = [e for e in inbound if e.get("endpoint") == "husky/cmd_vel"]
    assert len(cmd_vel) >= 25, len(cmd_vel)
    # every state sample after the spawn shows the box present, until the reset
    states = [m for t, _, _, m in msgs if t == "/roqsim/state"]
    box = list(states[0].entities).index("box")
    assert not states[0].present[box]
    assert any(s.present[box] for s in states)
    print("not_recorded:", meta["roqsim.provenance"]["not_recorded"])

    # Offline: no ROS; every recorded event applied before its step, every sample bitwise.
    r = run(roqsim_bin, "replay", str(out), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("replay ok: "), r.stdout
    print(r.stdout.strip(), "| logged:", Counter("goal" if "goal" in e else "cancel" if "cancel" in e else "reset" if "reset" in e else "world" if "world" in e else "topic" for e in inbound))
    applied = int(r.stdout.split(" inbound events")[0].rsplit(" ", 1)[1])
    assert applied == len(inbound), (r.stdout, len(inbound))


def test_controller_manager_requests_replay_offline_bitwise(roqsim, ros, roqsim_bin, tmp_path):
    """ros2_control's bringup over ROS 2, recorded and replayed offline: the spawner's call sequence
    (load_controller after setting <name>.params_file, configure_controller, switch_controller
    with activate_controllers, STRICT, activate_asap) for the broadcaster and the trajectory
    controller, a trajectory run, the unspawner's deactivate switch and unload midway through a
    second trajectory, and hardware_spawner --configure / --activate. Each request is logged with
    the step it acted before (the load with the value its parameter file gave), and the replay (no
    ROS) is bitwise on every state sample."""
    from arm_helpers import ABORTED, SUCCEEDED, Arm, plus
    from test_ros_tools import JSB, JTC, Spawner

    out = tmp_path / "bringup.mcap"
    params = tmp_path / "jtc.yaml"
    params.write_text(f"/ur/{JTC}:\n  ros__parameters:\n    constraints:\n      goal_time: 1.5\n")
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "2", "--seconds", "600", "-q",
                 "--set", "sim.controllers.initial_state=unloaded", "--record", str(out), wait_ready="/clock")
    sp = Spawner(ros, "/ur/controller_manager")
    assert sp.states() == {}, "nothing loaded before the bringup"
    assert sp.spawn(JSB) == (0, [("load", "unconfigured"), ("configure", "inactive"), ("switch", "active")])
    assert sp.spawn(JTC, param_file=params) == (0, [("load", "unconfigured"), ("configure", "inactive"), ("switch", "active")])
    arm = Arm(ros)
    arm.wait_ready(gripper=False, timeout=60)
    status, _ = arm.run([(1.0, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    assert status == SUCCEEDED
    goal = arm.send([(3.0, plus([-0.4, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    arm.wait_sim(0.5)
    assert sp.unspawn([JTC]) == 0  # deactivate (the goal aborts, the arm holds), then unload
    status, _ = arm.result(goal)
    assert status == ABORTED
    assert sp.hardware_spawn("ur", configure=True) == "configured"
    assert sp.hardware_spawn("ur") == "activated"
    arm.wait_sim(0.3)
    assert sim.stop() in (0, 130), sim.output()[-3000:]

    meta, msgs = read_all(out)
    inbound = [m for t, _, _, m in msgs if t == "/roqsim/inbound"]
    requests = [(e["entity"], next(iter(e["controller"]))) for e in inbound if "controller" in e]
    assert requests == [("ur", k) for k in ["load", "configure", "switch", "load", "configure", "switch",
                                            "switch", "unload", "set_hardware_state", "set_hardware_state"]], requests
    loads = [e["controller"]["load"] for e in inbound if "load" in e.get("controller", {})]
    assert loads == [{"name": JSB, "overrides": []},
                     {"name": JTC, "overrides": [["constraints.goal_time", {"Double": 1.5}]]}], loads
    switches = [e["controller"]["switch"] for e in inbound if "switch" in e.get("controller", {})]
    assert switches[1] == {"activate": [JTC], "deactivate": [], "strictness": 2, "activate_asap": True}
    assert switches[2] == {"activate": [], "deactivate": [JTC], "strictness": 2, "activate_asap": True}
    hw = [e["controller"]["set_hardware_state"] for e in inbound if "set_hardware_state" in e.get("controller", {})]
    assert hw == [{"component": "ur", "id": 2, "label": "inactive"}, {"component": "ur", "id": 3, "label": "active"}]
    steps = [e["step"] for e in inbound]
    assert steps == sorted(steps), "events are logged in the order they acted"

    r = run(roqsim_bin, "replay", str(out), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("replay ok: "), r.stdout
    print(r.stdout.strip(), "| logged:", Counter(next(iter(e["controller"])) if "controller" in e else "goal" if "goal" in e else "other" for e in inbound))
    applied = int(r.stdout.split(" inbound events")[0].rsplit(" ", 1)[1])
    assert applied == len(inbound), (r.stdout, len(inbound))


def test_the_recorded_clock_is_what_a_live_subscriber_receives_across_a_reset(roqsim, ros, tmp_path):
    """/clock around a ResetSimulation: the recording holds the messages a live subscriber
    received, stamp for stamp (the live ones are the recording's tail: the subscriber matched
    after the start), the reset's t = 0 included."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    from simulation_interfaces.srv import ResetSimulation

    out = tmp_path / "clock.mcap"
    live = []
    qos = QoSProfile(depth=100000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
    ros.node.create_subscription(Clock, "/clock", lambda m: live.append(ns(m.clock)), qos)
    sim = roqsim("sim", WORLD, "--ros", "--sim-control", "--pacing", "realtime", "--seconds", "600", "-q",
                 "--record", str(out), wait_ready="/clock")
    ros.spin_until(lambda: len(live) > 20 and live[-1] > 400_000_000, 30, "/clock past 0.4 s")
    r = ros.call(ResetSimulation, "/reset_simulation", ResetSimulation.Request(), timeout=30)
    assert r.result.result == 1, r.result.error_message
    ros.spin_until(lambda: live[-1] > 300_000_000 and 0 in live, 30, "/clock past 0.3 s after the reset")
    assert sim.stop() in (0, 130), sim.output()[-3000:]
    ros.spin(1.0)

    _, msgs = read_all(out)
    recorded = [ns(m.clock) for t, _, _, m in msgs if t == "/clock"]
    assert recorded[0] == 0, "the start's reset"
    back = [i for i in range(1, len(recorded)) if recorded[i] < recorded[i - 1]]
    assert len(back) == 1 and recorded[back[0]] == 0, "one rewind, to t = 0 at the reset"
    print(f"live {len(live)} /clock, recorded {len(recorded)}; around the reset: {recorded[back[0] - 2:back[0] + 3]}")
    assert len(live) > 50
    assert recorded[-len(live):] == live


# ----------------------------------------------------------------------------------- lockstep


def closed_loop(ros, sim, odom_topic="/odom", steps=None):
    """A controller that answers every /odom with a /cmd_vel computed from it alone (steer back
    to the x axis). Returns the number of commands sent."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    pub = ros.node.create_publisher(Twist, "/cmd_vel", 50)
    sent = [0]

    def on_odom(m):
        p = m.pose.pose
        yaw = 2.0 * math.atan2(p.orientation.z, p.orientation.w)
        cmd = Twist()
        cmd.linear.x = 0.25
        cmd.angular.z = 0.8 * math.sin(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9) - 1.5 * p.position.y - 1.0 * yaw
        pub.publish(cmd)
        sent[0] += 1

    sub = ros.node.create_subscription(Odometry, odom_topic, on_odom, 50)
    ros.spin_until(lambda: pub.get_subscription_count() > 0 and ros.node.count_publishers(odom_topic) > 0, 20,
                   "roqsim's cmd_vel subscription and odom publisher")
    ros.spin(0.5)  # let the odom subscription match before the first publication
    pub.publish(Twist())  # announce: the barrier waits for one message before the first step
    return sent, sub


def test_lockstep_closed_loop_is_bitwise_across_two_runs(roqsim, ros, roqsim_bin, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"lock{i}.mcap"
        sim = roqsim("sim", "test/e2e/worlds/lockstep.yaml", "--ros", "--seconds", "3", "-q", "--record", str(out))
        sent, _ = closed_loop(ros, sim)
        ros.spin_until(lambda: not sim.running(), 120, "the lockstep run to end")
        assert sim.stop() == 0, sim.output()[-3000:]
        meta, msgs = read_all(out)
        states = [m for t, _, _, m in msgs if t == "/roqsim/state"]
        cmds = [m for t, _, _, m in msgs if t == "/cmd_vel"]
        # 3 s of odom at 50 Hz: 150 publications, each answered; the announcement and every answer
        # are recorded (the barrier waits for the last answer after the final step; it is taken in
        # before the run ends, logged at the final step, and a replay applies it after its last step)
        assert sent[0] == 150 and len(cmds) == 151, (len(cmds), sent[0])
        runs.append(([(s.step, list(s.qpos), list(s.qvel)) for s in states], [(c.linear.x, c.angular.z) for c in cmds]))
        for sub in list(ros.node.subscriptions):
            ros.node.destroy_subscription(sub)
        for p in list(ros.node.publishers):
            ros.node.destroy_publisher(p)
    assert runs[0][1] == runs[1][1], "the controller saw different odometry"
    assert runs[0][0] == runs[1][0], "the trajectories differ"
    y = runs[0][0][-1][1][1]
    assert abs(y) < 0.5 and runs[0][0][-1][1][0] > 0.4, runs[0][0][-1][1][:3]


def test_lockstep_ends_with_the_gate_diagnostic_when_the_controller_dies(roqsim, ros):
    sim = roqsim("sim", "test/e2e/worlds/lockstep.yaml", "--ros", "--seconds", "30", "-q")
    sent, sub = closed_loop(ros, sim)
    ros.spin_until(lambda: sent[0] >= 20, 30, "20 controller replies")
    t_dead = time.monotonic()
    ros.node.destroy_subscription(sub)  # the controller dies: no more replies
    code = sim.wait(timeout=15)
    waited = time.monotonic() - t_dead
    out = sim.output()
    assert code == 1, out[-3000:]
    assert "sim.sync: lockstep gate `cmd_vel` never fired: no message within timeout_s = 3 s after the publication" in out, out[-3000:]
    assert "`cmd_vel` last received a message at tick" in out
    assert 2.5 < waited < 8.0, waited
