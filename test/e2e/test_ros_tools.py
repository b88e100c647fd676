"""End-to-end tests of roqsim as the standard ROS 2 tools see it (issue 13): parameters on every
node, distinct node names under launch's remaps, the controller manager as a node that
ros2_control's `spawner` / `unspawner` / `hardware_spawner` and ros2controlcli work against, and
merged joint states.

Neither the `ros2` CLI nor the controller_manager package is installable here, so each test
performs the upstream tools' own call sequences with rclpy, service by service (Jazzy sources):

* ros2param (`ros2 param list/get/set/describe`): `rclpy.parameter_client.AsyncParameterClient`,
  `wait_for_services(timeout_sec=5.0)` on all six parameter services, then one call.
* spawner (controller_manager/spawner.py + controller_manager_services.py): per controller,
  `list_controllers` (loaded? then skip loading) → with `--param-file`: `set_parameters` on the
  manager node of `<name>.params_file` (the file list's text, parsed by rclpy's
  `get_parameter_value` into a string array) and `<name>.type` (read from the file) →
  `load_controller` → unless `--load-only`: `configure_controller` → unless `--inactive`:
  `switch_controller(activate=[name], strictness=STRICT, activate_asap, timeout=5 s)`. Exit 1 at
  the first `ok: false`.
* unspawner: `switch_controller(deactivate=names, STRICT, activate_asap=True, timeout 5 s)`, then
  `unload_controller` per name.
* hardware_spawner: `list_hardware_components` (is it loaded?), then
  `set_hardware_component_state(name, lifecycle_msgs/State{3, "active"})` (`--activate`) or
  `State{2, "inactive"}` (`--configure`); success is `ok` and the returned state equal to the
  target.
* the controller manager's load (controller_manager.cpp): every loaded controller is a node
  `/<ns>/<controller>` whose parameters the controller declares, with the `params_file` files as
  its overrides; `ros2 param list/get/set` on it are ros2param's calls above.

Every assertion is on a measured value: parameter values and types, controller states after each
spawner step, message names, node names.
"""

import time
from pathlib import Path

import pytest
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from arm_helpers import ABORTED, INTERRUPTED, JOINTS, REST, SUCCEEDED, Arm, duration

HERE = Path(__file__).resolve().parent
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
EVENTS_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
JTC = "scaled_joint_trajectory_controller"
JSB = "joint_state_broadcaster"
GRIP = "gripper_controller"
JTC_TYPE = "joint_trajectory_controller/JointTrajectoryController"
PARAM_SERVICES = ["describe_parameters", "get_parameter_types", "get_parameters", "list_parameters",
                  "set_parameters", "set_parameters_atomically"]


def launch_args(tmp_path, name="roqsim", namespace=None, use_sim_time=True):
    """What launch_ros's Node(name=, namespace=, parameters=[{use_sim_time: ...}]) appends."""
    params = tmp_path / "launch_params_roqsim.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    use_sim_time: {'true' if use_sim_time else 'false'}\n")
    args = ["--ros-args", "-r", f"__node:={name}"]
    if namespace:
        args += ["-r", f"__ns:=/{namespace}"]
    return args + ["--params-file", str(params)]


class ParamClient:
    """ros2param's calls: AsyncParameterClient, wait 5 s for the six services, one request."""

    def __init__(self, ros, node_name):
        from rclpy.parameter_client import AsyncParameterClient

        self.ros = ros
        self.client = AsyncParameterClient(ros.node, node_name)
        end = time.monotonic() + 15
        while not self.client.services_are_ready():
            assert time.monotonic() < end, f"parameter services of {node_name} not served"
            ros.spin(0.1)
        assert self.client.wait_for_services(timeout_sec=5.0)

    def _wait(self, future):
        self.ros.spin_until(future.done, 10, "a parameter service reply")
        return future.result()

    def list(self):
        return sorted(self._wait(self.client.list_parameters()).result.names)

    def get(self, names):
        return list(self._wait(self.client.get_parameters(names)).values)

    def describe(self, names):
        return list(self._wait(self.client.describe_parameters(names)).descriptors)

    def set(self, params):
        return list(self._wait(self.client.set_parameters(params)).results)


def node_names(ros):
    return sorted((ns.rstrip("/") + "/" + n) for n, ns in ros.node.get_node_names_and_namespaces())


# -------------------------------------------------------------------- parameters and node names


def test_launch_remaps_keep_every_node_distinct_and_parameters_answer(roqsim, ros, tmp_path):
    """Points 1, 2 and 7: launched as `ros2 launch roqsim sim.launch.py world:=ur_pick
    namespace:=sim` does (bridge namespace, `-r __node:=roqsim -r __ns:=/sim`, a params file
    with use_sim_time), every node keeps a distinct name, serves parameters, and /clock and TF
    stay global."""
    from rcl_interfaces.msg import ParameterEvent, ParameterType
    from rclpy.parameter import Parameter
    from rcl_interfaces.msg import Log

    events = ros.collect("/parameter_events", ParameterEvent, EVENTS_QOS)
    rosout = ros.collect("/rosout", Log, QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                                                    durability=DurabilityPolicy.TRANSIENT_LOCAL))
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--sim-control", "--pacing", "4", "--seconds", "600", "-q",
                 "--set", "components.ros2_bridge.namespace=sim", *launch_args(tmp_path, namespace="sim"),
                 wait_ready="/clock")
    # ur_pick's controllers start active, so each is loaded and a node of its own
    expected = ["/sim/roqsim", "/sim/roqsim_sim_interfaces", "/sim/ur/controller_manager", f"/sim/ur/{GRIP}",
                f"/sim/ur/{JSB}", f"/sim/ur/{JTC}"]
    ros.spin_until(lambda: all(n in node_names(ros) for n in expected), 15, f"nodes {expected}")
    names = [n for n in node_names(ros) if not n.startswith("/e2e_")]
    print("nodes:", names)
    assert names == expected, names
    # /clock and TF stay global under namespace:=sim; robot topics move under /sim
    topics = dict(ros.node.get_topic_names_and_types())
    assert "/clock" in topics and "/tf" in topics and "/tf_static" in topics, sorted(topics)
    assert "/sim/clock" not in topics and "/sim/tf" not in topics, sorted(topics)
    assert "/sim/ur/joint_states" in topics, sorted(topics)

    # ros2 param list /sim/roqsim ; ros2 param get /sim/roqsim use_sim_time
    p = ParamClient(ros, "/sim/roqsim")
    listed = p.list()
    assert listed == sorted(["use_sim_time", "timestep", "physics_rate_hz", "seed", "world_dir", "namespace",
                             "tf_namespace", "frame_prefix", "publish_clock", "clock_rate_hz"]), listed
    ust, ts, ns = p.get(["use_sim_time", "timestep", "namespace"])
    assert (ust.type, ust.bool_value) == (ParameterType.PARAMETER_BOOL, True)
    assert (ts.type, ts.double_value) == (ParameterType.PARAMETER_DOUBLE, 0.002)
    assert (ns.type, ns.string_value) == (ParameterType.PARAMETER_STRING, "sim")
    assert p.get(["no_such_parameter"]) == [], "rclpy/rclcpp: an undeclared name answers nothing"
    (d,) = p.describe(["timestep"])
    assert (d.name, d.type, d.read_only) == ("timestep", ParameterType.PARAMETER_DOUBLE, True)
    assert "physics step" in d.description, d.description
    # ros2 param set: read-only refused with rclcpp's reason; undeclared refused
    (r,) = p.set([Parameter("use_sim_time", Parameter.Type.BOOL, False)])
    assert (r.successful, r.reason) == (False, "Trying to set a read-only parameter: use_sim_time."), r
    (r,) = p.set([Parameter("bogus", Parameter.Type.INTEGER, 3)])
    assert (r.successful, r.reason) == (False, "parameter 'bogus' is not declared on this node"), r
    assert p.get(["use_sim_time"])[0].bool_value is True

    # the simulation_interfaces node and the controller manager answer too
    si = ParamClient(ros, "/sim/roqsim_sim_interfaces")
    assert si.list() == ["namespace", "start_paused", "use_sim_time"]
    assert si.get(["use_sim_time"])[0].bool_value is True
    cm = ParamClient(ros, "/sim/ur/controller_manager")
    assert cm.list() == sorted(["use_sim_time", "update_rate", f"{JTC}.type", f"{GRIP}.type", f"{JSB}.type"]), cm.list()
    rate, jtc_type = cm.get(["update_rate", f"{JTC}.type"])
    assert (rate.type, rate.integer_value) == (ParameterType.PARAMETER_INTEGER, 500)
    assert jtc_type.string_value == JTC_TYPE

    # /parameter_events: an accepted set is announced (the declarations at start are too, but a
    # late subscriber of the volatile topic may miss those)
    (r,) = cm.set([Parameter(f"{JTC}.params_file", Parameter.Type.STRING_ARRAY, ["/tmp/x.yaml"])])
    assert r.successful, r
    ev = ros.spin_until(lambda: next((e for e in events if e.node == "/sim/ur/controller_manager"
                                      and [q.name for q in e.new_parameters] == [f"{JTC}.params_file"]), None),
                        10, "the parameter event of the set")
    assert list(ev.new_parameters[0].value.string_array_value) == ["/tmp/x.yaml"]
    print("parameter events from:", sorted({e.node for e in events}))
    # /rosout carries roqsim's log lines under its node's name
    ros.spin_until(lambda: any(m.name == "sim.roqsim" for m in rosout), 10, "a /rosout line from sim.roqsim")
    line = next(m for m in rosout if m.name == "sim.roqsim")
    print("rosout:", line.level, line.msg[:120])
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# -------------------------------------------------------------------- the standard spawner bringup


class Spawner:
    """ros2_control's spawner / unspawner / hardware_spawner call sequences against one manager."""

    def __init__(self, ros, cm):
        from controller_manager_msgs import srv

        self.ros, self.cm, self.srv = ros, cm, srv

    def call(self, name, req):
        return self.ros.call(getattr(self.srv, name), f"{self.cm}/{snake(name)}", req, timeout=10.0)

    def states(self):
        return {c.name: c.state for c in self.call("ListControllers", self.srv.ListControllers.Request()).controller}

    def set_parameters(self, params):
        from rcl_interfaces.msg import Parameter as P
        from rclpy.parameter import get_parameter_value

        pc = ParamClient(self.ros, self.cm)
        return pc.set([P(name=n, value=get_parameter_value(string_value=str(v))) for n, v in params])

    def spawn(self, name, inactive=False, load_only=False, param_file=None, trace=None):
        """spawner <name> [--inactive] [--load-only] [--param-file F]; returns (exit code, states
        after each step)."""
        S = self.srv
        steps = []
        loaded = any(c.name == name for c in self.call("ListControllers", S.ListControllers.Request()).controller)
        if not loaded:
            if param_file:
                results = self.set_parameters([(f"{name}.params_file", [str(param_file)])])
                assert all(r.successful for r in results), results
                import yaml

                doc = yaml.safe_load(Path(param_file).read_text())
                key = next(k for k in doc if k.endswith("/" + name))
                ctype = doc[key]["ros__parameters"].get("type")
                if ctype:
                    results = self.set_parameters([(f"{name}.type", ctype)])
                    assert all(r.successful for r in results), results
            if not self.call("LoadController", S.LoadController.Request(name=name)).ok:
                return 1, steps
            steps.append(("load", self.states().get(name)))
        if not load_only:
            if not self.call("ConfigureController", S.ConfigureController.Request(name=name)).ok:
                return 1, steps
            steps.append(("configure", self.states().get(name)))
            if not inactive:
                from rclpy.duration import Duration

                req = S.SwitchController.Request(activate_controllers=[name], deactivate_controllers=[],
                                                 strictness=S.SwitchController.Request.STRICT, activate_asap=True,
                                                 timeout=Duration(seconds=5.0).to_msg())
                if not self.call("SwitchController", req).ok:
                    return 1, steps
                steps.append(("switch", self.states().get(name)))
        return 0, steps

    def unspawn(self, names):
        from rclpy.duration import Duration

        S = self.srv
        req = S.SwitchController.Request(activate_controllers=[], deactivate_controllers=names,
                                         strictness=S.SwitchController.Request.STRICT, activate_asap=True,
                                         timeout=Duration(seconds=5.0).to_msg())
        self.call("SwitchController", req)  # upstream ignores this result and unloads anyway
        for n in names:
            if not self.call("UnloadController", S.UnloadController.Request(name=n)).ok:
                return 1
        return 0

    def hardware_spawn(self, component, configure=False):
        """hardware_spawner <component> --activate (or --configure)."""
        from lifecycle_msgs.msg import State

        S = self.srv
        comps = self.call("ListHardwareComponents", S.ListHardwareComponents.Request()).component
        if not any(c.name == component for c in comps):
            return "not loaded"
        if configure:
            target, done = State(id=State.PRIMARY_STATE_INACTIVE, label="inactive"), "configured"
        else:
            target, done = State(id=State.PRIMARY_STATE_ACTIVE, label="active"), "activated"
        r = self.call("SetHardwareComponentState", S.SetHardwareComponentState.Request(name=component, target_state=target))
        return done if r.ok and r.state == target else f"failed ok={r.ok} state={r.state}"


def snake(camel):
    return "".join("_" + c.lower() if c.isupper() else c for c in camel).lstrip("_")


def test_standard_spawner_bringup_against_unloaded_controllers(roqsim, ros, tmp_path):
    """Point 4 (and 3, 5): a world whose controllers are left to the bringup (the built-in
    default, `unloaded`) comes up with none loaded and no joint_states; the tutorial's spawner lines
    bring it up step by step; unspawner, hardware_spawner and the remaining manager services
    answer."""
    from controller_manager_msgs.msg import ControllerManagerActivity
    from controller_manager_msgs.srv import (CleanupController, ListControllerTypes, ListHardwareComponents,
                                             ReloadControllerLibraries)
    from lifecycle_msgs.msg import TransitionEvent
    from sensor_msgs.msg import JointState

    CM = "/ur/controller_manager"
    js = ros.collect("/ur/joint_states", JointState, RELIABLE)
    activity = ros.collect(f"{CM}/activity", ControllerManagerActivity, LATCHED)
    jsb_events = ros.collect(f"/ur/{JSB}/transition_event", TransitionEvent, EVENTS_QOS)
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q",
                 "--set", "sim.controllers.initial_state=unloaded", *launch_args(tmp_path), wait_ready="/clock")
    sp = Spawner(ros, CM)
    ros.spin_until(lambda: activity, 15, "the manager's latched activity")
    assert sp.states() == {}, "nothing loaded before the bringup"
    assert list(activity[-1].controllers) == [] and [h.name for h in activity[-1].hardware_components] == ["ur"]
    ros.spin(1.0)
    assert js == [], "no joint_state_broadcaster, no joint_states"

    # spawner joint_state_broadcaster
    rc, steps = sp.spawn(JSB)
    assert (rc, steps) == (0, [("load", "unconfigured"), ("configure", "inactive"), ("switch", "active")]), (rc, steps)
    msg = ros.spin_until(lambda: js[-1] if js else None, 10, "joint_states once the broadcaster is active")
    assert len(msg.name) == 7 and "shoulder_pan_joint" in msg.name, list(msg.name)
    # rclcpp_lifecycle's sequence on <controller>/transition_event: primary -> transition state -> primary
    ros.spin_until(lambda: len(jsb_events) >= 4, 10, "the broadcaster's configure and activate events")
    seq = [(e.transition.label, e.start_state.label, e.goal_state.label) for e in jsb_events]
    assert seq == [("configure", "unconfigured", "configuring"), ("transition_success", "configuring", "inactive"),
                   ("activate", "inactive", "activating"), ("transition_success", "activating", "active")], seq

    # spawner gripper_controller --inactive
    rc, steps = sp.spawn(GRIP, inactive=True)
    assert (rc, steps) == (0, [("load", "unconfigured"), ("configure", "inactive")]), (rc, steps)

    # spawner scaled_joint_trajectory_controller --param-file ur_controllers.yaml
    pf = tmp_path / "ur_controllers.yaml"
    pf.write_text(f"/**/{JTC}:\n  ros__parameters:\n    type: {JTC_TYPE}\n    joints: [{', '.join(JOINTS)}]\n"
                  "    state_publish_rate: 100.0\n")
    rc, steps = sp.spawn(JTC, param_file=pf)
    assert (rc, steps) == (0, [("load", "unconfigured"), ("configure", "inactive"), ("switch", "active")]), (rc, steps)
    files = ParamClient(ros, CM).get([f"{JTC}.params_file"])[0]
    assert list(files.string_array_value) == [str(pf)], files
    # a key joint_trajectory_controller (Jazzy) does not declare is named, and ignored as rclcpp does
    sim.wait_output(rf"parameters \[state_publish_rate\] of `{JTC}` in `{pf}` are not parameters of `{JTC_TYPE}`", 10)
    assert sp.states() == {JSB: "active", GRIP: "inactive", JTC: "active"}

    # the same spawner line again: loaded, so it skips loading and configuring an active
    # controller fails, exactly as against a real robot (exit 1)
    rc, steps = sp.spawn(JSB)
    assert (rc, steps) == (1, []), (rc, steps)
    sim.wait_output(r"configure_controller refused: controller `joint_state_broadcaster` is active; deactivate it before configuring it", 10)

    # a param file naming another type refuses the load (after unspawner)
    assert sp.unspawn([JTC]) == 0
    assert JTC not in sp.states()
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"/**/{JTC}:\n  ros__parameters:\n    type: forward_command_controller/ForwardCommandController\n")
    rc, steps = sp.spawn(JTC, param_file=bad)
    assert (rc, steps) == (1, []), (rc, steps)
    sim.wait_output(r"`scaled_joint_trajectory_controller.type` is `forward_command_controller/ForwardCommandController`, but the world declares", 10)
    assert sp.set_parameters([(f"{JTC}.type", JTC_TYPE)])[0].successful
    rc, steps = sp.spawn(JTC, param_file=pf)
    assert rc == 0 and steps[-1] == ("switch", "active"), steps

    # hardware_spawner --activate ur ; an unknown component is "not loaded"
    assert sp.hardware_spawn("ur") == "activated"
    assert sp.hardware_spawn("ur_arm") == "not loaded"
    comps = ros.call(ListHardwareComponents, f"{CM}/list_hardware_components", ListHardwareComponents.Request()).component
    assert [(c.name, c.state.id, c.state.label, c.type) for c in comps] == [("ur", 3, "active", "system")]
    assert len(comps[0].command_interfaces) == 7 and len(comps[0].state_interfaces) == 21

    # ros2 control list_controller_types / cleanup_controller / reload_controller_libraries
    types = ros.call(ListControllerTypes, f"{CM}/list_controller_types", ListControllerTypes.Request())
    assert list(types.types) == sorted([JTC_TYPE, "position_controllers/GripperActionController",
                                        "joint_state_broadcaster/JointStateBroadcaster"]), list(types.types)
    assert set(types.base_classes) == {"controller_interface::ControllerInterface"}
    assert ros.call(CleanupController, f"{CM}/cleanup_controller", CleanupController.Request(name=GRIP)).ok
    assert sp.states()[GRIP] == "unconfigured"
    assert not ros.call(CleanupController, f"{CM}/cleanup_controller", CleanupController.Request(name=JTC)).ok
    assert not ros.call(ReloadControllerLibraries, f"{CM}/reload_controller_libraries",
                        ReloadControllerLibraries.Request(force_kill=False)).ok
    # activity followed every change; the last one lists what is loaded now
    ros.spin_until(lambda: {c.name: c.state.label for c in activity[-1].controllers} == {JSB: "active", GRIP: "unconfigured", JTC: "active"},
                   10, "the latest activity")
    assert ros.call(ReloadControllerLibraries, f"{CM}/reload_controller_libraries",
                    ReloadControllerLibraries.Request(force_kill=True)).ok
    assert sp.states() == {}
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def partial_goal(arm, pan, t=1.0):
    """A FollowJointTrajectory goal naming only shoulder_pan_joint; returns (status, result)."""
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["shoulder_pan_joint"]
    goal.trajectory.points.append(JointTrajectoryPoint(positions=[pan], time_from_start=duration(t)))
    fut = arm.fjt.send_goal_async(goal)
    arm.ros.spin_until(fut.done, 20, "the goal response")
    return arm.result(fut.result())


# every parameter joint_trajectory_controller (Jazzy) declares on its node, per joint or not,
# plus controller_interface's three and use_sim_time
JTC_TOP = ["joints", "command_joints", "command_interfaces", "state_interfaces", "speed_scaling.initial_scaling_factor",
           "speed_scaling.state_interface", "speed_scaling.command_interface", "allow_partial_joints_goal",
           "open_loop_control", "interpolate_from_desired_state", "allow_integration_in_goal_trajectories",
           "set_last_command_interface_value_as_state_on_activation", "action_monitor_rate", "interpolation_method",
           "allow_nonzero_velocity_at_trajectory_end", "cmd_timeout", "constraints.stopped_velocity_tolerance",
           "constraints.goal_time", "constraints.decelerate_on_cancel"]
JTC_PER_JOINT = ["constraints.{}.trajectory", "constraints.{}.goal", "constraints.{}.max_deceleration_on_cancel"] + [
    "gains.{}." + k for k in ("p", "i", "d", "i_clamp", "i_clamp_max", "i_clamp_min", "ff_velocity_scale", "u_clamp_max",
                              "u_clamp_min", "antiwindup_strategy", "tracking_time_constant", "error_deadband")]
BASE = ["update_rate", "is_async", "thread_priority", "use_sim_time"]


def test_each_loaded_controller_is_a_node_with_its_parameters(roqsim, ros, tmp_path):
    """Point 3: as in ros2_control, a controller is a node `/<ns>/<controller>` from load to
    unload, with the parameters its type declares; `spawner --param-file` values become the node's
    values and the simulated controller uses them; values it cannot honour refuse the load or the
    set, naming the parameter."""
    from rcl_interfaces.msg import ParameterType
    from rclpy.parameter import Parameter

    CM = "/ur/controller_manager"
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q",
                 "--set", "sim.controllers.initial_state=unloaded", *launch_args(tmp_path), wait_ready="/clock")
    sp = Spawner(ros, CM)
    ros.spin_until(lambda: CM in node_names(ros), 15, CM)
    assert [n for n in node_names(ros) if n.startswith("/ur/")] == [CM], "no controller loaded, no controller node"

    # spawner joint_state_broadcaster: its node appears with the broadcaster's parameters
    assert sp.spawn(JSB)[0] == 0
    ros.spin_until(lambda: f"/ur/{JSB}" in node_names(ros), 10, f"/ur/{JSB}")
    jsb = ParamClient(ros, f"/ur/{JSB}")
    assert jsb.list() == sorted(BASE + ["use_local_topics", "joints", "extra_joints", "interfaces",
                                        "map_interface_to_joint_state.position", "map_interface_to_joint_state.velocity",
                                        "map_interface_to_joint_state.effort", "use_urdf_to_filter", "frame_id",
                                        "publish_dynamic_joint_states"]), jsb.list()
    rate, asyn, ust = jsb.get(["update_rate", "is_async", "use_sim_time"])
    assert (rate.type, rate.integer_value, asyn.bool_value, ust.bool_value) == (ParameterType.PARAMETER_INTEGER, 500, False, True)

    # spawner scaled_joint_trajectory_controller --param-file: the file's values are the node's
    pf = tmp_path / "ur_controllers.yaml"
    pf.write_text(f"""/**/{JTC}:
  ros__parameters:
    type: {JTC_TYPE}
    joints: [{', '.join(JOINTS)}]
    command_interfaces: [position]
    state_interfaces: [position, velocity]
    action_monitor_rate: 10.0
    allow_partial_joints_goal: false
    constraints:
      goal_time: 0.6
      stopped_velocity_tolerance: 0.02
      shoulder_pan_joint: {{trajectory: 0.0, goal: 0.05}}
""")
    rc, steps = sp.spawn(JTC, param_file=pf)
    assert (rc, steps[-1]) == (0, ("switch", "active")), (rc, steps)
    ros.spin_until(lambda: f"/ur/{JTC}" in node_names(ros), 10, f"/ur/{JTC}")
    jtc = ParamClient(ros, f"/ur/{JTC}")
    listed = jtc.list()
    expected = sorted(BASE + JTC_TOP + [p.format(j) for j in JOINTS for p in JTC_PER_JOINT])
    assert listed == expected, sorted(set(listed) ^ set(expected))
    assert len(listed) == 113
    joints, rate, partial, goal_time, svt, pan_goal, elbow_goal, p_gain = jtc.get(
        ["joints", "action_monitor_rate", "allow_partial_joints_goal", "constraints.goal_time",
         "constraints.stopped_velocity_tolerance", "constraints.shoulder_pan_joint.goal", "constraints.elbow_joint.goal",
         "gains.shoulder_pan_joint.p"])
    assert list(joints.string_array_value) == JOINTS
    assert (rate.type, rate.double_value) == (ParameterType.PARAMETER_DOUBLE, 10.0), "an integer in the file is a double here"
    assert (partial.bool_value, goal_time.double_value, svt.double_value) == (False, 0.6, 0.02)
    assert (pan_goal.double_value, elbow_goal.double_value, p_gain.double_value) == (0.05, 0.5, 0.0), "elbow: the world's 0.5"
    (d,) = jtc.describe(["joints"])
    assert (d.type, d.read_only) == (ParameterType.PARAMETER_STRING_ARRAY, True)

    # the simulated controller uses them: a goal naming one joint is refused while
    # allow_partial_joints_goal is false ...
    arm = Arm(ros)
    arm.wait_ready(gripper=False)
    status, result = partial_goal(arm, REST[0] + 0.1)
    assert (status, result.error_code) == (ABORTED, -2), (status, result)
    assert "allow_partial_joints_goal is false" in result.error_string, result.error_string
    # ... and accepted once `ros2 param set /ur/scaled_joint_trajectory_controller allow_partial_joints_goal true`
    (r,) = jtc.set([Parameter("allow_partial_joints_goal", Parameter.Type.BOOL, True)])
    assert r.successful, r
    status, result = partial_goal(arm, REST[0] + 0.1)
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result)
    assert abs(arm.position("shoulder_pan_joint") - (REST[0] + 0.1)) < 0.05
    print("partial goal ended at pan", arm.position("shoulder_pan_joint"))

    # sets the simulator cannot honour are refused, naming the parameter
    (r,) = jtc.set([Parameter("joints", Parameter.Type.STRING_ARRAY, ["shoulder_pan_joint"])])
    assert (r.successful, r.reason) == (False, "Trying to set a read-only parameter: joints."), r
    (r,) = jtc.set([Parameter("gains.shoulder_pan_joint.p", Parameter.Type.DOUBLE, 100.0)])
    assert not r.successful and r.reason.startswith("`gains.shoulder_pan_joint.p` = 100 is not supported: the trajectory controller's PID"), r
    (r,) = jtc.set([Parameter("constraints.goal_time", Parameter.Type.DOUBLE, -1.0)])
    assert (r.successful, r.reason) == (False, "`constraints.goal_time` must be >= 0, got -1"), r
    assert jtc.get(["constraints.goal_time"])[0].double_value == 0.6
    # `ros2 param delete` (a NOT_SET value) is refused as rclcpp refuses it: the value stays
    (r,) = jtc.set([Parameter("allow_partial_joints_goal", Parameter.Type.NOT_SET)])
    assert (r.successful, r.reason) == (False, "cannot undeclare a statically typed parameter"), r
    v = jtc.get(["allow_partial_joints_goal"])[0]
    assert (v.type, v.bool_value) == (Parameter.Type.BOOL.value, True), v

    # unspawner: the node goes with the controller; a file the simulator cannot honour refuses the load
    assert sp.unspawn([JTC]) == 0
    ros.spin_until(lambda: f"/ur/{JTC}" not in node_names(ros), 10, f"/ur/{JTC} gone")
    bad = tmp_path / "velocity.yaml"
    bad.write_text(f"/**/{JTC}:\n  ros__parameters:\n    type: {JTC_TYPE}\n    command_interfaces: [velocity]\n")
    assert sp.spawn(JTC, param_file=bad) == (1, [])
    sim.wait_output(r"controller `scaled_joint_trajectory_controller`: `command_interfaces` = \[velocity\] is not supported: "
                    r"the arm's MuJoCo actuators are position servos", 10)
    assert JTC not in sp.states() and f"/ur/{JTC}" not in node_names(ros)
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_param_files_match_rclcpps_wildcards_and_an_unparsable_file_fails_the_load(roqsim, ros, tmp_path):
    """A params file's sections apply to a controller's node as rclcpp applies them (`/*` one name
    token, `/**` any number, every matching section in file order); a file rcl cannot parse fails
    the load with rcl's words, as ros2_control's manager fails it when the node cannot be made."""
    CM = "/ur/controller_manager"
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q",
                 "--set", "sim.controllers.initial_state=unloaded", *launch_args(tmp_path), wait_ready="/clock")
    sp = Spawner(ros, CM)
    ros.spin_until(lambda: CM in node_names(ros), 15, CM)

    # not YAML: the spawner's parameter sets, then load_controller
    bad = tmp_path / "broken.yaml"
    bad.write_text(f"/**/{JTC}:\n  ros__parameters:\n    joints: [a,\n")
    assert all(r.successful for r in sp.set_parameters([(f"{JTC}.params_file", [str(bad)]), (f"{JTC}.type", JTC_TYPE)]))
    assert not sp.call("LoadController", sp.srv.LoadController.Request(name=JTC)).ok
    m = sim.wait_output(r"load_controller refused: (Caught exception of type : .*)$", 10)
    assert m.group(1).startswith(
        f"Caught exception of type : rclcpp::exceptions::RCLInvalidROSArgsError while initializing controller '{JTC}': "
        f"failed to parse arguments: Couldn't parse params file: '--params-file {bad}'. Error: "), m.group(1)
    print("refused:", m.group(1))
    assert JTC not in sp.states() and f"/ur/{JTC}" not in node_names(ros)

    # wildcards: `/**` and `/*/<name>` apply, `/*/*/<name>` (two tokens) and another name do not
    pf = tmp_path / "wild.yaml"
    pf.write_text(f"""/**:
  ros__parameters:
    action_monitor_rate: 12.0
/*/{JTC}:
  ros__parameters:
    type: {JTC_TYPE}
    constraints:
      goal_time: 0.7
/*/*/{JTC}:
  ros__parameters:
    constraints:
      goal_time: 9.0
/*/{JTC}_other:
  ros__parameters:
    allow_partial_joints_goal: false
""")
    rc, steps = sp.spawn(JTC, param_file=pf)
    assert (rc, steps[-1]) == (0, ("switch", "active")), (rc, steps)
    ros.spin_until(lambda: f"/ur/{JTC}" in node_names(ros), 10, f"/ur/{JTC}")
    rate, goal_time, partial = ParamClient(ros, f"/ur/{JTC}").get(
        ["action_monitor_rate", "constraints.goal_time", "allow_partial_joints_goal"])
    assert (rate.double_value, goal_time.double_value, partial.bool_value) == (12.0, 0.7, True)
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_1000_simultaneous_controller_manager_requests_are_all_answered(roqsim, ros):
    """Every controller_manager service keeps all requests (KEEP_ALL): 1000 list_controllers sent
    at once by a KEEP_ALL client all come back, each listing the world's three controllers. (A
    client with the default services QoS, keep-last 10, drops its own excess replies: docs/ros.md,
    Limits.)"""
    from controller_manager_msgs.srv import ListControllers

    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    keep_all = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.VOLATILE)
    client = ros.node.create_client(ListControllers, "/ur/controller_manager/list_controllers", qos_profile=keep_all)
    ros.spin_until(client.service_is_ready, 15, "list_controllers")
    futs = [client.call_async(ListControllers.Request()) for _ in range(1000)]
    ros.spin_until(lambda: all(f.done() for f in futs), 120, "1000 answers")
    assert {tuple(sorted(c.name for c in f.result().controller)) for f in futs} == {tuple(sorted([JSB, GRIP, JTC]))}
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_hardware_component_lifecycle(roqsim, ros, tmp_path):
    """Point 4, hardware_spawner and set_hardware_component_state: the robot is a hardware
    component whose lifecycle follows ros2_control's resource manager — inactive takes no
    commands (the arm holds its last command), unconfigured is not read either (joint_states
    repeat the last reading), finalized can only be destroyed."""
    from controller_manager_msgs.srv import ListHardwareComponents, ListHardwareInterfaces, SwitchController
    from lifecycle_msgs.msg import State

    CM = "/ur/controller_manager"
    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q",
                 *launch_args(tmp_path), wait_ready="/clock")
    sp = Spawner(ros, CM)
    arm = Arm(ros)
    arm.wait_ready()

    def component():
        (c,) = ros.call(ListHardwareComponents, f"{CM}/list_hardware_components", ListHardwareComponents.Request()).component
        return (c.state.id, c.state.label)

    assert component() == (3, "active")
    # hardware_spawner ur --configure: inactive
    assert sp.hardware_spawn("ur", configure=True) == "configured"
    assert component() == (2, "inactive")
    # the trajectory controller is still active and takes the goal, but nothing is written: the
    # arm does not move and the goal ends GOAL_TOLERANCE_VIOLATED
    arm.settle()
    q0 = arm.q()
    target = list(q0)
    target[0] += 0.3
    tol = {"shoulder_pan_joint": 0.05}
    status, result = arm.run([(1.0, target)], goal_tolerance=tol)
    assert (status, result.error_code) == (ABORTED, -5), (status, result)
    moved = abs(arm.position("shoulder_pan_joint") - q0[0])
    print(f"inactive hardware: pan moved {moved:.2e} rad under a 0.3 rad goal")
    assert moved < 0.005, moved
    # a controller that commands the component cannot be activated while it is inactive
    S = SwitchController.Request
    assert ros.call(SwitchController, f"{CM}/switch_controller",
                    S(deactivate_controllers=[GRIP], strictness=S.STRICT)).ok
    r = ros.call(SwitchController, f"{CM}/switch_controller", S(activate_controllers=[GRIP], strictness=S.STRICT))
    assert not r.ok and "hardware component `ur` is inactive, so its command interfaces take no commands" in r.message, r.message
    # hardware_spawner ur --activate: commands reach the arm again
    assert sp.hardware_spawn("ur") == "activated"
    assert component() == (3, "active")
    status, result = arm.run([(1.0, target)], goal_tolerance=tol)
    assert (status, result.error_code) == (SUCCEEDED, 0), (status, result)
    assert abs(arm.position("shoulder_pan_joint") - target[0]) < 0.01

    # unconfigured (by label, id 0, as the resource manager reads it): interfaces unavailable,
    # joint_states repeat the last reading with fresh stamps
    req = sp.srv.SetHardwareComponentState.Request(name="ur", target_state=State(id=0, label="unconfigured"))
    r = sp.call("SetHardwareComponentState", req)
    assert (r.ok, r.state.id, r.state.label) == (True, 1, "unconfigured")
    hw = ros.call(ListHardwareInterfaces, f"{CM}/list_hardware_interfaces", ListHardwareInterfaces.Request())
    assert len(hw.command_interfaces) == 7 and not any(i.is_available for i in list(hw.command_interfaces) + list(hw.state_interfaces))
    arm.wait_sim(0.2)
    n0 = len(arm.states)
    arm.wait_sim(0.5)
    frozen = list(arm.states)[n0:]
    assert len(frozen) >= 10
    assert all(list(m.position) == list(frozen[0].position) for m in frozen)
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in frozen]
    assert all(b > a for a, b in zip(stamps, stamps[1:])), "stamps advance while the values repeat"

    # finalized: can only be destroyed
    req = sp.srv.SetHardwareComponentState.Request(name="ur", target_state=State(id=4, label="finalized"))
    r = sp.call("SetHardwareComponentState", req)
    assert (r.ok, r.state.id, r.state.label) == (True, 4, "finalized")
    assert sp.hardware_spawn("ur") == "failed ok=False state=lifecycle_msgs.msg.State(id=4, label='finalized')"
    sim.wait_output(r"hardware component `ur` is finalized and can only be destroyed", 10)
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


def test_world_default_active_needs_no_spawner(roqsim, ros):
    """A world that declares its controllers active (worlds/ur_pick.yaml sets
    sim.controllers.initial_state: active) comes up driving with no bringup."""
    from controller_manager_msgs.srv import ListControllers
    from sensor_msgs.msg import JointState

    sim = roqsim("sim", "worlds/ur_pick.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    ros.wait_for_message("/ur/joint_states", JointState, timeout=15, qos=RELIABLE)
    states = {c.name: c.state for c in ros.call(ListControllers, "/ur/controller_manager/list_controllers", ListControllers.Request()).controller}
    assert states == {JTC: "active", GRIP: "active", JSB: "active"}, states
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# -------------------------------------------------------------------- merged joint states


def test_mobile_manipulator_publishes_one_complete_joint_state(roqsim, ros):
    """Point 6: the arm mounted on the Husky is one robot, so /husky/joint_states has one
    publisher carrying the wheels and the arm in every message."""
    from sensor_msgs.msg import JointState

    js = ros.collect("/husky/joint_states", JointState, RELIABLE)
    sim = roqsim("sim", "worlds/mobile_manipulator.yaml", "--ros", "--pacing", "4", "--seconds", "600", "-q", wait_ready="/clock")
    # the arm's first sample may land a tick after the base's; from the first complete message on,
    # every message carries every joint in one order
    first = ros.spin_until(lambda: next((i + 1 for i, m in enumerate(js) if len(m.name) == 11), None), 15,
                           "a message with all 11 joints") - 1
    ros.spin_until(lambda: len(js) >= first + 20, 15, "20 more joint_states messages")
    assert ros.node.count_publishers("/husky/joint_states") == 1
    names = [list(m.name) for m in js[first:first + 20]]
    assert all(n == names[0] for n in names), [len(n) for n in names]
    wheels = [n for n in names[0] if "wheel" in n]
    arm = [n for n in names[0] if n.startswith("shoulder") or n.startswith("elbow") or n.startswith("wrist")]
    print("merged names:", names[0])
    assert len(wheels) == 4 and len(arm) == 6, names[0]
    m = js[-1]
    assert len(m.position) == len(m.velocity) == len(m.effort) == len(m.name)
    assert sim.stop() in INTERRUPTED, sim.output()[-3000:]


# -------------------------------------------------------------------- an installed binary


def test_installed_binary_lists_each_bundled_world_once(roqsim_bin, tmp_path):
    """Point 7: laid out as colcon installs it (`<prefix>/lib/roqsim/roqsim` beside
    `<prefix>/share/roqsim/worlds`), the binary searches the install tree and the source tree,
    and an unknown world's error lists every bundled world once."""
    import os
    import shutil
    import subprocess

    prefix = tmp_path / "install" / "roqsim"
    (prefix / "lib" / "roqsim").mkdir(parents=True)
    exe = prefix / "lib" / "roqsim" / "roqsim"
    os.link(roqsim_bin, exe)  # a copy of the binary (current_exe() resolves symlinks)
    shutil.copytree(HERE.parents[1] / "worlds", prefix / "share" / "roqsim" / "worlds")
    p = subprocess.run([str(exe), "sim", "no_such_world"], capture_output=True, text=True, timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "world `no_such_world` not found" in out, out
    listed = out.split("(bundled: ")[1].split(")")[0].split(", ")
    print("bundled:", listed)
    assert listed == sorted(set(listed)), listed
    assert listed == sorted(w.stem for w in (HERE.parents[1] / "worlds").glob("*.yaml"))

