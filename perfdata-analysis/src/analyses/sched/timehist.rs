//! `perf sched timehist`: one line per context switch (the task switched out, its wait
//! time, scheduling delay and run time), wakeups (`-w`), migrations (`-M`), the summary
//! (`-s`, `-S`), as perf 6.1 prints them.
//!
//! For a task switched out at `t` on a CPU whose previous switch was at `tprev` (the
//! task's switch-in): run time `t - tprev`; scheduling delay `tprev - wakeup`; wait time
//! `tprev - ` its previous switch-out (sleep, iowait or preempted by the state it left
//! in). Lines stream into the writer as the replay goes; the state is per task and CPU.

use super::{usec, walk, Event, Field, Kind, TaskId, Tasks, Tp};
use crate::stack::Stack;
use crate::AnalysisError as Error;
use crate::{Analyzer, Machine, SampleInfo};
use std::io::Write;

/// Options of [`timehist`] (perf sched timehist's).
#[derive(Debug, Clone)]
pub struct TimehistOptions {
    /// `-s`: only the summary.
    pub summary_only: bool,
    /// `-S`: the lines, then the summary.
    pub with_summary: bool,
    /// `-w`: wakeup lines.
    pub wakeups: bool,
    /// `-M`: migration lines (and the summary's migrations column).
    pub migrations: bool,
    /// `-V`: a column per CPU.
    pub cpu_visual: bool,
    /// `-n`: the task switched in.
    pub next: bool,
    /// `--state`: the state the task left in (and the wait-time summary).
    pub state: bool,
    /// `-I`: idle time only.
    pub idle_hist: bool,
    /// `-p`: only these processes.
    pub pids: Option<Vec<i64>>,
    /// `-t`: only these threads.
    pub tids: Option<Vec<i64>>,
    /// `-C`: only these CPUs.
    pub cpus: Option<Vec<i64>>,
    /// `--time start,end` in nanoseconds (0: open).
    pub time: (u64, u64),
    /// `-g` (on by default): call chains, when the samples have them.
    pub call_graph: bool,
    /// `--max-stack` (5).
    pub max_stack: u32,
}

impl Default for TimehistOptions {
    fn default() -> Self {
        TimehistOptions {
            summary_only: false,
            with_summary: false,
            wakeups: false,
            migrations: false,
            cpu_visual: false,
            next: false,
            state: false,
            idle_hist: false,
            pids: None,
            tids: None,
            cpus: None,
            time: (0, 0),
            call_graph: true,
            max_stack: 5,
        }
    }
}

/// `--time`'s `start,end` as perf parses it (seconds, with up to 9 decimals; either side
/// may be empty).
pub fn parse_time(text: &str) -> Result<(u64, u64), Error> {
    let bad = || crate::error::BadOption::new("--time", format!("Invalid time string: {text}"));
    let one = |s: &str| -> Result<u64, crate::error::BadOption> {
        if s.is_empty() {
            return Ok(0);
        }
        let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
        if !sec.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || frac.len() > 9
        {
            return Err(bad());
        }
        let sec: u64 = if sec.is_empty() {
            0
        } else {
            sec.parse().map_err(|_| bad())?
        };
        let ns: u64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
        sec.checked_mul(1_000_000_000)
            .and_then(|v| v.checked_add(ns))
            .ok_or_else(bad)
    };
    let (a, b) = text.split_once(',').unwrap_or((text, ""));
    let (start, end) = (one(a)?, one(b)?);
    if end != 0 && end < start {
        return Err(bad().into());
    }
    Ok((start, end))
}

/// One interval of a task, as a row of the `sched_intervals` table: the task ran on
/// `cpu` from `start` (its switch-in) to `end` (its switch-out), after waiting `wait` ns
/// off the CPU (of which `delay` runnable, from its wakeup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    /// Process id (0 for the idle task).
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The task's name.
    pub comm: String,
    /// The CPU it ran on.
    pub cpu: u32,
    /// The state it left in at `end` (`R`, `S`, `D`, …; `I` for the idle task).
    pub state: char,
    /// The state it waited in before `start` (the state of its previous switch-out; `R`:
    /// preempted, still runnable); `None` when no switch-out of it was seen before.
    pub wait_state: Option<char>,
    /// Switch-in, nanoseconds.
    pub start: u64,
    /// Switch-out, nanoseconds.
    pub end: u64,
    /// Time off the CPU before `start`.
    pub wait: u64,
    /// Time from its wakeup to `start`.
    pub delay: u64,
    /// `end - start`.
    pub run: u64,
    /// The task that woke it (the last wakeup before `start`), when one was seen.
    pub waker: Option<(i32, i32)>,
    /// The waker's name then, `comm[tid]`.
    pub waker_comm: Option<String>,
}

/// Welford's running statistics (perf's `struct stats`).
#[derive(Debug, Clone, Copy)]
struct Stats {
    n: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            n: 0,
            mean: 0.0,
            m2: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Stats {
    fn update(&mut self, v: u64) {
        self.n += 1;
        let delta = v as f64 - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (v as f64 - self.mean);
        self.max = self.max.max(v);
        self.min = self.min.min(v);
    }

    /// The relative standard deviation of the mean, in percent.
    fn rel_stddev(&self) -> f64 {
        let sd = if self.n < 2 {
            0.0
        } else {
            ((self.m2 / (self.n - 1) as f64) / self.n as f64).sqrt()
        };
        if self.mean != 0.0 {
            100.0 * sd / self.mean
        } else {
            0.0
        }
    }
}

/// perf's `struct thread_runtime`.
#[derive(Debug, Clone, Default)]
struct Rt {
    last_time: u64,
    dt_run: u64,
    dt_sleep: u64,
    dt_iowait: u64,
    dt_preempt: u64,
    dt_delay: u64,
    ready_to_run: u64,
    stats: Stats,
    total_run: u64,
    total_sleep: u64,
    total_iowait: u64,
    total_preempt: u64,
    total_delay: u64,
    last_state: i32,
    migrations: u64,
    /// Who woke it last, and its name (for the intervals).
    waker: Option<(i32, i32)>,
    waker_comm: Option<String>,
}

impl Rt {
    fn update(&mut self, t: u64, tprev: u64) {
        self.dt_delay = 0;
        self.dt_sleep = 0;
        self.dt_iowait = 0;
        self.dt_preempt = 0;
        self.dt_run = 0;
        if tprev != 0 {
            self.dt_run = t.wrapping_sub(tprev);
            if self.ready_to_run != 0 && self.ready_to_run <= tprev {
                self.dt_delay = tprev - self.ready_to_run;
            }
            if self.last_time != 0 && self.last_time <= tprev {
                let w = tprev - self.last_time;
                match self.last_state {
                    0 => self.dt_preempt = w,
                    2 => self.dt_iowait = w,
                    _ => self.dt_sleep = w,
                }
            }
        }
        self.stats.update(self.dt_run);
        self.total_run = self.total_run.wrapping_add(self.dt_run);
        self.total_delay += self.dt_delay;
        self.total_sleep += self.dt_sleep;
        self.total_iowait += self.dt_iowait;
        self.total_preempt += self.dt_preempt;
    }
}

/// A task of the timeline: one of perf's threads, or a CPU's idle task (perf keeps one
/// per CPU, outside its thread table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Task(TaskId),
    Idle(u32),
}

/// The idle task of one CPU (`struct idle_thread_runtime`).
#[derive(Debug, Default)]
struct IdleRt {
    rt: Rt,
    last_thread: Option<TaskId>,
}

/// perf marks these symbols ignored in every call chain timehist prints.
fn is_ignored(name: &Option<String>) -> bool {
    matches!(
        name.as_deref(),
        Some("schedule" | "__schedule" | "preempt_schedule")
    )
}

const STATES: &[u8] = b"RSDTtZXxKWP";
const DOTS: &str = "---------------------------------------------------------------------------------------------------------------------------------------------------------------------";

/// What [`timehist`] says besides its text.
#[derive(Debug, Clone, Default)]
pub struct TimehistNotes {
    /// perf's notes for standard error ("Samples do not have callchains.").
    pub notes: Vec<String>,
}

/// The state machine and its printer.
struct State<'o> {
    o: &'o TimehistOptions,
    tasks: Tasks,
    rts: Vec<Option<Rt>>,
    idle: Vec<Option<IdleRt>>,
    comm_width: usize,
    max_cpu: u32,
    show_callchain: bool,
    waking: bool,
    /// The last switch per event and CPU (0: none yet).
    last_switch: Vec<Vec<u64>>,
    hist_start: u64,
    hist_end: u64,
    skipped: u64,
    /// The call chain of the last task sample (perf's global cursor), leaf first: each
    /// frame's name (`None`: no symbol) and address.
    cursor: Vec<(Option<String>, u64)>,
    stack: Stack,
    frames: Vec<crate::symbols::Frame>,
    intervals: Option<&'o mut dyn FnMut(Interval)>,
    /// Each task's `[tid/pid]` label, by the task's version it was made at.
    labels: Vec<Option<(u32, Vec<u8>)>>,
    /// Lines printed but not yet written: they go to the writer in large blocks (past
    /// any buffer of its own), and before anything else is written to it.
    out: Vec<u8>,
}

/// What [`State::out`] holds before it goes to the writer.
const OUT_BLOCK: usize = 1 << 16;

fn time_ms(w: &mut dyn Write, ns: u64, width: usize) -> std::io::Result<()> {
    let ms = ns / 1_000_000;
    let us = (ns - ms * 1_000_000) / 1000;
    write!(w, "{ms:>width$}.{us:03} ")
}

/// `s` in `width` bytes at least (C's `%-*s` when `left`, else `%*s`: bytes, not chars).
fn padded(w: &mut dyn Write, s: &[u8], width: usize, left: bool) -> std::io::Result<()> {
    let pad = width.saturating_sub(s.len());
    if !left {
        w.write_all(&b" ".repeat(pad))?;
    }
    w.write_all(s)?;
    if left {
        w.write_all(&b" ".repeat(pad))?;
    }
    Ok(())
}

/// "00" to "99", for two digits per division.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `v` in decimal, at least `width` bytes, padded on the left with `fill`.
#[inline]
fn push_num(out: &mut Vec<u8>, v: u64, width: usize, fill: u8) {
    let mut digits = [0u8; 20];
    let mut n = digits.len();
    let mut v = v;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        n -= 2;
        digits[n..n + 2].copy_from_slice(&PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        n -= 2;
        digits[n..n + 2].copy_from_slice(&PAIRS[d..d + 2]);
    } else {
        n -= 1;
        digits[n] = b'0' + v as u8;
    }
    let len = digits.len() - n;
    out.resize(out.len() + width.saturating_sub(len), fill);
    out.extend_from_slice(&digits[n..]);
}

/// [`time_ms`] into a buffer: `%*lu.%03lu `.
fn push_ms(out: &mut Vec<u8>, ns: u64, width: usize) {
    let ms = ns / 1_000_000;
    push_num(out, ms, width, b' ');
    out.push(b'.');
    push_num(out, (ns - ms * 1_000_000) / 1000, 3, b'0');
    out.push(b' ');
}

/// `timestamp__scnprintf_usec` right-aligned in `width` bytes.
fn push_usec(out: &mut Vec<u8>, t: u64, width: usize) {
    let secs = t / 1_000_000_000;
    let usecs = (t % 1_000_000_000) / 1000;
    let len = if secs == 0 {
        1
    } else {
        secs.ilog10() as usize + 1
    } + 7;
    out.resize(out.len() + width.saturating_sub(len), b' ');
    push_num(out, secs, 0, b' ');
    out.push(b'.');
    push_num(out, usecs, 6, b'0');
}

impl State<'_> {
    fn rt(&mut self, who: Who) -> &mut Rt {
        match who {
            Who::Task(i) => {
                if self.rts.len() <= i {
                    self.rts.resize_with(i + 1, || None);
                }
                self.rts[i].get_or_insert_with(Rt::default)
            }
            Who::Idle(c) => &mut self.idle_slot(c).rt,
        }
    }

    fn rt_ref(&self, who: Who) -> Option<&Rt> {
        match who {
            Who::Task(i) => self.rts.get(i)?.as_ref(),
            Who::Idle(c) => self.idle.get(c as usize)?.as_ref().map(|r| &r.rt),
        }
    }

    /// `get_idle_thread`: the slots grow to a power of two, the CPU's is allocated.
    fn idle_slot(&mut self, cpu: u32) -> &mut IdleRt {
        let c = cpu as usize;
        if c >= self.idle.len() {
            let n = (c + 1).next_power_of_two();
            self.idle.resize_with(n, || None);
        }
        self.idle[c].get_or_insert_with(IdleRt::default)
    }

    fn pid_tid(&self, who: Who) -> (i32, i32) {
        match who {
            Who::Task(i) => (self.tasks.all[i].pid, self.tasks.all[i].tid),
            Who::Idle(_) => (0, 0),
        }
    }

    fn is_filtered(&self, who: Who) -> bool {
        let (pid, tid) = self.pid_tid(who);
        if let Some(p) = &self.o.pids {
            if !p.contains(&i64::from(pid)) {
                return true;
            }
        }
        if let Some(t) = &self.o.tids {
            if !t.contains(&i64::from(tid)) {
                return true;
            }
        }
        false
    }

    fn cpu_wanted(&self, cpu: u32) -> bool {
        self.o
            .cpus
            .as_ref()
            .is_none_or(|c| c.contains(&i64::from(cpu)))
    }

    fn skip(&mut self, who: Who, kind: Kind, tp: &Tp<'_>) -> bool {
        let mut rc = false;
        if self.is_filtered(who) {
            rc = true;
            self.skipped += 1;
        }
        if self.o.idle_hist
            && (kind != Kind::Switch
                || (tp.int(Field::PrevPid) != 0 && tp.int(Field::NextPid) != 0))
        {
            rc = true;
        }
        rc
    }

    /// `timehist_get_commstr`: the name with `[tid/pid]`, at most 31 bytes (cut as C
    /// cuts it); widens the name column. Cached per task until its name or pid changes.
    fn commstr(&mut self, who: Who) -> &[u8] {
        let i = match who {
            Who::Idle(_) => {
                self.comm_width = self.comm_width.max(6);
                return b"<idle>";
            }
            Who::Task(i) => i,
        };
        let t = &self.tasks.all[i];
        if self.labels.len() <= i {
            self.labels.resize_with(i + 1, || None);
        }
        let fresh = matches!(&self.labels[i], Some((v, _)) if *v == t.version);
        if !fresh {
            let comm = self.tasks.comm(i);
            let mut s = if t.pid == 0 {
                comm.into_owned()
            } else if t.tid != t.pid {
                format!("{comm}[{}/{}]", t.tid, t.pid)
            } else {
                format!("{comm}[{}]", t.tid)
            }
            .into_bytes();
            s.truncate(31);
            self.labels[i] = Some((t.version, s));
        }
        let label = &self.labels[i].as_ref().expect("just set").1;
        self.comm_width = self.comm_width.max(label.len());
        label
    }

    fn header(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let ncpus = self.max_cpu as usize + 1;
        let cw = self.comm_width;
        write!(w, "{:>15} {:>6} ", "time", "cpu")?;
        if self.o.cpu_visual {
            write!(w, " ")?;
            for i in 0..ncpus {
                write!(w, "{:x}", i % 16)?;
            }
            write!(w, " ")?;
        }
        write!(
            w,
            " {:<cw$}  {:>9}  {:>9}  {:>9}",
            "task name", "wait time", "sch delay", "run time"
        )?;
        if self.o.state {
            write!(w, "  state")?;
        }
        writeln!(w)?;
        write!(w, "{:>15} {:<6} ", "", "")?;
        if self.o.cpu_visual {
            write!(w, " {:>ncpus$} ", "")?;
        }
        write!(
            w,
            " {:<cw$}  {:>9}  {:>9}  {:>9}",
            "[tid/pid]", "(msec)", "(msec)", "(msec)"
        )?;
        if self.o.state {
            write!(w, "  {:>5}", "")?;
        }
        writeln!(w)?;
        write!(w, "{} {} ", &DOTS[..15], &DOTS[..6])?;
        if self.o.cpu_visual {
            write!(w, " {} ", dots(ncpus))?;
        }
        write!(
            w,
            " {}  {}  {}  {}",
            dots(cw),
            &DOTS[..9],
            &DOTS[..9],
            &DOTS[..9]
        )?;
        if self.o.state {
            write!(w, "  {}", &DOTS[..5])?;
        }
        writeln!(w)
    }

    /// The task's call chain into `cursor` (perf's `save_task_callchain`): at most
    /// `max_stack + 2` entries, `schedule` and friends left out when printed. The walk
    /// replays the machine whenever call chains are shown.
    fn save_callchain(
        &mut self,
        m: Option<&Machine>,
        s: &SampleInfo<'_>,
        user_maps: bool,
    ) -> Result<(), Error> {
        let Some(m) = m.filter(|_| self.show_callchain) else {
            return Ok(());
        };
        if s.view.callchain()?.is_none() {
            return Ok(());
        }
        m.stack(s, &mut self.stack)?;
        let max = self.o.max_stack as usize + 2;
        let addrs = &self.stack.addrs;
        // The recorded chain counts as a whole; an unwound user part is limited apart.
        let (chain, user) = match self.stack.unwound {
            None => (&addrs[..addrs.len().min(max)], &addrs[..0]),
            Some(_) => {
                let from = self.stack.user_from.min(addrs.len());
                let (k, u) = addrs.split_at(from);
                // perf unwinds with the maps it read: none from MMAP2 records.
                let u = if user_maps { u } else { &u[..0] };
                (&k[..k.len().min(max)], &u[..u.len().min(max)])
            }
        };
        self.frames.clear();
        for &(ip, kernel) in chain.iter().chain(user) {
            self.frames.push(m.resolve(s.pid, kernel, ip));
        }
        self.cursor.clear();
        for f in &self.frames {
            let name = match f.symbol {
                Some(sym) if f.kernel || user_maps => Some(m.dsos.symbol_name(sym).to_string()),
                _ => None,
            };
            self.cursor.push((name, f.ip));
        }
        Ok(())
    }

    fn print_sample(
        &mut self,
        w: &mut dyn Write,
        who: Who,
        tp: &Tp<'_>,
        cpu: u32,
        t: u64,
        state: i32,
    ) -> std::io::Result<()> {
        if !self.cpu_wanted(cpu) {
            return Ok(());
        }
        // The hot path of a long timehist: built by hand into one reused buffer.
        let mut line = std::mem::take(&mut self.out);
        let max_cpus = self.max_cpu + 1;
        push_usec(&mut line, t, 15);
        line.extend_from_slice(b" [");
        push_num(&mut line, u64::from(cpu), 4, b'0');
        line.extend_from_slice(b"] ");
        let idle = matches!(who, Who::Idle(_)) || self.pid_tid(who).1 == 0;
        if self.o.cpu_visual {
            line.push(b' ');
            for i in 0..max_cpus {
                line.push(match (i == cpu, idle) {
                    (true, true) => b'i',
                    (true, false) => b's',
                    _ => b' ',
                });
            }
            line.push(b' ');
        }
        line.push(b' ');
        let name_len = {
            let name = self.commstr(who);
            line.extend_from_slice(name);
            name.len()
        };
        let pad = self.comm_width.saturating_sub(name_len);
        line.resize(line.len() + pad, b' ');
        line.push(b' ');
        let cw = self.comm_width;
        let (wait, delay, run) = self.rt_ref(who).map_or((0, 0, 0), |r| {
            (
                r.dt_sleep + r.dt_iowait + r.dt_preempt,
                r.dt_delay,
                r.dt_run,
            )
        });
        push_ms(&mut line, wait, 6);
        push_ms(&mut line, delay, 6);
        push_ms(&mut line, run, 6);
        if self.o.state {
            line.extend_from_slice(b"     ");
            let mut c = [0u8; 4];
            line.extend_from_slice(state_char(idle, state).encode_utf8(&mut c).as_bytes());
            line.push(b' ');
        }
        if self.o.next {
            let mut n = format!(
                "next: {}[{}]",
                tp.next_comm(),
                tp.int(Field::NextPid) as u32
            )
            .into_bytes();
            n.truncate(29);
            line.push(b' ');
            let pad = cw.saturating_sub(n.len());
            line.extend_from_slice(&n);
            line.resize(line.len() + pad, b' ');
        }
        if self.o.wakeups && !self.o.next {
            line.extend_from_slice(b"  ");
            line.resize(line.len() + cw, b' ');
        }
        if !idle && self.show_callchain {
            line.extend_from_slice(b"  ");
            let mut first = true;
            for (name, _) in &self.cursor {
                if is_ignored(name) {
                    continue;
                }
                if !first {
                    line.extend_from_slice(b" <-");
                }
                line.push(b' ');
                line.extend_from_slice(name.as_deref().unwrap_or("[unknown]").as_bytes());
                first = false;
            }
        }
        line.push(b'\n');
        self.out = line;
        if self.out.len() >= OUT_BLOCK {
            return self.flush(w);
        }
        Ok(())
    }

    /// Writes the lines held in [`State::out`].
    fn flush(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        let r = w.write_all(&self.out);
        self.out.clear();
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn switch(
        &mut self,
        w: &mut dyn Write,
        m: Option<&Machine>,
        s: &SampleInfo<'_>,
        tp: &Tp<'_>,
        cpu: u32,
        time: u64,
        user_maps: bool,
    ) -> Result<(), Error> {
        let (start, end) = self.o.time;
        let mut t = time;
        let state = tp.int(Field::PrevState) as i32;
        let prev_pid = tp.int(Field::PrevPid);
        // machine__resolve: the sample's thread. A second lookup of the same pid and
        // tid finds what the first made and changes nothing: it is skipped.
        let sample_thread = self.tasks.findnew(s.pid, s.tid);
        let who = if prev_pid == 0 {
            self.idle_slot(cpu);
            Who::Idle(cpu)
        } else {
            let tid = if s.tid != 0 { s.tid } else { s.pid };
            let i = if tid == s.tid {
                sample_thread
            } else {
                self.tasks.findnew(s.pid, tid)
            };
            if s.pid != tid {
                self.tasks.findnew(s.pid, s.pid);
            }
            self.save_callchain(m, s, user_maps)?;
            if self.o.idle_hist {
                self.idle_slot(cpu).last_thread = Some(i);
            }
            Who::Task(i)
        };
        let mut touched = false;
        'out: {
            if self.skip(who, Kind::Switch, tp) {
                break 'out;
            }
            touched = true;
            self.rt(who);
            let mut tprev = (self.last_switch.get(s.event))
                .and_then(|c| c.get(cpu as usize))
                .copied()
                .unwrap_or(0);
            if start != 0 && start > t {
                break 'out;
            }
            if tprev != 0 && start > tprev {
                tprev = start;
            }
            if end != 0 {
                if tprev == 0 || tprev > end {
                    break 'out;
                }
                if t > end {
                    t = end;
                }
            }
            if !self.o.idle_hist || self.pid_tid(who).1 == 0 {
                if self.cpu_wanted(cpu) {
                    self.rt(who).update(t, tprev);
                    if tprev != 0 {
                        self.interval(who, cpu, state, tprev, t);
                    }
                }
                if self.o.idle_hist {
                    if let Who::Idle(c) = who {
                        // No task ran since the CPU last went idle: perf prints nothing.
                        let Some(last) = self.idle_slot(c).last_thread.take() else {
                            break 'out;
                        };
                        // The idle time counts as the last task's run time.
                        let r = self.rt(Who::Task(last));
                        r.update(t, tprev);
                        r.dt_run = 0;
                        r.dt_delay = 0;
                        r.dt_sleep = 0;
                        r.dt_iowait = 0;
                        r.dt_preempt = 0;
                    }
                }
            }
            if !self.o.summary_only {
                self.print_sample(w, who, tp, cpu, t, state)?;
            }
        }
        if self.hist_start == 0 && t >= start {
            self.hist_start = t;
        }
        if end == 0 || t <= end {
            self.hist_end = t;
        }
        if touched {
            let r = self.rt(who);
            r.last_time = time;
            r.last_state = state;
            r.ready_to_run = 0;
            r.waker = None;
            r.waker_comm = None;
        }
        if self.last_switch.len() <= s.event {
            self.last_switch.resize_with(s.event + 1, Vec::new);
        }
        let last = &mut self.last_switch[s.event];
        if last.len() <= cpu as usize {
            // CPUs are below MAX_CPUS (the walk refuses others).
            last.resize(cpu as usize + 1, 0);
        }
        last[cpu as usize] = time;
        Ok(())
    }

    fn interval(&mut self, who: Who, cpu: u32, state: i32, start: u64, end: u64) {
        if self.intervals.is_none() {
            return;
        }
        let (pid, tid) = self.pid_tid(who);
        let comm = match who {
            Who::Idle(_) => "<idle>".to_string(),
            Who::Task(i) => self.tasks.comm(i).into_owned(),
        };
        let r = self.rt_ref(who).cloned().unwrap_or_default();
        let wait_state = (r.last_time != 0).then(|| state_char(tid == 0, r.last_state));
        let row = Interval {
            wait_state,
            pid,
            tid,
            comm,
            cpu,
            state: state_char(tid == 0, state),
            start,
            end,
            wait: r.dt_sleep + r.dt_iowait + r.dt_preempt,
            delay: r.dt_delay,
            run: r.dt_run,
            waker: r.waker,
            waker_comm: r.waker_comm,
        };
        if let Some(f) = self.intervals.as_mut() {
            f(row);
        }
    }

    fn wakeup(
        &mut self,
        w: &mut dyn Write,
        s: &SampleInfo<'_>,
        tp: &Tp<'_>,
        time: u64,
    ) -> Result<(), Error> {
        let pid = tp.int(Field::Pid) as u32 as i32;
        let i = self.tasks.findnew(0, pid);
        let waker_comm = match (self.intervals.is_some(), self.tasks.peek(s.tid)) {
            (true, Some(w)) => Some(format!("{}[{}]", self.tasks.comm(w), s.tid)),
            _ => None,
        };
        let r = self.rt(Who::Task(i));
        if r.ready_to_run == 0 {
            r.ready_to_run = time;
            r.waker = Some((s.pid, s.tid));
            r.waker_comm = waker_comm;
        }
        let (start, end) = self.o.time;
        let out_of_window = time != 0 && ((start != 0 && time < start) || (end != 0 && time > end));
        if !self.o.wakeups || out_of_window {
            return Ok(());
        }
        let waker = Who::Task(self.tasks.findnew(s.pid, s.tid));
        if self.skip(waker, tp.kind, tp) && self.skip(Who::Task(i), tp.kind, tp) {
            return Ok(());
        }
        self.flush(w)?;
        let cpu = s.cpu.unwrap_or(0);
        write!(w, "{:>15} [{cpu:04}] ", usec(time))?;
        if self.o.cpu_visual {
            write!(w, " {:>n$} ", "", n = self.max_cpu as usize + 1)?;
        }
        let name = self.commstr(waker).to_vec();
        write!(w, " ")?;
        padded(w, &name, self.comm_width, true)?;
        write!(w, " ")?;
        write!(w, "  {:>9}  {:>9}  {:>9} ", "", "", "")?;
        let awakened = self.commstr(Who::Task(i)).to_vec();
        w.write_all(b"awakened: ")?;
        w.write_all(&awakened)?;
        writeln!(w)?;
        Ok(())
    }

    fn migrate(
        &mut self,
        w: &mut dyn Write,
        s: &SampleInfo<'_>,
        tp: &Tp<'_>,
        time: u64,
    ) -> Result<(), Error> {
        let pid = tp.int(Field::Pid) as u32 as i32;
        let i = self.tasks.findnew(0, pid);
        self.rt(Who::Task(i)).migrations += 1;
        if self.o.summary_only {
            return Ok(());
        }
        let (ocpu, dcpu) = (tp.int(Field::OrigCpu) as u32, tp.int(Field::DestCpu) as u32);
        let mover = Who::Task(self.tasks.findnew(s.pid, s.tid));
        if self.skip(mover, tp.kind, tp) && self.skip(Who::Task(i), tp.kind, tp) {
            return Ok(());
        }
        self.flush(w)?;
        let cpu = s.cpu.unwrap_or(0);
        write!(w, "{:>15} [{cpu:04}] ", usec(time))?;
        if self.o.cpu_visual {
            write!(w, "  ")?;
            for c in 0..=self.max_cpu {
                write!(w, "{}", if c == cpu { 'm' } else { ' ' })?;
            }
            write!(w, "  ")?;
        }
        let name = self.commstr(mover).to_vec();
        write!(w, " ")?;
        padded(w, &name, self.comm_width, true)?;
        write!(w, " ")?;
        write!(w, "  {:>9}  {:>9}  {:>9} ", "", "", "")?;
        let moved = self.commstr(Who::Task(i)).to_vec();
        w.write_all(b"migrated: ")?;
        w.write_all(&moved)?;
        writeln!(w, " cpu {} => {}", ocpu as i32, dcpu as i32)?;
        Ok(())
    }

    fn summary(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        let hist_time = self.hist_end.wrapping_sub(self.hist_start);
        let cw = self.comm_width;
        if self.o.idle_hist {
            write!(
                w,
                "\nIdle-time summary\n{:>cw$}  parent  sched-out  ",
                "comm"
            )?;
            writeln!(
                w,
                "  idle-time   min-idle    avg-idle    max-idle  stddev  migrations"
            )?;
        } else if self.o.state {
            write!(
                w,
                "\nWait-time summary\n{:>cw$}  parent   sched-in  ",
                "comm"
            )?;
            writeln!(
                w,
                "   run-time      sleep      iowait     preempt       delay"
            )?;
        } else {
            write!(w, "\nRuntime summary\n{:>cw$}  parent   sched-in  ", "comm")?;
            writeln!(
                w,
                "   run-time    min-run     avg-run     max-run  stddev  migrations"
            )?;
        }
        write!(w, "{:>cw$}            (count)  ", "")?;
        writeln!(
            w,
            "     (msec)     (msec)      (msec)      (msec)       {}",
            if self.o.state { "(msec)" } else { "%" }
        )?;
        writeln!(w, "{}", &DOTS[..117])?;
        let order = self.tasks.perf_order();
        let (mut tasks, mut switches, mut run) = (0u64, 0u64, 0u64);
        for dead in [false, true] {
            if dead {
                writeln!(w, "\nTerminated tasks:")?;
            }
            let before = tasks;
            for &i in &order {
                if self.tasks.all[i].dead != dead || self.is_filtered(Who::Task(i)) {
                    continue;
                }
                let Some(r) = self.rts.get(i).and_then(|r| r.clone()) else {
                    continue;
                };
                if r.stats.n == 0 {
                    continue;
                }
                tasks += 1;
                switches += r.stats.n;
                run = run.wrapping_add(r.total_run);
                let name = self.commstr(Who::Task(i)).to_vec();
                padded(w, &name, self.comm_width, false)?;
                write!(w, "   {:>5}  {:>9} ", self.tasks.all[i].ppid, r.stats.n)?;
                time_ms(w, r.total_run, 8)?;
                if self.o.state {
                    time_ms(w, r.total_sleep, 6)?;
                    write!(w, " ")?;
                    time_ms(w, r.total_iowait, 6)?;
                    write!(w, " ")?;
                    time_ms(w, r.total_preempt, 6)?;
                    write!(w, " ")?;
                    time_ms(w, r.total_delay, 6)?;
                    writeln!(w)?;
                } else {
                    let sd = r.stats.rel_stddev() as f32;
                    time_ms(w, r.stats.min, 6)?;
                    write!(w, " ")?;
                    time_ms(w, r.stats.mean as u64, 6)?;
                    write!(w, " ")?;
                    time_ms(w, r.stats.max, 6)?;
                    write!(w, "  {sd:5.2}   {:>5}", r.migrations)?;
                    writeln!(w)?;
                }
            }
            if !dead && tasks == 0 {
                writeln!(w, "<no still running tasks>")?;
            }
            if dead && tasks == before {
                writeln!(w, "<no terminated tasks>")?;
            }
        }
        if self.skipped != 0 && !self.o.idle_hist {
            return Ok(());
        }
        writeln!(w, "\nIdle stats:")?;
        for (c, slot) in self.idle.iter().enumerate() {
            if !self.cpu_wanted(c as u32) {
                continue;
            }
            let Some(itr) = slot else { continue };
            if itr.rt.stats.n != 0 {
                switches += itr.rt.stats.n;
                write!(w, "    CPU {c:2} idle for ")?;
                time_ms(w, itr.rt.total_run, 6)?;
                writeln!(
                    w,
                    " msec  ({}%)",
                    c_f64(100.0 * itr.rt.total_run as f64 / hist_time as f64, 6, 2)
                )?;
            } else {
                writeln!(w, "    CPU {c:2} idle entire time window")?;
            }
        }
        if self.o.idle_hist && self.show_callchain {
            writeln!(w, "\nIdle stats by callchain:")?;
            for (c, slot) in self.idle.iter().enumerate() {
                let Some(itr) = slot else { continue };
                write!(w, "  CPU {c:2}:")?;
                time_ms(w, itr.rt.total_run, 6)?;
                writeln!(w, " msec")?;
                writeln!(
                    w,
                    "  {:>16}  {:>8}  Callchains",
                    "Idle time (msec)", "Count"
                )?;
                writeln!(w, "  {}  {}  {}", &DOTS[..16], &DOTS[..8], &DOTS[..50])?;
                // perf 6.1 prints no rows here: `save_idle_callchain` copies a callchain
                // cursor that no sample filled (checked on the sched-callchains row, where
                // perf's table stayed empty under 10.7 ms of idle time), so neither do we.
                writeln!(w)?;
            }
        }
        write!(
            w,
            "\n    Total number of unique tasks: {tasks}\nTotal number of context switches: {switches}\n"
        )?;
        write!(w, "           Total run time (msec): ")?;
        time_ms(w, run, 2)?;
        writeln!(w)?;
        write!(w, "    Total scheduling time (msec): ")?;
        time_ms(w, hist_time, 2)?;
        writeln!(w, " (x {})", self.max_cpu)
    }
}

/// `%W.Pf` as glibc prints it, `inf` and `nan` included.
fn c_f64(v: f64, width: usize, prec: usize) -> String {
    let s = if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{v:.prec$}")
    };
    format!("{s:>width$}")
}

fn dots(n: usize) -> &'static str {
    &DOTS[..n.min(DOTS.len())]
}

/// `task_state_char`: the lowest state bit's letter, `I` for the idle task.
fn state_char(idle: bool, state: i32) -> char {
    if idle {
        return 'I';
    }
    let bit = if state == 0 {
        0
    } else {
        state.trailing_zeros() as usize + 1
    };
    STATES.get(bit).map_or('?', |&b| b as char)
}

/// `perf sched timehist` of a recording into `w` (its text byte for byte), each interval
/// also handed to `intervals` when given.
pub fn timehist<'o>(
    analyzer: &mut Analyzer<'_>,
    opts: &'o TimehistOptions,
    w: &mut dyn Write,
    intervals: Option<&'o mut dyn FnMut(Interval)>,
) -> Result<TimehistNotes, Error> {
    let mut notes = TimehistNotes::default();
    let mut show_callchain = opts.call_graph;
    for a in &analyzer.data.session.attrs {
        if show_callchain
            && !a
                .attr
                .sample_type
                .contains(perfdata::types::SampleType::CALLCHAIN)
        {
            notes.notes.push("Samples do not have callchains.".into());
            show_callchain = false;
        }
    }
    let waking = analyzer.events.iter().any(|e| e == "sched:sched_waking");
    if !analyzer.events.iter().any(|e| e == "sched:sched_switch") {
        return Err(Error::unsupported(
            "No sched_switch events found. Have you run 'perf sched record'?",
        ));
    }
    let mut nr_online = 0;
    for sec in &analyzer.data.features {
        if let Ok(perfdata::types::FeatureBody::Nrcpus(n)) = analyzer.data.feature(sec) {
            nr_online = n.nr_cpus_online;
        }
    }
    let max_cpu = if nr_online == 0 { 4 } else { nr_online };
    super::check_cpu("HEADER_NRCPUS: online CPUs", max_cpu)?;
    let mut st = State {
        o: opts,
        tasks: Tasks::new(),
        rts: vec![],
        idle: (0..max_cpu).map(|_| Some(IdleRt::default())).collect(),
        comm_width: 30,
        max_cpu,
        show_callchain,
        waking,
        last_switch: vec![],
        hist_start: 0,
        hist_end: 0,
        skipped: 0,
        cursor: vec![],
        stack: Stack::default(),
        frames: vec![],
        intervals,
        labels: vec![],
        out: Vec::with_capacity(OUT_BLOCK + 4096),
    };
    if !opts.summary_only {
        st.header(w)?;
    }
    // The kinds the match below handles (sched_stat_runtime is not one of them).
    let wants = |k: Kind| match k {
        Kind::Switch | Kind::Waking | Kind::WakeupNew => true,
        Kind::Wakeup => !waking,
        Kind::Migrate => opts.migrations,
        Kind::StatRuntime | Kind::Other => false,
    };
    let walked = walk(analyzer, show_callchain, wants, |walked, ev| {
        match ev {
            Event::Sample { s, tp, machine } => {
                let cpu = s.cpu.unwrap_or(0);
                if cpu > st.max_cpu {
                    st.max_cpu = cpu;
                }
                let (Some(tp), Some(time)) = (tp, s.time) else {
                    return Ok(());
                };
                match tp.kind {
                    Kind::Switch => st.switch(w, machine, s, &tp, cpu, time, walked.user_mmap)?,
                    Kind::Wakeup if st.waking => {}
                    Kind::Wakeup | Kind::Waking | Kind::WakeupNew => st.wakeup(w, s, &tp, time)?,
                    Kind::Migrate if opts.migrations => st.migrate(w, s, &tp, time)?,
                    _ => {}
                }
            }
            Event::Comm { pid, tid, comm, .. } => {
                st.tasks.comm_event(pid, tid, &comm);
            }
            Event::Fork {
                pid,
                ppid,
                tid,
                ptid,
            } => st.tasks.fork(pid, ppid, tid, ptid),
            Event::Exit { pid, tid } => st.tasks.exit(pid, tid),
            Event::Lost { lost, time, cpu } => {
                st.flush(w)?;
                writeln!(
                    w,
                    "{:>15} lost {lost} events on cpu {}",
                    usec(time.unwrap_or(0)),
                    cpu.map_or(-1, |c| c as i64)
                )?;
            }
        }
        Ok(())
    });
    // The lines before a failure are written, as they were printed.
    st.flush(w)?;
    walked?;
    if opts.summary_only || opts.with_summary {
        st.summary(w)?;
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_states() {
        assert_eq!(parse_time("1.5,2").unwrap(), (1_500_000_000, 2_000_000_000));
        assert_eq!(parse_time(",3.000000001").unwrap(), (0, 3_000_000_001));
        assert!(parse_time("2,1").is_err());
        assert!(parse_time("1.1234567890").is_err());
        assert_eq!(state_char(false, 0), 'R');
        assert_eq!(state_char(false, 1), 'S');
        assert_eq!(state_char(false, 2), 'D');
        // ffs: bit 10 (0x200) is the last letter, 'P'; past it '?'.
        assert_eq!(state_char(false, 0x200), 'P');
        assert_eq!(state_char(false, 0x400), '?');
        assert_eq!(state_char(true, 1), 'I');
        let mut out = vec![];
        time_ms(&mut out, 12_345_678, 6).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "    12.345 ");
        assert_eq!(c_f64(f64::NAN, 6, 2).trim(), "nan");
        assert_eq!(c_f64(12.345, 6, 2), " 12.35");
    }

    #[test]
    fn statistics_are_welfords() {
        let mut s = Stats::default();
        for v in [10, 20, 30] {
            s.update(v);
        }
        assert_eq!((s.n, s.min, s.max), (3, 10, 30));
        assert!((s.mean - 20.0).abs() < 1e-9);
        // stddev of the mean: sqrt(100 / 3) = 5.77..., relative to 20: 28.87 %.
        assert!((s.rel_stddev() - 28.8675).abs() < 1e-3);
    }
}
