//! The commands on a simpleperf recording (crafted, see `common::simpleperf`): `dump`
//! names its records and the one its SPLIT records make, `report` names the samples from
//! the symbols it carries, `check` finds nothing wrong; a run of SPLIT records without its
//! SPLIT_END is a note on stderr and the same report, and `check` names it. `collapse`
//! gives a sample the user frames of its CALLCHAIN record and says on stderr how many
//! samples simpleperf could not unwind.

use crate::common;
use crate::common::simpleperf::{
    craft, file_offset, replaced_user_chain, symbol_name, user_maps, user_part, vaddr_of_offset,
    Craft,
};
use perfdata::PerfData;
use std::path::Path;
use std::process::Command;

fn perfdata(args: &[&str], file: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn dump_report_and_check_read_a_simpleperf_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::write(&path, craft(Craft::default())).unwrap();
    let (ok, dump, err) = perfdata(&["dump"], &path);
    assert!(ok, "{err}");
    for name in [
        "SIMPLEPERF_SPLIT",
        "SIMPLEPERF_SPLIT_END",
        "SIMPLEPERF_KERNEL_SYMBOL",
        "SIMPLEPERF_EVENT_ID",
        "SIMPLEPERF_DSO",
        "SIMPLEPERF_SYMBOL",
        "SIMPLEPERF_CALLCHAIN",
        "SIMPLEPERF_UNWINDING_RESULT",
        "SIMPLEPERF_TRACING_DATA",
        "SIMPLEPERF_DEBUG",
        "SIMPLEPERF_FILE",
        "SIMPLEPERF_META_INFO",
        "\"key\":\"simpleperf_version\"",
    ] {
        assert!(dump.contains(name), "{name} not in the dump");
    }
    // The joined record is named by the run it came from; its 32-bit size is printed.
    let joined = dump
        .lines()
        .find(|l| l.contains("+split"))
        .expect("a joined record");
    assert!(joined.contains("SIMPLEPERF_KERNEL_SYMBOL"), "{joined}");
    let (ok, report, err) = perfdata(&["report", "--stdio", "--no-children"], &path);
    // Notes only: the crafted records' unwinding failures and a CALLCHAIN of no sample.
    assert!(ok && err.lines().all(|l| l.contains(": note: ")), "{err}");
    assert!(report.contains("[.] sp_dash_"), "{report}");
    assert!(report.contains("[.] sp_libc_so_6_"), "{report}");
    let (ok, out, err) = perfdata(&["check"], &path);
    assert!(ok, "{out}{err}");

    // Without its SPLIT_END: the same report, a note on stderr; check names the run.
    let cut = dir.path().join("cut.data");
    std::fs::write(
        &cut,
        craft(Craft {
            split_end: false,
            ..Craft::default()
        }),
    )
    .unwrap();
    let (ok, cut_report, err) = perfdata(&["report", "--stdio", "--no-children"], &cut);
    assert!(ok, "{err}");
    let rows = |r: &str| -> Vec<String> {
        r.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(rows(&cut_report), rows(&report));
    assert!(
        err.contains("note:")
            && err.contains("expected a SPLIT_END after the run of SPLIT records"),
        "{err}"
    );
    // dump prints every record and names the one left out (status 1: not all printed).
    let (ok, cut_dump, err) = perfdata(&["dump"], &cut);
    assert!(!ok, "dump says nothing of the record left out");
    assert!(cut_dump.contains("SIMPLEPERF_SPLIT") && !cut_dump.contains("+split"));
    assert!(
        err.contains("expected a SPLIT_END") && err.contains("is left out"),
        "{err}"
    );
    let (ok, out, err) = perfdata(&["check"], &cut);
    assert!(!ok, "check passes a SPLIT run without its end");
    assert!(
        out.contains("SPLIT_END") || err.contains("SPLIT_END"),
        "{out}{err}"
    );
}

#[test]
fn collapse_takes_a_samples_user_frames_from_its_callchain_record_and_notes_failures() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    // The fifth sample gets a CALLCHAIN record; the second and third failed to unwind.
    const SAMPLE: usize = 4;
    std::fs::write(
        &path,
        craft(Craft {
            callchains: &[SAMPLE],
            unwinding_failures: &[(1, 1), (2, 7)],
            ..Craft::default()
        }),
    )
    .unwrap();
    // The folded stack of that sample's CALLCHAIN frames, named from the crafted symbols
    // (not through the library): `sh;root;…;leaf`.
    let base = common::fixture("callchain.data");
    let base = PerfData::open(&base).unwrap();
    let maps = user_maps(&base);
    let mut own = vec![];
    base.for_each_record(&mut |_, rec, ctx| {
        if let Some(s) = base.sample(&rec, ctx)? {
            own.push(user_part(s.callchain()?.unwrap().ips.iter()));
        }
        Ok(true)
    })
    .unwrap();
    // Frame-pointer chains of `sh` end in garbage, in no map: `[unknown]`, as perf.
    let name = |ip: u64| match file_offset(&maps, ip) {
        Some((p, off)) => symbol_name(p, vaddr_of_offset(off)),
        None => "[unknown]".to_string(),
    };
    let fold = |leaf_first: &[u64]| {
        let names: Vec<String> = leaf_first.iter().rev().map(|&ip| name(ip)).collect();
        format!("sh;{} ", names.join(";"))
    };
    let replaced = fold(&replaced_user_chain(&own[SAMPLE]));
    let before = fold(&own[SAMPLE]);
    assert_ne!(replaced, before);

    let (ok, out, err) = perfdata(&["collapse"], &path);
    assert!(ok, "{err}");
    assert!(
        out.lines().any(|l| l.starts_with(&replaced)),
        "no `{replaced}…` in:\n{out}"
    );
    // The crafted records add an old-layout failure (stop reason 3) and a new one
    // (INVALID_MAP) to these two.
    assert!(
        err.contains(
            "note: simpleperf could not unwind 4 samples when recording (UNWINDING_RESULT records): \
             1 MEMORY_INVALID, 1 INVALID_MAP, 1 INVALID_ELF, 1 with stop reason 3 (older simpleperf)"
        ),
        "{err}"
    );
}
