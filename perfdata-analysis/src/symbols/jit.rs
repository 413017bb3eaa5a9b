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
//!
//! A load preceded by JIT_CODE_UNWINDING_INFO carries its `.eh_frame`: `--call-graph
//! dwarf` stacks are unwound through that code with it, as perf unwinds through the
//! `jitted-PID-N.so` that `perf inject --jit` writes it into.

use crate::stack::unwind::UnwindTables;
use perfdata::jitdump::types::{JitFlags, RecordBody};
use perfdata::jitdump::JitDump;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Table bytes shared by the loads (and moves) that use them.
type Bytes = Arc<[u8]>;

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
    /// Its unwinding tables, from the JIT_CODE_UNWINDING_INFO before its load.
    pub unwinding: Option<JitUnwinding>,
}

/// The DWARF unwinding tables a jitdump gives one function's code (JIT_CODE_UNWINDING_INFO,
/// which applies to the next CODE_LOAD). The producer lays them out right after the code,
/// `.eh_frame` from the code's start plus its size rounded up to 8 bytes, `.eh_frame_hdr`
/// after it — V8's `EhFrameWriter` encodes its pc-relative pointers so, and `perf inject
/// --jit` places the sections of its `jitted-PID-N.so` so (`genelf.c`).
#[derive(Debug, Clone)]
pub struct JitUnwinding {
    /// `.eh_frame`.
    pub eh_frame: Arc<[u8]>,
    /// `.eh_frame_hdr` (may be empty: `.eh_frame` is then searched whole).
    pub eh_frame_hdr: Arc<[u8]>,
    /// The code is 32-bit (the jitdump's `elf_mach` is i386 or arm).
    pub is_32: bool,
    /// The tables placed after the code, as the unwinders read them (built once, when
    /// checked against the load).
    pub(crate) placed: Arc<UnwindTables>,
}

/// The tables as the jitdump gives them (`placed` follows from them and the load).
impl PartialEq for JitUnwinding {
    fn eq(&self, other: &Self) -> bool {
        (&self.eh_frame, &self.eh_frame_hdr, self.is_32)
            == (&other.eh_frame, &other.eh_frame_hdr, other.is_32)
    }
}

impl Eq for JitUnwinding {}

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
        // EM_386, EM_ARM: the tables' addresses are 4 bytes wide.
        let is_32 = matches!(dump.header.elf_mach, 3 | 40);
        let mut by_index: HashMap<u64, (String, Option<JitUnwinding>)> = HashMap::new();
        let mut loads = vec![];
        // The tables of the next code load (perf's `jit_repipe_unwinding_info` keeps them
        // for it alone): `.eh_frame`, `.eh_frame_hdr`.
        let mut next_tables: Option<(Bytes, Bytes)> = None;
        let mut bad_tables = 0usize;
        let mut misplaced: Vec<String> = vec![];
        for r in &dump.records {
            let time = r.timestamp;
            let (index, start, size, name, unwinding) = match &r.body {
                RecordBody::UnwindingInfo(u) => {
                    next_tables = None;
                    let data: &[u8] = &u.unwinding_data;
                    // `.eh_frame` first, `.eh_frame_hdr` at the end (genelf.c's
                    // `jit_add_eh_frame_info`); V8 writes a header alone for code it has
                    // no tables for.
                    let Some(split) = usize::try_from(u.eh_frame_hdr_size)
                        .ok()
                        .and_then(|h| data.len().checked_sub(h))
                    else {
                        bad_tables += 1;
                        continue;
                    };
                    if split > 0 {
                        next_tables = Some((data[..split].into(), data[split..].into()));
                    }
                    continue;
                }
                RecordBody::CodeLoad(c) => {
                    let name = c.name.to_str_lossy().into_owned();
                    // Tables that describe no code at the load's start were laid out
                    // otherwise than the format says: unwinding with them would be wrong.
                    let tables = next_tables.take().and_then(|(eh_frame, eh_frame_hdr)| {
                        let placed = UnwindTables::jitted(
                            c.code_size,
                            eh_frame.clone(),
                            eh_frame_hdr.clone(),
                            is_32,
                        );
                        if !placed.eh_frame_covers(0) {
                            misplaced.push(name.clone());
                            return None;
                        }
                        Some(JitUnwinding {
                            eh_frame,
                            eh_frame_hdr,
                            is_32,
                            placed: Arc::new(placed),
                        })
                    });
                    by_index.insert(c.code_index, (name.clone(), tables.clone()));
                    (c.code_index, c.code_addr, c.code_size, name, tables)
                }
                RecordBody::CodeMove(m) => {
                    let Some((name, tables)) = by_index.get(&m.code_index) else {
                        continue;
                    };
                    let (name, tables) = (name.clone(), tables.clone());
                    (m.code_index, m.new_code_addr, m.code_size, name, tables)
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
                unwinding,
            });
        }
        if let Some(first) = misplaced.first() {
            self.notes.push(format!(
                "{}: the unwinding tables of {} code load(s) (the first: {first}) describe no code at the load's address, so they are not used (.eh_frame is expected after the code, at its size rounded up to 8)",
                path.display(),
                misplaced.len()
            ));
        }
        if bad_tables > 0 {
            self.notes.push(format!(
                "{}: {bad_tables} JIT_CODE_UNWINDING_INFO records say their .eh_frame_hdr is longer than all their tables: not used",
                path.display()
            ));
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
