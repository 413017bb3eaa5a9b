//! Samples weighed by something other than their period: the off-CPU time that
//! [`super::offcpu`] attributes to the sample whose stack a switch-out took, which
//! `report --off-cpu` and `collapse --off-cpu` weigh their samples by.

use rustc_hash::FxHashMap as HashMap;

/// A sample as [`SampleWeights`] finds it again in a later walk of the recording: its
/// event, thread and time (a switch-out's stack comes from a sample with a time).
pub(crate) type Anchor = (usize, i32, u64);

/// Off-CPU time by the sample whose stack it is attributed to (the `sched_switch`
/// sample of the switch-out, or the thread's last sample before a switch record):
/// `report --off-cpu` and `collapse --off-cpu` weigh those samples by it, and leave
/// every other sample out.
#[derive(Debug, Clone, Default)]
pub struct SampleWeights {
    by_sample: HashMap<Anchor, (u64, u64)>,
    /// Off-CPU time of switch-outs with no sample before them (switch records only):
    /// no stack to weigh.
    pub unattributed_ns: u64,
}

impl SampleWeights {
    /// The off-CPU nanoseconds and intervals attributed to `s`; `None` for a sample no
    /// switch-out took its stack from.
    pub fn of(&self, s: &crate::SampleInfo<'_>) -> Option<(u64, u64)> {
        self.by_sample.get(&(s.event, s.tid, s.time?)).copied()
    }

    /// One more interval of `ns` off the CPU, attributed to the sample `at`.
    pub(crate) fn add(&mut self, at: Anchor, ns: u64) {
        let w = self.by_sample.entry(at).or_default();
        w.0 += ns;
        w.1 += 1;
    }
}
