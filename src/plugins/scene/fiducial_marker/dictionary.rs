//! The fiducial dictionaries: AprilTag 16h5 / 25h9 / 36h10 / 36h11 and the ArUco dictionaries
//! (4x4 … 7x7 in sizes 50 / 100 / 250 / 1000, the original ArUco, ArUco MIP 36h12), as data.
//!
//! The tables under `data/fiducials/` hold every marker's data bits (row-major, most significant
//! bit = top-left cell, 1 = white), generated once at development time from OpenCV's predefined
//! dictionaries (each file names its source). An ArUco dictionary of N < 1000 markers is the
//! first N of its 1000-marker table, as in OpenCV.

/// One dictionary: its name, the table it reads, data bits per side, and how many ids it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The `family:` name.
    pub name: &'static str,
    /// Data bits per side (the marker is this plus a one-cell black border per side).
    pub bits: usize,
    /// Ids 0..count.
    pub count: usize,
    table: &'static str,
}

const T16H5: &str = include_str!("../../../../data/fiducials/apriltag_16h5.txt");
const T25H9: &str = include_str!("../../../../data/fiducials/apriltag_25h9.txt");
const T36H10: &str = include_str!("../../../../data/fiducials/apriltag_36h10.txt");
const T36H11: &str = include_str!("../../../../data/fiducials/apriltag_36h11.txt");
const TORIG: &str = include_str!("../../../../data/fiducials/aruco_original.txt");
const TMIP: &str = include_str!("../../../../data/fiducials/aruco_mip_36h12.txt");
const T4: &str = include_str!("../../../../data/fiducials/aruco_4x4_1000.txt");
const T5: &str = include_str!("../../../../data/fiducials/aruco_5x5_1000.txt");
const T6: &str = include_str!("../../../../data/fiducials/aruco_6x6_1000.txt");
const T7: &str = include_str!("../../../../data/fiducials/aruco_7x7_1000.txt");

macro_rules! fam {
    ($n:expr, $b:expr, $c:expr, $t:expr) => {
        Family { name: $n, bits: $b, count: $c, table: $t }
    };
}

/// Every dictionary, in the order `plugins describe` and the refusals list them.
pub const FAMILIES: &[Family] = &[
    fam!("apriltag_36h11", 6, 587, T36H11),
    fam!("apriltag_25h9", 5, 35, T25H9),
    fam!("apriltag_16h5", 4, 30, T16H5),
    fam!("apriltag_36h10", 6, 2320, T36H10),
    fam!("aruco_4x4_50", 4, 50, T4),
    fam!("aruco_4x4_100", 4, 100, T4),
    fam!("aruco_4x4_250", 4, 250, T4),
    fam!("aruco_4x4_1000", 4, 1000, T4),
    fam!("aruco_5x5_50", 5, 50, T5),
    fam!("aruco_5x5_100", 5, 100, T5),
    fam!("aruco_5x5_250", 5, 250, T5),
    fam!("aruco_5x5_1000", 5, 1000, T5),
    fam!("aruco_6x6_50", 6, 50, T6),
    fam!("aruco_6x6_100", 6, 100, T6),
    fam!("aruco_6x6_250", 6, 250, T6),
    fam!("aruco_6x6_1000", 6, 1000, T6),
    fam!("aruco_7x7_50", 7, 50, T7),
    fam!("aruco_7x7_100", 7, 100, T7),
    fam!("aruco_7x7_250", 7, 250, T7),
    fam!("aruco_7x7_1000", 7, 1000, T7),
    fam!("aruco_original", 5, 1024, TORIG),
    fam!("aruco_mip_36h12", 6, 250, TMIP),
];

/// The dictionary named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

impl Family {
    /// The data bits of marker `id`, rows top to bottom (true = white); `None` past the table.
    pub fn data_bits(&self, id: usize) -> Option<Vec<Vec<bool>>> {
        if id >= self.count {
            return None;
        }
        let line =
            self.table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).nth(id)?;
        let v = u64::from_str_radix(line.trim(), 16).ok()?;
        let n = self.bits * self.bits;
        Some(
            (0..self.bits)
                .map(|r| {
                    (0..self.bits).map(|c| (v >> (n - 1 - (r * self.bits + c))) & 1 == 1).collect()
                })
                .collect(),
        )
    }

    /// The whole marker of `id` — the data bits inside a one-cell black border — rows top to
    /// bottom (true = white), `bits + 2` cells a side.
    pub fn marker_cells(&self, id: usize) -> Option<Vec<Vec<bool>>> {
        let data = self.data_bits(id)?;
        let n = self.bits + 2;
        Some(
            (0..n)
                .map(|r| {
                    (0..n)
                        .map(|c| r > 0 && c > 0 && r < n - 1 && c < n - 1 && data[r - 1][c - 1])
                        .collect()
                })
                .collect(),
        )
    }
}
