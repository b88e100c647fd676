"""An out-of-tree plugin over ROS 2: the template crate (examples/custom_plugin) registers
`height_probe` through roqsim::cli::main_with, and its binary serves it with `--ros` like any
built-in endpoint: /probe/height carries the dropped box's height, and /clock runs."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def roqsim_bin():
    """The template's binary instead of roqsim's own (scripts/test.sh builds it in release)."""
    path = Path(os.environ.get("ROQSIM_CUSTOM_BIN") or ROOT / "target" / "release" / "examples" / "custom_plugin")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{path} missing: run `cargo build --release --features ros --example custom_plugin`")
    return str(path)


def test_out_of_tree_plugin_publishes_over_ros(roqsim, ros):
    from std_msgs.msg import Float64

    roqsim("sim", "examples/custom_plugin/world.yaml", "--ros", "--seconds", "30", wait_ready="/probe/height")
    heights = ros.collect("/probe/height", Float64)
    ros.spin_until(lambda: len(heights) >= 25, timeout=20, what="25 heights")
    # The box falls from 0.5 m and comes to rest on its 0.1 m half-size (contact sink ~0.1 mm).
    assert heights[0].data <= 0.5
    assert abs(heights[-1].data - 0.1) < 1e-3, [h.data for h in heights]
