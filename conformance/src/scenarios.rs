//! The scenario matrix, as data: what to record and how. `record.rs` runs it.

use crate::programs::{self, Program};

/// How perf produces the file of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `perf record -o <name>.data ARGS -- WORKLOAD`.
    File,
    /// `perf record -o - ARGS -- WORKLOAD > <name>.pipe.data` (pipe layout).
    Pipe,
    /// `perf record --threads -o <name>.data ...`: a directory (`data`, `data.N`).
    Dir,
    /// `perf inject ARGS -i <from> -o <name>.data`, `from` being an earlier scenario.
    Inject { from: &'static str },
    /// `perf inject ARGS -i - -o <name>.data < <from>` (a pipe stream turned into a file).
    InjectPipe { from: &'static str },
    /// `perf stat record -o <name>.data ARGS -- WORKLOAD`.
    Stat,
}

/// The program perf runs (or watches) while recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A short CPU-bound loop in a child shell that also forks, execs and maps (`ls`):
    /// about 20-30 ms of CPU.
    Shell,
    /// `sleep 0.05`, for system-wide (`-a`) recordings.
    Sleep,
    /// A child shell moving bytes: `head` through a pipe to `cat` (reads and writes on
    /// several descriptors, writes that block), a read that fails (`cat /`: EISDIR), `ls`.
    Io,
    /// Nothing: `perf inject` reads an earlier scenario's file.
    None,
    /// A program of `conformance/programs/`, built into the work directory first
    /// (`programs::build`) and run from there.
    Program(&'static Program),
}

impl Workload {
    /// The command line (a program's: [`Workload::program`]).
    pub fn argv(self) -> &'static [&'static str] {
        match self {
            Workload::Shell => &[
                "sh",
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls / >/dev/null",
            ],
            Workload::Sleep => &["sleep", "0.05"],
            Workload::Io => &[
                "sh",
                "-c",
                "head -c 100000 /dev/zero | cat >/dev/null; cat / 2>/dev/null; ls / >/dev/null",
            ],
            Workload::None | Workload::Program(_) => &[],
        }
    }

    /// The program to build, for a [`Workload::Program`].
    pub fn program(self) -> Option<&'static Program> {
        match self {
            Workload::Program(p) => Some(p),
            _ => None,
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// Row name; also the fixture name (`conformance/fixtures/<name>.data`).
    pub name: &'static str,
    pub mode: Mode,
    /// perf arguments besides `-o` and the workload.
    pub args: &'static [&'static str],
    pub workload: Workload,
    /// What the scenario exercises.
    pub about: &'static str,
}

impl Scenario {
    /// Recorded with `--call-graph dwarf` (user registers and stack): the unwinding
    /// checks (10 unwind, 11 call graph, 12 unwound) run on it.
    pub fn unwinds(&self) -> bool {
        self.args
            .windows(2)
            .any(|w| w[0] == "--call-graph" && w[1].starts_with("dwarf"))
    }

    /// Recorded live only: no committed fixture (a program built in the run's work
    /// directory, whose symbols the checks read, and 5-50 MB recordings).
    pub fn live_only(&self) -> bool {
        self.workload.program().is_some()
    }

    /// The variants check 5 writes: all of them, except for the programs recorded with
    /// `--call-graph dwarf` (5-50 MB of user stacks, perf's `-D` text five times that),
    /// which get the copy-through and the other byte order only — their sample layout
    /// (user registers and stack) is the `dwarf` row's, which gets every variant.
    pub fn variants(&self) -> crate::variants::Variants {
        if self.live_only() && self.unwinds() {
            crate::variants::Variants::CopyAndByteOrder
        } else {
            crate::variants::Variants::All
        }
    }

    /// File (or directory) name of the recording.
    pub fn file_name(&self) -> String {
        match self.mode {
            Mode::Pipe => format!("{}.pipe.data", self.name),
            _ => format!("{}.data", self.name),
        }
    }
}

const fn file(
    name: &'static str,
    args: &'static [&'static str],
    workload: Workload,
    about: &'static str,
) -> Scenario {
    Scenario {
        name,
        mode: Mode::File,
        args,
        workload,
        about,
    }
}

/// The matrix of the issue, in recording order (inject scenarios read earlier files).
pub const SCENARIOS: &[Scenario] = &[
    file(
        "plain",
        &["-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "plain perf record; -F frequency mode",
    ),
    file(
        "callchain",
        &["-g", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "-g: frame-pointer callchains",
    ),
    file(
        "dwarf",
        &["--call-graph", "dwarf,512", "-e", "cpu-clock", "-F", "99"],
        Workload::Shell,
        "--call-graph dwarf: user regs + user stack",
    ),
    file(
        "multi-event",
        &["-e", "cpu-clock,task-clock", "-F", "499"],
        Workload::Shell,
        "several events: sample ids select the attr",
    ),
    file(
        "group-read",
        &["-e", "{cpu-clock,task-clock}:S"],
        Workload::Shell,
        "a group with group read (PERF_SAMPLE_READ, FORMAT_GROUP)",
    ),
    file(
        "sample-fields",
        &[
            "-T",
            "-d",
            "--sample-cpu",
            "--phys-data",
            "--data-page-size",
            "--code-page-size",
            "-e",
            "cpu-clock",
            "-F",
            "499",
        ],
        Workload::Shell,
        "time, addr, data_src, cpu, phys_addr, page sizes",
    ),
    file(
        "cgroups",
        &["--all-cgroups", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "CGROUP records and the CGROUP sample field",
    ),
    file(
        "switch-events",
        &["--switch-events", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "SWITCH records",
    ),
    file(
        "switch-cpu-wide",
        &["-a", "--switch-events", "-e", "cpu-clock", "-F", "499"],
        Workload::Sleep,
        "SWITCH_CPU_WIDE records (system-wide)",
    ),
    file(
        "namespaces",
        &["--namespaces", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "NAMESPACES records",
    ),
    file(
        "regs",
        &[
            "--user-regs=ax,bx,sp,ip",
            "--intr-regs=ax,sp,ip",
            "-e",
            "cpu-clock",
            "-F",
            "299",
        ],
        Workload::Shell,
        "REGS_USER and REGS_INTR",
    ),
    file(
        "tracepoint",
        &["-a", "-e", "sched:sched_switch"],
        Workload::Sleep,
        "a tracepoint with RAW samples, system-wide; TRACING_DATA",
    ),
    file(
        "syscalls",
        &[
            "-e",
            "raw_syscalls:sys_enter",
            "-e",
            "raw_syscalls:sys_exit",
            "-e",
            "syscalls:sys_enter_openat",
            "-e",
            "syscalls:sys_exit_openat",
            "-e",
            "sched:sched_wakeup",
            "-e",
            "sched:sched_switch",
        ],
        Workload::Shell,
        "system calls and scheduler tracepoints of one task: array, pointer, string fields",
    ),
    file(
        "wakeups",
        &["-a", "-e", "sched:sched_wakeup", "-e", "sched:sched_switch"],
        Workload::Sleep,
        "wakeups and the switches that run the woken threads, system-wide (wakeup_latency query)",
    ),
    file(
        "fd-io",
        &[
            "-e",
            "syscalls:sys_enter_read",
            "-e",
            "syscalls:sys_exit_read",
            "-e",
            "syscalls:sys_enter_write",
            "-e",
            "syscalls:sys_exit_write",
        ],
        Workload::Io,
        "read and write system calls of a pipe, files and a failing read (fd_bytes query)",
    ),
    file(
        "clock-mono",
        &["-k", "mono", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "-k mono: use_clockid, CLOCKID and CLOCK_DATA",
    ),
    file(
        "clock-tai",
        &["-k", "tai", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "-k tai",
    ),
    file(
        "period",
        &["-c", "100000", "-e", "cpu-clock"],
        Workload::Shell,
        "-c: fixed period",
    ),
    file(
        "compressed",
        &["-z", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "-z: COMPRESSED records (zstd)",
    ),
    file(
        "no-buildid",
        &["--no-buildid", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "--no-buildid: no BUILD_ID feature",
    ),
    file(
        "sample-identifier",
        &["--sample-identifier", "-e", "cpu-clock", "-F", "499"],
        Workload::Shell,
        "--sample-identifier: IDENTIFIER in samples and trailers",
    ),
    file(
        "page-faults",
        &["-e", "page-faults", "-c", "1"],
        Workload::Shell,
        "-e page-faults -c 1",
    ),
    Scenario {
        name: "threads",
        mode: Mode::Dir,
        args: &["--threads", "-e", "cpu-clock", "-F", "499"],
        workload: Workload::Shell,
        about: "--threads: directory with data.N streams",
    },
    Scenario {
        name: "pipe-callchain",
        mode: Mode::Pipe,
        args: &["-g", "-e", "cpu-clock", "-F", "499"],
        workload: Workload::Shell,
        about: "pipe mode (-o -) with -g: HEADER_ATTR, HEADER_FEATURE",
    },
    Scenario {
        name: "pipe-tracepoint",
        mode: Mode::Pipe,
        args: &["-a", "-e", "sched:sched_switch"],
        workload: Workload::Sleep,
        about: "pipe mode with a tracepoint: HEADER_TRACING_DATA",
    },
    Scenario {
        name: "inject-buildid",
        mode: Mode::Inject { from: "plain" },
        args: &["-b"],
        workload: Workload::None,
        about: "perf inject -b: HEADER_BUILD_ID records",
    },
    Scenario {
        name: "inject-pipe-to-file",
        mode: Mode::InjectPipe {
            from: "pipe-callchain",
        },
        args: &[],
        workload: Workload::None,
        about: "perf inject of a pipe into a file",
    },
    Scenario {
        name: "stat",
        mode: Mode::Stat,
        args: &["-e", "cpu-clock,task-clock"],
        workload: Workload::Shell,
        about: "perf stat record: STAT, STAT_ROUND, THREAD_MAP, CPU_MAP",
    },
    // Off-CPU time (issue 20): system-wide, so that every switch-in is seen; both sources
    // in one recording (check 15 compares them with perf sched timehist).
    file(
        "off-cpu",
        &["-a", "-g", "-e", "sched:sched_switch", "--switch-events"],
        Workload::Program(&programs::OFF_CPU),
        "a program sleeping, blocked on a pipe, waiting for a mutex: sched_switch samples with callchains and SWITCH_CPU_WIDE records",
    ),
    // The unwinding scenarios (issue 19): programs of conformance/programs/, built without
    // frame pointers, recorded with --call-graph dwarf.
    file(
        "dwarf-c",
        DWARF,
        Workload::Program(&programs::DWARF_C),
        "C without frame pointers, an inlined function on the hot path",
    ),
    file(
        "dwarf-i686",
        DWARF,
        Workload::Program(&programs::DWARF_I686),
        "the C program as a 32-bit x86 task (ABI_32 registers, i386 CFI)",
    ),
    file(
        "dwarf-cpp",
        DWARF,
        Workload::Program(&programs::DWARF_CPP),
        "C++: STL containers, std::sort, exceptions thrown and caught",
    ),
    file(
        "dwarf-qsort",
        DWARF,
        Workload::Program(&programs::QSORT_THREADS),
        "2 threads in libc's qsort calling back into the program",
    ),
    file(
        "dwarf-deep",
        DWARF,
        Workload::Program(&programs::DEEP_RECURSION),
        "recursion deeper than the 8 KiB stack copy (truncated stacks)",
    ),
    file(
        "dwarf-deep-64k",
        // 64 KiB per sample: at 300 Hz (~115 samples) the file is as large as the
        // others' at 2000 Hz.
        &[
            "-e",
            "cpu-clock",
            "-F",
            "300",
            "--call-graph",
            "dwarf,65528",
        ],
        Workload::Program(&programs::DEEP_RECURSION),
        "the same recursion, the largest stack copy (whole stacks; 64 KiB samples)",
    ),
    file(
        "dwarf-rust",
        DWARF,
        Workload::Program(&programs::RUST_RELEASE),
        "a Rust release binary (rustc -C opt-level=3 -C debuginfo=1)",
    ),
    file(
        "dwarf-solib",
        DWARF,
        Workload::Program(&programs::SOLIB),
        "the hot code in a shared library we build, calling back into the program",
    ),
    file(
        "dwarf-signal",
        DWARF,
        Workload::Program(&programs::SIGNAL_VDSO),
        "a signal handler's stacks through the signal frame; clock_gettime in the vdso",
    ),
    file(
        "dwarf-cpp-ops",
        DWARF,
        Workload::Program(&programs::CPP_OPERATORS),
        "C++ operators, conversion operators and lambdas inlined (inline frames' names)",
    ),
    file(
        "dwarf-threads",
        THREADS,
        Workload::Program(&programs::THREAD_CHURN),
        "short-lived threads: a new thread's first samples end at clone3",
    ),
];

/// The thread scenario samples at 10 kHz: a thread's first samples (in ret_from_fork,
/// a few microseconds) are rare.
const THREADS: &[&str] = &["-e", "cpu-clock", "-F", "10000", "--call-graph", "dwarf"];

/// perf's arguments of the unwinding scenarios: what the issue asks for (`cpu-clock` at
/// 2000 Hz, the default 8 KiB user stack copy).
const DWARF: &[&str] = &["-e", "cpu-clock", "-F", "2000", "--call-graph", "dwarf"];

/// The scenario of a given name.
pub fn by_name(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_inject_sources_come_first() {
        for (i, s) in SCENARIOS.iter().enumerate() {
            assert!(
                SCENARIOS[..i].iter().all(|o| o.name != s.name),
                "duplicate scenario {}",
                s.name
            );
            if let Mode::Inject { from } | Mode::InjectPipe { from } = s.mode {
                let at = SCENARIOS.iter().position(|o| o.name == from);
                assert!(
                    at.is_some_and(|at| at < i),
                    "{}: source {from} must be recorded before it",
                    s.name
                );
            }
        }
    }
}
