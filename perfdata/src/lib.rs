//! Read and write every variant of the Linux `perf.data` format, losslessly.
//!
//! Layouts are declared in the spec (`spec/perf_data/`) and generated into
//! `src/generated/`; [`rt`] is the hand-written, layout-free runtime they use.

// Generated code names this crate as `::perfdata`, also when compiled inside it.
extern crate self as perfdata;

pub mod container;
pub mod generated;
pub mod model;
pub mod rt;
pub mod transform;
pub mod write;
