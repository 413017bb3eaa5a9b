//! `perfdata annotate` with source lines (perf's default) and `-l`, on a program built
//! here with `gcc -O2 -g` and recorded with `perf record`: the text equals `perf annotate
//! --stdio` (and `-l`) for the hot function, its source found again through
//! `--prefix`/`--prefix-strip` once moved, and left out when it is gone. Needs `perf`
//! (able to record) and `gcc`; skipped, saying so, without them.

use perfdata_test_support::{require_tools, tools};
use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"#include <stdio.h>
static inline __attribute__((always_inline)) unsigned long mix(unsigned long s, unsigned long i)
{
    return s * 31 + (i ^ (s >> 7));
}

__attribute__((noipa)) unsigned long leaf(unsigned long n, unsigned long seed)
{
    unsigned long s = seed;
    for (unsigned long i = 0; i < n; i++)
        s = mix(s, i);
    return s;
}

int main(void)
{
    unsigned long r = 0;
    for (int k = 0; k < 3000; k++)
        r += leaf(100000 + k, k);
    printf("%lu\n", r);
    return 0;
}
"#;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn ours(data: &Path, home: &Path, args: &[&str]) -> String {
    run(Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["annotate", "--stdio"])
        .arg(data)
        .args(args)
        .env("HOME", home))
}

#[test]
fn source_lines_and_the_line_summary_as_perf_prints_them() {
    if !require_tools(&[tools::PERF_RECORD, tools::GCC]) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("build/src");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let prog = dir.join("prog");
    let built = Command::new("gcc")
        .args(["-O2", "-g", "-o"])
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success(), "gcc: {built}");
    let data = t.path().join("perf.data");
    run(Command::new("perf")
        .args(["record", "-q", "-F", "2000", "-o"])
        .arg(&data)
        .arg(&prog)
        .env("HOME", t.path()));

    for args in [&[][..], &["-l"][..]] {
        let theirs = run(Command::new("perf")
            .args(["annotate", "--stdio", "-i"])
            .arg(&data)
            .args(args)
            .arg("leaf")
            .env("HOME", t.path()));
        let mine = ours(&data, t.path(), &[args, &["leaf"][..]].concat());
        assert_eq!(mine, theirs, "perfdata annotate {args:?} leaf");
    }
    let with = ours(&data, t.path(), &["leaf"]);
    assert!(with.contains("s = mix(s, i);"), "{with}");
    let summary = ours(&data, t.path(), &["-l", "leaf"]);
    assert!(summary.contains("Sorted summary for file "), "{summary}");
    assert!(summary.contains(" prog.c:4\n"), "{summary}");

    // Per source line: the text while the file is there, the numbers alone once gone.
    let by_line = ours(&data, t.path(), &["--by-line", "leaf"]);
    assert!(
        by_line.starts_with("Source lines of leaf in prog "),
        "{by_line}"
    );
    const INNER: &str = "return s * 31 + (i ^ (s >> 7));";
    assert!(by_line.contains(INNER), "{by_line}");
    assert!(by_line.contains("[inlined: mix]"), "{by_line}");
    let gone_lines = |text: &str| text.contains("prog.c (not found: line numbers only)\n");
    assert!(!gone_lines(&by_line), "{by_line}");

    // Moved: found through --prefix and --prefix-strip (the DWARF says /…/build/src).
    let moved = t.path().join("elsewhere");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::rename(&src, moved.join("prog.c")).unwrap();
    let without = ours(&data, t.path(), &["leaf"]);
    let no_source = ours(&data, t.path(), &["--no-source", "leaf"]);
    assert_eq!(without, no_source, "a missing file's lines are left out");
    let depth = dir.components().count() - 1;
    let prefixed = ours(
        &data,
        t.path(),
        &[
            "--prefix",
            moved.to_str().unwrap(),
            "--prefix-strip",
            &depth.to_string(),
            "leaf",
        ],
    );
    assert!(prefixed.contains("s = mix(s, i);"), "{prefixed}");
    let by_line_gone = ours(&data, t.path(), &["--by-line", "leaf"]);
    assert!(gone_lines(&by_line_gone), "{by_line_gone}");
    assert!(!by_line_gone.contains(INNER), "{by_line_gone}");
    let by_line_prefixed = ours(
        &data,
        t.path(),
        &[
            "--by-line",
            "--prefix",
            moved.to_str().unwrap(),
            "--prefix-strip",
            &depth.to_string(),
            "leaf",
        ],
    );
    assert!(by_line_prefixed.contains(INNER), "{by_line_prefixed}");
}
