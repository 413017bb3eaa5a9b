use super::types::*;
use super::*;
use crate::rt::{Bytes, Str};

/// A file with a record of every kind, one of an unknown id, and padding after the
/// unwinding tables (as the JVM agent writes them).
fn every_kind(endian: Endianness) -> JitDump<'static> {
    let rec = |id: RecordId, timestamp: u64, body: RecordBody<'static>| Record {
        id,
        timestamp,
        body,
        tail: None,
    };
    let mut unwinding = rec(
        RecordId::CODE_UNWINDING_INFO,
        3,
        RecordBody::UnwindingInfo(UnwindingInfo {
            eh_frame_hdr_size: 4,
            mapped_size: 12,
            unwinding_data: Bytes::from(&b"HDR!eh_frame"[..]),
        }),
    );
    unwinding.tail = Some(Bytes::from(&[0u8; 4][..]));
    JitDump {
        endian,
        header: JitDump::header(4242, 62),
        records: vec![
            rec(
                RecordId::CODE_DEBUG_INFO,
                1,
                RecordBody::DebugInfo(DebugInfo {
                    code_addr: 0x7000,
                    entries: vec![
                        DebugEntry {
                            addr: 0x7000,
                            lineno: 3,
                            discrim: 0,
                            name: Str::cstr("/src/a.js"),
                        },
                        DebugEntry {
                            addr: 0x7010,
                            lineno: -1,
                            discrim: 2,
                            name: Str::cstr("\u{ff}"),
                        },
                    ],
                }),
            ),
            unwinding,
            rec(
                RecordId::CODE_LOAD,
                4,
                RecordBody::CodeLoad(CodeLoad {
                    pid: 4242,
                    tid: 4243,
                    vma: 0x7000,
                    code_addr: 0x7000,
                    code_size: 3,
                    code_index: 9,
                    name: Str::cstr("JS:*f /src/a.js:1:1"),
                    code: Bytes::from(&b"\x55\x5d\xc3"[..]),
                }),
            ),
            rec(
                RecordId::CODE_MOVE,
                5,
                RecordBody::CodeMove(CodeMove {
                    pid: 4242,
                    tid: 4243,
                    vma: 0x8000,
                    old_code_addr: 0x7000,
                    new_code_addr: 0x8000,
                    code_size: 3,
                    code_index: 9,
                }),
            ),
            rec(
                RecordId(77),
                6,
                RecordBody::Unknown(Bytes::from(&b"future"[..])),
            ),
            rec(RecordId::CODE_CLOSE, 7, RecordBody::Close(Close {})),
        ],
    }
}

#[test]
fn every_record_kind_round_trips_byte_for_byte_in_both_byte_orders() {
    for endian in [Endianness::Little, Endianness::Big] {
        let dump = every_kind(endian);
        let bytes = dump.encode().unwrap();
        assert_eq!(detect(&bytes), Some(endian));
        let back = JitDump::parse(&bytes).unwrap();
        assert_eq!(back, dump);
        assert_eq!(back.encode().unwrap(), bytes);
        let (_, load) = back.code_loads().next().unwrap();
        assert_eq!(load.name.to_str_lossy(), "JS:*f /src/a.js:1:1");
    }
}

#[test]
fn the_magic_gives_the_byte_order_and_anything_else_is_refused() {
    let le = every_kind(Endianness::Little).encode().unwrap();
    assert_eq!(&le[..4], b"DTiJ");
    let be = every_kind(Endianness::Big).encode().unwrap();
    assert_eq!(&be[..4], b"JiTD");
    let e = JitDump::parse(b"PERFILE2").unwrap_err().to_string();
    assert!(e.contains("magic `JiTD`"), "{e}");
    assert!(e.contains("50 45 52 46"), "{e}");
    let e = JitDump::parse(b"").unwrap_err().to_string();
    assert!(e.contains("an empty file"), "{e}");
    let mut v2 = le.clone();
    v2[4] = 2;
    let e = JitDump::parse(&v2).unwrap_err().to_string();
    assert!(e.contains("version 2"), "{e}");
}

#[test]
fn a_file_cut_short_keeps_the_records_before_the_cut_and_says_where() {
    let dump = every_kind(Endianness::Little);
    let bytes = dump.encode().unwrap();
    // The code load starts after the header (40), the debug info and unwinding records.
    let load_at = 40 + 16 + 16 + 2 * 16 + 10 + 2 + 16 + 24 + 16;
    assert_eq!(
        u32::from_le_bytes(bytes[load_at..load_at + 4].try_into().unwrap()),
        0,
        "the code load's id"
    );
    for cut in [load_at + 2, load_at + 20, load_at + 50] {
        let (partial, err) = JitDump::parse_partial(&bytes[..cut]).unwrap();
        assert_eq!(partial.records, dump.records[..2]);
        let msg = err.expect("a cut is reported").to_string();
        assert!(msg.contains("record #2"), "{cut}: {msg}");
        if cut > load_at + 4 {
            assert!(msg.contains("CODE_LOAD"), "{cut}: {msg}");
        }
        assert!(JitDump::parse(&bytes[..cut]).is_err());
    }
    // A header cut short is no file at all.
    assert!(JitDump::parse_partial(&bytes[..20]).is_err());
}

#[test]
fn a_record_whose_size_is_smaller_than_its_prefix_stops_the_walk() {
    let mut bytes = every_kind(Endianness::Little).encode().unwrap();
    // The first record's total_size (after the 40-byte header): 8, inside its prefix.
    bytes[44..48].copy_from_slice(&8u32.to_le_bytes());
    let (partial, err) = JitDump::parse_partial(&bytes).unwrap();
    assert!(partial.records.is_empty());
    let msg = err.unwrap().to_string();
    assert!(
        msg.contains("record #0") && msg.contains("CODE_DEBUG_INFO"),
        "{msg}"
    );
}
