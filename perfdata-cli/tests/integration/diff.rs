//! `perfdata diff`: the text (snapshot) and JSON of two fixtures compared, a recording
//! compared with itself, and the errors of bad options.

use crate::{common, run_perfdata};

fn fixture(name: &str) -> String {
    common::fixture_path(name).to_str().unwrap().to_string()
}

#[test]
fn diff_of_two_recordings_as_perf_prints_it() {
    let (old, new) = (fixture("plain.data"), fixture("callchain.data"));
    let (code, out, err) = run_perfdata(&["diff", &old, &new, "--no-symbols"], None);
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!(out);
    let (code, out, err) = run_perfdata(
        &[
            "diff",
            &old,
            &new,
            "--no-symbols",
            "-c",
            "wdiff:1,2",
            "-p",
            "-F",
            "-s",
            "comm,dso,sym",
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("diff_wdiff_period_formula", out);
}

#[test]
fn a_recording_compared_with_itself_has_no_change() {
    let f = fixture("multi-event.data");
    for compute in ["delta", "ratio", "wdiff:3,3"] {
        let (code, out, err) = run_perfdata(
            &["diff", &f, &f, "--no-symbols", "-c", compute, "--json"],
            None,
        );
        assert_eq!(code, Some(0), "{err}");
        let events: serde_json::Value = serde_json::from_str(&out).unwrap();
        let events = events.as_array().unwrap();
        assert!(!events.is_empty());
        let mut rows = 0;
        for e in events {
            assert_eq!(e["old_total"], e["new_total"]);
            for r in e["rows"].as_array().unwrap() {
                rows += 1;
                assert_eq!(r["old_period"], r["new_period"], "{r}");
                assert_eq!(r["new_only"], false);
                let want = if compute == "ratio" { 1.0 } else { 0.0 };
                assert_eq!(r["value"].as_f64(), Some(want), "{compute}: {r}");
            }
        }
        assert!(rows > 1, "{compute}: {rows} rows");
    }
}

#[test]
fn diff_refuses_bad_options_clearly() {
    let f = fixture("plain.data");
    for (args, msg) in [
        (vec!["-c", "wdiff:0,1"], "wrong weights"),
        (vec!["-c", "cycles"], "not a computation"),
        (vec!["-s", "dso,parent"], "unknown sort key `parent`"),
    ] {
        let mut all = vec!["diff", f.as_str(), f.as_str()];
        all.extend(args);
        let (code, _, err) = run_perfdata(&all, None);
        assert_eq!(code, Some(1));
        assert!(err.contains(msg), "{err}");
    }
    let (code, _, err) = run_perfdata(&["diff", &f, "/nonexistent/new.data"], None);
    assert_eq!(code, Some(1));
    assert!(err.starts_with("perfdata: /nonexistent/new.data"), "{err}");
}

#[test]
fn filters_narrow_both_recordings_and_keep_perfs_totals() {
    let f = fixture("tracepoint.data");
    let json = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["diff", f.as_str(), f.as_str(), "--no-symbols", "--json"];
        args.extend(extra);
        let (code, out, err) = run_perfdata(&args, None);
        assert_eq!(code, Some(0), "{extra:?}: {err}");
        serde_json::from_str::<serde_json::Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    let all = json(&["-s", "comm,dso,sym"]);
    let comms: std::collections::BTreeSet<String> = all
        .iter()
        .flat_map(|e| e["rows"].as_array().unwrap())
        .map(|r| r["keys"][0].as_str().unwrap().to_string())
        .collect();
    assert!(comms.len() > 1, "{comms:?}");
    let one = comms.iter().next().unwrap().clone();
    // Absolute (perf's default): the hidden samples stay in the totals.
    let abs = json(&["-s", "comm,dso,sym", "--comms", &one]);
    let rel = json(&[
        "-s",
        "comm,dso,sym",
        "--comms",
        &one,
        "--percentage",
        "relative",
    ]);
    for (e, a, r) in itertools_zip(&all, &abs, &rel) {
        assert_eq!(a["old_total"], e["old_total"]);
        let rows = a["rows"].as_array().unwrap();
        assert!(
            rows.iter().all(|r| r["keys"][0] == one.as_str()),
            "{rows:?}"
        );
        let shown: u64 = rows.iter().map(|r| r["old_period"].as_u64().unwrap()).sum();
        assert_eq!(r["old_total"].as_u64().unwrap(), shown);
        let share: f64 = r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["baseline"].as_f64().unwrap())
            .sum();
        assert!(shown == 0 || (share - 100.0).abs() < 1e-6, "{share}");
    }
    // A one-name filter hides its column, as perf's does.
    let (code, out, err) = run_perfdata(
        &[
            "diff",
            &f,
            &f,
            "--no-symbols",
            "-s",
            "comm,dso,sym",
            "-C",
            &one,
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !out.contains("Command") && out.contains("Shared Object"),
        "{out}"
    );
    // --time OLD:NEW needs both halves.
    let (code, _, err) = run_perfdata(&["diff", &f, &f, "--time", "1,2:"], None);
    assert_eq!(code, Some(1));
    assert!(err.contains("OLD:NEW"), "{err}");
}

fn itertools_zip<'a>(
    a: &'a [serde_json::Value],
    b: &'a [serde_json::Value],
    c: &'a [serde_json::Value],
) -> impl Iterator<
    Item = (
        &'a serde_json::Value,
        &'a serde_json::Value,
        &'a serde_json::Value,
    ),
> {
    assert_eq!((a.len(), b.len()), (c.len(), c.len()));
    a.iter().zip(b).zip(c).map(|((x, y), z)| (x, y, z))
}

/// perf's `pid` key is the thread alone, shown with its last name: in `period.data`
/// thread 3617 ran `sh` (1 sample), then exec'd `ls` (9): one entry `3617:ls`, in
/// `report` and `diff` alike.
#[test]
fn the_pid_key_is_the_thread_under_its_last_name() {
    let f = fixture("period.data");
    let (code, out, err) = run_perfdata(
        &[
            "report",
            &f,
            "--no-symbols",
            "--no-children",
            "-g",
            "none",
            "--sort",
            "pid",
            "-n",
        ],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[1].contains("   10     3617:ls"), "{out}");
    let (code, out, err) = run_perfdata(&["diff", &f, &f, "--no-symbols", "-s", "pid", "-p"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(" 3617:ls") && !out.contains("3617:sh"),
        "{out}"
    );
    assert_eq!(out.matches("3617:").count(), 1, "{out}");
}

/// The fill colours of an SVG's frames, as (r, g, b).
fn fills(svg: &str) -> Vec<(u8, u8, u8)> {
    svg.split("fill=\"rgb(")
        .skip(1)
        .filter_map(|s| {
            let v: Vec<u8> = s
                .split(')')
                .next()?
                .split(',')
                .filter_map(|n| n.parse().ok())
                .collect();
            (v.len() == 3).then(|| (v[0], v[1], v[2]))
        })
        .collect()
}

#[test]
fn differential_flame_graph_is_red_where_stacks_grew_and_blue_where_they_shrank() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    let s = svg.to_str().unwrap();
    let (old, new) = (fixture("plain.data"), fixture("callchain.data"));
    let (code, _, err) = run_perfdata(
        &["flamegraph", "--diff", &old, &new, "--no-symbols", "-o", s],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let colours = fills(&text);
    let red = colours
        .iter()
        .filter(|&&(r, g, b)| r == 255 && g == b && g < 255)
        .count();
    let blue = colours
        .iter()
        .filter(|&&(r, g, b)| b == 255 && r == g && r < 255)
        .count();
    assert!(red > 0 && blue > 0, "{colours:?}");
    // A recording against itself: no frame changed, none red or blue.
    let (code, _, err) = run_perfdata(
        &["flamegraph", "--diff", &old, &old, "--no-symbols", "-o", s],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let coloured = fills(&text)
        .into_iter()
        .filter(|&(r, g, b)| (r == 255 || b == 255) && !(r == g && g == b))
        .count();
    assert_eq!(coloured, 0);
}
