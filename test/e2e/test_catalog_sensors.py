"""End-to-end tests of the catalog sensors over ROS 2 (issue 19): the Create 3 cliff sensors as
sensor_msgs/Range, the Livox Mid-360 as sensor_msgs/PointCloud2 (decoded with numpy from the
message's own field table) and the GNSS fix as sensor_msgs/NavSatFix, from the real binary with
`--ros`.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data

HERE = Path(__file__).resolve().parent
WORLD = HERE / "worlds" / "catalog_sensors.yaml"


def test_cliff_range_cloud_and_fix_on_the_wire(roqsim, ros):
    from sensor_msgs.msg import NavSatFix, PointCloud2, Range

    cliff = ros.collect("/cliff_front_left", Range, qos_profile_sensor_data)
    ir = ros.collect("/ir_intensity_front_center_left", Range, qos_profile_sensor_data)
    cloud = ros.collect("/livox/lidar", PointCloud2, qos_profile_sensor_data)
    fix = ros.collect("/fix", NavSatFix, qos_profile_sensor_data)
    sim = roqsim("sim", str(WORLD), "--ros", "--pacing", "realtime", "--seconds", "60", "-q", wait_ready="/clock")
    ros.spin_until(lambda: len(cliff) >= 3 and ir and len(cloud) >= 2 and len(fix) >= 2, 30, "range, cloud and fix")

    r = cliff[-1]
    assert r.header.frame_id == "cliff_front_left"
    assert r.radiation_type == Range.INFRARED
    assert (r.min_range, r.max_range) == (pytest.approx(0.0001), pytest.approx(0.15))
    assert r.field_of_view == pytest.approx(0.0873, abs=1e-6)
    # 0.0192 m above the floor, pitched 80 degrees down
    assert r.range == pytest.approx(0.0192 / math.sin(math.radians(80)), abs=1e-3)
    assert math.isinf(ir[-1].range) and ir[-1].range > 0, "nothing within 0.2 m ahead"

    c = cloud[-1]
    assert c.header.frame_id == "livox_frame"
    assert [(f.name, f.offset, f.datatype) for f in c.fields] == [("x", 0, 7), ("y", 4, 7), ("z", 8, 7)]
    assert (c.height, c.point_step, c.row_step, c.is_bigendian) == (1, 12, 12 * c.width, False)
    dt = np.dtype({"names": [f.name for f in c.fields], "formats": ["<f4"] * 3, "offsets": [f.offset for f in c.fields], "itemsize": c.point_step})
    pts = np.frombuffer(bytes(c.data), dtype=dt)
    pts = [(float(p["x"]), float(p["y"]), float(p["z"])) for p in pts]
    # 360 x 56 = 20160 rays, but in the 10 m room with 0.5 m walls only those below a few degrees
    # of elevation (and the downward ones) return: ~4000 points, none beyond the room
    assert len(pts) == c.width and 3000 < len(pts) < 20160
    assert all(math.hypot(p[0], p[1]) < 5.0 * math.sqrt(2) + 0.1 for p in pts), "a return beyond the room"
    # every downward return lands on one plane, the floor, 0.0942 m below shell_link; the settled base
    # pitches a little on its caster, so the plane is fitted rather than assumed level
    # (walls stand at 5 m: returns within 4.7 m of the robot in x and y, below the sensor, are floor)
    below = np.array([p for p in pts if p[2] < -0.05 and max(abs(p[0]), abs(p[1])) < 4.7])
    a_mat = np.c_[below[:, 0], below[:, 1], np.ones(len(below))]
    (ax, by, c0), *_ = np.linalg.lstsq(a_mat, below[:, 2], rcond=None)
    resid = below[:, 2] - a_mat @ np.array([ax, by, c0])
    print(f"cloud: {len(pts)} points, {len(below)} on the floor: z = {ax:.5f} x + {by:.5f} y + {c0:.5f}, max residual {abs(resid).max():.2e} m")
    assert len(below) > 500 and abs(resid).max() < 1e-6, "the downward returns are one plane"
    assert c0 == pytest.approx(-0.0942, abs=1e-3) and math.hypot(ax, by) < 0.01, (ax, by, c0)

    f = fix[-1]
    assert f.status.status == 0 and f.status.service == 1
    assert f.header.frame_id == "base_link"
    assert f.latitude == pytest.approx(47.397742, abs=1e-7)
    assert f.longitude == pytest.approx(8.545594, abs=1e-7)
    assert f.position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in fix[-2:]]
    assert stamps[1] - stamps[0] == 100_000_000, "10 Hz fixes on sim time"
    assert sim.stop() == 0
