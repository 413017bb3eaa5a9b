//! Two recordings compared, as `perf diff` compares them: each recording's samples summed
//! per entry (by default shared object and symbol, perf diff's `dso,sym`), the entries of
//! the baseline (OLD) matched with the new recording's by the same keys, and per matched
//! entry one computation: the change of its share (`delta`, perf's default `delta-abs`
//! sorted by its magnitude), the ratio of its periods (`ratio`) or a weighted difference of
//! them (`wdiff:W1,W2`). The formulas, the order of the rows and the text are those of
//! perf's `builtin-diff.c` (perf 6.1): see [`render`].
//!
//! Entries are matched as perf diff's collapse step matches them: by shared object name
//! and by symbol *name* (perf sets the symbol key's collapse function to the name
//! comparison in diff mode, "those files could come from different binaries"), so a
//! rebuilt binary whose functions moved still matches. Addresses no symbol covers are one
//! entry per object, shown at the lowest of them (the first perf's address-ordered tree
//! holds), as perf merges them.

use crate::machine::CommId;
use crate::symbols::dso::SymbolId;
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::{Analyzer, Machine};
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;
use std::fmt::Write as _;

/// A key entries are summed and matched by (perf diff's `--sort` keys of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffKey {
    /// The thread's name (`comm`).
    Comm,
    /// The thread id with its name (`pid`, shown `TID:comm`: perf's "thread", as in
    /// `report`).
    Pid,
    /// The shared object's short name (`dso`).
    Dso,
    /// The function, or the address where no symbol covers it (`sym`, `symbol`).
    Sym,
}

impl DiffKey {
    /// A comma-separated `--sort` list; an unknown key is an error naming the known ones.
    pub fn parse(list: &str) -> Result<Vec<DiffKey>, crate::BadOption> {
        let keys = list
            .split(',')
            .map(|k| match k.trim() {
                "comm" => Ok(DiffKey::Comm),
                "pid" => Ok(DiffKey::Pid),
                "dso" => Ok(DiffKey::Dso),
                "sym" | "symbol" => Ok(DiffKey::Sym),
                other => Err(crate::BadOption::new(
                    "--sort",
                    format!("unknown sort key `{other}` (known: comm, pid, dso, sym)"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(keys)
    }

    /// perf's column header.
    pub fn header(self) -> &'static str {
        match self {
            DiffKey::Comm => "Command",
            DiffKey::Pid => "Pid:Command",
            DiffKey::Dso => "Shared Object",
            DiffKey::Sym => "Symbol",
        }
    }
}

/// What is computed for each pair of matched entries (perf diff's `--compute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compute {
    /// The new share minus the old one, in percentage points; rows sorted by it.
    Delta,
    /// The same, rows sorted by its magnitude (perf's default).
    DeltaAbs,
    /// New period ÷ old period.
    Ratio,
    /// New period × W2 − old period × W1.
    Wdiff(i64, i64),
}

impl Compute {
    /// perf's `--compute` syntax: `delta`, `delta-abs`, `ratio`, `wdiff:W1,W2` (both
    /// weights non-zero, as perf requires).
    pub fn parse(s: &str) -> Result<Compute, crate::BadOption> {
        let bad = |why: String| crate::BadOption::new("--compute", why);
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let c = match name {
            "delta" => Compute::Delta,
            "delta-abs" => Compute::DeltaAbs,
            "ratio" => Compute::Ratio,
            "wdiff" => {
                let weights = arg.and_then(|a| a.split_once(','));
                let parse = |w: &str| w.trim().parse::<i64>().ok().filter(|&w| w != 0);
                return match weights.map(|(a, b)| (parse(a), parse(b))) {
                    Some((Some(w1), Some(w2))) => Ok(Compute::Wdiff(w1, w2)),
                    _ => Err(bad(format!(
                        "`{s}`: wrong weights, use wdiff:W1,W2 (two non-zero integers)"
                    ))),
                };
            }
            _ => {
                return Err(bad(format!(
                    "`{s}` is not a computation (delta, delta-abs, ratio, wdiff:W1,W2)"
                )))
            }
        };
        match arg {
            Some(a) => Err(bad(format!("`{name}` takes no argument (got `{a}`)"))),
            None => Ok(c),
        }
    }

    fn header(self) -> (&'static str, usize) {
        // perf's header names and minimum widths.
        match self {
            Compute::Delta => ("Delta", 7),
            Compute::DeltaAbs => ("Delta Abs", 9),
            Compute::Ratio => ("Ratio", 14),
            Compute::Wdiff(..) => ("Weighted diff", 14),
        }
    }
}

/// Options of [`diff`] and [`render`].
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// The keys (perf diff's `--sort`; default `dso,sym`).
    pub sort: Vec<DiffKey>,
    /// The computation (default `delta-abs`).
    pub compute: Compute,
    /// Also the periods (perf's `-p`: `Base period` and `Period` columns).
    pub show_period: bool,
    /// Also the formula of each computed value (perf's `-F`).
    pub show_formula: bool,
    /// Only the entries of the baseline that the new recording has too (perf's `-b`).
    pub baseline_only: bool,
    /// Shares of the samples shown (`--percentage relative`) rather than of every
    /// sample the time and CPU filters keep (perf's default, `absolute`: the samples a
    /// thread, object or symbol filter hides still count in the totals).
    pub relative: bool,
    /// Key columns not printed: a `--comms`, `--dsos` or `--symbols` filter of one
    /// name (perf's `sort__setup_elide`; perf diff prints no `# comm:` line for them).
    pub elide: Vec<DiffKey>,
}

/// The key columns perf diff elides under `filter` (see [`DiffOptions::elide`]).
pub fn elided(filter: &crate::filter::SampleFilter, sort: &[DiffKey]) -> Vec<DiffKey> {
    let one = |v: &Option<Vec<String>>| matches!(v.as_deref(), Some([_]));
    sort.iter()
        .copied()
        .filter(|k| match k {
            DiffKey::Comm => one(&filter.comms),
            DiffKey::Dso => one(&filter.dsos),
            DiffKey::Sym => one(&filter.symbols),
            DiffKey::Pid => false,
        })
        .collect()
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            sort: vec![DiffKey::Dso, DiffKey::Sym],
            compute: Compute::DeltaAbs,
            show_period: false,
            show_formula: false,
            baseline_only: false,
            relative: false,
            elide: Vec::new(),
        }
    }
}

/// An entry's identity, comparable across recordings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
struct EntryKey {
    /// The command at the sample (the `comm` key).
    comm: Option<String>,
    pid: Option<ThreadKey>,
    /// The shared object's short name; `Some(None)` outside any map.
    dso: Option<Option<String>>,
    sym: Option<SymEntry>,
}

/// The `pid` key: perf's thread, compared by its id alone (`sort__thread_cmp`) and shown
/// with its last name, whatever the name at the sample (a thread that ran `sh` and then
/// exec'd `yes` is one entry, `yes`).
#[derive(Debug, Clone)]
struct ThreadKey {
    tid: i32,
    comm: String,
}

impl PartialEq for ThreadKey {
    fn eq(&self, other: &Self) -> bool {
        self.tid == other.tid
    }
}

impl Eq for ThreadKey {}

impl std::hash::Hash for ThreadKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.tid.hash(h)
    }
}

/// A symbol entry; equal (and hashed) by name alone: `addr` and `level` are what
/// is shown, from the entry perf keeps when it merges.
#[derive(Debug, Clone)]
struct SymEntry {
    /// Start of the symbol (or the map-relative address, unresolved).
    addr: u64,
    /// The symbol's name; `None`: unresolved.
    name: Option<String>,
    /// perf's level mark: `k` kernel, `.` user.
    level: char,
}

impl PartialEq for SymEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for SymEntry {}

impl std::hash::Hash for SymEntry {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

/// One recording's samples summed per entry, for each event: what [`diff`] compares.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    events: Vec<EventProfile>,
}

#[derive(Debug, Clone)]
struct EventProfile {
    name: String,
    /// (attr type, config): how perf matches events between recordings.
    id: (u32, u64),
    /// Σ period of its samples (perf's total period), those the filter hides included.
    total: u64,
    /// The samples shown, per entry.
    entries: HashMap<EntryKey, u64>,
    /// The samples a thread, object or symbol filter hides, per entry: they count in
    /// the absolute totals, and they pair (`-b`) as perf's hidden entries do.
    hidden: HashMap<EntryKey, u64>,
}

/// Sums a recording's samples per entry of `keys`; `absolute`: the samples a filter
/// hides are counted in the totals (perf diff's default `--percentage absolute`).
pub fn profile(
    analyzer: &mut Analyzer<'_>,
    keys: &[DiffKey],
    absolute: bool,
) -> Result<Profile, Error> {
    let n = analyzer.events.len().max(1);
    let ids: Vec<(u32, u64)> = (0..n)
        .map(|i| {
            analyzer
                .data
                .session
                .attrs
                .get(i)
                .map_or((u32::MAX, 0), |a| (a.attr.type_.0, a.attr.config))
        })
        .collect();
    let want = |k| keys.contains(&k);
    let (w_comm, w_pid, w_dso, w_sym) = (
        want(DiffKey::Comm),
        want(DiffKey::Pid),
        want(DiffKey::Dso),
        want(DiffKey::Sym),
    );
    // Summed by interned ids first (cheap per sample), named once at the end.
    // Per event: (shown, hidden) sums.
    let mut fast: Vec<[HashMap<FastKey, u64>; 2]> = (0..n).map(|_| Default::default()).collect();
    let mut totals = vec![0u64; n];
    let mut folded = Folded::new();
    let run = crate::RunOptions {
        deliver_hidden: absolute,
        ..Default::default()
    };
    analyzer.run(run, |machine, item| -> Result<bool, crate::AnalysisError> {
        let Some(s) = &item.sample else {
            return Ok(true);
        };
        let ev = s.event.min(n - 1);
        totals[ev] += s.period;
        let tid = if w_comm || w_pid { s.tid } else { 0 };
        let at: Raw = [
            ev as u64 | u64::from(s.hidden) << 32 | u64::from(s.kernel) << 33,
            u64::from(s.pid as u32) << 32 | u64::from(tid as u32),
            s.ip,
            machine.changes(),
        ];
        if folded.add(&at, s.period) {
            return Ok(true);
        }
        let leaf = machine.resolve(s.pid, s.kernel, s.ip);
        let comm = if w_comm {
            Some(machine.comm_id(s.tid).ok_or_else(|| {
                crate::AnalysisError::unsupported(format!("sample of unknown thread {}", s.tid))
            })?)
        } else {
            None
        };
        let key = (
            comm,
            // perf's `pid` key is the thread.
            w_pid.then_some(s.tid),
            w_dso.then(|| leaf.dso.map(|(d, _)| d.0)),
            w_sym.then(|| FastSym::of(&leaf)),
        );
        if folded.entries.len() >= 1 << 16 {
            folded.empty_into(&mut fast);
        }
        folded.insert(at, ev, s.hidden, key, s.period);
        Ok(true)
    })?;
    folded.empty_into(&mut fast);
    let machine = &analyzer.machine;
    let events = fast
        .into_iter()
        .enumerate()
        .map(|(ev, [shown, hidden])| EventProfile {
            name: analyzer.events.get(ev).cloned().unwrap_or_default(),
            id: ids[ev],
            total: totals[ev],
            entries: name_entries(machine, shown),
            hidden: name_entries(machine, hidden),
        })
        .collect();
    Ok(Profile { events })
}

/// A sample's event, hidden mark and cpumode (one word), process and thread (the thread
/// only when a key needs it), address, and the machine's change count: samples alike in
/// these resolve alike.
type Raw = [u64; 4];

/// Samples summed by [`Raw`] before they are resolved: each new one resolved once, the
/// rest summed in a direct-mapped slot (most samples repeat a few addresses; a slot is one
/// cache line, cheaper than a hash map's probe), which passes its sum on to the entry
/// when another key takes it; a key not in its slot is found through the map.
struct Folded {
    /// (event, hidden, key, Σ period) — without what the slots hold.
    entries: Vec<(usize, bool, FastKey, u64)>,
    index: HashMap<Raw, u32>,
    slots: Box<[Slot]>,
}

/// A raw key, its entry and the period summed here since the slot took it; `at` is
/// [`Folded::EMPTY`] in a slot never filled (no sample has that event word).
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Slot {
    at: Raw,
    entry: u32,
    period: u64,
}

impl Folded {
    const SLOT_BITS: u32 = 12;
    const EMPTY: Slot = Slot {
        at: [u64::MAX; 4],
        entry: 0,
        period: 0,
    };

    fn new() -> Self {
        Folded {
            entries: Vec::new(),
            index: HashMap::default(),
            slots: vec![Self::EMPTY; 1 << Self::SLOT_BITS].into_boxed_slice(),
        }
    }

    #[inline(always)]
    fn slot(at: &Raw) -> usize {
        let h = (at[0] ^ at[1].rotate_left(17) ^ at[2] ^ at[3].rotate_left(41))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - Self::SLOT_BITS)) as usize
    }

    /// Adds `period` to the entry of `at`; `false`: it has none yet.
    #[inline(always)]
    fn add(&mut self, at: &Raw, period: u64) -> bool {
        let k = Self::slot(at);
        let slot = &mut self.slots[k];
        // Word by word, the address first (what differs most): one 32-byte compare of
        // a key just written reads it back through memory at a stall.
        if slot.at[2] == at[2] && slot.at[3] == at[3] && slot.at[1] == at[1] && slot.at[0] == at[0]
        {
            slot.period += period;
            return true;
        }
        let Some(&i) = self.index.get(at) else {
            return false;
        };
        self.take_slot(k, *at, i, period);
        true
    }

    /// Gives slot `k` to entry `i` (of `at`), the sum of its previous entry passed on.
    fn take_slot(&mut self, k: usize, at: Raw, i: u32, period: u64) {
        let old = std::mem::replace(
            &mut self.slots[k],
            Slot {
                at,
                entry: i,
                period,
            },
        );
        if old.at != Self::EMPTY.at {
            self.entries[old.entry as usize].3 += old.period;
        }
    }

    fn insert(&mut self, at: Raw, ev: usize, hidden: bool, key: FastKey, period: u64) {
        let i = self.entries.len() as u32;
        self.entries.push((ev, hidden, key, 0));
        self.index.insert(at, i);
        self.take_slot(Self::slot(&at), at, i, period);
    }

    /// Moves the sums into `fast` (per event: shown, hidden) and forgets every entry:
    /// memory stays bounded however many addresses a recording has.
    fn empty_into(&mut self, fast: &mut [[HashMap<FastKey, u64>; 2]]) {
        for slot in self.slots.iter_mut() {
            if slot.at != Self::EMPTY.at {
                self.entries[slot.entry as usize].3 += slot.period;
            }
            *slot = Self::EMPTY;
        }
        for (ev, hidden, key, period) in self.entries.drain(..) {
            *fast[ev][usize::from(hidden)].entry(key).or_default() += period;
        }
        self.index.clear();
    }
}

type FastKey = (
    Option<CommId>,
    Option<i32>,
    Option<Option<u32>>,
    Option<FastSym>,
);

/// Entries summed by interned ids, named.
fn name_entries(machine: &Machine, table: HashMap<FastKey, u64>) -> HashMap<EntryKey, u64> {
    let mut entries: HashMap<EntryKey, u64> = HashMap::default();
    for ((comm, pid, dso, sym), period) in table {
        let key = EntryKey {
            comm: comm.map(|c| machine.comm_name(c).to_string()),
            pid: pid.map(|tid| ThreadKey {
                tid,
                comm: machine.comm(tid).into_owned(),
            }),
            dso: dso.map(|d| d.map(|d| machine.dsos.get(crate::DsoId(d)).short_name.clone())),
            sym: sym.map(|s| s.entry(machine)),
        };
        // Merged entries show the lowest address (perf keeps the first of its
        // address-ordered entries).
        match entries.remove_entry(&key) {
            Some((old, p)) => {
                let lower = match (&old.sym, &key.sym) {
                    (Some(a), Some(b)) => b.addr < a.addr,
                    _ => false,
                };
                entries.insert(if lower { key } else { old }, p + period);
            }
            None => {
                entries.insert(key, period);
            }
        }
    }
    entries
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FastSym {
    Symbol(SymbolId, char),
    Addr(u64, char),
}

impl FastSym {
    fn of(f: &Frame) -> FastSym {
        let level = if f.kernel { 'k' } else { '.' };
        match f.symbol {
            Some(s) => FastSym::Symbol(s, level),
            None => FastSym::Addr(f.dso.map_or(f.ip, |(_, a)| a), level),
        }
    }

    fn entry(self, m: &Machine) -> SymEntry {
        match self {
            FastSym::Symbol(s, level) => SymEntry {
                addr: m.dsos.symbol_start(s),
                name: Some(m.dsos.symbol_name(s).to_string()),
                level,
            },
            FastSym::Addr(addr, level) => SymEntry {
                addr,
                name: None,
                level,
            },
        }
    }
}

/// One row of a diff: an entry of the baseline, or of the new recording only.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DiffRow {
    /// The keys' values as perf prints them, in `--sort` order.
    pub keys: Vec<String>,
    /// Its period in the baseline (0: only in the new recording).
    pub old_period: u64,
    /// Its period in the new recording; `None`: not in it.
    pub new_period: Option<u64>,
    /// Only in the new recording (perf's dummy entry: no Baseline value).
    pub new_only: bool,
    /// Share of the baseline's total period, in percent.
    pub baseline: f64,
    /// Share of the new recording's total, in percent (with `new_period`).
    pub new_percent: Option<f64>,
    /// The computed value (with `new_period`): percentage points for delta and
    /// delta-abs, the ratio, or the weighted difference; `None` where perf prints
    /// `N/A` (ratio and wdiff of an entry the baseline lacks).
    pub value: Option<f64>,
}

/// The diff of one event.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EventDiff {
    /// The event's name (the baseline's).
    pub event: String,
    /// The baseline's total period for this event: of every sample the time and CPU
    /// filters keep, or of those shown when `relative`.
    pub old_total: u64,
    /// What the Baseline column is a share of: Σ period of the baseline's rows, and of
    /// the entries a filter hides unless `relative` (with `baseline_only`, perf
    /// re-totals the entries it kept).
    pub shown_total: u64,
    /// The new recording's total period (as `old_total`) for the matching event (same
    /// attr type and config); `None` when it has no such event.
    pub new_total: Option<u64>,
    /// The rows in perf's order.
    pub rows: Vec<DiffRow>,
}

/// Compares `new` with the baseline `old`, event by event (the baseline's events, each
/// matched with the new recording's event of the same type and config, as perf).
pub fn diff(old: &Profile, new: &Profile, opts: &DiffOptions) -> Vec<EventDiff> {
    let mut out = vec![];
    for base in &old.events {
        // perf lists every event of the baseline (one without samples prints an empty
        // table): so do we, except the placeholder of a recording with no attr.
        if base.id.0 == u32::MAX {
            continue;
        }
        let pair = new.events.iter().find(|e| e.id == base.id);
        out.push(diff_event(base, pair, opts));
    }
    out
}

struct Work<'a> {
    key: &'a EntryKey,
    old: u64,
    new: Option<u64>,
    dummy: bool,
    value: f64,
}

fn percent(period: u64, total: u64) -> f64 {
    // perf: (period * 100.0) / total, in doubles.
    (period as f64 * 100.0) / total as f64
}

fn diff_event(base: &EventProfile, pair: Option<&EventProfile>, opts: &DiffOptions) -> EventDiff {
    // perf's totals: every sample the time and CPU filters keep (absolute), or those
    // the other filters do not hide (relative).
    let total = |p: &EventProfile| {
        if opts.relative {
            p.entries.values().sum()
        } else {
            p.total
        }
    };
    let new_total = pair.map(total);
    let mut work: Vec<Work<'_>> = base
        .entries
        .iter()
        .map(|(k, &p)| Work {
            key: k,
            old: p,
            new: pair.and_then(|n| n.entries.get(k).copied()),
            dummy: false,
            value: 0.0,
        })
        .collect();
    if opts.baseline_only {
        work.retain(|w| w.new.is_some());
    } else if let Some(n) = pair {
        // perf's dummy entries: what only the new recording has.
        work.extend(
            n.entries
                .iter()
                .filter(|(k, _)| !base.entries.contains_key(*k))
                .map(|(k, &p)| Work {
                    key: k,
                    old: 0,
                    new: Some(p),
                    dummy: true,
                    value: 0.0,
                }),
        );
    }
    let (old_total, nt) = (total(base), new_total.unwrap_or(0));
    for w in &mut work {
        if let Some(np) = w.new {
            w.value = match opts.compute {
                Compute::Delta | Compute::DeltaAbs => percent(np, nt) - percent(w.old, old_total),
                // perf: old period `?: 1`.
                Compute::Ratio => np as f64 / w.old.max(1) as f64,
                Compute::Wdiff(w1, w2) => (np as i64)
                    .wrapping_mul(w2)
                    .wrapping_sub((w.old as i64).wrapping_mul(w1))
                    as f64,
            };
        }
    }
    work.sort_by(|a, b| {
        perf_order(a, b, opts.compute).then_with(|| key_order(a.key, b.key, &opts.sort))
    });
    // The Baseline column's total is re-summed from the entries perf keeps (after
    // `-b` removed those without a pair): hidden ones too when absolute.
    let hidden_kept: u64 = if opts.relative {
        0
    } else {
        base.hidden
            .iter()
            .filter(|(k, _)| {
                !opts.baseline_only
                    || pair.is_some_and(|n| n.entries.contains_key(*k) || n.hidden.contains_key(*k))
            })
            .map(|(_, p)| p)
            .sum()
    };
    let shown_total: u64 = work.iter().map(|w| w.old).sum::<u64>() + hidden_kept;
    let rows = work
        .iter()
        .map(|w| DiffRow {
            keys: opts.sort.iter().map(|&k| render_key(w.key, k)).collect(),
            old_period: w.old,
            new_period: w.new,
            new_only: w.dummy,
            baseline: percent(w.old, shown_total),
            new_percent: w.new.map(|p| percent(p, nt)),
            value: match (w.new, opts.compute) {
                (None, _) => None,
                (Some(_), Compute::Ratio | Compute::Wdiff(..)) if w.dummy => None,
                (Some(_), _) => Some(w.value),
            },
        })
        .collect();
    EventDiff {
        event: base.name.clone(),
        old_total,
        shown_total,
        new_total,
        rows,
    }
}

/// perf's `cmp_doubles`, largest first; NaN equal to everything.
fn desc(a: f64, b: f64) -> Ordering {
    b.partial_cmp(&a).unwrap_or(Ordering::Equal)
}

/// perf diff's sort list before the keys: the computed column of the new file (entries
/// with a pair first; for ratio and wdiff, entries the baseline has before the dummy
/// ones; then the value, largest first: `delta-abs` by magnitude), then the baseline's
/// period, largest first, then the value again (which orders the dummy entries of ratio
/// and wdiff among themselves).
fn perf_order(a: &Work<'_>, b: &Work<'_>, c: Compute) -> Ordering {
    let paired = b.new.is_some().cmp(&a.new.is_some());
    let value = |w: &Work<'_>| match c {
        Compute::DeltaAbs => w.value.abs(),
        _ => w.value,
    };
    let by_value = || {
        if a.new.is_some() && b.new.is_some() {
            desc(value(a), value(b))
        } else {
            Ordering::Equal
        }
    };
    let first = paired.then_with(|| match c {
        Compute::Ratio | Compute::Wdiff(..) if a.dummy || b.dummy => a.dummy.cmp(&b.dummy),
        _ => by_value(),
    });
    first.then_with(|| b.old.cmp(&a.old)).then_with(by_value)
}

/// Equal so far: perf's sort functions of the keys (names in ascending byte order; an
/// entry without a symbol after those with one).
fn key_order(a: &EntryKey, b: &EntryKey, keys: &[DiffKey]) -> Ordering {
    for k in keys {
        let o = match k {
            DiffKey::Comm => a.comm.cmp(&b.comm),
            DiffKey::Pid => a
                .pid
                .as_ref()
                .map(|t| t.tid)
                .cmp(&b.pid.as_ref().map(|t| t.tid)),
            DiffKey::Dso => a.dso.cmp(&b.dso),
            DiffKey::Sym => match (&a.sym, &b.sym) {
                (Some(x), Some(y)) => match (&x.name, &y.name) {
                    (Some(n), Some(m)) => n.cmp(m),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => x.addr.cmp(&y.addr),
                },
                _ => Ordering::Equal,
            },
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn render_key(k: &EntryKey, key: DiffKey) -> String {
    let comm = k.comm.as_deref().unwrap_or("");
    match key {
        DiffKey::Comm => comm.to_string(),
        DiffKey::Pid => match &k.pid {
            Some(t) => format!("{:>7}:{}", t.tid, t.comm),
            None => String::new(),
        },
        DiffKey::Dso => match k.dso.as_ref().and_then(|d| d.as_deref()) {
            Some(d) => d.to_string(),
            None => "[unknown]".into(),
        },
        DiffKey::Sym => match &k.sym {
            Some(SymEntry {
                name: Some(n),
                level,
                ..
            }) => format!("[{level}] {n}"),
            Some(SymEntry { addr, level, .. }) => format!("[{level}] {addr:#018x}"),
            None => String::new(),
        },
    }
}

/// The columns of the computed values: (header, width) each, perf's order.
fn value_columns(opts: &DiffOptions) -> Vec<(String, usize)> {
    let mut cols = vec![("Baseline".to_string(), 8)];
    if opts.show_period {
        cols.push(("Base period".into(), 14));
    }
    let (name, width) = opts.compute.header();
    cols.push((name.into(), width.max(name.len())));
    if opts.show_formula {
        cols.push(("Formula".into(), 70));
    }
    if opts.show_period {
        cols.push(("Period".into(), 14));
    }
    cols
}

/// The diff as `perf diff` prints it (perf 6.1, no colours): per event `# Event 'NAME'`,
/// the header, then one line per row: the baseline share (`%6.2f%%`, blank for an entry
/// only the new recording has), the computed value (delta `%+4.2F%%`; ratio `%14.6F`,
/// blank when not positive; wdiff `%14ld`, blank when zero; `N/A` for ratio and wdiff of
/// a new-only entry; blank where the new recording lacks the entry), each right-aligned
/// to its header, then the keys left-aligned to the widest value; lines right-trimmed.
pub fn render(diffs: &[EventDiff], opts: &DiffOptions) -> String {
    let mut s = String::new();
    let cols = value_columns(opts);
    // Elided columns, unless that is every one (perf shows them all then).
    let hidden =
        |k: &DiffKey| opts.elide.contains(k) && !opts.sort.iter().all(|k| opts.elide.contains(k));
    for (i, d) in diffs.iter().enumerate() {
        let _ = write!(
            s,
            "{}# Event '{}'\n#\n",
            if i == 0 { "" } else { "\n" },
            d.event
        );
        let mut widths: Vec<usize> = opts.sort.iter().map(|k| k.header().len()).collect();
        for row in &d.rows {
            for (w, v) in widths.iter_mut().zip(&row.keys) {
                *w = (*w).max(v.chars().count());
            }
        }
        // perf's `pid` column is the command's width (at least its header's, 7) plus 8.
        if let Some(i) = opts.sort.iter().position(|k| *k == DiffKey::Pid) {
            let comm = d.rows.iter().map(|r| r.keys[i].chars().count() - 8);
            widths[i] = widths[i].max(comm.max().unwrap_or(0).max(7) + 8);
        }
        // perf widens the object column to an address's width (16) when an entry is
        // outside any map or has no symbol.
        let sym = opts.sort.iter().position(|k| *k == DiffKey::Sym);
        if let Some(i) = opts.sort.iter().position(|k| *k == DiffKey::Dso) {
            let unresolved = |r: &DiffRow| {
                r.keys[i] == "[unknown]" || sym.is_some_and(|j| r.keys[j].contains("] 0x"))
            };
            if d.rows.iter().any(unresolved) {
                widths[i] = widths[i].max(16);
            }
        }
        let mut header = "#".to_string();
        let mut dots = "#".to_string();
        for (name, w) in &cols {
            let _ = write!(header, " {name:>w$} ");
            let _ = write!(dots, " {} ", ".".repeat(*w));
        }
        for (k, w) in opts.sort.iter().zip(&widths) {
            if hidden(k) {
                continue;
            }
            if *k == DiffKey::Pid {
                // perf's header is `    Pid:Command`, its four spaces over the pid's
                // seven digits.
                let _ = write!(header, " {:<w$} ", format!("    {}", k.header()));
                let _ = write!(dots, " {} ", ".".repeat(*w));
                continue;
            }
            let _ = write!(header, " {:<w$} ", k.header());
            let _ = write!(dots, " {} ", ".".repeat(*w));
        }
        let _ = writeln!(s, "{}", &header[..header.len() - 1]);
        let _ = writeln!(s, "{}", &dots[..dots.len() - 1]);
        s.push_str("#\n");
        for row in &d.rows {
            let mut line = String::from(" ");
            for (name, w) in &cols {
                let v = cell(row, name, opts, d);
                let _ = write!(line, " {v:>w$} ");
            }
            for ((v, w), k) in row.keys.iter().zip(&widths).zip(&opts.sort) {
                if hidden(k) {
                    continue;
                }
                // perf pads every key but the symbol.
                if *k == DiffKey::Sym {
                    let _ = write!(line, " {v} ");
                } else {
                    let _ = write!(line, " {v:<w$} ");
                }
            }
            line.pop();
            let _ = writeln!(s, "{line}");
        }
    }
    s
}

fn cell(row: &DiffRow, column: &str, opts: &DiffOptions, d: &EventDiff) -> String {
    match column {
        "Baseline" if row.new_only => String::new(),
        "Baseline" => format!("{:6.2}%", row.baseline),
        // A new-only entry has no pair in the baseline: perf prints its period, 0.
        "Base period" => row.old_period.to_string(),
        "Period" => row.new_period.map(|p| p.to_string()).unwrap_or_default(),
        "Formula" => match row.new_period {
            None => String::new(),
            Some(np) => match opts.compute {
                Compute::Delta | Compute::DeltaAbs => format!(
                    "({np} * 100 / {}) - ({} * 100 / {})",
                    d.new_total.unwrap_or(0),
                    row.old_period,
                    d.shown_total
                ),
                Compute::Ratio => format!("{np} / {}", row.old_period),
                Compute::Wdiff(w1, w2) => {
                    format!("({np} * {w2}) - ({} * {w1})", row.old_period)
                }
            },
        },
        _ => match (row.new_period, row.value, opts.compute) {
            (None, _, _) => String::new(),
            (Some(_), None, _) => "N/A".into(),
            // A share of an empty total (`--percentage relative` where the filter hides
            // every sample) is 0/0: x86's NaN has its sign bit set, `-nan` in C.
            (Some(_), Some(v), Compute::Delta | Compute::DeltaAbs) if v.is_nan() => "-nan%".into(),
            (Some(_), Some(v), Compute::Delta | Compute::DeltaAbs) => format!("{v:+.2}%"),
            (Some(_), Some(v), Compute::Ratio) if v > 0.0 => format!("{v:14.6}"),
            (Some(_), Some(v), Compute::Wdiff(..)) => format!("{:14}", v as i64),
            _ => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_sums_survive_slots_taken_and_emptying() {
        // More addresses than slots, met in turn: slots change hands all the time.
        let n = 3 * (1u64 << Folded::SLOT_BITS) + 7;
        let raw = |ip: u64| -> Raw { [0, 0, ip, 1] };
        let key = |ip: u64| -> FastKey { (None, None, None, Some(FastSym::Addr(ip, '.'))) };
        let mut folded = Folded::new();
        let mut fast: Vec<[HashMap<FastKey, u64>; 2]> = vec![Default::default()];
        for round in 1..=3u64 {
            for ip in 0..n {
                if !folded.add(&raw(ip), round * ip) {
                    folded.insert(raw(ip), 0, false, key(ip), round * ip);
                }
            }
            if round == 2 {
                folded.empty_into(&mut fast);
            }
        }
        folded.empty_into(&mut fast);
        assert_eq!(fast[0][0].len() as u64, n);
        assert!(fast[0][1].is_empty());
        for ip in 0..n {
            assert_eq!(fast[0][0][&key(ip)], 6 * ip, "address {ip}");
        }
    }

    fn key(dso: &str, sym: &str, addr: u64) -> EntryKey {
        EntryKey {
            dso: Some(Some(dso.into())),
            sym: Some(SymEntry {
                addr,
                name: Some(sym.into()),
                level: '.',
            }),
            ..EntryKey::default()
        }
    }

    fn prof(total: u64, entries: &[(EntryKey, u64)]) -> Profile {
        Profile {
            events: vec![EventProfile {
                name: "cpu-clock".into(),
                id: (1, 0),
                total,
                entries: entries.iter().cloned().collect(),
                hidden: HashMap::default(),
            }],
        }
    }

    #[test]
    fn computes_and_orders_as_perf() {
        let (a, b, c, d) = (
            key("w", "a", 1),
            key("w", "b", 2),
            key("w", "c", 3),
            key("w", "d", 4),
        );
        let old = prof(100, &[(a.clone(), 25), (b.clone(), 75)]);
        let new = prof(200, &[(a.clone(), 150), (c.clone(), 40), (d.clone(), 10)]);
        let mut opts = DiffOptions::default();
        let rows = &diff(&old, &new, &opts)[0].rows;
        // |+50| for a, then the new-only c (+20) and d (+5), then b (unpaired) last.
        let names: Vec<&str> = rows.iter().map(|r| r.keys[1].as_str()).collect();
        assert_eq!(names, ["[.] a", "[.] c", "[.] d", "[.] b"]);
        assert_eq!(rows[0].value, Some(50.0));
        let text = render(&diff(&old, &new, &opts), &opts);
        let expected = [
            "# Event 'cpu-clock'",
            "#",
            "# Baseline  Delta Abs  Shared Object  Symbol",
            "# ........  .........  .............  ......",
            "#",
            "    25.00%    +50.00%  w              [.] a",
            "              +20.00%  w              [.] c",
            "               +5.00%  w              [.] d",
            "    75.00%             w              [.] b",
            "",
        ]
        .join("\n");
        assert_eq!(text, expected);
        opts.compute = Compute::Ratio;
        let rows = &diff(&old, &new, &opts)[0].rows;
        assert_eq!(rows[0].value, Some(6.0));
        // Dummies after the entries the baseline has, and printed N/A.
        assert!(rows[1].new_only && rows[1].value.is_none());
        opts.compute = Compute::Wdiff(2, 1);
        let rows = &diff(&old, &new, &opts)[0].rows;
        assert_eq!(rows[0].value, Some(150.0 - 50.0));
    }

    #[test]
    fn parses_perf_compute_syntax() {
        assert_eq!(Compute::parse("wdiff:1,2"), Ok(Compute::Wdiff(1, 2)));
        assert!(Compute::parse("wdiff:0,2").is_err());
        assert!(Compute::parse("wdiff").is_err());
        assert!(Compute::parse("ratio:3").is_err());
        assert!(Compute::parse("cycles").is_err());
        assert_eq!(Compute::parse("delta-abs"), Ok(Compute::DeltaAbs));
        assert!(DiffKey::parse("dso,nope").is_err());
    }
}
