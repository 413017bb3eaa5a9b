//! Check 20: perf's Python scripts run by perfdata (`perfdata script -s`, whose host is
//! `python3 -m perfdata.perf_script`) print what `perf script -s` prints, byte for byte.
//!
//! Each row records the events its scripts read (system calls, futexes, the scheduler,
//! soft interrupts, CPU samples with call chains) around a program of
//! `conformance/programs/`, then runs each script under perf and under perfdata with
//! the same arguments, in a directory of its own and with its own `/dev/shm` (a mount
//! namespace: `event_analyzing_sample.py` writes `/dev/shm/perf.db`), `PYTHONHASHSEED=0`
//! for both (perf embeds the same Python 3: a script's set order must not differ by
//! chance). Standard output must be equal and the two must agree on success. The
//! scripts are perf's own (`$PERF_EXEC_PATH/scripts/python/`) and ours,
//! `perfdata-python/tests/scripts/every_argument.py`, which prints every argument of
//! every handler call.
//!
//! Skipped when the perfdata Python package is not importable by `python3`, when the
//! system perf has no Python scripting or no scripts, or without root (system-wide
//! tracepoints).

use crate::checks::Outcome;
use crate::programs::{self, Program};
use crate::record::perf;
use crate::report::Row;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The group name `--only` selects the section by.
pub const GROUP: &str = "pyscript";

/// One row: a recording and the scripts run over it.
pub struct PyScenario {
    pub name: &'static str,
    /// `perf record` arguments before `--`.
    pub record: &'static [&'static str],
    /// The program recorded (`None`: `sleep 0.3`, system-wide).
    pub program: Option<&'static Program>,
    /// Scripts (perf's by file name; `every_argument.py` is ours) and their arguments.
    pub scripts: &'static [(&'static str, &'static [&'static str])],
}

const EVERY: (&str, &[&str]) = ("every_argument.py", &["an-arg", "-x"]);

pub static SCENARIOS: &[PyScenario] = &[
    PyScenario {
        name: "py-syscalls",
        record: &[
            "-e",
            "raw_syscalls:sys_enter",
            "-e",
            "raw_syscalls:sys_exit",
            "-e",
            "syscalls:sys_enter_openat",
            "-e",
            "syscalls:sys_exit_openat",
            "-e",
            "sched:sched_switch",
            "-e",
            "sched:sched_process_exec",
            "-e",
            "irq:softirq_entry",
            "-e",
            "cpu-clock",
            "-c",
            "100000",
            "-g",
        ],
        program: Some(&programs::SCHED_PIPE),
        scripts: &[
            ("syscall-counts.py", &[]),
            ("syscall-counts-by-pid.py", &[]),
            ("failed-syscalls-by-pid.py", &[]),
            ("check-perf-trace.py", &[]),
            ("stackcollapse.py", &[]),
            ("event_analyzing_sample.py", &[]),
            ("flamegraph.py", &["--", "-f", "json", "-o", "-"]),
            EVERY,
        ],
    },
    PyScenario {
        name: "py-system-wide",
        record: &[
            "-a",
            "-e",
            "raw_syscalls:sys_enter",
            "-e",
            "raw_syscalls:sys_exit",
            "-e",
            "irq:softirq_entry",
            "-e",
            "sched:sched_wakeup",
        ],
        program: None,
        scripts: &[
            ("syscall-counts.py", &[]),
            ("syscall-counts-by-pid.py", &[]),
            ("failed-syscalls-by-pid.py", &[]),
            ("check-perf-trace.py", &[]),
            EVERY,
        ],
    },
    PyScenario {
        name: "py-futex",
        record: &[
            "-e",
            "syscalls:sys_enter_futex",
            "-e",
            "syscalls:sys_exit_futex",
        ],
        program: Some(&programs::SCHED_PINGPONG),
        scripts: &[
            ("futex-contention.py", &[]),
            ("syscall-counts.py", &[]),
            EVERY,
        ],
    },
    PyScenario {
        name: "py-sched",
        record: &["-e", "sched:*", "-g"],
        program: Some(&programs::SCHED_THREADS),
        scripts: &[("flamegraph.py", &["--", "-f", "json", "-o", "-"]), EVERY],
    },
    PyScenario {
        name: "py-cpu",
        record: &["-g", "-F", "4999"],
        program: Some(&programs::SCHED_PIPE),
        scripts: &[
            ("stackcollapse.py", &[]),
            ("event_analyzing_sample.py", &[]),
            ("flamegraph.py", &["--", "-f", "json", "-o", "-"]),
            EVERY,
        ],
    },
];

/// Why the section cannot run here, if it cannot.
fn unavailable(dir: &Path) -> Option<String> {
    let ours = Command::new("python3")
        .args(["-c", "import perfdata.perf_script"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !ours.is_ok_and(|s| s.success()) {
        return Some(
            "python3 cannot import perfdata.perf_script (install the perfdata wheel)".into(),
        );
    }
    if exec_path().is_none() {
        return Some("perf's Python scripts are not installed (no scripts/python)".into());
    }
    let listed = perf(dir).args(["script", "-l"]).output();
    match listed {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("syscall-counts") => None,
        _ => Some("the system perf lists no Python scripts (built without Python)".into()),
    }
}

/// perf's exec path: where its `scripts/python` are.
fn exec_path() -> Option<PathBuf> {
    ["/usr/lib/perf-core", "/usr/libexec/perf-core"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.join("scripts/python/syscall-counts.py").is_file())
}

fn record(s: &PyScenario, dir: &Path) -> Result<PathBuf, String> {
    let out = dir.join(format!("{}.data", s.name));
    let mut cmd = perf(dir);
    cmd.args(["record", "-q", "-o"]).arg(&out).args(s.record);
    match s.program {
        Some(p) => {
            let exe = programs::build(p, dir)?;
            cmd.arg("--").arg(exe);
        }
        None => {
            cmd.args(["--", "sleep", "0.3"]);
        }
    }
    let r = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running perf: {e}"))?;
    if !r.status.success() {
        return Err(format!(
            "perf record failed: {}",
            String::from_utf8_lossy(&r.stderr).trim()
        ));
    }
    Ok(out)
}

/// One run of a script: its standard output and whether it succeeded.
struct Ran {
    stdout: Vec<u8>,
    ok: bool,
    stderr: String,
}

/// Runs `argv` in a directory of its own with a private `/dev/shm`.
fn run_isolated(dir: &Path, label: &str, argv: &[String]) -> Result<Ran, String> {
    let cwd = dir.join(label);
    std::fs::create_dir_all(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let o = Command::new("unshare")
        .arg("-m")
        .args([
            "sh",
            "-c",
            "mount -t tmpfs none /dev/shm && exec \"$@\"",
            "sh",
        ])
        .args(argv)
        .current_dir(&cwd)
        .env("PYTHONHASHSEED", "0")
        .env("PERF_CONFIG", "/dev/null")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("PERF_BUILDID_DIR", dir.join(".buildid"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", argv[0]))?;
    Ok(Ran {
        stdout: o.stdout,
        ok: o.status.success(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

/// Check 20 on one recording: every script of the row.
pub fn check(path: &Path, dir: &Path, s: &PyScenario, workspace: &Path) -> Outcome {
    let Some(exec) = exec_path() else {
        return Outcome::Skip("perf's Python scripts are not installed".into());
    };
    let mut fails = vec![];
    let mut passed = vec![];
    for (i, (script, args)) in s.scripts.iter().enumerate() {
        let file = if *script == EVERY.0 {
            workspace.join("perfdata-python/tests/scripts").join(script)
        } else {
            exec.join("scripts/python").join(script)
        };
        let file = file.display().to_string();
        let input = path.display().to_string();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let mut theirs = vec!["perf".into(), "script".into(), "-i".into(), input.clone()];
        theirs.extend(["-s".into(), file.clone()]);
        theirs.extend(args.iter().cloned());
        let mut ours = vec!["python3".into(), "-m".into(), "perfdata.perf_script".into()];
        ours.extend(["-i".into(), input, file]);
        ours.extend(args.iter().cloned());
        let (t, o) = match (
            run_isolated(dir, &format!("{}-{i}-perf", s.name), &theirs),
            run_isolated(dir, &format!("{}-{i}-ours", s.name), &ours),
        ) {
            (Ok(t), Ok(o)) => (t, o),
            (Err(e), _) | (_, Err(e)) => {
                fails.push(format!("{script}: {e}"));
                continue;
            }
        };
        if t.stdout.is_empty() && t.ok {
            fails.push(format!(
                "{script}: perf printed nothing: {}",
                t.stderr.trim()
            ));
        } else if t.stdout != o.stdout {
            fails.push(format!(
                "{script}: {}",
                first_difference(
                    &String::from_utf8_lossy(&t.stdout),
                    &String::from_utf8_lossy(&o.stdout)
                )
            ));
        } else if t.ok != o.ok {
            fails.push(format!(
                "{script}: perf {} and perfdata {}: {}",
                if t.ok { "succeeded" } else { "failed" },
                if o.ok { "succeeded" } else { "failed" },
                o.stderr.trim()
            ));
        } else {
            passed.push(*script);
        }
    }
    if fails.is_empty() {
        Outcome::Pass(format!(
            "{} scripts print perf's bytes: {}",
            passed.len(),
            passed.join(", ")
        ))
    } else {
        Outcome::Fail(fails)
    }
}

/// Where two texts first differ, as `line N: perf "…" / ours "…"`.
fn first_difference(theirs: &str, mine: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), mine.lines().collect());
    let cut = |s: &str| s.chars().take(160).collect::<String>();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        if x != y {
            return format!(
                "line {}: perf {:?} / ours {:?} ({} / {} lines)",
                i + 1,
                x.map(cut),
                y.map(cut),
                a.len(),
                b.len()
            );
        }
    }
    "the texts differ in their line ends".into()
}

/// The section's rows (those `only` selects; all with `pyscript`).
///
/// As the other live rows: a row that `retry` says is worth it is recorded again once,
/// and fails only if the second recording fails too; a row that passed on its second
/// recording is added to `flaky` with its first recording's failures. A sample can land
/// where perf 6.1 names code by chance: on a PLT entry its lookup among overlapping
/// symbols (the zero-size `_init` before `.plt`, extended over it before the PLT's
/// symbols are added) depends on the shape of its symbol tree (docs/perf-compat.md).
pub fn run(
    dir: &Path,
    only: &[String],
    workspace: &Path,
    retry: &dyn Fn(&Row) -> bool,
    flaky: &mut Vec<Row>,
) -> Vec<Row> {
    let wanted: Vec<&PyScenario> = SCENARIOS
        .iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| o == GROUP || o == s.name))
        .collect();
    let why = unavailable(dir);
    let mut rows = vec![];
    for s in wanted {
        let t = std::time::Instant::now();
        let recorded = || {
            let mut row = Row::new(s.name);
            let o = match &why {
                Some(why) => Outcome::Skip(why.clone()),
                None => match record(s, dir) {
                    Ok(p) => check(&p, dir, s, workspace),
                    Err(why) => Outcome::Skip(why),
                },
            };
            row.set("pyscript", o);
            row
        };
        let mut row = recorded();
        if retry(&row) {
            eprintln!("  {:<22} failed: recording it again", s.name);
            let again = recorded();
            if retry(&again) {
                row.notes.push(crate::report::FAILED_TWICE.into());
            } else {
                flaky.push(std::mem::replace(&mut row, again));
            }
        }
        eprintln!("  {:<22} {:>5} ms", s.name, t.elapsed().as_millis());
        rows.push(row);
    }
    rows
}
