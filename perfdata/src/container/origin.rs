//! Where a record came from, and what a salvaging walk did about damage: the vocabulary
//! every walk (cursor, records, time order, directories, pipes) shares.

use crate::rt::Error;

/// Where a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Directly in the input, at `RawRecord::offset`.
    Input,
    /// Decompressed from the COMPRESSED/COMPRESSED2 stream; `RawRecord::offset` is the
    /// offset within the decompressed bytes, and this is the offset of the compressed record
    /// whose data completed it.
    Compressed {
        /// Absolute offset in the input of that COMPRESSED/COMPRESSED2 record: the place
        /// in the file to name for this record, whose own offset is not one.
        record_offset: u64,
    },
    /// Joined from a run of simpleperf SPLIT records (a record over 64 KiB);
    /// `RawRecord::offset` is where its first byte is, in the first SPLIT record's data
    /// (8 bytes after `record_offset`).
    Joined {
        /// Absolute offset in the input of the first SPLIT record of the run, or, when
        /// the run is inside compressed records (`simpleperf record -z`), of the
        /// compressed record that completed its first SPLIT record.
        record_offset: u64,
    },
}

impl Origin {
    /// The offset in the input to name for a record at `offset` of this origin: its own,
    /// or the compressed record's (or the first SPLIT record's) that holds it.
    pub fn input_offset(self, offset: u64) -> u64 {
        match self {
            Origin::Input => offset,
            Origin::Compressed { record_offset } | Origin::Joined { record_offset } => {
                record_offset
            }
        }
    }
}

/// Damage that a salvaging walk went past: the error where the damage is (offset, record,
/// field) and how the walk went on after it.
#[derive(Debug)]
pub struct Damage {
    /// What was wrong, with its offset, record and field.
    pub error: Error,
    /// What the walk skipped or dropped to go on.
    pub recovery: Recovery,
}

/// How a salvaging walk went on after damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Bytes `start..end` (absolute offsets) were skipped: records parse again at `end`.
    Skipped {
        /// Where the damaged record starts.
        start: u64,
        /// Where the next record that parses starts.
        end: u64,
    },
    /// Nothing parses after the damage: the rest of the stream, from `start`, is unread.
    Stopped {
        /// Where the damaged record starts: nothing from here on was read.
        start: u64,
    },
    /// A compressed chunk did not decompress: the zstd stream was dropped and restarts at
    /// the next compressed record after the one at `record_offset`.
    CompressedStreamRestarted {
        /// Absolute offset of the compressed record whose data did not decompress.
        record_offset: u64,
    },
    /// The framing inside decompressed data was lost: the decompressed bytes pending were
    /// dropped.
    DecompressedBytesDropped,
    /// The damage is at the end (the compressed stream stops inside a record): nothing
    /// was left to skip.
    AtEnd,
    /// A run of simpleperf SPLIT records did not make a record (no SPLIT_END after it, or
    /// pieces that do not add up): the record they held is dropped; the SPLIT records
    /// themselves and every record after them are read.
    JoinDropped {
        /// Absolute offset of the run's first SPLIT record.
        record_offset: u64,
    },
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        match self.recovery {
            Recovery::Skipped { start, end } => {
                write!(f, "; salvage: skipped bytes {start:#x}..{end:#x}")
            }
            Recovery::Stopped { start } => {
                write!(
                    f,
                    "; salvage: nothing parses after it, bytes from {start:#x} unread"
                )
            }
            Recovery::CompressedStreamRestarted { record_offset } => write!(
                f,
                "; salvage: dropped the compressed stream up to the record at {record_offset:#x}"
            ),
            Recovery::DecompressedBytesDropped => {
                write!(f, "; salvage: dropped the decompressed bytes pending")
            }
            Recovery::AtEnd => Ok(()),
            Recovery::JoinDropped { record_offset } => write!(
                f,
                "; salvage: dropped the record split from {record_offset:#x}"
            ),
        }
    }
}
