//! `perf sched latency`: per task (merged by name unless `--pids`), the run time, the
//! switches, and the average and maximum delay from wakeup (or preemption) to running,
//! sorted by `--sort` keys, as perf 6.1 prints it.
//!
//! perf keeps a list of "atoms" per task but only ever looks at the last one: that is all
//! that is kept here, so memory grows with the tasks only.

use super::{usec, walk, Event, Field, Kind, TaskId, Tasks};
use crate::error::BadOption;
use crate::AnalysisError as Error;
use crate::Analyzer;
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;
use std::io::Write;

/// A `--sort` key of `perf sched latency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyKey {
    /// Thread id.
    Pid,
    /// Average delay.
    Avg,
    /// Maximum delay.
    Max,
    /// Number of switches (delays counted).
    Switch,
    /// Run time.
    Runtime,
}

impl LatencyKey {
    /// Parses a `--sort` value as perf does (keys separated by commas or spaces).
    pub fn parse_list(text: &str) -> Result<Vec<LatencyKey>, Error> {
        let mut out = vec![];
        for tok in text.split([',', ' ']).filter(|t| !t.is_empty()) {
            out.push(match tok {
                "pid" => LatencyKey::Pid,
                "avg" => LatencyKey::Avg,
                "max" => LatencyKey::Max,
                "switch" => LatencyKey::Switch,
                "runtime" => LatencyKey::Runtime,
                _ => {
                    return Err(
                        BadOption::new("--sort", format!("Unknown --sort key: `{tok}'")).into(),
                    )
                }
            });
        }
        Ok(out)
    }
}

/// Options of [`latency`].
#[derive(Debug, Clone)]
pub struct LatencyOptions {
    /// `-s`: sort keys, most significant first (perf's default: avg, max, switch,
    /// runtime).
    pub sort: Vec<LatencyKey>,
    /// `-p`: one row per thread instead of per name.
    pub per_pid: bool,
    /// `-C`: the CPU profiled (perf then counts every wakeup and the migrations).
    pub cpu: Option<u32>,
}

impl Default for LatencyOptions {
    fn default() -> Self {
        LatencyOptions {
            sort: vec![
                LatencyKey::Avg,
                LatencyKey::Max,
                LatencyKey::Switch,
                LatencyKey::Runtime,
            ],
            per_pid: false,
            cpu: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtomState {
    Sleeping,
    WaitCpu,
    SchedIn,
    Ignore,
}

#[derive(Debug, Clone, Copy)]
struct Atom {
    state: AtomState,
    sched_out: u64,
    wake_up: u64,
}

/// One row of the latency table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LatencyRow {
    /// The task's name.
    pub comm: String,
    /// Its thread id (the first of the merged ones).
    pub tid: i32,
    /// Threads merged into the row (by name; 0 with `--pids`).
    pub merged: u32,
    /// Σ run time (sched_stat_runtime), nanoseconds.
    pub runtime_ns: u64,
    /// Delays counted (switches in).
    pub switches: u64,
    /// Σ delays, nanoseconds.
    pub total_delay_ns: u64,
    /// The largest delay, and when it started and ended.
    pub max_delay_ns: u64,
    /// Start of the largest delay.
    pub max_start: u64,
    /// End of the largest delay.
    pub max_end: u64,
    #[serde(skip)]
    task: TaskId,
    #[serde(skip)]
    last: Option<Atom>,
}

impl LatencyRow {
    fn avg(&self) -> u64 {
        self.total_delay_ns / self.switches.max(1)
    }

    fn out(&mut self, run_state_r: bool, t: u64) {
        self.last = Some(Atom {
            state: if run_state_r {
                AtomState::WaitCpu
            } else {
                AtomState::Sleeping
            },
            sched_out: t,
            wake_up: if run_state_r { t } else { 0 },
        });
    }

    fn sched_in(&mut self, t: u64) {
        let Some(a) = self.last.as_mut() else { return };
        if a.state != AtomState::WaitCpu {
            return;
        }
        if t < a.wake_up {
            a.state = AtomState::Ignore;
            return;
        }
        a.state = AtomState::SchedIn;
        let delta = t - a.wake_up;
        self.total_delay_ns += delta;
        if delta > self.max_delay_ns {
            self.max_delay_ns = delta;
            self.max_start = a.wake_up;
            self.max_end = t;
        }
        self.switches += 1;
    }
}

/// The latency table and perf's warnings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Latency {
    /// Rows in perf's order.
    pub rows: Vec<LatencyRow>,
    /// Wakeups looked at.
    pub timestamps: u64,
    /// Wakeups before their task's switch-out.
    pub unordered: u64,
    /// Switches away from a task that was not the CPU's current one.
    pub context_switch_bugs: u64,
    /// Events lost, records, LOST records.
    pub lost: (u64, u64, u64),
}

fn cmp_key(k: LatencyKey, l: &LatencyRow, r: &LatencyRow, tasks: &Tasks) -> Ordering {
    match k {
        LatencyKey::Pid => tasks.all[l.task]
            .tid
            .cmp(&tasks.all[r.task].tid)
            .then(l.task.cmp(&r.task)),
        LatencyKey::Avg => match (l.switches, r.switches) {
            (0, _) => Ordering::Less,
            (_, 0) => Ordering::Greater,
            _ => l.avg().cmp(&r.avg()),
        },
        LatencyKey::Max => l.max_delay_ns.cmp(&r.max_delay_ns),
        LatencyKey::Switch => l.switches.cmp(&r.switches),
        LatencyKey::Runtime => l.runtime_ns.cmp(&r.runtime_ns),
    }
}

/// Reads the latency table of a recording.
pub fn latency(analyzer: &mut Analyzer<'_>, opts: &LatencyOptions) -> Result<Latency, Error> {
    let mut tasks = Tasks::new();
    let mut rows: Vec<LatencyRow> = vec![];
    let mut by_task: HashMap<TaskId, usize> = HashMap::default();
    let mut cpu_last: HashMap<u32, u64> = HashMap::default();
    let mut curr_pid: HashMap<u32, u32> = HashMap::default();
    let (mut timestamps, mut unordered, mut bugs) = (0u64, 0u64, 0u64);
    let mut lost_records = 0u64;
    let profile = opts.cpu;
    let row_of = |rows: &mut Vec<LatencyRow>, by_task: &mut HashMap<TaskId, usize>, t: TaskId| {
        if let Some(&r) = by_task.get(&t) {
            return (r, false);
        }
        rows.push(LatencyRow {
            comm: String::new(),
            tid: 0,
            merged: 0,
            runtime_ns: 0,
            switches: 0,
            total_delay_ns: 0,
            max_delay_ns: 0,
            max_start: 0,
            max_end: 0,
            task: t,
            last: None,
        });
        by_task.insert(t, rows.len() - 1);
        (rows.len() - 1, true)
    };
    // sched_waking is not one of perf sched latency's events.
    let wants = |k: Kind| match k {
        Kind::Switch | Kind::StatRuntime | Kind::Wakeup | Kind::WakeupNew => true,
        Kind::Migrate => profile.is_some(),
        Kind::Waking | Kind::Other => false,
    };
    let w = walk(analyzer, false, wants, |_, ev| {
        match ev {
            Event::Sample {
                s, tp: Some(tp), ..
            } => {
                let (Some(time), cpu) = (s.time, s.cpu.unwrap_or(0)) else {
                    return Ok(());
                };
                match tp.kind {
                    Kind::Switch => {
                        let prev = tp.int(Field::PrevPid) as u32;
                        let next = tp.int(Field::NextPid) as u32;
                        if let Some(&c) = curr_pid.get(&cpu) {
                            if c != prev {
                                bugs += 1;
                            }
                        }
                        cpu_last.insert(cpu, time);
                        let out = tasks.findnew(-1, prev as i32);
                        let inn = tasks.findnew(-1, next as i32);
                        let (o, _) = row_of(&mut rows, &mut by_task, out);
                        rows[o].out(tp.int(Field::PrevState) == 0, time);
                        let (i, new) = row_of(&mut rows, &mut by_task, inn);
                        if new {
                            rows[i].out(true, time);
                        }
                        rows[i].sched_in(time);
                        curr_pid.insert(cpu, next);
                    }
                    Kind::StatRuntime => {
                        let t = tasks.findnew(-1, tp.int(Field::Pid) as u32 as i32);
                        let (r, new) = row_of(&mut rows, &mut by_task, t);
                        if new {
                            rows[r].out(true, time);
                        }
                        rows[r].runtime_ns += tp.int(Field::Runtime);
                    }
                    Kind::Wakeup | Kind::WakeupNew => {
                        let t = tasks.findnew(-1, tp.int(Field::Pid) as u32 as i32);
                        let (r, new) = row_of(&mut rows, &mut by_task, t);
                        if new {
                            rows[r].out(false, time);
                        }
                        let Some(a) = rows[r].last.as_mut() else {
                            return Ok(());
                        };
                        if profile.is_none() && a.state != AtomState::Sleeping {
                            return Ok(());
                        }
                        timestamps += 1;
                        if a.sched_out > time {
                            unordered += 1;
                            return Ok(());
                        }
                        a.state = AtomState::WaitCpu;
                        a.wake_up = time;
                    }
                    Kind::Migrate if profile.is_some() => {
                        let t = tasks.findnew(-1, tp.int(Field::Pid) as u32 as i32);
                        let (r, new) = row_of(&mut rows, &mut by_task, t);
                        if new {
                            rows[r].out(true, time);
                        }
                        if let Some(a) = rows[r].last.as_mut() {
                            a.sched_out = time;
                            a.wake_up = time;
                        }
                        timestamps += 1;
                    }
                    _ => {}
                }
            }
            Event::Comm { pid, tid, comm, .. } => {
                tasks.comm_event(pid, tid, &comm);
            }
            Event::Fork {
                pid,
                ppid,
                tid,
                ptid,
            } => tasks.fork(pid, ppid, tid, ptid),
            Event::Lost { .. } => lost_records += 1,
            _ => {}
        }
        Ok(())
    })?;
    for r in rows.iter_mut() {
        r.comm = tasks.comm(r.task).into_owned();
        r.tid = tasks.all[r.task].tid;
    }
    // perf's trees: by tid, largest first (the later thread first for one tid) ...
    rows.sort_by(|a, b| cmp_key(LatencyKey::Pid, b, a, &tasks));
    if !opts.per_pid {
        // ... then merged by name, the tree in descending name order.
        let mut merged: Vec<LatencyRow> = vec![];
        let mut by_name: HashMap<String, usize> = HashMap::default();
        for r in rows {
            match by_name.get(&r.comm) {
                Some(&m) => {
                    let m = &mut merged[m];
                    m.merged += 1;
                    m.runtime_ns += r.runtime_ns;
                    m.switches += r.switches;
                    m.total_delay_ns += r.total_delay_ns;
                    if m.max_delay_ns < r.max_delay_ns {
                        m.max_delay_ns = r.max_delay_ns;
                        m.max_start = r.max_start;
                        m.max_end = r.max_end;
                    }
                }
                None => {
                    by_name.insert(r.comm.clone(), merged.len());
                    let mut r = r;
                    r.merged = 1;
                    merged.push(r);
                }
            }
        }
        merged.sort_by(|a, b| b.comm.as_bytes().cmp(a.comm.as_bytes()));
        rows = merged;
    }
    // The sorted tree: largest first by the keys, ties in insertion order.
    rows.sort_by(|a, b| {
        for &k in &opts.sort {
            let c = cmp_key(k, b, a, &tasks);
            if c != Ordering::Equal {
                return c;
            }
        }
        Ordering::Equal
    });
    Ok(Latency {
        rows,
        timestamps,
        unordered,
        context_switch_bugs: bugs,
        lost: (w.lost, w.records, lost_records),
    })
}

/// perf's `print_bad_events`.
pub(crate) fn bad_events(
    w: &mut dyn Write,
    timestamps: u64,
    unordered: u64,
    bugs: u64,
    lost: (u64, u64, u64),
) -> std::io::Result<()> {
    let (lost_events, records, chunks) = lost;
    if unordered != 0 && timestamps != 0 {
        writeln!(
            w,
            "  INFO: {:.3}% unordered timestamps ({unordered} out of {timestamps})",
            unordered as f64 / timestamps as f64 * 100.0
        )?;
    }
    if lost_events != 0 && records != 0 {
        writeln!(
            w,
            "  INFO: {:.3}% lost events ({lost_events} out of {records}, in {chunks} chunks)",
            lost_events as f64 / records as f64 * 100.0
        )?;
    }
    if bugs != 0 && timestamps != 0 {
        write!(
            w,
            "  INFO: {:.3}% context switch bugs ({bugs} out of {timestamps})",
            bugs as f64 / timestamps as f64 * 100.0
        )?;
        if lost_events != 0 {
            write!(w, " (due to lost events?)")?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// The table as `perf sched latency` prints it.
pub fn render(l: &Latency, w: &mut dyn Write) -> std::io::Result<()> {
    let dashes = |n: usize| "-".repeat(n);
    writeln!(w, "\n {}", dashes(139))?;
    writeln!(w, "  Task                  |   Runtime ms  | Switches | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |")?;
    writeln!(w, " {}", dashes(139))?;
    let (mut all_runtime, mut all_count) = (0u64, 0u64);
    for r in &l.rows {
        if r.switches == 0 || r.comm == "swapper" {
            continue;
        }
        all_runtime += r.runtime_ns;
        all_count += r.switches;
        let head = if r.merged > 1 {
            format!("  {}:({}) ", r.comm, r.merged)
        } else {
            format!("  {}:{} ", r.comm, r.tid)
        };
        write!(w, "{head}")?;
        for _ in head.len()..24 {
            write!(w, " ")?;
        }
        writeln!(
            w,
            "|{:11.3} ms |{:9} | avg:{:8.3} ms | max:{:8.3} ms | max start: {:>12} s | max end: {:>12} s",
            r.runtime_ns as f64 / 1e6,
            r.switches,
            r.avg() as f64 / 1e6,
            r.max_delay_ns as f64 / 1e6,
            usec(r.max_start),
            usec(r.max_end)
        )?;
    }
    writeln!(w, " {}", dashes(113))?;
    writeln!(
        w,
        "  TOTAL:                |{:11.3} ms |{all_count:9} |",
        all_runtime as f64 / 1e6
    )?;
    writeln!(w, " {}", dashes(51))?;
    bad_events(w, l.timestamps, l.unordered, l.context_switch_bugs, l.lost)?;
    writeln!(w)
}
