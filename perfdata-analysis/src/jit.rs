//! JIT code named from perf's jitdump files (`jit-PID.dump`), without `perf inject --jit`.
//!
//! A producer (Node.js `--perf-prof`, the JVM's libperf-jvmti, .NET, Wasmtime…) maps its
//! jitdump file executable once, so that the recording holds an MMAP of
//! `…/jit-PID.dump`: the marker `perf inject --jit` looks for. When the replay meets one,
//! the file is read — from the path recorded, else from beside the recording — and each
//! CODE_LOAD becomes a map of its code at its timestamp, named as `perf inject --jit`
//! names its ELF files (`jitted-PID-INDEX.so`, beside the jitdump) with one symbol, the
//! function's name; CODE_MOVE maps the same code at its new address. `--jitdump FILE`
//! names files to read whatever the recording maps.
//!
//! The loads are applied in time order with the records, which needs the recording's
//! clock to be the producer's: as `perf inject --jit`, a jitdump is used only when every
//! event was recorded with `perf record -k mono` (CLOCK_MONOTONIC), and not when its
//! timestamps are cycle counts (`JITDUMP_FLAGS_ARCH_TIMESTAMP`, which perf converts with
//! the TIME_CONV feature: not done here). [`JitDumps::notes`] says why a file was not
//! used.

use perfdata::jitdump::types::{JitFlags, RecordBody};
use perfdata::jitdump::JitDump;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// One function's code in a process, from a CODE_LOAD (or CODE_MOVE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitCode {
    /// When it was loaded (the producer's clock).
    pub time: u64,
    /// The process.
    pub pid: i32,
    /// Its first address.
    pub start: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The function's name.
    pub name: String,
    /// What `perf inject --jit` calls its file: `DIR/jitted-PID-INDEX.so`, DIR being the
    /// jitdump's.
    pub dso: String,
    /// The jitdump it comes from.
    pub jitdump: String,
}

/// The jitdump files of a replay and the code loads still to apply.
#[derive(Debug, Default)]
pub struct JitDumps {
    /// Files given by the user (`--jitdump`), read before the first record.
    given: Vec<PathBuf>,
    /// The recording's directory (a marker's file is also looked for there).
    beside: Option<PathBuf>,
    /// The recording's clock is CLOCK_MONOTONIC, the producers'.
    monotonic: bool,
    /// Loads not applied yet, by time.
    pending: VecDeque<JitCode>,
    /// Processes whose jitdump was read (one file per process).
    read: BTreeSet<u32>,
    /// What a user should know: files not found, cut short, clocks that differ.
    notes: Vec<String>,
}

/// The pid of a jitdump marker's file name, `jit-PID.dump`.
pub fn marker_pid(filename: &str) -> Option<u32> {
    let name = filename.rsplit('/').next()?;
    name.strip_prefix("jit-")?
        .strip_suffix(".dump")?
        .parse()
        .ok()
}

impl JitDumps {
    /// `given`: files to read in any case; `recording`: the recording's path (a marker's
    /// file is looked for beside it); `monotonic`: every event of the recording was timed
    /// on CLOCK_MONOTONIC, the producers' clock (their attrs' `clockid`).
    pub fn new(given: &[PathBuf], recording: &Path, monotonic: bool) -> Self {
        JitDumps {
            given: given.to_vec(),
            beside: recording.parent().map(Path::to_path_buf),
            monotonic,
            ..JitDumps::default()
        }
    }

    /// Starts a replay: nothing read, nothing pending; the given files are read.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.read.clear();
        self.notes.clear();
        for p in self.given.clone() {
            self.read_file(&p, None);
        }
    }

    /// Whether there is any load to apply (the replay's hot loop asks this first).
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The next load due at `time`, the timestamp of the record about to be replayed.
    pub fn next_due(&mut self, time: u64) -> Option<JitCode> {
        if self.pending.front()?.time <= time {
            self.pending.pop_front()
        } else {
            None
        }
    }

    /// Every load not applied yet, by time.
    pub fn take_all(&mut self) -> Vec<JitCode> {
        self.pending.drain(..).collect()
    }

    /// An MMAP of `filename` in process `pid` was replayed: a jitdump marker's file is
    /// read (once per process).
    pub fn on_mmap(&mut self, pid: i32, filename: &str) {
        let Some(marker) = marker_pid(filename) else {
            return;
        };
        if self.read.contains(&marker) {
            return;
        }
        let recorded = Path::new(filename);
        let beside = self
            .beside
            .as_ref()
            .and_then(|d| Some(d.join(recorded.file_name()?)));
        let found = std::iter::once(recorded.to_path_buf())
            .chain(beside)
            .find(|p| p.is_file());
        match found {
            Some(p) => self.read_file(&p, Some(pid)),
            None => {
                self.read.insert(marker);
                self.notes.push(format!(
                    "{filename}: not found (nor beside the recording); pass it with --jitdump"
                ));
            }
        }
    }

    /// What a user should know about the jitdumps of the last replay.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    fn read_file(&mut self, path: &Path, pid: Option<i32>) {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                self.notes.push(format!("{}: {e}", path.display()));
                return;
            }
        };
        let (dump, cut) = match JitDump::parse_partial(&bytes) {
            Ok(d) => d,
            Err(e) => {
                self.notes.push(format!("{}: {e}", path.display()));
                return;
            }
        };
        if let Some(e) = cut {
            self.notes.push(format!(
                "{}: {e} (the code loads before it are used)",
                path.display()
            ));
        }
        if !self.read.insert(dump.header.pid) {
            return;
        }
        if !self.monotonic {
            self.notes.push(format!(
                "{}: not used: the recording's clock is not CLOCK_MONOTONIC, the JIT's (record with `perf record -k mono`, as `perf inject --jit` requires)",
                path.display()
            ));
            return;
        }
        if dump.header.flags.0 & JitFlags::ARCH_TIMESTAMP.0 != 0 {
            self.notes.push(format!(
                "{}: not used: its timestamps are cycle counts (JITDUMP_FLAGS_ARCH_TIMESTAMP), which perfdata does not convert",
                path.display()
            ));
            return;
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let pid = pid.unwrap_or(dump.header.pid as i32);
        let mut by_index: HashMap<u64, (String, u64)> = HashMap::new();
        let mut loads = vec![];
        for r in &dump.records {
            let time = r.timestamp;
            let (index, start, size, name) = match &r.body {
                RecordBody::CodeLoad(c) => {
                    let name = c.name.to_str_lossy().into_owned();
                    by_index.insert(c.code_index, (name.clone(), c.code_size));
                    (c.code_index, c.code_addr, c.code_size, name)
                }
                RecordBody::CodeMove(m) => {
                    let Some((name, _)) = by_index.get(&m.code_index) else {
                        continue;
                    };
                    (m.code_index, m.new_code_addr, m.code_size, name.clone())
                }
                _ => continue,
            };
            if size == 0 {
                continue;
            }
            loads.push(JitCode {
                time,
                pid,
                start,
                size,
                name,
                dso: dir
                    .join(format!("jitted-{pid}-{index}.so"))
                    .to_string_lossy()
                    .into_owned(),
                jitdump: path.to_string_lossy().into_owned(),
            });
        }
        // Stable: loads of one time stay in file order (a later one replaces an earlier).
        let mut all: Vec<JitCode> = self.pending.drain(..).chain(loads).collect();
        all.sort_by_key(|c| c.time);
        self.pending = all.into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_a_file_named_jit_pid_dump() {
        assert_eq!(marker_pid("/tmp/x/jit-30572.dump"), Some(30572));
        assert_eq!(marker_pid("jit-1.dump"), Some(1));
        assert_eq!(marker_pid("/tmp/jit-.dump"), None);
        assert_eq!(marker_pid("/tmp/jit-12.dump.bak"), None);
        assert_eq!(marker_pid("/tmp/perf-12.map"), None);
    }
}
