//! Shared objects (DSOs) and where their symbols come from: perf's search order, build
//! ids checked, one cache per DSO (loaded on first use), source lines through `addr2line`.

use crate::symbols::{parse_kallsyms, parse_perf_map, ElfInfo, KernelSymbols, SymbolTable};
use crate::unwind::UnwindTables;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Index of a DSO in a [`Dsos`] registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DsoId(pub u32);

/// What kind of object a DSO is; decides how addresses are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DsoKind {
    /// A user-space ELF file (or `[vdso]`): file offsets are turned into addresses.
    User,
    /// The kernel image: addresses are looked up as they are.
    Kernel,
    /// A kernel module, `[name]`.
    Module(String),
    /// A JIT map file `/tmp/perf-PID.map`: addresses as they are.
    PerfMap,
}

/// One shared object.
#[derive(Debug)]
pub struct Dso {
    /// The full name (a path, `[kernel.kallsyms]`, `[vdso]`).
    pub name: String,
    /// perf report's "Shared Object" column.
    pub short_name: String,
    /// How its addresses are looked up.
    pub kind: DsoKind,
    /// The recorded build id (BUILD_ID feature, MMAP2); `None` when none was recorded
    /// (the file's own then finds its debug files).
    pub build_id: Option<Vec<u8>>,
    loaded: OnceCell<Loaded>,
}

#[derive(Default)]
struct Loaded {
    table: SymbolTable,
    /// The runtime file, for file offset → address.
    runtime: Option<ElfInfo>,
    /// Its path (the unwind tables are read from it).
    runtime_path: Option<PathBuf>,
    /// The file the symbols came from, when it is not the runtime file (a debug file):
    /// its symbol table as it is, for naming inline frames as binutils does.
    symtab: Option<ElfInfo>,
    /// Where the symbols came from (for `perfdata info` and error messages).
    symbols_from: Option<PathBuf>,
    /// The file with DWARF, if any (for source lines).
    dwarf: Option<PathBuf>,
    lines: OnceCell<Option<addr2line::Loader>>,
    /// CFI, read when a stack through this object is first unwound.
    unwind: OnceCell<Option<std::sync::Arc<UnwindTables>>>,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("symbols", &self.table.len())
            .field("symbols_from", &self.symbols_from)
            .field("dwarf", &self.dwarf)
            .finish_non_exhaustive()
    }
}

/// A symbol resolved in a DSO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId {
    /// The DSO whose symbol table holds it.
    pub dso: DsoId,
    /// Index in that table (sorted by address).
    pub index: u32,
}

/// One function of the inline chain at an address ([`Dsos::inline_lines`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineLine {
    /// The function, named as perf names it (demangled).
    pub function: String,
    /// Its source file, when the debug info says.
    pub file: Option<String>,
    /// The line in it (0: unknown).
    pub line: u32,
}

/// Where symbols are looked for.
#[derive(Debug, Clone)]
pub struct SymbolSources {
    /// perf's build-id cache (`~/.debug`).
    pub build_id_cache: Option<PathBuf>,
    /// The recording's own build-id cache, `FILE.debug/` beside it (what `perf archive`
    /// packs, extracted there; the shipped samples come with one): looked in first.
    pub recording_cache: Option<PathBuf>,
    /// The system's debug-file root (`/usr/lib/debug`).
    pub debug_root: PathBuf,
    /// Kernel symbols: a kallsyms file to use, if any (decided by the caller).
    pub kallsyms: Option<PathBuf>,
    /// A vmlinux ELF image for kernel symbols.
    pub vmlinux: Option<PathBuf>,
    /// Directory of JIT map files (`/tmp`).
    pub perf_map_dir: PathBuf,
    /// Read source lines (slower; needed for source files and `--inline`).
    pub lines: bool,
    /// Read symbol files at all (off: addresses only, whatever the machine has).
    pub read_files: bool,
}

impl Default for SymbolSources {
    fn default() -> Self {
        SymbolSources {
            recording_cache: None,
            build_id_cache: std::env::var_os("PERF_BUILDID_DIR")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".debug"))),
            debug_root: PathBuf::from("/usr/lib/debug"),
            kallsyms: None,
            vmlinux: None,
            perf_map_dir: PathBuf::from("/tmp"),
            lines: false,
            read_files: true,
        }
    }
}

impl SymbolSources {
    /// The build-id caches, in the order they are searched: the recording's own, then
    /// perf's.
    fn caches(&self) -> impl Iterator<Item = &PathBuf> {
        self.recording_cache.iter().chain(&self.build_id_cache)
    }
}

/// The recording's host name and kernel release (features).
#[derive(Debug, Clone, Default)]
pub struct RecordedHost {
    /// The HOSTNAME feature.
    pub hostname: Option<String>,
    /// The OSRELEASE feature (`uname -r`).
    pub osrelease: Option<String>,
}

/// Every DSO met in a recording, symbols loaded on first use.
#[derive(Debug)]
pub struct Dsos {
    /// Where symbol files are looked for.
    pub sources: SymbolSources,
    dsos: Vec<Dso>,
    by_name: HashMap<String, DsoId>,
    /// Build ids from the BUILD_ID feature and MMAP2 records, by file name.
    build_ids: HashMap<String, Vec<u8>>,
    kernel: OnceCell<Option<KernelSymbols>>,
    /// Kernel symbols chosen by the caller (a file or none, and why).
    kernel_choice: Option<(Option<PathBuf>, String)>,
    /// What the recording says about its machine (for choosing kernel symbols).
    pub host: RecordedHost,
    /// Runtime address of `_text` when recorded (the kernel MMAP's pgoff).
    kernel_ref: Option<u64>,
    /// That minus `_text` in the symbols used (KASLR: another boot of the same kernel).
    kernel_reloc: OnceCell<u64>,
    /// This process's own vdso, copied to a file (perf's fallback for a recording made
    /// on this machine without the vdso in a build-id cache).
    own_vdso: OnceCell<Option<tempfile::TempPath>>,
}

/// The short name perf shows: the file name, `[module]` for kernel modules.
fn short_name(name: &str) -> String {
    if name.starts_with('[') {
        return name.to_string();
    }
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |n| n.to_string_lossy().into_owned())
}

impl Dsos {
    /// An empty registry that looks for symbols where `sources` says.
    pub fn new(sources: SymbolSources) -> Self {
        Dsos {
            sources,
            dsos: vec![],
            by_name: HashMap::new(),
            build_ids: HashMap::new(),
            kernel: OnceCell::new(),
            kernel_choice: None,
            host: RecordedHost::default(),
            kernel_ref: None,
            kernel_reloc: OnceCell::new(),
            own_vdso: OnceCell::new(),
        }
    }

    /// Fixes the kernel symbols (`--kallsyms`, `--vmlinux`, `--no-symbols`).
    pub fn set_kernel_choice(&mut self, kallsyms: Option<PathBuf>, why: String) {
        self.kernel_choice = Some((kallsyms, why));
    }

    /// The kallsyms file used for the kernel (if any) and why: the caller's choice, else
    /// perf's — the build-id cache's saved copy for the recorded kernel, else this
    /// machine's `/proc/kallsyms` when it runs that kernel (same build id, or, with none
    /// recorded, the same host name and release).
    pub fn kernel_choice(&self) -> (Option<PathBuf>, String) {
        if let Some(c) = &self.kernel_choice {
            return c.clone();
        }
        let proc = PathBuf::from("/proc/kallsyms");
        let running = std::fs::read("/sys/kernel/notes")
            .ok()
            .and_then(|n| crate::symbols::build_id_from_notes(&n));
        if let Some(id) = self.build_ids.get("[kernel.kallsyms]") {
            let h = hex(id);
            for cache in self.sources.caches().filter(|_| h.len() > 2) {
                let saved = cache
                    .join(".build-id")
                    .join(&h[..2])
                    .join(&h[2..])
                    .join("kallsyms");
                if saved.is_file() {
                    let why = format!("{} (build-id cache)", saved.display());
                    return (Some(saved), why);
                }
            }
            return match running {
                Some(r) if same_build_id(id, &r) => (
                    Some(proc),
                    "/proc/kallsyms (this machine runs the recorded kernel)".into(),
                ),
                _ => (
                    None,
                    format!("none: no kallsyms or vmlinux with build id {h} (give --kallsyms or --vmlinux)"),
                ),
            };
        }
        let here = |f: &str| {
            std::fs::read_to_string(f)
                .ok()
                .map(|s| s.trim().to_string())
        };
        if self.host.hostname.is_some()
            && self.host.hostname == here("/proc/sys/kernel/hostname")
            && self.host.osrelease == here("/proc/sys/kernel/osrelease")
        {
            return (
                Some(proc),
                "/proc/kallsyms (recorded on this host and release; no kernel build id recorded)"
                    .into(),
            );
        }
        (
            None,
            "none: the recording comes from another machine".into(),
        )
    }

    /// The kernel MMAP's pgoff: where `_text` was when recorded.
    pub fn note_kernel_ref(&mut self, text: u64) {
        if text != 0 {
            self.kernel_ref = Some(text);
        }
    }

    fn kernel_reloc(&self) -> u64 {
        *self.kernel_reloc.get_or_init(|| {
            let text = self.kernel_symbols().and_then(|k| {
                k.kernel
                    .iter()
                    .find(|s| s.name() == "_text")
                    .map(|s| s.start)
            });
            match (self.kernel_ref, text) {
                (Some(r), Some(t)) => r.wrapping_sub(t),
                _ => 0,
            }
        })
    }

    /// Notes a build id for a file name (BUILD_ID feature, MMAP2 with a build id).
    pub fn note_build_id(&mut self, name: &str, id: Vec<u8>) {
        if let Some(&d) = self.by_name.get(name) {
            self.dsos[d.0 as usize]
                .build_id
                .get_or_insert_with(|| id.clone());
        }
        self.build_ids.entry(name.to_string()).or_insert(id);
    }

    /// The build id noted for a file name ([`Dsos::note_build_id`]), if any.
    pub fn build_id_of(&self, name: &str) -> Option<&[u8]> {
        self.build_ids.get(name).map(Vec::as_slice)
    }

    /// The DSO of a name, created on first sight.
    pub fn intern(&mut self, name: &str, kind: DsoKind) -> DsoId {
        if let Some(&d) = self.by_name.get(name) {
            return d;
        }
        let id = DsoId(self.dsos.len() as u32);
        let short = match &kind {
            DsoKind::Module(m) => format!("[{m}]"),
            _ => short_name(name),
        };
        self.dsos.push(Dso {
            name: name.to_string(),
            short_name: short,
            build_id: self.build_ids.get(name).cloned(),
            kind,
            loaded: OnceCell::new(),
        });
        self.by_name.insert(name.to_string(), id);
        id
    }

    /// The DSO of an id (panics on an id from another registry).
    pub fn get(&self, id: DsoId) -> &Dso {
        &self.dsos[id.0 as usize]
    }

    /// Every DSO, in the order they were first met.
    pub fn iter(&self) -> impl Iterator<Item = (DsoId, &Dso)> {
        self.dsos
            .iter()
            .enumerate()
            .map(|(i, d)| (DsoId(i as u32), d))
    }

    /// The address a symbol table uses for a map-relative file offset (`ip - start +
    /// pgoff`), or the address itself for kernel and JIT maps.
    pub fn lookup_address(&self, id: DsoId, map_ip: u64) -> u64 {
        let dso = self.get(id);
        match dso.kind {
            DsoKind::User => self
                .loaded(id)
                .runtime
                .as_ref()
                .and_then(|r| r.address_of_offset(map_ip))
                .unwrap_or(map_ip),
            DsoKind::Kernel | DsoKind::Module(_) => map_ip.wrapping_sub(self.kernel_reloc()),
            DsoKind::PerfMap => map_ip,
        }
    }

    /// The symbol at a lookup address (from [`Dsos::lookup_address`]).
    pub fn find_symbol(&self, id: DsoId, addr: u64) -> Option<SymbolId> {
        let (index, _) = self.table(id)?.find(addr)?;
        Some(SymbolId {
            dso: id,
            index: index as u32,
        })
    }

    /// A symbol's name as perf prints it (demangled); `[unknown]` when there is no such
    /// symbol.
    pub fn symbol_name(&self, s: SymbolId) -> &str {
        self.table(s.dso)
            .and_then(|t| t.get(s.index as usize))
            .map_or("[unknown]", |s| s.name())
    }

    /// A symbol's first address, as its symbol table states it (a lookup address, see
    /// [`Dsos::lookup_address`]); 0 when there is no such symbol.
    pub fn symbol_start(&self, s: SymbolId) -> u64 {
        self.table(s.dso)
            .and_then(|t| t.get(s.index as usize))
            .map_or(0, |s| s.start)
    }

    /// True when `s` is the function at its object's entry point (`_start`): the outermost
    /// frame of a process's first thread, where unwinding ends even when the object
    /// gives it no CFI (the dynamic loader's `_start` has none).
    pub fn is_entry_function(&self, s: SymbolId) -> bool {
        let entry = self.loaded(s.dso).runtime.as_ref().map(|r| r.entry);
        entry.is_some_and(|e| e != 0 && self.symbol_start(s) == e)
    }

    /// Where a DSO's symbols were read from, once loaded.
    pub fn symbols_from(&self, id: DsoId) -> Option<&Path> {
        self.dsos[id.0 as usize]
            .loaded
            .get()
            .and_then(|l| l.symbols_from.as_deref())
    }

    /// Source file and line of an address (DWARF), when `sources.lines` is set.
    pub fn source_line(&self, id: DsoId, addr: u64) -> Option<(String, u32)> {
        let loader = self.line_loader(id)?;
        let loc = loader.find_location(addr).ok()??;
        Some((loc.file?.to_string(), loc.line.unwrap_or(0)))
    }

    /// Inlined functions at an address, innermost first, ending with the function itself,
    /// named as perf names them (through binutils' `addr2line -i -f`): each function by
    /// its linkage name, or its DWARF name — except the innermost when it has no linkage
    /// name, which takes the name of the ELF symbol at the address.
    pub fn inline_frames(&self, id: DsoId, addr: u64) -> Vec<String> {
        self.inline_lines(id, addr)
            .into_iter()
            .map(|l| l.function)
            .collect()
    }

    /// [`Dsos::inline_frames`] with their source positions: the innermost's is the
    /// address's line, each caller's the line its inlined callee was called from. Empty
    /// without DWARF (or without `sources.lines`).
    pub fn inline_lines(&self, id: DsoId, addr: u64) -> Vec<InlineLine> {
        let Some(loader) = self.line_loader(id) else {
            return vec![];
        };
        let mut out: Vec<InlineLine> = vec![];
        if let Ok(mut frames) = loader.find_frames(addr) {
            while let Ok(Some(f)) = frames.next() {
                let Some(func) = f.function else { continue };
                let Ok(name) = func.raw_name() else { continue };
                // binutils takes a DWARF name as the linkage name in a language that does
                // not mangle (C); in one that does, a name that is not mangled is not one.
                let linkage = name.starts_with("_Z")
                    || name.starts_with("_R")
                    || !func.language.is_some_and(mangles);
                let elf_name = if out.is_empty() && !linkage {
                    let loaded = self.loaded(id);
                    loaded
                        .symtab
                        .as_ref()
                        .or(loaded.runtime.as_ref())
                        .and_then(|s| s.binutils_function_at(addr))
                } else {
                    None
                };
                out.push(InlineLine {
                    function: crate::symbols::demangle(elf_name.unwrap_or(&name)),
                    file: f.location.as_ref().and_then(|l| l.file).map(str::to_string),
                    line: f.location.as_ref().and_then(|l| l.line).unwrap_or(0),
                });
            }
        }
        out
    }

    /// The unwind tables of a user DSO, and the address (as the object states it) of
    /// file offset `pgoff` (so a map of it at `start` places the object's addresses at
    /// `start - that`). `None` when no file of it was found (frame pointers only).
    pub(crate) fn unwind_tables(
        &self,
        id: DsoId,
        pgoff: u64,
    ) -> Option<(std::sync::Arc<UnwindTables>, u64)> {
        let loaded = self.loaded(id);
        let vaddr = loaded.runtime.as_ref()?.address_of_exec_map(pgoff)?;
        let tables = loaded
            .unwind
            .get_or_init(|| {
                UnwindTables::load(loaded.runtime_path.as_deref(), loaded.dwarf.as_deref())
                    .map(std::sync::Arc::new)
            })
            .clone()?;
        Some((tables, vaddr))
    }

    fn line_loader(&self, id: DsoId) -> Option<&addr2line::Loader> {
        if !self.sources.lines {
            return None;
        }
        let loaded = self.loaded(id);
        loaded
            .lines
            .get_or_init(|| {
                let path = loaded.dwarf.as_ref()?;
                addr2line::Loader::new(path).ok()
            })
            .as_ref()
    }

    fn table(&self, id: DsoId) -> Option<&SymbolTable> {
        let t = &self.loaded(id).table;
        (!t.is_empty()).then_some(t)
    }

    fn loaded(&self, id: DsoId) -> &Loaded {
        let dso = &self.dsos[id.0 as usize];
        dso.loaded.get_or_init(|| match &dso.kind {
            _ if !self.sources.read_files => Loaded::default(),
            DsoKind::User => self.load_elf(dso),
            DsoKind::PerfMap => Loaded {
                table: std::fs::read_to_string(&dso.name)
                    .map(|t| parse_perf_map(&t))
                    .unwrap_or_default(),
                symbols_from: Some(PathBuf::from(&dso.name)),
                ..Loaded::default()
            },
            DsoKind::Kernel => self.load_kernel(None),
            DsoKind::Module(m) => self.load_kernel(Some(m)),
        })
    }

    fn load_kernel(&self, module: Option<&str>) -> Loaded {
        let Some(k) = self.kernel_symbols() else {
            return Loaded::default();
        };
        let table = match module {
            None => k.kernel.clone(),
            Some(m) => k.modules.get(m).cloned().unwrap_or_default(),
        };
        Loaded {
            table,
            symbols_from: self
                .sources
                .vmlinux
                .clone()
                .or_else(|| self.kernel_choice().0),
            ..Loaded::default()
        }
    }

    /// The kernel's symbols from `--vmlinux` or the chosen kallsyms file.
    pub fn kernel_symbols(&self) -> Option<&KernelSymbols> {
        self.kernel
            .get_or_init(|| {
                if let Some(v) = &self.sources.vmlinux {
                    let info = ElfInfo::read(v)?;
                    return Some(KernelSymbols {
                        kernel: ElfInfo::table(Some(&info), None),
                        modules: HashMap::new(),
                    });
                }
                let file = self
                    .sources
                    .kallsyms
                    .clone()
                    .or_else(|| self.kernel_choice().0)?;
                let text = std::fs::read_to_string(file).ok()?;
                Some(parse_kallsyms(&text))
            })
            .as_ref()
    }

    /// perf's order: the build-id cache, the system debug directories (by path, by build
    /// id), then the file itself; a file whose build id differs from the recorded one is
    /// not used. The first file with `.symtab` gives the symbols (and DWARF), the first
    /// runtime file the PLT and the address layout.
    fn load_elf(&self, dso: &Dso) -> Loaded {
        let mut candidates: Vec<PathBuf> = vec![];
        // perf reads the build id from the file when the recording has none for it, and
        // looks for debug files with it.
        let read_id;
        let build_id = match &dso.build_id {
            Some(id) => Some(id.as_slice()),
            None if dso.name.starts_with('/') => {
                read_id = ElfInfo::read_build_id(Path::new(&dso.name));
                read_id.as_deref()
            }
            None => None,
        };
        let id_hex = build_id.map(hex);
        for cache in self.sources.caches() {
            if let Some(h) = id_hex.as_ref().filter(|h| h.len() > 2) {
                let dir = cache.join(".build-id").join(&h[..2]).join(&h[2..]);
                candidates.push(dir.join("elf"));
                candidates.push(dir.join("debug"));
                // perf record saves the vdso image it found in memory under this name.
                if dso.name == "[vdso]" {
                    candidates.push(dir.join("vdso"));
                }
            }
        }
        if dso.name.starts_with('/') {
            let rel = dso.name.trim_start_matches('/');
            candidates.push(self.sources.debug_root.join(format!("{rel}.debug")));
            candidates.push(self.sources.debug_root.join(rel));
        }
        if let Some(h) = &id_hex {
            if h.len() > 2 {
                candidates.push(
                    self.sources
                        .debug_root
                        .join(".build-id")
                        .join(&h[..2])
                        .join(format!("{}.debug", &h[2..])),
                );
            }
        }
        if dso.name.starts_with('/') {
            candidates.push(PathBuf::from(&dso.name));
        }
        // As perf: the vdso of the running kernel, when no saved image is found and it is
        // the recorded one (the build id is checked below like any candidate's).
        if dso.name == "[vdso]" && !candidates.iter().any(|p| p.is_file()) {
            if let Some(own) = self.own_vdso.get_or_init(own_vdso) {
                candidates.push(own.to_path_buf());
            }
        }
        let mut symbols: Option<(PathBuf, ElfInfo)> = None;
        let mut runtime: Option<(PathBuf, ElfInfo)> = None;
        for path in candidates {
            if symbols.is_some() && runtime.is_some() {
                break;
            }
            if !path.is_file() {
                continue;
            }
            let Some(info) = ElfInfo::read(&path) else {
                continue;
            };
            if let (Some(want), Some(got)) = (&dso.build_id, &info.build_id) {
                if !same_build_id(want, got) {
                    continue;
                }
            }
            let is_runtime = info.is_runtime();
            if symbols.is_none() && info.has_symtab {
                if runtime.is_none() && is_runtime {
                    runtime = Some((path.clone(), ElfInfo::read(&path).unwrap_or_default()));
                }
                symbols = Some((path, info));
            } else if runtime.is_none() && is_runtime {
                runtime = Some((path, info));
            }
        }
        let table = ElfInfo::table(
            symbols.as_ref().map(|(_, i)| i),
            runtime.as_ref().map(|(_, i)| i),
        );
        let dwarf = [&symbols, &runtime]
            .into_iter()
            .flatten()
            .find(|(_, i)| i.has_dwarf)
            .map(|(p, _)| p.clone());
        let symbols_from = symbols
            .as_ref()
            .or(runtime.as_ref())
            .map(|(p, _)| p.clone());
        let (runtime_path, runtime, symtab) = match (runtime, symbols) {
            (Some((p, i)), s) => (Some(p), Some(i), s.map(|(_, s)| s)),
            (None, Some((p, i))) => (Some(p), Some(i), None),
            (None, None) => (None, None, None),
        };
        Loaded {
            table,
            runtime,
            runtime_path,
            symtab,
            symbols_from,
            dwarf,
            lines: OnceCell::new(),
            unwind: OnceCell::new(),
        }
    }
}

/// This process's vdso image (its `[vdso]` mapping, read through `/proc/self/mem`),
/// written to a temporary file for the ELF readers; `None` where there is none.
fn own_vdso() -> Option<tempfile::TempPath> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    // A vdso is a few pages; anything else is not one.
    let len = usize::try_from(end.checked_sub(start)?)
        .ok()
        .filter(|&l| l <= 1 << 20)?;
    let mut mem = std::fs::File::open("/proc/self/mem").ok()?;
    mem.seek(SeekFrom::Start(start)).ok()?;
    let mut image = vec![0; len];
    mem.read_exact(&mut image).ok()?;
    let mut file = tempfile::Builder::new()
        .prefix("perfdata-vdso-")
        .tempfile()
        .ok()?;
    file.write_all(&image).ok()?;
    Some(file.into_temp_path())
}

/// Languages whose linkage names are mangled (binutils' `mangle_style`).
fn mangles(lang: addr2line::gimli::DwLang) -> bool {
    use addr2line::gimli;
    matches!(
        lang,
        gimli::DW_LANG_C_plus_plus
            | gimli::DW_LANG_C_plus_plus_03
            | gimli::DW_LANG_C_plus_plus_11
            | gimli::DW_LANG_C_plus_plus_14
            | gimli::DW_LANG_ObjC_plus_plus
            | gimli::DW_LANG_D
            | gimli::DW_LANG_Rust
            | gimli::DW_LANG_Ada83
            | gimli::DW_LANG_Ada95
    )
}

/// A recorded build id (20 bytes, zero-padded when shorter) against a file's.
pub fn same_build_id(recorded: &[u8], file: &[u8]) -> bool {
    recorded.len() >= file.len()
        && recorded[..file.len()] == *file
        && recorded[file.len()..].iter().all(|&b| b == 0)
        || recorded == file
}

/// Lowercase hexadecimal, as build-id cache paths spell build ids.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
