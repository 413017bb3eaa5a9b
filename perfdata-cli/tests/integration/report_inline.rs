//! `report --inline` and `--sort srcline` on a program with inlined functions, built
//! here with `gcc -O2 -g` and recorded with `perf record --call-graph dwarf` and `-g`:
//! the inlined functions and the source lines are where perf puts them, and the text
//! equals perf's for the views whose entries are well over any tie (`--percent-limit`).
//! Needs `perf` (able to record) and `gcc`; skipped, saying so, without them (a failure
//! under `PERFDATA_TOOLS_REQUIRED`).

use perfdata_test_support::{require_tools, tools};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = r#"
#include <stdio.h>
static inline __attribute__((always_inline)) unsigned mix(unsigned x) {
    for (int i = 0; i < 50; i++) x = x * 2654435761u + (x >> 13);
    return x;
}
static inline __attribute__((always_inline)) unsigned inner(unsigned x) { return mix(x) ^ mix(x + 1); }
__attribute__((noinline)) unsigned leaf(unsigned x) { return inner(x) + 3; }
__attribute__((noinline)) unsigned top(int n) { unsigned s = 0; for (int i = 0; i < n; i++) s += leaf(i); return s; }
int main(void) { printf("%u\n", top(2000000)); return 0; }
"#;

fn ours(data: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("report")
        .arg(data)
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// perf report's text from `# Samples:` on, without its closing tip.
fn theirs(data: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("perf")
        .args(["report", "--stdio"])
        .args(args)
        .arg("-i")
        .arg(data)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "perf report {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let body = &text[text.find("# Samples:").unwrap_or(text.len())..];
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let n = lines.len();
    let tip = n >= 3 && lines[n - 1] == "#\n" && lines[n - 2].starts_with("# (");
    lines[..if tip { n - 3 } else { n }].concat()
}

/// Builds the program (once) and records it as `perf record ARGS`.
fn record(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let prog = dir.join("prog");
    if !prog.exists() {
        std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
        let built = Command::new("gcc")
            .args(["-O2", "-g", "-o"])
            .arg(&prog)
            .arg(dir.join("prog.c"))
            .status()
            .unwrap();
        assert!(built.success(), "gcc: {built}");
    }
    let data = dir.join(name);
    let out = Command::new("perf")
        .args(["record", "-q", "-F", "2000", "-o"])
        .arg(&data)
        .args(args)
        .arg(&prog)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "perf record {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    data
}

#[test]
fn inlined_functions_and_source_lines_as_perf_reports_them() {
    if !require_tools(&[tools::PERF_RECORD, tools::GCC]) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let dwarf = record(dir, "dwarf.data", &["--call-graph", "dwarf"]);
    let fp = record(dir, "fp.data", &["-g"]);

    // The unwound chains: `leaf` has `inner` inlined into it, and `mix` into that.
    let folded = ours(
        &dwarf,
        dir,
        &["--inline", "--no-children", "-g", "folded,0,caller"],
    );
    assert!(
        folded.contains(";top;leaf;inner (inlined);mix (inlined)\n"),
        "{folded}"
    );
    // Without --inline, none.
    let plain = ours(&dwarf, dir, &["--no-children", "-g", "folded,0,caller"]);
    assert!(!plain.contains("(inlined)"), "{plain}");
    // Children has an entry for each inlined function, its Self 0 (a sample is the
    // function's whose code it is in).
    let children = ours(&dwarf, dir, &["--inline", "-g", "none", "--sort", "sym"]);
    let mix = children
        .lines()
        .find(|l| l.ends_with("[.] mix (inlined)"))
        .unwrap_or_else(|| panic!("{children}"));
    assert!(mix.contains("     0.00%  "), "{mix}");
    // perf 6.1 adds inlined functions to unwound chains only: a -g recording's chains
    // are its addresses.
    assert_eq!(
        ours(&fp, dir, &["--inline"]),
        ours(&fp, dir, &["--no-inline"])
    );
    // The source line of the samples in `mix`: its loop, line 4 of prog.c.
    let lines = ours(
        &fp,
        dir,
        &["--no-children", "-g", "none", "--sort", "sym,srcline"],
    );
    assert!(
        lines
            .lines()
            .any(|l| l.contains("[.] leaf") && l.ends_with("prog.c:4")),
        "{lines}"
    );

    // The same text as perf's, on the views whose entries are far from any tie.
    for (data, view) in [
        (&dwarf, &["--inline", "--percent-limit", "5"][..]),
        (
            &dwarf,
            &["--inline", "-g", "folded", "--percent-limit", "5"],
        ),
        (
            &dwarf,
            &["--inline", "-g", "callee", "--percent-limit", "5"],
        ),
        (
            &dwarf,
            &["--inline", "--no-children", "--percent-limit", "5"],
        ),
        (&fp, &["--inline", "--percent-limit", "5"]),
        (
            &fp,
            &[
                "--no-children",
                "-g",
                "none",
                "--sort",
                "dso,srcline",
                "--percent-limit",
                "5",
            ],
        ),
        (
            &dwarf,
            &[
                "--no-children",
                "-g",
                "none",
                "--sort",
                "sym,srcline",
                "--percent-limit",
                "5",
            ],
        ),
    ] {
        let perf = theirs(data, dir, view);
        let ours = ours(data, dir, view);
        if ours != perf {
            keep_for_analysis(dir, view, &ours, &perf);
        }
        assert_eq!(ours, perf, "perf report {}", view.join(" "));
    }
}

/// A view that differs from perf's depends on where this run's samples fell: the program,
/// both recordings and both outputs are kept in `target/report-inline-mismatch/` of the
/// checkout that ran the test, so that the difference can be studied after the run.
fn keep_for_analysis(dir: &Path, view: &[&str], ours: &str, perf: &str) {
    let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/report-inline-mismatch");
    let _ = std::fs::create_dir_all(&keep);
    for name in ["prog", "prog.c", "dwarf.data", "fp.data"] {
        let _ = std::fs::copy(dir.join(name), keep.join(name));
    }
    let text = format!(
        "view: {}\n--- ours\n{ours}\n--- perf\n{perf}",
        view.join(" ")
    );
    let _ = std::fs::write(keep.join("outputs.txt"), text);
    eprintln!("kept the recordings and outputs in {}", keep.display());
}
