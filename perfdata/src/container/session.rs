//! Which attr a record belongs to, and the decoding context that follows from it.
//!
//! perf's rules (evlist.c / evsel.c): with one attr, every record is that attr's. Otherwise
//! the sample id is found at a position fixed by the (common) sample_type: for SAMPLE at
//! `id_pos` from the start, for other records at `is_pos` from the end of the sample_id
//! trailer; id 0 or an unknown id means the first attr (perf's synthesized records).
//! The positions themselves come from the spec: each attr gets an [`AttrPlan`] with the
//! generated layouts of SAMPLE and of the sample_id trailer, computed once.

use super::framing::{RawRecord, HEADER_SIZE};
use crate::generated::perf_data::{
    Attr, Ctx, FeatureBody, RecordBody, RecordMisc, RecordType, SampleIdLayout, SampleLayout,
};
use crate::rt::{get_u64, Endian, Error, Reader, Tail};
use std::collections::HashMap;

/// What an event's attr decides about decoding, computed once per attr: the attr part of
/// the context and where SAMPLE's and the sample_id trailer's fixed fields sit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AttrPlan {
    /// The context an attr gives (sample_type, read_format, register masks, sample_id_all).
    pub ctx: Ctx,
    /// SAMPLE's fixed-position fields (ip, pid, tid, time, id, cpu, period…).
    pub sample: SampleLayout,
    /// The sample_id trailer's fields, as offsets from the trailer's start.
    pub sample_id: SampleIdLayout,
}

impl AttrPlan {
    /// The plan of the event `attr` describes.
    pub fn new(attr: &Attr<'_>) -> Self {
        let ctx = Ctx::from_attr(attr);
        AttrPlan {
            ctx,
            sample: SampleLayout::new(&ctx),
            sample_id: SampleIdLayout::new(&ctx),
        }
    }

    /// The offset in `body` (of a record of type `ty`) of a u64 field, given its offset in
    /// SAMPLE and in the trailer: `None` when the record has neither or is too short.
    #[inline(always)]
    fn u64_at(
        &self,
        ty: RecordType,
        body: &[u8],
        in_sample: Option<u16>,
        in_trailer: Option<u16>,
    ) -> Option<usize> {
        let at = if ty == RecordType::SAMPLE {
            usize::from(in_sample?)
        } else if ty.has_sample_id(&self.ctx) {
            let trailer = usize::from(self.sample_id.fixed_len);
            body.len().checked_sub(trailer)? + usize::from(in_trailer?)
        } else {
            return None;
        };
        (at + 8 <= body.len()).then_some(at)
    }

    /// The timestamp of a record of this event: SAMPLE's `time` or the trailer's. In
    /// every time-ordered walk's loop, once per record: inlined there.
    #[inline(always)]
    pub fn time<E: Endian>(&self, ty: RecordType, body: &[u8], e: E) -> Option<u64> {
        let at = self.u64_at(ty, body, self.sample.time, self.sample_id.time)?;
        Some(get_u64(body, at, e))
    }

    /// The sample id at perf's fixed position: IDENTIFIER when sampled, else ID.
    fn sample_id<E: Endian>(&self, ty: RecordType, body: &[u8], e: E) -> Option<u64> {
        let at = self
            .u64_at(ty, body, self.sample.identifier, self.sample_id.identifier)
            .or_else(|| self.u64_at(ty, body, self.sample.id, self.sample_id.id))?;
        Some(get_u64(body, at, e))
    }
}

/// The decoding context of one record: the spec's [`Ctx`] (it dereferences to it, so it
/// can be passed wherever a `&Ctx` is expected) plus the index of the attr the record
/// belongs to, which finds the attr's precomputed [`AttrPlan`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecordCtx {
    /// The spec's context for this record: its attr's sample_type, read_format,
    /// register masks and sample_id_all, the record's misc bits, NRCPUS's CPU counts.
    pub ctx: Ctx,
    /// Index into the session's attrs; `None` when there is none.
    pub attr: Option<u32>,
}

impl core::ops::Deref for RecordCtx {
    type Target = Ctx;
    fn deref(&self) -> &Ctx {
        &self.ctx
    }
}

/// One event: its attr and the sample ids that name it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct EventAttr<'a> {
    /// The `perf_event_attr`: event type and config, what each sample carries
    /// (sample_type, read_format, register masks) and the flags.
    pub attr: Attr<'a>,
    /// The sample ids the kernel gave this event's file descriptors (one per CPU or
    /// thread it was opened on): a record's `id`/`identifier` is looked up here. May be
    /// empty when there is one event: every record is then that event's.
    pub ids: Vec<u64>,
    /// Bytes of the attrs-section entry after the attr and its ids descriptor (none in
    /// perf's files; kept so that a rewrite is byte-exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_tail: Tail<'a>,
}

impl EventAttr<'_> {
    /// A copy that borrows nothing from the input.
    pub fn into_owned(self) -> EventAttr<'static> {
        EventAttr {
            attr: self.attr.into_owned(),
            ids: self.ids,
            entry_tail: self.entry_tail.map(|t| t.into_owned()),
        }
    }
}

/// How [`Session`] hashes event ids, which it looks up for every record of a recording
/// with several events: a keyed mix of the one word (SipHash costs a walk a few percent),
/// its key random per process so that a file cannot choose ids that collide.
#[derive(Debug, Clone, Copy)]
struct IdHashing(u64);

impl Default for IdHashing {
    fn default() -> Self {
        use std::hash::BuildHasher;
        IdHashing(std::collections::hash_map::RandomState::new().hash_one(0x1d5_u64))
    }
}

impl std::hash::BuildHasher for IdHashing {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(self.0)
    }
}

/// [`IdHashing`]'s hasher: splitmix64's finalizer over the key and the words written.
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        let mut x = self.0 ^ v;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = x ^ (x >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Attrs seen so far plus the context they give. In pipe mode it grows as HEADER_ATTR
/// and HEADER_FEATURE records pass by.
#[derive(Debug, Clone, Default)]
pub struct Session<'a> {
    /// The events, in the order the attrs section (or the stream's HEADER_ATTR records)
    /// lists them: [`RecordCtx::attr`] indexes it.
    pub attrs: Vec<EventAttr<'a>>,
    /// One per attr, in the same order.
    plans: Vec<AttrPlan>,
    by_id: HashMap<u64, usize, IdHashing>,
    /// The context values features give (the spec's `from FEATURE.…`: NRCPUS's CPU
    /// counts, which feature payloads that loop per CPU need).
    feature_values: Ctx,
}

impl<'a> Session<'a> {
    /// Adds an event: its plan is computed, and its ids name it from now on (an id
    /// another attr already has keeps naming the first one).
    pub(crate) fn add_attr(&mut self, attr: EventAttr<'a>) {
        let index = self.attrs.len();
        for id in &attr.ids {
            self.by_id.entry(*id).or_insert(index);
        }
        self.plans.push(AttrPlan::new(&attr.attr));
        self.attrs.push(attr);
    }

    /// Notes what a feature tells about later decoding (the context values it gives).
    pub fn observe_feature(&mut self, feature: &FeatureBody<'_>) {
        self.feature_values.take_from_feature(feature);
    }

    /// Learns from a pipe-mode setup record: HEADER_ATTR declares an attr and its ids,
    /// HEADER_FEATURE may carry a context source (NRCPUS). Other records are ignored.
    pub fn note_record<E: Endian>(&mut self, rec: &RawRecord<'_>, e: E) -> Result<(), Error> {
        let ty = rec.record_type();
        if ty != RecordType::HEADER_ATTR && ty != RecordType::HEADER_FEATURE {
            return Ok(());
        }
        let body = RecordBody::decode(
            ty,
            &mut Reader::in_order(rec.body, rec.offset + HEADER_SIZE as u64, e),
            &self.feature_ctx(),
        )?;
        match body {
            RecordBody::HeaderAttr(a) => self.add_attr(EventAttr {
                attr: a.attr.into_owned(),
                ids: a.ids.iter().collect(),
                entry_tail: None,
            }),
            RecordBody::HeaderFeature(f) => {
                if let Some(feature) = &f.data {
                    self.observe_feature(feature);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The context for decoding features: the values features gave so far.
    pub fn feature_ctx(&self) -> Ctx {
        self.feature_values
    }

    /// The precomputed plan of attr `index`.
    pub fn plan(&self, index: u32) -> Option<&AttrPlan> {
        self.plans.get(index as usize)
    }

    /// Index of the attr an event id belongs to.
    pub fn attr_of_id(&self, id: u64) -> Option<usize> {
        self.by_id.get(&id).copied()
    }

    /// Index of the attr that `body` (of a record of type `ty`) belongs to, if any attr.
    #[inline]
    pub fn attr_index<E: Endian>(&self, ty: RecordType, body: &[u8], e: E) -> Option<usize> {
        let first = self.plans.first()?;
        if self.plans.len() == 1 {
            return Some(0);
        }
        // perf reads the id where the first attr's sample_type puts it (all attrs of a
        // session that carry ids share those bits).
        let id = first.sample_id(ty, body, e)?;
        Some(self.by_id.get(&id).copied().unwrap_or(0))
    }

    /// The decoding context for a record: its attr's layout, its misc bits, the CPU counts.
    #[inline]
    pub fn record_ctx<E: Endian>(
        &self,
        ty: RecordType,
        misc: RecordMisc,
        body: &[u8],
        e: E,
    ) -> RecordCtx {
        self.ctx_of(self.attr_index(ty, body, e), misc)
    }

    /// [`Session::record_ctx`] in place: `ctx`, the context of the walk's previous record
    /// (or [`Session::ctx_of`]`(None, …)` before the first), becomes `rec`'s.
    #[inline(always)]
    pub(crate) fn update_ctx<E: Endian>(&self, ctx: &mut RecordCtx, rec: &RawRecord<'_>, e: E) {
        let attr = self.attr_index(rec.record_type(), rec.body, e);
        self.set_ctx(ctx, attr, rec.header.misc);
    }

    /// [`Session::ctx_of`] in place, `ctx` being a context this session gave: only the
    /// misc bits change while the attr stays the same, so a walk builds the context anew
    /// only when the attr changes.
    #[inline(always)]
    pub(crate) fn set_ctx(&self, ctx: &mut RecordCtx, attr: Option<usize>, misc: RecordMisc) {
        if attr.map(|i| i as u32) == ctx.attr {
            ctx.ctx.misc = misc;
        } else {
            *ctx = self.ctx_of(attr, misc);
        }
    }

    /// The context of a record of attr `attr` with header bits `misc`.
    #[inline]
    pub fn ctx_of(&self, attr: Option<usize>, misc: RecordMisc) -> RecordCtx {
        let plan = attr.and_then(|i| self.plans.get(i));
        RecordCtx {
            ctx: record_ctx(plan.map(|p| &p.ctx), &self.feature_values, misc),
            attr: attr.map(|i| i as u32),
        }
    }

    /// The timestamp of a record with context `rctx` (from its attr's plan), if it has one.
    #[inline]
    pub fn record_time<E: Endian>(
        &self,
        ty: RecordType,
        body: &[u8],
        rctx: &RecordCtx,
        e: E,
    ) -> Option<u64> {
        self.plan(rctx.attr?)?.time(ty, body, e)
    }
}

/// The decoding context of one record: its attr's part (`None` when it has no attr), the
/// values features give (NRCPUS's CPU counts) and the record's misc bits. The one place
/// this is put together: the read walks, the editable model and the writer's encoder
/// all call it.
#[inline]
pub(crate) fn record_ctx(attr: Option<&Ctx>, feature_values: &Ctx, misc: RecordMisc) -> Ctx {
    let mut ctx = attr.copied().unwrap_or_default();
    ctx.take_feature_values(feature_values);
    ctx.misc = misc;
    ctx
}
