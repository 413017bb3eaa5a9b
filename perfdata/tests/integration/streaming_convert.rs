//! `perfdata convert` streams: for every fixture and every option combination the CLI
//! offers, the streaming conversion writes exactly the bytes of the model path
//! (`Builder::read` + transforms + `write::save`); and the bugs the stage order fixes.

use crate::common;
use common::fixture_path;

use perfdata::rt::{Endianness, Error};
use perfdata::types::{RecordBody, RecordType};
use perfdata::write::stages::CompressedKind;
use perfdata::write::{convert_file, save_with, Builder, ConvertOptions, Plan, WriteOptions};
use perfdata::{Layout, Origin, PerfData, ReleaseBehind};
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let dir = common::fixtures_dir();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.push(dir.join("threads.data/data"));
    v.sort();
    v
}

/// The model path: the same steps, on a whole-file model.
fn model_convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<(), Error> {
    let bytes = std::fs::read(input)?;
    let data = PerfData::open(&bytes)?;
    let plan = Plan::new(&data, opts, &mut ReleaseBehind::none())?;
    let mut file = Builder::read(&data)?;
    if plan.decompress {
        file.decompress()?;
    }
    match plan.layout {
        Layout::File => file.to_file()?,
        Layout::Pipe => file.to_pipe()?,
    }
    if plan.typed {
        file.make_typed()?;
    }
    if let Some((kind, level)) = plan.compress {
        if plan.dst != file.endian {
            file.set_endian(plan.dst)?;
        }
        file.compress(kind, level)?;
    }
    file.save(output, WriteOptions::default().endian(plan.dst))
}

fn all_options() -> Vec<ConvertOptions> {
    let mut v = vec![];
    for endian in [None, Some(Endianness::Little), Some(Endianness::Big)] {
        for layout in [None, Some(Layout::File), Some(Layout::Pipe)] {
            for decompress in [false, true] {
                for compress in [
                    None,
                    Some((CompressedKind::Compressed2, 3)),
                    Some((CompressedKind::Compressed, 1)),
                ] {
                    for typed in [false, true] {
                        v.push(ConvertOptions {
                            endian,
                            layout,
                            decompress,
                            compress,
                            typed,
                        });
                    }
                }
            }
        }
    }
    v
}

#[test]
fn streaming_convert_writes_the_model_paths_bytes_for_every_fixture_and_option() {
    let dir = tempfile::tempdir().unwrap();
    let (streamed, modelled) = (dir.path().join("s.data"), dir.path().join("m.data"));
    let (mut same, mut both_refused) = (0, 0);
    for input in fixtures() {
        let name = input.display().to_string();
        for opts in all_options() {
            let _ = std::fs::remove_file(&streamed);
            let _ = std::fs::remove_file(&modelled);
            let s = convert_file(&input, &streamed, &opts);
            let m = model_convert(&input, &modelled, &opts);
            match (s, m) {
                (Ok(()), Ok(())) => {
                    let (a, b) = (
                        std::fs::read(&streamed).unwrap(),
                        std::fs::read(&modelled).unwrap(),
                    );
                    assert!(a == b, "{name} {opts:?}: streaming and model bytes differ");
                    same += 1;
                }
                (Err(_), Err(_)) => {
                    assert!(!streamed.exists(), "{name} {opts:?}: output left behind");
                    both_refused += 1;
                }
                (s, m) => panic!("{name} {opts:?}: streaming {s:?}, model {m:?}"),
            }
        }
    }
    eprintln!("{same} conversions identical, {both_refused} refused by both");
    // Only the legacy/unconvertible inputs may be refused (few of the combinations).
    assert!(same > 25 * 100, "only {same} conversions compared");
}

#[test]
fn copy_through_gives_the_input_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.data");
    for input in fixtures() {
        convert_file(&input, &out, &ConvertOptions::default()).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&input).unwrap(),
            "{}: copy-through changed the bytes",
            input.display()
        );
    }
}

/// What a reader sees, compressed records expanded, without framing records: (type, misc,
/// decoded body), comparable across byte orders.
fn decoded_content(bytes: &[u8]) -> Vec<(u32, u16, RecordBody<'static>)> {
    let data = PerfData::open(bytes).unwrap();
    let mut v = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        let ty = rec.record_type();
        let framing = [
            RecordType::COMPRESSED,
            RecordType::COMPRESSED2,
            RecordType::HEADER_FEATURE,
        ];
        if !framing.contains(&ty) {
            v.push((
                ty.0,
                rec.header.misc.0,
                data.decode(&rec, ctx)?.into_owned(),
            ));
        }
        Ok(true)
    })
    .unwrap();
    v
}

/// (type of the compressed records, records found inside them)
fn compression(bytes: &[u8]) -> (Option<RecordType>, usize) {
    let data = PerfData::open(bytes).unwrap();
    let (mut kind, mut inside) = (None, 0);
    data.for_each_record(&mut |origin, rec, _| {
        let ty = rec.record_type();
        if ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2 {
            kind = Some(ty);
        }
        if matches!(origin, Origin::Compressed { .. }) {
            inside += 1;
        }
        Ok(true)
    })
    .unwrap();
    (kind, inside)
}

#[test]
fn compress_and_change_byte_order_compresses_in_the_new_order() {
    // Was: an unreadable file, exit 0 (perf saw 0 samples with COMPRESSED): the records
    // were compressed in the input's order, then the frames written in the other.
    let input = fixture_path("callchain.data");
    let original = std::fs::read(&input).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.data");
    for (kind, ty) in [
        (CompressedKind::Compressed2, RecordType::COMPRESSED2),
        (CompressedKind::Compressed, RecordType::COMPRESSED),
    ] {
        let opts = ConvertOptions {
            endian: Some(Endianness::Big),
            compress: Some((kind, 3)),
            ..Default::default()
        };
        convert_file(&input, &out, &opts).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(
            PerfData::open(&bytes).unwrap().format.endian,
            Endianness::Big
        );
        let (found, inside) = compression(&bytes);
        assert_eq!(found, Some(ty));
        assert!(inside > 0);
        assert!(decoded_content(&bytes) == decoded_content(&original));
    }
    // The model API refuses to write compressed records in another order than theirs.
    let data = PerfData::open(&original).unwrap();
    let mut file = Builder::read(&data).unwrap();
    file.compress(CompressedKind::Compressed2, 3).unwrap();
    let mut sink = Cursor::new(vec![]);
    let err = file
        .write_to(&mut sink, WriteOptions::default().endian(Endianness::Big))
        .unwrap_err();
    assert!(err.to_string().contains("byte order"), "{err}");
}

#[test]
fn changing_the_byte_order_of_a_compressed_input_keeps_it_compressed() {
    // Was: silently decompressed.
    let input = fixture_path("compressed.data");
    let original = std::fs::read(&input).unwrap();
    let (kind, inside) = compression(&original);
    assert!(kind.is_some() && inside > 0, "the fixture is compressed");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("be.data");
    let big = ConvertOptions {
        endian: Some(Endianness::Big),
        ..Default::default()
    };
    convert_file(&input, &out, &big).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(
        compression(&bytes).0,
        kind,
        "compression (and its kind) kept"
    );
    assert!(decoded_content(&bytes) == decoded_content(&original));
    // ... and back: compressed, same records.
    let back = dir.path().join("le.data");
    convert_file(
        &out,
        &back,
        &ConvertOptions {
            endian: Some(Endianness::Little),
            ..Default::default()
        },
    )
    .unwrap();
    let back = std::fs::read(&back).unwrap();
    assert_eq!(compression(&back).0, kind);
    assert!(decoded_content(&back) == decoded_content(&original));
    // Unless asked to decompress.
    convert_file(
        &input,
        &out,
        &ConvertOptions {
            decompress: true,
            ..big
        },
    )
    .unwrap();
    assert_eq!(compression(&std::fs::read(&out).unwrap()), (None, 0));
}

#[test]
fn an_output_that_does_not_read_back_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("perf.data");
    std::fs::copy(fixture_path("callchain.data"), &target).unwrap();
    let before = std::fs::read(&target).unwrap();
    // A file header whose data section runs past the end of the file.
    let header = &before[..104];
    let err = save_with(&target, |out| {
        out.write_all(header)?;
        Ok(())
    })
    .unwrap_err();
    assert!(err.to_string().contains("does not read back"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), before, "target changed");
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "temporary file left behind");
    // An input cut inside its data section: the error names the input and where, and
    // nothing is written. (A cut among the features is damage a conversion carries:
    // tests/damaged_features.rs.)
    let cut = dir.path().join("cut.data");
    let data_end = 264 + 2776; // callchain.data's data.offset + data.size
    std::fs::write(&cut, &before[..data_end - 100]).unwrap();
    let out = dir.path().join("out.data");
    let err = convert_file(&cut, &out, &ConvertOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("offset") || err.to_string().contains("0x"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn a_copy_of_an_input_that_does_not_read_back_is_never_written() {
    // The copy is checked on its input (while the kernel copies) and by comparing the two
    // files: a record the walk rejects still fails the copy, naming where it is.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixture_path("callchain.data")).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut at = None;
    data.for_each_record(&mut |origin, rec, _| {
        if origin == Origin::Input && rec.record_type() == RecordType::SAMPLE {
            at = Some(rec.offset as usize);
            return Ok(false);
        }
        Ok(true)
    })
    .unwrap();
    let at = at.expect("callchain.data has samples");
    drop(data);
    // The sample's size cut to its header: no field it declares is there.
    bytes[at + 6..at + 8].copy_from_slice(&8u16.to_le_bytes());
    let input = dir.path().join("damaged.data");
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("out.data");
    let err = convert_file(&input, &out, &ConvertOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("does not read back"), "{text}");
    // Where its missing fields start: right after its 8-byte header.
    let body = at + 8;
    assert!(
        text.contains(&format!("byte {body:#x}")) && text.contains("SAMPLE"),
        "{text} (record at {at:#x})"
    );
    assert!(!out.exists());
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "temporary file left behind");
    // The same input, undamaged, copies byte for byte.
    std::fs::copy(fixture_path("callchain.data"), &input).unwrap();
    convert_file(&input, &out, &ConvertOptions::default()).unwrap();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&input).unwrap());
}
