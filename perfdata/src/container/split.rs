//! simpleperf's SPLIT records: a record over 65535 bytes (header included) is written as
//! SPLIT records, each carrying the next piece of its bytes, then a SPLIT_END. The cursor
//! gives the SPLIT records as they are and, after the SPLIT_END, the record they make
//! (`Origin::Joined`), as simpleperf's reader does (`RecordFileReader::ReadRecord`).
//!
//! Unlike simpleperf, which stops reading the file, a run that does not make a record (no
//! SPLIT_END after it, or pieces that do not add up to the size their header states)
//! drops only that record: the error says where the run started and what was wrong, and
//! the walk goes on.

use super::framing::{frame_header, RawRecord, HEADER_SIZE};
use crate::generated::perf_data::{EventHeader, RecordBody, RecordType};
use crate::rt::{Endian, Error, Reader};

/// A run of SPLIT records being joined, and the record joined last.
#[derive(Default)]
pub struct Joiner {
    /// The joined bytes so far (then the joined record's header and body).
    buf: Vec<u8>,
    /// Offset and index of the run's first SPLIT record; `None` outside a run.
    first: Option<(u64, u64)>,
    /// The joined record, once SPLIT_END came: its header, its size and the offset of
    /// the run's first SPLIT record.
    joined: Option<(EventHeader, usize, u64)>,
}

/// True for SPLIT and SPLIT_END.
#[inline(always)]
pub fn is_split(ty: RecordType) -> bool {
    ty == RecordType::SIMPLEPERF_SPLIT || ty == RecordType::SIMPLEPERF_SPLIT_END
}

impl Joiner {
    /// Inside a run of SPLIT records (waiting for its SPLIT_END).
    #[inline(always)]
    pub fn in_run(&self) -> bool {
        self.first.is_some()
    }

    /// Takes the SPLIT or SPLIT_END record `rec` (the source's record number `index`).
    /// `Ok(true)`: a record was joined ([`Joiner::record`]). An error drops the run.
    pub fn take<E: Endian>(
        &mut self,
        rec: &RawRecord<'_>,
        index: u64,
        e: E,
    ) -> Result<bool, Error> {
        self.joined = None;
        if rec.record_type() == RecordType::SIMPLEPERF_SPLIT {
            if self.first.is_none() {
                self.buf.clear();
                self.first = Some((rec.offset, index));
            }
            let piece = match decode(rec, e) {
                Ok(RecordBody::SimpleperfSplit(s)) => s.data,
                Ok(_) => return Ok(false),
                Err(err) => {
                    // A piece that does not decode: the run cannot make its record.
                    self.first = None;
                    self.buf.clear();
                    return Err(err);
                }
            };
            self.buf.extend_from_slice(&piece);
            // The joined record's header states its size: pieces past it cannot make it.
            if let Some(size) = self.stated_size(e) {
                if self.buf.len() > size {
                    return Err(self.drop_run(
                        format!(
                            "SPLIT pieces holding the {size} bytes their record's header states",
                        ),
                        format!("{} bytes", self.buf.len()),
                        rec.offset,
                    ));
                }
            }
            return Ok(false);
        }
        // SPLIT_END.
        let Some((first, _)) = self.first else {
            return Err(Error::invalid(
                Some(rec.offset),
                "a SPLIT_END after SPLIT records",
                "a SPLIT_END with no SPLIT record before it",
            ));
        };
        let held = self.buf.len();
        match self.stated_size(e) {
            Some(size) if size == held && size >= HEADER_SIZE => {
                let (header, _) = frame_header(&self.buf[..HEADER_SIZE], e);
                self.joined = Some((header, size, first));
                self.first = None;
                Ok(true)
            }
            stated => Err(self.drop_run(
                "SPLIT pieces that make one record of the size its header states".to_string(),
                match stated {
                    Some(size) => format!("a header stating {size} bytes, {held} bytes of pieces"),
                    None => format!("{held} bytes of pieces, not even a record header"),
                },
                rec.offset,
            )),
        }
    }

    /// The run was not ended by a SPLIT_END: the record at `at` (or the end of the stream)
    /// came instead. `None` outside a run.
    pub fn interrupted(&mut self, at: u64, what: &str) -> Option<Error> {
        self.first?;
        let held = self.buf.len();
        Some(self.drop_run(
            "a SPLIT_END after the run of SPLIT records".to_string(),
            format!("{what} after {held} bytes of pieces"),
            at,
        ))
    }

    /// The record joined by the last [`Joiner::take`] that returned `Ok(true)`, and the
    /// offset of the run's first SPLIT record. The record's offset is where its first byte
    /// is in the input (in the first SPLIT's data).
    pub fn record(&self) -> (u64, RawRecord<'_>) {
        let (header, size, first) = self.joined.unwrap_or_default();
        let rec = RawRecord {
            offset: first + HEADER_SIZE as u64,
            header,
            body: self.buf.get(HEADER_SIZE..size).unwrap_or(&[]),
            payload: &[],
        };
        (first, rec)
    }

    /// Bytes held.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The size the joined record's header states, once its 8 bytes are there.
    fn stated_size<E: Endian>(&self, e: E) -> Option<usize> {
        Some(frame_header(self.buf.get(..HEADER_SIZE)?, e).1)
    }

    /// Ends the run: the error names its first SPLIT record and where it went wrong.
    fn drop_run(&mut self, expected: String, found: String, at: u64) -> Error {
        let (first, index) = self.first.take().unwrap_or((at, 0));
        self.buf.clear();
        Error::invalid(Some(at), expected, found)
            .with_record(index, format!("SIMPLEPERF_SPLIT run from {first:#x}"))
    }
}

fn decode<'r, E: Endian>(rec: &RawRecord<'r>, e: E) -> Result<RecordBody<'r>, Error> {
    let mut r = Reader::in_order(rec.body, rec.offset + HEADER_SIZE as u64, e);
    RecordBody::decode(rec.record_type(), &mut r, &Default::default())
}
