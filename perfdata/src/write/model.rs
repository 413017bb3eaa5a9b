//! The editable model of a perf.data: attrs, features and records, independent of where
//! they sat in the input. Only data and what reading it needs; the conversions of the
//! model (`transform`) and its writing (`save`) are methods added by those modules.
//!
//! Features and records are kept **raw** (their bytes, as read: copy-through) until
//! someone needs their values; [`Builder::make_typed`] decodes all of them into owned
//! values (typed round trip). Both write back to the same bytes for perf-written files.

use super::placement::Placement;
use crate::container::{
    decode_body, decode_feature, record_ctx, EventAttr, Layout, PerfData, RawRecord, RecordCursor,
    Session, SliceSource,
};
use crate::generated::perf_data::{
    Ctx, EventTypes, FeatureBody, FeatureId, RecordBody, RecordMisc, RecordType,
};
use crate::rt::{Bytes, Endian, Endianness, Error, Reader};

/// A header feature: raw section bytes, or its decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureData<'a> {
    /// The section's bytes as read, in the model's byte order: copied through as they
    /// are (a damaged section, or one the spec does not know, can only be carried so).
    Raw(Bytes<'a>),
    /// The decoded value, to read or edit; encoded again when written.
    Typed(Box<FeatureBody<'a>>),
}

/// One `HEADER_*` feature of the model: a section of a file, a HEADER_FEATURE record once
/// written as a pipe.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureItem<'a> {
    /// Which feature: its bit in the feature bitmap. The writer orders sections by it and
    /// refuses a duplicate.
    pub id: FeatureId,
    /// Its content.
    pub data: FeatureData<'a>,
}

/// A record body: raw bytes (with its payload, if the type has one), or its decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordData<'a> {
    /// The record as read, in the model's byte order: copied through when the output
    /// has that order, decoded and encoded again otherwise.
    Raw {
        /// The bytes after `perf_event_header`, up to its `size` (sample_id trailer
        /// included).
        body: Bytes<'a>,
        /// The bytes after the record outside `header.size` (tracing data, AUX data);
        /// empty for types without one.
        payload: Bytes<'a>,
    },
    /// The decoded value (its payload attached), to read or edit; encoded with the
    /// context of the record's attr when written.
    Typed(Box<RecordBody<'a>>),
}

/// One record of the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordItem<'a> {
    /// `perf_event_header.type`, written as it is: for a typed record it must be the
    /// value's type (the writer does not check).
    pub ty: RecordType,
    /// `perf_event_header.misc`: CPU mode and the type's own bits, some of which change
    /// the layout (MMAP_BUILD_ID in MMAP2).
    pub misc: RecordMisc,
    /// Index into [`Builder::attrs`] of the event the record belongs to (what decides its
    /// sample layout and trailer), `None` when there is no attr.
    pub attr: Option<usize>,
    /// The record's body: raw bytes or a decoded value.
    pub data: RecordData<'a>,
}

impl<'a> RecordItem<'a> {
    /// A record as it sits in the stream (bytes in the input's order `e`), borrowed; its
    /// attr found with `session`.
    pub fn raw<E: Endian>(session: &Session<'_>, rec: &RawRecord<'a>, e: E) -> Self {
        let ty = rec.record_type();
        RecordItem {
            ty,
            misc: rec.header.misc,
            attr: session.attr_index(ty, rec.body, e),
            data: RecordData::Raw {
                body: rec.body.into(),
                payload: rec.payload.into(),
            },
        }
    }

    /// A copy that borrows nothing from the input.
    pub fn into_owned(self) -> RecordItem<'static> {
        RecordItem {
            ty: self.ty,
            misc: self.misc,
            attr: self.attr,
            data: match self.data {
                RecordData::Raw { body, payload } => RecordData::Raw {
                    body: body.into_owned(),
                    payload: payload.into_owned(),
                },
                RecordData::Typed(b) => RecordData::Typed(Box::new(b.into_owned())),
            },
        }
    }
}

/// An editable perf.data file or stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Builder<'a> {
    /// Byte order the input had (the writer may choose another).
    pub endian: Endianness,
    /// Layout the input had (the writer may choose another).
    pub layout: Layout,
    /// The legacy `PERFFILE` magic (version 1); the writer keeps it when writing a file.
    pub legacy_v1: bool,
    /// The input had the 72-byte file header without a feature bitmap.
    pub short_header: bool,
    /// The events. File layout: the attrs section. Pipe layout: gathered from the
    /// HEADER_ATTR records (which stay in `records`), to know each record's layout.
    pub attrs: Vec<EventAttr<'a>>,
    /// The obsolete event_types section (legacy files), if it had any bytes.
    pub event_types: Option<EventTypes<'a>>,
    /// File layout: the feature sections, in id order. Pipe layout: empty (features
    /// travel as HEADER_FEATURE records).
    pub features: Vec<FeatureItem<'a>>,
    /// Bytes between the feature table and the first payload (file layout): unused table
    /// entries perf reserved for features it then failed to write. Written back as they
    /// are, so a rewrite is byte-exact; empty is the canonical form.
    pub feature_table_slack: Bytes<'a>,
    /// Pipe layout converted to file layout: the feature id of the stream's
    /// end-of-features marker (its producer's `HEADER_LAST_FEATURE`), so that converting
    /// back ends the features the way that producer's readers expect.
    pub pipe_end_marker: Option<u64>,
    /// The record stream, in order. Compressed records are kept as they are (see
    /// [`Builder::decompress`]).
    pub records: Vec<RecordItem<'a>>,
    /// File layout: where the input had each part and the bytes between them, so that an
    /// unmodified file is written back byte for byte whoever laid it out. `None` (or a
    /// placement that no longer fits the attrs and features) gives perf's own layout.
    pub placement: Option<Placement<'a>>,
}

impl<'a> Builder<'a> {
    /// Everything `data` holds, raw (no record or feature is decoded except what finding
    /// each record's attr needs).
    pub fn read(data: &PerfData<'a>) -> Result<Self, Error> {
        let mut file = Self::read_head(data)?;
        let (session, e) = (&data.session, data.format.endian);
        // Only the records as they sit in the stream: those inside compressed records stay
        // inside them.
        let mut records =
            RecordCursor::framing_only(SliceSource::new(data.data(), data.data_offset(), e));
        while let Some(rec) = records.next_in_input()? {
            file.records.push(RecordItem::raw(session, &rec, e));
        }
        Ok(file)
    }

    /// Everything but the records: header, attrs, event_types and (raw) features — what
    /// a streaming conversion needs before the first record.
    pub fn read_head(data: &PerfData<'a>) -> Result<Self, Error> {
        let mut features = vec![];
        for f in &data.features {
            // A section the file cuts short keeps the bytes it has (a damaged feature is
            // carried as it is; `PerfData::feature_problems` reports it).
            features.push(FeatureItem {
                id: f.id,
                data: FeatureData::Raw(data.feature_bytes_in_file(f).into()),
            });
        }
        let event_types = match &data.header {
            Some(h) if h.event_types.size > 0 => {
                let bytes = slice(data.bytes, h.event_types.offset, h.event_types.size)?;
                Some(
                    EventTypes::decode(
                        &mut Reader::in_order(bytes, h.event_types.offset, data.format.endian),
                        &Ctx::default(),
                    )
                    .map_err(|e| e.in_field("event_types"))?,
                )
            }
            _ => None,
        };
        Ok(Builder {
            endian: data.format.endian,
            layout: data.format.layout,
            legacy_v1: data.format.legacy_v1,
            short_header: data.format.short_header,
            attrs: data.session.attrs.clone(),
            event_types,
            features,
            feature_table_slack: data.feature_table_slack.into(),
            pipe_end_marker: None,
            records: vec![],
            placement: data.header.as_ref().and_then(|h| Placement::of(data, h)),
        })
    }

    /// The decoding context of `item` (its attr's values, the features' values, misc).
    pub fn record_ctx(&self, item: &RecordItem<'_>) -> Ctx {
        let attr = item
            .attr
            .and_then(|i| self.attrs.get(i))
            .map(|a| Ctx::from_attr(&a.attr));
        record_ctx(attr.as_ref(), &self.feature_ctx(), item.misc)
    }

    /// The context for feature payloads: the values the spec's context takes from
    /// features (`FeatureId::CONTEXT_SOURCES`), from the feature sections or, in a pipe
    /// stream, from its HEADER_FEATURE records.
    pub fn feature_ctx(&self) -> Ctx {
        let mut ctx = Ctx::default();
        let is_source = |id: FeatureId| FeatureId::CONTEXT_SOURCES.contains(&id);
        let mut found = false;
        for f in self.features.iter().filter(|f| is_source(f.id)) {
            found = true;
            match &f.data {
                FeatureData::Typed(b) => ctx.take_from_feature(b),
                FeatureData::Raw(bytes) => {
                    let fctx = Ctx::default();
                    if let Ok(b) = decode_feature(self.endian, f.id, bytes, 0, &fctx) {
                        ctx.take_from_feature(&b);
                    }
                }
            }
        }
        if found {
            return ctx;
        }
        // The first record of each source feature, as the reader's walk takes them; the
        // scan stops once every source is found (perf streams them at the start).
        let mut missing: Vec<FeatureId> = FeatureId::CONTEXT_SOURCES.to_vec();
        for r in &self.records {
            if missing.is_empty() {
                break;
            }
            if r.ty != RecordType::HEADER_FEATURE {
                continue;
            }
            let body = match &r.data {
                RecordData::Typed(b) => Some((**b).clone()),
                RecordData::Raw { body, .. } => {
                    decode_body(self.endian, r.ty, body, 0, &Ctx::default()).ok()
                }
            };
            if let Some(RecordBody::HeaderFeature(h)) = body {
                if let Some(f) = h.data.as_ref() {
                    if let Some(at) = missing.iter().position(|&m| Some(m) == f.feature_id()) {
                        missing.remove(at);
                        ctx.take_from_feature(f);
                    }
                }
            }
        }
        ctx
    }

    /// Decodes every raw feature into its owned value; `fctx` holds the CPU counts. A
    /// feature that does not decode (damaged) stays raw, so a rewrite keeps its bytes as
    /// they are; [`Builder::damaged_features`] lists them.
    pub fn make_features_typed(&mut self, fctx: &Ctx) -> Result<(), Error> {
        let endian = self.endian;
        for f in &mut self.features {
            if let FeatureData::Raw(bytes) = &f.data {
                if let Ok(decoded) = decode_feature(endian, f.id, bytes, 0, fctx) {
                    f.data = FeatureData::Typed(Box::new(decoded.into_owned()));
                }
            }
        }
        Ok(())
    }

    /// The raw features whose bytes do not decode (damaged sections carried as they are).
    pub fn damaged_features(&self) -> Vec<FeatureId> {
        let fctx = self.feature_ctx();
        self.features
            .iter()
            .filter(|f| match &f.data {
                FeatureData::Raw(bytes) => {
                    decode_feature(self.endian, f.id, bytes, 0, &fctx).is_err()
                }
                FeatureData::Typed(_) => false,
            })
            .map(|f| f.id)
            .collect()
    }

    /// A copy that borrows nothing from the input.
    pub fn into_owned(self) -> Builder<'static> {
        Builder {
            endian: self.endian,
            layout: self.layout,
            legacy_v1: self.legacy_v1,
            short_header: self.short_header,
            attrs: self.attrs.into_iter().map(EventAttr::into_owned).collect(),
            event_types: self.event_types.map(|e| e.into_owned()),
            features: self
                .features
                .into_iter()
                .map(|f| FeatureItem {
                    id: f.id,
                    data: match f.data {
                        FeatureData::Raw(b) => FeatureData::Raw(b.into_owned()),
                        FeatureData::Typed(b) => FeatureData::Typed(Box::new(b.into_owned())),
                    },
                })
                .collect(),
            feature_table_slack: self.feature_table_slack.into_owned(),
            pipe_end_marker: self.pipe_end_marker,
            records: self
                .records
                .into_iter()
                .map(RecordItem::into_owned)
                .collect(),
            placement: self.placement.map(Placement::into_owned),
        }
    }
}

fn slice(bytes: &[u8], offset: u64, size: u64) -> Result<&[u8], Error> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
    bytes.get(start..end).ok_or_else(|| {
        Error::invalid(
            Some(offset),
            format!("a section inside the file ({} bytes)", bytes.len()),
            format!("offset {offset} size {size}"),
        )
    })
}
