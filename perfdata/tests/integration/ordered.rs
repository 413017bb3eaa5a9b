//! Time-ordered iteration delivers every record once, timed records in time order, and —
//! where perf is installed — samples in the order `perf script` prints them.

use perfdata::rt::{LittleEndian, Reader};
use perfdata::types::{Ctx, RecordBody, RecordType};
use perfdata::RecordWalk;
use perfdata::{Origin, PerfData, RawRecord};
use perfdata_test_support::{fixture_path, fixtures_dir, require_tools, tools};
use std::path::PathBuf;
use std::process::Command;

fn fixtures() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

type Key = (Origin, u64, u32);

/// The timestamp by decoding the whole record — an oracle for the plan-based
/// `PerfData::time`, which reads it at a precomputed offset.
fn record_time(ty: RecordType, body: &[u8], ctx: &Ctx) -> Option<u64> {
    let decoded = RecordBody::decode(ty, &mut Reader::<LittleEndian>::new(body, 0), ctx).ok()?;
    match &decoded {
        RecordBody::Sample(s) => s.time,
        other => other.sample_id().and_then(|id| id.time),
    }
}

/// Both ways of finding a record's time, which must agree.
fn checked_time(data: &PerfData<'_>, r: &RawRecord<'_>, ctx: &perfdata::RecordCtx) -> Option<u64> {
    let decoded = if r.header.type_ < 64 {
        record_time(r.record_type(), r.body, ctx)
    } else {
        None
    };
    assert_eq!(data.time(r, ctx), decoded, "record at {:#x}", r.offset);
    decoded
}

fn key(origin: Origin, offset: u64, ty: u32) -> Key {
    (origin, offset, ty)
}

#[test]
fn ordered_iteration_is_a_time_sorted_permutation() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let data = PerfData::open(&bytes).unwrap();
        let mut in_file: Vec<Key> = vec![];
        data.for_each_record(&mut |o, r, _| {
            let ty = r.record_type();
            if ty != RecordType::COMPRESSED && ty != RecordType::COMPRESSED2 {
                in_file.push(key(o, r.offset, ty.0));
            }
            Ok(true)
        })
        .unwrap();
        let mut ordered: Vec<Key> = vec![];
        let mut last_time = 0u64;
        data.records()
            .time_ordered()
            .for_each(|o, r, ctx| {
                ordered.push(key(o, r.offset, r.header.type_));
                if let Some(t) = checked_time(&data, &r, ctx) {
                    assert!(
                        t >= last_time,
                        "{}: time went back from {last_time} to {t}",
                        path.display()
                    );
                    last_time = t;
                }
                Ok(true)
            })
            .unwrap();
        let mut a = in_file.clone();
        let mut b = ordered.clone();
        a.sort_by_key(|k| format!("{k:?}"));
        b.sort_by_key(|k| format!("{k:?}"));
        assert_eq!(
            a,
            b,
            "{}: ordered iteration is not a permutation of the records",
            path.display()
        );
    }
}

#[test]
fn sample_order_matches_perf_script() {
    if !require_tools(&[tools::PERF]) {
        return;
    }
    let path = fixture_path("switch-cpu-wide.data");
    let o = Command::new("perf")
        .args(["script", "-F", "time", "-i"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "perf script failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    // perf prints seconds with microseconds: "  1234.567890:".
    let perf_times: Vec<u64> = out
        .split_whitespace()
        .map(|t| {
            let (s, us) = t.trim_end_matches(':').split_once('.').unwrap();
            s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap()
        })
        .collect();
    let bytes = std::fs::read(&path).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut ours = vec![];
    data.records()
        .time_ordered()
        .for_each(|_, r, ctx| {
            if r.record_type() == RecordType::SAMPLE {
                ours.push(checked_time(&data, &r, ctx).unwrap() / 1000);
            }
            Ok(true)
        })
        .unwrap();
    let mut in_file = vec![];
    data.for_each_record(&mut |_, r, ctx| {
        if r.record_type() == RecordType::SAMPLE {
            in_file.push(checked_time(&data, &r, ctx).unwrap() / 1000);
        }
        Ok(true)
    })
    .unwrap();
    assert!(perf_times.len() > 10);
    assert_ne!(
        in_file, perf_times,
        "the fixture is already in time order: this test would prove nothing"
    );
    assert_eq!(ours, perf_times);
}
