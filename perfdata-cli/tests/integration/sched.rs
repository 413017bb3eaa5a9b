//! `perfdata sched`: its views of a small per-task recording equal perf sched's, stored
//! beside it (`tests/data/sched/`, made by `record.sh` with perf 6.1), byte for byte; the
//! JSON twins (snapshots); and the errors of a recording without sched_switch.

use crate::{common, run_perfdata};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/sched")
}

fn recording() -> String {
    data_dir()
        .join("sched-threads.data")
        .to_str()
        .unwrap()
        .to_string()
}

/// The CPUs `perf sched map` sizes its columns by on this machine (sysconf's count).
fn cpus_configured() -> usize {
    std::fs::read_dir("/sys/devices/system/cpu")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix("cpu")
                        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn every_view_equals_perf_sched_stored_output() {
    let views = std::fs::read_to_string(data_dir().join("views.txt")).unwrap();
    let mut compared = 0;
    for line in views.lines().filter(|l| !l.trim().is_empty()) {
        let (name, args) = line.split_once(' ').unwrap();
        let args: Vec<&str> = args.split_whitespace().collect();
        if args[0] == "map" && cpus_configured() != 2 {
            // perf sched map has a column per CPU of the machine reading the recording
            // (sysconf), not of the recording: the stored text was made on 2 CPUs.
            eprintln!(
                "skipping {name}: perf's map here would have {} columns, the stored one 2",
                cpus_configured()
            );
            continue;
        }
        let want = std::fs::read_to_string(data_dir().join(format!("perf-{name}.txt"))).unwrap();
        let rec = recording();
        let mut full = vec!["sched"];
        full.extend(&args);
        full.push(&rec);
        let (code, out, err) = run_perfdata(&full, None);
        assert_eq!(code, Some(0), "{name}: {err}");
        if out != want {
            let n = out
                .lines()
                .zip(want.lines())
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "{name}: line {}: ours {:?}, perf {:?}",
                n + 1,
                out.lines().nth(n),
                want.lines().nth(n)
            );
        }
        compared += 1;
    }
    assert!(compared >= 8, "{compared} views compared");
}

#[test]
fn perf_notes_go_to_standard_error() {
    let (code, out, err) = run_perfdata(&["sched", "timehist", "-s", &recording()], None);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.trim(), "Samples do not have callchains.");
    assert!(out.starts_with("\nRuntime summary\n"), "{out}");
    // -s with -w: perf's usage error.
    let (code, _, err) = run_perfdata(&["sched", "timehist", "-s", "-w", &recording()], None);
    assert_ne!(code, Some(0));
    assert!(err.contains("mutually exclusive"), "{err}");
}

#[test]
fn json_twins() {
    let (code, out, err) = run_perfdata(&["sched", "latency", "--json", &recording()], None);
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("sched_latency_json", out);
    let (code, out, err) = run_perfdata(
        &[
            "sched",
            "timehist",
            "--json",
            "--time",
            "13158.6,13158.62",
            &recording(),
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("sched_timehist_json", out);
    // map's twin: a JSON line per text line, the same task letters.
    let (_, text, _) = run_perfdata(&["sched", "map", &recording()], None);
    let (code, json, err) = run_perfdata(&["sched", "map", "--json", &recording()], None);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(json.lines().count(), text.lines().count());
    for (j, t) in json.lines().zip(text.lines()) {
        let v: serde_json::Value = serde_json::from_str(j).unwrap();
        let short = v["short"].as_str().unwrap();
        assert!(t.contains(&format!("*{short:>2}")), "{t} / {j}");
    }
    // Every interval: run = end - start, delay ≤ wait.
    let (_, out, _) = run_perfdata(&["sched", "timehist", "--json", &recording()], None);
    let mut n = 0;
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let (s, e) = (v["start"].as_u64().unwrap(), v["end"].as_u64().unwrap());
        assert_eq!(v["run"].as_u64().unwrap(), e - s, "{l}");
        n += 1;
    }
    assert!(n > 50, "{n} intervals");
}

#[test]
fn a_recording_without_sched_switch_is_refused_in_perfs_words() {
    let plain = common::fixture_path("plain.data");
    let (code, _, err) = run_perfdata(&["sched", "timehist", plain.to_str().unwrap()], None);
    assert_ne!(code, Some(0));
    assert!(err.contains("No sched_switch events found"), "{err}");
    let (code, _, err) = run_perfdata(&["sched", "latency", "-s", "bogus", &recording()], None);
    assert_ne!(code, Some(0));
    assert!(err.contains("Unknown --sort key: `bogus'"), "{err}");
}

/// The Firefox Profiler export of a recording with sched_switch, read back: per task,
/// an "Off CPU" marker for each interval it waited before and a "Running" one for each
/// interval it ran (`sched timehist --json`'s), and a "CPU N" track with every task
/// each CPU ran.
#[test]
fn firefox_export_marks_the_schedulers_intervals() {
    let rec = common::fixture_path("tracepoint.data");
    let rec = rec.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let (code, _, err) = run_perfdata(
        &[
            "export",
            rec,
            "--to",
            "firefox",
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let (code, json, err) = run_perfdata(&["sched", "timehist", "--json", rec], None);
    assert_eq!(code, Some(0), "{err}");
    let intervals: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Markers by track name or tid: (name, count).
    let mut by_tid: std::collections::HashMap<String, (usize, usize)> = Default::default();
    let mut by_cpu: std::collections::HashMap<String, usize> = Default::default();
    for t in v["threads"].as_array().unwrap() {
        let strings = t["stringArray"].as_array().unwrap();
        let names: Vec<&str> = t["markers"]["name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| strings[n.as_u64().unwrap() as usize].as_str().unwrap())
            .collect();
        let name = t["name"].as_str().unwrap();
        if name.starts_with("CPU ") {
            by_cpu.insert(name.to_string(), names.len());
            continue;
        }
        let tid = match &t["tid"] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let e = by_tid.entry(tid).or_default();
        e.0 += names.iter().filter(|n| **n == "Off CPU").count();
        e.1 += names.iter().filter(|n| **n == "Running").count();
    }
    let mut want_tid: std::collections::HashMap<String, (usize, usize)> = Default::default();
    let mut want_cpu: std::collections::HashMap<String, usize> = Default::default();
    for i in &intervals {
        *want_cpu.entry(format!("CPU {}", i["cpu"])).or_default() += 1;
        if i["pid"] == 0 {
            continue;
        }
        let e = want_tid.entry(i["tid"].to_string()).or_default();
        e.0 += usize::from(i["wait"].as_u64().unwrap() > 0);
        e.1 += 1;
    }
    assert_eq!(by_cpu, want_cpu);
    assert!(want_tid.values().any(|w| w.0 > 0), "no task waited");
    for (tid, want) in &want_tid {
        assert_eq!(by_tid.get(tid), Some(want), "tid {tid}");
    }
    // The schema names the state and the waker.
    let schemas: Vec<&str> = v["meta"]["markerSchema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(schemas.contains(&"SchedOffCpu") && schemas.contains(&"SchedRunning"));
}
