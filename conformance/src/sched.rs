//! Check 17: `perfdata sched` against `perf sched`, byte for byte. Each scenario is
//! recorded with `perf sched record` (or `perf record -e 'sched:*'`) around a program
//! of `conformance/programs/sched_workloads.c`; then every view — `timehist` (default,
//! `-s`, `-S`, `-w`, `-M`, `-V`, `-n`, `--state`, `-I`, `-p`, `-t`, `-C`, `--time`, call
//! chains), `latency` (default, each sort key, `-p`, `-C`) and `map` (default,
//! `--compact`, `--cpus`) — is printed by perf and by the library, and the texts must be
//! equal. The system-wide row (another program running while `sleep 1` is recorded) is
//! compared on the lines of the program's own tasks only: the other processes of the
//! machine come and go between perf's run and ours only in what perf resolves of them.
//!
//! `--only sched` runs the section alone (or `--only sched-NAME` one row).

use crate::checks::Outcome;
use crate::programs::{self, Program};
use crate::record::perf;
use crate::report::Row;
use perfdata_analysis::analyses::sched::latency::{self, LatencyKey, LatencyOptions};
use perfdata_analysis::analyses::sched::map::{self, MapOptions};
use perfdata_analysis::analyses::sched::timehist::{self, TimehistOptions};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::Path;
use std::process::Stdio;

/// The group name `--only` selects the section by.
pub const GROUP: &str = "sched";

/// How a scenario is recorded.
#[derive(Debug, Clone, Copy)]
pub enum How {
    /// `perf sched record ARGS -- ./PROGRAM`.
    SchedRecord(&'static [&'static str]),
    /// `perf record ARGS -- ./PROGRAM`.
    Record(&'static [&'static str]),
    /// `perf sched record -- sleep 1` while PROGRAM runs beside it (in a loop).
    SystemWide,
}

/// One row of the section.
#[derive(Debug, Clone, Copy)]
pub struct SchedScenario {
    pub name: &'static str,
    pub how: How,
    pub program: &'static Program,
    pub about: &'static str,
}

pub static SCENARIOS: &[SchedScenario] = &[
    SchedScenario {
        name: "sched-pingpong",
        how: How::SchedRecord(&[]),
        program: &programs::SCHED_PINGPONG,
        about: "two threads handing a mutex back and forth",
    },
    SchedScenario {
        name: "sched-pipe",
        how: How::SchedRecord(&[]),
        program: &programs::SCHED_PIPE,
        about: "a producer and a consumer process over a pipe",
    },
    SchedScenario {
        name: "sched-threads",
        how: How::SchedRecord(&[]),
        program: &programs::SCHED_THREADS,
        about: "50 short-lived threads",
    },
    SchedScenario {
        name: "sched-pinned",
        how: How::SchedRecord(&[]),
        program: &programs::SCHED_PINNED,
        about: "a task pinned to CPU 0, then moved to CPU 1 (migrations)",
    },
    SchedScenario {
        name: "sched-sleep",
        how: How::SchedRecord(&[]),
        program: &programs::SCHED_SLEEP,
        about: "usleep and nanosleep in a loop",
    },
    SchedScenario {
        name: "sched-callchains",
        how: How::SchedRecord(&["-g"]),
        program: &programs::SCHED_PINGPONG,
        about: "perf sched record -g: call chains at each switch",
    },
    SchedScenario {
        name: "sched-dwarf",
        how: How::Record(&["-e", "sched:*", "--call-graph", "dwarf"]),
        program: &programs::SCHED_PINGPONG,
        about: "perf record -e 'sched:*' --call-graph dwarf",
    },
    SchedScenario {
        name: "sched-system-wide",
        how: How::SystemWide,
        program: &programs::SCHED_PIPE,
        about: "one system-wide second with other work running (compared on the program's tasks)",
    },
];

/// One view: a label (no spaces: a known-failure tag), perf sched's arguments.
struct View {
    label: String,
    sub: &'static str,
    args: Vec<String>,
}

fn views(pids: &str, time: Option<String>) -> Vec<View> {
    let mut v = vec![];
    let mut add = |sub: &'static str, args: &[&str]| {
        let label = std::iter::once(sub.to_string())
            .chain(
                args.iter()
                    .map(|a| a.trim_start_matches('-').replace(',', "+")),
            )
            .collect::<Vec<_>>()
            .join("-");
        v.push(View {
            label,
            sub,
            args: args.iter().map(|a| a.to_string()).collect(),
        });
    };
    for a in [
        &[][..],
        &["-s"],
        &["-S"],
        &["-w"],
        &["-M"],
        &["-V"],
        &["-n"],
        &["--state"],
        &["-S", "--state"],
        &["-w", "-n", "-M", "-V"],
        &["-I", "-S"],
        &["-S", "-C", "1"],
        &["--max-stack", "3"],
        &["-S", "-p", pids],
        &["-w", "-t", pids],
    ] {
        add("timehist", a);
    }
    if let Some(t) = &time {
        add("timehist", &["-S", "--time", t]);
    }
    add("latency", &[]);
    for k in ["runtime", "switch", "avg", "max", "pid"] {
        add("latency", &["-s", k]);
    }
    add("latency", &["-p"]);
    add("latency", &["-C", "0"]);
    add("map", &[]);
    add("map", &["--compact"]);
    add("map", &["--cpus", "1"]);
    v
}

fn parse_list(o: &str, t: &str) -> Result<Vec<i64>, String> {
    perfdata_analysis::analyses::sched::parse_list(o, t).map_err(|e| e.to_string())
}

/// Our text of a view, through the library as the CLI calls it.
fn ours(path: &Path, view: &View) -> Result<String, String> {
    let recording = perfdata::Recording::open(path).map_err(|e| e.to_string())?;
    let mut analyzer =
        Analyzer::open(&recording, &AnalyzerOptions::default()).map_err(|e| e.to_string())?;
    let mut out: Vec<u8> = vec![];
    let a = &view.args;
    let has = |f: &str| a.iter().any(|x| x == f);
    let value = |f: &str| {
        a.iter()
            .position(|x| x == f)
            .and_then(|i| a.get(i + 1))
            .cloned()
    };
    match view.sub {
        "timehist" => {
            let o = TimehistOptions {
                summary_only: has("-s"),
                with_summary: has("-S"),
                wakeups: has("-w"),
                migrations: has("-M"),
                cpu_visual: has("-V"),
                next: has("-n"),
                state: has("--state"),
                idle_hist: has("-I"),
                pids: value("-p").map(|p| parse_list("-p", &p)).transpose()?,
                tids: value("-t").map(|p| parse_list("-t", &p)).transpose()?,
                cpus: value("-C").map(|p| parse_list("-C", &p)).transpose()?,
                time: match value("--time") {
                    Some(t) => timehist::parse_time(&t).map_err(|e| e.to_string())?,
                    None => (0, 0),
                },
                call_graph: true,
                max_stack: value("--max-stack").map_or(5, |m| m.parse().unwrap_or(5)),
            };
            timehist::timehist(&mut analyzer, &o, &mut out, None).map_err(|e| e.to_string())?;
        }
        "latency" => {
            let o = LatencyOptions {
                sort: match value("-s") {
                    Some(s) => LatencyKey::parse_list(&s).map_err(|e| e.to_string())?,
                    None => LatencyOptions::default().sort,
                },
                per_pid: has("-p"),
                cpu: value("-C").and_then(|c| c.parse().ok()),
            };
            let l = latency::latency(&mut analyzer, &o).map_err(|e| e.to_string())?;
            latency::render(&l, &mut out).map_err(|e| e.to_string())?;
        }
        _ => {
            let o = MapOptions {
                compact: has("--compact"),
                cpus: value("--cpus")
                    .map(|p| parse_list("--cpus", &p))
                    .transpose()?,
                cpus_configured: cpus_configured(),
            };
            map::map(&mut analyzer, &o, &mut out, None).map_err(|e| e.to_string())?;
        }
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// `sysconf(_SC_NPROCESSORS_CONF)`, as perf sched map sizes its columns: sysfs's `cpuN`.
fn cpus_configured() -> Option<u32> {
    let n = std::fs::read_dir("/sys/devices/system/cpu")
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("cpu")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n as u32)
}

fn perf_view(path: &Path, dir: &Path, view: &View) -> Result<String, String> {
    let out = perf(dir)
        .arg("sched")
        .arg(view.sub)
        .arg("-i")
        .arg(path)
        .args(&view.args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running perf sched: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "perf sched {} failed: {}",
            view.sub,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The first line where `a` and `b` differ, with both versions.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let n = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    format!(
        "line {}: perf {:?}, ours {:?} ({} and {} lines)",
        n + 1,
        la.get(n).copied().unwrap_or("<end>"),
        lb.get(n).copied().unwrap_or("<end>"),
        la.len(),
        lb.len()
    )
}

/// Records a scenario into `dir`; the recording's path.
fn record(s: &SchedScenario, dir: &Path) -> Result<std::path::PathBuf, String> {
    let exe = programs::build(s.program, dir)?;
    let out = dir.join(format!("{}.data", s.name));
    let mut cmd = perf(dir);
    let mut beside = None;
    match s.how {
        How::SchedRecord(args) => {
            cmd.args(["sched", "record", "-o"])
                .arg(&out)
                .args(args)
                .arg("--")
                .arg(&exe);
        }
        How::Record(args) => {
            cmd.args(["record", "-o"])
                .arg(&out)
                .args(args)
                .arg("--")
                .arg(&exe);
        }
        How::SystemWide => {
            // The program in a loop beside the recording: other work running.
            let script = format!(
                "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do {}; done",
                exe.display()
            );
            beside = Some(
                std::process::Command::new("sh")
                    .args(["-c", &script])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .spawn()
                    .map_err(|e| format!("starting the program: {e}"))?,
            );
            cmd.args(["sched", "record", "-o"])
                .arg(&out)
                .args(["--", "sleep", "1"]);
        }
    }
    let r = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running perf: {e}"));
    if let Some(mut b) = beside {
        let _ = b.wait();
    }
    let r = r?;
    if !r.status.success() {
        return Err(format!(
            "perf record failed: {}",
            String::from_utf8_lossy(&r.stderr).trim()
        ));
    }
    Ok(out)
}

/// The pids of the program's tasks (for `-p`, `-t`) and a time window in the middle of
/// the recording (for `--time`), from perf script.
fn facts(path: &Path, dir: &Path, program: &str) -> (String, Option<String>) {
    let out = perf(dir)
        .args(["script", "-F", "comm,pid,time", "-i"])
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut pids: Vec<String> = vec![];
    let mut times: Vec<String> = vec![];
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 {
            continue;
        }
        let time = f[f.len() - 1].trim_end_matches(':').to_string();
        times.push(time);
        if f[0] == program && !pids.iter().any(|p| p == f[1]) {
            pids.push(f[1].to_string());
        }
    }
    let window = (times.len() >= 4)
        .then(|| format!("{},{}", times[times.len() / 4], times[times.len() / 2]));
    let pids = if pids.is_empty() {
        "1".to_string()
    } else {
        pids.join(",")
    };
    (pids, window)
}

/// Check 17 on one recording: every view, byte for byte (the system-wide row: on the
/// lines naming the program).
pub fn check(path: &Path, dir: &Path, s: &SchedScenario) -> Outcome {
    let (pids, window) = facts(path, dir, s.program.name);
    let only_program = matches!(s.how, How::SystemWide);
    let mut fails = vec![];
    let mut passed = 0;
    let views = views(&pids, window);
    for v in &views {
        let theirs = match perf_view(path, dir, v) {
            Ok(t) => t,
            Err(e) => {
                fails.push(format!("{}: {e}", v.label));
                continue;
            }
        };
        let mine = match ours(path, v) {
            Ok(t) => t,
            Err(e) => {
                fails.push(format!("{}: ours failed: {e}", v.label));
                continue;
            }
        };
        if only_program && v.label == "timehist" && !theirs.contains(s.program.name) {
            fails.push(format!(
                "{}: perf shows no task of {} (the recording missed the program)",
                v.label, s.program.name
            ));
            continue;
        }
        let (theirs, mine) = if only_program {
            let keep = |t: &str| {
                t.lines()
                    .filter(|l| l.contains(s.program.name))
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
            };
            (keep(&theirs), keep(&mine))
        } else {
            (theirs, mine)
        };
        if theirs == mine {
            passed += 1;
        } else {
            fails.push(format!("{}: {}", v.label, first_difference(&theirs, &mine)));
        }
    }
    if fails.is_empty() {
        Outcome::Pass(format!("{passed} views equal perf sched's"))
    } else {
        fails.push(format!("({} of {} views differ)", fails.len(), views.len()));
        Outcome::Fail(fails)
    }
}

/// The section's rows (those `only` selects; all with `sched`).
pub fn run(dir: &Path, only: &[String]) -> Vec<Row> {
    let mut rows = vec![];
    for s in SCENARIOS {
        if !only.is_empty() && !only.iter().any(|o| o == GROUP || o == s.name) {
            continue;
        }
        let t = std::time::Instant::now();
        let mut row = Row::new(s.name);
        match record(s, dir) {
            Ok(p) => row.set("sched", check(&p, dir, s)),
            Err(why) => row.set("sched", Outcome::Skip(why)),
        }
        eprintln!("  {:<22} {:>5} ms", s.name, t.elapsed().as_millis());
        rows.push(row);
    }
    rows
}
