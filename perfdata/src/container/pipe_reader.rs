//! Pipe-mode input from any [`Read`] (stdin, a socket) with bounded memory: one record
//! (and its payload) at a time, plus the undecoded rest of the current compressed chunk.

use super::cursor::{read_exact, ReadSource, RecordCursor};
use super::format::{detect, Format, Layout};
use super::framing::{RawRecord, HEADER_SIZE};
use super::origin::Origin;
use super::session::{AttrPlan, EventAttr, RecordCtx, Session};
use crate::generated::perf_data::{RecordBody, RecordType, SampleView};
use crate::rt::{Endianness, Error};
use std::io::Read;

/// One record read from a stream; borrows the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct PipeRecord<'b> {
    /// In the stream itself, or expanded from a compressed record.
    pub origin: Origin,
    /// The record's header, body and payload (offsets in the stream, or in the
    /// decompressed data: see [`Origin`]).
    pub raw: RawRecord<'b>,
    /// The context to decode the body with (its attr's layout, misc, CPU counts).
    pub ctx: RecordCtx,
    /// The plan of the record's event, and the stream's byte order (for [`Self::sample`]).
    plan: Option<&'b AttrPlan>,
    endian: Endianness,
}

impl<'b> PipeRecord<'b> {
    /// Decodes the body (see [`super::framing::decode_record`]).
    pub fn decode(&self) -> Result<RecordBody<'b>, Error> {
        super::framing::decode_record(self.endian, &self.raw, &self.ctx)
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

/// Reads a pipe-mode perf.data stream record by record: the [`RecordCursor`] over a
/// [`ReadSource`], with the attrs the stream announces as it goes.
pub struct PipeReader<R: Read> {
    cursor: RecordCursor<ReadSource<R>>,
    session: Session<'static>,
    format: Format,
}

impl<R: Read> PipeReader<R> {
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
        Ok(PipeReader {
            cursor: RecordCursor::new(ReadSource::new(inner, 16, format.endian)),
            session: Session::default(),
            format,
        })
    }

    /// The stream's format, from its header (byte order, legacy `PERFFILE` magic).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Goes on past damage as a walk of the stream in memory does (see
    /// [`RecordCursor::salvaging`]), looking ahead at most [`super::SALVAGE_LOOKAHEAD`]
    /// bytes; [`PipeReader::take_damage`] gives what was gone past.
    pub fn salvaging(mut self) -> Self {
        self.cursor = self.cursor.salvaging();
        self
    }

    /// The damage a salvaging walk went past so far, in order (taken).
    pub fn take_damage(&mut self) -> Vec<super::Damage> {
        self.cursor.take_damage()
    }

    /// The stream's byte order, from its magic.
    pub fn endian(&self) -> Endianness {
        self.cursor.order()
    }

    /// The attrs announced so far (HEADER_ATTR records).
    pub fn attrs(&self) -> &[EventAttr<'static>] {
        &self.session.attrs
    }

    /// Bytes held for the current record and for decompressed data (buffer capacities,
    /// for memory bounds checks).
    pub fn buffered_bytes(&self) -> usize {
        self.cursor.source().buffered_bytes() + self.cursor.buffered_bytes()
    }

    /// The next record, `None` at the end of the stream.
    pub fn next_record(&mut self) -> Result<Option<PipeRecord<'_>>, Error> {
        if !self.cursor.advance()? {
            return Ok(None);
        }
        let e = self.cursor.order();
        let (origin, raw) = self.cursor.current();
        if origin == Origin::Input {
            // HEADER_ATTR and the context-source features: what later records need.
            self.session.note_record(&raw, e).map_err(|err| {
                err.with_record(self.cursor.records_framed() - 1, raw.record_type().label())
            })?;
        }
        let ctx = self
            .session
            .record_ctx(raw.record_type(), raw.header.misc, raw.body, e);
        Ok(Some(PipeRecord {
            origin,
            raw,
            ctx,
            plan: ctx.attr.and_then(|i| self.session.plan(i)),
            endian: e,
        }))
    }
}
