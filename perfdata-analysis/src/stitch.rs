//! The one place every analysis and export takes a sample's stack from
//! ([`Machine::stack`], [`Machine::frames`]). The kernel part comes from the recorded
//! callchain; the user part from the callchain too, or — for a sample that carries its
//! user registers and a stack copy (`--call-graph dwarf`) — from unwinding them
//! ([`crate::unwind`]), as perf stitches them.

use crate::machine::{Frame, Machine};
use crate::stack::Stack;
use crate::unwind::{CallGraph, StackEnd};
use crate::SampleInfo;
use perfdata::Error;

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
        let opts = self.stack_options();
        // A sample with user registers and a stack copy (the mask says the event
        // samples registers; a kernel thread's dump is empty and unwinds nothing).
        let wanted = s.regs_user_mask != 0
            && match opts.call_graph {
                CallGraph::Fp => false,
                CallGraph::Dwarf => true,
                // Only where the callchain has no user part (`exclude_callchain_user`).
                CallGraph::Auto => chain.as_ref().is_none_or(|c| !has_user_part(c.ips.iter())),
            };
        let mut user = std::mem::take(&mut out.unwound_ips);
        user.clear();
        if wanted {
            out.unwound = self.unwind_user(s, opts.max_unwound, &mut user)?;
            // A walk that stops in the function at an entry point stopped at the root:
            // nothing calls `_start` (the dynamic loader's has no CFI to say so).
            if let (Some(StackEnd::Lost | StackEnd::Truncated), Some(&last)) =
                (out.unwound, user.last())
            {
                let f = self.resolve(s.pid, false, last);
                if f.symbol.is_some_and(|sym| self.dsos.is_entry_function(sym)) {
                    out.unwound = Some(StackEnd::Complete);
                }
            }
        }
        let unwound = out.unwound.is_some();
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
                if unwound && !kernel {
                    continue;
                }
                out.addrs.push((ip, kernel));
            }
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
