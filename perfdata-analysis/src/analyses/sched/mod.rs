//! The scheduler's story, as `perf sched` tells it: `timehist` (each switch with the
//! task's wait time, scheduling delay and run time), `latency` (per task: run time,
//! switches, average and maximum delay from wakeup to run) and `map` (which task each
//! CPU runs, one line per switch), from `perf sched record` recordings (or `perf record
//! -e 'sched:*'`): the `sched:sched_switch`, `sched_wakeup`, `sched_waking`,
//! `sched_wakeup_new`, `sched_migrate_task` and `sched_stat_runtime` tracepoints, read
//! through the recording's own event formats (no libtraceevent).
//!
//! The text is perf 6.1's byte for byte, so the state kept is perf's: perf sched names a
//! task by perf's thread table (a thread is created on first sight with the pid it was
//! asked for, a FORK of a known tid moves the old thread aside, EXIT marks it dead; the
//! summaries walk the table in perf's order), which the module replays from the
//! side-band records. Memory grows with the tasks and CPUs, never with the events: every
//! view streams its lines into a `Write` as the replay goes.
//!
//! [`timehist`] also yields the intervals as rows ([`timehist::Interval`]); `table`
//! makes them the `sched_intervals` Arrow table (feature `arrow`).

pub mod latency;
pub mod map;
#[cfg(feature = "arrow")]
pub mod table;
pub mod timehist;

use crate::AnalysisError as Error;
use crate::{Analyzer, Machine, Replayed, SampleInfo};
use perfdata::tracepoint::{field_value, read_uint, FieldValue, Format, Formats};
use perfdata::types::{RecordBody, RecordType, SampleType};
use perfdata::Endianness;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;

/// The sched tracepoints perf sched handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Switch,
    Wakeup,
    Waking,
    WakeupNew,
    Migrate,
    StatRuntime,
    Other,
}

impl Kind {
    fn of(name: &str) -> Kind {
        match name {
            "sched:sched_switch" => Kind::Switch,
            "sched:sched_wakeup" => Kind::Wakeup,
            "sched:sched_waking" => Kind::Waking,
            "sched:sched_wakeup_new" => Kind::WakeupNew,
            "sched:sched_migrate_task" => Kind::Migrate,
            "sched:sched_stat_runtime" => Kind::StatRuntime,
            _ => Kind::Other,
        }
    }
}

/// The fields of the sched tracepoints a view reads as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    PrevPid,
    NextPid,
    PrevState,
    Pid,
    Runtime,
    OrigCpu,
    DestCpu,
}

impl Field {
    const ALL: [Field; 7] = [
        Field::PrevPid,
        Field::NextPid,
        Field::PrevState,
        Field::Pid,
        Field::Runtime,
        Field::OrigCpu,
        Field::DestCpu,
    ];

    fn name(self) -> &'static str {
        match self {
            Field::PrevPid => "prev_pid",
            Field::NextPid => "next_pid",
            Field::PrevState => "prev_state",
            Field::Pid => "pid",
            Field::Runtime => "runtime",
            Field::OrigCpu => "orig_cpu",
            Field::DestCpu => "dest_cpu",
        }
    }
}

/// Where one event's fields are, found once per event rather than by name per sample.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields {
    /// Offset and size of each [`Field`] that `field_value` reads as one integer
    /// (`None`: absent, or not a scalar of 1, 2, 4 or 8 bytes, which perf reads as 0).
    ints: [Option<(usize, usize)>; Field::ALL.len()],
    /// `next_comm`.
    next_comm: Option<perfdata::tracepoint::Field>,
}

impl Fields {
    fn of(format: Option<&Format>) -> Fields {
        let mut out = Fields::default();
        let Some(format) = format else { return out };
        let find = |name: &str| format.fields.iter().find(|f| f.name == name);
        for (slot, field) in out.ints.iter_mut().zip(Field::ALL) {
            *slot = find(field.name())
                .filter(|f| {
                    !f.char_array
                        && !f.traits.dynamic
                        && f.array_len.is_none()
                        && matches!(f.size, 1 | 2 | 4 | 8)
                })
                .map(|f| (f.offset, f.size));
        }
        out.next_comm = find("next_comm").cloned();
        out
    }
}

/// One tracepoint sample: its RAW fields read as perf's `evsel__intval` reads them.
pub(crate) struct Tp<'a> {
    pub kind: Kind,
    raw: &'a [u8],
    fields: &'a Fields,
    endian: Endianness,
}

impl Tp<'_> {
    /// The unsigned value of a numeric field (perf: not sign-extended, 0 when the event
    /// has no such field).
    #[inline]
    pub fn int(&self, field: Field) -> u64 {
        match self.fields.ints[field as usize] {
            Some((at, size)) => read_uint(self.raw, at, size, self.endian).unwrap_or(0),
            None => 0,
        }
    }

    /// `next_comm`; empty when absent.
    pub fn next_comm(&self) -> String {
        let Some(f) = &self.fields.next_comm else {
            return String::new();
        };
        match field_value(self.raw, f, self.endian) {
            Some(FieldValue::Text(t)) => t,
            _ => String::new(),
        }
    }
}

/// What the walk hands a view.
pub(crate) enum Event<'a, 'b> {
    /// A sample of any event (`tp` set for the sched tracepoints).
    Sample {
        s: &'b SampleInfo<'a>,
        tp: Option<Tp<'b>>,
        /// The replayed processes; `None` from a walk that asked for no machine.
        machine: Option<&'b Machine>,
    },
    /// PERF_RECORD_COMM: `pid`/`tid` renamed; `id` the pid/tid of its sample id.
    Comm {
        pid: i32,
        tid: i32,
        comm: String,
        id: Option<(i32, i32)>,
    },
    /// PERF_RECORD_FORK.
    Fork {
        pid: i32,
        ppid: i32,
        tid: i32,
        ptid: i32,
    },
    /// PERF_RECORD_EXIT.
    Exit { pid: i32, tid: i32 },
    /// PERF_RECORD_LOST: `lost` events lost.
    Lost {
        lost: u64,
        time: Option<u64>,
        cpu: Option<u32>,
    },
}

/// perf sched's bound on CPU numbers (`MAX_CPUS`): a sample on a CPU past it (or a
/// header claiming more) is refused, as perf refuses it, rather than sizing per-CPU
/// state and lines by a damaged value.
pub const MAX_CPUS: u32 = 4096;

/// Refuses a CPU count or number past [`MAX_CPUS`].
pub(crate) fn check_cpu(what: &str, cpu: u32) -> Result<(), Error> {
    if cpu >= MAX_CPUS {
        return Err(Error::unsupported(format!(
            "{what} {cpu}: perf sched handles CPUs below {MAX_CPUS}"
        )));
    }
    Ok(())
}

/// The recording's facts a view needs before the walk.
pub(crate) struct Walk {
    /// Event names by attr index.
    pub kinds: Vec<Kind>,
    /// Every record seen (perf's `nr_events[0]`).
    pub records: u64,
    /// Σ of LOST records' counts.
    pub lost: u64,
    /// A PERF_RECORD_MMAP of user space was seen. perf sched timehist reads MMAP
    /// records but not MMAP2 (its tool has no mmap2 handler): a recording whose user maps
    /// are all MMAP2 (perf's default) has no user symbols there.
    pub user_mmap: bool,
}

/// Replays the recording in perf's time order, handing every record a view cares
/// about to `f`. Fails when the recording has no `sched:sched_switch` event (perf's
/// words). A view that resolves no address (`needs_machine` false) is walked without
/// the replay of processes and maps ([`Analyzer::run_unreplayed`]) when the recording
/// allows it: a file whose samples do not read counters (which the replay expands).
/// The samples of a kind the view does not `want` reach `f` as those of other events
/// do (without their fields: their tracepoint data is not read).
pub(crate) fn walk<F>(
    analyzer: &mut Analyzer<'_>,
    needs_machine: bool,
    wants: impl Fn(Kind) -> bool,
    mut f: F,
) -> Result<Walk, Error>
where
    F: FnMut(&Walk, Event<'_, '_>) -> Result<(), Error>,
{
    let kinds: Vec<Kind> = analyzer.events.iter().map(|n| Kind::of(n)).collect();
    if !kinds.contains(&Kind::Switch) {
        return Err(Error::unsupported(
            "No sched_switch events found. Have you run 'perf sched record'?",
        ));
    }
    let mut w = Walk {
        kinds,
        records: 0,
        lost: 0,
        user_mmap: false,
    };
    let mut formats = Formats::of_file(&analyzer.data);
    let endian = analyzer.data.format.endian;
    // The fields of each event, found once (by its first sample's common_type).
    let mut by_event: Vec<Option<Fields>> = vec![];
    let mut each = |machine: Option<&Machine>, item: &Replayed<'_>| -> Result<bool, Error> {
        w.records += 1;
        let ty = item.rec.record_type();
        if ty == RecordType::HEADER_TRACING_DATA && formats.is_none() {
            formats = Formats::of_record(item.rec, endian);
            return Ok(true);
        }
        if let Some(s) = &item.sample {
            if let Some(cpu) = s.cpu {
                check_cpu("a sample on CPU", cpu)?;
            }
            let kind = w.kinds.get(s.event).copied().unwrap_or(Kind::Other);
            if kind == Kind::Other || !wants(kind) {
                f(
                    &w,
                    Event::Sample {
                        s,
                        tp: None,
                        machine,
                    },
                )?;
                return Ok(true);
            }
            let raw_data = s.view.raw()?;
            let raw: &[u8] = raw_data.as_ref().map_or(&[], |r| &r.data);
            if by_event.len() <= s.event {
                by_event.resize(s.event + 1, None);
            }
            if let (None, Some(fm)) = (&by_event[s.event], &formats) {
                by_event[s.event] = Some(Fields::of(fm.format_of(raw)));
            }
            static NONE: Fields = Fields {
                ints: [None; Field::ALL.len()],
                next_comm: None,
            };
            let fields = by_event[s.event].as_ref().unwrap_or(&NONE);
            let tp = Tp {
                kind,
                raw,
                fields,
                endian,
            };
            f(
                &w,
                Event::Sample {
                    s,
                    tp: Some(tp),
                    machine,
                },
            )?;
            return Ok(true);
        }
        if ty == RecordType::MMAP
            && item.rec.header.misc.cpumode() != perfdata::types::CpuMode::KERNEL.0
        {
            if let RecordBody::Mmap(m) = item.decode()? {
                w.user_mmap |= m.pid as i32 != -1;
            }
            return Ok(true);
        }
        match ty {
            RecordType::COMM | RecordType::FORK | RecordType::EXIT | RecordType::LOST => {}
            _ => return Ok(true),
        }
        let ev = match item.decode()? {
            RecordBody::Comm(c) => Event::Comm {
                pid: c.pid as i32,
                tid: c.tid as i32,
                comm: c.comm.to_str_lossy().into_owned(),
                id: c
                    .sample_id
                    .and_then(|i| Some((i.pid? as i32, i.tid? as i32))),
            },
            RecordBody::Fork(r) => Event::Fork {
                pid: r.pid as i32,
                ppid: r.ppid as i32,
                tid: r.tid as i32,
                ptid: r.ptid as i32,
            },
            RecordBody::Exit(r) => Event::Exit {
                pid: r.pid as i32,
                tid: r.tid as i32,
            },
            RecordBody::Lost(r) => {
                w.lost += r.lost;
                Event::Lost {
                    lost: r.lost,
                    time: item.time,
                    cpu: r.sample_id.and_then(|i| i.cpu),
                }
            }
            _ => return Ok(true),
        };
        f(&w, ev)?;
        Ok(true)
    };
    let reads = analyzer
        .data
        .session
        .attrs
        .iter()
        .any(|a| a.attr.sample_type.contains(SampleType::READ));
    if needs_machine || reads || analyzer.recording().is_directory() {
        let every_sample = crate::RunOptions {
            filtered: false,
            ..Default::default()
        };
        analyzer.run(every_sample, |machine, item| each(Some(machine), item))?;
    } else {
        analyzer.run_unreplayed(|item| each(None, item))?;
    }
    Ok(w)
}

/// One thread of perf's thread table.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub pid: i32,
    pub tid: i32,
    pub ppid: i32,
    /// `None`: never named (perf shows `:TID`).
    comm: Option<Box<str>>,
    /// Bumped when its name or pid changes (what a view caches its label by).
    pub version: u32,
    /// EXIT seen.
    pub dead: bool,
    /// Moved aside by a FORK of its tid: the order it was (perf's dead list).
    removed: Option<u64>,
}

/// A task's index in [`Tasks`].
pub(crate) type TaskId = usize;

/// perf's thread table (`struct machine`'s threads) as the side band and perf sched's
/// lookups build it: lookups create threads, a FORK of a known tid moves the old one
/// aside (it stays listed, as perf keeps it while anything holds it).
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    pub all: Vec<Task>,
    live: HashMap<i32, TaskId>,
    removals: u64,
}

impl Tasks {
    /// A table with perf's idle thread (`swapper`, 0/0).
    pub fn new() -> Tasks {
        let mut t = Tasks::default();
        let i = t.findnew(0, 0);
        t.all[i].comm = Some("swapper".into());
        t
    }

    /// `machine__find_thread`: the live thread `tid` (its pid set when unknown).
    pub fn find(&mut self, pid: i32, tid: i32) -> Option<TaskId> {
        let &i = self.live.get(&tid)?;
        self.update_pid(i, pid);
        Some(i)
    }

    /// The live thread `tid`, without perf's side effects (a lookup that changes
    /// nothing).
    pub fn peek(&self, tid: i32) -> Option<TaskId> {
        self.live.get(&tid).copied()
    }

    fn update_pid(&mut self, i: TaskId, pid: i32) {
        let t = &mut self.all[i];
        if pid == t.pid || pid == -1 || t.pid != -1 {
            return;
        }
        t.pid = pid;
        t.version += 1;
        if pid != t.tid {
            self.findnew(pid, pid);
        }
    }

    /// `machine__findnew_thread`: the live thread `tid`, created with `pid` when there
    /// is none (with its process's leader, as perf joins their maps).
    pub fn findnew(&mut self, pid: i32, tid: i32) -> TaskId {
        if let Some(i) = self.find(pid, tid) {
            return i;
        }
        let i = self.all.len();
        self.all.push(Task {
            pid,
            tid,
            ppid: -1,
            comm: None,
            version: 0,
            dead: false,
            removed: None,
        });
        self.live.insert(tid, i);
        if pid != tid && pid != -1 {
            self.findnew(pid, pid);
        }
        i
    }

    fn remove(&mut self, i: TaskId) {
        let tid = self.all[i].tid;
        if self.live.get(&tid) == Some(&i) {
            self.live.remove(&tid);
        }
        self.all[i].removed = Some(self.removals);
        self.removals += 1;
    }

    /// The thread's name as perf shows it.
    pub fn comm(&self, i: TaskId) -> Cow<'_, str> {
        match &self.all[i].comm {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(format!(":{}", self.all[i].tid)),
        }
    }

    /// PERF_RECORD_COMM.
    pub fn comm_event(&mut self, pid: i32, tid: i32, comm: &str) -> TaskId {
        let i = self.findnew(pid, tid);
        self.all[i].comm = Some(comm.into());
        self.all[i].version += 1;
        i
    }

    /// PERF_RECORD_FORK (`machine__process_fork_event`).
    pub fn fork(&mut self, pid: i32, ppid: i32, tid: i32, ptid: i32) {
        let old = self.find(pid, tid);
        let mut parent = self.findnew(ppid, ptid);
        if self.all[parent].pid != ppid {
            self.remove(parent);
            parent = self.findnew(ppid, ptid);
        }
        if let Some(o) = old {
            self.remove(o);
        }
        let child = self.findnew(pid, tid);
        if let Some(c) = self.all[parent].comm.clone() {
            self.all[child].comm = Some(c);
            self.all[child].version += 1;
        }
        self.all[child].ppid = self.all[parent].tid;
    }

    /// PERF_RECORD_EXIT: the thread is dead (still listed).
    pub fn exit(&mut self, pid: i32, tid: i32) {
        if let Some(i) = self.find(pid, tid) {
            self.all[i].dead = true;
        }
    }

    /// Every thread in `machine__for_each_thread`'s order: by `tid % 256`, each
    /// bucket's live threads by tid, then the ones moved aside in the order they were.
    pub fn perf_order(&self) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = (0..self.all.len()).collect();
        v.sort_by_key(|&i| {
            let t = &self.all[i];
            let bucket = (t.tid as u32) % 256;
            match t.removed {
                None => (bucket, 0, i64::from(t.tid)),
                Some(r) => (bucket, 1, r as i64),
            }
        });
        v
    }
}

/// `timestamp__scnprintf_usec`: seconds and microseconds.
pub(crate) fn usec(t: u64) -> String {
    format!("{}.{:06}", t / 1_000_000_000, (t % 1_000_000_000) / 1000)
}

/// A list of numbers as perf's option parsers take them (`1,3-5`): CPUs for `-C` and
/// `--cpus`, pids and tids for `-p`/`-t`.
pub fn parse_list(option: &str, text: &str) -> Result<Vec<i64>, Error> {
    let bad = || crate::error::BadOption::new(option, format!("not a list of numbers: {text}"));
    let mut out = vec![];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: i64 = a.trim().parse().map_err(|_| bad())?;
                let b: i64 = b.trim().parse().map_err(|_| bad())?;
                if b < a || b - a > 1 << 20 {
                    return Err(bad().into());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_of_a_known_tid_moves_the_old_thread_aside() {
        let mut t = Tasks::new();
        let a = t.comm_event(10, 10, "sh");
        t.fork(11, 10, 11, 10);
        let b = t.find(11, 11).unwrap();
        assert_eq!((t.comm(b).as_ref(), t.all[b].ppid), ("sh", 10));
        t.exit(11, 11);
        assert!(t.all[b].dead);
        // tid 11 reused: the old thread is listed after the live ones of its bucket.
        t.fork(11, 10, 11, 10);
        let c = t.find(11, 11).unwrap();
        assert_ne!(b, c);
        let order = t.perf_order();
        let pos = |i| order.iter().position(|&x| x == i).unwrap();
        assert!(pos(a) < pos(c) && pos(c) < pos(b));
        // A thread first seen without a pid keeps -1 until a lookup gives one.
        let d = t.findnew(-1, 300);
        assert_eq!(t.all[d].pid, -1);
        t.findnew(290, 300);
        assert_eq!(t.all[d].pid, 290);
        assert_eq!(t.comm(d), ":300");
        assert!(t.find(290, 290).is_some(), "its leader is created");
    }

    #[test]
    fn cpus_past_perfs_bound_are_refused() {
        assert!(check_cpu("cpu", MAX_CPUS - 1).is_ok());
        assert!(matches!(
            check_cpu("cpu", u32::MAX),
            Err(Error::Unsupported(m)) if m.contains("4096")
        ));
    }

    #[test]
    fn lists_and_times() {
        assert_eq!(parse_list("-C", "0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_list("-C", "x").is_err());
        assert_eq!(usec(11_260_358_511_999), "11260.358511");
    }
}
