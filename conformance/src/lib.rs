//! Conformance suite against the system `perf` (issue: "Conformance suite: the system perf
//! is the referee"). Not built yet; this crate holds its place in the workspace.
