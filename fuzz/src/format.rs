//! The bodies of the fuzz targets (`fuzz/fuzz_targets/`), as library functions so that
//! `cargo test` replays every committed crash and regression input on stable
//! (`tests/fuzz_regressions.rs`). Each takes arbitrary bytes, runs a reader, writer or
//! conversion over them and panics only when an invariant breaks (a panic inside the
//! library is a finding too); errors on bad input are the expected outcome.

use perfdata::check::{check_bytes, Status};
use perfdata::rt::Endianness;
use perfdata::types::RecordType;
use perfdata::write::stages::CompressedKind;
use perfdata::write::{Builder, WriteOptions};
use perfdata::RecordWalk;
use perfdata::{Layout, Origin, PerfData, PipeReader};
use std::io::{Cursor, Read};

/// Inputs larger than this are cut (libFuzzer's default `-max_len` is far below it;
/// replayed seeds may be larger).
const MAX_INPUT: usize = 1 << 20;

/// `read_file`: open, decode every feature and record in file order, time order and
/// salvaging, print every tracepoint sample's trace text, and `check`. Salvaging an input the plain walk reads gives the same
/// records and as damage only the SPLIT runs the plain walk noted as unjoined; else the
/// plain walk's records are a prefix of it. Time order gives as many records as file
/// order.
pub fn read_file(bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    let report = check_bytes(bytes);
    let Ok(data) = PerfData::open(bytes) else {
        assert_eq!(report.status(), Status::Unreadable, "{report:?}");
        return;
    };
    assert_ne!(report.status(), Status::Unreadable, "{report:?}");
    for f in &data.features {
        let _ = data.feature(f);
    }
    let _ = data.feature_problems();
    let mut plain = vec![];
    let formats = perfdata::tracepoint::Formats::of_file(&data);
    let mut walk = data.records();
    let walked = walk.for_each(|origin, rec, ctx| {
        if let Ok(Some(s)) = data.sample(&rec, ctx) {
            let _ = s.validate();
        }
        let decoded = data.decode(&rec, ctx);
        if let (Some(f), Ok(perfdata::types::RecordBody::Sample(s))) = (&formats, &decoded) {
            if let Some(raw) = &s.raw {
                let mut text = vec![];
                let symbols = perfdata::tracepoint::NoKernelSymbols;
                let _ = f.write_trace(raw.data.as_slice(), &symbols, &mut text);
            }
        }
        let _ = data.time(&rec, ctx);
        plain.push((origin, rec.offset, rec.header.type_));
        Ok(true)
    });
    // SPLIT runs that made no record: noted by the plain walk, damage when salvaging.
    let unjoined: Vec<String> = walk.take_unjoined().iter().map(|e| e.to_string()).collect();
    let mut salvaged = vec![];
    let mut records = data.records().salvaging();
    let salvage = records
        .for_each(|origin, rec, _| {
            salvaged.push((origin, rec.offset, rec.header.type_));
            Ok(true)
        })
        .map(|()| records.take_damage());
    if walked.is_ok() {
        let errors = salvage.expect("salvaging an input the plain walk reads");
        let dropped: Vec<String> = errors
            .iter()
            .filter(|d| matches!(d.recovery, perfdata::Recovery::JoinDropped { .. }))
            .map(|d| d.error.to_string())
            .collect();
        assert_eq!(
            dropped.len(),
            errors.len(),
            "salvaging an input the plain walk reads: {errors:?}"
        );
        assert_eq!(dropped, unjoined, "unjoined SPLIT runs");
        assert_eq!(plain, salvaged);
        let mut ordered = 0usize;
        if data
            .records()
            .time_ordered()
            .for_each(|_, _, _| {
                ordered += 1;
                Ok(true)
            })
            .is_ok()
        {
            // The compressed records themselves are not delivered, only what they hold.
            let compressed = [RecordType::COMPRESSED.0, RecordType::COMPRESSED2.0];
            let expanded = plain.iter().filter(|r| !compressed.contains(&r.2)).count();
            assert_eq!(ordered, expanded, "time order lost or added records");
        }
    } else {
        assert!(
            salvaged.starts_with(&plain),
            "salvaging lost records the plain walk read"
        );
    }
}

/// A `Read` that hands out its bytes in the chunk sizes it is given (cycled).
struct Chunked<'a> {
    bytes: &'a [u8],
    sizes: &'a [u8],
    next: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = match self.sizes.get(self.next % self.sizes.len().max(1)) {
            Some(&s) => usize::from(s).max(1),
            None => buf.len(),
        };
        self.next += 1;
        let n = want.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// `read_stream`: the first byte says how many chunk sizes follow; the rest is a stream
/// read by [`PipeReader`] in those chunks. It gives the records the whole-input walk
/// gives, in order, however the input is cut.
pub fn read_stream(input: &[u8]) -> Vec<(Origin, u64, u32)> {
    let input = &input[..input.len().min(MAX_INPUT)];
    let Some((&n, rest)) = input.split_first() else {
        return vec![];
    };
    let (sizes, bytes) = rest.split_at(usize::from(n % 16).min(rest.len()));
    let mut streamed = vec![];
    let mut stream_ok = false;
    if let Ok(mut reader) = PipeReader::new(Chunked {
        bytes,
        sizes,
        next: 0,
    }) {
        loop {
            match reader.next_record() {
                Ok(Some(rec)) => {
                    let _ = rec.decode();
                    if let Ok(Some(s)) = rec.sample() {
                        let _ = s.validate();
                    }
                    streamed.push((rec.origin, rec.raw.offset, rec.raw.header.type_));
                }
                Ok(None) => {
                    stream_ok = true;
                    break;
                }
                Err(_) => break,
            }
        }
    }
    let Ok(data) = PerfData::open(bytes) else {
        return streamed;
    };
    if data.format.layout != Layout::Pipe {
        return streamed;
    }
    let mut whole = vec![];
    let whole_ok = data
        .for_each_record(&mut |origin, rec, _| {
            whole.push((origin, rec.offset, rec.header.type_));
            Ok(true)
        })
        .is_ok();
    let common = streamed.len().min(whole.len());
    assert_eq!(
        streamed[..common],
        whole[..common],
        "chunked and whole differ"
    );
    if whole_ok && stream_ok {
        assert_eq!(streamed.len(), whole.len(), "chunked and whole differ");
    }
    salvaged_streams_agree(&data, bytes, sizes);
    streamed
}

/// A salvaging walk of the stream read in `sizes` chunks finds the records and the
/// damage that the salvaging walk in memory finds (up to where the stream reader stops
/// on an attr it cannot take, which the walk in memory read beforehand).
fn salvaged_streams_agree(data: &PerfData<'_>, bytes: &[u8], sizes: &[u8]) {
    let mut whole = vec![];
    let mut records = data.records().salvaging();
    while let Ok(Some(r)) = records.next() {
        whole.push((r.origin, r.raw.offset, r.raw.header.type_));
    }
    let whole_damage: Vec<String> = records
        .take_damage()
        .iter()
        .map(|d| d.to_string())
        .collect();
    let Ok(reader) = PipeReader::new(Chunked {
        bytes,
        sizes,
        next: 0,
    }) else {
        return;
    };
    let mut reader = reader.salvaging();
    let mut streamed = vec![];
    let ended = loop {
        match reader.next_record() {
            Ok(Some(rec)) => streamed.push((rec.origin, rec.raw.offset, rec.raw.header.type_)),
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    let damage: Vec<String> = reader.take_damage().iter().map(|d| d.to_string()).collect();
    if ended {
        assert_eq!(streamed, whole, "salvaged from chunks and whole differ");
        assert_eq!(damage, whole_damage, "salvaged damage differs");
    } else {
        assert_eq!(
            streamed,
            whole[..streamed.len().min(whole.len())],
            "salvaged differ"
        );
    }
}

fn written(file: &Builder<'_>, opts: WriteOptions) -> Option<Vec<u8>> {
    let mut out = Cursor::new(vec![]);
    file.write_to(&mut out, opts).ok()?;
    Some(out.into_inner())
}

/// `reencode`: an input the model reads is written (copy-through); the output reads
/// back, and is a fixed point (read and written again: the same bytes); the typed round
/// trip, where every value decodes, gives the same bytes as copy-through. An input that
/// `check` finds clean is written back byte for byte.
pub fn reencode(bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    let Ok(data) = PerfData::open(bytes) else {
        return;
    };
    let Ok(file) = Builder::read(&data) else {
        return;
    };
    // The writer refuses what it cannot write consistently (an attr whose size differs
    // from the others', a record over 64 KiB): a stated reason, not a finding.
    let Some(copy) = written(&file, WriteOptions::default()) else {
        return;
    };
    let again = PerfData::open(&copy).expect("our output opens");
    let file2 = Builder::read(&again).expect("our output's records frame");
    let copy2 = written(&file2, WriteOptions::default()).expect("our output rewrites");
    assert!(copy2 == copy, "copy-through is not a fixed point");
    let mut typed = file.clone();
    if typed.make_typed().is_ok() {
        if let Some(out) = written(&typed, WriteOptions::default()) {
            assert!(out == copy, "typed round trip differs from copy-through");
        }
    }
    if check_bytes(bytes).status() == Status::Clean && data.format.layout == Layout::File {
        assert!(copy == bytes, "a clean file is not rewritten byte for byte");
    }
}

/// `convert`: each conversion of an input the model reads (pipe layout, file layout,
/// the other byte order, decompressed, compressed) either says why it cannot be done or
/// writes an output that opens, and reads entirely when the input did.
pub fn convert(bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    let Ok(data) = PerfData::open(bytes) else {
        return;
    };
    let Ok(file) = Builder::read(&data) else {
        return;
    };
    // An input whose records do not all read (a damaged compressed stream) may give an
    // output that carries the damage: only an intact input's outputs must read entirely.
    let intact = data.for_each_record(&mut |_, _, _| Ok(true)).is_ok();
    let other = file.endian.swapped();
    type Step = fn(&mut Builder<'_>, Endianness) -> Result<(), perfdata::Error>;
    let steps: [(&str, Step); 5] = [
        ("to pipe", |f, _| f.to_pipe()),
        ("to file", |f, _| f.to_file()),
        ("other byte order", |f, e| f.set_endian(e)),
        ("decompress", |f, _| f.decompress()),
        ("compress", |f, _| {
            f.compress(CompressedKind::Compressed2, 1)
        }),
    ];
    for (name, step) in steps {
        let mut f = file.clone();
        if step(&mut f, other).is_err() {
            continue;
        }
        let Some(out) = written(&f, WriteOptions::default()) else {
            continue;
        };
        let damaged = f.damaged_features();
        let reread = PerfData::open(&out).expect("a converted output opens");
        let walked = reread.for_each_record(&mut |_, _, _| Ok(true));
        if intact {
            walked.expect("a converted output's records frame");
        }
        for feat in &reread.features {
            if let Err(e) = reread.feature(feat) {
                assert!(damaged.contains(&feat.id), "{name}: converted feature: {e}");
            }
        }
    }
}

/// The file `structured` takes its attr layout from (perf 6.1, `-g`).
const STRUCTURED_BASE: &[u8] = include_bytes!("../../conformance/fixtures/callchain.data");

/// `structured`: a model made by `arbitrary` — attrs,
/// typed features and typed records of every type the spec has — written in both
/// layouts, both byte orders, plain and compressed. Each output the writer accepts (it
/// refuses values that contradict themselves, with a reason) opens, frames, decodes
/// everywhere, and is a fixed point: read back, typed, and written again it gives the
/// same bytes. Returns how many outputs were written and checked.
pub fn structured(input: &[u8]) -> usize {
    use arbitrary::{Arbitrary, Unstructured};
    use perfdata::types::{FeatureBody, RecordBody, RecordMisc};
    use perfdata::write::{FeatureData, FeatureItem, RecordData, RecordItem};
    use perfdata::EventAttr;

    let mut u = Unstructured::new(input);
    let Some(mut file) = (|| -> arbitrary::Result<Builder<'_>> {
        // An attr's size must match the fields it has: start from one perf wrote and
        // let `arbitrary` choose what decides the records' layouts.
        let base = PerfData::open(STRUCTURED_BASE)
            .expect("the base fixture opens")
            .session
            .attrs[0]
            .attr
            .clone()
            .into_owned();
        let mut attrs = vec![];
        for _ in 0..u.int_in_range(1..=3)? {
            let mut attr = base.clone();
            attr.type_ = Arbitrary::arbitrary(&mut u)?;
            attr.config = u64::arbitrary(&mut u)?;
            attr.sample_type = Arbitrary::arbitrary(&mut u)?;
            attr.read_format = Arbitrary::arbitrary(&mut u)?;
            attr.attr_flags = Arbitrary::arbitrary(&mut u)?;
            attrs.push(EventAttr {
                attr,
                ids: (0..u.int_in_range(0..=3)?)
                    .map(|_| u64::arbitrary(&mut u))
                    .collect::<arbitrary::Result<_>>()?,
                entry_tail: None,
            });
        }
        let mut features = vec![];
        for _ in 0..u.int_in_range(0..=4)? {
            let body = FeatureBody::arbitrary(&mut u)?;
            if let Some(id) = body.feature_id() {
                features.push(FeatureItem {
                    id,
                    data: FeatureData::Typed(Box::new(body)),
                });
            }
        }
        features.sort_by_key(|f| f.id);
        features.dedup_by_key(|f| f.id);
        let mut records = vec![];
        for _ in 0..u.int_in_range(0..=12)? {
            let body = RecordBody::arbitrary(&mut u)?;
            let Some(ty) = body.record_type() else {
                continue;
            };
            // Compressed records hold what the compressor made (the `compress` step
            // below), not arbitrary bytes.
            if ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2 {
                continue;
            }
            records.push(RecordItem {
                ty,
                misc: RecordMisc::arbitrary(&mut u)?,
                attr: Some(u.choose_index(attrs.len())?),
                data: RecordData::Typed(Box::new(body)),
            });
        }
        Ok(Builder {
            endian: Endianness::Little,
            layout: Layout::File,
            legacy_v1: false,
            short_header: false,
            attrs,
            event_types: None,
            features,
            feature_table_slack: Default::default(),
            pipe_end_marker: None,
            records,
            placement: None,
        })
    })()
    .ok() else {
        return 0;
    };
    // Arbitrary values mostly contradict themselves (a size that is not the length, a
    // field present where its condition is false): the encoder refuses those, so keep
    // the features and records that encode on their own.
    let mut enc = perfdata::write::RecordEncoder::<perfdata::rt::LittleEndian>::for_file(&file);
    file.records
        .retain(|r| enc.write(r, &mut std::io::sink()).is_ok());
    file.features.retain(|f| {
        let mut w = perfdata::rt::Writer::new();
        enc.encode_feature(f.id, &f.data, &mut w).is_ok()
    });
    let mut checked = 0;
    for pipe in [false, true] {
        for endian in [Endianness::Little, Endianness::Big] {
            for compress in [false, true] {
                let mut f = file.clone();
                if pipe && f.to_pipe().is_err() {
                    continue;
                }
                if f.set_endian(endian).is_err() {
                    continue;
                }
                if compress && f.compress(CompressedKind::Compressed2, 1).is_err() {
                    continue;
                }
                let Some(out) = written(&f, WriteOptions::default()) else {
                    continue;
                };
                let data = PerfData::open(&out).expect("our output opens");
                data.for_each_record(&mut |_, _, _| Ok(true))
                    .expect("our output's records frame");
                let back = Builder::read(&data).expect("our output reads into the model");
                let copy = written(&back, WriteOptions::default()).expect("rewrites");
                assert!(
                    copy == out,
                    "copy-through of our output is not a fixed point"
                );
                let mut typed = back.clone();
                if typed.make_typed().is_ok() {
                    if let Some(again) = written(&typed, WriteOptions::default()) {
                        assert!(again == out, "typed rewrite of our output differs");
                    }
                }
                checked += 1;
            }
        }
    }
    checked
}
