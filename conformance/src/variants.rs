//! Checks 4 and 5, the writer's side: what perfdata's writer and conversions make of an
//! input. Check 4 rewrites it (copy-through and typed: [`rewrite`]); check 5 writes the
//! versions perf must read exactly like the original ([`build`]): a copy-through rewrite,
//! the other byte order, the other layout (pipe ↔ file), and the other compression state.
//!
//! Each variant also says which records its conversion legitimately added or removed
//! (framing: HEADER_ATTR / HEADER_FEATURE / HEADER_TRACING_DATA / HEADER_BUILD_ID /
//! HEADER_EVENT_TYPE records
//! that carry what a file keeps in its header, and the HEADER_COMPRESSED feature record of
//! a pipe), found by aligning the record lists of the two models, so that check 5 drops
//! exactly those from perf's output and nothing else.

use perfdata::rt::{Bytes, Endianness};
use perfdata::types::RecordType;
use perfdata::write::stages::CompressedKind;
use perfdata::write::{Builder, RecordData, RecordItem, WriteOptions};
use perfdata::RecordWalk;
use perfdata::{Layout, Origin, PerfData, RecordCursor, SliceSource};
use std::io::Cursor;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Check 4: rewrite
// ---------------------------------------------------------------------------------------

/// One stream of an input and what the writer made of it (check 4).
#[derive(Debug, Clone)]
pub struct Rewritten {
    /// Empty for a single file; `data`, `data.0`, ... for a `--threads` directory.
    pub name: String,
    pub input: Vec<u8>,
    /// Copy-through: the model as read (raw records and features), written.
    pub copy: Result<Vec<u8>, String>,
    /// Typed round trip: every record and feature decoded into owned values, encoded.
    pub typed: Result<Vec<u8>, String>,
}

fn to_bytes(file: &Builder<'_>, opts: WriteOptions) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(vec![]);
    file.write_to(&mut out, opts)
        .map_err(|e| format!("the writer refused: {e}"))?;
    Ok(out.into_inner())
}

fn typed_bytes(file: &Builder<'_>) -> Result<Vec<u8>, String> {
    let mut typed = file.clone();
    typed
        .make_typed()
        .map_err(|e| format!("make_typed failed: {e}"))?;
    to_bytes(&typed, WriteOptions::default())
}

/// The data section of a written file: a `data.N` stream re-encoded.
fn data_section(bytes: Result<Vec<u8>, String>) -> Result<Vec<u8>, String> {
    let bytes = bytes?;
    let data = PerfData::open(&bytes).map_err(|e| format!("cannot reopen the output: {e}"))?;
    Ok(data.data().to_vec())
}

/// The records of another stream of a recording (a `data.N` file), raw, as they sit in it
/// (compressed records stay compressed), with their attrs resolved through `data`.
fn stream_records<'b>(data: &PerfData<'_>, bytes: &'b [u8]) -> Result<Vec<RecordItem<'b>>, String> {
    let e = data.format.endian;
    let mut out = vec![];
    let mut records = RecordCursor::framing_only(SliceSource::new(bytes, 0, e));
    while let Some(rec) = records.next_in_input().map_err(|e| e.to_string())? {
        out.push(RecordItem::raw(&data.session, &rec, e));
    }
    Ok(out)
}

/// Check 4's writer side: the input read into the model and written back, copy-through
/// and typed. A `--threads` directory gives `data` (a whole file) and each `data.N`
/// stream: its records put into the model of `data` in place of `data`'s own, written,
/// and the data section of the output taken (the writer does not write directories, so a
/// stream is checked as the record stream it is). `Err` when the model refuses the input.
pub fn rewrite(main: &[u8], streams: &[(String, Vec<u8>)]) -> Result<Vec<Rewritten>, String> {
    let data = PerfData::open(main).map_err(|e| format!("open: {e}"))?;
    let file = Builder::read(&data).map_err(|e| format!("the model refuses it: {e}"))?;
    let mut out = vec![Rewritten {
        name: if streams.is_empty() { "" } else { "data" }.to_string(),
        input: main.to_vec(),
        copy: to_bytes(&file, WriteOptions::default()),
        typed: typed_bytes(&file),
    }];
    for (name, bytes) in streams {
        let records = match stream_records(&data, bytes) {
            Ok(r) => r,
            Err(e) => {
                let e = format!("the model refuses {name}: {e}");
                out.push(Rewritten {
                    name: name.clone(),
                    input: bytes.clone(),
                    copy: Err(e.clone()),
                    typed: Err(e),
                });
                continue;
            }
        };
        let mut stream = file.clone();
        stream.records = records;
        out.push(Rewritten {
            name: name.clone(),
            input: bytes.clone(),
            copy: data_section(to_bytes(&stream, WriteOptions::default())),
            typed: data_section(typed_bytes(&stream)),
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Check 5: the variants perf must read like the original
// ---------------------------------------------------------------------------------------

/// What a variant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Copy-through rewrite (byte-identical when check 4 passes).
    Copy,
    /// The other byte order (big-endian for the little-endian inputs here); a compressed
    /// input is decompressed first (compressed records hold records in the input's order).
    Swapped(Endianness),
    /// File layout → pipe layout (`Builder::to_pipe`).
    Pipe,
    /// Pipe layout → file layout (`Builder::to_file`).
    File,
    /// Kernel records compressed into PERF_RECORD_COMPRESSED (81), which perf 6.1 reads
    /// (it does not know COMPRESSED2).
    Compressed,
    /// A compressed input decompressed.
    Decompressed,
    /// A `--threads` directory as one file: the records of `data` and of every `data.N`
    /// (compressed ones expanded) one after the other.
    SingleFile,
    /// A combination or a round trip, converted by `perfdata convert`'s streaming path
    /// ([`perfdata::write::convert_file`]), one step per element (see [`COMBINATIONS`]).
    Combined(&'static str),
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Copy => "copy",
            Kind::Swapped(Endianness::Big) => "big-endian",
            Kind::Swapped(Endianness::Little) => "little-endian",
            Kind::Pipe => "pipe",
            Kind::File => "file",
            Kind::Compressed => "compressed",
            Kind::Decompressed => "decompressed",
            Kind::SingleFile => "single-file",
            Kind::Combined(name) => name,
        }
    }
}

/// A written variant.
#[derive(Debug, Clone)]
pub struct Variant {
    pub kind: Kind,
    pub path: PathBuf,
    /// The input was decompressed on the way (byte-order change of a compressed input).
    pub decompressed: bool,
    /// The variant has the other byte order than the original.
    pub swapped: bool,
    /// Every record is where it was in the original (same layout and framing).
    pub offsets_kept: bool,
    /// The variant's layout.
    pub layout: Layout,
    /// The largest `perf_event_attr.size` of its attrs.
    pub max_attr_size: u32,
    /// Records of the original that the conversion legitimately removed, as (position
    /// among the user-type records perf prints — type ≥ 64 except COMPRESSED/COMPRESSED2,
    /// in stream order — and type).
    pub only_original: Vec<(usize, RecordType)>,
    /// Records the conversion legitimately added, likewise.
    pub only_variant: Vec<(usize, RecordType)>,
}

/// A variant, or why there is none.
#[derive(Debug, Clone)]
pub enum Built {
    Made(Variant),
    /// Not applicable or not possible for a documented reason.
    Skipped(Kind, String),
    /// The library failed where it should not have.
    Failed(Kind, String),
}

/// Record types a layout change moves between the header and the stream.
const HEADER_RECORDS: [RecordType; 5] = [
    RecordType::HEADER_ATTR,
    RecordType::HEADER_FEATURE,
    RecordType::HEADER_TRACING_DATA,
    RecordType::HEADER_BUILD_ID,
    RecordType::HEADER_EVENT_TYPE,
];

fn is_compressed_frame(ty: RecordType) -> bool {
    ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2
}

/// The user-type records perf prints (`perf report -D` prints them as it reads them, in
/// stream order; it does not print COMPRESSED records, only what they hold).
fn printed_user_records<'f, 'a>(f: &'f Builder<'a>) -> Vec<&'f RecordItem<'a>> {
    f.records
        .iter()
        .filter(|r| r.ty.0 >= 64 && !is_compressed_frame(r.ty))
        .collect()
}

/// The records of `sup` (by position among its printed user records) that are not in
/// `sub`, when `sub` is `sup` with some records taken out; each must be of an `allowed`
/// type (what the conversion may add or remove).
fn extra_records(
    sup: &Builder<'_>,
    sub: &Builder<'_>,
    allowed: &[RecordType],
) -> Result<Vec<(usize, RecordType)>, String> {
    let (sup, sub) = (printed_user_records(sup), printed_user_records(sub));
    let mut j = 0;
    let mut extra = vec![];
    for (i, r) in sup.iter().enumerate() {
        if j < sub.len() && *r == sub[j] {
            j += 1;
            continue;
        }
        if !allowed.contains(&r.ty) {
            return Err(format!(
                "the conversion added or removed a PERF_RECORD_{} (user record #{i}), not only framing records",
                r.ty
            ));
        }
        extra.push((i, r.ty));
    }
    if j < sub.len() {
        return Err(format!(
            "the conversion changed user record #{j} (PERF_RECORD_{})",
            sub[j].ty
        ));
    }
    Ok(extra)
}

fn max_attr_size(f: &Builder<'_>) -> u32 {
    f.attrs.iter().map(|a| a.attr.size).max().unwrap_or(0)
}

fn save_variant(file: &Builder<'_>, opts: WriteOptions, path: &Path) -> Result<(), String> {
    let bytes = to_bytes(file, opts)?;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Which variants check 5 writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variants {
    /// Every variant of [`build`].
    All,
    /// (a) the copy-through and (b) the other byte order only: for large recordings
    /// whose sample layout another scenario already runs through every variant.
    CopyAndByteOrder,
}

/// Writes the variants of an input (`main`, and `streams` for a `--threads` directory)
/// into `dir` as `<stem>.v-<kind>.data`.
pub fn build(main: &[u8], streams: &[(String, Vec<u8>)], dir: &Path, stem: &str) -> Vec<Built> {
    build_set(main, streams, dir, stem, Variants::All)
}

/// [`build`], of the variants of `set`.
pub fn build_set(
    main: &[u8],
    streams: &[(String, Vec<u8>)],
    dir: &Path,
    stem: &str,
    set: Variants,
) -> Vec<Built> {
    let path = |k: Kind| dir.join(format!("{stem}.v-{}.data", k.name()));
    let data = match PerfData::open(main) {
        Ok(d) => d,
        Err(e) => return vec![Built::Failed(Kind::Copy, format!("open: {e}"))],
    };
    let orig = match Builder::read(&data) {
        Ok(f) => f,
        Err(e) => {
            return vec![Built::Failed(
                Kind::Copy,
                format!("the model refuses it: {e}"),
            )]
        }
    };
    if !streams.is_empty() {
        return build_single_file(&data, &orig, streams, path(Kind::SingleFile));
    }
    let compressed = orig.records.iter().any(|r| is_compressed_frame(r.ty));
    let mut out = vec![];

    // (a) copy-through.
    let p = path(Kind::Copy);
    out.push(match save_variant(&orig, WriteOptions::default(), &p) {
        Ok(()) => Built::Made(Variant {
            kind: Kind::Copy,
            path: p,
            decompressed: false,
            swapped: false,
            offsets_kept: true,
            layout: orig.layout,
            max_attr_size: max_attr_size(&orig),
            only_original: vec![],
            only_variant: vec![],
        }),
        Err(e) => Built::Failed(Kind::Copy, e),
    });

    // (b) the other byte order; a compressed input is decompressed first.
    let other = orig.endian.swapped();
    let kind = Kind::Swapped(other);
    out.push(if orig.legacy_v1 {
        // The writer refuses by design; make sure it does.
        match to_bytes(&orig, WriteOptions::default().endian(other)) {
            Err(e) => Built::Skipped(
                kind,
                format!("a legacy PERFFILE (v1) file keeps its byte order ({e})"),
            ),
            Ok(_) => Built::Failed(
                kind,
                "the writer converted a legacy PERFFILE (v1) file's byte order".into(),
            ),
        }
    } else {
        let mut f = orig.clone();
        let step = if compressed {
            f.decompress().map_err(|e| format!("decompress: {e}"))
        } else {
            Ok(())
        };
        let p = path(kind);
        match step
            .and_then(|()| extra_records(&orig, &f, &[RecordType::HEADER_FEATURE]))
            .and_then(|removed| {
                save_variant(&f, WriteOptions::default().endian(other), &p).map(|()| removed)
            }) {
            Ok(removed) => Built::Made(Variant {
                kind,
                path: p,
                decompressed: compressed,
                swapped: true,
                offsets_kept: !compressed,
                layout: f.layout,
                max_attr_size: max_attr_size(&f),
                only_original: removed,
                only_variant: vec![],
            }),
            Err(e) => Built::Failed(kind, e),
        }
    });

    if set == Variants::CopyAndByteOrder {
        return out;
    }

    // (c) / (d) the other layout.
    let mut f = orig.clone();
    let (kind, conv) = match orig.layout {
        Layout::File => (Kind::Pipe, f.to_pipe()),
        Layout::Pipe => (Kind::File, f.to_file()),
    };
    let p = path(kind);
    let made = conv
        .map_err(|e| format!("{}: {e}", kind.name()))
        .and_then(|()| match kind {
            Kind::Pipe => extra_records(&f, &orig, &HEADER_RECORDS).map(|a| (vec![], a)),
            _ => extra_records(&orig, &f, &HEADER_RECORDS).map(|r| (r, vec![])),
        })
        .and_then(|x| save_variant(&f, WriteOptions::default(), &p).map(|()| x));
    out.push(match made {
        Ok((only_original, only_variant)) => Built::Made(Variant {
            kind,
            path: p,
            decompressed: false,
            swapped: false,
            offsets_kept: false,
            layout: f.layout,
            max_attr_size: max_attr_size(&f),
            only_original,
            only_variant,
        }),
        Err(e) => Built::Failed(kind, e),
    });

    // (e) the other compression state.
    let mut f = orig.clone();
    let (kind, conv) = if compressed {
        (Kind::Decompressed, f.decompress())
    } else {
        (Kind::Compressed, f.compress(CompressedKind::Compressed, 3))
    };
    let p = path(kind);
    // A pipe gains (or loses) the HEADER_FEATURE record of HEADER_COMPRESSED.
    let made = conv
        .map_err(|e| format!("{}: {e}", kind.name()))
        .and_then(|()| match kind {
            Kind::Compressed => {
                extra_records(&f, &orig, &[RecordType::HEADER_FEATURE]).map(|a| (vec![], a))
            }
            _ => extra_records(&orig, &f, &[RecordType::HEADER_FEATURE]).map(|r| (r, vec![])),
        })
        .and_then(|x| save_variant(&f, WriteOptions::default(), &p).map(|()| x));
    out.push(match made {
        Ok((only_original, only_variant)) => Built::Made(Variant {
            kind,
            path: p,
            decompressed: kind == Kind::Decompressed,
            swapped: false,
            offsets_kept: false,
            layout: f.layout,
            max_attr_size: max_attr_size(&f),
            only_original,
            only_variant,
        }),
        Err(e) => Built::Failed(kind, e),
    });
    out.extend(build_combinations(main, &orig, dir, stem));
    out
}

/// One step of a combination: what it changes (`None` keeps the input's).
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The other byte order than the original's.
    pub other_endian: bool,
    /// The other layout than the original's.
    pub other_layout: bool,
    /// Compress the kernel records into COMPRESSED (81, what perf 6.1 reads).
    pub compress: bool,
}

const fn step(other_endian: bool, other_layout: bool, compress: bool) -> Step {
    Step {
        other_endian,
        other_layout,
        compress,
    }
}

/// The combinations and round trips check 5 has perf read (issue 13), each a list of
/// steps from the original. (perf 6.1 reads no byte-swapped pipe: `read_variant` skips
/// one when perf fails for exactly its known reasons.)
pub const COMBINATIONS: &[(&str, &[Step])] = &[
    // Round trips: the other layout and back, the other byte order and back, both.
    (
        "other-layout-and-back",
        &[step(false, true, false), step(false, false, false)],
    ),
    (
        "other-byte-order-and-back",
        &[step(true, false, false), step(false, false, false)],
    ),
    (
        "both-and-back",
        &[step(true, true, false), step(false, false, false)],
    ),
    // Combinations in one conversion.
    ("other-byte-order-compressed", &[step(true, false, true)]),
    ("other-layout-compressed", &[step(false, true, true)]),
    ("other-byte-order-other-layout", &[step(true, true, false)]),
];

/// The [`COMBINATIONS`] of an input, converted through `perfdata convert`'s path.
fn build_combinations(main: &[u8], orig: &Builder<'_>, dir: &Path, stem: &str) -> Vec<Built> {
    use perfdata::write::{convert_file, ConvertOptions};
    let other_endian = orig.endian.swapped();
    let other_layout = match orig.layout {
        Layout::File => Layout::Pipe,
        Layout::Pipe => Layout::File,
    };
    let input = dir.join(format!("{stem}.v-input.data"));
    if let Err(e) = std::fs::write(&input, main) {
        return vec![Built::Failed(
            Kind::Copy,
            format!("{}: {e}", input.display()),
        )];
    }
    let mut out = vec![];
    for (name, steps) in COMBINATIONS {
        let kind = Kind::Combined(name);
        let last = steps.last().expect("at least one step");
        let (endian, layout) = (
            if last.other_endian {
                other_endian
            } else {
                orig.endian
            },
            if last.other_layout {
                other_layout
            } else {
                orig.layout
            },
        );
        let p = dir.join(format!("{stem}.v-{name}.data"));
        let mut from = input.clone();
        let mut made = Ok(());
        let mut refused = None;
        for (i, s) in steps.iter().enumerate() {
            let to = if i + 1 == steps.len() {
                p.clone()
            } else {
                dir.join(format!("{stem}.v-{name}.step{i}.data"))
            };
            let opts = ConvertOptions {
                endian: Some(if s.other_endian {
                    other_endian
                } else {
                    orig.endian
                }),
                layout: Some(if s.other_layout {
                    other_layout
                } else {
                    orig.layout
                }),
                compress: s.compress.then_some((CompressedKind::Compressed, 3)),
                ..Default::default()
            };
            made = convert_file(&from, &to, &opts).map_err(|e| format!("step {i} ({opts:?}): {e}"));
            // Refused by design (checked, not assumed): the PERFFILE magic records no byte
            // order, so the writer keeps a legacy file's.
            if let Err(e) = &made {
                if orig.legacy_v1 && s.other_endian && e.contains("keeps its byte order") {
                    refused = Some(format!("the writer refuses by design: {e}"));
                }
            }
            if i > 0 {
                let _ = std::fs::remove_file(&from);
            }
            if made.is_err() {
                break;
            }
            from = to;
        }
        if let Some(why) = refused {
            out.push(Built::Skipped(kind, why));
            continue;
        }
        out.push(match made.and_then(|()| framing_records(orig, &p)) {
            Ok((only_original, only_variant)) => Built::Made(Variant {
                kind,
                path: p,
                decompressed: false,
                swapped: endian != orig.endian,
                offsets_kept: false,
                layout,
                max_attr_size: max_attr_size(orig),
                only_original,
                only_variant,
            }),
            Err(e) => Built::Failed(kind, e),
        });
    }
    let _ = std::fs::remove_file(&input);
    out
}

/// The records a conversion legitimately added or removed (the header's content as
/// records, [`HEADER_RECORDS`]): the variant's records are the original's plus some, or
/// minus some; else (a pipe's header records regenerated in another order) all of them on
/// both sides, provided every other record is the same. Records are compared decoded,
/// so across byte orders.
#[allow(clippy::type_complexity)]
fn framing_records(
    orig: &Builder<'_>,
    path: &Path,
) -> Result<(Vec<(usize, RecordType)>, Vec<(usize, RecordType)>), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let data = PerfData::open(&bytes).map_err(|e| format!("cannot reopen the variant: {e}"))?;
    let mut v = Builder::read(&data).map_err(|e| format!("the model refuses the variant: {e}"))?;
    let mut o = orig.clone();
    for (f, what) in [(&mut v, "variant"), (&mut o, "original")] {
        f.make_typed()
            .map_err(|e| format!("make_typed ({what}): {e}"))?;
    }
    if let Ok(added) = extra_records(&v, &o, &HEADER_RECORDS) {
        return Ok((vec![], added));
    }
    if let Ok(removed) = extra_records(&o, &v, &HEADER_RECORDS) {
        return Ok((removed, vec![]));
    }
    let split = |f: &Builder<'_>| {
        let mut framing = vec![];
        let mut rest = vec![];
        for (i, r) in printed_user_records(f).into_iter().enumerate() {
            if HEADER_RECORDS.contains(&r.ty) {
                framing.push((i, r.ty));
            } else {
                rest.push(r.clone().into_owned());
            }
        }
        (framing, rest)
    };
    let ((of, or), (vf, vr)) = (split(&o), split(&v));
    if or != vr {
        let at = or
            .iter()
            .zip(&vr)
            .position(|(a, b)| a != b)
            .unwrap_or(or.len().min(vr.len()));
        return Err(format!(
            "the conversion changed a record other than framing records (user record #{at} without them; {} vs {} records)",
            or.len(),
            vr.len()
        ));
    }
    Ok((of, vf))
}

/// The single-file version of a `--threads` directory; the other variants need a
/// directory writer.
fn build_single_file(
    data: &PerfData<'_>,
    orig: &Builder<'_>,
    streams: &[(String, Vec<u8>)],
    p: PathBuf,
) -> Vec<Built> {
    let no_dir = "the writer does not produce --threads directories (see single-file)";
    let mut out = vec![];
    let mut f = orig.clone().into_owned();
    let made = f
        .decompress()
        .map_err(|e| format!("decompress: {e}"))
        .and_then(|()| {
            for (name, bytes) in streams {
                data.records_in(bytes, 0)
                    .for_each(|origin, rec, _| {
                        let ty = rec.record_type();
                        // Compressed records are replaced by what they hold (each stream is
                        // its own zstd stream, which concatenation would break).
                        if origin == Origin::Input && is_compressed_frame(ty) {
                            return Ok(true);
                        }
                        let attr = data.session.attr_index(ty, rec.body, data.format.endian);
                        f.records.push(RecordItem {
                            ty,
                            misc: rec.header.misc,
                            attr,
                            data: RecordData::Raw {
                                body: Bytes::from(rec.body.to_vec()),
                                payload: Bytes::from(rec.payload.to_vec()),
                            },
                        });
                        Ok(true)
                    })
                    .map_err(|e| format!("{name}: {e}"))?;
            }
            save_variant(&f, WriteOptions::default(), &p)
        });
    out.push(match made {
        Ok(()) => Built::Made(Variant {
            kind: Kind::SingleFile,
            path: p,
            decompressed: false,
            swapped: false,
            offsets_kept: false,
            layout: Layout::File,
            max_attr_size: max_attr_size(&f),
            only_original: vec![],
            only_variant: vec![],
        }),
        Err(e) => Built::Failed(Kind::SingleFile, e),
    });
    for k in [
        Kind::Copy,
        Kind::Swapped(Endianness::Big),
        Kind::Pipe,
        Kind::Compressed,
    ] {
        out.push(Built::Skipped(k, no_dir.into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        std::fs::read(dir.join(name)).unwrap()
    }

    #[test]
    fn combinations_name_the_framing_records_and_catch_a_changed_record() {
        let dir = tempfile::tempdir().unwrap();
        let main = fixture("callchain.data");
        let orig = Builder::read(&PerfData::open(&main).unwrap()).unwrap();
        let built = build_combinations(&main, &orig, dir.path(), "callchain");
        assert_eq!(built.len(), COMBINATIONS.len());
        let mut pipe = None;
        for b in &built {
            match b {
                Built::Made(v) => {
                    let changed_layout = v.layout != orig.layout;
                    assert_eq!(
                        !v.only_variant.is_empty(),
                        changed_layout,
                        "{}: {v:?}",
                        v.kind.name()
                    );
                    assert!(v.only_original.is_empty(), "{v:?}");
                    assert!(v
                        .only_variant
                        .iter()
                        .all(|(_, t)| HEADER_RECORDS.contains(t)));
                    let name = v.kind.name();
                    let round_trip = name.ends_with("-and-back");
                    assert_eq!(v.swapped, name.contains("byte-order") && !round_trip);
                    assert_eq!(changed_layout, name.contains("layout") && !round_trip);
                    if v.kind == Kind::Combined("other-layout-compressed") {
                        pipe = Some(v.path.clone());
                    }
                }
                // A file's other byte order and layout is a byte-swapped pipe: made.
                other => panic!("{other:?}"),
            }
        }
        // A variant that lost a user record other than framing (a FINISHED_ROUND) is
        // refused. (Kernel records, which perf prints, are compared in perf's output.)
        let path = pipe.expect("the pipe variant");
        let bytes = std::fs::read(&path).unwrap();
        let mut file = Builder::read(&PerfData::open(&bytes).unwrap())
            .unwrap()
            .into_owned();
        let round = file
            .records
            .iter()
            .position(|r| r.ty == RecordType::FINISHED_ROUND)
            .expect("a FINISHED_ROUND");
        file.records.remove(round);
        std::fs::write(&path, to_bytes(&file, WriteOptions::default()).unwrap()).unwrap();
        let err = framing_records(&orig, &path).unwrap_err();
        assert!(err.contains("other than framing records"), "{err}");
    }
}
