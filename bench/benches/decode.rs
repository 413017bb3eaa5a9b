//! Micro-benchmarks on the committed fixtures: sample decode for a few sample_type mixes,
//! the time-ordered walk, and encoding with the generated encoders.
//! `cargo bench -p perfdata-bench` (the whole-file table is `cargo xtask bench`).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use perfdata::rt::{LittleEndian, Writer};
use perfdata::types::{RecordBody, RecordType};
use perfdata::RecordWalk;
use perfdata::Recording;
use perfdata_bench::{tally_sample, SampleTally};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/");

fn open(name: &str) -> Recording {
    Recording::open(format!("{FIXTURES}{name}")).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Decodes every SAMPLE of the file per iteration: callchains, many sample fields, and
/// DWARF user stacks (large register and stack blobs).
fn sample_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("sample_decode");
    for name in ["callchain.data", "sample-fields.data", "dwarf.data"] {
        let recording = open(name);
        let data = recording.data().expect("fixture parses");
        group.throughput(Throughput::Bytes(data.data().len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut tally = SampleTally::default();
                data.for_each_record(&mut |_, rec, ctx| {
                    if rec.record_type() == RecordType::SAMPLE {
                        tally_sample(&data, data.format.endian, &rec, ctx, &mut tally)?;
                    }
                    Ok(true)
                })
                .expect("fixture decodes");
                black_box(tally)
            })
        });
    }
    group.finish();
}

/// `records().time_ordered()`: the round queue of perf's time order.
fn ordered_walk(c: &mut Criterion) {
    let mut group = c.benchmark_group("ordered_walk");
    for name in ["switch-cpu-wide.data", "callchain.data"] {
        let recording = open(name);
        let data = recording.data().expect("fixture parses");
        group.throughput(Throughput::Bytes(data.data().len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut records = 0u64;
                let mut ordered = data.records().time_ordered();
                while let Some(r) = ordered.next().expect("fixture walks") {
                    records += u64::from(r.raw.header.size);
                }
                black_box(records)
            })
        });
    }
    group.finish();
}

/// Re-encodes every record of callchain.data (decoded once, outside the loop, into owned
/// values: the record views only live during the walk).
fn encode(c: &mut Criterion) {
    let recording = open("callchain.data");
    let data = recording.data().expect("fixture parses");
    let mut records: Vec<(RecordBody<'static>, _)> = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        records.push((data.decode(&rec, ctx)?.into_owned(), *ctx));
        Ok(true)
    })
    .expect("fixture decodes");
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(data.data().len() as u64));
    group.bench_function("callchain.data", |b| {
        let mut w = Writer::<LittleEndian>::new();
        b.iter(|| {
            let mut bytes = 0;
            for (body, ctx) in &records {
                w.clear();
                body.encode(&mut w, ctx).expect("re-encodes");
                bytes += w.len();
            }
            black_box(bytes)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = sample_decode, ordered_walk, encode
}
criterion_main!(benches);
