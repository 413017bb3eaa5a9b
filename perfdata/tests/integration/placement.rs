//! Copy-through is byte-exact for files laid out differently from today's perf: a data
//! section page-aligned after a gap (its bytes kept), a zero-size event_types section
//! with an offset, ids after the attrs, feature payloads out of id order with gaps, bytes
//! after the last feature. The files are made here by re-laying a fixture byte by byte;
//! every path (model copy and typed, `save`, streaming convert copy and typed, a byte
//! order round trip) must give them back unchanged.

use crate::common;
use common::fixture;

use perfdata::rt::Endianness;
use perfdata::types::FeatureId;
use perfdata::write::{convert_file, Builder, ConvertOptions, WriteOptions};
use perfdata::PerfData;
use std::io::Cursor;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Every place a little-endian file stores an offset: the header's three sections, each
/// attr's ids section, each feature table entry.
fn offset_fields(b: &[u8]) -> Vec<usize> {
    let mut fields = vec![24, 40, 56];
    let (attrs, attrs_size, attr_size) = (u64_at(b, 24), u64_at(b, 32), u64_at(b, 16));
    for i in 0..attrs_size / attr_size {
        fields.push((attrs + (i + 1) * attr_size - 16) as usize);
    }
    let table = (u64_at(b, 40) + u64_at(b, 48)) as usize;
    let data = PerfData::open(b).unwrap();
    for i in 0..data.features.len() {
        fields.push(table + 16 * i);
    }
    fields
}

/// Inserts `gap` at `at`, moving every offset at or after it.
fn insert(b: &[u8], at: usize, gap: &[u8]) -> Vec<u8> {
    let fields = offset_fields(b);
    let mut out = [&b[..at], gap, &b[at..]].concat();
    for f in fields {
        let f = if f >= at { f + gap.len() } else { f };
        let v = u64_at(&out, f);
        if v >= at as u64 && v != 0 {
            put_u64(&mut out, f, v + gap.len() as u64);
        }
    }
    out
}

/// Not zeros: the gap's bytes must be kept, not recreated.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

fn feature_entry(b: &[u8], id: FeatureId) -> usize {
    let data = PerfData::open(b).unwrap();
    let i = data.features.iter().position(|f| f.id == id).unwrap();
    (u64_at(b, 40) + u64_at(b, 48)) as usize + 16 * i
}

/// The layouts, each made from callchain.data.
fn layouts() -> Vec<(&'static str, Vec<u8>)> {
    let good = fixture("callchain.data");
    let data_offset = u64_at(&good, 40) as usize;
    let mut out = vec![];

    // The data section page-aligned at 4096, with bytes in the gap after the attrs.
    let page = insert(&good, data_offset, &pattern(4096 - data_offset));
    assert_eq!(u64_at(&page, 40), 4096);
    out.push(("data at 4096", page.clone()));

    // An empty event_types section with an offset (where the data starts).
    let mut et = good.clone();
    put_u64(&mut et, 56, data_offset as u64);
    out.push(("zero-size event_types with an offset", et));

    // The ids after the attrs (perf writes them before).
    let attrs_at = u64_at(&good, 24) as usize;
    let entry_ids = attrs_at + u64_at(&good, 16) as usize - 16;
    let ids_at = u64_at(&good, entry_ids) as usize;
    assert!(ids_at < attrs_at, "callchain.data: ids before attrs");
    let ids = good[ids_at..attrs_at].to_vec();
    let attrs = good[attrs_at..data_offset].to_vec();
    let mut swapped = good.clone();
    swapped[ids_at..ids_at + attrs.len()].copy_from_slice(&attrs);
    swapped[ids_at + attrs.len()..data_offset].copy_from_slice(&ids);
    put_u64(&mut swapped, 24, ids_at as u64);
    put_u64(
        &mut swapped,
        entry_ids - attrs_at + ids_at,
        (ids_at + attrs.len()) as u64,
    );
    out.push(("ids after attrs", swapped));

    // HOSTNAME and OSRELEASE payloads swapped, 8 bytes apart, and bytes after the end.
    let (h, o) = (
        feature_entry(&good, FeatureId::HOSTNAME),
        feature_entry(&good, FeatureId::OSRELEASE),
    );
    let (ho, hs) = (u64_at(&good, h) as usize, u64_at(&good, h + 8) as usize);
    let (oo, os) = (u64_at(&good, o) as usize, u64_at(&good, o + 8) as usize);
    assert_eq!(ho + hs, oo, "HOSTNAME then OSRELEASE");
    let mut feats = good[..ho].to_vec();
    feats.extend_from_slice(&good[oo..oo + os]);
    feats.extend_from_slice(&[0xaa; 8]);
    feats.extend_from_slice(&good[ho..ho + hs]);
    feats.extend_from_slice(&good[oo + os..]);
    let shift = 8u64;
    put_u64(&mut feats, o, ho as u64);
    put_u64(&mut feats, h, (ho + os + 8) as u64);
    let data = PerfData::open(&good).unwrap();
    for (i, f) in data.features.iter().enumerate() {
        if f.offset > oo as u64 {
            let at = (u64_at(&good, 40) + u64_at(&good, 48)) as usize + 16 * i;
            put_u64(&mut feats, at, f.offset + shift);
        }
    }
    feats.extend_from_slice(b"trailing bytes\n");
    out.push((
        "features out of order, a gap, trailing bytes",
        feats.clone(),
    ));

    // All of it at once.
    let mut all = insert(&feats, data_offset, &pattern(4096 - data_offset));
    put_u64(&mut all, 56, 4096);
    out.push(("all at once", all));
    out
}

fn written(file: &Builder<'_>, opts: WriteOptions) -> Vec<u8> {
    let mut c = Cursor::new(vec![]);
    file.write_to(&mut c, opts).unwrap();
    c.into_inner()
}

#[test]
fn every_layout_reads_and_is_rewritten_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixture("callchain.data");
    let records = |d: &PerfData<'_>| {
        let mut v = vec![];
        d.for_each_record(&mut |_, r, _| {
            v.push(r.body.to_vec());
            Ok(true)
        })
        .unwrap();
        v
    };
    let want = records(&PerfData::open(&good).unwrap());
    for (what, bytes) in layouts() {
        let data = PerfData::open(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(data.feature_problems().is_empty(), "{what}");
        perfdata::write::read_back(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(records(&data) == want, "{what}: records differ");

        let mut file = Builder::read(&data).unwrap();
        assert!(file.placement.is_some(), "{what}: no placement");
        assert!(
            written(&file, WriteOptions::default()) == bytes,
            "{what}: copy-through"
        );
        let big = written(&file, WriteOptions::default().endian(Endianness::Big));
        let saved = dir.path().join("saved.data");
        file.make_typed().unwrap();
        assert!(
            written(&file, WriteOptions::default()) == bytes,
            "{what}: typed"
        );
        file.save(&saved, WriteOptions::default()).unwrap();
        assert!(std::fs::read(&saved).unwrap() == bytes, "{what}: save");

        // Big-endian and back: the same bytes (gaps are carried as they are).
        let big_data = PerfData::open(&big).unwrap();
        assert_eq!(big_data.format.endian, Endianness::Big);
        let back = written(
            &Builder::read(&big_data).unwrap(),
            WriteOptions::default().endian(Endianness::Little),
        );
        assert!(back == bytes, "{what}: big-endian round trip");

        // The streaming conversions.
        let input = dir.path().join("in.data");
        std::fs::write(&input, &bytes).unwrap();
        for typed in [false, true] {
            let output = dir.path().join("out.data");
            let opts = ConvertOptions {
                typed,
                ..Default::default()
            };
            convert_file(&input, &output, &opts).unwrap();
            assert!(
                std::fs::read(&output).unwrap() == bytes,
                "{what}: convert (typed: {typed})"
            );
        }
    }
}

#[test]
fn an_edited_file_is_re_laid_out_and_reads() {
    for (what, bytes) in layouts() {
        let data = PerfData::open(&bytes).unwrap();
        let mut file = Builder::read(&data).unwrap();
        // One feature fewer: the features are laid out anew (perf's order); the part
        // before the data still fits and keeps its placement.
        file.features.retain(|f| f.id != FeatureId::HOSTNAME);
        let out = written(&file, WriteOptions::default());
        perfdata::write::read_back(&out).unwrap_or_else(|e| panic!("{what}: {e}"));
        let reread = PerfData::open(&out).unwrap();
        assert_eq!(reread.data_offset(), data.data_offset(), "{what}");
        assert_eq!(reread.features.len(), data.features.len() - 1, "{what}");
        let ids: Vec<u32> = reread.features.iter().map(|f| f.id.0).collect();
        let mut offsets: Vec<u64> = reread.features.iter().map(|f| f.offset).collect();
        assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{what}: {ids:?}");
        offsets.clear();
        // One attr fewer: no placement fits; perf's layout.
        let mut file = Builder::read(&data).unwrap();
        file.attrs[0].ids.pop();
        file.attrs.push(file.attrs[0].clone());
        let out = written(&file, WriteOptions::default());
        let reread = PerfData::open(&out).unwrap();
        assert_eq!(reread.session.attrs.len(), 2, "{what}");
        assert!(
            reread.data_offset() < 4096,
            "{what}: perf's layout expected"
        );
    }
}
