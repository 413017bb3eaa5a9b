use anyhow::{bail, Result};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  gen [--check]   regenerate perfdata/src/generated/ and docs/ from spec/ (--check: fail if stale)";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = xtask::workspace_root();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen"] => {
            let written = xtask::write_all(&root)?;
            if written.is_empty() {
                println!("generated files are up to date");
            }
            for p in written {
                println!("wrote {}", p.strip_prefix(&root).unwrap_or(&p).display());
            }
            Ok(())
        }
        ["gen", "--check"] => {
            let stale = xtask::stale_files(&root)?;
            if stale.is_empty() {
                println!("generated files are up to date");
                return Ok(());
            }
            for p in &stale {
                eprintln!("stale: {}", p.strip_prefix(&root).unwrap_or(p).display());
            }
            bail!(
                "{} generated file(s) do not match spec/: run `cargo xtask gen` and commit the result",
                stale.len()
            )
        }
        _ => bail!("{USAGE}"),
    }
}
