//! Encoding records and features for an output in a chosen byte order: what every sink
//! and the byte-order stage write through.

use super::model::{Builder, FeatureData, RecordData, RecordItem};
use crate::container::{decode_body, decode_feature, record_ctx, EventAttr, HEADER_SIZE};
use crate::generated::perf_data::{
    Ctx, EventHeader, FeatureBody, FeatureId, RecordBody, RecordType, SimpleperfEventHeader,
    SIMPLEPERF_RECORD_TYPE_START,
};
use crate::rt::{Endianness, Error, StaticEndian, Writer};
use std::io::Write;

/// Encodes records and features for an output in byte order `E`. Raw bytes are in the
/// input's order (`src`): copied when the orders agree, decoded and encoded otherwise.
pub struct RecordEncoder<E: StaticEndian> {
    src: Endianness,
    /// The decoding context each attr gives (by index, as `RecordItem::attr`).
    attr_ctx: Vec<Ctx>,
    /// NRCPUS: per-CPU feature payloads need it.
    feature_ctx: Ctx,
    header: Writer<E>,
    body: Writer<E>,
}

impl<E: StaticEndian> RecordEncoder<E> {
    /// `feature_ctx`: the CPU counts (see [`Builder::feature_ctx`]).
    pub fn new(src: Endianness, attrs: &[EventAttr<'_>], feature_ctx: Ctx) -> Self {
        RecordEncoder {
            src,
            attr_ctx: attrs.iter().map(|a| Ctx::from_attr(&a.attr)).collect(),
            feature_ctx,
            header: Writer::with_capacity(HEADER_SIZE),
            body: Writer::with_capacity(64 << 10),
        }
    }

    /// For a model: its byte order, attrs and CPU counts.
    pub fn for_file(file: &Builder<'_>) -> Self {
        Self::new(file.endian, &file.attrs, file.feature_ctx())
    }

    /// [`RecordEncoder::for_file`] with the output order given as a value (for
    /// [`static_endian!`](crate::rt::static_endian)).
    pub fn for_order(_: E, file: &Builder<'_>) -> Self {
        Self::for_file(file)
    }

    /// Byte order of the raw bytes this encoder is given.
    pub fn source_endian(&self) -> Endianness {
        self.src
    }

    /// The context for features.
    pub fn feature_ctx(&self) -> Ctx {
        self.feature_ctx
    }

    /// The decoding context of `item`: its attr's layout, its misc bits, the CPU counts.
    pub fn ctx(&self, item: &RecordItem<'_>) -> Ctx {
        let attr = item.attr.and_then(|i| self.attr_ctx.get(i));
        record_ctx(attr, &self.feature_ctx, item.misc)
    }

    /// Writes one record (header, body, payload) to `out`; returns the bytes written.
    pub fn write(&mut self, item: &RecordItem<'_>, out: &mut impl Write) -> Result<u64, Error> {
        self.body.clear();
        let ctx = self.ctx(item);
        // Raw compressed records hold records in the input's order (a compressor writing
        // for this output emits them typed, their content already in this order).
        let compressed = item.ty == RecordType::COMPRESSED || item.ty == RecordType::COMPRESSED2;
        if compressed && E::KIND != self.src && matches!(item.data, RecordData::Raw { .. }) {
            return Err(Error::other(
                "compressed records hold records in the input's byte order: decompress before converting",
            ));
        }
        // Raw bodies in the output's order are written as they are, not copied first.
        let mut as_is: Option<&[u8]> = None;
        let payload: &[u8] = match &item.data {
            RecordData::Raw { body, payload } if E::KIND == self.src => {
                as_is = Some(body);
                payload
            }
            RecordData::Raw { body, payload } => {
                if item.ty.name().is_none() {
                    return Err(Error::other(format!(
                        "record type {} is not described by the spec: its bytes cannot be converted to another byte order",
                        item.ty.0
                    )));
                }
                decode_body(self.src, item.ty, body, 0, &ctx)?.encode(&mut self.body, &ctx)?;
                // Payloads (tracing data, AUX data) are bytes in the producer's own terms.
                payload
            }
            RecordData::Typed(body) => {
                body.encode(&mut self.body, &ctx)?;
                body.payload().unwrap_or(&[])
            }
        };
        // The body is encoded first: the header's size follows from it.
        let body = as_is.unwrap_or(self.body.as_slice());
        let size = HEADER_SIZE + body.len();
        self.header.clear();
        let too_big = |limit: &str| {
            Error::inconsistent(format!(
                "a {} record of {size} bytes does not fit {limit}",
                item.ty
            ))
        };
        let size = if item.ty.0 >= SIMPLEPERF_RECORD_TYPE_START {
            // simpleperf's own records: a 32-bit size over `misc` and `size`.
            let size =
                u32::try_from(size).map_err(|_| too_big("simpleperf's 32-bit record size"))?;
            SimpleperfEventHeader {
                type_: item.ty.0,
                size,
            }
            .encode(&mut self.header, &Ctx::default())?;
            u64::from(size)
        } else {
            let size = u16::try_from(size)
                .map_err(|_| too_big("perf_event_header.size (at most 65535)"))?;
            EventHeader {
                type_: item.ty.0,
                misc: item.misc,
                size,
            }
            .encode(&mut self.header, &Ctx::default())?;
            u64::from(size)
        };
        out.write_all(self.header.as_slice())?;
        out.write_all(body)?;
        out.write_all(payload)?;
        Ok(size + payload.len() as u64)
    }

    /// Appends one feature payload to `w`.
    pub fn encode_feature(
        &self,
        id: FeatureId,
        data: &FeatureData<'_>,
        w: &mut Writer<E>,
    ) -> Result<(), Error> {
        let ctx = self.feature_ctx;
        match data {
            FeatureData::Raw(bytes) if E::KIND == self.src => {
                w.put_bytes(bytes);
                Ok(())
            }
            FeatureData::Raw(bytes) => {
                // Another byte order: through the typed value.
                let typed = decode_feature(self.src, id, bytes, 0, &ctx)?;
                refuse_unknown_feature(&typed, id)?;
                typed.encode(w, &ctx)
            }
            FeatureData::Typed(body) => {
                if E::KIND != self.src {
                    refuse_unknown_feature(body, id)?;
                }
                body.encode(w, &ctx)
            }
        }
    }
}

pub(crate) fn refuse_unknown_feature(body: &FeatureBody<'_>, id: FeatureId) -> Result<(), Error> {
    if matches!(body, FeatureBody::Unknown(_)) {
        return Err(Error::other(format!(
            "feature {id} is not described by the spec: its bytes cannot be converted to another byte order"
        )));
    }
    Ok(())
}

/// Encodes a record body in byte order `endian`.
pub(crate) fn encode_body(
    endian: Endianness,
    body: &RecordBody<'_>,
    ctx: &Ctx,
) -> Result<Vec<u8>, Error> {
    let mut w = crate::rt::Writer::in_order(endian);
    body.encode(&mut w, ctx).map(|_| w.into_vec())
}
