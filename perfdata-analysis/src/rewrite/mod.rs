//! Recordings rewritten with what the analysis knows: `--call-graph dwarf` samples with
//! their stacks unwound into callchains ([`unwound`], `perfdata convert --unwind`).

pub mod unwound;
