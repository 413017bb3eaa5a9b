//! Running the system `perf`: recording a scenario into a directory, and asking perf for
//! its view of a file (`perf report --header-only -I`, `perf report -D`, `perf script`).
//!
//! perf runs with `PERF_CONFIG=/dev/null` (no user configuration), `TZ=UTC` (the dates
//! it prints), `PERF_BUILDID_DIR` inside the work directory and `--no-buildid-cache`, so
//! that nothing depends on, or changes, `~/.debug`.

use crate::scenarios::{Mode, Scenario};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What recording a scenario gave.
#[derive(Debug)]
pub enum Recorded {
    /// The file (or directory) perf wrote.
    Path(PathBuf),
    /// The scenario cannot be recorded here; perf's reason.
    Skipped(String),
}

/// `perf --version`, or an error saying perf is missing.
pub fn perf_version() -> Result<String> {
    let out = Command::new("perf")
        .arg("--version")
        .output()
        .context("the system `perf` is needed (Debian: apt-get install linux-perf)")?;
    if !out.status.success() {
        bail!(
            "`perf --version` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A `perf` command with the environment described in the module doc; `dir` is the
/// working directory (file names in perf's output are relative to it).
pub fn perf(dir: &Path) -> Command {
    let mut c = Command::new("perf");
    c.current_dir(dir)
        .env("PERF_CONFIG", "/dev/null")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env("PERF_BUILDID_DIR", dir.join(".buildid"))
        .env("PERF_PAGER", "cat")
        .stdin(Stdio::null());
    c
}

fn last_line(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
        .to_string()
}

/// Records `s` into `dir`. A scenario whose source (inject) was not recorded, or that
/// perf refuses to record on this kernel, is skipped with perf's message.
pub fn record(s: &Scenario, dir: &Path) -> Result<Recorded> {
    let out_name = s.file_name();
    let out_path = dir.join(&out_name);
    let mut cmd = perf(dir);
    let mut stdout_to: Option<PathBuf> = None;
    // The command perf runs: a program of conformance/programs/ is built first.
    let workload: Vec<String> = match s.workload.program() {
        Some(p) => match crate::programs::build(p, dir) {
            Ok(_) => vec![format!("./{}", p.name)],
            Err(why) => return Ok(Recorded::Skipped(format!("cannot build {}: {why}", p.name))),
        },
        None => s.workload.argv().iter().map(|a| a.to_string()).collect(),
    };
    match s.mode {
        Mode::File | Mode::Dir => {
            cmd.args(["record", "-q", "--no-buildid-cache", "-o", &out_name]);
            cmd.args(s.args).arg("--").args(&workload);
        }
        Mode::Pipe => {
            cmd.args(["record", "-q", "--no-buildid-cache", "-o", "-"]);
            cmd.args(s.args).arg("--").args(&workload);
            stdout_to = Some(out_path.clone());
        }
        Mode::Stat => {
            cmd.args(["stat", "record", "-o", &out_name]);
            cmd.args(s.args).arg("--").args(&workload);
        }
        Mode::Inject { from } => {
            let src = crate::scenarios::by_name(from).context("inject source")?;
            let src_path = dir.join(src.file_name());
            if !src_path.exists() {
                return Ok(Recorded::Skipped(format!(
                    "source scenario {from} not recorded"
                )));
            }
            cmd.arg("inject").args(s.args);
            cmd.args(["-i", &src.file_name(), "-o", &out_name]);
        }
        Mode::InjectPipe { from } => {
            let src = crate::scenarios::by_name(from).context("inject source")?;
            let src_path = dir.join(src.file_name());
            if !src_path.exists() {
                return Ok(Recorded::Skipped(format!(
                    "source scenario {from} not recorded"
                )));
            }
            cmd.arg("inject")
                .args(s.args)
                .args(["-i", "-", "-o", &out_name]);
            cmd.stdin(File::open(&src_path)?);
        }
    }
    match &stdout_to {
        Some(p) => cmd.stdout(File::create(p)?),
        None => cmd.stdout(Stdio::null()),
    };
    cmd.stderr(Stdio::piped());
    let out = cmd
        .output()
        .with_context(|| format!("running perf for {}", s.name))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_dir_all(&out_path);
        return Ok(Recorded::Skipped(format!(
            "perf cannot record it here: {}",
            last_line(&out.stderr)
        )));
    }
    if !out_path.exists() {
        bail!("{}: perf succeeded but wrote no {}", s.name, out_name);
    }
    Ok(Recorded::Path(out_path))
}

/// Output of one perf run that must succeed.
fn run_text(mut cmd: Command, what: &str) -> Result<String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = cmd.output().with_context(|| format!("running {what}"))?;
    if !out.status.success() {
        bail!("{what} failed: {}", last_line(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn split(path: &Path) -> Result<(PathBuf, String)> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = path
        .file_name()
        .context("a file name")?
        .to_string_lossy()
        .into_owned();
    Ok((dir, name))
}

/// `perf report --header-only -I -i FILE`.
pub fn perf_header(path: &Path) -> Result<String> {
    let (dir, name) = split(path)?;
    let mut c = perf(&dir);
    c.args(["report", "--header-only", "-I", "-i", &name]);
    run_text(c, "perf report --header-only -I")
}

/// `perf report -D -i FILE`.
pub fn perf_dump(path: &Path) -> Result<String> {
    let (dir, name) = split(path)?;
    let mut c = perf(&dir);
    c.args(["report", "-D", "-i", &name]);
    run_text(c, "perf report -D")
}

/// `perf script -i FILE ARGS`.
pub fn perf_script(path: &Path, args: &[String]) -> Result<String> {
    let (dir, name) = split(path)?;
    let mut c = perf(&dir);
    c.args(["script", "-i", &name]).args(args);
    run_text(c, &format!("perf script {}", args.join(" ")))
}

/// One perf run whose failure is a result, not an error: its exit status and both outputs.
#[derive(Debug, Clone)]
pub struct PerfRun {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl PerfRun {
    /// The last non-empty line perf printed on stderr (its error, usually).
    pub fn last_error(&self) -> String {
        last_line(self.stderr.as_bytes())
    }
}

/// `perf ARGS -i FILE` (ARGS start with the subcommand), keeping stdout and stderr.
pub fn perf_run(path: &Path, args: &[String]) -> Result<PerfRun> {
    let (dir, name) = split(path)?;
    let mut c = perf(&dir);
    let (sub, rest) = args.split_first().context("a perf subcommand")?;
    c.arg(sub).args(["-i", &name]).args(rest);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = c
        .output()
        .with_context(|| format!("running perf {}", args.join(" ")))?;
    Ok(PerfRun {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}
