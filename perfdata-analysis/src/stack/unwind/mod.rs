//! User stacks of `--call-graph dwarf` samples: each sample's user registers
//! (PERF_SAMPLE_REGS_USER) and copy of its user stack (PERF_SAMPLE_STACK_USER), unwound
//! with the CFI of the objects mapped in its process — `.eh_frame` (with
//! `.eh_frame_hdr`), else `.debug_frame` from the object or its debug file, found where
//! its symbols are found — and frame pointers where no CFI covers an address. x86_64 and
//! aarch64 go through framehop (samply's unwinder); 32-bit x86 through a gimli CFI walk.
//!
//! The addresses given are perf's: the sample's pc, then each caller's return address
//! minus one (the call instruction, so that a symbol or an inline frame is the caller's),
//! as `perf script` prints them. A walk that cannot reach the outermost frame because the
//! stack copy ends or the frame limit is hit says so ([`StackEnd`]); the analyses show a
//! `[truncated]` frame there rather than guessing. One that meets code no rule covers
//! stops there, as perf's does.

mod cfi_walk;
mod regs;
mod sections;

pub use regs::Arch;
pub(crate) use sections::UnwindTables;

use framehop::aarch64::{CacheAarch64, PtrAuthMask, UnwindRegsAarch64, UnwinderAarch64};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{FrameAddress, Module, Unwinder};
use perfdata::rt::{get_u32, get_u64, Array, Endianness};
use perfdata::types::SampleRegsAbi;
use regs::start_regs;
use rustc_hash::FxHashMap;
use sections::SectionBytes;
use std::sync::Arc;

/// Where user-space stacks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallGraph {
    /// The recorded callchain only (frame pointers, or whatever perf recorded).
    Fp,
    /// Unwind every sample that carries user registers and a stack copy (its
    /// callchain's user part, if any, is not used); other samples keep their callchain.
    Dwarf,
    /// Unwind the samples that carry registers and a stack copy and whose callchain has
    /// no user part (what `perf record --call-graph dwarf` records); else the callchain.
    #[default]
    Auto,
}

impl std::str::FromStr for CallGraph {
    type Err = crate::BadOption;
    fn from_str(s: &str) -> Result<Self, crate::BadOption> {
        match s {
            "fp" => Ok(CallGraph::Fp),
            "dwarf" => Ok(CallGraph::Dwarf),
            "auto" => Ok(CallGraph::Auto),
            _ => Err(crate::BadOption::new(
                "call_graph",
                format!("unknown call graph mode {s:?} (fp, dwarf or auto)"),
            )),
        }
    }
}

/// How an unwinding walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StackEnd {
    /// At the outermost frame (the CFI says so, or the frame pointer chain ends).
    Complete,
    /// The stack copy ended before the outermost frame (deeper stacks than the recorded
    /// `--call-graph dwarf,SIZE`).
    Truncated,
    /// No rule recovered a caller (code without CFI or frame pointers: JIT code, hand
    /// written entry code): the walk stops there, as perf's does. Not marked: the frame may
    /// well be the outermost one.
    Lost,
    /// The frame limit was reached.
    Limit,
}

impl StackEnd {
    /// The stack is known to stop short of its outermost frame (the copy ended, or the
    /// frame limit): the analyses end it with a `[truncated]` frame.
    pub fn is_cut(self) -> bool {
        matches!(self, StackEnd::Truncated | StackEnd::Limit)
    }
}

/// What unwinding has done so far (for `info` and the bench).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnwindStats {
    /// Samples whose user stack was unwound.
    pub samples: u64,
    /// Frames recovered (the pcs included).
    pub frames: u64,
    /// Walks that ended where the stack copy did ([`StackEnd::Truncated`]).
    pub truncated: u64,
    /// Walks where no rule recovered a caller ([`StackEnd::Lost`]).
    pub lost: u64,
    /// Walks stopped by the frame limit ([`StackEnd::Limit`], perf's `--max-stack`).
    pub limited: u64,
}

/// One process's unwinder, built from its maps as they were at `generation`.
struct ProcessUnwinder {
    kind: UnwinderKind,
    /// Where the signal trampolines of its objects are mapped.
    trampolines: Vec<std::ops::Range<u64>>,
    /// Whether the CFI at an address says it is an outermost frame, by address: asked
    /// at the end of nearly every walk, of the same few addresses (`_start`, `clone3`),
    /// and fixed while the objects are.
    outermost: FxHashMap<u64, bool>,
}

enum UnwinderKind {
    /// framehop, and the objects again for the full-register walk where it loses the
    /// stack.
    X86_64(UnwinderX86_64<SectionBytes>, Vec<cfi_walk::MappedCfi>),
    Aarch64(UnwinderAarch64<SectionBytes>),
    I686(Vec<cfi_walk::MappedCfi>),
}

/// A mapped object as the unwinders need it.
pub(crate) struct MappedObject {
    pub avma: std::ops::Range<u64>,
    /// Where the object's address 0 landed.
    pub base_avma: u64,
    pub name: String,
    pub tables: Arc<UnwindTables>,
}

/// The unwinding state of a recording: one unwinder per process (rebuilt when its maps
/// change), the rule caches, and what was done.
pub(crate) struct Unwinding {
    arch: Option<Arch>,
    processes: FxHashMap<i32, (u64, ProcessUnwinder)>,
    cache_x86_64: CacheX86_64,
    cache_aarch64: CacheAarch64,
    pub stats: UnwindStats,
}

impl std::fmt::Debug for Unwinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unwinding")
            .field("arch", &self.arch)
            .field("processes", &self.processes.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Unwinding {
    /// For a recording made on `arch` (`None`: unknown, nothing is unwound).
    pub fn new(arch: Option<Arch>) -> Self {
        Unwinding {
            arch,
            processes: FxHashMap::default(),
            cache_x86_64: CacheX86_64::new(),
            cache_aarch64: CacheAarch64::new(),
            stats: UnwindStats::default(),
        }
    }

    /// Forgets every process (the maps they were built from are gone).
    pub fn reset(&mut self) {
        self.processes.clear();
    }

    /// Unwinds the user stack of a sample of process `pid` from its register dump (`abi`,
    /// `values` taken with `mask`) and its stack copy (`stack`, the bytes actually
    /// copied), pushing at most `max` addresses onto `out`. `objects` gives the process's
    /// mapped objects when its unwinder must be (re)built; `generation` says whether it
    /// must. `None` when there is nothing to start from (no user registers).
    #[allow(clippy::too_many_arguments)]
    pub fn unwind(
        &mut self,
        pid: i32,
        generation: u64,
        objects: &mut dyn FnMut() -> Vec<MappedObject>,
        abi: SampleRegsAbi,
        mask: u64,
        values: &Array<'_, u64>,
        stack: &[u8],
        endian: Endianness,
        max: usize,
        out: &mut Vec<u64>,
    ) -> Option<StackEnd> {
        let arch = self.arch?;
        prefetch(stack);
        let start = start_regs(arch, abi, mask, values)?;
        let kind = if start.abi32 { Arch::X86 } else { arch };
        let fresh = matches!(self.processes.get(&pid), Some((g, _)) if *g == generation);
        if !fresh {
            let unwinder = build(kind, objects());
            self.processes.insert(pid, (generation, unwinder));
        }
        let (_, unwinder) = self.processes.get_mut(&pid).expect("just built");
        let before = out.len();
        // The stack copy starts at the sampled sp.
        let sp = start.sp;
        let read64 = |addr: u64| -> Result<u64, ()> {
            let off = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
            if off.checked_add(8).ok_or(())? > stack.len() {
                return Err(());
            }
            Ok(get_u64(stack, off, endian))
        };
        let trampolines = &unwinder.trampolines;
        // Every register of the dump, by DWARF number, for the full-register walk.
        let dwarf_regs = |map: &[u32], narrow: bool| {
            let mut v = [None; cfi_walk::TRACKED];
            for (slot, &perf) in v.iter_mut().zip(map) {
                *slot =
                    regs::reg(mask, values, perf).map(|x| if narrow { x & 0xffff_ffff } else { x });
            }
            cfi_walk::Regs::new(v)
        };
        let end = match &unwinder.kind {
            UnwinderKind::X86_64(u, modules) => {
                let regs = UnwindRegsX86_64::new(start.pc, start.sp, start.fp);
                let cache = &mut self.cache_x86_64;
                let end = walk(u, trampolines, start.pc, regs, cache, read64, max, out);
                // framehop ends a walk it cannot follow (a CFA from another register
                // than rsp or rbp) as lost, or by frame pointers as if complete: unless
                // it ended at an outermost frame, walk again tracking every register,
                // and keep the walk that went further.
                let short = match end {
                    StackEnd::Lost => true,
                    StackEnd::Complete => out.last().is_some_and(|&last| {
                        let known = &mut unwinder.outermost;
                        // Bounded: walks that end everywhere (damaged stacks) start over.
                        if known.len() >= 4096 && !known.contains_key(&last) {
                            known.clear();
                        }
                        !*known.entry(last).or_insert_with(|| {
                            cfi_walk::is_outermost(cfi_walk::X86_64, modules, last)
                        })
                    }),
                    _ => false,
                };
                if short {
                    let mut again = Vec::with_capacity(out.len() - before + 8);
                    let read = |addr: u64| read64(addr).ok();
                    let start_regs = dwarf_regs(&cfi_walk::PERF_OF_DWARF_X86_64, false);
                    let e = cfi_walk::unwind(
                        cfi_walk::X86_64,
                        modules,
                        start_regs,
                        read,
                        max,
                        &mut again,
                    );
                    if again.len() > out.len() - before {
                        out.truncate(before);
                        out.extend(again);
                        e
                    } else {
                        end
                    }
                } else {
                    end
                }
            }
            UnwinderKind::Aarch64(u) => {
                let mask = PtrAuthMask::from_max_known_address(u.max_known_code_address());
                let regs =
                    UnwindRegsAarch64::new_with_ptr_auth_mask(mask, start.lr, start.sp, start.fp);
                // The pc too may carry pointer-authentication bits.
                let pc = mask.strip_ptr_auth(start.pc);
                let cache = &mut self.cache_aarch64;
                walk(u, trampolines, pc, regs, cache, read64, max, out)
            }
            UnwinderKind::I686(modules) => {
                let read32 = |addr: u64| -> Option<u64> {
                    let off = usize::try_from(addr.checked_sub(sp)?).ok()?;
                    (off.checked_add(4)? <= stack.len())
                        .then(|| u64::from(get_u32(stack, off, endian)))
                };
                let start_regs = dwarf_regs(&cfi_walk::PERF_OF_DWARF_I386, true);
                cfi_walk::unwind(cfi_walk::I386, modules, start_regs, read32, max, out)
            }
        };
        let s = &mut self.stats;
        s.samples += 1;
        s.frames += (out.len() - before) as u64;
        match end {
            StackEnd::Complete => {}
            StackEnd::Truncated => s.truncated += 1,
            StackEnd::Lost => s.lost += 1,
            StackEnd::Limit => s.limited += 1,
        }
        Some(end)
    }
}

/// Asks the processor for the start of a stack copy all at once. A walk reads it a frame
/// at a time, each read waiting for the one before (the caller's frame is found from the
/// return address read), and a copy fresh from the file is in no cache: the reads then
/// wait on memory one after another (most of the time of a walk, measured).
#[inline]
fn prefetch(stack: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        // Most walks end within it (a deeper one goes on at memory's pace); a cache
        // line at a time.
        const PREFETCHED: usize = 4096;
        for at in (0..stack.len().min(PREFETCHED)).step_by(64) {
            // SAFETY: `at` is inside `stack`; a prefetch is a hint that never faults.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    stack.as_ptr().add(at).cast(),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = stack;
}

/// One object's CFI and where it is mapped, for unwinding outside a recording (other
/// producers' samples, tests, fuzzing).
#[derive(Debug, Clone, Default)]
pub struct ObjectCfi {
    /// The addresses the object is mapped at.
    pub avma: std::ops::Range<u64>,
    /// Where its address 0 landed.
    pub base_avma: u64,
    /// `.eh_frame` and the address the object gives it (for pc-relative encodings).
    pub eh_frame: Option<(Vec<u8>, u64)>,
    /// `.eh_frame_hdr` and its address.
    pub eh_frame_hdr: Option<(Vec<u8>, u64)>,
    /// `.debug_frame` (used when there is no `.eh_frame`).
    pub debug_frame: Option<Vec<u8>>,
    /// `.text`'s address range (for text-relative encodings).
    pub text: Option<std::ops::Range<u64>>,
    /// A 32-bit object.
    pub is_32: bool,
}

/// Unwinds one user stack — a register dump (`abi`, `values` selected by `mask`, perf's
/// numbering for `arch`) and the stack bytes copied from its sp — through `objects`,
/// pushing at most `max` addresses (the pc, then callers at their call instruction);
/// `None` when the dump has nothing to start from.
#[allow(clippy::too_many_arguments)]
pub fn unwind_stack(
    arch: Arch,
    objects: &[ObjectCfi],
    abi: SampleRegsAbi,
    mask: u64,
    values: &[u64],
    stack: &[u8],
    max: usize,
    out: &mut Vec<u64>,
) -> Option<StackEnd> {
    let section = |bytes: &[u8], at: u64| sections::Section {
        svma: at..at + bytes.len() as u64,
        bytes: SectionBytes::Owned(bytes.into()),
    };
    let mapped: Vec<MappedObject> = objects
        .iter()
        .map(|o| MappedObject {
            avma: o.avma.clone(),
            base_avma: o.base_avma,
            name: String::new(),
            tables: Arc::new({
                let mut t = UnwindTables {
                    // As from an object: a CIE gimli refuses rewritten (V8's tables).
                    eh_frame: o.eh_frame.as_ref().map(
                        |(b, at)| match sections::without_omitted_lsda(b) {
                            Some(fixed) => section(&fixed, *at),
                            None => section(b, *at),
                        },
                    ),
                    eh_frame_hdr: o.eh_frame_hdr.as_ref().map(|(b, at)| section(b, *at)),
                    debug_frame: o.debug_frame.as_ref().map(|b| section(b, 0)),
                    text: o.text.clone(),
                    got: None,
                    is_32: o.is_32,
                    signal_trampolines: vec![],
                };
                t.signal_trampolines = t.find_signal_trampolines();
                t
            }),
        })
        .collect();
    let mut objects = Some(mapped);
    Unwinding::new(Some(arch)).unwind(
        0,
        0,
        &mut || objects.take().unwrap_or_default(),
        abi,
        mask,
        &Array::from(values.to_vec()),
        stack,
        Endianness::Little,
        max,
        out,
    )
}

/// An unwinder for one process's objects.
fn build(kind: Arch, objects: Vec<MappedObject>) -> ProcessUnwinder {
    let module = |o: &MappedObject| {
        Module::new(
            o.name.clone(),
            o.avma.clone(),
            o.base_avma,
            o.tables.section_info(),
        )
    };
    let trampolines = objects
        .iter()
        .flat_map(|o| {
            o.tables
                .signal_trampolines
                .iter()
                .map(|r| r.start.wrapping_add(o.base_avma)..r.end.wrapping_add(o.base_avma))
        })
        .collect();
    let cfi = |o: &MappedObject| cfi_walk::MappedCfi {
        avma: o.avma.clone(),
        base_avma: o.base_avma,
        tables: o.tables.clone(),
    };
    let kind = match kind {
        Arch::X86_64 => {
            let mut u = UnwinderX86_64::new();
            let ours = objects.iter().filter(|o| !o.tables.is_32);
            for o in ours.clone() {
                u.add_module(module(o));
            }
            UnwinderKind::X86_64(u, ours.map(cfi).collect())
        }
        Arch::Aarch64 => {
            let mut u = UnwinderAarch64::new();
            for o in objects.iter().filter(|o| !o.tables.is_32) {
                u.add_module(module(o));
            }
            UnwinderKind::Aarch64(u)
        }
        Arch::X86 => {
            UnwinderKind::I686(objects.iter().filter(|o| o.tables.is_32).map(cfi).collect())
        }
    };
    ProcessUnwinder {
        kind,
        trampolines,
        outermost: FxHashMap::default(),
    }
}

/// The registers of a frame interrupted by a signal, read back from the signal frame
/// the kernel pushed (its layout is the kernel's ABI, as libunwind and libdw know it).
trait SignalFrame {
    /// With the sp at a signal trampoline, restores the interrupted frame's registers
    /// from the signal frame there; its pc.
    fn restore_interrupted(
        &mut self,
        read: &mut dyn FnMut(u64) -> Result<u64, ()>,
    ) -> Result<u64, ()>;
}

impl SignalFrame for UnwindRegsX86_64 {
    fn restore_interrupted(
        &mut self,
        read: &mut dyn FnMut(u64) -> Result<u64, ()>,
    ) -> Result<u64, ()> {
        // The handler returned over `pretcode`: sp is at the ucontext, whose
        // uc_mcontext (at 40) holds r8–r15, rdi, rsi, rbp (80), rbx, rdx, rax, rcx,
        // rsp (120), rip (128) — what glibc's CFI for `__restore_rt` says too.
        let mcontext = self.sp().wrapping_add(40);
        let bp = read(mcontext.wrapping_add(80))?;
        let sp = read(mcontext.wrapping_add(120))?;
        let ip = read(mcontext.wrapping_add(128))?;
        self.set_bp(bp);
        self.set_sp(sp);
        self.set_ip(ip);
        Ok(ip)
    }
}

impl SignalFrame for UnwindRegsAarch64 {
    fn restore_interrupted(
        &mut self,
        read: &mut dyn FnMut(u64) -> Result<u64, ()>,
    ) -> Result<u64, ()> {
        // sp is at the rt_sigframe: a siginfo (128 bytes), then the ucontext with its
        // uc_mcontext at 176: fault_address, x0–x30, sp, pc.
        let regs = self.sp().wrapping_add(128 + 176 + 8);
        let x = |n: u64| regs.wrapping_add(8 * n);
        let fp = read(x(29))?;
        let lr = read(x(30))?;
        let sp = read(x(31))?;
        let pc = read(x(32))?;
        self.set_fp(fp);
        self.set_lr(lr);
        self.set_sp(sp);
        Ok(self.lr_mask().strip_ptr_auth(pc))
    }
}

/// A framehop walk: the pc, then each return address minus one, up to `max`. At a
/// signal trampoline the interrupted frame's registers come from the signal frame and
/// its pc is given as it is (it was interrupted, not calling), as perf's unwinders do.
#[allow(clippy::too_many_arguments)]
fn walk<U: Unwinder>(
    unwinder: &U,
    trampolines: &[std::ops::Range<u64>],
    pc: u64,
    mut regs: U::UnwindRegs,
    cache: &mut U::Cache,
    mut read: impl FnMut(u64) -> Result<u64, ()>,
    max: usize,
    out: &mut Vec<u64>,
) -> StackEnd
where
    U::UnwindRegs: SignalFrame,
{
    if max == 0 {
        return StackEnd::Limit;
    }
    out.push(pc);
    let mut address = FrameAddress::InstructionPointer(pc);
    for _ in 1..max {
        let lookup = address.address_for_lookup();
        // A pc where a trampoline's FDE ends is in its sigreturn: sampled in the kernel
        // after the `syscall` (`svc`) that ends the trampoline, sp still at the ucontext.
        let at_end = |r: &std::ops::Range<u64>| {
            matches!(address, FrameAddress::InstructionPointer(_)) && r.end == lookup
        };
        let next = if trampolines.iter().any(|r| r.contains(&lookup) || at_end(r)) {
            match regs.restore_interrupted(&mut read) {
                Ok(0) => return StackEnd::Lost,
                Ok(pc) => FrameAddress::InstructionPointer(pc),
                Err(()) => return StackEnd::Truncated,
            }
        } else {
            match unwinder.unwind_frame(address, &mut regs, cache, &mut read) {
                Ok(Some(ra)) => match FrameAddress::from_return_address(ra) {
                    Some(a) => a,
                    None => return StackEnd::Lost,
                },
                Ok(None) => return StackEnd::Complete,
                Err(framehop::Error::CouldNotReadStack(_)) => return StackEnd::Truncated,
                Err(_) => return StackEnd::Lost,
            }
        };
        // perf reports a caller at its call instruction (return address - 1).
        out.push(next.address_for_lookup());
        address = next;
    }
    StackEnd::Limit
}

#[cfg(test)]
mod tests;
