//! `roqsim catalog`: what is installed and where it comes from.
//!
//! - `models`: every model each provider ships (this package's own roots, and any package with
//!   `share/<package>/models` on `AMENT_PREFIX_PATH`), with its file, the headline sentence of
//!   its MJCF (the first sentence of the file's leading comment) and the licence its manifest
//!   states — read from the files, never restated here;
//! - `model NAME`: one model compiled on its own: its actuators with the joint (or tendon) each
//!   drives — the names an `actuators: each:` block keys on — bodies, sites, sensors, the vendor
//!   frames and the components its manifest brings;
//! - `worlds`: the bundled worlds and every package's `share/<package>/worlds`, with the
//!   `<package>:<world>` ref `extends:` takes and each world's headline (the first sentence of its
//!   leading comment block);
//! - `plugins`: every plugin this binary registers, with its summary and where it comes from.

use std::path::{Path, PathBuf};

use mujoco_rs::mujoco_c::mjtTrn;
use mujoco_rs::prelude::*;
use serde_json::{json, Value as Json};

use crate::world::compose::{package_world_roots, package_worlds};
use crate::world::models::{load_manifest, model_roots, resolve_model};

/// The first sentence of the leading `<!-- ... -->` comment of an MJCF file.
pub fn mjcf_headline(path: &Path) -> Option<String> {
    // Read as MuJoCo would be given it: a FIFO named `x.xml` is not opened (it would never end).
    let text = crate::input_file::read_text(path, "model", crate::input_file::MODEL).ok()?;
    let start = text.find("<!--")?;
    // The comment must come before the root element.
    if text[..start].contains("<mujoco") {
        return None;
    }
    let body = &text[start + 4..];
    let body = &body[..body.find("-->")?];
    first_sentence(body)
}

/// Words a period follows without ending a sentence (titles, Latin and measuring abbreviations).
const ABBREVIATIONS: [&str; 22] = [
    "approx", "e.g", "i.e", "etc", "vs", "cf", "fig", "no", "ca", "incl", "resp", "dia", "mr",
    "mrs", "ms", "dr", "prof", "st", "jr", "sr", "eq", "ref",
];

/// The first sentence of prose wrapped over lines: the lines joined, cut after the first `.`, `!`
/// or `?` that ends a word, is followed by a space and a capital (or the end), and does not close
/// an abbreviation (`approx.`, `e.g.`); a `.` inside a word (`v1.5`, `README.md`) never ends one.
pub fn first_sentence(text: &str) -> Option<String> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = flat.split(' ').collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        out.push(w);
        let ends = w.ends_with(['.', '!', '?']);
        let next_starts =
            words.get(i + 1).map(|n| n.starts_with(|c: char| c.is_uppercase() || c == '('));
        let stem = w.trim_end_matches(['.', '!', '?']).trim_start_matches('(').to_lowercase();
        if ends && next_starts != Some(false) && !ABBREVIATIONS.contains(&stem.as_str()) {
            break;
        }
    }
    Some(out.join(" ")).filter(|s| !s.is_empty())
}

/// The headline of a world YAML's text: the first sentence of its leading comment block (the
/// `#` lines before the first key, or a blank comment line after the text began), joined across
/// wrapped lines. A `#!` interpreter line and bare `#` lines before the text are not part of it.
pub fn yaml_headline(text: &str) -> Option<String> {
    let mut block = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = if i == 0 { line.trim_start_matches('\u{feff}') } else { line };
        let Some(c) = line.trim().strip_prefix('#') else { break };
        if i == 0 && c.starts_with('!') {
            continue;
        }
        if c.trim().is_empty() {
            if block.is_empty() {
                continue;
            }
            break;
        }
        block.push(c.trim());
    }
    first_sentence(&block.join(" "))
}

/// Model providers: (provider name, its model roots).
pub fn model_providers() -> Vec<(String, Vec<PathBuf>)> {
    let mut out = vec![("roqsim".to_string(), model_roots())];
    for prefix in crate::world::prefixes::ament_prefixes() {
        let Ok(rd) = std::fs::read_dir(prefix.join("share")) else { continue };
        let mut pkgs: Vec<_> = rd.flatten().collect();
        pkgs.sort_by_key(|e| e.file_name());
        for e in pkgs {
            let name = e.file_name().to_string_lossy().into_owned();
            let models = e.path().join("models");
            if name == "roqsim" || !models.is_dir() {
                continue;
            }
            match out.iter_mut().find(|(n, _)| n == &name) {
                Some((_, roots)) => roots.push(models),
                None => out.push((name, vec![models])),
            }
        }
    }
    out
}

fn models_in(root: &Path) -> Vec<(String, PathBuf)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(root) else { return v };
    for e in rd.flatten() {
        let p = e.path();
        let Some(n) = p.file_name().and_then(|n| n.to_str()).map(str::to_string) else { continue };
        if p.is_dir() && p.join(format!("{n}.xml")).is_file() {
            v.push((n.clone(), p.join(format!("{n}.xml"))));
        } else if let Some(stem) = n.strip_suffix(".xml") {
            v.push((stem.to_string(), p.clone()));
        }
    }
    v.sort();
    v
}

/// `catalog models`.
pub fn models() -> Json {
    let mut rows = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (provider, roots) in model_providers() {
        for root in roots {
            for (name, path) in models_in(&root) {
                if !seen.insert((provider.clone(), name.clone())) {
                    continue; // shadowed by an earlier root of the same provider
                }
                // A manifest that does not load is reported, with the licence it states still read.
                let (license, errors) =
                    match resolve_model(&path.display().to_string(), Path::new(".")) {
                        Ok(a) => match load_manifest(&a) {
                            Ok(m) => (m.license, Vec::new()),
                            Err(e) => (stated_license(&a.manifest_path()), vec![e]),
                        },
                        Err(e) => (None, vec![e]),
                    };
                rows.push(json!({
                    "name": name,
                    "ref": format!("{provider}:{name}"),
                    "provider": provider,
                    "path": path.display().to_string(),
                    "headline": mjcf_headline(&path),
                    "license": license,
                    "errors": errors,
                }));
            }
        }
    }
    json!({"models": rows})
}

/// The `license:` a manifest file states, read on its own (for a manifest refused as a whole).
fn stated_license(manifest: &Path) -> Option<String> {
    let text = crate::world::yaml::read_document(manifest, "model manifest").ok()?;
    let v = crate::world::yaml::parse_yaml(&text).ok()?;
    v.get("license")?.as_str().map(str::to_string)
}

/// `catalog model NAME`: compile it alone and list what a world can key on.
pub fn model(reference: &str) -> Result<Json, String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut loaded = crate::spawn::load_model(reference, &cwd)?;
    let m = loaded
        .spec
        .compile()
        .map_err(|e| format!("model `{reference}` does not compile on its own: {e}"))?;
    let name = |obj: MjtObjBase, i: usize| m.id_to_name(obj, i).unwrap_or("").to_string();
    let mut actuators = Vec::new();
    for a in 0..m.ffi().nu as usize {
        let trn = m.actuator_trntype()[a];
        let id = m.actuator_trnid()[a][0] as usize;
        let (kind, target) = match trn {
            mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT => {
                ("joint", name(MjtObjBase::mjOBJ_JOINT, id))
            }
            mjtTrn::mjTRN_TENDON => ("tendon", name(MjtObjBase::mjOBJ_TENDON, id)),
            mjtTrn::mjTRN_SITE => ("site", name(MjtObjBase::mjOBJ_SITE, id)),
            mjtTrn::mjTRN_BODY => ("body", name(MjtObjBase::mjOBJ_BODY, id)),
            _ => ("other", String::new()),
        };
        let mut row = json!({
            "name": name(MjtObjBase::mjOBJ_ACTUATOR, a),
            "ctrlrange": m.actuator_ctrlrange()[a],
            "forcerange": m.actuator_forcerange()[a],
        });
        row[kind] = json!(target);
        actuators.push(row);
    }
    let list = |obj: MjtObjBase, n: i64| -> Vec<String> {
        (0..n as usize).map(|i| name(obj, i)).filter(|s| !s.is_empty()).collect()
    };
    let f = m.ffi();
    let manifest = &loaded.manifest;
    let mut comps = Vec::new();
    for c in &manifest.components {
        comps.push(json!({"ref": c.plugin, "name": c.name, "label": c.label()}));
    }
    Ok(json!({
        "name": loaded.asset.path.file_stem().map(|s| s.to_string_lossy().into_owned()),
        "path": loaded.asset.path.display().to_string(),
        "manifest": loaded.asset.manifest_path().is_file().then(|| loaded.asset.manifest_path().display().to_string()),
        "headline": mjcf_headline(&loaded.asset.path),
        "license": manifest.license,
        "source": manifest.source,
        "actuators": actuators,
        "joints": list(MjtObjBase::mjOBJ_JOINT, f.njnt),
        "bodies": list(MjtObjBase::mjOBJ_BODY, f.nbody).into_iter().filter(|b| b != "world").collect::<Vec<_>>(),
        "sites": list(MjtObjBase::mjOBJ_SITE, f.nsite),
        "sensors": list(MjtObjBase::mjOBJ_SENSOR, f.nsensor),
        "frames": manifest.frames.iter().map(|fr| json!({"name": fr.name, "parent": fr.parent})).collect::<Vec<_>>(),
        "components": comps,
    }))
}

/// `catalog worlds`.
pub fn worlds() -> Json {
    let mut rows = Vec::new();
    let mut pkgs = vec!["roqsim".to_string()];
    for prefix in crate::world::prefixes::ament_prefixes() {
        let Ok(rd) = std::fs::read_dir(prefix.join("share")) else { continue };
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if e.path().join("worlds").is_dir() && !pkgs.contains(&n) {
                pkgs.push(n);
            }
        }
    }
    pkgs[1..].sort();
    for pkg in pkgs {
        let mut seen = std::collections::BTreeSet::new();
        for root in package_world_roots(&pkg) {
            for w in package_worlds(&root) {
                if !seen.insert(w.clone()) {
                    continue;
                }
                let path = root.join(format!("{w}.yaml"));
                // Read as a world is read: at most 8 MiB, and only a regular file (a FIFO or a
                // device named `x.yaml` would never end).
                let (headline, errors) = match crate::world::yaml::read_document(&path, "world") {
                    Ok(text) => (yaml_headline(&text), vec![]),
                    Err(m) => (None, vec![m]),
                };
                rows.push(json!({
                    "name": w,
                    "ref": format!("{pkg}:{w}"),
                    "package": pkg,
                    "path": path.display().to_string(),
                    "headline": headline,
                    "errors": errors,
                }));
            }
        }
    }
    json!({"worlds": rows})
}

/// `catalog plugins`.
pub fn plugins() -> Json {
    let rows: Vec<Json> = crate::plugins::registry()
        .iter()
        .map(|d| {
            json!({
                "name": d.name,
                "summary": d.summary,
                "provider": crate::plugins::provider_of(d.name),
                "provides_world": d.flags.provides_world,
                "transport_only": d.flags.transport_only,
                "requires_owner": d.flags.requires_owner,
            })
        })
        .collect();
    json!({"plugins": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_is_the_first_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.xml");
        std::fs::write(&p, "<!-- A small rover for MuJoCo. Second sentence.\n more -->\n<mujoco/>")
            .unwrap();
        assert_eq!(mjcf_headline(&p).as_deref(), Some("A small rover for MuJoCo."));
        std::fs::write(&p, "<mujoco><!-- inside --></mujoco>").unwrap();
        assert_eq!(mjcf_headline(&p), None);
    }

    #[test]
    fn first_sentence_joins_lines_and_skips_abbreviations() {
        assert_eq!(
            first_sentence(
                "A UR5e arm on a Husky A200-class\nskid-steer base (issue 6). Neither model"
            )
            .as_deref(),
            Some("A UR5e arm on a Husky A200-class skid-steer base (issue 6).")
        );
        assert_eq!(
            first_sentence("A box approx. 3 m wide, per v1.5 of README.md. Next.").as_deref(),
            Some("A box approx. 3 m wide, per v1.5 of README.md.")
        );
        assert_eq!(first_sentence("No full stop at all").as_deref(), Some("No full stop at all"));
    }

    #[test]
    fn titles_and_latin_abbreviations_do_not_end_a_headline() {
        assert_eq!(
            first_sentence("A shop run by Mr. Smith and Dr. Jones, e.g. Tuesdays. Next one.")
                .as_deref(),
            Some("A shop run by Mr. Smith and Dr. Jones, e.g. Tuesdays.")
        );
        assert_eq!(
            first_sentence("Two rovers (e.g. Husky) on St. Kilda. Next.").as_deref(),
            Some("Two rovers (e.g. Husky) on St. Kilda.")
        );
    }

    #[test]
    fn a_world_headline_skips_an_interpreter_line_and_leading_bare_hashes() {
        let h = |t: &str| yaml_headline(t);
        assert_eq!(
            h("#!/usr/bin/env roqsim sim\n# A warehouse aisle. More.\nsim: {}\n").as_deref(),
            Some("A warehouse aisle.")
        );
        assert_eq!(
            h("#\n# A warehouse aisle.\n#\n# Not this.\n").as_deref(),
            Some("A warehouse aisle.")
        );
        assert_eq!(h("#!/usr/bin/env roqsim\n#\n#\nsim: {}\n"), None);
        assert_eq!(h("\u{feff}# With a BOM. X.\n").as_deref(), Some("With a BOM."));
        assert_eq!(h("sim: {} # not a headline\n"), None);
    }
}
