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

use super::file::{Origin, PerfData};
use super::stream::RawRecord;
use crate::generated::perf_data::{Ctx, EventHeader, RecordBody, RecordType};
use crate::rt::{BigEndian, Endian, Endianness, Error, LittleEndian, Reader};
use std::collections::BTreeMap;

/// A queued record: its bytes are copied, because records decompressed from a chunk do not
/// outlive the chunk.
struct Queued {
    origin: Origin,
    offset: u64,
    header: EventHeader,
    bytes: Vec<u8>,
    body_len: usize,
    ctx: Ctx,
}

/// The timestamp of a record: SAMPLE's `time`, or the sample_id trailer's.
pub fn record_time<E: Endian>(ty: RecordType, body: &[u8], ctx: &Ctx) -> Option<u64> {
    let decoded = RecordBody::decode(ty, &mut Reader::<E>::new(body, 0), ctx).ok()?;
    match &decoded {
        RecordBody::Sample(s) => s.time,
        other => other.sample_id().and_then(|id| id.time),
    }
}

impl<'a> PerfData<'a> {
    /// Calls `f` for every record in time order (perf's round-by-round order), holding at
    /// most the records of the current and previous round. Compressed records are
    /// expanded; the compressed records themselves are not passed.
    pub fn for_each_record_ordered(
        &self,
        f: &mut dyn FnMut(Origin, RawRecord<'_>, &Ctx) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        match self.format.endian {
            Endianness::Little => self.ordered::<LittleEndian>(f),
            Endianness::Big => self.ordered::<BigEndian>(f),
        }
    }

    fn ordered<E: Endian>(
        &self,
        f: &mut dyn FnMut(Origin, RawRecord<'_>, &Ctx) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let mut queue: BTreeMap<(u64, u64), Queued> = BTreeMap::new();
        let mut seq = 0u64;
        let (mut next_flush, mut max_time) = (0u64, 0u64);
        let mut stopped = false;
        let deliver =
            |q: Queued, f: &mut dyn FnMut(Origin, RawRecord<'_>, &Ctx) -> Result<bool, Error>| {
                let rec = RawRecord {
                    offset: q.offset,
                    header: q.header,
                    body: &q.bytes[..q.body_len],
                    payload: &q.bytes[q.body_len..],
                };
                f(q.origin, rec, &q.ctx)
            };
        let flush_upto = |queue: &mut BTreeMap<(u64, u64), Queued>,
                          limit: u64,
                          f: &mut dyn FnMut(Origin, RawRecord<'_>, &Ctx) -> Result<bool, Error>|
         -> Result<bool, Error> {
            while let Some(entry) = queue.first_entry() {
                if entry.key().0 > limit {
                    break;
                }
                if !deliver(entry.remove(), f)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        self.for_each_record(&mut |origin, rec, ctx| {
            let ty = rec.record_type();
            if ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2 {
                return Ok(true);
            }
            if ty == RecordType::FINISHED_ROUND {
                if !flush_upto(&mut queue, next_flush, f)? {
                    stopped = true;
                    return Ok(false);
                }
                next_flush = max_time;
            } else if ty == RecordType::FINISHED_INIT && !flush_upto(&mut queue, u64::MAX, f)? {
                stopped = true;
                return Ok(false);
            }
            let time = if ty.0 < 64 {
                record_time::<E>(ty, rec.body, ctx)
            } else {
                None
            };
            match time {
                Some(t) => {
                    max_time = max_time.max(t);
                    let mut bytes = Vec::with_capacity(rec.body.len() + rec.payload.len());
                    bytes.extend_from_slice(rec.body);
                    bytes.extend_from_slice(rec.payload);
                    queue.insert(
                        (t, seq),
                        Queued {
                            origin,
                            offset: rec.offset,
                            header: rec.header,
                            bytes,
                            body_len: rec.body.len(),
                            ctx: *ctx,
                        },
                    );
                    seq += 1;
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
            flush_upto(&mut queue, u64::MAX, f)?;
        }
        Ok(())
    }
}
