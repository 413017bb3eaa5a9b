//! Iterates a recording and fully decodes every record; prints what it took.
//! `cargo run --release -p perfdata --example decode_all -- perf.data`
//! (a first measurement; the benchmark suite is the reference).

use perfdata::container::Recording;
use perfdata::generated::perf_data::{RecordBody, RecordType, Sample};
use perfdata::rt::{LittleEndian, Reader};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: decode_all FILE [--direct]")?;
    // --direct: decode samples with Sample::decode (little-endian inputs) instead of
    // RecordBody::decode, to see what the generic enum costs.
    let direct = std::env::args().any(|a| a == "--direct");
    let recording = Recording::open(&path)?;
    let data = recording.data()?;
    let start = Instant::now();
    let (mut records, mut samples, mut frames) = (0u64, 0u64, 0u64);
    data.for_each_record(&mut |_, rec, ctx| {
        records += 1;
        if direct && rec.record_type() == RecordType::SAMPLE {
            // The sample type's own decoder: no RecordBody wrapping.
            let s = Sample::decode(
                &mut Reader::<LittleEndian>::new(rec.body, rec.offset + 8),
                ctx,
            )?;
            samples += 1;
            if let Some(c) = &s.callchain {
                frames += c.ips.iter().fold(0u64, |n, ip| n + u64::from(ip != 0));
            }
        } else if let RecordBody::Sample(s) = data.decode(&rec, ctx)? {
            samples += 1;
            if let Some(c) = &s.callchain {
                frames += c.ips.iter().fold(0u64, |n, ip| n + u64::from(ip != 0));
            }
        }
        Ok(true)
    })?;
    let t = start.elapsed();
    let mb = recording.header_bytes().len() as f64 / 1e6;
    println!(
        "{records} records ({samples} samples, {frames} callchain frames) from {mb:.1} MB in {:.3} s: {:.0} MB/s, {:.1} M records/s",
        t.as_secs_f64(),
        mb / t.as_secs_f64(),
        records as f64 / t.as_secs_f64() / 1e6
    );
    Ok(())
}
