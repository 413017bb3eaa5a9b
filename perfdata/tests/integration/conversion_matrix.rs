//! The conversion matrix (issue 13): for every fixture and corpus file, every combination
//! of byte order × layout × compression {none, COMPRESSED2, COMPRESSED (v1), decompress}
//! × {copy, typed}, and every two-step round trip through the other layout, the other byte
//! order or both (copy and typed) and back: the output reads back with the input's
//! content. A conversion refused by design must be refused, with its message.
//!
//! "Content" ([`Content`]) is what a reader of the file learns, whatever the framing:
//! * the attrs (`perf_event_attr` and ids; from the attrs section or HEADER_ATTR records);
//! * every feature's typed value (from the feature sections, or from a pipe's
//!   HEADER_FEATURE records, HEADER_TRACING_DATA, and the HEADER_BUILD_ID records before
//!   the first kernel record); a pipe record's zero padding to 8 (less than 8 zero bytes
//!   left after the feature's last field) is framing. HEADER_COMPRESSED is left out: it
//!   describes the compression a conversion adds or removes;
//! * the event_types (the section, or a pipe's HEADER_EVENT_TYPE records);
//! * every other record, decoded (with its payload), in file order, compressed ones
//!   expanded.
//!
//! Container-only records, which a layout or compression change legitimately adds or
//! removes, are therefore not compared as records: COMPRESSED, COMPRESSED2, HEADER_ATTR,
//! HEADER_FEATURE (the end-of-features marker, id 32 or 33, carries nothing),
//! HEADER_TRACING_DATA, HEADER_EVENT_TYPE, and HEADER_BUILD_ID before the first kernel
//! record. FINISHED_INIT and FINISHED_ROUND are records like any other.

use crate::common;
use common::{corpus_dir, fixture_and_corpus_files};

use perfdata::rt::{BigEndian, Endianness, LittleEndian, Reader, Writer};
use perfdata::types::{BuildId, BuildIdEntry, Ctx, FeatureBody, FeatureId, RecordBody, RecordType};
use perfdata::write::stages::CompressedKind;
use perfdata::write::{convert_file, ConvertOptions};
use perfdata::{Layout, PerfData};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The end-of-features marker ids perf writes (perf 6.x: 32, perf ≥ 7.0: 33).
const END_MARKERS: [u64; 2] = [32, 33];

#[derive(Debug, PartialEq)]
struct Content {
    attrs: Vec<Value>,
    features: BTreeMap<u32, Value>,
    event_types: Vec<(u64, Vec<u8>)>,
    records: Vec<(u32, u16, RecordBody<'static>)>,
}

fn decode_feature<'b>(
    endian: Endianness,
    id: FeatureId,
    bytes: &'b [u8],
    fctx: &Ctx,
) -> FeatureBody<'b> {
    match endian {
        Endianness::Little => {
            FeatureBody::decode(id, &mut Reader::<LittleEndian>::new(bytes, 0), fctx)
        }
        Endianness::Big => FeatureBody::decode(id, &mut Reader::<BigEndian>::new(bytes, 0), fctx),
    }
    .unwrap_or_else(|e| panic!("feature {id}: {e}"))
}

/// A feature's value as JSON; `pipe`: without a pipe record's zero padding (the tail of
/// fewer than 8 zero bytes a pipe record keeps is cut, and the value read again).
fn feature_json(body: &FeatureBody<'_>, pipe: bool, fctx: &Ctx) -> Value {
    let padding = body
        .tail()
        .filter(|t| pipe && !t.is_empty() && t.len() < 8 && t.iter().all(|&b| b == 0));
    match (padding, body.feature_id()) {
        (Some(pad), Some(id)) => {
            let mut w = Writer::<LittleEndian>::new();
            body.encode(&mut w, fctx).unwrap();
            let mut bytes = w.into_vec();
            bytes.truncate(bytes.len() - pad.len());
            let unpadded = decode_feature(Endianness::Little, id, &bytes, fctx);
            serde_json::to_value(&unpadded).unwrap()
        }
        _ => serde_json::to_value(body).unwrap(),
    }
}

/// What a reader learns from the file at `path` (see the module comment).
fn content(path: &Path) -> Result<Content, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let data = PerfData::open(&bytes).map_err(|e| e.to_string())?;
    let endian = data.format.endian;
    let fctx = data.session.feature_ctx();
    let attrs = data
        .session
        .attrs
        .iter()
        .map(|a| serde_json::json!({"attr": &a.attr, "ids": &a.ids}))
        .collect();
    let mut features = BTreeMap::new();
    for f in &data.features {
        let value = data.feature(f).map_err(|e| e.to_string())?;
        features.insert(f.id.0, feature_json(&value, false, &fctx));
    }
    let mut event_types = vec![];
    if let Some(h) = data.header.as_ref().filter(|h| h.event_types.size > 0) {
        let section = &bytes[h.event_types.offset as usize..][..h.event_types.size as usize];
        for entry in section.chunks(72) {
            let id = &entry[..8];
            let id = match endian {
                Endianness::Little => u64::from_le_bytes(id.try_into().unwrap()),
                Endianness::Big => u64::from_be_bytes(id.try_into().unwrap()),
            };
            let name = &entry[8..];
            let text = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            event_types.push((id, text.to_vec()));
        }
    }
    let mut records = vec![];
    let mut build_ids: Vec<BuildIdEntry<'static>> = vec![];
    let mut prologue = true;
    data.for_each_record(&mut |_, rec, ctx| {
        let ty = rec.record_type();
        if ty.0 < 64 {
            prologue = false;
        }
        let mut body = data.decode(&rec, ctx)?.into_owned();
        body.set_payload(rec.payload.to_vec().into());
        match (ty, body) {
            (RecordType::COMPRESSED | RecordType::COMPRESSED2 | RecordType::HEADER_ATTR, _) => {}
            (_, RecordBody::HeaderFeature(h)) => {
                let id = FeatureId(h.feat_id as u32);
                match h.data {
                    Some(value) => {
                        features.insert(id.0, feature_json(&value, true, &fctx));
                    }
                    None if END_MARKERS.contains(&h.feat_id) => {}
                    None => {
                        let empty = decode_feature(endian, id, &[], &fctx);
                        features.insert(id.0, feature_json(&empty, true, &fctx));
                    }
                }
            }
            (_, RecordBody::HeaderTracingData(t)) => {
                let value = decode_feature(
                    endian,
                    FeatureId::TRACING_DATA,
                    t.data.bytes().unwrap_or(&[]),
                    &fctx,
                );
                features.insert(FeatureId::TRACING_DATA.0, feature_json(&value, true, &fctx));
            }
            (_, RecordBody::HeaderEventType(e)) => {
                event_types.push((e.event_id, e.name.text().to_vec()));
            }
            (_, RecordBody::HeaderBuildId(b)) if prologue => {
                build_ids.push(perfdata::write::stages::build_id_entry(b, rec.header.misc))
            }
            (_, body) => records.push((ty.0, rec.header.misc.0, body)),
        }
        Ok(true)
    })
    .map_err(|e| e.to_string())?;
    if !build_ids.is_empty() {
        let list = FeatureBody::BuildId(BuildId {
            entries: build_ids,
            tail: None,
        });
        features.insert(FeatureId::BUILD_ID.0, feature_json(&list, true, &fctx));
    }
    features.remove(&FeatureId::COMPRESSED.0);
    Ok(Content {
        attrs,
        features,
        event_types,
        records,
    })
}

/// The first difference between two contents, for the failure message.
fn difference(a: &Content, b: &Content) -> String {
    if a.attrs != b.attrs {
        return format!("attrs differ: {:?} vs {:?}", a.attrs, b.attrs);
    }
    if a.event_types != b.event_types {
        return format!(
            "event_types differ: {:?} vs {:?}",
            a.event_types, b.event_types
        );
    }
    let ids: std::collections::BTreeSet<_> = a.features.keys().chain(b.features.keys()).collect();
    for id in ids {
        let (x, y) = (a.features.get(id), b.features.get(id));
        if x != y {
            let show = |v: Option<&Value>| {
                v.map_or("(absent)".to_string(), |v| {
                    let s = v.to_string();
                    s.chars().take(300).collect()
                })
            };
            return format!(
                "feature {}: input {} vs output {}",
                FeatureId(*id),
                show(x),
                show(y)
            );
        }
    }
    if a.records.len() != b.records.len() {
        return format!("{} records vs {}", a.records.len(), b.records.len());
    }
    for (i, (x, y)) in a.records.iter().zip(&b.records).enumerate() {
        if x != y {
            return format!("record #{i} (type {}): {x:?}\nvs\n{y:?}", x.0);
        }
    }
    "equal".into()
}

/// What is known about an input before converting it.
#[derive(Clone, Copy)]
struct Facts {
    endian: Endianness,
    layout: Layout,
    legacy_v1: bool,
}

fn facts(path: &Path) -> Facts {
    let bytes = std::fs::read(path).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    Facts {
        endian: data.format.endian,
        layout: data.format.layout,
        legacy_v1: data.format.legacy_v1,
    }
}

/// Inputs the matrix leaves to a test of their own, and why.
const OWN_TEST: &[(&str, &str)] = &[(
    "sleep.compressed2.pipe.data",
    "text follows the last record (perf record's stderr appended): \
     a_tail_that_frames_no_record_is_copied_or_left_out_and_said",
)];

/// Why the conversion of an input with `facts` by `opts` is refused by design, and the
/// words the refusal must contain.
fn refusal(facts: &Facts, opts: &ConvertOptions) -> Option<&'static str> {
    let endian = opts.endian.unwrap_or(facts.endian);
    let layout = opts.layout.unwrap_or(facts.layout);
    (facts.legacy_v1 && layout == Layout::File && endian != facts.endian)
        .then_some("a legacy PERFFILE (v1) file keeps its byte order")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Compression {
    None,
    Compress(CompressedKind),
    Decompress,
}

fn options(endian: Endianness, layout: Layout, c: Compression, typed: bool) -> ConvertOptions {
    ConvertOptions {
        endian: Some(endian),
        layout: Some(layout),
        decompress: c == Compression::Decompress,
        compress: match c {
            Compression::Compress(k) => Some((k, 3)),
            _ => None,
        },
        typed,
    }
}

fn describe(o: &ConvertOptions) -> String {
    let mut s = format!(
        "--endian {:?} --layout {:?}",
        o.endian.unwrap(),
        o.layout.unwrap()
    )
    .to_lowercase();
    match o.compress {
        Some((CompressedKind::Compressed2, _)) => s.push_str(" --compress"),
        Some((CompressedKind::Compressed, _)) => s.push_str(" --compress --compressed-v1"),
        None => {}
    }
    if o.decompress {
        s.push_str(" --decompress");
    }
    if o.typed {
        s.push_str(" --typed");
    }
    s
}

/// Runs `steps` from `input` and compares the last output's content with `want`.
/// Returns a failure message, or `None`.
fn run(
    input: &Path,
    facts: &Facts,
    want: &Content,
    steps: &[ConvertOptions],
    dir: &Path,
    counts: &mut Counts,
) -> Option<String> {
    let what = steps
        .iter()
        .map(describe)
        .collect::<Vec<_>>()
        .join(" then ");
    let mut from = input.to_path_buf();
    let mut facts_now = *facts;
    for (i, opts) in steps.iter().enumerate() {
        let out = dir.join(format!("step{i}.data"));
        let _ = std::fs::remove_file(&out);
        let result = convert_file(&from, &out, opts);
        match (refusal(&facts_now, opts), result) {
            (Some(why), Err(e)) => {
                if !e.to_string().contains(why) {
                    return Some(format!("{what}: refused with {e}, expected: {why}"));
                }
                if out.exists() {
                    return Some(format!("{what}: refused but left an output"));
                }
                counts.refused += 1;
                return None;
            }
            (Some(why), Ok(())) => {
                return Some(format!(
                    "{what}: converted, but expected the refusal: {why}"
                ))
            }
            (None, Err(e)) => return Some(format!("{what}: step {i}: {e}")),
            (None, Ok(())) => {}
        }
        facts_now = self::facts(&out);
        from = out;
    }
    let got = match content(&from) {
        Ok(c) => c,
        Err(e) => return Some(format!("{what}: the output does not read back: {e}")),
    };
    counts.compared += 1;
    (got != *want).then(|| format!("{what}: {}", difference(want, &got)))
}

#[derive(Default)]
struct Counts {
    compared: usize,
    refused: usize,
}

fn other(e: Endianness) -> Endianness {
    match e {
        Endianness::Little => Endianness::Big,
        Endianness::Big => Endianness::Little,
    }
}

fn other_layout(l: Layout) -> Layout {
    match l {
        Layout::File => Layout::Pipe,
        Layout::Pipe => Layout::File,
    }
}

/// Every conversion and round trip of one input; failure messages.
fn matrix(input: &Path, counts: &mut Counts) -> Vec<String> {
    let name = input.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file_name = input.file_name().unwrap().to_string_lossy().into_owned();
    if let Some((_, why)) = OWN_TEST.iter().find(|n| n.0 == file_name) {
        eprintln!("not in the matrix: {file_name}: {why}");
        return vec![];
    }
    let want = match content(input) {
        Ok(c) if !c.records.is_empty() && !c.attrs.is_empty() => c,
        Ok(_) => {
            return vec![format!(
                "{name}: no records or no attrs read from the input"
            )]
        }
        Err(e) => return vec![format!("{name}: the input does not read: {e}")],
    };
    let facts = facts(input);
    let mut fails = vec![];
    let comps = [
        Compression::None,
        Compression::Compress(CompressedKind::Compressed2),
        Compression::Compress(CompressedKind::Compressed),
        Compression::Decompress,
    ];
    for endian in [Endianness::Little, Endianness::Big] {
        for layout in [Layout::File, Layout::Pipe] {
            for c in comps {
                for typed in [false, true] {
                    let o = options(endian, layout, c, typed);
                    fails.extend(run(input, &facts, &want, &[o], dir.path(), counts));
                }
            }
        }
    }
    // Two steps: through the other layout, the other byte order, or both, and back.
    let (e, l) = (facts.endian, facts.layout);
    for (via_e, via_l) in [
        (e, other_layout(l)),
        (other(e), l),
        (other(e), other_layout(l)),
    ] {
        for typed in [false, true] {
            let there = options(via_e, via_l, Compression::None, typed);
            let back = options(e, l, Compression::None, typed);
            fails.extend(run(
                input,
                &facts,
                &want,
                &[there, back],
                dir.path(),
                counts,
            ));
        }
    }
    fails.into_iter().map(|f| format!("{name}: {f}")).collect()
}

/// `sleep.compressed2.pipe.data` ends in 143 bytes of text (perf record's stderr, appended
/// to the stream) that frame no record. A copy keeps them byte for byte; every other
/// conversion leaves them out and says where and how many; the records before them all
/// come through.
#[test]
fn a_tail_that_frames_no_record_is_copied_or_left_out_and_said() {
    use perfdata::write::convert_file_reporting;
    let Some(corpus) = corpus_dir() else { return };
    let input = corpus.join("sleep.compressed2.pipe.data");
    let bytes = std::fs::read(&input).unwrap();
    let tail = perfdata::write::unframed_tail(&PerfData::open(&bytes).unwrap())
        .expect("the corpus file ends in text");
    assert_eq!((tail, bytes.len() as u64 - tail), (0x7c40, 143));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.data");
    let did = convert_file_reporting(&input, &out, &ConvertOptions::default()).unwrap();
    assert_eq!(did.dropped_tail, None);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        bytes,
        "a copy is byte for byte"
    );
    // What every other conversion must hold: the stream up to the text.
    let records_only = dir.path().join("records-only.data");
    std::fs::write(&records_only, &bytes[..tail as usize]).unwrap();
    let want = content(&records_only).unwrap();
    for opts in [
        options(Endianness::Little, Layout::File, Compression::None, false),
        options(Endianness::Big, Layout::Pipe, Compression::None, false),
        options(
            Endianness::Little,
            Layout::Pipe,
            Compression::Decompress,
            false,
        ),
        options(Endianness::Little, Layout::Pipe, Compression::None, true),
        options(
            Endianness::Big,
            Layout::File,
            Compression::Compress(CompressedKind::Compressed2),
            true,
        ),
    ] {
        let out = dir.path().join("out.data");
        let did = convert_file_reporting(&input, &out, &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", describe(&opts)));
        assert_eq!(did.dropped_tail, Some((0x7c40, 143)), "{}", describe(&opts));
        let got = content(&out).unwrap();
        assert!(
            got == want,
            "{}: {}",
            describe(&opts),
            difference(&want, &got)
        );
    }
}

#[test]
fn what_is_not_a_perf_data_file_is_not_converted() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.data");
    let err = convert_file(
        &corpus.join("perf.data.broken.gz"),
        &out,
        &ConvertOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a perf.data file"), "{err}");
    assert!(!out.exists());
}

#[test]
fn every_conversion_and_round_trip_keeps_the_content() {
    let start = std::time::Instant::now();
    let inputs = fixture_and_corpus_files();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((vec![], Counts::default()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(input) = inputs.get(i) else { break };
                let mut counts = Counts::default();
                let fails = matrix(input, &mut counts);
                let mut r = results.lock().unwrap();
                r.0.extend(fails);
                r.1.compared += counts.compared;
                r.1.refused += counts.refused;
            });
        }
    });
    let (fails, counts) = results.into_inner().unwrap();
    eprintln!(
        "{} inputs: {} conversions compared, {} refused by design, {} failures, {:.1} s",
        inputs.len(),
        counts.compared,
        counts.refused,
        fails.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n\n")
    );
    // Every fixture goes through all 38 conversions; with the corpus, at least one more
    // file (most corpus files are converted too, a few are refused by design).
    let floor = 38 * (common::fixture_files().len() + usize::from(corpus_dir().is_some()));
    assert!(
        counts.compared >= floor,
        "only {} compared, expected at least {floor}",
        counts.compared
    );
}
