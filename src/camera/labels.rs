//! Label cameras: which class and instance each model geom carries, and the class image,
//! instance image and 2D boxes that fall out of a segmentation render.
//!
//! Classes are matched in declaration order and the first match wins. A geom is selected by its
//! own name (`geoms`), by its body's name (`bodies`) or by the entity whose kinematic subtree it
//! sits in (`entities`); names are globs (`*`, `?`) tried against the compiled name and against
//! the name without its entity prefix. A geom's instance is its body id: stable across frames,
//! resets and runs, and not contiguous, which is why detections name it.

use std::collections::BTreeMap;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Detection2D, Detection2DArray};
use crate::context::EntityRegistry;
use crate::error::ConfigError;

/// One class of a label camera's vocabulary.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    /// The value its pixels carry in the class image, 1..=255 (0 is "nothing labelled here").
    pub class_id: u32,
    /// Human-readable name.
    pub name: String,
    /// Bodies whose geoms carry this class (globs over body names).
    #[serde(default)]
    pub bodies: Vec<String>,
    /// Entities whose whole kinematic subtree carries this class (entity names).
    #[serde(default)]
    pub entities: Vec<String>,
    /// Individual geoms (globs over geom names): the parts of one body.
    #[serde(default)]
    pub geoms: Vec<String>,
}

/// Load-time checks of a vocabulary; paths are relative to the plugin config.
pub fn check_classes(classes: &[ClassConfig]) -> Vec<ConfigError> {
    let mut e = Vec::new();
    if classes.is_empty() {
        e.push(ConfigError::new(
            "classes",
            "required: the vocabulary, e.g. `- {class_id: 1, name: parcel, bodies: [\"graspable_*\"]}`",
        ));
    }
    for (i, c) in classes.iter().enumerate() {
        let at = |k: &str| format!("classes[{i}].{k}");
        if c.class_id == 0 {
            e.push(ConfigError::new(
                at("class_id"),
                "0 is reserved for \"nothing labelled here\" (a background class would be indistinguishable from an unlabelled geom); use 1..=255",
            ));
        } else if c.class_id > 255 {
            e.push(ConfigError::new(
                at("class_id"),
                format!("must be 1..=255 (the class image is mono8), got {}", c.class_id),
            ));
        } else if let Some(j) = classes[..i].iter().position(|o| o.class_id == c.class_id) {
            e.push(ConfigError::new(
                at("class_id"),
                format!("{} is already the id of classes[{j}] (`{}`)", c.class_id, classes[j].name),
            ));
        }
        if c.name.trim().is_empty() {
            e.push(ConfigError::new(at("name"), "must name the class"));
        }
        if c.bodies.is_empty() && c.entities.is_empty() && c.geoms.is_empty() {
            e.push(ConfigError::new(
                format!("classes[{i}]"),
                "selects nothing: give `bodies`, `entities` or `geoms`",
            ));
        }
        for (k, list) in [("bodies", &c.bodies), ("geoms", &c.geoms)] {
            for (j, p) in list.iter().enumerate() {
                if let Err(err) = glob::Pattern::new(p) {
                    e.push(ConfigError::new(
                        format!("classes[{i}].{k}[{j}]"),
                        format!("`{p}` is not a glob: {err}"),
                    ));
                }
            }
        }
    }
    e
}

/// Class and instance of every geom (`class 0` = unlabelled).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelTable {
    /// Per geom: (class id, instance id = body id).
    pub geom: Vec<(u8, u16)>,
}

/// The names a model object answers to: compiled, and without any entity prefix it carries.
fn names<'a>(full: &'a str, entities: &'a EntityRegistry) -> impl Iterator<Item = &'a str> {
    std::iter::once(full).chain(
        entities
            .all()
            .iter()
            .filter(|e| !e.prefix.is_empty())
            .filter_map(move |e| full.strip_prefix(e.prefix.as_str())),
    )
}

fn any_glob(patterns: &[String], full: &str, entities: &EntityRegistry) -> bool {
    patterns.iter().any(|p| {
        let pat = glob::Pattern::new(p).expect("checked at load");
        names(full, entities).any(|n| pat.matches(n))
    })
}

impl LabelTable {
    /// Resolve the vocabulary against the compiled model. An unknown entity, or a class that
    /// selects no geom, is an error naming it.
    pub fn build(
        m: &MjModel,
        entities: &EntityRegistry,
        classes: &[ClassConfig],
    ) -> Result<Self, String> {
        let ngeom = m.ffi().ngeom as usize;
        let body_of = m.geom_bodyid();
        let mut roots: Vec<Vec<Vec<usize>>> = Vec::new();
        for (i, c) in classes.iter().enumerate() {
            let mut v = Vec::new();
            for name in &c.entities {
                let Some(ent) = entities.get(name) else {
                    return Err(format!(
                        "classes[{i}].entities: no entity `{name}`; entities: [{}]",
                        entities.names().join(", ")
                    ));
                };
                v.push(crate::plugins::shared::entity_roots(m, ent)?);
            }
            roots.push(v);
        }
        let mut geom = vec![(0u8, 0u16); ngeom];
        let mut hits = vec![0usize; classes.len()];
        for (g, slot) in geom.iter_mut().enumerate() {
            let b = body_of[g] as usize;
            let gname = m.id_to_name(MjtObjBase::mjOBJ_GEOM, g).unwrap_or("");
            let bname = m.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("");
            let hit = classes.iter().enumerate().find(|(i, c)| {
                (!gname.is_empty() && any_glob(&c.geoms, gname, entities))
                    || (!bname.is_empty() && any_glob(&c.bodies, bname, entities))
                    || roots[*i].iter().any(|r| crate::plugins::shared::in_entity(m, b, r))
            });
            if let Some((i, c)) = hit {
                hits[i] += 1;
                *slot = (c.class_id as u8, b.min(u16::MAX as usize) as u16);
            }
        }
        if let Some(i) = hits.iter().position(|&n| n == 0) {
            return Err(format!(
                "classes[{i}] (`{}`): its selectors match no geom of the model",
                classes[i].name
            ));
        }
        Ok(LabelTable { geom })
    }
}

/// What one segmentation render yields.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// Class id per pixel (mono8).
    pub classes: Vec<u8>,
    /// Instance (body id) per pixel, 0 where nothing labelled was hit.
    pub instances: Vec<u16>,
    /// Boxes of the instances with at least `min_pixels` visible pixels, by (body id, class).
    pub boxes: Vec<InstanceBox>,
}

/// The visible extent of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceBox {
    /// Body id.
    pub instance: u16,
    /// Class id.
    pub class_id: u8,
    /// First and last column (inclusive).
    pub u: (u32, u32),
    /// First and last row (inclusive).
    pub v: (u32, u32),
    /// Visible pixels.
    pub pixels: u32,
}

impl LabelTable {
    /// Class and instance images and the boxes of a frame's geom ids (`width` columns).
    pub fn label(&self, ids: &[i32], width: u32, min_pixels: u32) -> Labelled {
        let mut classes = vec![0u8; ids.len()];
        let mut instances = vec![0u16; ids.len()];
        let mut boxes: BTreeMap<(u16, u8), InstanceBox> = BTreeMap::new();
        for (i, &g) in ids.iter().enumerate() {
            let Some(&(c, inst)) = usize::try_from(g).ok().and_then(|g| self.geom.get(g)) else {
                continue;
            };
            if c == 0 {
                continue;
            }
            classes[i] = c;
            instances[i] = inst;
            let (u, v) = (i as u32 % width, i as u32 / width);
            let b = boxes.entry((inst, c)).or_insert(InstanceBox {
                instance: inst,
                class_id: c,
                u: (u, u),
                v: (v, v),
                pixels: 0,
            });
            b.u = (b.u.0.min(u), b.u.1.max(u));
            b.v = (b.v.0.min(v), b.v.1.max(v));
            b.pixels += 1;
        }
        let boxes = boxes.into_values().filter(|b| b.pixels >= min_pixels).collect();
        Labelled { classes, instances, boxes }
    }
}

/// The boxes as vision_msgs detections: class id (decimal) in the hypothesis, score 1, the
/// instance (decimal body id) as the detection id; a box spans its pixels' edges, so its centre
/// is the mean of the first and last pixel centres and its size their count.
pub fn detections(boxes: &[InstanceBox], stamp: f64, frame_id: &str) -> Detection2DArray {
    Detection2DArray {
        stamp,
        frame_id: frame_id.to_string(),
        detections: boxes
            .iter()
            .map(|b| Detection2D {
                class_id: b.class_id.to_string(),
                score: 1.0,
                center: [(b.u.0 + b.u.1) as f64 / 2.0, (b.v.0 + b.v.1) as f64 / 2.0],
                size: [(b.u.1 - b.u.0 + 1) as f64, (b.v.1 - b.v.0 + 1) as f64],
                id: b.instance.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_span_pixel_edges_and_min_pixels_filters() {
        // geoms: 0 unlabelled, 1 → class 2 of body 7, 2 → class 2 of body 7, 3 → class 1 of body 9
        let t = LabelTable { geom: vec![(0, 0), (2, 7), (2, 7), (1, 9)] };
        #[rustfmt::skip]
        let ids = [
            -1, 0, 1, 1,
            -1, 2, 1, 3,
             0, 0, 0, 0,
        ];
        let l = t.label(&ids, 4, 1);
        assert_eq!(l.classes, [0, 0, 2, 2, 0, 2, 2, 1, 0, 0, 0, 0]);
        assert_eq!(l.instances, [0, 0, 7, 7, 0, 7, 7, 9, 0, 0, 0, 0]);
        assert_eq!(
            l.boxes,
            [
                InstanceBox { instance: 7, class_id: 2, u: (1, 3), v: (0, 1), pixels: 4 },
                InstanceBox { instance: 9, class_id: 1, u: (3, 3), v: (1, 1), pixels: 1 },
            ]
        );
        let d = detections(&l.boxes, 1.5, "cam");
        assert_eq!(d.detections[0].center, [2.0, 0.5]);
        assert_eq!(d.detections[0].size, [3.0, 2.0]);
        assert_eq!((d.detections[0].id.as_str(), d.detections[0].class_id.as_str()), ("7", "2"));
        assert_eq!(d.detections[1].center, [3.0, 1.0]);
        assert_eq!(d.detections[1].size, [1.0, 1.0]);
        assert_eq!(t.label(&ids, 4, 2).boxes.len(), 1, "min_pixels 2 drops the 1-pixel instance");
    }
}
