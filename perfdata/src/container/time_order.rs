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

use super::decompress::is_compressed;
use super::framing::{RawRecord, HEADER_SIZE};
use super::origin::{Damage, Origin};
use super::records::{RecordWalk, Records};
use super::session::RecordCtx;
use crate::generated::perf_data::{EventHeader, RecordType};
use crate::rt::{Endian, Endianness, Error};
use std::ops::Range;

/// A queued record: its time, header and where its body is.
#[derive(Clone, Copy)]
struct Queued {
    time: u64,
    /// `RawRecord::offset` to report (in the input, or in the decompressed stream).
    offset: u64,
    /// `Origin::Compressed`'s `record_offset`, `Origin::Joined`'s with [`JOINED`] set, or
    /// `u64::MAX` for a record of the input.
    record_offset: u64,
    header: EventHeader,
    /// Start of the body: in the record stream for records of the input, else in the arena
    /// (as an arena position, see `Queue::arena_base`).
    body_at: u64,
    /// The attr's index, `u32::MAX` for none (with `body_len`, in one word).
    attr: u32,
    /// The body's length (a record's header says it in 16 bits, a simpleperf or joined
    /// record's in more).
    body_len: u32,
}

/// The bit of `Queued::record_offset` that says `Origin::Joined` (offsets stay below it).
const JOINED: u64 = 1 << 63;

/// The records waiting for their round, in arrival order until a flush sorts them.
#[derive(Default)]
struct Queue {
    items: Vec<Queued>,
    /// The merges' buffer and run bounds, kept from round to round (see [`sort_by_time`]).
    buf: Vec<Queued>,
    runs: Vec<usize>,
    next_runs: Vec<usize>,
    /// Bodies of queued decompressed records.
    arena: Vec<u8>,
    /// Arena position of `arena[0]` (positions only grow; the front is dropped as records
    /// are delivered).
    arena_base: u64,
}

impl Queue {
    #[inline]
    fn push(
        &mut self,
        time: u64,
        origin: Origin,
        rec: &RawRecord<'_>,
        data_start: u64,
        attr: Option<u32>,
    ) {
        let (record_offset, body_at) = match origin {
            Origin::Input => (u64::MAX, rec.offset + HEADER_SIZE as u64 - data_start),
            Origin::Compressed { record_offset } => {
                let at = self.arena_base + self.arena.len() as u64;
                self.arena.extend_from_slice(rec.body);
                (record_offset & !JOINED, at)
            }
            Origin::Joined { record_offset } => {
                let at = self.arena_base + self.arena.len() as u64;
                self.arena.extend_from_slice(rec.body);
                ((record_offset & !JOINED) | JOINED, at)
            }
        };
        self.items.push(Queued {
            time,
            offset: rec.offset,
            record_offset,
            header: rec.header,
            body_at,
            attr: attr.unwrap_or(u32::MAX),
            body_len: rec.body.len() as u32,
        });
    }

    /// Sorts the queue by (time, arrival) and gives the positions of the records with
    /// `time <= limit`, which come first.
    fn due(&mut self, limit: u64) -> Range<usize> {
        sort_by_time(
            &mut self.items,
            &mut self.buf,
            &mut self.runs,
            &mut self.next_runs,
        );
        0..self.items.partition_point(|q| q.time <= limit)
    }

    /// The queued record at `i`; records of the input are found again in `data`.
    #[inline]
    fn record<'q>(&'q self, i: usize, data: &'q [u8]) -> (Origin, RawRecord<'q>) {
        let q = &self.items[i];
        let len = q.body_len as usize;
        let (body, origin) = if q.record_offset == u64::MAX {
            let at = q.body_at as usize;
            (&data[at..at + len], Origin::Input)
        } else {
            let at = (q.body_at - self.arena_base) as usize;
            let origin = if q.record_offset & JOINED != 0 {
                Origin::Joined {
                    record_offset: q.record_offset & !JOINED,
                }
            } else {
                Origin::Compressed {
                    record_offset: q.record_offset,
                }
            };
            (&self.arena[at..at + len], origin)
        };
        let rec = RawRecord {
            offset: q.offset,
            header: q.header,
            body,
            payload: &[],
        };
        (origin, rec)
    }

    /// Drops the first `n` records (delivered).
    fn delivered(&mut self, n: usize) {
        self.items.drain(..n);
        self.trim_arena();
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

/// Sorts `items` by time, stably (equal times keep their arrival order), by merging the
/// ascending runs it is made of: a round is a few of them (one per CPU buffer, plus the
/// sorted rest of the round before), so a pass or two of merging sorts it. Each merge is
/// in place through a copy of its shorter run in `buf` (at most half the queue, as the
/// standard library's stable sort takes), and `buf` and the run bounds are kept from
/// round to round: the standard sort allocates its buffer anew on each call, and a
/// buffer of megabytes, fresh every round, costs a page fault per page (and, when
/// freed, a TLB shootdown on every core running the process) — half of `diff`'s
/// page faults.
fn sort_by_time(
    items: &mut [Queued],
    buf: &mut Vec<Queued>,
    runs: &mut Vec<usize>,
    next: &mut Vec<usize>,
) {
    // `runs` holds each run's start, then the end.
    runs.clear();
    runs.push(0);
    runs.extend((1..items.len()).filter(|&i| items[i].time < items[i - 1].time));
    runs.push(items.len());
    while runs.len() > 2 {
        next.clear();
        let count = runs.len() - 1;
        for k in (0..count).step_by(2) {
            next.push(runs[k]);
            if k + 1 < count {
                let (lo, mid, hi) = (runs[k], runs[k + 1], runs[k + 2]);
                merge(&mut items[lo..hi], mid - lo, buf);
            }
        }
        next.push(items.len());
        std::mem::swap(runs, next);
    }
}

/// Merges `v[..mid]` and `v[mid..]` (each sorted by time) in place; on equal times the
/// first run's records (the earlier arrivals) come first. The shorter run is copied to
/// `buf` and merged back from its end of `v`.
fn merge(v: &mut [Queued], mid: usize, buf: &mut Vec<Queued>) {
    let len = v.len();
    if mid == 0 || mid == len || v[mid - 1].time <= v[mid].time {
        return;
    }
    buf.clear();
    if mid <= len - mid {
        // From the front: the first run out of the way in `buf`; the write position
        // never passes the second run's read position.
        buf.extend_from_slice(&v[..mid]);
        let (mut i, mut j, mut k) = (0, mid, 0);
        while i < buf.len() && j < len {
            if v[j].time < buf[i].time {
                v[k] = v[j];
                j += 1;
            } else {
                v[k] = buf[i];
                i += 1;
            }
            k += 1;
        }
        // What is left of the second run is in place already.
        v[k..k + buf.len() - i].copy_from_slice(&buf[i..]);
    } else {
        // From the back: the second run in `buf`.
        buf.extend_from_slice(&v[mid..]);
        let (mut i, mut j, mut k) = (mid, buf.len(), len);
        while i > 0 && j > 0 {
            // The later of the two ends goes last; on a tie, the second run's.
            if buf[j - 1].time < v[i - 1].time {
                v[k - 1] = v[i - 1];
                i -= 1;
            } else {
                v[k - 1] = buf[j - 1];
                j -= 1;
            }
            k -= 1;
        }
        // What is left of the first run is in place already.
        v[k - j..k].copy_from_slice(&buf[..j]);
    }
}

/// What comes after the records being delivered from the queue.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    /// The next record of the walk.
    Walk,
    /// The record the walk is at (a FINISHED_ROUND or FINISHED_INIT, which flushed the
    /// queue first).
    Held,
    /// The end: the walk is over and this was the last flush.
    End,
}

/// Which record [`TimeOrdered::current`] lends.
#[derive(Clone, Copy)]
enum Current {
    Walk,
    Queued(usize),
}

/// The records of a [`Records`] walk in time order (perf's round-by-round order), holding
/// at most the records of the current and previous round: a lending cursor like the walk
/// it adapts. Compressed records are expanded; the compressed records themselves are not
/// given.
pub struct TimeOrdered<'d, 'a, E: Endian = Endianness> {
    records: Records<'d, 'a, E>,
    data: &'d [u8],
    data_start: u64,
    queue: Queue,
    next_flush: u64,
    max_time: u64,
    /// Queue positions still to deliver; the flush delivers the first `deliver.end`.
    deliver: Range<usize>,
    then: Then,
    current: Current,
    /// The context of the queued record being delivered.
    queued_ctx: RecordCtx,
}

impl<'d, 'a, E: Endian> Records<'d, 'a, E> {
    /// These records in time order (see [`TimeOrdered`]).
    pub fn time_ordered(self) -> TimeOrdered<'d, 'a, E> {
        let (data, data_start) = self.input();
        let queued_ctx = self.session().ctx_of(None, Default::default());
        TimeOrdered {
            records: self,
            data,
            data_start,
            queue: Queue::default(),
            next_flush: 0,
            max_time: 0,
            deliver: 0..0,
            then: Then::Walk,
            current: Current::Walk,
            queued_ctx,
        }
    }
}

impl<E: Endian> TimeOrdered<'_, '_, E> {
    /// The damage the walk went past so far, when the records it orders are salvaging
    /// (`data.records().salvaging().time_ordered()`; see [`Records::take_damage`]).
    pub fn take_damage(&mut self) -> Vec<Damage> {
        self.records.take_damage()
    }

    /// The runs of simpleperf SPLIT records that made no record ([`Records::take_unjoined`]).
    pub fn take_unjoined(&mut self) -> Vec<Error> {
        self.records.take_unjoined()
    }

    /// Starts delivering the queued records with `time <= limit`, then `then`.
    fn flush(&mut self, limit: u64, then: Then) {
        self.deliver = self.queue.due(limit);
        self.then = then;
    }

    /// The record the walk is at: queued when it has a timestamp (`false`), else it is
    /// the current record (`true`).
    #[inline(always)]
    fn take_walk_record(&mut self) -> bool {
        let (origin, raw, ctx) = self.records.parts();
        let session = self.records.session();
        let time = session.record_time(raw.record_type(), raw.body, ctx, self.records.order());
        match time {
            Some(t) => {
                self.max_time = self.max_time.max(t);
                self.queue.push(t, origin, &raw, self.data_start, ctx.attr);
                false
            }
            None => {
                self.current = Current::Walk;
                true
            }
        }
    }
}

impl<E: Endian> RecordWalk for TimeOrdered<'_, '_, E> {
    /// Moves to the next record in time order.
    #[inline]
    fn advance(&mut self) -> Result<bool, Error> {
        loop {
            if let Some(i) = self.deliver.next() {
                let q = &self.queue.items[i];
                self.records.session().set_ctx(
                    &mut self.queued_ctx,
                    (q.attr != u32::MAX).then_some(q.attr as usize),
                    q.header.misc,
                );
                self.current = Current::Queued(i);
                return Ok(true);
            }
            if self.deliver.end > 0 {
                self.queue.delivered(self.deliver.end);
                self.deliver = 0..0;
            }
            match std::mem::replace(&mut self.then, Then::Walk) {
                Then::End => {
                    self.then = Then::End;
                    return Ok(false);
                }
                Then::Held => {
                    if self.take_walk_record() {
                        return Ok(true);
                    }
                    continue;
                }
                Then::Walk => {}
            }
            if !self.records.advance()? {
                self.flush(u64::MAX, Then::End);
                continue;
            }
            let ty = self.records.parts().1.record_type();
            if is_compressed(ty) {
                continue;
            }
            if ty == RecordType::FINISHED_ROUND {
                let limit = self.next_flush;
                self.next_flush = self.max_time;
                self.flush(limit, Then::Held);
            } else if ty == RecordType::FINISHED_INIT {
                self.flush(u64::MAX, Then::Held);
            } else if self.take_walk_record() {
                return Ok(true);
            }
        }
    }

    #[inline(always)]
    fn parts(&self) -> (Origin, RawRecord<'_>, &RecordCtx) {
        match self.current {
            Current::Walk => self.records.parts(),
            Current::Queued(i) => {
                let (origin, raw) = self.queue.record(i, self.data);
                (origin, raw, &self.queued_ctx)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(time: u64, arrival: u64) -> Queued {
        Queued {
            time,
            offset: arrival,
            record_offset: u64::MAX,
            header: EventHeader::default(),
            body_at: 0,
            attr: 0,
            body_len: 0,
        }
    }

    /// (time, arrival) of each record, in order.
    fn order(items: &[Queued]) -> Vec<(u64, u64)> {
        items.iter().map(|q| (q.time, q.offset)).collect()
    }

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        // Generated rounds: a few ascending runs with equal times across runs, sorted or
        // random rests, and the edge cases.
        let mut rng = perfdata_test_support::XorShift::default();
        let mut next = move || rng.next_u64();
        let (mut buf, mut runs, mut spare) = (vec![], vec![], vec![]);
        for case in 0..400 {
            let len = (next() % 300) as usize;
            let spread = [1, 3, 50, u64::MAX][case % 4];
            let mut items: Vec<Queued> = vec![];
            let mut t = 0;
            for arrival in 0..len as u64 {
                // A new run now and then: time steps back.
                if next() % 16 == 0 {
                    t = next() % 1000;
                }
                t += next() % spread.min(1000);
                items.push(queued(t, arrival));
            }
            let mut want = items.clone();
            want.sort_by_key(|q| q.time);
            sort_by_time(&mut items, &mut buf, &mut runs, &mut spare);
            assert_eq!(order(&items), order(&want), "case {case}");
        }
    }

    #[test]
    fn merges_runs_of_every_count() {
        let (mut buf, mut runs, mut spare) = (vec![], vec![], vec![]);
        for count in 0..9u64 {
            // `count` runs of 0, 2, 4, … over the same times: each time is in every run.
            let mut items = vec![];
            for r in 0..count {
                for t in 0..5 {
                    items.push(queued(t * 2, r * 10 + t));
                }
            }
            let mut want = items.clone();
            want.sort_by_key(|q| q.time);
            sort_by_time(&mut items, &mut buf, &mut runs, &mut spare);
            assert_eq!(order(&items), order(&want), "{count} runs");
        }
    }
}
