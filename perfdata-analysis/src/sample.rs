//! A sample as the engine hands it on: the fields the analyses use, decoded once, with
//! the whole view for the rest. The layers below the replay ([`crate::machine`], its
//! stitching, the filters) take it; [`crate::Analyzer::run`] makes it.

use perfdata::types::SampleView;

/// A sample with the fields the analyses use, ready for [`crate::Machine::frames`].
#[derive(Debug, Clone, Copy)]
pub struct SampleInfo<'a> {
    /// Index of its attr (event) in the recording.
    pub event: usize,
    /// PERF_SAMPLE_TIME, in nanoseconds of the recording's clock; `None` when the event
    /// does not sample it.
    pub time: Option<u64>,
    /// Process id; -1 when the event does not sample PERF_SAMPLE_TID.
    pub pid: i32,
    /// Thread id; -1 when the event does not sample PERF_SAMPLE_TID.
    pub tid: i32,
    /// PERF_SAMPLE_CPU; `None` when the event does not sample it.
    pub cpu: Option<u32>,
    /// The sample's period, or the attr's when the sample has none (as perf does).
    pub period: u64,
    /// PERF_SAMPLE_IP: the sampled address (0 when the event does not sample it).
    pub ip: u64,
    /// The sample's cpumode is the kernel's.
    pub kernel: bool,
    /// Its event's `sample_regs_user`: which registers its user register dump holds.
    pub regs_user_mask: u64,
    /// The recording's byte order (of the stack copy's words).
    pub endian: perfdata::Endianness,
    /// The whole sample, for the parts not copied here (callchain, registers, stack
    /// copy, read values).
    pub view: SampleView<'a>,
    /// Of a thread, object or symbol the filter leaves out: delivered only when
    /// [`crate::RunOptions::deliver_hidden`] asks for it (`report` counts it in its totals).
    pub hidden: bool,
    /// User frames that replace the user part of the sample's own callchain, innermost
    /// first: the ips of the simpleperf CALLCHAIN record written for it (`simpleperf
    /// debug-unwind`). [`crate::Machine::stack`] keeps the callchain's kernel part before them.
    pub user_callchain: Option<&'a [u64]>,
}
