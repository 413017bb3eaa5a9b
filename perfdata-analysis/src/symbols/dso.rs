//! Shared objects (DSOs) and where their symbols come from: perf's search order, build
//! ids checked, one cache per DSO (loaded on first use), source lines through `addr2line`.

use crate::stack::unwind::UnwindTables;
use crate::symbols::elf::{parse_kallsyms, parse_perf_map, ElfInfo, KernelSymbols, SymbolTable};
use crate::symbols::read_ahead::{Pending, ReadAhead};
use crate::symbols::recorded::{RecordedFile, RecordedKind};
use crate::symbols::sources::archive::ArchiveObjects;
use crate::symbols::sources::debuginfod::{Artifact, Debuginfod};
pub(crate) use crate::symbols::sources::hex;
use crate::symbols::sources::Candidate;
pub use crate::symbols::sources::{same_build_id, SymbolSources};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

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
    /// One function's JIT code from a jitdump (what `perf inject --jit` writes as
    /// `jitted-PID-INDEX.so`): one symbol over its bytes, addresses from its start.
    Jit {
        /// The function's name.
        symbol: String,
        /// The code's size in bytes.
        size: u64,
        /// The jitdump that named it (where its symbol came from, for `info`).
        jitdump: String,
    },
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
    /// Its symbols as the recording carries them (a simpleperf FILE feature): used
    /// instead of any file.
    recorded: Option<Box<RecordedFile>>,
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
    /// Where the symbols came from (for error messages).
    symbols_from: Option<PathBuf>,
    /// The same as a user reads it: a path, `ARCHIVE:MEMBER`, or a debuginfod cache path
    /// and its server (for `perfdata info`).
    origin: Option<String>,
    /// The file with DWARF, if any (for source lines).
    dwarf: Option<PathBuf>,
    lines: OnceCell<Option<addr2line::Loader>>,
    /// `lines` being read on another thread ([`Dsos::read_ahead`]).
    lines_ahead: Pending<Option<addr2line::Loader>>,
    /// Where binutils' `addr2line` names another file than the line table, read when
    /// first asked ([`Dsos::binutils_line_file`]).
    bfd_files: OnceCell<Option<super::bfd_lines::BfdFiles>>,
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

/// One function of the debug info at an address ([`Dsos::dwarf_frames`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DwarfFrame {
    /// Its DIE's offset in its unit (with the name, it tells functions apart).
    pub die: Option<u64>,
    /// Its linkage name where it has one, else its DWARF name (not demangled).
    pub name: String,
    /// `name` is a linkage name (binutils' `is_linkage`).
    pub linkage: bool,
    /// The source file of its position, when the debug info says.
    pub file: Option<String>,
    /// The line (0: unknown).
    pub line: u32,
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
    kernel: OnceCell<Option<Arc<KernelSymbols>>>,
    /// `kernel` being read on another thread ([`Dsos::read_ahead`]).
    kernel_ahead: Pending<Option<Arc<KernelSymbols>>>,
    /// Symbols loaded by [`Dsos::read_ahead`] for files not mapped yet: a DSO of that
    /// name takes them when it is made.
    preloaded: HashMap<String, Loaded>,
    /// Keeps the read-ahead thread going (it stops when the registry is dropped).
    _read_ahead: Option<std::sync::Arc<()>>,
    /// Set by [`Dsos::read_ahead_user`]: the kernel's symbols are not read ahead.
    kernel_late: bool,
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
    /// The `--symbols-from` archives' members of the recorded build ids, read on first
    /// use.
    archives: OnceCell<Vec<ArchiveObjects>>,
    /// The debuginfod client, made on first use when `DEBUGINFOD_URLS` names servers.
    debuginfod: OnceCell<Option<Debuginfod>>,
    /// Symbols the recording carries, by path (a simpleperf FILE feature).
    recorded: HashMap<String, RecordedFile>,
    /// The recording machine's kallsyms, carried by the recording (a simpleperf
    /// KERNEL_SYMBOL record).
    recorded_kallsyms: Option<String>,
    /// The kernel's symbol file and why, decided on first use.
    kernel_source: OnceCell<(KernelFile, String)>,
}

/// Where the kernel's symbols come from.
#[derive(Debug, Clone)]
enum KernelFile {
    None,
    Kallsyms(PathBuf),
    Vmlinux(PathBuf),
    /// The kallsyms the recording carries ([`Dsos::note_recorded_kallsyms`]).
    RecordedKallsyms,
}

/// A kernel module's file (the build-id list names them by path as it names libraries).
fn is_kernel_module(name: &str) -> bool {
    [".ko", ".ko.xz", ".ko.gz", ".ko.zst"]
        .iter()
        .any(|s| name.ends_with(s))
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
            kernel_ahead: Pending::default(),
            preloaded: HashMap::new(),
            _read_ahead: None,
            kernel_late: false,
            kernel_choice: None,
            host: RecordedHost::default(),
            kernel_ref: None,
            kernel_reloc: OnceCell::new(),
            own_vdso: OnceCell::new(),
            archives: OnceCell::new(),
            debuginfod: OnceCell::new(),
            kernel_source: OnceCell::new(),
            recorded: HashMap::new(),
            recorded_kallsyms: None,
        }
    }

    /// Fixes the kernel symbols (`--kallsyms`, `--vmlinux`, `--no-symbols`).
    pub fn set_kernel_choice(&mut self, kallsyms: Option<PathBuf>, why: String) {
        self.kernel_choice = Some((kallsyms, why));
    }

    /// The kallsyms file used for the kernel (if any) and why (a vmlinux found by build
    /// id is named in the reason, with no kallsyms file).
    pub fn kernel_choice(&self) -> (Option<PathBuf>, String) {
        let (file, why) = self.kernel_source();
        match file {
            KernelFile::Kallsyms(p) => (Some(p.clone()), why.clone()),
            KernelFile::None | KernelFile::Vmlinux(_) | KernelFile::RecordedKallsyms => {
                (None, why.clone())
            }
        }
    }

    /// The kernel's symbol file and why: the caller's choice, else the kallsyms the
    /// recording carries (simpleperf's KERNEL_SYMBOL), else perf's — the
    /// build-id caches' saved kallsyms for the recorded kernel (the recording's, the
    /// archives', perf's), else this machine's `/proc/kallsyms` when it runs that kernel
    /// (same build id, or, with none recorded, the same host name and release), else a
    /// vmlinux of that build id from the debug directories, `--symfs` or debuginfod.
    fn kernel_source(&self) -> &(KernelFile, String) {
        self.kernel_source.get_or_init(|| self.find_kernel_source())
    }

    fn find_kernel_source(&self) -> (KernelFile, String) {
        if let Some((file, why)) = &self.kernel_choice {
            let f = match (file, &self.sources.vmlinux) {
                (Some(k), _) => KernelFile::Kallsyms(k.clone()),
                (None, Some(v)) => KernelFile::Vmlinux(v.clone()),
                (None, None) => KernelFile::None,
            };
            return (f, why.clone());
        }
        // The recording's own kallsyms come from the very kernel and boot it recorded
        // (no build id or KASLR offset to check), so they go before any file found for
        // it and before this machine's /proc/kallsyms, which may be another kernel's.
        // simpleperf's `KernelDso::LoadSymbols` takes them after a given vmlinux and
        // before /proc/kallsyms (read only when asked, or when the build id matches).
        if self.recorded_kallsyms.is_some() {
            return (
                KernelFile::RecordedKallsyms,
                "the recording (simpleperf's KERNEL_SYMBOL record)".into(),
            );
        }
        let proc = PathBuf::from("/proc/kallsyms");
        let running = std::fs::read("/sys/kernel/notes")
            .ok()
            .and_then(|n| crate::symbols::elf::build_id_from_notes(&n));
        if let Some(id) = self.build_ids.get("[kernel.kallsyms]") {
            let h = hex(id);
            for c in self.sources.cached(self.archives(), id, &["kallsyms"]) {
                if c.path.is_file() {
                    let from_archive = c.label != c.path.display().to_string();
                    let kind = if from_archive {
                        "perf archive"
                    } else {
                        "build-id cache"
                    };
                    let why = format!("{} ({kind})", c.label);
                    return (KernelFile::Kallsyms(c.path), why);
                }
            }
            if running.as_ref().is_some_and(|r| same_build_id(id, r)) {
                return (
                    KernelFile::Kallsyms(proc),
                    "/proc/kallsyms (this machine runs the recorded kernel)".into(),
                );
            }
            if let Some((path, label)) = self.find_vmlinux(id) {
                return (
                    KernelFile::Vmlinux(path),
                    format!("{label} (vmlinux of build id {h})"),
                );
            }
            return (
                KernelFile::None,
                format!(
                    "none: no kallsyms or vmlinux with build id {h} (give --kallsyms or --vmlinux)"
                ),
            );
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
                KernelFile::Kallsyms(proc),
                "/proc/kallsyms (recorded on this host and release; no kernel build id recorded)"
                    .into(),
            );
        }
        (
            KernelFile::None,
            "none: the recording comes from another machine".into(),
        )
    }

    /// A kernel image of build id `id`: the debug directories and usual places (under
    /// `--symfs`), then debuginfod.
    fn find_vmlinux(&self, id: &[u8]) -> Option<(PathBuf, String)> {
        let release = self.host.osrelease.as_deref();
        for c in self.sources.vmlinux_candidates(id, release) {
            if c.path.is_file()
                && ElfInfo::read_build_id(&c.path).is_some_and(|got| same_build_id(id, &got))
            {
                return Some((c.path, c.label));
            }
        }
        let client = self.debuginfod()?;
        for artifact in [Artifact::Debuginfo, Artifact::Executable] {
            if let Some(p) = client.fetch(id, artifact, "[kernel.kallsyms]") {
                let label = format!("{} (debuginfod)", p.display());
                return Some((p, label));
            }
        }
        None
    }

    /// The `--symbols-from` archives, read on first use, keeping the members of the
    /// recorded build ids; an archive that cannot be read is reported once and left out.
    fn archives(&self) -> &[ArchiveObjects] {
        self.archives.get_or_init(|| {
            let wanted: Vec<Vec<u8>> = self.build_ids.values().cloned().collect();
            self.sources
                .archives
                .iter()
                .filter_map(|p| match ArchiveObjects::load(p, &wanted) {
                    Ok(a) => Some(a),
                    Err(e) => {
                        eprintln!("perfdata: --symbols-from {}: {e}", p.display());
                        None
                    }
                })
                .collect()
        })
    }

    /// The debuginfod client, when `DEBUGINFOD_URLS` names servers and the sources allow it.
    fn debuginfod(&self) -> Option<&Debuginfod> {
        self.debuginfod
            .get_or_init(|| {
                if self.sources.debuginfod && self.sources.read_files {
                    Debuginfod::from_env()
                } else {
                    None
                }
            })
            .as_ref()
    }

    /// The kernel MMAP's pgoff: where `_text` was when recorded.
    pub fn note_kernel_ref(&mut self, text: u64) {
        if text != 0 {
            self.kernel_ref = Some(text);
        }
    }

    fn kernel_reloc(&self) -> u64 {
        *self.kernel_reloc.get_or_init(|| {
            // The recording's own kallsyms are at the addresses of the boot it recorded.
            if matches!(self.kernel_source().0, KernelFile::RecordedKallsyms) {
                return 0;
            }
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

    /// Symbols the recording carries for a file (a simpleperf FILE feature): that file's
    /// DSO takes its symbols from them, not from any file. The kernel's are kept under
    /// `[kernel.kallsyms]`, the name kernel maps get.
    pub fn note_recorded_file(&mut self, file: RecordedFile) {
        let name = match file.kind {
            RecordedKind::Kernel => "[kernel.kallsyms]".to_string(),
            _ => file.path.clone(),
        };
        self.recorded.insert(name, file);
    }

    /// The recording machine's kallsyms, carried by the recording (simpleperf's
    /// KERNEL_SYMBOL record): the kernel's symbols unless the caller chose others
    /// ([`Dsos::set_kernel_choice`]) or the recording's FILE feature names the kernel's
    /// symbols itself (a kernel entry: its DSO takes those, as it does without this).
    pub fn note_recorded_kallsyms(&mut self, text: String) {
        self.recorded_kallsyms = Some(text);
    }

    /// The build id noted for a file name ([`Dsos::note_build_id`]), if any.
    pub fn build_id_of(&self, name: &str) -> Option<&[u8]> {
        self.build_ids.get(name).map(Vec::as_slice)
    }

    /// Starts reading, on another thread, what a walk asks for first and waits for: the
    /// kernel's symbols from a kallsyms file, and with `debug_info` (the caller will ask
    /// for source lines or inlined functions at most of its user addresses, and
    /// `sources.lines` is set) the DWARF of the files the recording lists with build ids
    /// (perf lists the files its samples hit); their symbol tables are then loaded here,
    /// on this thread. Each result is taken where it is first needed. Called once all
    /// symbol sources are set; a second call reads nothing more.
    pub fn read_ahead(&mut self, debug_info: bool) {
        if !self.sources.read_files || self._read_ahead.is_some() {
            return;
        }
        let mut ahead = ReadAhead::default();
        // The kernel's file is decided once, here, only when what decides it is known
        // already: a pipe brings its build ids and host in its stream, later.
        let kernel_known = !self.kernel_late
            && (self.kernel_choice.is_some()
                || self.recorded_kallsyms.is_some()
                || self.build_ids.contains_key("[kernel.kallsyms]"));
        if kernel_known && self.kernel.get().is_none() {
            if let KernelFile::Kallsyms(path) = &self.kernel_source().0 {
                let path = path.clone();
                self.kernel_ahead = ahead.push(move || shared_kallsyms(&path));
            }
        }
        if debug_info && self.sources.lines {
            let mut names: Vec<String> = (self.build_ids.keys())
                .filter(|n| n.starts_with('/') && !is_kernel_module(n))
                .filter(|n| !self.recorded.contains_key(*n))
                .cloned()
                .collect();
            names.sort();
            for name in names {
                let loaded = match self.by_name.get(&name) {
                    Some(&id) if self.dsos[id.0 as usize].kind == DsoKind::User => {
                        self.loaded(id);
                        self.dsos[id.0 as usize].loaded.get_mut()
                    }
                    Some(_) => None,
                    None => {
                        let dso = Dso {
                            name: name.clone(),
                            short_name: short_name(&name),
                            kind: DsoKind::User,
                            build_id: self.build_ids.get(&name).cloned(),
                            recorded: None,
                            loaded: OnceCell::new(),
                        };
                        let loaded = self.load_elf(&dso);
                        Some(self.preloaded.entry(name).or_insert(loaded))
                    }
                };
                let Some(loaded) = loaded else { continue };
                if let (Some(path), None) = (&loaded.dwarf, loaded.lines.get()) {
                    let path = path.clone();
                    loaded.lines_ahead = ahead.push(move || addr2line::Loader::new(path).ok());
                }
            }
        }
        self._read_ahead = ahead.start();
    }

    /// [`Dsos::read_ahead`] without the kernel's symbols: for a caller that resolves
    /// kernel addresses after its walk, or not at all (annotate, which cannot annotate
    /// kernel code). No later [`Dsos::read_ahead`] reads the kernel's symbols ahead
    /// either: they load where they are first needed.
    pub fn read_ahead_user(&mut self, debug_info: bool) {
        self.kernel_late = true;
        self.read_ahead(debug_info);
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
            recorded: match &kind {
                DsoKind::User | DsoKind::Kernel => self.recorded.get(name).cloned().map(Box::new),
                _ => None,
            },
            kind,
            loaded: match self.preloaded.remove(name) {
                Some(l) => OnceCell::from(l),
                None => OnceCell::new(),
            },
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
    /// pgoff`; a jitdump's code: from its start), or the address itself for kernel and
    /// perf-map JIT maps.
    pub fn lookup_address(&self, id: DsoId, map_ip: u64) -> u64 {
        let dso = self.get(id);
        if let Some(r) = &dso.recorded {
            // Recorded kernel symbols are at runtime addresses: no relocation.
            return match dso.kind {
                DsoKind::Kernel => map_ip,
                _ => r.address_of_offset(map_ip),
            };
        }
        match dso.kind {
            DsoKind::User => self
                .loaded(id)
                .runtime
                .as_ref()
                .and_then(|r| r.address_of_offset(map_ip))
                .unwrap_or(map_ip),
            DsoKind::Kernel | DsoKind::Module(_) => map_ip.wrapping_sub(self.kernel_reloc()),
            DsoKind::PerfMap | DsoKind::Jit { .. } => map_ip,
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

    /// An object's build id: the recorded one, else its file's (read as perf reads it
    /// when it loads the object's symbols).
    pub fn build_id(&self, id: DsoId) -> Option<&[u8]> {
        let d = self.get(id);
        if let Some(b) = d.build_id.as_deref() {
            return Some(b);
        }
        self.loaded(id).runtime.as_ref()?.build_id.as_deref()
    }

    /// A symbol's ELF binding (`STB_LOCAL` 0, `STB_GLOBAL` 1, `STB_WEAK` 2); 0 when there
    /// is no such symbol.
    pub fn symbol_binding(&self, s: SymbolId) -> u8 {
        self.table(s.dso)
            .and_then(|t| t.get(s.index as usize))
            .map_or(0, |s| s.binding())
    }

    /// A symbol's end (exclusive), as its symbol table states it; 0 when there is no
    /// such symbol.
    pub fn symbol_end(&self, s: SymbolId) -> u64 {
        self.table(s.dso)
            .and_then(|t| t.get(s.index as usize))
            .map_or(0, |s| s.end)
    }

    /// The object's file the program ran from (its code: the bytes `annotate`
    /// disassembles), found as the symbols are and with the recorded build id; loads its
    /// symbols if they were not yet. `None` for the kernel, JIT code, or a user object
    /// with no such file here.
    pub fn runtime_path(&self, id: DsoId) -> Option<&Path> {
        self.loaded(id).runtime_path.as_deref()
    }

    /// True when `s` is the function at its object's entry point (`_start`): the outermost
    /// frame of a process's first thread, where unwinding ends even when the object
    /// gives it no CFI (the dynamic loader's `_start` has none). When the entry point is
    /// an unsized label, the label right after it is entry code too: ld.so's `_start`
    /// calls `_dl_start` and goes on at `_dl_start_user`, which calls `_dl_init`, so the
    /// stack of every initializer the loader runs ends there.
    pub fn is_entry_function(&self, s: SymbolId) -> bool {
        let Some(e) = self.loaded(s.dso).runtime.as_ref().map(|r| r.entry) else {
            return false;
        };
        if e == 0 {
            return false;
        }
        let table = self.table(s.dso);
        let at = |i: usize| table.and_then(|t| t.get(i));
        at(s.index as usize).is_some_and(|sym| sym.start == e)
            || (s.index as usize)
                .checked_sub(1)
                .and_then(at)
                .is_some_and(|before| before.start == e && before.no_size)
    }

    /// Where a DSO's symbols were read from, once loaded.
    pub fn symbols_from(&self, id: DsoId) -> Option<&Path> {
        self.dsos[id.0 as usize]
            .loaded
            .get()
            .and_then(|l| l.symbols_from.as_deref())
    }

    /// Where a DSO's symbols were read from, as a user reads it (a path, `ARCHIVE:MEMBER`,
    /// a debuginfod cache path); loads its symbols if they were not yet.
    pub fn symbols_origin(&self, id: DsoId) -> Option<&str> {
        self.loaded(id).origin.as_deref()
    }

    /// Source file and line of an address (DWARF), when `sources.lines` is set.
    pub fn source_line(&self, id: DsoId, addr: u64) -> Option<(String, u32)> {
        let loader = self.line_loader(id)?;
        let loc = loader.find_location(addr).ok()??;
        Some((loc.file?.to_string(), loc.line.unwrap_or(0)))
    }

    /// The source file binutils' `addr2line` (2.40, which perf 6.1 asks for its `-l`
    /// lines) names for an address (a lookup address) where it is not the one
    /// [`Dsos::source_line`] gives: the compile unit's own file, for the rows of a DWARF 5
    /// line program before its first file change (see `bfd_lines`). The line is the
    /// same. Reads every line program of the object the first time.
    pub fn binutils_line_file(&self, id: DsoId, addr: u64) -> Option<&str> {
        if !self.sources.lines {
            return None;
        }
        let loaded = self.loaded(id);
        loaded
            .bfd_files
            .get_or_init(|| super::bfd_lines::BfdFiles::read(loaded.dwarf.as_deref()?))
            .as_ref()?
            .file_at(addr)
    }

    /// The source file binutils' `addr2line` gives an address from the symbol table when
    /// no debug info covers it (the `STT_FILE` symbol of its function; line 0), from the
    /// file the symbols came from.
    pub fn binutils_file(&self, id: DsoId, addr: u64) -> Option<String> {
        let loaded = self.loaded(id);
        loaded
            .symtab
            .as_ref()
            .or(loaded.runtime.as_ref())
            .filter(|s| s.has_symtab)
            .and_then(|s| s.binutils_file_at(addr))
            .map(str::to_string)
    }

    /// Inlined functions at an address, innermost first, ending with the function itself,
    /// named as perf names them (through binutils' `addr2line -i -f`): each function by
    /// its linkage name, or its DWARF name — except a function without linkage name
    /// where binutils takes an ELF symbol's (see [`Dsos::inline_lines`]).
    pub fn inline_frames(&self, id: DsoId, addr: u64) -> Vec<String> {
        self.inline_lines(id, addr)
            .into_iter()
            .map(|l| l.function)
            .collect()
    }

    /// [`Dsos::inline_frames`] with their source positions: the innermost's is the
    /// address's line, each caller's the line its inlined callee was called from. Empty
    /// without DWARF (or without `sources.lines`).
    ///
    /// The innermost function without a linkage name (a lambda's `operator()` in GCC's
    /// DWARF) is named by the ELF symbol at the address (`main`).
    pub fn inline_lines(&self, id: DsoId, addr: u64) -> Vec<InlineLine> {
        let frames = self.dwarf_frames(id, addr);
        let mut out = Vec::with_capacity(frames.len());
        for (i, f) in frames.iter().enumerate() {
            // The innermost function without a linkage name is named by the ELF symbol
            // at the address. (binutils' long-running addr2line, which perf asks, names
            // it so only the first time it is asked about the function: a state that
            // depends on the order of the questions, which two analyses of one recording
            // do not share, so it is not copied here; `script`, which asks in perf's
            // order, keeps that state itself.)
            let named = if f.linkage || i > 0 {
                f.name.clone()
            } else {
                self.elf_symbol_at(id, addr)
                    .map_or_else(|| f.name.clone(), |(n, _)| n.to_string())
            };
            out.push(InlineLine {
                function: crate::symbols::elf::demangle(&named),
                file: f.file.clone(),
                line: f.line,
            });
        }
        out
    }

    /// The functions of the debug info at `addr` (a lookup address), innermost first, as
    /// the DWARF states them: each with its DIE, its name (the linkage name where it has
    /// one), and the source position. Empty without DWARF.
    pub fn dwarf_frames(&self, id: DsoId, addr: u64) -> Vec<DwarfFrame> {
        let Some(loader) = self.line_loader(id) else {
            return vec![];
        };
        let mut v = vec![];
        if let Ok(mut frames) = loader.find_frames(addr) {
            while let Ok(Some(f)) = frames.next() {
                let Some(func) = f.function else { continue };
                let Ok(name) = func.raw_name() else { continue };
                // binutils takes a DWARF name as the linkage name in a language that
                // does not mangle (C); in one that does, a name that is not mangled is
                // not one.
                let linkage = name.starts_with("_Z")
                    || name.starts_with("_R")
                    || !func.language.is_some_and(mangles);
                v.push(DwarfFrame {
                    die: f.dw_die_offset.map(|o| o.0 as u64),
                    name: name.into_owned(),
                    linkage,
                    file: f.location.as_ref().and_then(|l| l.file).map(str::to_string),
                    line: f.location.as_ref().and_then(|l| l.line).unwrap_or(0),
                });
            }
        }
        v
    }

    /// Up to `len` bytes of the object's file from `offset` (a user map's file offset), as
    /// perf's `dso__data_read_offset` reads code, and whether the file is a 64-bit ELF
    /// one; `None` when there is no file of it here (kernel, JIT code).
    pub fn file_bytes(&self, id: DsoId, offset: u64, len: usize) -> Option<(Vec<u8>, bool)> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.loaded(id).runtime_path.as_ref()?;
        let mut f = std::fs::File::open(path).ok()?;
        let mut ident = [0u8; 5];
        f.read_exact(&mut ident).ok()?;
        f.seek(SeekFrom::Start(offset)).ok()?;
        let mut buf = Vec::with_capacity(len);
        f.take(len as u64).read_to_end(&mut buf).ok()?;
        // EI_CLASS: 2 is ELFCLASS64.
        Some((buf, ident[4] == 2))
    }

    /// The ELF symbol binutils names an address by (raw, as the symbol table has it) and
    /// its start: from the file the symbols came from, else the runtime file.
    pub fn elf_symbol_at(&self, id: DsoId, addr: u64) -> Option<(&str, u64)> {
        let loaded = self.loaded(id);
        loaded
            .symtab
            .as_ref()
            .or(loaded.runtime.as_ref())
            .and_then(|s| s.binutils_symbol_at(addr))
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
                match loaded.lines_ahead.take() {
                    Some(ahead) => ahead,
                    None => addr2line::Loader::new(path).ok(),
                }
            })
            .as_ref()
    }

    fn table(&self, id: DsoId) -> Option<&SymbolTable> {
        let t = &self.loaded(id).table;
        (!t.is_empty()).then_some(t)
    }

    fn loaded(&self, id: DsoId) -> &Loaded {
        let dso = &self.dsos[id.0 as usize];
        dso.loaded
            .get_or_init(|| match (&dso.kind, dso.recorded.as_deref()) {
                _ if !self.sources.read_files => Loaded::default(),
                (_, Some(r)) => Loaded {
                    table: SymbolTable::from_ranges(r.symbols.iter().map(|(start, len, name)| {
                        (*start, start.saturating_add(*len), name.as_str())
                    })),
                    origin: Some("the recording (simpleperf's FILE feature)".to_string()),
                    ..Loaded::default()
                },
                (DsoKind::User, None) => self.load_elf(dso),
                (DsoKind::PerfMap, None) => Loaded {
                    table: std::fs::read_to_string(&dso.name)
                        .map(|t| parse_perf_map(&t))
                        .unwrap_or_default(),
                    symbols_from: Some(PathBuf::from(&dso.name)),
                    origin: Some(dso.name.clone()),
                    ..Loaded::default()
                },
                (
                    DsoKind::Jit {
                        symbol,
                        size,
                        jitdump,
                    },
                    None,
                ) => Loaded {
                    table: SymbolTable::single(0, *size, symbol),
                    symbols_from: Some(PathBuf::from(jitdump)),
                    origin: Some(jitdump.clone()),
                    ..Loaded::default()
                },
                (DsoKind::Kernel, None) => self.load_kernel(None),
                (DsoKind::Module(m), None) => self.load_kernel(Some(m)),
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
        let from = match &self.kernel_source().0 {
            KernelFile::Kallsyms(p) | KernelFile::Vmlinux(p) => Some(p.clone()),
            KernelFile::None | KernelFile::RecordedKallsyms => None,
        };
        Loaded {
            table,
            origin: Some(self.kernel_source().1.clone()),
            symbols_from: from,
            ..Loaded::default()
        }
    }

    /// The kernel's symbols from `--vmlinux`, `--kallsyms` or the file chosen for the
    /// recorded kernel ([`Dsos::kernel_choice`]).
    pub fn kernel_symbols(&self) -> Option<&KernelSymbols> {
        self.kernel
            .get_or_init(|| match &self.kernel_source().0 {
                KernelFile::Kallsyms(file) => match self.kernel_ahead.take() {
                    Some(ahead) => ahead,
                    None => shared_kallsyms(file),
                },
                KernelFile::Vmlinux(v) => {
                    let info = ElfInfo::read(v)?;
                    Some(Arc::new(KernelSymbols {
                        kernel: ElfInfo::table(Some(&info), None),
                        modules: HashMap::new(),
                    }))
                }
                KernelFile::RecordedKallsyms => {
                    (self.recorded_kallsyms.as_deref()).map(|text| Arc::new(parse_kallsyms(text)))
                }
                KernelFile::None => None,
            })
            .as_deref()
    }

    /// The files of a user object in the search order of [`crate::symbols::sources`],
    /// then debuginfod's when they give no symbols; a file whose build id differs from
    /// the recorded one is not used. The first file with `.symtab` gives the symbols (and
    /// DWARF), the first runtime file the PLT, the address layout and the unwind tables.
    fn load_elf(&self, dso: &Dso) -> Loaded {
        // perf reads the build id from the file when the recording has none for it, and
        // looks for debug files with it.
        let read_id;
        let build_id = match &dso.build_id {
            Some(id) => Some(id.as_slice()),
            None if dso.name.starts_with('/') => {
                read_id = ElfInfo::read_build_id(&self.sources.target_path(&dso.name));
                read_id.as_deref()
            }
            None => None,
        };
        let mut candidates = self
            .sources
            .candidates(self.archives(), &dso.name, build_id);
        // As perf: the vdso of the running kernel, when no saved image is found and it is
        // the recorded one (the build id is checked below like any candidate's).
        if dso.name == "[vdso]" && !candidates.iter().any(|c| c.path.is_file()) {
            if let Some(own) = self.own_vdso.get_or_init(own_vdso) {
                candidates.push(Candidate {
                    path: own.to_path_buf(),
                    label: "[vdso] of this machine".into(),
                });
            }
        }
        let mut found = Found::default();
        for c in candidates {
            found.consider(c, dso.build_id.as_deref());
        }
        // debuginfod, by build id, for what the local files did not give.
        if let (Some(id), false) = (build_id, found.complete()) {
            if let Some(client) = self.debuginfod() {
                for artifact in [Artifact::Debuginfo, Artifact::Executable] {
                    let missing = match artifact {
                        Artifact::Debuginfo => found.symbols.is_none(),
                        Artifact::Executable => found.runtime.is_none(),
                    };
                    if missing {
                        if let Some(path) = client.fetch(id, artifact, &dso.name) {
                            let label = format!("{} (debuginfod)", path.display());
                            found.consider(Candidate { path, label }, Some(id));
                        }
                    }
                }
            }
        }
        found.into_loaded()
    }
}

/// The files chosen for a user object so far: (path, what to call it, what it holds).
#[derive(Default)]
struct Found {
    symbols: Option<(PathBuf, String, ElfInfo)>,
    runtime: Option<(PathBuf, String, ElfInfo)>,
}

impl Found {
    fn complete(&self) -> bool {
        self.symbols.is_some() && self.runtime.is_some()
    }

    /// Takes `c` for what it gives that is still missing, unless its build id is not
    /// `want`.
    fn consider(&mut self, c: Candidate, want: Option<&[u8]>) {
        if self.complete() || !c.path.is_file() {
            return;
        }
        let Some(info) = ElfInfo::read(&c.path) else {
            return;
        };
        if let (Some(want), Some(got)) = (want, &info.build_id) {
            if !same_build_id(want, got) {
                return;
            }
        }
        let is_runtime = info.is_runtime();
        if self.symbols.is_none() && info.has_symtab {
            if self.runtime.is_none() && is_runtime {
                let again = ElfInfo::read(&c.path).unwrap_or_default();
                self.runtime = Some((c.path.clone(), c.label.clone(), again));
            }
            self.symbols = Some((c.path, c.label, info));
        } else if self.runtime.is_none() && is_runtime {
            self.runtime = Some((c.path, c.label, info));
        }
    }

    fn into_loaded(self) -> Loaded {
        let Found { symbols, runtime } = self;
        let table = ElfInfo::table(
            symbols.as_ref().map(|(_, _, i)| i),
            runtime.as_ref().map(|(_, _, i)| i),
        );
        let dwarf = [&symbols, &runtime]
            .into_iter()
            .flatten()
            .find(|(_, _, i)| i.has_dwarf)
            .map(|(p, _, _)| p.clone());
        let (symbols_from, origin) = symbols
            .as_ref()
            .or(runtime.as_ref())
            .map(|(p, l, _)| (p.clone(), l.clone()))
            .unzip();
        let (runtime_path, runtime, symtab) = match (runtime, symbols) {
            (Some((p, _, i)), s) => (Some(p), Some(i), s.map(|(_, _, s)| s)),
            (None, Some((p, _, i))) => (Some(p), Some(i), None),
            (None, None) => (None, None, None),
        };
        Loaded {
            table,
            runtime,
            runtime_path,
            symtab,
            symbols_from,
            origin,
            dwarf,
            lines: OnceCell::new(),
            lines_ahead: Pending::default(),
            bfd_files: OnceCell::new(),
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

/// A kallsyms file's symbols, parsed once for every analyzer of the process that holds
/// them (`diff` reads two recordings of one kernel at once, and both read its symbols
/// first): a file read while another analyzer parses it waits for that parse. Kept by
/// path, size and modification time while some analyzer holds them; `None` when the
/// file cannot be read.
fn shared_kallsyms(path: &Path) -> Option<Arc<KernelSymbols>> {
    type Key = (PathBuf, u64, Option<std::time::SystemTime>);
    static PARSED: Mutex<Vec<(Key, Weak<KernelSymbols>)>> = Mutex::new(Vec::new());
    let meta = std::fs::metadata(path).ok()?;
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    // Held while parsing: another analyzer's read of the same file waits here for it
    // (so does one of another file, a rarer case, for no reason but simplicity).
    let mut parsed = PARSED.lock().unwrap_or_else(|e| e.into_inner());
    parsed.retain(|(_, held)| held.strong_count() > 0);
    let held = (parsed.iter())
        .filter(|(k, _)| *k == key)
        .find_map(|(_, symbols)| symbols.upgrade());
    if held.is_some() {
        return held;
    }
    let symbols = Arc::new(parse_kallsyms(&std::fs::read_to_string(path).ok()?));
    parsed.push((key, Arc::downgrade(&symbols)));
    Some(symbols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kallsyms_file_is_parsed_once_while_its_symbols_are_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(&path, "ffffffff81000000 T _stext\nffffffff81000100 t one\n").unwrap();
        let (a, b) = (
            shared_kallsyms(&path).unwrap(),
            shared_kallsyms(&path).unwrap(),
        );
        assert!(Arc::ptr_eq(&a, &b));
        // Another file (its size differs) is read again, even while the first is held.
        std::fs::write(
            &path,
            "ffffffff81000000 T _stext\nffffffff81000100 t other\n",
        )
        .unwrap();
        let c = shared_kallsyms(&path).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        let name = |k: &KernelSymbols| {
            k.kernel
                .find(0xffffffff81000104)
                .map(|(_, s)| s.name().to_string())
        };
        assert_eq!(name(&a).as_deref(), Some("one"));
        assert_eq!(name(&c).as_deref(), Some("other"));
        // Held by nobody: not kept.
        let weak = Arc::downgrade(&c);
        drop((a, b, c));
        assert!(weak.upgrade().is_none());
        assert!(shared_kallsyms(&dir.path().join("missing")).is_none());
    }

    /// A kernel of another machine: its vmlinux found by the recorded build id in a
    /// debug-file directory, a file with another build id passed over.
    #[test]
    fn a_vmlinux_is_found_by_the_recorded_kernel_build_id() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("k.c");
        std::fs::write(
            &src,
            "void _text(void) {}\nvoid fake_kernel_function(void) {}\n",
        )
        .unwrap();
        if !perfdata_test_support::tools::require_tools(&[perfdata_test_support::tools::GCC]) {
            return;
        }
        let id = "00112233445566778899aabbccddeeff00112233";
        let build = |out: &Path, id: &str| {
            std::process::Command::new("gcc")
                .args(["-nostdlib", "-static", "-o"])
                .arg(out)
                .arg(&src)
                .arg(format!("-Wl,--build-id=0x{id}"))
                .status()
        };
        let by_id = dir
            .path()
            .join(format!(".build-id/{}/{}.debug", &id[..2], &id[2..]));
        std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
        match build(&by_id, id) {
            Ok(s) if s.success() => {}
            other => panic!("gcc works, yet cannot build the fake kernel image: {other:?}"),
        }
        let sources = SymbolSources {
            debug_dirs: vec![dir.path().to_path_buf()],
            build_id_cache: None,
            debuginfod: false,
            ..SymbolSources::default()
        };
        let mut dsos = Dsos::new(sources.clone());
        dsos.note_build_id("[kernel.kallsyms]", hex_decode(id));
        let (kallsyms, why) = dsos.kernel_choice();
        assert_eq!(kallsyms, None);
        assert!(
            why.contains("vmlinux of build id") && why.contains(".build-id/00/"),
            "{why}"
        );
        let k = dsos.kernel_symbols().expect("the vmlinux's symbols");
        assert!(k.kernel.iter().any(|s| s.name() == "fake_kernel_function"));

        // Another kernel's image at that place is refused.
        let other = "ffeeddccbbaa99887766554433221100ffeeddcc";
        assert!(build(&by_id, other).unwrap().success());
        let mut dsos = Dsos::new(sources);
        dsos.note_build_id("[kernel.kallsyms]", hex_decode(id));
        let (_, why) = dsos.kernel_choice();
        assert!(
            why.starts_with("none: no kallsyms or vmlinux with build id"),
            "{why}"
        );
        assert!(dsos.kernel_symbols().is_none());
    }

    fn hex_decode(s: &str) -> Vec<u8> {
        crate::symbols::sources::hex_decode(s).unwrap()
    }
}
