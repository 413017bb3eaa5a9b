//! Symbol tables: an ELF file's functions (the `object` crate), the kernel's
//! `/proc/kallsyms`, and JIT `perf-PID.map` files — with perf's rules for which alias
//! wins and where a symbol without a size ends, so that names agree with `perf report`.

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};
use std::path::Path;

/// One function.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// First address, as the table states it (an ELF file's own addresses; kallsyms and
    /// JIT maps: runtime addresses).
    pub start: u64,
    /// Exclusive.
    pub end: u64,
    /// The table gave it no size: `end` is the next symbol's start (perf's rule). An
    /// assembly label (ld.so's `_start`) whose code runs on into the label after it.
    pub no_size: bool,
    /// The name as the table has it (mangled).
    raw: Box<str>,
    binding: Binding,
    /// Demangled on first use: a large C++ or Rust library has hundreds of thousands of
    /// symbols and a profile names a few hundred. (A lock: tables are shared, and made
    /// on another thread.)
    demangled: std::sync::OnceLock<Box<str>>,
}

impl Symbol {
    fn new(start: u64, end: u64, raw: &str, binding: Binding) -> Self {
        Symbol {
            start,
            end,
            no_size: false,
            raw: raw.into(),
            binding,
            demangled: std::sync::OnceLock::new(),
        }
    }

    /// The name as perf prints it (demangled, without parameters).
    pub fn name(&self) -> &str {
        if !(self.raw.starts_with("_Z") || self.raw.starts_with("_R")) {
            return &self.raw;
        }
        self.demangled.get_or_init(|| demangle(&self.raw).into())
    }

    /// The ELF binding as perf keeps it (`STB_LOCAL` 0, `STB_GLOBAL` 1, `STB_WEAK` 2;
    /// kallsyms: an upper-case type is global), which perf's Python callchains carry.
    pub fn binding(&self) -> u8 {
        match self.binding {
            Binding::Local => 0,
            Binding::Global => 1,
            Binding::Weak => 2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binding {
    Local,
    Global,
    Weak,
}

/// A sorted, de-duplicated symbol table with every end fixed up. Fixed once made, and
/// shared by its copies (the kernel's: the kernel symbols' and the kernel object's).
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    symbols: std::sync::Arc<[Symbol]>,
}

impl SymbolTable {
    /// A table of one symbol, `name` over `start..end` (a jitdump's function).
    pub fn single(start: u64, end: u64, name: &str) -> Self {
        SymbolTable::new(vec![Symbol::new(start, end, name, Binding::Global)], false)
    }

    /// A table of `(start, end, name)` symbols (symbols a recording carries).
    pub fn from_ranges<'n>(symbols: impl IntoIterator<Item = (u64, u64, &'n str)>) -> Self {
        let symbols = symbols
            .into_iter()
            .map(|(start, end, name)| Symbol::new(start, end, name, Binding::Global))
            .collect();
        SymbolTable::new(symbols, false)
    }

    /// perf's `symbols__fixup_duplicate` then `symbols__fixup_end`. `kallsyms` marks a
    /// kallsyms table: the kernel's or one module's ([`parse_kallsyms`] splits them, so
    /// perf's rule for a symbol before another module's, the page after it, is the rule
    /// for a table's last symbol here).
    fn new(mut symbols: Vec<Symbol>, kallsyms: bool) -> Self {
        // Stable: among aliases the first inserted wins a tie, as in perf's rb-tree.
        symbols.sort_by_key(|s| s.start);
        // In place (a kallsyms table is some 10^5 symbols: no second copy of it).
        symbols.dedup_by(|next, kept| {
            if next.start != kept.start {
                return false;
            }
            // kallsyms: perf 6.1 keeps every alias and gives the earlier ones no size, so
            // the last one listed is what an address resolves to (`__pi_memcpy` over
            // `memcpy`, `__x64_sys_vfork` over `__ia32_sys_vfork`). ELF files: perf's
            // `choose_best_symbol`.
            if kallsyms || !keeps_first(kept, next) {
                std::mem::swap(kept, next);
            }
            true
        });
        for i in 1..symbols.len() {
            let next = symbols[i].start;
            let s = &mut symbols[i - 1];
            if s.end == s.start {
                s.no_size = true;
                s.end = next;
            }
        }
        if let Some(last) = symbols.last_mut() {
            if last.end == last.start {
                last.no_size = true;
                last.end = round_up_page(last.start) + 4096;
            }
        }
        SymbolTable {
            symbols: symbols.into(),
        }
    }

    /// The symbol containing `addr`.
    pub fn find(&self, addr: u64) -> Option<(usize, &Symbol)> {
        let i = self.symbols.partition_point(|s| s.start <= addr);
        let i = i.checked_sub(1)?;
        let s = &self.symbols[i];
        (addr < s.end).then_some((i, s))
    }

    /// The symbol at an index (as [`SymbolTable::find`] gives it).
    pub fn get(&self, index: usize) -> Option<&Symbol> {
        self.symbols.get(index)
    }

    /// Number of symbols (aliases merged).
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// It holds no symbols (a DSO's: no symbol file was found or read).
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbols by address.
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.symbols.iter()
    }
}

fn round_up_page(x: u64) -> u64 {
    x.div_ceil(4096).saturating_mul(4096)
}

/// perf's `choose_best_symbol`: true when `a` (already kept) beats `b`.
fn keeps_first(a: &Symbol, b: &Symbol) -> bool {
    let (la, lb) = (a.end - a.start, b.end - b.start);
    if la > 0 && lb == 0 {
        return true;
    }
    if la == 0 && lb > 0 {
        return false;
    }
    let (wa, wb) = (a.binding == Binding::Weak, b.binding == Binding::Weak);
    if wa != wb {
        return wb;
    }
    let (ga, gb) = (a.binding == Binding::Global, b.binding == Binding::Global);
    if ga != gb {
        return ga;
    }
    let underscores = |s: &str| s.bytes().take_while(|&c| c == b'_').count();
    let (ua, ub) = (underscores(a.name()), underscores(b.name()));
    if ua != ub {
        return ua < ub;
    }
    a.name().len() >= b.name().len()
}

/// Demangles C++ and Rust names as perf does by default (no parameter lists).
pub fn demangle(name: &str) -> String {
    // Rust: v0 (`_R`), or legacy `_ZN…17h<16 hex digits>E` (perf's `rust_is_mangled`).
    let legacy_rust = name.starts_with("_ZN")
        && name.len() > 20
        && name.ends_with('E')
        && name[..name.len() - 1].ends_with(|c: char| c.is_ascii_hexdigit())
        && name[name.len() - 20..].starts_with("17h");
    if name.starts_with("_R") || legacy_rust {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
    }
    if name.starts_with("_Z") {
        // libiberty, perf's own demangler, where libstdc++ provides it; cpp_demangle
        // refuses some GCC manglings and prints others differently (see `libiberty`).
        if let Some(d) = super::libiberty::perf_name(name) {
            return d;
        }
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            // perf (libiberty without DMGL_PARAMS) prints neither parameters nor the
            // return type of a template function.
            let opts = cpp_demangle::DemangleOptions::new()
                .no_params()
                .no_return_type();
            if let Ok(d) = sym.demangle_with_options(&opts) {
                // cpp_demangle writes an empty template parameter pack as `, ` before the
                // closing `>` (`pair<int const&, >`); libiberty writes nothing.
                return d.replace(", >", ">");
            }
        }
    }
    name.to_string()
}

/// Demangles C++ and Rust names with their parameters, as `objdump -C` prints them
/// (binutils' `DMGL_PARAMS | DMGL_ANSI`).
pub fn demangle_with_params(name: &str) -> String {
    if name.starts_with("_R") || name.starts_with("_ZN") {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            if name.starts_with("_R") || d.to_string() != format!("{d:#}") {
                return format!("{d:#}");
            }
        }
    }
    if name.starts_with("_Z") {
        if let Some(d) = super::libiberty::full(name) {
            return d;
        }
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            if let Ok(d) = sym.demangle() {
                return d;
            }
        }
    }
    name.to_string()
}

/// What one ELF file gives: its build id, functions, and how file offsets map to
/// addresses.
#[derive(Debug, Default)]
pub struct ElfInfo {
    /// The GNU build-id note, if the file has one.
    pub build_id: Option<Vec<u8>>,
    /// `.symtab` present (a debug file or an unstripped binary).
    pub has_symtab: bool,
    /// Functions of `.symtab` (or `.dynsym` when there is none), not yet fixed up, in
    /// table order.
    symbols: Vec<Symbol>,
    /// For each of `symbols`: typed as a function (STT_FUNC), not an untyped label.
    functions: Vec<bool>,
    /// For each of `symbols`: the source file binutils names for it without debug info
    /// (`elf_find_function`: the `STT_FILE` symbol before it in the table, unless it
    /// is global and a file symbol came after a function).
    files: Vec<Option<std::sync::Arc<str>>>,
    /// `name@plt` symbols synthesized from `.rela.plt` (perf 6.1's rule).
    plt: Vec<Symbol>,
    /// PT_LOAD segments: (file offset, size in file, virtual address, executable).
    loads: Vec<(u64, u64, u64, bool)>,
    /// `.debug_info` present and not empty: source lines and inline frames can be read.
    pub has_dwarf: bool,
    /// `.dynsym` with contents (a debug-only file keeps it as NOBITS).
    has_dynsym_data: bool,
    /// The entry point (`e_entry`): where the process (or the dynamic loader) starts, the
    /// outermost frame of its first thread.
    pub entry: u64,
}

impl ElfInfo {
    /// Reads an ELF file; `None` when it is not one (or cannot be read).
    pub fn read(path: &Path) -> Option<ElfInfo> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: read-only mapping; a file changed under us gives wrong symbols, not UB
        // in safe code that only reads bytes.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        Self::parse(&map)
    }

    /// Only the build id of an ELF file.
    pub fn read_build_id(path: &Path) -> Option<Vec<u8>> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: as in `read`.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let obj = object::File::parse(&*map).ok()?;
        obj.build_id().ok().flatten().map(<[u8]>::to_vec)
    }

    /// [`ElfInfo::read`] from bytes in memory; `None` when they are not ELF.
    pub fn parse(bytes: &[u8]) -> Option<ElfInfo> {
        let obj = object::File::parse(bytes).ok()?;
        if !matches!(obj, object::File::Elf32(_) | object::File::Elf64(_)) {
            return None;
        }
        let mut info = ElfInfo {
            entry: obj.entry(),
            build_id: obj.build_id().ok().flatten().map(<[u8]>::to_vec),
            has_symtab: obj.section_by_name(".symtab").is_some(),
            has_dwarf: obj
                .section_by_name(".debug_info")
                .is_some_and(|s| s.size() > 0),
            ..ElfInfo::default()
        };
        let table: Box<dyn Iterator<Item = object::Symbol<'_, '_>>> = if info.has_symtab {
            Box::new(obj.symbols())
        } else {
            Box::new(obj.dynamic_symbols())
        };
        let exec_sections: std::collections::HashSet<usize> = obj
            .sections()
            .filter(|sec| match sec.flags() {
                object::SectionFlags::Elf { sh_flags } => {
                    sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0
                }
                _ => false,
            })
            .map(|sec| sec.index().0)
            .collect();
        // binutils' `elf_find_function` states: no function yet; a function seen; a file
        // symbol after a function.
        let (mut file, mut seen, mut file_after): (Option<std::sync::Arc<str>>, bool, bool) =
            (None, false, false);
        for s in table {
            if s.kind() == SymbolKind::File {
                file = s.name().ok().map(std::sync::Arc::from);
                file_after |= seen;
                continue;
            }
            if s.is_undefined() {
                continue;
            }
            // Functions, and (as perf 6.1) untyped labels in executable sections
            // (`_start` in ld.so is one).
            let in_exec = matches!(s.section(), object::SymbolSection::Section(i) if exec_sections.contains(&i.0));
            let is_label = matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. } if st_info & 0xf == object::elf::STT_NOTYPE)
                && in_exec;
            if s.kind() != SymbolKind::Text && !is_label {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            // ARM mapping symbols ($a, $t, $d, $x) are not functions.
            if name.is_empty() || name.starts_with('$') {
                continue;
            }
            let binding = if s.is_weak() {
                Binding::Weak
            } else if s.is_global() {
                Binding::Global
            } else {
                Binding::Local
            };
            info.symbols.push(Symbol::new(
                s.address(),
                s.address() + s.size(),
                name,
                binding,
            ));
            info.functions.push(!is_label);
            info.files.push(if binding != Binding::Local && file_after {
                None
            } else {
                file.clone()
            });
            seen = true;
        }
        info.has_dynsym_data = obj.section_by_name(".dynsym").is_some_and(|s| {
            s.kind() != object::SectionKind::UninitializedData
                && s.data().is_ok_and(|d| !d.is_empty())
        });
        for seg in obj.segments() {
            let (off, size) = seg.file_range();
            let exec = matches!(seg.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0);
            info.loads.push((off, size, seg.address(), exec));
        }
        info.plt = plt_symbols(&obj).unwrap_or_default();
        Some(info)
    }

    /// The symbol binutils' `addr2line` names `addr` with when the debug info's function
    /// there has no linkage name (perf takes inline frames from `addr2line -i -f`): of
    /// the symbols starting at or before it, the closest; among those starting together,
    /// one that covers it, a function over a label, the smallest, the first in the table
    /// (binutils' `elf_find_function` and `better_fit`).
    pub fn binutils_function_at(&self, addr: u64) -> Option<&str> {
        self.binutils_symbol_at(addr).map(|(name, _)| name)
    }

    /// [`ElfInfo::binutils_function_at`] with the symbol's start address.
    pub fn binutils_symbol_at(&self, addr: u64) -> Option<(&str, u64)> {
        self.binutils_best(addr)
            .map(|i| (&*self.symbols[i].raw, self.symbols[i].start))
    }

    /// The source file binutils' `addr2line` names for `addr` from the symbol table
    /// alone (no line information): that of the symbol [`ElfInfo::binutils_function_at`]
    /// finds, with line 0.
    pub fn binutils_file_at(&self, addr: u64) -> Option<&str> {
        // Outside every loaded segment binutils finds no section, and no function.
        if !self
            .loads
            .iter()
            .any(|&(_, size, vaddr, _)| addr >= vaddr && addr - vaddr < size)
        {
            return None;
        }
        let i = self.binutils_best(addr)?;
        self.files.get(i)?.as_deref()
    }

    fn binutils_best(&self, addr: u64) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, s) in self.symbols.iter().enumerate() {
            if s.start > addr {
                continue;
            }
            let Some(b) = best else {
                best = Some(i);
                continue;
            };
            let cur = &self.symbols[b];
            let size = |x: &Symbol| x.end - x.start;
            let better = if s.start != cur.start {
                s.start > cur.start
            } else if cur.end <= addr {
                size(s) > size(cur)
            } else if s.end <= addr {
                false
            } else if self.functions[b] != self.functions[i] {
                self.functions[i]
            } else {
                size(s) < size(cur)
            };
            if better {
                best = Some(i);
            }
        }
        best
    }

    /// A file the program ran from (not a debug-only file): it has the PLT and the
    /// loaded segments' bytes.
    pub fn is_runtime(&self) -> bool {
        self.has_dynsym_data || (!self.has_symtab && !self.loads.is_empty())
    }

    /// The address (as the symbol table states it) of a file offset.
    pub fn address_of_offset(&self, offset: u64) -> Option<u64> {
        self.loads
            .iter()
            .find(|&&(off, size, _, _)| offset >= off && offset < off + size)
            .map(|&(off, _, vaddr, _)| offset - off + vaddr)
    }

    /// The address (as the object states it) that an executable mapping starting at
    /// file offset `pgoff` places at its start. `pgoff` is page-aligned, so it may lie
    /// before the executable segment's own offset (in the page it shares with the segment
    /// before): the executable segment whose pages cover it decides.
    pub fn address_of_exec_map(&self, pgoff: u64) -> Option<u64> {
        const PAGE: u64 = 4096;
        self.loads
            .iter()
            .find(|&&(off, size, _, exec)| exec && pgoff >= off & !(PAGE - 1) && pgoff < off + size)
            .map(|&(off, _, vaddr, _)| vaddr.wrapping_sub(off).wrapping_add(pgoff))
            .or_else(|| self.address_of_offset(pgoff))
    }

    /// The symbol table: `symbols` (from the file with `.symtab`) plus this file's PLT
    /// entries (perf takes them from the runtime file: debug files strip the PLT).
    pub fn table(symbols: Option<&ElfInfo>, runtime: Option<&ElfInfo>) -> SymbolTable {
        let mut all = vec![];
        if let Some(s) = symbols.or(runtime) {
            all.extend(s.symbols.iter().cloned());
        }
        if let Some(r) = runtime {
            all.extend(r.plt.iter().cloned());
        }
        SymbolTable::new(all, false)
    }
}

/// perf 6.1's `dso__synthesize_plt_symbols`: entry `i` of `.rela.plt` (or `.rel.plt`) is
/// `name@plt` at `.plt + (i + 1) * entsize` (the first entry is the PLT header).
fn plt_symbols(obj: &object::File<'_>) -> Option<Vec<Symbol>> {
    use object::read::elf::{ElfFile, Rela};
    use object::read::elf::{FileHeader, SectionHeader};
    fn go<Elf: FileHeader>(elf: &ElfFile<'_, Elf>) -> Option<Vec<Symbol>> {
        let endian = elf.endian();
        let data = elf.data();
        let sections = elf.elf_section_table();
        let (_, plt) = sections.section_by_name(endian, b".plt")?;
        let entsize = plt.sh_entsize(endian).into();
        if entsize == 0 {
            return None;
        }
        let plt_addr: u64 = plt.sh_addr(endian).into();
        let dynsyms = sections
            .symbols(endian, data, object::elf::SHT_DYNSYM)
            .ok()?;
        let mut out = vec![];
        let mut name_of = |i: usize, sym_index: u32| -> Option<()> {
            // Index 0 (IRELATIVE relocations) has no name: perf then names it `@plt`.
            let name = if sym_index == 0 {
                ""
            } else {
                let sym = dynsyms
                    .symbol(object::SymbolIndex(sym_index as usize))
                    .ok()?;
                std::str::from_utf8(dynsyms.symbol_name(endian, sym).ok()?).ok()?
            };
            let start = plt_addr + (i as u64 + 1) * entsize;
            let name = format!("{}@plt", demangle(name));
            out.push(Symbol::new(start, start + entsize, &name, Binding::Global));
            Some(())
        };
        if let Some((_, rela)) = sections.section_by_name(endian, b".rela.plt") {
            let relas = rela.data_as_array::<Elf::Rela, _>(endian, data).ok()?;
            for (i, r) in relas.iter().enumerate() {
                name_of(i, r.symbol(endian, false).map_or(0, |s| s.0 as u32));
            }
        } else if let Some((_, rel)) = sections.section_by_name(endian, b".rel.plt") {
            use object::read::elf::Rel;
            let rels = rel.data_as_array::<Elf::Rel, _>(endian, data).ok()?;
            for (i, r) in rels.iter().enumerate() {
                name_of(i, r.r_sym(endian));
            }
        }
        Some(out)
    }
    match obj {
        object::File::Elf64(elf) => go(elf),
        object::File::Elf32(elf) => go(elf),
        _ => None,
    }
}

/// `/proc/kallsyms` (or a saved copy): the kernel's text symbols, module symbols tagged
/// with their module.
pub fn parse_kallsyms(text: &str) -> KernelSymbols {
    // A /proc/kallsyms has some 10^5 lines, read before the first kernel sample of an
    // analysis can be named: the walk waits for it. So one pass over the bytes, and the
    // table sized once (a line is some 44 bytes) rather than grown by copies.
    let mut kernel = Vec::with_capacity(text.len() / 40);
    let mut modules: std::collections::BTreeMap<&str, Vec<Symbol>> = Default::default();
    // Lines `ADDRESS TYPE NAME[\t[MODULE]]`, each byte looked at once: no search for
    // the line's end before the scan for the name's end finds it.
    let bytes = text.as_bytes();
    let line_end = |from: usize| {
        (bytes[from..].iter().position(|&c| c == b'\n')).map_or(bytes.len(), |n| from + n)
    };
    let mut at = 0;
    while at < bytes.len() {
        let line = &bytes[at..];
        // The address: 1 to 16 hexadecimal digits, then a space.
        let mut addr = 0u64;
        let mut digits = 0;
        while let Some(d) = line.get(digits).and_then(|&c| hex_digit(c)) {
            if digits == 16 {
                break;
            }
            addr = addr << 4 | u64::from(d);
            digits += 1;
        }
        let kind = match (line.get(digits), line.get(digits + 1), line.get(digits + 2)) {
            (Some(b' '), Some(&kind), Some(b' ')) if digits > 0 && kind != b'\n' => kind,
            _ => {
                at = line_end(at) + 1;
                continue;
            }
        };
        let name_at = at + digits + 3;
        let name_end = (bytes[name_at..].iter())
            .position(|&c| matches!(c, b'\t' | b' ' | b'\n'))
            .map_or(bytes.len(), |n| name_at + n);
        let end = match bytes.get(name_end) {
            Some(b'\n') | None => name_end,
            Some(_) => line_end(name_end),
        };
        at = end + 1;
        // perf's symbol_type__filter: text, weak, and (since 5.x) data/bss symbols too;
        // text is what samples land in, so only text and weak are kept here.
        if !matches!(kind, b't' | b'T' | b'w' | b'W') || addr == 0 {
            continue;
        }
        // perf's `kallsyms2elf_binding`.
        let binding = if kind == b'W' {
            Binding::Weak
        } else if kind.is_ascii_uppercase() {
            Binding::Global
        } else {
            Binding::Local
        };
        // Every cut is at an ASCII byte: whole characters on both sides.
        if name_end == end {
            let name = text[name_at..end].trim_end_matches('\r');
            kernel.push(Symbol::new(addr, addr, name, binding));
            continue;
        }
        let sym = Symbol::new(addr, addr, &text[name_at..name_end], binding);
        let module = text[name_end + 1..end].trim();
        if module.starts_with('[') {
            (modules.entry(module.trim_matches(|c| c == '[' || c == ']')))
                .or_default()
                .push(sym);
        } else {
            kernel.push(sym);
        }
    }
    KernelSymbols {
        kernel: SymbolTable::new(kernel, true),
        modules: modules
            .into_iter()
            .map(|(m, s)| (m.to_string(), SymbolTable::new(s, true)))
            .collect(),
    }
}

/// A hexadecimal digit's value.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The kernel's symbols and each module's.
#[derive(Debug, Default)]
pub struct KernelSymbols {
    /// The kernel image's text symbols.
    pub kernel: SymbolTable,
    /// Each module's, by name without brackets (`ext4`); empty from a vmlinux.
    pub modules: std::collections::HashMap<String, SymbolTable>,
}

/// A JIT map file (`/tmp/perf-PID.map`): lines `START SIZE name`, hexadecimal.
pub fn parse_perf_map(text: &str) -> SymbolTable {
    let mut symbols = vec![];
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(start), Some(size), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        let (Some(start), Some(size)) = (hex(start), hex(size)) else {
            continue;
        };
        symbols.push(Symbol::new(
            start,
            start.saturating_add(size),
            name.trim_end(),
            Binding::Global,
        ));
    }
    SymbolTable::new(symbols, false)
}

/// The build id in an ELF note section's bytes (`/sys/kernel/notes`).
pub fn build_id_from_notes(notes: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0usize;
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(notes.get(at..at + 4)?.try_into().ok()?))
    };
    while at + 12 <= notes.len() {
        let (namesz, descsz, ty) = (word(at)? as usize, word(at + 4)? as usize, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at + namesz.div_ceil(4) * 4;
        let next = desc_at + descsz.div_ceil(4) * 4;
        if ty == 3 && notes.get(name_at..name_at + namesz)? == b"GNU\0" {
            return Some(notes.get(desc_at..desc_at + descsz)?.to_vec());
        }
        at = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(start: u64, size: u64, name: &str, binding: Binding) -> Symbol {
        Symbol::new(start, start + size, name, binding)
    }

    #[test]
    fn aliases_resolve_as_perf_chooses() {
        let t = SymbolTable::new(
            vec![
                sym(0x100, 0x10, "____strtoll_l_internal", Binding::Local),
                sym(0x100, 0x10, "__GI_____strtoll_l_internal", Binding::Local),
                sym(0x200, 0, "weak_one", Binding::Weak),
                sym(0x200, 0, "strong", Binding::Global),
                sym(0x300, 0, "last", Binding::Global),
            ],
            false,
        );
        assert_eq!(
            t.find(0x105).unwrap().1.name(),
            "__GI_____strtoll_l_internal"
        );
        // No size: ends where the next begins; the last one a page later.
        assert_eq!(t.find(0x2ff).unwrap().1.name(), "strong");
        assert_eq!(t.find(0x300).unwrap().1.end, 0x2000);
        assert!(
            t.find(0x110).is_none(),
            "a sized symbol ends at start + size"
        );
        assert!(t.find(0xff).is_none());
    }

    #[test]
    fn kallsyms_and_perf_maps_parse() {
        let k = parse_kallsyms(
            "ffffffff81000000 T _text\nffffffff81000100 t foo\nffffffff81000200 D data\n\
             ffffffffc0000000 t ext4_fn\t[ext4]\n",
        );
        assert_eq!(k.kernel.find(0xffffffff81000150).unwrap().1.name(), "foo");
        assert_eq!(k.modules["ext4"].len(), 1);
        let m = parse_perf_map("7f0000001000 20 jitted fn(int)\nbad line\n");
        assert_eq!(m.find(0x7f000000101f).unwrap().1.name(), "jitted fn(int)");
        assert!(m.find(0x7f0000001020).is_none());
    }

    #[test]
    fn kallsyms_lines_perf_would_not_read_are_skipped_alone() {
        // Each malformed line is skipped up to its own end, never into the next one.
        let text = "ffffffff81000000 T _text\nffffffff81000010 t foo\n\
                    ffffffff81000010 t foo_alias\n0000000000000000 T zero\n\
                    ffffffff81000020 D data\nffffffff81000030 W weak\n\
                    ffffffff81000040 t crlf\r\nffffffff810000500 T seventeen\n\
                    xyz T bad\nffffffff81000060 T\nffffffff81000080\n\
                    ffffffff81000090 t two words\nffffffffc0000000 t ext4_fn\t[ext4]\n\
                    ffffffffc0000010 t ext4_g\t[ext4]  \nffffffffc0002000 t notmod\tplain\n\
                    \nffffffff810000a0 t last\nffffffff810000b0 t no_newline";
        let k = parse_kallsyms(text);
        let kernel: Vec<(u64, u64, &str, u8)> = (k.kernel.iter())
            .map(|s| (s.start, s.end, s.name(), s.binding()))
            .collect();
        assert_eq!(
            kernel,
            [
                (0xffffffff81000000, 0xffffffff81000010, "_text", 1),
                // The alias listed last is the one kept.
                (0xffffffff81000010, 0xffffffff81000030, "foo_alias", 0),
                (0xffffffff81000030, 0xffffffff81000040, "weak", 2),
                (0xffffffff81000040, 0xffffffff81000090, "crlf", 0),
                (0xffffffff81000090, 0xffffffff810000a0, "two", 0),
                (0xffffffff810000a0, 0xffffffff810000b0, "last", 0),
                (0xffffffff810000b0, 0xffffffffc0002000, "no_newline", 0),
                (0xffffffffc0002000, 0xffffffffc0003000, "notmod", 0),
            ]
        );
        let ext4: Vec<(u64, &str)> = (k.modules["ext4"].iter())
            .map(|s| (s.start, s.name()))
            .collect();
        assert_eq!(
            ext4,
            [
                (0xffffffffc0000000, "ext4_fn"),
                (0xffffffffc0000010, "ext4_g")
            ]
        );
        assert_eq!(k.modules.len(), 1);
    }

    #[test]
    fn an_executable_mapping_is_placed_by_the_executable_segment() {
        // Rust's linker layout: the text segment's file offset and address differ by a
        // page, and its mapping starts at the page-aligned offset, inside the pages of
        // the read-only segment before it.
        let info = ElfInfo {
            loads: vec![
                (0, 0x12f84, 0, false),
                (0x12f90, 0x3eaf0, 0x13f90, true),
                (0x51a80, 0x2748, 0x53a80, false),
            ],
            ..ElfInfo::default()
        };
        assert_eq!(info.address_of_exec_map(0x12000), Some(0x13000));
        // The offset alone would say the read-only segment's address.
        assert_eq!(info.address_of_offset(0x12000), Some(0x12000));
        // Without an executable segment covering it: by the offset.
        assert_eq!(info.address_of_exec_map(0x52000), Some(0x54000));
    }

    #[test]
    fn demangles_as_perf_prints() {
        // Neither the return type of a template function nor its parameters.
        assert_eq!(
            demangle("_ZNSt6vectorI4ItemSaIS0_EE12emplace_backIJS0_EEERS0_DpOT_"),
            "std::vector<Item, std::allocator<Item> >::emplace_back<Item>"
        );
    }

    #[test]
    fn names_operators_and_lambdas_of_both_compilers_as_perf() {
        // What `c++filt -i -p` (perf's flags) prints; folded, inferno's tidying cuts
        // `operator()` at its parenthesis as it does perf script's names.
        for (mangled, perf) in [
            ("_ZN3AccclEd", "Acc::operator()"),
            ("_ZNK3VecixEm", "Vec::operator[]"),
            ("_ZNK3KeyltERKS_", "Key::operator<"),
            ("_ZlsR3Outd", "operator<<"),
            ("_ZN4NodenwEmR5Arena", "Node::operator new"),
            ("_ZNK3KeycvbEv", "Key::operator bool"),
            // GCC's lambda, clang's, and clang's generic lambda.
            ("_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()"),
            ("_ZZ4mainENK3$_0clEi", "main::$_0::operator()"),
            ("_ZZ4mainENK3$_1clIiEEDaT_", "main::$_1::operator()<int>"),
        ] {
            assert_eq!(demangle(mangled), perf, "{mangled}");
        }
        assert_eq!(
            crate::symbols::naming::tidy_generic(demangle("_ZZ4mainENK3$_0clEi")),
            "main::$_0::operator"
        );
    }

    #[test]
    fn demangles_without_parameters() {
        assert_eq!(demangle("_ZN3foo3barEi"), "foo::bar");
        assert_eq!(demangle("main"), "main");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
    }
}
