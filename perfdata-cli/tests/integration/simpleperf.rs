//! The commands on a simpleperf recording (crafted, see `common::simpleperf`): `dump`
//! names its records and the one its SPLIT records make, `report` names the samples from
//! the symbols it carries, `check` finds nothing wrong; a run of SPLIT records without its
//! SPLIT_END is a note on stderr and the same report, and `check` names it.

use crate::common::simpleperf::{craft, Craft};
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
    assert!(ok && err.is_empty(), "{err}");
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
