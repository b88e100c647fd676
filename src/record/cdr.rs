//! Plain CDR (XCDR1, little endian), the encoding ROS 2 puts on the wire and rosbag2 stores: a
//! 4-byte encapsulation header `00 01 00 00`, then every primitive aligned to its own size
//! (counted from the end of the header), strings as a u32 length with the terminating NUL
//! included, sequences as a u32 count followed by the elements, fixed arrays without a count.

/// Builds one CDR-encoded message.
#[derive(Debug, Clone)]
pub struct CdrWriter {
    buf: Vec<u8>,
}

impl Default for CdrWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl CdrWriter {
    /// An empty message (encapsulation header only).
    pub fn new() -> Self {
        // Most messages a run records fit in 128 bytes: one allocation, no regrowth.
        let mut buf = Vec::with_capacity(128);
        buf.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        CdrWriter { buf }
    }

    fn align(&mut self, n: usize) {
        let pad = (n - (self.buf.len() - 4) % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    /// `bool` (one byte, 0 or 1).
    pub fn bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }
    /// `uint8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// `int8`.
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    /// `uint16`.
    pub fn u16(&mut self, v: u16) {
        self.align(2);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `int32`.
    pub fn i32(&mut self, v: i32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `uint32`.
    pub fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `uint64`.
    pub fn u64(&mut self, v: u64) {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `float32`.
    pub fn f32(&mut self, v: f32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `float64`.
    pub fn f64(&mut self, v: f64) {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `string`.
    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }
    /// `string` made of `parts` in a row (written without joining them first).
    pub fn string_parts(&mut self, parts: &[&str]) {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        self.u32(n as u32 + 1);
        for p in parts {
            self.buf.extend_from_slice(p.as_bytes());
        }
        self.buf.push(0);
    }
    /// `float64[N]` (fixed size: no count).
    pub fn f64_array(&mut self, v: &[f64]) {
        for &x in v {
            self.f64(x);
        }
    }
    /// `float64[]`.
    pub fn f64_seq(&mut self, v: &[f64]) {
        self.u32(v.len() as u32);
        self.f64_array(v);
    }
    /// `float32[]`.
    pub fn f32_seq(&mut self, v: &[f32]) {
        self.u32(v.len() as u32);
        for &x in v {
            self.f32(x);
        }
    }
    /// `bool[]`.
    pub fn bool_seq(&mut self, v: &[bool]) {
        self.u32(v.len() as u32);
        for &x in v {
            self.bool(x);
        }
    }
    /// `string[]`.
    pub fn string_seq(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        for s in v {
            self.string(s);
        }
    }
    /// The encoded bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads a CDR message written as [`CdrWriter`] writes (little endian only).
#[derive(Debug)]
pub struct CdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> CdrReader<'a> {
    /// Start after the encapsulation header; refuses anything but little-endian plain CDR.
    pub fn new(buf: &'a [u8]) -> Result<Self, String> {
        match buf.get(..4) {
            Some([0x00, 0x01, _, _]) => Ok(CdrReader { buf, pos: 4 }),
            Some(h) => Err(format!("not little-endian plain CDR (encapsulation header {h:02x?})")),
            None => Err(format!("a CDR message needs 4 header bytes, got {}", buf.len())),
        }
    }

    fn take(&mut self, n: usize, align: usize) -> Result<&'a [u8], String> {
        while (self.pos - 4) % align != 0 {
            self.pos += 1;
        }
        let end = self.pos + n;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| format!("CDR message ends at byte {}, wanted {end}", self.buf.len()))?;
        self.pos = end;
        Ok(s)
    }

    /// `bool`.
    pub fn bool(&mut self) -> Result<bool, String> {
        Ok(self.take(1, 1)?[0] != 0)
    }
    /// `uint32`.
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, 4)?.try_into().expect("4 bytes")))
    }
    /// `int32`.
    pub fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_le_bytes(self.take(4, 4)?.try_into().expect("4 bytes")))
    }
    /// `uint64`.
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, 8)?.try_into().expect("8 bytes")))
    }
    /// `float64`.
    pub fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take(8, 8)?.try_into().expect("8 bytes")))
    }
    /// `string`.
    pub fn string(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let b = self.take(n, 1)?;
        let b = b.strip_suffix(&[0]).unwrap_or(b);
        String::from_utf8(b.to_vec()).map_err(|e| format!("CDR string is not UTF-8: {e}"))
    }
    /// `float64[]`.
    pub fn f64_seq(&mut self) -> Result<Vec<f64>, String> {
        let n = self.u32()? as usize;
        (0..n).map(|_| self.f64()).collect()
    }
    /// `bool[]`.
    pub fn bool_seq(&mut self) -> Result<Vec<bool>, String> {
        let n = self.u32()? as usize;
        (0..n).map(|_| self.bool()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_after_the_header() {
        let mut w = CdrWriter::new();
        w.bool(true);
        w.f64(1.5);
        w.string("ab");
        let b = w.finish();
        // header, bool, 7 pad bytes, f64, u32 len 3, "ab\0"
        assert_eq!(b.len(), 4 + 1 + 7 + 8 + 4 + 3);
        assert_eq!(&b[..5], &[0, 1, 0, 0, 1]);
        assert_eq!(&b[12..20], &1.5f64.to_le_bytes());
        assert_eq!(&b[20..24], &3u32.to_le_bytes());
        let mut r = CdrReader::new(&b).unwrap();
        assert!(r.bool().unwrap());
        assert_eq!(r.f64().unwrap(), 1.5);
        assert_eq!(r.string().unwrap(), "ab");
        assert!(r.u32().unwrap_err().contains("CDR message ends at byte 27"));
    }

    #[test]
    fn refuses_big_endian() {
        assert_eq!(
            CdrReader::new(&[0, 0, 0, 0]).unwrap_err(),
            "not little-endian plain CDR (encapsulation header [00, 00, 00, 00])"
        );
    }
}
