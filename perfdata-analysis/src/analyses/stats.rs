//! readperf's statistics, for every event: records per type (`stat.csv`), every record in
//! time order (`overview.csv`), processes (`processes.csv`) and per-function totals with
//! their source file (`results.csv`).

use crate::machine::SideEvent;
use crate::symbols::dso::SymbolId;
use crate::AnalysisError as Error;
use crate::{Analyzer, DsoId};
use perfdata::types::{RecordBody, RecordType};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Column names of the CSV files (serde writes them with the first row; these are for a
/// table without rows, and are checked against the rows' names by a test).
pub const STAT_COLUMNS: &[&str] = &["type", "event", "count"];
/// Columns of `overview.csv` ([`OverviewRow`]).
pub const OVERVIEW_COLUMNS: &[&str] = &["nr", "type", "event", "pid", "tid", "time", "info"];
/// Columns of `processes.csv` ([`ProcessRow`]).
pub const PROCESS_COLUMNS: &[&str] = &[
    "pid",
    "name",
    "mmaps",
    "fork_time",
    "exit_time",
    "samples",
    "period",
];
/// Columns of `results.csv` ([`FunctionRow`]).
pub const RESULT_COLUMNS: &[&str] = &[
    "event",
    "function",
    "dso",
    "source_file",
    "samples",
    "period",
    "percent",
];

/// One row of `stat.csv`: records of a type (samples: per event).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TypeCount {
    /// The record type's name (`SAMPLE`, `MMAP2`, …; its number when it has none).
    #[serde(rename = "type")]
    pub type_: String,
    /// The event, for SAMPLE rows.
    pub event: String,
    /// Records of that type (and event).
    pub count: u64,
}

/// One row of `overview.csv`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OverviewRow {
    /// Position in time order, from 0.
    pub nr: u64,
    /// The record type's name, as in [`TypeCount::type_`].
    #[serde(rename = "type")]
    pub type_: String,
    /// The event, for samples; empty otherwise.
    pub event: String,
    /// For samples, COMM, FORK, EXIT, MMAP and MMAP2 records.
    pub pid: Option<i32>,
    /// For samples, COMM, FORK and EXIT records.
    pub tid: Option<i32>,
    /// The record's timestamp, in nanoseconds.
    pub time: Option<u64>,
    /// MMAP: file, address, size, offset; COMM: name; FORK/EXIT: parent pid; SAMPLE: ip
    /// and period.
    pub info: String,
}

/// One row of `processes.csv`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ProcessRow {
    /// The process; -1 for the kernel's maps.
    pub pid: i32,
    /// The last COMM of its main thread, else its name at the end of the recording;
    /// `[kernel]` for pid -1.
    pub name: String,
    /// Its MMAP and MMAP2 records (executable or not).
    pub mmaps: u64,
    /// When its main thread was forked, in nanoseconds.
    pub fork_time: Option<u64>,
    /// When its main thread exited, in nanoseconds.
    pub exit_time: Option<u64>,
    /// Its samples, all events together.
    pub samples: u64,
    /// Their periods summed.
    pub period: u64,
}

/// One row of `results.csv`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FunctionRow {
    /// The event's name.
    pub event: String,
    /// The name perf prints, or the address (map-relative when a map covers it) as
    /// `0x…`.
    pub function: String,
    /// The object's full name; `[unknown]` outside any map.
    pub dso: String,
    /// The source file of the function's first address (DWARF); empty without line
    /// tables ([`crate::AnalyzerOptions::lines`]).
    pub source_file: String,
    /// Samples whose ip is in it.
    pub samples: u64,
    /// Their periods summed.
    pub period: u64,
    /// Share of the event's total period, in percent.
    pub percent: f64,
}

/// All four tables.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    /// `stat.csv`, by record type number, then event.
    pub stat: Vec<TypeCount>,
    /// `overview.csv`: always empty from [`stats`], which hands its rows to a callback.
    pub overview: Vec<OverviewRow>,
    /// `processes.csv`, by pid.
    pub processes: Vec<ProcessRow>,
    /// `results.csv`, by event name, then largest period first.
    pub results: Vec<FunctionRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FnKey {
    Symbol(SymbolId),
    Addr(Option<DsoId>, u64),
}

/// Computes the statistics. `overview` receives each overview row as it is made (so a
/// large file is written out without holding them); the returned [`Stats`] has the other
/// three tables.
pub fn stats<E: From<Error>>(
    analyzer: &mut Analyzer<'_>,
    mut overview: impl FnMut(&OverviewRow) -> Result<(), E>,
) -> Result<Stats, E> {
    let events = analyzer.events.clone();
    let mut types: BTreeMap<(u32, usize), u64> = BTreeMap::new();
    let mut procs: BTreeMap<i32, ProcessRow> = BTreeMap::new();
    let mut funcs: HashMap<(usize, FnKey), (u64, u64)> = HashMap::default();
    let mut totals: HashMap<usize, u64> = HashMap::default();
    let mut nr = 0u64;
    let run = |machine: &crate::Machine, item: &crate::Replayed<'_>| -> Result<bool, E> {
        let ty = item.rec.record_type();
        let mut row = OverviewRow {
            nr,
            type_: ty.to_string(),
            event: String::new(),
            pid: None,
            tid: None,
            time: item.time,
            info: String::new(),
        };
        nr += 1;
        if let Some(s) = &item.sample {
            *types.entry((ty.0, s.event)).or_default() += 1;
            row.event = events.get(s.event).cloned().unwrap_or_default();
            row.pid = Some(s.pid);
            row.tid = Some(s.tid);
            row.info = format!("ip {:#x} period {}", s.ip, s.period);
            let p = procs.entry(s.pid).or_insert_with(|| ProcessRow {
                pid: s.pid,
                ..ProcessRow::default()
            });
            p.samples += 1;
            p.period += s.period;
            let f = machine.resolve(s.pid, s.kernel, s.ip);
            let key = match f.symbol {
                Some(sym) => FnKey::Symbol(sym),
                None => FnKey::Addr(f.dso.map(|(d, _)| d), f.dso.map_or(f.ip, |(_, a)| a)),
            };
            let e = funcs.entry((s.event, key)).or_default();
            e.0 += 1;
            e.1 += s.period;
            *totals.entry(s.event).or_default() += s.period;
        } else {
            *types.entry((ty.0, usize::MAX)).or_default() += 1;
            if SideEvent::is_side_band(ty) {
                let body = item.decode()?;
                describe(&body, item.rec.header.misc, item.time, &mut row, &mut procs);
            }
        }
        overview(&row)?;
        Ok(true)
    };
    analyzer.run(crate::RunOptions::default(), run)?;
    let machine = &analyzer.machine;
    // Names: the last COMM of the process's main thread, else of any thread of it.
    for (pid, p) in procs.iter_mut() {
        if *pid == -1 {
            p.name = "[kernel]".into();
        } else if p.name.is_empty() {
            p.name = machine.comm(*pid).into_owned();
        }
    }
    let stat = types
        .into_iter()
        .map(|((ty, ev), count)| TypeCount {
            type_: RecordType(ty).to_string(),
            event: if ev == usize::MAX {
                String::new()
            } else {
                events.get(ev).cloned().unwrap_or_default()
            },
            count,
        })
        .collect();
    let mut results: Vec<FunctionRow> = funcs
        .into_iter()
        .map(|((ev, key), (samples, period))| {
            let (function, dso, source_file) = match key {
                FnKey::Symbol(sym) => {
                    let dsos = &machine.dsos;
                    let start = dsos.symbol_start(sym);
                    let file = dsos
                        .source_line(sym.dso, start)
                        .map(|(f, _)| f)
                        .unwrap_or_default();
                    (
                        dsos.symbol_name(sym).to_string(),
                        dsos.get(sym.dso).name.clone(),
                        file,
                    )
                }
                FnKey::Addr(dso, addr) => (
                    format!("{addr:#x}"),
                    dso.map_or("[unknown]".into(), |d| machine.dsos.get(d).name.clone()),
                    String::new(),
                ),
            };
            let total = totals.get(&ev).copied().unwrap_or(0);
            FunctionRow {
                event: events.get(ev).cloned().unwrap_or_default(),
                function,
                dso,
                source_file,
                samples,
                period,
                percent: if total == 0 {
                    0.0
                } else {
                    period as f64 * 100.0 / total as f64
                },
            }
        })
        .collect();
    results.sort_by(|a, b| {
        a.event
            .cmp(&b.event)
            .then(b.period.cmp(&a.period))
            .then_with(|| a.function.cmp(&b.function))
            .then_with(|| a.dso.cmp(&b.dso))
    });
    Ok(Stats {
        stat,
        overview: vec![],
        processes: procs.into_values().collect(),
        results,
    })
}

/// The overview's info column and the process table's fork/exit/mmap columns.
fn describe(
    body: &RecordBody<'_>,
    misc: perfdata::types::RecordMisc,
    time: Option<u64>,
    row: &mut OverviewRow,
    procs: &mut BTreeMap<i32, ProcessRow>,
) {
    let Some(ev) = SideEvent::from_record(misc, body) else {
        return;
    };
    fn proc(procs: &mut BTreeMap<i32, ProcessRow>, pid: i32) -> &mut ProcessRow {
        procs.entry(pid).or_insert_with(|| ProcessRow {
            pid,
            ..ProcessRow::default()
        })
    }
    match ev {
        SideEvent::Comm {
            pid,
            tid,
            comm,
            exec,
        } => {
            row.pid = Some(pid);
            row.tid = Some(tid);
            row.info = if exec {
                format!("{comm} (exec)")
            } else {
                comm.clone()
            };
            if pid == tid {
                proc(procs, pid).name = comm;
            }
        }
        SideEvent::Fork { pid, ppid, tid, .. } => {
            row.pid = Some(pid);
            row.tid = Some(tid);
            row.info = format!("parent {ppid}");
            if pid == tid {
                proc(procs, pid).fork_time = time;
            }
        }
        SideEvent::Exit { pid, tid } => {
            row.pid = Some(pid);
            row.tid = Some(tid);
            if pid == tid {
                proc(procs, pid).exit_time = time;
            }
        }
        SideEvent::Mmap {
            pid,
            start,
            len,
            pgoff,
            filename,
            ..
        } => {
            row.pid = Some(pid);
            row.info = format!("{filename} {start:#x} size {len:#x} offset {pgoff:#x}");
            proc(procs, pid).mmaps += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<T: serde::Serialize>(row: T) -> Vec<String> {
        match serde_json::to_value(row).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn column_lists_match_the_rows() {
        let sorted = |c: &[&str]| {
            let mut v: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        let sample = TypeCount {
            type_: String::new(),
            event: String::new(),
            count: 0,
        };
        assert_eq!(keys(sample), sorted(STAT_COLUMNS));
        assert_eq!(keys(ProcessRow::default()), sorted(PROCESS_COLUMNS));
        let ov = OverviewRow {
            nr: 0,
            type_: String::new(),
            event: String::new(),
            pid: None,
            tid: None,
            time: None,
            info: String::new(),
        };
        assert_eq!(keys(ov), sorted(OVERVIEW_COLUMNS));
        let f = FunctionRow {
            event: String::new(),
            function: String::new(),
            dso: String::new(),
            source_file: String::new(),
            samples: 0,
            period: 0,
            percent: 0.0,
        };
        assert_eq!(keys(f), sorted(RESULT_COLUMNS));
    }
}
