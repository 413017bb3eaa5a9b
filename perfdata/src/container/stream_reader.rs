//! Pipe-mode input from any [`Read`] (stdin, a socket) with bounded memory: one record
//! (and its payload) at a time, plus the undecoded rest of the current compressed chunk.

use super::decompress::{zstd_data, Decompressor};
use super::file::{failed_record_label, record_label, Origin};
use super::format::{detect, Layout};
use super::session::{AttrPlan, EventAttr, RecordCtx, Session};
use super::stream::{RawRecord, RecordWalker, HEADER_SIZE};
use crate::generated::perf_data::{Ctx, EventHeader, RecordBody, RecordType, SampleView};
use crate::rt::{Endianness, Error, ErrorKind, Reader};
use std::io::Read;

/// One record read from a stream; borrows the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct StreamRecord<'b> {
    pub origin: Origin,
    pub raw: RawRecord<'b>,
    /// The context to decode the body with (its attr's layout, misc, CPU counts).
    pub ctx: RecordCtx,
    /// The plan of the record's event, and the stream's byte order (for [`Self::sample`]).
    plan: Option<&'b AttrPlan>,
    endian: Endianness,
}

impl<'b> StreamRecord<'b> {
    /// Decodes the body (see [`super::file::decode_record`]).
    pub fn decode(&self) -> Result<RecordBody<'b>, Error> {
        super::file::decode_record(self.endian, &self.raw, &self.ctx)
    }

    /// A zero-copy view of a SAMPLE record (`None` for other types), as
    /// [`super::PerfData::sample`] gives.
    pub fn sample(&self) -> Result<Option<SampleView<'_>>, Error> {
        match self.plan {
            Some(plan) if self.raw.record_type() == RecordType::SAMPLE => SampleView::new(
                self.raw.body,
                self.raw.offset + HEADER_SIZE as u64,
                self.endian,
                &self.ctx,
                &plan.sample,
            )
            .map(Some),
            _ => Ok(None),
        }
    }
}

/// Reads a pipe-mode perf.data stream record by record.
pub struct StreamReader<R: Read> {
    inner: R,
    endian: Endianness,
    session: Session<'static>,
    /// The current record read from `inner`: header, body, payload.
    buf: Vec<u8>,
    /// Offset in the stream of the next byte of `inner`.
    offset: u64,
    index: u64,
    decompressor: Option<Decompressor>,
    /// Offset of the compressed record whose data is being drained.
    compressed_at: u64,
    /// Decompressed bytes handed out by the last call, dropped at the next one.
    consume_next: usize,
    /// Offset of the next record within the decompressed stream.
    decompressed_offset: u64,
}

impl<R: Read> StreamReader<R> {
    /// Reads and checks the pipe header. A file-layout input needs random access: use
    /// [`super::PerfData`] on its bytes (or a memory map) instead.
    pub fn new(mut inner: R) -> Result<Self, Error> {
        let mut header = [0u8; 16];
        read_exact(&mut inner, &mut header, 0)?;
        let format = detect(&header)?;
        if format.layout != Layout::Pipe {
            return Err(Error::invalid(
                Some(8),
                "a pipe-mode stream (header size 16)",
                "a file-layout perf.data (its records are found through the header's section offsets, which needs random access): read it as a file, by path or from memory, not as a stream",
            ));
        }
        Ok(StreamReader {
            inner,
            endian: format.endian,
            session: Session::default(),
            buf: Vec::with_capacity(64 << 10),
            offset: 16,
            index: 0,
            decompressor: None,
            compressed_at: 0,
            consume_next: 0,
            decompressed_offset: 0,
        })
    }

    pub fn endian(&self) -> Endianness {
        self.endian
    }

    /// The attrs announced so far (HEADER_ATTR records).
    pub fn attrs(&self) -> &[EventAttr<'static>] {
        &self.session.attrs
    }

    /// Bytes held for the current record and the decompressed carry-over (for memory
    /// bounds checks).
    pub fn buffered_bytes(&self) -> usize {
        self.buf.capacity() + self.decompressor.as_ref().map_or(0, |d| d.pending().len())
    }

    /// The next record, `None` at the end of the stream.
    pub fn next_record(&mut self) -> Result<Option<StreamRecord<'_>>, Error> {
        // Reading is bounded by I/O: the run-time byte order costs nothing measurable here.
        let e = self.endian;
        // Records still inside the last compressed chunk come first. (The walk is done
        // twice — once to decide, once to lend — so that no borrow outlives the decision.)
        if let Some(d) = &mut self.decompressor {
            d.consume(self.consume_next);
            self.decompressed_offset += self.consume_next as u64;
            self.consume_next = 0;
        }
        let next_inner = match &self.decompressor {
            Some(d) => {
                let mut walker = RecordWalker::in_order(d.pending(), self.decompressed_offset, e);
                match walker.next() {
                    Some(Ok(rec)) => Some(rec.stream_len()),
                    Some(Err(e)) if !matches!(e.kind(), ErrorKind::UnexpectedEnd { .. }) => {
                        return Err(e.with_record(self.index, failed_record_label(&walker)));
                    }
                    // Empty, or the rest arrives with the next compressed record.
                    _ => None,
                }
            }
            None => None,
        };
        if let Some(len) = next_inner {
            self.consume_next = len;
            let d = self.decompressor.as_ref().expect("checked above");
            let raw = RecordWalker::in_order(d.pending(), self.decompressed_offset, e)
                .next()
                .expect("walked above")?;
            let ctx = self
                .session
                .record_ctx(raw.record_type(), raw.header.misc, raw.body, e);
            let origin = Origin::Compressed {
                record_offset: self.compressed_at,
            };
            let plan = ctx.attr.and_then(|i| self.session.plan(i));
            return Ok(Some(StreamRecord {
                origin,
                raw,
                ctx,
                plan,
                endian: self.endian,
            }));
        }
        // The next record of the stream itself.
        let at = self.offset;
        self.buf.clear();
        self.buf.resize(HEADER_SIZE, 0);
        if !read_exact_or_eof(&mut self.inner, &mut self.buf, at)? {
            if let Some(d) = &self.decompressor {
                if !d.pending().is_empty() {
                    return Err(Error::invalid(
                        Some(at),
                        "the compressed stream to end on a record boundary",
                        format!("{} undecoded bytes", d.pending().len()),
                    ));
                }
            }
            return Ok(None);
        }
        let header = EventHeader::decode(&mut Reader::in_order(&self.buf, at, e), &Ctx::default())?;
        let size = usize::from(header.size);
        if size < HEADER_SIZE {
            return Err(Error::invalid(
                Some(at + 6),
                "a record size of at least 8",
                size.to_string(),
            )
            .with_record(self.index, record_label(RecordType(header.type_))));
        }
        self.buf.resize(size, 0);
        read_exact(
            &mut self.inner,
            &mut self.buf[HEADER_SIZE..],
            at + HEADER_SIZE as u64,
        )
        .map_err(|e| e.with_record(self.index, record_label(RecordType(header.type_))))?;
        let ty = RecordType(header.type_);
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
                    .map_err(|e| e.with_record(self.index, record_label(ty)))?;
                self.buf.extend_from_slice(&chunk[..n]);
                left -= n;
            }
        }
        self.offset += self.buf.len() as u64;
        self.index += 1;
        // Split borrows: the record lends from `buf` while the session and decompressor
        // learn from it.
        let (buf, session, decompressor) = (&self.buf, &mut self.session, &mut self.decompressor);
        let rec = RawRecord {
            offset: at,
            header,
            body: &buf[HEADER_SIZE..size],
            payload: &buf[size..],
        };
        session
            .note_record(&rec, e)
            .map_err(|e| e.with_record(self.index - 1, record_label(ty)))?;
        if let Some(data) = zstd_data(ty, rec.body, at + HEADER_SIZE as u64, e)? {
            let d = match decompressor {
                Some(d) => d,
                None => decompressor.insert(Decompressor::new()?),
            };
            d.feed(&data, at)?;
            self.compressed_at = at;
        }
        let ctx = self
            .session
            .record_ctx(ty, header.misc, &self.buf[HEADER_SIZE..size], e);
        let raw = RawRecord {
            offset: at,
            header,
            body: &self.buf[HEADER_SIZE..size],
            payload: &self.buf[size..],
        };
        Ok(Some(StreamRecord {
            origin: Origin::Stream,
            raw,
            ctx,
            plan: ctx.attr.and_then(|i| self.session.plan(i)),
            endian: self.endian,
        }))
    }
}

/// Fills `buf`; an end of input is an error naming the offset.
fn read_exact(r: &mut impl Read, buf: &mut [u8], at: u64) -> Result<(), Error> {
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
