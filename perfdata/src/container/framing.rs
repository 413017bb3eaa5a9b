//! Record framing: walking a record stream (a file's data section, a pipe stream, a
//! `data.N` file of a directory, or the decompressed contents of COMPRESSED records).
//!
//! Only mechanics live here: the header and every body are decoded by generated code.

use crate::generated::perf_data::{
    Ctx, EventHeader, FeatureBody, FeatureId, RecordBody, RecordMisc, RecordType,
    SimpleperfEventHeader, SIMPLEPERF_RECORD_TYPE_START,
};
use crate::rt::{static_endian, Endian, Endianness, Error, FixedElem, Reader, StaticEndian};

/// Size of `perf_event_header`, from the spec.
pub const HEADER_SIZE: usize = <EventHeader as crate::rt::FixedElem>::SIZE;

/// The record header at the start of `head` (at least [`HEADER_SIZE`] bytes) and the
/// bytes of the record, header included: `perf_event_header.size`, or for simpleperf's
/// own records (types from `SIMPLEPERF_RECORD_TYPE_START`) the 32-bit size of their
/// `SimpleperfEventHeader`. Such a record's header is given with no misc bits and the low
/// half of its size (all its `misc` and `size` bytes hold is the size).
#[inline(always)]
pub fn frame_header<E: Endian>(head: &[u8], e: E) -> (EventHeader, usize) {
    let header = <EventHeader as FixedElem>::decode_elem(head, e);
    if header.type_ < SIMPLEPERF_RECORD_TYPE_START {
        (header, usize::from(header.size))
    } else {
        simpleperf_header(header, head, e)
    }
}

#[cold]
#[inline(never)]
fn simpleperf_header<E: Endian>(header: EventHeader, head: &[u8], e: E) -> (EventHeader, usize) {
    // The 8 bytes are there (the caller decoded a header from them): this cannot fail.
    let size = SimpleperfEventHeader::decode(&mut Reader::in_order(head, 0, e), &Ctx::default())
        .map_or(0, |h| h.size);
    let header = EventHeader {
        misc: RecordMisc(0),
        size: size as u16,
        ..header
    };
    (header, size as usize)
}

/// One record as it sits in the stream: its header, its body bytes (`header.size - 8`)
/// and, for the few types that have one, the payload that follows it outside
/// `header.size` (HEADER_TRACING_DATA, AUXTRACE).
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// Byte offset of the header in its stream (see [`RecordFramer::new`] for the base).
    pub offset: u64,
    /// `perf_event_header`: the record type, the misc bits (CPU mode, MMAP_BUILD_ID…)
    /// and `size`, which covers the header and the body, not the payload.
    pub header: EventHeader,
    /// The bytes after the header, up to `header.size`: what the record type's layout
    /// (and, for most types, the sample_id trailer at its end) decodes.
    pub body: &'a [u8],
    /// The bytes that follow the record outside `header.size` (HEADER_TRACING_DATA's
    /// tracing data, AUXTRACE's AUX data), as long as the body declares; empty for every
    /// other type.
    pub payload: &'a [u8],
}

impl RawRecord<'_> {
    /// The record type from the header (an open value: unknown types are kept by number).
    pub fn record_type(&self) -> RecordType {
        RecordType(self.header.type_)
    }
    /// Bytes the record occupies in the stream, payload included.
    pub fn stream_len(&self) -> usize {
        HEADER_SIZE + self.body.len() + self.payload.len()
    }
}

/// Iterates the records of one contiguous stream. Stops at the first framing error (it
/// cannot resynchronise after a bad size), which it yields once.
pub struct RecordFramer<'a, E: Endian> {
    buf: &'a [u8],
    base: u64,
    pos: usize,
    failed: bool,
    endian: E,
}

impl<'a, E: StaticEndian> RecordFramer<'a, E> {
    /// `base` is the absolute offset of `buf[0]`, used in offsets and errors.
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Self::in_order(buf, base, E::default())
    }
}

impl<'a, E: Endian> RecordFramer<'a, E> {
    /// A walk in byte order `endian` (run-time or compile-time); `base` as for `new`.
    pub fn in_order(buf: &'a [u8], base: u64, endian: E) -> Self {
        RecordFramer {
            buf,
            base,
            pos: 0,
            failed: false,
            endian,
        }
    }

    /// Bytes not yet walked (the start of an incomplete record when the walk stopped early).
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// After the walk failed: the header of the record it could not frame, when its 8
    /// bytes are there (for the type errors name; `None` when the header is cut).
    pub fn failed_header(&self) -> Option<EventHeader> {
        let head = self.rest().get(..HEADER_SIZE)?;
        Some(<EventHeader as FixedElem>::decode_elem(head, self.endian))
    }

    /// The next record when it is plain: whole, of a kernel type below COMPRESSED (no
    /// payload after it, nothing for the cursor to expand or join). `None` leaves the
    /// walk where it is, for [`Iterator::next`] to frame (or report) what comes next.
    #[inline(always)]
    pub(crate) fn next_plain(&mut self) -> Option<RawRecord<'a>> {
        if self.failed {
            return None;
        }
        let rec = self.plain_at(self.pos)?;
        self.pos += HEADER_SIZE + rec.body.len();
        Some(rec)
    }

    /// Where the walk is: the position in the stream of the next record to frame.
    #[inline(always)]
    pub(crate) fn next_at(&self) -> usize {
        self.pos
    }

    /// The plain record at position `pos` of the stream (see
    /// [`RecordFramer::next_plain`]), the walk left where it is.
    #[inline(always)]
    pub(crate) fn plain_at(&self, pos: usize) -> Option<RawRecord<'a>> {
        let rest = self.buf.get(pos..)?;
        let (header, size) = plain_record_header(rest, self.endian)?;
        if header.type_ >= RecordType::COMPRESSED.0 {
            return None;
        }
        Some(RawRecord {
            offset: self.base + pos as u64,
            header,
            body: &rest[HEADER_SIZE..size],
            payload: &[],
        })
    }

    #[inline(always)]
    fn next_record(&mut self) -> Result<RawRecord<'a>, Error> {
        let at = self.base + self.pos as u64;
        let rest = &self.buf[self.pos..];
        let Some(head) = rest.get(..HEADER_SIZE) else {
            return Err(
                Error::unexpected_end(at, HEADER_SIZE as u64, rest.len() as u64)
                    .in_field("perf_event_header"),
            );
        };
        let (header, size) = frame_header(head, self.endian);
        if size < HEADER_SIZE || size > rest.len() {
            return Err(bad_size(at, size, rest.len()));
        }
        let body = &rest[HEADER_SIZE..size];
        let ty = RecordType(header.type_);
        let payload_len = if ty.has_payload() {
            payload_len(ty, body, at, self.endian)?
        } else {
            0
        };
        if payload_len > rest.len() - size {
            return Err(Error::unexpected_end(
                at + size as u64,
                payload_len as u64,
                (rest.len() - size) as u64,
            ));
        }
        let payload = &rest[size..size + payload_len];
        self.pos += size + payload_len;
        Ok(RawRecord {
            offset: at,
            header,
            body,
            payload,
        })
    }
}

impl<'a, E: Endian> Iterator for RecordFramer<'a, E> {
    type Item = Result<RawRecord<'a>, Error>;
    // Inlined into the record cursor's loop: the per-record cost of every walk.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.next_record();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// The header of the record at the start of `buf` when the record is whole and has no
/// payload after it: the common case of [`RecordFramer`]'s framing, for the decompressed
/// records' fast path (anything else goes through the walker, which reports it). The
/// walker keeps its own single pass: routing it through this check first measured 7%
/// slower on the file-order sample walk.
#[inline(always)]
pub(crate) fn plain_record_header<E: Endian>(buf: &[u8], e: E) -> Option<(EventHeader, usize)> {
    let (header, size) = frame_header(buf.get(..HEADER_SIZE)?, e);
    let plain = size >= HEADER_SIZE && size <= buf.len() && !RecordType(header.type_).has_payload();
    plain.then_some((header, size))
}

/// The error for a record whose size is below the header's or past the end.
#[cold]
pub(crate) fn bad_size(at: u64, size: usize, available: usize) -> Error {
    if size < HEADER_SIZE {
        Error::invalid(
            Some(at + 6),
            "a record size of at least 8 (perf_event_header.size)",
            size.to_string(),
        )
    } else {
        Error::unexpected_end(at, size as u64, available as u64)
    }
}

/// The length of the payload after a record of a payload-carrying type (perf's own
/// records: no trailer, no context), as its body declares it. Rare: kept out of the
/// per-record path.
#[inline(never)]
pub(crate) fn payload_len<E: Endian>(
    ty: RecordType,
    body: &[u8],
    at: u64,
    e: E,
) -> Result<usize, Error> {
    let mut br = Reader::in_order(body, at + HEADER_SIZE as u64, e);
    let decoded = RecordBody::decode(ty, &mut br, &Ctx::default())?;
    Ok(usize::try_from(decoded.payload_len()).unwrap_or(usize::MAX))
}

/// The first position after `failed_at` from which records parse again: three known
/// record types in a row, or known records up to the exact end of the stream. Kernel
/// records are multiples of 8 bytes, so the next record is first looked for 8, 16, …
/// bytes after the damaged one, within the largest record size (in a pipe stream the
/// unpadded setup records leave the kernel records off 8-byte alignment); then at every
/// byte. Each byte is looked at a bounded number of times: salvaging stays linear.
pub(crate) fn resync<E: Endian>(data: &[u8], failed_at: usize, e: E) -> Option<usize> {
    resync_scan(data, failed_at + 8, failed_at + RESYNC_NEAR, 8, true, e)
        .or_else(|| resync_scan(data, failed_at + 1, data.len(), 1, true, e))
}

/// [`resync`]'s first pass looks this far after the damaged record's start (the largest
/// record size, plus one).
pub(crate) const RESYNC_NEAR: usize = u16::MAX as usize + 1;

/// The record chain [`resync`] asks for: this many known records in a row.
const RESYNC_CHAIN: usize = 3;

/// The first of the positions `from, from + step, …` below `to` (and with a header's
/// room in `data`) where records parse again. `complete`: `data` ends where the stream
/// ends, so known records up to its exact end count; a window of a longer stream needs
/// the whole chain.
pub(crate) fn resync_scan<E: Endian>(
    data: &[u8],
    from: usize,
    to: usize,
    step: usize,
    complete: bool,
    e: E,
) -> Option<usize> {
    // The framer's checks, without its errors: most places tried fail, and building an
    // error for each was most of a salvaging walk's time.
    let parses_at = |at: usize| {
        let (mut pos, mut good) = (at, 0);
        while good < RESYNC_CHAIN && pos < data.len() {
            let rest = &data[pos..];
            let Some(head) = rest.get(..HEADER_SIZE) else {
                break;
            };
            let (header, size) = frame_header(head, e);
            let ty = RecordType(header.type_);
            if size < HEADER_SIZE || size > rest.len() {
                break;
            }
            let payload = if ty.has_payload() {
                match payload_len(ty, &rest[HEADER_SIZE..size], 0, e) {
                    Ok(n) if n <= rest.len() - size => n,
                    _ => break,
                }
            } else {
                0
            };
            // A record of an unknown type is framed (and passed) but ends the chain.
            pos += size + payload;
            if ty.name().is_none() {
                break;
            }
            good += 1;
        }
        good == RESYNC_CHAIN || (complete && good > 0 && pos == data.len())
    };
    (from..to.min(data.len().saturating_sub(HEADER_SIZE - 1)))
        .step_by(step)
        .find(|&at| parses_at(at))
}

/// Decodes a record's body in byte order `endian` with context `ctx`: the one function
/// every reader (files, streams, the CLI) decodes framed records with. Errors name the
/// record type's field path and the absolute offset.
pub fn decode_record<'r>(
    endian: Endianness,
    rec: &RawRecord<'r>,
    ctx: &Ctx,
) -> Result<RecordBody<'r>, Error> {
    let ty = rec.record_type();
    decode_body(endian, ty, rec.body, rec.offset + HEADER_SIZE as u64, ctx)
        .map_err(|e| e.in_field(ty.name().unwrap_or("record")))
}

/// Decodes the body of a record of type `ty` held in `body` (whose first byte is at
/// offset `base`, for errors) in byte order `endian`: the byte-order dispatch under
/// [`decode_record`], for bodies that are not framed records of an input (the editable
/// model's, a conversion's).
pub fn decode_body<'r>(
    endian: Endianness,
    ty: RecordType,
    body: &'r [u8],
    base: u64,
    ctx: &Ctx,
) -> Result<RecordBody<'r>, Error> {
    // Hot (every record of `dump`, `convert --typed`): monomorphised per byte order.
    static_endian!(endian, |e| RecordBody::decode(
        ty,
        &mut Reader::in_order(body, base, e),
        ctx
    ))
}

/// Decodes the payload of feature `id` held in `bytes` (first byte at offset `base`) in
/// byte order `endian`; errors name the feature.
pub fn decode_feature<'b>(
    endian: Endianness,
    id: FeatureId,
    bytes: &'b [u8],
    base: u64,
    ctx: &Ctx,
) -> Result<FeatureBody<'b>, Error> {
    FeatureBody::decode(id, &mut Reader::in_order(bytes, base, endian), ctx)
        .map_err(|e| e.or_offset(base).with_feature(id.label()))
}

impl FeatureId {
    /// The feature as errors name it: its id and, when the spec knows it, its name
    /// (`8 CPUDESC`).
    pub fn label(self) -> String {
        match self.name() {
            Some(n) => format!("{} {n}", self.0),
            None => self.0.to_string(),
        }
    }
}

impl RecordType {
    /// The record type as errors and `perfdata dump` name it: its name, or `UNKNOWN(n)`
    /// (its `Display` gives the bare number instead).
    pub fn label(self) -> String {
        self.name()
            .map_or_else(|| format!("UNKNOWN({})", self.0), str::to_string)
    }
}

/// The type named in the error for a record the walk could not frame: the type in its
/// header when the header is there, `?` when not even that could be read.
pub(crate) fn failed_record_label<E: Endian>(w: &RecordFramer<'_, E>) -> String {
    w.failed_header()
        .map_or_else(|| "?".to_string(), |h| RecordType(h.type_).label())
}
