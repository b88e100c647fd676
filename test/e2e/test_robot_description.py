"""robot_description on the ROS graph (issue 12): the real binary with `--ros`, read by an rclpy
peer that subscribes AFTER the simulator started (transient local, as RViz's RobotModel and
move_group do), checked against what the same run publishes on /joint_states and /tf."""

import xml.etree.ElementTree as ET

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(
    depth=1,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


def test_robot_description_matches_joint_states_and_tf(roqsim, ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    sim = roqsim("sim", "worlds/turtlebot_empty.yaml", "--ros", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin(1.0)  # subscribe late: only a transient-local publisher still delivers
    desc = ros.collect("/robot_description", String, LATCHED)
    js = ros.collect("/joint_states", JointState, RELIABLE)
    tf = ros.collect("/tf", TFMessage, QoSProfile(depth=100))
    static = ros.collect("/tf_static", TFMessage, LATCHED)
    ros.spin_until(lambda: desc and js and tf and static, 20, "robot_description, joint_states, tf, tf_static")
    assert sim.running(), sim.output()[-3000:]

    urdf = ET.fromstring(desc[-1].data)
    assert urdf.tag == "robot" and urdf.get("name") == "robot"
    links = {l.get("name") for l in urdf.findall("link")}
    joints = {j.get("name"): j for j in urdf.findall("joint")}
    children = {j.find("child").get("link") for j in joints.values()}
    roots = links - children
    assert roots == {"base_link"}, roots
    # Every joint /joint_states names is a movable joint of the description.
    names = set(js[-1].name)
    assert names == {"left_wheel_joint", "right_wheel_joint"}, names
    for n in names:
        assert joints[n].get("type") == "continuous", (n, joints[n].get("type"))
    # The dynamic TF's child is the description's root; the robot's static frames are its links.
    dyn = {(t.header.frame_id, t.child_frame_id) for m in tf for t in m.transforms}
    assert ("odom", "base_link") in dyn, dyn
    statics = {(t.header.frame_id, t.child_frame_id) for m in static for t in m.transforms}
    # The model's vendor frame is a link of the description, where TF puts it. (Frames a sensor
    # plugin names itself -- imu_link, rplidar_link -- are not in the description yet.)
    assert ("base_link", "shell_link") in statics, statics
    assert {"base_link", "shell_link"} <= links, links
    shell = joints["shell_link_joint"]
    assert shell.get("type") == "fixed" and shell.find("parent").get("link") == "base_link"
    tf_shell = next(t for m in static for t in m.transforms if (t.header.frame_id, t.child_frame_id) == ("base_link", "shell_link"))
    xyz = [float(v) for v in shell.find("origin").get("xyz").split()]
    got = [tf_shell.transform.translation.x, tf_shell.transform.translation.y, tf_shell.transform.translation.z]
    assert max(abs(a - b) for a, b in zip(xyz, got)) < 1e-9, (xyz, got)
