//! The `analyses` target: a recording the reader opens, replayed by perf's text tools as
//! perfdata gives them: `script` (perf's default fields, then every field an event can
//! give with the side band shown and relative times), `sched` (timehist with its
//! optional columns and summary, latency, map, the intervals table) and the tracepoint
//! tables. Each prints or says why it cannot; never a panic, a hang or a huge
//! allocation.

use crate::scratch;
use perfdata::{PerfData, Recording};
use perfdata_analysis::analyses::sched::latency::{self, LatencyOptions};
use perfdata_analysis::analyses::sched::map::{self, MapOptions};
use perfdata_analysis::analyses::sched::table;
use perfdata_analysis::analyses::sched::timehist::{self, TimehistOptions};
use perfdata_analysis::export::script::{self, ScriptOptions, ShowEvents, TimeFormat};
use perfdata_analysis::export::tables::TableBuilder;
use perfdata_analysis::export::tracepoints::tracepoint_events;
use perfdata_analysis::{AnalysisError, Analyzer, AnalyzerOptions, RunOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Inputs larger than this are cut.
const MAX_INPUT: usize = 1 << 20;

/// Every `-F` field perf script has, for every event type (without a type, a field an
/// event cannot give is left out of its lines rather than refused).
const EVERY_FIELD: &str = "comm,tid,pid,time,cpu,event,trace,ip,sym,dso,addr,symoff,\
srcline,period,iregs,uregs,brstack,brstacksym,data_src,weight,bpf-output,callindent,insn,\
insnlen,brstackinsn,brstackoff,synth,phys_addr,metric,misc,srccode,ipc,tod,data_page_size,\
code_page_size,ins_lat,brstackinsnlen,flags";

/// Where the input is written: the analyses open recordings by path.
fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| scratch::input_path("analyses"))
}

/// What a replay printed: the tests check that the seeds reach every tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Printed {
    /// Bytes of `perf script` text.
    pub script: u64,
    /// Bytes of `perf sched` text (timehist, latency, map).
    pub sched: u64,
    /// Intervals timehist handed over, and rows of the intervals table.
    pub intervals: u64,
    /// Rows of the tracepoint tables.
    pub tracepoint_rows: u64,
}

/// A sink that counts what is written to it.
struct Counted<'c>(&'c mut u64);

impl std::io::Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        *self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The target's body: `bytes` (cut at 1 MiB) as a recording, through every tool the
/// module names; what they printed (nothing when the reader refuses the input).
pub fn analyses(bytes: &[u8]) -> Printed {
    let mut printed = Printed::default();
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    if PerfData::open(bytes).is_err() {
        return printed;
    }
    let path = input_path();
    std::fs::write(path, bytes).expect("writing the input");
    let Ok(rec) = Recording::open(path) else {
        return printed;
    };
    // Addresses only: no file of this machine is read for an input's maps.
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    scripts(&rec, &opts, &mut Counted(&mut printed.script));
    sched(
        &rec,
        &opts,
        &mut Counted(&mut printed.sched),
        &mut printed.intervals,
    );
    if let Ok(mut a) = Analyzer::open(&rec, &opts) {
        let _ = tracepoint_tables(&mut a, &mut printed.tracepoint_rows);
    };
    printed
}

/// `perf script`'s text with perf's defaults, then with every field, the side band and
/// relative times (a field perf refuses for the recording's events is an error).
fn scripts(rec: &Recording, opts: &AnalyzerOptions, out: &mut Counted<'_>) {
    let every = ShowEvents {
        task: true,
        mmap: true,
        switch: true,
        namespace: true,
        lost: true,
        round: true,
        bpf: true,
        cgroup: true,
        text_poke: true,
    };
    let mut all = ScriptOptions {
        show: every,
        time: TimeFormat {
            ns: true,
            reltime: true,
            deltatime: false,
        },
        ..ScriptOptions::default()
    };
    all.fields
        .apply(EVERY_FIELD)
        .expect("perf script's own field names");
    let deltas = ScriptOptions {
        time: TimeFormat {
            deltatime: true,
            ..TimeFormat::default()
        },
        max_stack: 2,
        ..ScriptOptions::default()
    };
    for o in [ScriptOptions::default(), all, deltas] {
        if let Ok(mut a) = Analyzer::open(rec, opts) {
            let _ = script::script(&mut a, &o, out);
        }
    }
}

/// `perf sched`'s views; a recording without `sched_switch` is refused by each.
fn sched(rec: &Recording, opts: &AnalyzerOptions, out: &mut Counted<'_>, intervals: &mut u64) {
    let plain = TimehistOptions::default();
    let columns = TimehistOptions {
        with_summary: true,
        wakeups: true,
        migrations: true,
        cpu_visual: true,
        next: true,
        state: true,
        ..TimehistOptions::default()
    };
    let idle = TimehistOptions {
        idle_hist: true,
        with_summary: true,
        ..TimehistOptions::default()
    };
    for o in [&plain, &columns, &idle] {
        if let Ok(mut a) = Analyzer::open(rec, opts) {
            let mut each = |_| *intervals += 1;
            let _ = timehist::timehist(&mut a, o, out, Some(&mut each));
        }
    }
    for o in [
        LatencyOptions::default(),
        LatencyOptions {
            per_pid: true,
            cpu: Some(0),
            ..LatencyOptions::default()
        },
    ] {
        if let Ok(mut a) = Analyzer::open(rec, opts) {
            if let Ok(l) = latency::latency(&mut a, &o) {
                latency::render(&l, out).expect("a count cannot fail");
            }
        }
    }
    for o in [
        MapOptions::default(),
        MapOptions {
            compact: true,
            cpus: None,
            cpus_configured: Some(4),
        },
    ] {
        if let Ok(mut a) = Analyzer::open(rec, opts) {
            let _ = map::map(&mut a, &o, out, None);
        }
    }
    if let Ok(mut a) = Analyzer::open(rec, opts) {
        *intervals += table::intervals(&mut a, &plain, 7, &mut |_| Ok(())).unwrap_or(0);
    }
}

/// Every tracepoint event's table (its payloads by field), taken in small batches.
fn tracepoint_tables(a: &mut Analyzer<'_>, rows: &mut u64) -> Result<(), AnalysisError> {
    let events = tracepoint_events(&a.data, &a.events);
    if events.is_empty() {
        return Ok(());
    }
    let n = events.len();
    let mut tables = TableBuilder::new(a.events.clone(), false).with_tracepoints(events);
    a.run(RunOptions::default(), |machine, item| {
        tables.add(machine, item)?;
        for i in 0..n {
            if let Some(b) = tables.take_tracepoints(i, 5)? {
                *rows += b.num_rows() as u64;
            }
        }
        Ok::<_, AnalysisError>(true)
    })?;
    for i in 0..n {
        while let Some(b) = tables.take_tracepoints(i, 0)? {
            *rows += b.num_rows() as u64;
        }
    }
    Ok(())
}
