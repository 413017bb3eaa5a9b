//! Expanding COMPRESSED / COMPRESSED2 records: all of a stream's compressed records form one
//! zstd stream, decoded with one [`Decompressor`]; a record may straddle two chunks, so the
//! undecoded tail is carried (bounded by one chunk's expansion).

use super::{header_feature, is_compressed, Emit, Stage};
use crate::container::decompress::{zstd_data, Decompressor};
use crate::container::session::Session;
use crate::container::RecordWalker;
use crate::generated::perf_data::{Ctx, FeatureId};
use crate::model::{PerfFile, RecordData, RecordItem};
use crate::rt::{Bytes, Endianness, Error, ErrorKind};

/// Replaces every compressed record with the records it holds and drops HEADER_COMPRESSED
/// (the feature, or its HEADER_FEATURE record in a pipe).
#[derive(Default)]
pub struct Decompress {
    endian: Option<Endianness>,
    /// The attrs, to find each expanded record's attr.
    session: Session<'static>,
    decompressor: Option<Decompressor>,
}

impl Decompress {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Stage for Decompress {
    fn begin(&mut self, head: &mut PerfFile<'_>, _fctx: Ctx) -> Result<(), Error> {
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
                owned_body = super::encode_body(endian, b, &Ctx::default())?;
                &owned_body
            }
        };
        self.expand(&item, body, out, endian)
    }

    fn finish(&mut self, _head: &mut PerfFile<'_>, _out: &mut Emit<'_>) -> Result<(), Error> {
        if let Some(d) = &self.decompressor {
            if !d.pending().is_empty() {
                return Err(Error::other(format!(
                    "the compressed stream ends inside a record ({} bytes left)",
                    d.pending().len()
                )));
            }
        }
        Ok(())
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
        let zdata = zstd_data(item.ty, body, 0, endian)?.unwrap_or_else(Bytes::default);
        let d = match &mut self.decompressor {
            Some(d) => d,
            None => self.decompressor.insert(Decompressor::new()?),
        };
        d.feed(&zdata, 0)?;
        let mut taken = 0;
        for rec in RecordWalker::in_order(d.pending(), 0, endian) {
            match rec {
                Ok(rec) => {
                    taken += rec.stream_len();
                    let ty = rec.record_type();
                    out(RecordItem {
                        ty,
                        misc: rec.header.misc,
                        attr: self.session.attr_index(ty, rec.body, endian),
                        data: RecordData::Raw {
                            body: rec.body.into(),
                            payload: rec.payload.into(),
                        },
                    })?;
                }
                // The rest of this record arrives with the next compressed record.
                Err(e) if matches!(e.kind(), ErrorKind::UnexpectedEnd { .. }) => break,
                Err(e) => return Err(e),
            }
        }
        d.consume(taken);
        Ok(())
    }
}
