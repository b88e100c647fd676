//! `roqsim sim WORLD --view`: the run of `sim`, with the engine on a physics thread and the
//! window on the main thread (see `crate::view::window`).

use std::process::ExitCode;

use crate::error::{ConfigError, ConfigErrors};
use crate::world::overrides::{parse_set, Assignment};

use super::SimArgs;

/// `--view key=value,...` as `sim.view.<key>` assignments, applied after --override and --set
/// through the same override path (so sim.view has one validator).
pub fn view_assignments(spec: &str) -> Result<Vec<Assignment>, ConfigErrors> {
    let pairs = crate::view::camera::split_view_arg(spec)
        .map_err(|m| ConfigErrors::from(ConfigError::new("sim.view", m)))?;
    let mut out = Vec::new();
    for (k, v) in pairs {
        let mut a = parse_set(&format!("sim.view.{k}={v}"))?;
        a.source = format!("--view {k}={v}");
        out.push(a);
    }
    Ok(out)
}

#[cfg(not(feature = "viewer"))]
pub fn sim_windowed(_a: SimArgs) -> ExitCode {
    crate::cli::stderr::say!(
        "error: --view: this roqsim was built without the window (cargo feature `viewer`); \
         rebuild with `cargo build --release --features viewer`"
    );
    ExitCode::from(2)
}

#[cfg(feature = "viewer")]
pub fn sim_windowed(a: SimArgs) -> ExitCode {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use crate::view::camera::ViewCamera;
    use crate::view::window::{self, WindowOptions};

    if let Some(why) = window::display_refusal() {
        crate::cli::stderr::say!("error: {why}");
        return ExitCode::from(2);
    }
    let opts = WindowOptions {
        title: format!("roqsim: {}", a.world.world),
        right_ui: a.right_ui,
        manual_control: a.manual_control,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    window::run_windowed(opts, move |mut link| {
        let (mut engine, limits, factor) = match super::prepare(&a) {
            Ok(x) => x,
            Err(code) => return code,
        };
        let view = engine.sim.view.clone().unwrap_or_default();
        let camera = match ViewCamera::resolve(&view, &engine.ctx) {
            Ok(c) => c,
            Err(e) => {
                crate::cli::stderr::say!("error: {e}");
                engine.shutdown();
                return ExitCode::from(2);
            }
        };
        if let Some(t) = &camera.track {
            tracing::warn!(
                "sim.view.track: the window starts on `{}`, but mujoco-rs's viewer has no camera \
                 API to keep following it; Ctrl+Alt+double-click the body to track it by hand \
                 (roqsim render follows it)",
                t.entity
            );
        }
        if let Err(e) = link.open(&engine, camera.pose(engine.ctx.data())) {
            crate::cli::stderr::say!("error: --view: {e}");
            engine.shutdown();
            return ExitCode::from(1);
        }
        let closed = link.closed_flag();
        let mut result = crate::runner::run_with(
            &mut engine,
            limits,
            factor,
            !a.quiet,
            &|| closed.load(Ordering::SeqCst) || interrupted.load(Ordering::SeqCst),
            &mut |e| link.frame(e),
        );
        if let Ok(s) = &mut result {
            if link.closed() && s.reason == "interrupted" {
                s.reason = "window closed".to_string();
            }
        }
        if let Some(code) = super::write_summary(&a, &mut engine, &result) {
            return code;
        }
        super::finish(&mut engine, result, a.profile)
    })
}
