//! The README's first command on the shipped sample (`samples/wordfreq.data`): its
//! program's functions are named from the recording's own build-id cache
//! (`wordfreq.data.debug/`) on any machine, with no `~/.debug`, and the table agrees with
//! perf's when perf is installed.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sample() -> PathBuf {
    common::workspace().join("samples/wordfreq.data")
}

/// `perfdata report FILE -g` with an empty home (no `~/.debug`) and no
/// `$PERF_BUILDID_DIR`.
fn report_without_home(file: &Path, home: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["report", file.to_str().unwrap(), "-g"])
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

/// The rows of a `--stdio -n` table in the program's own object: (overhead, samples,
/// symbol).
fn program_rows(table: &str) -> Vec<(String, u64, String)> {
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 6 && f[3] == "wordfreq" && f[4] == "[.]")
                .then(|| (f[0].to_string(), f[1].parse().unwrap(), f[5].to_string()))
        })
        .collect()
}

#[test]
fn shipped_sample_names_its_functions_from_its_own_build_id_cache() {
    let home = tempfile::tempdir().unwrap();
    let text = report_without_home(&sample(), home.path());
    assert!(
        text.starts_with("# Samples: 1295  of event 'cpu-clock:u'\n"),
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
    let bare = report_without_home(&copy, home.path());
    let bare_rows = program_rows(&bare);
    assert!(
        !bare_rows.is_empty() && bare_rows.iter().all(|r| r.2.starts_with("0x")),
        "symbols found without the cache:\n{bare}"
    );
}

#[test]
fn shipped_sample_report_agrees_with_perf() {
    let home = tempfile::tempdir().unwrap();
    let cache = common::workspace().join("samples/wordfreq.data.debug");
    // perf takes its build-id cache from --buildid-dir (it sets, not reads,
    // $PERF_BUILDID_DIR).
    let perf = Command::new("perf")
        .arg("--buildid-dir")
        .arg(&cache)
        .args(["report", "--stdio", "-n", "--no-children", "-g", "none"])
        .args(["--sort", "comm,dso,sym", "-i"])
        .arg(sample())
        .env("HOME", home.path())
        .output();
    let perf = match perf {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap(),
        Ok(out) => {
            eprintln!(
                "skipped: perf report failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        Err(e) => {
            eprintln!("skipped: perf is not installed ({e})");
            return;
        }
    };
    let ours = report_without_home(&sample(), home.path());
    let theirs = program_rows(&perf);
    assert!(!theirs.is_empty(), "perf named nothing:\n{perf}");
    assert_eq!(program_rows(&ours), theirs);
}
