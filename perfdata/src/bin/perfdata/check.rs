//! `perfdata check`: every problem of a file, and an exit status that says how bad.

use perfdata::check::{check_recording, Report, Status};
use perfdata::container::Recording;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Prints each problem (a line of text, or one JSON object per line) and a summary;
/// exits 0 when clean, 1 when damaged but readable, 2 when unreadable.
pub fn check(path: &Path, json: bool) -> ExitCode {
    let report = match Recording::open(path) {
        Ok(recording) => check_recording(&recording),
        Err(e) => Report {
            problems: vec![],
            records: 0,
        }
        .with_open_error(&e),
    };
    let status = report.status();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let shown = path.display();
    let printed = (|| -> std::io::Result<()> {
        for p in &report.problems {
            if json {
                serde_json::to_writer(&mut out, &serde_json::json!({ "problem": p }))?;
                writeln!(out)?;
            } else {
                writeln!(out, "{shown}: {}", p.message)?;
            }
        }
        if json {
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
        out.flush()
    })();
    if let Err(e) = printed {
        eprintln!("perfdata: {e}");
        return ExitCode::from(2);
    }
    ExitCode::from(status.exit_code())
}
