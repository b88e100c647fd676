//! The camera keys every camera-like plugin shares, defined once.
//!
//! serde's `flatten` does not combine with `deny_unknown_fields`, so a plugin that takes the
//! camera keys beside its own (`segmentation_camera`) cannot embed [`super::CameraConfig`].
//! Instead both config structs are declared through [`camera_keys!`]: a plugin lists its own
//! fields and names the shared ones it takes (`@namespace`, `@camera`, ...), in the order its
//! `roqsim plugins describe` and its unknown-key error list them; each shared name expands to the
//! one field definition (type, serde default, doc) below.

/// Declare a camera config struct from its own fields and named shared keys (see the module doc).
///
/// ```text
/// camera_keys! {
///     { #[derive(Debug, Clone, Deserialize, JsonSchema)] #[serde(deny_unknown_fields)] pub struct X }
///     /// Own key.
///     #[serde(default)]
///     pub classes: Vec<String>,
///     @camera, @site, @width,
/// }
/// ```
#[macro_export]
macro_rules! camera_keys {
    // Entry: header in braces, then fields.
    ({ $($head:tt)* } $($rest:tt)*) => {
        $crate::camera_keys!(@acc { $($head)* } [] $($rest)*);
    };
    // Done.
    (@acc { $($head:tt)* } [$($acc:tt)*]) => {
        $($head)* { $($acc)* }
    };
    // Shared keys.
    (@acc $h:tt [$($acc:tt)*] @namespace, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Transport scope of the endpoints. Default: the owning entity's namespace.
            #[serde(default)]
            pub namespace: Option<String>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @camera, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// The MJCF `<camera>` to render through (its own lens unless `fovy`/`intrinsics`).
            /// Default: the device's. Exclusive with `site`.
            #[serde(default)]
            pub camera: Option<String>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @site, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// A site to render from instead: its +x is the boresight and +z is up in the image
            /// (REP 103 body axes). Needs `fovy` or `intrinsics` (a device gives its `fovy`).
            /// Exclusive with `camera`.
            #[serde(default)]
            pub site: Option<String>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @width, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Image width (px), 1..=8192.
            // Read as any integer, so a value past the renderer's u32 (or below 0) is refused
            // with this key's range, 1..=8192, not the integer type's.
            #[serde(default, deserialize_with = "crate::plugin::whole_key")]
            pub width: Option<i128>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @height, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Image height (px), 1..=8192.
            // Read as any integer, so a value past the renderer's u32 (or below 0) is refused
            // with this key's range, 1..=8192, not the integer type's.
            #[serde(default, deserialize_with = "crate::plugin::whole_key")]
            pub height: Option<i128>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @fovy, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Vertical field of view (deg, square pixels, centred principal point), in (0, 180).
            /// Default: the device's; for a generic camera, the MJCF camera's own.
            #[serde(default)]
            pub fovy: Option<f64>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @intrinsics, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// A full pinhole lens instead of `fovy` (scaled to width × height).
            #[serde(default)]
            pub intrinsics: Option<$crate::camera::config::LensConfig>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @rate_hz, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Frame rate (Hz), snapped to the physics grid. Default: the device's.
            #[serde(default)]
            pub rate_hz: Option<f64>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @compressed, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Offer the JPEG companion `image_compressed` (produced only for a subscriber).
            #[serde(default)]
            pub compressed: Option<bool>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @jpeg_quality, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// JPEG quality 1..=100 (image_transport's default 95).
            // Read as any integer, so `8193` or `-1` is refused with this key's range.
            #[serde(default, deserialize_with = "crate::plugin::whole_key")]
            pub jpeg_quality: Option<i128>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @frame_id, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Optical frame of the colour stream. Default `<camera_name>` + the device's suffix
            /// (`camera_color_optical_frame` for a RealSense, as realsense-ros names it).
            #[serde(default)]
            pub frame_id: Option<String>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @camera_name, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Topic prefix of the device's layout (`camera` → `camera/color/image_raw`).
            #[serde(default)]
            pub camera_name: Option<String>,
        ] $($rest)*);
    };
    (@acc $h:tt [$($acc:tt)*] @topics, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)*
            /// Topic renames by endpoint role (`roqsim plugins describe` lists the roles):
            /// relative inside the namespace, or absolute `/x`.
            #[serde(default)]
            pub topics: std::collections::BTreeMap<String, String>,
        ] $($rest)*);
    };
    // An own field.
    (@acc $h:tt [$($acc:tt)*] $(#[$m:meta])* pub $f:ident : $t:ty, $($rest:tt)*) => {
        $crate::camera_keys!(@acc $h [$($acc)* $(#[$m])* pub $f: $t,] $($rest)*);
    };
}
