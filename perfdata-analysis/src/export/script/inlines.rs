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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::dso::DsoKind;
    use crate::SymbolSources;
    use perfdata_test_support::{require_tools, tools};

    /// A C++ program whose template instances and lambdas have no linkage name in GCC's
    /// DWARF, its code asked about address by address in one order: the names
    /// equal what one binutils `addr2line -a -i -f` process answers asked in that order
    /// (perf's questions), demangled.
    #[test]
    fn names_follow_one_addr2line_process_asked_in_the_same_order() {
        if !require_tools(&[tools::GXX, tools::BINUTILS]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // The conformance suite's C++ program: template instances GCC names only by
        // their DWARF name, a lambda, functions inlined into themselves.
        let src = perfdata_test_support::workspace().join("conformance/programs/dwarf_cpp.cpp");
        let exe = dir.path().join("t");
        let built = std::process::Command::new("g++")
            .args(["-O2", "-g", "-o"])
            .arg(&exe)
            .arg(&src)
            .status()
            .unwrap();
        assert!(built.success(), "g++ failed");
        let mut dsos = Dsos::new(SymbolSources {
            lines: true,
            ..SymbolSources::default()
        });
        let id = dsos.intern(exe.to_str().unwrap(), DsoKind::User);
        // Every address of .text with debug info, in a scrambled but fixed order.
        let bytes = std::fs::read(&exe).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        use object::{Object, ObjectSection};
        let text = file.section_by_name(".text").unwrap();
        let mut addrs: Vec<u64> = (text.address()..text.address() + text.size())
            .filter(|&a| !dsos.dwarf_frames(id, a).is_empty())
            .collect();
        assert!(addrs.len() > 100, "{} addresses with DWARF", addrs.len());
        let n = addrs.len();
        addrs = (0..n).map(|i| addrs[(i * 7919) % n]).collect();
        addrs.dedup();
        let mut namer = InlineNamer::default();
        let ours: Vec<Vec<String>> = addrs
            .iter()
            .map(|&a| {
                namer
                    .names(&dsos, id, a)
                    .iter()
                    .map(|e| e.name.clone())
                    .collect()
            })
            .collect();
        // binutils, asked the same addresses in the same order, in one process.
        let mut child = std::process::Command::new("addr2line")
            .args(["-a", "-i", "-f", "-e"])
            .arg(&exe)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            for a in &addrs {
                writeln!(stdin, "{a:#x}").unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // Each answer: its address line, then a function and a position per frame.
        let mut theirs: Vec<Vec<String>> = vec![];
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            if l.starts_with("0x") {
                theirs.push(vec![]);
                continue;
            }
            lines.next();
            theirs.last_mut().unwrap().push(demangle(l));
        }
        assert_eq!(theirs.len(), ours.len());
        let differ: Vec<String> = addrs
            .iter()
            .zip(ours.iter().zip(&theirs))
            .filter(|(_, (o, t))| o != t)
            .map(|(a, (o, t))| format!("{a:#x}: ours {o:?}, binutils {t:?}"))
            .collect();
        assert!(
            differ.is_empty(),
            "{} of {} answers differ:\n{}",
            differ.len(),
            ours.len(),
            differ[..differ.len().min(5)].join("\n")
        );
    }
}
