//! Unfinished, cut and hostile inputs: every complete record is yielded, then a clear
//! error; nothing panics, loops or allocates more than the input justifies.

use crate::common;
use common::fixture;
use perfdata::RecordWalk;

use perfdata::rt::{LittleEndian, Reader};
use perfdata::types::{Ctx, FeatureBody, FeatureId};
use perfdata::write::Builder;
use perfdata::PerfData;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// (records yielded, the error that ended the walk).
fn walk(bytes: &[u8]) -> (usize, Option<String>) {
    let data = match PerfData::open(bytes) {
        Ok(d) => d,
        Err(e) => return (0, Some(e.to_string())),
    };
    let mut n = 0;
    let r = data.for_each_record(&mut |_, _, _| {
        n += 1;
        Ok(true)
    });
    (n, r.err().map(|e| e.to_string()))
}

#[test]
fn an_unfinished_recording_reads_to_the_end_of_the_file() {
    let full = fixture("plain.data");
    let (all, err) = walk(&full);
    assert!(err.is_none());
    let data_offset = u64_at(&full, 40) as usize;
    let data_size = u64_at(&full, 48) as usize;
    // What a killed `perf record` leaves: header with data.size 0, records, no features.
    let mut unfinished = full[..data_offset + data_size].to_vec();
    unfinished[48..56].copy_from_slice(&0u64.to_le_bytes());
    let data = PerfData::open(&unfinished).unwrap();
    assert!(data.unfinished);
    assert!(data.features.is_empty());
    let (n, err) = walk(&unfinished);
    assert_eq!((n, err), (all, None));
    // Rewriting it finishes it: data.size is computed.
    let file = Builder::read(&data).unwrap();
    let mut out = std::io::Cursor::new(vec![]);
    file.write_to(&mut out, Default::default()).unwrap();
    let out = out.into_inner();
    assert_eq!(u64_at(&out, 48) as usize, data_size);
}

#[test]
fn a_cut_file_yields_every_complete_record_then_says_where_it_was_cut() {
    let full = fixture("plain.data");
    let data_offset = u64_at(&full, 40) as usize;
    let data_size = u64_at(&full, 48) as usize;
    let (all, _) = walk(&full);
    let mut unfinished = full[..data_offset + data_size].to_vec();
    unfinished[48..56].copy_from_slice(&0u64.to_le_bytes());
    // Cut inside the last record.
    let cut = &unfinished[..unfinished.len() - 5];
    let (n, err) = walk(cut);
    assert_eq!(n, all - 1);
    let err = err.expect("a cut record is an error");
    assert!(err.contains("unexpected end"), "{err}");
    assert!(
        err.contains("at byte 0x"),
        "the error names the offset: {err}"
    );
}

#[test]
fn truncating_anywhere_never_panics() {
    for name in [
        "callchain.data",
        "pipe-tracepoint.pipe.data",
        "compressed.data",
        "group-read.data",
    ] {
        let full = fixture(name);
        let step = (full.len() / 400).max(1);
        for len in (0..full.len()).step_by(step) {
            let _ = walk(&full[..len]);
            if let Ok(data) = PerfData::open(&full[..len]) {
                for f in &data.features {
                    let _ = data.feature(f);
                }
                let _ = Builder::read(&data).map(|mut m| m.make_typed());
            }
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    // Flip bytes all over real files (a deterministic pseudo-random walk).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for name in [
        "callchain.data",
        "pipe-callchain.pipe.data",
        "tracepoint.data",
        "compressed.data",
    ] {
        let full = fixture(name);
        for _ in 0..300 {
            let mut b = full.clone();
            for _ in 0..4 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            let _ = walk(&b);
            if let Ok(data) = PerfData::open(&b) {
                for f in &data.features {
                    let _ = data.feature(f);
                }
                let _ = Builder::read(&data).map(|mut m| m.make_typed());
            }
        }
    }
}

#[test]
fn a_huge_count_is_an_error_not_an_allocation() {
    // CMDLINE claiming 2^32-1 strings in 12 bytes.
    let mut b = u32::MAX.to_le_bytes().to_vec();
    b.extend_from_slice(&[64, 0, 0, 0, b'x', 0, 0, 0]);
    let e = FeatureBody::decode(
        FeatureId::CMDLINE,
        &mut Reader::<LittleEndian>::new(&b, 0x1000),
        &Ctx::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("0x1000") || e.contains("0x100"),
        "offset missing: {e}"
    );
    // A perf-string claiming 2^32-1 bytes.
    let b = [0xff, 0xff, 0xff, 0xff, b'a', b'b'];
    assert!(FeatureBody::decode(
        FeatureId::HOSTNAME,
        &mut Reader::<LittleEndian>::new(&b, 0),
        &Ctx::default()
    )
    .is_err());
}

#[test]
fn not_a_perf_file_is_a_clear_error() {
    for junk in [
        &b""[..],
        b"PERF",
        b"\x1f\x8b\x08\x00gzip-ish bytes",
        b"PERFILE2\x99\x00\x00\x00\x00\x00\x00\x00",
    ] {
        let e = PerfData::open(junk).err().expect("must fail").to_string();
        assert!(
            e.contains("perf.data") || e.contains("header size"),
            "unclear: {e}"
        );
    }
}

fn salvage(bytes: &[u8]) -> (Vec<(u64, u32)>, Vec<String>) {
    let data = PerfData::open(bytes).unwrap();
    let mut seen = vec![];
    let mut records = data.records().salvaging();
    while let Some(r) = records.next().unwrap() {
        seen.push((r.raw.offset, r.raw.header.type_));
    }
    let errors = records.take_damage();
    (seen, errors.iter().map(|e| e.to_string()).collect())
}

#[test]
fn salvage_changes_nothing_on_an_intact_file() {
    let bytes = fixture("callchain.data");
    let (seen, errors) = salvage(&bytes);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(seen.len(), walk(&bytes).0);
}

#[test]
fn salvage_skips_a_damaged_record_and_goes_on() {
    let bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut offsets = vec![];
    data.for_each_record(&mut |_, r, _| {
        offsets.push(r.offset);
        Ok(true)
    })
    .unwrap();
    // Break the size of a record in the middle: an impossible size (3).
    let victim = offsets[offsets.len() / 2] as usize;
    let mut damaged = bytes.clone();
    damaged[victim + 6..victim + 8].copy_from_slice(&3u16.to_le_bytes());
    let (plain_n, plain_err) = walk(&damaged);
    assert!(plain_err.is_some() && plain_n < offsets.len());
    let (seen, errors) = salvage(&damaged);
    assert!(
        errors.iter().any(|e| e.contains("skipped bytes")),
        "{errors:?}"
    );
    // Everything after the damaged record is back.
    let after: Vec<u64> = offsets
        .iter()
        .copied()
        .filter(|o| *o > victim as u64)
        .collect();
    let seen_after: Vec<u64> = seen
        .iter()
        .map(|s| s.0)
        .filter(|o| *o > victim as u64)
        .collect();
    assert!(after.len() > 10);
    assert_eq!(seen_after, after);
}

#[test]
fn salvage_reads_everything_before_appended_junk() {
    let Some(path) = common::corpus_file("sleep.compressed2.pipe.data") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let (n, err) = walk(&bytes);
    assert!(err.is_some());
    let (seen, errors) = salvage(&bytes);
    assert_eq!(seen.len(), n, "every record before the junk");
    assert_eq!(errors.len(), 1, "{errors:?}");
}
