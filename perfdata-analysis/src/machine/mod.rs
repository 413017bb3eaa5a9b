//! Processes, threads and their memory maps as the side-band records describe them, with
//! perf's rules: a FORK copies the parent's name and (for a new process) its maps, a COMM
//! renames (also on exec), a new MMAP cuts the maps it overlaps, a FORK of a known tid is
//! a reused pid, and a thread never seen is named `:TID`.

pub(crate) mod stitch;

use crate::stack::unwind::{Arch, MappedObject, StackEnd, UnwindStats, UnwindTables, Unwinding};
use crate::stack::{Stack, StackOptions};
use crate::symbols::dso::{DsoId, DsoKind, Dsos};
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::SampleInfo;
use perfdata::types::{CommMisc, CpuMode, Mmap2FileId, RecordBody, RecordMisc, RecordType};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A side-band record, decoded and owned (directory mode replays them per stream).
#[derive(Debug, Clone)]
pub enum SideEvent {
    /// COMM: a thread (re)named.
    Comm {
        /// Its process.
        pid: i32,
        /// The thread.
        tid: i32,
        /// The new name.
        comm: String,
        /// Renamed by an exec (PERF_RECORD_MISC_COMM_EXEC).
        exec: bool,
    },
    /// FORK: a thread created.
    Fork {
        /// The new thread's process (the parent's for a new thread of it).
        pid: i32,
        /// The parent's process.
        ppid: i32,
        /// The new thread.
        tid: i32,
        /// The thread that forked.
        ptid: i32,
    },
    /// EXIT: a thread ended ([`Machine::apply`] changes nothing: its name and maps stay).
    Exit {
        /// Its process.
        pid: i32,
        /// The thread.
        tid: i32,
    },
    /// MMAP or MMAP2: a range mapped.
    Mmap {
        /// The process; -1 for the kernel's maps.
        pid: i32,
        /// First address.
        start: u64,
        /// Length in bytes.
        len: u64,
        /// File offset mapped at `start` (the kernel's map: the address of `_text`).
        pgoff: u64,
        /// The file, or a name such as `[kernel.kallsyms]_text`, `//anon`, `[vdso]`.
        filename: String,
        /// MMAP2's build id, when it carries one.
        build_id: Option<Vec<u8>>,
        /// Executable (MMAP2's `prot`; MMAP: no data misc bit). A process's other maps
        /// are not kept.
        exec: bool,
        /// Recorded in kernel cpumode: a kernel or module map.
        kernel: bool,
    },
}

const PROT_EXEC: u32 = 4;

impl SideEvent {
    /// Records of this type carry side-band content (processes and maps).
    pub fn is_side_band(ty: RecordType) -> bool {
        matches!(
            ty,
            RecordType::COMM
                | RecordType::FORK
                | RecordType::EXIT
                | RecordType::MMAP
                | RecordType::MMAP2
        )
    }

    /// The side-band content of a decoded record, if it has any.
    pub fn from_record(misc: RecordMisc, body: &RecordBody<'_>) -> Option<SideEvent> {
        let kernel_mode = misc.cpumode() == CpuMode::KERNEL.0;
        Some(match body {
            RecordBody::Comm(c) => SideEvent::Comm {
                pid: c.pid as i32,
                tid: c.tid as i32,
                comm: c.comm.to_str_lossy().into_owned(),
                exec: CommMisc(misc.0).contains(CommMisc::COMM_EXEC),
            },
            RecordBody::Fork(f) => SideEvent::Fork {
                pid: f.pid as i32,
                ppid: f.ppid as i32,
                tid: f.tid as i32,
                ptid: f.ptid as i32,
            },
            RecordBody::Exit(e) => SideEvent::Exit {
                pid: e.pid as i32,
                tid: e.tid as i32,
            },
            RecordBody::Mmap(m) => SideEvent::Mmap {
                pid: m.pid as i32,
                start: m.addr,
                len: m.len,
                pgoff: m.pgoff,
                filename: m.filename.to_str_lossy().into_owned(),
                build_id: None,
                exec: !misc.contains(RecordMisc::MMAP_DATA),
                kernel: kernel_mode,
            },
            RecordBody::Mmap2(m) => SideEvent::Mmap {
                pid: m.pid as i32,
                start: m.addr,
                len: m.len,
                pgoff: m.pgoff,
                filename: m.filename.to_str_lossy().into_owned(),
                build_id: match &m.file_id {
                    Mmap2FileId::BuildId(b) => {
                        let n = usize::from(b.build_id_size).min(b.build_id.len());
                        Some(b.build_id[..n].to_vec())
                    }
                    Mmap2FileId::Inode(_) => None,
                },
                exec: m.prot & PROT_EXEC != 0,
                kernel: kernel_mode,
            },
            _ => return None,
        })
    }
}

/// A mapped range of a process (or of the kernel).
#[derive(Debug, Clone, Copy)]
pub struct Map {
    /// First address.
    pub start: u64,
    /// Exclusive.
    pub end: u64,
    /// File offset mapped at `start`.
    pub pgoff: u64,
    /// The object mapped.
    pub dso: DsoId,
}

impl Map {
    /// perf's `map__map_ip`: the file-relative address (kernel and perf-map JIT maps:
    /// the address).
    pub fn map_ip(&self, dsos: &Dsos, ip: u64) -> u64 {
        match dsos.get(self.dso).kind {
            DsoKind::User | DsoKind::Jit { .. } => ip - self.start + self.pgoff,
            _ => ip,
        }
    }
}

type Maps = BTreeMap<u64, Map>;

/// A thread name, interned ([`Machine::comm_name`]): rows keyed by it compare names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommId(pub u32);

/// One thread.
#[derive(Debug, Clone)]
pub struct Thread {
    /// Its process.
    pub pid: i32,
    /// Its thread id.
    pub tid: i32,
    /// `None` until a COMM or FORK names it (perf then shows `:TID`).
    pub comm: Option<CommId>,
    /// `:TID`, interned when the thread was first seen unnamed.
    unnamed: Option<CommId>,
}

impl Thread {
    fn new(pid: i32, tid: i32, comm: Option<CommId>) -> Self {
        Thread {
            pid,
            tid,
            comm,
            unnamed: None,
        }
    }
}

/// How many threads [`Machine::note_thread`] remembers as named.
const NOTED_SLOTS: usize = 16;

/// The state of every process and thread at the current point of a recording.
#[derive(Debug)]
pub struct Machine {
    /// Every object mapped so far, with its symbols.
    pub dsos: Dsos,
    threads: FxHashMap<i32, Thread>,
    maps: FxHashMap<i32, Maps>,
    kernel_maps: Maps,
    comms: Vec<Box<str>>,
    comm_ids: FxHashMap<Box<str>, CommId>,
    /// Bumped whenever a process's maps change; `map_generation` says when each last did
    /// (an unwinder built from older maps is rebuilt).
    generation: u64,
    map_generation: FxHashMap<i32, u64>,
    /// Bumped by every change of threads, names or maps: a sample seen again under
    /// the same count resolves as it did (what `report` folds repeated stacks by).
    changes: u64,
    /// Threads [`Machine::note_thread`] found named, and `changes` then, one slot per
    /// few tids: samples mostly come from a few threads, often interleaved.
    noted: [(i32, u64); NOTED_SLOTS],
    stack_options: StackOptions,
    unwinding: RefCell<Unwinding>,
    /// The unwinding tables of JIT code from jitdumps, by the DSO its loads map.
    jit_tables: FxHashMap<DsoId, std::sync::Arc<UnwindTables>>,
    /// A stack reused by [`Machine::frames`].
    scratch: RefCell<Stack>,
}

impl Machine {
    /// A machine with only perf's idle thread (`swapper`, tid 0), default
    /// [`StackOptions`] and this host's architecture until [`Machine::set_stacks`].
    pub fn new(dsos: Dsos) -> Self {
        let mut m = Machine {
            dsos,
            threads: FxHashMap::default(),
            maps: FxHashMap::default(),
            kernel_maps: Maps::new(),
            comms: vec![],
            comm_ids: FxHashMap::default(),
            generation: 0,
            map_generation: FxHashMap::default(),
            changes: 0,
            noted: [(0, u64::MAX); NOTED_SLOTS],
            stack_options: StackOptions::default(),
            unwinding: RefCell::new(Unwinding::new(Arch::host())),
            jit_tables: FxHashMap::default(),
            scratch: RefCell::new(Stack::default()),
        };
        m.reset();
        m
    }

    /// How stacks are put together, for a recording made on `arch` (what its registers
    /// mean; `None`: unknown, no user stack is unwound).
    pub fn set_stacks(&mut self, options: StackOptions, arch: Option<Arch>) {
        self.stack_options = options;
        self.unwinding = RefCell::new(Unwinding::new(arch));
    }

    pub(crate) fn stack_options(&self) -> StackOptions {
        self.stack_options
    }

    /// What unwinding has done so far.
    pub fn unwind_stats(&self) -> UnwindStats {
        self.unwinding.borrow().stats
    }

    pub(crate) fn scratch_stack(&self) -> Stack {
        self.scratch.take()
    }

    pub(crate) fn return_scratch_stack(&self, stack: Stack) {
        *self.scratch.borrow_mut() = stack;
    }

    fn maps_changed(&mut self, pid: i32) {
        self.generation += 1;
        self.map_generation.insert(pid, self.generation);
    }

    /// The objects mapped executable in process `pid` that have unwind tables (or none:
    /// frame pointers only), placed at their runtime addresses.
    fn mapped_objects(&self, pid: i32) -> Vec<MappedObject> {
        let Some(maps) = self.maps.get(&pid) else {
            return vec![];
        };
        maps.values()
            .filter_map(|m| {
                let (tables, vaddr_of_pgoff) = match self.dsos.get(m.dso).kind {
                    DsoKind::User => self.dsos.unwind_tables(m.dso, m.pgoff)?,
                    // JIT code's tables count from the code's start (pgoff 0 where
                    // mapped whole).
                    DsoKind::Jit { .. } => (self.jit_tables.get(&m.dso)?.clone(), m.pgoff),
                    _ => return None,
                };
                Some(MappedObject {
                    avma: m.start..m.end,
                    base_avma: m.start.wrapping_sub(vaddr_of_pgoff),
                    name: self.dsos.get(m.dso).name.clone(),
                    tables,
                })
            })
            .collect()
    }

    /// Unwinds the user stack of `s` from its registers and stack copy (at most `max`
    /// addresses into `out`); `None` when it carries none, as perf decides: no registers,
    /// nothing copied, or a process without maps. An exec's first moments are the last
    /// two: the kernel samples the old image's registers, whose stack is gone from the new
    /// mm, before the new image's first MMAP.
    pub(crate) fn unwind_user(
        &self,
        s: &SampleInfo<'_>,
        max: usize,
        out: &mut Vec<u64>,
    ) -> Result<Option<StackEnd>, Error> {
        // perf gives a process its unwinder with its first map.
        if self.maps.get(&s.pid).is_none_or(|m| m.is_empty()) {
            return Ok(None);
        }
        let Some(regs) = s.view.regs_user()? else {
            return Ok(None);
        };
        let Some(values) = regs.regs.as_ref() else {
            return Ok(None);
        };
        let Some(stack) = s.view.stack_user()? else {
            return Ok(None);
        };
        let copied = stack
            .dyn_size
            .map_or(0, |d| usize::try_from(d).unwrap_or(usize::MAX))
            .min(stack.data.len());
        // perf's "nothing was captured": not even the sampled pc is given then.
        if copied == 0 {
            return Ok(None);
        }
        let generation = self.map_generation.get(&s.pid).copied().unwrap_or(0);
        Ok(self.unwinding.borrow_mut().unwind(
            s.pid,
            generation,
            &mut || self.mapped_objects(s.pid),
            regs.abi,
            s.regs_user_mask,
            values,
            &stack.data[..copied],
            s.endian,
            max,
            out,
        ))
    }

    /// Forgets threads and maps (not the DSO cache): directory mode replays the side band
    /// once per stream.
    pub fn reset(&mut self) {
        self.threads.clear();
        // perf's idle thread.
        let swapper = self.intern("swapper");
        self.threads.insert(0, Thread::new(0, 0, Some(swapper)));
        self.maps.clear();
        self.kernel_maps.clear();
        self.map_generation.clear();
        self.unwinding.get_mut().reset();
        self.changes += 1;
    }

    /// A thread known at this point of the recording.
    pub fn thread(&self, tid: i32) -> Option<&Thread> {
        self.threads.get(&tid)
    }

    fn intern(&mut self, name: &str) -> CommId {
        if let Some(&id) = self.comm_ids.get(name) {
            return id;
        }
        let id = CommId(self.comms.len() as u32);
        self.comms.push(name.into());
        self.comm_ids.insert(name.into(), id);
        id
    }

    /// The text of an interned name.
    pub fn comm_name(&self, id: CommId) -> &str {
        &self.comms[id.0 as usize]
    }

    /// A thread's name as perf shows it, interned; `None` for a thread never seen (every
    /// sample's thread is seen: see [`Machine::note_thread`]).
    pub fn comm_id(&self, tid: i32) -> Option<CommId> {
        let t = self.threads.get(&tid)?;
        t.comm.or(t.unnamed)
    }

    /// A thread's name as perf shows it.
    pub fn comm(&self, tid: i32) -> std::borrow::Cow<'_, str> {
        match self.comm_id(tid) {
            Some(c) => self.comm_name(c).into(),
            None => format!(":{tid}").into(),
        }
    }

    /// How many changes of threads, names and maps the machine has seen: samples of
    /// the same process, addresses and thread under one count resolve alike.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The thread of a sample, created (named `:TID`, sharing its process's maps) when
    /// no record introduced it.
    #[inline]
    pub fn note_thread(&mut self, pid: i32, tid: i32) {
        // `changes` never reaches u64::MAX: an empty slot matches no thread.
        if self.noted[tid as usize % NOTED_SLOTS] == (tid, self.changes) {
            return;
        }
        self.note_thread_slow(pid, tid);
    }

    #[cold]
    #[inline(never)]
    fn note_thread_slow(&mut self, pid: i32, tid: i32) {
        if let Some(t) = self.threads.get(&tid) {
            if t.comm.is_some() || t.unnamed.is_some() {
                self.noted[tid as usize % NOTED_SLOTS] = (tid, self.changes);
                return;
            }
        }
        self.changes += 1;
        let unnamed = self.intern(&format!(":{tid}"));
        let t = self
            .threads
            .entry(tid)
            .or_insert_with(|| Thread::new(pid, tid, None));
        t.unnamed = Some(unnamed);
    }

    /// Updates processes, threads and maps with one side-band record (perf's rules: see
    /// the module's documentation).
    pub fn apply(&mut self, ev: &SideEvent) {
        self.changes += 1;
        match ev {
            SideEvent::Comm { pid, tid, comm, .. } => {
                let id = self.intern(comm);
                let t = self
                    .threads
                    .entry(*tid)
                    .or_insert_with(|| Thread::new(*pid, *tid, None));
                t.pid = *pid;
                t.comm = Some(id);
            }
            SideEvent::Fork {
                pid,
                ppid,
                tid,
                ptid,
            } => {
                let parent_comm = self.threads.get(ptid).and_then(|t| t.comm);
                // A known tid forking again is a reused pid: the old thread is gone.
                self.threads
                    .insert(*tid, Thread::new(*pid, *tid, parent_comm));
                if pid != ppid {
                    let maps = self.maps.get(ppid).cloned().unwrap_or_default();
                    self.maps.insert(*pid, maps);
                    self.maps_changed(*pid);
                }
            }
            SideEvent::Exit { .. } => {}
            SideEvent::Mmap {
                pid,
                start,
                len,
                pgoff,
                filename,
                build_id,
                exec,
                kernel,
            } => self.mmap(
                *pid, *start, *len, *pgoff, filename, build_id, *exec, *kernel,
            ),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mmap(
        &mut self,
        pid: i32,
        start: u64,
        len: u64,
        pgoff: u64,
        filename: &str,
        build_id: &Option<Vec<u8>>,
        exec: bool,
        kernel: bool,
    ) {
        if let Some(id) = build_id {
            self.dsos.note_build_id(filename, id.clone());
        }
        let end = start.saturating_add(len);
        if pid == -1 || kernel {
            let (name, kind) = if filename.starts_with("[kernel.kallsyms]") {
                self.dsos.note_kernel_ref(pgoff);
                ("[kernel.kallsyms]".to_string(), DsoKind::Kernel)
            } else {
                let m = module_name(filename);
                (format!("[{m}]"), DsoKind::Module(m))
            };
            let dso = self.dsos.intern(&name, kind);
            insert_map(
                &mut self.kernel_maps,
                Map {
                    start,
                    end,
                    pgoff,
                    dso,
                },
            );
            return;
        }
        let anon = filename == "//anon"
            || filename.starts_with("/dev/zero")
            || filename.starts_with("/anon_hugepage");
        let no_dso =
            filename.starts_with("[stack") || filename.starts_with("/SYSV") || filename == "[heap]";
        if !exec {
            // perf keeps data maps apart (they never hold an ip).
            return;
        }
        let dso = if anon || no_dso {
            let path = self
                .dsos
                .sources
                .perf_map_dir
                .join(format!("perf-{pid}.map"));
            self.dsos.intern(&path.to_string_lossy(), DsoKind::PerfMap)
        } else {
            self.dsos.intern(filename, DsoKind::User)
        };
        insert_map(
            self.maps.entry(pid).or_default(),
            Map {
                start,
                end,
                pgoff,
                dso,
            },
        );
        self.maps_changed(pid);
    }

    /// A function's JIT code from a jitdump mapped in its process (over what was there:
    /// the anonymous map it was written into), as `perf inject --jit`'s MMAP2 does.
    pub fn map_jit(&mut self, code: &crate::symbols::jit::JitCode) {
        self.changes += 1;
        let dso = self.dsos.intern(
            &code.dso,
            DsoKind::Jit {
                symbol: code.name.clone(),
                size: code.size,
                jitdump: code.jitdump.clone(),
            },
        );
        match &code.unwinding {
            Some(u) => {
                self.jit_tables.insert(dso, u.placed.clone());
            }
            None => {
                self.jit_tables.remove(&dso);
            }
        }
        insert_map(
            self.maps.entry(code.pid).or_default(),
            Map {
                start: code.start,
                end: code.start.saturating_add(code.size),
                pgoff: 0,
                dso,
            },
        );
        self.maps_changed(code.pid);
    }

    /// The map and symbol of an address in a thread (`kernel`: the sample's or the
    /// callchain context's cpumode).
    pub fn resolve(&self, pid: i32, kernel: bool, ip: u64) -> Frame {
        let Some(map) = self.find_map(pid, kernel, ip) else {
            return Frame {
                ip,
                kernel,
                dso: None,
                symbol: None,
                truncated: false,
            };
        };
        let map_ip = map.map_ip(&self.dsos, ip);
        let addr = self.dsos.lookup_address(map.dso, map_ip);
        Frame {
            ip,
            kernel,
            dso: Some((map.dso, map_ip)),
            symbol: self.dsos.find_symbol(map.dso, addr),
            truncated: false,
        }
    }

    /// The DSO mapped at an address (no symbol lookup).
    pub fn map_of(&self, pid: i32, kernel: bool, ip: u64) -> Option<DsoId> {
        self.find_map(pid, kernel, ip).map(|m| m.dso)
    }

    /// The map covering an address in a thread (its range and file offset: what a
    /// pprof mapping records).
    pub fn map_at(&self, pid: i32, kernel: bool, ip: u64) -> Option<Map> {
        self.find_map(pid, kernel, ip)
    }

    fn find_map(&self, pid: i32, kernel: bool, ip: u64) -> Option<Map> {
        let maps = if kernel {
            &self.kernel_maps
        } else {
            self.maps.get(&pid)?
        };
        let (_, map) = maps.range(..=ip).next_back()?;
        if ip < map.end {
            return Some(*map);
        }
        // The recorded kernel MMAP ends at `_etext`, but the kernel's boot code (the idle
        // task's `x86_64_start_kernel → start_kernel`) is in `.init.text`, past it. perf
        // names it from /proc/kcore, whose text segment spans the image to `_end`; here
        // the kernel map reaches as far as the kernel's own symbols do (no module map
        // lies between: `map` is the last one before `ip`).
        let beyond_text = kernel
            && matches!(self.dsos.get(map.dso).kind, DsoKind::Kernel)
            && self
                .dsos
                .find_symbol(
                    map.dso,
                    self.dsos
                        .lookup_address(map.dso, map.map_ip(&self.dsos, ip)),
                )
                .is_some();
        beyond_text.then_some(*map)
    }
}

/// Inserts a map, cutting the ones it overlaps (perf's `maps__fixup_overlappings`).
fn insert_map(maps: &mut Maps, new: Map) {
    let overlapping: Vec<u64> = maps
        .range(..new.end)
        .rev()
        // Maps do not overlap, so ends grow with starts: stop at the first that ends
        // before the new one begins.
        .take_while(|(_, m)| m.end > new.start)
        .map(|(&k, _)| k)
        .collect();
    for k in overlapping {
        let old = maps.remove(&k).expect("key just listed");
        if old.start < new.start {
            maps.insert(
                old.start,
                Map {
                    end: new.start,
                    ..old
                },
            );
        }
        if old.end > new.end {
            maps.insert(
                new.end,
                Map {
                    start: new.end,
                    pgoff: old.pgoff + (new.end - old.start),
                    ..old
                },
            );
        }
    }
    maps.insert(new.start, new);
}

/// `[ext4]` for `/lib/modules/…/ext4.ko(.xz)`, as perf names module DSOs.
fn module_name(filename: &str) -> String {
    if let Some(inner) = filename.strip_prefix('[') {
        return inner.trim_end_matches(']').to_string();
    }
    let base = filename.rsplit('/').next().unwrap_or(filename);
    let stem = base.split(".ko").next().unwrap_or(base);
    stem.replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::dso::SymbolSources;

    #[test]
    fn the_kernel_map_reaches_the_kernels_boot_code_past_etext() {
        let dir = tempfile::tempdir().unwrap();
        let kallsyms = dir.path().join("kallsyms");
        std::fs::write(
            &kallsyms,
            "ffffffff81000000 T _text\nffffffff81000100 T do_idle\n\
             ffffffff81001000 T _etext\nffffffff83000000 T _sinittext\n\
             ffffffff83000100 T x86_64_start_kernel\nffffffff83000200 T _einittext\n\
             ffffffffc0000000 t mod_fn\t[mymod]\n",
        )
        .unwrap();
        let mut dsos = Dsos::new(SymbolSources::default());
        dsos.set_kernel_choice(Some(kallsyms), "test".into());
        let mut m = Machine::new(dsos);
        // perf record's kernel MMAP: `_text` to `_etext`.
        m.apply(&SideEvent::Mmap {
            pid: -1,
            start: 0xffff_ffff_8100_0000,
            len: 0x1000,
            pgoff: 0xffff_ffff_8100_0000,
            filename: "[kernel.kallsyms]_text".into(),
            build_id: None,
            exec: true,
            kernel: true,
        });
        let name = |ip: u64| {
            m.resolve(-1, true, ip)
                .symbol
                .map(|s| m.dsos.symbol_name(s).to_string())
        };
        assert_eq!(name(0xffff_ffff_8100_0110).as_deref(), Some("do_idle"));
        assert_eq!(
            name(0xffff_ffff_8300_0120).as_deref(),
            Some("x86_64_start_kernel")
        );
        // Past the kernel's last symbol, and a module's address with no module map.
        assert_eq!(name(0xffff_ffff_9000_0000), None);
        assert_eq!(name(0xffff_ffff_c000_0010), None);
        assert!(m.resolve(-1, true, 0xffff_ffff_c000_0010).dso.is_none());
    }

    #[test]
    fn mmap_cuts_what_it_overlaps() {
        let mut m = Maps::new();
        let d = DsoId(0);
        insert_map(
            &mut m,
            Map {
                start: 0x1000,
                end: 0x5000,
                pgoff: 0,
                dso: d,
            },
        );
        insert_map(
            &mut m,
            Map {
                start: 0x2000,
                end: 0x3000,
                pgoff: 0,
                dso: DsoId(1),
            },
        );
        let got: Vec<_> = m
            .values()
            .map(|m| (m.start, m.end, m.pgoff, m.dso.0))
            .collect();
        assert_eq!(
            got,
            [
                (0x1000, 0x2000, 0, 0),
                (0x2000, 0x3000, 0, 1),
                (0x3000, 0x5000, 0x2000, 0)
            ]
        );
    }

    #[test]
    fn fork_copies_name_and_maps_and_unknown_threads_are_tid() {
        let mut m = Machine::new(Dsos::new(SymbolSources::default()));
        m.apply(&SideEvent::Comm {
            pid: 10,
            tid: 10,
            comm: "parent".into(),
            exec: false,
        });
        m.apply(&SideEvent::Mmap {
            pid: 10,
            start: 0x1000,
            len: 0x1000,
            pgoff: 0,
            filename: "/bin/x".into(),
            build_id: None,
            exec: true,
            kernel: false,
        });
        m.apply(&SideEvent::Fork {
            pid: 11,
            ppid: 10,
            tid: 11,
            ptid: 10,
        });
        assert_eq!(m.comm(11), "parent");
        assert!(m.resolve(11, false, 0x1800).dso.is_some());
        assert_eq!(m.comm(99), ":99");
        m.apply(&SideEvent::Comm {
            pid: 11,
            tid: 11,
            comm: "child".into(),
            exec: true,
        });
        assert_eq!(m.comm(11), "child");
    }
}
