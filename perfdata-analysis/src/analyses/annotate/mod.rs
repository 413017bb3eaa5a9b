//! `perf annotate`: the functions samples fell in, disassembled in-process, each
//! instruction with its share of the samples ([`annotate`]), and perf's `--stdio` text
//! of that ([`listing`]).
//!
//! As perf 6.1: a sample counts for the function its address is in (the leaf, not its
//! callers), per event; an instruction gets the samples at any of its bytes; functions
//! come hottest (by period) first. The code is read from the object's file the program
//! ran from (checked against the recorded build id, as symbols are), and decoded with
//! [`disasm`] into objdump's text, with the source positions objdump's `-l` prints from
//! the DWARF line table when the analyzer reads lines.

pub mod aarch64;
pub mod disasm;
pub mod html;
pub mod listing;

use crate::symbols::{DsoId, Dsos, SymbolId};
use crate::AnalysisError as Error;
use crate::Analyzer;
use disasm::{Arch, ObjdumpSymbols, Syntax};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Options of [`annotate`].
#[derive(Debug, Clone, Default)]
pub struct AnnotateOptions {
    /// Only this event (by name); default: every event, one after the other.
    pub event: Option<String>,
    /// Only the functions of these names (as perf names them: demangled, without
    /// parameters); default: every function with samples. As perf, the global
    /// percentages then count only these functions' samples.
    pub symbols: Vec<String>,
    /// AT&T (objdump's default) or Intel.
    pub syntax: Syntax,
    /// Interleave the source lines as `objdump -S` does (perf's default; `--no-source`
    /// leaves them out).
    pub source: bool,
    /// objdump's `--prefix`: put before each absolute source path (its first
    /// [`prefix_strip`](Self::prefix_strip) directories taken off) to find the file.
    pub prefix: Option<String>,
    /// objdump's `--prefix-strip`: directories taken off a source path before `prefix`.
    pub prefix_strip: usize,
    /// perf's `--percent-limit`: the functions under this share of their event's period
    /// (percent) are left out, neither disassembled nor reported skipped; 0: none is.
    pub percent_limit: f64,
    /// Also gather each function's [`Function::lines`]: per source line its share and
    /// its instructions' addresses, the line's text read from the file (found as the
    /// interleaved source is, `prefix` and `prefix_strip` applied).
    pub by_line: bool,
    /// perf's `-l` will be printed: gather each instruction's
    /// [`Insn::binutils_file`] (reading the object's line programs once more).
    pub print_line: bool,
}

/// The annotated functions of a recording, per event.
#[derive(Debug, Clone, Default)]
pub struct Annotation {
    /// One per event with samples, in the recording's order.
    pub events: Vec<EventAnnotation>,
    /// Functions with samples that could not be disassembled, and why (one line each).
    pub skipped: Vec<Skipped>,
}

/// A function that could not be disassembled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The event.
    pub event: String,
    /// The function's name.
    pub symbol: String,
    /// Its object.
    pub dso: String,
    /// Why, in one line.
    pub reason: String,
}

/// The functions of one event.
#[derive(Debug, Clone, Default)]
pub struct EventAnnotation {
    /// The event's name.
    pub event: String,
    /// Samples of the event (those the global percentages divide by).
    pub total_samples: u64,
    /// Their periods' sum.
    pub total_period: u64,
    /// Hottest first.
    pub functions: Vec<Function>,
}

/// One function's listing.
#[derive(Debug, Clone, Default)]
pub struct Function {
    /// Its object's path (perf's long name) and file name.
    pub dso: String,
    /// The object's file name, as the listing's header shows it.
    pub dso_short: String,
    /// The name perf gives it (demangled, without parameters).
    pub symbol: String,
    /// The name objdump gives its first address (demangled, with parameters).
    pub objdump_name: String,
    /// The section its code is in (`.text`).
    pub section: String,
    /// Its code's instruction set (how `--asm-raw` shows the bytes).
    pub arch: Arch,
    /// First address and end, as the object states them.
    pub start: u64,
    /// Exclusive.
    pub end: u64,
    /// Samples in it, and their periods' sum.
    pub samples: u64,
    /// Sum of the periods of its samples.
    pub period: u64,
    /// Its instructions, with the source positions before them.
    pub items: Vec<Item>,
    /// Its source lines with instructions ([`AnnotateOptions::by_line`]; empty
    /// otherwise): files in the order their first instruction comes, lines ascending
    /// in a file, the instructions without a position last.
    pub lines: Vec<SourceLine>,
}

/// One source line of a function and the instructions the debug info attributes to it.
/// Inlined code counts for its innermost line (the line table's, as the listing's
/// positions), not for the line of the call it was inlined at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The file, as the debug info names it, and the line; `None` for the
    /// instructions without a position.
    pub position: Option<(String, u32)>,
    /// The line's text, when its file could be read (`None`: only the position is
    /// known).
    pub text: Option<String>,
    /// Samples at its instructions.
    pub samples: u64,
    /// Their periods' sum.
    pub period: u64,
    /// Its instructions, as runs of consecutive instructions in address order.
    pub runs: Vec<AddressRun>,
    /// The inlined functions (innermost, demangled) whose code it is; empty when it is
    /// the function's own code only.
    pub inlined: Vec<String>,
}

/// Consecutive instructions of one source line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressRun {
    /// The first instruction's address.
    pub first: u64,
    /// The last instruction's address (its first byte).
    pub last: u64,
    /// How many instructions.
    pub instructions: usize,
}

/// One line of a function's disassembly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An instruction.
    Insn(Insn),
    /// The innermost function (inlined or not) of the next instructions, as objdump's
    /// `-l` names it (`mix()`, a demangled name as it is).
    Function(String),
    /// The source position of the next instructions (objdump's `-l` line `/path:LINE`).
    Line {
        /// The source file.
        file: String,
        /// The line.
        line: u32,
    },
    /// A line of a source file, as `objdump -S` prints it before the instructions of
    /// its line (with the lines before it that it had not printed yet).
    Source(String),
}

/// An instruction and its samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Its address, as the object states it.
    pub addr: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// objdump's text.
    pub text: String,
    /// Samples at any of its bytes.
    pub samples: u64,
    /// Their periods' sum.
    pub period: u64,
    /// Its source file and line (the innermost, of inlined code), when the DWARF says.
    pub line: Option<(String, u32)>,
    /// The file perf's `-l` names instead of `line`'s (binutils' `addr2line`, which
    /// perf asks, names the compile unit's file for some rows: see
    /// [`Dsos::binutils_line_file`]), gathered with [`AnnotateOptions::print_line`].
    pub binutils_file: Option<String>,
    /// The functions its code is of, innermost (inlined) first, ending with the
    /// function itself (DWARF's names, demangled); empty without DWARF.
    pub inlined: Vec<String>,
}

/// Per function and event: samples and period by address.
type Hits = HashMap<u64, (u64, u64)>;

/// Annotates the functions samples fell in (see the module's documentation).
pub fn annotate(analyzer: &mut Analyzer<'_>, opts: &AnnotateOptions) -> Result<Annotation, Error> {
    let wanted =
        match &opts.event {
            Some(name) => Some(analyzer.events.iter().position(|e| e == name).ok_or_else(
                || {
                    crate::BadOption::new(
                        "--event",
                        format!(
                            "no event named `{name}` (events: {})",
                            analyzer.events.join(", ")
                        ),
                    )
                },
            )?),
            None => None,
        };
    let events = analyzer.events.clone();
    let mut totals: Vec<(u64, u64)> = vec![(0, 0); events.len()];
    let mut hits: HashMap<(usize, SymbolId), Hits> = HashMap::default();
    // Whether a symbol is one of those asked for, by symbol.
    let mut chosen: HashMap<SymbolId, bool> = HashMap::default();
    let mut result = Annotation::default();
    let mut functions: Vec<(usize, SymbolId, Hits)> = vec![];
    // Kernel code is never annotated: its samples count in the totals, and are named
    // (for the functions skipped) after the walk, only where the kernel's share of an
    // event reaches the limit; its symbols are then read, and only then.
    let defer_kernel = opts.symbols.is_empty();
    let mut kernel_hits: HashMap<(usize, i32, u64), (u64, u64)> = HashMap::default();
    let mut kernel_period = vec![0u64; events.len()];
    // The objects' DWARF (objdump -l's positions, the source lines) loads on another
    // thread while the walk goes on.
    analyzer.machine.dsos.read_ahead_user(true);
    analyzer.run(
        crate::RunOptions::default(),
        |machine, item| -> Result<bool, Error> {
            let Some(s) = &item.sample else {
                return Ok(true);
            };
            if wanted.is_some_and(|w| w != s.event) || s.event >= totals.len() {
                return Ok(true);
            }
            if defer_kernel && s.kernel {
                let t = &mut totals[s.event];
                t.0 += 1;
                t.1 += s.period;
                kernel_period[s.event] += s.period;
                let h = kernel_hits.entry((s.event, s.pid, s.ip)).or_default();
                h.0 += 1;
                h.1 += s.period;
                return Ok(true);
            }
            let frame = machine.resolve(s.pid, s.kernel, s.ip);
            let symbol = frame.symbol;
            if !opts.symbols.is_empty() {
                // perf leaves every other sample out, from the totals too.
                let Some(sym) = symbol else { return Ok(true) };
                let ok = *chosen.entry(sym).or_insert_with(|| {
                    let name = machine.dsos.symbol_name(sym);
                    opts.symbols.iter().any(|n| n == name)
                });
                if !ok {
                    return Ok(true);
                }
            }
            let t = &mut totals[s.event];
            t.0 += 1;
            t.1 += s.period;
            if let (Some(sym), Some((dso, map_ip))) = (symbol, frame.dso) {
                let addr = machine.dsos.lookup_address(dso, map_ip);
                let h = hits
                    .entry((s.event, sym))
                    .or_default()
                    .entry(addr)
                    .or_default();
                h.0 += 1;
                h.1 += s.period;
            }
            Ok(true)
        },
    )?;
    // The walk is over: the recording's pages are unmapped on another thread while
    // the functions are disassembled, not on this one when the recording is dropped.
    analyzer.recording().release_in_background();
    let machine = &analyzer.machine;
    for ((event, pid, ip), (n, p)) in kernel_hits {
        if share(kernel_period[event], totals[event].1) < opts.percent_limit {
            continue;
        }
        let frame = machine.resolve(pid, true, ip);
        if let (Some(sym), Some((dso, map_ip))) = (frame.symbol, frame.dso) {
            let addr = machine.dsos.lookup_address(dso, map_ip);
            let h = hits
                .entry((event, sym))
                .or_default()
                .entry(addr)
                .or_default();
            h.0 += n;
            h.1 += p;
        }
    }
    functions.extend(hits.into_iter().map(|((e, s), h)| (e, s, h)));
    let dsos = &analyzer.machine.dsos;
    let mut code = CodeFiles {
        source: opts.source,
        ..CodeFiles::default()
    };
    let mut sources = Sources::default();
    for (event, name) in events.iter().enumerate() {
        if wanted.is_some_and(|w| w != event) || totals[event].0 == 0 {
            continue;
        }
        let mut mine: Vec<(SymbolId, &Hits, u64, u64)> = functions
            .iter()
            .filter(|(e, _, _)| *e == event)
            .map(|(_, s, h)| {
                let (n, p) = h.values().fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
                (*s, h, n, p)
            })
            .collect();
        // Hottest first; ties by object and name (a stable order).
        mine.sort_by(|a, b| {
            b.3.cmp(&a.3).then_with(|| {
                let key = |s: SymbolId| (&dsos.get(s.dso).name, dsos.symbol_name(s));
                key(a.0).cmp(&key(b.0))
            })
        });
        let mut ev = EventAnnotation {
            event: name.clone(),
            total_samples: totals[event].0,
            total_period: totals[event].1,
            functions: vec![],
        };
        for (sym, h, samples, period) in mine {
            if share(period, totals[event].1) < opts.percent_limit {
                continue;
            }
            match function(dsos, &mut code, &mut sources, sym, h, opts) {
                Ok(mut f) => {
                    f.samples = samples;
                    f.period = period;
                    if opts.by_line {
                        f.lines = by_line(&f, &mut sources, opts);
                    }
                    ev.functions.push(f);
                }
                Err(reason) => result.skipped.push(Skipped {
                    event: name.clone(),
                    symbol: dsos.symbol_name(sym).to_string(),
                    dso: dsos.get(sym.dso).name.clone(),
                    reason,
                }),
            }
        }
        result.events.push(ev);
    }
    Ok(result)
}

/// `part` of `total` in percent (0 of nothing), as `--percent-limit` compares it.
fn share(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// The objects' files read so far, by DSO: the file's bytes and its symbols as objdump
/// names addresses, or why there is none.
#[derive(Default)]
struct CodeFiles {
    by_dso: HashMap<DsoId, Result<Arc<CodeFile>, String>>,
    /// Whether source lines are shown (objdump -S then names addresses by the separate
    /// debug file's symbols).
    source: bool,
}

struct CodeFile {
    code: Code,
    symbols: Arc<ObjdumpSymbols>,
}

/// Where a function's bytes are.
enum Code {
    /// An object file, mapped.
    Elf(memmap2::Mmap),
    /// A JIT function's bytes from its jitdump's CODE_LOAD, the code's instruction set
    /// (its `elf_mach`), and the address `perf inject --jit`'s object puts them at (its
    /// `GEN_ELF_TEXT_OFFSET`: the ELF and program headers' size rounded up to 16), at
    /// which they are shown, as perf shows that object.
    Jit {
        bytes: Vec<u8>,
        arch: Arch,
        base: u64,
        /// The CODE_DEBUG_INFO before its CODE_LOAD: from each offset in the code (by
        /// offset) on, up to the next's, the source position (`None`: a line the JIT
        /// marks unknown).
        lines: Vec<(u64, Option<(String, u32)>)>,
    },
}

impl CodeFiles {
    fn get(&mut self, dsos: &Dsos, id: DsoId) -> Result<Arc<CodeFile>, String> {
        self.by_dso
            .entry(id)
            .or_insert_with(|| CodeFile::open(dsos, id, self.source).map(Arc::new))
            .clone()
    }
}

impl CodeFile {
    fn open(dsos: &Dsos, id: DsoId, source: bool) -> Result<CodeFile, String> {
        use crate::symbols::dso::DsoKind;
        let dso = dsos.get(id);
        match dso.kind {
            DsoKind::Kernel | DsoKind::Module(_) => {
                return Err("kernel code is not annotated (no kernel image is read)".into())
            }
            DsoKind::PerfMap => {
                return Err("a perf map names JIT code without its bytes (a jitdump has them: record with the JIT's jitdump option and give it with --jitdump)".into())
            }
            DsoKind::Jit {
                ref symbol,
                size,
                ref jitdump,
            } => return jit_code(&dso.name, symbol, size, jitdump),
            DsoKind::User => {}
        }
        let Some(path) = dsos.runtime_path(id) else {
            let id = dso
                .build_id
                .as_deref()
                .map(|b| format!(" with build id {}", crate::symbols::dso::hex(b)))
                .unwrap_or_default();
            return Err(format!("no file of {}{id} found", dso.name));
        };
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: read-only mapping; a file changed under us gives wrong text, not UB in
        // code that only reads bytes.
        let map =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("{}: {e}", path.display()))?;
        let obj = object::File::parse(&*map)
            .map_err(|e| format!("{}: not an object file ({e})", path.display()))?;
        if Arch::of(&obj).is_none() {
            return Err(format!(
                "{}: {:?} code is not disassembled (x86 and aarch64 only)",
                path.display(),
                object::Object::architecture(&obj)
            ));
        }
        // The separate debug file symbols were read from, when not the object itself:
        // objdump -S loads it, and its symbols with it (-d alone does not).
        let debug_map = dsos
            .symbols_from(id)
            .filter(|_| source)
            .filter(|p| *p != path)
            .and_then(|p| std::fs::File::open(p).ok())
            // SAFETY: as above, read-only.
            .and_then(|f| unsafe { memmap2::Mmap::map(&f) }.ok());
        let debug = debug_map
            .as_deref()
            .and_then(|m| object::File::parse(m).ok());
        let symbols = Arc::new(ObjdumpSymbols::of(&obj, debug.as_ref()));
        drop(debug);
        drop(obj);
        Ok(CodeFile {
            code: Code::Elf(map),
            symbols,
        })
    }
}

/// One function disassembled, with its samples.
fn function(
    dsos: &Dsos,
    code: &mut CodeFiles,
    sources: &mut Sources,
    sym: SymbolId,
    hits: &Hits,
    opts: &AnnotateOptions,
) -> Result<Function, String> {
    let syntax = opts.syntax;
    use object::{Object, ObjectSection};
    let file = code.get(dsos, sym.dso)?;
    let (start, end) = (dsos.symbol_start(sym), dsos.symbol_end(sym));
    let map = match &file.code {
        Code::Elf(map) => map,
        Code::Jit {
            bytes,
            arch,
            base,
            lines: positions,
        } => {
            let from = usize::try_from(start).unwrap_or(usize::MAX);
            let to = usize::try_from(end).unwrap_or(usize::MAX).min(bytes.len());
            let Some(code) = bytes.get(from..to) else {
                return Err(format!("its code at {start:#x} is not in its CODE_LOAD"));
            };
            // A CODE_LOAD's address is any 64-bit value: the addresses wrap as the CPU's do.
            let insns = disasm::decode(
                code,
                start.wrapping_add(*base),
                *arch,
                opts.syntax,
                &file.symbols,
                None,
            );
            let hits: Hits = hits
                .iter()
                .map(|(a, h)| (a.wrapping_add(*base), *h))
                .collect();
            let name = disasm::demangle_full(dsos.symbol_name(sym));
            // objdump -l names the function from the object's symbol table.
            let mut items = vec![Item::Function(format!("{name}()"))];
            let mut prev_line = 0;
            let mut printed: HashMap<String, (u32, u32)> = HashMap::default();
            for (insn, (samples, period)) in insns_with_samples(insns, &hits) {
                // The entry in force: the last one at or before the instruction.
                let offset = insn.addr.wrapping_sub(*base);
                let at = positions.partition_point(|(o, _)| *o <= offset);
                let line = at.checked_sub(1).and_then(|k| positions[k].1.clone());
                position_items(
                    &mut items,
                    sources,
                    &mut printed,
                    &mut prev_line,
                    line.as_ref(),
                    opts,
                );
                items.push(Item::Insn(Insn {
                    addr: insn.addr,
                    bytes: insn.bytes,
                    text: insn.text,
                    samples,
                    period,
                    line,
                    binutils_file: None,
                    inlined: vec![],
                }));
            }
            let dso = dsos.get(sym.dso);
            return Ok(Function {
                dso: dso.name.clone(),
                dso_short: dso.short_name.clone(),
                symbol: dsos.symbol_name(sym).to_string(),
                objdump_name: name,
                section: ".text".into(),
                arch: *arch,
                start: start.wrapping_add(*base),
                end: end.wrapping_add(*base),
                samples: 0,
                period: 0,
                items,
                lines: vec![],
            });
        }
    };
    let obj = object::File::parse(&**map).map_err(|e| e.to_string())?;
    let Some((section_index, section_name)) = disasm::section_of(&obj, start) else {
        return Err(format!("no section holds its address {start:#x}"));
    };
    let section = obj
        .section_by_index(section_index)
        .map_err(|e| e.to_string())?;
    let data = section
        .data()
        .map_err(|e| format!("section {section_name}: {e}"))?;
    let from = (start - section.address()) as usize;
    let to = (end.min(section.address() + data.len() as u64) - section.address()) as usize;
    let Some(bytes) = data.get(from..to) else {
        return Err(format!("its code at {start:#x} is not in the file"));
    };
    let arch = Arch::of(&obj).unwrap_or_default();
    let insns = disasm::decode(
        bytes,
        start,
        arch,
        syntax,
        &file.symbols,
        Some(section_index.0),
    );
    let objdump_name = file
        .symbols
        .at(start, Some(section_index.0))
        // objdump's header names the address as any other: `<sym+0xoff>` when no
        // symbol of its table starts there (the dynamic symbols of a stripped library).
        .map(|(n, value)| match start.cmp(&value) {
            std::cmp::Ordering::Equal => n.to_string(),
            std::cmp::Ordering::Greater => format!("{n}+{:#x}", start - value),
            std::cmp::Ordering::Less => format!("{n}-{:#x}", value - start),
        })
        .unwrap_or_default();
    let mut items = Vec::with_capacity(insns.len());
    let mut prev_function: Option<String> = None;
    let mut prev_line = 0;
    // objdump -S's per-file state, anew for each function (perf runs objdump per
    // function): the highest line printed and the line last printed.
    let mut printed: HashMap<String, (u32, u32)> = HashMap::default();
    // The names of the (inlined) functions, demangled once each: the same few come at
    // every instruction.
    let mut demangled: HashMap<String, String> = HashMap::default();
    let mut demangle = |name: &str| -> String {
        if let Some(d) = demangled.get(name) {
            return d.clone();
        }
        let d = disasm::demangle_full(name);
        demangled.insert(name.to_string(), d.clone());
        d
    };
    for (insn, (samples, period)) in insns_with_samples(insns, hits) {
        // objdump `-l`: the innermost function when it changes, the line when it does.
        let frames = dsos.dwarf_frames(sym.dso, insn.addr);
        if let Some(f) = frames.first() {
            // objdump prints a demangled name as it is, any other with `()`.
            let demangled = demangle(&f.name);
            let name = if demangled != f.name {
                demangled
            } else {
                format!("{}()", f.name)
            };
            if prev_function.as_deref() != Some(&name) {
                items.push(Item::Function(name.clone()));
                prev_function = Some(name);
                // objdump prints the position after a function's name even when the
                // line is the one before.
                prev_line = 0;
            }
        }
        let line = dsos.source_line(sym.dso, insn.addr);
        position_items(
            &mut items,
            sources,
            &mut printed,
            &mut prev_line,
            line.as_ref(),
            opts,
        );
        items.push(Item::Insn(Insn {
            addr: insn.addr,
            bytes: insn.bytes,
            text: insn.text,
            samples,
            period,
            binutils_file: line
                .as_ref()
                .filter(|_| opts.print_line)
                .and_then(|_| dsos.binutils_line_file(sym.dso, insn.addr))
                .map(str::to_string),
            line,
            inlined: frames.iter().map(|f| demangle(&f.name)).collect(),
        }));
    }
    let dso = dsos.get(sym.dso);
    Ok(Function {
        dso: dso.name.clone(),
        dso_short: dso.short_name.clone(),
        symbol: dsos.symbol_name(sym).to_string(),
        objdump_name,
        section: section_name,
        arch,
        start,
        end,
        samples: 0,
        period: 0,
        items,
        lines: vec![],
    })
}

/// What objdump `-l -S` prints before an instruction at `line`: its position when the
/// line changes, and the source lines `-S` shows (see [`source_lines`]).
fn position_items(
    items: &mut Vec<Item>,
    sources: &mut Sources,
    printed: &mut HashMap<String, (u32, u32)>,
    prev_line: &mut u32,
    line: Option<&(String, u32)>,
    opts: &AnnotateOptions,
) {
    let Some((file, n)) = line else { return };
    let n = *n;
    if n == 0 {
        return;
    }
    let file = relocate(file, opts.prefix.as_deref(), opts.prefix_strip);
    if n != *prev_line {
        items.push(Item::Line {
            file: file.clone(),
            line: n,
        });
    }
    *prev_line = n;
    if opts.source {
        source_lines(sources, printed, &file, n, items);
    }
}

/// Each instruction with the samples at any of its bytes (perf's `calc_percent`).
fn insns_with_samples(
    insns: Vec<disasm::Insn>,
    hits: &Hits,
) -> impl Iterator<Item = (disasm::Insn, (u64, u64))> {
    let mut counts = vec![(0u64, 0u64); insns.len()];
    for (&addr, &(n, p)) in hits {
        let i = insns.partition_point(|x| x.addr <= addr);
        if let Some(c) = i.checked_sub(1).and_then(|i| counts.get_mut(i)) {
            c.0 += n;
            c.1 += p;
        }
    }
    insns.into_iter().zip(counts)
}

/// A function's source lines with their instructions' samples and addresses (see
/// [`Function::lines`]); the text read from the files through `sources`.
fn by_line(f: &Function, sources: &mut Sources, opts: &AnnotateOptions) -> Vec<SourceLine> {
    let mut lines: Vec<SourceLine> = vec![];
    let mut index: HashMap<Option<(&str, u32)>, usize> = HashMap::default();
    // The order files first come in, by name.
    let mut files: HashMap<&str, usize> = HashMap::default();
    let mut prev: Option<usize> = None;
    for item in &f.items {
        let Item::Insn(i) = item else { continue };
        let key = i
            .line
            .as_ref()
            .filter(|(_, n)| *n > 0)
            .map(|(file, n)| (file.as_str(), *n));
        if let Some((file, _)) = key {
            let next = files.len();
            files.entry(file).or_insert(next);
        }
        let k = *index.entry(key).or_insert_with(|| {
            lines.push(SourceLine {
                position: key.map(|(file, n)| (file.to_string(), n)),
                text: None,
                samples: 0,
                period: 0,
                runs: vec![],
                inlined: vec![],
            });
            lines.len() - 1
        });
        let line = &mut lines[k];
        line.samples += i.samples;
        line.period += i.period;
        match line.runs.last_mut() {
            // The instruction right after the last one of this line: its run goes on.
            Some(run) if prev == Some(k) => {
                run.last = i.addr;
                run.instructions += 1;
            }
            _ => line.runs.push(AddressRun {
                first: i.addr,
                last: i.addr,
                instructions: 1,
            }),
        }
        prev = Some(k);
        // A chain of more than the function itself: inlined code.
        if let [inner, _, ..] = i.inlined.as_slice() {
            if !line.inlined.contains(inner) {
                line.inlined.push(inner.clone());
            }
        }
    }
    let order = |l: &SourceLine| match &l.position {
        Some((file, n)) => (files.get(file.as_str()).copied().unwrap_or(0), *n),
        None => (usize::MAX, 0),
    };
    lines.sort_by_key(order);
    for l in &mut lines {
        if let Some((file, n)) = &l.position {
            let path = relocate(file, opts.prefix.as_deref(), opts.prefix_strip);
            l.text = sources
                .get(&path)
                .and_then(|text| text.get(*n as usize - 1).cloned());
        }
    }
    lines
}

/// A JIT function's code from its jitdump: the CODE_LOAD whose index names its object
/// (`jitted-PID-INDEX.so`, as `perf inject --jit` names it).
fn jit_code(dso: &str, symbol: &str, size: u64, jitdump: &str) -> Result<CodeFile, String> {
    use perfdata::jitdump::types::RecordBody;
    let index: u64 = dso
        .rsplit('/')
        .next()
        .and_then(|f| f.strip_suffix(".so"))
        .and_then(|f| f.rsplit('-').next())
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| format!("{dso}: not a jitdump's code load"))?;
    let bytes = std::fs::read(jitdump).map_err(|e| format!("{jitdump}: {e}"))?;
    let (dump, _) =
        perfdata::jitdump::JitDump::parse_partial(&bytes).map_err(|e| format!("{jitdump}: {e}"))?;
    // EM_386, EM_X86_64 and EM_AARCH64 are decoded. perf inject's object puts the
    // code after its ELF header and one program header, 16-aligned.
    let m = dump.header.elf_mach;
    let (arch, base) = match Arch::of_elf_machine(m) {
        Some(a @ Arch::I386) => (a, (52u64 + 32).next_multiple_of(16)),
        Some(a) => (a, (64u64 + 56).next_multiple_of(16)),
        None => {
            return Err(format!(
                "{jitdump}: code of ELF machine {m} is not disassembled (x86 and aarch64 only)"
            ))
        }
    };
    let (at, load) = dump
        .records
        .iter()
        .enumerate()
        .find_map(|(k, r)| match &r.body {
            RecordBody::CodeLoad(c) if c.code_index == index => Some((k, c)),
            _ => None,
        })
        .ok_or_else(|| format!("{jitdump}: no CODE_LOAD of index {index}"))?;
    // As perf inject: the last CODE_DEBUG_INFO since the previous CODE_LOAD is this
    // load's (a load takes the one before it, a later one replaces it).
    let debug = dump.records[..at]
        .iter()
        .rev()
        .take_while(|r| !matches!(r.body, RecordBody::CodeLoad(_)))
        .find_map(|r| match &r.body {
            RecordBody::DebugInfo(d) => Some(d),
            _ => None,
        });
    let lines = debug
        .map(|d| jit_lines(&d.entries, load.code_addr))
        .unwrap_or_default();
    Ok(CodeFile {
        code: Code::Jit {
            bytes: load.code.to_vec(),
            arch,
            base,
            lines,
        },
        symbols: Arc::new(ObjdumpSymbols::single(symbol, base, size, None)),
    })
}

/// A CODE_DEBUG_INFO's entries as (offset in the code, position), by offset: each
/// holds from its address up to the next entry's (the last one to the code's end), as
/// the line table `perf inject --jit` writes from them. A name `\xff` repeats the
/// previous entry's; a line under 1 (V8's "unknown") and an address before the code
/// give no position.
fn jit_lines(
    entries: &[perfdata::jitdump::types::DebugEntry<'_>],
    code_addr: u64,
) -> Vec<(u64, Option<(String, u32)>)> {
    let mut name = String::new();
    let mut v = Vec::with_capacity(entries.len());
    for e in entries {
        if e.name.text() != b"\xff" {
            name = e.name.to_str_lossy().into_owned();
        }
        let Some(offset) = e.addr.checked_sub(code_addr) else {
            continue;
        };
        let line = u32::try_from(e.lineno)
            .ok()
            .filter(|n| *n > 0 && !name.is_empty())
            .map(|n| (name.clone(), n));
        v.push((offset, line));
    }
    // Entries come by address; sorted (stably) should a JIT write them otherwise.
    v.sort_by_key(|(o, _)| *o);
    v
}

/// objdump's `--prefix`/`--prefix-strip` on a source path: an absolute path gets the
/// prefix, after its first `strip` directories are taken off.
fn relocate(file: &str, prefix: Option<&str>, strip: usize) -> String {
    let Some(prefix) = prefix else {
        return file.to_string();
    };
    if !file.starts_with('/') {
        return file.to_string();
    }
    // As objdump: the rest starts at the separator after the `strip`-th directory.
    let mut rest = file;
    let mut level = 0;
    for (i, c) in file.char_indices().skip(1) {
        if level >= strip {
            break;
        }
        if c == '/' {
            rest = &file[i..];
            level += 1;
        }
    }
    format!("{prefix}{rest}")
}

/// The lines of the source files read so far, by path (`None`: not readable).
#[derive(Default)]
struct Sources {
    files: HashMap<String, Option<Arc<Vec<String>>>>,
}

impl Sources {
    fn get(&mut self, path: &str) -> Option<Arc<Vec<String>>> {
        self.files
            .entry(path.to_string())
            .or_insert_with(|| {
                let bytes = std::fs::read(path).ok()?;
                let text = String::from_utf8_lossy(&bytes);
                let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
                // A final newline ends the last line; it starts none.
                if text.ends_with('\n') {
                    lines.pop();
                }
                Some(Arc::new(lines))
            })
            .clone()
    }
}

/// Lines before an instruction at which objdump -S shows source (its `show_line`): when
/// the line differs from the one last printed of the file, that line with up to five
/// before it, none printed twice unless going back.
fn source_lines(
    sources: &mut Sources,
    printed: &mut HashMap<String, (u32, u32)>,
    file: &str,
    line: u32,
    items: &mut Vec<Item>,
) {
    /// objdump's SHOW_PRECEDING_CONTEXT_LINES.
    const CONTEXT: u32 = 5;
    let Some(text) = sources.get(file) else {
        return;
    };
    let (max_printed, last_line) = printed.entry(file.to_string()).or_insert((0, 0));
    if line == *last_line {
        return;
    }
    let mut from = line.saturating_sub(CONTEXT).max(1);
    if *max_printed >= from {
        from = if *max_printed < line {
            *max_printed + 1
        } else {
            line
        };
    }
    for n in from..=line {
        if let Some(t) = text.get(n as usize - 1) {
            items.push(Item::Source(t.clone()));
        }
    }
    *max_printed = (*max_printed).max(line);
    *last_line = line;
}

/// The JSON twin of the listing (`perfdata annotate --json`): per event its totals and
/// functions, per function its instructions with address, bytes, text, samples, period,
/// percentage (of `t`), source `file:line`, the innermost function and the inlined
/// chain, and the source lines `objdump -S` shows before it; per function also its
/// source lines ([`Function::lines`], empty unless gathered); and the functions skipped.
pub fn to_json(a: &Annotation, t: listing::PercentType) -> serde_json::Value {
    use serde_json::json;
    let events: Vec<_> = a
        .events
        .iter()
        .map(|ev| {
            let functions: Vec<_> = ev
                .functions
                .iter()
                .map(|f| {
                    let mut insns = vec![];
                    let mut function: Option<&str> = None;
                    let mut text: Vec<&str> = vec![];
                    for item in &f.items {
                        match item {
                            Item::Function(n) => function = Some(n),
                            Item::Line { .. } => {}
                            Item::Source(t) => text.push(t),
                            Item::Insn(i) => insns.push(json!({
                                "address": format!("{:#x}", i.addr),
                                "bytes": i.bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" "),
                                "text": i.text,
                                "samples": i.samples,
                                "period": i.period,
                                "percent": listing::percent(ev, f, i.samples, i.period, t),
                                "source": i.line.as_ref().map(|(file, line)| format!("{file}:{line}")),
                                "function": function,
                                "inlined": i.inlined,
                                "source_lines": std::mem::take(&mut text),
                            })),
                        }
                    }
                    json!({
                        "symbol": f.symbol,
                        "dso": f.dso,
                        "start": format!("{:#x}", f.start),
                        "end": format!("{:#x}", f.end),
                        "samples": f.samples,
                        "period": f.period,
                        "instructions": insns,
                        "lines": f.lines.iter().map(|l| json!({
                            "file": l.position.as_ref().map(|(file, _)| file),
                            "line": l.position.as_ref().map(|(_, n)| n),
                            "text": l.text,
                            "samples": l.samples,
                            "period": l.period,
                            "percent": listing::percent(ev, f, l.samples, l.period, t),
                            "addresses": l.runs.iter().map(|r| json!({
                                "first": format!("{:#x}", r.first),
                                "last": format!("{:#x}", r.last),
                                "instructions": r.instructions,
                            })).collect::<Vec<_>>(),
                            "inlined": l.inlined,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "event": ev.event,
                "total_samples": ev.total_samples,
                "total_period": ev.total_period,
                "functions": functions,
            })
        })
        .collect();
    let skipped: Vec<_> = a
        .skipped
        .iter()
        .map(|s| json!({"event": s.event, "symbol": s.symbol, "dso": s.dso, "reason": s.reason}))
        .collect();
    json!({ "events": events, "skipped": skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_and_strip_as_objdump() {
        assert_eq!(relocate("/a/b/c.c", None, 2), "/a/b/c.c");
        assert_eq!(relocate("/a/b/c.c", Some("/x"), 0), "/x/a/b/c.c");
        assert_eq!(relocate("/a/b/c.c", Some("/x"), 1), "/x/b/c.c");
        assert_eq!(relocate("/a/b/c.c", Some("/x"), 2), "/x/c.c");
        assert_eq!(relocate("/a/b/c.c", Some("/x"), 9), "/x/c.c");
        assert_eq!(relocate("rel/c.c", Some("/x"), 1), "rel/c.c");
    }

    #[test]
    fn source_lines_with_context_once_each_as_objdump_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.c");
        let text: String = (1..=30).map(|n| format!("l{n}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let file = path.to_str().unwrap();
        let mut sources = Sources::default();
        let mut printed = HashMap::default();
        let mut shown = |line: u32| {
            let mut items = vec![];
            source_lines(&mut sources, &mut printed, file, line, &mut items);
            items
                .into_iter()
                .map(|i| match i {
                    Item::Source(t) => t,
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        // Five lines of context before the first; then only what is new; a line seen
        // before alone; the same line again nothing.
        assert_eq!(shown(15), "l10 l11 l12 l13 l14 l15");
        assert_eq!(shown(17), "l16 l17");
        assert_eq!(shown(11), "l11");
        assert_eq!(shown(11), "");
        assert_eq!(shown(20), "l18 l19 l20");
        assert_eq!(shown(3), "l3");
        let mut sources = Sources::default();
        let mut printed = HashMap::default();
        let mut items = vec![];
        source_lines(&mut sources, &mut printed, file, 2, &mut items);
        assert_eq!(
            items,
            vec![Item::Source("l1".into()), Item::Source("l2".into())]
        );
        let mut items = vec![];
        source_lines(&mut sources, &mut printed, "/no/such/file.c", 2, &mut items);
        assert!(items.is_empty());
    }
}
