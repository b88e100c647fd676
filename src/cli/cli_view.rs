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

/// Why the window's panel flags cannot be taken as given, if they cannot: `--left-ui` and
/// `--right-ui` are panels of the window, so they need `--view`.
pub fn panel_flag_refusal(left_ui: bool, right_ui: bool, view: bool) -> Option<String> {
    for (on, flag, what) in [
        (left_ui, "--left-ui", "MuJoCo's left panel (the viewer's toggles and its Actuator, Joint, Equality and Group windows)"),
        (right_ui, "--right-ui", "roqsim's run panel"),
    ] {
        if on && !view {
            return Some(format!(
                "{flag} shows {what} in the --view window: add --view, or drop {flag}"
            ));
        }
    }
    None
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
        left_ui: a.left_ui,
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
        if let Err(e) = link.open(&mut engine, camera) {
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
