//! The report `perf report --stdio` prints: per event, the entries of the chosen sort
//! keys (command, thread, shared object, symbol, CPU, parent) with their share of the
//! period — their own (Self) and, for recordings with call chains, with everything they
//! called (Children, perf's default) — and under each, its call graph.
//!
//! Submodules: [`keys`] (the columns), [`callgraph`] (the graph under each entry),
//! `render` (the text).

pub mod callgraph;
pub mod keys;
mod render;

pub use callgraph::{CallGraphOptions, CallNode, GraphMode, GraphValue, Order};
pub use keys::{SortKey, DEFAULT_PARENT};
pub use render::render;

use crate::stack::Stack;
use crate::symbols::dso::SymbolId;
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::{Analyzer, Machine};
use callgraph::{Call, Trees, CUT};
use keys::{tie_order, RowKey, SampleKey, Strings, Wanted};
use rustc_hash::FxHashMap as HashMap;

/// perf report's default `--max-stack` (the kernel's `perf_event_max_stack`).
pub const DEFAULT_MAX_STACK: usize = 127;

/// Options of [`report`]. The default is `perf report`'s: Children, the call graph
/// `graph,0.5,caller`, sorted by `comm,dso,sym`.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The columns, in order (perf's `--sort`; default `comm,dso,sym`).
    pub sort: Vec<SortKey>,
    /// The Children column (`--children`, perf's default); it and the call graph need a
    /// recording with call chains and are left out otherwise (and perf 6.1 leaves
    /// Children out of a pipe's report).
    pub children: bool,
    /// The call graph under each entry (`-g`); `None`: `-g none`.
    pub call_graph: Option<CallGraphOptions>,
    /// Entries under this share of the period (Children's with Children) are left out,
    /// and it is the call graph's threshold (perf's `--percent-limit`).
    pub percent_limit: Option<f64>,
    /// Call chains are cut to this many calls, from the function in callee order and
    /// from the outermost caller in caller order (perf's `--max-stack`).
    pub max_stack: usize,
    /// The `parent` key's pattern (perf's `--parent`).
    pub parent: String,
    /// The Samples column (perf's `-n`).
    pub show_samples: bool,
    /// Percentages of the samples the filter shows only (perf's `--percentage
    /// relative`); off (perf's default, `absolute`), samples the filter hides still count
    /// in the event's totals.
    pub relative: bool,
    /// Columns not printed, with the one value they would show (perf elides the column
    /// of a filter given a single name: `--comms x` prints `# comm: x` instead).
    pub elide: Vec<(SortKey, String)>,
    /// The `--time` filter as given, which perf echoes after each event's sample count.
    pub time: Option<String>,
    /// Off-CPU time instead of the samples' periods (`--off-cpu`): only the samples
    /// whose stacks switch-outs took count, each weighed by the nanoseconds off the CPU
    /// and counted once per interval, in one table named `offcpu-time` (the event
    /// perf's BPF `record --off-cpu` writes).
    pub off_cpu: Option<std::sync::Arc<crate::analyses::weights::SampleWeights>>,
    /// Functions inlined at an address are calls of their own in the call graph and
    /// entries of their own under Children, named `name (inlined)` (perf's `--inline`).
    /// As perf 6.1, only where the chain was unwound from a stack copy (`--call-graph
    /// dwarf`): a recorded callchain's addresses are taken as they are. Needs the
    /// analyzer's DWARF line tables ([`crate::AnalyzerOptions::lines`]).
    pub inline: bool,
    /// The `srcline` key prints the source file's path as the debug info gives it,
    /// rather than its base name (perf's `--full-source-path`).
    pub full_source_path: bool,
}

/// The event name of an `--off-cpu` report.
pub const OFF_CPU_EVENT: &str = "offcpu-time";

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sort: vec![SortKey::Comm, SortKey::Dso, SortKey::Sym],
            children: true,
            call_graph: Some(CallGraphOptions::default()),
            percent_limit: None,
            max_stack: DEFAULT_MAX_STACK,
            parent: DEFAULT_PARENT.into(),
            show_samples: false,
            relative: false,
            elide: vec![],
            time: None,
            off_cpu: None,
            inline: false,
            full_source_path: false,
        }
    }
}

/// The columns perf elides under a filter: a `--comms`, `--dsos` or `--symbols` list of
/// one name, whose column would show only that name (perf's `sort__setup_elide`).
pub fn elided(filter: &crate::filter::SampleFilter, sort: &[SortKey]) -> Vec<(SortKey, String)> {
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

    /// `perf report --no-children -g none -n`: one row per entry, its own share.
    pub fn table(sort: Vec<SortKey>) -> Self {
        ReportOptions {
            sort,
            children: false,
            call_graph: None,
            show_samples: true,
            ..ReportOptions::default()
        }
    }
}

/// One entry of a report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The sort keys' values, rendered as perf prints them, in `--sort` order.
    pub keys: Vec<String>,
    /// Samples of the entry itself (perf's `Samples` column, `-n`).
    pub samples: u64,
    /// Their periods summed (Self).
    pub period: u64,
    /// Self's share of the event's total period, in percent.
    pub percent: f64,
    /// With Children: the period of every sample the entry is in the call chain of
    /// (itself included), each counted once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children_period: Option<u64>,
    /// Children's share of the event's total period, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children_percent: Option<f64>,
    /// The call graph, after the threshold: its branches (graph and fractal modes) or
    /// its chains (flat and folded).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub call_graph: Vec<CallNode>,
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
    /// Whether the Children column is shown (asked for, and the recording has chains).
    pub children: bool,
    /// The call graph's parameters, when one is shown (asked for, and the event's
    /// samples have chains); its order resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_graph: Option<CallGraphOptions>,
    /// The entries over the percent limit, largest first (Children, then Self); ties by
    /// command, thread, object name, then symbol address (perf's sort functions).
    pub rows: Vec<Row>,
    /// Column widths, from every entry (also those under the percent limit, as perf).
    #[serde(skip)]
    pub(crate) widths: Vec<usize>,
}

#[derive(Default)]
struct Entry {
    samples: u64,
    period: u64,
    children: u64,
    tree: Option<u32>,
    /// The longest chain added to the tree (perf's `max_depth`).
    depth: usize,
    /// The first sample's (or chain entry's) address had no symbol (perf's `ms.sym`,
    /// kept from the entry's first sample), whatever the sort keys.
    unresolved: Option<bool>,
}

#[derive(Default)]
struct Table {
    index: HashMap<RowKey, u32>,
    entries: Vec<(RowKey, Entry)>,
    samples: u64,
    period: u64,
    /// Period of the samples with a call chain (perf's `callchain_period`).
    chain_period: u64,
    /// With the `srcline` key: entries added under each value of the keys before it.
    /// perf 6.1 looks an entry's source position up only when it compares the entry
    /// with another of the same keys before `srcline` (`sort__srcline_cmp`), and sizes
    /// the column by the positions looked up by then.
    before_srcline: HashMap<RowKey, u32>,
    has_chains: bool,
}

impl Table {
    fn entry(&mut self, key: RowKey) -> usize {
        let n = self.entries.len() as u32;
        let i = *self.index.entry(key).or_insert(n);
        if i == n {
            self.entries.push((key, Entry::default()));
        }
        i as usize
    }
}

/// What identifies a sample's contribution before its addresses are resolved: its
/// event, thread, CPU (when a key shows it), address, stack walk, and the machine's
/// state (a map or name changed since: resolved again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RawKey {
    event: usize,
    table: usize,
    pid: i32,
    tid: i32,
    cpu: Option<u32>,
    kernel: bool,
    ip: u64,
    walk: bool,
    unwound: bool,
    cut: bool,
    user_from: usize,
    changes: u64,
}

/// What a stack adds to its table: computed at its first sample, added once with the
/// weight of all of them.
struct Added {
    /// The sample's own entry, and whether its address has no symbol.
    leaf: RowKey,
    leaf_unresolved: bool,
    /// Whether the entries get the chain in their call graphs.
    tree: bool,
    /// The chain's calls, in print order.
    chain: Vec<u32>,
    /// The other entries of the chain (Children), once each, with where in `chain`
    /// their part starts and whether their address has no symbol.
    others: Vec<(RowKey, usize, bool)>,
    period: u64,
    count: u64,
}

struct Distinct {
    raw: RawKey,
    addrs: Vec<(u64, bool)>,
    /// The previous stack of the same hash.
    collides: u32,
    added: Added,
}

/// Samples folded by stack: most samples repeat a stack already met (a loop, a hot
/// function), and perf's work per sample — an entry per function of the chain, the
/// chain appended to each one's graph, quadratic in its depth — is done once per
/// distinct stack instead. Stacks are added in the order first met, which keeps the
/// entries' and the graphs' order of insertion (perf's ties depend on it); the table
/// is emptied into the report when it holds too much, so memory stays bounded.
#[derive(Default)]
struct Folded {
    by_hash: HashMap<u64, u32>,
    list: Vec<Distinct>,
    /// Words (addresses, calls, entries) held, and how many make it full.
    addrs_held: usize,
    limit: usize,
}

/// The words of stacks [`Folded`] holds before it adds them to the report (~50 MB).
const FOLD_LIMIT: usize = 1 << 21;

const NO_STACK: u32 = u32::MAX;

impl Folded {
    fn hash(raw: &RawKey, addrs: &[(u64, bool)]) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut h = rustc_hash::FxBuildHasher.build_hasher();
        raw.hash(&mut h);
        addrs.hash(&mut h);
        h.finish()
    }

    /// Adds a sample to its stack when that was met; false when it was not.
    fn add(&mut self, raw: &RawKey, addrs: &[(u64, bool)], period: u64, count: u64) -> bool {
        let Some(&first) = self.by_hash.get(&Self::hash(raw, addrs)) else {
            return false;
        };
        let mut i = first;
        while i != NO_STACK {
            let d = &mut self.list[i as usize];
            if d.raw == *raw && d.addrs == addrs {
                d.added.period += period;
                d.added.count += count;
                return true;
            }
            i = d.collides;
        }
        false
    }

    /// A stack met for the first time.
    fn first(&mut self, raw: RawKey, addrs: &[(u64, bool)], added: Added) {
        let i = self.list.len() as u32;
        let slot = self
            .by_hash
            .entry(Self::hash(&raw, addrs))
            .or_insert(NO_STACK);
        let collides = std::mem::replace(slot, i);
        self.addrs_held += addrs.len() + added.chain.len() + added.others.len() + 8;
        self.list.push(Distinct {
            raw,
            addrs: addrs.to_vec(),
            collides,
            added,
        });
    }

    /// Too much held: time to add it to the report.
    fn full(&self) -> bool {
        self.addrs_held > self.limit
    }

    /// Adds every stack held to the tables and graphs, in the order met, and forgets
    /// them.
    fn add_to(&mut self, tables: &mut [Table], trees: &mut Trees, sort: &[SortKey], srcline: bool) {
        for d in self.list.drain(..) {
            let a = d.added;
            let table = &mut tables[d.raw.table];
            if srcline {
                *table
                    .before_srcline
                    .entry(keys::before_srcline(&a.leaf, sort))
                    .or_default() += a.count as u32;
            }
            let i = table.entry(a.leaf);
            let e = &mut table.entries[i].1;
            e.unresolved.get_or_insert(a.leaf_unresolved);
            e.samples += a.count;
            e.period += a.period;
            e.children += a.period;
            if a.tree {
                let root = *e.tree.get_or_insert_with(|| trees.root());
                trees.append(root, &a.chain, a.period, a.count);
                e.depth = e.depth.max(a.chain.len());
            }
            for (key, k, unresolved) in a.others {
                if srcline {
                    *table
                        .before_srcline
                        .entry(keys::before_srcline(&key, sort))
                        .or_default() += a.count as u32;
                }
                let i = table.entry(key);
                let e = &mut table.entries[i].1;
                e.unresolved.get_or_insert(unresolved);
                e.children += a.period;
                if a.tree {
                    let root = *e.tree.get_or_insert_with(|| trees.root());
                    trees.append(root, &a.chain[k..], a.period, a.count);
                    e.depth = e.depth.max(a.chain.len() - k);
                }
            }
        }
        self.by_hash.clear();
        self.addrs_held = 0;
    }
}

/// Builds the report of every event of a recording.
pub fn report(
    analyzer: &mut Analyzer<'_>,
    opts: &ReportOptions,
) -> Result<Vec<EventReport>, Error> {
    report_folding(analyzer, opts, FOLD_LIMIT)
}

/// [`report`], with the samples' stacks folded until they hold `fold_limit` words.
fn report_folding(
    analyzer: &mut Analyzer<'_>,
    opts: &ReportOptions,
    fold_limit: usize,
) -> Result<Vec<EventReport>, Error> {
    let n_events = analyzer.events.len().max(1);
    let mut tables: Vec<Table> = (0..n_events).map(|_| Table::default()).collect();
    let w = Wanted::of(&opts.sort);
    let parent_re = if w.parent {
        Some(
            regex::Regex::new(&opts.parent)
                .map_err(|e| crate::BadOption::new("--parent", format!("{}: {e}", opts.parent)))?,
        )
    } else {
        None
    };
    let mut parent_match: HashMap<SymbolId, bool> = HashMap::default();
    let graph = opts.call_graph.is_some();
    // perf decides on Children from the attrs in the file's header, before reading any
    // record: a pipe's attrs come as records, too late, and it gets none.
    let want_children = opts.children && analyzer.data.format.layout != perfdata::Layout::Pipe;
    // perf's order: caller with Children asked for (a pipe's too, though it gets none),
    // callee without, unless -g says.
    let order = opts
        .call_graph
        .as_ref()
        .and_then(|g| g.order)
        .unwrap_or(if opts.children {
            Order::Caller
        } else {
            Order::Callee
        });
    let mut trees = Trees::default();
    let mut frames: Vec<Frame> = vec![];
    let mut stack = Stack::default();
    // Frames with the inlined function each is (`--inline`), leaf first.
    let mut expanded: Vec<(Frame, Option<u32>)> = vec![];
    let mut cursor: Vec<(Frame, Option<u32>)> = vec![];
    let mut strings = Strings::default();
    // The inline chain at (object, address): innermost first, `None` for the symbol
    // itself; empty without debug info there.
    let mut inline_chains: HashMap<(u32, u64), Vec<Option<u32>>> = HashMap::default();
    // Source positions, by (object, map-relative address, false) or, for a call chain's
    // entries, (object, address, true).
    let mut srclines: HashMap<(Option<u32>, u64, bool), u32> = HashMap::default();
    let mut seen: Vec<RowKey> = vec![];
    let mut folded = Folded {
        limit: fold_limit,
        ..Folded::default()
    };
    let sample_type_chain = perfdata::types::SampleType::CALLCHAIN;
    // perf report's default `--percentage absolute`: hidden samples count in the totals.
    let run = crate::RunOptions {
        deliver_hidden: !opts.relative,
        ..Default::default()
    };
    analyzer.run(run, |machine, item| -> Result<bool, crate::AnalysisError> {
        let Some(s) = &item.sample else {
            return Ok(true);
        };
        // What the sample weighs, and how many samples it counts for.
        let (period, count) = match &opts.off_cpu {
            None => (s.period, 1),
            Some(w) => match w.of(s) {
                Some(x) => x,
                None => return Ok(true),
            },
        };
        let ev = if opts.off_cpu.is_some() {
            0
        } else {
            s.event.min(n_events - 1)
        };
        let table = &mut tables[ev];
        let has_chain = item.ctx.sample_type.contains(sample_type_chain);
        table.has_chains |= has_chain;
        table.samples += count;
        table.period += period;
        if s.hidden {
            // Hidden by a filter: in the totals (perf's absolute percentages), no entry.
            return Ok(true);
        }
        let walk = has_chain && (want_children || graph || w.parent);
        let tree_wanted = graph && has_chain;
        if tree_wanted {
            table.chain_period += period;
        }
        if walk {
            machine.stack(s, &mut stack)?;
        } else {
            stack.addrs.clear();
            stack.unwound = None;
            stack.user_from = 0;
        }
        // A stack met before, in the same state of the machine, adds what it added.
        let raw = RawKey {
            event: s.event,
            table: ev,
            pid: s.pid,
            tid: s.tid,
            cpu: if w.cpu { s.cpu } else { None },
            kernel: s.kernel,
            ip: s.ip,
            walk,
            unwound: stack.unwound.is_some(),
            cut: stack.is_cut(),
            user_from: stack.user_from,
            changes: machine.changes(),
        };
        if folded.add(&raw, &stack.addrs, period, count) {
            return Ok(true);
        }
        let leaf = if walk {
            machine.resolve_stack(s.pid, &stack, &mut frames);
            frames[0]
        } else {
            machine.resolve(s.pid, s.kernel, s.ip)
        };
        // perf keys the entry by the sample's ip, not the callchain's first entry.
        let leaf = if leaf.ip == s.ip {
            leaf
        } else {
            machine.resolve(s.pid, s.kernel, s.ip)
        };
        // The chain as perf's cursor holds it: cut to --max-stack, in print order; with
        // --inline, each unwound frame that has debug info as the functions inlined
        // there and its own (perf 6.1's `unwind_entry` → `append_inlines`).
        cursor.clear();
        if walk {
            let n = frames.len().min(opts.max_stack);
            let kept = match order {
                Order::Callee => 0..n,
                Order::Caller => frames.len() - n..frames.len(),
            };
            expanded.clear();
            for i in kept {
                let f = frames[i];
                let unwound = stack.unwound.is_some() && i >= stack.user_from;
                if let (true, true, Some((dso, map_ip)), Some(sym)) =
                    (opts.inline, unwound, f.dso, f.symbol)
                {
                    let chain = inline_chains
                        .entry((dso.0, map_ip))
                        .or_insert_with(|| inline_chain(machine, &mut strings, dso, map_ip, sym));
                    if !chain.is_empty() {
                        expanded.extend(chain.iter().map(|&name| (f, name)));
                        continue;
                    }
                }
                expanded.push((f, None));
            }
            match order {
                Order::Callee => cursor.extend_from_slice(&expanded),
                Order::Caller => cursor.extend(expanded.iter().rev()),
            }
        }
        let comm = if w.comm {
            match machine.comm_id(s.tid) {
                Some(c) => Some(c),
                None => {
                    return Err(crate::AnalysisError::unsupported(format!(
                        "sample of unknown thread {}",
                        s.tid
                    )))
                }
            }
        } else {
            None
        };
        let parent = match &parent_re {
            Some(re) => cursor.iter().find_map(|(f, _)| {
                let sym = f.symbol?;
                let m = *parent_match
                    .entry(sym)
                    .or_insert_with(|| re.is_match(machine.dsos.symbol_name(sym)));
                m.then_some(sym)
            }),
            None => None,
        };
        let sk = SampleKey {
            comm,
            tid: s.tid,
            cpu: s.cpu.map_or(-1, |c| c as i32),
            parent,
        };
        let mut chain = vec![];
        if tree_wanted {
            chain.extend(cursor.iter().map(|(f, inl)| trees.intern(call_of(f, *inl))));
        }
        let mut srcline_of = |f: &Frame, chained: bool| {
            let at = match f.dso {
                Some((d, a)) if !f.truncated && !chained => (Some(d.0), a, false),
                _ => (f.dso.map(|(d, _)| d.0), f.ip, chained),
            };
            *srclines.entry(at).or_insert_with(|| {
                strings.intern(keys::srcline(machine, f, opts.full_source_path, chained))
            })
        };
        let mut key = w.key(&sk, &leaf, None, false);
        if w.srcline {
            key.srcline = Some(srcline_of(&leaf, false));
        }
        let mut others = vec![];
        if want_children && walk {
            // Every other entry of the chain, once each (perf's he_cache).
            seen.clear();
            seen.push(key);
            // perf fills one location per entry in turn and sets the `[k]`/`[.]` mark only
            // where a map covers the address: an address outside every map keeps the
            // mark of the entry before (the sample's, for the first).
            let mut kernel = leaf.kernel;
            for (k, &(f, inlined)) in cursor.iter().enumerate() {
                let mut f = f;
                if f.dso.is_none() && f.symbol.is_none() {
                    f.kernel = kernel;
                } else {
                    kernel = f.kernel;
                }
                let mut key = w.key(&sk, &f, inlined, true);
                if w.srcline {
                    key.srcline = Some(srcline_of(&f, true));
                }
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                others.push((key, k, f.symbol.is_none()));
            }
        }
        folded.first(
            raw,
            &stack.addrs,
            Added {
                leaf: key,
                leaf_unresolved: leaf.symbol.is_none(),
                tree: tree_wanted,
                chain,
                others,
                period,
                count,
            },
        );
        if folded.full() {
            folded.add_to(&mut tables, &mut trees, &opts.sort, w.srcline);
        }
        Ok(true)
    })?;
    folded.add_to(&mut tables, &mut trees, &opts.sort, w.srcline);
    let children = want_children && tables.iter().any(|t| t.has_chains);
    let machine = &analyzer.machine;
    let strings = &strings;
    let order_key = |a: Call, b: Call| call_cmp(machine, strings, a, b);
    let name = |c: Call| call_name(machine, strings, c);
    let mut out = vec![];
    for (ev, table) in tables.into_iter().enumerate() {
        if table.samples == 0 {
            continue;
        }
        let call_graph = match &opts.call_graph {
            Some(g) if table.has_chains => {
                let mut g = g.clone();
                g.order = Some(order);
                if let Some(limit) = opts.percent_limit {
                    g.threshold = limit;
                }
                Some(g)
            }
            _ => None,
        };
        let mut list = table.entries;
        let graph_shown = call_graph.is_some();
        list.sort_by(|(ka, a), (kb, b)| {
            let self_then_keys = || {
                b.period
                    .cmp(&a.period)
                    .then_with(|| tie_order(machine, strings, &opts.sort, ka, kb))
            };
            if !children {
                return self_then_keys();
            }
            // perf's `__hpp__sort_acc`: equal Children put the caller above the callee,
            // by the longest chain each was given. perf does so only between entries of
            // one thread (a comparison that is no order: it inserts into a tree, and
            // the result depends on insertion order); here between any two, so that the
            // sort is one.
            b.children
                .cmp(&a.children)
                .then_with(|| {
                    if !graph_shown {
                        return std::cmp::Ordering::Equal;
                    }
                    match order {
                        Order::Caller => b.depth.cmp(&a.depth),
                        Order::Callee => a.depth.cmp(&b.depth),
                    }
                })
                .then_with(self_then_keys)
        });
        let keys_of = |k: &RowKey| -> Vec<String> {
            opts.sort
                .iter()
                .map(|&sk| keys::render_key(machine, strings, k, sk))
                .collect()
        };
        let mut widths: Vec<usize> = opts.sort.iter().map(|k| k.header().len()).collect();
        let mut rows = vec![];
        // perf widens the object column to an address's 16 digits when an entry has
        // no symbol (`hists__set_unres_dso_col_len`).
        let dso_col = opts.sort.iter().position(|&k| k == SortKey::Dso);
        for (k, e) in list {
            let keys = keys_of(&k);
            for ((w, v), sk) in widths.iter_mut().zip(&keys).zip(&opts.sort) {
                if *sk == SortKey::Srcline
                    && table
                        .before_srcline
                        .get(&keys::before_srcline(&k, &opts.sort))
                        .is_none_or(|&n| n < 2)
                {
                    // Not looked up by perf when it sizes the columns: printed cut to
                    // the width the others give.
                    continue;
                }
                if sk.widens() {
                    let mut len = v.chars().count();
                    // perf sizes the column by the symbol's name, which an inlined
                    // function's ` (inlined)` is printed after (`namelen + 4`).
                    if *sk == SortKey::Sym && matches!(k.sym, Some(keys::SymKey::Inlined(..))) {
                        len -= INLINED.len();
                    }
                    *w = (*w).max(len);
                }
            }
            if let (Some(d), Some(true)) = (dso_col, e.unresolved) {
                widths[d] = widths[d].max(16);
            }
            let shown = if children { e.children } else { e.period };
            // perf compares as `float`.
            let pct = percent(shown, table.period) as f32;
            if opts.percent_limit.is_some_and(|l| pct < l as f32) {
                continue;
            }
            let graph = match (&call_graph, e.tree) {
                (Some(g), Some(root)) => trees.output(
                    root,
                    &callgraph::Output {
                        mode: g.mode,
                        // perf's `callchain_total * (min_percent / 100)`, as a u64.
                        min_hit: (table.chain_period as f64 * (g.threshold / 100.0)) as u64,
                        percent: g.threshold,
                        order: &order_key,
                        name: &name,
                    },
                ),
                _ => vec![],
            };
            rows.push(Row {
                keys,
                samples: e.samples,
                period: e.period,
                percent: percent(e.period, table.period),
                children_period: children.then_some(e.children),
                children_percent: children.then(|| percent(e.children, table.period)),
                call_graph: graph,
            });
        }
        out.push(EventReport {
            event: match opts.off_cpu {
                Some(_) => OFF_CPU_EVENT.to_string(),
                None => analyzer.events.get(ev).cloned().unwrap_or_default(),
            },
            samples: table.samples,
            period: table.period,
            children,
            call_graph,
            rows,
            widths,
        });
    }
    Ok(out)
}

/// What perf prints after an inlined function's name.
const INLINED: &str = " (inlined)";

fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// A frame as a call of the graph: the function inlined there (`--inline`), else its
/// function, else its address as recorded.
fn call_of(f: &Frame, inlined: Option<u32>) -> Call {
    match (f.truncated, f.symbol, inlined, f.dso) {
        (true, ..) => CUT,
        (false, Some(_), Some(name), Some((d, _))) => Call::Inlined(d, name),
        (false, Some(s), ..) => Call::Symbol(s),
        (false, None, ..) => Call::Address(f.dso.map(|(d, _)| d), f.ip),
    }
}

/// The inline chain at `map_ip` of `dso`, whose symbol is `sym`: the functions inlined
/// there, innermost first, then the one they are inlined into, each as perf's
/// `new_inline_sym` makes it — the symbol itself (`None`) where the debug info names it
/// as the symbol table does, else an inlined function of that name (so a clone's
/// `msort_with_tmp.part.0` is `msort_with_tmp (inlined)`). Empty without debug info.
fn inline_chain(
    m: &Machine,
    strings: &mut Strings,
    dso: crate::DsoId,
    map_ip: u64,
    sym: SymbolId,
) -> Vec<Option<u32>> {
    let addr = m.dsos.lookup_address(dso, map_ip);
    let base = m.dsos.symbol_name(sym);
    m.dsos
        .inline_lines(dso, addr)
        .into_iter()
        .map(|l| (l.function != base).then(|| strings.intern(l.function)))
        .collect()
}

/// perf's `match_chain` as an order of the calls under one node: an inlined call
/// against another call with a function by name, else [`call_order`].
fn call_cmp(m: &Machine, strings: &Strings, a: Call, b: Call) -> std::cmp::Ordering {
    let function = |c: Call| match c {
        Call::Symbol(s) => Some(m.dsos.symbol_name(s)),
        Call::Inlined(_, n) => Some(strings.get(n)),
        Call::Address(..) => None,
    };
    let inlined = |c: Call| matches!(c, Call::Inlined(..));
    if inlined(a) || inlined(b) {
        if let (Some(x), Some(y)) = (function(a), function(b)) {
            return x.cmp(y);
        }
    }
    call_order(m, a).cmp(&call_order(m, b))
}

/// perf orders the calls under a node by object (its `struct dso` pointer: perf
/// allocates them as it meets the objects, as perfdata numbers them; none first), then
/// by the symbol's start or the address.
fn call_order(m: &Machine, c: Call) -> (u32, u64) {
    match c {
        Call::Symbol(s) => (s.dso.0 + 1, m.dsos.symbol_start(s)),
        Call::Address(d, a) => (d.map_or(0, |d| d.0 + 1), a),
        Call::Inlined(d, _) => (d.0 + 1, 0),
    }
}

/// A call as perf names it: the function, else the address (C's `%#lx`: `0` for 0).
fn call_name(m: &Machine, strings: &Strings, c: Call) -> String {
    match c {
        Call::Symbol(s) => m.dsos.symbol_name(s).to_string(),
        Call::Inlined(_, n) => format!("{}{INLINED}", strings.get(n)),
        Call::Address(_, 0) => "0".into(),
        Call::Address(_, a) => format!("{a:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folding samples by stack, and adding the folded stacks to the report in several
    /// rounds, gives the report of adding every sample in turn (here: one stack per
    /// round), in each view whose text depends on the order of insertion.
    #[test]
    fn folded_stacks_added_in_rounds_give_the_same_report() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../conformance/fixtures/callchain.data"
        );
        let rec = perfdata::Recording::open(path).unwrap();
        let views = [
            ReportOptions::default(),
            ReportOptions {
                children: false,
                sort: SortKey::parse("pid,dso,sym").unwrap(),
                call_graph: CallGraphOptions::parse("flat,0,callee").unwrap(),
                ..ReportOptions::default()
            },
            ReportOptions {
                call_graph: CallGraphOptions::parse("fractal,0,caller").unwrap(),
                ..ReportOptions::default()
            },
        ];
        for opts in views {
            let text = |limit| {
                let mut a = Analyzer::open(&rec, &Default::default()).unwrap();
                render(&report_folding(&mut a, &opts, limit).unwrap(), &opts)
            };
            let (once, rounds) = (text(FOLD_LIMIT), text(0));
            assert!(once.lines().count() > 20, "{once}");
            assert_eq!(once, rounds);
        }
    }
}
