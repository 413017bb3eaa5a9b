//! The analysis crate's integration tests, as one binary.

use perfdata_test_support as common;

mod aarch64_disasm;
mod analyses;
mod annotate_jit;
mod jit;
mod layering;
mod parallel_stream;
mod parquet_export;
mod partition;
mod sample_columns;
mod sched;
mod simpleperf;
mod viewers;
