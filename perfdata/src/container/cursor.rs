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
use super::framing::{
    bad_size, failed_record_label, payload_len, resync, resync_scan, RESYNC_NEAR,
};
use super::framing::{frame_header, RawRecord, RecordFramer, HEADER_SIZE};
use super::origin::{Damage, Origin, Recovery};
use super::split::{is_split, Joiner};
use crate::generated::perf_data::{EventHeader, RecordType};
use crate::rt::{Endian, Endianness, Error};
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
/// memory: the current record and its payload, and during a salvaging walk a look-ahead
/// window of at most [`SALVAGE_LOOKAHEAD`] bytes, in which it finds where records parse
/// again after damage as a walk in memory does (it cannot seek back).
pub struct ReadSource<R: Read> {
    inner: Pushback<R>,
    order: Endianness,
    /// The current record: header, body, payload.
    buf: Vec<u8>,
    /// Bytes of `buf` read (fewer than its length when the input ended inside a record).
    filled: usize,
    header: EventHeader,
    /// The current record's size, header included (`header.size` is 16 bits; a
    /// simpleperf record's size is 32).
    size: usize,
    /// Offset of the current record, and of the next byte of `inner`.
    at: u64,
    offset: u64,
    /// A salvaging walk found no record after damage, or reading failed: nothing more is
    /// read.
    stopped: bool,
}

/// The look-ahead of a salvaging [`ReadSource`]: the bytes after damage it holds at most
/// while looking for where records parse again.
pub const SALVAGE_LOOKAHEAD: usize = 1 << 20;

/// The end of a look-ahead window where a place is not tried until more of the input is
/// read (or the input ends): room for the chain of records that confirms a place.
const CHAIN_ROOM: usize = 4 * RESYNC_NEAR;

impl<R: Read> ReadSource<R> {
    /// `offset` is the stream offset of the next byte of `inner` (after the header the
    /// caller read).
    pub fn new(inner: R, offset: u64, order: Endianness) -> Self {
        ReadSource {
            inner: Pushback {
                held: Vec::new(),
                pos: 0,
                inner,
            },
            order,
            buf: Vec::with_capacity(64 << 10),
            filled: 0,
            header: EventHeader::default(),
            size: 0,
            at: offset,
            offset,
            stopped: false,
        }
    }

    /// Bytes held for the current record and read ahead.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.capacity() + self.inner.held.capacity()
    }

    /// Reads into `buf` until it holds `len` bytes or the input ends; `Ok(false)` at the
    /// end of input.
    fn fill_to(&mut self, len: usize) -> Result<bool, Error> {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        while self.filled < len {
            match self.inner.read(&mut self.buf[self.filled..len]) {
                Ok(0) => return Ok(false),
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.stopped = true;
                    return Err(Error::from(e).or_offset(self.at + self.filled as u64));
                }
            }
        }
        Ok(true)
    }

    /// Frames the next record into `buf`; errors are those of the walk in memory
    /// ([`RecordFramer`]), at the same offsets.
    fn frame(&mut self) -> Result<bool, Error> {
        let (at, e) = (self.at, self.order);
        if !self.fill_to(HEADER_SIZE)? {
            if self.filled == 0 {
                return Ok(false);
            }
            return Err(
                Error::unexpected_end(at, HEADER_SIZE as u64, self.filled as u64)
                    .in_field("perf_event_header"),
            );
        }
        let (header, size) = frame_header(&self.buf[..HEADER_SIZE], e);
        self.header = header;
        self.size = size;
        if size < HEADER_SIZE || !self.fill_to(size)? {
            return Err(bad_size(at, size, self.filled));
        }
        let ty = RecordType(header.type_);
        if ty.has_payload() {
            let len = payload_len(ty, &self.buf[HEADER_SIZE..size], at, e)?;
            // The payload is real data (tracing data, AUX data): read in bounded steps,
            // so that a lying length fails at the end of the input, not in the allocator.
            let (mut want, end) = (size, size.saturating_add(len));
            while want < end {
                want = want.saturating_add(64 << 10).min(end);
                if !self.fill_to(want)? {
                    return Err(Error::unexpected_end(
                        at + size as u64,
                        len as u64,
                        (self.filled - size) as u64,
                    ));
                }
            }
        }
        Ok(true)
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
        self.at = self.offset;
        self.buf.clear();
        self.filled = 0;
        match self.frame() {
            Ok(true) => {
                self.offset += self.buf.len() as u64;
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(err) => {
                let label = if self.filled >= HEADER_SIZE {
                    RecordType(self.header.type_).label()
                } else {
                    "?".to_string()
                };
                Err(err.with_record(index, label))
            }
        }
    }

    fn current(&self) -> RawRecord<'_> {
        let size = self.size.min(self.buf.len());
        RawRecord {
            offset: self.at,
            header: self.header,
            body: &self.buf[HEADER_SIZE.min(size)..size],
            payload: &self.buf[size..],
        }
    }

    fn resync(&mut self) -> Recovery {
        let start = self.at;
        if self.stopped {
            return Recovery::Stopped { start };
        }
        // The window: the damaged record as far as it was read, then the input. The
        // places tried and the order are those of `resync` in memory; a place is tried
        // once the window holds the chain after it or the input has ended.
        let mut window = std::mem::take(&mut self.buf);
        window.truncate(self.filled);
        let (mut base, mut from, mut step, mut to) = (start, 8, 8, RESYNC_NEAR);
        let found = loop {
            let ended = match top_up(&mut self.inner, &mut window, SALVAGE_LOOKAHEAD) {
                Ok(ended) => ended,
                Err(_) => break None,
            };
            let limit = if ended {
                window.len()
            } else {
                window.len().saturating_sub(CHAIN_ROOM)
            };
            if let Some(at) = resync_scan(&window, from, to.min(limit), step, ended, self.order) {
                break Some(at);
            }
            if step == 8 && (to <= limit || ended) {
                // The first pass is over: every byte from the damaged record on.
                (from, step, to) = (1, 1, usize::MAX);
            } else if ended {
                // Read to the end: the stream ends here, as a walk in memory says.
                self.offset = base + window.len() as u64;
                break None;
            } else {
                // Slide: what was tried is let go.
                let tried = from.max(limit);
                window.drain(..tried);
                base += tried as u64;
                from = 0;
            }
        };
        self.buf = Vec::with_capacity(64 << 10);
        match found {
            Some(at) => {
                self.inner.unread(&window[at..]);
                self.offset = base + at as u64;
                Recovery::Skipped {
                    start,
                    end: self.offset,
                }
            }
            None => {
                self.stopped = true;
                Recovery::Stopped { start }
            }
        }
    }

    fn end_offset(&self) -> u64 {
        self.offset
    }
}

/// Reads from `r` onto the end of `window` until it holds `len` bytes: `Ok(true)` when
/// the input ended first.
fn top_up(r: &mut impl Read, window: &mut Vec<u8>, len: usize) -> std::io::Result<bool> {
    let mut chunk = [0u8; 64 << 10];
    while window.len() < len {
        let want = (len - window.len()).min(chunk.len());
        match r.read(&mut chunk[..want]) {
            Ok(0) => return Ok(true),
            Ok(n) => window.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// A [`Read`] with bytes put back in front of it: what a [`ReadSource`] read ahead and
/// did not use.
struct Pushback<R> {
    held: Vec<u8>,
    pos: usize,
    inner: R,
}

impl<R> Pushback<R> {
    /// Puts `bytes` back before what is still held.
    fn unread(&mut self, bytes: &[u8]) {
        let mut held = Vec::with_capacity(bytes.len() + self.held.len() - self.pos);
        held.extend_from_slice(bytes);
        held.extend_from_slice(&self.held[self.pos..]);
        (self.held, self.pos) = (held, 0);
    }
}

impl<R: Read> Read for Pushback<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.held.len() {
            let n = out.len().min(self.held.len() - self.pos);
            out[..n].copy_from_slice(&self.held[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.held.len() {
                // Let the look-ahead's memory go once it is used.
                (self.held, self.pos) = (Vec::new(), 0);
            }
            return Ok(n);
        }
        self.inner.read(out)
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
    /// The record a run of SPLIT records made (held by the joiner).
    Joined,
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
    /// `false`: compressed records are not expanded, SPLIT records not joined.
    expand: bool,
    /// simpleperf's SPLIT records being joined.
    joiner: Joiner,
    /// Runs of SPLIT records that made no record, when not salvaging (never fatal: the
    /// walk goes on without the record they held).
    unjoined: Vec<Error>,
    done: bool,
}

/// Records whose contents the cursor gives after them: compressed records, SPLIT runs.
#[inline(always)]
fn expands(ty: RecordType) -> bool {
    // One comparison for the common types (all below COMPRESSED).
    ty.0 >= RecordType::COMPRESSED.0 && (is_compressed(ty) || is_split(ty))
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
            joiner: Joiner::default(),
            unjoined: Vec::new(),
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
    /// records parse again (a [`Read`] stream finds the same place, reading ahead at most
    /// [`SALVAGE_LOOKAHEAD`] bytes at a time); after a compressed chunk that does not
    /// decompress, at the next compressed record, with a new zstd stream.
    /// [`RecordCursor::take_damage`] gives what was gone past.
    pub fn salvaging(mut self) -> Self {
        self.damage.get_or_insert_with(Vec::new);
        self
    }

    /// The damage a salvaging walk went past so far, in order (taken: the next call gives
    /// only what comes after).
    pub fn take_damage(&mut self) -> Vec<Damage> {
        self.damage.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The runs of simpleperf SPLIT records that made no record (no SPLIT_END, or pieces
    /// that do not add up), when not salvaging (a salvaging walk gives them as damage):
    /// each error names the run's first record. Taken: the next call gives only later ones.
    pub fn take_unjoined(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.unjoined)
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
        self.inflater.as_ref().map_or(0, Inflater::buffered_bytes) + self.joiner.buffered_bytes()
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
                let ty = self.source.current().record_type();
                if !(self.expand && (expands(ty) || self.joiner.in_run())) {
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
        // decompressed whole (SPLIT records, which simpleperf compresses too, and the
        // records after them are joined on the slow path).
        if let Current::Inner { rec, record_offset } = self.current {
            if !is_split(RecordType(rec.header.type_)) {
                if let Some(inflater) = &mut self.inflater {
                    inflater.consume(rec);
                    self.current = Current::None;
                    if let Some(rec) = inflater.next_decompressed(self.source.order()) {
                        if !(is_split(RecordType(rec.header.type_)) || self.joiner.in_run()) {
                            self.current = Current::Inner { rec, record_offset };
                            return Ok(true);
                        }
                    }
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
            Current::Inner { rec, record_offset } => {
                let mut joined = None;
                if let Some(inflater) = &mut self.inflater {
                    if is_split(RecordType(rec.header.type_)) {
                        // Named by the compressed record that completed it.
                        let raw = RawRecord {
                            offset: record_offset,
                            ..inflater.record(rec)
                        };
                        let index = self.index - 1;
                        joined = Some(self.joiner.take(&raw, index, self.source.order()));
                    }
                    inflater.consume(rec);
                }
                match joined {
                    Some(Ok(true)) => {
                        self.current = Current::Joined;
                        return Ok(true);
                    }
                    Some(Err(e)) => self.join_failed(e)?,
                    _ => {}
                }
            }
            Current::Source { expand: true } => {
                let rec = self.source.current();
                if is_split(rec.record_type()) {
                    match self.joiner.take(&rec, self.index - 1, self.source.order()) {
                        Ok(true) => {
                            self.current = Current::Joined;
                            return Ok(true);
                        }
                        Ok(false) => {}
                        Err(e) => self.join_failed(e)?,
                    }
                } else {
                    self.begin_expanding()?
                }
            }
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
                        let (record_offset, ty) = (x.record_offset, RecordType(rec.header.type_));
                        if self.joiner.in_run() && !is_split(ty) {
                            let what = format!("a {} record", ty.label());
                            if let Some(e) = self.joiner.interrupted(record_offset, &what) {
                                self.join_failed(e)?;
                            }
                        }
                        self.current = Current::Inner { rec, record_offset };
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
                let rec = self.source.current();
                let ty = rec.record_type();
                if self.expand && self.joiner.in_run() && !is_split(ty) {
                    let what = format!("a {} record", ty.label());
                    if let Some(e) = self.joiner.interrupted(rec.offset, &what) {
                        self.join_failed(e)?;
                    }
                }
                let expand = self.expand && expands(ty);
                self.current = Current::Source { expand };
                Ok(Some(true))
            }
            Ok(false) => {
                self.done = true;
                let end = self.source.end_offset();
                if let Some(e) = self.inflater.as_ref().and_then(|i| i.unfinished(end)) {
                    self.went_past(e, Recovery::AtEnd)?;
                }
                if let Some(e) = self.joiner.interrupted(end, "the end of the records") {
                    self.join_failed(e)?;
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
            Current::Joined => {
                let (record_offset, rec) = self.joiner.record();
                (Origin::Joined { record_offset }, rec)
            }
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

    /// A run of SPLIT records that made no record: damage when salvaging, else noted
    /// ([`RecordCursor::take_unjoined`]); the walk goes on either way.
    #[cold]
    fn join_failed(&mut self, error: Error) -> Result<(), Error> {
        let record_offset = error.offset().unwrap_or(0);
        match &mut self.damage {
            Some(damage) => damage.push(Damage {
                error,
                recovery: Recovery::JoinDropped { record_offset },
            }),
            None => self.unjoined.push(error),
        }
        Ok(())
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
    /// [`RecordCursor::advance`] and [`RecordCursor::current`] in one step, for the
    /// common case: the cursor is at a record of the input with nothing to expand after
    /// it, and the next record is plain (whole, of a kernel type below COMPRESSED, with
    /// no payload after it). `None` when the next step is anything else:
    /// [`RecordCursor::advance`] takes it. The record comes back by value, not through
    /// the cursor's state, so the walk's hot loop reads no record it has just stored.
    #[inline(always)]
    pub(crate) fn next_plain(&mut self) -> Option<RawRecord<'a>> {
        if !self.in_plain_lane() {
            return None;
        }
        let rec = self.source.walker.next_plain()?;
        self.source.current = rec;
        self.index += 1;
        Some(rec)
    }

    /// [`RecordCursor::next_plain`] for a run of records: calls `f` with each plain
    /// record while it returns `Ok(true)`. `Ok(true)` when the run ended at a record
    /// that is not plain (or at the end: [`RecordCursor::advance`] takes what comes
    /// next), `Ok(false)` when `f` said stop, `f`'s error as it came. The cursor's state
    /// is checked once for the run and written once after it (at the last record given),
    /// not at every record: nothing but this loop moves the cursor meanwhile.
    #[inline(always)]
    pub(crate) fn plain_run(
        &mut self,
        mut f: impl FnMut(RawRecord<'a>) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        if !self.in_plain_lane() {
            return Ok(true);
        }
        let walker = &mut self.source.walker;
        let (mut taken, mut last) = (0u64, None);
        let outcome = loop {
            let at = walker.next_at();
            let Some(rec) = walker.next_plain() else {
                break Ok(true);
            };
            taken += 1;
            last = Some(at);
            match f(rec) {
                Ok(true) => {}
                stop => break stop,
            }
        };
        if let Some(rec) = last.and_then(|at| walker.plain_at(at)) {
            self.source.current = rec;
        }
        self.index += taken;
        outcome
    }

    /// At a record of the input with nothing to expand or join after it: the next step
    /// may be a plain record straight from the framing.
    #[inline(always)]
    fn in_plain_lane(&self) -> bool {
        matches!(self.current, Current::Source { expand: false })
            && !(self.expand && self.joiner.in_run())
    }

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
