//! What a render looks through: a view (an MJCF camera, a world pose, or MuJoCo's free camera)
//! and pinhole intrinsics in the ROS convention.
//!
//! Intrinsics are stated the way `sensor_msgs/CameraInfo` states them: pixels, the centre of the
//! top-left pixel at (0, 0), x right and y down in the image. The render service turns them into
//! the OpenGL frustum MuJoCo draws with ([`Intrinsics::frustum`]), so the picture and the
//! published K/P are one projection, not two descriptions of it.
//!
//! Frames: MuJoCo cameras look along their −z with +y up (`data.cam_xmat`); the REP 103 optical
//! frame looks along +z with +y down. [`optical_from_mujoco`] converts.

use mujoco_rs::prelude::MjModel;

/// Pinhole intrinsics at one resolution (ROS convention: pixel centres at integer coordinates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intrinsics {
    /// Image width (px).
    pub width: u32,
    /// Image height (px).
    pub height: u32,
    /// Focal length along x (px).
    pub fx: f64,
    /// Focal length along y (px).
    pub fy: f64,
    /// Principal point x (px).
    pub cx: f64,
    /// Principal point y (px).
    pub cy: f64,
}

impl Intrinsics {
    /// Square pixels and a centred principal point for a vertical field of view `fovy_deg`.
    pub fn from_fovy(width: u32, height: u32, fovy_deg: f64) -> Self {
        let fy = 0.5 * height as f64 / (0.5 * fovy_deg.to_radians()).tan();
        Intrinsics {
            width,
            height,
            fx: fy,
            fy,
            cx: 0.5 * (width as f64 - 1.0),
            cy: 0.5 * (height as f64 - 1.0),
        }
    }

    /// The same lens at another resolution (focal lengths and principal point scale with it).
    pub fn scaled(&self, width: u32, height: u32) -> Self {
        let (sx, sy) = (width as f64 / self.width as f64, height as f64 / self.height as f64);
        Intrinsics {
            width,
            height,
            fx: self.fx * sx,
            fy: self.fy * sy,
            // scale the continuous image coordinate (pixel edge at 0), not the pixel index
            cx: (self.cx + 0.5) * sx - 0.5,
            cy: (self.cy + 0.5) * sy - 0.5,
        }
    }

    /// Vertical field of view (degrees) for a centred principal point.
    pub fn fovy_deg(&self) -> f64 {
        2.0 * (0.5 * self.height as f64 / self.fy).atan().to_degrees()
    }

    /// Horizontal field of view (degrees) for a centred principal point.
    pub fn fovx_deg(&self) -> f64 {
        2.0 * (0.5 * self.width as f64 / self.fx).atan().to_degrees()
    }

    /// The camera matrix K, row-major (CameraInfo.k).
    pub fn k(&self) -> [f64; 9] {
        [self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0]
    }

    /// The projection matrix P of a monocular camera, row-major (CameraInfo.p).
    pub fn p(&self) -> [f64; 12] {
        [self.fx, 0.0, self.cx, 0.0, 0.0, self.fy, self.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    }

    /// Pixel (u, v) of a point in the optical frame (z forward); `None` behind the camera.
    pub fn project(&self, p: [f64; 3]) -> Option<(f64, f64)> {
        (p[2] > 0.0).then(|| (self.fx * p[0] / p[2] + self.cx, self.fy * p[1] / p[2] + self.cy))
    }

    /// The OpenGL frustum at `near` that images exactly these intrinsics, as MuJoCo's
    /// `mjvGLCamera` states it: `(frustum_center, frustum_width (half), bottom, top)`.
    ///
    /// Window x of pixel centre `u` is `u + 0.5`; with `glFrustum(c - w, c + w, b, t, n, f)` a
    /// point at `x/z` lands at `W/2 · (1 + (n·x/z − c)/w)`, so `w = W·n/(2fx)` and
    /// `c = n·(W − 2cx − 1)/(2fx)`; rows count from the bottom in GL, which flips the sign of y.
    pub fn frustum(&self, near: f64) -> [f64; 4] {
        let (w, h) = (self.width as f64, self.height as f64);
        let half_width = w * near / (2.0 * self.fx);
        let center = near * (w - 2.0 * self.cx - 1.0) / (2.0 * self.fx);
        let top = near * (2.0 * self.cy + 1.0) / (2.0 * self.fy);
        let bottom = near * (2.0 * self.cy + 1.0 - 2.0 * h) / (2.0 * self.fy);
        [center, half_width, bottom, top]
    }

    /// The intrinsics MuJoCo itself renders MJCF camera `cam` with at `width`×`height`: from its
    /// `sensorsize` + `focal`/`principal` when it states them, else from its `fovy` with square
    /// pixels. Errors name a camera id out of range.
    pub fn of_model_camera(
        model: &MjModel,
        cam: usize,
        width: u32,
        height: u32,
    ) -> Result<Self, String> {
        let m = model.ffi();
        let ncam = m.ncam as usize;
        if cam >= ncam {
            return Err(format!("camera id {cam} is out of range (the model has {ncam} cameras)"));
        }
        // SAFETY: cam < ncam; the arrays hold ncam (fovy), 2*ncam (sensorsize) and 4*ncam
        // (intrinsic) values in the compiled model.
        let (fovy, sensor, intr) = unsafe {
            (
                *m.cam_fovy.add(cam),
                [*m.cam_sensorsize.add(2 * cam), *m.cam_sensorsize.add(2 * cam + 1)],
                [
                    *m.cam_intrinsic.add(4 * cam),
                    *m.cam_intrinsic.add(4 * cam + 1),
                    *m.cam_intrinsic.add(4 * cam + 2),
                    *m.cam_intrinsic.add(4 * cam + 3),
                ],
            )
        };
        if sensor[1] > 0.0 {
            // MuJoCo's frustum from a physical lens: half-width n/f·(s/2), centre n/f·c (x);
            // bottom −n/f·(s/2 − c), top n/f·(s/2 + c) (y). Inverted through `frustum` above.
            let (w, h) = (width as f64, height as f64);
            let (sw, sh) = (sensor[0] as f64, sensor[1] as f64);
            let [ffx, ffy, pcx, pcy] = intr.map(|v| v as f64);
            Ok(Intrinsics {
                width,
                height,
                fx: w * ffx / sw,
                fy: h * ffy / sh,
                cx: 0.5 * (w - 1.0) - w * pcx / sw,
                cy: 0.5 * (h - 1.0) + h * pcy / sh,
            })
        } else {
            Ok(Intrinsics::from_fovy(width, height, fovy))
        }
    }
}

/// A rigid pose: position and a row-major rotation matrix (columns = the frame's axes in world).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Origin in the world (m).
    pub pos: [f64; 3],
    /// Row-major 3×3 rotation; column j is axis j of the frame, in world coordinates.
    pub mat: [f64; 9],
}

impl Pose {
    /// Axis `j` (0 = x, 1 = y, 2 = z) of the frame, in world coordinates.
    pub fn axis(&self, j: usize) -> [f64; 3] {
        [self.mat[j], self.mat[3 + j], self.mat[6 + j]]
    }

    /// A world point expressed in this frame.
    pub fn inverse_apply(&self, p: [f64; 3]) -> [f64; 3] {
        let d = [p[0] - self.pos[0], p[1] - self.pos[1], p[2] - self.pos[2]];
        let a = |j: usize| {
            let ax = self.axis(j);
            ax[0] * d[0] + ax[1] * d[1] + ax[2] * d[2]
        };
        [a(0), a(1), a(2)]
    }

    /// A point of this frame expressed in the world.
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let m = &self.mat;
        [
            self.pos[0] + m[0] * p[0] + m[1] * p[1] + m[2] * p[2],
            self.pos[1] + m[3] * p[0] + m[4] * p[1] + m[5] * p[2],
            self.pos[2] + m[6] * p[0] + m[7] * p[1] + m[8] * p[2],
        ]
    }
}

/// The REP 103 optical frame (x right, y down, z forward) of a MuJoCo camera frame (x right,
/// y up, looking along −z): a half turn about x.
pub fn optical_from_mujoco(cam: &Pose) -> Pose {
    let m = &cam.mat;
    Pose { pos: cam.pos, mat: [m[0], -m[1], -m[2], m[3], -m[4], -m[5], m[6], -m[7], -m[8]] }
}

/// The MuJoCo camera frame of a REP 103 optical frame (the inverse of [`optical_from_mujoco`],
/// which is its own inverse).
pub fn mujoco_from_optical(optical: &Pose) -> Pose {
    optical_from_mujoco(optical)
}

/// Where a render looks from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum View {
    /// MJCF camera by id: pose from `data.cam_xpos/cam_xmat`; intrinsics from the model unless
    /// the request states them.
    Camera(usize),
    /// A world pose of a MuJoCo-convention camera frame (x right, y up, looking along −z).
    /// The request must state intrinsics.
    Pose(Pose),
    /// MuJoCo's free camera (the viewer's): orbiting `lookat` at `distance`, `azimuth` and
    /// `elevation` in degrees, with the model's `visual/global/fovy` unless intrinsics are given.
    Free {
        /// Point looked at (m).
        lookat: [f64; 3],
        /// Distance from it (m).
        distance: f64,
        /// Azimuth (deg), as `mjvCamera.azimuth`.
        azimuth: f64,
        /// Elevation (deg), as `mjvCamera.elevation` (negative looks down).
        elevation: f64,
    },
}

impl View {
    /// The MuJoCo-convention camera frame of a free camera.
    pub fn free_pose(lookat: [f64; 3], distance: f64, azimuth: f64, elevation: f64) -> Pose {
        let (sa, ca) = azimuth.to_radians().sin_cos();
        let (se, ce) = elevation.to_radians().sin_cos();
        let forward = [ce * ca, ce * sa, se];
        let up = [-se * ca, -se * sa, ce];
        let right = [sa, -ca, 0.0];
        let pos = [
            lookat[0] - distance * forward[0],
            lookat[1] - distance * forward[1],
            lookat[2] - distance * forward[2],
        ];
        // columns: x = right, y = up, z = -forward
        Pose {
            pos,
            mat: [
                right[0],
                up[0],
                -forward[0],
                right[1],
                up[1],
                -forward[1],
                right[2],
                up[2],
                -forward[2],
            ],
        }
    }
}
