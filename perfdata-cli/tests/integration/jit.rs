//! JIT code named from its jitdump (issue 22): Node.js recorded here with `--perf-prof`
//! (it writes `jit-PID.dump`), then reported without `perf inject --jit`, must give the
//! rows `perf report` gives after `perf inject --jit` — the same `jitted-PID-N.so`
//! objects and function names, the same percentages — wherever the jitdump is: where it
//! was written, beside the recording, or named with `--jitdump`. A jitdump cut short
//! names what comes before the cut and says where it stops; one that is missing, or a
//! recording on another clock than the JIT's, is a note on stderr and the report goes on.
//!
//! Needs `perf` (able to record) and `node` (`.ci/run` installs both); a machine without
//! them skips the live test and says why.

use std::path::Path;
use std::process::Command;

const SCRIPT: &str = r#"
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sieve(n) {
  const a = new Uint8Array(n); let c = 0;
  for (let i = 2; i < n; i++) { if (!a[i]) { c++; for (let j = i * 2; j < n; j += i) a[j] = 1; } }
  return c;
}
function work() { let s = 0; for (let k = 0; k < 10; k++) { s += fib(20) + sieve(100000); } return s; }
const t0 = Date.now(); let r = 0; while (Date.now() - t0 < 800) r += work();
console.log(r);
"#;

/// Why a tool this test needs cannot be used, if it cannot.
fn missing(tool: &str) -> Option<String> {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("{tool} --version: {}", o.status)),
        Err(e) => Some(format!("{tool}: {e}")),
    }
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `perf record ARGS -- node --perf-prof …` in `dir` (where node writes its jitdump).
fn record(dir: &Path, out: &str, args: &[&str]) -> Result<(), String> {
    let (ok, _, err) = run(Command::new("perf")
        .current_dir(dir)
        .args(["record", "-q", "-o", out])
        .args(args)
        .args([
            "--",
            "node",
            "--perf-prof",
            "--interpreted-frames-native-stack",
            "hot.js",
        ]));
    if ok {
        Ok(())
    } else {
        Err(err)
    }
}

/// The rows (lines with a percentage) of a `--no-children --sort dso,sym -g none` report.
fn rows(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .map(|l| l.trim_end().to_string())
        .collect()
}

fn perfdata(args: &[&str]) -> (bool, String, String) {
    run(Command::new(env!("CARGO_BIN_EXE_perfdata")).args(args))
}

const REPORT: &[&str] = &["--no-children", "--sort", "dso,sym", "-g", "none"];

fn perfdata_report(file: &Path, extra: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["report", file.to_str().unwrap()];
    args.extend_from_slice(REPORT);
    args.extend_from_slice(extra);
    let (ok, out, err) = perfdata(&args);
    assert!(ok, "perfdata {args:?}: {err}");
    (rows(&out), err)
}

fn jit_rows(rows: &[String]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.contains("jitted-"))
        .cloned()
        .collect()
}

#[test]
fn node_jit_code_is_named_from_its_jitdump_as_perf_inject_names_it() {
    if let Some(why) = missing("perf").or_else(|| missing("node")) {
        eprintln!("skipped: {why} (`.ci/run` installs perf and nodejs)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    std::fs::write(dir.join("hot.js"), SCRIPT).unwrap();
    if let Err(e) = record(dir, "perf.data", &["-k", "mono", "-g", "-F", "999"]) {
        eprintln!("skipped: perf record cannot record here: {e}");
        return;
    }
    let dumps: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("jit-"))
        .collect();
    assert_eq!(dumps.len(), 1, "node wrote one jitdump: {dumps:?}");
    let jitdump = &dumps[0];
    let data = dir.join("perf.data");

    // The real file reads whole and writes back byte for byte.
    let bytes = std::fs::read(jitdump).unwrap();
    let parsed = perfdata::jitdump::JitDump::parse(&bytes).unwrap();
    assert!(parsed.code_loads().count() > 100, "a few hundred functions");
    assert_eq!(parsed.encode().unwrap(), bytes, "the jitdump round-trips");

    // perf's answer: inject, then report.
    let injected = dir.join("perf.jit.data");
    let (ok, _, err) = run(Command::new("perf").current_dir(dir).args([
        "inject",
        "--jit",
        "-i",
        "perf.data",
        "-o",
        "perf.jit.data",
    ]));
    assert!(ok, "perf inject --jit: {err}");
    let (ok, perf_out, err) = run(Command::new("perf")
        .args(["report", "--stdio", "-i"])
        .arg(&injected)
        .args(REPORT));
    assert!(ok, "perf report: {err}");
    let perf_jit = jit_rows(&rows(&perf_out));
    assert!(
        perf_jit.iter().any(|r| r.contains("JS:*sieve")),
        "perf names the hot function: {perf_jit:#?}"
    );

    // Ours, from the jitdump where node wrote it.
    let (ours, err) = perfdata_report(&data, &[]);
    assert_eq!(jit_rows(&ours), perf_jit, "{err}");
    assert!(!err.contains("note"), "no note when all is found: {err}");
    // perfdata reads the injected file too (its jitted-*.so objects), to the same rows.
    let (on_injected, _) = perfdata_report(&injected, &[]);
    assert_eq!(jit_rows(&on_injected), perf_jit);
    // And the folded stacks from the jitdump are those of the injected file.
    let collapse = |f: &Path, extra: &[&str]| {
        let mut args = vec!["collapse", f.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, out, err) = perfdata(&args);
        assert!(ok, "{err}");
        out
    };
    let folded = collapse(&data, &[]);
    assert!(folded.contains("JS:*fib"), "JIT frames in the stacks");
    assert_eq!(folded, collapse(&injected, &[]));

    // Elsewhere: the recording and its jitdump moved together, then apart.
    let moved = dir.join("moved");
    std::fs::create_dir_all(moved.join("dumps")).unwrap();
    let moved_data = moved.join("perf.data");
    std::fs::rename(&data, &moved_data).unwrap();
    let name = jitdump.file_name().unwrap();
    std::fs::rename(jitdump, moved.join(name)).unwrap();
    let (beside, err) = perfdata_report(&moved_data, &[]);
    assert_eq!(jit_rows(&beside), perf_jit, "beside the recording: {err}");
    let given = moved.join("dumps").join(name);
    std::fs::rename(moved.join(name), &given).unwrap();
    let (named, err) = perfdata_report(&moved_data, &["--jitdump", given.to_str().unwrap()]);
    assert_eq!(jit_rows(&named), perf_jit, "--jitdump: {err}");
    assert_eq!(
        folded,
        collapse(&moved_data, &["--jitdump", given.to_str().unwrap()])
    );

    // Not found: a note, and the report goes on without the names.
    let (without, err) = perfdata_report(&moved_data, &[]);
    assert!(jit_rows(&without).is_empty());
    assert!(
        err.contains("note:") && err.contains("not found") && err.contains("--jitdump"),
        "{err}"
    );
    assert!(
        (rows_total(&without) - rows_total(&ours)).abs() < 1.0,
        "the same samples, other names"
    );

    // Cut short in the record after the hottest function's load: that load still names
    // its code, and the note says where the file stops.
    let hottest = &perf_jit[0];
    let load = parsed
        .records
        .iter()
        .position(|r| match &r.body {
            perfdata::jitdump::types::RecordBody::CodeLoad(c) => {
                let so = format!("jitted-{}-{}.so ", c.pid, c.code_index);
                hottest.contains(&so)
            }
            _ => false,
        })
        .expect("the hottest function's load");
    let upto = perfdata::jitdump::JitDump {
        records: parsed.records[..=load].to_vec(),
        ..parsed.clone()
    }
    .encode()
    .unwrap()
    .len();
    let cut = moved.join("cut.dump");
    std::fs::write(&cut, &bytes[..upto + 5]).unwrap();
    let (partial, err) = perfdata_report(&moved_data, &["--jitdump", cut.to_str().unwrap()]);
    assert!(err.contains("note:") && err.contains("at byte"), "{err}");
    assert!(err.contains("the code loads before it are used"), "{err}");
    // (Its share may differ: code loaded later at its addresses is not in the cut file.)
    let named = |row: &String| row.split_once('%').map(|(_, rest)| rest.trim().to_string());
    assert!(
        jit_rows(&partial)
            .iter()
            .any(|r| named(r) == named(hottest)),
        "{partial:#?}"
    );

    // Another clock than the JIT's: not used (as `perf inject --jit` refuses it), said.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("hot.js"), SCRIPT).unwrap();
    record(&other, "perf.data", &["-g", "-F", "199"]).unwrap();
    let (rows, err) = perfdata_report(&other.join("perf.data"), &[]);
    assert!(jit_rows(&rows).is_empty());
    assert!(err.contains("not used") && err.contains("-k mono"), "{err}");
}

/// The sum of a report's percentages.
fn rows_total(rows: &[String]) -> f64 {
    rows.iter()
        .filter_map(|r| {
            r.split_whitespace()
                .next()?
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
        })
        .sum()
}
