//! The offscreen OpenGL context: backend choice and EGL.
//!
//! Headless by default: EGL on the first device that opens a context — a GPU's EGL device where
//! the machine has one (they enumerate first), Mesa's software device (llvmpipe) where it does
//! not. The choice is explicit through the environment MuJoCo users already know:
//! `MUJOCO_GL` (`egl`, the default and the only backend this build carries) and
//! `MUJOCO_EGL_DEVICE_ID` (an index into the EGL device list). A machine that cannot render gets
//! one [`RenderError::Unavailable`] naming the packages and the variables, before MuJoCo is asked
//! for a context — never a MuJoCo fatal error from inside `mjr_makeContext`.
//!
//! The EGL library is loaded at run time (dlopen), so building and running worlds without a
//! camera needs no GL at all.

use std::ffi::{c_void, CString};
use std::fmt;
use std::num::NonZeroU32;

use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::api::egl::surface::Surface;
use glutin::config::{ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::{GlDisplay, NotCurrentGlContext, PossiblyCurrentGlContext};
use glutin::surface::{PbufferSurface, SurfaceAttributesBuilder};

/// The environment variable choosing the offscreen backend.
pub const GL_ENV: &str = "MUJOCO_GL";
/// The environment variable choosing the EGL device by index.
pub const EGL_DEVICE_ENV: &str = "MUJOCO_EGL_DEVICE_ID";
/// The Debian packages that provide EGL with Mesa's software device.
pub const GL_PACKAGES: &str = "libegl1 libegl-mesa0 libgl1-mesa-dri";

/// Why a render could not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// No offscreen GL on this machine (or the backend choice is invalid); the text names the
    /// packages and the variables.
    Unavailable(String),
    /// The request cannot be rendered (bad size, unknown camera).
    Request(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Unavailable(m) | RenderError::Request(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RenderError {}

/// The offscreen backend chosen from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// EGL; `device` = `Some(i)` picks device `i`, `None` the first that opens a context.
    Egl {
        /// Index into the EGL device list.
        device: Option<usize>,
    },
}

impl Backend {
    /// The choice `MUJOCO_GL` / `MUJOCO_EGL_DEVICE_ID` make (`None` = unset).
    pub fn from_env_values(gl: Option<&str>, device: Option<&str>) -> Result<Self, RenderError> {
        match gl.map(str::trim).filter(|s| !s.is_empty()) {
            None | Some("egl") => {}
            Some(other) => {
                return Err(RenderError::Unavailable(format!(
                    "{GL_ENV}={other}: this build renders offscreen through EGL only (OSMesa and \
                     GLFW are not built in); unset {GL_ENV} or set {GL_ENV}=egl, and pick a \
                     device with {EGL_DEVICE_ENV}=N"
                )))
            }
        }
        let device = match device.map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(s.parse::<usize>().map_err(|_| {
                RenderError::Unavailable(format!(
                    "{EGL_DEVICE_ENV}={s}: expected a device index (0, 1, ...)"
                ))
            })?),
        };
        Ok(Backend::Egl { device })
    }

    /// The choice the process environment makes.
    pub fn from_env() -> Result<Self, RenderError> {
        let gl = std::env::var(GL_ENV).ok();
        let dev = std::env::var(EGL_DEVICE_ENV).ok();
        Self::from_env_values(gl.as_deref(), dev.as_deref())
    }
}

/// The message for a machine without usable EGL.
pub fn unavailable(cause: &str) -> RenderError {
    RenderError::Unavailable(format!(
        "offscreen rendering is unavailable: {cause}. A camera needs EGL: install the Debian \
         packages {GL_PACKAGES} (scripts/setup.sh does), or choose a device with \
         {GL_ENV}=egl {EGL_DEVICE_ENV}=N"
    ))
}

/// An offscreen OpenGL context, current on the thread that made it.
pub struct GlContext {
    context: PossiblyCurrentContext,
    surface: Surface<PbufferSurface>,
    /// How the device names itself (`software`, a DRM node, a vendor name).
    pub device: String,
    /// `GL_RENDERER` of the context (`llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub renderer: String,
    /// `GL_VERSION` of the context.
    pub version: String,
}

impl fmt::Debug for GlContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlContext")
            .field("device", &self.device)
            .field("renderer", &self.renderer)
            .field("version", &self.version)
            .finish()
    }
}

impl GlContext {
    /// Open a context as `backend` says and make it current on this thread.
    pub fn open(backend: Backend) -> Result<Self, RenderError> {
        let Backend::Egl { device } = backend;
        let devices: Vec<Device> = match Device::query_devices() {
            Ok(d) => d.collect(),
            Err(e) => return Err(unavailable(&format!("no EGL library or device ({e})"))),
        };
        if devices.is_empty() {
            return Err(unavailable("EGL reports no devices"));
        }
        let names: Vec<String> = devices.iter().map(describe).collect();
        let listing = names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{i}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let order: Vec<usize> = match device {
            Some(i) if i >= devices.len() => {
                return Err(RenderError::Unavailable(format!(
                    "{EGL_DEVICE_ENV}={i}: there is no EGL device {i} (devices: {listing})"
                )))
            }
            Some(i) => vec![i],
            None => (0..devices.len()).collect(),
        };
        let mut failures = Vec::new();
        for i in order {
            match Self::on_device(&devices[i]) {
                Ok(mut ctx) => {
                    ctx.device = names[i].clone();
                    return Ok(ctx);
                }
                Err(e) => failures.push(format!("device {i} ({}): {e}", names[i])),
            }
        }
        Err(unavailable(&format!("no EGL device opened a GL context ({})", failures.join("; "))))
    }

    fn on_device(device: &Device) -> Result<Self, String> {
        // SAFETY: `device` comes from the EGL device query; no native display is involved.
        let display = unsafe { Display::with_device(device, None) }.map_err(|e| e.to_string())?;
        let template = ConfigTemplateBuilder::new()
            .with_surface_type(ConfigSurfaceTypes::PBUFFER)
            .with_alpha_size(0)
            .with_depth_size(24)
            .with_stencil_size(8)
            .build();
        // SAFETY: the display is initialised and the template asks for ordinary attributes.
        let config = unsafe { display.find_configs(template) }
            .map_err(|e| e.to_string())?
            .next()
            .ok_or_else(|| "no pbuffer config with a depth buffer".to_string())?;
        // MuJoCo's classic renderer is fixed-function OpenGL: a compatibility profile.
        let attrs = ContextAttributesBuilder::new()
            .with_profile(GlProfile::Compatibility)
            .with_context_api(ContextApi::OpenGl(Some(Version::new(2, 0))))
            .build(None);
        // SAFETY: display and config are valid and belong together.
        let context =
            unsafe { display.create_context(&config, &attrs) }.map_err(|e| e.to_string())?;
        // MuJoCo draws into its own framebuffer objects; the pbuffer only anchors the context.
        let one = NonZeroU32::new(1).expect("1 is not zero");
        let sattrs = SurfaceAttributesBuilder::<PbufferSurface>::new().build(one, one);
        // SAFETY: display and config are valid; the size is non-zero.
        let surface = unsafe { display.create_pbuffer_surface(&config, &sattrs) }
            .map_err(|e| e.to_string())?;
        let context = context.make_current(&surface).map_err(|e| e.to_string())?;
        let renderer = gl_string(&display, GL_RENDERER).ok_or_else(|| {
            "the context answers no GL_RENDERER (no usable GL driver)".to_string()
        })?;
        let version = gl_string(&display, GL_VERSION).unwrap_or_default();
        Ok(GlContext { context, surface, device: String::new(), renderer, version })
    }

    /// Make the context current on the calling thread (cheap when it already is).
    pub fn make_current(&self) -> Result<(), RenderError> {
        self.context
            .make_current(&self.surface)
            .map_err(|e| unavailable(&format!("the GL context cannot be made current ({e})")))
    }
}

const GL_RENDERER: u32 = 0x1F01;
const GL_VERSION: u32 = 0x1F02;

/// `glGetString(name)` through the display's loader; `None` when GL is not really there.
fn gl_string(display: &Display, name: u32) -> Option<String> {
    let sym = CString::new("glGetString").expect("no NUL");
    let ptr: *const c_void = display.get_proc_address(&sym);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `glGetString` has this signature in every GL version; a context is current.
    let get: extern "system" fn(u32) -> *const u8 = unsafe { std::mem::transmute(ptr) };
    let s = get(name);
    if s.is_null() {
        return None;
    }
    // SAFETY: GL returns a static NUL-terminated string.
    Some(unsafe { std::ffi::CStr::from_ptr(s.cast()) }.to_string_lossy().into_owned())
}

/// How an EGL device names itself.
fn describe(device: &Device) -> String {
    if let Some(path) = device.drm_device_node_path() {
        path.display().to_string()
    } else if device.extensions().contains("EGL_MESA_device_software") {
        "software".to_string()
    } else {
        device.name().unwrap_or("unnamed").to_string()
    }
}
