//! `perfdata dump` / `perfdata convert` with gperftools CPU profiles: format detection by
//! content, profile rewrites, and the conversions to and from perf.data (read back with
//! this library; `cargo xtask conformance` checks them with perf and both pprof tools).

use std::path::Path;
use std::process::Command;

use perfdata::gperftools::types::{Header, Record};
use perfdata::gperftools::{Profile, SlotFormat};
use perfdata::Recording;

fn perfdata(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .output()
        .expect("running perfdata");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

macro_rules! run {
    ($($a:expr),* $(,)?) => { perfdata(&[$(std::ffi::OsStr::new($a)),*]) };
}

fn profile() -> Profile {
    Profile {
        layout: SlotFormat::B64_LE,
        header: Header {
            period_us: 1000,
            ..Header::default()
        },
        records: vec![
            Record {
                count: 3,
                pcs: vec![0x401010, 0x402020, 0x403030],
            },
            Record {
                count: 2,
                pcs: vec![0x401050, 0x402020, 0x403030],
            },
            Record {
                count: 1,
                pcs: vec![0x401010, 0x402020, 0x403030],
            },
        ],
        map_text: b"00400000-00404000 r-xp 00000000 00:00 42          /usr/bin/prog\n\
                    7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0           [stack]\n"
            .to_vec(),
    }
}

/// Samples (and their callchains) in a perf.data file, read with the library.
fn perf_samples(path: &Path) -> Vec<Vec<u64>> {
    let rec = Recording::open(path).unwrap();
    let data = rec.data().unwrap();
    let mut out = vec![];
    rec.for_each_record(&mut |_, _, r, ctx| {
        if let Some(s) = data.sample(&r, ctx)? {
            out.push(s.callchain()?.map(|c| c.ips.to_vec()).unwrap_or_default());
        }
        Ok(true)
    })
    .unwrap();
    out
}

#[test]
fn dump_detects_a_profile_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-extension");
    std::fs::write(&path, profile().encode(SlotFormat::B32_BE).unwrap()).unwrap();
    let (ok, out, err) = run!("dump", &path, "--json");
    assert!(ok, "{err}");
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["format"], "gperftools");
    assert_eq!(first["layout"]["word_size"], 4);
    assert_eq!(first["layout"]["endian"], "Big");
    assert_eq!(out.lines().filter(|l| l.contains("\"record\"")).count(), 3);
    assert!(out.contains("/usr/bin/prog"));
    // A profile cut short: the records before the cut are printed, then the error.
    let bytes = profile().encode(SlotFormat::B64_LE).unwrap();
    std::fs::write(&path, &bytes[..40 + 8 * 5 + 12]).unwrap();
    let (ok, out, err) = run!("dump", &path);
    assert!(!ok);
    assert_eq!(
        out.lines().filter(|l| l.contains(" count ")).count(),
        1,
        "{out}"
    );
    assert!(err.contains("record #1") && err.contains("0x"), "{err}");
}

#[test]
fn profile_rewrites_copy_through_and_change_layout() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.prof");
    let bytes = profile().encode(SlotFormat::B64_LE).unwrap();
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("out.prof");
    let (ok, _, err) = run!("convert", &input, "-o", &out);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), bytes, "copy-through");
    let (ok, _, err) = run!("convert", &input, "-o", &out, "--typed");
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), bytes, "typed rewrite");
    let (ok, _, err) = run!(
        "convert",
        &input,
        "-o",
        &out,
        "--word-size",
        "4",
        "--endian",
        "big"
    );
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        profile().encode(SlotFormat::B32_BE).unwrap()
    );
    // perf.data-only options are refused, not ignored.
    let (ok, _, err) = run!("convert", &input, "-o", &out, "--compress");
    assert!(!ok && err.contains("perf.data output only"), "{err}");
    let (ok, _, err) = run!("convert", &input, "-o", &out, "--pid", "3");
    assert!(!ok && err.contains("--pid"), "{err}");
}

#[test]
fn a_profile_becomes_perf_data_with_one_sample_per_count() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.prof");
    std::fs::write(&input, profile().encode(SlotFormat::B32_LE).unwrap()).unwrap();
    let out = dir.path().join("out.data");
    let (ok, _, err) = run!("convert", &input, "-o", &out, "--to", "perf");
    assert!(ok, "{err}");
    let samples = perf_samples(&out);
    assert_eq!(samples.len(), 6);
    let user = perfdata::types::CallchainContext::USER.0;
    assert_eq!(samples[0], [user, 0x401010, 0x402020, 0x403030]);
    assert_eq!(samples[3], [user, 0x401050, 0x402020, 0x403030]);
    // And back: the same stacks, merged.
    let back = dir.path().join("back.prof");
    let (ok, _, err) = run!("convert", &out, "-o", &back, "--to", "gperftools");
    assert!(ok, "{err}");
    let p = Profile::parse(&std::fs::read(&back).unwrap()).unwrap();
    assert_eq!(p.period_us(), 1000);
    assert_eq!(p.records.len(), 2);
    assert_eq!(p.records[0].count, 4);
    assert_eq!(p.records[0].pcs, [0x401010, 0x402020, 0x403030]);
    assert_eq!(p.records[1].count, 2);
    let maps = p.mappings();
    assert_eq!(maps.len(), 1, "the executable mapping");
    assert_eq!(maps[0].path, "/usr/bin/prog");
    assert_eq!((maps[0].start, maps[0].end), (0x400000, 0x404000));
}

#[test]
fn perf_data_samples_become_merged_user_stacks() {
    let fixture = perfdata_test_support::fixture_path("callchain.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cc.prof");
    let (ok, _, err) = run!("convert", &fixture, "-o", &out, "--to", "gperftools");
    assert!(ok, "{err}");
    let p = Profile::parse(&std::fs::read(&out).unwrap()).unwrap();
    // Expected from the library's own view of the samples.
    let max = perfdata::types::CallchainContext::MAX.0;
    let user = perfdata::types::CallchainContext::USER.0;
    let mut with_user = 0u64;
    for chain in perf_samples(&fixture) {
        let mut in_user = false;
        let mut n = 0;
        for ip in chain {
            if ip >= max {
                in_user = ip == user;
            } else if in_user {
                n += 1;
            }
        }
        with_user += u64::from(n > 0);
    }
    assert!(with_user > 0);
    assert_eq!(p.total_samples(), with_user);
    assert!(
        err.contains(&format!("→ {} stacks", p.records.len())),
        "{err}"
    );
    assert!(p.records.iter().all(|r| r.pcs.iter().all(|&pc| pc < max)));
    assert!(!p.mappings().is_empty());
    // --pid of no process: no samples; an unknown event: an error naming the events.
    let (ok, _, err) = run!(
        "convert",
        &fixture,
        "-o",
        &out,
        "--to",
        "gperftools",
        "--event",
        "nope"
    );
    assert!(!ok && err.contains("no event named `nope`"), "{err}");
    let (ok, _, err) = run!(
        "convert",
        &fixture,
        "-o",
        &out,
        "--to",
        "gperftools",
        "--comm",
        "nope"
    );
    assert!(!ok && err.contains("`nope`"), "{err}");
}

#[test]
fn several_processes_are_noted_and_pid_selects_one() {
    let fixture = perfdata_test_support::fixture_path("period.data");
    let rec = Recording::open(&fixture).unwrap();
    let mut analyzer =
        perfdata_analysis::Analyzer::open(&rec, &perfdata_analysis::AnalyzerOptions::default())
            .unwrap();
    let (all, summary) = perfdata_analysis::export::gperftools::from_perf(
        &mut analyzer,
        &perfdata_analysis::export::gperftools::FromPerfOptions::default(),
    )
    .unwrap();
    assert!(
        summary.pids.len() > 1,
        "the fixture has several processes: {summary:?}"
    );
    assert_eq!(summary.pids.values().sum::<u64>(), summary.samples);
    let (&pid, &n) = summary.pids.iter().max_by_key(|(_, n)| **n).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.prof");
    let (ok, _, err) = run!("convert", &fixture, "-o", &out, "--to", "gperftools");
    assert!(ok, "{err}");
    assert!(err.contains("select one with --pid or --comm"), "{err}");
    let (ok, _, err) = run!(
        "convert",
        &fixture,
        "-o",
        &out,
        "--to",
        "gperftools",
        "--pid",
        &pid.to_string()
    );
    assert!(ok, "{err}");
    assert!(!err.contains("note:"), "{err}");
    assert!(err.contains(&format!("{n} samples of")), "{err}");
    let one = Profile::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert!(one.total_samples() <= n && one.total_samples() < all.total_samples());
    // Only that process's mappings.
    assert!(one.mappings().len() < all.mappings().len());
}
