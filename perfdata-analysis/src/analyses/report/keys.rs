//! The report's columns (perf's `--sort` keys): what an entry is keyed by, how the keys
//! are printed, and the order of entries whose overheads tie.

use crate::machine::CommId;
use crate::symbols::dso::{DsoId, SymbolId};
use crate::symbols::Frame;
use crate::Machine;
use rustc_hash::FxHashMap as HashMap;

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
    /// The sample address's source position, `file:line` from the debug info (the
    /// file's base name unless [`super::ReportOptions::full_source_path`]); without one,
    /// perf's fallback: `function+offset` (decimal), `object[address]` (hex) or `??:0`
    /// (`srcline`).
    Srcline,
}

/// perf's `--parent` pattern when none is given.
pub const DEFAULT_PARENT: &str = "^sys_|^do_page_fault";

impl SortKey {
    /// A comma-separated `--sort` list (`comm,dso,sym`); an unknown key is an error that
    /// names the known ones.
    pub fn parse(list: &str) -> Result<Vec<SortKey>, crate::BadOption> {
        list.split(',')
            .map(|k| match k.trim() {
                "comm" => Ok(SortKey::Comm),
                "pid" => Ok(SortKey::Pid),
                "tid" => Ok(SortKey::Tid),
                "dso" => Ok(SortKey::Dso),
                "sym" | "symbol" => Ok(SortKey::Sym),
                "cpu" => Ok(SortKey::Cpu),
                "parent" => Ok(SortKey::Parent),
                "srcline" => Ok(SortKey::Srcline),
                other => Err(crate::BadOption::new(
                    "--sort",
                    format!(
                        "unknown sort key `{other}` (known: comm, pid, tid, dso, sym, cpu, parent, srcline)"
                    ),
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
            SortKey::Srcline => "srcline",
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
            SortKey::Srcline => "Source:Line",
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
    /// The source position, as a [`Strings`] id.
    pub srcline: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SymKey {
    Symbol(SymbolId, char),
    /// Unresolved: the sample's map-relative address (or its address, without a map);
    /// a call chain entry's address as recorded (perf keys each as its `al->addr`).
    Addr(u64, char),
    /// A function inlined into a symbol's code (`--inline`): the symbol, and the
    /// function's name as a [`Strings`] id. perf keys it by its name within the
    /// symbol's range (`_sort__sym_cmp`).
    Inlined(SymbolId, u32, char),
}

/// Strings a report keys entries by (inlined functions' names, source positions),
/// each stored once.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    all: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Strings {
    /// The id of a string, adding it when new.
    pub fn intern(&mut self, s: String) -> u32 {
        if let Some(&id) = self.ids.get(&s) {
            return id;
        }
        let id = self.all.len() as u32;
        self.all.push(s.clone());
        self.ids.insert(s, id);
        id
    }

    /// The string of an id.
    pub fn get(&self, id: u32) -> &str {
        self.all.get(id as usize).map_or("", String::as_str)
    }
}

/// The part of an entry's key that perf compares before its `srcline` key.
pub(crate) fn before_srcline(k: &RowKey, sort: &[SortKey]) -> RowKey {
    let mut out = RowKey::default();
    for key in sort.iter().take_while(|&&key| key != SortKey::Srcline) {
        match key {
            SortKey::Comm => out.comm = k.comm,
            SortKey::Pid => (out.pid, out.tid) = (k.pid, k.tid),
            SortKey::Tid => out.tid = k.tid,
            SortKey::Dso => out.dso = k.dso,
            SortKey::Sym => out.sym = k.sym,
            SortKey::Cpu => out.cpu = k.cpu,
            SortKey::Parent => out.parent = k.parent,
            SortKey::Srcline => {}
        }
    }
    out
}

/// perf's text for an unknown source position (`SRCLINE_UNKNOWN`).
const SRCLINE_UNKNOWN: &str = "??:0";

/// A frame's source position as perf's `srcline` key prints it (`map__srcline`,
/// `__get_srcline`): `file:line` of the address from the object's debug info (the
/// file's base name unless `full`); else the function and the decimal offset in it
/// (`leaf+12`); else the object's short name and the address (`prog[1139]`); outside
/// any map, and at the end of a cut stack, `??:0`. perf asks nothing of an object whose
/// name is in brackets (`[kernel.kallsyms]`, `[vdso]`).
///
/// `chained`: an entry of a call chain (under Children), which perf 6.1 looks up at the
/// address as recorded rather than the object's (`fill_callchain_info` keeps `node->ip`
/// as the entry's address): the debug info rarely covers it, and the offset printed is
/// from the object's symbol to that address.
pub(crate) fn srcline(m: &Machine, f: &Frame, full: bool, chained: bool) -> String {
    let Some((dso, map_ip)) = f.dso.filter(|_| !f.truncated) else {
        return SRCLINE_UNKNOWN.into();
    };
    let at = m.dsos.lookup_address(dso, map_ip);
    // The symbol's start as perf holds it (in the map's address space).
    let sym_start = f
        .symbol
        .map(|s| map_ip.wrapping_sub(at.wrapping_sub(m.dsos.symbol_start(s))));
    let (addr, base) = if chained {
        (f.ip, sym_start)
    } else {
        (at, f.symbol.map(|s| m.dsos.symbol_start(s)))
    };
    let d = m.dsos.get(dso);
    if !d.name.starts_with('[') {
        // binutils, without line information, names the file of the function's
        // `STT_FILE` symbol, line 0.
        let found = m
            .dsos
            .source_line(dso, addr)
            .or_else(|| Some((m.dsos.binutils_file(dso, addr)?, 0)));
        if let Some((file, line)) = found {
            let file = if full {
                file.as_str()
            } else {
                file.rsplit('/').next().unwrap_or(&file)
            };
            return format!("{file}:{line}");
        }
    }
    match (f.symbol, base) {
        (Some(s), Some(start)) => {
            format!("{}+{}", m.dsos.symbol_name(s), addr.wrapping_sub(start))
        }
        _ => format!("{}[{addr:x}]", d.short_name),
    }
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
    pub srcline: bool,
}

impl Wanted {
    pub fn of(sort: &[SortKey]) -> Wanted {
        let has = |k| sort.contains(&k);
        Wanted {
            // perf's thread key is the id alone (`sort__thread_cmp`), shown with the
            // thread's last name: a thread that ran `sh` and exec'd `yes` is one entry.
            comm: has(SortKey::Comm),
            pid: has(SortKey::Pid),
            tid: has(SortKey::Tid) || has(SortKey::Pid),
            dso: has(SortKey::Dso),
            sym: has(SortKey::Sym),
            cpu: has(SortKey::Cpu),
            parent: has(SortKey::Parent),
            srcline: has(SortKey::Srcline),
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
    /// address as recorded rather than the map-relative one. `inlined`: the frame is
    /// that function inlined at the address (`--inline`). The source position is the
    /// caller's to set.
    pub fn key(&self, s: &SampleKey, f: &Frame, inlined: Option<u32>, raw: bool) -> RowKey {
        RowKey {
            comm: if self.comm { s.comm } else { None },
            pid: self.pid.then_some(s.tid),
            tid: self.tid.then_some(s.tid),
            dso: self.dso.then(|| f.dso.map(|(d, _)| d)),
            sym: self.sym.then(|| match (inlined, f.symbol) {
                (Some(name), Some(sym)) => SymKey::Inlined(sym, name, level(f)),
                _ => sym_key(f, raw),
            }),
            cpu: self.cpu.then_some(s.cpu),
            parent: self.parent.then_some(s.parent),
            srcline: None,
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
    strings: &Strings,
    sort: &[SortKey],
    a: &RowKey,
    b: &RowKey,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let dso = |k: &RowKey| k.dso.flatten().map(|d| m.dsos.get(d).short_name.as_str());
    let sym = |k: &RowKey| match k.sym {
        Some(SymKey::Symbol(s, _)) => (0, m.dsos.symbol_name(s), 0),
        Some(SymKey::Inlined(_, name, _)) => (0, strings.get(name), 0),
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
            // perf's `sort__srcline_sort`: by the text.
            SortKey::Srcline => a
                .srcline
                .map(|i| strings.get(i))
                .cmp(&b.srcline.map(|i| strings.get(i))),
        };
        if o != Ordering::Equal {
            break;
        }
    }
    o
}

/// A key's value as perf prints it.
pub(crate) fn render_key(m: &Machine, strings: &Strings, k: &RowKey, sk: SortKey) -> String {
    let comm = || k.comm.map_or("", |c| m.comm_name(c));
    match sk {
        SortKey::Comm => comm().to_string(),
        SortKey::Pid => match k.pid {
            Some(tid) => format!("{tid:>7}:{}", m.comm(tid)),
            None => format!("{:>7}:", -1),
        },
        SortKey::Tid => format!("{}", k.tid.unwrap_or(-1)),
        SortKey::Dso => match k.dso.flatten() {
            Some(d) => m.dsos.get(d).short_name.clone(),
            None => "[unknown]".into(),
        },
        SortKey::Sym => match k.sym {
            Some(SymKey::Symbol(s, l)) => format!("[{l}] {}", m.dsos.symbol_name(s)),
            Some(SymKey::Inlined(_, name, l)) => {
                format!("[{l}] {}{}", strings.get(name), super::INLINED)
            }
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
        SortKey::Srcline => k
            .srcline
            .map_or(SRCLINE_UNKNOWN, |i| strings.get(i))
            .to_string(),
    }
}
