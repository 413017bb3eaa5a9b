//! The analysis commands as a user runs them: every command on every fixture, errors
//! that start with the path, the report of a fixture without symbol files, and outputs'
//! permissions.

use crate::common;
use std::path::Path;
use std::process::Command;

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_commands_run_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    for path in common::fixture_files() {
        let p = path.to_str().unwrap();
        for args in [
            vec!["report", p, "--no-symbols"],
            vec!["report", p, "--no-symbols", "-g", "--sort", "pid,dso"],
            vec!["collapse", p, "--no-symbols"],
            vec!["info", p, "--json"],
        ] {
            let out = cli(&args);
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out_dir = dir.path().join(path.file_name().unwrap());
        let out = cli(&["stats", p, "--no-symbols", "-o", out_dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for f in ["stat.csv", "overview.csv", "processes.csv", "results.csv"] {
            let mut r = csv::Reader::from_path(out_dir.join(f)).unwrap();
            assert!(r.headers().unwrap().len() >= 3, "{f}");
            for row in r.records() {
                row.unwrap();
            }
        }
    }
    let svg = dir.path().join("flame.svg");
    let out = cli(&[
        "flamegraph",
        common::fixture_path("callchain.data").to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<?xml") && text.contains("<svg") && text.contains("sh"));
}

#[test]
fn cli_errors_start_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for cmd in ["report", "collapse", "info", "dump"] {
        let out = cli(&[cmd, d]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!(
                "perfdata: {d}: not a perf.data file or a --threads directory"
            )),
            "{cmd}: {err}"
        );
    }
    let junk = dir.path().join("junk.data");
    std::fs::write(&junk, b"not a profile at all, just text").unwrap();
    let j = junk.to_str().unwrap();
    for cmd in ["report", "stats", "info"] {
        let out = cli(&[cmd, j]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(&format!("perfdata: {j}: ")), "{cmd}: {err}");
    }
    let out = cli(&[
        "collapse",
        common::fixture_path("plain.data").to_str().unwrap(),
        "--event",
        "nope",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no event named `nope`"));
}

#[test]
fn report_of_a_fixture_without_symbol_files() {
    let out = cli(&[
        "report",
        common::fixture_path("multi-event.data").to_str().unwrap(),
        "--no-symbols",
    ]);
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

#[test]
fn outputs_get_the_permissions_of_a_normal_new_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let fixture = common::fixture_path("callchain.data");
    let f = fixture.to_str().unwrap();
    let copy = dir.path().join("copy.data");
    let svg = dir.path().join("flame.svg");
    assert!(cli(&["convert", f, "-o", copy.to_str().unwrap()])
        .status
        .success());
    assert!(cli(&["flamegraph", f, "-o", svg.to_str().unwrap()])
        .status
        .success());
    // The test runs under the usual umask 022: 0644, not the temporary file's 0600.
    let want = 0o666 & !current_umask();
    assert_eq!(mode(&copy), want);
    assert_eq!(mode(&svg), want);
    // A replaced file keeps its own.
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(cli(&["convert", f, "-o", copy.to_str().unwrap()])
        .status
        .success());
    assert_eq!(mode(&copy), 0o640);
}

fn current_umask() -> u32 {
    // A file created with 0666 shows the umask.
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("probe");
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o666)
        .open(&p)
        .unwrap();
    0o666 & !(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777)
}

#[test]
fn flame_graph_counts_say_what_they_count() {
    // cpu-clock periods are nanoseconds: a tooltip says "500,250 ns", not "samples".
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("flame.svg");
    let sample = common::sample_path("wordfreq.data");
    let out = cli(&[
        "flamegraph",
        sample.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(" ns, "), "no ns count in the tooltips");
    assert!(!text.contains(" samples, "), "periods called samples");
}

/// A conversion that leaves out bytes after the last record says so, naming the input,
/// the offset and the count; a copy keeps them (perfdata/tests: conversion_matrix.rs).
#[test]
fn convert_says_what_it_leaves_out() {
    let Some(corpus) = common::corpus_dir() else {
        return;
    };
    let input = corpus.join("sleep.compressed2.pipe.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let run = cli(&[
        "convert",
        input.to_str().unwrap(),
        "--layout",
        "file",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: left out the last 143 bytes, from byte 0x7c40",
            input.display()
        )),
        "{stderr}"
    );
    let copy = dir.path().join("copy.data");
    let run = cli(&[
        "convert",
        input.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    assert_eq!(run.stderr, b"");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&input).unwrap()
    );
}
