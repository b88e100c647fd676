//! Reading a `prop_trajectory` path file: `x,y` rows (a path followed at `speed`), or timed poses
//! `t,x,y` / `t,x,y,yaw` (the pose at each time, interpolated), from a CSV or a YAML list of rows.
//!
//! CSV: blank lines and `#` comments are skipped, a first row that holds no numbers is a header;
//! every row has as many numbers as the first. YAML (`.yaml`/`.yml`): a list of rows, each a list
//! of numbers. Two numbers a row are `x,y`, three `t,x,y`, four `t,x,y,yaw`; x and y are in
//! `units`, t in seconds (increasing), yaw in radians.

use std::path::Path;

use super::PathUnits;

/// Largest path file read (bytes): the file is read whole at load.
pub const MAX_PATH_FILE_BYTES: u64 = 16 << 20;

/// A path file's contents, in metres.
#[derive(Debug, Clone, PartialEq)]
pub enum PathData {
    /// `x,y` rows: a path followed at a constant speed along its arc length.
    Points(Vec<[f64; 2]>),
    /// Timed poses: `t` (s, increasing) and `[x, y, yaw]` (yaw 0 when the file has none).
    Timed {
        /// Times (s).
        t: Vec<f64>,
        /// Poses at those times.
        pose: Vec<[f64; 3]>,
        /// The file gave a yaw column.
        yaw: bool,
    },
}

impl PathData {
    /// Rows read.
    pub fn len(&self) -> usize {
        match self {
            PathData::Points(p) => p.len(),
            PathData::Timed { t, .. } => t.len(),
        }
    }

    /// True with no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest |x| or |y| in the file's own units (before the unit scale).
    pub fn largest_coordinate(&self, units: PathUnits) -> f64 {
        let xy: Vec<[f64; 2]> = match self {
            PathData::Points(p) => p.clone(),
            PathData::Timed { pose, .. } => pose.iter().map(|p| [p[0], p[1]]).collect(),
        };
        xy.iter().flat_map(|p| [p[0].abs(), p[1].abs()]).fold(0.0, f64::max) / units.scale()
    }
}

/// Rows of numbers with the 1-based line each came from.
type Rows = Vec<(usize, Vec<f64>)>;

fn csv_rows(text: &str, shown: &str) -> Result<Rows, String> {
    let mut rows = Vec::new();
    let mut first = true;
    let mut width = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Vec<Option<f64>> =
            cells.iter().map(|c| c.parse::<f64>().ok().filter(|v| v.is_finite())).collect();
        let header = first && (2..=4).contains(&cells.len()) && parsed.iter().all(Option::is_none);
        let was_first = first;
        first = false;
        if header {
            continue;
        }
        if was_first || width == 0 {
            width = cells.len();
        }
        let nums: Option<Vec<f64>> = parsed.iter().copied().collect();
        match nums {
            Some(v) if v.len() == width && (2..=4).contains(&width) => rows.push((i + 1, v)),
            _ => {
                let row: String = line.chars().take(80).collect();
                return Err(format!("{shown}:{}: expected {}, got `{row}`", i + 1, shape(width)));
            }
        }
    }
    Ok(rows)
}

fn yaml_rows(text: &str, shown: &str) -> Result<Rows, String> {
    let v: Vec<Vec<f64>> = serde_norway::from_str(text).map_err(|e| {
        format!(
            "`{shown}`: a YAML path file is a list of rows, each a list of 2 to 4 numbers ({e})"
        )
    })?;
    let width = v.first().map_or(0, Vec::len);
    let mut rows = Vec::new();
    for (i, r) in v.into_iter().enumerate() {
        if r.len() != width || !(2..=4).contains(&width) || r.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "{shown}: row {i}: expected {}, got {} number(s)",
                shape(width),
                r.len()
            ));
        }
        rows.push((i, r));
    }
    Ok(rows)
}

/// What a row of `width` numbers holds, in words.
fn shape(width: usize) -> &'static str {
    match width {
        3 => "three finite numbers `t,x,y` like the first row",
        4 => "four finite numbers `t,x,y,yaw` like the first row",
        2 => "two finite numbers `x,y`",
        _ => "two finite numbers `x,y`, three `t,x,y` or four `t,x,y,yaw`",
    }
}

/// Read a path file; errors name `file:line` (CSV) or the row (YAML).
pub fn read_path(file: &Path, shown: &str, units: PathUnits) -> Result<PathData, String> {
    let where_ = if Path::new(shown).is_absolute() {
        String::new()
    } else {
        format!(
            "; a relative path is resolved against the world file's directory ({})",
            file.display()
        )
    };
    let m = std::fs::metadata(file)
        .map_err(|e| format!("`{shown}`: cannot read the path file ({e}){where_}"))?;
    if m.is_dir() {
        return Err(format!("`{shown}` is a directory; name a CSV file of `x,y` rows{where_}"));
    }
    if !m.is_file() {
        // a device or a pipe reports no size and may never end (/dev/zero, a FIFO)
        return Err(format!(
            "`{shown}` is not a regular file (a device, pipe or socket); name a CSV file of `x,y` rows"
        ));
    }
    if m.len() > MAX_PATH_FILE_BYTES {
        return Err(format!(
            "`{shown}` is {} bytes; a path file is read whole and may hold at most {MAX_PATH_FILE_BYTES} bytes (16 MiB)",
            m.len()
        ));
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("`{shown}`: cannot read the path file ({e}){where_}"))?;
    let yaml = matches!(
        file.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(),
        Some("yaml" | "yml")
    );
    let rows = if yaml { yaml_rows(&text, shown)? } else { csv_rows(&text, shown)? };
    if rows.len() < 2 {
        return Err(format!("`{shown}` holds {} point(s); a path needs at least 2", rows.len()));
    }
    let k = units.scale();
    if rows[0].1.len() == 2 {
        return Ok(PathData::Points(rows.iter().map(|(_, r)| [r[0] * k, r[1] * k]).collect()));
    }
    let yaw = rows[0].1.len() == 4;
    let mut t = Vec::with_capacity(rows.len());
    let mut pose: Vec<[f64; 3]> = Vec::with_capacity(rows.len());
    for (line, r) in &rows {
        let at = if yaml { format!("{shown}: row {line}") } else { format!("{shown}:{line}") };
        if r[0] < 0.0 {
            return Err(format!("{at}: t = {} s is before the start; times count from 0", r[0]));
        }
        if let Some(prev) = t.last() {
            if r[0] <= *prev {
                return Err(format!(
                    "{at}: t = {} s is not after the previous row's {prev} s; times must increase",
                    r[0]
                ));
            }
        }
        // yaw unwrapped along the file: each row turns the short way from the one before
        let mut y = if yaw { r[3] } else { 0.0 };
        if let Some(p) = pose.last() {
            y = p[2] + crate::math::wrap_angle(y - p[2]);
        }
        t.push(r[0]);
        pose.push([r[1] * k, r[2] * k, y]);
    }
    Ok(PathData::Timed { t, pose, yaw })
}

/// Timed poses, interpolated linearly (yaw the short way round, as unwrapped at load).
#[derive(Debug, Clone, PartialEq)]
pub struct TimedPath {
    /// Times (s), increasing.
    pub t: Vec<f64>,
    /// `[x, y, yaw]` at those times (m, m, rad; yaw unwrapped).
    pub pose: Vec<[f64; 3]>,
}

impl TimedPath {
    /// The pose at time `t`: the first row's before it, the last's after it.
    pub fn at(&self, t: f64) -> [f64; 3] {
        let n = self.t.len();
        if t <= self.t[0] {
            return self.pose[0];
        }
        if t >= self.t[n - 1] {
            return self.pose[n - 1];
        }
        let k = self.t.partition_point(|&x| x <= t) - 1;
        let f = (t - self.t[k]) / (self.t[k + 1] - self.t[k]);
        let (a, b) = (self.pose[k], self.pose[k + 1]);
        [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2])]
    }

    /// Time from the first row to the last (s).
    pub fn duration(&self) -> f64 {
        self.t[self.t.len() - 1] - self.t[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_holds_at_the_ends() {
        let p = TimedPath { t: vec![1.0, 3.0], pose: vec![[0.0, 0.0, 0.0], [2.0, -4.0, 1.0]] };
        assert_eq!(p.at(0.0), [0.0, 0.0, 0.0]);
        assert_eq!(p.at(2.0), [1.0, -2.0, 0.5]);
        assert_eq!(p.at(9.0), [2.0, -4.0, 1.0]);
        assert_eq!(p.duration(), 2.0);
    }
}
