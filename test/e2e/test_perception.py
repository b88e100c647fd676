"""End-to-end test of the perception ground truth over ROS 2 (issue 15): the real binary with
`--ros` on worlds/mobile_manipulator_perception.yaml (a UR5e on a Husky with a RealSense D435 on
its wrist, looking down at a parcel on the floor), subscribed by rclpy with the vision_msgs this
repository builds (interfaces/vision_msgs).

Assertions are on message contents: the parcel's colour in the wrist camera's image where the
segmentation camera labels it, the class and instance images, the Detection2DArray box equal to the
labelled pixels' bounds, and the Detection3DArray pose of the parcel in the Husky's base_link.
"""

import struct

import pytest
from rclpy.qos import qos_profile_sensor_data

PARCEL = (0.75, 0.13)  # the parcel centre in the Husky's base_link (m): the world file places it there and the base starts at the origin


def test_wrist_camera_sees_the_parcel(roqsim, ros):
    from sensor_msgs.msg import Image
    from vision_msgs.msg import Detection2DArray, Detection3DArray

    color = ros.collect("/husky/camera/color/image_raw", Image, qos_profile_sensor_data)
    labels = ros.collect("/husky/segmentation/labels", Image, qos_profile_sensor_data)
    instances = ros.collect("/husky/segmentation/instances", Image, qos_profile_sensor_data)
    boxes = ros.collect("/husky/segmentation/detections", Detection2DArray, qos_profile_sensor_data)
    dets = ros.collect("/husky/detections", Detection3DArray, 10)
    roqsim("sim", "worlds/mobile_manipulator_perception.yaml", "--ros", "--pacing", "asap",
           "--seconds", "600", "-q", wait_ready="/clock")

    def same_frame():
        """A colour image, a label image and a box array of one render (equal stamps)."""
        for lab in reversed(labels):
            st = (lab.header.stamp.sec, lab.header.stamp.nanosec)
            c = next((m for m in color if (m.header.stamp.sec, m.header.stamp.nanosec) == st), None)
            b = next((m for m in boxes if (m.header.stamp.sec, m.header.stamp.nanosec) == st), None)
            i = next((m for m in instances if (m.header.stamp.sec, m.header.stamp.nanosec) == st), None)
            if c and b and i and lab.header.stamp.sec >= 1:
                return lab, c, b, i
        return None

    lab, c, b, inst = ros.spin_until(same_frame, 180, "colour, labels, instances and boxes of one frame")
    ros.spin_until(lambda: dets, 30, "a Detection3DArray")

    assert (lab.width, lab.height, lab.encoding, lab.step) == (640, 480, "mono8", 640)
    assert lab.header.frame_id == "husky/camera_color_optical_frame"
    px = [(u, v) for v in range(lab.height) for u in range(lab.width) if lab.data[v * lab.step + u] == 1]
    assert set(lab.data) <= {0, 1}, "one class in this world"
    print(f"parcel pixels: {len(px)}")
    assert len(px) > 5000, f"the parcel fills part of the wrist camera's view: {len(px)} px"

    # the same pixels are the parcel's brown in the colour image of that render
    brown = 0
    for (u, v) in px[:: max(1, len(px) // 500)]:
        r, g, bl = c.data[v * c.step + 3 * u: v * c.step + 3 * u + 3]
        brown += r > g > bl
    sampled = len(px[:: max(1, len(px) // 500)])
    print(f"brown where labelled: {brown} of {sampled}")
    assert brown >= 0.95 * sampled

    # instances: one body id over exactly the labelled pixels
    ids = {struct.unpack_from("<H", bytes(inst.data), v * inst.step + 2 * u)[0] for (u, v) in px}
    assert len(ids) == 1 and 0 not in ids, ids
    (body,) = ids

    # the box is the labelled pixels' bounds: centre the mean of the first and last pixel, size the count
    assert len(b.detections) == 1
    d = b.detections[0]
    assert d.results[0].hypothesis.class_id == "1" and d.results[0].hypothesis.score == 1.0
    assert d.id == str(body)
    us, vs = [u for u, _ in px], [v for _, v in px]
    assert d.bbox.center.position.x == (min(us) + max(us)) / 2 and d.bbox.size_x == max(us) - min(us) + 1
    assert d.bbox.center.position.y == (min(vs) + max(vs)) / 2 and d.bbox.size_y == max(vs) - min(vs) + 1
    assert b.header.frame_id == "husky/camera_color_optical_frame"

    # object_detector: the parcel in the Husky's base_link
    m = dets[-1]
    assert m.header.frame_id == "husky/base_link"
    assert len(m.detections) == 1
    x = m.detections[0]
    assert (x.results[0].hypothesis.class_id, x.id) == ("parcel", "parcel")
    p = x.results[0].pose.pose.position
    print(f"parcel in base_link: ({p.x:.4f}, {p.y:.4f}, {p.z:.4f})")
    assert p.x == pytest.approx(PARCEL[0], abs=0.005) and p.y == pytest.approx(PARCEL[1], abs=0.005)
    assert (x.bbox.size.x, x.bbox.size.y, x.bbox.size.z) == (0.4, 0.3, 0.1)
    assert x.bbox.center.position.x == p.x
