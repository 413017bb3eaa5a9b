//! The functions inlined at an unwound address, named as perf script names them. perf
//! asks one long-running binutils `addr2line` per object, once per address, in the
//! order it prints frames, and binutils keeps a state between questions: a function
//! whose DWARF has no linkage name (a C++ lambda, a template instance GCC names only
//! by its DWARF name) is named by the ELF symbol at the address the first time it is
//! the innermost function of a question, and keeps that name for good when the symbol
//! starts where the function does (its out-of-line body); later questions name it by
//! its (possibly renamed) name. A printer that asks in perf's order and keeps the same
//! state prints the same names.

use crate::symbols::elf::demangle;
use crate::symbols::{DsoId, Dsos};
use std::collections::HashMap;
use std::rc::Rc;

/// One function as binutils holds it (its `funcinfo`).
#[derive(Debug, Clone)]
struct FuncState {
    /// binutils' `is_linkage`: named for good.
    named: bool,
    name: String,
}

/// One function at an address: its name and its source position (the address's own for
/// the innermost, the call site for each caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InlineEntry {
    pub name: String,
    pub file: Option<String>,
    pub line: u32,
}

/// The state of perf's addr2line processes over one printing run.
#[derive(Debug, Default)]
pub(crate) struct InlineNamer {
    funcs: HashMap<(u32, Option<u64>, String), FuncState>,
    /// Each address's answer, as perf keeps it (`dso->inlined_nodes`): innermost first.
    answers: HashMap<(u32, u64), Rc<Vec<InlineEntry>>>,
}

impl InlineNamer {
    /// The names of the functions at `addr` (a lookup address of `dso`), innermost
    /// first, demangled; empty without DWARF there.
    pub fn names(&mut self, dsos: &Dsos, dso: DsoId, addr: u64) -> Rc<Vec<InlineEntry>> {
        if let Some(a) = self.answers.get(&(dso.0, addr)) {
            return a.clone();
        }
        let frames = dsos.dwarf_frames(dso, addr);
        let mut names = Vec::with_capacity(frames.len());
        for (i, f) in frames.iter().enumerate() {
            let key = (dso.0, f.die, f.name.clone());
            let state = self.funcs.entry(key).or_insert_with(|| FuncState {
                named: f.linkage,
                name: f.name.clone(),
            });
            let name = if i == 0 && !state.named {
                // binutils' `_bfd_dwarf2_find_nearest_line`: the ELF symbol names the
                // innermost function; it becomes its name when the symbol starts where
                // the function does (here: the address is in the function's own body,
                // not in a function inlined into it).
                let name = match dsos.elf_symbol_at(dso, addr) {
                    Some((sym, _)) => {
                        let sym = sym.to_string();
                        if frames.len() == 1 {
                            state.name = sym.clone();
                        }
                        sym
                    }
                    None => state.name.clone(),
                };
                state.named = true;
                name
            } else {
                state.name.clone()
            };
            names.push(InlineEntry {
                name: demangle(&name),
                file: f.file.clone(),
                line: f.line,
            });
        }
        let names = Rc::new(names);
        self.answers.insert((dso.0, addr), names.clone());
        names
    }
}
