//! One module per subcommand: its options (`Args`) and its `run`.

pub mod check;
pub mod collapse;
pub mod convert;
pub mod diff;
pub mod dump;
#[cfg(feature = "parquet")]
pub mod export;
pub mod flamegraph;
pub mod info;
pub mod offcpu;
pub mod report;
pub mod stats;
#[cfg(feature = "parquet")]
pub mod viewers;
