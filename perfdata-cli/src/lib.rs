//! `perfdata`: inspect, check, convert and analyse perf.data recordings.
//!
//! A thin shell over the libraries: each subcommand is a module of `commands` owning
//! its options and a `run` that calls `perfdata` (the format) or `perfdata_analysis`
//! and prints. Every command reads `FILE` or `-i FILE` (`perf.data` by default, as
//! perf) and writes where `-o` says. Options more than one command takes live in modules
//! of their own (`input`, `output`, `symbols`, `stacks`, `filter`), so that no command
//! module uses another.
//!
//! A library as well as the `perfdata` binary so that the command line's definition,
//! [`command`], can be read without running it: `cargo xtask gen` renders the man pages
//! from it, and `perfdata completions` the shells' completion scripts. The definition
//! is the same whatever the crate's features (a format a build leaves out is refused when
//! asked for, not hidden), so the man pages describe every build.

mod analysis;
mod commands;
mod error;
mod filter;
mod gperftools;
mod heap;
mod input;
mod output;
mod progress;
mod stacks;
mod symbols;
mod values;

use clap::{CommandFactory, Parser, Subcommand};
use commands::*;
use std::process::ExitCode;

/// Read, check, convert and analyse perf.data recordings (every variant).
///
/// Most commands read FILE or `-i FILE` (`perf.data` by default, as perf's) and print
/// to standard output unless `-o` names a file, which is written beside its path and
/// renamed into place once complete. The analysis commands spell their options as perf
/// does (`-g`/`--call-graph`, `--sort`, `--pid`, `--time`…). `perfdata COMMAND --help`,
/// or the page perfdata-COMMAND(1), says more about each command.
#[derive(Parser)]
#[command(name = "perfdata", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Check(check::Args),
    Dump(dump::Args),
    Convert(convert::Args),
    Report(report::Args),
    Annotate(annotate::Args),
    Script(script::Args),
    Collapse(collapse::Args),
    Flamegraph(flamegraph::Args),
    Diff(diff::Args),
    Offcpu(offcpu::Args),
    Sched(sched::Args),
    Stats(stats::Args),
    Export(export::Args),
    Info(info::Args),
    Completions(completions::Args),
}

/// The command line's definition: every subcommand with its options and help.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses the process's arguments (printing help or a usage error and exiting, as clap
/// does) and runs the command; its exit status.
pub fn run() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Check(a) => check::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Report(a) => report::run(a),
        Command::Annotate(a) => annotate::run(a),
        Command::Script(a) => script::run(a),
        Command::Collapse(a) => collapse::run(a),
        Command::Flamegraph(a) => flamegraph::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Offcpu(a) => offcpu::run(a),
        Command::Sched(a) => sched::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Export(a) => export::run(a),
        Command::Info(a) => info::run(a),
        Command::Completions(a) => completions::run(a),
    };
    match result {
        Ok(status) => status,
        // The reader of our output went away (`perfdata dump big.data | head`): what it
        // wanted was printed. Quiet, as `perf script | head`.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfdata: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::command;

    /// clap's own consistency checks over every subcommand's options (names used twice,
    /// conflicts naming no option): they otherwise panic only when that command runs.
    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    /// `perfdata --help` lists each command on one line of a 100-column terminal; the
    /// details are in the command's own `--help`.
    #[test]
    fn every_command_has_a_short_first_line() {
        let root = command();
        for cmd in std::iter::once(&root).chain(root.get_subcommands()) {
            let about = cmd
                .get_about()
                .unwrap_or_else(|| panic!("{}: no about", cmd.get_name()))
                .to_string();
            assert!(
                !about.contains('\n') && about.chars().count() <= 80,
                "{}: the first line is not one short line: {about:?}",
                cmd.get_name()
            );
        }
    }

    /// Every option says what it does, and every command that searches for symbols lists
    /// the environment variables the search reads.
    #[test]
    fn every_option_is_explained_and_the_environment_listed() {
        for cmd in command().get_subcommands() {
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(
                    arg.get_help().is_some(),
                    "{} {}: no help",
                    cmd.get_name(),
                    arg.get_id()
                );
            }
            let searches = cmd.get_arguments().any(|a| a.get_id() == "kallsyms");
            let after = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert_eq!(
                searches,
                after.contains(crate::symbols::ENVIRONMENT),
                "{}: the environment section does not match the symbol options",
                cmd.get_name()
            );
        }
    }

    /// `-g`/`--call-graph` is perf report's print spec (`--graph` still reads as it);
    /// where user stacks come from is `--stacks`, in every analysis command.
    #[test]
    fn perf_report_spellings() {
        let report = |args: &[&str]| {
            let m = command()
                .try_get_matches_from([&["perfdata", "report"], args].concat())
                .expect("parses");
            let (_, m) = m.subcommand().expect("a subcommand");
            (
                m.get_one::<String>("call_graph").cloned(),
                *m.get_one::<perfdata_analysis::stack::unwind::CallGraph>("stacks")
                    .expect("a default"),
            )
        };
        use perfdata_analysis::stack::unwind::CallGraph;
        assert_eq!(
            report(&["-g", "folded", "x.data"]),
            (Some("folded".into()), CallGraph::Auto)
        );
        assert_eq!(
            report(&["--call-graph=caller,0.5"]),
            (Some("caller,0.5".into()), CallGraph::Auto)
        );
        assert_eq!(
            report(&["--graph", "none", "--stacks", "dwarf"]),
            (Some("none".into()), CallGraph::Dwarf)
        );
        assert_eq!(report(&["-g"]), (Some("graph".into()), CallGraph::Auto));
        for cmd in ["collapse", "flamegraph", "offcpu", "export"] {
            assert!(command()
                .try_get_matches_from(["perfdata", cmd, "--stacks", "fp", "-o", "x"])
                .is_ok());
            let old = command().try_get_matches_from(["perfdata", cmd, "--call-graph", "fp"]);
            assert!(old.is_err(), "{cmd} still takes --call-graph");
        }
    }
}
