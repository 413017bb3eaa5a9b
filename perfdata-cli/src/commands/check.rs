//! `perfdata check`: every problem of a recording, and an exit status that says how bad.

use crate::error::CliResult;
use crate::input::Input;
use crate::output::Output;
use perfdata::check::{check_recording, Report, Status};
use perfdata::Recording;
use std::io::Write;
use std::process::ExitCode;

/// Validate a recording and list every problem.
///
/// Every problem of a perf.data file or `perf record --threads` directory, with where it
/// is: offset, record or feature, field, expected and found. Exit status: 0 clean, 1
/// damaged but readable, 2 unreadable.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  perfdata check perf.data\n  perfdata check perf.data --json")]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// One JSON object per problem, then a summary object.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    let path = args.input.path();
    let report = match Recording::open(path) {
        Ok(recording) => check_recording(&recording),
        Err(e) => Report {
            problems: vec![],
            records: 0,
        }
        .with_open_error(&e),
    };
    let status = report.status();
    let mut out = args.output.open()?;
    let shown = path.display();
    for p in &report.problems {
        if args.json {
            serde_json::to_writer(&mut out, &serde_json::json!({ "problem": p }))
                .map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            writeln!(out, "{shown}: {}", p.message)?;
        }
    }
    if args.json {
        let summary = serde_json::json!({
            "path": shown.to_string(),
            "status": status,
            "problems": report.problems.len(),
            "records": report.records,
        });
        writeln!(out, "{summary}")?;
    } else {
        let verdict = match status {
            Status::Clean => "clean".to_string(),
            Status::Damaged => {
                format!("damaged but readable: {} problem(s)", report.problems.len())
            }
            Status::Unreadable => "unreadable".to_string(),
        };
        writeln!(out, "{shown}: {verdict}; {} records read", report.records)?;
    }
    out.finish()?;
    Ok(ExitCode::from(status.exit_code()))
}
