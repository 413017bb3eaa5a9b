//! HEADER_FEATURE records of a pipe: decoding the one a record holds, telling the
//! end-of-features marker from an empty feature, and a feature's value without the
//! producer's padding.

use crate::container::decode_body;
use crate::generated::perf_data::{Ctx, FeatureBody, FeatureId, RecordBody, RecordType};
use crate::rt::{Endianness, Error};
use crate::write::model::{RecordData, RecordItem};

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
        RecordData::Raw { body, .. } => match decode_body(endian, r.ty, body, 0, &Ctx::default()) {
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
