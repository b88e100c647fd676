//! The `field` hint: publish one member of a structured payload as a primitive message (`{"type":
//! "std_msgs/msg/Bool", "field": "in_contact"}`).
//!
//! A producer keeps its rich payload for in-process consumers and still gets a single-field
//! topic, without a converter in shared code naming its attributes. Paths are dotted member
//! names of the payload struct; a vector member takes `.x`/`.y`/`.z` (`.w` for quaternions).
//! ROS-free: tested by plain `cargo test`.

use crate::context::payload::Payload;

fn axis(v: &[f64], rest: &str, path: &str, kind: &str) -> Result<Payload, String> {
    let i = match rest {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        "w" if v.len() == 4 => 3,
        _ => {
            return Err(format!(
                "field `{path}` of a {kind} payload: a vector member takes .x, .y or .z{}",
                if v.len() == 4 { " or .w" } else { "" }
            ))
        }
    };
    Ok(Payload::Float64(v[i]))
}

/// The member `path` of `p` as a primitive payload (Float64, Bool or String). Errors name the
/// path, the payload kind and the members it has.
pub fn project(p: &Payload, path: &str) -> Result<Payload, String> {
    // Monitor reports and acks name their own members (`Payload::member`).
    if let Some(v) = p.member(path) {
        return Ok(v);
    }
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, r),
        None => (path, ""),
    };
    let kind = p.kind();
    let f = |x: f64| Ok(Payload::Float64(x));
    let vec3 = |v: &[f64]| axis(v, rest, path, kind);
    let res = match p {
        Payload::Float64(_) | Payload::Bool(_) | Payload::String(_) if path.is_empty() => {
            Ok(p.clone())
        }
        Payload::Odometry(o) => match head {
            "stamp" => f(o.stamp),
            "frame_id" => Ok(Payload::String(o.frame_id.clone())),
            "child_frame_id" => Ok(Payload::String(o.child_frame_id.clone())),
            "position" => vec3(&o.position),
            "orientation" => vec3(&o.orientation),
            "linear" => vec3(&o.linear),
            "angular" => vec3(&o.angular),
            _ => Err(String::new()),
        },
        Payload::PoseTwist(o) => match head {
            "stamp" => f(o.stamp),
            "frame_id" => Ok(Payload::String(o.frame_id.clone())),
            "child_frame_id" => Ok(Payload::String(o.child_frame_id.clone())),
            "position" => vec3(&o.position),
            "orientation" => vec3(&o.orientation),
            "linear" => vec3(&o.linear),
            "angular" => vec3(&o.angular),
            _ => Err(String::new()),
        },
        Payload::Imu(o) => match head {
            "stamp" => f(o.stamp),
            "frame_id" => Ok(Payload::String(o.frame_id.clone())),
            "orientation" => vec3(&o.orientation),
            "angular_velocity" => vec3(&o.angular_velocity),
            "linear_acceleration" => vec3(&o.linear_acceleration),
            _ => Err(String::new()),
        },
        Payload::Twist(o) => match head {
            "linear" => vec3(&o.linear),
            "angular" => vec3(&o.angular),
            _ => Err(String::new()),
        },
        Payload::Wrench(o) => match head {
            "stamp" => f(o.stamp),
            "frame_id" => Ok(Payload::String(o.frame_id.clone())),
            "force" => vec3(&o.force),
            "torque" => vec3(&o.torque),
            _ => Err(String::new()),
        },
        Payload::Ackermann(o) => match head {
            "steering_angle" => f(o.steering_angle),
            "steering_angle_velocity" => f(o.steering_angle_velocity),
            "speed" => f(o.speed),
            "acceleration" => f(o.acceleration),
            "jerk" => f(o.jerk),
            _ => Err(String::new()),
        },
        Payload::LaserScan(o) => match head {
            "stamp" => f(o.stamp),
            "frame_id" => Ok(Payload::String(o.frame_id.clone())),
            "range_min" => f(o.range_min as f64),
            "range_max" => f(o.range_max as f64),
            _ => Err(String::new()),
        },
        Payload::JointState(o) => match head {
            "stamp" => f(o.stamp),
            _ => Err(String::new()),
        },
        _ => Err(String::new()),
    };
    res.map_err(|e| {
        if !e.is_empty() {
            return e;
        }
        format!(
            "field `{path}`: a {kind} payload has no such primitive member ({})",
            members(p).join(", ")
        )
    })
}

/// The primitive members `project` accepts for a payload's kind (for error messages).
pub fn members(p: &Payload) -> Vec<&'static str> {
    match p {
        Payload::Odometry(_) | Payload::PoseTwist(_) => vec![
            "stamp",
            "frame_id",
            "child_frame_id",
            "position.{x,y,z}",
            "orientation.{x,y,z,w}",
            "linear.{x,y,z}",
            "angular.{x,y,z}",
        ],
        Payload::Imu(_) => vec![
            "stamp",
            "frame_id",
            "orientation.{x,y,z,w}",
            "angular_velocity.{x,y,z}",
            "linear_acceleration.{x,y,z}",
        ],
        Payload::Twist(_) => vec!["linear.{x,y,z}", "angular.{x,y,z}"],
        Payload::Wrench(_) => vec!["stamp", "frame_id", "force.{x,y,z}", "torque.{x,y,z}"],
        Payload::Ackermann(_) => {
            vec!["steering_angle", "steering_angle_velocity", "speed", "acceleration", "jerk"]
        }
        Payload::LaserScan(_) => vec!["stamp", "frame_id", "range_min", "range_max"],
        Payload::JointState(_) => vec!["stamp"],
        Payload::Float64(_) | Payload::Bool(_) | Payload::String(_) => {
            vec!["(none: already a primitive; drop the field hint)"]
        }
        _ => vec!["see Payload::member for the members of reports"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::payload::{Odometry, Wrench};

    #[test]
    fn projects_members() {
        let o = Payload::Odometry(Odometry {
            position: [1.0, 2.0, 3.0],
            orientation: [0.0, 0.0, 0.6, 0.8],
            ..Default::default()
        });
        assert_eq!(project(&o, "position.y").unwrap(), Payload::Float64(2.0));
        assert_eq!(project(&o, "orientation.w").unwrap(), Payload::Float64(0.8));
        let w = Payload::Wrench(Wrench {
            force: [0.0, 0.0, -9.8],
            frame_id: "tool0".into(),
            ..Default::default()
        });
        assert_eq!(project(&w, "force.z").unwrap(), Payload::Float64(-9.8));
        assert_eq!(project(&w, "frame_id").unwrap(), Payload::String("tool0".into()));
        assert_eq!(project(&Payload::Bool(true), "").unwrap(), Payload::Bool(true));
    }

    #[test]
    fn refusals_name_what_exists() {
        let o = Payload::Odometry(Odometry::default());
        let e = project(&o, "speed").unwrap_err();
        assert!(
            e.contains("field `speed`: a Odometry payload has no such primitive member")
                && e.contains("position.{x,y,z}"),
            "{e}"
        );
        let e = project(&o, "position.q").unwrap_err();
        assert!(e.contains("takes .x, .y or .z"), "{e}");
    }
}
