//! File layout ↔ pipe layout. A pipe carries the header's content as records: HEADER_ATTR,
//! HEADER_FEATURE (one per feature, then an end-of-features marker), HEADER_TRACING_DATA
//! and HEADER_BUILD_ID; a file carries it in the attrs section and the feature sections.

use super::feature_records::{is_empty_feature, unpadded_feature};
use super::pipeline::{Emit, Stage};
use crate::container::{decode_body, EventAttr, Layout};
use crate::generated::perf_data::{
    BuildId, BuildIdEntry, BuildIdMisc, Ctx, EventTypeEntry, EventTypes, FeatureBody, FeatureId,
    HeaderAttr, HeaderBuildId, HeaderEventType, HeaderFeature, HeaderTracingData, RecordBody,
    RecordMisc, RecordType, HEADER_LAST_FEATURE, MAX_EVENT_NAME,
};
use crate::rt::{Array, Bytes, Endianness, Error, Payload, Reader, Str, Writer};
use crate::write::model::{Builder, FeatureData, FeatureItem, RecordData, RecordItem};

/// File layout → pipe layout, as `perf record -o -` would have streamed it: HEADER_ATTR
/// records, then every feature as a HEADER_FEATURE record (TRACING_DATA as
/// HEADER_TRACING_DATA with its payload, BUILD_ID as HEADER_BUILD_ID records) and the
/// end-of-features marker, then the data records.
#[derive(Default)]
pub struct ToPipe {
    /// The header's content as records, sent before the first record.
    prologue: Option<Vec<RecordItem<'static>>>,
}

impl ToPipe {
    /// A stage that turns a file-layout model or stream into a pipe (a pipe passes
    /// through as it is).
    pub fn new() -> Self {
        Self::default()
    }

    fn send_prologue(&mut self, out: &mut Emit<'_>) -> Result<(), Error> {
        for item in self.prologue.take().unwrap_or_default() {
            out(item)?;
        }
        Ok(())
    }
}

impl Stage for ToPipe {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        if head.layout == Layout::Pipe {
            return Ok(());
        }
        self.prologue = Some(prologue(head, fctx)?);
        head.features.clear();
        head.feature_table_slack = Bytes::default();
        head.event_types = None;
        head.placement = None;
        head.layout = Layout::Pipe;
        Ok(())
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        self.send_prologue(out)?;
        out(item)
    }

    fn finish(&mut self, _head: &mut Builder<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        self.send_prologue(out)
    }
}

fn prologue(head: &Builder<'_>, fctx: Ctx) -> Result<Vec<RecordItem<'static>>, Error> {
    let mut records: Vec<RecordItem<'static>> = vec![];
    for a in &head.attrs {
        records.push(RecordItem {
            ty: RecordType::HEADER_ATTR,
            misc: RecordMisc::default(),
            attr: None,
            data: RecordData::Typed(Box::new(RecordBody::HeaderAttr(HeaderAttr {
                attr: a.attr.clone().into_owned(),
                ids: Array::from(a.ids.clone()),
                tail: None,
            }))),
        });
    }
    // perf 3.x sent the event_types after the attrs (`perf_event__synthesize_event_types`).
    for e in head.event_types.iter().flat_map(|t| &t.entries) {
        records.push(RecordItem {
            ty: RecordType::HEADER_EVENT_TYPE,
            misc: RecordMisc::default(),
            attr: None,
            data: RecordData::Typed(Box::new(RecordBody::HeaderEventType(HeaderEventType {
                event_id: e.event_id,
                // Only the name, zero-padded to 8 (no NUL when its length is a multiple
                // of 8), as perf wrote the record.
                name: Str::from_raw({
                    let text = e.name.text();
                    let mut v = text.to_vec();
                    v.resize(text.len().next_multiple_of(8), 0);
                    v
                }),
                tail: None,
            }))),
        });
    }
    for f in &head.features {
        match feature_value(head.endian, f, &fctx)? {
            FeatureBody::TracingData(_) => {
                let mut bytes = match &f.data {
                    FeatureData::Raw(b) => b.to_vec(),
                    FeatureData::Typed(b) => encode_feature(head.endian, b, &fctx)?,
                };
                // perf pads the tracing data that follows the record to 8 bytes and
                // checks that `size` says so.
                bytes.resize(bytes.len().next_multiple_of(8), 0);
                records.push(RecordItem {
                    ty: RecordType::HEADER_TRACING_DATA,
                    misc: RecordMisc::default(),
                    attr: None,
                    data: RecordData::Typed(Box::new(RecordBody::HeaderTracingData(
                        HeaderTracingData {
                            data: Payload::Data(Bytes::from(bytes)),
                            tail: None,
                        },
                    ))),
                });
            }
            // An empty list has no record to travel in: it goes as an empty feature.
            FeatureBody::BuildId(list) if list.entries.is_empty() && list.tail.is_none() => {
                records.push(feature_record(f.id, FeatureBody::BuildId(list)))
            }
            FeatureBody::BuildId(list) => {
                for entry in list.entries {
                    records.push(build_id_record(entry));
                }
            }
            other => records.push(feature_record(f.id, other)),
        }
    }
    records.push(RecordItem {
        ty: RecordType::HEADER_FEATURE,
        misc: RecordMisc::default(),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderFeature(HeaderFeature {
            feat_id: head
                .pipe_end_marker
                .unwrap_or_else(|| end_marker_for(head, &fctx)),
            data: None,
            tail: None,
        }))),
    });
    Ok(records)
}

/// A HEADER_FEATURE record carrying `body`.
pub(crate) fn feature_record(id: FeatureId, body: FeatureBody<'static>) -> RecordItem<'static> {
    RecordItem {
        ty: RecordType::HEADER_FEATURE,
        misc: RecordMisc::default(),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderFeature(HeaderFeature {
            feat_id: u64::from(id.0),
            data: Some(Box::new(body)),
            // Unpadded, as perf before ~6.14 writes them: older readers take padding for
            // data (perf 6.1 reads it as CPU_TOPOLOGY die ids), newer ones accept both.
            tail: Some(Bytes::default()),
        }))),
    }
}

/// A pipe's HEADER_BUILD_ID record (header bits `misc`) as the BUILD_ID feature's entry
/// it stands for: the same fields, the record's misc in the entry (the inverse of
/// `build_id_record`).
pub fn build_id_entry<'b>(b: HeaderBuildId<'b>, misc: RecordMisc) -> BuildIdEntry<'b> {
    BuildIdEntry {
        type_: 0,
        misc: BuildIdMisc(misc.0),
        pid: b.pid,
        build_id: b.build_id,
        build_id_size: b.build_id_size,
        reserved1: b.reserved1,
        reserved2: b.reserved2,
        filename: b.filename,
        tail: b.tail,
    }
}

fn build_id_record(entry: BuildIdEntry<'_>) -> RecordItem<'static> {
    RecordItem {
        ty: RecordType::HEADER_BUILD_ID,
        misc: RecordMisc(entry.misc.0),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderBuildId(HeaderBuildId {
            pid: entry.pid,
            build_id: entry.build_id.into_owned(),
            build_id_size: entry.build_id_size,
            reserved1: entry.reserved1,
            reserved2: entry.reserved2,
            filename: entry.filename.into_owned(),
            tail: entry.tail.map(|t| t.into_owned()),
        }))),
    }
}

/// The decoded value of a feature, whatever form the model holds it in.
fn feature_value(
    endian: Endianness,
    f: &FeatureItem<'_>,
    fctx: &Ctx,
) -> Result<FeatureBody<'static>, Error> {
    match &f.data {
        FeatureData::Typed(b) => Ok((**b).clone().into_owned()),
        FeatureData::Raw(bytes) => {
            FeatureBody::decode(f.id, &mut Reader::in_order(bytes, 0, endian), fctx)
                .map(FeatureBody::into_owned)
                .map_err(|e| e.with_feature(f.id))
        }
    }
}

fn encode_feature(endian: Endianness, b: &FeatureBody<'_>, fctx: &Ctx) -> Result<Vec<u8>, Error> {
    let mut w = Writer::in_order(endian);
    b.encode(&mut w, fctx).map(|_| w.into_vec())
}

/// The id that ends the features of a pipe made from `head`. Readers stop at their own
/// `HEADER_LAST_FEATURE` and take any smaller id for a real (here empty) feature, so the
/// marker follows the readers: 32 for perf 6.x (which rejects a larger id as "wrong feature
/// ID" and fails on the empty feature a smaller one would be), 33 when the file comes from
/// a perf (≥ 7.0, approximately) that knows CPU_DOMAIN_INFO and only its readers can read it
/// all anyway.
fn end_marker_for(head: &Builder<'_>, fctx: &Ctx) -> u64 {
    const PERF_6_LAST_FEATURE: u64 = 32;
    let version = head
        .features
        .iter()
        .find(|f| f.id == FeatureId::VERSION)
        .and_then(|f| match feature_value(head.endian, f, fctx).ok()? {
            FeatureBody::Version(v) => {
                let text = v.value.text.to_str_lossy().into_owned();
                let mut parts = text.split(|c: char| !c.is_ascii_digit());
                Some((
                    parts.next()?.parse::<u32>().ok()?,
                    parts.next()?.parse::<u32>().ok()?,
                ))
            }
            _ => None,
        });
    let knows_cpu_domain_info = version.is_some_and(|v| v >= (7, 0))
        || head
            .features
            .iter()
            .any(|f| f.id == FeatureId::CPU_DOMAIN_INFO);
    if knows_cpu_domain_info {
        u64::from(HEADER_LAST_FEATURE)
    } else {
        PERF_6_LAST_FEATURE
    }
}

/// Pipe layout → file layout, as `perf inject -o file` does: HEADER_ATTR records become
/// the attrs section, HEADER_FEATURE / HEADER_TRACING_DATA / HEADER_BUILD_ID records
/// become feature sections, everything else is the data section.
///
/// A file's attrs are written before its data, so a streaming writer needs them up front:
/// they are the head's attrs at `begin` (for a pipe, what [`crate::container::PerfData`]
/// gathered from its HEADER_ATTR records); the ones met in the stream replace them at
/// `finish` — [`ToFile::attrs_changed`] says whether they differ.
#[derive(Default)]
pub struct ToFile {
    active: bool,
    endian: Option<Endianness>,
    fctx: Ctx,
    /// What `perf record -o -` sends before the first kernel record or the end marker
    /// holds the header's content. HEADER_BUILD_ID records after it (`perf inject -b`
    /// puts them in the data) stay records.
    in_prologue: bool,
    initial_attrs: Vec<EventAttr<'static>>,
    attrs: Vec<EventAttr<'static>>,
    features: Vec<FeatureItem<'static>>,
    build_ids: Vec<BuildIdEntry<'static>>,
    event_types: Vec<EventTypeEntry<'static>>,
    end_marker: Option<u64>,
}

impl ToFile {
    /// A stage that turns a pipe into the file layout (a file passes through as it is).
    pub fn new() -> Self {
        Self::default()
    }

    /// The attrs the stream declared differ from the ones `begin` saw.
    pub fn attrs_changed(&self) -> bool {
        self.active && self.attrs != self.initial_attrs
    }

    /// A feature read from a HEADER_FEATURE record, without the record's padding (see
    /// [`unpadded_feature`]).
    fn without_padding(
        &self,
        id: FeatureId,
        value: FeatureBody<'_>,
    ) -> Result<FeatureBody<'static>, Error> {
        if value.feature_id().is_none() {
            return Ok(value.into_owned());
        }
        let endian = self.endian.unwrap_or(Endianness::Little);
        let bytes = encode_feature(endian, &value, &self.fctx)?;
        match unpadded_feature(endian, id, &bytes, &self.fctx) {
            Ok((v, _)) => Ok(v.into_owned()),
            Err(_) => Ok(value.into_owned()),
        }
    }
}

/// A pipe's HEADER_EVENT_TYPE record as the event_types entry it stands for (whose name
/// region is MAX_EVENT_NAME bytes).
fn event_type_entry(e: &HeaderEventType<'_>) -> EventTypeEntry<'static> {
    let mut name = e.name.text().to_vec();
    name.resize(MAX_EVENT_NAME as usize, 0);
    EventTypeEntry {
        event_id: e.event_id,
        name: Str::from_raw(name),
    }
}

/// The HEADER_EVENT_TYPE records of a pipe, as the event_types section a file made from
/// it has (what [`ToFile`] gathers; a streaming writer needs it before the data).
pub fn pipe_event_types(
    data: &crate::container::PerfData<'_>,
) -> Result<Option<EventTypes<'static>>, Error> {
    let mut entries = vec![];
    let e = data.format.endian;
    let source = crate::container::SliceSource::new(data.data(), data.data_offset(), e);
    let mut records = crate::container::RecordCursor::framing_only(source);
    while let Some(rec) = records.next_in_input()? {
        if rec.record_type() != RecordType::HEADER_EVENT_TYPE {
            continue;
        }
        if let RecordBody::HeaderEventType(e) =
            decode_body(e, rec.record_type(), rec.body, 0, &Ctx::default())?
        {
            entries.push(event_type_entry(&e));
        }
    }
    Ok((!entries.is_empty()).then_some(EventTypes { entries }))
}

impl Stage for ToFile {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        if head.layout == Layout::File {
            return Ok(());
        }
        self.active = true;
        self.in_prologue = true;
        self.endian = Some(head.endian);
        self.fctx = fctx;
        self.initial_attrs = head.attrs.iter().map(|a| a.clone().into_owned()).collect();
        head.layout = Layout::File;
        Ok(())
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        if !self.active {
            return out(item);
        }
        if item.ty.0 < 64 {
            self.in_prologue = false;
        }
        let header_content = match item.ty {
            RecordType::HEADER_ATTR
            | RecordType::HEADER_TRACING_DATA
            | RecordType::HEADER_EVENT_TYPE => true,
            RecordType::HEADER_FEATURE | RecordType::HEADER_BUILD_ID => self.in_prologue,
            _ => false,
        };
        if !header_content {
            return out(item);
        }
        let body = match item.data {
            RecordData::Typed(b) => (*b).into_owned(),
            RecordData::Raw { body, payload } => {
                let endian = self.endian.unwrap_or(Endianness::Little);
                let mut b = decode_body(endian, item.ty, &body, 0, &self.fctx)?.into_owned();
                b.set_payload(Bytes::from(payload.to_vec()));
                b
            }
        };
        match body {
            RecordBody::HeaderAttr(a) => self.attrs.push(EventAttr {
                attr: a.attr,
                ids: a.ids.iter().collect(),
                entry_tail: None,
            }),
            RecordBody::HeaderEventType(e) => {
                self.event_types.push(event_type_entry(&e));
            }
            RecordBody::HeaderFeature(f) => match f.data {
                None if is_empty_feature(f.feat_id) => {
                    // An empty feature (BRANCH_STACK, STAT, an empty BUILD_ID list).
                    let id = FeatureId(f.feat_id as u32);
                    let (value, _) = unpadded_feature(Endianness::Little, id, &[], &self.fctx)?;
                    self.features.push(FeatureItem {
                        id,
                        data: FeatureData::Typed(Box::new(value.into_owned())),
                    });
                }
                None => {
                    self.in_prologue = false; // the end-of-features marker
                    self.end_marker = Some(f.feat_id);
                }
                Some(value) => {
                    let value = *value;
                    if value.feature_id().is_some()
                        || !matches!(value, FeatureBody::Unknown(ref b) if b.is_empty())
                    {
                        // A file names its features by bits of a 256-bit map: an id
                        // past it has no place there (cut to 32 bits, it would pass
                        // for another feature).
                        let id = u32::try_from(f.feat_id)
                            .ok()
                            .filter(|&id| id < 256)
                            .map(FeatureId)
                            .ok_or_else(|| {
                                Error::inconsistent(format!(
                                    "HEADER_FEATURE record of feature id {}: a file's feature bitmap has ids 0-255",
                                    f.feat_id
                                ))
                            })?;
                        let value = self.without_padding(id, value)?;
                        self.features.push(FeatureItem {
                            id,
                            data: FeatureData::Typed(Box::new(value)),
                        });
                    }
                }
            },
            RecordBody::HeaderTracingData(t) => {
                // The tracing data says its own byte order: the bytes stay as they are,
                // without the pipe's padding to 8.
                let bytes = t.data.bytes().unwrap_or(&[]);
                let len = unpadded_feature(
                    self.endian.unwrap_or(Endianness::Little),
                    FeatureId::TRACING_DATA,
                    bytes,
                    &self.fctx,
                )
                .map_or(bytes.len(), |(_, len)| len);
                self.features.push(FeatureItem {
                    id: FeatureId::TRACING_DATA,
                    data: FeatureData::Raw(Bytes::from(bytes[..len].to_vec())),
                })
            }
            RecordBody::HeaderBuildId(b) => self.build_ids.push(build_id_entry(b, item.misc)),
            other => out(RecordItem {
                ty: item.ty,
                misc: item.misc,
                attr: item.attr,
                data: RecordData::Typed(Box::new(other)),
            })?,
        }
        Ok(())
    }

    fn finish(&mut self, head: &mut Builder<'_>, _out: &mut Emit<'_>) -> Result<(), Error> {
        if !self.active {
            return Ok(());
        }
        if !self.event_types.is_empty() {
            head.event_types = Some(EventTypes {
                entries: std::mem::take(&mut self.event_types),
            });
        }
        let mut features = std::mem::take(&mut self.features);
        let build_ids = std::mem::take(&mut self.build_ids);
        if !build_ids.is_empty() && !features.iter().any(|f| f.id == FeatureId::BUILD_ID) {
            features.push(FeatureItem {
                id: FeatureId::BUILD_ID,
                data: FeatureData::Typed(Box::new(FeatureBody::BuildId(BuildId {
                    entries: build_ids,
                    tail: None,
                }))),
            });
        }
        features.sort_by_key(|f| f.id.0);
        features.dedup_by_key(|f| f.id.0);
        head.attrs = self.attrs.clone();
        head.features = features;
        if self.end_marker.is_some() {
            head.pipe_end_marker = self.end_marker;
        }
        Ok(())
    }
}
