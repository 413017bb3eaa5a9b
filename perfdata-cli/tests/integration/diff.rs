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
