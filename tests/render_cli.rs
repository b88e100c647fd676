//! `roqsim render`, run as the binary a user runs: pixels of a red box where the camera projects
//! it, the JSON line round-tripping into `--view` for the identical image, two renders of one
//! world identical, the clock overlay, a video's frame count and size read back with ffprobe,
//! and every refusal naming its flag. Rendering goes through the shared offscreen service (EGL,
//! Mesa's software device: scripts/setup.sh installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_roqsim");

/// A red 0.2 m cube 0.4 m right of where the camera looks, at the same depth.
const RED_BOX: &str = "sim:
  timestep: 0.002
  seed: 1
  view: {lookat: [0.0, 0.0, 0.2], distance: 2.0, azimuth: 90, elevation: -20}
components:
  - box: {pose: {position: {x: 0.4, y: 0.0, z: 0.2}}, size: [0.2, 0.2, 0.2], color: [1.0, 0.0, 0.0]}
    name: red
  - box: {pose: {position: {x: 0.0, y: 0.0, z: 1.5}}, size: [0.1, 0.1, 0.1], color: [0.2, 0.8, 0.2], motion: physics}
    name: falling
";

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn world(&self, text: &str) -> PathBuf {
        let p = self.path("world.yaml");
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn roqsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn render_ok(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = roqsim(args);
    assert_eq!(code, 0, "roqsim {args:?} failed:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "stdout is not one line: {out:?}");
    serde_json::from_str(lines[0]).unwrap()
}

fn read_png(p: &Path) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn px(img: &(u32, u32, Vec<u8>), u: u32, v: u32) -> [u8; 3] {
    let i = ((v * img.0 + u) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

/// Lit red: the red channel well above the others (a lit face of the rgb (1, 0, 0) cube is
/// about (191, 63, 63) under the room's light).
fn red(p: [u8; 3]) -> bool {
    let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
    r > 120 && r - g > 80 && r - b > 80
}

#[test]
fn red_box_is_red_where_the_camera_projects_it_and_nowhere_else() {
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let out = d.path("shot.png");
    let j = render_ok(&[
        "render",
        world.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--size",
        "320x240",
    ]);
    println!("{j}");
    assert_eq!(j["out"], out.to_str().unwrap());
    assert_eq!(j["time"], 0.0);
    assert_eq!(j["size"], serde_json::json!([320, 240]));
    assert_eq!(j["camera"]["azimuth"], 90.0);
    let img = read_png(&out);
    assert_eq!((img.0, img.1), (320, 240));
    // Pinhole projection with MuJoCo's default fovy 45 deg: the cube's centre is 0.4 m right of
    // the look-at point at the same depth (2 m): u = 160 + f * 0.4 / 2, f = 120 / tan(22.5 deg).
    let f = 120.0 / (22.5f64.to_radians()).tan();
    let u = (160.0 + f * 0.4 / 2.0).round() as u32;
    println!("box centre projects to ({u}, 120): {:?}", px(&img, u, 120));
    assert!(
        red(px(&img, u, 120)),
        "no red at the box's projection ({u}, 120): {:?}",
        px(&img, u, 120)
    );
    // Its half width (0.1 m) is ~14 px: red across it, and not at the mirrored spot or the corners.
    assert!(red(px(&img, u - 10, 120)) && red(px(&img, u + 10, 120)));
    let mirror = 320 - u;
    assert!(!red(px(&img, mirror, 120)), "red at the mirror ({mirror}, 120)");
    let reds =
        (0..240).flat_map(|v| (0..320).map(move |u| (u, v))).filter(|&(u, v)| red(px(&img, u, v)));
    let (mut n, mut umin, mut umax) = (0u32, u32::MAX, 0u32);
    for (x, _) in reds {
        n += 1;
        umin = umin.min(x);
        umax = umax.max(x);
    }
    println!("{n} red pixels, columns {umin}..={umax}");
    assert!(umin > 160 && umax < 260, "red outside the box's columns: {umin}..={umax}");
}

#[test]
fn json_round_trips_into_view_and_renders_are_identical() {
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let w = world.to_str().unwrap();
    let (a, b, c) = (d.path("a.png"), d.path("b.png"), d.path("c.png"));
    let args = |o: &Path| {
        vec![
            "render".to_string(),
            w.to_string(),
            "--at".into(),
            "0.3".into(),
            "--size".into(),
            "200x150".into(),
            "--view".into(),
            "azimuth=120.5,elevation=-35,distance=2.7".into(),
            "--out".into(),
            o.to_str().unwrap().to_string(),
        ]
    };
    let run = |v: Vec<String>| render_ok(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let ja = run(args(&a));
    let jb = run(args(&b));
    let t = ja["time"].as_f64().unwrap();
    assert!((t - 0.3).abs() < 1e-9, "rendered at {t} s");
    let (ia, ib) = (read_png(&a), read_png(&b));
    assert_eq!(ia.2, ib.2, "two renders of one world differ");
    // The falling cube moved between t=0 and t=0.3 s: the picture is of the state at --at.
    let j0 = run(vec![
        "render".into(),
        w.into(),
        "--size".into(),
        "200x150".into(),
        "--view".into(),
        "azimuth=120.5,elevation=-35,distance=2.7".into(),
        "--out".into(),
        d.path("t0.png").to_str().unwrap().into(),
    ]);
    assert_eq!(j0["time"], 0.0);
    assert_ne!(read_png(&d.path("t0.png")).2, ia.2, "t=0 and t=0.3 s look the same");
    // The printed camera, given back as --view over a world with a different sim.view, gives
    // the identical image.
    let other = d.path("other.yaml");
    std::fs::write(
        &other,
        RED_BOX.replace("azimuth: 90, elevation: -20", "azimuth: 10, elevation: -60"),
    )
    .unwrap();
    let view = ja["view"].as_str().unwrap().to_string();
    println!("--view {view}");
    let jc = run(vec![
        "render".into(),
        other.to_str().unwrap().into(),
        "--at".into(),
        "0.3".into(),
        "--size".into(),
        "200x150".into(),
        "--view".into(),
        view,
        "--out".into(),
        c.to_str().unwrap().into(),
    ]);
    assert_eq!(jc["camera"], ja["camera"]);
    assert_eq!(read_png(&c).2, ia.2, "the round-tripped camera renders another image");
    let _ = jb;
}

#[test]
fn clock_overlay_paints_the_corner() {
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let (plain, clock) = (d.path("plain.png"), d.path("clock.png"));
    let base = ["render", world.to_str().unwrap(), "--size", "320x240", "--at", "1.25"];
    render_ok(&[&base[..], &["--out", plain.to_str().unwrap()]].concat());
    render_ok(&[&base[..], &["--out", clock.to_str().unwrap(), "--overlay", "clock"]].concat());
    let (p, c) = (read_png(&plain), read_png(&clock));
    let mut changed_in_corner = 0;
    let mut changed_elsewhere = 0;
    for v in 0..240 {
        for u in 0..320 {
            if px(&p, u, v) != px(&c, u, v) {
                if u < 110 && v < 40 {
                    changed_in_corner += 1;
                } else {
                    changed_elsewhere += 1;
                }
            }
        }
    }
    println!("clock overlay changed {changed_in_corner} px in the top-left corner");
    assert!(changed_in_corner > 500);
    assert_eq!(changed_elsewhere, 0);
    assert!((0..40).any(|v| (0..110).any(|u| px(&c, u, v) == [255, 255, 255])));
}

#[test]
fn video_has_the_requested_frames_and_size() {
    if Command::new("ffprobe").arg("-version").output().is_err() {
        panic!("ffprobe missing: scripts/setup.sh installs ffmpeg (apt)");
    }
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let clip = d.path("clip.mp4");
    let j = render_ok(&[
        "render",
        world.to_str().unwrap(),
        "--video",
        clip.to_str().unwrap(),
        "--seconds",
        "1",
        "--fps",
        "12",
        "--size",
        "160x120",
        "--overlay",
        "clock",
    ]);
    println!("{j}");
    assert_eq!(j["frames"], 12);
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=nb_read_frames,width,height,codec_name", "-of", "csv=p=0"])
        .arg(&clip)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    println!("ffprobe: {s}");
    assert_eq!(s, "h264,160,120,12");
}

#[test]
fn refusals_name_the_flag() {
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let w = world.to_str().unwrap();
    let out = d.path("x.png");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--size", "0x240"], "error: --size 0x240: width and height must be 1..=8192 px, got 0x240"),
        (vec!["--size", "9000x100"], "error: --size 9000x100: width and height must be 1..=8192 px, got 9000x100"),
        (vec!["--size", "big"], "error: --size big: give WIDTHxHEIGHT in pixels, e.g. --size 1280x720"),
        (vec!["--view", "track=nobody"], "error: sim.view.track: no entity `nobody` in this world (--view track=...); entities: falling, red"),
        (vec!["--view", "zoom=3"], "sim.view"),
        (vec!["--at", "-1"], "error: --at must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got -1"),
        (vec!["--at", "1e308"], "error: --at must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got 1e308"),
        (vec!["--at", "NaN"], "error: --at must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got NaN"),
        (vec!["--seconds", "2"], "error: --seconds is the length of a --video; give --video FILE too"),
        (vec!["--overlay", "sun"], "error: --overlay sun: no overlay `sun`; registered: clock"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["render", w, "--out", o];
        args.extend(extra.iter());
        let (code, stdout, err) = roqsim(&args);
        assert_eq!(code, 2, "{extra:?} exited {code}: {err}");
        assert!(stdout.is_empty(), "{extra:?} printed on stdout: {stdout}");
        assert!(err.contains(want), "{extra:?}: wanted `{want}` in:\n{err}");
    }
    let (code, _, err) = roqsim(&["render", w, "--out", "/nonexistent-dir/x.png"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "error: --out /nonexistent-dir/x.png: the folder /nonexistent-dir does not exist"
        ),
        "{err}"
    );
    // --at beyond the run: a plugin ends it at 0.5 s.
    let stopping = d.path("stop.yaml");
    std::fs::write(&stopping, "components:\n  - dummy: {stop_at_s: 0.5}\n    name: a\n").unwrap();
    let (code, _, err) = roqsim(&["render", stopping.to_str().unwrap(), "--at", "2", "--out", o]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "error: --at: 2 s is beyond the run: it ended at 0.500 s (a reached stop_at_s = 0.5 s)"
        ),
        "{err}"
    );
    // ffmpeg missing: the install hint.
    let out2 = Command::new(BIN)
        .args(["render", w, "--video", d.path("v.mp4").to_str().unwrap(), "--seconds", "1"])
        .env("ROQSIM_FFMPEG", "/nonexistent/ffmpeg")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out2.stderr);
    assert_eq!(out2.status.code(), Some(2));
    assert!(err.contains("error: --video needs ffmpeg, and `/nonexistent/ffmpeg` is not installed: `apt-get install ffmpeg` (scripts/setup.sh installs it)"), "{err}");
}

/// A lit face of the falling rgb (0.2, 0.8, 0.2) cube.
fn green(p: [u8; 3]) -> bool {
    let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
    g > 100 && g - r > 50 && g - b > 50
}

/// Mean (u, v) of the pixels `pick` accepts, and how many.
fn centroid(img: &(u32, u32, Vec<u8>), pick: fn([u8; 3]) -> bool) -> (f64, f64, usize) {
    let (mut su, mut sv, mut n) = (0.0, 0.0, 0usize);
    for v in 0..img.1 {
        for u in 0..img.0 {
            if pick(px(img, u, v)) {
                su += u as f64;
                sv += v as f64;
                n += 1;
            }
        }
    }
    (su / n.max(1) as f64, sv / n.max(1) as f64, n)
}

#[test]
fn a_recording_renders_as_it_moved() {
    let d = Dir::new();
    // The boxes live in a parent world the recorded world extends.
    let parent = d.path("boxes.yaml");
    std::fs::write(&parent, RED_BOX).unwrap();
    let world = d.world("extends: boxes.yaml\n");
    let rec = d.path("run.mcap");
    let r = rec.to_str().unwrap();
    let (code, _, err) =
        roqsim(&["sim", world.to_str().unwrap(), "--seconds", "1", "-q", "--record", r]);
    assert_eq!(code, 0, "{err}");
    // The parent edited after the run: the render rebuilds what was recorded, and says so.
    std::fs::write(&parent, RED_BOX.replace("x: 0.4", "x: -0.4")).unwrap();
    let changed = format!(
        "note: {} changed on disk since the recording; the recorded text is used",
        parent.canonicalize().unwrap().display()
    );
    // back far enough to see the green box at its 1.5 m start and on the floor
    let view = "distance=5";
    let clip = d.path("rec.mp4");
    let j = render_ok(&[
        "render",
        r,
        "--video",
        clip.to_str().unwrap(),
        "--fps",
        "10",
        "--size",
        "160x120",
        "--view",
        view,
    ]);
    println!("{j}");
    // 1 s of samples at 10 frames per second, both ends included
    assert_eq!(
        (j["frames"].as_u64(), j["from_step"].as_u64(), j["to_step"].as_u64()),
        (Some(11), Some(0), Some(500))
    );
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=nb_read_frames,width,height,codec_name", "-of", "csv=p=0"])
        .arg(&clip)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "h264,160,120,11");
    let shot = |at: &str, name: &str| {
        let p = d.path(name);
        let j = render_ok(&[
            "render",
            r,
            "--at",
            at,
            "--out",
            p.to_str().unwrap(),
            "--size",
            "320x240",
            "--view",
            view,
        ]);
        println!("{j}");
        read_png(&p)
    };
    let first = shot("0", "first.png");
    // The parent deleted: still drawn from the recording.
    std::fs::remove_file(&parent).unwrap();
    let last = shot("1", "last.png");
    let (g0, g1) = (centroid(&first, green), centroid(&last, green));
    let (r0, r1) = (centroid(&first, red), centroid(&last, red));
    println!("green {g0:?} -> {g1:?}; red {r0:?} -> {r1:?}");
    assert!(g0.2 > 5 && g1.2 > 5, "the green box is in both pictures");
    // it fell from z = 1.5 m to the floor: far lower in the picture, straight down
    assert!(g1.1 - g0.1 > 30.0, "{g0:?} -> {g1:?}");
    assert!((g1.0 - g0.0).abs() < 3.0, "{g0:?} -> {g1:?}");
    // the welded red box is where the recorded world had it (x = 0.4: right of the centre), in
    // both pictures, pixel for pixel
    assert!(r0.2 > 20 && r0.0 > 160.0, "{r0:?}");
    assert_eq!(r0, r1);
    // Nothing past the recording's end: a time outside it, a video running past it.
    let (code, _, err) = roqsim(&["render", r, "--at", "1.5"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.lines().last().unwrap(),
        format!("error: {r}: --at 1.5: the recording holds sim times 0 s to 1 s (51 state samples): give a time in that range")
    );
    assert!(err.contains(&changed.replace("changed on disk", "is gone")), "{err}");
    let (code, _, err) =
        roqsim(&["render", r, "--at", "0.5", "--video", clip.to_str().unwrap(), "--seconds", "2"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.lines().last().unwrap(),
        "error: --seconds 2: the recording ends 0.5 s after the sample at 0.5 s (it holds sim times 0 s to 1 s): give --seconds at most 0.5, or leave it out to draw to the end"
    );
    // a recording renders what ran: no seed or overrides of its own
    let (code, _, err) = roqsim(&["render", r, "--seed", "3"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        format!("error: {r}: --seed does not apply to a recording (its seed is the recorded one)")
    );
}

/// The recording verbs' time arguments: a negative `--at` reaches the range check (it was a clap
/// "unexpected argument" with a `-- -1` tip), `replay --until` must be a run time (NaN and -1
/// replayed nothing and said "ok"), and a glob naming the always-kept state topic is no miss.
#[test]
fn recording_time_arguments_are_checked() {
    let d = Dir::new();
    let world = d.world(RED_BOX);
    let rec = d.path("run.mcap");
    let r = rec.to_str().unwrap();
    let (code, _, err) = roqsim(&[
        "sim",
        world.to_str().unwrap(),
        "--steps",
        "50",
        "-q",
        "--record",
        r,
        "--record-topics",
        "/roqsim/state",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("matches no topic"), "{err}");
    let (code, _, err) = roqsim(&["state", r, "--at", "-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(": --at -1: the recording holds sim times 0 s to 0.1 s ("), "{err}");
    for bad in ["nan", "-1", "inf"] {
        let (code, out, err) = roqsim(&["replay", r, "--until", bad]);
        assert_eq!((code, out.as_str()), (2, ""), "{bad}: {err}");
        let shown = if bad == "nan" { "NaN" } else { bad };
        assert_eq!(err, format!("error: --until {shown}: give a run time in seconds, 0 or more\n"));
    }
    let (code, out, err) = roqsim(&["replay", r, "--until", "0.05"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("replay ok: 25 steps"), "{out}");
    let (code, _, err) = roqsim(&[
        "sim",
        world.to_str().unwrap(),
        "--steps",
        "5",
        "-q",
        "--record",
        r,
        "--record-topics",
        ",",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "--record-topics `,` names no glob: give all, none or topic globs like /robot/*"
        ),
        "{err}"
    );
}
