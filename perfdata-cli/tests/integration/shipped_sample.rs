//! The README's first command on the shipped sample (`samples/wordfreq.data`): its
//! program's functions are named from the recording's own build-id cache
//! (`wordfreq.data.debug/`) on any machine, with no `~/.debug`, and the table agrees with
//! perf's when perf is installed.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sample() -> PathBuf {
    common::sample_path("wordfreq.data")
}

/// `perfdata report FILE ARGS` with an empty home (no `~/.debug`) and no
/// `$PERF_BUILDID_DIR`.
fn report_without_home(file: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["report", file.to_str().unwrap()])
        .args(args)
        .env("HOME", home)
        .env_remove("PERF_BUILDID_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of the default report (Children, Self) in the program's own object:
/// (children, self, symbol).
fn program_rows(table: &str) -> Vec<(String, String, String)> {
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 6 && f[3] == "wordfreq" && f[4] == "[.]")
                .then(|| (f[0].to_string(), f[1].to_string(), f[5].to_string()))
        })
        .collect()
}

#[test]
fn shipped_sample_names_its_functions_from_its_own_build_id_cache() {
    let home = tempfile::tempdir().unwrap();
    // The README's first command.
    let text = report_without_home(&sample(), home.path(), &["-g"]);
    assert!(
        text.starts_with("# Samples: 1K of event 'cpu-clock:u'\n"),
        "{text}"
    );
    let rows = program_rows(&text);
    let names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    for f in ["count_word", "rng", "make_word", "merge"] {
        assert!(names.contains(&f), "{f} missing from {names:?}");
    }
    // The call graph under the rows: callers named, down to main.
    for caller in [
        "--count_words",
        "--generate_text",
        "--sort_by_count",
        "main",
    ] {
        assert!(text.contains(caller), "{caller} missing:\n{text}");
    }

    // The same recording without its cache beside it: the program's addresses only.
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("wordfreq.data");
    std::fs::copy(sample(), &copy).unwrap();
    let bare = report_without_home(&copy, home.path(), &["-g"]);
    let bare_rows = program_rows(&bare);
    assert!(
        !bare_rows.is_empty() && bare_rows.iter().all(|r| r.2.starts_with("0x")),
        "symbols found without the cache:\n{bare}"
    );
}

/// The report views the conformance check compares, on the shipped sample: perf's text
/// from `# Samples:` on, without the tip it closes with.
const VIEWS: &[&[&str]] = &[
    &[],
    &["-n"],
    &["-g", "fractal"],
    &["-g", "flat"],
    &["-g", "folded"],
    &["-g", "callee"],
    &["--no-children"],
    &[
        "--no-children",
        "-g",
        "none",
        "-n",
        "--sort",
        "comm,dso,sym",
    ],
    &["--percent-limit", "5", "--max-stack", "4"],
    &["--sort", "sym,comm"],
    &["--no-children", "-g", "none", "-n", "--sort", "dso,srcline"],
    &["--sort", "srcline"],
    &["--inline", "-g", "folded"],
];

/// perf report's text from `# Samples:` on, without its closing `#`, `# (tip)`, `#`.
fn report_text(text: &str) -> String {
    let body = &text[text.find("# Samples:").unwrap_or(text.len())..];
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let n = lines.len();
    let tip = n >= 3 && lines[n - 1] == "#\n" && lines[n - 2].starts_with("# (");
    lines[..if tip { n - 3 } else { n }].concat()
}

#[test]
fn shipped_sample_report_agrees_with_perf() {
    if !common::require_tools(&[common::tools::PERF]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let cache = common::sample_path("wordfreq.data.debug");
    for view in VIEWS {
        // perf takes its build-id cache from --buildid-dir (it sets, not reads,
        // $PERF_BUILDID_DIR).
        let perf = Command::new("perf")
            .arg("--buildid-dir")
            .arg(&cache)
            .args(["report", "--stdio"])
            .args(*view)
            .arg("-i")
            .arg(sample())
            .env("HOME", home.path())
            .output()
            .unwrap();
        assert!(
            perf.status.success(),
            "perf report {}: {}",
            view.join(" "),
            String::from_utf8_lossy(&perf.stderr)
        );
        let perf = String::from_utf8(perf.stdout).unwrap();
        let ours = report_without_home(&sample(), home.path(), view);
        let theirs = report_text(&perf);
        assert!(
            // A srcline view names the program's file (from its symbol table).
            theirs.contains("[.] count_word") || theirs.contains("  wordfreq.c:0"),
            "perf named nothing:\n{perf}"
        );
        assert_eq!(ours, theirs, "perf report {}", view.join(" "));
    }
}

/// The text of each view, reviewed: the README's command (Children, `graph,0.5,caller`),
/// and the other call-graph modes.
#[test]
fn shipped_sample_report_views() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| report_without_home(&sample(), home.path(), args);
    insta::assert_snapshot!("report_default", run(&["-g"]));
    insta::assert_snapshot!("report_folded", run(&["-g", "folded"]));
    insta::assert_snapshot!(
        "report_fractal_callee",
        run(&["--no-children", "-g", "fractal,2,callee"])
    );
    insta::assert_snapshot!(
        "report_flat_limit",
        run(&["-g", "flat", "--percent-limit", "10"])
    );
    // No line information in the program: binutils (perf's addr2line) names the file
    // of each function's `STT_FILE` symbol, line 0.
    insta::assert_snapshot!(
        "report_srcline",
        run(&[
            "--no-children",
            "-g",
            "none",
            "--sort",
            "sym,srcline",
            "--percent-limit",
            "1"
        ])
    );
    insta::assert_snapshot!(
        "report_json",
        run(&["-g", "graph,5", "--percent-limit", "20", "--json"])
    );
}
