//! Reading a file a user names — a world, a model, a height field image, a floorplan, a params
//! file, a recording: one way for every reader. A directory, a FIFO, a device or a socket is
//! refused before anything is read (opening a FIFO to read waits for a writer forever; `/dev/zero`
//! never ends), and so is a file larger than the reader's cap (checked from its size, and the read
//! itself stops one byte past the cap, as a file may grow while it is read).
//!
//! Files another library opens itself (MuJoCo reads an MJCF's includes, meshes and textures) are
//! checked with [`check_regular`] before that library is called.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a reader expects: how a refusal names the file to give instead, and the most bytes read.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    /// The file a refusal asks for ("a YAML file", "a PNG or .npy elevation image").
    pub file: &'static str,
    /// Largest file read (bytes).
    pub cap: u64,
}

/// A YAML document (world, parent, override, manifest, campaign): a few kilobytes written by
/// hand; 8 MiB leaves room for generated worlds while bounding the parse.
pub const YAML: Expect = Expect { file: "a YAML file", cap: 8 << 20 };

/// A model file (MJCF, URDF, an MJCF `<include>`): the largest published robot descriptions are
/// a few MB of XML.
pub const MODEL: Expect = Expect { file: "an MJCF or URDF file", cap: 64 << 20 };

/// A cap in words: `8 MiB`, `1 GiB`, or bytes below 1 KiB.
fn size_words(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// What a file that is not a regular file is, in words.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// What an existing path that cannot be read as a file is (`is a directory`, `is not a regular
/// file (a FIFO)`), or `None` when it is a regular file or does not exist.
pub fn not_a_file(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        Some("is a directory".into())
    } else if !meta.is_file() {
        Some(format!("is not a regular file ({})", kind_of(&meta.file_type())))
    } else {
        None
    }
}

/// The refusal of a file whose metadata says it cannot be read as `expect.file`.
fn refusal(path: &Path, what: &str, meta: &std::fs::Metadata, expect: Expect) -> Option<String> {
    let shown = path.display();
    if meta.is_dir() {
        return Some(format!("{what} `{shown}` is a directory: name {} in it", expect.file));
    }
    if !meta.is_file() {
        return Some(format!(
            "{what} `{shown}` is not a regular file ({}): name {}",
            kind_of(&meta.file_type()),
            expect.file
        ));
    }
    if meta.len() > expect.cap {
        return Some(too_large(path, what, meta.len(), expect));
    }
    None
}

fn too_large(path: &Path, what: &str, len: u64, expect: Expect) -> String {
    let words = size_words(expect.cap);
    let words = if words.ends_with(" bytes") { String::new() } else { format!(" ({words})") };
    format!(
        "{what} `{}` is {len} bytes; {} may be at most {} bytes{words}",
        path.display(),
        expect.file,
        expect.cap,
    )
}

/// Refuse `path` unless it is a regular file within `expect.cap` (`what` names it: "world",
/// "components.t.source: height field"). A missing file passes: the reader that opens it says so
/// in its own words.
pub fn check_regular(path: &Path, what: &str, expect: Expect) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) => refusal(path, what, &m, expect).map_or(Ok(()), Err),
        Err(_) => Ok(()),
    }
}

/// Refuse an ASCII STL mesh before MuJoCo reads it: MuJoCo's STL reader takes binary STL only
/// (it would fail with "number of faces should be between 1 and 200000 … perhaps this is an
/// ASCII file?"). A `.stl` file (any case) whose first bytes are `solid` and whose size is not
/// the binary layout's (84 + 50 × the triangle count at byte 80) is ASCII; anything else (a
/// binary STL whose header starts with `solid`, a missing or unreadable file) passes, and MuJoCo
/// says what it finds. `what` names the file's role as in [`check_regular`].
pub fn check_stl(path: &Path, what: &str) -> Result<(), String> {
    let is_stl =
        path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("stl"));
    if !is_stl {
        return Ok(());
    }
    let Ok(meta) = std::fs::metadata(path) else { return Ok(()) };
    if !meta.is_file() {
        return Ok(());
    }
    let Ok(f) = std::fs::File::open(path) else { return Ok(()) };
    let mut head = Vec::with_capacity(84);
    if f.take(84).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    let binary_size = (head.len() == 84)
        .then(|| 84 + 50 * u64::from(u32::from_le_bytes([head[80], head[81], head[82], head[83]])));
    let ascii = head.trim_ascii_start().starts_with(b"solid") && binary_size != Some(meta.len());
    if !ascii {
        return Ok(());
    }
    Err(format!(
        "{what} `{}` is an ASCII STL file; MuJoCo reads binary STL only: convert it to binary STL (e.g. `admesh --write-binary-stl=OUT.stl IN.stl`, or export it as binary STL from MeshLab or Blender) or to OBJ, and name the converted file",
        path.display()
    ))
}

/// Open `path` for reading, refusing what [`check_regular`] refuses, without ever blocking: the
/// open does not wait for a FIFO's writer, and the open file is checked again (it may have been
/// replaced after the first look).
pub fn open(path: &Path, what: &str, expect: Expect) -> Result<std::fs::File, String> {
    let cannot = |e: std::io::Error| format!("cannot read {what} `{}`: {e}", path.display());
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if let Some(m) = refusal(path, what, &meta, expect) {
        return Err(m);
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let meta = f.metadata().map_err(cannot)?;
    match refusal(path, what, &meta, expect) {
        Some(m) => Err(m),
        None => Ok(f),
    }
}

/// The bytes of `path` (see [`open`]), at most `expect.cap` of them.
pub fn read(path: &Path, what: &str, expect: Expect) -> Result<Vec<u8>, String> {
    let f = open(path, what, expect)?;
    let mut buf = Vec::new();
    f.take(expect.cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {what} `{}`: {e}", path.display()))?;
    if buf.len() as u64 > expect.cap {
        return Err(too_large(path, what, buf.len() as u64, expect));
    }
    Ok(buf)
}

/// The text of `path` (see [`read`]); a file that is not UTF-8 is refused naming it.
pub fn read_text(path: &Path, what: &str, expect: Expect) -> Result<String, String> {
    String::from_utf8(read(path, what, expect)?).map_err(|e| {
        format!(
            "cannot read {what} `{}`: it is not UTF-8 text ({})",
            path.display(),
            e.utf8_error()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Expect = Expect { file: "a text file", cap: 4 };

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.xml");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = read(&p, "model", SMALL).unwrap_err();
        assert_eq!(
            e,
            format!("model `{}` is not a regular file (a FIFO): name a text file", p.display())
        );
        assert_eq!(check_regular(&p, "model", SMALL).unwrap_err(), e);
    }

    #[test]
    fn devices_folders_and_large_files_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read(Path::new("/dev/zero"), "source", SMALL).unwrap_err(),
            "source `/dev/zero` is not a regular file (a character device): name a text file"
        );
        assert_eq!(
            read(dir.path(), "source", SMALL).unwrap_err(),
            format!("source `{}` is a directory: name a text file in it", dir.path().display())
        );
        let p = dir.path().join("big.txt");
        std::fs::write(&p, "12345").unwrap();
        assert_eq!(
            read(&p, "source", SMALL).unwrap_err(),
            format!("source `{}` is 5 bytes; a text file may be at most 4 bytes", p.display())
        );
        std::fs::write(&p, "1234").unwrap();
        assert_eq!(read_text(&p, "source", SMALL).unwrap(), "1234");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(read_text(&p, "source", SMALL).unwrap_err().contains("is not UTF-8 text"));
        assert_eq!(size_words(8 << 20), "8 MiB");
        assert_eq!(size_words(1 << 30), "1 GiB");
    }
}
