//! PERF_RECORD_COMPRESSED (81) / COMPRESSED2 (83): all compressed records of a stream form
//! ONE zstd stream, decoded with a persistent context; its output is a record stream in
//! which a record may straddle two compressed records, so the undecoded tail is carried.

use super::framing::{plain_record_header, RawRecord, RecordFramer, HEADER_SIZE};
use super::origin::Recovery;
use crate::generated::perf_data::{Ctx, EventHeader, RecordBody, RecordType};
use crate::rt::{Endian, Error, ErrorKind, Reader};
use std::borrow::Cow;
use std::ops::Range;
use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

/// Upper bound on what one compressed record may expand to. perf sizes its buffer from
/// HEADER_COMPRESSED.comp_mmap_len (the ring-buffer size, typically ≤ a few MiB); a bound
/// keeps a hostile stream from making us allocate without limit.
pub const MAX_EXPANSION_PER_RECORD: usize = 256 << 20;

/// Output decompressed per step: what is held stays within one record plus this, however
/// far a compressed record expands.
const STEP: usize = 64 << 10;

/// A record framed in the decompressed bytes, by position (so that deciding what to do
/// with it holds no borrow): [`Inflater::record`] lends it.
#[derive(Debug, Clone, Copy)]
pub struct InnerRecord {
    /// Offset in the decompressed stream.
    pub offset: u64,
    pub header: EventHeader,
    body_len: usize,
    payload_len: usize,
}

impl InnerRecord {
    #[inline(always)]
    fn of(rec: &RawRecord<'_>) -> Self {
        InnerRecord {
            offset: rec.offset,
            header: rec.header,
            body_len: rec.body.len(),
            payload_len: rec.payload.len(),
        }
    }

    fn len(&self) -> usize {
        HEADER_SIZE + self.body_len + self.payload_len
    }
}

/// The decompressed record stream of one record stream: compressed records are fed one
/// after the other ([`Inflater::begin`]) and their zstd data decompressed a step at a
/// time, as [`Inflater::next_record`] needs more bytes to frame the next record.
pub struct Inflater {
    /// `None` before the first compressed record and after a damaged one (the next one
    /// starts a new zstd stream).
    decoder: Option<Decoder<'static>>,
    /// Decompressed bytes; those before `start` were handed out.
    buf: Vec<u8>,
    start: usize,
    /// Offset of `buf[start]` in the decompressed stream.
    offset: u64,
    /// The compressed record being read: its offset (for errors), how much of its zstd
    /// data was read and what it expanded to so far, and whether all of it was.
    record_offset: u64,
    in_pos: usize,
    produced: usize,
    in_done: bool,
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater {
            decoder: None,
            buf: Vec::new(),
            start: 0,
            offset: 0,
            record_offset: 0,
            in_pos: 0,
            produced: 0,
            in_done: true,
        }
    }
}

impl Inflater {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts on the zstd data of the compressed record at `record_offset`; the data is
    /// passed to every [`Inflater::next_record`] call until it returns `None`.
    pub fn begin(&mut self, record_offset: u64) {
        self.record_offset = record_offset;
        self.in_pos = 0;
        self.produced = 0;
        self.in_done = false;
    }

    /// The next complete record of the decompressed stream, decompressing more of
    /// `input` (the zstd data given to [`Inflater::begin`]) as needed. `None` when all of
    /// `input` is read and no complete record is left: the rest of a record comes with the
    /// next compressed record. The record stays readable ([`Inflater::record`]) until
    /// [`Inflater::consume`].
    ///
    /// An error comes with what was done about it: a chunk that does not decompress drops
    /// the zstd stream (the next compressed record restarts it) and this record's data; a
    /// framing error inside the decompressed bytes drops the bytes pending.
    #[inline]
    pub fn next_record<E: Endian>(
        &mut self,
        input: &[u8],
        e: E,
    ) -> Result<Option<InnerRecord>, (Error, Recovery)> {
        loop {
            let pending = &self.buf[self.start..];
            if !pending.is_empty() {
                match RecordFramer::in_order(pending, self.offset, e).next() {
                    Some(Ok(rec)) => return Ok(Some(InnerRecord::of(&rec))),
                    // The rest of this record is in output still to come.
                    Some(Err(err)) if matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }) => {}
                    Some(Err(err)) => {
                        self.offset += pending.len() as u64;
                        self.start = self.buf.len();
                        return Err((err, Recovery::DecompressedBytesDropped));
                    }
                    None => {}
                }
            }
            if self.in_done {
                return Ok(None);
            }
            if let Err(err) = self.step(input) {
                self.decoder = None;
                self.buf.clear();
                self.start = 0;
                self.in_done = true;
                return Err((
                    err,
                    Recovery::CompressedStreamRestarted {
                        record_offset: self.record_offset,
                    },
                ));
            }
        }
    }

    /// The next record when it is complete in the bytes already decompressed: the fast
    /// path of [`Inflater::next_record`] (`None` for anything else, which that handles).
    #[inline(always)]
    pub fn next_decompressed<E: Endian>(&self, e: E) -> Option<InnerRecord> {
        let (header, size) = plain_record_header(&self.buf[self.start..], e)?;
        Some(InnerRecord {
            offset: self.offset,
            header,
            body_len: size - HEADER_SIZE,
            payload_len: 0,
        })
    }

    /// The record [`Inflater::next_record`] framed last.
    #[inline(always)]
    pub fn record(&self, r: InnerRecord) -> RawRecord<'_> {
        let at = self.start + HEADER_SIZE;
        RawRecord {
            offset: r.offset,
            header: r.header,
            body: &self.buf[at..at + r.body_len],
            payload: &self.buf[at + r.body_len..at + r.body_len + r.payload_len],
        }
    }

    /// Done with the record [`Inflater::next_record`] framed last.
    #[inline(always)]
    pub fn consume(&mut self, r: InnerRecord) {
        self.start = (self.start + r.len()).min(self.buf.len());
        self.offset += r.len() as u64;
    }

    /// Decompresses one step of `input` onto the pending bytes.
    fn step(&mut self, input: &[u8]) -> Result<(), Error> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let decoder = match &mut self.decoder {
            Some(d) => d,
            None => self.decoder.insert(Decoder::new().map_err(|e| {
                Error::invalid(Some(self.record_offset), "a zstd decoder", e.to_string())
            })?),
        };
        let filled = self.buf.len();
        self.buf.reserve(STEP);
        let room = self.buf.capacity() - filled;
        let rest = input.get(self.in_pos..).unwrap_or(&[]);
        let mut src = InBuffer::around(rest);
        let mut out = OutBuffer::around_pos(&mut self.buf, filled);
        let run = decoder.run(&mut src, &mut out);
        let produced = out.pos() - filled;
        self.in_pos += src.pos();
        run.map_err(|e| {
            Error::invalid(
                Some(self.record_offset + self.in_pos as u64),
                "valid zstd data",
                e.to_string(),
            )
        })?;
        self.produced += produced;
        if self.produced > MAX_EXPANSION_PER_RECORD {
            return Err(Error::invalid(
                Some(self.record_offset),
                "a compressed record expanding to at most 256 MiB",
                format!("more than {} bytes", self.produced),
            ));
        }
        // zstd has given all it can for this input when it read all of it and did not
        // fill the room it had.
        self.in_done = self.in_pos >= input.len() && produced < room;
        Ok(())
    }

    /// Decompressed bytes not yet handed out (a record cut by the end of the data).
    pub fn pending_len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Bytes held (for memory bounds checks).
    pub fn buffered_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The error for a stream that ends with decompressed bytes no record completes
    /// (`end` is the stream's end offset); `None` when it ends on a record boundary.
    pub fn unfinished(&self, end: u64) -> Option<Error> {
        (self.pending_len() > 0).then(|| {
            Error::invalid(
                Some(end),
                "the compressed stream to end on a record boundary",
                format!("{} undecoded bytes", self.pending_len()),
            )
        })
    }
}

/// Where the zstd bytes of a COMPRESSED or COMPRESSED2 record body are (`None` for other
/// types), as a range of `body`. `at` is the body's offset, for errors.
pub fn zstd_range<E: Endian>(
    ty: RecordType,
    body: &[u8],
    at: u64,
    e: E,
) -> Result<Option<Range<usize>>, Error> {
    if !is_compressed(ty) {
        return Ok(None);
    }
    let data = match RecordBody::decode(ty, &mut Reader::in_order(body, at, e), &Ctx::default())? {
        RecordBody::Compressed(c) => c.data,
        RecordBody::Compressed2(c) => c.data,
        _ => return Ok(None),
    };
    Ok(match data.0 {
        // Decoding borrows: the data is a part of `body`.
        Cow::Borrowed(d) => {
            let start = d.as_ptr() as usize - body.as_ptr() as usize;
            Some(start..start + d.len())
        }
        Cow::Owned(_) => {
            return Err(Error::other(
                "the zstd data of a compressed record, borrowed from the record",
            ))
        }
    })
}

/// COMPRESSED or COMPRESSED2.
pub fn is_compressed(ty: RecordType) -> bool {
    ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2
}
