"""End-to-end test of cartesian_admittance over ROS 2 (issue 19): the FZI cartesian_controllers
topic layout under the controller's name, driven by rclpy as a node written against that stack
drives it — a geometry_msgs/PoseStamped on `<controller>/target_frame`, the tool's pose read back
on `<controller>/current_pose` — and the controller listed by the robot's controller_manager.

Every assertion is on measured message contents; times are sim time from stamps.
"""

import math
from pathlib import Path

from arm_helpers import INTERRUPTED, stamp_s

HERE = Path(__file__).resolve().parent
WORLD = HERE / "worlds" / "ur_cartesian.yaml"
CM = "/ur/controller_manager"
CMC = "cartesian_motion_controller"


def test_motion_controller_tracks_a_target_frame_and_is_listed(roqsim, ros):
    from controller_manager_msgs.srv import ListControllers
    from geometry_msgs.msg import PoseStamped

    poses = ros.collect(f"/ur/{CMC}/current_pose", PoseStamped)
    sim = roqsim("sim", str(WORLD), "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    ros.spin_until(lambda: poses, 20.0, "current_pose")
    start = poses[-1]
    assert start.header.frame_id == "ur/base_link", start.header.frame_id

    rows = {c.name: (c.state, c.type, list(c.claimed_interfaces)) for c in ros.call(ListControllers, f"{CM}/list_controllers", ListControllers.Request()).controller}
    assert rows[CMC][0:2] == ("active", "cartesian_motion_controller/CartesianMotionController"), rows
    assert "shoulder_pan_joint/position" in rows[CMC][2], rows
    assert rows["scaled_joint_trajectory_controller"][0] == "inactive", rows

    p = start.pose.position
    goal = (p.x + 0.04, p.y - 0.03, p.z + 0.03)
    pub = ros.node.create_publisher(PoseStamped, f"/ur/{CMC}/target_frame", 10)
    ros.spin_until(lambda: pub.get_subscription_count() > 0, 10.0, "roqsim's target_frame subscription")
    msg = PoseStamped()
    msg.header.frame_id = "ur/base_link"
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = goal
    msg.pose.orientation = start.pose.orientation
    pub.publish(msg)
    t0 = stamp_s(poses[-1].header.stamp)

    def err(m):
        q = m.pose.position
        return math.dist((q.x, q.y, q.z), goal)

    # 4 s of sim time at 4x pacing: well inside the wall timeout
    ros.spin_until(lambda: stamp_s(poses[-1].header.stamp) > t0 + 4.0, 30.0, "4 s of sim time")
    final = poses[-1]
    reached = next((stamp_s(m.header.stamp) - t0 for m in poses if stamp_s(m.header.stamp) > t0 and err(m) < 1e-3), None)
    print(f"current_pose within 1 mm of the target {reached} s after publishing; final error {err(final):.2e} m")
    assert err(final) < 1e-3, f"final error {err(final)} m"
    assert reached is not None and reached < 4.0
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]
