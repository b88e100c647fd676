"""End-to-end tests of the arm over ROS 2 (issue 6): the real binary with `--ros` on the UR5e-class
arm of worlds/ur_pick.yaml, driven by rclpy as MoveIt 2 / ros2_control clients drive a real arm —
control_msgs FollowJointTrajectory and GripperCommand action clients, controller_manager_msgs
service calls, lifecycle_msgs transition events, the F/T sensor's std_srvs/Trigger tare.

Every assertion is on measured message contents (joint positions from /ur/joint_states, result
codes and strings, wrench forces, transition stamps) and every time is sim time from stamps. The
runs use `--pacing 4` (4x real time): fast, and still slow enough that a cancel lands mid-motion.
"""

import math
import re
from pathlib import Path

import pytest
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from arm_helpers import ABORTED, CANCELED, INTERRUPTED, JOINTS, REST, SUCCEEDED, Arm, Wrench, lift, pick, plus, stamp_s, vertical_ik

HERE = Path(__file__).resolve().parent
PILLAR = HERE / "worlds" / "arm_pillar.yaml"
PACE = ("--pacing", "4")
CM = "/ur/controller_manager"
JTC = "scaled_joint_trajectory_controller"
EVENTS_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def start(roqsim, world="worlds/ur_pick.yaml", *extra):
    return roqsim("sim", world, "--ros", *PACE, "--seconds", "600", "-q", *extra, wait_ready="/clock")


# ------------------------------------------------------------------------ FollowJointTrajectory


def test_three_point_trajectory_ends_within_0_01_rad_and_succeeds(roqsim, ros):
    arm = Arm(ros)
    sim = start(roqsim)
    arm.wait_ready()
    assert max(abs(a - b) for a, b in zip(arm.q(), REST)) < 0.01, f"the arm starts at rest: {arm.q()}"
    last = plus([0.5, -0.3, 0.3, 0.1, 0.1, 0.8])
    status, result = arm.run([(0.6, plus([0.2, -0.1, 0.1, 0.0, 0.0, 0.3])), (1.2, plus([0.4, -0.2, 0.2, 0.1, 0.0, 0.6])), (1.8, last)])
    span = arm.feedback_span()
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result.error_code, result.error_string)
    errs = [abs(a - b) for a, b in zip(arm.q(), last)]
    print(f"succeeded ~{span:.2f} s of sim time after acceptance: '{result.error_string}'; final errors {['%.2e' % e for e in errs]} rad")
    assert max(errs) < 0.01, f"final joint errors {errs} rad"
    assert 1.75 <= span < 3.0, f"graded after the last point (1.8 s): feedback spans {span:.3f} s"
    # feedback: the controller's joints, desired vs actual, stamped with sim time
    fb = arm.feedback
    assert len(fb) >= 20, f"{len(fb)} feedback messages over ~1.8 s at 20 Hz"
    mid = fb[len(fb) // 2]
    assert list(mid.joint_names) == JOINTS
    assert all(abs(d - a - e) < 1e-12 for d, a, e in zip(mid.desired.positions, mid.actual.positions, mid.error.positions))
    assert max(abs(e) for e in mid.error.positions) < 0.1, f"tracking error mid-way {list(mid.error.positions)}"
    stamps = [round(stamp_s(f.header.stamp), 6) for f in fb]
    assert 0 < stamps[0] < arm.sim_now() and stamps == sorted(stamps), f"feedback stamped with sim time: {stamps[:3]}"
    # 20 Hz of sim time: the median spacing of the stamps is 0.05 s. A stamp is the sim time when
    # roqsim's ROS side received the sample (the payload has none of its own), so one can trail by a
    # few steps on a busy machine, and a client that falls behind loses messages from its feedback
    # queue (KEEP_LAST) — the median reads the rate the server sends at either way.
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    assert gaps[len(gaps) // 2] == pytest.approx(0.05, abs=0.004), f"median spacing {gaps[len(gaps) // 2]:.4f} s: {stamps}"
    # it holds the last point afterwards
    arm.wait_sim(0.5)
    assert max(abs(a - b) for a, b in zip(arm.q(), last)) < 0.01
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_blocked_arm_aborts_with_goal_tolerance_violated(roqsim, ros):
    # test/e2e/worlds/arm_pillar.yaml: a fixed pillar in the sweep of the wrist
    arm = Arm(ros)
    sim = start(roqsim, str(PILLAR))
    arm.wait_ready(gripper=False)
    status, result = arm.run([(1.0, plus([1.2, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    t = arm.feedback_span()
    pan = arm.position("shoulder_pan_joint")
    print(f"aborted after {t:.3f} s of sim time, pan {pan:.3f} rad: {result.error_string}")
    assert (status, result.error_code) == (ABORTED, -5), (status, result.error_code, result.error_string)
    assert "GOAL_TOLERANCE_VIOLATED" in result.error_string and "shoulder_pan_joint" in result.error_string, result.error_string
    assert "tolerance 0.5 rad" in result.error_string, result.error_string
    assert 0.1 < pan < 0.7, f"the pillar stopped the pan short of 1.2 rad: {pan}"
    assert 1.9 < t < 2.05, f"graded at the last point + goal_time_tolerance (1 s): feedback spans {t:.3f} s"
    # and it holds where it stopped instead of pressing on
    arm.wait_sim(0.4)
    assert abs(arm.position("shoulder_pan_joint") - pan) < 0.01
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_cancel_mid_motion_leaves_the_arm_stopped_where_it_was(roqsim, ros):
    arm = Arm(ros)
    sim = start(roqsim)
    arm.wait_ready()
    handle = arm.send([(3.0, plus([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    ros.spin_until(lambda: arm.position("shoulder_pan_joint") > 0.3, 30, "the pan to pass 0.3 rad")
    cancel = handle.cancel_goal_async()
    ros.spin_until(cancel.done, 10, "the cancel response")
    assert len(cancel.result().goals_canceling) == 1, "the cancel was accepted"
    status, result = arm.result(handle)
    assert status == CANCELED, (status, result.error_string)
    assert "canceled by the caller; holding the measured position" in result.error_string, result.error_string
    # the first joint state stamped after the goal ended vs one 1 s of sim time later
    at_stop = arm.states[-1]
    t_stop, pan_stop = stamp_s(at_stop.header.stamp), arm.position("shoulder_pan_joint", at_stop)
    arm.wait_sim(1.0)
    later = arm.states[-1]
    pan_later = arm.position("shoulder_pan_joint", later)
    v = arm.velocity("shoulder_pan_joint", later)
    print(f"canceled at pan {pan_stop:.4f} rad (t = {t_stop:.3f} s); {stamp_s(later.header.stamp) - t_stop:.3f} s later {pan_later:.4f} rad, v {v:.1e} rad/s")
    assert 0.3 < pan_stop < 0.9, f"mid-motion (the goal was 1.0 rad): {pan_stop}"
    assert abs(pan_later - pan_stop) < 0.01, f"stopped where it was: {pan_stop} -> {pan_later}"
    assert abs(v) < 1e-3
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# ------------------------------------------------------------------------ GripperCommand + F/T


def test_gripper_closes_on_the_box_and_the_ft_weighs_it(roqsim, ros):
    arm = Arm(ros)
    ft = Wrench(ros)
    sim = start(roqsim)
    arm.wait_ready()
    # tare the F/T at rest (it reads the gripper's own weight until then)
    # the wrench stream may be discovered after /clock: take the window from its own stamps
    span = lambda: stamp_s(ft.msgs[-1].header.stamp) - stamp_s(ft.msgs[0].header.stamp)  # noqa: E731
    ros.spin_until(lambda: len(ft.msgs) > 1 and span() >= 0.25, 10, "0.25 s of wrenches")
    untared = ft.median_fz(stamp_s(ft.msgs[-1].header.stamp), 0.2)
    reply = ft.tare()
    assert reply.success and re.match(r"tared at t = \d+\.\d{4} s \(offset valid at this pose only\)", reply.message), reply.message
    arm.wait_sim(0.2)
    tared = ft.median_fz(arm.now(), 0.1)
    print(f"F/T before tare {untared:.3f} N (the 0.925 kg gripper), after: {tared:.2e} N ({reply.message})")
    assert untared == pytest.approx(-0.925 * 9.81, abs=0.1) and abs(tared) < 0.01
    (down_status, down), (status, grip) = pick(arm)
    assert (down_status, down.error_code) == (SUCCEEDED, 0), down.error_string
    print(f"gripper: status {status}, position {grip.position:.4f} m, effort {grip.effort:.1f} N, stalled {grip.stalled}, reached {grip.reached_goal}")
    assert status == SUCCEEDED
    assert grip.stalled and not grip.reached_goal, "closed on the 50 mm box: stalled short of fully closed"
    assert grip.position == pytest.approx(0.0175, abs=0.002), "each jaw travels (85 - 50) / 2 mm"
    assert grip.effort > 1.0, f"squeezing: {grip.effort} N"
    # lift 0.1 m: the F/T weighs the 0.5 kg box
    st, up = lift(arm, 0.1)
    assert (st, up.error_code) == (SUCCEEDED, 0), up.error_string
    arm.wait_sim(0.5)
    fz = ft.median_fz(arm.now(), 0.3)
    print(f"holding the box 0.1 m up, the tared F/T reads {fz:.3f} N along world z")
    assert fz == pytest.approx(-0.5 * 9.81, abs=0.15), f"the box's weight along world z: {fz} N"
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# ------------------------------------------------------------------------ controller_manager


def test_controller_manager_list_switch_unload_and_transition_events(roqsim, ros):
    from controller_manager_msgs.srv import (ConfigureController, ListControllers, ListHardwareInterfaces,
                                             LoadController, SwitchController, UnloadController)
    from lifecycle_msgs.msg import TransitionEvent

    arm = Arm(ros)
    jtc_events = ros.collect(f"/ur/{JTC}/transition_event", TransitionEvent, EVENTS_QOS)
    grip_events = ros.collect("/ur/gripper_controller/transition_event", TransitionEvent, EVENTS_QOS)
    sim = start(roqsim)
    arm.wait_ready()

    # list_controllers: every controller of the robot, with its state and what it holds
    listed = ros.call(ListControllers, f"{CM}/list_controllers", ListControllers.Request()).controller
    rows = [(c.name, c.state, c.type) for c in listed]
    assert rows == [
        (JTC, "active", "joint_trajectory_controller/JointTrajectoryController"),
        ("gripper_controller", "active", "position_controllers/GripperActionController"),
        ("joint_state_broadcaster", "active", "joint_state_broadcaster/JointStateBroadcaster"),
    ], rows
    assert list(listed[0].claimed_interfaces) == [f"{j}/position" for j in JOINTS]
    assert list(listed[0].required_command_interfaces) == [f"{j}/position" for j in JOINTS]
    assert listed[0].update_rate == 500
    assert list(listed[1].claimed_interfaces) == ["left_finger_joint/position"]
    assert list(listed[2].claimed_interfaces) == [] and len(listed[2].required_state_interfaces) == 21
    hw = ros.call(ListHardwareInterfaces, f"{CM}/list_hardware_interfaces", ListHardwareInterfaces.Request())
    assert sorted(h.name for h in hw.command_interfaces) == sorted([f"{j}/position" for j in JOINTS] + ["left_finger_joint/position"])
    assert all(h.is_claimed and h.is_available and h.data_type == "double" for h in hw.command_interfaces)
    assert len(hw.state_interfaces) == 21 and not any(h.is_claimed for h in hw.state_interfaces)

    def switch(activate, deactivate, strictness):
        req = SwitchController.Request(activate_controllers=activate, deactivate_controllers=deactivate, strictness=strictness)
        return ros.call(SwitchController, f"{CM}/switch_controller", req)

    # STRICT refuses the whole request when a part cannot be done, and changes nothing
    r = switch([JTC], [], SwitchController.Request.STRICT)
    assert not r.ok and f"cannot activate `{JTC}`: it is already active" in r.message, r.message
    # strictness 0 reads as best effort: skipped, reported, ok
    r = switch(["no_such_controller"], [], 0)
    assert r.ok and "skipped: controller `no_such_controller` does not exist on robot `ur`" in r.message, r.message

    # STRICT naming both sides in one call: one deactivation and one activation, the same instant
    r = switch([], ["gripper_controller"], SwitchController.Request.STRICT)
    assert r.ok and r.message == "deactivated [gripper_controller]", r.message
    t_before = arm.sim_now()
    r = switch(["gripper_controller"], [JTC], SwitchController.Request.STRICT)
    ros.spin(0.05)  # /clock of the step that ran the switch arrives after the reply
    t_after = arm.sim_now()
    assert r.ok and r.message == f"deactivated [{JTC}]; activated [gripper_controller]", r.message
    states = {c.name: c.state for c in ros.call(ListControllers, f"{CM}/list_controllers", ListControllers.Request()).controller}
    assert states == {JTC: "inactive", "gripper_controller": "active", "joint_state_broadcaster": "active"}, states
    # transition_event: lifecycle_msgs, stamped with sim time (ns, on the physics grid)
    ros.spin_until(lambda: any(e.transition.label == "deactivate" for e in jtc_events), 10, f"{JTC}'s deactivate event")
    ros.spin_until(lambda: sum(e.transition.label == "activate" for e in grip_events) >= 1, 10, "the gripper's activate event")
    # rclcpp_lifecycle's pair per transition: into the transition state, then out of it
    i = max(k for k, e in enumerate(jtc_events) if e.transition.label == "deactivate")
    ros.spin_until(lambda: len(jtc_events) > i + 1, 10, f"{JTC}'s deactivate success event")
    deact, done = jtc_events[i], jtc_events[i + 1]
    act = [e for e in grip_events if e.transition.label == "activate"][-1]
    assert (deact.transition.id, deact.start_state.id, deact.start_state.label, deact.goal_state.id, deact.goal_state.label) == (4, 3, "active", 14, "deactivating")
    assert (done.transition.id, done.transition.label, done.start_state.label, done.goal_state.id, done.goal_state.label) == (40, "transition_success", "deactivating", 2, "inactive")
    assert done.timestamp == deact.timestamp
    assert (act.transition.id, act.start_state.label, act.goal_state.label) == (3, "inactive", "activating")
    assert deact.timestamp == act.timestamp, "one call: both transitions at the same sim instant"
    print(f"hand-over stamped {deact.timestamp} ns of sim time (/clock around the call: {t_before:.3f} .. {t_after:.3f} s)")
    assert deact.timestamp % 2_000_000 == 0, "a sim time on the 2 ms physics grid"
    assert t_before <= deact.timestamp * 1e-9 <= t_after, (deact.timestamp, t_before, t_after)

    # an inactive controller's goals are refused, naming the fix
    status, res = arm.run([(0.5, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    assert status == ABORTED and f"controller `{JTC}` is inactive" in res.error_string, res.error_string

    # unload: refused while active (ok false; the reason is logged), fine once inactive
    assert not ros.call(UnloadController, f"{CM}/unload_controller", UnloadController.Request(name="gripper_controller")).ok
    sim.wait_output(r"unload_controller refused: controller `gripper_controller` is active and cannot be unloaded; deactivate it first", 10)
    assert ros.call(UnloadController, f"{CM}/unload_controller", UnloadController.Request(name=JTC)).ok
    names = [c.name for c in ros.call(ListControllers, f"{CM}/list_controllers", ListControllers.Request()).controller]
    assert JTC not in names, names
    ros.spin_until(lambda: any(e.transition.label == "shutdown" for e in jtc_events), 10, f"{JTC}'s shutdown event")
    # only declared controllers load; load + configure + switch brings it back
    assert not ros.call(LoadController, f"{CM}/load_controller", LoadController.Request(name="joint_trajectory_controller")).ok
    sim.wait_output(r"controller `joint_trajectory_controller` is not declared for robot `ur`", 10)
    assert ros.call(LoadController, f"{CM}/load_controller", LoadController.Request(name=JTC)).ok
    assert ros.call(ConfigureController, f"{CM}/configure_controller", ConfigureController.Request(name=JTC)).ok
    r = switch([JTC], [], SwitchController.Request.STRICT)
    assert r.ok and r.message == f"activated [{JTC}]", r.message
    status, res = arm.run([(0.5, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])
    assert status == SUCCEEDED, res.error_string
    assert abs(arm.position("shoulder_pan_joint") - 0.3) < 0.01
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]
