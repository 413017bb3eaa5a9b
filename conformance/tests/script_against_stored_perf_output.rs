//! `perfdata script` against the `perf script` text stored beside every committed fixture
//! (`conformance/fixtures/perf-output/*.script.txt`, written by `cargo xtask conformance
//! --refresh-oracle` with the arguments on its first line): byte for byte, on a machine
//! without perf. The live check (17) compares the whole option matrix on fresh
//! recordings.

use conformance::script::{options_of, ours};
use perfdata_test_support::workspace;
use std::path::Path;

/// The stored texts of kind `ext` (`script`, `trace`), with their fixture and arguments.
fn stored(ext: &str) -> Vec<(std::path::PathBuf, Vec<String>, Vec<u8>)> {
    let root = workspace();
    let out = conformance::oracle_dir(&root);
    let mut v = vec![];
    for f in conformance::fixtures(&root).unwrap() {
        let stem = conformance::fixture_stem(&f);
        let Ok(text) = std::fs::read(out.join(format!("{stem}.{ext}.txt"))) else {
            continue;
        };
        let nl = text.iter().position(|&b| b == b'\n').unwrap();
        let mark = String::from_utf8_lossy(&text[..nl]).into_owned();
        let args = mark
            .strip_prefix("#conformance: perf script ")
            .expect("a stored script text starts with its arguments")
            .split(' ')
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
        v.push((f, args, text[nl + 1..].to_vec()));
    }
    v
}

fn check(ext: &str) -> usize {
    let mut compared = 0;
    let mut failed = vec![];
    for (fixture, args, theirs) in stored(ext) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let opts = options_of(&args).unwrap();
        let ours = ours(&fixture, Path::new("/nonexistent"), &opts).unwrap();
        compared += 1;
        if ours != theirs {
            let t = String::from_utf8_lossy(&theirs);
            let o = String::from_utf8_lossy(&ours);
            let at = t
                .lines()
                .zip(o.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(t.lines().count().min(o.lines().count()));
            failed.push(format!(
                "{} [{}]: line {}: perf {:?}, ours {:?}",
                fixture.display(),
                args.join(" "),
                at + 1,
                t.lines().nth(at),
                o.lines().nth(at)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    compared
}

#[test]
fn script_equals_the_stored_perf_script_text() {
    let n = check("script");
    assert!(n >= 20, "only {n} stored texts compared");
}

/// The tracepoint fixtures' stored `perf script -F …,trace` text: each sample's trace
/// field through its format's print fmt.
#[test]
fn script_equals_the_stored_perf_trace_text() {
    let n = check("trace");
    assert!(n >= 2, "only {n} stored trace texts compared");
}
