//! Expanding COMPRESSED / COMPRESSED2 records: all of a stream's compressed records form one
//! zstd stream, decoded by the record cursor's [`Inflater`] as the records are pushed; a
//! record may straddle two chunks, so the undecoded tail is carried.

use super::feature_records::header_feature;
use super::pipeline::{Emit, Stage};
use crate::container::{is_compressed, zstd_range, Inflater, Session};
use crate::generated::perf_data::{Ctx, FeatureId};
use crate::rt::{Endianness, Error};
use crate::write::model::{Builder, RecordData, RecordItem};

/// Replaces every compressed record with the records it holds and drops HEADER_COMPRESSED
/// (the feature, or its HEADER_FEATURE record in a pipe).
#[derive(Default)]
pub struct Decompress {
    endian: Option<Endianness>,
    /// The attrs, to find each expanded record's attr.
    session: Session<'static>,
    inflater: Inflater,
}

impl Decompress {
    /// A stage for a model or stream whose attrs and byte order it learns at `begin`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Stage for Decompress {
    fn begin(&mut self, head: &mut Builder<'_>, _fctx: Ctx) -> Result<(), Error> {
        self.endian = Some(head.endian);
        for a in &head.attrs {
            self.session.add_attr(a.clone().into_owned());
        }
        head.features.retain(|f| f.id != FeatureId::COMPRESSED);
        Ok(())
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        let endian = self.endian.unwrap_or(Endianness::Little);
        if let Some(h) = header_feature(endian, &item) {
            if h.feat_id == u64::from(FeatureId::COMPRESSED.0) {
                return Ok(());
            }
        }
        if !is_compressed(item.ty) {
            return out(item);
        }
        let owned_body;
        let body: &[u8] = match &item.data {
            RecordData::Raw { body, .. } => body,
            RecordData::Typed(b) => {
                // Its bytes in the input's order, to read the zstd data from.
                owned_body = crate::write::encode::encode_body(endian, b, &Ctx::default())?;
                &owned_body
            }
        };
        self.expand(&item, body, out, endian)
    }

    fn finish(&mut self, _head: &mut Builder<'_>, _out: &mut Emit<'_>) -> Result<(), Error> {
        match self.inflater.pending_len() {
            0 => Ok(()),
            left => Err(Error::other(format!(
                "the compressed stream ends inside a record ({left} bytes left)"
            ))),
        }
    }
}

impl Decompress {
    /// Feeds one compressed record and emits the complete records it finishes.
    fn expand(
        &mut self,
        item: &RecordItem<'_>,
        body: &[u8],
        out: &mut Emit<'_>,
        endian: Endianness,
    ) -> Result<(), Error> {
        let Some(range) = zstd_range(item.ty, body, 0, endian)? else {
            return Ok(());
        };
        let zdata = &body[range];
        self.inflater.begin(0);
        while let Some(inner) = self
            .inflater
            .next_record(zdata, endian)
            .map_err(|(e, _)| e)?
        {
            let rec = self.inflater.record(inner);
            let ty = rec.record_type();
            if is_compressed(ty) {
                // Readers take it as a record, not expanded again (perf would expand it):
                // laid bare, its data would have to decompress on its own.
                return Err(Error::other(format!(
                    "a {} record inside compressed data, at byte {:#x} of the decompressed stream: compressed records are not nested, so it is not decompressed",
                    ty.label(),
                    rec.offset
                )));
            }
            out(RecordItem {
                ty,
                misc: rec.header.misc,
                attr: self.session.attr_index(ty, rec.body, endian),
                data: RecordData::Raw {
                    body: rec.body.into(),
                    payload: rec.payload.into(),
                },
            })?;
            self.inflater.consume(inner);
        }
        Ok(())
    }
}
