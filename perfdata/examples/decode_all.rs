//! Reads every sample of a recording (ip, time, callchain) and prints what it took.
//! `cargo run --release -p perfdata --example decode_all -- perf.data [--ordered|--owned]`
//! (a quick look; `cargo xtask bench` is the reference measurement).
//!
//! Default: zero-copy sample views in file order. `--ordered`: the same in perf's time
//! order. `--owned`: every record decoded into its owned value (`RecordBody`).

use perfdata::types::{CallchainContext, RecordBody};
use perfdata::RecordWalk;
use perfdata::Recording;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: decode_all FILE [--ordered|--owned]")?;
    let flag = |f: &str| std::env::args().any(|a| a == f);
    let (ordered, owned) = (flag("--ordered"), flag("--owned"));
    let recording = Recording::open(&path)?;
    let data = recording.data()?;
    let start = Instant::now();
    let (mut records, mut samples, mut frames, mut time_sum) = (0u64, 0u64, 0u64, 0u64);
    let is_frame = |ip: u64| ip < CallchainContext::MAX.0;
    let mut visit = |rec: perfdata::RawRecord<'_>,
                     ctx: &perfdata::RecordCtx|
     -> Result<bool, perfdata::rt::Error> {
        records += 1;
        if owned {
            if let RecordBody::Sample(s) = data.decode(&rec, ctx)? {
                samples += 1;
                time_sum = time_sum.wrapping_add(s.time.unwrap_or(0) ^ s.ip.unwrap_or(0));
                if let Some(c) = &s.callchain {
                    frames += c.ips.iter().filter(|&ip| is_frame(ip)).count() as u64;
                }
            }
        } else if let Some(s) = data.sample(&rec, ctx)? {
            samples += 1;
            time_sum = time_sum.wrapping_add(s.time().unwrap_or(0) ^ s.ip().unwrap_or(0));
            if let Some(c) = s.callchain()? {
                frames += c.ips.iter().filter(|&ip| is_frame(ip)).count() as u64;
            }
        }
        Ok(true)
    };
    if ordered {
        data.records()
            .time_ordered()
            .for_each(|_, rec, ctx| visit(rec, ctx))?;
    } else {
        data.for_each_record(&mut |_, rec, ctx| visit(rec, ctx))?;
    }
    let t = start.elapsed();
    let mb = recording.header_bytes().len() as f64 / 1e6;
    println!(
        "{records} records ({samples} samples, {frames} callchain frames, check {time_sum:x}) \
         from {mb:.1} MB in {:.3} s: {:.0} MB/s, {:.1} M records/s",
        t.as_secs_f64(),
        mb / t.as_secs_f64(),
        records as f64 / t.as_secs_f64() / 1e6
    );
    Ok(())
}
