//! The test programs of `conformance/programs/`, recorded by the unwinding scenarios
//! (`--call-graph dwarf`): built into the run's work directory, without frame pointers,
//! with the system compilers (gcc, g++, rustc).
//!
//! Each runs a fixed amount of work (~0.3 s of CPU: a few hundred samples at `-F 2000`),
//! through functions named so that a call graph is recognisable.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// How a program is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// `gcc -O2 -g -fomit-frame-pointer -pthread`.
    C,
    /// `g++ -O2 -g -fomit-frame-pointer`.
    Cxx,
    /// `gcc -m32 -O2 -g -fomit-frame-pointer -pthread`: a 32-bit x86 task (gcc-multilib).
    C32,
    /// `rustc --edition 2021 -C opt-level=3 -C debuginfo=1` (rustc's default: no frame
    /// pointers).
    Rust,
}

/// A source file of `conformance/programs/`: its name and text.
#[derive(Debug, PartialEq, Eq)]
pub struct Source {
    pub file: &'static str,
    pub text: &'static str,
}

/// A shared library built before the program and linked into it
/// (`-L. -l<name> -Wl,-rpath,<work dir>`).
#[derive(Debug, PartialEq, Eq)]
pub struct Library {
    /// Built as `lib<name>.so`.
    pub name: &'static str,
    /// C, `gcc -O2 -g -fomit-frame-pointer -fPIC -shared`.
    pub source: Source,
}

/// One program.
#[derive(Debug, PartialEq, Eq)]
pub struct Program {
    /// The executable's name in the work directory.
    pub name: &'static str,
    pub lang: Lang,
    pub source: Source,
    pub library: Option<Library>,
}

macro_rules! source {
    ($file:literal) => {
        Source {
            file: $file,
            text: include_str!(concat!("../programs/", $file)),
        }
    };
}

/// C without frame pointers: main → top → mid_a | mid_b → leaf (→ mix, inlined).
pub static DWARF_C: Program = Program {
    name: "dwarf_c",
    lang: Lang::C,
    source: source!("dwarf_c.c"),
    library: None,
};

/// The C program as a 32-bit x86 task: its samples carry ABI_32 registers, unwound with
/// the i386 CFI of the 32-bit objects.
pub static DWARF_I686: Program = Program {
    name: "dwarf_i686",
    lang: Lang::C32,
    source: source!("dwarf_c.c"),
    library: None,
};

/// C++: std::vector, std::map, std::sort with a lambda, exceptions thrown and caught on
/// the hot path (libstdc++, libgcc_s).
pub static DWARF_CPP: Program = Program {
    name: "dwarf_cpp",
    lang: Lang::Cxx,
    source: source!("dwarf_cpp.cpp"),
    library: None,
};

/// Two threads in libc's qsort, calling back into the program's comparison function.
pub static QSORT_THREADS: Program = Program {
    name: "qsort_threads",
    lang: Lang::C,
    source: source!("qsort_threads.c"),
    library: None,
};

/// Recursion 70-110 levels deep (10-16 KiB of stack): deeper than the default 8 KiB
/// user stack copy.
pub static DEEP_RECURSION: Program = Program {
    name: "deep_recursion",
    lang: Lang::C,
    source: source!("deep_recursion.c"),
    library: None,
};

/// A Rust release binary: iterator adaptors and closures inlined, a sort by closure.
pub static RUST_RELEASE: Program = Program {
    name: "rust_release",
    lang: Lang::Rust,
    source: source!("rust_release.rs"),
    library: None,
};

/// The hot code in a shared library of ours (libhot.so), which calls back into the
/// program.
pub static SOLIB: Program = Program {
    name: "solib_main",
    lang: Lang::C,
    source: source!("solib_main.c"),
    library: Some(Library {
        name: "hot",
        source: source!("solib_hot.c"),
    }),
};

/// A signal handler doing work (stacks through the signal frame into the interrupted
/// code) and clock_gettime in the vdso.
pub static SIGNAL_VDSO: Program = Program {
    name: "signal_vdso",
    lang: Lang::C,
    source: source!("signal_vdso.c"),
    library: None,
};

/// Off the CPU three ways (the off-CPU scenario): sleeping, blocked reading a pipe,
/// waiting for a mutex; two threads, ~0.25 s, little CPU.
pub static OFF_CPU: Program = Program {
    name: "off_cpu",
    lang: Lang::C,
    source: source!("off_cpu.c"),
    library: None,
};

/// C++ operators and lambdas inlined into their callers (inline frames' names).
pub static CPP_OPERATORS: Program = Program {
    name: "cpp_operators",
    lang: Lang::Cxx,
    source: source!("cpp_operators.cpp"),
    library: None,
};

/// Short-lived threads created and joined in a loop: new threads' first samples.
pub static THREAD_CHURN: Program = Program {
    name: "thread_churn",
    lang: Lang::C,
    source: source!("thread_churn.c"),
    library: None,
};

/// The perf sched scenarios' workloads: one source, the workload chosen by the
/// executable's name (`sched_workloads.c`).
pub static SCHED_PINGPONG: Program = Program {
    name: "sched_pingpong",
    lang: Lang::C,
    source: source!("sched_workloads.c"),
    library: None,
};

/// A producer and a consumer process over a pipe.
pub static SCHED_PIPE: Program = Program {
    name: "sched_pipe",
    lang: Lang::C,
    source: source!("sched_workloads.c"),
    library: None,
};

/// 50 short-lived threads.
pub static SCHED_THREADS: Program = Program {
    name: "sched_threads",
    lang: Lang::C,
    source: source!("sched_workloads.c"),
    library: None,
};

/// A task pinned to CPU 0, then moved to CPU 1.
pub static SCHED_PINNED: Program = Program {
    name: "sched_pinned",
    lang: Lang::C,
    source: source!("sched_workloads.c"),
    library: None,
};

/// Sleeping: usleep and nanosleep.
pub static SCHED_SLEEP: Program = Program {
    name: "sched_sleep",
    lang: Lang::C,
    source: source!("sched_workloads.c"),
    library: None,
};

/// Every program (`cargo test` checks that they build).
pub static ALL: &[&Program] = &[
    &OFF_CPU,
    &DWARF_C,
    &DWARF_I686,
    &DWARF_CPP,
    &QSORT_THREADS,
    &DEEP_RECURSION,
    &RUST_RELEASE,
    &SOLIB,
    &SIGNAL_VDSO,
    &CPP_OPERATORS,
    &THREAD_CHURN,
    &SCHED_PINGPONG,
    &SCHED_PIPE,
    &SCHED_THREADS,
    &SCHED_PINNED,
    &SCHED_SLEEP,
];

/// Flags of every C and C++ compilation: optimised, with DWARF, and no frame pointers
/// (the point of the unwinding scenarios).
const C_FLAGS: &[&str] = &["-O2", "-g", "-fomit-frame-pointer"];

fn run(cmd: &mut Command, what: &str, install: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {what} ({install}): {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{what} failed: {}",
            err.lines().take(3).collect::<Vec<_>>().join(" / ")
        ));
    }
    Ok(())
}

/// The compiler of a language (rustc: the one cargo runs, else the one on the PATH).
fn compiler(lang: Lang) -> (std::ffi::OsString, &'static str) {
    match lang {
        Lang::C => ("gcc".into(), "apt-get install gcc"),
        Lang::C32 => ("gcc".into(), "apt-get install gcc-multilib"),
        Lang::Cxx => ("g++".into(), "apt-get install g++"),
        Lang::Rust => (
            std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()),
            "a Rust toolchain",
        ),
    }
}

/// Builds `p` into `dir` (sources written beside it); the executable's path.
fn build_uncached(p: &Program, dir: &Path) -> Result<PathBuf, String> {
    let write = |s: &Source| -> Result<PathBuf, String> {
        let path = dir.join(s.file);
        std::fs::write(&path, s.text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    };
    if let Some(lib) = &p.library {
        let src = write(&lib.source)?;
        let (cc, install) = compiler(Lang::C);
        run(
            Command::new(&cc)
                .current_dir(dir)
                .args(C_FLAGS)
                .args(["-fPIC", "-shared", "-o"])
                .arg(format!("lib{}.so", lib.name))
                .arg(&src),
            &format!("building lib{}.so", lib.name),
            install,
        )?;
    }
    let src = write(&p.source)?;
    let out = dir.join(p.name);
    let (cc, install) = compiler(p.lang);
    let mut cmd = Command::new(&cc);
    cmd.current_dir(dir);
    match p.lang {
        Lang::C | Lang::Cxx | Lang::C32 => {
            cmd.args(C_FLAGS);
            if p.lang == Lang::C32 {
                cmd.arg("-m32");
            }
            if p.lang != Lang::Cxx {
                cmd.arg("-pthread");
            }
            cmd.arg("-o").arg(&out).arg(&src);
            if let Some(lib) = &p.library {
                cmd.arg("-L.")
                    .arg(format!("-l{}", lib.name))
                    .arg(format!("-Wl,-rpath,{}", dir.display()));
            }
        }
        Lang::Rust => {
            cmd.args([
                "--edition",
                "2021",
                "-C",
                "opt-level=3",
                "-C",
                "debuginfo=1",
            ]);
            cmd.arg("-o").arg(&out).arg(&src);
        }
    }
    run(&mut cmd, &format!("building {}", p.name), install)?;
    Ok(out)
}

/// Builds `p` into `dir` once per process (scenarios share programs); the executable's
/// path, or why it cannot be built here.
pub fn build(p: &'static Program, dir: &Path) -> Result<PathBuf, String> {
    type Cache = Mutex<HashMap<(PathBuf, &'static str), Result<PathBuf, String>>>;
    static BUILT: OnceLock<Cache> = OnceLock::new();
    let cache = BUILT.get_or_init(Cache::default);
    let key = (dir.to_path_buf(), p.name);
    if let Some(r) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return r.clone();
    }
    let r = build_uncached(p, dir);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, r.clone());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata_test_support::tools::{self, require_tools_for};

    /// Every program builds with the system compilers and runs to completion. A program
    /// whose compiler is missing here is skipped, saying so (a failure in CI, which sets
    /// `PERFDATA_TOOLS_REQUIRED`).
    #[test]
    fn programs_build_and_run() {
        let dir = tempfile::tempdir().unwrap();
        for p in ALL {
            let needs: &[tools::Tool] = match p.lang {
                Lang::C => &[tools::GCC],
                Lang::C32 => &[tools::GCC_M32],
                Lang::Cxx => &[tools::GXX],
                // The toolchain that builds this test.
                Lang::Rust => &[],
            };
            if !require_tools_for(p.name, needs) {
                continue;
            }
            let bin = build(p, dir.path()).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let out = Command::new(&bin).output().unwrap();
            assert!(out.status.success(), "{} failed: {out:?}", p.name);
        }
    }
}
