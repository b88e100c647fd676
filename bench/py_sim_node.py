#!/usr/bin/env python3
"""Row 5 of the benchmark suite: a Python + rclpy simulator node for the TurtleBot world — the
stand-in for a Python simulator node such as the seeds' own — publishing what roqsim publishes for
worlds/turtlebot_floorplan.yaml, at the same rates, with the same QoS:

    /clock        rosgraph_msgs/Clock         100 Hz (every 5th step, as roqsim's default)  reliable
    /odom         nav_msgs/Odometry           50 Hz, wheel-encoder odometry    reliable
    /tf           tf2_msgs/TFMessage          50 Hz, odom -> base_link         reliable
    /joint_states sensor_msgs/JointState      50 Hz, both wheels               reliable
    /imu          sensor_msgs/Imu             100 Hz, from the model's IMU sensors   best effort
    /scan         sensor_msgs/LaserScan       10 Hz, 360 rays by mj_multiRay   best effort
    /tf_static    tf2_msgs/TFMessage          once, latched                    transient local
    /cmd_vel      geometry_msgs/Twist         in: diff-drive kinematics, 0.5 s timeout

It steps the compiled model roqsim saved (PREFIX.mjb, `bench_rows prepare`) from the state roqsim
starts from (PREFIX.state). Diff drive: cmd_vel clamped to 0.31 m/s and 1.90 rad/s, split into
wheel speeds (radius 0.03575 m, separation 0.233 m), each wheel ramped by 0.9 m/s^2, written to the
wheel velocity servos; odometry integrates the measured wheel speeds every step (the constants are
the turtlebot4 manifest's). Lidar: 360 rays from -pi to pi in the scanner site's plane, 0.15-12 m,
the scanner's own body excluded, geom group 5 (absent entities) masked — what roqsim's lidar does.
No noise anywhere (the world configures none).

Like `bench_rows engine --ros`, it waits until every publisher has a matched subscriber (then 1 s
more) before its timed loop, so the figure is the loop with subscribers attached, not discovery.
The ROS executor spins in a second thread (cmd_vel); the step loop runs in the main thread.

Usage: py_sim_node.py PREFIX STEPS     Prints one JSON object (steps, wall_s). Asserts nothing.
"""

import json
import math
import sys
import threading
import time

import mujoco
import numpy as np
import rclpy
from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState, LaserScan
from tf2_msgs.msg import TFMessage

# turtlebot4 manifest (models/turtlebot4/turtlebot4.manifest.yaml) and rplidar_a1 manifest
WHEEL_RADIUS = 0.03575
WHEEL_SEP = 0.233
MAX_V, MAX_W = 0.31, 1.90
WHEEL_ACCEL = 0.9  # m/s^2 per wheel
CMD_TIMEOUT = 0.5  # s
ODOM_HZ, IMU_HZ, SCAN_HZ, CLOCK_HZ = 50.0, 100.0, 10.0, 100.0
RAYS, RANGE_MIN, RANGE_MAX = 360, 0.15, 12.0
ANGLE_MIN, ANGLE_MAX = -math.pi, math.pi
VISIBLE_GROUPS = np.array([1, 1, 1, 1, 1, 0], dtype=np.uint8)  # group 5 = absent entities


def stamp(msg_time, t):
    sec = int(t)
    msg_time.sec = sec
    msg_time.nanosec = int(round((t - sec) * 1e9))


def mat_to_quat(mat9):
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(mat9, dtype=np.float64).reshape(9))
    return q  # w x y z


def relative(pos_p, mat_p, pos_c, mat_c):
    """Pose of child in parent's frame: (translation, quaternion w x y z)."""
    Rp = np.asarray(mat_p).reshape(3, 3)
    Rc = np.asarray(mat_c).reshape(3, 3)
    return Rp.T @ (np.asarray(pos_c) - np.asarray(pos_p)), mat_to_quat((Rp.T @ Rc).reshape(9))


class Sim:
    def __init__(self, prefix):
        m = self.m = mujoco.MjModel.from_binary_path(prefix + ".mjb")
        d = self.d = mujoco.MjData(m)
        sig = mujoco.mjtState.mjSTATE_INTEGRATION
        mujoco.mj_setState(m, d, np.fromfile(prefix + ".state", dtype="<f8"), sig)
        mujoco.mj_forward(m, d)
        self.dt = m.opt.timestep
        aid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, n)  # noqa: E731
        jid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)  # noqa: E731
        sid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, n)  # noqa: E731
        bid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)  # noqa: E731
        self.act = (aid("left_wheel_motor"), aid("right_wheel_motor"))
        js = (jid("left_wheel_joint"), jid("right_wheel_joint"))
        self.dof = tuple(int(m.jnt_dofadr[j]) for j in js)
        self.qadr = tuple(int(m.jnt_qposadr[j]) for j in js)
        self.laser = sid("rplidar_laser")
        self.laser_body = bid("rplidar_mount")
        self.base = bid("base_link")
        if min(self.act + js + (self.laser, self.laser_body, self.base)) < 0:
            sys.exit("py_sim_node: the model lacks a TurtleBot 4 name (wheel motors/joints, rplidar_laser, rplidar_mount, base_link)")
        sadr = lambda suffix: int(m.sensor_adr[[i for i in range(m.nsensor) if m.sensor(i).name.endswith(suffix)][0]])  # noqa: E731
        self.gyro, self.accel, self.quat = sadr("imu_gyro"), sadr("imu_accel"), sadr("imu_quat")
        a = np.linspace(ANGLE_MIN, ANGLE_MAX, RAYS)
        self.local_dirs = np.stack([np.cos(a), np.sin(a), np.zeros(RAYS)])  # 3 x RAYS, site frame
        self.vec = np.zeros(3 * RAYS)
        self.dist = np.zeros(RAYS)
        self.geomid = np.zeros(RAYS, dtype=np.int32)
        # diff drive + odometry state
        self.cmd = None  # (v, w, sim time received)
        self.wheel = [0.0, 0.0]
        self.x = self.y = self.yaw = 0.0
        self.v = self.w = 0.0

    def on_cmd(self, msg):
        self.cmd = (msg.linear.x, msg.angular.z, self.d.time)

    def pre_step(self):
        v = w = 0.0
        c = self.cmd
        if c is not None and self.d.time - c[2] <= CMD_TIMEOUT:
            v = max(-MAX_V, min(MAX_V, c[0]))
            w = max(-MAX_W, min(MAX_W, c[1]))
        targets = ((v - w * WHEEL_SEP / 2) / WHEEL_RADIUS, (v + w * WHEEL_SEP / 2) / WHEEL_RADIUS)
        dmax = WHEEL_ACCEL / WHEEL_RADIUS * self.dt
        ctrl = self.d.ctrl
        for i in (0, 1):
            cur = self.wheel[i]
            self.wheel[i] = cur + max(-dmax, min(dmax, targets[i] - cur))
            ctrl[self.act[i]] = self.wheel[i]

    def post_step(self):
        qvel = self.d.qvel
        wl, wr = qvel[self.dof[0]], qvel[self.dof[1]]
        self.v = WHEEL_RADIUS * (wl + wr) / 2
        self.w = WHEEL_RADIUS * (wr - wl) / WHEEL_SEP
        mid = self.yaw + 0.5 * self.w * self.dt
        self.x += self.v * math.cos(mid) * self.dt
        self.y += self.v * math.sin(mid) * self.dt
        self.yaw += self.w * self.dt

    def scan(self, ranges_out):
        d = self.d
        R = d.site_xmat[self.laser].reshape(3, 3)
        self.vec[:] = (R @ self.local_dirs).T.reshape(-1)
        mujoco.mj_multiRay(self.m, d, d.site_xpos[self.laser], self.vec, VISIBLE_GROUPS, 1, self.laser_body, self.geomid, self.dist, None, RAYS, RANGE_MAX)
        r = self.dist
        return np.where((r >= RANGE_MIN) & (self.geomid >= 0), r, np.where(self.geomid >= 0, -np.inf, np.inf)).astype(np.float32)


def main():
    prefix, steps = sys.argv[1], int(sys.argv[2])
    sim = Sim(prefix)
    m, d, dt = sim.m, sim.d, sim.dt
    rclpy.init()
    node = rclpy.create_node("py_sim")
    reliable = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
    sensor = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    latched = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    p_clock = node.create_publisher(Clock, "/clock", reliable)
    p_odom = node.create_publisher(Odometry, "/odom", reliable)
    p_tf = node.create_publisher(TFMessage, "/tf", reliable)
    p_js = node.create_publisher(JointState, "/joint_states", reliable)
    p_imu = node.create_publisher(Imu, "/imu", sensor)
    p_scan = node.create_publisher(LaserScan, "/scan", sensor)
    p_static = node.create_publisher(TFMessage, "/tf_static", latched)
    node.create_subscription(Twist, "/cmd_vel", sim.on_cmd, reliable)
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    done = threading.Event()

    def spin():
        while not done.is_set():
            ex.spin_once(timeout_sec=0.05)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()

    # /tf_static: base_link -> imu_link, base_link -> shell_link, shell_link -> rplidar_link
    def site(name):
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
        return d.site_xpos[i].copy(), d.site_xmat[i].copy()

    base = (d.xpos[sim.base].copy(), d.xmat[sim.base].copy())
    statics = []
    for parent, child, pp, cc in (
        ("base_link", "imu_link", base, site("imu")),
        ("shell_link", "rplidar_link", site("shell_link"), site("rplidar_rplidar_link")),
        ("base_link", "shell_link", base, site("shell_link")),
    ):
        t, q = relative(pp[0], pp[1], cc[0], cc[1])
        ts = TransformStamped()
        ts.header.frame_id, ts.child_frame_id = parent, child
        ts.transform.translation.x, ts.transform.translation.y, ts.transform.translation.z = map(float, t)
        ts.transform.rotation.w, ts.transform.rotation.x, ts.transform.rotation.y, ts.transform.rotation.z = map(float, q)
        statics.append(ts)
    p_static.publish(TFMessage(transforms=statics))

    # messages, allocated once and refilled
    clock = Clock()
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    tf_odom = TransformStamped()
    tf_odom.header.frame_id, tf_odom.child_frame_id = "odom", "base_link"
    tf = TFMessage(transforms=[tf_odom])
    js = JointState(name=["left_wheel_joint", "right_wheel_joint"])
    imu = Imu()
    imu.header.frame_id = "imu_link"
    scan = LaserScan()
    scan.header.frame_id = "rplidar_link"
    scan.angle_min, scan.angle_max = ANGLE_MIN, ANGLE_MAX
    scan.angle_increment = (ANGLE_MAX - ANGLE_MIN) / (RAYS - 1)
    scan.scan_time, scan.range_min, scan.range_max = 1.0 / SCAN_HZ, RANGE_MIN, RANGE_MAX

    every = lambda hz: max(1, int(round(1.0 / (hz * dt))))  # noqa: E731
    odom_every, imu_every, scan_every, clock_every = every(ODOM_HZ), every(IMU_HZ), every(SCAN_HZ), every(CLOCK_HZ)

    # wait for the subscribers (see the docstring)
    pubs = (p_clock, p_odom, p_tf, p_js, p_imu, p_scan, p_static)
    t0 = time.monotonic()
    while not all(p.get_subscription_count() > 0 for p in pubs):
        if time.monotonic() - t0 > 30:
            sys.exit("py_sim_node: no subscriber matched within 30 s on: " + ", ".join(p.topic_name for p in pubs if p.get_subscription_count() == 0))
        time.sleep(0.01)
    time.sleep(1.0)
    print(f"subscribers matched after {time.monotonic() - t0:.2f} s", file=sys.stderr)

    step = mujoco.mj_step
    sd = d.sensordata
    qpos, qvel, qfrc = d.qpos, d.qvel, d.actuator_force
    ql, qr = sim.qadr
    dl, dr = sim.dof
    al, ar = sim.act
    g, acc, qu = sim.gyro, sim.accel, sim.quat
    t_start = time.perf_counter()
    cpu_start = time.process_time()  # this process's user + sys CPU, every thread (rclpy's too)
    for tick in range(1, steps + 1):
        sim.pre_step()
        step(m, d)
        sim.post_step()
        now = d.time
        if tick % clock_every == 0:
            stamp(clock.clock, now)
            p_clock.publish(clock)
        if tick % odom_every == 0:
            stamp(odom.header.stamp, now)
            o = odom.pose.pose
            o.position.x, o.position.y = sim.x, sim.y
            o.orientation.z, o.orientation.w = math.sin(sim.yaw / 2), math.cos(sim.yaw / 2)
            odom.twist.twist.linear.x, odom.twist.twist.angular.z = sim.v, sim.w
            p_odom.publish(odom)
            tf_odom.header.stamp = odom.header.stamp
            tr = tf_odom.transform
            tr.translation.x, tr.translation.y = sim.x, sim.y
            tr.rotation.z, tr.rotation.w = o.orientation.z, o.orientation.w
            p_tf.publish(tf)
            js.header.stamp = odom.header.stamp
            js.position = [float(qpos[ql]), float(qpos[qr])]
            js.velocity = [float(qvel[dl]), float(qvel[dr])]
            js.effort = [float(qfrc[al]), float(qfrc[ar])]
            p_js.publish(js)
        if tick % imu_every == 0:
            stamp(imu.header.stamp, now)
            imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = float(sd[g]), float(sd[g + 1]), float(sd[g + 2])
            la = imu.linear_acceleration
            la.x, la.y, la.z = float(sd[acc]), float(sd[acc + 1]), float(sd[acc + 2])
            ori = imu.orientation
            ori.w, ori.x, ori.y, ori.z = float(sd[qu]), float(sd[qu + 1]), float(sd[qu + 2]), float(sd[qu + 3])
            p_imu.publish(imu)
        if tick % scan_every == 0:
            stamp(scan.header.stamp, now)
            scan.ranges = sim.scan(None)
            p_scan.publish(scan)
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - cpu_start
    print(json.dumps({"steps": steps, "wall_s": wall, "sim_s": steps * dt, "cpu_s": cpu}))
    sys.stdout.flush()
    time.sleep(0.3)  # the last messages in flight (roqsim's bridge lingers 0.3 s too)
    done.set()
    spinner.join()
    ex.shutdown()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
