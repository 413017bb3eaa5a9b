//! JIT code named from its jitdump (issue 22): Node.js recorded here with `--perf-prof`
//! (it writes `jit-PID.dump`), then reported without `perf inject --jit`, must give the
//! rows `perf report` gives after `perf inject --jit` — the same `jitted-PID-N.so`
//! objects and function names, the same percentages — wherever the jitdump is: where it
//! was written, beside the recording, or named with `--jitdump`. A jitdump cut short
//! names what comes before the cut and says where it stops; one that is missing, or a
//! recording on another clock than the JIT's, is a note on stderr and the report goes on.
//!
//! Needs `perf` (able to record) and `node` (`.ci/run` installs both); a machine without
//! them skips the live test and says why (CI, with `PERFDATA_TOOLS_REQUIRED=1`, fails
//! instead).

use perfdata_test_support::{require_tools, tools};
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

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A scratch directory holding `hot.js`, or `None` (said why) where perf or Node.js is
/// missing.
fn node_script_dir() -> Option<tempfile::TempDir> {
    if !require_tools(&[tools::PERF_RECORD, tools::NODE]) {
        return None;
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("hot.js"), SCRIPT).unwrap();
    Some(t)
}

/// `perf record ARGS -- node --perf-prof …` in `dir` (where node writes its jitdump).
fn record(dir: &Path, out: &str, args: &[&str]) -> Result<(), String> {
    record_node(dir, out, args, &[])
}

/// [`record`], node given `flags` too.
fn record_node(dir: &Path, out: &str, args: &[&str], flags: &[&str]) -> Result<(), String> {
    let (ok, _, err) = run(Command::new("perf")
        .current_dir(dir)
        .args(["record", "-q", "-o", out])
        .args(args)
        .args([
            "--",
            "node",
            "--perf-prof",
            "--interpreted-frames-native-stack",
        ])
        .args(flags)
        .arg("hot.js"));
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
    let Some(t) = node_script_dir() else { return };
    let dir = t.path();
    record(dir, "perf.data", &["-k", "mono", "-g", "-F", "999"]).unwrap();
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
    let injected = inject_jit(dir);
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

/// The folded stacks of `perfdata collapse FILE EXTRA…`, from `main` down (what is above
/// `main` is named differently by perf and perfdata: libc's inlined start frames), with
/// their sample counts.
fn from_main(folded: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, weight) = line.rsplit_once(' ').unwrap();
        let Some(at) = stack.find(";main;") else {
            continue;
        };
        *out.entry(stack[at + 1..].to_string()).or_insert(0) += weight.parse::<u64>().unwrap();
    }
    out
}

/// `perf inject --jit -i perf.data -o perf.jit.data` in `dir`: the injected recording.
fn inject_jit(dir: &Path) -> std::path::PathBuf {
    let (ok, _, err) = run(Command::new("perf").current_dir(dir).args([
        "inject",
        "--jit",
        "-i",
        "perf.data",
        "-o",
        "perf.jit.data",
    ]));
    assert!(ok, "perf inject --jit: {err}");
    dir.join("perf.jit.data")
}

/// perf script's stacks of `file` folded as `collapse` folds them (`comm;root;…;leaf
/// period`, offsets dropped), from `perf script -F comm,period,ip,sym`.
fn perf_script_folded(file: &Path) -> String {
    let (ok, script, err) = run(Command::new("perf")
        .args(["script", "-F", "comm,period,ip,sym", "-i"])
        .arg(file));
    assert!(ok, "perf script: {err}");
    let mut folded = String::new();
    for sample in script.split("\n\n") {
        let mut lines = sample.lines().filter(|l| !l.trim().is_empty());
        let Some(head) = lines.next() else { continue };
        let (Some(comm), Some(period)) = (
            head.split_whitespace().next(),
            head.split_whitespace().last(),
        ) else {
            continue;
        };
        let mut frames: Vec<&str> = lines
            .filter_map(|l| {
                let sym = l.trim().split_once(' ')?.1;
                Some(sym.rsplit_once("+0x").map_or(sym, |(s, _)| s))
            })
            .collect();
        frames.reverse();
        folded += &format!("{comm};{} {period}\n", frames.join(";"));
    }
    folded
}

/// A jitdump's unwinding tables (JIT_CODE_UNWINDING_INFO) carry `--call-graph dwarf`
/// stacks through the JIT code they describe, as perf carries them after `perf inject
/// --jit`. The producer is `conformance/programs/jit_unwind.c`: a small JIT whose code
/// keeps no frame pointer and calls back into C, so its caller is found only through its
/// `.eh_frame`. Without the tables (the same jitdump, the record left out) every stack
/// through it stops at the JIT frame; with them, ours are perf's, and the same as those
/// of the injected recording (whose `jitted-PID-N.so` holds the tables where perf's
/// `genelf.c` placed them).
#[test]
fn jit_code_is_unwound_through_with_its_jitdump_tables() {
    if !cfg!(target_arch = "x86_64") {
        perfdata_test_support::skip("the test's JIT writes x86_64 code");
        return;
    }
    if !require_tools(&[tools::PERF_RECORD, tools::GCC]) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let source = perfdata_test_support::workspace().join("conformance/programs/jit_unwind.c");
    let (ok, _, err) = run(Command::new("gcc")
        .args(["-O2", "-fomit-frame-pointer", "-o"])
        .arg(dir.join("jit_unwind"))
        .arg(&source));
    assert!(ok, "gcc: {err}");
    let (ok, _, err) = run(Command::new("perf").current_dir(dir).args([
        "record",
        "-q",
        "-k",
        "mono",
        "--call-graph",
        "dwarf",
        "-F",
        "999",
        "-o",
        "perf.data",
        "--",
        "./jit_unwind",
        "500",
    ]));
    assert!(ok, "perf record: {err}");
    let data = dir.join("perf.data");
    let collapse = |f: &Path, extra: &[&str]| {
        let mut args = vec!["collapse", f.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, out, err) = perfdata(&args);
        assert!(ok, "{err}");
        (out, err)
    };

    // Ours: every stack through the JIT code goes on to its callers.
    let (folded, err) = collapse(&data, &[]);
    assert!(!err.contains("note"), "{err}");
    let ours = from_main(&folded);
    let through = |stacks: &std::collections::BTreeMap<String, u64>| -> u64 {
        stacks
            .iter()
            .filter(|(s, _)| s.contains("jit_spin_and_call"))
            .map(|(_, n)| n)
            .sum()
    };
    let jit_samples: u64 = folded
        .lines()
        .filter(|l| l.contains("jit_spin_and_call"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert!(
        jit_samples > 0,
        "samples in or under the JIT code: {folded}"
    );
    assert_eq!(
        through(&ours),
        jit_samples,
        "every stack through the JIT code reaches main: {folded}"
    );
    assert!(
        ours.keys()
            .any(|s| s == "main;run;jit_spin_and_call;leaf_work"),
        "the JIT frame between its caller and its callee: {ours:#?}"
    );

    // Without the tables: the same names, but no stack gets past the JIT frame (its
    // code zeroes rbp, so frame pointers do not help).
    let bytes = std::fs::read(
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("jit-"))
            .expect("the program wrote its jitdump"),
    )
    .unwrap();
    let mut dump = perfdata::jitdump::JitDump::parse(&bytes).unwrap();
    let before = dump.records.len();
    dump.records.retain(|r| {
        !matches!(
            r.body,
            perfdata::jitdump::types::RecordBody::UnwindingInfo(_)
        )
    });
    assert_eq!(dump.records.len(), before - 1, "one unwinding record");
    let stripped = dir.join("stripped.dump");
    std::fs::write(&stripped, dump.encode().unwrap()).unwrap();
    let (without, _) = collapse(&data, &["--jitdump", stripped.to_str().unwrap()]);
    assert!(without.contains("jit_spin_and_call"), "{without}");
    assert_eq!(through(&from_main(&without)), 0, "{without}");

    // perf's: inject, then script (its unwinder reads the jitted-*.so's .eh_frame).
    let injected = inject_jit(dir);
    let script = perf_script_folded(&injected);
    // (Stacks elsewhere may name libc's aliases differently: `clock_gettime@@GLIBC_2.17`
    // is perf's `__GI___clock_gettime`.)
    let jit_only = |m: std::collections::BTreeMap<String, u64>| {
        m.into_iter()
            .filter(|(s, _)| s.contains("jit_spin_and_call"))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let perfs = jit_only(from_main(&script));
    assert_eq!(
        jit_only(ours),
        perfs,
        "the stacks through the JIT code from main down, ours and perf's"
    );
    // And ours from the injected recording: the tables from its ELF objects.
    assert_eq!(collapse(&injected, &[]).0, folded);
}

/// The JS frames of the folded stacks that go through optimized JS functions (`JS:*`): the
/// run of `JS:` frames from the outermost one down, with their weights. (What the JIT's
/// tables decide; the frames under them are the runtime's and libc's, which perf script
/// names otherwise: its inline frames from libc's debug info, other aliases.)
fn through_optimized_js(folded: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, weight) = line.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').skip(1).collect();
        let Some(js) = frames.iter().position(|f| f.starts_with("JS:")) else {
            continue;
        };
        let run: Vec<&str> = frames[js..]
            .iter()
            .copied()
            .take_while(|f| f.starts_with("JS:"))
            .collect();
        if !run.iter().any(|f| f.starts_with("JS:*")) {
            continue;
        }
        *out.entry(run.join(";")).or_insert(0) += weight.parse::<u64>().unwrap();
    }
    out
}

/// Node.js with `--perf-prof-unwinding-info` writes V8's `.eh_frame` for each optimized
/// function into its jitdump (a CIE `zLR` whose LSDA encoding is "omitted", which gimli
/// refuses until rewritten). With them, `--call-graph dwarf` stacks through optimized
/// functions are perf's after `perf inject --jit` — also for samples in a prologue, where
/// frame pointers name the wrong caller — from the jitdump as from the injected objects,
/// and no note says the tables were not used.
#[test]
fn v8s_unwinding_tables_give_perfs_stacks_through_optimized_code() {
    let Some(t) = node_script_dir() else { return };
    let dir = t.path();
    let args = ["-k", "mono", "--call-graph", "dwarf", "-F", "499"];
    record_node(dir, "perf.data", &args, &["--perf-prof-unwinding-info"]).unwrap();
    let injected = inject_jit(dir);
    let perf_folded = perf_script_folded(&injected);
    let perfs = through_optimized_js(&perf_folded);
    assert!(
        !perfs.is_empty(),
        "samples in optimized code: {perf_folded}"
    );

    let (ok, folded, err) = perfdata(&["collapse", dir.join("perf.data").to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(!err.contains("note"), "the tables are used: {err}");
    let ours = through_optimized_js(&folded);
    same_stacks(&ours, &perfs, "from the jitdump");
    // From the injected objects' tables: the same stacks as from the jitdump's.
    let (ok, from_injected, err) = perfdata(&["collapse", injected.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(through_optimized_js(&from_injected), ours);
}

/// Ours and perf's stacks agree on 99% of perf's weight at least (without the tables,
/// frame pointers name a wrong caller for a sample in a prologue: 90 to 98% agree). Not
/// all: now and then perf's unwinder gives up two frames into a deep recursion that ours
/// follows to `main` (the same stack as the samples around it). Fails with the stacks
/// whose weights differ.
fn same_stacks(
    ours: &std::collections::BTreeMap<String, u64>,
    perfs: &std::collections::BTreeMap<String, u64>,
    what: &str,
) {
    let total: u64 = perfs.values().sum();
    let same: u64 = perfs
        .iter()
        .map(|(k, w)| (*w).min(ours.get(k).copied().unwrap_or(0)))
        .sum();
    let differ: Vec<String> = ours
        .keys()
        .chain(perfs.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| ours.get(*k) != perfs.get(*k))
        .map(|k| format!("ours {:?} perf {:?}: {k}", ours.get(k), perfs.get(k)))
        .collect();
    assert!(
        same as f64 >= 0.99 * total as f64,
        "{what}: {same} of {total} agree; differing:\n{}",
        differ.join("\n")
    );
    if !differ.is_empty() {
        eprintln!(
            "{what}: {same} of {total} agree; differing:\n{}",
            differ.join("\n")
        );
    }
}

/// The instruction lines (`PCT : ADDR: TEXT`) of a `perf annotate --stdio` listing.
fn instruction_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            l.split_once(" : ")
                .is_some_and(|(p, _)| p.trim().parse::<f64>().is_ok())
        })
        .map(str::to_string)
        .collect()
}

/// Node.js's hottest JIT function annotated from the jitdump alone (the code bytes of its
/// CODE_LOAD) gives `perf annotate` on the `perf inject --jit` output: every instruction
/// at the same address (the injected object's), with the same text and percentage.
#[test]
fn node_jit_code_is_annotated_from_its_jitdump_as_perf_annotates_the_injected_file() {
    let Some(t) = node_script_dir() else { return };
    let dir = t.path();
    record(dir, "perf.data", &["-k", "mono", "-F", "999"]).unwrap();
    let data = dir.join("perf.data");
    let (ok, json, err) = perfdata(&["annotate", data.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let hottest = v["events"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["dso"].as_str().unwrap().contains("jitted-"))
        .unwrap_or_else(|| panic!("no JIT function annotated: {}", v["skipped"]));
    let name = hottest["symbol"].as_str().unwrap();
    assert!(name.starts_with("JS:"), "{name}");
    let (ok, ours, err) = perfdata(&["annotate", data.to_str().unwrap(), "--no-source", name]);
    assert!(ok, "{err}");
    let injected = inject_jit(dir);
    let (ok, theirs, err) = run(Command::new("perf")
        .args(["annotate", "--stdio", "--no-source", "-i"])
        .arg(&injected)
        .arg(name));
    assert!(ok, "perf annotate: {err}");
    let (ours, theirs) = (instruction_lines(&ours), instruction_lines(&theirs));
    assert!(theirs.len() > 10, "{theirs:#?}");
    assert_eq!(ours, theirs);
}
