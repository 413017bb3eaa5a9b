//! The objects a recording maps and the names in them: the DSO registry ([`Dsos`]),
//! where each object's files are found ([`sources`]), ELF symbol tables, DWARF lines and
//! inline frames ([`elf`]), the symbols a simpleperf recording carries ([`recorded`]),
//! JIT code from jitdump files ([`jit`]), what is read on another thread before the walk
//! needs it (`read_ahead`), and how a resolved [`Frame`] is named
//! ([`naming`]).

mod bfd_lines;
pub mod dso;
pub mod elf;
mod frame;
pub mod jit;
mod libiberty;
pub mod naming;
mod read_ahead;
pub mod recorded;
pub mod sources;

pub use dso::{DsoId, Dsos, SymbolId};
pub use frame::{Frame, TRUNCATED};
pub use sources::SymbolSources;
