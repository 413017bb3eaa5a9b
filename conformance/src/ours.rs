//! Our side: a perf.data input (file, pipe stream or `--threads` directory) decoded with
//! the perfdata library into owned values the checks compare with perf's text.
//!
//! Record offsets are kept as perf prints them (see [`OurRecord::offset`]).

use anyhow::{Context, Result};
use perfdata::rt::{Endianness, Reader};
use perfdata::types::{
    Attr, AttrType, Ctx, EventHeader, FeatureBody, FeatureId, RecordBody, RecordType, SampleId,
    SampleType, TracingData,
};
use perfdata::RecordWalk;
use perfdata::{EventAttr, Layout, Origin, PerfData, RawRecord};
use std::path::Path;

/// One record of the input, decoded.
#[derive(Debug)]
pub struct OurRecord {
    /// Which stream of a directory it is in (`data`, `data.0`, ...); empty otherwise.
    pub stream: String,
    /// The offset perf prints: the file offset (file mode), the offset after the 16-byte
    /// pipe header (pipe mode), or — for records decompressed from COMPRESSED records —
    /// the file offset of the compressed record that completed them.
    pub offset: u64,
    /// Decompressed from a COMPRESSED / COMPRESSED2 record.
    pub compressed: bool,
    pub type_: RecordType,
    pub misc: u16,
    pub size: u16,
    /// Header and body bytes (without a trailing payload).
    pub bytes: Vec<u8>,
    /// Index of the attr it belongs to (perf's id rules), if any.
    pub attr: Option<usize>,
    /// Pipe mode: number of HEADER_ATTR records before it (perf's evlist at that point).
    pub attrs_before: usize,
    /// The decoded body, or the decode error.
    pub body: Result<RecordBody<'static>, String>,
    /// The trailing payload (HEADER_TRACING_DATA, AUXTRACE).
    pub payload: Vec<u8>,
}

impl OurRecord {
    /// The sample_id trailer, for kernel records that have one.
    pub fn sample_id(&self) -> Option<&SampleId> {
        let b = self.body.as_ref().ok()?;
        match b {
            RecordBody::Mmap(x) => x.sample_id.as_ref(),
            RecordBody::Lost(x) => x.sample_id.as_ref(),
            RecordBody::Comm(x) => x.sample_id.as_ref(),
            RecordBody::Exit(x) => x.sample_id.as_ref(),
            RecordBody::Throttle(x) => x.sample_id.as_ref(),
            RecordBody::Unthrottle(x) => x.sample_id.as_ref(),
            RecordBody::Fork(x) => x.sample_id.as_ref(),
            RecordBody::Read(x) => x.sample_id.as_ref(),
            RecordBody::Mmap2(x) => x.sample_id.as_ref(),
            RecordBody::Aux(x) => x.sample_id.as_ref(),
            RecordBody::ItraceStart(x) => x.sample_id.as_ref(),
            RecordBody::LostSamples(x) => x.sample_id.as_ref(),
            RecordBody::Switch(x) => x.sample_id.as_ref(),
            RecordBody::SwitchCpuWide(x) => x.sample_id.as_ref(),
            RecordBody::Namespaces(x) => x.sample_id.as_ref(),
            RecordBody::Ksymbol(x) => x.sample_id.as_ref(),
            RecordBody::BpfEvent(x) => x.sample_id.as_ref(),
            RecordBody::Cgroup(x) => x.sample_id.as_ref(),
            RecordBody::TextPoke(x) => x.sample_id.as_ref(),
            RecordBody::AuxOutputHwId(x) => x.sample_id.as_ref(),
            RecordBody::CallchainDeferred(x) => x.sample_id.as_ref(),
            _ => None,
        }
    }

    /// Where the record is, for messages.
    pub fn place(&self) -> String {
        let stream = if self.stream.is_empty() {
            String::new()
        } else {
            format!("{}:", self.stream)
        };
        let z = if self.compressed { " (compressed)" } else { "" };
        format!("{stream}{:#x}{z}", self.offset)
    }
}

/// A feature as decoded: its id and body (file: a section; pipe: a HEADER_FEATURE record).
#[derive(Debug)]
pub struct OurFeature {
    pub id: FeatureId,
    pub body: Result<FeatureBody<'static>, String>,
}

/// The whole input, decoded.
#[derive(Debug)]
pub struct Decoded {
    pub layout: Layout,
    pub endian: Endianness,
    pub legacy_v1: bool,
    /// A `--threads` directory.
    pub directory: bool,
    /// File mode: data section offset and size.
    pub data_offset: u64,
    pub data_size: u64,
    /// File mode: the feature bitmap (ids set).
    pub feature_bits: Vec<u32>,
    pub attrs: Vec<EventAttr<'static>>,
    pub features: Vec<OurFeature>,
    pub records: Vec<OurRecord>,
    /// Errors of the walk (framing, decompression); decode errors of single records are in
    /// their `body`.
    pub errors: Vec<String>,
}

/// Reads and decodes `path` (a file, or a `--threads` directory).
pub fn load(path: &Path) -> Result<Decoded> {
    let (main, streams) = read_input(path)?;
    decode(&main, &streams)
}

/// The `data.N` streams of a `--threads` directory: (file name, bytes), in N order.
pub type Streams = Vec<(String, Vec<u8>)>;

/// The bytes of `path`: a file, or a `--threads` directory's `data` and its `data.N`
/// streams.
pub fn read_input(path: &Path) -> Result<(Vec<u8>, Streams)> {
    if path.is_dir() {
        let main =
            std::fs::read(path.join("data")).with_context(|| format!("{}/data", path.display()))?;
        let mut streams = vec![];
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(n) = name.strip_prefix("data.") {
                if let Ok(n) = n.parse::<u32>() {
                    streams.push((n, name, std::fs::read(entry.path())?));
                }
            }
        }
        streams.sort_by_key(|s| s.0);
        let streams: Vec<(String, Vec<u8>)> = streams.into_iter().map(|(_, n, b)| (n, b)).collect();
        Ok((main, streams))
    } else {
        let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
        Ok((bytes, vec![]))
    }
}

/// Decodes an input held in memory; `streams` are the `data.N` files of a directory.
pub fn decode(main: &[u8], streams: &[(String, Vec<u8>)]) -> Result<Decoded> {
    let data = PerfData::open(main).map_err(|e| anyhow::anyhow!("open: {e}"))?;
    let data = &data;
    let e = data.format.endian;
    let pipe = data.format.layout == Layout::Pipe;
    let directory = !streams.is_empty();
    let mut out = Decoded {
        layout: data.format.layout,
        endian: data.format.endian,
        legacy_v1: data.format.legacy_v1,
        directory,
        data_offset: 0,
        data_size: 0,
        feature_bits: vec![],
        attrs: data
            .session
            .attrs
            .iter()
            .map(|a| a.clone().into_owned())
            .collect(),
        features: vec![],
        records: vec![],
        errors: vec![],
    };
    if let Some(h) = &data.header {
        out.data_offset = h.data.offset;
        out.data_size = h.data.size;
        out.feature_bits = data.features.iter().map(|f| f.id.0).collect();
    }
    for f in &data.features {
        out.features.push(OurFeature {
            id: f.id,
            body: data
                .feature(f)
                .map(FeatureBody::into_owned)
                .map_err(|e| e.to_string()),
        });
    }
    let mut attrs_before = 0usize;
    let mut visit = |stream: &str, base: u64, origin: Origin, rec: RawRecord<'_>, ctx: &Ctx| {
        let ty = rec.record_type();
        let (offset, compressed) = match origin {
            Origin::Input => (rec.offset - base, false),
            // Records not in the stream itself (perf writes no SPLIT records).
            Origin::Compressed { record_offset } | Origin::Joined { record_offset } => {
                (record_offset - base, true)
            }
        };
        let body = data
            .decode(&rec, ctx)
            .map(RecordBody::into_owned)
            .map_err(|e| e.to_string());
        // A HEADER_FEATURE without payload is perf's end-of-features mark
        // (feat_id = its HEADER_LAST_FEATURE), not a feature.
        if let Ok(RecordBody::HeaderFeature(f)) = &body {
            if let Some(fb) = &f.data {
                out.features.push(OurFeature {
                    id: FeatureId(u32::try_from(f.feat_id).unwrap_or(u32::MAX)),
                    body: Ok((**fb).clone()),
                });
            }
        }
        let mut bytes = raw_header(&rec.header, e);
        bytes.extend_from_slice(rec.body);
        out.records.push(OurRecord {
            stream: stream.to_string(),
            offset,
            compressed,
            type_: ty,
            misc: rec.header.misc.0,
            size: rec.header.size,
            bytes,
            attr: data.session.attr_index(ty, rec.body, e),
            attrs_before,
            body,
            payload: rec.payload.to_vec(),
        });
        if ty == RecordType::HEADER_ATTR {
            attrs_before += 1;
        }
    };
    // perf prints pipe offsets from the end of the 16-byte pipe header.
    let base = if pipe { 16 } else { 0 };
    let main = if directory { "data" } else { "" };
    let walk = data.for_each_record(&mut |origin, rec, ctx| {
        visit(main, base, origin, rec, ctx);
        Ok(true)
    });
    let mut errors = vec![];
    if let Err(e) = walk {
        errors.push(e.to_string());
    }
    // `data.N` streams of a directory, decoded with the attrs of `data`.
    for (name, bytes) in streams {
        let walk = data.records_in(bytes, 0).for_each(|origin, rec, ctx| {
            visit(name, 0, origin, rec, ctx);
            Ok(true)
        });
        if let Err(e) = walk {
            errors.push(format!("{name}: {e}"));
        }
    }
    out.errors = errors;
    Ok(out)
}

/// The header bytes as they are on file (re-encoded from the decoded header).
fn raw_header(h: &EventHeader, e: Endianness) -> Vec<u8> {
    let mut w = perfdata::rt::Writer::in_order(e);
    // An EventHeader always encodes (no computed fields).
    let _ = h.encode(&mut w, &Ctx::default());
    w.into_vec()
}

impl Decoded {
    /// The decoded body of the first feature `id`, if present and decodable.
    pub fn feature(&self, id: FeatureId) -> Option<&FeatureBody<'static>> {
        self.features
            .iter()
            .find(|f| f.id == id)
            .and_then(|f| f.body.as_ref().ok())
    }

    /// OR of every attr's sample_type (perf: `evlist__combined_sample_type`).
    pub fn combined_sample_type(&self, n: usize) -> SampleType {
        SampleType(
            self.attrs
                .iter()
                .take(n)
                .fold(0, |acc, a| acc | a.attr.sample_type.0),
        )
    }

    /// The attr of a record.
    pub fn attr_of(&self, r: &OurRecord) -> Option<&Attr<'static>> {
        r.attr.and_then(|i| self.attrs.get(i)).map(|a| &a.attr)
    }

    /// Event names by attr index: EVENT_DESC (matched by id), then EVENT_UPDATE NAME
    /// records (pipe mode), as perf names its evsels.
    pub fn event_names(&self) -> Vec<Option<String>> {
        let mut names: Vec<Option<String>> = vec![None; self.attrs.len()];
        let index_of = |id: u64| self.attrs.iter().position(|a| a.ids.contains(&id));
        if let Some(FeatureBody::EventDesc(d)) = self.feature(FeatureId::EVENT_DESC) {
            for (at, name) in perfdata::events::described_events(d, index_of) {
                if let Some(slot) = names.get_mut(at) {
                    *slot = Some(name);
                }
            }
        }
        for r in &self.records {
            if let Ok(RecordBody::EventUpdate(u)) = &r.body {
                if let perfdata::types::EventUpdateData::Name(n) = &u.data {
                    if let Some(at) = index_of(u.id) {
                        names[at] = Some(n.to_str_lossy().into_owned());
                    }
                }
            }
        }
        names
    }

    /// The tracing data (feature in file mode, HEADER_TRACING_DATA payload in pipe mode).
    pub fn tracing_data(&self) -> Option<TracingData<'static>> {
        if let Some(FeatureBody::TracingData(t)) = self.feature(FeatureId::TRACING_DATA) {
            return Some(t.clone());
        }
        let rec = self
            .records
            .iter()
            .find(|r| r.type_ == RecordType::HEADER_TRACING_DATA)?;
        let ctx = Ctx::default();
        let decoded =
            TracingData::decode(&mut Reader::in_order(&rec.payload, 0, self.endian), &ctx);
        decoded.ok().map(TracingData::into_owned)
    }

    /// Is attr `i` perf's "dummy" event (software, config 9)?
    pub fn is_dummy(&self, i: usize) -> bool {
        self.attrs
            .get(i)
            .is_some_and(|a| a.attr.type_ == AttrType::SOFTWARE && a.attr.config == 9)
    }
}
