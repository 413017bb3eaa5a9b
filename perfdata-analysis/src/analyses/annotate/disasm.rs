//! x86 machine code as GNU objdump prints it (`objdump -d -C`, AT&T or `-M intel`),
//! decoded in-process with iced-x86: the text perf annotate shows after each address.
//!
//! iced's formatters are set to objdump's conventions (mnemonic padded to six
//! columns, `0x` hex, `,1` scales, `0x0` displacements that are encoded, prefixes that
//! change nothing shown), and the addresses objdump names are named as it does: a
//! branch target `1220 <work+0x70>`, a RIP-relative operand's address as a `# 2010
//! <sym+0x10>` comment, both from the object's symbol table in binutils' order
//! ([`ObjdumpSymbols`]). Bytes that decode to no instruction are one `(bad)` byte.

use iced_x86::{
    Decoder, DecoderOptions, Formatter, GasFormatter, Instruction, IntelFormatter, OpKind,
    SymbolResolver, SymbolResult,
};
use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, SectionIndex, SymbolKind, SymbolSection,
};
use std::sync::{Arc, OnceLock};

/// Which assembler syntax (`-M/--disassembler-style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// AT&T, objdump's default.
    #[default]
    Att,
    /// Intel (`-M intel`).
    Intel,
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Its address, as the object states it.
    pub addr: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// objdump's text of it.
    pub text: String,
}

/// A symbol as objdump sorts and prints them.
#[derive(Debug, Clone)]
struct ObjSym {
    value: u64,
    section: Option<usize>,
    /// objdump's name: `bare` demangled, then `suffix`; made when first asked for (most
    /// symbols of a library never are, and demangling them all costs).
    name: OnceLock<String>,
    /// The dynamic symbol's version objdump prints after the name (`@@GLIBC_2.2.5`).
    suffix: String,
    function: bool,
    object: bool,
    local: bool,
    global: bool,
    size: u64,
    synthetic: bool,
    /// The name without its `@VERSION` suffix: binutils sorts on it (the version is
    /// printed, not compared), equal names staying in table order.
    bare: String,
}

/// The symbols objdump names addresses with: `.symtab` (else `.dynsym`) without section,
/// file and undefined symbols, plus the `name@plt` entries, in binutils'
/// `compare_symbols` order; names demangled with parameters (`-C`).
#[derive(Debug, Clone, Default)]
pub struct ObjdumpSymbols {
    sorted: Vec<ObjSym>,
    /// Dynamic relocations against symbols, by address.
    relocs: Vec<Reloc>,
    /// ARM's mapping symbols by address: whether data (`$d`) starts there, not code
    /// (`$x`, `$a`, `$t`).
    mapping: Vec<(u64, bool)>,
}

/// A dynamic relocation against a symbol, as `find_symbol_for_address` names its
/// address by it.
#[derive(Debug, Clone)]
struct Reloc {
    addr: u64,
    /// The symbol's name as the table has it, and its version (`@GLIBCXX_3.4`).
    raw: String,
    suffix: String,
    /// `raw` demangled, then `suffix`: made when first asked for (a C++ library has
    /// thousands of relocations, few of them ever named).
    name: OnceLock<String>,
    /// The symbol's value.
    value: u64,
    undefined: bool,
}

impl Reloc {
    fn name(&self) -> &str {
        self.name
            .get_or_init(|| format!("{}{}", demangle_full(&self.raw), self.suffix))
    }
}

/// What a GOT slot's dynamic relocation names a PLT entry by: a symbol (demangled only
/// for the slots a PLT entry jumps through), or an absolute address.
enum GotName<'data> {
    Symbol(&'data str),
    Absolute(i64),
}

impl ObjSym {
    fn name(&self) -> &str {
        self.name.get_or_init(|| {
            let mut n = demangle_full(&self.bare);
            n.push_str(&self.suffix);
            n
        })
    }
}

impl ObjdumpSymbols {
    /// One function alone, in section `section`: what `perf inject --jit`'s object of a
    /// JIT function holds (its name for the branch targets inside it).
    pub fn single(name: &str, start: u64, size: u64, section: Option<usize>) -> ObjdumpSymbols {
        ObjdumpSymbols {
            sorted: vec![ObjSym {
                value: start,
                section,
                name: OnceLock::from(demangle_full(name)),
                suffix: String::new(),
                function: true,
                object: false,
                local: false,
                global: true,
                size,
                synthetic: false,
                bare: name.to_string(),
            }],
            relocs: vec![],
            mapping: vec![],
        }
    }

    /// The symbols of an ELF object, with its PLT entries' `name@plt` (binutils'
    /// synthetic symbols).
    ///
    /// `debug` is the object's separate debug file: objdump -S (which loads it, from
    /// the build id's or the debuglink's file) names addresses by its symbol table
    /// when the object has none, not by the dynamic symbols.
    pub fn of(obj: &object::File<'_>, debug: Option<&object::File<'_>>) -> ObjdumpSymbols {
        let debug =
            debug.filter(|d| obj.symbols().next().is_none() && d.symbols().next().is_some());
        // A debug file's sections by index → the object's section of the same name.
        let section_map: Vec<Option<usize>> = debug
            .map(|d| {
                let mut v = vec![];
                for sec in d.sections() {
                    let i = sec.index().0;
                    v.resize(v.len().max(i + 1), None);
                    v[i] = sec
                        .name()
                        .ok()
                        .and_then(|n| obj.section_by_name(n))
                        .map(|s| s.index().0);
                }
                v
            })
            .unwrap_or_default();
        let has_symtab = debug.is_some() || obj.symbols().next().is_some();
        let versions = DynVersions::of(obj);
        let table: Box<dyn Iterator<Item = object::Symbol<'_, '_>>> = if let Some(d) = debug {
            Box::new(d.symbols())
        } else if has_symtab {
            Box::new(obj.symbols())
        } else {
            Box::new(obj.dynamic_symbols())
        };
        let arm = matches!(
            obj.architecture(),
            object::Architecture::Aarch64 | object::Architecture::Arm
        );
        let mut sorted = vec![];
        let mut mapping = vec![];
        for s in table {
            // binutils' `remove_useless_symbols`: debugging and section symbols,
            // undefined and common ones go.
            if matches!(s.kind(), SymbolKind::Section | SymbolKind::File) {
                continue;
            }
            let section = match s.section() {
                SymbolSection::Section(i) if debug.is_some() => {
                    match section_map.get(i.0).copied().flatten() {
                        Some(i) => Some(i),
                        None => continue,
                    }
                }
                SymbolSection::Section(i) => Some(i.0),
                SymbolSection::Absolute => None,
                _ => continue,
            };
            let Ok(name) = s.name() else { continue };
            if name.is_empty() && s.kind() == SymbolKind::Unknown {
                continue;
            }
            // ARM's mapping symbols ($x, $d, `$x.12`) mark code and data, and name
            // nothing (binutils' `aarch64_symbol_is_valid`).
            if arm && is_mapping_symbol(name) {
                mapping.push((s.address(), name.as_bytes()[1] == b'd'));
                continue;
            }
            let (local, global) = match s.flags() {
                object::SymbolFlags::Elf { st_info, .. } => {
                    let bind = st_info >> 4;
                    (
                        bind == object::elf::STB_LOCAL,
                        bind == object::elf::STB_GLOBAL || bind == object::elf::STB_GNU_UNIQUE,
                    )
                }
                _ => (s.is_local(), s.is_global()),
            };
            sorted.push(ObjSym {
                bare: name.to_string(),
                value: s.address(),
                section,
                name: OnceLock::new(),
                suffix: if has_symtab {
                    String::new()
                } else {
                    versions.suffix(s.index(), false)
                },
                function: s.kind() == SymbolKind::Text,
                object: s.kind() == SymbolKind::Data,
                local,
                global,
                size: s.size(),
                synthetic: false,
            });
        }
        let dynsyms = obj.dynamic_symbol_table();
        // GOT slot → what its dynamic relocation names (for the PLT entries).
        let mut got: std::collections::HashMap<u64, GotName<'_>> = Default::default();
        let mut relocs = vec![];
        if let Some(dynrel) = obj.dynamic_relocations() {
            for (addr, r) in dynrel {
                let object::RelocationTarget::Symbol(i) = r.target() else {
                    got.entry(addr).or_insert(GotName::Absolute(r.addend()));
                    continue;
                };
                let Some(sym) = dynsyms.as_ref().and_then(|t| t.symbol_by_index(i).ok()) else {
                    continue;
                };
                let Ok(raw) = sym.name() else { continue };
                if i.0 == 0 || raw.is_empty() {
                    got.entry(addr).or_insert(GotName::Absolute(r.addend()));
                    continue;
                }
                got.entry(addr).or_insert(GotName::Symbol(raw));
                if matches!(sym.section(), SymbolSection::Absolute) {
                    continue;
                }
                let undefined = sym.is_undefined();
                relocs.push(Reloc {
                    addr,
                    raw: raw.to_string(),
                    suffix: versions.suffix(i, undefined),
                    name: OnceLock::new(),
                    value: sym.address(),
                    undefined,
                });
            }
        }
        relocs.sort_by_key(|r| r.addr);
        let plt = plt_names(obj, &got);
        for (addr, name) in &plt {
            let section = obj
                .sections()
                .find(|sec| addr.wrapping_sub(sec.address()) < sec.size())
                .map(|sec| sec.index().0);
            sorted.push(ObjSym {
                value: *addr,
                section,
                name: OnceLock::from(name.clone()),
                suffix: String::new(),
                function: true,
                object: false,
                local: false,
                global: true,
                size: 0,
                synthetic: true,
                bare: name.clone(),
            });
        }
        sorted.sort_by(compare_symbols);
        mapping.sort_by_key(|m: &(u64, bool)| m.0);
        ObjdumpSymbols {
            sorted,
            relocs,
            mapping,
        }
    }

    /// The symbol objdump prints `addr` with (`find_symbol_for_address`): the last at or
    /// before it, the first of those at the same address in binutils' order, one in
    /// `section` preferred. Its name and address.
    pub fn at(&self, addr: u64, section: Option<usize>) -> Option<(&str, u64)> {
        if self.sorted.is_empty() {
            return None;
        }
        let upto = self.sorted.partition_point(|s| s.value <= addr);
        // Before the first symbol binutils keeps the first one (printed `<sym-0x..>`).
        let last = upto.saturating_sub(1);
        let value = self.sorted[last].value;
        let first = self.sorted[..=last].partition_point(|s| s.value < value);
        let same = &self.sorted[first..=last];
        let pick = same
            .iter()
            .find(|s| s.section == section)
            .unwrap_or(&same[0]);
        // No symbol at the very address: a dynamic relocation there names it better
        // (binutils 2.40's `find_symbol_for_address`).
        if pick.value != addr && !pick.synthetic {
            if let (Some(first), Some(last)) = (self.relocs.first(), self.relocs.last()) {
                if first.addr <= addr && addr <= last.addr {
                    let i = self.relocs.partition_point(|r| r.addr < addr);
                    if let Some(r) = self.relocs.get(i).filter(|r| r.addr == addr) {
                        return Some((r.name(), if r.undefined { addr } else { r.value }));
                    }
                }
            }
        }
        Some((pick.name(), pick.value))
    }

    /// Whether `addr` is in data an ARM mapping symbol (`$d`) marks, which objdump
    /// prints as data (`.word`), not decoded.
    pub fn is_data(&self, addr: u64) -> bool {
        let i = self.mapping.partition_point(|m| m.0 <= addr);
        i > 0 && self.mapping[i - 1].1
    }

    /// `addr <sym+0xoff>` as objdump prints an address it names.
    pub fn describe(&self, addr: u64, section: Option<usize>) -> String {
        match self.at(addr, section) {
            Some((name, value)) if addr == value => format!("{addr:x} <{name}>"),
            Some((name, value)) if addr > value => {
                format!("{addr:x} <{name}+0x{:x}>", addr - value)
            }
            Some((name, value)) => format!("{addr:x} <{name}-0x{:x}>", value - addr),
            None => format!("{addr:x}"),
        }
    }
}

/// `$x`, `$d`, `$a`, `$t`, alone or followed by `.` and anything.
fn is_mapping_symbol(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2
        && b[0] == b'$'
        && matches!(b[1], b'x' | b'd' | b'a' | b't')
        && (b.len() == 2 || b[2] == b'.')
}

/// binutils' synthetic `name@plt` symbols (`elf_x86_64_get_synthetic_symtab`): each
/// entry of `.plt`, `.plt.sec` and `.plt.got` that jumps through a GOT slot is named by
/// that slot's dynamic relocation.
fn plt_names(
    obj: &object::File<'_>,
    got: &std::collections::HashMap<u64, GotName<'_>>,
) -> Vec<(u64, String)> {
    let Some(bits) = bitness(obj) else {
        return vec![];
    };
    let mut out = vec![];
    for sec in obj.sections() {
        let name = sec.name().unwrap_or("");
        if !matches!(name, ".plt" | ".plt.sec" | ".plt.got") {
            continue;
        }
        let Ok(code) = sec.data() else { continue };
        let entry = match name {
            ".plt.got" if bits == 64 && sec.size() % 16 != 0 => 8,
            _ => 16,
        };
        let mut decoder = Decoder::with_ip(bits, code, sec.address(), DecoderOptions::NONE);
        let mut instr = Instruction::default();
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            if instr.is_invalid()
                || !instr.is_ip_rel_memory_operand()
                || instr.mnemonic() != iced_x86::Mnemonic::Jmp
            {
                continue;
            }
            let Some(target) = got.get(&instr.ip_rel_memory_address()) else {
                continue;
            };
            let offset = (instr.ip() - sec.address()) / entry * entry;
            let target = match target {
                GotName::Symbol(raw) => demangle_full(raw),
                GotName::Absolute(addend) => format!("*ABS*+0x{addend:x}"),
            };
            out.push((sec.address() + offset, format!("{target}@plt")));
        }
    }
    out
}

/// The versions of `.dynsym` (`.gnu.version`, `.gnu.version_d`, `.gnu.version_r`).
struct DynVersions {
    /// Per dynamic symbol: its version's name and whether it is hidden (not default).
    of: Vec<Option<(String, bool)>>,
}

impl DynVersions {
    fn of(obj: &object::File<'_>) -> DynVersions {
        use object::read::elf::{ElfFile, FileHeader};
        fn go<Elf: FileHeader>(elf: &ElfFile<'_, Elf>) -> Option<Vec<Option<(String, bool)>>> {
            let endian = elf.endian();
            let table = elf
                .elf_section_table()
                .versions(endian, elf.data())
                .ok()??;
            let n = elf.dynamic_symbols().count() + 1;
            let mut of = vec![None; n];
            for (i, slot) in of.iter_mut().enumerate() {
                let v = table.version_index(endian, object::SymbolIndex(i));
                let name = match v.index() {
                    0 => continue,
                    1 => "Base".to_string(),
                    _ => match table.version(v) {
                        Ok(Some(ver)) => String::from_utf8_lossy(ver.name()).into_owned(),
                        _ => continue,
                    },
                };
                *slot = Some((name, v.is_hidden()));
            }
            Some(of)
        }
        let of = match obj {
            object::File::Elf64(e) => go(e),
            object::File::Elf32(e) => go(e),
            _ => None,
        };
        DynVersions {
            of: of.unwrap_or_default(),
        }
    }

    /// `@VERSION` (hidden or undefined) or `@@VERSION` for dynamic symbol `i`.
    fn suffix(&self, i: object::SymbolIndex, undefined: bool) -> String {
        match self.of.get(i.0) {
            Some(Some((name, hidden))) if *hidden || undefined => format!("@{name}"),
            Some(Some((name, _))) => format!("@@{name}"),
            _ => String::new(),
        }
    }
}

/// binutils' `compare_symbols`: by address; then file-like names last; functions, then
/// objects, then global, weak, local; larger ELF sizes first; names starting with `.`
/// last; by name.
fn compare_symbols(a: &ObjSym, b: &ObjSym) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let by = |x: bool, y: bool| -> Ordering {
        // `true` sorts first.
        y.cmp(&x)
    };
    let file_like = |n: &str| n.len() > 2 && (n.ends_with(".o") || n.ends_with(".a"));
    let compiled = |n: &str| n.contains("gnu_compiled") || n.contains("gcc2_compiled");
    a.value
        .cmp(&b.value)
        .then_with(|| compiled(a.name()).cmp(&compiled(b.name())))
        .then_with(|| file_like(a.name()).cmp(&file_like(b.name())))
        .then_with(|| by(a.function, b.function))
        .then_with(|| by(a.object, b.object))
        .then_with(|| a.local.cmp(&b.local))
        .then_with(|| by(a.global, b.global))
        .then_with(|| {
            if a.synthetic || b.synthetic {
                Ordering::Equal
            } else {
                b.size.cmp(&a.size)
            }
        })
        .then_with(|| a.bare.starts_with('.').cmp(&b.bare.starts_with('.')))
        .then_with(|| a.bare.cmp(&b.bare))
}

/// A name as `objdump -C` prints it: demangled with its parameters.
pub fn demangle_full(name: &str) -> String {
    // binutils' `bfd_demangle`: a symbol version (`@GLIBCXX_3.4`) is kept as it is, the
    // name before it demangled.
    match name.find('@') {
        Some(at) if at > 0 => {
            let (base, version) = name.split_at(at);
            let d = crate::symbols::elf::demangle_with_params(base);
            format!("{d}{version}")
        }
        _ => crate::symbols::elf::demangle_with_params(name),
    }
}

/// Names branch targets for iced's formatters as objdump does.
struct Targets {
    symbols: Arc<ObjdumpSymbols>,
    section: Option<usize>,
}

impl SymbolResolver for Targets {
    fn symbol(
        &mut self,
        instruction: &Instruction,
        _operand: u32,
        instruction_operand: Option<u32>,
        address: u64,
        _address_size: u32,
    ) -> Option<SymbolResult<'_>> {
        // Only branch targets: a memory operand keeps its displacement (objdump adds a
        // comment instead).
        let op = instruction_operand?;
        if !matches!(
            instruction.op_kind(op),
            OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
        ) {
            return None;
        }
        Some(SymbolResult::with_string(
            address,
            self.symbols.describe(address, self.section),
        ))
    }
}

/// Decodes `code` (placed at `addr`) into instructions with objdump's text.
/// `bitness` is 64 or 32; `section` the index of the section holding the code (for the
/// names objdump prefers).
pub fn disassemble(
    code: &[u8],
    addr: u64,
    bitness: u32,
    syntax: Syntax,
    symbols: &Arc<ObjdumpSymbols>,
    section: Option<usize>,
) -> Vec<Insn> {
    let resolver = Box::new(Targets {
        symbols: symbols.clone(),
        section,
    });
    let mut formatter: Box<dyn Formatter> = match syntax {
        Syntax::Att => {
            let mut f = GasFormatter::with_options(Some(resolver), None);
            configure(f.options_mut());
            f.options_mut().set_gas_show_mnemonic_size_suffix(false);
            Box::new(f)
        }
        Syntax::Intel => {
            let mut f = IntelFormatter::with_options(Some(resolver), None);
            configure(f.options_mut());
            f.options_mut().set_uppercase_keywords(true);
            f.options_mut()
                .set_memory_size_options(iced_x86::MemorySizeOptions::Always);
            Box::new(f)
        }
    };
    let mut decoder = Decoder::with_ip(bitness, code, addr, DecoderOptions::NONE);
    let mut out = Vec::with_capacity(code.len() / 4);
    let mut instr = Instruction::default();
    let mut text = String::new();
    while decoder.can_decode() {
        let pos = decoder.position();
        // Addresses wrap at the top of the address space as the CPU's do (a jitdump's
        // code address is any 64-bit value).
        let here = addr.wrapping_add(pos as u64);
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            // objdump prints one undecodable byte as `(bad)` and goes on after it.
            decoder.set_position(pos + 1).ok();
            decoder.set_ip(here.wrapping_add(1));
            out.push(Insn {
                addr: here,
                bytes: code[pos..pos + 1].to_vec(),
                text: "(bad)".to_string(),
            });
            continue;
        }
        text.clear();
        let bytes = &code[pos..pos + instr.len()];
        formatter.format(&instr, &mut text);
        if syntax == Syntax::Att {
            objdump_att(&mut text, &instr, bytes, bitness);
        }
        if instr.is_ip_rel_memory_operand() {
            // objdump names the address in a comment after eight spaces.
            text.push_str("        # ");
            text.push_str(&symbols.describe(instr.ip_rel_memory_address(), section));
        }
        out.push(Insn {
            addr: here,
            bytes: bytes.to_vec(),
            text: text.clone(),
        });
    }
    out
}

/// Where iced's AT&T text and objdump's differ, objdump's spelling.
fn objdump_att(text: &mut String, instr: &Instruction, bytes: &[u8], bitness: u32) {
    // iced writes the scale of a base-only operand as `(%rax,)` when asked to show
    // every scale; objdump shows `,1` only with an index.
    if text.contains(",)") {
        *text = text.replace(",)", ")");
    }
    let (prefixes, opcode) = split_prefixes(bytes, bitness);
    let mnemonic_end = text.find(' ').unwrap_or(text.len());
    // A push, pop, call or jump of the default operand size has no suffix in
    // objdump's text (binutils 2.37 and later).
    let default_suffix = if bitness == 64 { 'q' } else { 'l' };
    let mnemonic = &text[..mnemonic_end];
    if let Some(stem) = mnemonic.strip_suffix(default_suffix) {
        if matches!(
            stem,
            "push" | "pop" | "call" | "jmp" | "ret" | "lret" | "enter" | "leave"
        ) {
            let padded = format!("{stem:<6}");
            let rest = text[mnemonic_end..].trim_start().to_string();
            *text = if rest.is_empty() {
                stem.to_string()
            } else {
                format!("{padded} {rest}")
            };
        }
    }
    // Shifts and rotates by an implicit 1 (D0-D3 /r... D0, D1): objdump omits the count.
    if matches!(opcode, Some(0xd0 | 0xd1)) {
        if let Some(at) = text.find("$0x1,") {
            text.replace_range(at..at + 5, "");
        }
    }
    // A NOP's segment and extra operand-size prefixes are printed before it as words
    // (`cs nopw 0x0(%rax,%rax,1)`, `data16 cs nopw ...`).
    if text.starts_with("nop") && !prefixes.is_empty() {
        let opsize_used = text.starts_with("nopw");
        let last_66 = prefixes.iter().rposition(|&b| b == 0x66);
        let mut words = vec![];
        for (i, b) in prefixes.iter().enumerate() {
            let w = match b {
                0x66 if opsize_used && Some(i) == last_66 => continue,
                0x66 => "data16",
                0x2e => "cs",
                0x3e => "ds",
                0x26 => "es",
                0x36 => "ss",
                0x64 => "fs",
                0x65 => "gs",
                _ => continue,
            };
            words.push(w);
        }
        if !words.is_empty() {
            for seg in ["%cs:", "%ds:", "%es:", "%ss:", "%fs:", "%gs:"] {
                if let Some(at) = text.find(seg) {
                    text.replace_range(at..at + 4, "");
                }
            }
            let end = text.find(' ').unwrap_or(text.len());
            let (m, rest) = text.split_at(end);
            let mnemonic = format!("{} {m}", words.join(" "));
            let rest = rest.trim_start();
            *text = if rest.is_empty() {
                mnemonic
            } else if mnemonic.len() < 6 {
                format!("{mnemonic:<6} {rest}")
            } else {
                format!("{mnemonic} {rest}")
            };
        }
    }
    // String instructions name their implicit segments (`%es:(%rdi)`, `%ds:(%rsi)`).
    let ops: Vec<OpKind> = (0..instr.op_count()).map(|i| instr.op_kind(i)).collect();
    let string_op = ops.iter().any(|k| {
        matches!(
            k,
            OpKind::MemorySegSI
                | OpKind::MemorySegESI
                | OpKind::MemorySegRSI
                | OpKind::MemoryESDI
                | OpKind::MemoryESEDI
                | OpKind::MemoryESRDI
        )
    });
    if string_op {
        for (reg, seg) in [
            ("(%rdi)", "%es:"),
            ("(%edi)", "%es:"),
            ("(%di)", "%es:"),
            ("(%rsi)", "%ds:"),
            ("(%esi)", "%ds:"),
            ("(%si)", "%ds:"),
        ] {
            if let Some(at) = text.find(reg) {
                if !text[..at].ends_with(':') {
                    text.insert_str(at, seg);
                }
            }
        }
    }
    // F3 before an instruction that is not a string move is `repz` (`repz ret`).
    if text.starts_with("rep ") {
        let next = &text[4..];
        if !["movs", "stos", "lods", "ins", "outs"]
            .iter()
            .any(|m| next.starts_with(m))
        {
            text.insert(3, 'z');
        }
    }
    // A three-operand imul whose source is its destination keeps all three.
    if instr.op_count() == 3 && text.starts_with("imul") && text.matches(',').count() == 1 {
        if let Some(last) = text.rsplit(',').next().map(str::to_string) {
            text.push(',');
            text.push_str(&last);
        }
    }
    // x87 arithmetic with the implicit `%st,%st(1)` and fxch's `%st(1)`.
    match text.as_str() {
        "faddp" | "fsubp" | "fsubrp" | "fmulp" | "fdivp" | "fdivrp" => {
            *text = format!("{:<6} %st,%st(1)", text)
        }
        "fxch" | "fcom" | "fcomp" | "fucom" | "fucomp" => *text = format!("{:<6} %st(1)", text),
        _ => {}
    }
}

/// The legacy prefixes of an instruction's bytes and its first opcode byte (after a
/// REX prefix in 64-bit code).
fn split_prefixes(bytes: &[u8], bitness: u32) -> (&[u8], Option<u8>) {
    let n = bytes
        .iter()
        .take_while(|b| {
            matches!(
                b,
                0x66 | 0x67 | 0x2e | 0x3e | 0x26 | 0x36 | 0x64 | 0x65 | 0xf0 | 0xf2 | 0xf3
            )
        })
        .count();
    let mut i = n;
    if bitness == 64 && bytes.get(i).is_some_and(|b| b & 0xf0 == 0x40) {
        i += 1;
    }
    (&bytes[..n], bytes.get(i).copied())
}

fn configure(o: &mut iced_x86::FormatterOptions) {
    o.set_first_operand_char_index(7);
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_add_leading_zero_to_hex_numbers(false);
    o.set_branch_leading_zeros(false);
    o.set_displacement_leading_zeros(false);
    o.set_leading_zeros(false);
    o.set_always_show_scale(true);
    o.set_show_zero_displacements(true);
    o.set_show_useless_prefixes(true);
    o.set_rip_relative_addresses(true);
    o.set_show_branch_size(false);
    o.set_space_after_operand_separator(false);
    o.set_signed_memory_displacements(true);
}

/// The instruction set of a function's code: from its object's ELF machine (or its
/// jitdump's), so that each object is decoded as what it is, whatever the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arch {
    /// x86-64 (and x32).
    #[default]
    X86_64,
    /// 32-bit x86.
    I386,
    /// AArch64 (A64).
    Aarch64,
}

impl Arch {
    /// The architecture of an object's code, when it is one that is decoded.
    pub fn of(obj: &object::File<'_>) -> Option<Arch> {
        match obj.architecture() {
            object::Architecture::X86_64 => Some(Arch::X86_64),
            object::Architecture::X86_64_X32 | object::Architecture::I386 => Some(Arch::I386),
            object::Architecture::Aarch64 => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// The architecture of an ELF machine number (`e_machine`, a jitdump's `elf_mach`).
    pub fn of_elf_machine(machine: u32) -> Option<Arch> {
        match machine {
            3 => Some(Arch::I386),
            62 => Some(Arch::X86_64),
            183 => Some(Arch::Aarch64),
            _ => None,
        }
    }
}

/// Decodes `code` (placed at `addr`) into instructions with objdump's text for `arch`
/// (`syntax` matters to x86 only: objdump's `-M intel` is x86's).
pub fn decode(
    code: &[u8],
    addr: u64,
    arch: Arch,
    syntax: Syntax,
    symbols: &Arc<ObjdumpSymbols>,
    section: Option<usize>,
) -> Vec<Insn> {
    match arch {
        Arch::X86_64 => disassemble(code, addr, 64, syntax, symbols, section),
        Arch::I386 => disassemble(code, addr, 32, syntax, symbols, section),
        Arch::Aarch64 => super::aarch64::disassemble(code, addr, symbols, section),
    }
}

/// The bitness of an ELF object's code.
pub fn bitness(obj: &object::File<'_>) -> Option<u32> {
    match obj.architecture() {
        object::Architecture::X86_64 => Some(64),
        object::Architecture::X86_64_X32 | object::Architecture::I386 => Some(32),
        _ => None,
    }
}

/// The section holding `addr`, its index and name.
pub fn section_of<'d>(obj: &object::File<'d>, addr: u64) -> Option<(SectionIndex, String)> {
    obj.sections()
        // In the section: the distance from its start under its size (no sum that can
        // overflow in a damaged file's header).
        .find(|s| addr.wrapping_sub(s.address()) < s.size())
        .map(|s| (s.index(), s.name().unwrap_or("").to_string()))
}
