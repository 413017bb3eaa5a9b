//! Cutting one large recording into byte ranges that workers read in parallel (the Spark
//! source's partitions): each worker replays the whole record stream — every process and
//! map it needs — and delivers the samples of its range only
//! ([`crate::AnalyzerOptions::byte_range`]), so the ranges' samples are, together, the
//! recording's, each once.

use crate::AnalysisError as Error;
use perfdata::types::RecordType;
use perfdata::{RecordCursor, Recording, SliceSource};

/// Byte ranges `start..end` of the recording's file that cover its record stream, each of
/// about `split` bytes or more: cut after a FINISHED_ROUND record (where perf's time
/// order flushes, so that a range holds whole rounds), or after any record in a stream
/// without rounds. One range when the stream is not larger than `split`. Framing only:
/// no record is decoded. Not for `--threads` directories.
pub fn byte_ranges(recording: &Recording, split: u64) -> Result<Vec<(u64, u64)>, Error> {
    if recording.is_directory() {
        return Err(crate::AnalysisError::unsupported(
            "a --threads directory is read in parts by stream, not by byte range",
        ));
    }
    let data = recording.data()?;
    let (bytes, base) = (data.data(), data.data_offset());
    let end = base + bytes.len() as u64;
    let split = split.max(1);
    if (bytes.len() as u64) <= split {
        return Ok(vec![(base, end)]);
    }
    let mut cursor = RecordCursor::framing_only(SliceSource::new(bytes, base, data.format.endian));
    let (mut rounds, mut any) = (vec![], vec![]);
    let (mut start, mut any_start) = (base, base);
    // A damaged record ends the walk: the last range runs to the end of the stream.
    while let Ok(Some(rec)) = cursor.next_in_input() {
        let after = rec.offset + rec.stream_len() as u64;
        if rec.record_type() == RecordType::FINISHED_ROUND && after - start >= split {
            rounds.push((start, after));
            start = after;
        }
        if after - any_start >= split {
            any.push((any_start, after));
            any_start = after;
        }
    }
    let (mut ranges, last) = if rounds.is_empty() {
        (any, any_start)
    } else {
        (rounds, start)
    };
    if last < end {
        ranges.push((last, end));
    }
    Ok(ranges)
}
