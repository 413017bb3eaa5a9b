//! The table `perf report --stdio` prints: per event, the share of the period each
//! combination of sort keys (command, pid, thread, shared object, symbol) has, with the
//! sample counts, and under `-g` the call chains that led there.

use crate::dso::{DsoId, SymbolId};
use crate::filter::SampleFilter;
use crate::machine::{CommId, Frame, TRUNCATED};
use crate::{Analyzer, Machine};
use perfdata::Error;
use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;

/// A column of the report (perf's `--sort` keys of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// The thread's name (`comm`).
    Comm,
    /// The thread, as perf's `pid` key: its id with its name (`TID:comm`; perf keys and
    /// prints `pid` rows by thread id).
    Pid,
    /// The thread id (`tid`).
    Tid,
    /// The shared object's short name (`dso`), `[unknown]` outside any map.
    Dso,
    /// The function, or the address where no symbol covers it, after perf's `[k]`/`[.]`
    /// level mark (`sym`).
    Sym,
}

impl SortKey {
    /// A comma-separated `--sort` list (`comm,dso,sym`); an unknown key is an error that
    /// names the known ones.
    pub fn parse(list: &str) -> Result<Vec<SortKey>, String> {
        list.split(',')
            .map(|k| match k.trim() {
                "comm" => Ok(SortKey::Comm),
                "pid" => Ok(SortKey::Pid),
                "tid" => Ok(SortKey::Tid),
                "dso" => Ok(SortKey::Dso),
                "sym" => Ok(SortKey::Sym),
                other => Err(format!(
                    "unknown sort key `{other}` (known: comm, pid, tid, dso, sym)"
                )),
            })
            .collect()
    }

    /// perf's column header.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "Pid:Command",
            SortKey::Tid => "Tid",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
        }
    }
}

/// What a row is keyed by (only the fields of the chosen sort keys are set).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
struct RowKey {
    comm: Option<CommId>,
    pid: Option<i32>,
    tid: Option<i32>,
    dso: Option<Option<DsoId>>,
    sym: Option<SymKey>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SymKey {
    Symbol(SymbolId, char),
    /// Unresolved: the map-relative address (or the address, without a map).
    Addr(u64, char),
}

/// One row of a report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The sort keys' values, rendered as perf prints them, in `--sort` order.
    pub keys: Vec<String>,
    /// Samples in the row (perf's `Samples` column, `-n`).
    pub samples: u64,
    /// Their periods summed.
    pub period: u64,
    /// Share of the event's total period, in percent.
    pub percent: f64,
    /// Under `-g`: the distinct caller chains (callers of the row's function, nearest
    /// first) with their period, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<(Vec<String>, u64)>,
}

/// The report of one event (only events with samples get one).
#[derive(Debug, Clone, serde::Serialize)]
pub struct EventReport {
    /// The event's name.
    pub event: String,
    /// Its samples (perf's `# Samples`).
    pub samples: u64,
    /// Their periods summed (perf's "Event count (approx.)").
    pub period: u64,
    /// Largest period first; ties by command, pid, tid, object name, then symbol address
    /// (perf's sort functions).
    pub rows: Vec<Row>,
}

/// Options of [`report`].
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The columns, in order (perf's `--sort`; default `comm,dso,sym`).
    pub sort: Vec<SortKey>,
    /// Collect the caller chains of every row (`-g`).
    pub callers: bool,
    /// Percentages of the samples the filter shows only (perf's `--percentage
    /// relative`); off (perf's default, `absolute`), samples the filter hides still count
    /// in the event's totals.
    pub relative: bool,
    /// Columns not printed, with the one value they would show (perf elides the column
    /// of a filter given a single name: `--comms x` prints `# comm: x` instead).
    pub elide: Vec<(SortKey, String)>,
    /// The `--time` filter as given, which perf echoes after each event's sample count.
    pub time: Option<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sort: vec![SortKey::Comm, SortKey::Dso, SortKey::Sym],
            callers: false,
            relative: false,
            elide: vec![],
            time: None,
        }
    }
}

#[derive(Default)]
struct Acc {
    samples: u64,
    period: u64,
    callers: HashMap<Vec<Caller>, u64>,
}

/// A caller in a chain: its function, or its address where no symbol covers it, or the
/// end of a stack cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Caller {
    Symbol(SymbolId),
    Address(u64),
    Truncated,
}

impl Caller {
    fn of(f: &Frame) -> Caller {
        match (f.truncated, f.symbol) {
            (true, _) => Caller::Truncated,
            (false, Some(s)) => Caller::Symbol(s),
            (false, None) => Caller::Address(f.dso.map_or(f.ip, |(_, a)| a)),
        }
    }
}

/// Builds the report of every event of a recording.
pub fn report(
    analyzer: &mut Analyzer<'_>,
    opts: &ReportOptions,
) -> Result<Vec<EventReport>, Error> {
    let n_events = analyzer.events.len().max(1);
    let mut rows: Vec<HashMap<RowKey, Acc>> = (0..n_events).map(|_| HashMap::default()).collect();
    let mut totals = vec![(0u64, 0u64); n_events];
    let mut frames: Vec<Frame> = vec![];
    let want = |k| opts.sort.contains(&k);
    let (w_comm, w_pid, w_tid, w_dso, w_sym) = (
        want(SortKey::Comm) || want(SortKey::Pid),
        want(SortKey::Pid),
        want(SortKey::Tid),
        want(SortKey::Dso),
        want(SortKey::Sym),
    );
    analyzer.deliver_hidden = !opts.relative;
    analyzer.run(&mut |machine, item| {
        let Some(s) = &item.sample else {
            return Ok(true);
        };
        let ev = s.event.min(n_events - 1);
        if s.hidden {
            totals[ev].0 += 1;
            totals[ev].1 += s.period;
            return Ok(true);
        }
        let leaf = if opts.callers {
            machine.frames(s, &mut frames)?;
            frames[0]
        } else {
            machine.resolve(s.pid, s.kernel, s.ip)
        };
        // perf keys the row by the sample's ip, not the callchain's first entry.
        let leaf = if leaf.ip == s.ip {
            leaf
        } else {
            machine.resolve(s.pid, s.kernel, s.ip)
        };
        let mut key = RowKey::default();
        if w_comm {
            let id = match machine.comm_id(s.tid) {
                Some(c) => c,
                None => return Err(Error::other(format!("sample of unknown thread {}", s.tid))),
            };
            key.comm = Some(id);
        }
        if w_pid {
            // perf's `pid` key is the thread (sort.c `sort__thread_cmp` compares
            // `thread__tid`, and prints it before the thread's name).
            key.pid = Some(s.tid);
        }
        if w_tid {
            key.tid = Some(s.tid);
        }
        if w_dso {
            key.dso = Some(leaf.dso.map(|(d, _)| d));
        }
        if w_sym {
            key.sym = Some(sym_key(&leaf));
        }
        let acc = rows[ev].entry(key).or_default();
        acc.samples += 1;
        acc.period += s.period;
        totals[ev].0 += 1;
        totals[ev].1 += s.period;
        if opts.callers && frames.len() > 1 {
            let chain = frames[1..].iter().map(Caller::of).collect();
            *acc.callers.entry(chain).or_default() += s.period;
        }
        Ok(true)
    })?;
    let machine = &analyzer.machine;
    let mut out = vec![];
    for (ev, table) in rows.into_iter().enumerate() {
        let (samples, period) = totals[ev];
        if samples == 0 {
            continue;
        }
        let mut list: Vec<(RowKey, Acc)> = table.into_iter().collect();
        list.sort_by(|(ka, a), (kb, b)| {
            b.period
                .cmp(&a.period)
                .then_with(|| tie_order(machine, ka, kb))
        });
        let rows = list
            .into_iter()
            .map(|(k, acc)| {
                let mut callers: Vec<(Vec<String>, u64)> = acc
                    .callers
                    .into_iter()
                    .map(|(chain, p)| {
                        let names = chain
                            .into_iter()
                            .map(|c| match c {
                                Caller::Symbol(s) => machine.dsos.symbol_name(s).to_string(),
                                Caller::Address(addr) => format!("{addr:#x}"),
                                Caller::Truncated => TRUNCATED.to_string(),
                            })
                            .collect();
                        (names, p)
                    })
                    .collect();
                callers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                Row {
                    keys: opts
                        .sort
                        .iter()
                        .map(|&sk| render_key(machine, &k, sk))
                        .collect(),
                    samples: acc.samples,
                    period: acc.period,
                    percent: percent(acc.period, period),
                    callers,
                }
            })
            .collect();
        out.push(EventReport {
            event: analyzer.events.get(ev).cloned().unwrap_or_default(),
            samples,
            period,
            rows,
        });
    }
    Ok(out)
}

fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// perf's level mark: `[k]` kernel, `[.]` user.
fn level(f: &Frame) -> char {
    if f.kernel {
        'k'
    } else {
        '.'
    }
}

fn sym_key(f: &Frame) -> SymKey {
    match f.symbol {
        Some(s) => SymKey::Symbol(s, level(f)),
        None => SymKey::Addr(f.dso.map_or(f.ip, |(_, a)| a), level(f)),
    }
}

/// Equal periods: by comm, then shared object name, then symbol address (perf's sort
/// functions).
fn tie_order(m: &Machine, a: &RowKey, b: &RowKey) -> std::cmp::Ordering {
    let comm = |k: &RowKey| k.comm.map(|c| m.comm_name(c));
    let dso = |k: &RowKey| {
        k.dso
            .map(|d| d.map_or("[unknown]", |d| m.dsos.get(d).short_name.as_str()))
    };
    let sym = |k: &RowKey| match k.sym {
        Some(SymKey::Symbol(s, _)) => (0, m.dsos.symbol_start(s)),
        Some(SymKey::Addr(a, _)) => (1, a),
        None => (2, 0),
    };
    comm(a)
        .cmp(&comm(b))
        .then(a.pid.cmp(&b.pid))
        .then(a.tid.cmp(&b.tid))
        .then_with(|| dso(a).cmp(&dso(b)))
        .then_with(|| sym(a).cmp(&sym(b)))
}

fn render_key(m: &Machine, k: &RowKey, sk: SortKey) -> String {
    let comm = || k.comm.map_or("", |c| m.comm_name(c));
    match sk {
        SortKey::Comm => comm().to_string(),
        SortKey::Pid => format!("{:>7}:{}", k.pid.unwrap_or(-1), comm()),
        SortKey::Tid => format!("{}", k.tid.unwrap_or(-1)),
        SortKey::Dso => match k.dso.flatten() {
            Some(d) => m.dsos.get(d).short_name.clone(),
            None => "[unknown]".into(),
        },
        SortKey::Sym => match k.sym {
            Some(SymKey::Symbol(s, l)) => format!("[{l}] {}", m.dsos.symbol_name(s)),
            Some(SymKey::Addr(a, l)) => format!("[{l}] {a:#018x}"),
            None => String::new(),
        },
    }
}

/// The columns perf elides under a filter: a `--comms`, `--dsos` or `--symbols` list of
/// one name, whose column would show only that name (perf's `sort__setup_elide`).
pub fn elided(filter: &SampleFilter, sort: &[SortKey]) -> Vec<(SortKey, String)> {
    let one = |v: &Option<Vec<String>>| match v.as_deref() {
        Some([name]) => Some(name.clone()),
        _ => None,
    };
    sort.iter()
        .filter_map(|&k| {
            let name = match k {
                SortKey::Comm => one(&filter.comms),
                SortKey::Dso => one(&filter.dsos),
                SortKey::Sym => one(&filter.symbols),
                _ => None,
            }?;
            Some((k, name))
        })
        .collect()
}

impl ReportOptions {
    /// The columns printed: `sort` less the elided ones (all of them when every one
    /// would be elided, as perf does: a table needs a column).
    fn shown(&self) -> Vec<usize> {
        let shown: Vec<usize> = (0..self.sort.len())
            .filter(|&i| !self.elide.iter().any(|(k, _)| *k == self.sort[i]))
            .collect();
        if shown.is_empty() {
            (0..self.sort.len()).collect()
        } else {
            shown
        }
    }
}

/// The report as `perf report --stdio -n` prints it.
pub fn render(reports: &[EventReport], opts: &ReportOptions) -> String {
    let mut s = String::new();
    let shown = opts.shown();
    if !opts.elide.is_empty() {
        for (k, v) in &opts.elide {
            let name = match k {
                SortKey::Comm => "comm",
                SortKey::Dso => "dso",
                SortKey::Sym => "symbol",
                SortKey::Pid => "pid",
                SortKey::Tid => "tid",
            };
            let _ = writeln!(s, "# {name}: {v}");
        }
        s.push_str("#\n");
    }
    for r in reports {
        let _ = write!(s, "# Samples: {}  of event '{}'", r.samples, r.event);
        if let Some(t) = &opts.time {
            let _ = write!(s, " (time slices: {t})");
        }
        s.push('\n');
        let _ = writeln!(s, "# Event count (approx.): {}", r.period);
        s.push_str("#\n");
        let mut widths: Vec<usize> = opts.sort.iter().map(|k| k.header().len()).collect();
        for row in &r.rows {
            for (w, v) in widths.iter_mut().zip(&row.keys) {
                *w = (*w).max(v.chars().count());
            }
        }
        let mut header = "# Overhead       Samples".to_string();
        let mut dots = "# ........  ............".to_string();
        for &i in &shown {
            let w = widths[i];
            let _ = write!(header, "  {:<w$}", opts.sort[i].header());
            let _ = write!(dots, "  {}", ".".repeat(w));
        }
        let _ = writeln!(s, "{}", header.trim_end());
        let _ = writeln!(s, "{dots}");
        s.push_str("#\n");
        for row in &r.rows {
            let mut line = format!("{:>9.2}%  {:>12}", row.percent, row.samples);
            for &i in &shown {
                let w = widths[i];
                let _ = write!(line, "  {:<w$}", row.keys[i]);
            }
            let _ = writeln!(s, "{}", line.trim_end());
            if !row.callers.is_empty() {
                render_callers(&mut s, row, r.period);
            }
        }
        s.push_str("\n\n");
    }
    s
}

fn render_callers(s: &mut String, row: &Row, total: u64) {
    let pad = " ".repeat(12);
    let _ = writeln!(s, "{pad}|");
    let n = row.callers.len();
    for (i, (chain, period)) in row.callers.iter().enumerate() {
        let last = i + 1 == n;
        let branch = if last { " --" } else { "|--" };
        let _ = write!(s, "{pad}{branch}{:.2}%--", percent(*period, total));
        let indent = pad.clone() + if last { "   " } else { "|  " } + "        ";
        for (j, f) in chain.iter().enumerate() {
            if j == 0 {
                let _ = writeln!(s, "{f}");
            } else {
                let _ = writeln!(s, "{indent}{f}");
            }
        }
        if !last {
            let _ = writeln!(s, "{pad}|");
        }
    }
    s.push('\n');
}
