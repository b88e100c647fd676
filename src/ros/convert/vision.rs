//! vision_msgs fills: the perception ground truth's Detection2DArray and Detection3DArray.

use crate::context::payload::Payload;

use r2r::vision_msgs::msg as vision;

use super::*;

/// Fill a Detection2DArray (one hypothesis per detection, an axis-aligned box).
pub fn fill_detections_2d(
    m: &mut vision::Detection2DArray,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::Detections2D(a) = p else {
        return Err(wrong(p, "vision_msgs/msg/Detection2DArray"));
    };
    header(&mut m.header, a.stamp, fr, &a.frame_id);
    m.detections.clear();
    for d in &a.detections {
        let mut x = vision::Detection2D { header: m.header.clone(), ..Default::default() };
        let mut h = vision::ObjectHypothesisWithPose::default();
        h.hypothesis.class_id.clone_from(&d.class_id);
        h.hypothesis.score = d.score;
        h.pose.pose.orientation.w = 1.0;
        x.results.push(h);
        x.bbox.center.position.x = d.center[0];
        x.bbox.center.position.y = d.center[1];
        x.bbox.center.theta = 0.0;
        x.bbox.size_x = d.size[0];
        x.bbox.size_y = d.size[1];
        x.id.clone_from(&d.id);
        m.detections.push(x);
    }
    Ok(())
}

/// Fill a Detection3DArray (one hypothesis per detection; `bbox.center` is the pose).
pub fn fill_detections_3d(
    m: &mut vision::Detection3DArray,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::Detections3D(a) = p else {
        return Err(wrong(p, "vision_msgs/msg/Detection3DArray"));
    };
    header(&mut m.header, a.stamp, fr, &a.frame_id);
    m.detections.clear();
    for d in &a.detections {
        let mut x = vision::Detection3D { header: m.header.clone(), ..Default::default() };
        let mut h = vision::ObjectHypothesisWithPose::default();
        h.hypothesis.class_id.clone_from(&d.class_id);
        h.hypothesis.score = d.score;
        p3(&mut h.pose.pose.position, &d.position);
        q4(&mut h.pose.pose.orientation, &d.orientation);
        vec_from(&mut h.pose.covariance, &d.covariance);
        x.bbox.center = h.pose.pose.clone();
        v3(&mut x.bbox.size, &d.size);
        x.results.push(h);
        x.id.clone_from(&d.id);
        m.detections.push(x);
    }
    Ok(())
}
