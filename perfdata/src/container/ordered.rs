//! Time order, as perf delivers records (`ordered_events.c`).
//!
//! perf writes records per CPU buffer, so the file is only ordered *between* rounds: at a
//! FINISHED_ROUND, every record with a timestamp up to the largest one seen before the
//! previous round ended can be delivered. Records are queued by (time, arrival); at each
//! FINISHED_ROUND those with `time <= next_flush` are delivered and `next_flush` becomes the
//! largest time queued so far; the rest follow at the end. Records without a timestamp
//! (perf's own records, or no TIME in the sample_id) are delivered as they come.
//! FINISHED_INIT ends the synthesized prologue, whose timed records all precede live data,
//! so everything queued is delivered there too (perf's order is the same; less is held).
//!
//! The queue holds where a record is, not its bytes: records of the input are found again
//! in the input (the memory map), and only records decompressed from COMPRESSED chunks —
//! whose buffer moves on — are copied, into one arena that is trimmed after every round.
//! Timestamps are read at the offset the attr's plan gives (generated from the spec), not
//! by decoding the record.

use super::file::{Origin, PerfData, RecordFn};
use super::session::{RecordCtx, Session};
use super::stream::{RawRecord, HEADER_SIZE};
use crate::generated::perf_data::{EventHeader, RecordType};
use crate::rt::{static_endian, Endian, Error};

/// A queued record: its time, header and where its body is.
#[derive(Clone, Copy)]
struct Queued {
    time: u64,
    /// `RawRecord::offset` to report (in the input, or in the decompressed stream).
    offset: u64,
    /// `Origin::Compressed`'s `record_offset`, or `u64::MAX` for a record of the input.
    record_offset: u64,
    header: EventHeader,
    /// Start of the body: in the record stream for records of the input, else in the arena
    /// (as an arena position, see `Queue::arena_base`).
    body_at: u64,
    attr: Option<u32>,
}

/// The records waiting for their round, in arrival order until a flush sorts them.
#[derive(Default)]
struct Queue {
    items: Vec<Queued>,
    /// Bodies of queued decompressed records.
    arena: Vec<u8>,
    /// Arena position of `arena[0]` (positions only grow; the front is dropped as records
    /// are delivered).
    arena_base: u64,
}

impl Queue {
    fn push(
        &mut self,
        time: u64,
        origin: Origin,
        rec: &RawRecord<'_>,
        data_start: u64,
        attr: Option<u32>,
    ) {
        let (record_offset, body_at) = match origin {
            Origin::Stream => (u64::MAX, rec.offset + HEADER_SIZE as u64 - data_start),
            Origin::Compressed { record_offset } => {
                let at = self.arena_base + self.arena.len() as u64;
                self.arena.extend_from_slice(rec.body);
                (record_offset, at)
            }
        };
        self.items.push(Queued {
            time,
            offset: rec.offset,
            record_offset,
            header: rec.header,
            body_at,
            attr,
        });
    }

    /// Delivers, in (time, arrival) order, every queued record with `time <= limit`.
    /// Returns `false` when `f` asked to stop.
    fn flush(
        &mut self,
        limit: u64,
        data: &[u8],
        session: &Session<'_>,
        f: &mut RecordFn<'_>,
    ) -> Result<bool, Error> {
        if self.items.is_empty() {
            return Ok(true);
        }
        // Stable: equal times keep their arrival order. The queue is a few sorted runs
        // (one per CPU buffer, plus the sorted rest of the last round), which the
        // standard library's merge sort takes in close to linear time.
        self.items.sort_by_key(|q| q.time);
        let n = self.items.partition_point(|q| q.time <= limit);
        for q in &self.items[..n] {
            let len = usize::from(q.header.size).saturating_sub(HEADER_SIZE);
            let (body, origin) = if q.record_offset == u64::MAX {
                let at = q.body_at as usize;
                (&data[at..at + len], Origin::Stream)
            } else {
                let at = (q.body_at - self.arena_base) as usize;
                (
                    &self.arena[at..at + len],
                    Origin::Compressed {
                        record_offset: q.record_offset,
                    },
                )
            };
            let rec = RawRecord {
                offset: q.offset,
                header: q.header,
                body,
                payload: &[],
            };
            let ctx = session.ctx_of(q.attr.map(|i| i as usize), q.header.misc);
            if !f(origin, rec, &ctx)? {
                return Ok(false);
            }
        }
        self.items.drain(..n);
        self.trim_arena();
        Ok(true)
    }

    /// Drops the arena bytes no queued record needs any more.
    fn trim_arena(&mut self) {
        let oldest = self
            .items
            .iter()
            .filter(|q| q.record_offset != u64::MAX)
            .map(|q| q.body_at)
            .min()
            .unwrap_or(self.arena_base + self.arena.len() as u64);
        let drop = (oldest - self.arena_base) as usize;
        if drop > 0 {
            self.arena.drain(..drop);
            self.arena_base = oldest;
        }
    }
}

impl<'a> PerfData<'a> {
    /// Calls `f` for every record in time order (perf's round-by-round order), holding at
    /// most the records of the current and previous round. Compressed records are
    /// expanded; the compressed records themselves are not passed.
    pub fn for_each_record_ordered(&self, f: &mut RecordFn<'_>) -> Result<(), Error> {
        self.ordered_in(self.data(), self.data_offset(), f)
    }

    /// [`PerfData::for_each_record_ordered`] for another stream of the same recording (a
    /// `data.N` file of a directory), decoded with this input's attrs; `base` is the offset
    /// reported for `bytes[0]`.
    pub fn for_each_record_in_ordered(
        &self,
        bytes: &[u8],
        base: u64,
        f: &mut RecordFn<'_>,
    ) -> Result<(), Error> {
        self.ordered_in(bytes, base, f)
    }

    fn ordered_in(&self, data: &[u8], data_start: u64, f: &mut RecordFn<'_>) -> Result<(), Error> {
        static_endian!(self.format.endian, |e| self.ordered(e, data, data_start, f))
    }

    fn ordered<E: Endian>(
        &self,
        e: E,
        data: &[u8],
        data_start: u64,
        f: &mut RecordFn<'_>,
    ) -> Result<(), Error> {
        let session = &self.session;
        let mut queue = Queue::default();
        let (mut next_flush, mut max_time) = (0u64, 0u64);
        let mut stopped = false;
        self.walk_as(e, data, data_start, None, |origin, rec, ctx: &RecordCtx| {
            let ty = rec.record_type();
            if ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2 {
                return Ok(true);
            }
            if ty == RecordType::FINISHED_ROUND {
                if !queue.flush(next_flush, data, session, f)? {
                    stopped = true;
                    return Ok(false);
                }
                next_flush = max_time;
            } else if ty == RecordType::FINISHED_INIT && !queue.flush(u64::MAX, data, session, f)? {
                stopped = true;
                return Ok(false);
            }
            match session.record_time(ty, rec.body, ctx, e) {
                Some(t) => {
                    max_time = max_time.max(t);
                    queue.push(t, origin, &rec, data_start, ctx.attr);
                    Ok(true)
                }
                None => {
                    let go_on = f(origin, rec, ctx)?;
                    stopped = !go_on;
                    Ok(go_on)
                }
            }
        })?;
        if !stopped {
            queue.flush(u64::MAX, data, session, f)?;
        }
        Ok(())
    }
}
