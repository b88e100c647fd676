"""The navigator's goal endpoints from rclpy, as a Nav2 client sends them: nav2_msgs
NavigateToPose and NavigateThroughPoses action goals to a TurtleBot in the two-room floorplan
(test/e2e/worlds/nav_floorplan.yaml), read back through the action's feedback and result.
Every pose checked is the simulator's own (feedback current_pose, sim-time stamps)."""

import math

import pytest

SUCCEEDED, ABORTED = 4, 6
WORLD = "test/e2e/worlds/nav_floorplan.yaml"


def start(roqsim):
    return roqsim("sim", WORLD, "--ros", "--pacing", "8", "--seconds", "600", "-q", wait_ready="/clock")


def pose(x, y, yaw=0.0, frame="map"):
    from geometry_msgs.msg import PoseStamped

    p = PoseStamped()
    p.header.frame_id = frame
    p.pose.position.x, p.pose.position.y = float(x), float(y)
    p.pose.orientation.z, p.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return p


def run(ros, client, goal, timeout=120.0):
    feedback = []
    assert client.wait_for_server(timeout_sec=20.0), "no navigate_to_pose server"
    fut = client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
    ros.spin_until(fut.done, 20.0, "the goal response")
    handle = fut.result()
    assert handle.accepted
    res = handle.get_result_async()
    ros.spin_until(res.done, timeout, "the goal's result")
    r = res.result()
    return r.status, r.result, feedback


def test_navigate_to_pose_succeeds_through_the_door_with_feedback(roqsim, ros):
    from nav2_msgs.action import NavigateToPose
    from rclpy.action import ActionClient

    sim = start(roqsim)
    client = ActionClient(ros.node, NavigateToPose, "/navigate_to_pose")
    goal = NavigateToPose.Goal(pose=pose(8.0, 2.3, yaw=math.pi / 2))
    status, result, fb = run(ros, client, goal)
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result.error_code, result.error_msg)
    assert len(fb) > 50, f"{len(fb)} feedback messages"
    first, last = fb[0], fb[-1]
    # remaining route from (1, 1) through the door at (5, 2) to (8, 2.3): at least the straight line
    assert first.distance_remaining > math.hypot(7.0, 1.3) + 0.01, first  # planned round the door jamb
    assert last.distance_remaining < 0.3
    p = last.current_pose.pose.position
    assert math.hypot(p.x - 8.0, p.y - 2.3) < 0.3, (p.x, p.y)
    t = [f.navigation_time.sec + f.navigation_time.nanosec * 1e-9 for f in fb]
    assert t == sorted(t) and t[-1] > 7.0 / 0.31, f"navigation_time {t[0]:.2f} .. {t[-1]:.2f} s of sim time"
    # the goal's yaw: turned to face +y at the end
    q = last.current_pose.pose.orientation
    assert abs(2 * math.atan2(q.z, q.w) - math.pi / 2) < 0.1
    print(f"arrived at ({p.x:.3f}, {p.y:.3f}) after {t[-1]:.1f} s sim, {len(fb)} feedback messages")
    assert sim.running()


def test_a_goal_in_a_wall_aborts_with_goal_occupied_and_through_poses_succeeds(roqsim, ros):
    from nav2_msgs.action import NavigateThroughPoses, NavigateToPose
    from rclpy.action import ActionClient

    start(roqsim)
    to_pose = ActionClient(ros.node, NavigateToPose, "/navigate_to_pose")
    status, result, _ = run(ros, to_pose, NavigateToPose.Goal(pose=pose(5.0, 1.0)))
    assert status == ABORTED
    assert result.error_code == NavigateToPose.Result.NONE + 206, result  # ComputePathToPose GOAL_OCCUPIED
    assert "goal (5.00, 1.00) is on an obstacle" in result.error_msg, result.error_msg
    through = ActionClient(ros.node, NavigateThroughPoses, "/navigate_through_poses")
    goal = NavigateThroughPoses.Goal(poses=[pose(2.0, 1.0), pose(2.0, 2.5)])
    status, result, fb = run(ros, through, goal)
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result.error_code, result.error_msg)
    remaining = [f.number_of_poses_remaining for f in fb]
    assert remaining[0] == 2 and min(remaining) <= 1, remaining
    p = fb[-1].current_pose.pose.position
    assert math.hypot(p.x - 2.0, p.y - 2.5) < 0.3, (p.x, p.y)


def test_navigate_to_pose_drives_a_walker_through_the_door_with_feedback(roqsim, ros):
    """A walker's goal endpoint is the navigator's action: /visitor/navigate_to_pose."""
    from nav2_msgs.action import NavigateToPose
    from rclpy.action import ActionClient

    sim = roqsim(
        "sim", "test/e2e/worlds/walker_goal.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q",
        wait_ready="/clock",
    )
    client = ActionClient(ros.node, NavigateToPose, "/visitor/navigate_to_pose")
    status, result, fb = run(ros, client, NavigateToPose.Goal(pose=pose(8.0, 2.5)), timeout=60.0)
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result.error_code, result.error_msg)
    assert len(fb) > 20, f"{len(fb)} feedback messages"
    first, last = fb[0], fb[-1]
    # from (1, 2.5) down through the door at (5, 2) to (8, 2.5): the route remaining is longer
    # than the straight line from where the walker is (the first feedback may already be underway)
    q = first.current_pose.pose.position
    assert first.distance_remaining > math.hypot(8.0 - q.x, 2.5 - q.y) + 0.01, first
    # the last feedback comes at most one feedback period before arrival: within the walker's
    # arrival_radius (0.25 m default) plus what it walks in 1/20 s at its 1.2 m/s default
    reach = 0.25 + 1.2 / 20.0 + 1e-3
    assert last.distance_remaining < reach, last
    p = last.current_pose.pose.position
    assert math.hypot(p.x - 8.0, p.y - 2.5) < reach, (p.x, p.y)
    t = [f.navigation_time.sec + f.navigation_time.nanosec * 1e-9 for f in fb]
    # at 1.2 m/s the planned ~7.1 m take about 6 s of sim time
    assert t == sorted(t) and 5.0 < t[-1] < 8.0, f"navigation_time {t[0]:.2f} .. {t[-1]:.2f} s"
    print(f"walker arrived at ({p.x:.3f}, {p.y:.3f}) after {t[-1]:.2f} s sim, {len(fb)} feedback")
    assert sim.running()
