"""Launch roqsim as a ROS 2 node.

    ros2 launch roqsim sim.launch.py world:=turtlebot_floorplan
    ros2 launch roqsim sim.launch.py world:=/abs/path/my_world.yaml namespace:=sim extra_args:="--pacing 2 --seed 7"

Arguments:
  world         a bundled world name (share/roqsim/worlds/<name>.yaml) or a path to a world YAML
  namespace     ROS namespace of the node and global outer prefix of every relative topic
                (the bridge's `namespace`: /<namespace>/<robot>/odom); /clock and TF stay global
  use_sim_time  parameter for the node (roqsim publishes /clock itself; true by convention so
                anything launched alongside in this file reads sim time)
  extra_args    more `roqsim sim` arguments, space separated (e.g. "--tf-namespace robot1 --seed 3")

roqsim runs the world with `--ros` (the ROS 2 bridge is injected at load time; a checked-in world
stays ROS-free) and prints its summary on exit.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _roqsim(context, *args, **kwargs):
    world = LaunchConfiguration("world").perform(context)
    extra = LaunchConfiguration("extra_args").perform(context).split()
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1", "yes")
    namespace = LaunchConfiguration("namespace").perform(context).strip("/")
    if namespace:
        extra = ["--set", f"components.ros2_bridge.namespace={namespace}"] + extra
    return [
        Node(
            package="roqsim",
            executable="roqsim",
            name="roqsim",
            namespace=namespace,
            output="screen",
            emulate_tty=True,
            arguments=["sim", world, "--ros"] + extra,
            parameters=[{"use_sim_time": use_sim_time}],
        )
    ]


def generate_launch_description():
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "world",
                default_value="turtlebot_floorplan",
                description="Bundled world name or path to a world YAML",
            ),
            DeclareLaunchArgument(
                "namespace",
                default_value="",
                description="ROS namespace of the roqsim node",
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="true",
                description="use_sim_time parameter (roqsim publishes /clock from sim time)",
            ),
            DeclareLaunchArgument(
                "extra_args",
                default_value="",
                description='More `roqsim sim` arguments, e.g. "--pacing 2 --seed 7 --tf-namespace robot1"',
            ),
            OpaqueFunction(function=_roqsim),
        ]
    )
