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

#[test]
fn threads_stacks_and_folded_stacks_sum_to_the_same_time() {
    for (f, source) in [
        ("switch-events.data", "switch"),
        ("switch-cpu-wide.data", "switch"),
        ("tracepoint.data", "sched-switch"),
        ("pipe-tracepoint.pipe.data", "auto"),
    ] {
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
