//! The exports: a recording in another tool's format. Every export has one shape: gather
//! from a `&mut Analyzer` with the export's options, then write what was gathered to any
//! `std::io::Write` (a Parquet export, a directory of files, writes to a [`parquet::PartSink`]).
//! Paths, temporary files and renames are the caller's.
//!
//! The viewers' formats ([`pprof`], [`speedscope`], [`firefox`]) lay out the samples
//! [`sampled`] gathers; [`parquet`] and the Python package's [`sample_stream`] take the
//! Arrow batches of [`tables`] (and of the tracepoint events' tables it builds,
//! [`tracepoints`]); [`gperftools`] writes a CPU profile; [`script`] streams
//! `perf script`'s text record by record (the one text export: nothing is gathered). No
//! format module imports another.

pub mod firefox;
#[cfg(feature = "gperftools")]
pub mod gperftools;
pub mod gzip;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod pprof;
#[cfg(feature = "arrow")]
pub mod sample_stream;
pub mod sampled;
pub mod script;
pub mod speedscope;
#[cfg(feature = "arrow")]
pub mod tables;
#[cfg(feature = "arrow")]
pub mod tracepoints;
