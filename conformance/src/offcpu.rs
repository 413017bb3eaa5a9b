//! Check 15: off-CPU time (`perfdata offcpu`) against `perf sched timehist`, on the
//! `off-cpu` row (a program that sleeps, blocks on a pipe and waits for a mutex, recorded
//! system-wide with `-g -e sched:sched_switch --switch-events`).
//!
//! The mapping. `perf sched timehist` prints a line at each switch-out of a task with
//! its *wait time* (from its previous switch-out to its switch-in: the previous
//! `sched_switch` on that CPU) and its *sch delay* (wakeup to switch-in, 0 here: no
//! `sched_wakeup` events are recorded), in milliseconds to 3 decimals. So for each
//! thread, Σ (wait + sch delay) over its lines is the sum of its off-CPU intervals, each
//! reported at the switch-out that follows it; perfdata counts an interval at its
//! switch-in. The totals therefore agree to the printed precision (timehist truncates
//! each value to the microsecond: ours is larger by less than 0.001 ms a line),
//! except for the thread's last interval when no switch-out of the thread follows it in
//! timehist's view (the recording ended, or it was the thread's exit switch, whose sample
//! perf attributes to pid -1): perfdata reports that interval as `last_interval_ns`,
//! and the check accepts the total with or without it — still to the precision.
//!
//! A switch-in without its `sched_switch` sample (the idle task's samples go missing
//! under load; the switch records still have the switch-in) makes a thread switch out
//! twice in a row: timehist then takes the CPU's previous switch for the switch-in, and
//! so does perfdata (`unseen_switch_ins`), so the totals still agree.
//!
//! The switch records (SWITCH_CPU_WIDE) of the same recording, two ways:
//! * perfdata's intervals from them equal, to the nanosecond and in number, those of
//!   perf's own decode of the records (`perf script --show-switch-events --ns`);
//! * they hold every interval the tracepoint has, so their total is not below the
//!   tracepoint's, to 1% (they are written in perf's scheduler hooks, microseconds from
//!   the tracepoint). They may hold more: one at the start (`first_interval_ns`: perf
//!   enables them when the recording starts, the workload's tracepoint when it execs,
//!   so the forked child's wait for perf's go is left out), and the ones whose
//!   tracepoint samples went missing. (The check used to want equal counts and totals
//!   within 1%; a fresh-clone run on a loaded machine showed the tracepoint two
//!   intervals short of the records.)
//!
//! The `--off-cpu` views weigh the `sched_switch` samples by those intervals: `report
//! --off-cpu --sort pid` gives each thread its total (to the nanosecond), also with
//! `--comms PROGRAM` (the other threads still in the total: perf's absolute shares), and
//! `collapse --off-cpu` the program's stacks the same sum.

use crate::analyses::{options, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::analyses::collapse;
use perfdata_analysis::analyses::offcpu::{self, OffCpu, OffCpuOptions, Source};
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::filter::SampleFilter;
use perfdata_analysis::Analyzer;
use std::collections::HashMap;
use std::path::Path;

/// Per tid: (Σ wait + sch delay in ms, lines).
pub fn parse_timehist(text: &str) -> HashMap<i32, (f64, u64)> {
    let mut out: HashMap<i32, (f64, u64)> = HashMap::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        // time [cpu] task[tid/pid] wait delay run ...; the task name may hold spaces.
        let Some(i) = (3..t.len().saturating_sub(2)).find(|&i| {
            t[i - 1].ends_with(']') && t[i..i + 3].iter().all(|v| v.parse::<f64>().is_ok())
        }) else {
            continue;
        };
        if !t[1].starts_with('[') || t[0].parse::<f64>().is_err() {
            continue;
        }
        let task = t[i - 1];
        let Some(ids) = task.rfind('[').map(|b| &task[b + 1..task.len() - 1]) else {
            continue;
        };
        let Ok(tid) = ids.split('/').next().unwrap_or("").parse::<i32>() else {
            continue;
        };
        let wait: f64 = t[i].parse().unwrap_or(0.0);
        let delay: f64 = t[i + 1].parse().unwrap_or(0.0);
        let e = out.entry(tid).or_default();
        e.0 += wait + delay;
        e.1 += 1;
    }
    out
}

/// Per tid: (Σ switch-out → next switch-in in ns, intervals), from `perf script
/// --show-switch-events --ns -F tid,cpu,time,event`'s switch record lines (perf's own
/// decode of the records): `TID [CPU] SECONDS.NANOS: PERF_RECORD_SWITCH[_CPU_WIDE] OUT|IN …`.
/// A switch-in with no switch-out before it, and a switch-out still open at the end,
/// count nothing; the idle task (tid 0) is left out.
pub fn parse_switch_records(text: &str) -> HashMap<i32, (u64, u64)> {
    let mut out: HashMap<i32, (u64, u64)> = HashMap::new();
    let mut pending: HashMap<i32, u64> = HashMap::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        let Some(k) = t.iter().position(|w| w.starts_with("PERF_RECORD_SWITCH")) else {
            continue;
        };
        let (Some(tid), Some(time), Some(dir)) = (
            t.first().and_then(|w| w.parse::<i32>().ok()),
            k.checked_sub(1).and_then(|i| t[i].strip_suffix(':')),
            t.get(k + 1),
        ) else {
            continue;
        };
        let Some(ns) = time.split_once('.').and_then(|(s, n)| {
            Some(s.parse::<u64>().ok()? * 1_000_000_000 + n.parse::<u64>().ok()?)
        }) else {
            continue;
        };
        if tid == 0 {
            continue;
        }
        match *dir {
            "OUT" => {
                pending.insert(tid, ns);
            }
            "IN" => {
                if let Some(o) = pending.remove(&tid) {
                    let e = out.entry(tid).or_default();
                    e.0 += ns.saturating_sub(o);
                    e.1 += 1;
                }
            }
            _ => {}
        }
    }
    out
}

fn ours(path: &Path, dir: &Path, source: Source) -> Result<OffCpu, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let mut a = Analyzer::open(&rec, &options(dir)).map_err(|e| e.to_string())?;
    offcpu::off_cpu(
        &mut a,
        &OffCpuOptions {
            source: Some(source),
        },
    )
    .map_err(|e| e.to_string())
}

/// Check 15 of the recording at `path` of program `program`.
pub fn check_off_cpu(path: &Path, dir: &Path, program: &str) -> Outcome {
    let args: Vec<&std::ffi::OsStr> = ["sched", "timehist", "-i"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([path.as_os_str()])
        .collect();
    let theirs = match perf_stdout(dir, &args) {
        Ok(o) => parse_timehist(&String::from_utf8_lossy(&o)),
        Err(why) => return Outcome::Skip(why),
    };
    let records = match perf_stdout(
        dir,
        &[
            "script",
            "--show-switch-events",
            "--ns",
            "-F",
            "tid,cpu,time,event",
            "-i",
        ]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([path.as_os_str()])
        .collect::<Vec<_>>(),
    ) {
        Ok(o) => parse_switch_records(&String::from_utf8_lossy(&o)),
        Err(why) => return Outcome::Skip(why),
    };
    let (tp, sw) = match (
        ours(path, dir, Source::SchedSwitch),
        ours(path, dir, Source::SwitchRecords),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Outcome::Fail(vec![format!("ours: {e}")]),
    };
    let mut fails = vec![];
    let mine: Vec<_> = tp.threads.iter().filter(|t| t.comm == program).collect();
    if mine.len() != 2 {
        fails.push(format!(
            "{} threads named {program}, expected 2",
            mine.len()
        ));
    }
    let mut lines = 0;
    for t in &mine {
        let ms = |ns: u64| ns as f64 / 1e6;
        // The program waits ~10 ms 24 times per thread: it must show.
        if ms(t.off_cpu_ns) < 150.0 {
            fails.push(format!(
                "tid {}: only {:.3} ms off-CPU",
                t.tid,
                ms(t.off_cpu_ns)
            ));
        }
        let (th, n) = theirs.get(&t.tid).copied().unwrap_or((0.0, 0));
        lines += n;
        // timehist truncates each line's value to the microsecond.
        let tol = 0.001 * n as f64 + 1e-6;
        let within = |ours: f64| ours - th > -1e-6 && ours - th < tol;
        let (all, without_last) = (ms(t.off_cpu_ns), ms(t.off_cpu_ns - t.last_interval_ns));
        if !within(all) && !within(without_last) {
            fails.push(format!(
                "tid {}: ours {all:.3} ms ({without_last:.3} without the last interval), perf sched timehist {th:.3} ms over {n} lines (tolerance {tol:.4} ms)",
                t.tid
            ));
        }
        // The switch records: perfdata's intervals equal those of perf's decode of the
        // same records, to the nanosecond; and they hold every interval the tracepoint
        // has (less, at most, the one before the tracepoint's first: the forked child
        // waiting for perf's go), so their total is not below the tracepoint's (1%: the
        // records are written microseconds from the tracepoint).
        let (perf_ns, perf_n) = records.get(&t.tid).copied().unwrap_or((0, 0));
        match sw.threads.iter().find(|s| s.tid == t.tid) {
            Some(s) if (s.off_cpu_ns, s.intervals) != (perf_ns, perf_n) => fails.push(format!(
                "tid {}: switch records {} intervals {} ns, perf script's switch lines {perf_n} intervals {perf_ns} ns",
                t.tid, s.intervals, s.off_cpu_ns
            )),
            Some(s) => {
                let first = if s.intervals > t.intervals {
                    s.first_interval_ns
                } else {
                    0
                };
                if s.intervals < t.intervals
                    || s.off_cpu_ns - first + t.off_cpu_ns / 100 < t.off_cpu_ns
                {
                    fails.push(format!(
                        "tid {}: switch records {} intervals {:.3} ms (less a first of {:.3}), sched_switch {} intervals {:.3} ms: the records lack some",
                        t.tid,
                        s.intervals,
                        ms(s.off_cpu_ns),
                        ms(first),
                        t.intervals,
                        ms(t.off_cpu_ns)
                    ));
                }
            }
            None => fails.push(format!("tid {}: not in the switch records", t.tid)),
        }
    }
    match off_cpu_views(path, dir, &tp, program) {
        Ok(f) => fails.extend(f),
        Err(e) => fails.push(format!("--off-cpu views: {e}")),
    }
    if fails.is_empty() {
        Outcome::Pass(format!(
            "{} threads of {program}: {:.3} ms off-CPU, as perf sched timehist's {lines} lines; switch records agree; report and collapse --off-cpu agree",
            mine.len(),
            mine.iter().map(|t| t.off_cpu_ns).sum::<u64>() as f64 / 1e6
        ))
    } else {
        Outcome::Fail(fails)
    }
}

/// `report --off-cpu` and `collapse --off-cpu` (the tracepoint's intervals weighing its
/// samples) against the intervals `tp` counted: what differs.
fn off_cpu_views(
    path: &Path,
    dir: &Path,
    tp: &OffCpu,
    program: &str,
) -> Result<Vec<String>, String> {
    let mut fails = vec![];
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let open = |filter: SampleFilter| -> Result<_, String> {
        let mut o = options(dir);
        o.filter = filter;
        let mut a = Analyzer::open(&rec, &o).map_err(|e| e.to_string())?;
        let w = offcpu::off_cpu(
            &mut a,
            &OffCpuOptions {
                source: Some(Source::SchedSwitch),
            },
        )
        .map_err(|e| e.to_string())?;
        Ok((a, std::sync::Arc::new(w.weights)))
    };
    let by_tid: HashMap<i32, u64> = tp.threads.iter().map(|t| (t.tid, t.off_cpu_ns)).collect();
    let program_ns: u64 = tp
        .threads
        .iter()
        .filter(|t| t.comm == program)
        .map(|t| t.off_cpu_ns)
        .sum();
    let program_filter = SampleFilter {
        comms: Some(vec![program.to_string()]),
        ..SampleFilter::default()
    };
    for filter in [SampleFilter::default(), program_filter.clone()] {
        let (mut a, w) = open(filter.clone())?;
        let opts = ReportOptions {
            sort: vec![SortKey::Pid],
            off_cpu: Some(w),
            ..ReportOptions::table(Vec::new())
        };
        let reports = report::report(&mut a, &opts).map_err(|e| e.to_string())?;
        let [r] = &reports[..] else {
            fails.push(format!(
                "report --off-cpu: {} tables, expected 1",
                reports.len()
            ));
            continue;
        };
        let label = if filter.comms.is_some() {
            " --comms"
        } else {
            ""
        };
        if r.period != tp.total_ns {
            fails.push(format!(
                "report --off-cpu{label}: total {} ns, offcpu {} ns",
                r.period, tp.total_ns
            ));
        }
        for row in &r.rows {
            let tid = row.keys[0]
                .trim()
                .split(':')
                .next()
                .and_then(|t| t.parse::<i32>().ok());
            let want = tid.and_then(|t| by_tid.get(&t));
            if want != Some(&row.period) {
                fails.push(format!(
                    "report --off-cpu{label}: {} {} ns, offcpu {want:?}",
                    row.keys[0], row.period
                ));
            }
            if filter.comms.is_some() && !row.keys[0].ends_with(&format!(":{program}")) {
                fails.push(format!(
                    "report --off-cpu --comms {program}: row {}",
                    row.keys[0]
                ));
            }
        }
        let rows: u64 = r.rows.iter().map(|x| x.period).sum();
        if filter.comms.is_some() && rows != program_ns {
            fails.push(format!(
                "report --off-cpu --comms {program}: rows {rows} ns, its threads {program_ns} ns"
            ));
        }
    }
    let (mut a, w) = open(program_filter)?;
    let folded = collapse::collapse(
        &mut a,
        &collapse::CollapseOptions {
            off_cpu: Some(w),
            ..collapse::CollapseOptions::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let folded_ns: u64 = folded.values().sum();
    if folded_ns != program_ns
        || folded
            .keys()
            .any(|k| !k.starts_with(&format!("{program};")))
    {
        fails.push(format!(
            "collapse --off-cpu --comms {program}: {} stacks, {folded_ns} ns; its threads {program_ns} ns",
            folded.len()
        ));
    }
    Ok(fails)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_switch_record_lines() {
        let text = "    0 [000] 12583.098132393: PERF_RECORD_SWITCH_CPU_WIDE OUT preempt  next pid/tid: 13936/13938\n\
                    13938 [000] 12583.098134566: PERF_RECORD_SWITCH_CPU_WIDE IN           prev pid/tid:     0/0    \n\
                    13938 [000] 12583.098162128: PERF_RECORD_SWITCH_CPU_WIDE OUT          next pid/tid:     0/0    \n\
                    13938 [001] 12583.098162200: sched:sched_switch: \n\
                    13938 [001] 12583.108162128: PERF_RECORD_SWITCH_CPU_WIDE IN           prev pid/tid:     0/0    \n\
                    13938 [001] 12583.108200000: PERF_RECORD_SWITCH OUT\n\
                    13938 [001] 12583.108300000: PERF_RECORD_SWITCH IN\n\
                    13938 [001] 12583.109000000: PERF_RECORD_SWITCH OUT\n";
        let got = super::parse_switch_records(text);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[&13938], (10_000_000 + 100_000, 2));
    }

    #[test]
    fn parses_timehist_lines() {
        let text = "           time    cpu  task name                       wait time  sch delay   run time\n\
                    \n   15409.120141 [0001]  off_cpu[26689/26687]                0.000      0.000      0.018    futex_do_wait <- x\n\
                    \n   15409.130270 [0001]  off_cpu[26689/26687]               10.119      0.002      0.009\n\
                    \n   15409.130271 [0000]  C1 CompilerThre[25981/25932]        1.500      0.000      0.009\n";
        let t = super::parse_timehist(text);
        assert_eq!(t[&26689].1, 2);
        assert!((t[&26689].0 - 10.121).abs() < 1e-9);
        assert_eq!(t[&25981], (1.5, 1));
    }
}
