//! The one record cursor: lending walks over memory and over any `Read` expand compressed
//! records a step at a time (bounded memory), put records that straddle compressed
//! records back together, and agree with each other record for record.

use crate::common;
use common::fixture;
use perfdata::RecordWalk;
use perfdata::{Origin, PerfData, PipeReader};
use std::io::Read;

const FINISHED_ROUND: u16 = 68;
const COMPRESSED: u16 = 81;

/// A record header: type, misc 0, size (little-endian).
fn header(ty: u16, size: u16) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(&u32::from(ty).to_le_bytes());
    h[6..].copy_from_slice(&size.to_le_bytes());
    h
}

/// A little-endian pipe stream: the pipe header, then `records`.
fn pipe(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"PERFILE2".to_vec();
    out.extend_from_slice(&16u64.to_le_bytes());
    for r in records {
        out.extend_from_slice(r);
    }
    out
}

/// A COMPRESSED record holding `zstd` (at most a record's size).
fn compressed(zstd: &[u8]) -> Vec<u8> {
    let size = u16::try_from(8 + zstd.len()).expect("fits a record");
    let mut r = header(COMPRESSED, size).to_vec();
    r.extend_from_slice(zstd);
    r
}

/// One zstd stream of `raw`, cut into COMPRESSED records: the stream is flushed after
/// each part of `raw` split at `cuts`, so a record straddles two compressed records
/// wherever a cut falls inside it.
fn compressed_records(raw: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    use zstd::stream::raw::{Encoder, Operation, OutBuffer};
    let mut enc = Encoder::new(19).unwrap();
    let mut records = vec![];
    let mut bounds = cuts.to_vec();
    bounds.push(raw.len());
    let mut start = 0;
    for (i, &end) in bounds.iter().enumerate() {
        let mut out = vec![0u8; 1 << 20];
        let mut output = OutBuffer::around(&mut out[..]);
        let mut input = zstd::stream::raw::InBuffer::around(&raw[start..end]);
        while input.pos() < input.src.len() {
            enc.run(&mut input, &mut output).unwrap();
        }
        if i + 1 == bounds.len() {
            while enc.finish(&mut output, true).unwrap() > 0 {}
        } else {
            while enc.flush(&mut output).unwrap() > 0 {}
        }
        let n = output.pos();
        for piece in out[..n].chunks(60_000) {
            records.push(compressed(piece));
        }
        start = end;
    }
    records
}

/// (origin, offset, type, size) of every record of the in-memory lending walk, and the
/// most decompressed bytes it held at once.
fn lent(bytes: &[u8]) -> (Vec<(Origin, u64, u32, u16)>, usize) {
    let data = PerfData::open(bytes).unwrap();
    let mut records = data.records();
    let (mut seen, mut held) = (vec![], 0);
    while let Some(r) = records.next().unwrap() {
        seen.push((
            r.origin,
            r.raw.offset,
            r.raw.header.type_,
            r.raw.header.size,
        ));
        held = held.max(records.buffered_bytes());
    }
    (seen, held)
}

/// The same from `PipeReader` over `r`.
fn streamed(r: impl Read) -> (Vec<(Origin, u64, u32, u16)>, usize) {
    let mut reader = PipeReader::new(r).unwrap();
    let (mut seen, mut held) = (vec![], 0);
    while let Some(r) = reader.next_record().unwrap() {
        seen.push((
            r.origin,
            r.raw.offset,
            r.raw.header.type_,
            r.raw.header.size,
        ));
        held = held.max(reader.buffered_bytes());
    }
    (seen, held)
}

/// A reader that gives at most `n` bytes per read.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn a_record_cut_between_compressed_records_is_put_back_together() {
    // Three FINISHED_ROUND records (8 bytes each); the zstd stream is flushed 4 and 13
    // bytes in, so the first and second records each straddle two compressed records.
    let raw: Vec<u8> = (0..3).flat_map(|_| header(FINISHED_ROUND, 8)).collect();
    let chunks = compressed_records(&raw, &[4, 13]);
    assert_eq!(chunks.len(), 3);
    let bytes = pipe(&chunks);
    let (seen, _) = lent(&bytes);
    let at = |i: usize| 16 + chunks[..i].iter().map(Vec::len).sum::<usize>() as u64;
    let inner = |n: usize, o: u64| {
        (
            Origin::Compressed {
                record_offset: at(n),
            },
            o,
            68,
            8,
        )
    };
    let outer = |n: usize| (Origin::Input, at(n), 81, chunks[n].len() as u16);
    // Each inner record comes after the compressed record that completes it, at its
    // offset in the decompressed stream.
    let want = vec![
        outer(0),
        outer(1),
        inner(1, 0),
        outer(2),
        inner(2, 8),
        inner(2, 16),
    ];
    assert_eq!(seen, want);
    for n in 1..=5 {
        assert_eq!(streamed(Trickle(&bytes, n)).0, want, "reads of {n} bytes");
    }
}

#[test]
fn expanding_holds_a_step_not_the_expansion() {
    // 16 MiB of records in one zstd stream of a few KiB: the walks hold what one step of
    // output needs, not what the data expands to.
    let raw: Vec<u8> = (0..2 << 20)
        .flat_map(|_| header(FINISHED_ROUND, 8))
        .collect();
    let chunks = compressed_records(&raw, &[]);
    let bytes = pipe(&chunks);
    assert!(bytes.len() < 64 << 10, "{} bytes", bytes.len());
    let (seen, held) = lent(&bytes);
    let inner = seen.iter().filter(|r| r.0 != Origin::Input).count();
    assert_eq!(inner, 2 << 20);
    assert!(held <= 256 << 10, "the in-memory walk held {held} bytes");
    let (streamed_seen, streamed_held) = streamed(&bytes[..]);
    assert_eq!(streamed_seen, seen);
    assert!(
        streamed_held <= 256 << 10,
        "the stream reader held {streamed_held} bytes"
    );
}

#[test]
fn the_lending_walks_agree_with_the_callback_walk_on_real_files() {
    for name in [
        "callchain.data",
        "compressed.data",
        "pipe-callchain.pipe.data",
        "tracepoint.data",
    ] {
        let bytes = fixture(name);
        let data = PerfData::open(&bytes).unwrap();
        let mut called = vec![];
        data.for_each_record(&mut |origin, rec, ctx| {
            let ty = rec.header.type_;
            called.push((origin, rec.offset, ty, rec.body.to_vec(), *ctx));
            Ok(true)
        })
        .unwrap();
        if name == "compressed.data" {
            assert!(called.iter().any(|r| r.0 != Origin::Input));
        }
        let mut lent = vec![];
        let mut records = data.records();
        while let Some(r) = records.next().unwrap() {
            let ty = r.raw.header.type_;
            lent.push((r.origin, r.raw.offset, ty, r.raw.body.to_vec(), r.ctx));
        }
        assert_eq!(lent, called, "{name}");
        // Time order: the same records but the compressed records themselves.
        let mut ordered = 0;
        let mut records = data.records().time_ordered();
        while let Some(r) = records.next().unwrap() {
            assert!(!matches!(r.raw.header.type_, 81 | 83));
            ordered += 1;
        }
        let expanded = called.iter().filter(|r| !matches!(r.2, 81 | 83)).count();
        assert_eq!(ordered, expanded, "{name}");
    }
}

#[test]
fn a_threads_directory_is_walked_stream_after_stream() {
    let path = common::fixture_path("threads.data");
    let recording = perfdata::Recording::open(&path).unwrap();
    let data = recording.data().unwrap();
    let mut want = vec![];
    let mut main = data.records();
    while let Some(r) = main.next().unwrap() {
        want.push((perfdata::Place::Main, r.raw.offset));
    }
    for i in 0..recording.stream_paths().count() {
        let mut records = data.records_in(recording.stream_bytes(i), 0);
        while let Some(r) = records.next().unwrap() {
            want.push((perfdata::Place::DataFile(i), r.raw.offset));
        }
    }
    assert!(want.iter().any(|r| r.0 != perfdata::Place::Main));
    let mut seen = vec![];
    let mut records = recording.records(&data);
    while let Some((place, r)) = records.next().unwrap() {
        seen.push((place, r.raw.offset));
    }
    assert_eq!(seen, want);
}

#[test]
fn time_order_over_a_salvaging_walk_reports_the_damage() {
    // A record whose size is below a header's: the plain walk stops there, the salvaging
    // one goes on and says what it skipped, in file and in time order alike.
    let mut bytes = fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut offsets = vec![];
    let mut records = data.records();
    while let Some(r) = records.next().unwrap() {
        offsets.push(r.raw.offset as usize);
    }
    drop(records);
    let bad = offsets[offsets.len() / 2];
    bytes[bad + 6..bad + 8].copy_from_slice(&4u16.to_le_bytes());
    let data = PerfData::open(&bytes).unwrap();
    let mut file_order = data.records().salvaging();
    while file_order.next().unwrap().is_some() {}
    let want: Vec<String> = file_order
        .take_damage()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert!(!want.is_empty());
    assert!(data.records().for_each(|_, _, _| Ok(true)).is_err());
    let mut time_order = data.records().salvaging().time_ordered();
    while time_order.next().unwrap().is_some() {}
    let got: Vec<String> = time_order
        .take_damage()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(got, want);
}

/// (offset, type, size) of every record of a salvaging walk, the damage it went past (as
/// text), and the most its source held at once.
type Salvaged = (Vec<(u64, u32, u16)>, Vec<String>, usize);

fn salvaged<S: perfdata::RecordSource>(
    mut cursor: perfdata::RecordCursor<S>,
    held: impl Fn(&S) -> usize,
) -> Salvaged {
    let (mut seen, mut most) = (vec![], 0);
    while let Some((_, rec)) = cursor.next_record().unwrap() {
        seen.push((rec.offset, rec.header.type_, rec.header.size));
        most = most.max(held(cursor.source()));
    }
    let damage = cursor.take_damage().iter().map(|d| d.to_string()).collect();
    (seen, damage, most)
}

#[test]
fn a_salvaging_walk_of_a_read_stream_recovers_as_the_walk_in_memory_does() {
    use perfdata::{Endianness, ReadSource, RecordCursor, SliceSource, SALVAGE_LOOKAHEAD};
    let good = fixture("pipe-callchain.pipe.data");
    let mut offsets = vec![];
    let mut walk = RecordCursor::new(SliceSource::new(&good[16..], 16, Endianness::Little));
    while let Some((_, rec)) = walk.next_record().unwrap() {
        offsets.push(rec.offset as usize);
    }
    let mid = offsets[offsets.len() / 2];
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        b
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "size 4",
            with(&|b| b[mid + 6..mid + 8].copy_from_slice(&4u16.to_le_bytes())),
        ),
        (
            "size 0xffff",
            with(&|b| b[mid + 6..mid + 8].copy_from_slice(&[0xff, 0xff])),
        ),
        (
            "size 0",
            with(&|b| b[mid + 6..mid + 8].copy_from_slice(&[0, 0])),
        ),
        ("cut mid-record", good[..mid + 5].to_vec()),
        (
            "text after the end",
            with(&|b| b.extend_from_slice(b"[ perf record: Woken up 1 times ]\n")),
        ),
        // Past the first pass and the look-ahead: the place where records parse again
        // is found only after the window has slid, and off 8-byte alignment.
        (
            "3 MiB of zeros, odd length",
            with(&|b| {
                b.splice(mid..mid, std::iter::repeat_n(0, 3 * SALVAGE_LOOKAHEAD + 3));
            }),
        ),
        ("garbage to the end", with(&|b| b[mid..].fill(0xfe))),
    ];
    for (name, bytes) in cases {
        let in_memory = salvaged(
            RecordCursor::new(SliceSource::new(&bytes[16..], 16, Endianness::Little)).salvaging(),
            |_| 0,
        );
        assert!(!in_memory.1.is_empty(), "{name}: no damage");
        for chunk in [1, 7, 4096, usize::MAX] {
            let source = ReadSource::new(Trickle(&bytes[16..], chunk), 16, Endianness::Little);
            let (seen, damage, held) = salvaged(
                RecordCursor::new(source).salvaging(),
                ReadSource::buffered_bytes,
            );
            assert_eq!(seen, in_memory.0, "{name}, reads of {chunk} bytes");
            assert_eq!(damage, in_memory.1, "{name}, reads of {chunk} bytes");
            assert!(
                held <= 2 * SALVAGE_LOOKAHEAD + (128 << 10),
                "{name}: held {held} bytes"
            );
        }
    }
}

#[test]
fn a_salvaging_walk_of_a_read_stream_stops_where_nothing_parses_again() {
    use perfdata::{ReadSource, RecordCursor, Recovery};
    // Two FINISHED_ROUND records, a record of size 4, then bytes that are no records.
    let mut records = vec![header(FINISHED_ROUND, 8).to_vec(); 2];
    records.push(header(FINISHED_ROUND, 4).to_vec());
    records.push(vec![0xee; 100]);
    let bytes = pipe(&records);
    let source = ReadSource::new(&bytes[16..], 16, perfdata::Endianness::Little);
    let mut cursor = RecordCursor::new(source).salvaging();
    let mut seen = vec![];
    while let Some((_, rec)) = cursor.next_record().unwrap() {
        seen.push(rec.offset);
    }
    assert_eq!(seen, [16, 24]);
    let damage = cursor.take_damage();
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].recovery, Recovery::Stopped { start: 32 });
    assert!(
        damage[0].error.to_string().contains("record #2"),
        "{}",
        damage[0].error
    );
}

/// What a walk gave for one record: where it came from, its header, a hash of its bytes
/// and its decoding context.
type Seen = (Origin, u64, u32, u16, u16, u64, perfdata::RecordCtx);

fn seen(origin: Origin, rec: &perfdata::RawRecord<'_>, ctx: perfdata::RecordCtx) -> Seen {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (rec.body, rec.payload).hash(&mut h);
    let (ty, misc, size) = (rec.header.type_, rec.header.misc.0, rec.header.size);
    (origin, rec.offset, ty, misc, size, h.finish(), ctx)
}

#[test]
fn the_walks_fast_lane_gives_what_the_cursor_and_the_session_give() {
    // `Records` takes plain records straight from the framing and keeps the context
    // across records of one attr. The reference: the cursor's general step for every
    // record, and the context computed afresh from the session.
    let (mut walked, mut expanded, mut with_payload) = (0, 0, 0);
    for path in common::fixture_and_corpus_files() {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let Ok(data) = PerfData::open(&bytes) else {
            continue;
        };
        let e = data.format.endian;
        let (input, base) = data.records().input();
        let mut cursor = perfdata::RecordCursor::new(perfdata::SliceSource::new(input, base, e));
        let (mut want, mut want_end) = (vec![], Ok(()));
        loop {
            match cursor.next_record() {
                Ok(Some((origin, rec))) => {
                    let ctx =
                        data.session
                            .record_ctx(rec.record_type(), rec.header.misc, rec.body, e);
                    want.push(seen(origin, &rec, ctx));
                }
                Ok(None) => break,
                Err(err) => {
                    want_end = Err(err.to_string());
                    break;
                }
            }
        }
        let mut called = vec![];
        let called_end = data
            .records()
            .for_each(|origin, rec, ctx| {
                called.push(seen(origin, &rec, *ctx));
                Ok(true)
            })
            .map_err(|e| e.to_string());
        assert_eq!(
            (&called, &called_end),
            (&want, &want_end),
            "{name}: for_each"
        );
        let mut lent = vec![];
        let mut records = data.records();
        let lent_end = loop {
            match records.next() {
                Ok(Some(r)) => lent.push(seen(r.origin, &r.raw, r.ctx)),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e.to_string()),
            }
        };
        assert_eq!((&lent, &lent_end), (&want, &want_end), "{name}: advance");
        // Stopped every few records and taken up again, by `for_each` and by the lending
        // step in turn: the cursor stands at the last record given (the lane writes its
        // state back once per run), so nothing is given twice or skipped.
        let (mut resumed, mut records) = (vec![], data.records());
        let resumed_end = loop {
            let mut stopped = false;
            let run = records.for_each(|origin, rec, ctx| {
                resumed.push(seen(origin, &rec, *ctx));
                stopped = resumed.len() % 7 == 0;
                Ok(!stopped)
            });
            if let Err(e) = run {
                break Err(e.to_string());
            }
            if !stopped {
                break Ok(());
            }
            let (origin, raw, ctx) = records.parts();
            assert_eq!(
                seen(origin, &raw, *ctx),
                *resumed.last().unwrap(),
                "{name}: where for_each stopped"
            );
            match records.next() {
                Ok(Some(r)) => resumed.push(seen(r.origin, &r.raw, r.ctx)),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e.to_string()),
            }
        };
        assert_eq!(
            (&resumed, &resumed_end),
            (&want, &want_end),
            "{name}: for_each stopped and taken up again"
        );
        walked += want.len();
        expanded += want.iter().filter(|r| r.0 != Origin::Input).count();
        // HEADER_TRACING_DATA, AUXTRACE: the types with a payload after them.
        with_payload += want.iter().filter(|r| matches!(r.2, 66 | 71)).count();
    }
    // The committed fixtures alone give these (the corpus adds more).
    assert!(walked > 5_000, "{walked} records walked");
    assert!(expanded > 100, "{expanded} records expanded");
    assert!(with_payload > 0, "no record with a payload");
}
