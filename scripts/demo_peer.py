"""The demo's ROS 2 peer (scripts/demo.sh): an ordinary rclpy node that does with
worlds/first_run.yaml what a robot's own stack would, and writes down only what the run measured.

Two jobs run side by side, in real time against roqsim's /clock:
- the TurtleBot (namespace /robot) drives at 0.3 m/s on /robot/cmd_vel for 10 s, through the open
  door at x = 8 m, and stops;
- the UR5e-class arm (namespace /ur) picks a parcel off the belt: the belt is halted
  (/belt/speed), the open gripper descends to parcel height over the belt line
  (FollowJointTrajectory), the belt runs again, then creeps, until the next parcel lies between
  the jaws (its pose from simulation_interfaces' /get_entity_state), the belt stops, the gripper closes
  (GripperCommand) and the arm lifts the parcel 0.15 m.
Then both declared faults are fired over their std_srvs/SetBool services: the gripper pads lose
their friction (the held parcel slips out) and the lidar degrades.

Usage: demo_peer.py OUT.json. Exit 1 with a reason when roqsim does not answer.
"""

import json
import math
import sys
import time
from pathlib import Path

import rclpy
from control_msgs.action import FollowJointTrajectory, GripperCommand
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import BatteryState
from simulation_interfaces.srv import GetEntityState
from std_msgs.msg import Bool, Float64
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectoryPoint

# The arm's vertical IK from its own MJCF is shared with the arm's end-to-end tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "e2e"))
from arm_helpers import JOINTS, duration, vertical_ik  # noqa: E402

PINCH_X = 4.51  # world x under the arm's rest pinch (worlds/first_run.yaml's layout)
DROP_M = 0.305  # rest pinch -> 5 mm above a parcel's centre on the belt
LIFT_M = 0.15
CLOSE = 0.0425  # GripperCommand position: one jaw's travel, fully closed (m)
BELT_SPEED = 0.1
PARCELS = ("parcel_1", "parcel_2", "parcel_3")
CREEP_SPEED = 0.02

rclpy.init()
node = Node("roqsim_demo")
seen = {"odom": [], "door": [], "clearance": [], "upright": [], "battery": []}
for topic, kind, key, value in (
    ("/robot/odom", Odometry, "odom", lambda m: (m.pose.pose.position.x, m.pose.pose.position.y)),
    ("/door_1/state", Float64, "door", lambda m: m.data),
    ("/robot/clearance", Float64, "clearance", lambda m: m.data),
    ("/robot/upright", Bool, "upright", lambda m: m.data),
    ("/robot/battery_state", BatteryState, "battery", lambda m: m.percentage),
):
    node.create_subscription(kind, topic, lambda m, k=key, f=value: seen[k].append(f(m)), 10)
clock = [0.0]  # the newest sim time (s): demo.sh renders the recording at the times it marks
node.create_subscription(Clock, "/clock", lambda m: clock.__setitem__(0, m.clock.sec + m.clock.nanosec * 1e-9),
                         QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
cmd_vel = node.create_publisher(Twist, "/robot/cmd_vel", 10)
belt = node.create_publisher(Float64, "/belt/speed", 10)
FAULTS = ("/grip_fault/override", "/robot/rplidar/lidar/override")
fjt = ActionClient(node, FollowJointTrajectory, "/ur/scaled_joint_trajectory_controller/follow_joint_trajectory")
grip = ActionClient(node, GripperCommand, "/ur/gripper_controller/gripper_cmd")


def fail(why):
    sys.exit(f"demo: {why}")


def spin_until(done, timeout, what):
    end = time.monotonic() + timeout
    while not done():
        rclpy.spin_once(node, timeout_sec=0.02)
        if time.monotonic() > end:
            fail(f"{what} did not happen within {timeout:.0f} s")


clients = {}


def call(kind, name, req):
    """``req`` to service ``name``; a few tries with a fresh client each: DDS discovery on a busy
    machine now and then leaves a new client unmatched, or loses the reply of its first request.
    Every request roqsim receives is answered (a failed answer says why), so three tries without
    an answer end the peer."""
    for _ in range(3):
        client = clients.get(name) or clients.setdefault(name, node.create_client(kind, name))
        if client.wait_for_service(timeout_sec=10.0):
            fut = client.call_async(req)
            end = time.monotonic() + 10.0
            while not fut.done() and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.02)
            if fut.done():
                return fut.result()
        node.destroy_client(clients.pop(name))
    fail(f"no answer from {name} in three tries")


def position(name):
    req = GetEntityState.Request()
    req.entity = name
    p = call(GetEntityState, "/get_entity_state", req).state.pose.position
    return [p.x, p.y, p.z]


def wait_goal(client, goal, what):
    """Generator: send ``goal``, yield until its result arrives; returns the result message."""
    fut = client.send_goal_async(goal)
    while not fut.done():
        yield
    handle = fut.result()
    if not handle.accepted:
        fail(f"roqsim rejected the {what} goal")
    res = handle.get_result_async()
    while not res.done():
        yield
    return res.result().result


def trajectory(points):
    """A FollowJointTrajectory goal through [(t_s, vertical_ik joints)], the tool turned a quarter
    turn about its axis (wrist_3) so that the jaws close across the belt, not along it."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(JOINTS)
    for t, q in points:
        q = q[:5] + [q[5] + math.pi / 2]
        goal.trajectory.points.append(JointTrajectoryPoint(positions=q, time_from_start=duration(t)))
    # arrive at rest (a quintic with no jerk at either end): a jerk shakes a held parcel
    last = goal.trajectory.points[-1]
    last.velocities, last.accelerations = [0.0] * len(JOINTS), [0.0] * len(JOINTS)
    return goal


def set_belt(speed):
    belt.publish(Float64(data=speed))


def pick(out):
    """Generator: the arm's job (see the module doc); fills ``out``. The belt is already halted."""
    down = yield from wait_goal(
        fjt, trajectory([(1.5 * k / 15, vertical_ik(-DROP_M * k / 15)) for k in range(1, 16)]), "descend")
    out["descend_error_code"] = down.error_code
    # Bring the parcel between the jaws as a real line does: at belt speed to 80 mm short, then at a
    # creep speed. Between a poll and the stop taking effect the belt moves on (a blocking
    # service call, the transport, real-time steps: up to ~0.3 s on a loaded machine), which at
    # creep speed is a few millimetres; the pads are 22 mm long.
    # The parcel to pick: the next one upstream of the jaws (the peer may have started late enough
    # for parcel_1 to have passed them already).
    upstream = [(PINCH_X - position(p)[0], p) for p in PARCELS]
    name = min((d, p) for d, p in upstream if d > 0.01)[1]
    out["parcel"] = name
    x = position(name)[0]
    for speed, short in ((BELT_SPEED, 0.08), (CREEP_SPEED, 0.003)):
        if x >= PINCH_X - short:
            continue
        set_belt(speed)
        while x < PINCH_X - short:  # GetEntityState blocks: at most ~20 polls a second
            yield
            x = position(name)[0]
        set_belt(0.0)
        t = time.monotonic()
        while time.monotonic() < t + 0.3:  # the parcel comes to rest on the stopped belt
            yield
        x = position(name)[0]
    out["parcel_x_at_grasp"] = x
    z0 = position(name)[2]
    g = GripperCommand.Goal()
    g.command.position, g.command.max_effort = CLOSE, 0.0
    closed = yield from wait_goal(grip, g, "gripper close")
    out["gripper"] = {"position_m": closed.position, "effort_n": closed.effort,
                      "stalled": closed.stalled, "reached_goal": closed.reached_goal}
    up = yield from wait_goal(fjt, trajectory([(1.5, vertical_ik(-DROP_M + LIFT_M))]), "lift")
    out["lift_error_code"] = up.error_code
    t = time.monotonic()
    while time.monotonic() < t + 1.0:  # let the held parcel settle in the jaws
        yield
    out["parcel_lift_m"] = position(name)[2] - z0


def drive(out):
    """Generator: the base's job; fills ``out``."""
    out["odom_start"], out["world_start"] = seen["odom"][-1], position("robot")
    t, forward = time.monotonic(), Twist()
    forward.linear.x = 0.3
    while time.monotonic() < t + 10.0:
        cmd_vel.publish(forward)
        tick = time.monotonic()
        while time.monotonic() < tick + 0.1:
            yield
    cmd_vel.publish(Twist())
    t = time.monotonic()
    while time.monotonic() < t + 1.5:
        yield
    out["odom_end"], out["world_end"] = seen["odom"][-1], position("robot")


spin_until(lambda: seen["odom"], 60.0, "/robot/odom from roqsim")
spin_until(lambda: fjt.server_is_ready() and grip.server_is_ready(), 30.0, "the arm's actions")
spin_until(lambda: belt.get_subscription_count() > 0, 30.0, "the belt's /belt/speed subscription")
set_belt(0.0)  # halt the line until the arm is ready
parcels_start = {p: position(p) for p in PARCELS}
arm, base = {}, {}
sim_times = {"start": clock[0]}
jobs = [pick(arm), drive(base)]
deadline = time.monotonic() + 60.0
while jobs:
    rclpy.spin_once(node, timeout_sec=0.01)
    for job in list(jobs):
        try:
            next(job)
        except StopIteration:
            jobs.remove(job)
    if time.monotonic() > deadline:
        fail("the drive and the pick took longer than 60 s")
parcels_end = {p: position(p) for p in PARCELS}
sim_times["done"] = clock[0]

faults = {}
for srv in FAULTS:
    r = call(SetBool, srv, SetBool.Request(data=True))
    faults[srv] = {"success": r.success, "message": r.message}
    if not r.success:  # e.g. "the run ended before this request was served: <why>"
        fail(f"{srv} answered success=False: {r.message}")
end = time.monotonic() + 1.5
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.05)
after_fault = position(arm["parcel"])
sim_times["end"] = clock[0]

json.dump({
    "odom_start": base["odom_start"], "odom_end": base["odom_end"],
    "distance_driven_m": math.dist(base["odom_start"], base["odom_end"]),
    "world_start": base["world_start"], "world_end": base["world_end"],
    "through_door": base["world_start"][0] > 8.0 > base["world_end"][0],
    "door_openness": seen["door"][-1] if seen["door"] else None,
    "min_clearance_m": min(seen["clearance"]) if seen["clearance"] else None,
    "upright_throughout": all(seen["upright"]) if seen["upright"] else None,
    "battery_percentage": [seen["battery"][0], seen["battery"][-1]] if seen["battery"] else None,
    "pick": arm, "parcels_start": parcels_start, "parcels_end": parcels_end,
    "picked_after_grip_fault": after_fault,
    "faults": faults, "sim_times": sim_times,
}, open(sys.argv[1], "w"), indent=1)
node.destroy_node()
rclpy.shutdown()
