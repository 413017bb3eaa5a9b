//! The one place every analysis and export takes a sample's stack from
//! ([`Machine::stack`], [`Machine::frames`]). The kernel part comes from the recorded
//! callchain; the user part from the callchain too, or — for a sample that carries its
//! user registers and a stack copy (`--call-graph dwarf`) — from unwinding them
//! ([`crate::stack::unwind`]), as perf stitches them.

use crate::machine::Machine;
use crate::stack::unwind::{CallGraph, StackEnd};
use crate::stack::Stack;
use crate::symbols::Frame;
use crate::AnalysisError as Error;
use crate::SampleInfo;

const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
const PERF_CONTEXT_GUEST_KERNEL: u64 = -2176i64 as u64;

impl Machine {
    /// The stack of a sample as addresses, leaf first: its callchain with the context
    /// markers removed (each switching between kernel and user), the user part unwound
    /// where [`crate::StackOptions::call_graph`] says so, or its ip alone.
    pub fn stack(&self, s: &SampleInfo<'_>, out: &mut Stack) -> Result<(), Error> {
        out.addrs.clear();
        out.unwound = None;
        out.user_from = 0;
        let chain = s.view.callchain()?;
        let mut user = std::mem::take(&mut out.unwound_ips);
        user.clear();
        // The user frames replace the callchain's user part: unwound here, or given with
        // the sample (a simpleperf CALLCHAIN record's, an unwinding's result already).
        let replaced = match s.user_callchain {
            Some(given) => take_given(given, &mut user),
            None => {
                let opts = self.stack_options();
                // A sample with user registers and a stack copy (the mask says the
                // event samples registers; a kernel thread's dump is empty and unwinds
                // nothing).
                let wanted = s.regs_user_mask != 0
                    && match opts.call_graph {
                        CallGraph::Fp => false,
                        CallGraph::Dwarf => true,
                        // Where the callchain has no user part (`exclude_callchain_user`).
                        CallGraph::Auto => {
                            chain.as_ref().is_none_or(|c| !has_user_part(c.ips.iter()))
                        }
                    };
                if wanted {
                    out.unwound = self.unwind_user(s, opts.max_unwound, &mut user)?;
                    // Nothing calls the function at an entry point (`_start`): a walk
                    // that reaches it has reached the root, though the dynamic loader's
                    // has no CFI to say so. Sampled at its first instruction, the walk
                    // takes the word at the stack pointer (argc) for a return address:
                    // that one frame beyond goes.
                    if out.unwound.is_some() {
                        let is_entry = |ip: u64| {
                            let f = self.resolve(s.pid, false, ip);
                            f.symbol.is_some_and(|sym| self.dsos.is_entry_function(sym))
                        };
                        let n = user.len();
                        if n >= 1 && is_entry(user[n - 1]) {
                            out.unwound = Some(StackEnd::Complete);
                        } else if n >= 2 && is_entry(user[n - 2]) {
                            user.truncate(n - 1);
                            out.unwound = Some(StackEnd::Complete);
                        }
                        // A new thread's first samples (in the kernel's ret_from_fork)
                        // carry its parent's user registers, but for the clone's return
                        // value (0: register 0 of perf's numbering on x86_64, i386 and
                        // aarch64) and the sp (the fresh stack, whose words are no return
                        // addresses). The clone function is that thread's outermost frame
                        // (glibc's child path is `cfi_undefined rip`); the parent, at the
                        // same pc with the child's id as return value, keeps its callers.
                        if user.len() > 1 && self.is_new_thread_in_clone(s, user[0])? {
                            user.truncate(1);
                            out.unwound = Some(StackEnd::Complete);
                        }
                    }
                }
                out.unwound.is_some()
            }
        };
        if let Some(chain) = &chain {
            // perf starts a callchain in user mode; the kernel's chains open with a marker.
            let mut kernel = false;
            for ip in chain.ips.iter() {
                if ip >= PERF_CONTEXT_MAX {
                    kernel = ip == PERF_CONTEXT_KERNEL || ip == PERF_CONTEXT_GUEST_KERNEL;
                    if ip != PERF_CONTEXT_USER && ip != PERF_CONTEXT_KERNEL {
                        // Guest and hypervisor frames cannot be resolved here.
                        kernel = false;
                    }
                    continue;
                }
                if replaced && !kernel {
                    continue;
                }
                out.addrs.push((ip, kernel));
            }
        } else if replaced && s.kernel {
            // No callchain: a sample taken in the kernel has its ip as its kernel part.
            out.addrs.push((s.ip, true));
        }
        out.user_from = out.addrs.len();
        out.addrs.extend(user.iter().map(|&a| (a, false)));
        out.unwound_ips = user;
        if out.addrs.is_empty() {
            out.addrs.push((s.ip, s.kernel));
            out.user_from = 0;
        }
        Ok(())
    }

    /// The sample's thread is a new one at its first return from a clone: its user pc in
    /// a clone function and the return value register 0 (see [`Machine::stack`]).
    fn is_new_thread_in_clone(&self, s: &SampleInfo<'_>, pc: u64) -> Result<bool, Error> {
        // Register 0 is sampled when bit 0 of the mask is set; it is the first value.
        if s.regs_user_mask & 1 == 0 {
            return Ok(false);
        }
        let ret = s
            .view
            .regs_user()?
            .and_then(|r| r.regs.and_then(|v| v.get(0)));
        if ret != Some(0) {
            return Ok(false);
        }
        let f = self.resolve(s.pid, false, pc);
        Ok(f.symbol.is_some_and(|sym| {
            matches!(
                self.dsos.symbol_name(sym),
                "clone" | "__clone" | "clone3" | "__clone3" | "__GI___clone" | "__GI___clone3"
            )
        }))
    }

    /// The frames of a sample, leaf first ([`Machine::stack`], each address resolved),
    /// ending with a [`Frame::truncated`] frame when an unwound stack was cut.
    pub fn frames(&self, s: &SampleInfo<'_>, out: &mut Vec<Frame>) -> Result<(), Error> {
        let mut stack = self.scratch_stack();
        self.stack(s, &mut stack)?;
        self.resolve_stack(s.pid, &stack, out);
        self.return_scratch_stack(stack);
        Ok(())
    }

    /// The frames of a stack of process `pid` (from [`Machine::stack`]): each address
    /// resolved, and a [`Frame::truncated`] frame last when it was cut.
    pub fn resolve_stack(&self, pid: i32, stack: &Stack, out: &mut Vec<Frame>) {
        out.clear();
        out.extend(
            stack
                .addrs
                .iter()
                .map(|&(ip, kernel)| self.resolve(pid, kernel, ip)),
        );
        if stack.is_cut() {
            out.push(Frame::truncated());
        }
    }
}

/// `given` as a sample's user frames. Cold and out of line: only simpleperf's
/// `debug-unwind` output gives them, and the hot path of every other recording stays
/// as it was (inlined, this branch made `report` a tenth slower).
#[cold]
#[inline(never)]
fn take_given(given: &[u64], user: &mut Vec<u64>) -> bool {
    user.extend_from_slice(given);
    true
}

/// What a sample's thread and resolved stack follow from: its thread, its stack's
/// addresses (the sample's own first), and the state of the machine
/// ([`Machine::changes`]). Analyses that resolve each distinct one once key by it:
/// most samples repeat a stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RawStack {
    pub pid: i32,
    pub tid: i32,
    pub changes: u64,
    pub cut: bool,
    pub addrs: Vec<(u64, bool)>,
}

impl RawStack {
    /// The sample's, its addresses taken from `scratch` (filled by
    /// [`Machine::stack`]); give them back with [`RawStack::give_back`] when the key
    /// is not kept.
    pub fn of(
        machine: &Machine,
        s: &crate::SampleInfo<'_>,
        scratch: &mut Stack,
    ) -> Result<RawStack, crate::AnalysisError> {
        machine.stack(s, scratch)?;
        Ok(RawStack {
            pid: s.pid,
            tid: s.tid,
            changes: machine.changes(),
            cut: scratch.is_cut(),
            addrs: std::mem::take(&mut scratch.addrs),
        })
    }

    /// Returns the addresses' buffer to `scratch`, for the next sample.
    pub fn give_back(self, scratch: &mut Stack) {
        scratch.addrs = self.addrs;
    }
}

/// True when a callchain holds user-space entries (a user context, or entries before any
/// context marker).
fn has_user_part(mut ips: impl Iterator<Item = u64>) -> bool {
    let mut kernel = false;
    ips.any(|ip| {
        if ip >= PERF_CONTEXT_MAX {
            kernel = ip != PERF_CONTEXT_USER;
            return false;
        }
        !kernel
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::SideEvent;
    use crate::stack::unwind::Arch;
    use crate::stack::StackOptions;
    use crate::symbols::dso::{Dsos, SymbolSources};
    use perfdata::rt::{Endianness, LittleEndian, Writer};
    use perfdata::types::{
        Callchain, Ctx, Regs, Sample, SampleLayout, SampleRegsAbi, SampleType, SampleView,
        StackUser,
    };

    /// A `--call-graph dwarf` sample of process 7 taken in the kernel: its callchain
    /// holds the kernel part only, its registers (bp 0, sp, `pc`) and stack copy (the
    /// first `copied` bytes of `words`) the user part.
    fn dwarf_sample_in_the_kernel(m: &Machine, pc: u64, words: &[u64], copied: u64) -> Stack {
        dwarf_sample_with_ax(m, None, pc, words, copied)
    }

    /// [`dwarf_sample_in_the_kernel`] with register 0 (ax) sampled too, when given.
    fn dwarf_sample_with_ax(
        m: &Machine,
        ax: Option<u64>,
        pc: u64,
        words: &[u64],
        copied: u64,
    ) -> Stack {
        let ctx = Ctx {
            sample_type: SampleType::IP
                | SampleType::TID
                | SampleType::CALLCHAIN
                | SampleType::REGS_USER
                | SampleType::STACK_USER,
            sample_regs_user: 0b111 << 6 | u64::from(ax.is_some()),
            ..Default::default()
        };
        let sp = 0x7ffc_0000_1000u64;
        let stack: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let sample = Sample {
            ip: Some(0xffff_ffff_8100_0010),
            pid: Some(7),
            tid: Some(7),
            callchain: Some(Callchain {
                ips: vec![PERF_CONTEXT_KERNEL, 0xffff_ffff_8100_0010].into(),
            }),
            regs_user: Some(Regs {
                abi: SampleRegsAbi::ABI_64,
                regs: Some(ax.into_iter().chain([0, sp, pc]).collect::<Vec<_>>().into()),
            }),
            stack_user: Some(StackUser {
                data: stack.into(),
                dyn_size: Some(copied),
            }),
            ..Default::default()
        };
        let mut w = Writer::<LittleEndian>::new();
        sample.encode(&mut w, &ctx).unwrap();
        let layout = SampleLayout::new(&ctx);
        let view = SampleView::new(w.as_slice(), 0, Endianness::Little, &ctx, &layout).unwrap();
        let info = SampleInfo {
            event: 0,
            time: None,
            pid: 7,
            tid: 7,
            cpu: None,
            period: 1,
            ip: 0xffff_ffff_8100_0010,
            kernel: true,
            regs_user_mask: ctx.sample_regs_user,
            endian: Endianness::Little,
            view,
            hidden: false,
            user_callchain: None,
        };
        let mut out = Stack::default();
        m.stack(&info, &mut out).unwrap();
        out
    }

    #[test]
    fn no_user_stack_without_maps_or_without_a_stack_copy_as_in_perf() {
        let mut m = Machine::new(Dsos::new(SymbolSources::default()));
        m.set_stacks(StackOptions::default(), Some(Arch::X86_64));
        // Sampled in exec before its first MMAP: the registers are the old image's.
        let before = dwarf_sample_in_the_kernel(&m, 0x40_1000, &[0x40_1234, 0], 16);
        assert_eq!(before.addrs, [(0xffff_ffff_8100_0010, true)]);
        assert_eq!(before.unwound, None);
        assert!(!before.is_cut());
        m.apply(&SideEvent::Mmap {
            pid: 7,
            start: 0x40_0000,
            len: 0x1_0000,
            pgoff: 0,
            filename: "/nonexistent/prog".into(),
            build_id: None,
            exec: true,
            kernel: false,
        });
        let after = dwarf_sample_in_the_kernel(&m, 0x40_1000, &[0x40_1234, 0], 16);
        assert_eq!(after.addrs[0], (0xffff_ffff_8100_0010, true));
        assert_eq!(after.addrs.get(1), Some(&(0x40_1000, false)));
        assert!(after.unwound.is_some());
        // Nothing copied (the old stack is gone from the new mm): perf gives no user
        // frame, not even the pc.
        let empty = dwarf_sample_in_the_kernel(&m, 0x40_1000, &[0x40_1234, 0], 0);
        assert_eq!(empty.addrs, [(0xffff_ffff_8100_0010, true)]);
        assert_eq!(empty.unwound, None);
    }

    /// An x86_64 machine whose process 7 maps the object at `path` (of `len` bytes)
    /// executable at a fixed base; the base.
    fn mapped_in_process_7(path: &str, len: u64) -> (Machine, u64) {
        let mut m = Machine::new(Dsos::new(SymbolSources::default()));
        m.set_stacks(StackOptions::default(), Some(Arch::X86_64));
        let base = 0x7f00_0000_0000;
        m.apply(&SideEvent::Mmap {
            pid: 7,
            start: base,
            len,
            pgoff: 0,
            filename: path.into(),
            build_id: None,
            exec: true,
            kernel: false,
        });
        (m, base)
    }

    #[test]
    fn a_walk_from_the_first_instruction_of_the_dynamic_loader_ends_there() {
        use object::Object;
        let path = "/lib64/ld-linux-x86-64.so.2";
        let Ok(bytes) = std::fs::read(path) else {
            eprintln!("SKIP: {path} is not on this machine");
            return;
        };
        let entry = object::File::parse(&*bytes).unwrap().entry();
        let (m, base) = mapped_in_process_7(path, bytes.len() as u64);
        if m.resolve(7, false, base + entry).symbol.is_none() {
            eprintln!("SKIP: no symbol names {path}'s entry point here (its debug file is absent)");
            return;
        }
        // The end of an exec: the kernel has set the new registers (pc at the loader's
        // `_start`, sp at argc) and the page of `_start` faults. The word at sp is argc,
        // not a return address.
        let got = dwarf_sample_in_the_kernel(&m, base + entry, &[3, 0x7ffc_0000_2000], 16);
        assert_eq!(
            got.addrs,
            [(0xffff_ffff_8100_0010, true), (base + entry, false)]
        );
        assert_eq!(got.unwound, Some(StackEnd::Complete));
        // ld.so's `_start` (an unsized label) goes on at the label `_dl_start_user`,
        // which calls `_dl_init`: a sample in an initializer the loader runs has that
        // return address as its root-most frame, and the walk (no CFI there) takes
        // the word above it (argc) for one more. That frame goes; the stack is whole.
        let name = |ip: u64| {
            m.resolve(7, false, ip)
                .symbol
                .map(|s| m.dsos.symbol_name(s).to_string())
        };
        let Some(user) = (1..0x80)
            .map(|d| base + entry + d)
            .find(|&ip| name(ip).as_deref() == Some("_dl_start_user"))
        else {
            eprintln!("SKIP: no `_dl_start_user` label after {path}'s entry point here");
            return;
        };
        let got = dwarf_sample_in_the_kernel(&m, user + 0x20, &[3, 0x7ffc_0000_2000], 16);
        assert_eq!(
            got.addrs,
            [(0xffff_ffff_8100_0010, true), (user + 0x20, false)]
        );
        assert_eq!(got.unwound, Some(StackEnd::Complete));
    }

    #[test]
    fn a_new_thread_ends_at_its_clone_and_the_parent_keeps_its_callers() {
        use object::{Object, ObjectSection, ObjectSymbol};
        let path = "/lib/x86_64-linux-gnu/libc.so.6";
        let Ok(bytes) = std::fs::read(path) else {
            eprintln!("SKIP: {path} is not on this machine");
            return;
        };
        let file = object::File::parse(&*bytes).unwrap();
        // glibc's clone(): the instruction after its `syscall` is where both the parent
        // and the child return to user space.
        let Some(clone) = file
            .dynamic_symbols()
            .find(|s| s.name() == Ok("__clone") && s.size() > 0)
        else {
            eprintln!("SKIP: {path} exports no __clone");
            return;
        };
        let text = file.section_by_name(".text").unwrap();
        let code = text.data().unwrap();
        let at = (clone.address() - text.address()) as usize;
        let body = &code[at..at + clone.size() as usize];
        let Some(syscall) = body.windows(2).position(|w| w == [0x0f, 0x05]) else {
            eprintln!("SKIP: no syscall instruction in {path}'s __clone");
            return;
        };
        let (m, base) = mapped_in_process_7(path, bytes.len() as u64);
        let pc = base + clone.address() + syscall as u64 + 2;
        // A return address into libc's text on the stack: the parent's caller, or in the
        // child's fresh stack whatever was there.
        let ret = base + clone.address() + 1;
        let words = [ret, 0, 0, 0];
        let child = dwarf_sample_with_ax(&m, Some(0), pc, &words, 32);
        assert_eq!(
            child.addrs,
            [(0xffff_ffff_8100_0010, true), (pc, false)],
            "the child's stack ends at the clone"
        );
        assert_eq!(child.unwound, Some(StackEnd::Complete));
        let parent = dwarf_sample_with_ax(&m, Some(4242), pc, &words, 32);
        assert_eq!(parent.addrs[..2], child.addrs[..]);
        assert_eq!(
            parent.addrs.get(2),
            Some(&(ret - 1, false)),
            "the parent's caller"
        );
        // Without register 0 sampled nothing says which side it is: the walk as it was.
        let unknown = dwarf_sample_in_the_kernel(&m, pc, &words, 32);
        assert_eq!(unknown.addrs, parent.addrs);
    }

    #[test]
    fn a_callchain_has_a_user_part_when_user_entries_come_before_any_kernel_marker() {
        assert!(!has_user_part(
            [PERF_CONTEXT_KERNEL, 0xffff_1000].into_iter()
        ));
        assert!(has_user_part([0x401000].into_iter()));
        assert!(has_user_part(
            [
                PERF_CONTEXT_KERNEL,
                0xffff_1000,
                PERF_CONTEXT_USER,
                0x401000
            ]
            .into_iter()
        ));
        assert!(!has_user_part(
            [PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER].into_iter()
        ));
        assert!(!has_user_part(std::iter::empty()));
    }
}
