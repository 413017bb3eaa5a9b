//! Running a workload as a whole child process: wall time, `ru_maxrss` from `wait4`, and
//! `RssAnon` polled from `/proc/PID/status` (memory beyond the mapped input, whose pages
//! count as `RssFile`).

use anyhow::{bail, Context, Result};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A workload whose first run takes longer than this is run only once.
pub(super) const LONG_RUN: Duration = Duration::from_secs(60);

/// Where the binaries and the scratch files live.
pub(super) struct Env {
    pub(super) root: PathBuf,
    pub(super) bench_bin: PathBuf,
    pub(super) perfdata_bin: PathBuf,
    pub(super) scratch: PathBuf,
    pub(super) perf: bool,
    /// `go tool pprof` runs (the peer of the gperftools profile row).
    pub(super) go: bool,
}

pub(super) fn check_status(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().with_context(|| format!("running {what}"))?;
    if !out.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// One workload's figures over its runs.
pub(super) struct Measured {
    /// Median wall time.
    pub(super) wall: Duration,
    pub(super) runs: usize,
    /// Largest `ru_maxrss` of the runs, KiB.
    pub(super) max_rss_kib: u64,
    /// Largest `RssAnon` seen while polling, KiB.
    pub(super) max_anon_kib: u64,
    /// Median CPU time (user + system, `wait4`): what the work cost, less sensitive than
    /// wall time to other processes sharing the cores.
    pub(super) cpu: Duration,
    /// What the first run printed.
    pub(super) stdout: String,
}

/// A command to time; `stdin` feeds it a file through `cat` (a real pipe).
pub(super) struct Workload {
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) stdin_cat: Option<PathBuf>,
    pub(super) keep_stdout: bool,
    /// Removed before each run (untimed): writers are measured writing a new file, as
    /// `cp` is, never replacing the last run's output.
    pub(super) fresh_output: Option<PathBuf>,
}

impl Workload {
    pub(super) fn new(program: &Path, args: &[&str]) -> Self {
        Workload {
            program: program.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
            stdin_cat: None,
            keep_stdout: false,
            fresh_output: None,
        }
    }
    /// The same workload, writing `out` afresh at each run.
    pub(super) fn writing(mut self, out: &str) -> Self {
        self.fresh_output = Some(PathBuf::from(out));
        self
    }
    pub(super) fn describe(&self) -> String {
        let name = self
            .program
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        let cmd = format!("{name} {}", self.args.join(" "));
        match &self.stdin_cat {
            Some(f) => format!("cat {} | {cmd}", f.display()),
            None => cmd,
        }
    }
}

pub(super) fn measure_workload(env: &Env, w: &Workload, runs: usize) -> Result<Measured> {
    let mut m = measure_rounds(env, &[("", w)], runs)?;
    Ok(m.remove("").expect("the one workload was measured"))
}

/// Measures `workloads` in rounds: each round runs every workload once, in order, so the
/// runs of every workload (and of the peer a row compares it with) are spread over the
/// same minutes. A ratio of medians taken minutes apart would carry the machine's drift
/// between them (a noisy VM's other tenants, its page cache); taken in the same rounds,
/// drift reaches both sides alike. A workload whose first run exceeds [`LONG_RUN`] runs
/// once.
pub(super) fn measure_rounds<'k, W: Borrow<Workload>>(
    env: &Env,
    workloads: &[(&'k str, W)],
    runs: usize,
) -> Result<HashMap<&'k str, Measured>> {
    struct Runs {
        walls: Vec<Duration>,
        cpus: Vec<Duration>,
        m: Measured,
        long: bool,
    }
    let mut all: Vec<Runs> = workloads
        .iter()
        .map(|_| Runs {
            walls: vec![],
            cpus: vec![],
            m: Measured {
                wall: Duration::ZERO,
                runs: 0,
                max_rss_kib: 0,
                max_anon_kib: 0,
                cpu: Duration::ZERO,
                stdout: String::new(),
            },
            long: false,
        })
        .collect();
    for round in 0..runs {
        for ((_, w), r) in workloads.iter().zip(&mut all) {
            if r.long {
                continue;
            }
            let w = w.borrow();
            let (wall, cpu, rss, anon, stdout) =
                run_once(env, w).with_context(|| format!("workload `{}`", w.describe()))?;
            if round == 0 {
                r.m.stdout = stdout;
            } else if stdout != r.m.stdout {
                bail!(
                    "`{}` printed {:?} then {:?}: the workload is not deterministic",
                    w.describe(),
                    r.m.stdout.trim(),
                    stdout.trim()
                );
            }
            r.walls.push(wall);
            r.cpus.push(cpu);
            r.m.max_rss_kib = r.m.max_rss_kib.max(rss);
            r.m.max_anon_kib = r.m.max_anon_kib.max(anon);
            r.long = wall > LONG_RUN;
        }
    }
    let mut results = HashMap::new();
    for ((key, w), mut r) in workloads.iter().zip(all) {
        let w = w.borrow();
        r.walls.sort();
        r.cpus.sort();
        let mut m = r.m;
        m.runs = r.walls.len();
        m.wall = r.walls[r.walls.len() / 2];
        m.cpu = r.cpus[r.cpus.len() / 2];
        println!(
            "  {:<60} {:>8.3} s  cpu {:>8.3} s  rss {:>7.1} MiB  anon {:>7.1} MiB  ({} run{})",
            w.describe(),
            m.wall.as_secs_f64(),
            m.cpu.as_secs_f64(),
            m.max_rss_kib as f64 / 1024.0,
            m.max_anon_kib as f64 / 1024.0,
            m.runs,
            if m.runs == 1 { "" } else { "s" }
        );
        results.insert(*key, m);
    }
    Ok(results)
}

/// Runs `w` once: wall time, CPU time, ru_maxrss (KiB), peak RssAnon (KiB), stdout.
pub(super) fn run_once(env: &Env, w: &Workload) -> Result<(Duration, Duration, u64, u64, String)> {
    if let Some(out) = &w.fresh_output {
        let _ = std::fs::remove_file(out);
    }
    let stderr_path = env.scratch.join("workload.stderr");
    // Kept stdout goes to a file, not a pipe: nothing reads a pipe while the child runs,
    // and a child printing more than a pipe holds would wait forever.
    let stdout_path = env.scratch.join("workload.stdout");
    let mut cmd = Command::new(&w.program);
    cmd.args(&w.args)
        .stderr(std::fs::File::create(&stderr_path)?)
        .stdout(if w.keep_stdout {
            Stdio::from(std::fs::File::create(&stdout_path)?)
        } else {
            Stdio::null()
        });
    let mut cat: Option<Child> = None;
    if let Some(f) = &w.stdin_cat {
        let mut c = Command::new("cat")
            .arg(f)
            .stdout(Stdio::piped())
            .spawn()
            .context("running cat")?;
        cmd.stdin(c.stdout.take().expect("cat's stdout is piped"));
        cat = Some(c);
    }
    let start = Instant::now();
    let child = cmd.spawn()?;
    let (status, rss_kib, anon_kib, cpu) = wait_watching_memory(child.id())?;
    let wall = start.elapsed();
    let stdout = if w.keep_stdout {
        let text = std::fs::read_to_string(&stdout_path)?;
        std::fs::remove_file(&stdout_path)?;
        text
    } else {
        String::new()
    };
    if let Some(mut c) = cat {
        c.wait()?;
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        bail!("failed (wait status {status:#x}): {}", stderr.trim());
    }
    Ok((wall, cpu, rss_kib, anon_kib, stdout))
}

/// Reaps `pid` with `wait4`, polling its `RssAnon` every 2 ms until it exits: its wait
/// status, `ru_maxrss`, peak `RssAnon` (KiB) and CPU time (its and its children's).
pub(super) fn wait_watching_memory(pid: u32) -> Result<(i32, u64, u64, Duration)> {
    let pid = pid as libc::pid_t;
    let status_file = format!("/proc/{pid}/status");
    let mut anon_kib = 0u64;
    loop {
        let mut status = 0;
        // SAFETY: plain syscall on our own child; `usage` is a valid out-pointer.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            let time = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
            };
            let cpu = time(usage.ru_utime) + time(usage.ru_stime);
            return Ok((status, usage.ru_maxrss as u64, anon_kib, cpu));
        }
        if r < 0 {
            return Err(std::io::Error::last_os_error()).context("wait4");
        }
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            anon_kib = anon_kib.max(rss_anon_kib(&text).unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The `RssAnon:` line of a `/proc/PID/status`, in KiB.
pub(super) fn rss_anon_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The number after `name=` in a line a bench program or script prints
/// (`samples=5012221 frames=…`, `walk=0.472 cpu=0.584`), as a `u64` or an `f64`.
pub(super) fn field<T>(line: &str, name: &str) -> Result<T>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .with_context(|| format!("no {name}= in {line:?}"))?
        .parse()
        .with_context(|| format!("{name}= in {line:?}"))
}

/// The samples of every event of `file` (a multi-event recording's too): the sum of the
/// `samples` of the events of `perfdata info --json`.
pub(super) fn sample_count(env: &Env, file: &Path) -> Result<u64> {
    let out = Command::new(&env.perfdata_bin)
        .args(["info", "--json"])
        .arg(file)
        .output()
        .context("running perfdata info")?;
    if !out.status.success() {
        bail!(
            "perfdata info failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    sum_event_samples(&text).with_context(|| format!("no events' samples in {text}"))
}

/// The sum of the `"samples": N` of the `"events"` list of `perfdata info --json`.
fn sum_event_samples(json: &str) -> Option<u64> {
    let start = json.find("\"events\":")?;
    let events = &json[start..];
    let end = events.find("\n  \"").unwrap_or(events.len());
    let mut total = None;
    for part in events[..end].split("\"samples\":").skip(1) {
        let digits: String = part
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        *total.get_or_insert(0) += digits.parse::<u64>().ok()?;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_s_samples_are_counted() {
        let json = "{\n  \"records\": 9,\n  \"events\": [\n    {\n      \"name\": \"a\",\n      \"samples\": 0\n    },\n    {\n      \"samples\": 7\n    },\n    {\"samples\": 5}\n  ],\n  \"top_processes\": [{\"samples\": 100}]\n}";
        assert_eq!(sum_event_samples(json), Some(12));
        assert_eq!(sum_event_samples("{\"records\": 1}"), None);
    }

    #[test]
    fn reads_rss_anon_from_proc_status() {
        let status = "Name:\tx\nVmRSS:\t  9000 kB\nRssAnon:\t    1234 kB\nRssFile:\t 7766 kB\n";
        assert_eq!(rss_anon_kib(status), Some(1234));
        assert_eq!(rss_anon_kib("Name:\tkthread\n"), None);
    }
}
