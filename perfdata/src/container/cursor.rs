//! The one record cursor: record framing plus the expansion of compressed records, over a
//! source of records (an input in memory, any [`Read`]). Every walk of records — file
//! order, salvaging, time order, `--threads` directories, [`super::PipeReader`] — is
//! this cursor or an adapter over it.
//!
//! The cursor lends: [`RecordCursor::advance`] moves to the next record and
//! [`RecordCursor::current`] borrows it (from the input, the source's buffer or the
//! decompressed bytes) until the next move. Two calls rather than one `next` so that an
//! adapter can look at a record, keep it for later or let it go, and move on.

use super::decompress::{is_compressed, zstd_range, Inflater, InnerRecord};
use super::framing::{failed_record_label, resync};
use super::framing::{RawRecord, RecordFramer, HEADER_SIZE};
use super::origin::{Damage, Origin, Recovery};
use crate::generated::perf_data::{Ctx, EventHeader, RecordBody, RecordType};
use crate::rt::{Endian, Endianness, Error, Reader};
use std::io::Read;
use std::ops::Range;

/// Where a cursor's records come from: one record stream, framed record by record.
pub trait RecordSource {
    /// The byte order the stream is framed and decoded in.
    type Order: Endian;
    /// The stream's byte order, as a value of [`RecordSource::Order`] (zero-sized for a
    /// compile-time order).
    fn order(&self) -> Self::Order;
    /// Frames the next record: `Ok(false)` at the end of the stream. `index` (records
    /// framed before) is for errors, which name the offset and the record.
    fn advance(&mut self, index: u64) -> Result<bool, Error>;
    /// The record the last successful [`RecordSource::advance`] framed.
    fn current(&self) -> RawRecord<'_>;
    /// After [`RecordSource::advance`] failed, for a salvaging walk: moves on to where
    /// records parse again, and says how.
    fn resync(&mut self) -> Recovery;
    /// Offset of the end of what was read (the end of the stream once it is over).
    fn end_offset(&self) -> u64;
}

/// Records of a stream held in memory (a file's data section, a `data.N` file of a
/// directory, a saved pipe stream): zero-copy, and resynchronising after damage.
pub struct SliceSource<'a, E: Endian> {
    data: &'a [u8],
    base: u64,
    walker: RecordFramer<'a, E>,
    current: RawRecord<'a>,
    order: E,
}

impl<'a, E: Endian> SliceSource<'a, E> {
    /// `base` is the absolute offset of `data[0]`.
    pub fn new(data: &'a [u8], base: u64, order: E) -> Self {
        SliceSource {
            data,
            base,
            walker: RecordFramer::in_order(data, base, order),
            current: RawRecord {
                offset: base,
                header: EventHeader::default(),
                body: &[],
                payload: &[],
            },
            order,
        }
    }

    /// The stream and the offset of its first byte.
    pub fn input(&self) -> (&'a [u8], u64) {
        (self.data, self.base)
    }
}

impl<E: Endian> RecordSource for SliceSource<'_, E> {
    type Order = E;

    #[inline(always)]
    fn order(&self) -> E {
        self.order
    }

    #[inline(always)]
    fn advance(&mut self, index: u64) -> Result<bool, Error> {
        match self.walker.next() {
            Some(Ok(rec)) => {
                self.current = rec;
                Ok(true)
            }
            Some(Err(e)) => Err(e.with_record(index, failed_record_label(&self.walker))),
            None => Ok(false),
        }
    }

    #[inline(always)]
    fn current(&self) -> RawRecord<'_> {
        self.current
    }

    fn resync(&mut self) -> Recovery {
        let failed_at = self.data.len() - self.walker.rest().len();
        let at = |i: usize| self.base + i as u64;
        match resync(self.data, failed_at, self.order) {
            Some(next) => {
                self.walker = RecordFramer::in_order(&self.data[next..], at(next), self.order);
                Recovery::Skipped {
                    start: at(failed_at),
                    end: at(next),
                }
            }
            None => {
                let end = self.data.len();
                self.walker = RecordFramer::in_order(&self.data[end..], at(end), self.order);
                Recovery::Stopped {
                    start: at(failed_at),
                }
            }
        }
    }

    fn end_offset(&self) -> u64 {
        self.base + self.data.len() as u64
    }
}

/// Records of a pipe-mode stream read from any [`Read`] (stdin, a socket) with bounded
/// memory: the current record and its payload. It cannot seek, so a salvaging walk stops
/// at damage.
pub struct ReadSource<R: Read> {
    inner: R,
    order: Endianness,
    /// The current record: header, body, payload.
    buf: Vec<u8>,
    header: EventHeader,
    /// Offset of the current record, and of the next byte of `inner`.
    at: u64,
    offset: u64,
    /// A salvaging walk gave up at damage: nothing more is read.
    stopped: bool,
}

impl<R: Read> ReadSource<R> {
    /// `offset` is the stream offset of the next byte of `inner` (after the header the
    /// caller read).
    pub fn new(inner: R, offset: u64, order: Endianness) -> Self {
        ReadSource {
            inner,
            order,
            buf: Vec::with_capacity(64 << 10),
            header: EventHeader::default(),
            at: offset,
            offset,
            stopped: false,
        }
    }

    /// Bytes held for the current record.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.capacity()
    }
}

impl<R: Read> RecordSource for ReadSource<R> {
    // Reading is bounded by I/O: the run-time byte order costs nothing measurable here.
    type Order = Endianness;

    fn order(&self) -> Endianness {
        self.order
    }

    fn advance(&mut self, index: u64) -> Result<bool, Error> {
        if self.stopped {
            return Ok(false);
        }
        let (at, e) = (self.offset, self.order);
        self.at = at;
        self.buf.clear();
        self.buf.resize(HEADER_SIZE, 0);
        if !read_exact_or_eof(&mut self.inner, &mut self.buf, at)? {
            return Ok(false);
        }
        let header = EventHeader::decode(&mut Reader::in_order(&self.buf, at, e), &Ctx::default())?;
        let ty = RecordType(header.type_);
        let labelled = |err: Error| err.with_record(index, ty.label());
        let size = usize::from(header.size);
        if size < HEADER_SIZE {
            return Err(labelled(Error::invalid(
                Some(at + 6),
                "a record size of at least 8",
                size.to_string(),
            )));
        }
        self.buf.resize(size, 0);
        read_exact(
            &mut self.inner,
            &mut self.buf[HEADER_SIZE..],
            at + HEADER_SIZE as u64,
        )
        .map_err(labelled)?;
        if ty.has_payload() {
            let body = RecordBody::decode(
                ty,
                &mut Reader::in_order(&self.buf[HEADER_SIZE..], at + 8, e),
                &Ctx::default(),
            )?;
            let len = usize::try_from(body.payload_len()).unwrap_or(usize::MAX);
            // The payload is real data (tracing data, AUX data): read it in bounded steps
            // so that a lying length fails at the end of the input, not in the allocator.
            let mut left = len;
            let mut chunk = [0u8; 64 << 10];
            while left > 0 {
                let n = left.min(chunk.len());
                read_exact(&mut self.inner, &mut chunk[..n], at + self.buf.len() as u64)
                    .map_err(labelled)?;
                self.buf.extend_from_slice(&chunk[..n]);
                left -= n;
            }
        }
        self.header = header;
        self.offset += self.buf.len() as u64;
        Ok(true)
    }

    fn current(&self) -> RawRecord<'_> {
        let size = usize::from(self.header.size).min(self.buf.len());
        RawRecord {
            offset: self.at,
            header: self.header,
            body: &self.buf[HEADER_SIZE.min(size)..size],
            payload: &self.buf[size..],
        }
    }

    fn resync(&mut self) -> Recovery {
        // The damaged record was partly read: what follows cannot be framed.
        self.stopped = true;
        Recovery::Stopped { start: self.at }
    }

    fn end_offset(&self) -> u64 {
        self.offset
    }
}

/// Which record [`RecordCursor::current`] lends.
#[derive(Clone, Copy)]
enum Current {
    None,
    /// The source's record; `expand` when it is a compressed record whose contents come
    /// next.
    Source {
        expand: bool,
    },
    /// A record of the decompressed stream, completed by the compressed record at
    /// `record_offset`.
    Inner {
        rec: InnerRecord,
        record_offset: u64,
    },
}

/// The compressed record being expanded: where its zstd data is in the source's current
/// record body, and the record's index and type (for errors).
#[derive(Clone)]
struct Expanding {
    data: Range<usize>,
    record_offset: u64,
    index: u64,
    ty: RecordType,
}

/// The one record walk: a source's records in stream order, each COMPRESSED/COMPRESSED2
/// record followed by the records it completes (`Origin::Compressed`), decompressed a
/// step at a time so that what is held stays small however far the data expands. Nothing
/// is allocated per record.
pub struct RecordCursor<S: RecordSource> {
    source: S,
    inflater: Option<Inflater>,
    expanding: Option<Expanding>,
    current: Current,
    /// Records of the source framed so far (errors name records by this index).
    index: u64,
    /// `Some` when salvaging: the damage gone past, in order.
    damage: Option<Vec<Damage>>,
    /// `false`: compressed records are not expanded.
    expand: bool,
    done: bool,
}

impl<S: RecordSource> RecordCursor<S> {
    /// A walk of `source`'s records that expands compressed records and ends at the
    /// first error (see [`RecordCursor::salvaging`] to go on past damage).
    pub fn new(source: S) -> Self {
        RecordCursor {
            source,
            inflater: None,
            expanding: None,
            current: Current::None,
            index: 0,
            damage: None,
            expand: true,
            done: false,
        }
    }

    /// The records as they sit in the stream: compressed records are given, not expanded
    /// (what a copy of the stream, or a look at its setup records, needs).
    pub fn framing_only(source: S) -> Self {
        RecordCursor {
            expand: false,
            ..Self::new(source)
        }
    }

    /// Goes on past damage where it can instead of ending at the first error: after a
    /// record whose size is impossible or that runs past the end, at the next place where
    /// records parse again (in memory; a [`Read`] stream stops there); after a compressed
    /// chunk that does not decompress, at the next compressed record, with a new zstd
    /// stream. [`RecordCursor::take_damage`] gives what was gone past.
    pub fn salvaging(mut self) -> Self {
        self.damage.get_or_insert_with(Vec::new);
        self
    }

    /// The damage a salvaging walk went past so far, in order (taken: the next call gives
    /// only what comes after).
    pub fn take_damage(&mut self) -> Vec<Damage> {
        self.damage.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Records of the source framed so far (compressed records' contents not counted).
    pub fn records_framed(&self) -> u64 {
        self.index
    }

    /// The source walked: its own accessors ([`SliceSource::input`],
    /// [`ReadSource::buffered_bytes`]).
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The byte order of the records (the source's).
    pub fn order(&self) -> S::Order {
        self.source.order()
    }

    /// Bytes of decompressed data held (for memory bounds checks).
    pub fn buffered_bytes(&self) -> usize {
        self.inflater.as_ref().map_or(0, Inflater::buffered_bytes)
    }

    /// Moves to the next record: `Ok(false)` at the end. After an error (not salvaging),
    /// the walk is over.
    #[inline(always)]
    pub fn advance(&mut self) -> Result<bool, Error> {
        // The common case, kept small enough to inline into every walk: the cursor is at
        // a record of the source that has no contents to expand, and the next one is too.
        if let Current::Source { expand: false } = self.current {
            let moved = self.source.advance(self.index);
            if let Ok(true) = moved {
                self.index += 1;
                if !(self.expand && is_compressed(self.source.current().record_type())) {
                    return Ok(true);
                }
            }
            self.current = Current::None;
            return match self.source_moved(moved)? {
                Some(at_record) => Ok(at_record),
                None => self.advance_slow(),
            };
        }
        // Inside a compressed record's contents: the next record when it is already
        // decompressed whole.
        if let Current::Inner { rec, record_offset } = self.current {
            if let Some(inflater) = &mut self.inflater {
                inflater.consume(rec);
                self.current = Current::None;
                if let Some(rec) = inflater.next_decompressed(self.source.order()) {
                    self.current = Current::Inner { rec, record_offset };
                    return Ok(true);
                }
            }
        }
        self.advance_slow()
    }

    /// [`RecordCursor::advance`] from anywhere: inside a compressed record's contents, at
    /// the start, after damage.
    #[inline(never)]
    fn advance_slow(&mut self) -> Result<bool, Error> {
        match std::mem::replace(&mut self.current, Current::None) {
            Current::Inner { rec, .. } => {
                if let Some(inflater) = &mut self.inflater {
                    inflater.consume(rec);
                }
            }
            Current::Source { expand: true } => self.begin_expanding()?,
            _ => {}
        }
        if self.done {
            return Ok(false);
        }
        loop {
            if let Some(x) = &self.expanding {
                let input = self
                    .source
                    .current()
                    .body
                    .get(x.data.clone())
                    .unwrap_or(&[]);
                let inflater = self.inflater.get_or_insert_with(Inflater::new);
                match inflater.next_record(input, self.source.order()) {
                    Ok(Some(rec)) => {
                        self.current = Current::Inner {
                            rec,
                            record_offset: x.record_offset,
                        };
                        return Ok(true);
                    }
                    Ok(None) => self.expanding = None,
                    Err((e, recovery)) => {
                        let e = e.with_record(x.index, x.ty.label());
                        if matches!(recovery, Recovery::CompressedStreamRestarted { .. }) {
                            self.expanding = None;
                        }
                        self.went_past(e, recovery)?;
                    }
                }
                continue;
            }
            let moved = self.source.advance(self.index);
            if let Ok(true) = moved {
                self.index += 1;
            }
            if let Some(at_record) = self.source_moved(moved)? {
                return Ok(at_record);
            }
        }
    }

    /// What the source's move means: at a record (`Some(true)`, its index counted), at
    /// the end (`Some(false)`), or past damage when salvaging (`None`: move again).
    fn source_moved(&mut self, moved: Result<bool, Error>) -> Result<Option<bool>, Error> {
        match moved {
            Ok(true) => {
                let expand = self.expand && is_compressed(self.source.current().record_type());
                self.current = Current::Source { expand };
                Ok(Some(true))
            }
            Ok(false) => {
                self.done = true;
                let end = self.source.end_offset();
                if let Some(e) = self.inflater.as_ref().and_then(|i| i.unfinished(end)) {
                    self.went_past(e, Recovery::AtEnd)?;
                }
                Ok(Some(false))
            }
            Err(e) if self.damage.is_some() => {
                let recovery = self.source.resync();
                self.went_past(e, recovery)?;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    /// The record [`RecordCursor::advance`] moved to.
    #[inline(always)]
    pub fn current(&self) -> (Origin, RawRecord<'_>) {
        match self.current {
            Current::Inner { rec, record_offset } => match &self.inflater {
                Some(inflater) => (Origin::Compressed { record_offset }, inflater.record(rec)),
                None => (Origin::Input, self.source.current()),
            },
            _ => (Origin::Input, self.source.current()),
        }
    }

    /// [`RecordCursor::advance`], then [`RecordCursor::current`]: `None` at the end.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<(Origin, RawRecord<'_>)>, Error> {
        Ok(if self.advance()? {
            Some(self.current())
        } else {
            None
        })
    }

    /// Starts on the contents of the compressed record the cursor is at.
    #[cold]
    fn begin_expanding(&mut self) -> Result<(), Error> {
        let rec = self.source.current();
        let ty = rec.record_type();
        let order = self.source.order();
        let index = self.index - 1;
        match zstd_range(ty, rec.body, rec.offset + HEADER_SIZE as u64, order) {
            Ok(Some(data)) => {
                self.inflater
                    .get_or_insert_with(Inflater::new)
                    .begin(rec.offset);
                self.expanding = Some(Expanding {
                    data,
                    record_offset: rec.offset,
                    index,
                    ty,
                });
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                let recovery = Recovery::CompressedStreamRestarted {
                    record_offset: rec.offset,
                };
                self.inflater = None;
                self.went_past(e.with_record(index, ty.label()), recovery)
            }
        }
    }

    /// Damage: noted and gone past when salvaging, else the end of the walk.
    #[cold]
    fn went_past(&mut self, error: Error, recovery: Recovery) -> Result<(), Error> {
        match &mut self.damage {
            Some(damage) => {
                damage.push(Damage { error, recovery });
                Ok(())
            }
            None => {
                self.done = true;
                Err(error)
            }
        }
    }
}

impl<'a, E: Endian> RecordCursor<SliceSource<'a, E>> {
    /// The next record of the input itself, borrowing the input (the contents of
    /// compressed records are passed over): `None` at the end.
    #[inline(always)]
    pub fn next_in_input(&mut self) -> Result<Option<RawRecord<'a>>, Error> {
        while self.advance()? {
            if let Current::Source { .. } = self.current {
                return Ok(Some(self.source.current));
            }
        }
        Ok(None)
    }
}

/// Fills `buf`; an end of input is an error naming the offset.
pub(crate) fn read_exact(r: &mut impl Read, buf: &mut [u8], at: u64) -> Result<(), Error> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => {
                return Err(Error::unexpected_end(
                    at + done as u64,
                    (buf.len() - done) as u64,
                    0,
                ))
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::from(e).or_offset(at + done as u64)),
        }
    }
    Ok(())
}

/// Like [`read_exact`], but an end of input before the first byte is `Ok(false)`.
fn read_exact_or_eof(r: &mut impl Read, buf: &mut [u8], at: u64) -> Result<bool, Error> {
    loop {
        match r.read(buf) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                read_exact(r, &mut buf[n..], at + n as u64)?;
                return Ok(true);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::from(e).or_offset(at)),
        }
    }
}
