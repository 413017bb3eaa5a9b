//! A sample's stack as addresses, and how stacks are put together
//! ([`crate::Machine::stack`] builds them).

pub mod unwind;

use unwind::{CallGraph, StackEnd};

/// How stacks are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackOptions {
    /// Where user stacks come from.
    pub call_graph: CallGraph,
    /// At most this many frames are unwound from a sample's registers (perf's
    /// `--max-stack`, 127 by default); a walk cut there ends with a `[truncated]` frame.
    pub max_unwound: usize,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            call_graph: CallGraph::Auto,
            max_unwound: 127,
        }
    }
}

/// A sample's stack as addresses, leaf first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    /// (address, in the kernel), leaf first. Unwound callers are at their call
    /// instruction (return address minus one), as perf reports them.
    pub addrs: Vec<(u64, bool)>,
    /// The user part was unwound from the sample's registers and stack copy: how that
    /// walk ended (`None`: the stack is the recorded callchain).
    pub unwound: Option<StackEnd>,
    /// Where the unwound user part starts in `addrs`.
    pub user_from: usize,
    /// The unwinder's output, before it is stitched in.
    pub(crate) unwound_ips: Vec<u64>,
}

impl Stack {
    /// The stack stops short of its outermost frame (the walk was cut).
    pub fn is_cut(&self) -> bool {
        self.unwound.is_some_and(StackEnd::is_cut)
    }
}
