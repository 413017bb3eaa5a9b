//! The system tools a test needs, probed where the test runs.
//!
//! A test that needs a tool calls [`require_tools`] first. Where every tool is usable it
//! returns `true`. Where one is not, the test is skipped on a developer's machine: one
//! line on standard error, `SKIP <test>: gcc -m32 unavailable (…; Debian: gcc-multilib)`,
//! and the test returns (and passes). With `PERFDATA_TOOLS_REQUIRED=1` in the environment
//! (`.ci/run` sets it) a missing tool fails the test instead, so that CI skips nothing.
//!
//! A probe finds its program through the `PATH`, as the test then runs it, and does what
//! the test needs of it: `gcc -m32` compiles, links and runs a program; `perf record`
//! records one. Each probe runs once per test binary.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The environment variable that turns a missing tool from a skip into a failure.
pub const REQUIRED: &str = "PERFDATA_TOOLS_REQUIRED";

/// A system tool (or library) some test needs, and how to tell that it is usable here.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// What the skip line names: `perf record`, `gcc -m32`.
    pub name: &'static str,
    /// What provides it: Debian packages, or the command that installs it.
    pub provided_by: &'static str,
    /// `Ok` when usable; else why not, in a few words.
    pub probe: fn() -> Result<(), String>,
}

/// `perf` runs (it reads recordings).
pub const PERF: Tool = Tool {
    name: "perf",
    provided_by: "Debian: linux-perf",
    probe: || runs("perf", &["--version"]),
};

/// `perf record` records a program here (perf installed, and perf_event_paranoid or the
/// user's privileges allow it).
pub const PERF_RECORD: Tool = Tool {
    name: "perf record",
    provided_by: "Debian: linux-perf; and kernel.perf_event_paranoid <= 2 or root",
    probe: perf_records,
};

/// `gcc` compiles, links and runs a C program.
pub const GCC: Tool = Tool {
    name: "gcc",
    provided_by: "Debian: gcc",
    probe: || compiles_and_runs("gcc", "probe.c", C_PROGRAM, &[]),
};

/// `gcc -m32` compiles, links and runs a 32-bit x86 program.
pub const GCC_M32: Tool = Tool {
    name: "gcc -m32",
    provided_by: "Debian: gcc-multilib",
    probe: || compiles_and_runs("gcc", "probe.c", C_PROGRAM, &["-m32"]),
};

/// `g++` compiles, links and runs a C++ program using the standard library.
pub const GXX: Tool = Tool {
    name: "g++",
    provided_by: "Debian: g++",
    probe: || {
        compiles_and_runs(
            "g++",
            "probe.cpp",
            "#include <vector>\nint main() { std::vector<int> v{0}; return v[0]; }\n",
            &[],
        )
    },
};

/// binutils' `c++filt`, `nm` and `readelf`.
pub const BINUTILS: Tool = Tool {
    name: "binutils (c++filt, nm, readelf)",
    provided_by: "Debian: binutils",
    probe: || {
        ["c++filt", "nm", "readelf"]
            .iter()
            .try_for_each(|t| runs(t, &["--version"]))
    },
};

/// gperftools' CPU profiler: a C program linked with `-lprofiler` runs.
pub const LIBPROFILER: Tool = Tool {
    name: "gcc -lprofiler",
    provided_by: "Debian: gcc, libgoogle-perftools-dev",
    probe: || {
        compiles_and_runs(
            "gcc",
            "probe.c",
            C_PROGRAM,
            &["-Wl,--no-as-needed", "-lprofiler"],
        )
    },
};

/// elfutils' debuginfod server.
pub const DEBUGINFOD: Tool = Tool {
    name: "debuginfod",
    provided_by: "Debian: debuginfod",
    probe: || runs("debuginfod", &["--version"]),
};

/// Node.js.
pub const NODE: Tool = Tool {
    name: "node",
    provided_by: "Debian: nodejs",
    probe: || runs("node", &["--version"]),
};

/// A Chromium the browser checks can start ([`chromium`]).
pub const CHROMIUM: Tool = Tool {
    name: "chromium",
    provided_by: "Debian: chromium; or PERFDATA_CHROMIUM=/path/to/chromium",
    probe: || {
        let path = chromium().ok_or("not on the PATH and PERFDATA_CHROMIUM is not set")?;
        runs(
            path.to_str().ok_or("its path is not UTF-8")?,
            &["--version"],
        )
    },
};

/// `tar` lists a gzip archive.
pub const TAR: Tool = Tool {
    name: "tar",
    provided_by: "Debian: tar",
    probe: || runs("tar", &["--version"]),
};

const C_PROGRAM: &str = "int main(void) { return 0; }\n";

/// The browser the browser checks drive: `$PERFDATA_CHROMIUM`, else `chromium` on the
/// `PATH`.
pub fn chromium() -> Option<PathBuf> {
    match std::env::var_os("PERFDATA_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)),
        None => which("chromium"),
    }
}

/// Where `program` is on the `PATH` (an executable file), as `execvp` would find it.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && executable(&m)))
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

/// Whether a missing tool fails the test (`PERFDATA_TOOLS_REQUIRED` set, and not to `0`).
pub fn required() -> bool {
    std::env::var_os(REQUIRED).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether every tool of `tools` is usable here. If one is not: under
/// `PERFDATA_TOOLS_REQUIRED`, a panic naming what is missing; otherwise one `SKIP` line
/// naming each missing tool, why, and what provides it, and `false` (the test returns).
pub fn require_tools(tools: &[Tool]) -> bool {
    require(None, tools)
}

/// [`require_tools`] for one part of a test, named in the `SKIP` line: the test leaves out
/// that part and goes on with the rest.
pub fn require_tools_for(part: &str, tools: &[Tool]) -> bool {
    require(Some(part), tools)
}

fn require(part: Option<&str>, tools: &[Tool]) -> bool {
    let test = match part {
        Some(part) => format!("{} ({part})", test_name()),
        None => test_name(),
    };
    match missing(tools) {
        None => true,
        Some(what) => {
            assert!(!required(), "{REQUIRED} is set, and {test} needs: {what}");
            write_skip(&test, &what);
            false
        }
    }
}

/// What of `tools` is unusable here, and why, in one line; `None` when all are usable.
fn missing(tools: &[Tool]) -> Option<String> {
    let missing: Vec<String> = tools
        .iter()
        .filter_map(|t| {
            probe(t)
                .err()
                .map(|why| format!("{} unavailable ({why}; {})", t.name, t.provided_by))
        })
        .collect();
    (!missing.is_empty()).then(|| missing.join("; "))
}

/// Says on standard error that the running test leaves something out, and why:
/// `SKIP <test>: <why>`.
pub fn skip(why: &str) {
    write_skip(&test_name(), why);
}

/// Written to the process's standard error, not through `eprintln!`, which the test
/// harness captures (and shows only for a failed test): a skip is shown by every
/// `cargo test`.
fn write_skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "SKIP {test}: {why}");
}

/// The running test's name: the test harness runs each test on a thread named after it.
fn test_name() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => "a test".to_string(),
    }
}

/// The probe's outcome for `tool`, probed once per process.
fn probe(tool: &Tool) -> Result<(), String> {
    static DONE: Mutex<BTreeMap<&'static str, Result<(), String>>> = Mutex::new(BTreeMap::new());
    // Held during the probe: a test that waits for another's probe of the same tool
    // takes its outcome instead of probing again.
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    done.entry(tool.name).or_insert_with(tool.probe).clone()
}

/// `program ARGS` runs and succeeds.
pub(crate) fn runs(program: &str, args: &[&str]) -> Result<(), String> {
    run(Command::new(program).args(args), program)
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{} is not on the PATH", cmd.get_program().to_string_lossy())
        } else {
            format!("{what}: {e}")
        }
    })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The compiler's or tool's own first error says what is missing.
    let first = stderr
        .lines()
        .find(|l| l.contains("error") || l.contains("cannot"))
        .or_else(|| stderr.lines().next())
        .unwrap_or("")
        .trim();
    Err(format!("{what} failed, {}: {first}", out.status))
}

/// `compiler SOURCE -o probe FLAGS` builds `text`, and the program runs.
fn compiles_and_runs(compiler: &str, file: &str, text: &str, flags: &[&str]) -> Result<(), String> {
    let dir = scratch()?;
    let src = dir.path().join(file);
    let bin = dir.path().join("probe");
    std::fs::write(&src, text).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut what = format!("{compiler} {file}");
    for f in flags {
        what = what + " " + f;
    }
    run(
        Command::new(compiler)
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .args(flags),
        &what,
    )?;
    run(&mut Command::new(&bin), "the program it built")
}

/// `perf record` of a short program (`perf --version`: found wherever perf is) succeeds.
fn perf_records() -> Result<(), String> {
    runs("perf", &["--version"])?;
    let dir = scratch()?;
    let out = dir.path().join("probe.data");
    // -N: no build-id cache entry in the user's ~/.debug for the probe.
    run(
        Command::new("perf")
            .args(["record", "-q", "-N", "-o"])
            .arg(&out)
            .args(["--", "perf", "--version"])
            .current_dir(dir.path()),
        "perf record",
    )
}

fn scratch() -> Result<tempfile::TempDir, String> {
    tempfile::tempdir().map_err(|e| format!("a scratch directory: {e}"))
}

/// Whether `path` names an existing file (for probes of files a test needs, like npm
/// packages installed beside a test).
pub fn exists(path: &Path) -> Result<(), String> {
    if path.exists() {
        Ok(())
    } else {
        Err(format!("{} is absent", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABSENT: Tool = Tool {
        name: "absent-tool",
        provided_by: "nothing",
        probe: || runs("perfdata-test-support-no-such-program", &["--version"]),
    };

    const FAILING: Tool = Tool {
        name: "failing-tool",
        provided_by: "nothing",
        probe: || {
            compiles_and_runs(
                "perfdata-test-support-no-such-cc",
                "probe.c",
                C_PROGRAM,
                &[],
            )
        },
    };

    const PRESENT: Tool = Tool {
        name: "present-tool",
        provided_by: "nothing",
        probe: || Ok(()),
    };

    #[test]
    fn a_missing_program_is_named_with_what_provides_it() {
        assert_eq!(missing(&[PRESENT]), None);
        let why = missing(&[PRESENT, ABSENT, FAILING]).expect("two are missing");
        assert_eq!(
            why,
            "absent-tool unavailable (perfdata-test-support-no-such-program is not on the \
             PATH; nothing); failing-tool unavailable (perfdata-test-support-no-such-cc is \
             not on the PATH; nothing)"
        );
    }

    #[test]
    fn a_program_that_fails_says_its_first_error() {
        // `sh` is on every Unix machine.
        let why = runs(
            "sh",
            &["-c", "echo first >&2; echo 'error: second' >&2; exit 3"],
        )
        .expect_err("exits 3");
        assert_eq!(why, "sh failed, exit status: 3: error: second");
        assert_eq!(runs("sh", &["-c", "exit 0"]), Ok(()));
    }

    #[test]
    fn which_finds_executables_on_the_path_only() {
        let sh = which("sh").expect("sh on the PATH");
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(which("perfdata-test-support-no-such-program"), None);
    }
}
