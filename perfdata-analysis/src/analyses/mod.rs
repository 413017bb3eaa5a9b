//! The analyses: each one walk of the replay ([`crate::Analyzer::run`]) into a result a
//! printer shows. They use the engine layers and never each other; what two of them
//! share lives in [`weights`].

pub mod annotate;
pub mod collapse;
pub mod diff;
pub mod info;
pub mod offcpu;
pub mod report;
pub mod sched;
pub mod stats;
pub mod weights;
