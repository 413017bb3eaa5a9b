//! A pipe-mode stream with a zero-size record (`header.size = 0`, as a crashed perf
//! leaves): every record before it, then a precise error (offset, record, field,
//! expected); salvaging goes on after it. Made here from a pipe fixture by zeroing one
//! record's size.

use crate::common;
use common::fixture;
use perfdata::RecordWalk;

use perfdata::{PerfData, PipeReader};

const FIXTURE: &str = "pipe-callchain.pipe.data";
/// The record whose size is zeroed.
const BAD: usize = 20;

/// Offsets of every record of the intact stream, and the damaged stream.
fn streams() -> (Vec<u64>, u64, Vec<u8>) {
    let good = fixture(FIXTURE);
    let data = PerfData::open(&good).unwrap();
    let mut offsets = vec![];
    data.for_each_record(&mut |origin, rec, _| {
        if origin == perfdata::Origin::Input {
            offsets.push(rec.offset);
        }
        Ok(true)
    })
    .unwrap();
    assert!(offsets.len() > BAD + 10, "{FIXTURE}: too few records");
    let at = offsets[BAD];
    let mut bad = good.clone();
    // perf_event_header.size is the u16 at byte 6.
    bad[at as usize + 6..at as usize + 8].copy_from_slice(&0u16.to_le_bytes());
    (offsets, at, bad)
}

fn is_the_precise_error(e: &perfdata::rt::Error, at: u64) {
    assert_eq!(e.offset(), Some(at + 6), "{e}");
    assert_eq!(e.record().map(|r| r.0), Some(BAD as u64), "{e}");
    let text = e.to_string();
    assert!(text.contains("a record size of at least 8"), "{text}");
    assert!(text.contains("found 0"), "{text}");
}

#[test]
fn the_records_before_it_then_a_precise_error() {
    let (offsets, at, bad) = streams();
    let data = PerfData::open(&bad).unwrap();
    let mut seen = vec![];
    let err = data
        .for_each_record(&mut |origin, rec, _| {
            if origin == perfdata::Origin::Input {
                seen.push(rec.offset);
            }
            Ok(true)
        })
        .unwrap_err();
    assert_eq!(seen, offsets[..BAD]);
    is_the_precise_error(&err, at);

    // The same from a Read, one record at a time.
    let mut reader = PipeReader::new(&bad[..]).unwrap();
    let mut streamed = vec![];
    let err = loop {
        match reader.next_record() {
            Ok(Some(r)) => {
                if r.origin == perfdata::Origin::Input {
                    streamed.push(r.raw.offset);
                }
            }
            Ok(None) => panic!("no error at the zero-size record"),
            Err(e) => break e,
        }
    };
    assert_eq!(streamed, offsets[..BAD]);
    is_the_precise_error(&err, at);
}

#[test]
fn salvaging_goes_on_after_it() {
    let (offsets, at, bad) = streams();
    let data = PerfData::open(&bad).unwrap();
    let mut seen = vec![];
    let mut records = data.records().salvaging();
    records
        .for_each(|origin, rec, ctx| {
            if origin == perfdata::Origin::Input {
                data.decode(&rec, ctx)?;
                seen.push(rec.offset);
            }
            Ok(true)
        })
        .unwrap();
    let errors = records.take_damage();
    // Every record but the damaged one, at its own offset.
    let mut want = offsets.clone();
    want.remove(BAD);
    assert_eq!(seen, want);
    // One piece of damage, typed: the precise error and the bytes skipped to the next
    // record.
    assert_eq!(errors.len(), 1, "{errors:?}");
    is_the_precise_error(&errors[0].error, at);
    assert_eq!(
        errors[0].recovery,
        perfdata::Recovery::Skipped {
            start: at,
            end: offsets[BAD + 1]
        }
    );
    let text = errors[0].to_string();
    assert!(
        text.contains(&format!(
            "salvage: skipped bytes {at:#x}..{:#x}",
            offsets[BAD + 1]
        )),
        "{text}"
    );
}

fn dump(args: &[&str], stdin: Option<&[u8]>) -> (Option<i32>, String, String) {
    let args: Vec<&str> = std::iter::once("dump")
        .chain(args.iter().copied())
        .collect();
    crate::run_perfdata(&args, stdin)
}

/// Record lines of a text dump that are not inside compressed records.
fn stream_records(stdout: &str) -> usize {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("+z"))
        .count()
}

#[test]
fn dump_prints_every_record_before_it_and_salvage_goes_on() {
    let (offsets, at, bad) = streams();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crashed.pipe.data");
    std::fs::write(&path, &bad).unwrap();
    let p = path.to_str().unwrap();
    let where_ = format!("at byte {:#x}", at + 6);

    let (code, stdout, stderr) = dump(&[p], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stream_records(&stdout), BAD);
    assert!(
        stderr.contains("crashed.pipe.data") && stderr.contains(&where_),
        "{stderr}"
    );
    assert!(stderr.contains("record #20"), "{stderr}");

    let (code, stdout, stderr) = dump(&["-"], Some(&bad));
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stream_records(&stdout), BAD);
    assert!(
        stderr.contains("<stdin>") && stderr.contains(&where_),
        "{stderr}"
    );

    let (code, stdout, stderr) = dump(&[p, "--salvage"], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stream_records(&stdout), offsets.len() - 1);
    assert!(stderr.contains(&where_), "{stderr}");
    assert!(stderr.contains("salvage: skipped bytes"), "{stderr}");

    // From a pipe: the same records and the same damage as from the file, found within
    // the stream reader's bounded look-ahead.
    let (code, piped, piped_err) = dump(&["-", "--salvage"], Some(&bad));
    assert_eq!(code, Some(1), "{piped_err}");
    assert_eq!(piped, stdout);
    assert_eq!(piped_err.replace("<stdin>", p), stderr);
}
