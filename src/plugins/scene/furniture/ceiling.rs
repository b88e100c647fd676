//! `ceiling`: open a world's roof by removing its ceiling geometry at build time.
//!
//! `keep: true` (the default) keeps the ceiling, so adding the entry never surprise-deletes
//! geometry; `keep: false` removes every geom that lies wholly above `above_z` — its whole
//! world-space bounding box above that height — among the static geometry (geoms of bodies
//! welded to the world: a drone or a raised arm is not a ceiling) built before this entry: the
//! world definition and the entries above it in the document. To find them the entry compiles a
//! copy of the spec as it stands, reads each geom's world box after `mj_kinematics`, and deletes
//! the matching geoms from the spec (an unnamed geom is found through a temporary name). Their
//! materials and textures stay in the model, unreferenced.
//!
//! The key is `keep`, not `enabled`, because the plugin is subtractive: it is the entry running
//! that opens the roof, and `enabled:` inside its config would read the opposite way round from
//! what its writer meant, so it is refused by name. `keep: false` that finds nothing to remove is
//! refused too (a key that is accepted must do something).

use std::ffi::{CStr, CString};

use mujoco_rs::mujoco_c::{
    mjsElement, mjs_delete, mjs_firstElement, mjs_getName, mjs_getString, mjs_nextElement,
    mjs_setName, mjtObj,
};
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{
    typed_config, BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig,
};

/// Temporary name stem given to unnamed geoms while the ceiling is looked for.
const TMP_NAME: &str = "roqsim_ceiling_probe_";

fn d_above_z() -> f64 {
    2.5
}

/// Config of `ceiling`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CeilingConfig {
    /// true: keep the ceiling (no-op, the default); false: remove it.
    #[serde(default = "crate::plugin::yes")]
    pub keep: bool,
    /// A geom is ceiling iff its whole world-space bounding box is above this height (m). Default 2.5.
    #[serde(default = "d_above_z")]
    pub above_z: f64,
}

impl ValidateConfig for CeilingConfig {
    fn validate(&self) -> Vec<ConfigError> {
        if !self.above_z.is_finite() || self.above_z.abs() > crate::world::bounds::MAX_POSITION_M {
            return vec![ConfigError::new(
                "above_z",
                format!("a height (m, within ±1e6), got {}", num(self.above_z)),
            )];
        }
        Vec::new()
    }
}

fn create(value: &Value, _args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    if let Value::Mapping(m) = value {
        if m.contains_key(Value::String("enabled".into())) {
            return Err(vec![ConfigError::new(
                "enabled",
                "is refused here: this plugin removes the ceiling, so `enabled` would read backwards; \
                 write `keep: false` to open the roof, or `keep: true` (the default) to leave it",
            )]);
        }
    }
    let cfg: CeilingConfig = typed_config(value)
        .map_err(|e| crate::key_ranges::key_ranges::<CeilingConfig>(value, e))?;
    let errs = cfg.validate();
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Box::new(Ceiling { cfg }))
}

/// The `ceiling` plugin.
pub struct Ceiling {
    cfg: CeilingConfig,
}

/// Every geom element of `spec`, in the spec's element order.
fn geom_elements(spec: &MjSpec) -> Vec<*mut mjsElement> {
    let mut v = Vec::new();
    // SAFETY: iterating the live spec's element list; nothing is added or deleted meanwhile.
    unsafe {
        let mut el = mjs_firstElement(spec.ffi(), mjtObj::mjOBJ_GEOM);
        while !el.is_null() {
            v.push(el);
            el = mjs_nextElement(spec.ffi(), el);
        }
    }
    v
}

fn name_of(el: *mut mjsElement) -> String {
    // SAFETY: `el` is a live element; its name string lives as long as the element.
    unsafe {
        let s = mjs_getString(mjs_getName(el));
        if s.is_null() {
            String::new()
        } else {
            CStr::from_ptr(s).to_string_lossy().into_owned()
        }
    }
}

fn set_name(el: *mut mjsElement, name: &str) {
    let c = CString::new(name).unwrap_or_default();
    // SAFETY: `el` is a live element; MuJoCo copies the name.
    unsafe {
        mjs_setName(el, c.as_ptr());
    }
}

/// The lowest world z of geom `g`'s bounding box.
fn bottom_z(m: &MjModel, d: &MjData<Box<MjModel>>, g: usize) -> f64 {
    let aabb = m.geom_aabb()[g];
    let (p, r) = (d.geom_xpos()[g], d.geom_xmat()[g]);
    let cz = p[2] + r[6] * aabb[0] + r[7] * aabb[1] + r[8] * aabb[2];
    cz - (r[6].abs() * aabb[3] + r[7].abs() * aabb[4] + r[8].abs() * aabb[5])
}

impl Ceiling {
    /// Remove the ceiling geoms from `spec`; returns their names.
    pub fn remove(&self, spec: &mut MjSpec) -> Result<Vec<String>, String> {
        let geoms = geom_elements(spec);
        let mut probed = Vec::new();
        for (i, el) in geoms.iter().enumerate() {
            if name_of(*el).is_empty() {
                set_name(*el, &format!("{TMP_NAME}{i}"));
                probed.push(*el);
            }
        }
        let found = (|| {
            let mut copy = spec.try_clone().map_err(|e| format!("cannot copy the spec: {e}"))?;
            let model = copy
                .compile()
                .map_err(|e| format!("the world built so far does not compile: {e}"))?;
            let mut data = MjData::new(Box::new(model));
            data.kinematics();
            let m = data.model();
            let weld = m.body_weldid();
            let mut names = Vec::new();
            for g in 0..m.ffi().ngeom as usize {
                let body = m.geom_bodyid()[g] as usize;
                if weld[body] != 0 || bottom_z(m, &data, g) <= self.cfg.above_z {
                    continue;
                }
                if let Some(n) = m.id_to_name(MjtObjBase::mjOBJ_GEOM, g) {
                    names.push(n.to_string());
                }
            }
            Ok::<_, String>(names)
        })();
        let mut removed = Vec::new();
        if let Ok(names) = &found {
            for el in &geoms {
                let n = name_of(*el);
                if names.contains(&n) {
                    removed.push(if n.starts_with(TMP_NAME) { String::new() } else { n });
                    // SAFETY: each element is deleted once, and no handle to it is kept.
                    let rc = unsafe { mjs_delete(spec.ffi_mut(), *el) };
                    if rc != 0 {
                        return Err(format!("MuJoCo refused to delete geom `{}`", name_of(*el)));
                    }
                    probed.retain(|p| p != el);
                }
            }
        }
        for el in probed {
            set_name(el, "");
        }
        found.map(|_| removed)
    }
}

impl Plugin for Ceiling {
    fn hooks(&self) -> Hooks {
        if self.cfg.keep {
            Hooks::default()
        } else {
            Hooks::BUILD
        }
    }
    fn build(&mut self, spec: &mut MjSpec, _b: &mut BuildContext) -> HookResult {
        let removed = self.remove(spec)?;
        if removed.is_empty() {
            return Err(format!(
                "keep: false found no static geom wholly above above_z = {} m: there is no ceiling to remove \
                 (this entry sees the world and the entries above it; lower above_z or move the entry after what builds the ceiling)",
                num(self.cfg.above_z)
            ));
        }
        let named: Vec<&str> =
            removed.iter().filter(|n| !n.is_empty()).map(|n| n.as_str()).collect();
        tracing::info!(
            "ceiling: removed {} geom(s) above z = {} m: {}",
            removed.len(),
            num(self.cfg.above_z),
            named.join(", ")
        );
        Ok(())
    }
}

/// The registry entry of `ceiling`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "ceiling",
        "Open a world's roof: `keep: false` removes every static geom wholly above `above_z` at build time.",
        CeilingConfig;
        create
    )
}
