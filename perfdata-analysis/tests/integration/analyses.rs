//! The analyses (report, collapse, stats, info) on every conformance fixture: their totals
//! agree with a plain walk of the samples. perf's own tables are compared in
//! `cargo xtask conformance` (checks 7, 8).

use crate::common;

use perfdata::Recording;
use perfdata_analysis::analyses::{collapse, info, report, stats};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    common::fixture_files()
}

/// Addresses only: results must not depend on this machine's symbol files.
fn no_symbols() -> AnalyzerOptions {
    AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    }
}

/// Samples per attr and their periods, from the plain file-order walk (no READ
/// expansion: callers skip files with PERF_SAMPLE_READ).
fn plain_totals(path: &Path) -> (Vec<u64>, Vec<u64>, bool) {
    let rec = Recording::open(path).unwrap();
    let data = rec.data().unwrap();
    let n = data.session.attrs.len().max(1);
    let (mut samples, mut periods) = (vec![0u64; n], vec![0u64; n]);
    let read = data.session.attrs.iter().any(|a| {
        a.attr
            .sample_type
            .contains(perfdata::types::SampleType::READ)
    });
    rec.for_each_record(&mut |_, _, r, ctx| {
        if let Some(s) = data.sample(&r, ctx)? {
            let i = ctx.attr.unwrap_or(0) as usize;
            samples[i] += 1;
            let attr = &data.session.attrs[i].attr;
            periods[i] += s.period().unwrap_or(attr.sample_period_or_freq);
        }
        Ok(true)
    })
    .unwrap();
    (samples, periods, read)
}

#[test]
fn report_rows_add_up_to_every_sample_of_every_event() {
    for path in fixtures() {
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
        let reports = report::report(
            &mut a,
            &report::ReportOptions::table(report::SortKey::parse("comm,dso,sym").unwrap()),
        )
        .unwrap();
        let (samples, periods, read) = plain_totals(&path);
        let name = path.display();
        for r in &reports {
            let rows_samples: u64 = r.rows.iter().map(|x| x.samples).sum();
            let rows_period: u64 = r.rows.iter().map(|x| x.period).sum();
            assert_eq!(rows_samples, r.samples, "{name} {}", r.event);
            assert_eq!(rows_period, r.period, "{name} {}", r.event);
            let pct: f64 = r.rows.iter().map(|x| x.percent).sum();
            assert!(
                (pct - 100.0).abs() < 1e-6 || r.period == 0,
                "{name}: {pct}%"
            );
            // Rows by period, largest first.
            assert!(
                r.rows.windows(2).all(|w| w[0].period >= w[1].period),
                "{name}"
            );
        }
        if !read {
            let ours: u64 = reports.iter().map(|r| r.samples).sum();
            assert_eq!(ours, samples.iter().sum::<u64>(), "{name}");
            let ours_p: u64 = reports.iter().map(|r| r.period).sum();
            assert_eq!(ours_p, periods.iter().sum::<u64>(), "{name}");
        }
    }
}

#[test]
fn collapse_counts_the_first_events_periods() {
    for path in fixtures() {
        let (_, periods, read) = plain_totals(&path);
        if read {
            continue; // READ samples: periods are counter deltas (checked against perf live)
        }
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
        let folded = collapse::collapse(&mut a, &collapse::CollapseOptions::default()).unwrap();
        let total: u64 = folded.values().sum();
        // The first event sampled is one of the attrs: its period total is ours.
        assert!(
            folded.is_empty() || periods.contains(&total),
            "{}: {total} not in {periods:?}",
            path.display()
        );
        for stack in folded.keys() {
            assert!(!stack.contains(' ') || stack.split(';').next().is_some());
            assert!(stack.split(';').count() >= 2, "{}: {stack}", path.display());
        }
    }
}

#[test]
fn stats_tables_agree_with_the_records() {
    for path in fixtures() {
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
        let mut overview = 0u64;
        let mut last_time = 0u64;
        let s = stats::stats(
            &mut a,
            |row| -> Result<(), perfdata_analysis::AnalysisError> {
                overview += 1;
                // Time order, as perf delivers records.
                if let Some(t) = row.time.filter(|&t| t != 0) {
                    if rec.is_directory() {
                        return Ok(()); // per stream (see Analyzer::run)
                    }
                    assert!(
                        t >= last_time,
                        "{}: {} before {last_time}",
                        path.display(),
                        t
                    );
                    last_time = t;
                }
                Ok(())
            },
        )
        .unwrap();
        let typed: u64 = s.stat.iter().map(|t| t.count).sum();
        let name = path.display();
        assert!(
            overview >= typed,
            "{name}: {overview} rows, {typed} counted"
        );
        let (samples, _, read) = plain_totals(&path);
        let stat_samples: u64 = s
            .stat
            .iter()
            .filter(|t| t.type_ == "SAMPLE")
            .map(|t| t.count)
            .sum();
        let proc_samples: u64 = s.processes.iter().map(|p| p.samples).sum();
        let fn_samples: u64 = s.results.iter().map(|f| f.samples).sum();
        assert_eq!(proc_samples, fn_samples, "{name}");
        if !read {
            assert_eq!(stat_samples, samples.iter().sum::<u64>(), "{name}");
            assert_eq!(fn_samples, stat_samples, "{name}");
        }
    }
}

#[test]
fn info_names_the_producer_and_counts_samples() {
    let path = common::fixture_path("multi-event.data");
    let rec = Recording::open(&path).unwrap();
    let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
    let i = info::info(&mut a, 3).unwrap();
    let names: Vec<&str> = i.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["cpu-clock", "task-clock"]);
    let (samples, _, _) = plain_totals(&path);
    assert_eq!(
        i.events.iter().map(|e| e.samples).collect::<Vec<_>>(),
        samples
    );
    assert!(
        i.producer.perf_version.is_some()
            && i.producer.hostname.is_some()
            && i.producer.command_line.is_some()
    );
    assert!(i.first_time.unwrap() <= i.last_time.unwrap());
    assert!(i.top_processes.len() <= 3 && !i.top_processes.is_empty());
    let text = info::render(&i);
    assert!(text.contains("cpu-clock") && text.contains("top shared objects"));
}

/// What a walk delivered of one record: where, its type and time, its sample's thread,
/// CPU and event, its bytes.
type Delivered = (
    u64,
    u32,
    Option<u64>,
    Option<(i32, i32, Option<u32>, usize)>,
    Vec<u8>,
    usize,
);

fn delivered(item: &perfdata_analysis::Replayed<'_>) -> Delivered {
    (
        item.origin.input_offset(item.rec.offset),
        item.rec.header.type_,
        item.time,
        item.sample.as_ref().map(|s| (s.pid, s.tid, s.cpu, s.event)),
        item.rec.body.to_vec(),
        item.rec.payload.len(),
    )
}

#[test]
fn the_ordering_thread_delivers_what_the_inline_walk_delivers() {
    let mut walked = 0;
    let sched = common::workspace().join("perfdata-cli/tests/data/sched/sched-threads.data");
    for path in fixtures().into_iter().chain([sched]) {
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
        // Each record as delivered, with the thread's name the replay gave its sample.
        let mut walk = |ordering_thread: bool, stop: usize| {
            let mut got = vec![];
            let opts = perfdata_analysis::RunOptions {
                ordering_thread,
                ..Default::default()
            };
            let r = a.run(
                opts,
                |machine, item| -> Result<bool, perfdata_analysis::AnalysisError> {
                    let comm = item
                        .sample
                        .as_ref()
                        .map(|s| machine.comm(s.tid).to_string());
                    got.push((delivered(item), comm));
                    Ok(got.len() < stop)
                },
            );
            (r.map_err(|e| e.to_string()), got)
        };
        let (inline, threaded) = (walk(false, usize::MAX), walk(true, usize::MAX));
        assert_eq!(inline.0, threaded.0, "{}", path.display());
        assert_eq!(inline.1.len(), threaded.1.len(), "{}", path.display());
        assert!(inline.1 == threaded.1, "{}", path.display());
        // Stopped early: the orderer ends too, and exactly that many were delivered.
        let stop = (inline.1.len() / 2).max(1);
        let (r, early) = walk(true, stop);
        assert!(r.is_ok(), "{}: {r:?}", path.display());
        assert_eq!(early.len(), stop.min(inline.1.len()), "{}", path.display());
        walked += 1;
    }
    assert!(walked > 5, "{walked} fixtures walked");
}

#[test]
fn the_unreplayed_walk_delivers_what_run_delivers() {
    let mut walked = 0;
    // And perf sched's recording: several events, told apart by their ids.
    let sched = common::workspace().join("perfdata-cli/tests/data/sched/sched-threads.data");
    for path in fixtures().into_iter().chain([sched]) {
        let rec = Recording::open(&path).unwrap();
        if rec.is_directory() {
            continue;
        }
        let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
        let reads = (a.data.session.attrs.iter())
            .any(|x| (x.attr.sample_type).contains(perfdata::types::SampleType::READ));
        if reads {
            // run expands a counter-reading sample into one per counter.
            continue;
        }
        let (mut replayed, mut unreplayed) = (vec![], vec![]);
        let every = perfdata_analysis::RunOptions {
            filtered: false,
            ..Default::default()
        };
        let r1 = a.run(
            every,
            |_, item| -> Result<bool, perfdata_analysis::AnalysisError> {
                replayed.push(delivered(item));
                Ok(true)
            },
        );
        let r2 = a.run_unreplayed(|item| -> Result<bool, perfdata_analysis::AnalysisError> {
            unreplayed.push(delivered(item));
            Ok(true)
        });
        assert_eq!(r1.is_ok(), r2.is_ok(), "{}", path.display());
        assert_eq!(replayed.len(), unreplayed.len(), "{}", path.display());
        assert!(replayed == unreplayed, "{}", path.display());
        // Stopped early: the orderer ends too, and exactly that many were delivered.
        let stop = unreplayed.len() / 2;
        let mut n = 0;
        a.run_unreplayed(|_| -> Result<bool, perfdata_analysis::AnalysisError> {
            n += 1;
            Ok(n < stop)
        })
        .unwrap_or(());
        assert_eq!(n, stop.max(1).min(unreplayed.len()), "{}", path.display());
        walked += 1;
    }
    assert!(walked > 5, "{walked} fixtures walked");
}

#[test]
fn a_directory_names_its_threads_after_the_last_stream_ends() {
    // The `--threads` fixture with a third, empty stream (a CPU that recorded nothing):
    // the last stream walked ends before `sh` was named, and `-s pid` prints the name
    // perf gives at the end of the recording, after every record of every stream.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("threads.data");
    std::fs::create_dir(&copy).unwrap();
    for f in ["data", "data.0", "data.1"] {
        std::fs::copy(common::fixture_path("threads.data").join(f), copy.join(f)).unwrap();
    }
    std::fs::write(copy.join("data.2"), b"").unwrap();
    let rec = Recording::open(&copy).unwrap();
    assert_eq!(rec.stream_paths().count(), 3);
    let mut a = Analyzer::open(&rec, &no_symbols()).unwrap();
    let opts = report::ReportOptions::table(report::SortKey::parse("pid").unwrap());
    let text = report::render(&report::report(&mut a, &opts).unwrap(), &opts);
    assert!(text.contains("3645:sh "), "{text}");
    // Merged as `script` walks it, the machine ends the same way.
    let merged = perfdata_analysis::RunOptions {
        merge_streams: true,
        ..Default::default()
    };
    a.run(
        merged,
        |_, _| -> Result<bool, perfdata_analysis::AnalysisError> { Ok(true) },
    )
    .unwrap();
    assert_eq!(a.machine.comm(3645), "sh");
}
