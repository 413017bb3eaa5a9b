//! One screen about a recording for a human: who made it where, how long it ran, what
//! was sampled, what was lost, and where the samples are.

use crate::AnalysisError as Error;
use crate::{Analyzer, Producer};
use perfdata::types::{RecordBody, RecordType};
use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;

/// What `perfdata info` shows.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Info {
    /// The recording's path (a file, or a `--threads` directory).
    pub path: String,
    /// Bytes on disk (all streams of a directory).
    pub size: u64,
    /// `file` or `pipe`.
    pub layout: String,
    /// `little` or `big`.
    pub endian: String,
    /// Who recorded it, where, how (the features that say so).
    #[serde(flatten)]
    pub producer: Producer,
    /// Earliest record timestamp, in nanoseconds (records stamped 0 are ignored).
    pub first_time: Option<u64>,
    /// Latest record timestamp, in nanoseconds.
    pub last_time: Option<u64>,
    /// Records as [`Analyzer::run`] delivers them (a PERF_SAMPLE_READ sample once per
    /// counter that moved).
    pub records: u64,
    /// Samples and period per event, in attr order.
    pub events: Vec<EventCount>,
    /// LOST records.
    pub lost_records: u64,
    /// The events those LOST records lost, summed.
    pub lost_events: u64,
    /// LOST_SAMPLES records' total.
    pub lost_samples: u64,
    /// THROTTLE and UNTHROTTLE records.
    pub throttle_records: u64,
    /// Processes with most samples (pid, name, samples), most first; the name is its
    /// main thread's at the process's first sample.
    pub top_processes: Vec<(i32, String, u64)>,
    /// Shared objects with most samples (full name, samples), most first; `[unknown]`
    /// for samples outside any map.
    pub top_dsos: Vec<(String, u64)>,
    /// Where kernel symbols come from, and why ([`Analyzer::kernel_symbols`]).
    pub kernel_symbols: String,
    /// Where the symbols of each of `top_dsos` come from (full name, then a path,
    /// `ARCHIVE:MEMBER`, a debuginfod cache path, or `none found`), in the same order.
    pub symbol_sources: Vec<(String, String)>,
}

/// One event's totals in [`Info`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct EventCount {
    /// The event's name.
    pub name: String,
    /// Number of its samples.
    pub samples: u64,
    /// Their periods summed (perf's "Event count").
    pub period: u64,
}

/// Gathers [`Info`] in one pass over the records.
pub fn info(analyzer: &mut Analyzer<'_>, top: usize) -> Result<Info, Error> {
    let rec = analyzer.recording();
    let data = &analyzer.data;
    let mut out = Info {
        path: rec.path().display().to_string(),
        size: rec.header_bytes().len() as u64
            + (0..rec.stream_paths().count())
                .map(|i| rec.stream_bytes(i).len() as u64)
                .sum::<u64>(),
        layout: format!("{:?}", data.format.layout).to_lowercase(),
        endian: format!("{:?}", data.format.endian).to_lowercase(),
        kernel_symbols: analyzer.kernel_symbols(),
        ..Info::default()
    };
    out.producer = Producer::of(data);
    let n = analyzer.events.len().max(1);
    let mut events = vec![(0u64, 0u64); n];
    let mut per_pid: HashMap<i32, u64> = HashMap::default();
    let mut per_dso: HashMap<Option<crate::DsoId>, u64> = HashMap::default();
    let mut comm_of: HashMap<i32, String> = HashMap::default();
    analyzer.run(
        crate::RunOptions::default(),
        |machine, item| -> Result<bool, crate::AnalysisError> {
            out.records += 1;
            if let Some(t) = item.time.filter(|&t| t != 0) {
                out.first_time = Some(out.first_time.map_or(t, |f| f.min(t)));
                out.last_time = Some(out.last_time.map_or(t, |l| l.max(t)));
            }
            if let Some(s) = &item.sample {
                let e = &mut events[s.event.min(n - 1)];
                e.0 += 1;
                e.1 += s.period;
                *per_pid.entry(s.pid).or_default() += 1;
                comm_of
                    .entry(s.pid)
                    .or_insert_with(|| machine.comm(s.pid).into_owned());
                *per_dso
                    .entry(machine.map_of(s.pid, s.kernel, s.ip))
                    .or_default() += 1;
                return Ok(true);
            }
            match item.rec.record_type() {
                RecordType::LOST => {
                    out.lost_records += 1;
                    if let Ok(RecordBody::Lost(l)) = item.decode() {
                        out.lost_events += l.lost;
                    }
                }
                RecordType::LOST_SAMPLES => {
                    if let Ok(RecordBody::LostSamples(l)) = item.decode() {
                        out.lost_samples += l.lost;
                    }
                }
                RecordType::THROTTLE | RecordType::UNTHROTTLE => out.throttle_records += 1,
                _ => {}
            }
            Ok(true)
        },
    )?;
    out.events = analyzer
        .events
        .iter()
        .zip(&events)
        .map(|(name, &(samples, period))| EventCount {
            name: name.clone(),
            samples,
            period,
        })
        .collect();
    let mut procs: Vec<(i32, String, u64)> = per_pid
        .into_iter()
        .map(|(pid, n)| (pid, comm_of.remove(&pid).unwrap_or_default(), n))
        .collect();
    procs.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    procs.truncate(top);
    out.top_processes = procs;
    let dsos = &analyzer.machine.dsos;
    let mut top_dsos: Vec<(String, u64, Option<crate::DsoId>)> = per_dso
        .into_iter()
        .map(|(d, n)| {
            (
                d.map_or("[unknown]".into(), |d| dsos.get(d).name.clone()),
                n,
                d,
            )
        })
        .collect();
    top_dsos.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top_dsos.truncate(top);
    out.symbol_sources = top_dsos
        .iter()
        .filter_map(|(name, _, d)| {
            let origin = dsos.symbols_origin((*d)?).unwrap_or("none found");
            Some((name.clone(), origin.to_string()))
        })
        .collect();
    out.top_dsos = top_dsos.into_iter().map(|(n, c, _)| (n, c)).collect();
    Ok(out)
}

/// [`Info`] as text.
pub fn render(i: &Info) -> String {
    let mut s = String::new();
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let _ = writeln!(
        s,
        "file:        {} ({} bytes, {} layout, {}-endian)",
        i.path, i.size, i.layout, i.endian
    );
    match &i.producer.simpleperf_version {
        Some(v) => {
            let _ = writeln!(
                s,
                "recorded:    simpleperf {v} ({}, kernel {})",
                or(&i.producer.arch),
                or(&i.producer.kernel)
            );
            if !i.producer.simpleperf_meta.is_empty() {
                let _ = writeln!(s, "device:      {}", i.producer.simpleperf_meta.join(", "));
            }
        }
        None => {
            let _ = writeln!(
                s,
                "recorded:    perf {} on {} ({}, kernel {})",
                or(&i.producer.perf_version),
                or(&i.producer.hostname),
                or(&i.producer.arch),
                or(&i.producer.kernel)
            );
        }
    }
    let _ = writeln!(s, "command:     {}", or(&i.producer.command_line));
    if let (Some(a), Some(b)) = (i.first_time, i.last_time) {
        let _ = writeln!(
            s,
            "duration:    {:.3} s ({:.6} .. {:.6})",
            (b - a) as f64 / 1e9,
            a as f64 / 1e9,
            b as f64 / 1e9
        );
    }
    let _ = writeln!(
        s,
        "compression: {}",
        i.producer.compression.as_deref().unwrap_or("none")
    );
    let _ = writeln!(s, "records:     {}", i.records);
    let _ = writeln!(s, "events:");
    for e in &i.events {
        let _ = writeln!(
            s,
            "  {:<24} {:>10} samples  period {}",
            e.name, e.samples, e.period
        );
    }
    let _ = writeln!(
        s,
        "lost:        {} LOST records ({} events), {} samples (LOST_SAMPLES), {} throttle records",
        i.lost_records, i.lost_events, i.lost_samples, i.throttle_records
    );
    let total: u64 = i.events.iter().map(|e| e.samples).sum();
    let pct = |n: u64| {
        if total == 0 {
            0.0
        } else {
            n as f64 * 100.0 / total as f64
        }
    };
    let _ = writeln!(s, "top processes:");
    for (pid, name, n) in &i.top_processes {
        let _ = writeln!(s, "  {:>6.2}%  {:>8}  {name} ({pid})", pct(*n), n);
    }
    let _ = writeln!(s, "top shared objects:");
    for (name, n) in &i.top_dsos {
        let _ = writeln!(s, "  {:>6.2}%  {:>8}  {name}", pct(*n), n);
    }
    let _ = writeln!(s, "kernel symbols: {}", i.kernel_symbols);
    if !i.symbol_sources.is_empty() {
        let _ = writeln!(s, "symbols from:");
        for (name, origin) in &i.symbol_sources {
            let _ = writeln!(s, "  {name}: {origin}");
        }
    }
    s
}
