//! Record-by-record decoding: the typed round trip, and a byte-order change of a model.

use super::pipeline::{Emit, Stage};
use crate::container::{decode_body, decode_feature, is_compressed, record_ctx, HEADER_SIZE};
use crate::generated::perf_data::{Ctx, RecordBody, RecordType, Sample};
use crate::rt::{static_endian, Bytes, Endianness, Error, Reader, StaticEndian, Writer};
use crate::write::encode::{refuse_unknown_feature, RecordEncoder};
use crate::write::model::{Builder, FeatureData, RecordData, RecordItem};

/// Decodes every raw record of a type the spec knows (and every feature) into its value;
/// the writer encodes it again. Records of unknown types stay raw.
#[derive(Default)]
pub struct Typed {
    endian: Option<Endianness>,
    attr_ctx: Vec<Ctx>,
    fctx: Ctx,
    /// Encode each value again at once (in the input's byte order) and pass on its bytes:
    /// the same round trip without a boxed value per record, for streaming conversions.
    reencode: bool,
    /// The re-encoded body, one buffer reused for every record.
    buf: Vec<u8>,
}

impl Typed {
    /// Values in the model (for editing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Decoded and encoded again record by record (for `convert --typed`).
    pub fn reencoding() -> Self {
        Typed {
            reencode: true,
            ..Self::default()
        }
    }
}

impl Stage for Typed {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        self.endian = Some(head.endian);
        self.attr_ctx = head.attrs.iter().map(|a| Ctx::from_attr(&a.attr)).collect();
        self.fctx = fctx;
        head.make_features_typed(&fctx)
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        let RecordData::Raw { body, payload } = &item.data else {
            return out(item);
        };
        if item.ty.name().is_none() {
            return out(item);
        }
        let attr = item.attr.and_then(|i| self.attr_ctx.get(i));
        let ctx = record_ctx(attr, &self.fctx, item.misc);
        let endian = self.endian.unwrap_or(Endianness::Little);
        if self.reencode {
            // Hot (`convert --typed`): the round trip monomorphised per byte order.
            self.buf.clear();
            self.buf = static_endian!(endian, |e| {
                let mut w = Writer::from_vec_in(std::mem::take(&mut self.buf), e);
                round_trip(item.ty, body, &ctx, &mut w)?;
                w.into_vec()
            });
            let bytes = self.buf.as_slice();
            return out(RecordItem {
                ty: item.ty,
                misc: item.misc,
                attr: item.attr,
                data: RecordData::Raw {
                    body: Bytes::from(bytes),
                    payload: payload.clone(),
                },
            });
        }
        let mut decoded = decode_body(endian, item.ty, body, 0, &ctx)?;
        if item.ty.has_payload() {
            decoded.set_payload(Bytes::from(payload.as_slice()));
        }
        out(RecordItem {
            ty: item.ty,
            misc: item.misc,
            attr: item.attr,
            data: RecordData::Typed(Box::new(decoded)),
        })
    }
}

/// Decodes a record body of type `ty` into its value and encodes that into `w`. Samples
/// (nearly every record) go through their own type rather than the `RecordBody` enum,
/// which would move each one into the enum and out again.
fn round_trip<E: StaticEndian>(
    ty: RecordType,
    body: &[u8],
    ctx: &Ctx,
    w: &mut Writer<E>,
) -> Result<(), Error> {
    let r = &mut Reader::in_order(body, 0, w.endian());
    if ty == RecordType::SAMPLE {
        Sample::decode(r, ctx)?.encode(w, ctx)
    } else {
        RecordBody::decode(ty, r, ctx)?.encode(w, ctx)
    }
}

/// Re-encodes a model's raw records and features in byte order `E` (the model then has
/// that order): what makes compressing a model for another byte order possible.
pub struct ToEndian<E: StaticEndian> {
    enc: Option<RecordEncoder<E>>,
    buf: Vec<u8>,
}

impl<E: StaticEndian> Default for ToEndian<E> {
    fn default() -> Self {
        ToEndian {
            enc: None,
            buf: vec![],
        }
    }
}

impl<E: StaticEndian> ToEndian<E> {
    /// A stage to byte order `E` (named by the type: `ToEndian::<BigEndian>::new()`).
    pub fn new() -> Self {
        Self::default()
    }
    /// [`ToEndian::new`] with the output order given as a value (for
    /// [`static_endian!`](crate::rt::static_endian)).
    pub fn for_order(_: E) -> Self {
        Self::default()
    }
}

impl<E: StaticEndian> Stage for ToEndian<E> {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        if head.legacy_v1 && head.endian != E::KIND {
            return Err(Error::other(
                "a legacy PERFFILE (v1) file keeps its byte order: its magic does not record one",
            ));
        }
        self.enc = Some(RecordEncoder::new(head.endian, &head.attrs, fctx));
        if head.endian != E::KIND {
            for f in &mut head.features {
                if let FeatureData::Raw(bytes) = &f.data {
                    let typed = decode_feature(head.endian, f.id, bytes, 0, &fctx)?.into_owned();
                    refuse_unknown_feature(&typed, f.id)?;
                    f.data = FeatureData::Typed(Box::new(typed));
                }
            }
        }
        head.endian = E::KIND;
        Ok(())
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        let enc = self.enc.as_mut().expect("begin sets the encoder");
        if enc.source_endian() == E::KIND || !matches!(item.data, RecordData::Raw { .. }) {
            return out(item);
        }
        if is_compressed(item.ty) {
            return Err(Error::other(
                "compressed records hold records in the input's byte order: decompress before converting",
            ));
        }
        self.buf.clear();
        let len = enc.write(&item, &mut self.buf)? as usize;
        let payload_len = match &item.data {
            RecordData::Raw { payload, .. } => payload.len(),
            RecordData::Typed(_) => 0,
        };
        let (record, payload) = self.buf.split_at(len - payload_len);
        out(RecordItem {
            ty: item.ty,
            misc: item.misc,
            attr: item.attr,
            data: RecordData::Raw {
                body: Bytes::from(&record[HEADER_SIZE..]),
                payload: Bytes::from(payload),
            },
        })
    }
}
