//! Crash safety (issue 25): every command that writes a file, killed with SIGKILL at
//! points spread over its run, leaves its input byte for byte as it was and its output
//! path holding the previous complete output (or the new complete one, when the kill came
//! after the rename; nothing, or the new one, when there was none before) — never a part
//! of one; the next run of the same command removes the
//! temporaries the killed runs left, and writes what an unkilled run writes.
//!
//! The inputs are real recordings made bigger (each sample repeated), so that a run
//! lasts long enough to be killed in the middle. Each command is killed at 50 points: 42
//! spread uniformly over the duration of an unkilled run, each with its own jitter, and 8
//! just after its temporary output appears; a point the run outlived is drawn again,
//! earlier (the seed is printed; `PERFDATA_SIGKILL_SEED` replays it).

use crate::common;
use perfdata::types::RecordType;
use perfdata::write::{Builder, WriteOptions};
use perfdata::PerfData;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Kill points per command spread over a run.
const KILLS: usize = 42;
/// More per command, shortly after its temporary output file appears (most of a viewer
/// export's run is analysis, before it starts writing).
const WRITE_KILLS: usize = 8;
/// A kill point whose run ended before it is drawn again, earlier, up to this many times,
/// so that each command is killed `KILLS + WRITE_KILLS` times.
const REDRAWS: usize = 4;
/// How many times each sample of the small recordings is repeated.
const REPEAT: usize = 40;

/// A file tree: relative path → bytes (a single file is the tree of one entry "").
type Tree = BTreeMap<PathBuf, Vec<u8>>;

fn tree(path: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, into: &mut Tree) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(root, &p, into);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                into.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut t = Tree::new();
    walk(path, path, &mut t);
    t
}

/// The files below `path` (their names only).
fn names(path: &Path) -> Vec<PathBuf> {
    let mut v = vec![];
    let mut dirs = vec![path.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                v.push(p.strip_prefix(path).unwrap().to_path_buf());
            }
        }
    }
    v
}

/// Writes `t` over the files of `dir` (leaving any other file there alone).
fn restore(dir: &Path, t: &Tree) {
    for (rel, bytes) in t {
        let p = dir.join(rel);
        if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
        }
    }
}

/// `input` with each SAMPLE record repeated `REPEAT` times, written to `output`.
fn enlarge(input: &Path, output: &Path) {
    let bytes = std::fs::read(input).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    let mut records = Vec::with_capacity(file.records.len() * REPEAT);
    for r in file.records.drain(..) {
        let n = if r.ty == RecordType::SAMPLE {
            REPEAT
        } else {
            1
        };
        records.extend(std::iter::repeat_n(r, n));
    }
    file.records = records;
    file.save(output, WriteOptions::default()).unwrap();
}

fn perfdata(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
    c.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Runs to completion; how long it took.
fn run_ok(args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = perfdata(args).output().unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// xorshift64*: the kill points' jitter.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One command: `args` with `{IN}` and `{OUT}` in place of its input and output.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// The recording it is killed on.
    input: PathBuf,
    /// A smaller one, whose output is the "previous complete output".
    previous_input: PathBuf,
}

/// What happened to one command.
#[derive(Default)]
struct Outcome {
    /// An unkilled run's duration.
    took: Duration,
    killed: usize,
    /// Kills that left a new temporary file: those in the middle of writing (a kill may
    /// also come after the rename, as the process ends).
    mid_write: usize,
    /// Runs that ended before their kill point (each point is then drawn again, earlier).
    finished: usize,
    stale_before_rerun: usize,
}

fn args_for<'a>(case: &'a Case, input: &'a str, output: &'a str) -> Vec<&'a str> {
    case.args
        .iter()
        .map(|a| match *a {
            "{IN}" => input,
            "{OUT}" => output,
            a => a,
        })
        .collect()
}

fn kill_case(root: &Path, case: &Case, rng: &mut Rng) -> Outcome {
    let dir = root.join(case.name);
    // The input's own directory, copied: nothing else writes there.
    let in_dir = dir.join("in");
    std::fs::create_dir_all(&in_dir).unwrap();
    let input = in_dir.join(case.input.file_name().unwrap());
    std::fs::copy(&case.input, &input).unwrap();
    let debug = PathBuf::from(format!("{}.debug", case.input.display()));
    if debug.exists() {
        std::os::unix::fs::symlink(&debug, format!("{}.debug", input.display())).unwrap();
    }
    let input_bytes = std::fs::read(&input).unwrap();
    // The output alone in its directory, so that anything else there is a leftover.
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let output = out_dir.join("output");
    let (inp, outp) = (input.to_str().unwrap(), output.to_str().unwrap());
    let prev_in = case.previous_input.to_str().unwrap();

    run_ok(&args_for(case, prev_in, outp));
    let previous = tree(&out_dir);
    let took = run_ok(&args_for(case, inp, outp));
    let complete = tree(&out_dir);
    assert_eq!(
        previous.keys().collect::<Vec<_>>(),
        complete.keys().collect::<Vec<_>>()
    );
    assert!(
        previous != complete,
        "{}: the previous output must differ",
        case.name
    );

    let mut outcome = Outcome {
        took,
        ..Outcome::default()
    };
    let leftovers = |now: &Tree| now.keys().filter(|k| !previous.contains_key(*k)).count();
    // The output as before a kill: the previous one, or nothing for a fresh run.
    let reset = |fresh: bool| {
        restore(&out_dir, &previous);
        if fresh {
            for rel in previous.keys() {
                std::fs::remove_file(out_dir.join(rel)).unwrap();
            }
        }
    };
    for i in 0..KILLS + WRITE_KILLS {
        // The last kill has no previous output: it must leave nothing, or all of the new.
        let fresh = i == KILLS + WRITE_KILLS - 1;
        // Where in the run: a fraction of an unkilled run (from the start, or for the
        // write kills from the temporary file's appearance, at most a 100th of a run).
        let mut point = if i < KILLS {
            (i as f64 + rng.unit()) / KILLS as f64
        } else {
            rng.unit() / 100.0
        };
        for attempt in 0..=REDRAWS {
            if attempt > 0 {
                // The run ended before the kill: the same kind of point, earlier.
                point *= rng.unit();
            }
            reset(fresh);
            let before = names(&out_dir);
            let started = Instant::now();
            let mut child = perfdata(&args_for(case, inp, outp)).spawn().unwrap();
            if i >= KILLS {
                // Wait for a new file (a temporary output).
                while child.try_wait().unwrap().is_none()
                    && names(&out_dir).iter().all(|n| before.contains(n))
                    && started.elapsed() < took * 4
                {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            std::thread::sleep(took.mul_f64(point));
            let at = started.elapsed();
            // SIGKILL on Unix (std's Child::kill).
            child.kill().unwrap();
            let status = child.wait().unwrap();
            let killed = match status.signal() {
                Some(9) => true,
                _ => {
                    assert!(status.success(), "{}: {status}", case.name);
                    false
                }
            };
            let what = format!(
                "{} killed after {at:?} (an unkilled run: {took:?})",
                case.name
            );
            assert!(
                std::fs::read(&input).unwrap() == input_bytes,
                "{what}: the input changed"
            );
            let now = tree(&out_dir);
            for (rel, old) in &previous {
                let Some(b) = now.get(rel) else {
                    assert!(fresh, "{what}: {} is gone", rel.display());
                    continue;
                };
                let old = if fresh { &complete[rel] } else { old };
                assert!(
                    b == old || *b == complete[rel],
                    "{what}: {} is neither the previous output (if any) nor the new one ({} bytes; {} or {})",
                    rel.display(),
                    b.len(),
                    old.len(),
                    complete[rel].len()
                );
            }
            if killed {
                outcome.killed += 1;
                if now.keys().any(|n| !before.contains(n)) {
                    outcome.mid_write += 1;
                }
                break;
            }
            outcome.finished += 1;
        }
    }
    outcome.stale_before_rerun = leftovers(&tree(&out_dir));
    // The next run completes, leaves nothing else beside its output, and writes what an
    // unkilled run writes.
    run_ok(&args_for(case, inp, outp));
    let after = tree(&out_dir);
    let extra: Vec<_> = after
        .keys()
        .filter(|k| !complete.contains_key(*k))
        .collect();
    assert!(
        extra.is_empty(),
        "{}: left beside the output: {extra:?}",
        case.name
    );
    assert!(
        after == complete,
        "{}: the rerun wrote another output",
        case.name
    );
    assert!(std::fs::read(&input).unwrap() == input_bytes);
    outcome
}

#[test]
fn sigkill_leaves_input_and_previous_output_whole() {
    let seed = std::env::var("PERFDATA_SIGKILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("sigkill: PERFDATA_SIGKILL_SEED={seed}");
    let mut rng = Rng(seed);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let src = root.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let wordfreq = common::sample_path("wordfreq.data");
    let dwarf = common::fixture_path("dwarf.data");
    let big = src.join("wordfreq.data");
    enlarge(&wordfreq, &big);
    std::os::unix::fs::symlink(
        common::sample_path("wordfreq.data.debug"),
        src.join("wordfreq.data.debug"),
    )
    .unwrap();
    let big_dwarf = src.join("dwarf.data");
    enlarge(&dwarf, &big_dwarf);
    let (z, small_z) = (src.join("z.data"), src.join("small-z.data"));
    for (i, o) in [(&big, &z), (&wordfreq, &small_z)] {
        run_ok(&[
            "convert",
            i.to_str().unwrap(),
            "--compress",
            "-o",
            o.to_str().unwrap(),
        ]);
    }
    let case = |name, args, input: &Path, previous_input: &Path| Case {
        name,
        args,
        input: input.to_path_buf(),
        previous_input: previous_input.to_path_buf(),
    };
    let cases = [
        case("copy", &["convert", "{IN}", "-o", "{OUT}"], &big, &wordfreq),
        case(
            "endian-big",
            &["convert", "{IN}", "--endian", "big", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "layout-pipe",
            &["convert", "{IN}", "--layout", "pipe", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "compress",
            &["convert", "{IN}", "--compress", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "decompress",
            &["convert", "{IN}", "--decompress", "-o", "{OUT}"],
            &z,
            &small_z,
        ),
        case(
            "typed",
            &["convert", "{IN}", "--typed", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "unwind",
            &["convert", "--unwind", "{IN}", "-o", "{OUT}"],
            &big_dwarf,
            &dwarf,
        ),
        case(
            "parquet",
            &["export", "{IN}", "--to", "parquet", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "pprof",
            &["export", "{IN}", "--to", "pprof", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "speedscope",
            &["export", "{IN}", "--to", "speedscope", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case(
            "firefox",
            &["export", "{IN}", "--to", "firefox", "-o", "{OUT}"],
            &big,
            &wordfreq,
        ),
        case("stats", &["stats", "{IN}", "-o", "{OUT}"], &big, &wordfreq),
    ];
    let started = Instant::now();
    let (mut killed, mut stale) = (0, 0);
    for c in &cases {
        let o = kill_case(root, c, &mut rng);
        eprintln!(
            "sigkill: {}: an unkilled run {:?}; {} killed, {} of them mid-write; {} ran to the end before their kill point (drawn again earlier); {} temporaries left for the rerun",
            c.name, o.took, o.killed, o.mid_write, o.finished, o.stale_before_rerun
        );
        assert!(
            o.killed >= 50,
            "{}: only {} of {} kill points found the run still running",
            c.name,
            o.killed,
            KILLS + WRITE_KILLS
        );
        killed += o.killed;
        stale += o.stale_before_rerun;
    }
    eprintln!(
        "sigkill: {killed} runs killed of {} kill points, {stale} temporaries left by them and removed by the next run, {:?}",
        cases.len() * (KILLS + WRITE_KILLS),
        started.elapsed()
    );
    assert!(killed >= 50 * cases.len(), "only {killed} runs killed");
}

/// A completed run removes the temporaries of its output that no live run holds, and no
/// other: not those of another output, not the one a run still writing holds.
#[test]
fn a_completed_run_removes_only_dead_runs_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let dead = dir.path().join(".out.data.perfdata-tmp.deadbeef");
    let other = dir.path().join(".other.data.perfdata-tmp.deadbeef");
    for p in [&dead, &other] {
        std::fs::write(p, b"half a file").unwrap();
    }
    let live = perfdata::write::temp_file_beside(&out).unwrap();
    let name = live
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with(".out.data.perfdata-tmp."), "{name}");
    let plain = common::fixture_path("plain.data");
    for args in [
        [
            "convert",
            plain.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        [
            "report",
            plain.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    ] {
        std::fs::write(&dead, b"half a file").unwrap();
        run_ok(&args);
        assert!(!dead.exists(), "{args:?}: a dead run's temporary is left");
        assert!(other.exists() && live.path().exists(), "{args:?}");
    }
}
