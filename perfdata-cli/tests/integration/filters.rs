//! perf's sample filters on the shipped sample, as every analysis command takes them:
//! what each selects, the totals a hidden sample still counts in (`report`'s default
//! `--percentage absolute`), and the errors of malformed or impossible filters.

use crate::{common, run_perfdata};

fn sample() -> String {
    common::sample_path("wordfreq.data")
        .to_string_lossy()
        .into_owned()
}

/// The first event's sample count: the report's JSON (its text says `1K`).
fn count(args: &[&str]) -> u64 {
    let mut a = args.to_vec();
    a.push("--json");
    let json: serde_json::Value = serde_json::from_str(&ok(&a)).unwrap();
    json[0]["samples"].as_u64().unwrap()
}

/// The table's rows (lines not starting with `#`, not empty).
fn rows(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run_perfdata(args, None);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

#[test]
fn a_symbol_filter_hides_rows_but_keeps_the_totals_unless_relative() {
    let f = sample();
    let one = ok(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--symbols",
        "rng",
    ]);
    // perf's default: percentages of every sample; the column of a one-name filter is
    // elided and named above the table.
    assert_eq!(
        count(&[
            "report",
            "--no-children",
            "-g",
            "none",
            "-n",
            &f,
            "--symbols",
            "rng"
        ]),
        count(&["report", "--no-children", "-g", "none", "-n", &f])
    );
    assert!(one.starts_with("# symbol: rng\n#\n"), "{one}");
    let r = rows(&one);
    assert_eq!(r.len(), 1, "{one}");
    assert!(r[0].contains("19.85%") && r[0].contains(" 257 "), "{one}");
    assert!(!r[0].contains("rng"), "the Symbol column is elided: {one}");
    let relative = ok(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--symbols",
        "rng",
        "--percentage",
        "relative",
    ]);
    assert_eq!(
        count(&[
            "report",
            "--no-children",
            "-g",
            "none",
            "-n",
            &f,
            "--symbols",
            "rng",
            "--percentage",
            "relative"
        ]),
        257
    );
    assert!(rows(&relative)[0].contains("100.00%"), "{relative}");
    // Two names: the column stays.
    let two = ok(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--symbols",
        "rng,merge",
    ]);
    assert_eq!(rows(&two).len(), 2, "{two}");
    assert!(two.contains("[.] merge"), "{two}");
}

#[test]
fn collapse_and_report_select_the_same_samples() {
    let f = sample();
    let folded = ok(&["collapse", &f, "--dsos", "wordfreq", "--symbols", "merge"]);
    let lines: Vec<&str> = folded.lines().collect();
    assert!(!lines.is_empty());
    for l in &lines {
        let (stack, _) = l.rsplit_once(' ').unwrap();
        assert!(stack.ends_with(";merge"), "{l}");
    }
    let period: u64 = lines
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    let report = ok(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--symbols",
        "merge",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(json[0]["rows"][0]["period"].as_u64(), Some(period));
    // A library the samples are not in: nothing.
    assert_eq!(ok(&["collapse", &f, "--dsos", "libm.so.6"]), "");
}

#[test]
fn time_windows_split_the_samples() {
    let f = sample();
    let all = count(&["report", "--no-children", "-g", "none", "-n", &f]);
    let first = count(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--time",
        "0%-50%",
    ]);
    let second = count(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--time",
        "50%-100%",
    ]);
    assert!(first > 0 && second > 0, "{first} {second}");
    // perf makes an end short of the last sample exclusive, so the halves tile.
    assert_eq!(first + second, all);
    let halves = count(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--time",
        "50%/1,50%/2",
    ]);
    assert_eq!(halves, all);
    // The header echoes the window, as perf's does.
    let text = ok(&[
        "report",
        "--no-children",
        "-g",
        "none",
        "-n",
        &f,
        "--time",
        "10%/2",
    ]);
    assert!(text.contains("(time slices: 10%/2)"), "{text}");
    // Relative seconds: the whole recording is well under an hour.
    assert_eq!(
        count(&[
            "report",
            "--no-children",
            "-g",
            "none",
            "-n",
            &f,
            "--time",
            "0,3600",
            "--reltime"
        ]),
        all
    );
}

#[test]
fn impossible_or_malformed_filters_are_errors() {
    let f = sample();
    for (args, says) in [
        (vec!["--time", "2,1"], "stop time is before the start time"),
        (vec!["--time", "10%-120%"], "within 0%..100%"),
        (vec!["--cpu", "3-1"], "expected CPUs"),
        (vec!["--pid", "x"], "is not a number"),
        // The sample carries no CPU: perf refuses `-C` alike.
        (vec!["--cpu", "0"], "does not sample the CPU"),
    ] {
        let mut a = vec!["report", f.as_str()];
        a.extend(&args);
        let (code, _, err) = run_perfdata(&a, None);
        assert_ne!(code, Some(0), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
