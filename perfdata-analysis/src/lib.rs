//! "Where did the time go?": a perf.data recording replayed in time order against the
//! state of its processes, its samples' stacks put together and named in-process, and
//! the analyses and exports built on that.
//!
//! # The layers
//!
//! The crate's folders are its layers. Each uses only those above it in this list; the
//! analyses and the exports use the engine and never each other.
//!
//! | layer | what it holds |
//! |---|---|
//! | [`stack`] | a sample's stack as addresses ([`Stack`]), and DWARF CFI unwinding of `--call-graph dwarf` samples ([`stack::unwind`]) |
//! | [`symbols`] | the objects a recording maps ([`Dsos`]): where their files are found ([`symbols::sources`]: build-id caches, `perf archive` tarballs, `--symfs`, debug directories, debuginfod), their ELF symbols, lines and inline frames, symbols a simpleperf recording carries, JIT code from jitdump files, and how a [`Frame`] is named ([`symbols::naming`]) |
//! | [`machine`] | processes, threads and their maps as the replay goes ([`Machine`]), and a sample's stack stitched from its callchain or unwound ([`Machine::frames`]) |
//! | replay | the [`Analyzer`]: the recording walked in time order, side band applied, each record handed on with its [`SampleInfo`] ([`Analyzer::run`]); perf's sample filters ([`filter`]); byte-range parts for parallel readers ([`partition`]) |
//! | [`analyses`] | perf report's table and call graph, folded stacks, perf diff, off-CPU time, perf sched's views, statistics, a one-screen summary |
//! | [`export`] | the viewers' formats (pprof, speedscope, Firefox Profiler), Arrow tables and Parquet, gperftools CPU profiles, `perf script`'s text |
//! | [`rewrite`] | a recording rewritten with its DWARF stacks unwound (`convert --unwind`) |
//!
//! Errors are one type, [`AnalysisError`]; progress is reported through a callback
//! ([`Analyzer::on_progress`]).
//!
//! ```
//! use perfdata_analysis::{AnalysisError, Analyzer, AnalyzerOptions, RunOptions};
//! use perfdata::Recording;
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/callchain.data");
//! let recording = Recording::open(path)?;
//! let mut analyzer = Analyzer::open(&recording, &AnalyzerOptions::default())?;
//! let mut frames = vec![];
//! let mut deepest = 0;
//! analyzer.run(RunOptions::default(), |machine, item| {
//!     if let Some(s) = &item.sample {
//!         machine.frames(s, &mut frames)?;         // leaf first, context markers removed
//!         deepest = deepest.max(frames.len());
//!     }
//!     Ok::<_, AnalysisError>(true)
//! })?;
//! assert!(deepest > 1);
//! # Ok::<(), AnalysisError>(())
//! ```

#![warn(missing_docs)]

pub mod analyses;
mod error;
pub mod export;
pub mod machine;
mod replay;
pub mod rewrite;
mod sample;
pub mod stack;
pub mod symbols;

pub use error::{AnalysisError, BadOption};
pub use machine::{Machine, SideEvent};
pub use replay::{
    filter, partition, Analyzer, AnalyzerOptions, Producer, Progress, Replayed, RunOptions,
};
pub use sample::SampleInfo;
pub use stack::{Stack, StackOptions};
pub use symbols::{DsoId, Dsos, Frame, SymbolSources, TRUNCATED};
