"""End-to-end test of the door's control_msgs/GripperCommand action (issue 19) from rclpy: a goal
opening the leaf to an openness, a goal stalled by a crate, a refused goal, the `topics:` rename,
against the real binary with `--ros`.
"""

from pathlib import Path

import pytest
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

HERE = Path(__file__).resolve().parent
WORLD = HERE / "worlds" / "doors.yaml"
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
# action_msgs/GoalStatus
SUCCEEDED, ABORTED = 4, 6


def run_goal(ros, client, position, max_effort=0.0, feedback=None):
    from control_msgs.action import GripperCommand

    goal = GripperCommand.Goal()
    goal.command.position = float(position)
    goal.command.max_effort = float(max_effort)
    fut = client.send_goal_async(goal, feedback_callback=(lambda m: feedback.append(m.feedback)) if feedback is not None else None)
    ros.spin_until(fut.done, 20.0, "the goal response")
    handle = fut.result()
    assert handle.accepted, "the door accepts every goal and answers it by its outcome"
    res = handle.get_result_async()
    ros.spin_until(res.done, 60.0, "the goal's result")
    return res.result().status, res.result().result


def test_door_gripper_command(roqsim, ros):
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    from std_msgs.msg import Float64

    lobby = ActionClient(ros.node, GripperCommand, "/lobby/door")
    garage = ActionClient(ros.node, GripperCommand, "/garage/door_action")
    state = ros.collect("/lobby/state", Float64, RELIABLE)
    sim = roqsim("sim", str(WORLD), "--ros", "--pacing", "realtime", "--seconds", "120", "-q", wait_ready="/clock")
    ros.spin_until(lambda: lobby.server_is_ready() and garage.server_is_ready(), 30, "both door actions")

    fb = []
    status, r = run_goal(ros, lobby, 0.5, feedback=fb)
    print(f"lobby: status {status}, position {r.position:.4f}, effort {r.effort:.3f}, {len(fb)} feedback")
    assert status == SUCCEEDED
    assert r.reached_goal and not r.stalled
    assert r.position == pytest.approx(0.5, abs=0.01)
    assert fb and all(0.0 <= f.position <= 0.5 + 0.01 for f in fb), [f.position for f in fb]
    ros.spin_until(lambda: state and abs(state[-1].data - 0.5) < 0.02, 10, "/lobby/state near 0.5")

    # outside 0..1: aborted at once, nothing moved; the result reports the door where it is
    status, r = run_goal(ros, lobby, 1.5)
    print(f"refused: status {status}, position {r.position:.4f}")
    assert status == ABORTED and not r.reached_goal
    assert r.position == pytest.approx(0.5, abs=0.02), "a refused goal's result is the measured openness, not 0"

    # a crate in the swing path: the door backs off and the goal aborts stalled
    status, r = run_goal(ros, garage, 1.0, max_effort=12.0)
    print(f"garage: status {status}, position {r.position:.4f}, effort {r.effort:.3f}, stalled {r.stalled}")
    assert status == ABORTED
    assert r.stalled and not r.reached_goal
    assert 0.16 < r.position < 0.22, "the leaf meets the crate near 23 deg of 120"
    assert sim.stop() in (0, 130)
