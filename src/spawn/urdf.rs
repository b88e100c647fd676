//! URDF in: a spawn's `model:` given as a `.urdf` file, a `package://<pkg>/<path>.urdf` URI or a
//! `.urdf.xacro`, compiled by MuJoCo's own URDF reader.
//!
//! What roqsim does before handing MuJoCo the text, and why (docs/models.md, "URDF in"):
//! - **xacro** is expanded by the PyPI `xacro` package (run by `python3`, or `$ROQSIM_PYTHON`);
//!   without it the spawn is refused with the install hint, never guessed at;
//! - **mesh filenames** (`package://`, `file://`, relative to the file or to the `meshdir` its
//!   `<mujoco><compiler>` states) are rewritten to absolute paths: MuJoCo knows no `package://`,
//!   and one world holds models from several places. A mesh found nowhere, or in a format MuJoCo
//!   cannot read (`.dae`), is refused naming the link, the paths searched and the conversion;
//! - **names are the URDF's**: MuJoCo's URDF defaults (`fusestatic`, `strippath`,
//!   `discardvisual` all on) would merge every fixed link into its parent (its frame gone from TF),
//!   strip the absolute mesh paths and drop the visual geometry the cameras see. The text gets a
//!   `<mujoco><compiler fusestatic="false" strippath="false" discardvisual="false"/>` (an existing
//!   `<compiler>` keeps its other settings, e.g. `balanceinertia`), so every link is a body and every
//!   joint a joint of the same name: /joint_states and TF match the user's description;
//! - **joint types MuJoCo lacks** are refused: `planar` (MuJoCo's reader splits it into three joints
//!   `<name>_TX`, `_TY`, `_RZ`, names nothing else knows) and `floating` below another link (MuJoCo
//!   allows a free joint only on a body of the world).
//!
//! A URDF declares no actuators: the spawn's `actuators: {add: [...], control: ...}` creates them;
//! each joint's `<limit effort=>` bounds its actuator force (MuJoCo's joint `actuatorfrcrange`) and
//! its `velocity=` is the default command range of a created `velocity` actuator ([`apply_limits`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use mujoco_rs::prelude::*;
use quick_xml::events::{BytesStart, Event};
use quick_xml::XmlVersion;

use crate::spawn::actuators::{ActuatorsBlock, Control};

/// Mesh formats MuJoCo 3.17 reads (lower case, no dot).
pub const MESH_FORMATS: [&str; 3] = ["stl", "obj", "msh"];

/// The compiler settings forced on a URDF (see the module docs).
const FORCED: [(&str, &str); 3] =
    [("fusestatic", "false"), ("strippath", "false"), ("discardvisual", "false")];

/// True for a model file MuJoCo reads as URDF here (`.urdf`, `.xacro`).
pub fn is_urdf(path: &Path) -> bool {
    let n = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    n.ends_with(".urdf") || n.ends_with(".xacro")
}

/// One `<joint>` of a URDF (direct child of `<robot>`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UrdfJoint {
    /// `name=`.
    pub name: String,
    /// `type=` (revolute, continuous, prismatic, fixed, floating, planar).
    pub kind: String,
    /// `<parent link=>`.
    pub parent: String,
    /// `<child link=>`.
    pub child: String,
    /// `<limit effort=>` (N·m or N), when stated.
    pub effort: Option<f64>,
    /// `<limit velocity=>` (rad/s or m/s), when stated.
    pub velocity: Option<f64>,
    /// `<limit lower= upper=>` (rad or m), when both are stated.
    pub range: Option<[f64; 2]>,
}

/// A URDF ready for MuJoCo.
#[derive(Debug, Clone, Default)]
pub struct UrdfSource {
    /// The file.
    pub path: PathBuf,
    /// The description as the user wrote it (xacro expanded): what `robot_description` carries.
    pub text: String,
    /// The text MuJoCo compiles: mesh paths absolute, the compiler settings above.
    pub rewritten: String,
    /// Link names, file order.
    pub links: Vec<String>,
    /// Joints, file order.
    pub joints: Vec<UrdfJoint>,
}

/// The Python that runs xacro: `$ROQSIM_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("ROQSIM_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or("python3".into())
}

/// Expand a `.xacro` file with the PyPI `xacro` package run by `python`. Refused with the install
/// hint when that Python cannot run it.
pub fn expand_xacro(path: &Path, python: &str) -> Result<String, String> {
    let hint = format!(
        "expanding `{}` needs the PyPI package `xacro` importable by `{python}`: `{python} -m pip install xacro` (or set ROQSIM_PYTHON to a Python that has it), or expand it yourself (`xacro {} > robot.urdf`) and spawn the .urdf",
        path.display(),
        path.display()
    );
    // The PyPI package has no `__main__`: call its entry point as the `xacro` script does.
    let out = Command::new(python)
        .args(["-c", "import sys, xacro; sys.argv[0] = 'xacro'; sys.exit(xacro.main())"])
        .arg(path)
        .output()
        .map_err(|e| format!("{hint} (cannot run `{python}`: {e})"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named xacro") || err.contains("No module named 'xacro'") {
            return Err(hint);
        }
        return Err(format!("xacro failed on `{}`: {}", path.display(), err.trim()));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("xacro output of `{}`: {e}", path.display()))
}

/// One edit of the text: bytes `start..end` become `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

fn attr(e: &BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key.as_bytes())
        .and_then(|a| a.normalized_value(XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `<tag a="..." ...>` rebuilt with `set` replacing (or adding) attributes.
fn rebuild(e: &BytesStart, empty: bool, set: &[(&str, String)]) -> String {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut s = format!("<{name}");
    for a in e.attributes().flatten() {
        let k = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        if set.iter().any(|(sk, _)| *sk == k) {
            continue;
        }
        let v =
            a.normalized_value(XmlVersion::Implicit1_0).map(|v| v.into_owned()).unwrap_or_default();
        s.push_str(&format!(" {k}=\"{}\"", xml_escape(&v)));
    }
    for (k, v) in set {
        s.push_str(&format!(" {k}=\"{}\"", xml_escape(v)));
    }
    s.push_str(if empty { "/>" } else { ">" });
    s
}

/// The links (file order) and joints (with parent, child and limits) of a URDF text.
pub fn tree(text: &str) -> Result<(Vec<String>, Vec<UrdfJoint>), String> {
    let mut links = Vec::new();
    let mut joints: Vec<UrdfJoint> = Vec::new();
    let mut r = quick_xml::Reader::from_str(text);
    let mut stack: Vec<String> = Vec::new();
    loop {
        let ev = r.read_event().map_err(|e| format!("not well-formed XML: {e}"))?;
        let (e, empty) = match &ev {
            Event::Start(e) => (e.clone(), false),
            Event::Empty(e) => (e.clone(), true),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let n = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        match (stack.len(), n.as_str()) {
            (1, "link") => links.push(attr(&e, "name").unwrap_or_default()),
            (1, "joint") => joints.push(UrdfJoint {
                name: attr(&e, "name").unwrap_or_default(),
                kind: attr(&e, "type").unwrap_or_default(),
                ..Default::default()
            }),
            (2, "parent") | (2, "child") | (2, "limit") if stack[1] == "joint" => {
                let j = joints.last_mut().expect("inside a joint");
                match n.as_str() {
                    "parent" => j.parent = attr(&e, "link").unwrap_or_default(),
                    "child" => j.child = attr(&e, "link").unwrap_or_default(),
                    _ => {
                        j.effort = attr(&e, "effort").and_then(|v| v.trim().parse().ok());
                        j.velocity = attr(&e, "velocity").and_then(|v| v.trim().parse().ok());
                        let num = |k: &str| attr(&e, k).and_then(|v| v.trim().parse::<f64>().ok());
                        j.range = num("lower").zip(num("upper")).map(|(a, b)| [a, b]);
                    }
                }
            }
            _ => {}
        }
        if !empty {
            stack.push(n);
        }
    }
    Ok((links, joints))
}

/// Read a URDF (expanding xacro), check it, and rewrite it for MuJoCo (see the module docs).
pub fn prepare(path: &Path) -> Result<UrdfSource, String> {
    let text = if path.to_string_lossy().ends_with(".xacro") {
        expand_xacro(path, &python())?
    } else {
        crate::input_file::read_text(path, "URDF", crate::input_file::MODEL)?
    };
    prepare_text(path, text)
}

/// [`prepare`] of a description already read (`path` names it and anchors relative meshes).
pub fn prepare_text(path: &Path, text: String) -> Result<UrdfSource, String> {
    let file = path.display().to_string();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // Pass 1: structure, the stated meshdir; meshes resolve there first, then beside the file.
    let mut mesh_dirs = Vec::new();
    if let Some(md) = stated_meshdir(&text, &file)? {
        let d = Path::new(&md);
        mesh_dirs.push(if d.is_absolute() { d.to_path_buf() } else { dir.join(d) });
    }
    mesh_dirs.push(dir.clone());
    // Pass 2: meshes and the compiler settings: the edits.
    let (links, joints) = tree(&text).map_err(|e| format!("URDF `{file}` is {e}"))?;
    let mut found = edits(&text, &file, &mesh_dirs)?;
    check_joint_types(&joints, &file)?;
    if let Some(e) = compiler_insert(&text, &file, &found)? {
        found.edits.push(e);
    }
    let mut edits = found.edits;
    edits.sort_by_key(|e| e.start);
    let mut rewritten = text.clone();
    for e in edits.iter().rev() {
        rewritten.replace_range(e.start..e.end, &e.with);
    }
    Ok(UrdfSource { path: path.to_path_buf(), text, rewritten, links, joints })
}

fn not_xml(file: &str, e: quick_xml::Error, pos: u64) -> String {
    format!("URDF `{file}` is not well-formed XML (byte {pos}): {e}")
}

/// The `meshdir` a `<mujoco><compiler>` states, after checking the root is `<robot>`.
fn stated_meshdir(text: &str, file: &str) -> Result<Option<String>, String> {
    let mut meshdir: Option<String> = None;
    let mut r = quick_xml::Reader::from_str(text);
    let mut stack: Vec<String> = Vec::new();
    loop {
        let ev = r.read_event().map_err(|e| not_xml(file, e, r.buffer_position()))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let n = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if stack.is_empty() && n != "robot" {
                    return Err(format!(
                        "model `{file}`: its root element is <{n}>, not <robot>: a .urdf file holds a URDF (an MJCF file ends in .xml)"
                    ));
                }
                if n == "compiler" && stack.len() == 2 && stack[1] == "mujoco" {
                    meshdir = attr(e, "meshdir");
                }
                if matches!(ev, Event::Start(_)) {
                    stack.push(n);
                }
            }
            Event::End(_) => {
                stack.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(meshdir)
}

/// What the second pass finds: the edits (forced compiler settings, absolute mesh paths) and
/// where the compiler settings go when the file states none.
struct Found {
    edits: Vec<Edit>,
    /// Byte offset just after `<robot ...>`.
    root_open_end: Option<usize>,
    has_mujoco: bool,
    has_compiler: bool,
}

/// Pass 2: the forced settings written into a stated `<compiler>`, every link mesh resolved to
/// an absolute path (and refused when MuJoCo cannot load its format).
fn edits(text: &str, file: &str, mesh_dirs: &[PathBuf]) -> Result<Found, String> {
    let mut found =
        Found { edits: Vec::new(), root_open_end: None, has_mujoco: false, has_compiler: false };
    let mut link = String::new();
    let mut r = quick_xml::Reader::from_str(text);
    let mut stack: Vec<String> = Vec::new();
    loop {
        let start = r.buffer_position() as usize;
        let ev = r.read_event().map_err(|e| not_xml(file, e, r.buffer_position()))?;
        let end = r.buffer_position() as usize;
        let (e, empty) = match &ev {
            Event::Start(e) => (e.clone(), false),
            Event::Empty(e) => (e.clone(), true),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let n = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let depth = stack.len();
        match (depth, n.as_str()) {
            (0, "robot") => {
                if empty {
                    return Err(format!("URDF `{file}` has an empty <robot>: no links to spawn"));
                }
                found.root_open_end = Some(end);
            }
            (1, "link") => link = attr(&e, "name").unwrap_or_default(),
            (1, "mujoco") => found.has_mujoco = true,
            (2, "compiler") if stack[1] == "mujoco" => {
                found.has_compiler = true;
                let set: Vec<(&str, String)> =
                    FORCED.iter().map(|(k, v)| (*k, v.to_string())).collect();
                // discardvisual stays as the file states it.
                let set: Vec<(&str, String)> = set
                    .into_iter()
                    .filter(|(k, _)| *k != "discardvisual" || attr(&e, "discardvisual").is_none())
                    .collect();
                found.edits.push(Edit { start, end, with: rebuild(&e, empty, &set) });
            }
            (_, "mesh") if depth >= 3 && stack[1] == "link" => {
                let abs = link_mesh(&e, file, &link, mesh_dirs)?;
                found.edits.push(Edit {
                    start,
                    end,
                    with: rebuild(&e, empty, &[("filename", abs.display().to_string())]),
                });
            }
            _ => {}
        }
        if !empty {
            stack.push(n);
        }
    }
    Ok(found)
}

/// The absolute path of a link's `<mesh>`, refused when MuJoCo cannot load its format.
fn link_mesh(
    e: &BytesStart,
    file: &str,
    link: &str,
    mesh_dirs: &[PathBuf],
) -> Result<PathBuf, String> {
    let f = attr(e, "filename").unwrap_or_default();
    let abs =
        resolve_mesh(&f, mesh_dirs).map_err(|m| format!("model `{file}`, link `{link}`: {m}"))?;
    let ext =
        abs.extension().and_then(|x| x.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    if !MESH_FORMATS.contains(&ext.as_str()) {
        let stem = abs.file_stem().and_then(|s| s.to_str()).unwrap_or("mesh");
        let fname = abs.file_name().and_then(|s| s.to_str()).unwrap_or("mesh");
        return Err(format!(
            "model `{file}`, link `{link}`: mesh `{f}` is a .{ext} file, which MuJoCo cannot load (it reads .stl, .obj and .msh); convert it, e.g. `python3 -c \"import trimesh; trimesh.load('{fname}', force='mesh').export('{stem}.obj')\"`, and point the URDF at {stem}.obj"
        ));
    }
    Ok(abs)
}

/// Joint types MuJoCo lacks are refused with the way to model them.
fn check_joint_types(joints: &[UrdfJoint], file: &str) -> Result<(), String> {
    for j in joints {
        match j.kind.as_str() {
            "planar" => {
                return Err(format!(
                    "model `{file}`: joint `{}` is `planar`, a joint type MuJoCo lacks (its URDF reader would make three joints `{0}_TX`, `{0}_TY`, `{0}_RZ` that /joint_states and TF would not match); model it as two prismatic joints and a revolute one through massless links",
                    j.name
                ))
            }
            "floating" if j.parent != "world" => {
                return Err(format!(
                    "model `{file}`: joint `{}` is `floating` below link `{}`, and MuJoCo allows a free joint only on a body of the world: a floating joint must have the parent link `world`, or spawn the link as its own robot",
                    j.name, j.parent
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The forced compiler settings where the file states no `<compiler>`: into its `<mujoco>`, else
/// a `<mujoco>` of their own after `<robot ...>`. `None` when a `<compiler>` was edited.
fn compiler_insert(text: &str, file: &str, found: &Found) -> Result<Option<Edit>, String> {
    if found.has_mujoco && found.has_compiler {
        return Ok(None);
    }
    let root_open_end = found.root_open_end.unwrap_or(0);
    let attrs: String = FORCED.iter().map(|(k, v)| format!(" {k}=\"{v}\"")).collect();
    let (at, with) = if found.has_mujoco {
        // A <mujoco> without <compiler>: a second <mujoco> would be ignored, so give it one.
        let pos = text[root_open_end..]
            .find("<mujoco")
            .and_then(|i| text[root_open_end + i..].find('>').map(|k| root_open_end + i + k + 1))
            .ok_or_else(|| {
                format!("URDF `{file}`: cannot place the compiler settings in its <mujoco>")
            })?;
        if text[..pos].ends_with("/>") {
            return Err(format!(
                "URDF `{file}` has an empty <mujoco/>: remove it or give it a <compiler>"
            ));
        }
        (pos, format!("<compiler{attrs}/>"))
    } else {
        (root_open_end, format!("\n  <mujoco><compiler{attrs}/></mujoco>"))
    };
    Ok(Some(Edit { start: at, end: at, with }))
}

/// The absolute path of a URDF mesh `filename`: `package://` through the ROS package paths,
/// `file://` and absolute paths as written, a relative one in `dirs` (the stated `meshdir`, then
/// the file's folder). A mesh found nowhere is refused naming the paths searched.
pub fn resolve_mesh(filename: &str, dirs: &[PathBuf]) -> Result<PathBuf, String> {
    if filename.is_empty() {
        return Err("a <mesh> without filename=".into());
    }
    if filename.starts_with("package://") {
        return crate::world::models::resolve_package_uri(filename)
            .map_err(|e| format!("mesh {e}"));
    }
    let plain = filename.strip_prefix("file://").unwrap_or(filename);
    let tried: Vec<PathBuf> = if Path::new(plain).is_absolute() {
        vec![PathBuf::from(plain)]
    } else {
        dirs.iter().map(|d| d.join(plain)).collect()
    };
    let found = tried.iter().find(|p| p.exists()).cloned().ok_or_else(|| {
        format!(
            "mesh `{filename}` not found; searched {}",
            tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    })?;
    // MuJoCo opens the mesh itself: a FIFO or a device would hang or swell it.
    let mesh = crate::input_file::Expect { file: "a mesh file (STL, OBJ)", cap: u64::MAX };
    crate::input_file::check_regular(&found, &format!("mesh `{filename}`:"), mesh)?;
    crate::input_file::check_stl(&found, &format!("mesh `{filename}`:"))?;
    Ok(found)
}

/// Compile-ready spec of a prepared URDF.
pub fn spec_of(src: &UrdfSource) -> Result<MjSpec, String> {
    MjSpec::from_xml_string(&src.rewritten)
        .map_err(|e| format!("MuJoCo cannot load URDF `{}`: {e}", src.path.display()))
}

/// `block` with the URDF's limits on the actuators its `add:` creates, where no `ctrlrange` is
/// stated: a created `velocity` actuator commands within ±`<limit velocity=>`, a `position` or
/// `impedance` one within `[lower, upper]` of a `revolute`/`prismatic` joint (an
/// `each.<joint>.ctrlrange`, so the resolved actuator table shows it). Effort limits need nothing
/// here: MuJoCo's reader makes them the joint's actuator force range.
pub fn with_limits(block: &ActuatorsBlock, src: &UrdfSource) -> ActuatorsBlock {
    let mut out = block.clone();
    for j in &block.add {
        let own =
            block.each.iter().find(|(n, _)| n == j).map(|(_, g)| g.clone()).unwrap_or_default();
        let control = own.control.or(block.shared.control);
        let stated = own.ctrlrange.or(block.shared.ctrlrange).is_some();
        let Some(uj) = src.joints.iter().find(|x| &x.name == j) else { continue };
        if stated {
            continue;
        }
        let range = match control {
            Some(Control::Velocity) => uj.velocity.filter(|v| *v > 0.0).map(|v| [-v, v]),
            Some(Control::Position | Control::Impedance) if uj.kind != "continuous" => {
                uj.range.filter(|r| r[0] < r[1])
            }
            _ => None,
        };
        let Some(range) = range else { continue };
        match out.each.iter_mut().find(|(n, _)| n == j) {
            Some((_, g)) => g.ctrlrange = Some(range),
            None => out.each.push((
                j.clone(),
                crate::spawn::actuators::Gains { ctrlrange: Some(range), ..Default::default() },
            )),
        }
    }
    out
}

/// Blackboard key of the URDF an entity was spawned from (its `robot_description`).
pub fn source_key(entity: &str) -> String {
    format!("urdf_source:{entity}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_settings_are_injected_or_merged() {
        let t = "<robot name=\"r\"><link name=\"a\"/></robot>".to_string();
        let s = prepare_text(Path::new("/tmp/r.urdf"), t).unwrap();
        assert_eq!(
            s.rewritten,
            "<robot name=\"r\">\n  <mujoco><compiler fusestatic=\"false\" strippath=\"false\" discardvisual=\"false\"/></mujoco><link name=\"a\"/></robot>"
        );
        let t = "<robot name=\"r\"><mujoco><compiler balanceinertia='true' fusestatic=\"true\" discardvisual=\"true\"/></mujoco><link name=\"a\"/></robot>".to_string();
        let s = prepare_text(Path::new("/tmp/r.urdf"), t).unwrap();
        assert!(
            s.rewritten.contains("<compiler balanceinertia=\"true\" discardvisual=\"true\" fusestatic=\"false\" strippath=\"false\"/>"),
            "{}",
            s.rewritten
        );
        assert_eq!(s.links, vec!["a".to_string()]);
    }
}
