//! What the mouse does to the window's camera, in MuJoCo's conventions (the arithmetic of
//! `mjv_moveCamera`, applied to a [`ViewCamera`] so a tracked entity stays tracked):
//!
//! - left drag orbits: azimuth −= 180·dx, elevation −= 180·dy;
//! - right drag pans: lookat moves against the mouse in the camera's vertical plane (Shift: the
//!   horizontal plane), scaled so the point looked at follows the pointer;
//! - scroll (or middle drag) zooms: distance −= ln(1 + d/(3·extent)) · dy · 9 · extent.
//!
//! `dx`, `dy` are pointer moves divided by the window's height, as MuJoCo's simulate passes them.
//! Azimuth wraps to (−180, 180], elevation stays within [−89, 89] and the distance within
//! [0.01, 100] × the model's extent, as MuJoCo clamps them. A tracking camera differs in one
//! point: MuJoCo leaves a tracked lookat alone on a pan; here a pan moves the offset from the
//! tracked body (in the body's heading frame when the camera follows the heading), so the view
//! can be re-centred on part of a robot and still follow it.

use super::camera::ViewCamera;

/// One camera move from the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CameraMove {
    /// Left drag (MuJoCo's mjMOUSE_ROTATE_V).
    Orbit {
        /// Pointer x move / window height.
        dx: f64,
        /// Pointer y move / window height (down is positive).
        dy: f64,
    },
    /// Right drag (mjMOUSE_MOVE_V; `horizontal`: Shift held, mjMOUSE_MOVE_H).
    Pan {
        /// Pointer x move / window height.
        dx: f64,
        /// Pointer y move / window height.
        dy: f64,
        /// Move in the horizontal plane instead of the vertical one.
        horizontal: bool,
    },
    /// Scroll or middle drag (mjMOUSE_ZOOM): positive `dy` moves away.
    Zoom {
        /// Scroll lines × −0.05, or pointer y move / window height.
        dy: f64,
    },
    /// Back to the camera `sim.view` set (Escape).
    Home,
}

/// Apply `mv` to `cam`. `start` is the camera the run began with ([`CameraMove::Home`]),
/// `extent` the model's `stat.extent` (m), `fovy` the free camera's vertical field of view (deg)
/// and `yaw` the tracked body's heading (rad; 0 when nothing is tracked).
pub fn apply(
    cam: &mut ViewCamera,
    start: &ViewCamera,
    mv: CameraMove,
    extent: f64,
    fovy: f64,
    yaw: f64,
) {
    match mv {
        CameraMove::Orbit { dx, dy } => {
            cam.azimuth -= dx * 180.0;
            cam.elevation -= dy * 180.0;
        }
        CameraMove::Pan { dx, dy, horizontal } => {
            // The camera's heading in the world (the tracked yaw is added when it follows it).
            let heading = if cam.track.as_ref().is_some_and(|t| t.follow_heading) {
                cam.azimuth + yaw.to_degrees()
            } else {
                cam.azimuth
            };
            let (sa, ca) = heading.to_radians().sin_cos();
            // mjv_alignToCamera: y along the horizontal forward, x to its right.
            let (right, fwd) = ([sa, -ca], [ca, sa]);
            let v = if horizontal {
                [dx * right[0] - dy * fwd[0], dx * right[1] - dy * fwd[1], 0.0]
            } else {
                [dx * right[0], dx * right[1], -dy]
            };
            // Frustum height at unit distance × the distance along the view axis.
            let scl = 2.0 * (0.5 * fovy.to_radians()).tan() * cam.distance;
            let mut d = [-scl * v[0], -scl * v[1], -scl * v[2]];
            if cam.track.as_ref().is_some_and(|t| t.follow_heading) {
                // The offset turns with the body: express the world move in its heading frame.
                let (s, c) = yaw.sin_cos();
                d = [c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]];
            }
            for (l, di) in cam.lookat.iter_mut().zip(d) {
                *l += di;
            }
        }
        CameraMove::Zoom { dy } => {
            cam.distance -= (1.0 + cam.distance / extent / 3.0).ln() * dy * 9.0 * extent;
        }
        CameraMove::Home => {
            *cam = start.clone();
            return;
        }
    }
    if cam.azimuth > 180.0 {
        cam.azimuth -= 360.0;
    }
    if cam.azimuth < -180.0 {
        cam.azimuth += 360.0;
    }
    cam.elevation = cam.elevation.clamp(-89.0, 89.0);
    cam.distance = cam.distance.clamp(0.01 * extent, 100.0 * extent);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::View;

    fn free() -> ViewCamera {
        ViewCamera {
            lookat: [1.0, 2.0, 0.5],
            distance: 3.0,
            azimuth: 90.0,
            elevation: -30.0,
            track: None,
        }
    }

    #[test]
    fn orbit_and_zoom_follow_mujocos_arithmetic_and_clamps() {
        let start = free();
        let mut c = free();
        apply(&mut c, &start, CameraMove::Orbit { dx: 0.1, dy: -0.05 }, 2.0, 45.0, 0.0);
        assert_eq!((c.azimuth, c.elevation), (72.0, -21.0));
        apply(&mut c, &start, CameraMove::Orbit { dx: -1.0, dy: -1.0 }, 2.0, 45.0, 0.0);
        assert_eq!((c.azimuth, c.elevation), (-108.0, 89.0));
        apply(&mut c, &start, CameraMove::Zoom { dy: 0.05 }, 2.0, 45.0, 0.0);
        let want = 3.0 - (1.0f64 + 3.0 / 2.0 / 3.0).ln() * 0.05 * 9.0 * 2.0;
        assert!((c.distance - want).abs() < 1e-12, "{} vs {want}", c.distance);
        apply(&mut c, &start, CameraMove::Zoom { dy: -100.0 }, 2.0, 45.0, 0.0);
        assert_eq!(c.distance, 200.0);
        apply(&mut c, &start, CameraMove::Home, 2.0, 45.0, 0.0);
        assert_eq!(c, start);
    }

    /// A pan moves lookat so the point under the pointer stays under it: a drag by the whole
    /// window height moves lookat by the whole visible height at its distance.
    #[test]
    fn pan_moves_lookat_against_the_pointer_in_the_view_plane() {
        let start = free();
        let mut c = free();
        // azimuth 90: the camera looks along +y, its right is +x
        apply(
            &mut c,
            &start,
            CameraMove::Pan { dx: 0.5, dy: 0.0, horizontal: false },
            2.0,
            60.0,
            0.0,
        );
        let visible = 2.0 * (30.0f64).to_radians().tan() * 3.0;
        assert!((c.lookat[0] - (1.0 - 0.5 * visible)).abs() < 1e-12, "{:?}", c.lookat);
        assert!((c.lookat[1] - 2.0).abs() < 1e-12 && c.lookat[2] == 0.5);
        let mut c = free();
        apply(
            &mut c,
            &start,
            CameraMove::Pan { dx: 0.0, dy: 0.25, horizontal: false },
            2.0,
            60.0,
            0.0,
        );
        assert!((c.lookat[2] - (0.5 + 0.25 * visible)).abs() < 1e-12, "{:?}", c.lookat);
        let mut c = free();
        apply(
            &mut c,
            &start,
            CameraMove::Pan { dx: 0.0, dy: 0.25, horizontal: true },
            2.0,
            60.0,
            0.0,
        );
        assert!((c.lookat[1] - (2.0 + 0.25 * visible)).abs() < 1e-12, "{:?}", c.lookat);
        // the pose the renderer gets is the same free camera MuJoCo would build
        let p = View::free_pose(c.lookat, c.distance, c.azimuth, c.elevation);
        assert!((p.axis(0)[0] - 1.0).abs() < 1e-12, "camera right is +x: {:?}", p.axis(0));
    }
}
