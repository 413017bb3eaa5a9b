//! The bodies of the fuzz targets (`fuzz_targets/`), as library functions so that
//! `cargo test` replays every committed finding and seed on stable (`tests/`). Each takes
//! arbitrary bytes, runs a reader, writer, conversion, analysis, the stack unwinders,
//! the disassemblers or the spec compiler over them and panics only when an invariant breaks (a panic inside a library is a finding too);
//! errors on bad input are the expected outcome.

pub mod analyses;
pub mod disasm;
pub mod format;
pub mod jitdump;
pub mod python;
pub mod scratch;
pub mod spec_language;
pub mod unwind;
pub mod viewers;
