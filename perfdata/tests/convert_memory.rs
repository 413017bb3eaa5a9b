//! Memory does not grow with the file (DESIGN principle 8): converting a generated input
//! of ~200 MB allocates at most a fixed amount, whatever the conversion. Heap bytes are
//! counted by a global allocator (the memory-mapped input is not heap); nothing is timed.

// A binary of its own: its global allocator counts every allocation of the process.
use perfdata_test_support::fixture;

use perfdata::rt::{Endianness, LittleEndian};
use perfdata::write::stages::CompressedKind;
use perfdata::write::{convert_file, Builder, ConvertOptions, FileSink, RecordEncoder, Sink};
use perfdata::PerfData;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes a conversion may use beyond what was allocated before it.
const BOUND: usize = 32 << 20;
const INPUT_SIZE: u64 = 200 << 20;

/// Peak heap growth while `f` runs.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

/// A ~200 MB file: callchain.data's header part, its records repeated (written through
/// the streaming sink, so generating it is bounded too).
fn generate(path: &std::path::Path) {
    let bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let file = Builder::read(&data).unwrap();
    assert_eq!(file.endian, Endianness::Little);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let enc = RecordEncoder::<LittleEndian>::for_file(&file);
    let mut sink = FileSink::begin(&mut out, &file, !file.features.is_empty(), enc).unwrap();
    let mut written = 0u64;
    let per_round: u64 = data.data().len() as u64;
    while written < INPUT_SIZE {
        for r in &file.records {
            sink.record(r).unwrap();
        }
        written += per_round;
    }
    sink.finish(&file.features, &file.feature_table_slack)
        .unwrap();
}

#[test]
fn converting_a_200_mb_file_allocates_a_bounded_amount() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.data");
    generate(&input);
    assert!(std::fs::metadata(&input).unwrap().len() >= INPUT_SIZE);
    let out = dir.path().join("out.data");
    let compressed = dir.path().join("z.data");
    let cases: Vec<(&str, &std::path::Path, &std::path::Path, ConvertOptions)> = vec![
        ("copy", &input, &out, ConvertOptions::default()),
        (
            "typed, big-endian",
            &input,
            &out,
            ConvertOptions {
                typed: true,
                endian: Some(Endianness::Big),
                ..Default::default()
            },
        ),
        (
            "pipe",
            &input,
            &out,
            ConvertOptions {
                layout: Some(perfdata::Layout::Pipe),
                ..Default::default()
            },
        ),
        (
            "compress",
            &input,
            &compressed,
            ConvertOptions {
                compress: Some((CompressedKind::Compressed2, 1)),
                ..Default::default()
            },
        ),
        (
            "big-endian, compressed",
            &compressed,
            &out,
            ConvertOptions {
                endian: Some(Endianness::Big),
                ..Default::default()
            },
        ),
        (
            "decompress",
            &compressed,
            &out,
            ConvertOptions {
                decompress: true,
                ..Default::default()
            },
        ),
    ];
    for (name, from, to, opts) in cases {
        let peak = peak_during(|| convert_file(from, to, &opts).unwrap());
        eprintln!("{name}: peak heap growth {} KiB", peak >> 10);
        assert!(
            peak < BOUND,
            "{name}: the conversion allocated {peak} bytes at its peak (bound {BOUND})"
        );
    }
    // The output of the last case is the input again, decompressed.
    assert_eq!(
        std::fs::metadata(&out).unwrap().len(),
        std::fs::metadata(&input).unwrap().len()
    );
}
