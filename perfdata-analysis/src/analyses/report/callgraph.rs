//! The call graph under each report entry, as perf builds and prints it: every chain a
//! sample adds to an entry goes into a tree of calls (perf's `callchain_append`: a node
//! holds the run of calls its chains share, and splits where they part or one ends); the
//! tree is then pruned by the threshold and sorted (`sort_chain_graph_abs/rel`,
//! `sort_chain_flat`) and printed as `-g graph|fractal|flat|folded` print it
//! (`ui/stdio/hist.c`).

use crate::symbols::dso::{DsoId, SymbolId};
use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write as _;

/// How the call graph is printed (the first word of perf's `-g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphMode {
    /// A tree; each branch's share of the event's period (perf's default).
    Graph,
    /// A tree; each branch's share of its parent's.
    Fractal,
    /// Every chain in full, with its share (its own and its longer chains').
    Flat,
    /// Every chain on one line, `;`-separated, with its own share.
    Folded,
}

/// Which end of a chain comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// From the outermost caller to the function (perf's default with Children).
    Caller,
    /// From the function to its callers (perf's default without).
    Callee,
}

/// What a branch is labeled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphValue {
    /// Share of the total, `12.34%`.
    Percent,
    /// The periods summed.
    Period,
    /// The number of chains.
    Count,
}

/// perf's `-g` parameters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallGraphOptions {
    /// How the graph is printed.
    pub mode: GraphMode,
    /// Branches under this share (percent) are left out: of the event's period in graph,
    /// flat and folded modes, of the parent branch's in fractal mode.
    pub threshold: f64,
    /// At most this many branches under a node (0: all).
    pub print_limit: u32,
    /// Chain order; `None`: caller with the Children column, callee without (perf's).
    pub order: Option<Order>,
    /// What branches are labeled with.
    pub value: GraphValue,
}

impl Default for CallGraphOptions {
    /// perf's `graph,0.5,caller,function,percent` (callee without Children).
    fn default() -> Self {
        CallGraphOptions {
            mode: GraphMode::Graph,
            threshold: 0.5,
            print_limit: 0,
            order: None,
            value: GraphValue::Percent,
        }
    }
}

impl CallGraphOptions {
    /// perf's `-g` argument (`print_type,threshold[,print_limit],order,sort_key,value`,
    /// words in any order, each word or a prefix of it, as perf parses it); `none` turns
    /// the graph off (`Ok(None)`).
    pub fn parse(spec: &str) -> Result<Option<CallGraphOptions>, crate::BadOption> {
        let bad = |why: String| crate::BadOption::new("-g", why);
        let mut o = CallGraphOptions::default();
        let mut numbers = 0;
        for tok in spec.split(',').filter(|t| !t.is_empty()) {
            let is = |word: &str| word.starts_with(tok);
            if is("none") {
                return Ok(None);
            } else if is("graph") {
                o.mode = GraphMode::Graph;
            } else if is("flat") {
                o.mode = GraphMode::Flat;
            } else if is("fractal") {
                o.mode = GraphMode::Fractal;
            } else if is("folded") {
                o.mode = GraphMode::Folded;
            } else if is("callee") {
                o.order = Some(Order::Callee);
            } else if is("caller") {
                o.order = Some(Order::Caller);
            } else if is("function") {
            } else if is("address") || is("srcline") || is("branch") {
                return Err(bad(format!("{tok}: only the `function` key is supported")));
            } else if is("percent") {
                o.value = GraphValue::Percent;
            } else if is("period") {
                o.value = GraphValue::Period;
            } else if is("count") {
                o.value = GraphValue::Count;
            } else if numbers == 0 {
                o.threshold = tok
                    .parse()
                    .ok()
                    .filter(|t: &f64| t.is_finite() && *t >= 0.0)
                    .ok_or_else(|| {
                        bad(format!(
                            "`{tok}` is no mode, order, key, value or threshold"
                        ))
                    })?;
                numbers += 1;
            } else {
                o.print_limit = tok
                    .parse()
                    .map_err(|_| bad(format!("`{tok}` is no print limit")))?;
            }
        }
        Ok(Some(o))
    }
}

/// A call in a chain: a function, an address no symbol covers, or the end of a stack
/// cut short (perf's `-1` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    Symbol(SymbolId),
    Address(Option<DsoId>, u64),
    /// A function inlined at an address of the object (`--inline`), by its name's id:
    /// perf tells inlined calls apart by name only (`match_chain`).
    Inlined(DsoId, u32),
}

/// The address perf gives the end of a stack its unwinder could not finish.
pub(crate) const CUT: Call = Call::Address(None, u64::MAX);

const NONE: u32 = u32::MAX;

/// One call of the uncompressed tree (a trie over calls).
#[derive(Debug, Clone, Copy)]
struct TNode {
    call: u32,
    /// Period and number of the chains ending here.
    hit: u64,
    count: u64,
    /// Period and number of the chains through here (this one's included).
    total: u64,
    total_count: u64,
    first_child: u32,
    next_sibling: u32,
}

/// Every entry's tree of chains, sharing one arena, and the calls interned.
#[derive(Default)]
pub(crate) struct Trees {
    nodes: Vec<TNode>,
    edges: HashMap<u64, u32>,
    calls: Vec<Call>,
    call_ids: HashMap<Call, u32>,
}

impl Trees {
    /// The id of a call.
    pub fn intern(&mut self, c: Call) -> u32 {
        if let Some(&id) = self.call_ids.get(&c) {
            return id;
        }
        let id = self.calls.len() as u32;
        self.calls.push(c);
        self.call_ids.insert(c, id);
        id
    }

    /// A new empty tree: its root's index.
    pub fn root(&mut self) -> u32 {
        self.push(NONE)
    }

    fn push(&mut self, call: u32) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(TNode {
            call,
            hit: 0,
            count: 0,
            total: 0,
            total_count: 0,
            first_child: NONE,
            next_sibling: NONE,
        });
        id
    }

    /// Adds a chain (call ids, in print order) of `count` samples weighing `period`
    /// to the tree at `root`.
    pub fn append(&mut self, root: u32, chain: &[u32], period: u64, count: u64) {
        if chain.is_empty() {
            return;
        }
        let mut node = root;
        self.nodes[node as usize].total += period;
        self.nodes[node as usize].total_count += count;
        for &c in chain {
            let key = (u64::from(node) << 32) | u64::from(c);
            node = match self.edges.get(&key) {
                Some(&n) => n,
                None => {
                    let n = self.push(c);
                    let parent = &mut self.nodes[node as usize];
                    let sibling = parent.first_child;
                    parent.first_child = n;
                    self.nodes[n as usize].next_sibling = sibling;
                    self.edges.insert(key, n);
                    n
                }
            };
            let n = &mut self.nodes[node as usize];
            n.total += period;
            n.total_count += count;
        }
        let n = &mut self.nodes[node as usize];
        n.hit += period;
        n.count += count;
    }

    pub fn call(&self, id: u32) -> Call {
        self.calls[id as usize]
    }

    /// The children of a node in perf's insertion order (`rb_root_in`: by the first
    /// call's object, then its symbol's start or its address, largest first; an
    /// inlined call by name).
    fn children(&self, node: u32, order: &Cmp<'_>) -> Vec<u32> {
        let mut v = vec![];
        let mut c = self.nodes[node as usize].first_child;
        while c != NONE {
            v.push(c);
            c = self.nodes[c as usize].next_sibling;
        }
        let call = |n: u32| self.calls[self.nodes[n as usize].call as usize];
        if !v.iter().any(|&n| matches!(call(n), Call::Inlined(..))) {
            // perf's `append_chain_children` puts a call left of one it is greater than.
            v.sort_by(|&a, &b| order(call(b), call(a)));
            return v;
        }
        // With inlined calls perf's comparison is by name against one and by address
        // between two others, which is no order: the tree it builds is that of the
        // insertions (first met first; `first_child` holds the last met), each going
        // left of a node it is greater than. Without its rebalancing, which keeps the
        // in-order sequence of a consistent comparison.
        v.reverse();
        let mut left = vec![NONE; v.len()];
        let mut right = vec![NONE; v.len()];
        for i in 1..v.len() {
            let mut at = 0;
            loop {
                let next = if order(call(v[at]), call(v[i])) == std::cmp::Ordering::Less {
                    &mut left[at]
                } else {
                    &mut right[at]
                };
                if *next == NONE {
                    *next = i as u32;
                    break;
                }
                at = *next as usize;
            }
        }
        let mut out = Vec::with_capacity(v.len());
        let mut stack = vec![];
        let mut at = if v.is_empty() { NONE } else { 0 };
        while at != NONE || !stack.is_empty() {
            while at != NONE {
                stack.push(at);
                at = left[at as usize];
            }
            let Some(n) = stack.pop() else { break };
            out.push(v[n as usize]);
            at = right[n as usize];
        }
        out
    }

    /// The tree at `root` as perf prints it in `mode`: pruned at `min_hit` (graph, flat,
    /// folded) or at `percent` of each parent (fractal), branches sorted; for flat and
    /// folded, the list of chains.
    pub fn output(&self, root: u32, how: &Output<'_>) -> Vec<CallNode> {
        match how.mode {
            GraphMode::Graph | GraphMode::Fractal => {
                let children_hit = self.nodes[root as usize].total;
                self.graph(root, children_hit, how)
            }
            GraphMode::Flat | GraphMode::Folded => {
                let mut chains = vec![];
                let mut path = vec![];
                self.flat(root, &mut path, &mut chains, how);
                // perf inserts them in that order into a tree sorted by own period,
                // equal ones after: a stable sort.
                chains.sort_by_key(|c: &CallNode| std::cmp::Reverse(c.self_period));
                chains
            }
        }
    }

    /// A node's run of calls: itself, then while no chain ends there and one child
    /// follows, that child. Returns the calls and the run's last node.
    fn run(&self, first: u32, order: &Cmp<'_>) -> (Vec<u32>, u32) {
        let mut calls = vec![self.nodes[first as usize].call];
        let mut last = first;
        loop {
            let n = &self.nodes[last as usize];
            if n.count > 0 || n.first_child == NONE {
                break;
            }
            let kids = self.children(last, order);
            if kids.len() != 1 {
                break;
            }
            last = kids[0];
            calls.push(self.nodes[last as usize].call);
        }
        (calls, last)
    }

    fn graph(&self, node: u32, children_hit: u64, how: &Output<'_>) -> Vec<CallNode> {
        let min_hit = match how.mode {
            GraphMode::Fractal => (children_hit as f64 * how.percent / 100.0).ceil() as u64,
            _ => how.min_hit,
        };
        let mut out = vec![];
        for c in self.children(node, how.order) {
            let (calls, last) = self.run(c, how.order);
            let l = &self.nodes[last as usize];
            if l.total < min_hit {
                continue;
            }
            let children = self.graph(last, l.total - l.hit, how);
            out.push(CallNode {
                frames: calls.iter().map(|&c| (how.name)(self.call(c))).collect(),
                period: l.total,
                self_period: l.hit,
                samples: l.total_count,
                self_samples: l.count,
                children,
            });
        }
        out.sort_by_key(|n| std::cmp::Reverse(n.period));
        out
    }

    /// perf's `__sort_chain_flat`: children first, then the node when chains end there.
    fn flat(&self, node: u32, path: &mut Vec<u32>, out: &mut Vec<CallNode>, how: &Output<'_>) {
        for c in self.children(node, how.order) {
            let (calls, last) = self.run(c, how.order);
            let depth = path.len();
            path.extend(calls.iter().copied().filter(|&c| self.call(c) != CUT));
            self.flat(last, path, out, how);
            let l = &self.nodes[last as usize];
            if l.hit > 0 && l.hit >= how.min_hit {
                out.push(CallNode {
                    frames: path.iter().map(|&c| (how.name)(self.call(c))).collect(),
                    period: l.total,
                    self_period: l.hit,
                    samples: l.total_count,
                    self_samples: l.count,
                    children: vec![],
                });
            }
            path.truncate(depth);
        }
    }
}

/// perf's comparison of two calls under one node (`match_chain`).
pub(crate) type Cmp<'a> = dyn Fn(Call, Call) -> std::cmp::Ordering + 'a;

/// What [`Trees::output`] needs.
pub(crate) struct Output<'a> {
    pub mode: GraphMode,
    /// The least period of a branch (graph, flat, folded).
    pub min_hit: u64,
    /// The threshold in percent (fractal).
    pub percent: f64,
    /// perf's order of calls under one node.
    pub order: &'a Cmp<'a>,
    /// A call's name as perf prints it.
    pub name: &'a dyn Fn(Call) -> String,
}

/// A branch of an entry's call graph: a run of calls no chain leaves or ends in before
/// its last, and the branches under it (graph and fractal modes); in flat and folded
/// modes, one chain, in full, without branches.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallNode {
    /// The calls, in the graph's order.
    pub frames: Vec<String>,
    /// Period of the chains through the branch.
    pub period: u64,
    /// Period of the chains ending at its last call.
    pub self_period: u64,
    /// Number of the chains through the branch.
    pub samples: u64,
    /// Number of the chains ending at its last call.
    pub self_samples: u64,
    /// The branches under it, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<CallNode>,
}

/// How an entry's graph is printed.
pub(crate) struct Print<'a> {
    pub opts: &'a CallGraphOptions,
    /// The event's period (graph, flat and folded shares are of it).
    pub total: u64,
    /// The entry's period (Children's with Children): fractal shares start from it.
    pub entry: u64,
    /// perf leaves out the first call of a lone chain when the sort starts with `sym`.
    pub skip_first: bool,
}

/// Prints an entry's call graph after its row, as perf's `hist_entry_callchain__fprintf`.
pub(crate) fn print(s: &mut String, nodes: &[CallNode], p: &Print<'_>) {
    match p.opts.mode {
        GraphMode::Graph | GraphMode::Fractal => print_graph(s, nodes, p),
        GraphMode::Flat => {
            for (i, n) in nodes.iter().enumerate() {
                if p.opts.print_limit != 0 && i as u32 == p.opts.print_limit {
                    break;
                }
                s.push_str("           ");
                value(s, p, n.period, n.samples, p.total);
                s.push('\n');
                for f in &n.frames {
                    let _ = writeln!(s, "                {f}");
                }
                s.push('\n');
            }
        }
        GraphMode::Folded => {
            for (i, n) in nodes.iter().enumerate() {
                if p.opts.print_limit != 0 && i as u32 == p.opts.print_limit {
                    break;
                }
                value(s, p, n.self_period, n.self_samples, p.total);
                s.push(' ');
                s.push_str(&n.frames.join(";"));
                s.push('\n');
            }
        }
    }
}

fn value(s: &mut String, p: &Print<'_>, period: u64, count: u64, total: u64) {
    let _ = match p.opts.value {
        GraphValue::Period => write!(s, "{period}"),
        GraphValue::Count => write!(s, "{count}"),
        GraphValue::Percent => {
            let pct = if total == 0 {
                0.0
            } else {
                period as f64 * 100.0 / total as f64
            };
            write!(s, "{pct:.2}%")
        }
    };
}

fn margin(s: &mut String, left: usize) {
    for _ in 0..12 + left {
        s.push(' ');
    }
}

/// perf's depth mask is a C `int` shifted by the depth: on x86 the shift count is taken
/// modulo 32, which is what makes its pipes repeat past depth 31.
fn bit(i: u32) -> i32 {
    1i32.wrapping_shl(i)
}

fn print_graph(s: &mut String, nodes: &[CallNode], p: &Print<'_>) {
    let start = s.len();
    let mut left = 0;
    let mut level = nodes;
    let mut parent_count = nodes.iter().map(|n| n.samples).sum::<u64>();
    if let [only] = nodes {
        if only.period == p.entry {
            let mut printed = false;
            let mut shown = 0;
            for (i, f) in only.frames.iter().enumerate() {
                if i == 0 && p.skip_first {
                    continue;
                }
                if !printed {
                    margin(s, left);
                    s.push_str("|\n");
                    margin(s, left);
                    s.push_str("---");
                    left += 3;
                    printed = true;
                } else {
                    margin(s, left);
                }
                s.push_str(f);
                s.push('\n');
                shown += 1;
                if shown == p.opts.print_limit {
                    break;
                }
            }
            level = &only.children;
            parent_count = only.samples - only.self_samples;
        }
    }
    let total = match p.opts.mode {
        GraphMode::Fractal => p.entry,
        _ => p.total,
    };
    graph_level(s, level, total, 1, 1, left, parent_count, p);
    if s.len() > start {
        s.push('\n');
    }
}

/// perf's `__callchain__fprintf_graph`.
#[allow(clippy::too_many_arguments)]
fn graph_level(
    s: &mut String,
    nodes: &[CallNode],
    total: u64,
    depth: u32,
    depth_mask: i32,
    left: usize,
    parent_count: u64,
    p: &Print<'_>,
) {
    let rel = p.opts.mode == GraphMode::Fractal;
    let mut new_mask = depth_mask;
    let mut remaining = total;
    let mut cumul_count = 0u64;
    for (i, child) in nodes.iter().enumerate() {
        remaining = remaining.wrapping_sub(child.period);
        cumul_count += child.samples;
        if i + 1 == nodes.len() && (!rel || remaining == 0) {
            new_mask &= !bit(depth - 1);
        }
        graph_line(s, depth, depth_mask, left);
        for (j, f) in child.frames.iter().enumerate() {
            let v = (j == 0).then_some((child.period, child.samples));
            ipchain(s, v, f, depth, new_mask, total, left, p);
        }
        let new_total = if rel {
            child.period - child.self_period
        } else {
            total
        };
        graph_level(
            s,
            &child.children,
            new_total,
            depth + 1,
            new_mask | bit(depth),
            left,
            child.samples - child.self_samples,
            p,
        );
        if p.opts.print_limit != 0 && (i + 1) as u32 == p.opts.print_limit {
            break;
        }
    }
    if rel && remaining != 0 && remaining != total {
        let mut count = 0;
        if p.opts.value == GraphValue::Count && !nodes.is_empty() {
            let c = parent_count as i64 - cumul_count as i64;
            if c <= 0 {
                return;
            }
            count = c as u64;
        }
        new_mask &= !bit(depth - 1);
        ipchain(
            s,
            Some((remaining, count)),
            "[...]",
            depth,
            new_mask,
            total,
            left,
            p,
        );
    }
}

fn graph_line(s: &mut String, depth: u32, mask: i32, left: usize) {
    margin(s, left);
    for i in 0..depth {
        s.push_str(if mask & bit(i) != 0 {
            "|          "
        } else {
            "           "
        });
    }
    s.push('\n');
}

#[allow(clippy::too_many_arguments)]
fn ipchain(
    s: &mut String,
    value_of: Option<(u64, u64)>,
    name: &str,
    depth: u32,
    mask: i32,
    total: u64,
    left: usize,
    p: &Print<'_>,
) {
    margin(s, left);
    for i in 0..depth {
        s.push(if mask & bit(i) != 0 { '|' } else { ' ' });
        match value_of {
            Some((period, count)) if i == depth - 1 => {
                s.push_str("--");
                value(s, p, period, count, total);
                s.push_str("--");
            }
            _ => s.push_str("          "),
        }
    }
    s.push_str(name);
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_words_parse_as_perf_parses_them() {
        let o = CallGraphOptions::parse("fractal,5,caller")
            .unwrap()
            .unwrap();
        assert_eq!(
            (o.mode, o.threshold, o.order),
            (GraphMode::Fractal, 5.0, Some(Order::Caller))
        );
        let o = CallGraphOptions::parse("fo,0,10,callee,count")
            .unwrap()
            .unwrap();
        assert_eq!(o.mode, GraphMode::Folded);
        assert_eq!((o.threshold, o.print_limit), (0.0, 10));
        assert_eq!((o.order, o.value), (Some(Order::Callee), GraphValue::Count));
        assert!(CallGraphOptions::parse("none").unwrap().is_none());
        assert!(CallGraphOptions::parse("graph,x").is_err());
        assert!(CallGraphOptions::parse("address").is_err());
    }

    #[test]
    fn chains_split_where_they_part_and_where_one_ends() {
        let mut t = Trees::default();
        let (a, b, c, d) = (
            t.intern(Call::Address(None, 1)),
            t.intern(Call::Address(None, 2)),
            t.intern(Call::Address(None, 3)),
            t.intern(Call::Address(None, 4)),
        );
        let root = t.root();
        t.append(root, &[a, b, c], 5, 1);
        t.append(root, &[a, b, d], 3, 1);
        t.append(root, &[a, b], 1, 1);
        let key = |c: Call| match c {
            Call::Address(_, a) => (0, a),
            _ => (1, 0),
        };
        let order = |a: Call, b: Call| key(a).cmp(&key(b));
        let name = |c: Call| match c {
            Call::Address(_, a) => format!("f{a}"),
            _ => "?".into(),
        };
        let how = Output {
            mode: GraphMode::Graph,
            min_hit: 0,
            percent: 0.0,
            order: &order,
            name: &name,
        };
        let g = t.output(root, &how);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].frames, ["f1", "f2"]);
        assert_eq!((g[0].period, g[0].self_period), (9, 1));
        let kids: Vec<_> = g[0]
            .children
            .iter()
            .map(|n| (n.frames[0].as_str(), n.period))
            .collect();
        assert_eq!(kids, [("f3", 5), ("f4", 3)]);
        // Pruned at 4: the branch of 3 goes.
        let g = t.output(root, &Output { min_hit: 4, ..how });
        assert_eq!(g[0].children.len(), 1);
        let flat = t.output(
            root,
            &Output {
                mode: GraphMode::Folded,
                min_hit: 0,
                ..how
            },
        );
        let lines: Vec<_> = flat
            .iter()
            .map(|n| (n.frames.join(";"), n.self_period))
            .collect();
        assert_eq!(
            lines,
            [
                ("f1;f2;f3".into(), 5),
                ("f1;f2;f4".into(), 3),
                ("f1;f2".to_string(), 1)
            ]
        );
    }

    #[test]
    fn inlined_calls_of_equal_weight_come_in_perfs_tree_order() {
        let mut t = Trees::default();
        let dso = DsoId(0);
        let names = ["b", "a", "c", "x"];
        let calls: Vec<u32> = (0..3).map(|i| t.intern(Call::Inlined(dso, i))).collect();
        let addr = t.intern(Call::Address(None, 7));
        let root = t.root();
        // Met in the order b, a, c, then an address.
        for &c in &calls {
            t.append(root, &[c], 1, 1);
        }
        t.append(root, &[addr], 1, 1);
        let name_of = |c: Call| match c {
            Call::Inlined(_, i) => names[i as usize].to_string(),
            _ => "x".into(),
        };
        // By name (each inlined call against anything is compared by name).
        let order = |a: Call, b: Call| name_of(a).cmp(&name_of(b));
        let how = Output {
            mode: GraphMode::Graph,
            min_hit: 0,
            percent: 0.0,
            order: &order,
            name: &name_of,
        };
        let g = t.output(root, &how);
        let got: Vec<&str> = g.iter().map(|n| n.frames[0].as_str()).collect();
        // Largest first: perf's insertion puts a greater call to the left.
        assert_eq!(got, ["x", "c", "b", "a"]);
    }
}
