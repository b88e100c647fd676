"""End-to-end tests of fault injection over ROS 2 (issue 7): `ros2 service call`-style std_srvs/SetBool
requests from rclpy fire a physical fault (model_override) and a sensor fault (a lidar's `fault:`
block), and the replies say whether they landed.

* test/e2e/worlds/ur_pick_faults.yaml: the arm picks and lifts the ur_pick box over ROS
  (FollowJointTrajectory, GripperCommand), the F/T sensor weighs it; a fault on the box's friction
  (the side that does not own the pad contacts) replies no_effect and the box stays; the pads'
  friction fault replies landed and the F/T sees the box leave the jaws.
* test/e2e/worlds/lidar_fault.yaml: the TurtleBot's /scan has no dropouts in the walled room;
  the fault's SetBool raises the share of no-return rays to the configured 60 %, and off again
  brings it back to 0.

Times are sim time from message stamps.
"""

import math
from pathlib import Path

import pytest
from rclpy.qos import qos_profile_sensor_data

from arm_helpers import INTERRUPTED, RELIABLE, SUCCEEDED, Arm, Wrench, lift, pick, stamp_s, vertical_ik

HERE = Path(__file__).resolve().parent


def set_bool(ros, name, data):
    from std_srvs.srv import SetBool

    return ros.call(SetBool, name, SetBool.Request(data=data), timeout=30)


def fire(ros, name):
    """SetBool(true) on a model_override that acts on a held box. The verdict is read from the
    contacts after the change; the box held in the bundled gripper loses its pad contacts for one
    step in ~20 (the stick-slip of arm_helpers.Wrench.median_fz), and the override waits up to 10
    steps for a contact to read (see src/plugins/faults/model_override), so one request is
    answered `landed`."""
    return set_bool(ros, name, True)


def test_grip_fault_lands_and_the_box_slips_out_while_the_wrong_side_has_no_effect(roqsim, ros):
    from std_msgs.msg import Bool, String

    arm = Arm(ros)
    ft = Wrench(ros)
    state = ros.collect("/grip_fault/override_state", Bool, RELIABLE)
    verified = ros.collect("/grip_fault/override_verified", String, RELIABLE)
    sim = roqsim("sim", str(HERE / "worlds" / "ur_pick_faults.yaml"), "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    arm.wait_ready()
    ros.spin_until(lambda: state and verified, 10, "override_state and override_verified")
    assert (state[-1].data, verified[-1].data) == (False, "untested")

    assert ft.tare().success  # at rest: from here the F/T reads the payload only
    (st, down), (gst, grip) = pick(arm)
    print(f"grip: position {grip.position:.4f} m, effort {grip.effort:.1f} N, stalled {grip.stalled}")
    assert (st, down.error_code, gst, grip.stalled) == (SUCCEEDED, 0, SUCCEEDED, True), (down.error_string, grip)
    st, up = lift(arm, 0.2)
    assert st == SUCCEEDED, up.error_string
    arm.wait_sim(0.5)
    held = ft.median_fz(arm.now(), 0.3)
    assert held == pytest.approx(-4.905, abs=0.15), f"the lifted box's weight: {held} N"

    # the box's own friction: the pads own those contacts (priority 1), so nothing changes
    r = fire(ros, "/box_fault/override")
    print(f"box_fault: {r.success} {r.message}")
    assert not r.success, r.message
    assert r.message.startswith("no_effect: geom_friction -> [0.0, 0.0, 0.0] on [pick_box]"), r.message
    assert "the other side owns these contacts ([ur_left_pad, ur_right_pad])" in r.message, r.message
    arm.wait_sim(0.5)
    still = ft.median_fz(arm.now(), 0.3)
    assert still == pytest.approx(-4.905, abs=0.15), f"still held after the no_effect fault: {still} N"

    r = set_bool(ros, "/box_fault/override", False)
    assert r.success and r.message.startswith("untested: geom_friction restored to nominal"), r.message

    # the pads' friction: lands, and the box slips out of the jaws within 2 s
    t_fire = arm.sim_now()
    r = fire(ros, "/grip_fault/override")
    print(f"grip_fault: {r.success} {r.message}")
    assert r.success, r.message
    assert r.message.startswith("landed: geom_friction -> [0.02, 0.02, 0.02] on [ur_left_pad, ur_right_pad]"), r.message
    assert "carry sliding friction 0.02" in r.message, r.message
    arm.wait_sim(2.0)
    empty = ft.median_fz(arm.now(), 0.3)  # (also waits for the wrench stream to catch up)
    after = sorted((stamp_s(m.header.stamp), m.wrench.force.z) for m in ft.msgs if stamp_s(m.header.stamp) > t_fire)
    # released: from then on a whole 0.1 s of samples carries less than 1.5 N (a single sample can
    # spike to -0.9 N while held: see Wrench.median_fz)
    released = next((t for i, (t, _) in enumerate(after) if all(fz > -1.5 for u, fz in after[i:] if u < t + 0.1) and after[-1][0] >= t + 0.1), None)
    print(f"fault fired at t = {t_fire:.3f} s; the F/T lost the box's weight at t = {released}")
    assert released is not None and released - t_fire < 2.0, f"the box did not slip out: {after[-5:]}"
    assert abs(empty) < 0.5, f"nothing in the jaws: {empty} N"
    ros.spin_until(lambda: state[-1].data and verified[-1].data == "landed", 10, "override_state true, verified landed")

    r = set_bool(ros, "/grip_fault/override", False)
    assert r.success and r.message.startswith("untested: geom_friction restored to nominal"), r.message
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_lidar_fault_raises_the_scan_dropout_while_on(roqsim, ros):
    from sensor_msgs.msg import LaserScan

    scans = ros.collect("/scan", LaserScan, qos_profile_sensor_data)
    sim = roqsim("sim", str(HERE / "worlds" / "lidar_fault.yaml"), "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    srv = "/robot/rplidar/lidar/override"

    def dropout(t_from, n):
        """Share of +inf (no return) rays over ``n`` scans stamped after ``t_from`` (sim s)."""
        ros.spin_until(lambda: sum(stamp_s(s.header.stamp) > t_from for s in scans) >= n, 60, f"{n} scans after t = {t_from:.2f}")
        sel = [s for s in scans if stamp_s(s.header.stamp) > t_from][:n]
        inf = sum(1 for s in sel for r in s.ranges if r == math.inf)
        return inf / sum(len(s.ranges) for s in sel), stamp_s(sel[-1].header.stamp)

    def latest():
        return stamp_s(scans[-1].header.stamp)

    ros.spin_until(lambda: scans, 20, "a scan")
    nominal, _ = dropout(latest(), 10)
    r = set_bool(ros, srv, True)
    assert r.success and r.message.startswith("landed: `robot.rplidar.lidar` reads its fault values from the next frame"), r.message
    # scans stamped after the reply (plus a margin for the ones in flight) read the fault
    faulted, t_end = dropout(latest() + 0.3, 30)
    r = set_bool(ros, srv, False)
    assert r.success and r.message.startswith("untested: `robot.rplidar.lidar` restored to its nominal config"), r.message
    restored, _ = dropout(latest() + 0.3, 10)
    print(f"/scan dropout: nominal {nominal:.4f}, faulted {faulted:.4f} (30 scans x {len(scans[-1].ranges)} rays), restored {restored:.4f}")
    assert nominal == 0.0
    assert faulted == pytest.approx(0.60, abs=0.03)
    assert restored == 0.0
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# ------------------------------------------- every fault request is answered (issue 16's hang)

GRIP_SRV, LIDAR_SRV = "/grip_fault/override", "/robot/rplidar/lidar/override"
EXPECTED = {
    (GRIP_SRV, True): (True, "untested: geom_friction -> [0.0, 0.0, 0.0] on [ur_left_pad, ur_right_pad]: nothing touched"),
    (GRIP_SRV, False): (True, "untested: geom_friction restored to nominal (nothing to verify)"),
    (LIDAR_SRV, True): (True, "landed: `robot.rplidar.lidar` reads its fault values from the next frame"),
    (LIDAR_SRV, False): (True, "untested: `robot.rplidar.lidar` restored to its nominal config (nothing to verify)"),
}


def test_fault_services_answer_50_alternating_back_to_back_requests(roqsim, ros):
    """The demo's two fault services (worlds/first_run.yaml), called as the demo calls them: the
    grip fault and right after it the lidar fault, both requests in flight at once, 25 times with
    the switch alternating: all 50 are answered, each with its own verdict."""
    from std_srvs.srv import SetBool

    sim = roqsim("sim", "worlds/first_run.yaml", "--ros", "--sim-control", "--pacing", "4", "--seconds", "600", "-q",
                 wait_ready="/clock")
    clients = {n: ros.node.create_client(SetBool, n) for n in (GRIP_SRV, LIDAR_SRV)}
    for n, c in clients.items():
        ros.spin_until(c.service_is_ready, 30, f"service {n}")
    answers = []
    for k in range(25):
        on = k % 2 == 0
        futs = [(n, on, clients[n].call_async(SetBool.Request(data=on))) for n in (GRIP_SRV, LIDAR_SRV)]
        ros.spin_until(lambda: all(f.done() for _, _, f in futs), 30, f"the answers of pair {k}")
        answers += [(n, on, f.result().success, f.result().message) for n, on, f in futs]
    assert len(answers) == 50
    for n, on, ok, msg in answers:
        want_ok, want_msg = EXPECTED[(n, on)]
        assert ok == want_ok and msg.startswith(want_msg), (n, on, ok, msg)
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_a_fault_request_pending_when_the_run_ends_is_answered_with_why(roqsim, ros):
    """Paused, the lidar (not a transport plugin) does not step, so its override request waits;
    the run then ends (SIGINT): the request is answered, refused with why, before the node leaves
    the graph (a run that fails mid-request, as a diverging step does, answers the same way)."""
    import signal

    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import SetSimulationState
    from std_srvs.srv import SetBool

    sim = roqsim("sim", str(HERE / "worlds" / "lidar_fault.yaml"), "--ros", "--sim-control", "--pacing", "4",
                 "--seconds", "600", "-q", wait_ready="/clock")
    r = ros.call(SetSimulationState, "/set_simulation_state",
                 SetSimulationState.Request(state=SimulationState(state=SimulationState.STATE_PAUSED)))
    assert r.result.result == 1, r.result.error_message  # RESULT_OK
    client = ros.node.create_client(SetBool, LIDAR_SRV)
    ros.spin_until(client.service_is_ready, 30, f"service {LIDAR_SRV}")
    fut = client.call_async(SetBool.Request(data=True))
    ros.spin(1.0)
    sim.proc.send_signal(signal.SIGINT)
    ros.spin_until(fut.done, 15, f"the answer of {LIDAR_SRV}")
    assert (fut.result().success, fut.result().message) == (
        False, "the run ended before this request was served: the run finished (interrupted)"), fut.result()
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]
