//! The report's columns (perf's `--sort` keys): what an entry is keyed by, how the keys
//! are printed, and the order of entries whose overheads tie.

use crate::dso::{DsoId, SymbolId};
use crate::machine::{CommId, Frame};
use crate::Machine;

/// A column of the report (perf's `--sort` keys of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// The thread's name (`comm`).
    Comm,
    /// The thread id with its name (`pid`, shown `TID:comm`: perf's "thread").
    Pid,
    /// The thread id alone (`tid`; not a perf key).
    Tid,
    /// The shared object's short name (`dso`), `[unknown]` outside any map.
    Dso,
    /// The function, or the address where no symbol covers it, after perf's `[k]`/`[.]`
    /// level mark (`sym`).
    Sym,
    /// The CPU the sample was taken on (`cpu`; `-001` when the event does not sample it).
    Cpu,
    /// The outermost (caller order) or innermost (callee order) function of the call
    /// chain whose name matches the `--parent` pattern, `[other]` where none does
    /// (`parent`).
    Parent,
}

/// perf's `--parent` pattern when none is given.
pub const DEFAULT_PARENT: &str = "^sys_|^do_page_fault";

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
                "sym" | "symbol" => Ok(SortKey::Sym),
                "cpu" => Ok(SortKey::Cpu),
                "parent" => Ok(SortKey::Parent),
                other => Err(format!(
                    "unknown sort key `{other}` (known: comm, pid, tid, dso, sym, cpu, parent)"
                )),
            })
            .collect()
    }

    /// The name perf gives the key above a table whose column it elided (`# comm: x`).
    pub fn elide_name(self) -> &'static str {
        match self {
            SortKey::Comm => "comm",
            SortKey::Pid => "pid",
            SortKey::Tid => "tid",
            SortKey::Dso => "dso",
            SortKey::Sym => "symbol",
            SortKey::Cpu => "cpu",
            SortKey::Parent => "parent",
        }
    }

    /// perf's column header (perf's own spacing: the thread's is right-aligned).
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Tid => "Tid",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
            SortKey::Cpu => "CPU",
            SortKey::Parent => "Parent symbol",
        }
    }

    /// Whether the column widens to its widest value (perf's CPU column keeps the
    /// header's width).
    pub(crate) fn widens(self) -> bool {
        self != SortKey::Cpu
    }
}

/// What an entry is keyed by (only the fields of the chosen sort keys are set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct RowKey {
    pub comm: Option<CommId>,
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    pub dso: Option<Option<DsoId>>,
    pub sym: Option<SymKey>,
    pub cpu: Option<i32>,
    /// The parent function (`None` inside: `[other]`).
    pub parent: Option<Option<SymbolId>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SymKey {
    Symbol(SymbolId, char),
    /// Unresolved: the sample's map-relative address (or its address, without a map);
    /// a call chain entry's address as recorded (perf keys each as its `al->addr`).
    Addr(u64, char),
}

/// Which keys are wanted, looked up once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted {
    pub comm: bool,
    pub pid: bool,
    pub tid: bool,
    pub dso: bool,
    pub sym: bool,
    pub cpu: bool,
    pub parent: bool,
}

impl Wanted {
    pub fn of(sort: &[SortKey]) -> Wanted {
        let has = |k| sort.contains(&k);
        Wanted {
            comm: has(SortKey::Comm) || has(SortKey::Pid),
            pid: has(SortKey::Pid),
            tid: has(SortKey::Tid) || has(SortKey::Pid),
            dso: has(SortKey::Dso),
            sym: has(SortKey::Sym),
            cpu: has(SortKey::Cpu),
            parent: has(SortKey::Parent),
        }
    }
}

/// The per-sample part of a key (thread, CPU, parent), shared by every entry a sample
/// adds to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SampleKey {
    pub comm: Option<CommId>,
    pub tid: i32,
    pub cpu: i32,
    pub parent: Option<SymbolId>,
}

impl Wanted {
    /// The key of the entry `f` belongs to; `raw` keys an unresolved frame by its
    /// address as recorded rather than the map-relative one.
    pub fn key(&self, s: &SampleKey, f: &Frame, raw: bool) -> RowKey {
        RowKey {
            comm: if self.comm { s.comm } else { None },
            pid: self.pid.then_some(s.tid),
            tid: self.tid.then_some(s.tid),
            dso: self.dso.then(|| f.dso.map(|(d, _)| d)),
            sym: self.sym.then(|| sym_key(f, raw)),
            cpu: self.cpu.then_some(s.cpu),
            parent: self.parent.then_some(s.parent),
        }
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

fn sym_key(f: &Frame, raw: bool) -> SymKey {
    match f.symbol {
        Some(s) => SymKey::Symbol(s, level(f)),
        None if f.truncated => SymKey::Addr(u64::MAX, '.'),
        None if raw => SymKey::Addr(f.ip, level(f)),
        None => SymKey::Addr(f.dso.map_or(f.ip, |(_, a)| a), level(f)),
    }
}

/// Equal overheads: by each sort key in `--sort` order, with perf's sort functions:
/// command, thread, CPU ascending; shared object, symbol and parent by name, none last.
pub(crate) fn tie_order(
    m: &Machine,
    sort: &[SortKey],
    a: &RowKey,
    b: &RowKey,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let dso = |k: &RowKey| k.dso.flatten().map(|d| m.dsos.get(d).short_name.as_str());
    let sym = |k: &RowKey| match k.sym {
        Some(SymKey::Symbol(s, _)) => (0, m.dsos.symbol_name(s), 0),
        Some(SymKey::Addr(a, _)) => (1, "", a),
        None => (2, "", 0),
    };
    // perf's `cmp_null`: a missing one after.
    let parent = |k: &RowKey| match k.parent.flatten() {
        Some(s) => (0, m.dsos.symbol_name(s)),
        None => (1, ""),
    };
    let mut o = Ordering::Equal;
    for key in sort {
        o = match key {
            SortKey::Comm => a
                .comm
                .map(|c| m.comm_name(c))
                .cmp(&b.comm.map(|c| m.comm_name(c))),
            SortKey::Pid => a.pid.cmp(&b.pid),
            SortKey::Tid => a.tid.cmp(&b.tid),
            // By name, none last.
            SortKey::Dso => match (dso(a), dso(b)) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(x), Some(y)) => x.cmp(y),
            },
            SortKey::Sym => sym(a).cmp(&sym(b)),
            SortKey::Cpu => a.cpu.cmp(&b.cpu),
            SortKey::Parent => parent(a).cmp(&parent(b)),
        };
        if o != Ordering::Equal {
            break;
        }
    }
    o
}

/// A key's value as perf prints it.
pub(crate) fn render_key(m: &Machine, k: &RowKey, sk: SortKey) -> String {
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
            // C's `%#.16llx`: no `0x` for 0.
            Some(SymKey::Addr(0, l)) => format!("[{l}] {:016x}", 0),
            Some(SymKey::Addr(a, l)) => format!("[{l}] {a:#018x}"),
            None => String::new(),
        },
        // C's `%3.3d`: at least three digits, after the sign.
        SortKey::Cpu => {
            let c = k.cpu.unwrap_or(-1);
            let digits = format!("{:03}", c.unsigned_abs());
            if c < 0 {
                format!("-{digits}")
            } else {
                digits
            }
        }
        SortKey::Parent => match k.parent.flatten() {
            Some(s) => m.dsos.symbol_name(s).to_string(),
            None => "[other]".into(),
        },
    }
}
