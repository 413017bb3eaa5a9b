//! Conversions as record-by-record stages, shared by the model API ([`crate::transform`],
//! which runs one stage over a [`PerfFile`]'s records) and the streaming conversion
//! ([`crate::convert`], which pushes every record of a memory-mapped input through a chain
//! of them into a [`crate::sink`]). A stage keeps nothing per record: what it holds is
//! bounded (a compressed chunk, the decompressor's carry-over, a pipe's header records).
//!
//! Raw record bytes stay in the input's byte order through every stage; the output's order
//! is applied where records are encoded (the compressor and the sink), so a byte-order
//! change composes with compression: decompress → change order → compress in the new order.

mod compress;
mod decompress;
mod layout;
pub(crate) mod typed;

pub use compress::{Compress, CompressedKind};
pub use decompress::Decompress;
pub use layout::{build_id_entry, pipe_event_types, ToFile, ToPipe};
pub use typed::{Reencode, Typed};

use crate::generated::perf_data::{Ctx, FeatureBody, FeatureId, RecordBody, RecordType};
use crate::model::{PerfFile, RecordData, RecordItem};
use crate::rt::{Endianness, Error};

/// Where a stage sends its records.
pub type Emit<'e> = dyn FnMut(RecordItem<'_>) -> Result<(), Error> + 'e;

/// One conversion step.
pub trait Stage {
    /// Before any record: adjusts the header part (`head`: the file without its records;
    /// raw bytes in `head.endian`). `fctx` holds the CPU counts (NRCPUS).
    fn begin(&mut self, head: &mut PerfFile<'_>, fctx: Ctx) -> Result<(), Error> {
        let _ = (head, fctx);
        Ok(())
    }
    /// Takes one record, emits zero or more.
    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error>;
    /// After the last record: emits what is still held and sets what the stream taught
    /// about the header (features, attrs).
    fn finish(&mut self, head: &mut PerfFile<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        let _ = (head, out);
        Ok(())
    }
}

/// Stages run in order; the last one emits into the caller's sink.
#[derive(Default)]
pub struct Pipeline<'s> {
    stages: Vec<Box<dyn Stage + 's>>,
}

impl<'s> Pipeline<'s> {
    pub fn push_stage(&mut self, stage: impl Stage + 's) {
        self.stages.push(Box::new(stage));
    }

    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    pub fn begin(&mut self, head: &mut PerfFile<'_>, fctx: Ctx) -> Result<(), Error> {
        for s in &mut self.stages {
            s.begin(head, fctx)?;
        }
        Ok(())
    }

    pub fn push(&mut self, item: RecordItem<'_>, sink: &mut Emit<'_>) -> Result<(), Error> {
        run(&mut self.stages, item, sink)
    }

    /// Finishes every stage in order: what one flushes still goes through the next ones.
    pub fn finish(&mut self, head: &mut PerfFile<'_>, sink: &mut Emit<'_>) -> Result<(), Error> {
        for i in 0..self.stages.len() {
            let (done, rest) = self.stages.split_at_mut(i + 1);
            done[i].finish(head, &mut |it| run(rest, it, sink))?;
        }
        Ok(())
    }
}

fn run(
    stages: &mut [Box<dyn Stage + '_>],
    item: RecordItem<'_>,
    sink: &mut Emit<'_>,
) -> Result<(), Error> {
    match stages.split_first_mut() {
        None => sink(item),
        Some((first, rest)) => first.push(item, &mut |it| run(rest, it, sink)),
    }
}

/// Runs `stage` over the records of a model, in place.
pub fn run_on_model(file: &mut PerfFile<'_>, stage: impl Stage) -> Result<(), Error> {
    let fctx = file.feature_ctx();
    let records = std::mem::take(&mut file.records);
    let mut pipeline = Pipeline::default();
    pipeline.push_stage(stage);
    pipeline.begin(file, fctx)?;
    let mut out: Vec<RecordItem<'static>> = Vec::with_capacity(records.len());
    let mut keep = |it: RecordItem<'_>| {
        out.push(it.into_owned());
        Ok(())
    };
    for (i, item) in records.into_iter().enumerate() {
        let ty = item.ty;
        pipeline
            .push(item, &mut keep)
            .map_err(|e| e.with_record(i as u64, crate::container::file::record_label(ty)))?;
    }
    pipeline.finish(file, &mut keep)?;
    file.records = out;
    Ok(())
}

/// Decodes a raw record body in byte order `endian`.
pub(crate) fn decode_body<'b>(
    endian: Endianness,
    ty: RecordType,
    body: &'b [u8],
    ctx: &Ctx,
) -> Result<RecordBody<'b>, Error> {
    crate::container::file::decode_body(endian, ty, body, 0, ctx)
}

/// The HEADER_FEATURE record `r` holds, decoded (raw bytes in byte order `endian`).
pub(crate) fn header_feature<'r>(
    endian: Endianness,
    r: &'r RecordItem<'_>,
) -> Option<std::borrow::Cow<'r, crate::generated::perf_data::HeaderFeature<'r>>> {
    use std::borrow::Cow;
    if r.ty != RecordType::HEADER_FEATURE {
        return None;
    }
    match &r.data {
        RecordData::Typed(b) => match &**b {
            RecordBody::HeaderFeature(h) => Some(Cow::Borrowed(h)),
            _ => None,
        },
        RecordData::Raw { body, .. } => match decode_body(endian, r.ty, body, &Ctx::default()) {
            Ok(RecordBody::HeaderFeature(h)) => Some(Cow::Owned(h)),
            _ => None,
        },
    }
}

/// True when `r` is a pipe's end-of-features marker: a HEADER_FEATURE without payload
/// whose id is not that of a feature with an empty payload (see [`is_empty_feature`]).
/// Its id is the producer's `HEADER_LAST_FEATURE`, which differs between perf versions.
pub(crate) fn is_end_marker(endian: Endianness, r: &RecordItem<'_>) -> bool {
    header_feature(endian, r).is_some_and(|h| h.data.is_none() && !is_empty_feature(h.feat_id))
}

/// A HEADER_FEATURE record of `feat_id` without payload is that feature, empty (not the
/// end-of-features marker): the spec describes the feature and an empty payload decodes
/// as it (BRANCH_STACK and STAT are always empty, a BUILD_ID list may be). perf's readers
/// tell the marker by their own `HEADER_LAST_FEATURE`; every id perf versions have used
/// for it (22 and up) names a feature that cannot be empty, or none.
pub(crate) fn is_empty_feature(feat_id: u64) -> bool {
    let Ok(id) = u32::try_from(feat_id) else {
        return false;
    };
    let mut r = crate::rt::Reader::in_order(&[], 0, Endianness::Little);
    FeatureBody::decode(FeatureId(id), &mut r, &Ctx::default())
        .is_ok_and(|b| b.feature_id().is_some())
}

/// The value of a feature read from a pipe record (`payload`: what follows `feat_id`, or
/// the data after HEADER_TRACING_DATA), without the producer's padding to 8 bytes: perf
/// pads the records (HEADER_FEATURE since ~6.14, the tracing data always), and a feature
/// section of a file is not padded. Returns the value and the length of its bytes.
pub(crate) fn unpadded_feature<'b>(
    endian: Endianness,
    id: FeatureId,
    payload: &'b [u8],
    fctx: &Ctx,
) -> Result<(FeatureBody<'b>, usize), Error> {
    let decode = |bytes: &'b [u8]| {
        FeatureBody::decode(id, &mut crate::rt::Reader::in_order(bytes, 0, endian), fctx)
    };
    let full = decode(payload)?;
    let padding = full
        .tail()
        .filter(|t| t.len() < 8 && t.iter().all(|&b| b == 0));
    if let Some(pad) = padding.filter(|p| !p.is_empty()) {
        let len = payload.len() - pad.len();
        if let Ok(v) = decode(&payload[..len]) {
            if v.tail().is_none_or(|t| t.is_empty()) {
                return Ok((v, len));
            }
        }
    }
    Ok((full, payload.len()))
}

pub(crate) use crate::container::decompress::is_compressed;

/// Encodes a record body in byte order `endian`.
pub(crate) fn encode_body(
    endian: Endianness,
    body: &RecordBody<'_>,
    ctx: &Ctx,
) -> Result<Vec<u8>, Error> {
    let mut w = crate::rt::Writer::in_order(endian);
    body.encode(&mut w, ctx).map(|_| w.into_vec())
}
