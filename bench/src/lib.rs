//! The workloads `cargo xtask bench` times, one per process (see `main.rs`), written so
//! that perfdata and linux-perf-data do exactly the same work and report the same counts.

use anyhow::Context;
use linux_perf_data::linux_perf_event_reader::{EventRecord, RecordType as LpdRecordType};
use linux_perf_data::{PerfFileReader, PerfFileRecord};
use perfdata::rt::Endian;
use perfdata::types::{CallchainContext, RecordType};
use perfdata::RecordWalk;
use perfdata::{PerfData, RawRecord, RecordCtx, Recording};
use std::fmt;
use std::path::Path;

pub mod gperftools;
pub mod synth;

/// What a sample walk saw. Two readers agree on a file when all three fields agree (the
/// checksum is a wrapping sum, so it does not depend on the order of the walk).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SampleTally {
    pub samples: u64,
    /// Callchain entries that are addresses, not context markers.
    pub frames: u64,
    /// Wrapping sum of every sample's ip, time and callchain frame.
    pub checksum: u64,
}

impl SampleTally {
    /// Counts one sample: the same rule for every reader.
    #[inline]
    pub fn add(
        &mut self,
        ip: Option<u64>,
        time: Option<u64>,
        callchain: impl Iterator<Item = u64>,
    ) {
        self.samples += 1;
        let start = ip.unwrap_or(0).wrapping_add(time.unwrap_or(0));
        let (frames, sum) = callchain
            .filter(|&e| is_frame(e))
            .fold((0u64, start), |(n, s), e| (n + 1, s.wrapping_add(e)));
        self.frames += frames;
        self.checksum = self.checksum.wrapping_add(sum);
    }
}

impl fmt::Display for SampleTally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "samples={} frames={} checksum={:016x}",
            self.samples, self.frames, self.checksum
        )
    }
}

/// A callchain entry is a frame unless it is a `PERF_CONTEXT_*` marker (>= PERF_CONTEXT_MAX).
#[inline]
pub fn is_frame(entry: u64) -> bool {
    entry < CallchainContext::MAX.0
}

/// The floor: reads every byte of the mapped file once (sum of its u64 words), its pages
/// mapped ahead on another thread as perfdata's walks have them ([`ours`]).
pub fn scan(path: &Path) -> anyhow::Result<(u64, u64)> {
    let file = perfdata::MappedFile::open(path)?;
    let bytes = file.bytes();
    let mut ahead = file.populate_ahead();
    // Told where the scan is every MiB (the walks tell it at every record).
    const STEP: usize = 1 << 20;
    let mut sum = 0u64;
    for (i, part) in bytes.chunks(STEP).enumerate() {
        ahead.reached((i * STEP) as u64);
        let words = part.chunks_exact(8);
        let rest = words.remainder();
        sum = words.fold(sum, |s, w| {
            s.wrapping_add(u64::from_le_bytes(w.try_into().expect("8-byte chunk")))
        });
        sum = rest.iter().fold(sum, |s, &b| s.wrapping_add(u64::from(b)));
    }
    Ok((bytes.len() as u64, sum))
}

/// perfdata: every SAMPLE's ip, time and callchain, in file order or perf's time order.
pub fn ours(path: &Path, ordered: bool) -> anyhow::Result<SampleTally> {
    let recording = Recording::open(path)?;
    let data = recording.data()?;
    let mut tally = SampleTally::default();
    // As perfdata's analyses walk: the pages ahead are mapped (and those behind
    // unmapped) on another thread.
    let mut ahead = recording.populate_ahead();
    // As perfdata's analyses walk: in a compile-time byte order (the walk and the sample
    // views), the visit a closure the walk is generic over.
    perfdata::rt::static_endian!(data.format.endian, |e| {
        let mut visit = |_, rec: RawRecord<'_>, ctx: &RecordCtx| {
            ahead.reached(rec.offset);
            if rec.record_type() == RecordType::SAMPLE {
                tally_sample(&data, e, &rec, ctx, &mut tally)?;
            }
            Ok(true)
        };
        let mut records = data.records_as(e);
        if ordered {
            records.time_ordered().for_each(&mut visit)
        } else {
            records.for_each(&mut visit)
        }
    })?;
    Ok(tally)
}

/// The perfdata-specific decoding of one sample: a zero-copy view whose ip and time are
/// read at offsets planned once per event, the callchain decoded on demand.
#[inline]
pub fn tally_sample<E: Endian>(
    data: &PerfData<'_>,
    e: E,
    rec: &RawRecord<'_>,
    ctx: &RecordCtx,
    tally: &mut SampleTally,
) -> Result<(), perfdata::rt::Error> {
    if let Some(s) = data.sample_as(e, rec, ctx)? {
        match s.callchain()? {
            Some(c) => tally.add(s.ip(), s.time(), c.ips.iter()),
            None => tally.add(s.ip(), s.time(), std::iter::empty()),
        }
    }
    Ok(())
}

/// linux-perf-data 0.13: the same work. Its record iterator always sorts by time.
pub fn lpd(path: &Path) -> anyhow::Result<SampleTally> {
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(std::io::BufReader::new(file))
        .with_context(|| format!("linux-perf-data cannot open {}", path.display()))?;
    let mut tally = SampleTally::default();
    while let Some(record) = record_iter
        .next_record(&mut perf_file)
        .with_context(|| format!("linux-perf-data reading {}", path.display()))?
    {
        if let PerfFileRecord::EventRecord { record, .. } = record {
            // Only samples are parsed, as our walk decodes only samples.
            if record.record_type != LpdRecordType::SAMPLE {
                continue;
            }
            if let EventRecord::Sample(s) = record.parse()? {
                let callchain = s.callchain.as_ref();
                let entries = callchain
                    .into_iter()
                    .flat_map(|c| (0..c.len()).filter_map(|i| c.get(i)));
                tally.add(s.ip, s.timestamp, entries);
            }
        }
    }
    Ok(tally)
}
