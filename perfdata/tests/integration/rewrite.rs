//! Writing: copy-through and typed round trip give the input's bytes for every
//! perf-written file; big-endian conversion there and back gives the original bytes;
//! saving never damages the target.

use crate::common;

use perfdata::rt::Endianness;
use perfdata::write::{Builder, WriteOptions};
use perfdata::{Layout, PerfData};
use std::io::Cursor;
use std::path::PathBuf;

/// Inputs that cannot be rewritten as they are, with the reason; they are checked to
/// fail for that reason (so the list cannot silently go stale).
const NOT_REWRITABLE: &[(&str, &str)] = &[(
    "sleep.compressed2.pipe.data",
    "text follows the last record; a rewrite would have to drop or invent bytes",
)];

/// Inputs whose byte order cannot be converted yet, with the reason.
fn not_convertible(data: &PerfData<'_>) -> Option<&'static str> {
    let mut compressed = false;
    let _ = data.for_each_record(&mut |origin, _, _| {
        compressed |= matches!(origin, perfdata::Origin::Compressed { .. });
        Ok(!compressed)
    });
    compressed.then_some("compressed records hold little-endian records: decompress first")
}

fn inputs() -> Vec<PathBuf> {
    common::fixture_and_corpus_files()
}

fn rewrite(file: &Builder<'_>, opts: WriteOptions) -> Vec<u8> {
    let mut out = Cursor::new(vec![]);
    file.write_to(&mut out, opts).unwrap();
    out.into_inner()
}

#[test]
fn copy_through_and_typed_round_trip_are_byte_exact() {
    let mut checked = 0;
    for path in inputs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let data = PerfData::open(&bytes).unwrap();
        let model = Builder::read(&data);
        if let Some((_, why)) = NOT_REWRITABLE.iter().find(|(n, _)| *n == name) {
            assert!(
                model.is_err(),
                "{name} was expected not to be rewritable: {why}"
            );
            eprintln!("not rewritable: {name}: {why}");
            continue;
        }
        let mut model = model.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            rewrite(&model, WriteOptions::default()) == bytes,
            "{name}: copy-through changed the bytes"
        );
        model.make_typed().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            rewrite(&model, WriteOptions::default()) == bytes,
            "{name}: typed round trip changed the bytes"
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} files checked");
}

#[test]
fn big_endian_there_and_back_gives_the_original_bytes() {
    let mut checked = 0;
    for path in inputs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if NOT_REWRITABLE.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let data = PerfData::open(&bytes).unwrap();
        let model = Builder::read(&data).unwrap();
        if model.legacy_v1 {
            eprintln!("not converted: {name}: legacy PERFFILE magic records no byte order");
            continue;
        }
        if let Some(why) = not_convertible(&data) {
            let mut out = Cursor::new(vec![]);
            assert!(model
                .write_to(&mut out, WriteOptions::default().endian(Endianness::Big))
                .is_err());
            eprintln!("not converted: {name}: {why}");
            continue;
        }
        let be = rewrite(&model, WriteOptions::default().endian(Endianness::Big));
        assert_ne!(be, bytes, "{name}: big-endian output equals the input");
        let be_data = PerfData::open(&be).unwrap_or_else(|e| panic!("{name} (big-endian): {e}"));
        assert_eq!(be_data.format.endian, Endianness::Big);
        assert_eq!(be_data.format.layout, data.format.layout);
        assert_eq!(be_data.session.attrs.len(), data.session.attrs.len());
        let mut n_le = 0;
        let mut n_be = 0;
        data.for_each_record(&mut |_, _, _| {
            n_le += 1;
            Ok(true)
        })
        .unwrap();
        be_data
            .for_each_record(&mut |_, _, _| {
                n_be += 1;
                Ok(true)
            })
            .unwrap();
        assert_eq!(n_be, n_le, "{name}: record count changed");
        let back_model = Builder::read(&be_data).unwrap();
        let back = rewrite(
            &back_model,
            WriteOptions::default().endian(Endianness::Little),
        );
        assert!(
            back == bytes,
            "{name}: little → big → little changed the bytes"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} files converted");
}

#[test]
fn save_replaces_the_input_in_place_and_never_leaves_half_a_file() {
    let src = common::fixture_path("callchain.data");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::copy(&src, &path).unwrap();
    let original = std::fs::read(&path).unwrap();

    // Rewrite onto the input itself, from a model that borrows the input's bytes.
    let bytes = std::fs::read(&path).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let model = Builder::read(&data).unwrap();
    model
        .save(&path, WriteOptions::default().endian(Endianness::Big))
        .unwrap();
    let be = std::fs::read(&path).unwrap();
    assert_eq!(PerfData::open(&be).unwrap().format.endian, Endianness::Big);

    // A write that fails part-way leaves the target as it was.
    let mut broken = model.clone().into_owned();
    broken.attrs[0].attr.size = 200; // fields no longer add up to attr.size
    assert!(broken.save(&path, WriteOptions::default()).is_err());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        be,
        "failed save changed the target"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind");
    assert_ne!(original, be);
}

#[test]
fn pipe_streams_rewrite_as_pipe_streams() {
    let src = common::fixture_path("pipe-tracepoint.pipe.data");
    let bytes = std::fs::read(&src).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    assert_eq!(data.format.layout, Layout::Pipe);
    let model = Builder::read(&data).unwrap();
    let mut out = vec![];
    model.write_pipe(&mut out, WriteOptions::default()).unwrap();
    assert!(out == bytes);
}
