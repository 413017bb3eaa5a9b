//! Every structure decoded from real perf.data files encodes back to the same bytes, in
//! the producer's byte order and through big-endian and back.
//!
//! Inputs: the fixtures recorded here with the system perf (`conformance/fixtures/`,
//! committed) and the external corpus in `../shared/corpus/` (skipped, with a message,
//! when absent).

use crate::common;
use common::{hex, tails};

use perfdata::rt::{BigEndian, Endianness, LittleEndian, Reader, StaticEndian, Writer};
use perfdata::types::{AttrEntry, Ctx, FeatureBody, FeatureId, FileHeader, RecordBody, RecordType};
use perfdata::{Origin, PerfData};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Decodes `bytes` as `E`, re-encodes as `E` (must be identical), then encodes as the other
/// byte order, decodes that (must be equal) and encodes back as `E` (identical again).
macro_rules! roundtrip {
    ($E:ty, $bytes:expr, $what:expr, |$r:ident| $decode:expr, |$v:ident, $w:ident| $encode:expr) => {{
        let bytes: &[u8] = $bytes;
        let what = $what;
        let value = {
            let mut $r = Reader::<$E>::new(bytes, 0);
            $decode.unwrap_or_else(|e| panic!("{what}: decode: {e}"))
        };
        let same = {
            let $v = &value;
            let mut $w = Writer::<$E>::new();
            $encode.unwrap_or_else(|e| panic!("{what}: encode: {e}"));
            $w.into_vec()
        };
        assert_eq!(
            hex(&same),
            hex(bytes),
            "{what}: re-encoding changed the bytes"
        );
        // Through the other byte order.
        let other = {
            let $v = &value;
            let mut $w = Writer::<Other<$E>>::new();
            $encode.unwrap_or_else(|e| panic!("{what}: encode swapped: {e}"));
            $w.into_vec()
        };
        let back = {
            let mut $r = Reader::<Other<$E>>::new(&other, 0);
            $decode.unwrap_or_else(|e| panic!("{what}: decode swapped: {e}"))
        };
        assert_eq!(
            back, value,
            "{what}: value changed through the other byte order"
        );
        let again = {
            let $v = &back;
            let mut $w = Writer::<$E>::new();
            $encode.unwrap_or_else(|e| panic!("{what}: encode back: {e}"));
            $w.into_vec()
        };
        assert_eq!(
            hex(&again),
            hex(bytes),
            "{what}: bytes changed through the other byte order"
        );
        value
    }};
}

/// The opposite byte order of `E`.
type Other<E> = <E as Swap>::Other;
trait Swap {
    type Other: StaticEndian;
}
impl Swap for LittleEndian {
    type Other = BigEndian;
}
impl Swap for BigEndian {
    type Other = LittleEndian;
}

#[derive(Default)]
struct Coverage {
    records: BTreeMap<String, usize>,
    features: BTreeMap<String, usize>,
    /// Non-canonical tails found, by place.
    tails: Vec<String>,
}

/// Checks one file; returns the error that ended its record stream early, if any (every
/// record before it has been checked).
fn check_file(path: &Path, cov: &mut Coverage) -> Option<perfdata::rt::Error> {
    let bytes = std::fs::read(path).unwrap();
    let data = PerfData::open(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match data.format.endian {
        Endianness::Little => check_as::<LittleEndian>(path, &data, cov),
        Endianness::Big => check_as::<BigEndian>(path, &data, cov),
    }
}

fn check_as<E: StaticEndian + Swap>(
    path: &Path,
    data: &PerfData<'_>,
    cov: &mut Coverage,
) -> Option<perfdata::rt::Error> {
    let name = path.display().to_string();
    let ctx = Ctx::default();
    if let Some(h) = &data.header {
        let size = h.size as usize;
        roundtrip!(
            E,
            &data.bytes[..size],
            format!("{name}: file header"),
            |r| FileHeader::decode(&mut r, &ctx),
            |v, w| v.encode(&mut w, &ctx)
        );
        let attr_size = h.attr_size;
        let start = h.attrs.offset as usize;
        for (i, chunk) in data.bytes[start..start + h.attrs.size as usize]
            .chunks(attr_size as usize)
            .enumerate()
        {
            roundtrip!(
                E,
                chunk,
                format!("{name}: attr entry {i}"),
                |r| AttrEntry::decode(&mut r, &ctx, attr_size),
                |v, w| v.encode(&mut w, &ctx, attr_size)
            );
        }
        let fctx = data.session.feature_ctx();
        for f in &data.features {
            let section = data.feature_bytes(f).unwrap();
            let id = f.id;
            let value = roundtrip!(
                E,
                section,
                format!("{name}: feature {id:?}"),
                |r| FeatureBody::decode(id, &mut r, &fctx),
                |v, w| v.encode(&mut w, &fctx)
            );
            assert!(
                !matches!(value, FeatureBody::Unknown(_)) || id.name().is_none(),
                "{name}: known feature {id:?} decoded as Unknown"
            );
            cov.tails.extend(
                tails(&value)
                    .into_iter()
                    .map(|t| format!("{name}: feature {id:?}{t}")),
            );
            *cov.features.entry(format!("{id:?}")).or_default() += 1;
        }
    }
    let mut n = 0usize;
    let walked = data.for_each_record(&mut |origin, rec, ctx| {
        let ty = rec.record_type();
        let what = match origin {
            Origin::Input => format!("{name}: record at {:#x} ({ty:?})", rec.offset),
            Origin::Compressed { record_offset } => format!(
                "{name}: record at +{:#x} in the stream decompressed at {record_offset:#x} ({ty:?})",
                rec.offset
            ),
            Origin::Joined { record_offset } => format!(
                "{name}: record joined from the SPLIT records at {record_offset:#x} ({ty:?})"
            ),
        };
        let mut value = roundtrip!(E, rec.body, what.clone(),
            |r| RecordBody::decode(ty, &mut r, ctx),
            |v, w| v.encode(&mut w, ctx));
        assert!(
            !matches!(value, RecordBody::Unknown(_)) || ty.name().is_none(),
            "{what}: known record type decoded as Unknown"
        );
        assert_eq!(value.payload_len(), rec.payload.len() as u64, "{what}: payload length");
        value.set_payload(rec.payload.into());
        cov.tails.extend(tails(&value).into_iter().map(|t| format!("{what}{t}")));
        *cov.records.entry(format!("{ty:?}")).or_default() += 1;
        n += 1;
        Ok(true)
    });
    assert!(n > 0, "{name}: no records");
    walked.err()
}

fn inputs_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.extension().is_some_and(|e| e == "md" || e == "gz"))
        .collect();
    files.sort();
    files
}

#[test]
fn fixtures_recorded_here_round_trip() {
    let dir = common::fixtures_dir();
    let mut cov = Coverage::default();
    let files = inputs_in(&dir);
    assert!(
        files.len() >= 20,
        "expected the committed fixtures in {}",
        dir.display()
    );
    for f in &files {
        if let Some(e) = check_file(f, &mut cov) {
            panic!("{}: {e}", f.display());
        }
    }
    assert!(
        cov.tails.is_empty(),
        "unknown bytes in perf-written fixtures:\n{}",
        cov.tails.join("\n")
    );
    eprintln!("records round-tripped by type: {:?}", cov.records);
    eprintln!("features round-tripped: {:?}", cov.features);
    // What perf 6.1 writes for the scenarios: each must have been seen and round-tripped.
    for t in [
        RecordType::MMAP2,
        RecordType::COMM,
        RecordType::EXIT,
        RecordType::FORK,
        RecordType::MMAP,
        RecordType::SAMPLE,
        RecordType::FINISHED_ROUND,
        RecordType::HEADER_ATTR,
        RecordType::HEADER_FEATURE,
        RecordType::HEADER_TRACING_DATA,
        RecordType::SWITCH,
        RecordType::SWITCH_CPU_WIDE,
        RecordType::NAMESPACES,
        RecordType::CGROUP,
        RecordType::COMPRESSED,
        RecordType::ID_INDEX,
        RecordType::THREAD_MAP,
        RecordType::CPU_MAP,
        RecordType::STAT_CONFIG,
        RecordType::STAT,
        RecordType::STAT_ROUND,
        RecordType::FINISHED_INIT,
        RecordType::HEADER_BUILD_ID,
        RecordType::EVENT_UPDATE,
    ] {
        assert!(
            cov.records.contains_key(&format!("{t:?}")),
            "no {t:?} record in the fixtures"
        );
    }
    for f in [
        FeatureId::BUILD_ID,
        FeatureId::HOSTNAME,
        FeatureId::NRCPUS,
        FeatureId::CMDLINE,
        FeatureId::EVENT_DESC,
        FeatureId::CPU_TOPOLOGY,
        FeatureId::NUMA_TOPOLOGY,
        FeatureId::PMU_MAPPINGS,
        FeatureId::GROUP_DESC,
        FeatureId::CACHE,
        FeatureId::SAMPLE_TIME,
        FeatureId::MEM_TOPOLOGY,
        FeatureId::TRACING_DATA,
        FeatureId::STAT,
        FeatureId::COMPRESSED,
        FeatureId::CLOCKID,
        FeatureId::CLOCK_DATA,
        FeatureId::PMU_CAPS,
        FeatureId::BPF_PROG_INFO,
        FeatureId::BPF_BTF,
    ] {
        assert!(
            cov.features.contains_key(&format!("{f:?}")),
            "no {f:?} feature in the fixtures"
        );
    }
}

#[test]
fn threads_directory_streams_round_trip() {
    let dir = common::fixture_path("threads.data");
    let header = std::fs::read(dir.join("data")).unwrap();
    let data = PerfData::open(&header).unwrap();
    let mut cov = Coverage::default();
    assert!(check_file(&dir.join("data"), &mut cov).is_none());
    assert!(
        cov.features.contains_key("DIR_FORMAT"),
        "no DIR_FORMAT feature in {}",
        dir.display()
    );
    let mut streams = 0;
    for f in inputs_in(&dir)
        .iter()
        .filter(|p| p.file_name().unwrap() != "data")
    {
        let bytes = std::fs::read(f).unwrap();
        streams += 1;
        for rec in perfdata::RecordFramer::<LittleEndian>::new(&bytes, 0) {
            let rec = rec.unwrap();
            let ty = rec.record_type();
            let ctx = data
                .session
                .record_ctx(ty, rec.header.misc, rec.body, LittleEndian);
            roundtrip!(
                LittleEndian,
                rec.body,
                format!("{}: {ty:?} at {:#x}", f.display(), rec.offset),
                |r| RecordBody::decode(ty, &mut r, &ctx),
                |v, w| v.encode(&mut w, &ctx)
            );
        }
    }
    assert!(streams >= 1, "no data.N streams in {}", dir.display());
}

#[test]
fn external_corpus_round_trips() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    // Files whose record stream does not end cleanly, and where it must stop.
    let known_bad_ends: &[(&str, &str, &str)] = &[(
        "sleep.compressed2.pipe.data",
        "perf record's stderr text was appended after the last record (see MANIFEST.md)",
        "at byte 0x7c40",
    )];
    let mut cov = Coverage::default();
    let mut seen_bad = 0;
    for f in inputs_in(&dir) {
        let file_name = f.file_name().unwrap().to_string_lossy().into_owned();
        let ended = check_file(&f, &mut cov);
        match (known_bad_ends.iter().find(|k| k.0 == file_name), ended) {
            (None, None) => {}
            (None, Some(e)) => panic!("{}: {e}", f.display()),
            (Some((_, why, _)), None) => {
                panic!("{file_name} should stop early ({why}) but did not")
            }
            (Some((_, why, at)), Some(e)) => {
                assert!(
                    e.to_string().contains(at),
                    "{file_name} ({why}): stopped at the wrong place: {e}"
                );
                eprintln!("expected early end of {file_name} ({why}): {e}");
                seen_bad += 1;
            }
        }
    }
    assert_eq!(
        seen_bad,
        known_bad_ends.len(),
        "a known bad file is missing from the corpus"
    );
    assert!(
        cov.tails.is_empty(),
        "unknown bytes in the corpus:\n{}",
        cov.tails.join("\n")
    );
    eprintln!("corpus records: {:?}", cov.records);
    eprintln!("corpus features: {:?}", cov.features);
}

#[test]
fn gzip_is_rejected_with_a_clear_error() {
    let Some(path) = common::corpus_file("perf.data.broken.gz") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let err = PerfData::open(&bytes)
        .err()
        .expect("gzip must not open")
        .to_string();
    assert!(err.contains("not a perf.data file"), "unclear error: {err}");
}
