//! Unit tests of the runtime mechanics (generated code is tested in perfdata/tests/).

use super::*;

type LE = LittleEndian;
type BE = BigEndian;

#[test]
fn reads_in_either_byte_order() {
    let b = [1, 2, 3, 4, 5, 6, 7, 8];
    assert_eq!(Reader::<LE>::new(&b, 0).u32().unwrap(), 0x0403_0201);
    assert_eq!(Reader::<BE>::new(&b, 0).u32().unwrap(), 0x0102_0304);
    assert_eq!(
        Reader::<BE>::new(&b, 0).u64().unwrap(),
        0x0102_0304_0506_0708
    );
    let mut r = Reader::<LE>::new(&b, 0);
    assert_eq!(
        (r.u8().unwrap(), r.i8().unwrap(), r.u16().unwrap()),
        (1, 2, 0x0403)
    );
    assert_eq!(r.i16().unwrap(), 0x0605);
    assert_eq!((r.pos(), r.remaining(), r.rest()), (6, 2, &b[6..]));
}

#[test]
fn reading_past_the_end_names_the_absolute_offset() {
    let b = [0u8; 6];
    let mut r = Reader::<LE>::new(&b, 0x100);
    r.u32().unwrap();
    let e = r.u32().unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::UnexpectedEnd {
            needed: 4,
            available: 2
        }
    ));
    assert_eq!(e.offset(), Some(0x104));
    assert_eq!(
        e.to_string(),
        "at byte 0x104: unexpected end of input: needed 4 bytes, 2 available"
    );
    // Nothing was consumed by the failed read.
    assert_eq!(r.remaining(), 2);
    assert!(r.take(u64::MAX).is_err());
}

#[test]
fn sub_readers_are_bounded_and_keep_offsets() {
    let b: Vec<u8> = (0..16).collect();
    let mut r = Reader::<LE>::new(&b, 1000);
    r.skip(2).unwrap();
    let mut s = r.sub(4).unwrap();
    assert_eq!((s.offset(), r.offset()), (1002, 1006));
    assert_eq!(s.rest(), &[2, 3, 4, 5]);
    assert!(s.u8().is_err());
    let t = r.split_trailer(3).unwrap();
    assert_eq!((t.offset(), t.remaining(), r.remaining()), (1013, 3, 7));
    assert!(r.split_trailer(8).is_err());
    // within: the closure must consume the whole region.
    let mut r = Reader::<LE>::new(&b, 0);
    assert_eq!(r.within(2, |r| r.u16()).unwrap(), 0x0100);
    let e = r.within(4, |r| r.u16()).unwrap_err();
    assert!(e.to_string().contains("2 more bytes"), "{e}");
}

#[test]
fn limit_to_bounds_from_the_structure_start() {
    let b = [0u8; 32];
    let mut r = Reader::<LE>::new(&b, 10);
    let start = r.offset();
    r.u64().unwrap();
    let inner = r.limit_to(start, 20).unwrap();
    assert_eq!(
        (inner.offset(), inner.remaining(), r.offset()),
        (18, 12, 30)
    );
    // A size smaller than what was already read.
    let mut r = Reader::<LE>::new(&b, 0);
    r.u64().unwrap();
    let e = r.limit_to(0, 4).unwrap_err();
    let ErrorKind::Invalid { expected, found } = e.kind() else {
        panic!("{e}")
    };
    assert_eq!(
        (expected.as_str(), found.as_str()),
        ("a size of at least 8 bytes", "4")
    );
    assert!(r.limit_to(0, 100).is_err());
}

#[test]
fn counts_are_checked_before_allocating() {
    let b = [0u8; 100];
    let mut r = Reader::<LE>::new(&b, 0);
    assert_eq!(r.check_count(12, 8).unwrap(), 12);
    let e = r.check_count(1 << 40, 8).unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::TooLarge {
            value: 0x100_0000_0000,
            limit: 12,
            ..
        }
    ));
    // Zero-size elements count as one byte.
    assert!(r.check_count(101, 0).is_err());
    let e = r.read_count(1 << 40, 0, |r| r.u8()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::TooLarge { .. }));
    assert!(Array::<u64>::decode(&mut r, 13).is_err());
    assert_eq!(Array::<u64>::decode(&mut r, 12).unwrap().len(), 12);
}

#[test]
fn read_to_end_cannot_spin() {
    let b = [1u8, 2, 3];
    let mut r = Reader::<LE>::new(&b, 0);
    let e = r.read_to_end(|_| Ok(())).unwrap_err();
    assert_eq!(e.path_string(), "[0]");
    let mut r = Reader::<LE>::new(&b, 0);
    assert_eq!(r.read_to_end(|r| r.u8()).unwrap(), vec![1, 2, 3]);
    let mut r = Reader::<LE>::new(&b, 0);
    let e = r.read_to_end(|r| r.u16()).unwrap_err();
    assert_eq!((e.path_string(), e.offset()), ("[1]".to_string(), Some(2)));
}

#[test]
fn strings_keep_their_padding() {
    let b = b"abc\0\0\0\0\0xyz";
    let mut r = Reader::<LE>::new(b, 0);
    let s = r.cstr().unwrap();
    assert_eq!((s.text(), s.raw()), (&b"abc"[..], &b"abc\0"[..]));
    let s = r.str_field(4).unwrap();
    assert_eq!((s.text(), s.len()), (&b""[..], 4));
    assert!(r.cstr().is_err(), "no NUL left");
    let p = Str::padded("hello", 8);
    assert_eq!(p.raw(), b"hello\0\0\0");
    assert_eq!(Str::padded("1234567", 8).len(), 8);
    assert_eq!(Str::padded("12345678", 8).len(), 16);
    assert_eq!(Str::cstr("ab").raw(), b"ab\0");
    assert_eq!(format!("{:?}", Str::padded("hi", 8)), "\"hi\" (+6 bytes)");
    assert_eq!(
        serde_json::to_string(&Str::padded("hi", 8)).unwrap(),
        "\"hi\""
    );
}

#[test]
fn tails_recognise_canonical_padding() {
    let b = [7u8, 0, 0, 0, 1, 0, 0, 0];
    let tail = |n: usize, pad: u64| {
        let mut r = Reader::<LE>::new(&b[..n], 0);
        r.u8().unwrap();
        r.tail(0, pad)
    };
    assert_eq!(tail(4, 4), None);
    assert_eq!(tail(1, 1), None);
    assert_eq!(
        tail(1, 4),
        Some(Bytes::from(&[][..])),
        "missing padding is kept as such"
    );
    assert_eq!(tail(8, 4), Some(Bytes::from(&b[1..8])));
    assert_eq!(tail(3, 4), Some(Bytes::from(&b[1..3])));
    let mut w = Writer::<LE>::new();
    w.put_u8(7);
    w.put_tail(&None, 0, 4);
    assert_eq!(w.as_slice(), &[7, 0, 0, 0]);
    w.put_tail(&Some(Bytes::from(vec![9])), 0, 4);
    assert_eq!(w.len(), 5);
}

#[test]
fn writer_patches_and_pads() {
    let mut w = Writer::<BE>::new();
    w.put_u16(0);
    w.put_u32(0);
    w.put_u8(1);
    w.patch_u16(0, 0x0102);
    w.patch_u32(2, 0x0304_0506);
    w.pad_from(0, 8);
    assert_eq!(w.as_slice(), &[1, 2, 3, 4, 5, 6, 1, 0]);
    w.patch_u64(100, 1); // out of range: ignored, no panic
    assert_eq!(w.len(), 8);
    let mut w = Writer::<LE>::new();
    w.put_cstr(&Str::from("ab")).unwrap();
    w.put_cstr(&Str::cstr("cd")).unwrap();
    assert_eq!(w.as_slice(), b"ab\0cd\0");
    let e = w.put_cstr(&Str::from_raw(&b"a\0b"[..])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Inconsistent(_)));
    w.put_i64(-1);
    w.put_f64(1.0);
    assert_eq!(&w.as_slice()[6..14], &[0xff; 8]);
}

#[test]
fn arrays_are_lazy_and_convert_byte_order() {
    let b = [0, 0, 0, 1, 0, 0, 0, 2];
    let mut r = Reader::<BE>::new(&b, 0);
    let a = Array::<u32>::decode(&mut r, 2).unwrap();
    assert_eq!((a.get(0), a.get(1), a.get(2)), (Some(1), Some(2), None));
    assert_eq!(a, Array::from(vec![1u32, 2]));
    assert_eq!(format!("{a:?}"), "[1, 2]");
    let mut w = Writer::<BE>::new();
    a.encode(&mut w);
    assert_eq!(w.as_slice(), &b, "same order: bytes copied");
    let mut w = Writer::<LE>::new();
    a.encode(&mut w);
    assert_eq!(w.as_slice(), &[1, 0, 0, 0, 2, 0, 0, 0]);
    let mut r = Reader::<LE>::new(&b[..7], 0);
    let a = Array::<u16>::decode_rest(&mut r).unwrap();
    assert_eq!(
        (a.len(), r.remaining()),
        (3, 1),
        "a partial element stays in the reader"
    );
    assert_eq!(serde_json::to_string(&a).unwrap(), "[0,256,0]");
    assert!(matches!(a.into_owned(), Array::Owned(v) if v == vec![0, 256, 0]));
}

#[test]
fn bitfields_remap_between_byte_orders() {
    let members = [("a", 0u8, 1u8), ("b", 1, 2), ("c", 3, 61)];
    let v = 1 | (2 << 1) | (5 << 3);
    let be = remap_bitfield(v, 64, &members, false);
    assert_eq!(be, (1 << 63) | (2 << 61) | 5);
    assert_eq!(remap_bitfield(be, 64, &members, true), v);
    assert_eq!(bitfield_from_file(v, 64, &members, LE::default()), v);
    assert_eq!(bitfield_to_file(v, 64, &members, BE::default()), be);
    // Any value survives the trip.
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..100 {
        x = x.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
        assert_eq!(
            remap_bitfield(remap_bitfield(x, 64, &members, false), 64, &members, true),
            x
        );
    }
    assert_eq!(bits_set(0, 3, 2, 0xff), 0b11000);
    assert_eq!(bits_get(0b11000, 3, 2), 3);
}

#[test]
fn errors_read_well() {
    let e = Error::unexpected_end(0x1234, 20, 7)
        .in_field("build_id")
        .in_field("file")
        .with_record(17, "MMAP2");
    assert_eq!(
        e.to_string(),
        "at byte 0x1234 (record #17, MMAP2), field file.build_id: unexpected end of input: needed 20 bytes, 7 available"
    );
    let e = Error::invalid(None, "20 bytes", "7")
        .in_index(3)
        .in_field("nodes")
        .with_feature("NUMA_TOPOLOGY");
    assert_eq!(
        e.to_string(),
        "(feature NUMA_TOPOLOGY), field nodes[3]: expected 20 bytes, found 7"
    );
    assert_eq!(e.feature(), Some("NUMA_TOPOLOGY"));
    assert_eq!(
        Error::inconsistent("x").to_string(),
        "inconsistent value: x"
    );
    assert_eq!(
        Error::other("bad").or_offset(5).shift_offset(10).offset(),
        Some(15)
    );
    let io: Error = std::io::Error::other("disk").into();
    assert!(std::error::Error::source(&io).is_some());
    assert_eq!(std::mem::size_of::<Result<u64>>(), 16, "errors are boxed");
    let r: Result<u8> = Err(Error::other("e"));
    assert_eq!(r.field("f").index(2).unwrap_err().path_string(), "[2].f");
}

#[test]
fn expression_helpers_do_not_panic() {
    assert!(sub(1, 2).is_err());
    assert_eq!(sub(5, 2).unwrap(), 3);
    assert!(div(1, 0).is_err());
    assert_eq!(
        (align(9, 8), align(8, 8), align(3, 0), align(u64::MAX, 8)),
        (16, 8, 3, u64::MAX)
    );
    assert!(fit::<u8>(256).is_err());
    assert_eq!(fit::<u16>(256).unwrap(), 256);
    assert_eq!(saturate_u32(1 << 40), u32::MAX);
    assert!(check_len(3, 4, "elements", "popcount(mask)").is_err());
    assert!(check_presence(true, false, "c").is_err());
    assert!(check_computed(2, 16, "sizeof(self)").is_err());
    assert_eq!(
        check_len(3, 4, "elements", "popcount(mask)")
            .unwrap_err()
            .to_string(),
        "inconsistent value: 3 elements but popcount(mask) = 4"
    );
}

#[test]
fn bytes_debug_and_serialize() {
    let b = Bytes::from(vec![0xde, 0xad]);
    assert_eq!(format!("{b:?}"), "Bytes(2 bytes: dead)");
    assert_eq!(serde_json::to_string(&b).unwrap(), "\"dead\"");
    let long = Bytes::from(vec![0u8; 40]);
    assert!(format!("{long:?}").ends_with("…)"));
    let p = Payload::Pending(12);
    assert_eq!((p.len(), p.bytes()), (12, None));
    assert_eq!(Payload::from(vec![1u8, 2]).bytes(), Some(&[1u8, 2][..]));
}

#[test]
fn hex_strings() {
    for (v, s) in [
        (0u64, "0x0"),
        (0xa, "0xa"),
        (0x10, "0x10"),
        (0x7fb9c3104158, "0x7fb9c3104158"),
        (u64::MAX, "0xffffffffffffffff"),
        (1 << 63, "0x8000000000000000"),
    ] {
        assert_eq!(
            serde_json::to_string(&super::Hex(&v)).unwrap(),
            format!("\"{s}\"")
        );
    }
    assert_eq!(
        serde_json::to_string(&super::Signed(&u32::MAX)).unwrap(),
        "-1"
    );
    assert_eq!(serde_json::to_string(&super::Signed(&7u32)).unwrap(), "7");
}

#[test]
fn flag_sets_name_bits_ranges_and_unknown_bits() {
    const T: &[super::FlagName] = &[
        super::FlagName {
            name: "CPUMODE",
            lo: 0,
            hi: 2,
        },
        super::FlagName {
            name: "EXACT",
            lo: 14,
            hi: 14,
        },
    ];
    let mut out = Vec::new();
    super::serialize_flags(
        &mut serde_json::Serializer::new(&mut out),
        0x4002 | 1 << 20,
        T,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"raw":"0x104002","names":["CPUMODE=2","EXACT","0x100000"]}"#
    );
}

#[test]
fn splits_put_the_high_part_first_in_either_byte_order() {
    // simpleperf's record size 0x0001_0010 over the halves of perf_event_header: high
    // half where perf has `misc`, low half where perf has `size`.
    let le = [0x01, 0x00, 0x10, 0x00];
    let be = [0x00, 0x01, 0x00, 0x10];
    assert_eq!(Reader::<LE>::new(&le, 0).split(2, 2).unwrap(), 0x0001_0010);
    assert_eq!(Reader::<BE>::new(&be, 0).split(2, 2).unwrap(), 0x0001_0010);
    let mut w = Writer::<LE>::new();
    w.put_split(2, 2, 0x0001_0010);
    assert_eq!(w.as_slice(), le);
    let mut w = Writer::<BE>::new();
    w.put_split(2, 2, 0x0001_0010);
    assert_eq!(w.as_slice(), be);
    // Uneven and wide parts; a cut part names its offset.
    let mut w = Writer::<LE>::new();
    w.put_split(1, 1, 0xabcd);
    w.put_split(4, 4, 0x0123_4567_89ab_cdef);
    let mut r = Reader::<LE>::new(w.as_slice(), 0);
    assert_eq!(r.split(1, 1).unwrap(), 0xabcd);
    assert_eq!(r.split(4, 4).unwrap(), 0x0123_4567_89ab_cdef);
    let err = Reader::<LE>::new(&le[..3], 0x40).split(2, 2).unwrap_err();
    assert!(err.to_string().contains("0x42"), "{err}");
}
