//! Check 9's references for the tracepoint queries (`syscalls`, `wakeup_latency`,
//! `fd_bytes`): the same pairing as each query, computed from `perf script -F
//! pid,tid,time,event,trace --ns` of the recording, not from perfdata's decode. Only what
//! is exactly defined is compared (counts, sums, maxima); the percentiles are each
//! engine's own interpolation.

use crate::checks::SHOW;
use crate::sql::Table;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::Path;

/// One tracepoint line of `perf script -F pid,tid,time,event,trace --ns`:
/// `  3597/3597  633.463285886: raw_syscalls:sys_enter: NR 257 (…)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TraceLine {
    pub pid: i64,
    pub tid: i64,
    /// The time in ns.
    pub ns: i128,
    /// `raw_syscalls:sys_enter`.
    pub event: String,
    /// What perf prints of the fields.
    pub trace: String,
}

impl TraceLine {
    pub fn parse(line: &str) -> Option<TraceLine> {
        let line = line.trim_start();
        let (ids, rest) = line.split_once(char::is_whitespace)?;
        let (time, rest) = rest.trim_start().split_once(": ")?;
        let (event, trace) = rest.trim_start().split_once(": ")?;
        let (pid, tid) = ids.split_once('/')?;
        let (s, f) = time.split_once('.')?;
        Some(TraceLine {
            pid: pid.parse().ok()?,
            tid: tid.parse().ok()?,
            ns: s.parse::<i128>().ok()? * 1_000_000_000 + f.parse::<i128>().ok()?,
            event: event.to_string(),
            trace: trace.to_string(),
        })
    }
}

/// perf's tracepoint lines of a recording (the other events' lines, which have no
/// `trace`, do not parse and are left out).
pub(crate) fn perf_trace(path: &Path, work: &Path) -> Result<Vec<TraceLine>, String> {
    let args = crate::analyses::os_args(
        &["script", "-F", "pid,tid,time,event,trace", "--ns", "-i"],
        path,
    );
    let text =
        crate::analyses::perf_stdout(work, &args).map_err(|e| format!("perf script: {e}"))?;
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .filter_map(TraceLine::parse)
        .collect())
}

/// Per thread, its events in the queries' order: time, then the pair's first event
/// (enter, wakeup: kind 0) before its second (exit, switch-in: kind 1).
fn by_thread<T: Ord>(
    events: impl Iterator<Item = (i64, i128, u8, T)>,
) -> BTreeMap<i64, Vec<(i128, u8, T)>> {
    let mut m: BTreeMap<i64, Vec<(i128, u8, T)>> = BTreeMap::new();
    for (tid, ns, kind, x) in events {
        m.entry(tid).or_default().push((ns, kind, x));
    }
    for v in m.values_mut() {
        v.sort();
    }
    m
}

/// (calls, total ns, max ns).
pub(crate) type Latency = (u64, i128, i128);

fn add(e: &mut Latency, ns: i128) {
    e.0 += 1;
    e.1 += ns;
    e.2 = e.2.max(ns);
}

/// `syscalls`: each raw_syscalls:sys_enter with its thread's next event, when that is the
/// sys_exit of the same call; per (process, call).
pub(crate) fn syscalls(lines: &[TraceLine]) -> BTreeMap<(i64, i64), Latency> {
    let nr = |l: &TraceLine| {
        let r = l.trace.strip_prefix("NR ")?;
        r.split([' ', '(']).next()?.parse::<i64>().ok()
    };
    let events = lines.iter().filter_map(|l| {
        let kind = match l.event.as_str() {
            "raw_syscalls:sys_enter" => 0,
            "raw_syscalls:sys_exit" => 1,
            _ => return None,
        };
        Some((l.tid, l.ns, kind, (nr(l)?, l.pid)))
    });
    let mut out = BTreeMap::new();
    for evs in by_thread(events).into_values() {
        for w in evs.windows(2) {
            let ((t0, 0, (nr, pid)), (t1, 1, (nr1, _))) = (w[0], w[1]) else {
                continue;
            };
            if nr == nr1 {
                add(out.entry((pid, nr)).or_insert((0, 0, 0)), t1 - t0);
            }
        }
    }
    out
}

/// `wakeup_latency`: each sched:sched_wakeup of a thread (`comm=X pid=N …`) with its next
/// event, when that is a sched_switch to it (`… ==> next_comm=X next_pid=N …`); per
/// (thread, the name the wakeup gives it).
pub(crate) fn wakeups(lines: &[TraceLine]) -> BTreeMap<(i64, String), Latency> {
    // `name=` up to ` after`, and the number after `after`.
    fn named(s: &str, name: &str, after: &str) -> Option<(String, i64)> {
        let (head, tail) = s.rsplit_once(after)?;
        let comm = head.rsplit_once(name)?.1;
        let n = tail.split(' ').next()?.parse().ok()?;
        Some((comm.to_string(), n))
    }
    let events = lines.iter().filter_map(|l| {
        let (kind, (comm, tid)) = match l.event.as_str() {
            "sched:sched_wakeup" => (0, named(&l.trace, "comm=", " pid=")?),
            "sched:sched_switch" => (1, named(&l.trace, "==> next_comm=", " next_pid=")?),
            _ => return None,
        };
        Some((tid, l.ns, kind, comm))
    });
    let mut out = BTreeMap::new();
    for (tid, evs) in by_thread(events) {
        for w in evs.windows(2) {
            let ((t0, 0, comm), (t1, 1, _)) = (&w[0], &w[1]) else {
                continue;
            };
            add(out.entry((tid, comm.clone())).or_insert((0, 0, 0)), t1 - t0);
        }
    }
    out
}

/// (reads, bytes read, writes, bytes written, failed calls).
pub(crate) type FdBytes = [i128; 5];

/// `fd_bytes`: each syscalls:sys_enter_read/write (`fd: 0x…, buf: …`) with its thread's
/// next event, when that is the sys_exit of the same call (`0x…`, the return value as an
/// unsigned hex: a negative one is an error); per (process, fd).
pub(crate) fn fd_bytes(lines: &[TraceLine]) -> BTreeMap<(i64, i64), FdBytes> {
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let events = lines.iter().filter_map(|l| {
        let (kind, write) = match l.event.as_str() {
            "syscalls:sys_enter_read" => (0, false),
            "syscalls:sys_exit_read" => (1, false),
            "syscalls:sys_enter_write" => (0, true),
            "syscalls:sys_exit_write" => (1, true),
            _ => return None,
        };
        // The enter's fd; the exit's return value (a long printed with %lx).
        let value = if kind == 0 {
            let fd = l.trace.strip_prefix("fd: ")?.split(',').next()?;
            i64::try_from(hex(fd)?).ok()?
        } else {
            hex(&l.trace)? as i64
        };
        Some((l.tid, l.ns, kind, (write, value, l.pid)))
    });
    let mut out = BTreeMap::new();
    for evs in by_thread(events).into_values() {
        for w in evs.windows(2) {
            let ((_, 0, (write, fd, pid)), (_, 1, (write1, ret, _))) = (w[0], w[1]) else {
                continue;
            };
            if write != write1 {
                continue;
            }
            let e: &mut FdBytes = out.entry((pid, fd)).or_insert([0; 5]);
            let at = if write { 2 } else { 0 };
            e[at] += 1;
            e[at + 1] += i128::from(ret.max(0));
            e[4] += i128::from(ret < 0);
        }
    }
    out
}

/// The rows of recording `rec`, keyed.
fn rows<K: Ord, V>(
    t: &Table,
    rec: u32,
    row: impl Fn(&dyn Fn(&str) -> serde_json::Value) -> (K, V),
) -> BTreeMap<K, V> {
    t.rows
        .iter()
        .filter(|r| crate::sql::int(&t.col(r, "recording")) == u64::from(rec))
        .map(|r| row(&|c: &str| t.col(r, c)))
        .collect()
}

fn num(v: serde_json::Value) -> i128 {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
        .or_else(|| v.as_f64().map(|f| f as i128))
        .unwrap_or(i128::MIN)
}

/// Every key where perf's value and the query's differ.
fn differ<K: Ord + Debug, V: PartialEq + Debug>(
    perf: &BTreeMap<K, V>,
    query: &BTreeMap<K, V>,
    what: &str,
) -> Vec<String> {
    let mut why = vec![];
    for k in perf.keys().chain(query.keys()).collect::<BTreeSet<_>>() {
        let (a, b) = (perf.get(k), query.get(k));
        if a != b {
            why.push(format!("{k:?}: perf {what} {a:?}, query {b:?}"));
        }
    }
    why.truncate(SHOW);
    why
}

/// The `syscalls` query's rows of recording `rec` against perf's.
pub(crate) fn check_syscalls(t: &Table, rec: u32, perf: &[TraceLine]) -> Vec<String> {
    let query = rows(t, rec, |c| {
        let k = (num(c("pid")) as i64, num(c("syscall")) as i64);
        (
            k,
            (num(c("calls")) as u64, num(c("total_ns")), num(c("max_ns"))),
        )
    });
    differ(&syscalls(perf), &query, "(calls, total ns, max ns)")
}

/// The `wakeup_latency` query's rows of recording `rec` against perf's.
pub(crate) fn check_wakeups(t: &Table, rec: u32, perf: &[TraceLine]) -> Vec<String> {
    let query = rows(t, rec, |c| {
        let k = (num(c("tid")) as i64, crate::sql::text(&c("comm")));
        (
            k,
            (
                num(c("wakeups")) as u64,
                num(c("total_ns")),
                num(c("max_ns")),
            ),
        )
    });
    differ(&wakeups(perf), &query, "(wakeups, total ns, max ns)")
}

/// The `fd_bytes` query's rows of recording `rec` against perf's.
pub(crate) fn check_fd_bytes(t: &Table, rec: u32, perf: &[TraceLine]) -> Vec<String> {
    let query = rows(t, rec, |c| {
        let k = (num(c("pid")) as i64, num(c("fd")) as i64);
        let v = ["reads", "bytes_read", "writes", "bytes_written", "failed"].map(|n| num(c(n)));
        (k, v)
    });
    differ(
        &fd_bytes(perf),
        &query,
        "(reads, bytes read, writes, bytes written, failed)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<TraceLine> {
        text.lines().filter_map(TraceLine::parse).collect()
    }

    #[test]
    fn perf_script_lines_parse() {
        let l = TraceLine::parse(
            "   26642/26643 34611.368392803:  syscalls:sys_enter_read: fd: 0x00000003, buf: 0x55f1da68a930, count: 0x00001000",
        )
        .unwrap();
        assert_eq!((l.pid, l.tid, l.ns), (26642, 26643, 34_611_368_392_803));
        assert_eq!(l.event, "syscalls:sys_enter_read");
        assert!(l.trace.starts_with("fd: 0x00000003,"));
        // A cpu-clock line (no trace) and perf's warnings are not tracepoint lines.
        assert!(TraceLine::parse("'trace' not valid for software events. Ignoring.").is_none());
    }

    #[test]
    fn syscalls_pair_an_enter_with_the_next_event_of_its_thread() {
        let perf = lines(
            "10/11 1.000000100: raw_syscalls:sys_enter: NR 0 (3, 7ffc, 340, 0, 0, 0)
             10/11 1.000000150: raw_syscalls:sys_exit: NR 0 = 832
             10/12 1.000000160: raw_syscalls:sys_enter: NR 1 (1, 7ffc, 4, 0, 0, 0)
             10/11 1.000000200: raw_syscalls:sys_enter: NR 0 (3, 7ffc, 340, 0, 0, 0)
             10/11 1.000000300: raw_syscalls:sys_enter: NR 0 (3, 7ffc, 340, 0, 0, 0)
             10/11 1.000000400: raw_syscalls:sys_exit: NR 0 = 0
             10/12 1.000000500: raw_syscalls:sys_exit: NR 60 = 0",
        );
        // tid 11: 50 ns, then an enter not followed by its exit, then 100 ns; tid 12's
        // exit is of another call.
        assert_eq!(syscalls(&perf), [((10, 0), (2, 150, 100))].into());
    }

    #[test]
    fn a_wakeup_pairs_with_the_switch_that_runs_the_thread() {
        let perf = lines(
            "1/1 5.000001000: sched:sched_wakeup: comm=Web Content pid=42 prio=120 target_cpu=001
             7/7 5.000001500: sched:sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=b pid=9 next_pid=43 next_prio=120
             7/7 5.000003000: sched:sched_switch: prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=Web Content next_pid=42 next_prio=120
             1/1 5.000004000: sched:sched_wakeup: comm=x pid=43 prio=120 target_cpu=000
             1/1 5.000004000: sched:sched_wakeup: comm=x pid=43 prio=120 target_cpu=000
             0/0 5.000009000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=x next_pid=43 next_prio=120",
        );
        assert_eq!(
            wakeups(&perf),
            [
                ((42, "Web Content".into()), (1, 2000, 2000)),
                ((43, "x".into()), (1, 5000, 5000))
            ]
            .into()
        );
    }

    #[test]
    fn fd_bytes_sum_what_succeeded_and_count_what_failed() {
        let perf = lines(
            "5/5 2.000000001: syscalls:sys_enter_read: fd: 0x00000003, buf: 0x7f6a, count: 0x00020000
             5/5 2.000000002: syscalls:sys_exit_read: 0xffffffffffffffeb
             5/6 2.000000003: syscalls:sys_enter_write: fd: 0x00000001, buf: 0x7f6a, count: 0x00001000
             5/6 2.000000004: syscalls:sys_exit_write: 0x1000
             5/5 2.000000005: syscalls:sys_enter_read: fd: 0x00000003, buf: 0x7f6a, count: 0x00020000
             5/5 2.000000006: syscalls:sys_exit_read: 0x340
             5/5 2.000000007: syscalls:sys_enter_write: fd: 0x00000003, buf: 0x7f6a, count: 0x00020000
             5/5 2.000000008: syscalls:sys_exit_read: 0x10",
        );
        // fd 3: two reads (one EISDIR), 0x340 bytes; the write followed by a read's exit
        // is not paired.
        assert_eq!(
            fd_bytes(&perf),
            [
                ((5, 3), [2, 0x340, 0, 0, 1]),
                ((5, 1), [0, 0, 1, 0x1000, 0])
            ]
            .into()
        );
    }

    #[test]
    fn a_query_row_that_differs_is_named() {
        let t = Table {
            cols: [
                "recording",
                "pid",
                "fd",
                "reads",
                "bytes_read",
                "writes",
                "bytes_written",
                "failed",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![
                serde_json::json!([0, 5, 3, 2, 832, 0, 0, 1])
                    .as_array()
                    .unwrap()
                    .clone(),
                serde_json::json!([1, 5, 3, 9, 9, 9, 9, 9])
                    .as_array()
                    .unwrap()
                    .clone(),
            ],
        };
        let perf = lines(
            "5/5 2.000000001: syscalls:sys_enter_read: fd: 0x00000003, buf: 0x7f6a, count: 0x00020000
             5/5 2.000000002: syscalls:sys_exit_read: 0xffffffffffffffeb
             5/5 2.000000005: syscalls:sys_enter_read: fd: 0x00000003, buf: 0x7f6a, count: 0x00020000
             5/5 2.000000006: syscalls:sys_exit_read: 0x340",
        );
        assert!(check_fd_bytes(&t, 0, &perf).is_empty());
        assert_eq!(check_fd_bytes(&t, 1, &perf).len(), 1);
        assert_eq!(check_fd_bytes(&t, 2, &perf).len(), 1, "no rows at all");
    }
}
