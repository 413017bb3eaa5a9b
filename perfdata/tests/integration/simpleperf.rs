//! simpleperf's dialect (crafted files, see `perfdata_test_support::simpleperf`: no simpleperf binary is
//! available here): every simpleperf record and feature kind reads, writes back byte for
//! byte in either byte order, dumps and checks clean; SPLIT records join into the record
//! they cut, and a run that does not make one is reported without stopping the walk.

use crate::common::simpleperf::{
    craft, kallsyms_record, kallsyms_text, Craft, Symbols, KALLSYMS_LINES,
};
use perfdata::rt::Endianness;
use perfdata::types::{RecordBody, RecordType};
use perfdata::write::{Builder, WriteOptions};
use perfdata::{Origin, PerfData, RecordWalk, Recovery};

fn rewrite(bytes: &[u8], typed: bool, endian: Option<Endianness>) -> Vec<u8> {
    let data = PerfData::open(bytes).unwrap();
    let mut b = Builder::read(&data).unwrap();
    if typed {
        b.make_typed().unwrap();
    }
    let mut out = std::io::Cursor::new(Vec::new());
    let mut opts = WriteOptions::default();
    if let Some(e) = endian {
        opts = opts.endian(e);
    }
    b.write_to(&mut out, opts).unwrap();
    out.into_inner()
}

/// The record types of a walk that joins SPLIT records, with where each came from.
fn walk(bytes: &[u8]) -> (Vec<(RecordType, Origin)>, Vec<String>) {
    let data = PerfData::open(bytes).unwrap();
    let mut records = data.records();
    let mut seen = vec![];
    while let Some(r) = records.next().unwrap() {
        seen.push((r.raw.record_type(), r.origin));
    }
    let notes = records
        .take_unjoined()
        .iter()
        .map(|e| e.to_string())
        .collect();
    (seen, notes)
}

#[test]
fn every_simpleperf_record_and_feature_kind_round_trips_byte_exact() {
    for endian in [Endianness::Little, Endianness::Big] {
        let bytes = craft(Craft {
            endian,
            ..Craft::default()
        });
        let data = PerfData::open(&bytes).unwrap();
        assert_eq!(data.format.endian, endian);
        // Every simpleperf feature is there and decodes (FILE2 in its own file: a
        // recording has FILE or FILE2).
        let file2 = craft(Craft {
            endian,
            symbols: Symbols::File2,
            ..Craft::default()
        });
        let data2 = PerfData::open(&file2).unwrap();
        for id in 128..=134u32 {
            let d = if id == 132 { &data2 } else { &data };
            let f = d
                .features
                .iter()
                .find(|f| f.id.0 == id)
                .unwrap_or_else(|| panic!("feature {id} missing"));
            let body = d.feature(f).unwrap();
            assert!(
                !format!("{body:?}").starts_with("Unknown"),
                "feature {id}: {body:?}"
            );
        }
        assert!(
            rewrite(&file2, true, None) == file2,
            "{endian:?}: FILE2 rewrite differs"
        );
        // Raw and typed rewrites, and a round trip through the other byte order.
        assert!(
            rewrite(&bytes, false, None) == bytes,
            "{endian:?}: raw rewrite differs"
        );
        assert!(
            rewrite(&bytes, true, None) == bytes,
            "{endian:?}: typed rewrite differs"
        );
        let other = match endian {
            Endianness::Little => Endianness::Big,
            Endianness::Big => Endianness::Little,
        };
        let there = rewrite(&bytes, true, Some(other));
        assert_eq!(PerfData::open(&there).unwrap().format.endian, other);
        // SPLIT data is the joined record's bytes in the producer's order: only the
        // records around them change order, so the other order is not compared back.
        let (types, _) = walk(&there);
        assert!(types
            .iter()
            .any(|(t, _)| *t == RecordType::SIMPLEPERF_SPLIT));
        // check: nothing to report.
        let report = perfdata::check::check_bytes(&bytes);
        assert!(
            report.problems.is_empty(),
            "{endian:?}: {:#?}",
            report.problems
        );
    }
}

#[test]
fn split_records_give_the_record_they_cut_after_their_split_end() {
    for endian in [Endianness::Little, Endianness::Big] {
        let bytes = craft(Craft {
            endian,
            ..Craft::default()
        });
        let (types, notes) = walk(&bytes);
        assert!(notes.is_empty(), "{notes:?}");
        let splits: Vec<usize> = (0..types.len())
            .filter(|&i| types[i].0 == RecordType::SIMPLEPERF_SPLIT)
            .collect();
        // The record's bytes in pieces of 65,527.
        let pieces = kallsyms_record(endian, KALLSYMS_LINES)
            .len()
            .div_ceil(65527);
        assert_eq!(splits, (0..pieces).collect::<Vec<_>>(), "{endian:?}");
        assert!(pieces >= 2);
        assert_eq!(types[pieces].0, RecordType::SIMPLEPERF_SPLIT_END);
        let first = PerfData::open(&bytes).unwrap().data_offset();
        assert_eq!(
            types[pieces + 1],
            (
                RecordType::SIMPLEPERF_KERNEL_SYMBOL,
                Origin::Joined {
                    record_offset: first
                }
            )
        );
        // The joined record decodes to the text that was cut.
        let data = PerfData::open(&bytes).unwrap();
        let mut records = data.records();
        let mut text = None;
        while let Some(r) = records.next().unwrap() {
            if let Ok(RecordBody::SimpleperfKernelSymbol(k)) = data.decode(&r.raw, &r.ctx) {
                assert_eq!(r.raw.offset, first + 8);
                text = Some(String::from_utf8(k.kallsyms.to_vec()).unwrap());
            }
        }
        assert_eq!(
            text.as_deref(),
            Some(kallsyms_text(KALLSYMS_LINES).as_str())
        );
        // Every sample of the base recording is still there, after the joined record.
        let samples = types
            .iter()
            .filter(|(t, _)| *t == RecordType::SAMPLE)
            .count();
        assert_eq!(samples, 13);
    }
}

#[test]
fn a_split_run_without_its_end_drops_its_record_and_the_walk_goes_on() {
    let bytes = craft(Craft {
        split_end: false,
        ..Craft::default()
    });
    let (types, notes) = walk(&bytes);
    assert!(
        !types
            .iter()
            .any(|(t, _)| *t == RecordType::SIMPLEPERF_KERNEL_SYMBOL),
        "no record is joined"
    );
    assert_eq!(
        types
            .iter()
            .filter(|(t, _)| *t == RecordType::SAMPLE)
            .count(),
        13,
        "the records after the run are all read"
    );
    let first = PerfData::open(&bytes).unwrap().data_offset();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = &notes[0];
    assert!(
        note.contains(&format!("SIMPLEPERF_SPLIT run from {first:#x}")),
        "{note}"
    );
    assert!(
        note.contains("expected a SPLIT_END after the run of SPLIT records"),
        "{note}"
    );
    let held = kallsyms_record(Endianness::Little, KALLSYMS_LINES).len();
    assert!(
        note.contains(&format!(
            "SIMPLEPERF_TRACING_DATA record after {held} bytes of pieces"
        )),
        "{note}"
    );
    // A salvaging walk (`check`, `dump --salvage`) gives it as damage.
    let data = PerfData::open(&bytes).unwrap();
    let mut records = data.records().salvaging();
    while records.next().unwrap().is_some() {}
    let damage = records.take_damage();
    assert_eq!(damage.len(), 1);
    assert_eq!(
        damage[0].recovery,
        Recovery::JoinDropped {
            record_offset: damage[0].error.offset().unwrap()
        }
    );
    let report = perfdata::check::check_bytes(&bytes);
    assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
}

/// simpleperf compresses its SPLIT records with the rest (`record -z`: one zstd stream
/// over COMPRESSED records): a run inside compressed records is joined the same way, and
/// one without its end is noted.
#[test]
fn split_runs_inside_compressed_records_are_joined_too() {
    use perfdata::types::{Compressed, RecordMisc};
    use perfdata::write::{RecordData, RecordItem};
    for split_end in [true, false] {
        let bytes = craft(Craft {
            split_end,
            ..Craft::default()
        });
        let data = PerfData::open(&bytes).unwrap();
        let mut b = Builder::read(&data).unwrap();
        // The records up to the first EVENT_ID (the SPLIT run, its end, TRACING_DATA),
        // as they are in the file, compressed as simpleperf does, in COMPRESSED records.
        let n = b
            .records
            .iter()
            .position(|r| r.ty == RecordType::SIMPLEPERF_EVENT_ID)
            .unwrap();
        let mut stream = vec![];
        let mut records = perfdata::RecordCursor::framing_only(perfdata::SliceSource::new(
            data.data(),
            data.data_offset(),
            data.format.endian,
        ));
        for _ in 0..n {
            let r = records.next_in_input().unwrap().unwrap();
            let at = (r.offset - data.data_offset()) as usize;
            stream.extend_from_slice(&data.data()[at..at + r.stream_len()]);
        }
        let zstd = zstd::bulk::compress(&stream, 3).unwrap();
        let compressed: Vec<RecordItem<'static>> = zstd
            .chunks(65536 - 16)
            .map(|chunk| RecordItem {
                ty: RecordType::COMPRESSED,
                misc: RecordMisc(0),
                attr: None,
                data: RecordData::Typed(Box::new(RecordBody::Compressed(Compressed {
                    data: chunk.to_vec().into(),
                    ..Default::default()
                }))),
            })
            .collect();
        b.records.splice(0..n, compressed);
        b.placement = None;
        let mut out = std::io::Cursor::new(Vec::new());
        b.write_to(&mut out, WriteOptions::default()).unwrap();
        let inside = out.into_inner();

        let (plain, plain_notes) = walk(&bytes);
        let (types, notes) = walk(&inside);
        // The SPLIT records are in the compressed stream; the same records come out.
        let splits: Vec<&Origin> = types
            .iter()
            .filter(|(t, _)| *t == RecordType::SIMPLEPERF_SPLIT)
            .map(|(_, o)| o)
            .collect();
        assert!(splits.len() >= 2);
        assert!(splits
            .iter()
            .all(|o| matches!(o, Origin::Compressed { .. })));
        let kinds = |t: &[(RecordType, Origin)]| -> Vec<RecordType> {
            t.iter()
                .map(|(t, _)| *t)
                .filter(|t| *t != RecordType::COMPRESSED)
                .collect()
        };
        assert_eq!(kinds(&types), kinds(&plain), "split_end {split_end}");
        let joined = types
            .iter()
            .filter(|(t, o)| {
                *t == RecordType::SIMPLEPERF_KERNEL_SYMBOL && matches!(o, Origin::Joined { .. })
            })
            .count();
        assert_eq!(joined, usize::from(split_end));
        assert_eq!(notes.len(), plain_notes.len(), "{notes:?}");
        assert!(
            notes.iter().all(|n| n.contains("expected a SPLIT_END")),
            "{notes:?}"
        );
    }
}

/// `PERFDATA_SIMPLEPERF_SEEDS=DIR`: writes small crafted simpleperf files (SPLIT runs of
/// a short record, each symbol feature, both byte orders, one without SPLIT_END) into DIR,
/// to seed a fuzzing campaign's corpus. Without it, checks that they read.
#[test]
fn small_crafted_files_for_fuzzing_seeds_read() {
    let mut n = 0;
    for endian in [Endianness::Little, Endianness::Big] {
        for symbols in [Symbols::File, Symbols::File2] {
            for split_end in [true, false] {
                let bytes = craft(Craft {
                    endian,
                    symbols,
                    split_end,
                    kallsyms_lines: 6,
                    piece: 100,
                    ..Craft::default()
                });
                assert!(bytes.len() < 64 << 10, "{} bytes", bytes.len());
                let (types, notes) = walk(&bytes);
                assert_eq!(notes.len(), usize::from(!split_end));
                assert_eq!(
                    types
                        .iter()
                        .filter(|(t, _)| *t == RecordType::SIMPLEPERF_KERNEL_SYMBOL)
                        .count(),
                    usize::from(split_end)
                );
                if let Some(dir) = std::env::var_os("PERFDATA_SIMPLEPERF_SEEDS") {
                    let name = format!("simpleperf-{n}.data");
                    std::fs::write(std::path::Path::new(&dir).join(name), &bytes).unwrap();
                }
                n += 1;
            }
        }
    }
}
