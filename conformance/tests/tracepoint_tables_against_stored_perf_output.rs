//! The tracepoint tables (what the Parquet export writes under `tracepoints/`,
//! `Recording.tracepoints()` streams and the Spark source reads with `event`) against the
//! `perf script -F pid,tid,cpu,time,event,trace --ns` text stored beside the committed
//! tracepoint fixtures: every row's tid, cpu and time, and every field perf prints as a
//! plain value, on a machine without perf. The live run does the same on fresh
//! recordings of scheduler and system-call events.

use perfdata_test_support::workspace;

#[test]
fn tracepoint_tables_equal_perf_script_fields() {
    let root = workspace();
    let out = conformance::oracle_dir(&root);
    let mut checked = 0;
    for f in conformance::fixtures(&root).unwrap() {
        let stem = conformance::fixture_stem(&f);
        let Ok(text) = std::fs::read_to_string(out.join(format!("{stem}.trace.txt"))) else {
            continue;
        };
        let (compared, problems) =
            conformance::tracepoint::tables_against_trace(&f, &text).unwrap();
        assert!(
            problems.is_empty(),
            "{}:\n{}",
            f.display(),
            problems.join("\n")
        );
        // Every row's tid, cpu and time; a sched_switch row's six fields perf prints
        // plainly too (prev_state prints as letters).
        let rows = text.lines().count() - 1;
        let switches = text.matches(" sched:sched_switch: ").count();
        assert!(
            compared >= 3 * rows + 6 * switches,
            "{}: {compared} values of {rows} rows",
            f.display()
        );
        checked += 1;
    }
    // tracepoint.data (file layout), pipe-tracepoint.pipe.data (the formats in the
    // stream), syscalls.data (system calls' arrays and pointers, wakeups, openat's
    // strings), wakeups.data (system-wide wakeups and switches) and fd-io.data (read
    // and write).
    assert_eq!(
        checked, 5,
        "the stored trace texts of the tracepoint fixtures"
    );
}
