"""End-to-end tests of simulation_interfaces served by roqsim (issue 5): the real binary with
`--sim-control`, driven by a real rclpy peer through the standard services and the SimulateSteps
action, each test on its own ROS domain inside the private network namespace scripts/test.sh runs
the suite in (see conftest.py).

World: test/e2e/worlds/spawn_box.yaml — a TurtleBot 4 at the origin facing +x, its RPLIDAR 2.000 m
from a wall, an absent physics `box` 0.890 m ahead of the scanner, a welded `pillar`, and the
robot's ground truth on /tf (map -> turtlebot4_base_link_gt).

Every test asserts measured values: result codes and messages, ranges, poses, exact /clock
nanoseconds, feedback counts, bitwise state equality after a reset, RSS.
"""

import math
import re
import time
from pathlib import Path

import pytest
import yaml
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

ROOT = Path(__file__).resolve().parents[2]
WORLD = str(Path(__file__).resolve().parent / "worlds" / "spawn_box.yaml")

RELIABLE = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
DT_NS = 2_000_000  # spawn_box.yaml: timestep 0.002 s

# simulation_interfaces constants (msg/Result, msg/SimulationState, srv/*)
FEATURE_UNSUPPORTED, OK, NOT_FOUND, INCORRECT_STATE, OPERATION_FAILED = 0, 1, 2, 3, 4
STOPPED, PLAYING, PAUSED, QUITTING, NO_WORLD = 0, 1, 2, 3, 4
SCOPE_DEFAULT, SCOPE_TIME, SCOPE_STATE, SCOPE_SPAWNED, SCOPE_ALL = 0, 1, 2, 4, 255
# the features roqsim implements (src/engine/sim_control.rs FEATURES)
FEATURES = [0, 1, 8, 10, 11, 12, 14, 20, 21, 22, 23, 24, 25, 26, 31, 32, 33]


def ns(stamp):
    """builtin_interfaces/Time -> integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def yaw(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def quat_yaw(a):
    from geometry_msgs.msg import Quaternion

    return Quaternion(x=0.0, y=0.0, z=math.sin(a / 2), w=math.cos(a / 2))


def start(roqsim, *extra):
    return roqsim("sim", WORLD, "--sim-control", "--pacing", "realtime", "--seconds", "600", "-q", *extra, wait_ready="/clock")


class Sim:
    """simulation_interfaces clients on the rclpy peer (created once per service, then reused)."""

    def __init__(self, ros):
        self.ros = ros
        self.clients = {}

    def call(self, name, srv_type, request=None, timeout=10.0):
        c = self.clients.get(name)
        if c is None:
            c = self.ros.node.create_client(srv_type, "/" + name)
            self.ros.spin_until(c.service_is_ready, 15, f"service /{name}")
            self.clients[name] = c
        fut = c.call_async(request if request is not None else srv_type.Request())
        self.ros.spin_until(fut.done, timeout, f"the reply of /{name}")
        return fut.result()

    # -- shorthands ---------------------------------------------------------------------
    def entities(self, filter="", categories=()):
        from simulation_interfaces.msg import EntityCategory
        from simulation_interfaces.srv import GetEntities

        r = GetEntities.Request()
        r.filters.filter = filter
        r.filters.categories = [EntityCategory(category=c) for c in categories]
        return self.call("get_entities", GetEntities, r)

    def spawnables(self):
        from simulation_interfaces.srv import GetSpawnables

        r = self.call("get_spawnables", GetSpawnables)
        assert r.result.result == OK, r.result.error_message
        return [s.entity_resource.uri for s in r.spawnables]

    def spawn(self, uri, name="", **kw):
        from simulation_interfaces.srv import SpawnEntity

        r = SpawnEntity.Request(name=name)
        r.entity_resource.uri = uri
        r.entity_resource.resource_string = kw.get("resource_string", "")
        r.allow_renaming = kw.get("allow_renaming", False)
        r.entity_namespace = kw.get("namespace", "")
        if "pose" in kw:
            r.initial_pose = kw["pose"]
        return self.call("spawn_entity", SpawnEntity, r)

    def delete(self, name):
        from simulation_interfaces.srv import DeleteEntity

        return self.call("delete_entity", DeleteEntity, DeleteEntity.Request(entity=name)).result

    def state(self, name):
        from simulation_interfaces.srv import GetEntityState

        return self.call("get_entity_state", GetEntityState, GetEntityState.Request(entity=name))

    def states(self):
        from simulation_interfaces.srv import GetEntitiesStates

        r = self.call("get_entities_states", GetEntitiesStates)
        assert r.result.result == OK, r.result.error_message
        return r

    def set_pose(self, name, x, y, z, heading, twist=None, frame="world"):
        from simulation_interfaces.srv import SetEntityState

        r = SetEntityState.Request(entity=name, set_pose=True)
        r.state.header.frame_id = frame
        r.state.pose.position.x, r.state.pose.position.y, r.state.pose.position.z = x, y, z
        r.state.pose.orientation = quat_yaw(heading)
        return self.call("set_entity_state", SetEntityState, r).result

    def sim_state(self):
        from simulation_interfaces.srv import GetSimulationState

        r = self.call("get_simulation_state", GetSimulationState)
        assert r.result.result == OK
        return r.state.state

    def set_sim_state(self, s):
        from simulation_interfaces.msg import SimulationState
        from simulation_interfaces.srv import SetSimulationState

        return self.call("set_simulation_state", SetSimulationState, SetSimulationState.Request(state=SimulationState(state=s))).result

    def step(self, n, timeout=10.0):
        from simulation_interfaces.srv import StepSimulation

        return self.call("step_simulation", StepSimulation, StepSimulation.Request(steps=n), timeout).result

    def reset(self, scope):
        from simulation_interfaces.srv import ResetSimulation

        return self.call("reset_simulation", ResetSimulation, ResetSimulation.Request(scope=scope)).result


def ok(result):
    assert (result.result, result.error_message) == (OK, ""), result.error_message
    return True


def refused(result, code, needle):
    assert result.result == code, f"code {result.result} ({result.error_message!r}), expected {code}"
    assert needle in result.error_message, f"{result.error_message!r} lacks {needle!r}"


def clock_now(ros, clock, settle=0.3):
    """The newest /clock after letting in-flight messages arrive (ns)."""
    ros.spin(settle)
    return ns(clock[-1].clock)


# ----------------------------------------------------------------------------------- scan geometry


def ahead_ray(scan):
    """Index of the ray along world +x (the robot faces +x) and its bearing offset from that ray."""
    tb = yaml.safe_load((ROOT / "models" / "turtlebot4" / "turtlebot4.manifest.yaml").read_text())
    mount_yaw = next(c["spawn_sensor"]["rpy"][2] for c in tb["components"] if "spawn_sensor" in c)
    bearing = -mount_yaw
    i = round((bearing - scan.angle_min) / scan.angle_increment)
    return i, bearing - (scan.angle_min + i * scan.angle_increment)


def ahead(scan):
    """Range straight ahead (world +x) in ``scan``."""
    i, off = ahead_ray(scan)
    return scan.ranges[i] * math.cos(off)


def fresh_scan(ros, scans):
    """A scan produced after now: in-flight ones are let in first (a full reset restarts stamps,
    so stamps alone cannot tell), then the next one to arrive."""
    ros.spin(0.15)
    n = len(scans)
    ros.spin_until(lambda: len(scans) > n, 5, "a new scan")
    return scans[-1]


# ----------------------------------------------------------------------------------- entities


def test_features_entities_spawn_delete_scan_and_reset(roqsim, ros):
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import LaserScan
    from simulation_interfaces.srv import GetEntityInfo, GetSimulatorFeatures

    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    clock = ros.collect("/clock", Clock, RELIABLE)
    start(roqsim)
    sim = Sim(ros)

    f = sim.call("get_simulator_features", GetSimulatorFeatures).features
    assert sorted(f.features) == FEATURES
    assert list(f.spawn_formats) == []
    assert "present: false" in f.custom_info

    r = sim.entities()
    ok(r.result)
    assert list(r.entities) == ["robot", "robot.rplidar", "wall", "pillar"], r.entities
    assert sim.spawnables() == ["box"]
    ros.spin_until(lambda: len(scans) >= 2, 10, "two scans")
    wall = ahead(scans[-1])
    assert wall == pytest.approx(2.000, abs=0.005), f"wall ahead {wall:.4f} m"
    print(f"wall ahead {wall:.4f} m")

    info = {n: sim.call("get_entity_info", GetEntityInfo, GetEntityInfo.Request(entity=n)) for n in ("robot", "pillar")}
    assert info["robot"].info.category.category == 1  # CATEGORY_ROBOT
    assert info["pillar"].info.category.category == 5  # CATEGORY_STATIC_OBJECT
    assert info["pillar"].info.description == "object `box`, welded: motion: static (welded scenery; give `motion: physics` to move it), declared present"

    # spawn: the box appears in front of the lidar, and moves between the lists
    r = sim.spawn("box")
    ok(r.result)
    assert r.entity_name == "box"
    assert list(sim.entities().entities) == ["robot", "robot.rplidar", "wall", "box", "pillar"]
    assert sim.spawnables() == []
    b = sim.call("get_entity_info", GetEntityInfo, GetEntityInfo.Request(entity="box")).info
    assert (b.category.category, b.description) == (4, "object `box`, movable (free joint), declared absent (present: false)")
    near = ahead(fresh_scan(ros, scans))
    assert near == pytest.approx(0.890, abs=0.005), f"box face ahead {near:.4f} m"
    print(f"box spawned: range ahead {near:.4f} m")
    s = sim.state("box").state
    assert (s.pose.position.x, s.pose.position.y) == pytest.approx((1.0, 0.0), abs=1e-3), "spawned at its declared pose"

    # delete: gone from the scan and the entity list, a spawnable again
    ok(sim.delete("box"))
    assert list(sim.entities().entities) == ["robot", "robot.rplidar", "wall", "pillar"]
    assert sim.spawnables() == ["box"]
    assert ahead(fresh_scan(ros, scans)) == pytest.approx(2.000, abs=0.005)

    # spawn again, then a reset restores `present: false`
    ok(sim.spawn("box").result)
    assert sim.spawnables() == []
    ok(sim.reset(SCOPE_DEFAULT))
    assert clock_now(ros, clock) < 500_000_000, "a full reset restarts /clock"
    assert sim.spawnables() == ["box"]
    assert list(sim.entities().entities) == ["robot", "robot.rplidar", "wall", "pillar"]
    assert ahead(fresh_scan(ros, scans)) == pytest.approx(2.000, abs=0.005)

    # filters: regex and categories
    assert list(sim.entities(filter="^(robot|pillar)$").entities) == ["robot", "pillar"]
    assert list(sim.entities(categories=[5]).entities) == ["wall", "pillar"]


# ----------------------------------------------------------------------------------- teleport


def tf_pose(tf, parent, child, after_ns=-1):
    """(x, y, yaw, stamp) of the newest parent->child transform stamped after ``after_ns``."""
    for m in reversed(tf):
        for t in m.transforms:
            if (t.header.frame_id, t.child_frame_id) == (parent, child) and ns(t.header.stamp) > after_ns:
                tr = t.transform
                return tr.translation.x, tr.translation.y, yaw(tr.rotation), ns(t.header.stamp)
    return None


def test_set_entity_state_teleports_the_robot_ground_truth_and_odom_follow(roqsim, ros):
    from geometry_msgs.msg import Twist
    from rosgraph_msgs.msg import Clock
    from tf2_msgs.msg import TFMessage

    tf = ros.collect("/tf", TFMessage, RELIABLE)
    clock = ros.collect("/clock", Clock, RELIABLE)
    pub = ros.node.create_publisher(Twist, "/cmd_vel", 10)
    start(roqsim)
    sim = Sim(ros)
    ros.spin_until(lambda: tf_pose(tf, "odom", "base_link") and tf_pose(tf, "map", "turtlebot4_base_link_gt"), 10, "odom and ground-truth TF")

    s0 = sim.state("robot")
    ok(s0.result)
    assert s0.state.header.frame_id == "world"
    z0 = s0.state.pose.position.z
    assert (s0.state.pose.position.x, s0.state.pose.position.y) == pytest.approx((0.0, 0.0), abs=1e-3)
    odom_before = tf_pose(tf, "odom", "base_link")

    # teleport 1 m to the right, turned to face +y
    ok(sim.set_pose("robot", 0.0, -1.0, z0, math.pi / 2))
    s1 = sim.state("robot").state
    t_set = ns(s1.header.stamp)  # sim time just after the teleport
    assert (s1.pose.position.x, s1.pose.position.y) == pytest.approx((0.0, -1.0), abs=1e-3), "entity state"
    assert yaw(s1.pose.orientation) == pytest.approx(math.pi / 2, abs=1e-3)
    ros.spin_until(lambda: tf_pose(tf, "map", "turtlebot4_base_link_gt", t_set), 5, "ground truth after the teleport")
    gx, gy, gyaw, _ = tf_pose(tf, "map", "turtlebot4_base_link_gt", t_set)
    assert (gx, gy, gyaw) == pytest.approx((0.0, -1.0, math.pi / 2), abs=2e-3), "ground truth TF"
    ros.spin_until(lambda: tf_pose(tf, "odom", "base_link", t_set), 5, "odom TF after the teleport")
    ox, oy, oyaw, _ = tf_pose(tf, "odom", "base_link", t_set)
    # wheel odometry knows nothing of teleports: the odom frame's pose does not jump
    assert (ox, oy, oyaw) == pytest.approx(odom_before[:3], abs=1e-3), "odom TF continuous across the teleport"

    # drive 0.2 m/s for 1 s of sim time: ground truth moves along the new heading (+y), odom the same
    # distance along its own x
    cmd = Twist()
    cmd.linear.x = 0.2
    t0 = clock_now(ros, clock, 0.0)
    while ns(clock[-1].clock) < t0 + 1_000_000_000:
        pub.publish(cmd)
        ros.spin(0.02)
    for _ in range(3):
        pub.publish(Twist())
        ros.spin(0.02)
    t1 = clock_now(ros, clock, 1.0)
    g = tf_pose(tf, "map", "turtlebot4_base_link_gt", t1 - 100_000_000)
    o = tf_pose(tf, "odom", "base_link", t1 - 100_000_000)
    assert g and o, "TF after driving"
    dg = (g[0] - gx, g[1] - gy)
    do = (o[0] - ox, o[1] - oy)
    assert abs(dg[0]) < 0.01 and dg[1] > 0.15, f"ground truth moved {dg} (expected along +y)"
    assert do[0] > 0.15 and abs(do[1]) < 0.01, f"odom moved {do} (expected along its x)"
    assert math.hypot(*dg) == pytest.approx(math.hypot(*do), abs=0.01), f"same distance: ground truth {dg}, odom {do}"
    print(f"teleport: ground truth ({gx:.4f}, {gy:.4f}, yaw {gyaw:.4f}); odom jump "
          f"{math.hypot(ox - odom_before[0], oy - odom_before[1]):.2e} m; drive: ground truth {dg}, odom {do}")

    # a welded prop refuses a move, naming the weld; a "move" to its current pose succeeds
    p = sim.state("pillar").state.pose
    refused(sim.set_pose("pillar", -1.0, 1.5, p.position.z, 0.0), OPERATION_FAILED,
            "`pillar` is welded and cannot be moved: motion: static (welded scenery; give `motion: physics` to move it)")
    ok(sim.set_pose("pillar", p.position.x, p.position.y, p.position.z, yaw(p.orientation)))


# ----------------------------------------------------------------------------------- pause / step


def simulate_steps(ros, steps, cancel_after=None, during=None, timeout=30.0):
    """Run the SimulateSteps action; returns (status, result, feedbacks). With ``cancel_after``,
    ``during()`` runs once that many feedbacks arrived, then the goal is canceled."""
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient
    from simulation_interfaces.action import SimulateSteps

    client = getattr(ros, "_simulate_steps", None)
    if client is None:
        # rclpy keeps 10 feedback messages by default; this peer also drinks /clock, /tf and
        # joint_states on one thread (on 2 shared cores), so it keeps them all instead
        client = ros._simulate_steps = ActionClient(ros.node, SimulateSteps, "/simulate_steps",
                                                    feedback_sub_qos_profile=QoSProfile(depth=1000))
        ros.spin_until(client.server_is_ready, 15, "the simulate_steps action server")
    feedback = []
    gf = client.send_goal_async(SimulateSteps.Goal(steps=steps), feedback_callback=lambda m: feedback.append(m.feedback))
    ros.spin_until(gf.done, 10, "the goal response")
    handle = gf.result()
    assert handle.accepted
    rf = handle.get_result_async()
    if cancel_after is not None:
        ros.spin_until(lambda: len(feedback) >= cancel_after, timeout, f"{cancel_after} feedbacks")
        if during:
            during()
        cf = handle.cancel_goal_async()
        ros.spin_until(cf.done, 10, "the cancel response")
        assert len(cf.result().goals_canceling) == 1
    ros.spin_until(rf.done, timeout, "the SimulateSteps result")
    r = rf.result()
    # Feedback published before the result travels on its own topic and may land after it (under
    # load, seconds after): a goal that ran to its end has sent a last feedback with 0 remaining,
    # so wait for that one (what arrived is returned either way, and the callers assert on it).
    end = time.monotonic() + (5.0 if r.status == GoalStatus.STATUS_SUCCEEDED else 0.2)
    while time.monotonic() < end and not (feedback and feedback[-1].remaining_steps == 0):
        ros.spin(0.05)
    return r.status, r.result.result, [(f.completed_steps, f.remaining_steps) for f in feedback]


def test_pause_step_and_simulate_steps(roqsim, ros):
    from action_msgs.msg import GoalStatus
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    clock = ros.collect("/clock", Clock, RELIABLE)
    joints = ros.collect("/joint_states", JointState, RELIABLE)
    tf = ros.collect("/tf", TFMessage, RELIABLE)
    start(roqsim)
    sim = Sim(ros)
    assert sim.sim_state() == PLAYING
    refused(sim.step(1), INCORRECT_STATE, "StepSimulation works only while paused (the state is 1); call SetSimulationState(STATE_PAUSED) first")
    status, result, fb = simulate_steps(ros, 10)
    assert status == GoalStatus.STATUS_ABORTED and fb == []
    refused(result, INCORRECT_STATE, "StepSimulation works only while paused")

    ok(sim.set_sim_state(PAUSED))
    assert sim.sim_state() == PAUSED
    c0 = clock_now(ros, clock, 0.3)
    # paused: /clock stands still, joint states and TF keep coming (re-sent, same stamps)
    n_clock, n_js, n_tf = len(clock), len(joints), len(tf)
    ros.spin(1.0)
    assert {ns(m.clock) for m in clock[n_clock:]} <= {c0}, "no /clock advance while paused"
    js = joints[n_js:]
    assert len(js) >= 5, f"{len(js)} joint_states in 1 s of pause"
    assert {ns(m.header.stamp) for m in js} == {ns(joints[n_js - 1].header.stamp)}, "re-sent, not re-stamped"
    assert js[-1].position == joints[n_js - 1].position
    paused_tf = [t for m in tf[n_tf:] for t in m.transforms if t.child_frame_id == "base_link"]
    assert len(paused_tf) >= 5, f"{len(paused_tf)} odom->base_link TFs in 1 s of pause"

    # StepSimulation(10): exactly 10 dt, answered after /clock got there
    ok(sim.step(10))
    # answered after the steps: the simulation's own time (an entity state's stamp) is there already
    assert ns(sim.state("robot").state.header.stamp) == c0 + 10 * DT_NS
    c1 = clock_now(ros, clock, 0.3)
    assert c1 - c0 == 10 * DT_NS, f"/clock advanced {c1 - c0} ns"

    # SimulateSteps(100): 100 feedbacks, then success; /clock + 100 dt
    status, result, fb100 = simulate_steps(ros, 100)
    assert status == GoalStatus.STATUS_SUCCEEDED
    ok(result)
    assert fb100 == [(k, 100 - k) for k in range(1, 101)], f"{len(fb100)} feedbacks: {fb100[:3]} ... {fb100[-3:]}"
    c2 = clock_now(ros, clock)
    assert c2 - c1 == 100 * DT_NS

    # a canceled SimulateSteps stops the remaining steps: /clock advanced by what was taken
    def meanwhile():
        # one step request at a time: StepSimulation and a second goal are refused while it runs
        refused(sim.step(1), INCORRECT_STATE, "a SimulateSteps goal is still running (")
        st, res, f2 = simulate_steps(ros, 5)
        assert (st, f2) == (GoalStatus.STATUS_ABORTED, [])
        refused(res, INCORRECT_STATE, "a SimulateSteps goal is still running (")

    status, result, fb = simulate_steps(ros, 100_000, cancel_after=20, during=meanwhile)
    assert status == GoalStatus.STATUS_CANCELED
    m = re.fullmatch(r"canceled after (\d+) of 100000 steps", result.error_message)
    assert m, result.error_message
    k = int(m.group(1))
    assert 20 <= k < 1000, k
    assert fb == [(i, 100_000 - i) for i in range(1, k + 1)], f"{len(fb)} feedbacks for {k} steps"
    c3 = clock_now(ros, clock, 0.5)
    assert c3 - c2 == k * DT_NS, f"/clock advanced {c3 - c2} ns for {k} steps"
    print(f"paused: {len(js)} joint_states and {len(paused_tf)} odom TFs in 1 s; step(10): +{c1 - c0} ns; "
          f"simulate_steps(100): {len(fb100)} feedbacks, +{c2 - c1} ns; canceled after {k} steps: +{c3 - c2} ns")
    assert sim.sim_state() == PAUSED

    ok(sim.set_sim_state(PLAYING))
    c4 = clock_now(ros, clock, 0.5)
    assert c4 > c3 + 100 * DT_NS, "playing again"


# ----------------------------------------------------------------------------------- reset


def snapshot(sim):
    r = sim.states()
    return {n: (s.pose.position.x, s.pose.position.y, s.pose.position.z, s.pose.orientation.x, s.pose.orientation.y,
                s.pose.orientation.z, s.pose.orientation.w, s.twist.linear.x, s.twist.linear.y, s.twist.linear.z,
                s.twist.angular.x, s.twist.angular.y, s.twist.angular.z) for n, s in zip(r.entities, r.states)}


def test_reset_scopes_state_keeps_clock_all_restores_bitwise(roqsim, ros):
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    clock = ros.collect("/clock", Clock, RELIABLE)
    joints = ros.collect("/joint_states", JointState, RELIABLE)
    odom = ros.collect("/odom", Odometry, RELIABLE)
    pub = ros.node.create_publisher(Twist, "/cmd_vel", 10)
    start(roqsim, "--set", "components.sim_interfaces.start_paused=true")
    sim = Sim(ros)
    assert sim.sim_state() == PAUSED
    assert clock_now(ros, clock) == 0, "start_paused: nothing stepped"

    def first_10_steps():
        """Entity states at t = 0, then the joint states and odometry of step 10 (t = 0.02 s)."""
        s = snapshot(sim)
        nj, no = len(joints), len(odom)
        ok(sim.step(10))
        ros.spin_until(lambda: any(ns(m.header.stamp) == 10 * DT_NS for m in joints[nj:]) and any(ns(m.header.stamp) == 10 * DT_NS for m in odom[no:]), 5, "joint states and odom of step 10")
        j = next(m for m in joints[nj:] if ns(m.header.stamp) == 10 * DT_NS)
        o = next(m for m in odom[no:] if ns(m.header.stamp) == 10 * DT_NS)
        return s, (list(j.name), list(j.position), list(j.velocity)), (o.pose.pose, o.twist.twist)

    fresh = first_10_steps()
    assert set(fresh[0]) == {"robot", "robot.rplidar", "wall", "pillar"}

    # play, drive, spawn the box: a state-only reset brings the robot home and keeps /clock going
    ok(sim.set_sim_state(PLAYING))
    cmd = Twist()
    cmd.linear.x = 0.2
    for _ in range(40):
        pub.publish(cmd)
        ros.spin(0.02)
    pub.publish(Twist())
    ok(sim.spawn("box").result)
    ros.spin(0.5)
    moved = sim.state("robot").state.pose.position.x
    assert moved > 0.05, f"robot drove {moved} m"
    n = len(clock)
    t_before = ns(clock[-1].clock)
    ok(sim.reset(SCOPE_STATE))
    ros.spin(0.5)
    seq = [ns(m.clock) for m in clock[n:]]
    assert all(b >= a for a, b in zip(seq, seq[1:])), "/clock never goes back across a state reset"
    assert seq[-1] > t_before + 100 * DT_NS, "and keeps increasing"
    home = sim.state("robot").state.pose.position
    assert (home.x, home.y) == pytest.approx((0.0, 0.0), abs=1e-3), "state reset: robot back at its spawn pose"
    assert sim.spawnables() == ["box"], "state reset re-applies declared presence"

    # SCOPE_SPAWNED alone: declared presence back, robot and clock untouched
    ok(sim.spawn("box").result)
    ok(sim.set_sim_state(PAUSED))
    c_sp = clock_now(ros, clock)
    x_sp = sim.state("robot").state.pose.position.x
    ok(sim.reset(SCOPE_SPAWNED))
    assert sim.spawnables() == ["box"]
    assert clock_now(ros, clock) == c_sp
    # (mj_forward refreshes the kinematics a step left one integration behind: 1e-13 m, not a move)
    assert sim.state("robot").state.pose.position.x == pytest.approx(x_sp, abs=1e-9)
    ok(sim.set_sim_state(PLAYING))
    ros.spin(0.2)

    # a time-only reset restarts the clock (a new episode) and leaves the world alone
    ok(sim.set_sim_state(PAUSED))
    pose_before = sim.state("robot").state.pose
    ok(sim.reset(SCOPE_TIME))
    assert clock_now(ros, clock) == 0, "time reset: /clock back to 0"
    pose_after = sim.state("robot").state.pose
    assert (pose_after.position.x, pose_after.position.y) == (pose_before.position.x, pose_before.position.y)

    # mess the world up again, then SCOPE_ALL while paused: bitwise the fresh start
    ok(sim.set_sim_state(PLAYING))
    for _ in range(25):
        pub.publish(cmd)
        ros.spin(0.02)
    pub.publish(Twist())
    ok(sim.spawn("box").result)
    ok(sim.set_pose("robot", 0.3, 0.4, 0.0, 1.0))
    ros.spin(0.3)
    ok(sim.set_sim_state(PAUSED))
    ok(sim.reset(SCOPE_ALL))
    assert clock_now(ros, clock) == 0
    again = first_10_steps()
    assert again[0] == fresh[0], "entity states after SCOPE_ALL equal a fresh start, bitwise"
    assert again[1] == fresh[1], "joint states of step 10 equal a fresh start's, bitwise"
    assert again[2] == fresh[2], "odometry of step 10 equals a fresh start's, bitwise"
    print(f"state reset at {t_before} ns: /clock {seq[0]} .. {seq[-1]} ns, non-decreasing; robot home at "
          f"({home.x:.2e}, {home.y:.2e}); SCOPE_ALL: robot {again[0]['robot'][:3]}, wheel joints {again[1][1]} "
          f"equal to the fresh start's bitwise")


# ----------------------------------------------------------------------------------- refusals


def test_every_refusal_has_its_code_and_message(roqsim, ros):
    from geometry_msgs.msg import PoseStamped
    from simulation_interfaces.srv import GetEntityBounds, GetEntityInfo, LoadWorld, SetEntityState

    sim_proc = start(roqsim)
    sim = Sim(ros)

    # unknown entity
    r = sim.state("nope")
    refused(r.result, NOT_FOUND, "no entity `nope`; entities: robot")
    refused(sim.delete("nope"), NOT_FOUND, "no entity `nope`")
    refused(sim.set_pose("nope", 0, 0, 0, 0), NOT_FOUND, "no entity `nope`")
    refused(sim.call("get_entity_info", GetEntityInfo, GetEntityInfo.Request(entity="nope")).result, NOT_FOUND, "no entity `nope`")
    # absent entity: a spawnable, not an entity
    refused(sim.delete("box"), NOT_FOUND, "`box` is already absent (it is among GetSpawnables)")
    refused(sim.state("box").result, NOT_FOUND, "`box` is absent (it is among GetSpawnables): spawn it first")

    # spawn refusals
    refused(sim.spawn("crate").result, NOT_FOUND, "the world declares no entity `crate`; spawnable: [box] (declare one with `present: false`)")
    refused(sim.spawn("box", name="other").result, 102, "`box` cannot be renamed to `other`: a compiled entity keeps its name")
    refused(sim.spawn("", resource_string="<mujoco/>").result, 103, "resource strings are not supported (spawn_formats is empty)")
    refused(sim.spawn("").result, 104, "both uri and name are empty")
    refused(sim.spawn("robot").result, 101, "`robot` is already present")
    refused(sim.spawn("box", namespace="fleet").result, 105, "`box` lives in namespace ``, not `fleet`")
    p = PoseStamped()
    p.header.frame_id = "odom"
    p.pose.position.x = 1.0
    refused(sim.spawn("box", pose=p).result, 109, "initial_pose.header.frame_id `odom`: only the world frame is supported")
    assert sim.spawnables() == ["box"], "no refusal consumed the spawnable"
    # allow_renaming: the compiled name is kept and reported
    r = sim.spawn("box", name="other", allow_renaming=True)
    ok(r.result)
    assert r.entity_name == "box"
    ok(sim.delete("box"))
    # spawn by name (no uri), at a given pose
    p = PoseStamped()
    p.pose.position.x, p.pose.position.y, p.pose.position.z = 1.0, -1.0, 0.2
    r = sim.spawn("", name="box", pose=p)
    ok(r.result)
    s = sim.state("box").state.pose.position
    assert (s.x, s.y) == pytest.approx((1.0, -1.0), abs=1e-3)
    ok(sim.delete("box"))

    # entity state refusals
    refused(sim.set_pose("pillar", 0.0, 0.0, 0.5, 0.0), OPERATION_FAILED, "`pillar` is welded and cannot be moved: motion: static")
    r = SetEntityState.Request(entity="robot", set_pose=True)
    r.state.pose.position.x = 1.0
    r.state.pose.orientation.w = 0.0
    refused(sim.call("set_entity_state", SetEntityState, r).result, 101, "invalid state for `robot`: pose.orientation has norm 0e0: a rotation needs a quaternion of norm within [0.001, 1000]")
    r = SetEntityState.Request(entity="robot", set_acceleration=True)
    refused(sim.call("set_entity_state", SetEntityState, r).result, FEATURE_UNSUPPORTED, "set_acceleration: accelerations cannot be set")
    refused(sim.set_pose("robot", 0.0, 0.0, 0.0, 0.0, frame="odom"), OPERATION_FAILED, "state.header.frame_id `odom`: only the world frame is supported")

    # hostile numbers: refused naming the field, and the run lives on
    r = SetEntityState.Request(entity="robot", set_pose=True)
    r.state.pose.position.x = 1e300
    r.state.pose.orientation.w = 1.0
    refused(sim.call("set_entity_state", SetEntityState, r).result, 101, "pose.position.x = 1e300: must be finite and within ±1000000 m")
    r = SetEntityState.Request(entity="robot", set_twist=True)
    r.state.twist.linear.x = float("nan")
    refused(sim.call("set_entity_state", SetEntityState, r).result, INCORRECT_STATE, "twist.linear.x = NaN: must be finite")
    refused(sim.reset(8), OPERATION_FAILED, "unknown ResetSimulation scope 8")
    assert sim.sim_state() == PLAYING and sim_proc.proc.poll() is None, "a refused request ended the run"

    # filters
    refused(sim.entities(filter="([").result, OPERATION_FAILED, "filter `([` is not a valid regular expression")

    # state transitions
    refused(sim.set_sim_state(PLAYING), 101, "the simulation is already in state 1")
    ok(sim.set_sim_state(STOPPED))
    assert sim.sim_state() == STOPPED
    refused(sim.set_sim_state(PAUSED), 103, "STOPPED -> PAUSED is not a transition: play first (STOPPED -> PLAYING -> PAUSED)")
    refused(sim.set_sim_state(NO_WORLD), FEATURE_UNSUPPORTED, "world loading is not supported")
    refused(sim.set_sim_state(9), 103, "unknown target state 9")
    refused(sim.step(5), INCORRECT_STATE, "StepSimulation works only while paused (the state is 0)")

    # services of features roqsim does not have answer FEATURE_UNSUPPORTED
    r = sim.call("get_entity_bounds", GetEntityBounds, GetEntityBounds.Request(entity="robot"))
    refused(r.result, FEATURE_UNSUPPORTED, "GetEntityBounds is not supported (ENTITY_BOUNDS is not among the simulator features)")
    r = sim.call("load_world", LoadWorld)
    refused(r.result, FEATURE_UNSUPPORTED, "a roqsim run has exactly one world")

    # quitting ends the run cleanly, after answering
    ok(sim.set_sim_state(PLAYING))
    ok(sim.set_sim_state(QUITTING))
    assert sim_proc.wait(15) == 0
    assert "run finished (stop requested: quit requested)" in sim_proc.output() or "quit requested" in sim_proc.output()


# ----------------------------------------------------------------------------------- namespaces


def test_namespace_config_and_node_namespace_remap(roqsim, ros):
    from simulation_interfaces.srv import GetSimulationState

    sim = roqsim("sim", WORLD, "--sim-control", "--set", "components.sim_interfaces.namespace=/sim", "--pacing", "realtime",
                 "--seconds", "600", "-q", wait_ready="/clock")
    r = Sim(ros).call("sim/get_simulation_state", GetSimulationState)
    assert (r.result.result, r.state.state) == (OK, PLAYING)
    names = {n for n, _ in ros.node.get_service_names_and_types()}
    assert "/sim/get_entities" in names and "/get_entities" not in names, sorted(n for n in names if "entit" in n)
    assert sim.stop() == 0
    # the default follows the node's namespace: `--ros-args -r __ns:=/fleet` (what a launch file's
    # namespace does) moves the services with it
    sim = roqsim("sim", WORLD, "--sim-control", "--pacing", "realtime", "--seconds", "600", "-q",
                 "--ros-args", "-r", "__ns:=/fleet", wait_ready="/clock")
    ros.spin_until(lambda: ("/fleet/get_entities", ["simulation_interfaces/srv/GetEntities"]) in ros.node.get_service_names_and_types(),
                   10, "/fleet/get_entities")
    ros.wait_for_node("/fleet/roqsim_sim_interfaces")
    assert sim.stop() == 0


# ----------------------------------------------------------------------------------- soak


def vm_rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_500_spawn_delete_reset_cycles_under_a_live_scan(roqsim, ros):
    from sensor_msgs.msg import LaserScan

    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    proc = start(roqsim)
    sim = Sim(ros)
    ros.spin_until(lambda: scans, 10, "a scan")
    rss = {}
    seen = {}
    for cycle in range(1, 501):
        ok(sim.spawn("box").result)
        ok(sim.delete("box"))
        ok(sim.spawn("box").result)
        # state-only resets keep sim time (and the scan's cadence) running; every 50th is a full one
        ok(sim.reset(SCOPE_ALL if cycle % 50 == 0 else SCOPE_STATE))
        if cycle in (100, 500):
            assert proc.running(), proc.output()[-3000:]
            rss[cycle] = vm_rss_kb(proc.pid)
            seen[cycle] = len(scans)
    assert sim.spawnables() == ["box"]
    assert seen[500] - seen[100] >= 20, f"the scan kept flowing through the cycles ({seen[500] - seen[100]} scans)"
    growth = (rss[500] - rss[100]) / rss[100]
    print(f"VmRSS cycle 100: {rss[100]} kB, cycle 500: {rss[500]} kB ({100 * growth:+.2f} %), {seen[500]} scans")
    assert growth < 0.01, f"RSS grew {100 * growth:.2f} % between cycle 100 ({rss[100]} kB) and 500 ({rss[500]} kB)"
    assert proc.stop() == 0


# ----------------------------------------------------------------------------------- load


def test_a_burst_of_3000_requests_from_a_keep_all_client_is_answered_whole(roqsim, ros):
    """Every server keeps all requests: 3000 GetEntities sent at once by a KEEP_ALL client all
    come back OK (with the services default, keep-last 10, most of such a burst was dropped)."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from simulation_interfaces.srv import GetEntities

    start(roqsim)
    qos = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
    client = ros.node.create_client(GetEntities, "/get_entities", qos_profile=qos)
    ros.spin_until(client.service_is_ready, 15, "/get_entities")
    futures = [client.call_async(GetEntities.Request()) for _ in range(3000)]
    ros.spin_until(lambda: all(f.done() for f in futures), 120, "3000 GetEntities answers")
    results = [f.result().result.result for f in futures]
    assert results.count(OK) == 3000, f"{results.count(OK)} of 3000 answered OK"
    assert "robot" in futures[-1].result().entities, futures[-1].result()
