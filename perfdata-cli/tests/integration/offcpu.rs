//! `perfdata offcpu`: the table of a recording with switch records and of one with
//! sched_switch samples (snapshots), the sums the JSON and folded outputs must keep, and
//! the errors of recordings without switches.

use crate::{common, run_perfdata};

fn fixture(name: &str) -> String {
    common::fixture_path(name).to_str().unwrap().to_string()
}

#[test]
fn off_cpu_tables_of_both_sources() {
    let (code, out, err) = run_perfdata(
        &["offcpu", &fixture("switch-events.data"), "--no-symbols"],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("offcpu_switch_records", out);
    let (code, out, err) = run_perfdata(
        &[
            "offcpu",
            &fixture("tracepoint.data"),
            "--no-symbols",
            "--folded",
            "--tid",
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("offcpu_sched_switch_folded", out);
}

/// The fixtures with switches, and the source each is read with.
const SWITCH_FIXTURES: [(&str, &str); 4] = [
    ("switch-events.data", "switch"),
    ("switch-cpu-wide.data", "switch"),
    ("tracepoint.data", "sched-switch"),
    ("pipe-tracepoint.pipe.data", "auto"),
];

#[test]
fn threads_stacks_and_folded_stacks_sum_to_the_same_time() {
    for (f, source) in SWITCH_FIXTURES {
        let f = fixture(f);
        let (code, out, err) = run_perfdata(
            &["offcpu", &f, "--no-symbols", "--json", "--source", source],
            None,
        );
        assert_eq!(code, Some(0), "{f}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let total = v["total_ns"].as_u64().unwrap();
        assert!(total > 0, "{f}");
        let threads = v["threads"].as_array().unwrap();
        let sum = |items: &[serde_json::Value], tid: Option<i64>| -> u64 {
            items
                .iter()
                .filter(|t| tid.is_none_or(|tid| t["tid"].as_i64() == Some(tid)))
                .map(|t| t["off_cpu_ns"].as_u64().unwrap())
                .sum()
        };
        assert_eq!(sum(threads, None), total, "{f}");
        let stacks = v["stacks"].as_array().unwrap();
        for t in threads {
            let tid = t["tid"].as_i64().unwrap();
            assert_eq!(
                sum(stacks, Some(tid)),
                t["off_cpu_ns"].as_u64().unwrap(),
                "{f} {tid}"
            );
            assert!(t["preempted_ns"].as_u64() <= t["off_cpu_ns"].as_u64());
            assert!(t["last_interval_ns"].as_u64() <= t["off_cpu_ns"].as_u64());
        }
        let (code, out, err) = run_perfdata(
            &["offcpu", &f, "--no-symbols", "--folded", "--source", source],
            None,
        );
        assert_eq!(code, Some(0), "{err}");
        let folded: u64 = out
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(folded, total, "{f}");
    }
}

/// `report --off-cpu` and `collapse --off-cpu` weigh the samples switch-outs took
/// their stacks from: per thread, what `offcpu` counts, less (switch records) what no
/// sample came before, which the commands say they leave out.
#[test]
fn report_and_collapse_off_cpu_weigh_the_same_intervals() {
    for (f, source) in SWITCH_FIXTURES {
        let f = fixture(f);
        let (code, out, err) = run_perfdata(
            &["offcpu", &f, "--no-symbols", "--json", "--source", source],
            None,
        );
        assert_eq!(code, Some(0), "{f}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let total = v["total_ns"].as_u64().unwrap();
        // Off-CPU time on a stack of `[unknown]` alone had no sample to weigh.
        let unknown: u64 = v["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["frames"] == serde_json::json!(["[unknown]"]))
            .map(|s| s["off_cpu_ns"].as_u64().unwrap())
            .sum();
        let off_cpu = format!("--off-cpu={source}");
        let (code, out, err) = run_perfdata(
            &[
                "report",
                &f,
                "--no-symbols",
                &off_cpu,
                "--json",
                "--sort",
                "pid",
            ],
            None,
        );
        assert_eq!(code, Some(0), "{f}: {err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        let r = r.as_array().unwrap();
        assert_eq!(r.len(), 1, "{f}: one table");
        assert_eq!(r[0]["event"], "offcpu-time");
        assert_eq!(r[0]["period"].as_u64().unwrap(), total - unknown, "{f}");
        assert_eq!(
            unknown > 0,
            err.contains("off the CPU left out"),
            "{f}: {err}"
        );
        for row in r[0]["rows"].as_array().unwrap() {
            let tid: i64 = row["keys"][0]
                .as_str()
                .unwrap()
                .trim()
                .split(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let thread = v["threads"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["tid"] == tid)
                .unwrap();
            assert!(
                row["period"].as_u64() <= thread["off_cpu_ns"].as_u64(),
                "{f}: {row}"
            );
        }
        let (code, out, err) = run_perfdata(&["collapse", &f, "--no-symbols", &off_cpu], None);
        assert_eq!(code, Some(0), "{f}: {err}");
        let folded: u64 = out
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(folded, total - unknown, "{f}");
    }
    let (code, _, err) = run_perfdata(
        &[
            "collapse",
            &fixture("tracepoint.data"),
            "--off-cpu",
            "--event",
            "x",
        ],
        None,
    );
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn recordings_without_switches_are_refused_clearly() {
    let (code, _, err) = run_perfdata(&["offcpu", &fixture("plain.data")], None);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no context switches in this recording"),
        "{err}"
    );
    let (code, _, err) = run_perfdata(
        &[
            "offcpu",
            &fixture("switch-events.data"),
            "--source",
            "sched-switch",
        ],
        None,
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("no sched:sched_switch event"), "{err}");
    let (code, _, err) = run_perfdata(
        &["offcpu", &fixture("switch-events.data"), "--source", "x"],
        None,
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("unknown source `x`"), "{err}");
}
