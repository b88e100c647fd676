"""Helpers shared by test_arm.py and test_faults.py: an rclpy client of the UR5e-class arm the
bundled models bring (FollowJointTrajectory, GripperCommand, joint_states, the F/T wrench and its
tare service), and the arm's planar IK from its own MJCF (models/ur5e/ur5e.xml, read with the
venv's mujoco) for straight vertical moves of the tool.

Every time in here that matters is SIM time, read from message stamps; wall timeouts only bound
how long a test may hang.
"""

import collections
import math
from pathlib import Path

from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

ROOT = Path(__file__).resolve().parents[2]
JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
# models/ur5e/ur5e.manifest.yaml `rest:` (upper arm vertical, forearm horizontal, tool down)
REST = [0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0]
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
CLOCK_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)

# action_msgs/GoalStatus
SUCCEEDED, CANCELED, ABORTED = 4, 5, 6
# Exit status of a run ended by the harness's SIGINT: 128 + SIGINT = 130 as a shell reports it
# (0 from binaries built before roqsim adopted that).
INTERRUPTED = (130, 0)


def stamp_s(t):
    """builtin_interfaces/Time -> seconds."""
    return t.sec + t.nanosec * 1e-9


def duration(t):
    from builtin_interfaces.msg import Duration

    ns = int(round(t * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def plus(delta):
    """REST + a joint offset vector."""
    return [r + d for r, d in zip(REST, delta)]


def vertical_ik(dz):
    """Joint vector that moves the tool straight down/up by ``dz`` (m) from REST, keeping it
    vertical (shoulder_lift, elbow and wrist_1 together; pan and wrists 2/3 at rest): Newton
    iterations on the arm's MJCF forward kinematics. The tool's offset to the gripper's pinch is
    rigid, so the pinch moves by the same ``dz``."""
    import mujoco
    import numpy as np

    m = mujoco.MjModel.from_xml_path(str(ROOT / "models" / "ur5e" / "ur5e.xml"))
    d = mujoco.MjData(m)
    adr = [m.jnt_qposadr[m.joint(n).id] for n in JOINTS]
    tool = m.body("tool0").id

    def fk(q):
        for a, v in zip(adr, q):
            d.qpos[a] = v
        mujoco.mj_kinematics(m, d)
        return d.xpos[tool].copy()

    q = np.array(REST, float)
    keep = q[1] + q[2] + q[3]  # the sum of the three parallel axes keeps the tool's direction
    target = fk(q) + np.array([0.0, 0.0, dz])
    for _ in range(50):
        q[3] = keep - q[1] - q[2]
        p = fk(q)
        e = (target - p)[[0, 2]]
        if np.linalg.norm(e) < 1e-12:
            break
        J = np.zeros((2, 2))
        for k, i in enumerate((1, 2)):
            qq = q.copy()
            qq[i] += 1e-7
            qq[3] = keep - qq[1] - qq[2]
            J[:, k] = ((fk(qq) - p) / 1e-7)[[0, 2]]
        q[1:3] += np.linalg.solve(J, e)
    q[3] = keep - q[1] - q[2]
    assert np.linalg.norm(fk(q) - target) < 1e-9, "vertical IK did not converge"
    return [float(v) for v in q]


class Arm:
    """The arm of one namespace (``/ur``) seen from rclpy."""

    def __init__(self, ros, ns="/ur", controller="scaled_joint_trajectory_controller", gripper="gripper_controller"):
        from control_msgs.action import FollowJointTrajectory, GripperCommand
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState

        self.ros = ros
        self.ns = ns
        self.fjt_name = f"{ns}/{controller}/follow_joint_trajectory"
        self.fjt = ActionClient(ros.node, FollowJointTrajectory, self.fjt_name)
        self.grip = ActionClient(ros.node, GripperCommand, f"{ns}/{gripper}/gripper_cmd")
        from rosgraph_msgs.msg import Clock

        self.states = collections.deque(maxlen=5000)
        ros.node.create_subscription(JointState, f"{ns}/joint_states", lambda m: self.states.append(m), RELIABLE)
        # /clock, keep-last 1: always the newest sim time, however far the joint_states queue lags
        # (a loaded machine can leave rclpy seconds behind a 4x-realtime stream)
        self.clock = [None]
        ros.node.create_subscription(Clock, "/clock", lambda m: self.clock.__setitem__(0, m), CLOCK_QOS)
        self.feedback = []

    def wait_ready(self, gripper=True, timeout=30.0):
        self.ros.spin_until(
            lambda: self.fjt.server_is_ready() and (not gripper or self.grip.server_is_ready()) and len(self.states) > 0 and self.clock[0],
            timeout,
            f"{self.fjt_name}, the gripper action, {self.ns}/joint_states and /clock",
        )

    # ---------------------------------------------------------------- joint states
    def now(self):
        """Sim time (s) of the latest joint_states received."""
        return stamp_s(self.states[-1].header.stamp)

    def sim_now(self):
        """The newest sim time (s) /clock has delivered."""
        self.ros.spin_until(lambda: self.clock[0] is not None, 20, "/clock")
        return stamp_s(self.clock[0].clock)

    def settle(self, timeout=60.0):
        """Spin until joint_states have caught up with the newest /clock: ``states[-1]`` is then a
        state measured after everything that happened before this call."""
        self.ros.spin(0.02)
        t = self.sim_now()
        self.ros.spin_until(lambda: self.now() >= t - 1e-9, timeout, f"joint_states up to t = {t:.3f} s")

    def position(self, joint, msg=None):
        js = msg or self.states[-1]
        return js.position[list(js.name).index(joint)]

    def velocity(self, joint, msg=None):
        js = msg or self.states[-1]
        return js.velocity[list(js.name).index(joint)]

    def q(self, msg=None):
        return [self.position(j, msg) for j in JOINTS]

    def wait_sim(self, seconds, timeout=60.0):
        """Spin until ``seconds`` of sim time passed (by /clock) and joint_states caught up."""
        t0 = self.sim_now()
        self.ros.spin_until(lambda: self.sim_now() >= t0 + seconds, timeout, f"{seconds} s of sim time")
        self.settle(timeout)

    # ---------------------------------------------------------------- FollowJointTrajectory
    def send(self, points, goal_tolerance=None, timeout=20.0):
        """Send a trajectory [(t_s, [6 positions])] (a third element "rest" gives the point zero
        velocities and accelerations: a quintic that starts and ends without a jerk); returns the
        accepted goal handle."""
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(JOINTS)
        for point in points:
            t, q = point[0], point[1]
            p = JointTrajectoryPoint(positions=[float(v) for v in q], time_from_start=duration(t))
            if len(point) > 2 and point[2] == "rest":  # arrive at rest: quintic, no jerk at either end
                p.velocities, p.accelerations = [0.0] * len(q), [0.0] * len(q)
            goal.trajectory.points.append(p)
        for name, tol in (goal_tolerance or {}).items():
            goal.goal_tolerance.append(JointTolerance(name=name, position=tol))
        self.feedback = []
        fut = self.fjt.send_goal_async(goal, feedback_callback=lambda m: self.feedback.append(m.feedback))
        self.ros.spin_until(fut.done, timeout, "the goal response")
        handle = fut.result()
        assert handle.accepted, "the FollowJointTrajectory goal was rejected"
        return handle

    def result(self, handle, timeout=60.0):
        """(status, result) of a goal; joint_states are settled past its end on return."""
        fut = handle.get_result_async()
        self.ros.spin_until(fut.done, timeout, "the goal's result")
        r = fut.result()
        self.settle()
        return r.status, r.result

    def feedback_span(self):
        """Sim time (s) from the first to the last feedback of the latest goal: acceptance to the
        step it was graded on, to the 20 Hz feedback period, and free of any transport latency."""
        st = [stamp_s(f.header.stamp) for f in self.feedback]
        return st[-1] - st[0]

    def run(self, points, goal_tolerance=None, timeout=60.0):
        return self.result(self.send(points, goal_tolerance), timeout)

    # ---------------------------------------------------------------- GripperCommand
    def gripper(self, position, max_effort=0.0, timeout=60.0):
        """(status, result) of a GripperCommand goal."""
        from control_msgs.action import GripperCommand

        goal = GripperCommand.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(max_effort)
        fut = self.grip.send_goal_async(goal)
        self.ros.spin_until(fut.done, 20.0, "the gripper goal response")
        handle = fut.result()
        assert handle.accepted, "the GripperCommand goal was rejected"
        return self.result(handle, timeout)


class Wrench:
    """The F/T sensor's WrenchStamped stream and its std_srvs/Trigger tare."""

    def __init__(self, ros, topic="/ur/wrench", tare="/ur/ft/tare"):
        from geometry_msgs.msg import WrenchStamped

        self.ros = ros
        self.tare_name = tare
        self.msgs = collections.deque(maxlen=5000)
        # Best effort like the sensor publisher, but a deep history: median_fz needs every sample of
        # a window, and with sensor_data's depth 5 a loaded machine that spins late keeps only the
        # newest five (all stamped after the window) — seen on a 2-core CI runner.
        deep = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
        ros.node.create_subscription(WrenchStamped, topic, lambda m: self.msgs.append(m), deep)

    def tare(self):
        from std_srvs.srv import Trigger

        return self.ros.call(Trigger, self.tare_name, Trigger.Request())

    def median_fz(self, t_to, window):
        """Median world-z force (N) over the messages stamped in (``t_to`` - ``window``, ``t_to``]
        (sim s), once one stamped at or after ``t_to`` arrived.

        The median, not the mean: a box held in the bundled parallel gripper creeps by stick-slip
        (arm_controller's doc: the jaws chatter): every ~20 steps its pad contacts let go for one
        step and catch it again, a +4 / -3.8 N impulse pair in two consecutive 2 ms samples; sampled
        at 100 Hz such a pair can land on the same phase every time and bias a mean by 0.8 N."""
        self.ros.spin_until(lambda: self.msgs and stamp_s(self.msgs[-1].header.stamp) >= t_to - 1e-9, 30, f"a wrench stamped {t_to:.3f} s")
        zs = sorted(m.wrench.force.z for m in self.msgs if t_to - window < stamp_s(m.header.stamp) <= t_to + 1e-9)
        assert zs, f"no wrench in ({t_to - window:.3f}, {t_to:.3f}]"
        n = len(zs)
        return zs[n // 2] if n % 2 else 0.5 * (zs[n // 2 - 1] + zs[n // 2])


def lift(arm, dz, secs=1.5, drop_m=0.305):
    """From the pick pose, raise the tool ``dz`` (m) in one quintic segment (smooth start and stop:
    a jerk shakes a held box in the jaws); returns (status, result)."""
    return arm.run([(secs, vertical_ik(-drop_m + dz), "rest")])


def pick(arm, drop_m=0.305, close=0.0425, max_effort=0.0):
    """Descend ``drop_m`` onto the ur_pick box (pinch 5 mm above its centre: the world puts the
    pinch 0.31 m above it at rest) in 1.5 s and close the gripper; returns (status, result) of
    both goals."""
    down = arm.run([(1.5 * k / 15, vertical_ik(-drop_m * k / 15)) for k in range(1, 16)])
    grip = arm.gripper(close, max_effort)
    return down, grip
