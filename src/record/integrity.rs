//! A recording's checksums, checked before anything is read from it: every chunk's CRC, the data
//! section's and the summary section's, through the `mcap` crate's linear reader. A corrupted
//! chunk is named (its number, its bytes in the file, the log times it holds), so the damage can
//! be located with MCAP tools.

use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};
use mcap::McapError;

/// Read `buf` to its end with `opts`, discarding the records: the first error the reader finds.
fn scan(buf: &[u8], opts: LinearReaderOptions) -> Result<(), McapError> {
    let mut reader = LinearReader::new_with_options(opts);
    let mut pos = 0;
    while let Some(event) = reader.next_event() {
        match event? {
            LinearReadEvent::ReadRequest(need) => {
                let n = need.min(buf.len() - pos);
                reader.insert(n)[..n].copy_from_slice(&buf[pos..pos + n]);
                reader.notify_read(n);
                pos += n;
            }
            LinearReadEvent::Record { .. } => {}
        }
    }
    Ok(())
}

fn checked() -> LinearReaderOptions {
    LinearReaderOptions::default()
        .with_prevalidate_chunk_crcs(true)
        .with_validate_data_section_crc(true)
        .with_validate_summary_section_crc(true)
}

/// The chunk whose CRC fails, located through the summary's chunk index: "chunk K of N (bytes
/// A–B, log times S–E s)". `None` when the summary does not lead to it.
fn bad_chunk(buf: &[u8]) -> Option<String> {
    let summary = mcap::Summary::read(buf).ok().flatten()?;
    let n = summary.chunk_indexes.len();
    for (k, idx) in summary.chunk_indexes.iter().enumerate() {
        let start = idx.chunk_start_offset as usize;
        let end = start.checked_add(idx.chunk_length as usize)?.min(buf.len());
        let one = checked().with_skip_start_magic(true).with_skip_end_magic(true);
        if let Err(McapError::BadChunkCrc { .. }) = scan(buf.get(start..end)?, one) {
            return Some(format!(
                "chunk {} of {n} (bytes {start}–{end}, log times {} s to {} s)",
                k + 1,
                idx.message_start_time as f64 * 1e-9,
                idx.message_end_time as f64 * 1e-9
            ));
        }
    }
    None
}

/// Check every CRC the file holds; the error names what failed.
pub fn check(buf: &[u8]) -> Result<(), String> {
    match scan(buf, checked()) {
        Ok(()) => Ok(()),
        Err(e @ McapError::BadChunkCrc { .. }) => {
            let which = bad_chunk(buf).unwrap_or_else(|| "a chunk".to_string());
            Err(format!(
                "corrupt: {which} fails its CRC check ({e}): the file was damaged after it was \
                 written; MCAP tools in recovery mode read the intact chunks, but a replay needs \
                 the whole run"
            ))
        }
        Err(McapError::UnsupportedCompression(c)) => Err(format!(
            "its chunks are compressed with {c}, which this build does not read (roqsim writes \
             and reads uncompressed MCAP): write an uncompressed copy with the mcap CLI \
             (`mcap decompress FILE -o plain.mcap`) and open that"
        )),
        Err(e) => Err(format!("corrupt: {e}: the file was damaged after it was written")),
    }
}
