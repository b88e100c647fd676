"""End-to-end test of the cameras over ROS 2 (issue 15): the real binary with `--ros` on
worlds/turtlebot_d435.yaml (a RealSense D435 on a TurtleBot 4 facing a crate), subscribed by rclpy
the way a perception stack subscribes a realsense-ros camera: image, depth, camera_info and points,
all on sensor-data QoS, plus the latched /tf_static chain.

Every assertion is on message contents: encodings and sizes, the crate's depth at the image centre
(its near face is 1.3 m from the robot's origin, the colour imager 0.1043 m ahead of it), the
CameraInfo K that projects the crate face's centre onto the centre pixel, the organised cloud's
centre point, stamps on the 15 Hz physics grid, and the optical frame the TF chain names.
"""

import math
import struct

import pytest
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

LATCHED = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
CRATE_DEPTH = 1.3 - 0.1043  # crate near face x minus the colour imager's x (m)


def ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def test_d435_on_a_turtlebot_publishes_realsense_streams(roqsim, ros):
    from sensor_msgs.msg import CameraInfo, Image, PointCloud2
    from tf2_msgs.msg import TFMessage

    color = ros.collect("/camera/color/image_raw", Image, qos_profile_sensor_data)
    depth = ros.collect("/camera/depth/image_rect_raw", Image, qos_profile_sensor_data)
    info = ros.collect("/camera/color/camera_info", CameraInfo, qos_profile_sensor_data)
    points = ros.collect("/camera/depth/color/points", PointCloud2, qos_profile_sensor_data)
    static = ros.collect("/tf_static", TFMessage, LATCHED)
    sim = roqsim("sim", "worlds/turtlebot_d435.yaml", "--ros", "--pacing", "asap", "--seconds", "600", "-q",
                 wait_ready="/clock")
    ros.spin_until(lambda: len(color) >= 3 and len(depth) >= 3 and info and points and static, 120,
                   "three colour and depth frames, camera_info, a cloud and /tf_static")

    c = color[-1]
    assert (c.width, c.height, c.encoding, c.step, len(c.data)) == (640, 480, "rgb8", 1920, 640 * 480 * 3)
    assert c.header.frame_id == "camera_color_optical_frame"
    r, g, b = c.data[240 * 1920 + 320 * 3: 240 * 1920 + 320 * 3 + 3]
    assert r > g > b, f"the orange crate at the centre: {(r, g, b)}"

    d = depth[-1]
    assert (d.width, d.height, d.encoding, d.step, d.is_bigendian) == (640, 480, "32FC1", 2560, 0)
    assert d.header.frame_id == "camera_color_optical_frame", "depth is registered to colour"
    z = struct.unpack_from("<f", bytes(d.data), 240 * 2560 + 320 * 4)[0]
    print(f"crate depth at the centre pixel: {z:.4f} m (expected {CRATE_DEPTH:.4f})")
    assert z == pytest.approx(CRATE_DEPTH, abs=1e-3)
    top = struct.unpack_from("<f", bytes(d.data), 0)[0]
    assert top == math.inf, f"the far room wall (~5 m) is beyond the D435's 3 m: {top}"
    # 15 Hz snapped to the 2 ms physics grid: every 33 steps = 66 ms of sim time. At asap pacing a
    # Python subscriber drops frames (sensor-data QoS), so the stamps it sees are multiples of it.
    stamps = [ns(m.header.stamp) for m in depth + color]
    assert all(t > 0 and t % 66_000_000 == 0 for t in stamps), f"stamps on the 66 ms frame grid: {stamps[:6]}"
    assert ns(c.header.stamp) in {ns(m.header.stamp) for m in color}

    k = info[-1]
    fy = 240.0 / math.tan(math.radians(42.5 / 2))
    assert (k.width, k.height, k.distortion_model) == (640, 480, "plumb_bob")
    assert list(k.k) == pytest.approx([fy, 0, 319.5, 0, fy, 239.5, 0, 0, 1], abs=1e-9)
    assert list(k.p) == pytest.approx([fy, 0, 319.5, 0, 0, fy, 239.5, 0, 0, 0, 1, 0], abs=1e-9)
    assert list(k.d) == [0.0] * 5 and list(k.r) == [1, 0, 0, 0, 1, 0, 0, 0, 1]

    p = points[-1]
    assert (p.width, p.height, p.point_step, p.row_step) == (640, 480, 16, 640 * 16)
    assert [(f.name, f.offset, f.datatype, f.count) for f in p.fields] == [
        ("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("rgb", 12, 7, 1)]
    assert p.header.frame_id == "camera_color_optical_frame" and not p.is_dense
    x, y, zc = struct.unpack_from("<fff", bytes(p.data), 240 * p.row_step + 320 * 16)
    assert zc == pytest.approx(CRATE_DEPTH, abs=1e-3)
    assert x == pytest.approx(0.5 * zc / fy, abs=1e-4) and y == pytest.approx(0.5 * zc / fy, abs=1e-4)

    tfs = {t.child_frame_id: t for m in static for t in m.transforms}
    chain = ["camera_link", "camera_color_frame", "camera_color_optical_frame"]
    assert set(chain) <= set(tfs), sorted(tfs)
    assert tfs["camera_link"].header.frame_id == "shell_link"
    assert tfs["camera_color_frame"].header.frame_id == "camera_link"
    assert tfs["camera_color_optical_frame"].header.frame_id == "camera_color_frame"
    q = tfs["camera_color_optical_frame"].transform.rotation
    assert (q.x, q.y, q.z, q.w) == pytest.approx((-0.5, 0.5, -0.5, 0.5), abs=1e-9), "REP 103 optical rotation"
    t = tfs["camera_link"].transform.translation
    assert (t.x, t.y, t.z) == pytest.approx((0.1043, 0.0175, 0.2575 + 0.0125), abs=1e-9)
    assert sim.stop() == 0, sim.output()[-3000:]


def test_two_d435_named_apart_publish_two_chains_and_stamp_their_own_frames(roqsim, ros):
    """Two D435s on one robot, camera_name camera_front / camera_rear (realsense-ros's naming):
    /tf_static holds both full chains, and each image is stamped in its own optical frame."""
    from sensor_msgs.msg import Image
    from tf2_msgs.msg import TFMessage

    images = {n: ros.collect(f"/{n}/color/image_raw", Image, qos_profile_sensor_data)
              for n in ("camera_front", "camera_rear")}
    depth = ros.collect("/camera_front/depth/image_rect_raw", Image, qos_profile_sensor_data)
    static = ros.collect("/tf_static", TFMessage, LATCHED)
    sim = roqsim("sim", "test/e2e/worlds/two_d435.yaml", "--ros", "--pacing", "asap", "--seconds", "600", "-q",
                 wait_ready="/clock")

    def chains_in():
        tfs = {t.child_frame_id for m in static for t in m.transforms}
        return all(f"{n}_color_optical_frame" in tfs and f"{n}_depth_optical_frame" in tfs
                   for n in ("camera_front", "camera_rear"))

    ros.spin_until(lambda: all(len(v) >= 2 for v in images.values()) and depth and chains_in(), 120,
                   "two frames of each camera, front depth, both chains on /tf_static")
    tfs = {t.child_frame_id: t for m in static for t in m.transforms}
    for n in ("camera_front", "camera_rear"):
        parents = {c: tfs[c].header.frame_id for c in (
            f"{n}_link", f"{n}_depth_frame", f"{n}_depth_optical_frame", f"{n}_color_frame",
            f"{n}_color_optical_frame")}
        assert parents == {
            f"{n}_link": "shell_link",
            f"{n}_depth_frame": f"{n}_link",
            f"{n}_depth_optical_frame": f"{n}_depth_frame",
            f"{n}_color_frame": f"{n}_link",
            f"{n}_color_optical_frame": f"{n}_color_frame",
        }, parents
        assert {m.header.frame_id for m in images[n]} == {f"{n}_color_optical_frame"}
        assert (images[n][-1].width, images[n][-1].height) == (160, 120)
    assert "camera_link" not in tfs, "no device publishes the default name"
    front = tfs["camera_front_link"].transform.translation
    rear = tfs["camera_rear_link"].transform.translation
    # each camera_link hangs from its own mount: (0.0043, 0.0175, 0.0125) turned with the mount
    assert (front.x, front.y, front.z) == pytest.approx((0.1043, 0.0175, 0.27), abs=1e-9)
    assert (rear.x, rear.y, rear.z) == pytest.approx((-0.1043, -0.0175, 0.27), abs=1e-9)
    d = depth[-1]
    assert d.header.frame_id == "camera_front_color_optical_frame"
    z = struct.unpack_from("<f", bytes(d.data), 60 * d.step + 80 * 4)[0]
    print(f"front camera: crate at {z:.4f} m (expected {CRATE_DEPTH:.4f})")
    assert z == pytest.approx(CRATE_DEPTH, abs=1e-3)
    assert sim.stop() == 0, sim.output()[-3000:]
