//! The analysis crate's integration tests, as one binary.

#[path = "../../../perfdata/tests/common/mod.rs"]
mod common;

mod analyses;
mod jit;
mod layering;
mod parallel_stream;
mod parquet_export;
mod partition;
mod sample_columns;
mod simpleperf;
mod viewers;
