//! `perf sched map`: one line per context switch, a column per CPU with the two-letter
//! name of the task it runs (`*` marks the CPU that switched), as perf 6.1 prints it
//! (without colours: perf colours only a terminal).

use super::latency::bad_events;
use super::{usec, walk, Event, Field, Kind, TaskId, Tasks};
use crate::AnalysisError as Error;
use crate::Analyzer;
use rustc_hash::FxHashMap as HashMap;
use std::io::Write;

/// Options of [`map`].
#[derive(Debug, Clone, Default)]
pub struct MapOptions {
    /// `--compact`: only the CPUs seen, in the order they are.
    pub compact: bool,
    /// `--cpus`: only these CPUs' columns (and lines).
    pub cpus: Option<Vec<i64>>,
    /// The CPUs configured on the machine that reads the recording (perf sizes the map by
    /// `sysconf(_SC_NPROCESSORS_CONF)`, not by the recording): the CLI passes this
    /// machine's; `None` takes the recording's `nr_cpus_avail`.
    pub cpus_configured: Option<u32>,
}

/// One line of the map, as data (the JSON twin of the text).
#[derive(Debug, Clone, serde::Serialize)]
pub struct MapLine {
    /// The switch's time, nanoseconds.
    pub time: u64,
    /// The CPU that switched.
    pub cpu: u32,
    /// The task switched in: its two letters (`.` for the idle task), name and tid.
    pub short: String,
    /// Its name.
    pub comm: String,
    /// Its thread id.
    pub tid: i32,
    /// Its letters were given at this switch.
    pub new: bool,
    /// Every CPU shown and the letters of the task it runs (`None`: none seen yet).
    pub cpus: Vec<(u32, Option<String>)>,
}

#[derive(Debug, Default, Clone)]
struct Short {
    name: Option<[u8; 2]>,
    comm_changed: bool,
}

/// Writes `perf sched map`'s text of a recording into `w`, and hands each line as data
/// to `lines` when given.
pub fn map(
    analyzer: &mut Analyzer<'_>,
    opts: &MapOptions,
    w: &mut dyn Write,
    mut lines: Option<&mut dyn FnMut(MapLine)>,
) -> Result<(), Error> {
    let mut avail = 0;
    for sec in &analyzer.data.features {
        if let Ok(perfdata::types::FeatureBody::Nrcpus(n)) = analyzer.data.feature(sec) {
            avail = n.nr_cpus_avail;
        }
    }
    let mut max_cpu = opts.cpus_configured.unwrap_or(avail);
    super::check_cpu("CPUs configured", max_cpu)?;
    let mut tasks = Tasks::new();
    let mut shorts: HashMap<TaskId, Short> = HashMap::default();
    let mut curr: HashMap<u32, TaskId> = HashMap::default();
    let mut curr_pid: HashMap<u32, u32> = HashMap::default();
    let mut comp: Vec<u32> = vec![];
    let mut next = (b'A', b'0');
    let (mut bugs, mut lost_records) = (0u64, 0u64);
    let wanted = |c: u32| opts.cpus.as_ref().is_none_or(|l| l.contains(&i64::from(c)));
    // perf sched map reads sched_switch only.
    let wants = |k: Kind| k == Kind::Switch;
    let walked = walk(analyzer, false, wants, |_, ev| {
        match ev {
            Event::Sample {
                s, tp: Some(tp), ..
            } if tp.kind == Kind::Switch => {
                let (Some(time), this) = (s.time, s.cpu.unwrap_or(0)) else {
                    return Ok(());
                };
                let prev = tp.int(Field::PrevPid) as u32;
                let next_pid = tp.int(Field::NextPid) as u32;
                if let Some(&c) = curr_pid.get(&this) {
                    if c != prev {
                        bugs += 1;
                    }
                }
                if this > max_cpu {
                    max_cpu = this;
                }
                let mut new_cpu = false;
                let cpus_nr = if opts.compact {
                    if !comp.contains(&this) {
                        comp.push(this);
                        new_cpu = true;
                    }
                    comp.len()
                } else {
                    max_cpu as usize
                };
                let t = tasks.findnew(-1, next_pid as i32);
                curr.insert(this, t);
                write!(w, "  ")?;
                let sh = shorts.entry(t).or_default();
                let mut new_name = false;
                if sh.name.is_none() {
                    if tasks.comm(t) == "swapper" {
                        sh.name = Some([b'.', b' ']);
                    } else {
                        sh.name = Some([next.0, next.1]);
                        if next.0 < b'Z' {
                            next.0 += 1;
                        } else {
                            next.0 = b'A';
                            next.1 = if next.1 < b'9' { next.1 + 1 } else { b'0' };
                        }
                    }
                    new_name = true;
                }
                let mut columns = vec![];
                for i in 0..cpus_nr {
                    let cpu = if opts.compact {
                        comp.get(i).copied().unwrap_or(0)
                    } else {
                        i as u32
                    };
                    if !wanted(cpu) {
                        continue;
                    }
                    write!(w, "{}", if cpu == this { '*' } else { ' ' })?;
                    match curr.get(&cpu) {
                        Some(c) => {
                            let n = shorts.entry(*c).or_default().name.unwrap_or([0, 0]);
                            let n: String = n
                                .iter()
                                .take_while(|&&b| b != 0)
                                .map(|&b| b as char)
                                .collect();
                            write!(w, "{n:>2} ")?;
                            if lines.is_some() {
                                columns.push((cpu, Some(n.trim_end().to_string())));
                            }
                        }
                        None => {
                            write!(w, "   ")?;
                            if lines.is_some() {
                                columns.push((cpu, None));
                            }
                        }
                    }
                }
                if let Some(f) = lines.as_mut() {
                    let n = shorts.entry(t).or_default().name.unwrap_or([b' ', b' ']);
                    f(MapLine {
                        time,
                        cpu: this,
                        short: format!("{}{}", n[0] as char, n[1] as char)
                            .trim_end()
                            .to_string(),
                        comm: tasks.comm(t).into_owned(),
                        tid: tasks.all[t].tid,
                        new: new_name,
                        cpus: columns,
                    });
                }
                if wanted(this) {
                    write!(w, "  {:>12} secs ", usec(time))?;
                    let sh = shorts.entry(t).or_default();
                    if new_name || sh.comm_changed {
                        let n = sh.name.unwrap_or([b' ', b' ']);
                        sh.comm_changed = false;
                        write!(
                            w,
                            "{}{} => {}:{}",
                            n[0] as char,
                            n[1] as char,
                            tasks.comm(t),
                            tasks.all[t].tid
                        )?;
                    }
                    if opts.compact && new_cpu {
                        write!(w, " (CPU {this})")?;
                    }
                }
                writeln!(w)?;
                curr_pid.insert(this, next_pid);
            }
            Event::Comm { pid, tid, comm, id } => {
                tasks.comm_event(pid, tid, &comm);
                if let Some((p, t)) = id {
                    if let Some(i) = tasks.find(p, t) {
                        shorts.entry(i).or_default().comm_changed = true;
                    }
                }
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
    bad_events(w, 0, 0, bugs, (walked.lost, walked.records, lost_records))?;
    Ok(())
}
