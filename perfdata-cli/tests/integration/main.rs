//! The `perfdata` command's tests, as one binary: each runs the built binary.

use perfdata_test_support as common;

mod annotate;
mod annotate_aarch64;
mod annotate_source;
#[cfg(unix)]
mod browser;
mod check;
mod commands;
mod damaged_features;
mod diff;
mod dump_output;
mod export_viewers;
mod filters;
mod gperftools_cli;
mod jit;
mod offcpu;
#[cfg(unix)]
mod report_inline;
mod sched;
mod script;
mod shipped_sample;
#[cfg(unix)]
mod sigkill;
mod simpleperf;
mod symbol_sources;
mod zero_size_record;

/// Runs the `perfdata` binary with `args`, `stdin` written to its standard input (a write
/// cut short by the reader stopping early is not an error); its exit code, stdout, stderr.
pub fn run_perfdata(args: &[&str], stdin: Option<&[u8]>) -> (Option<i32>, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        let _ = input.write_all(bytes);
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
