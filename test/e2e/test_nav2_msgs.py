"""The interface packages built from interfaces/ as a ROS 2 peer uses them: nav2_msgs (Jazzy 1.3.13)
and geographic_msgs (1.0.6), built by scripts/setup.sh into .deps/ros_ifaces/install.

* Every type listed in interfaces/TYPE_HASHES.txt reports, from its compiled C library, the RIHS01
  hash listed there: that hash is what the type support hands to the middleware and what Jazzy
  peers compare (a Nav2 built by the ROS build farm refuses a NavigateToPose whose hash differs).
* A NavigateToPose and a NavigateThroughPoses goal go from an rclpy action client to an rclpy
  action server and back with feedback and result; every field arrives as sent, and the graph
  reports the feedback topic's type hash as the library does.
* Defaults and constants (not part of the hash) are the published ones.

No roqsim process is involved: these check the interface packages themselves.
"""

import ctypes
import importlib
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HASHES = ROOT / "interfaces" / "TYPE_HASHES.txt"
# nav2_msgs/action/NavigateToPose_FeedbackMessage as rosidl-generated code of an upstream Jazzy
# build of nav2_msgs states it (TYPE_HASHES.txt lists top-level types only).
UPSTREAM_FEEDBACK_MESSAGE_HASH = "RIHS01_9d1f6fa2eb975ce733b419ac2e97b134d8ff92b6478b6559feed9a50bdfd82b3"


def listed_hashes(packages=None):
    rows = []
    for line in HASHES.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, digest, _ = line.split()
        if packages is None or name.split("/")[0] in packages:
            rows.append((name, digest))
    return rows


class RosidlTypeHash(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint8), ("value", ctypes.c_uint8 * 32)]


def compiled_hash(name):
    """The RIHS01 hash the C type support of ``pkg/kind/Type`` reports (rosidl_generator_c)."""
    pkg, kind, typ = name.split("/")
    mod = importlib.import_module(f"{pkg}.{kind}")
    cls = getattr(mod, typ.split("_")[0])  # NavigateToPose for NavigateToPose_FeedbackMessage
    type(cls).__import_type_support__()  # loads the package's C libraries (the way rclpy does)
    lib = ctypes.CDLL(f"lib{pkg}__rosidl_generator_c.so")
    fn = getattr(lib, f"{pkg}__{kind}__{typ}__get_type_hash")
    fn.restype = ctypes.POINTER(RosidlTypeHash)
    fn.argtypes = [ctypes.c_void_p]  # the type support argument is unused
    h = fn(None).contents
    return f"RIHS{h.version:02d}_" + bytes(h.value).hex()


def test_type_hashes_file_lists_every_nav2_and_geographic_type():
    listed = {n for n, _ in listed_hashes({"nav2_msgs", "geographic_msgs"})}
    on_disk = set()
    for pkg in ("nav2_msgs", "geographic_msgs"):
        for f in (ROOT / "interfaces" / pkg).glob("*/*"):
            if f.suffix in (".msg", ".srv", ".action"):
                on_disk.add(f"{pkg}/{f.parent.name}/{f.stem}")
    assert len(on_disk) == 71  # 51 nav2_msgs + 20 geographic_msgs
    assert listed == on_disk


def test_every_compiled_type_hash_matches_the_list():
    rows = listed_hashes()
    wrong = [(name, digest, compiled_hash(name)) for name, digest in rows]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert wrong == []
    assert len([n for n, _ in rows if n.startswith(("nav2_msgs/", "geographic_msgs/"))]) == 71


def test_navigate_to_pose_goal_feedback_and_result_round_trip(ros):
    from action_msgs.msg import GoalStatus
    from geometry_msgs.msg import PoseStamped
    from nav2_msgs.action import NavigateToPose
    from rclpy.action import ActionClient, ActionServer

    seen_goals = []

    def execute(handle):
        seen_goals.append(handle.request)
        fb = NavigateToPose.Feedback()
        fb.current_pose.header.frame_id = "map"
        fb.current_pose.pose.position.x = 0.5
        fb.navigation_time.sec = 3
        fb.estimated_time_remaining.nanosec = 250_000_000
        fb.number_of_recoveries = 2
        fb.distance_remaining = 1.25
        handle.publish_feedback(fb)
        handle.succeed()
        res = NavigateToPose.Result()
        res.error_code = NavigateToPose.Result.NONE
        res.error_msg = "arrived"
        return res

    server = ActionServer(ros.node, NavigateToPose, "/navigate_to_pose", execute)
    client = ActionClient(ros.node, NavigateToPose, "/navigate_to_pose")
    try:
        ros.spin_until(client.server_is_ready, 10.0, "the NavigateToPose server")
        goal = NavigateToPose.Goal()
        goal.pose = PoseStamped()
        goal.pose.header.frame_id = "map"
        goal.pose.header.stamp.sec = 42
        goal.pose.pose.position.x = 1.5
        goal.pose.pose.position.y = -2.25
        goal.pose.pose.orientation.z = math.sin(math.pi / 8)
        goal.pose.pose.orientation.w = math.cos(math.pi / 8)
        goal.behavior_tree = "navigate_w_replanning.xml"
        feedback = []
        sent = client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
        ros.spin_until(sent.done, 10.0, "the goal response")
        handle = sent.result()
        assert handle.accepted
        result = handle.get_result_async()
        ros.spin_until(result.done, 10.0, "the result")
        ros.spin_until(lambda: feedback, 5.0, "the feedback")

        got = seen_goals[0]
        assert got.pose.header.frame_id == "map" and got.pose.header.stamp.sec == 42
        assert (got.pose.pose.position.x, got.pose.pose.position.y) == (1.5, -2.25)
        assert got.pose.pose.orientation.z == math.sin(math.pi / 8)
        assert got.behavior_tree == "navigate_w_replanning.xml"
        fb = feedback[0]
        assert fb.current_pose.header.frame_id == "map" and fb.current_pose.pose.position.x == 0.5
        assert (fb.navigation_time.sec, fb.estimated_time_remaining.nanosec) == (3, 250_000_000)
        assert (fb.number_of_recoveries, fb.distance_remaining) == (2, 1.25)
        r = result.result()
        assert r.status == GoalStatus.STATUS_SUCCEEDED
        assert (r.result.error_code, r.result.error_msg) == (0, "arrived")

        # What the graph tells a peer about the action's feedback topic is the library's hash, and
        # the one rosidl generates for this type in an upstream Jazzy build of nav2_msgs.
        infos = ros.node.get_publishers_info_by_topic("/navigate_to_pose/_action/feedback")
        assert [i.topic_type for i in infos] == ["nav2_msgs/action/NavigateToPose_FeedbackMessage"]
        feedback_hash = compiled_hash("nav2_msgs/action/NavigateToPose_FeedbackMessage")
        assert str(infos[0].topic_type_hash) == feedback_hash == UPSTREAM_FEEDBACK_MESSAGE_HASH
    finally:
        client.destroy()
        server.destroy()


def test_navigate_through_poses_carries_every_pose_and_the_poses_remaining(ros):
    from geometry_msgs.msg import PoseStamped
    from nav2_msgs.action import NavigateThroughPoses
    from rclpy.action import ActionClient, ActionServer

    def execute(handle):
        fb = NavigateThroughPoses.Feedback()
        fb.number_of_poses_remaining = len(handle.request.poses) - 1
        fb.current_pose = handle.request.poses[0]
        handle.publish_feedback(fb)
        handle.succeed()
        res = NavigateThroughPoses.Result()
        res.error_msg = ",".join(f"{p.pose.position.x:g}" for p in handle.request.poses)
        return res

    server = ActionServer(ros.node, NavigateThroughPoses, "/navigate_through_poses", execute)
    client = ActionClient(ros.node, NavigateThroughPoses, "/navigate_through_poses")
    try:
        ros.spin_until(client.server_is_ready, 10.0, "the NavigateThroughPoses server")
        goal = NavigateThroughPoses.Goal()
        for x in (1.0, 2.5, -4.0):
            p = PoseStamped()
            p.header.frame_id = "map"
            p.pose.position.x = x
            p.pose.orientation.w = 1.0
            goal.poses.append(p)
        feedback = []
        sent = client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
        ros.spin_until(sent.done, 10.0, "the goal response")
        result = sent.result().get_result_async()
        ros.spin_until(result.done, 10.0, "the result")
        ros.spin_until(lambda: feedback, 5.0, "the feedback")
        assert result.result().result.error_msg == "1,2.5,-4"
        assert feedback[0].number_of_poses_remaining == 2
        assert feedback[0].current_pose.pose.position.x == 1.0
    finally:
        client.destroy()
        server.destroy()


def test_defaults_and_constants_are_the_published_ones():
    from geographic_msgs.msg import GeoPose, GeoPoseWithCovariance
    from nav2_msgs.action import (ComputeRoute, DockRobot, FollowGPSWaypoints, FollowObject, FollowPath,
                                  FollowWaypoints, NavigateToPose, UndockRobot)
    from nav2_msgs.msg import CollisionMonitorState
    from nav2_msgs.srv import LoadMap, ManageLifecycleNodes

    g = DockRobot.Goal()
    assert (g.use_dock_id, g.max_staging_time, g.navigate_to_staging_pose) == (True, 1000.0, True)
    r = DockRobot.Result()
    assert (r.success, r.error_code, r.num_retries) == (True, 0, 0)
    assert (DockRobot.Result.DOCK_NOT_IN_DB, DockRobot.Result.UNKNOWN) == (901, 999)
    assert DockRobot.Feedback.WAIT_FOR_CHARGE == 4
    assert UndockRobot.Goal().max_undocking_time == 30.0 and UndockRobot.Result().success is True
    assert FollowWaypoints.Goal().goal_index == 0
    assert FollowPath.Result.CONTROLLER_TIMED_OUT == 107  # added in 1.3.3
    assert ComputeRoute.Result.INVALID_EDGE_SCORER_USE == 407  # route server, 1.3.9
    assert (FollowObject.Result.TF_ERROR, FollowObject.Feedback.RETRY) == (901, 4)  # 1.3.13
    assert not hasattr(NavigateToPose.Result, "UNKNOWN")  # Jazzy defines only NONE (Kilted adds 9000-9003)
    assert NavigateToPose.Result.NONE == 0
    assert (ManageLifecycleNodes.Request.STARTUP, ManageLifecycleNodes.Request.CLEANUP) == (0, 6)
    assert LoadMap.Response.RESULT_UNDEFINED_FAILURE == 255
    assert CollisionMonitorState.LIMIT == 4

    # FollowGPSWaypoints carries geographic_msgs poses; its error code is int16 in Jazzy.
    gps = FollowGPSWaypoints.Goal()
    gps.gps_poses.append(GeoPose())
    gps.gps_poses[0].position.latitude = 48.1374
    assert gps.gps_poses[0].position.latitude == 48.1374
    assert FollowGPSWaypoints.Result.get_fields_and_field_types()["error_code"] == "int16"
    assert FollowWaypoints.Result.get_fields_and_field_types()["error_code"] == "uint16"
    assert len(GeoPoseWithCovariance().covariance) == 36
