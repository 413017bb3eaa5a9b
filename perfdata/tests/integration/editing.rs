//! Editing between read and write: drop the samples of one pid, rewrite the hostname, add
//! a feature. The result decodes as edited, and — where the system perf is installed —
//! `perf report` and `perf script` read it without complaint and see the edits.

use perfdata::rt::Str;
use perfdata::types::{
    Clockid, FeatureBody, FeatureId, Hostname, PerfString, RecordBody, RecordType,
};
use perfdata::write::{Builder, FeatureData, FeatureItem, RecordData, WriteOptions};
use perfdata::PerfData;
use perfdata_test_support::{fixture_path as fixture, require_tools, tools};
use std::process::Command;

fn sample_pids(data: &PerfData<'_>) -> Vec<u32> {
    let mut pids = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        if rec.record_type() == RecordType::SAMPLE {
            let body = RecordBody::decode(
                rec.record_type(),
                &mut perfdata::rt::Reader::<perfdata::rt::LittleEndian>::new(rec.body, 0),
                ctx,
            )?;
            if let RecordBody::Sample(s) = body {
                pids.push(s.pid.expect("TID is sampled"));
            }
        }
        Ok(true)
    })
    .unwrap();
    pids
}

/// `perf` on `args`: whether it succeeded, its stdout and stderr.
fn perf(args: &[&str]) -> (bool, String, String) {
    let o = Command::new("perf").args(args).output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn drop_one_pid_rewrite_hostname_add_a_feature() {
    let input = fixture("switch-cpu-wide.data"); // system-wide: samples of several pids
    let bytes = std::fs::read(&input).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let pids = sample_pids(&data);
    let victim = *pids.first().expect("samples");
    let kept = pids.iter().filter(|p| **p != victim).count();
    assert!(
        kept > 0 && kept < pids.len(),
        "the fixture needs samples of several pids"
    );

    let mut file = Builder::read(&data).unwrap();
    file.make_typed().unwrap();
    // 1. Drop the samples of one pid.
    file.records.retain(|r| match &r.data {
        RecordData::Typed(b) => !matches!(&**b, RecordBody::Sample(s) if s.pid == Some(victim)),
        RecordData::Raw { .. } => true,
    });
    // 2. Rewrite the hostname (a perf-string, padded as perf pads it).
    for f in &mut file.features {
        if f.id == FeatureId::HOSTNAME {
            f.data = FeatureData::Typed(Box::new(FeatureBody::Hostname(Hostname {
                value: PerfString {
                    text: Str::padded("edited-host", 64),
                },
                tail: None,
            })));
        }
    }
    // 3. Add a feature the input lacks.
    assert!(!file.features.iter().any(|f| f.id == FeatureId::CLOCKID));
    file.features.push(FeatureItem {
        id: FeatureId::CLOCKID,
        data: FeatureData::Typed(Box::new(FeatureBody::Clockid(Clockid {
            clockid_res_ns: 1,
            tail: None,
        }))),
    });

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("edited.data");
    file.save(&out, WriteOptions::default()).unwrap();

    // Our own reading sees the edits.
    let edited = std::fs::read(&out).unwrap();
    let data2 = PerfData::open(&edited).unwrap();
    let pids2 = sample_pids(&data2);
    assert_eq!(pids2.len(), kept);
    assert!(!pids2.contains(&victim));
    let host = data2
        .features
        .iter()
        .find(|f| f.id == FeatureId::HOSTNAME)
        .unwrap();
    match data2.feature(host).unwrap() {
        FeatureBody::Hostname(h) => assert_eq!(h.value.text.text(), b"edited-host"),
        other => panic!("{other:?}"),
    }
    assert!(data2.features.iter().any(|f| f.id == FeatureId::CLOCKID));

    // perf agrees.
    if !require_tools(&[tools::PERF]) {
        return;
    }
    let out_s = out.to_str().unwrap();
    let (ok, header, err) = perf(&["report", "--header-only", "-I", "-i", out_s]);
    assert!(ok, "perf report failed: {err}");
    assert!(
        header.contains("# hostname : edited-host"),
        "perf did not see the new hostname:\n{header}"
    );
    assert!(
        header.contains("clockid frequency"),
        "perf did not see the CLOCKID feature:\n{header}"
    );
    let (ok, script, err) = perf(&["script", "-F", "pid", "-i", out_s]);
    assert!(ok, "perf script failed: {err}");
    let perf_pids: Vec<u32> = script
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(
        perf_pids.len(),
        kept,
        "perf script sees a different number of samples"
    );
    assert!(!perf_pids.contains(&victim));
    assert!(
        !err.to_lowercase().contains("error"),
        "perf complained: {err}"
    );
}

/// A recording with no records (a `--threads` stream whose thread never sampled, or every
/// record dropped) has data.size 0 like an unfinished one, but its feature table follows:
/// it must read back as finished, with its features and no records.
#[test]
fn an_empty_data_section_is_not_an_unfinished_file() {
    let bytes = std::fs::read(fixture("callchain.data")).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    let features = file.features.len();
    assert!(features > 0);
    file.records.clear();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("empty.data");
    file.save(&out, WriteOptions::default()).unwrap();
    let written = std::fs::read(&out).unwrap();
    let back = PerfData::open(&written).unwrap();
    assert!(!back.unfinished);
    assert_eq!(back.features.len(), features);
    let mut n = 0;
    back.for_each_record(&mut |_, _, _| {
        n += 1;
        Ok(true)
    })
    .unwrap();
    assert_eq!(n, 0);
}
