//! Hostile input, measured: for every fixture and hundreds of corruptions of them (bytes
//! flipped, cut anywhere, counts and sizes set huge, a compressed record that expands
//! 4000-fold) the full read (`perfdata_fuzz::format::read_file`: open, features, file order,
//! time order, salvage, check) never panics and takes time proportional to the input;
//! `perfdata::check` (open, every feature, every record decoded, salvaging) allocates on
//! the Rust heap no more than a small multiple of the input's size. (zstd's decoder state
//! is allocated by C code, outside this count. Time order holds a round of records, as
//! perf does: for compressed input that is bounded by what the round expands to.)
//!
//! Writer failures: a disk that fills up (a failing writer, and a real 96 KiB tmpfs when
//! it can be mounted) leaves the original file untouched and no temporary file behind.

// A binary of its own: its global allocator counts every allocation of the process.
use perfdata::RecordWalk;
use perfdata_test_support::fixture;

use perfdata::write::{save_with, Builder, RecordData, WriteOptions};
use perfdata::PerfData;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Counts live Rust heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tests of this file measure one at a time (the counter is global).
static MEASURE: Mutex<()> = Mutex::new(());

/// Peak heap growth and time of `f`.
fn measure(f: impl FnOnce()) -> (usize, Duration) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let t = Instant::now();
    f();
    (PEAK.load(Relaxed).saturating_sub(base), t.elapsed())
}

/// A small deterministic PRNG (xorshift64*): the corruptions are the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const FIXTURES: &[&str] = &[
    "callchain.data",
    "compressed.data",
    "dwarf.data",
    "multi-event.data",
    "pipe-callchain.pipe.data",
    "pipe-tracepoint.pipe.data",
    "tracepoint.data",
    "switch-cpu-wide.data",
];

/// A fixture's compressed-record bomb: many copies of one record, compressed into
/// COMPRESSED2 records that expand about 4000-fold.
fn bomb() -> Vec<u8> {
    let bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    let sample = file.records.iter().find(|r| r.ty.0 == 9).cloned().unwrap();
    let tail = file.records.split_off(file.records.len() - 1);
    file.records.extend(std::iter::repeat_n(sample, 100_000));
    file.records.extend(tail);
    file.compress(perfdata::write::stages::CompressedKind::Compressed2, 19)
        .unwrap();
    let mut out = std::io::Cursor::new(vec![]);
    file.write_to(&mut out, WriteOptions::default()).unwrap();
    out.into_inner()
}

/// The hostile inputs: name, bytes.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = vec![];
    for name in FIXTURES {
        let good = fixture(name);
        out.push((name.to_string(), good.clone()));
        for i in 0..40 {
            let mut b = good.clone();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(b.len());
                b[at] = rng.next() as u8;
            }
            out.push((format!("{name} flipped #{i}"), b));
        }
        for i in 0..10 {
            let mut b = good.clone();
            // A u64 or u32 somewhere set to all ones: counts, sizes, offsets.
            let at = rng.below(b.len() - 8) & !3;
            let width = if rng.next() & 1 == 0 { 8 } else { 4 };
            b[at..at + width].fill(0xff);
            out.push((format!("{name} huge value #{i}"), b));
        }
        for i in 0..10 {
            let cut = rng.below(good.len());
            out.push((format!("{name} cut #{i}"), good[..cut].to_vec()));
        }
    }
    out.push(("compressed bomb".into(), bomb()));
    out
}

/// Bytes the compressed records of `bytes` expand to (as far as they read).
fn expanded(bytes: &[u8]) -> usize {
    let Ok(data) = PerfData::open(bytes) else {
        return 0;
    };
    let mut n = 0;
    let _ = data.records().salvaging().for_each(|origin, rec, _| {
        if matches!(origin, perfdata::Origin::Compressed { .. }) {
            n += rec.stream_len();
        }
        Ok(true)
    });
    n
}

#[test]
fn no_panic_time_bounded_memory_bounded() {
    let _one = MEASURE.lock().unwrap_or_else(|e| e.into_inner());
    let inputs = inputs();
    let mut worst = (0.0f64, String::new());
    for (name, bytes) in &inputs {
        let (_, took) = measure(|| {
            let caught = std::panic::catch_unwind(|| perfdata_fuzz::format::read_file(bytes));
            assert!(caught.is_ok(), "{name}: panicked");
        });
        let (peak, _) = measure(|| {
            perfdata::check::check_bytes(bytes);
        });
        // A small multiple of the input, plus a fixed allowance (buffers of 64 KiB,
        // the decompressor's chunk, tables per attr).
        let bound = 8 * bytes.len() + (2 << 20);
        assert!(
            peak <= bound,
            "{name}: {peak} bytes allocated for a {}-byte input (bound {bound})",
            bytes.len()
        );
        let ratio = peak as f64 / bytes.len().max(1) as f64;
        if ratio > worst.0 {
            worst = (ratio, name.clone());
        }
        // Linear time in the bytes read (the input and what its compressed records
        // expand to): a generous per-byte budget for an unoptimised build on a shared
        // machine; a quadratic walk or a loop would exceed it by orders of magnitude.
        let work = bytes.len() + expanded(bytes);
        let budget = Duration::from_millis(500) + Duration::from_micros(50) * work as u32;
        assert!(took <= budget, "{name}: {took:?} for {work} bytes");
    }
    println!(
        "{} inputs; worst heap/input ratio {:.1} ({})",
        inputs.len(),
        worst.0,
        worst.1
    );
}

#[test]
fn the_bomb_expands_and_is_read_in_bounded_memory() {
    let _one = MEASURE.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = bomb();
    let data = PerfData::open(&bytes).unwrap();
    let mut expanded = 0usize;
    let (peak, _) = measure(|| {
        data.for_each_record(&mut |origin, rec, _| {
            if matches!(origin, perfdata::Origin::Compressed { .. }) {
                expanded += rec.stream_len();
            }
            Ok(true)
        })
        .unwrap();
    });
    assert!(
        expanded > 500 * bytes.len(),
        "not a bomb: {} bytes expand to {expanded}",
        bytes.len()
    );
    assert!(peak < 1 << 20, "{peak} bytes held to expand {expanded}");
}

/// A writer that fails with ENOSPC once `room` bytes are written.
struct DiskFull<W> {
    inner: W,
    room: usize,
}

impl<W: Write> Write for DiskFull<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        self.inner.write(&buf[..n])
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Seek> Seek for DiskFull<W> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Only the target is in `dir`, with its old bytes.
fn untouched(dir: &std::path::Path, target: &std::path::Path, before: &[u8]) {
    assert_eq!(std::fs::read(target).unwrap(), before, "target changed");
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![target.file_name().unwrap()], "left behind");
}

#[test]
fn a_full_disk_leaves_the_original_and_no_temporary_file() {
    let bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let file = Builder::read(&data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("perf.data");
    let before = fixture("plain.data");
    std::fs::write(&target, &before).unwrap();
    for room in [0, 100, 4096, bytes.len() / 2, bytes.len() - 1] {
        let err = save_with(&target, |out| {
            file.write_to(&mut DiskFull { inner: out, room }, WriteOptions::default())
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("No space left") || err.to_string().contains("os error 28"),
            "room {room}: {err}"
        );
        untouched(dir.path(), &target, &before);
    }
}

/// Unmounts when dropped.
struct Mounted(std::path::PathBuf);
impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_tmpfs_leaves_the_original_and_no_temporary_file() {
    let outer = tempfile::tempdir().unwrap();
    let mnt = outer.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=96k", "tmpfs"])
        .arg(&mnt)
        .output();
    match mounted {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            println!(
                "SKIP real ENOSPC: cannot mount a tmpfs ({}); the failing-writer test covers the logic",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            println!("SKIP real ENOSPC: no mount command ({e})");
            return;
        }
    }
    let _guard = Mounted(mnt.clone());
    let target = mnt.join("perf.data");
    let before = fixture("plain.data");
    std::fs::write(&target, &before).unwrap();
    // A file larger than what is left: its records many times over.
    let bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    let records = file.records.clone();
    for _ in 0..60 {
        file.records.extend(records.iter().cloned());
    }
    assert!(file
        .records
        .iter()
        .all(|r| matches!(r.data, RecordData::Raw { .. })));
    let err = file.save(&target, WriteOptions::default()).unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    untouched(&mnt, &target, &before);
    // The streaming conversion too (into the small mount, from a big input outside it).
    let input = outer.path().join("big.data");
    let mut out = std::io::Cursor::new(vec![]);
    file.write_to(&mut out, WriteOptions::default()).unwrap();
    std::fs::write(&input, out.into_inner()).unwrap();
    let err = perfdata::write::convert_file(&input, &target, &Default::default()).unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    untouched(&mnt, &target, &before);
}
