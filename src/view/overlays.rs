//! Render overlays: what `roqsim render` paints on a frame after the scene is rasterised and
//! before it is encoded, in pixels, with the frame's sim time in hand. A registry like the
//! plugins': `clock` ships; an overlay is named on the command line (`--overlay clock`,
//! `--overlay clock:anchor=bottom-right,width=0.3`) and `roqsim render --overlay list` prints
//! what is registered.
//!
//! An overlay draws into the frame in place (RGB, 3 bytes per pixel, top row first); the frame's
//! size cannot change under it, so what reaches the encoder always has the size it was told.

use std::collections::BTreeMap;

/// A frame being drawn on: RGB, row-major, top row first.
pub struct RgbFrame<'a> {
    /// Width (px).
    pub width: u32,
    /// Height (px).
    pub height: u32,
    /// `width * height * 3` bytes.
    pub pixels: &'a mut [u8],
}

impl RgbFrame<'_> {
    /// Set one pixel (ignored outside the frame).
    pub fn put(&mut self, x: i64, y: i64, rgb: [u8; 3]) {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        self.pixels[i..i + 3].copy_from_slice(&rgb);
    }

    /// Fill a rectangle (clipped to the frame).
    pub fn fill(&mut self, x0: i64, y0: i64, w: i64, h: i64, rgb: [u8; 3]) {
        for y in y0.max(0)..(y0 + h).min(self.height as i64) {
            for x in x0.max(0)..(x0 + w).min(self.width as i64) {
                self.put(x, y, rgb);
            }
        }
    }
}

/// Where an overlay sits: the options every overlay shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Corner it is anchored to.
    pub anchor: Anchor,
    /// Its width as a fraction of the frame's (0, 1].
    pub width: f64,
    /// Gap to the frame's edges (px).
    pub margin: u32,
}

/// Frame corners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Top left.
    TopLeft,
    /// Top right.
    TopRight,
    /// Bottom left.
    BottomLeft,
    /// Bottom right.
    BottomRight,
}

impl Default for Placement {
    fn default() -> Self {
        Placement { anchor: Anchor::TopLeft, width: 0.25, margin: 12 }
    }
}

/// One overlay instance.
pub trait Overlay {
    /// Its registered name.
    fn name(&self) -> &str;
    /// Once, before the first frame, with the frame size.
    fn prepare(&mut self, _width: u32, _height: u32) -> Result<(), String> {
        Ok(())
    }
    /// Paint on `frame` rendered at sim time `t` (s).
    fn draw(&mut self, frame: &mut RgbFrame, t: f64) -> Result<(), String>;
}

/// What builds an overlay from its placement and its own options.
pub type MakeOverlay = fn(Placement, &BTreeMap<String, String>) -> Result<Box<dyn Overlay>, String>;

/// A registered overlay.
pub struct OverlayDescriptor {
    /// Name used on the command line.
    pub name: &'static str,
    /// One line for `--overlay list`.
    pub summary: &'static str,
    /// Its own option keys (beyond anchor, width, margin).
    pub keys: &'static [&'static str],
    /// Build an instance from its placement and its own options.
    pub make: MakeOverlay,
}

/// Every overlay this build registers.
pub fn registry() -> &'static [OverlayDescriptor] {
    &[OverlayDescriptor {
        name: "clock",
        summary: "the frame's sim time, `t = 12.340 s` (options: decimals = 0..6, default 3)",
        keys: &["decimals"],
        make: Clock::make,
    }]
}

/// Parse `--overlay NAME[:key=value,...]` into an instance; errors name the flag.
pub fn parse(spec_text: &str) -> Result<Box<dyn Overlay>, String> {
    let (name, opts) = spec_text.split_once(':').unwrap_or((spec_text, ""));
    // As a refusal quotes it: a 1 MiB flag value is not echoed back whole.
    let spec = crate::error::clip(spec_text);
    let names: Vec<&str> = registry().iter().map(|d| d.name).collect();
    let Some(d) = registry().iter().find(|d| d.name == name) else {
        return Err(format!(
            "--overlay {spec}: no overlay `{name}`; registered: {} (`--overlay list` describes them)",
            names.join(", ")
        ));
    };
    let mut placement = Placement::default();
    let mut own = BTreeMap::new();
    for kv in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(format!("--overlay {spec}: `{kv}` is not key=value"));
        };
        let bad = |what: &str| format!("--overlay {spec}: {k} {what}, got `{v}`");
        match k {
            "anchor" => {
                placement.anchor = match v {
                    "top-left" => Anchor::TopLeft,
                    "top-right" => Anchor::TopRight,
                    "bottom-left" => Anchor::BottomLeft,
                    "bottom-right" => Anchor::BottomRight,
                    _ => {
                        return Err(bad("is one of top-left, top-right, bottom-left, bottom-right"))
                    }
                }
            }
            "width" => match v.parse::<f64>() {
                Ok(w) if w > 0.0 && w <= 1.0 => placement.width = w,
                _ => return Err(bad("is a fraction of the frame's width in (0, 1]")),
            },
            "margin" => match v.parse::<u32>() {
                Ok(m) => placement.margin = m,
                _ => return Err(bad("is a whole number of pixels")),
            },
            _ if d.keys.contains(&k) => {
                own.insert(k.to_string(), v.to_string());
            }
            _ => {
                let mut keys = vec!["anchor", "width", "margin"];
                keys.extend(d.keys);
                return Err(format!(
                    "--overlay {spec}: `{name}` has no option `{k}`; options: {}",
                    keys.join(", ")
                ));
            }
        }
    }
    (d.make)(placement, &own).map_err(|e| format!("--overlay {spec}: {e}"))
}

/// `clock`: the sim time, white on a dark box.
struct Clock {
    placement: Placement,
    decimals: usize,
}

impl Clock {
    fn make(
        placement: Placement,
        opts: &BTreeMap<String, String>,
    ) -> Result<Box<dyn Overlay>, String> {
        let decimals = match opts.get("decimals") {
            None => 3,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n <= 6 => n,
                _ => return Err(format!("decimals is 0..6, got `{v}`")),
            },
        };
        Ok(Box::new(Clock { placement, decimals }))
    }

    fn text(&self, t: f64) -> String {
        format!("t = {:.*} s", self.decimals, t)
    }

    /// The box's width, height and dot size (px) for `text` on a frame `frame_w` px wide. The text
    /// is sized for the widest value this run can show at this precision, so the box does not
    /// jump as digits are added.
    fn box_size(&self, text: &str, frame_w: u32) -> (i64, i64, i64) {
        let cols = text.chars().count().max(self.text(9999.0).chars().count()) as f64;
        let box_w = (self.placement.width * f64::from(frame_w)).max(1.0);
        // A glyph is 5×7 dots in a 6×9 cell; the box has one cell of padding each side.
        let dot = ((box_w / (cols * 6.0 + 2.0)).floor() as i64).max(1);
        (((cols as i64) * 6 + 2) * dot, 11 * dot, dot)
    }
}

impl Overlay for Clock {
    fn name(&self) -> &str {
        "clock"
    }

    fn prepare(&mut self, width: u32, height: u32) -> Result<(), String> {
        // A margin that puts the whole box outside the frame would draw nothing.
        let (w, h, _) = self.box_size(&self.text(9999.0), width);
        let m = i64::from(self.placement.margin);
        if m + w > i64::from(width) || m + h > i64::from(height) {
            let max = (i64::from(width) - w).min(i64::from(height) - h).max(0);
            return Err(format!(
                "margin {m} px puts the {w}x{h} px box outside the {width}x{height} frame: give a margin of at most {max}"
            ));
        }
        Ok(())
    }

    fn draw(&mut self, frame: &mut RgbFrame, t: f64) -> Result<(), String> {
        let text = self.text(t);
        let (w, h, dot) = self.box_size(&text, frame.width);
        let p = &self.placement;
        let m = i64::from(p.margin);
        let (fw, fh) = (frame.width as i64, frame.height as i64);
        let (x0, y0) = match p.anchor {
            Anchor::TopLeft => (m, m),
            Anchor::TopRight => (fw - m - w, m),
            Anchor::BottomLeft => (m, fh - m - h),
            Anchor::BottomRight => (fw - m - w, fh - m - h),
        };
        frame.fill(x0, y0, w, h, [24, 24, 24]);
        for (i, ch) in text.chars().enumerate() {
            let rows = glyph(ch);
            let gx = x0 + dot + (i as i64) * 6 * dot;
            let gy = y0 + 2 * dot;
            for (r, bits) in rows.iter().enumerate() {
                for c in 0..5 {
                    if bits & (0b10000 >> c) != 0 {
                        frame.fill(gx + c * dot, gy + r as i64 * dot, dot, dot, [255, 255, 255]);
                    }
                }
            }
        }
        Ok(())
    }
}

/// 5×7 dot glyphs (rows top to bottom, bit 4 = leftmost column) for what `clock` prints.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        't' => [0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06],
        's' => [0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E],
        _ => [0; 7],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_paints_white_text_on_a_dark_box_in_its_corner() {
        let (w, h) = (320u32, 240u32);
        let mut px = vec![100u8; (w * h * 3) as usize];
        let mut o = parse("clock:anchor=bottom-right,width=0.5,margin=4").unwrap();
        o.prepare(w, h).unwrap();
        o.draw(&mut RgbFrame { width: w, height: h, pixels: &mut px }, 1.25).unwrap();
        let at = |x: u32, y: u32| {
            let i = ((y * w + x) * 3) as usize;
            [px[i], px[i + 1], px[i + 2]]
        };
        // Untouched away from the corner; the box and white dots in the bottom-right quarter.
        assert_eq!(at(10, 10), [100, 100, 100]);
        let mut white = 0;
        let mut dark = 0;
        for y in h / 2..h {
            for x in w / 2..w {
                match at(x, y) {
                    [255, 255, 255] => white += 1,
                    [24, 24, 24] => dark += 1,
                    _ => {}
                }
            }
        }
        assert!(white > 50 && dark > white, "white {white}, dark {dark}");
        assert_eq!(at(w - 1, h - 1), [100, 100, 100], "margin kept");
    }

    #[test]
    fn refusals_name_the_flag() {
        assert_eq!(
            parse("sun").err().unwrap(),
            "--overlay sun: no overlay `sun`; registered: clock (`--overlay list` describes them)"
        );
        assert_eq!(
            parse("clock:size=3").err().unwrap(),
            "--overlay clock:size=3: `clock` has no option `size`; options: anchor, width, margin, decimals"
        );
        assert_eq!(
            parse("clock:decimals=9").err().unwrap(),
            "--overlay clock:decimals=9: decimals is 0..6, got `9`"
        );
        assert_eq!(
            parse("clock:width=2").err().unwrap(),
            "--overlay clock:width=2: width is a fraction of the frame's width in (0, 1], got `2`"
        );
    }
}
