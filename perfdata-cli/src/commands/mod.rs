//! One module per subcommand: its options (`Args`) and its `run`. A command module uses
//! the crate's shared option modules, never another command module.

pub mod annotate;
pub mod check;
pub mod collapse;
pub mod completions;
pub mod convert;
pub mod diff;
pub mod dump;
pub mod export;
pub mod flamegraph;
pub mod info;
pub mod offcpu;
pub mod report;
pub mod sched;
pub mod script;
pub mod stats;
