//! Behaviour of generated code: the test spec (codegen/tests/test_spec.pds), generated into
//! fixtures_gen/test_spec.rs, decoded and encoded in both byte orders.

#[allow(dead_code)]
#[path = "../fixtures_gen/test_spec.rs"]
mod test_spec;

use perfdata::rt::{
    Array, BigEndian, Bytes, ErrorKind, LittleEndian, Payload, Reader, StaticEndian, Str, Writer,
};
use test_spec::*;

type LE = LittleEndian;
type BE = BigEndian;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Bytes in byte order `E`, built field by field.
struct Buf<E: StaticEndian>(Writer<E>);

impl<E: StaticEndian> Buf<E> {
    fn new() -> Self {
        Buf(Writer::new())
    }
    fn u8(mut self, v: u8) -> Self {
        self.0.put_u8(v);
        self
    }
    fn u16(mut self, v: u16) -> Self {
        self.0.put_u16(v);
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.0.put_u32(v);
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.put_u64(v);
        self
    }
    fn bytes(mut self, b: &[u8]) -> Self {
        self.0.put_bytes(b);
        self
    }
    fn done(self) -> Vec<u8> {
        self.0.into_vec()
    }
}

fn le() -> Buf<LE> {
    Buf::new()
}

fn decode<'a, E: StaticEndian>(ty: RecordType, bytes: &'a [u8], ctx: &Ctx) -> RecordBody<'a> {
    let mut r = Reader::<E>::new(bytes, 0);
    let body = RecordBody::decode(ty, &mut r, ctx).unwrap_or_else(|e| panic!("decode {ty}: {e}"));
    assert_eq!(r.remaining(), 0, "a record body is consumed entirely");
    body
}

fn try_decode<'a, E: StaticEndian>(
    ty: RecordType,
    bytes: &'a [u8],
    ctx: &Ctx,
) -> perfdata::rt::Result<RecordBody<'a>> {
    RecordBody::decode(ty, &mut Reader::<E>::new(bytes, 0x1000), ctx)
}

fn encode<E: StaticEndian>(body: &RecordBody<'_>, ctx: &Ctx) -> Vec<u8> {
    let mut w = Writer::<E>::new();
    body.encode(&mut w, ctx)
        .unwrap_or_else(|e| panic!("encode: {e}"));
    w.into_vec()
}

fn encode_err<E: StaticEndian>(body: &RecordBody<'_>, ctx: &Ctx) -> perfdata::rt::Error {
    let mut w = Writer::<E>::new();
    match body.encode(&mut w, ctx) {
        Ok(()) => panic!("encoding {body:?} should fail"),
        Err(e) => e,
    }
}

/// Decodes little-endian `bytes`, checks that encoding gives them back, that the value
/// survives a trip through big-endian bytes, and that every truncation is an error.
fn round_trip<'a>(ty: RecordType, bytes: &'a [u8], ctx: &Ctx) -> RecordBody<'a> {
    let body = decode::<LE>(ty, bytes, ctx);
    assert_eq!(
        encode::<LE>(&body, ctx),
        bytes,
        "LE decode → encode is the identity"
    );
    let be = encode::<BE>(&body, ctx);
    assert_eq!(be.len(), bytes.len());
    let from_be = decode::<BE>(ty, &be, ctx).into_owned();
    assert_eq!(
        from_be,
        body.clone().into_owned(),
        "the value survives big-endian bytes"
    );
    assert_eq!(
        encode::<LE>(&from_be, ctx),
        bytes,
        "BE → LE gives the original bytes"
    );
    assert_eq!(
        encode::<BE>(&from_be, ctx),
        be,
        "BE decode → encode is the identity"
    );
    body
}

fn inconsistent(e: &perfdata::rt::Error) -> String {
    match e.kind() {
        ErrorKind::Inconsistent(m) => m.clone(),
        other => panic!("expected Inconsistent, got {other:?} ({e})"),
    }
}

fn ctx_bits(bits: Bits) -> Ctx {
    Ctx {
        bits,
        ..Ctx::default()
    }
}

/// A Sample body for `bits = IP | TID | REGS | RAW` and `mask = 0b101`.
fn sample_bytes() -> Vec<u8> {
    le().u64(0x1111) // ip
        .u32(10) // pid
        .u32(11) // tid
        .u64(2) // nr
        .u64(0xa)
        .u64(0xb) // ips
        .u16(1) // nr_entries
        .u64(0x100)
        .u64(0x200)
        .u64(0b1001) // disabled | precise_ip = 2
        .u32(2) // entry
        .u32(77) // counters
        .u64(2) // regs.abi
        .u64(5)
        .u64(6) // regs
        .u32(3)
        .bytes(b"xyz") // raw
        .u32(2) // names_nr
        .u32(3)
        .bytes(b"ab\0")
        .u32(0) // names
        .u64(0x2222) // weight
        .done()
}

fn sample_ctx() -> Ctx {
    Ctx {
        bits: Bits::IP | Bits::TID | Bits::REGS | Bits::RAW,
        mask: 0b101,
        ..Ctx::default()
    }
}

// ---------------------------------------------------------------------------------------
// Decoding and round trips
// ---------------------------------------------------------------------------------------

#[test]
fn sample_decodes_every_field_and_round_trips() {
    let bytes = sample_bytes();
    let ctx = sample_ctx();
    let body = round_trip(RecordType::SAMPLE, &bytes, &ctx);
    let RecordBody::Sample(s) = body else {
        panic!("not a sample: {body:?}")
    };
    assert_eq!(s.ip, Some(0x1111));
    assert_eq!((s.pid, s.tid), (Some(10), Some(11)));
    assert_eq!(s.ips.to_vec(), vec![0xa, 0xb]);
    assert!(
        matches!(s.ips, Array::Borrowed { .. }),
        "u64 arrays are zero-copy"
    );
    assert!(
        matches!(s.entries, Array::Borrowed { .. }),
        "arrays of fixed structs are zero-copy"
    );
    let e = s.entries.get(0).unwrap();
    assert_eq!((e.from, e.to, e.kind), (0x100, 0x200, Kind::B));
    assert!(e.attr_flags.disabled() && !e.attr_flags.inherit());
    assert_eq!(e.attr_flags.precise_ip(), 2);
    assert_eq!(s.counters.to_vec(), vec![77]);
    let regs = s.regs.as_ref().unwrap();
    assert_eq!(regs.abi, 2);
    assert_eq!(regs.regs.as_ref().unwrap().to_vec(), vec![5, 6]);
    assert_eq!(s.raw.as_deref(), Some(&b"xyz"[..]));
    assert_eq!(s.names.len(), 2);
    assert_eq!(s.names[0].text.text(), b"ab");
    assert_eq!(s.names[0].text.raw(), b"ab\0");
    assert!(s.names[1].text.is_empty());
    assert_eq!(s.weight, Some(0x2222));
    assert_eq!(s.tail, None);
}

#[test]
fn absent_fields_take_no_bytes() {
    // bits = TIME only: weight is present (IP || TIME), nothing else optional.
    let bytes = le().u64(0).u16(0).u32(0).u64(9).done();
    let ctx = ctx_bits(Bits::TIME);
    let RecordBody::Sample(s) = round_trip(RecordType::SAMPLE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(
        (s.ip, s.pid, s.regs.is_none(), s.raw),
        (None, None, true, None)
    );
    assert_eq!(s.weight, Some(9));
}

#[test]
fn regs_without_abi_have_no_values() {
    let bytes = le().u64(0).u16(0).u64(0).u32(0).done();
    let ctx = Ctx {
        bits: Bits::REGS,
        mask: u64::MAX,
        ..Ctx::default()
    };
    let RecordBody::Sample(s) = round_trip(RecordType::SAMPLE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(s.regs.unwrap().regs, None);
}

#[test]
fn built_values_encode_with_computed_counts() {
    let ctx = Ctx {
        bits: Bits::RAW | Bits::REGS,
        mask: 0b11,
        ..Ctx::default()
    };
    let s = Sample {
        ips: vec![1u64, 2, 3].into(),
        regs: Some(Regs {
            abi: 2,
            regs: Some(vec![7u64, 8].into()),
        }),
        raw: Some(Bytes::from(vec![9u8; 5])),
        names: vec![Name {
            text: Str::cstr("hi"),
        }],
        ..Sample::default()
    };
    let body = RecordBody::from(s);
    let bytes = encode::<LE>(&body, &ctx);
    let expect = le()
        .u64(3)
        .u64(1)
        .u64(2)
        .u64(3)
        .u16(0)
        .u64(2)
        .u64(7)
        .u64(8)
        .u32(5)
        .bytes(&[9; 5])
        .u32(1)
        .u32(3)
        .bytes(b"hi\0")
        .done();
    assert_eq!(bytes, expect);
    assert_eq!(decode::<LE>(RecordType::SAMPLE, &bytes, &ctx), body);
}

#[test]
fn big_endian_bytes_are_swapped_per_field() {
    let ctx = ctx_bits(Bits::TID);
    let bytes = le().u32(1).u32(2).u64(0).u16(0).u32(0).done();
    let body = decode::<LE>(RecordType::SAMPLE, &bytes, &ctx);
    let be = encode::<BE>(&body, &ctx);
    assert_eq!(&be[..8], &[0, 0, 0, 1, 0, 0, 0, 2]);
}

// ---------------------------------------------------------------------------------------
// Tails and padding
// ---------------------------------------------------------------------------------------

fn versioned(size: u32, rest: &[u8]) -> Vec<u8> {
    le().u32(2).u32(size).u64(1).bytes(rest).done()
}

#[test]
fn bounded_struct_keeps_unknown_bytes_as_tail() {
    // size 32: extra (8) and more (4) are known, 4 bytes are not; then one id.
    let mut bytes = versioned(32, &le().u64(0xe).u32(0xf).u32(0xdead).done());
    bytes.extend(le().u64(0x99).done());
    let ctx = Ctx::default();
    let RecordBody::Attrs(a) = round_trip(RecordType::ATTRS, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(a.attr.extra, Some(0xe));
    assert_eq!(a.attr.more, Some(0xf));
    assert_eq!(a.attr.tail.as_deref(), Some(&0xdead_u32.to_le_bytes()[..]));
    assert_eq!(a.ids.to_vec(), vec![0x99]);
}

#[test]
fn bounded_struct_versions() {
    let ctx = Ctx::default();
    // The oldest version: 16 bytes, no optional field.
    let bytes = versioned(16, &[]);
    let RecordBody::Attrs(a) = round_trip(RecordType::ATTRS, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(
        (a.attr.extra, a.attr.more, a.attr.tail.is_none()),
        (None, None, true)
    );
    // 24 bytes: `extra` (remaining >= 8) but not `more` (size >= 28).
    let bytes = versioned(24, &le().u64(3).done());
    let RecordBody::Attrs(a) = round_trip(RecordType::ATTRS, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!((a.attr.extra, a.attr.more), (Some(3), None));
    // The computed size follows the content.
    let v = Versioned {
        kind: Kind::B,
        extra: Some(1),
        more: Some(2),
        ..Versioned::default()
    };
    let mut w = Writer::<LE>::new();
    v.encode(&mut w, &ctx).unwrap();
    assert_eq!(&w.as_slice()[4..8], &28u32.to_le_bytes());
}

#[test]
fn self_delimiting_entries_cannot_loop() {
    // An entry claiming size 4 (read as 16) in a 12-byte section: an error, not a loop.
    let bytes = le().u32(2).u32(4).u32(1).done();
    let e = FeatureBody::decode(
        FeatureId::ENTRIES,
        &mut Reader::<LE>::new(&bytes, 0),
        &Ctx::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::UnexpectedEnd {
                needed: 8,
                available: 4
            }
        ),
        "{e}"
    );
    assert_eq!(e.path_string(), "entries[0]");
}

#[test]
fn a_computed_value_the_writer_would_change_is_an_error() {
    // size 2 is read as max(2, 16) = 16 bytes, but would be written back as 16.
    let bytes = versioned(2, &[]);
    let e = try_decode::<LE>(RecordType::ATTRS, &bytes, &Ctx::default()).unwrap_err();
    assert_eq!(e.path_string(), "attr.size");
    let ErrorKind::Invalid { expected, found } = e.kind() else {
        panic!("{e}")
    };
    assert_eq!(
        (expected.as_str(), found.as_str()),
        ("sizeof(self) = 16", "2")
    );
}

#[test]
fn canonical_padding_is_recognised() {
    let ctx = Ctx::default();
    // type 1 (Scale): 2 + 8 bytes, padded to 16 with zeros: canonical.
    let bytes = le().u16(1).u64(1.5f64.to_bits()).bytes(&[0; 6]).done();
    let RecordBody::Update(u) = round_trip(RecordType::UPDATE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(u.data, UpdateData::Scale(1.5));
    assert_eq!(u.tail, None);
    // Non-zero padding is kept exactly.
    let bytes = le().u16(1).u64(0).bytes(&[0, 0, 0, 0, 0, 1]).done();
    let RecordBody::Update(u) = round_trip(RecordType::UPDATE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(u.tail.as_deref(), Some(&[0u8, 0, 0, 0, 0, 1][..]));
    // A short body without padding stays short.
    let bytes = le().u16(1).u64(0).done();
    let RecordBody::Update(u) = round_trip(RecordType::UPDATE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(u.tail.as_deref(), Some(&[][..]));
    // A value built without a tail gets the canonical padding.
    let u = Update {
        type_: 2,
        data: UpdateData::Pair(vec![1u32, 2].into()),
        tail: None,
    };
    let bytes = encode::<LE>(&RecordBody::from(u), &ctx);
    assert_eq!(bytes, le().u16(2).u32(1).u32(2).bytes(&[0; 6]).done());
}

#[test]
fn old_short_body_with_payload_is_kept() {
    let ctx = Ctx::default();
    // Current form: size + 4 bytes of padding.
    let bytes = le().u32(24).u32(0).done();
    let RecordBody::Tracing(t) = round_trip(RecordType::TRACING, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(t.data, Payload::Pending(24));
    assert_eq!(t.tail, None);
    // The old 12-byte record: the body is just `size`.
    let bytes = le().u32(24).done();
    let body = round_trip(RecordType::TRACING, &bytes, &ctx);
    assert_eq!(body.payload_len(), 24);
    let RecordBody::Tracing(t) = &body else {
        panic!()
    };
    assert_eq!(t.tail.as_deref(), Some(&[][..]));
}

#[test]
fn payload_is_attached_by_the_container_and_sizes_the_record() {
    let ctx = Ctx::default();
    let bytes = le().u32(3).u32(0).done();
    let mut body = decode::<LE>(RecordType::TRACING, &bytes, &ctx);
    assert_eq!(body.payload_len(), 3);
    let after = [1u8, 2, 3];
    body.set_payload(Bytes::from(&after[..]));
    assert_eq!(body.payload_len(), 3);
    let RecordBody::Tracing(t) = &body else {
        panic!()
    };
    assert_eq!(t.data.bytes(), Some(&after[..]));
    // A new payload: `size` is computed from it.
    let t = Tracing {
        data: Payload::from(vec![0u8; 40]),
        tail: None,
    };
    assert_eq!(
        encode::<LE>(&RecordBody::from(t), &ctx),
        le().u32(40).u32(0).done()
    );
    // Records without a payload.
    assert_eq!(
        decode::<LE>(
            RecordType::SAMPLE,
            &le().u64(0).u16(0).u32(0).done(),
            &Ctx::default()
        )
        .payload_len(),
        0
    );
}

#[test]
fn plain_struct_padding_must_be_zero() {
    let ctx = Ctx {
        mask: 0,
        ..Ctx::default()
    };
    let sized = |pad: u8| {
        le().u32(8)
            .u8(1)
            .u16(2)
            .bytes(&[0, 0, 0, 0, pad])
            .u32(8)
            .u64(0)
            .done()
    };
    let bytes = sized(0);
    let RecordBody::Sized(s) = round_trip(RecordType::SIZED, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!((s.body.a, s.body.b), (1, 2));
    let e = try_decode::<LE>(RecordType::SIZED, &sized(7), &ctx).unwrap_err();
    assert_eq!(e.path_string(), "body");
    assert!(e.to_string().contains("zero padding"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Trailers, switches, strings
// ---------------------------------------------------------------------------------------

fn map_ctx(build_id: bool) -> Ctx {
    Ctx {
        bits: Bits::TID | Bits::TIME,
        with_trailer: true,
        misc: if build_id {
            Misc::BUILD_ID
        } else {
            Misc::EMPTY
        },
        ..Ctx::default()
    }
}

#[test]
fn trailer_is_read_from_the_end() {
    let ctx = map_ctx(false);
    let trailer = le().u32(5).u32(6).u64(0x7777).done();
    // filename "a.out" + NUL, then 2 bytes the spec does not know, then the trailer.
    let bytes = le()
        .u32(42)
        .u32(1)
        .u32(2)
        .bytes(b"a.out\0")
        .bytes(&[0, 0])
        .bytes(&trailer)
        .done();
    let RecordBody::Map(m) = round_trip(RecordType::MAP, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(m.pid, 42);
    assert_eq!(m.file, FileId::Inode(Inode { maj: 1, min: 2 }));
    assert_eq!(m.filename.to_str_lossy(), "a.out");
    assert_eq!(m.filename.raw(), b"a.out\0");
    assert_eq!(m.tail.as_deref(), Some(&[0u8, 0][..]));
    let t = m.trailer.unwrap();
    assert_eq!((t.pid, t.tid, t.time), (Some(5), Some(6), Some(0x7777)));
    assert!(t.cpus.is_empty());
    assert_eq!(Trailer::encoded_size(&ctx), 16);
    // Without the trailer the same bytes are all body (the trailer bytes land in the tail).
    let no = Ctx {
        with_trailer: false,
        ..ctx
    };
    let RecordBody::Map(m) = round_trip(RecordType::MAP, &bytes, &no) else {
        panic!()
    };
    assert_eq!(m.trailer, None);
    assert_eq!(m.tail.as_ref().map(|t| t.len()), Some(18));
    // A trailer with a context-sized array.
    let ctx2 = Ctx {
        nr_cpus: 2,
        bits: Bits::EMPTY,
        ..ctx
    };
    let bytes = le().u32(1).u32(1).u32(2).bytes(b"\0").u16(3).u16(4).done();
    let RecordBody::Map(m) = round_trip(RecordType::MAP, &bytes, &ctx2) else {
        panic!()
    };
    assert_eq!(m.trailer.unwrap().cpus.to_vec(), vec![3, 4]);
}

#[test]
fn trailer_larger_than_the_body_is_an_error() {
    let e = try_decode::<LE>(RecordType::MAP, &[0; 10], &map_ctx(false)).unwrap_err();
    assert_eq!(e.path_string(), "trailer");
    assert_eq!(e.offset(), Some(0x1000));
}

#[test]
fn switch_on_a_flag_selects_the_variant() {
    let ctx = Ctx {
        with_trailer: false,
        ..map_ctx(true)
    };
    let bytes = le()
        .u32(1)
        .u8(3)
        .bytes(b"\x01\x02\x03")
        .bytes(b"x\0")
        .done();
    let RecordBody::Map(m) = round_trip(RecordType::MAP, &bytes, &ctx) else {
        panic!()
    };
    let FileId::BuildId(b) = &m.file else {
        panic!("{:?}", m.file)
    };
    assert_eq!(&b.id[..], &[1, 2, 3]);
}

#[test]
fn switch_on_an_integer_with_a_default_arm() {
    let ctx = Ctx::default();
    let bytes = le().u16(0).bytes(b"unit\0\0").done();
    let RecordBody::Update(u) = round_trip(RecordType::UPDATE, &bytes, &ctx) else {
        panic!()
    };
    let UpdateData::Text(t) = &u.data else {
        panic!()
    };
    assert_eq!((t.to_str_lossy().as_ref(), t.len()), ("unit", 6));
    let bytes = le().u16(9).bytes(&[1, 2, 3, 4, 5, 6]).done();
    let RecordBody::Update(u) = round_trip(RecordType::UPDATE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(
        u.data,
        UpdateData::Other(Bytes::from(&[1u8, 2, 3, 4, 5, 6][..]))
    );
}

fn scalars_bytes(tag: u8) -> Vec<u8> {
    le().u8(0xff)
        .u16(0xfffe)
        .u32(0xffff_fffd)
        .u64(u64::MAX - 3)
        .u64(2.5f64.to_bits())
        .u8(0xa3) // nibbles
        .u64(-32i64 as u64)
        .u64(-128i64 as u64) // marks
        .u64(65)
        .u64(1)
        .u64(2) // bitmap: 65 bits = 2 words
        .u8(tag)
        .u16(0x1234) // choice
        .u8(6) // small
        .bytes(&[1, 2, 3, 4, 5, 6, 7]) // aligned: align(6, 4) - 1 = 7
        .done()
}

#[test]
fn scalars_of_every_kind() {
    let ctx = Ctx {
        nr_cpus: 1,
        mask: 1,
        ..Ctx::default()
    };
    let bytes = scalars_bytes(2);
    let RecordBody::Scalars(s) = round_trip(RecordType::SCALARS, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!((s.s.a, s.s.b, s.s.c, s.s.d, s.s.e), (-1, -2, -3, -4, 2.5));
    assert_eq!((s.nib.lo(), s.nib.hi()), (3, 0xa));
    assert_eq!(s.marks.to_vec(), vec![Marker::HV, Marker::KERNEL]);
    assert_eq!(s.bitmap.words.len(), 2);
    assert_eq!(s.choice.value, ChoiceValue::Two(0x1234));
    assert_eq!(s.aligned.as_deref(), Some(&[1u8, 2, 3, 4, 5, 6, 7][..]));
}

#[test]
fn switch_without_a_matching_arm_is_an_error() {
    let ctx = Ctx::default();
    let e = try_decode::<LE>(RecordType::SCALARS, &scalars_bytes(3), &ctx).unwrap_err();
    assert_eq!(e.path_string(), "choice.value");
    let ErrorKind::Invalid { expected, found } = e.kind() else {
        panic!("{e}")
    };
    assert_eq!(found, "3");
    assert!(expected.contains("1, 2"), "{expected}");
}

#[test]
fn remaining_decides_versioned_fields() {
    let ctx = Ctx::default();
    // Old: shift only, then a name region of min(remaining, 16).
    let bytes = le().u64(1).bytes(b"ab\0\0").done();
    let RecordBody::Conv(c) = round_trip(RecordType::CONV, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!((c.cycles, c.name.raw()), (None, &b"ab\0\0"[..]));
    // New: cycles, a 16-byte name region and 3 more bytes kept as the tail.
    let bytes = le()
        .u64(1)
        .u64(2)
        .bytes(&[b'n'; 16])
        .bytes(&[9, 9, 9])
        .done();
    let RecordBody::Conv(c) = round_trip(RecordType::CONV, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(c.cycles, Some(2));
    assert_eq!(c.name.len(), 16);
    assert_eq!(c.tail.as_deref(), Some(&[9u8, 9, 9][..]));
}

#[test]
fn within_checks_the_region() {
    let ctx = Ctx {
        mask: 0b11,
        ..Ctx::default()
    };
    // regs within 24 bytes: abi + 2 regs = 24.
    let bytes = le()
        .u32(8)
        .u8(1)
        .u16(2)
        .bytes(&[0; 5])
        .u32(24)
        .u64(1)
        .u64(2)
        .u64(3)
        .u32(1)
        .bytes(b"\0")
        .done();
    let RecordBody::Sized(s) = round_trip(RecordType::SIZED, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(s.regs.regs.unwrap().to_vec(), vec![2, 3]);
    assert_eq!(s.names.len(), 1);
    // 32 bytes for 24 bytes of content: left-over bytes are an error.
    let bytes = le()
        .u32(8)
        .u8(1)
        .u16(2)
        .bytes(&[0; 5])
        .u32(32)
        .u64(1)
        .u64(2)
        .u64(3)
        .u64(0)
        .done();
    let e = try_decode::<LE>(RecordType::SIZED, &bytes, &ctx).unwrap_err();
    assert_eq!(e.path_string(), "regs");
    assert!(e.to_string().contains("8 more bytes"), "{e}");
}

#[test]
fn feature_payload_by_id() {
    let ctx = Ctx::default();
    let bytes = le().u64(3).u32(8).bytes(b"host\0\0\0\0").done();
    let RecordBody::HeaderFeature(h) = round_trip(RecordType::HEADER_FEATURE, &bytes, &ctx) else {
        panic!()
    };
    let FeatureBody::Hostname(n) = &*h.data else {
        panic!("{:?}", h.data)
    };
    assert_eq!(n.value.text.to_str_lossy(), "host");
    assert_eq!(h.data.feature_id(), Some(FeatureId::HOSTNAME));
    // An unknown feature keeps its bytes.
    let bytes = le().u64(99).u32(1).u32(2).done();
    let RecordBody::HeaderFeature(h) = round_trip(RecordType::HEADER_FEATURE, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!(*h.data, FeatureBody::Unknown(Bytes::from(&bytes[8..])));
    // Features on their own.
    let nr = le().u32(8).u32(4).done();
    let f = FeatureBody::decode(FeatureId::NR_CPUS, &mut Reader::<LE>::new(&nr, 0), &ctx).unwrap();
    assert_eq!(
        f,
        FeatureBody::NrCpus(NrCpus {
            avail: 8,
            online: 4,
            tail: None
        })
    );
    let mut w = Writer::<BE>::new();
    f.encode(&mut w, &ctx).unwrap();
    assert_eq!(w.into_vec(), Buf::<BE>::new().u32(8).u32(4).done());
}

#[test]
fn entries_to_the_end() {
    let ctx = Ctx::default();
    let mut bytes = versioned(16, &[]);
    bytes.extend(versioned(24, &le().u64(5).done()));
    let f =
        FeatureBody::decode(FeatureId::ENTRIES, &mut Reader::<LE>::new(&bytes, 0), &ctx).unwrap();
    let FeatureBody::Entries(e) = &f else {
        panic!()
    };
    assert_eq!(e.entries.len(), 2);
    assert_eq!(e.entries[1].extra, Some(5));
    let mut w = Writer::<LE>::new();
    f.encode(&mut w, &ctx).unwrap();
    assert_eq!(w.into_vec(), bytes);
}

#[test]
fn unknown_record_types_keep_their_bytes() {
    let bytes = [1u8, 2, 3, 4, 5];
    let body = round_trip(RecordType(1234), &bytes, &Ctx::default());
    assert_eq!(body, RecordBody::Unknown(Bytes::from(&bytes[..])));
    assert_eq!(body.record_type(), None);
    assert_eq!(format!("{:?}", RecordType(1234)), "RecordType(1234)");
    assert_eq!(RecordType::MAP.to_string(), "MAP");
    assert_eq!(Sample::TYPE, RecordType::SAMPLE);
    assert_eq!(NrCpus::ID, FeatureId::NR_CPUS);
}

#[test]
fn into_owned_outlives_the_input() {
    let owned = {
        let bytes = sample_bytes();
        let body = decode::<LE>(RecordType::SAMPLE, &bytes, &sample_ctx());
        body.into_owned()
    };
    let bytes = sample_bytes();
    assert_eq!(
        owned,
        decode::<LE>(RecordType::SAMPLE, &bytes, &sample_ctx())
    );
    let RecordBody::Sample(s) = &owned else {
        panic!()
    };
    assert!(matches!(s.ips, Array::Owned(_)));
}

// ---------------------------------------------------------------------------------------
// Bit-fields, flags, enums
// ---------------------------------------------------------------------------------------

#[test]
fn bitfield_members_move_on_big_endian() {
    let mut f = AttrFlags::default();
    f.set_disabled(true);
    f.set_precise_ip(2);
    f.set_type(0xf);
    assert_eq!(f.0, 1 | (2 << 2) | (0xf << 4));
    // On a big-endian producer `disabled` is the MSB, precise_ip bits 60-61, type 56-59.
    let be = f.to_file(BE::default());
    assert_eq!(be, (1 << 63) | (2 << 60) | (0xf << 56));
    assert_eq!(AttrFlags::from_file(be, BE::default()), f);
    assert_eq!(f.to_file(LE::default()), f.0);
    // In a record: the BE bytes of the word start with 0xa f...
    let v = Versioned {
        kind: Kind::A,
        attr_flags: f,
        ..Versioned::default()
    };
    let mut w = Writer::<BE>::new();
    v.encode(&mut w, &Ctx::default()).unwrap();
    assert_eq!(&w.as_slice()[8..16], &[0xaf, 0, 0, 0, 0, 0, 0, 0]);
    let back = Versioned::decode(&mut Reader::<BE>::new(w.as_slice(), 0), &Ctx::default()).unwrap();
    assert!(back.attr_flags.disabled());
    assert_eq!(back.attr_flags.precise_ip(), 2);
    // A narrow word.
    // `lo` (LE bits 0-3) is the high nibble on a big-endian producer.
    let n = Nibbles::from_file(0x3a, BE::default());
    assert_eq!((n.lo(), n.hi()), (0x3, 0xa));
    assert_eq!(n.to_file(BE::default()), 0x3a);
    assert_eq!(
        format!("{f:?}"),
        "AttrFlags { disabled, precise_ip: 2, type: 15 }"
    );
}

#[test]
fn flags_and_enums_are_open() {
    let b = Bits::IP | Bits::TID | Bits(1 << 30);
    assert_eq!(format!("{b:?}"), "IP | TID | 0x40000000");
    assert_eq!(format!("{:?}", Bits::EMPTY), "0x0");
    assert!(b.contains(Bits::TID) && !b.contains(Bits::TIME));
    let mut m = Misc::EXEC;
    m.set_cpumode(5);
    assert_eq!((m.cpumode(), m.0), (5, (1 << 13) | 5));
    assert_eq!(format!("{m:?}"), "CPUMODE=5 | EXEC");
    assert_eq!(format!("{:?} {:?}", Kind::A, Kind(7)), "A Kind(7)");
    assert_eq!((Kind::BIG.name(), Kind(7).name()), (Some("BIG"), None));
    assert_eq!(Marker::KERNEL.0, -128i64 as u64);
    assert_eq!(TEST_MAGIC, 0x32454c4946524550);
}

#[test]
fn serializes_to_json() {
    let bytes = sample_bytes();
    let body = decode::<LE>(RecordType::SAMPLE, &bytes, &sample_ctx());
    let s = serde_json::to_value(&body).unwrap();
    // A record body is the record's own fields (no Rust variant name around them).
    assert!(s.get("Sample").is_none(), "{s}");
    // `@hex`: a string, exact whatever the reader does with numbers.
    assert_eq!(s["ip"], "0x1111");
    assert_eq!(s["ips"], serde_json::json!(["0xa", "0xb"]));
    assert_eq!(s["entries"][0]["kind"], "B");
    assert_eq!(
        s["entries"][0]["attr_flags"],
        serde_json::json!({"disabled": 1, "precise_ip": 2})
    );
    assert_eq!(s["raw"], "78797a");
    // A structure holding one value (its length computed) is that value.
    assert_eq!(s["names"][0], "ab");
    assert!(s.get("tail").is_none(), "absent tails are not serialized");
    assert_eq!(serde_json::to_value(Kind(9)).unwrap(), 9);
    // Flag sets: the raw value and the names of the set bits.
    assert_eq!(
        serde_json::to_value(Bits::TID).unwrap(),
        serde_json::json!({"raw": "0x2", "names": ["TID"]})
    );
    assert_eq!(
        serde_json::to_value(Bits(Bits::IP.0 | Bits::TID.0 | 1 << 50)).unwrap(),
        serde_json::json!({"raw": "0x4000000000003", "names": ["IP", "TID", "0x4000000000000"]})
    );
}

#[test]
fn display_attributes_serialize_exactly() {
    let mut sample = Sample {
        // Above 2^53: a JSON number would be rounded by a double-based reader.
        ip: Some(18446744071937538751),
        pid: Some(u32::MAX),
        ips: vec![Marker::HV.0, 0xffff_ffff_8100_0000, 0x7f00_0000_1234].into(),
        ..Sample::default()
    };
    let v = serde_json::to_value(&sample).unwrap();
    assert_eq!(v["ip"], "0xffffffff96613abf");
    assert_eq!(
        u64::from_str_radix(v["ip"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap(),
        18446744071937538751
    );
    assert_eq!(v["pid"], -1);
    assert_eq!(
        v["ips"],
        serde_json::json!(["HV", "0xffffffff81000000", "0x7f0000001234"])
    );
    // Not marked: printed as it is.
    sample.tid = Some(u32::MAX);
    assert_eq!(serde_json::to_value(&sample).unwrap()["tid"], 4294967295u64);
}

// ---------------------------------------------------------------------------------------
// Encoding errors: a value that contradicts itself
// ---------------------------------------------------------------------------------------

#[test]
fn inconsistent_shared_count() {
    let s = Sample {
        entries: vec![Entry::default(); 2].into(),
        counters: vec![1u32].into(),
        ..Sample::default()
    };
    let e = encode_err::<LE>(&s.into(), &Ctx::default());
    assert_eq!(e.path_string(), "counters");
    assert_eq!(inconsistent(&e), "1 elements but nr_entries = 2");
}

#[test]
fn inconsistent_presence() {
    let s = Sample {
        ip: Some(1),
        ..Sample::default()
    };
    let e = encode_err::<LE>(&s.into(), &Ctx::default());
    assert_eq!(e.path_string(), "ip");
    assert_eq!(
        inconsistent(&e),
        "the field is present but `ctx.bits has IP` is false"
    );
    let e = encode_err::<LE>(&Sample::default().into(), &ctx_bits(Bits::IP));
    assert_eq!(
        inconsistent(&e),
        "the field is absent but `ctx.bits has IP` is true"
    );
    assert_eq!(
        e.to_string(),
        "field ip: inconsistent value: the field is absent but `ctx.bits has IP` is true"
    );
    // The trailer too.
    let m = Map {
        trailer: None,
        ..Map::default()
    };
    let e = encode_err::<LE>(&m.into(), &map_ctx(false));
    assert_eq!(e.path_string(), "trailer");
}

#[test]
fn inconsistent_expression_count() {
    let s = Sample {
        regs: Some(Regs {
            abi: 1,
            regs: Some(vec![1u64, 2, 3].into()),
        }),
        ..Sample::default()
    };
    let ctx = Ctx {
        bits: Bits::REGS,
        mask: 0b1111,
        ..Ctx::default()
    };
    let e = encode_err::<LE>(&s.into(), &ctx);
    assert_eq!(e.path_string(), "regs.regs");
    assert_eq!(inconsistent(&e), "3 elements but popcount(mask) = 4");
}

#[test]
fn inconsistent_switch_variant() {
    let m = Map {
        file: FileId::BuildId(BuildId::default()),
        ..Map::default()
    };
    let e = encode_err::<LE>(&m.into(), &Ctx::default());
    assert_eq!(e.path_string(), "file");
    assert_eq!(
        inconsistent(&e),
        "variant BuildId does not match `ctx.misc has BUILD_ID` = false"
    );
    let u = Update {
        type_: 0,
        data: UpdateData::Scale(1.0),
        tail: None,
    };
    let e = encode_err::<LE>(&u.into(), &Ctx::default());
    assert_eq!(inconsistent(&e), "variant Scale does not match `type` = 0");
    let u = Update {
        type_: 1,
        data: UpdateData::Other(Bytes::default()),
        tail: None,
    };
    assert_eq!(
        inconsistent(&encode_err::<LE>(&u.into(), &Ctx::default())),
        "variant Other does not match `type` = 1"
    );
    let h = HeaderFeature {
        feat_id: 3,
        data: Box::new(FeatureBody::NrCpus(NrCpus::default())),
        tail: None,
    };
    let e = encode_err::<LE>(&h.into(), &Ctx::default());
    assert_eq!(e.path_string(), "data");
    assert_eq!(
        inconsistent(&e),
        "variant NR_CPUS does not match `feat_id` = 3"
    );
}

#[test]
fn inconsistent_within_and_fixed_lengths() {
    let s = Sized {
        fixed_len: 16,
        regs: Regs { abi: 0, regs: None },
        ..Sized::default()
    };
    let e = encode_err::<LE>(&s.into(), &Ctx::default());
    assert_eq!(e.path_string(), "regs");
    assert_eq!(inconsistent(&e), "8 bytes but fixed_len = 16");
    let s = Scalars {
        marks: vec![Marker::HV].into(),
        ..Scalars::default()
    };
    assert_eq!(
        inconsistent(&encode_err::<LE>(&s.into(), &Ctx::default())),
        "1 elements but 2 = 2"
    );
}

#[test]
fn inconsistent_computed_value_too_large() {
    let m = Map {
        file: FileId::BuildId(BuildId {
            id: Bytes::from(vec![0u8; 300]),
        }),
        ..Map::default()
    };
    let ctx = Ctx {
        misc: Misc::BUILD_ID,
        ..Ctx::default()
    };
    let e = encode_err::<LE>(&m.into(), &ctx);
    assert_eq!(e.path_string(), "file.size");
    assert!(inconsistent(&e).contains("300 does not fit in u8"), "{e}");
}

#[test]
fn inconsistent_cstr() {
    let m = Map {
        filename: Str::from_raw(&b"a\0b\0"[..]),
        ..Map::default()
    };
    let e = encode_err::<LE>(&m.into(), &Ctx::default());
    assert_eq!(e.path_string(), "filename");
    // Without a NUL, one is added.
    let m = Map {
        filename: Str::from("abc"),
        ..Map::default()
    };
    let bytes = encode::<LE>(&m.into(), &Ctx::default());
    assert!(bytes.ends_with(b"abc\0"));
}

// ---------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let cases: Vec<(RecordType, Vec<u8>, Ctx)> = vec![
        (RecordType::SAMPLE, sample_bytes(), sample_ctx()),
        (
            RecordType::SCALARS,
            scalars_bytes(2),
            Ctx {
                nr_cpus: 1,
                mask: 1,
                ..Ctx::default()
            },
        ),
        (
            RecordType::MAP,
            le().u32(1)
                .u8(3)
                .bytes(b"\x01\x02\x03")
                .bytes(b"x\0")
                .done(),
            map_ctx(true),
        ),
    ];
    for (ty, bytes, ctx) in cases {
        for n in 0..bytes.len() {
            let r = try_decode::<LE>(ty, &bytes[..n], &ctx);
            assert!(r.is_err(), "{ty} truncated to {n} bytes decoded: {r:?}");
            let r = try_decode::<BE>(ty, &bytes[..n], &ctx);
            assert!(
                r.is_err(),
                "{ty} truncated to {n} bytes decoded as BE: {r:?}"
            );
        }
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap deterministic fuzz over every record type and both byte orders.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let types = [9, 10, 11, 12, 13, 14, 15, 16, 80];
    for round in 0..3000 {
        let len = (next() % 96) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if round % 3 == 0 {
                    (next() % 4) as u8
                } else {
                    next() as u8
                }
            })
            .collect();
        let ctx = Ctx {
            bits: Bits(next() & 0x1f),
            with_trailer: next() % 2 == 0,
            misc: Misc(next() as u16),
            nr_cpus: (next() % 4) as u32,
            mask: next(),
            word_size: [4, 8][(next() % 2) as usize],
        };
        for ty in types {
            if let Ok(body) = try_decode::<LE>(RecordType(ty), &bytes, &ctx) {
                // What decodes encodes back to the same bytes.
                assert_eq!(encode::<LE>(&body, &ctx), bytes, "type {ty}, ctx {ctx:?}");
            }
            if let Ok(body) = try_decode::<BE>(RecordType(ty), &bytes, &ctx) {
                assert_eq!(
                    encode::<BE>(&body, &ctx),
                    bytes,
                    "type {ty} BE, ctx {ctx:?}"
                );
            }
        }
    }
}

#[test]
fn huge_counts_are_errors_before_allocation() {
    let ctx = Ctx::default();
    // nr = 2^40 u64s in a 24-byte body.
    let bytes = le().u64(1 << 40).u64(0).u64(0).done();
    let e = try_decode::<LE>(RecordType::SAMPLE, &bytes, &ctx).unwrap_err();
    assert_eq!(e.path_string(), "ips");
    assert!(
        matches!(
            e.kind(),
            ErrorKind::TooLarge {
                value: 0x100_0000_0000,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.offset(), Some(0x1008));
    // A count of non-fixed elements (Vec): checked against the bytes left first.
    let bytes = le().u64(0).u16(0).u32(u32::MAX).u32(0).done();
    let e = try_decode::<LE>(RecordType::SAMPLE, &bytes, &ctx).unwrap_err();
    assert_eq!(e.path_string(), "names");
    assert!(
        matches!(e.kind(), ErrorKind::TooLarge { limit: 1, .. }),
        "{e}"
    );
    // A bitmap of 2^64 - 1 bits: (nbits + 63) saturates instead of overflowing.
    let mut bytes = scalars_bytes(1);
    bytes[39..47].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = try_decode::<LE>(RecordType::SCALARS, &bytes, &ctx).unwrap_err();
    assert_eq!(e.path_string(), "bitmap.words");
}

#[test]
fn errors_name_offset_and_field_path() {
    // One name whose text is cut: it starts at 0x1000 + 18.
    let bytes = le().u64(0).u16(0).u32(1).u32(3).bytes(b"a").done();
    let e = try_decode::<LE>(RecordType::SAMPLE, &bytes, &Ctx::default()).unwrap_err();
    assert_eq!(e.path_string(), "names[0].text");
    assert_eq!(e.offset(), Some(0x1000 + 18));
    assert!(
        matches!(
            e.kind(),
            ErrorKind::UnexpectedEnd {
                needed: 3,
                available: 1
            }
        ),
        "{e}"
    );
    let e = e.with_record(17, RecordType::SAMPLE);
    assert_eq!(
        e.to_string(),
        "at byte 0x1012 (record #17, SAMPLE), field names[0].text: unexpected end of input: needed 3 bytes, 1 available"
    );
    assert_eq!(e.record(), Some((17, "SAMPLE")));
    // In a nested struct of a switch.
    let ctx = Ctx {
        with_trailer: false,
        ..map_ctx(true)
    };
    let e = try_decode::<LE>(
        RecordType::MAP,
        &le().u32(1).u8(5).bytes(b"ab").done(),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(e.path_string(), "file.id");
    assert_eq!(e.offset(), Some(0x1005));
}

#[test]
fn big_endian_if_follows_the_data_not_the_file() {
    let ctx = Ctx::default();
    // order = 1: the body is big-endian inside a little-endian record.
    let bytes = le()
        .u8(1)
        .bytes(&0x0102_0304u32.to_be_bytes())
        .bytes(&0x0506u16.to_be_bytes())
        .done();
    let RecordBody::Own(o) = round_trip(RecordType::OWN, &bytes, &ctx) else {
        panic!()
    };
    assert_eq!((o.body.a, o.body.b), (0x0102_0304, 0x0506));
    // In a big-endian file the body keeps its own (big-endian) order: same bytes.
    assert_eq!(encode::<BE>(&RecordBody::Own(o.clone()), &ctx), bytes);
    // order = 0: little-endian, also inside a big-endian file.
    let bytes = le().u8(0).u32(0x0102_0304).u16(0x0506).done();
    let o = decode::<BE>(RecordType::OWN, &bytes, &ctx);
    let RecordBody::Own(o) = o else { panic!() };
    assert_eq!((o.body.a, o.body.b), (0x0102_0304, 0x0506));
}

// ---------------------------------------------------------------------------------------
// word[size]: words whose size is known only at run time
// ---------------------------------------------------------------------------------------

fn word_ctx(word_size: u8) -> Ctx {
    Ctx {
        word_size,
        ..Ctx::default()
    }
}

/// `Words` bytes with `ws`-byte words in byte order `E`: count 2, pcs [a, b], extra, fixed.
fn words_bytes<E: StaticEndian>(ws: u8) -> Vec<u8> {
    let put = |b: Buf<E>, v: u64| if ws == 4 { b.u32(v as u32) } else { b.u64(v) };
    let b = Buf::<E>::new();
    let b = put(b, 2);
    let b = put(b, 2);
    let b = put(b, 0x4000_1234);
    let b = put(b, 0x4000_5678);
    let b = put(b, 7);
    b.u64(0x1122_3344_5566_7788).done()
}

fn words_in<E: StaticEndian>(ws: u8) {
    let ctx = word_ctx(ws);
    let bytes = words_bytes::<E>(ws);
    assert_eq!(bytes.len(), 5 * usize::from(ws) + 8);
    let mut r = Reader::<E>::new(&bytes, 0);
    let w = Words::decode(&mut r, &ctx).unwrap_or_else(|e| panic!("decode: {e}"));
    assert_eq!(r.remaining(), 0);
    assert_eq!(w.count, 2);
    assert_eq!(w.pcs, [0x4000_1234, 0x4000_5678]);
    assert_eq!(w.extra, Some(7));
    assert_eq!(w.fixed, 0x1122_3344_5566_7788);
    let mut out = Writer::<E>::new();
    w.encode(&mut out, &ctx)
        .unwrap_or_else(|e| panic!("encode: {e}"));
    assert_eq!(out.into_vec(), bytes, "decode → encode is the identity");
    // Every truncation is an error, never a panic.
    for cut in 0..bytes.len() {
        let mut r = Reader::<E>::new(&bytes[..cut], 0);
        assert!(Words::decode(&mut r, &ctx).is_err(), "cut at {cut}");
    }
}

#[test]
fn words_take_their_size_from_the_context_in_both_orders() {
    words_in::<LE>(4);
    words_in::<LE>(8);
    words_in::<BE>(4);
    words_in::<BE>(8);
    // The same value changes word size and byte order by re-encoding.
    let bytes = words_bytes::<LE>(4);
    let w = Words::decode(&mut Reader::<LE>::new(&bytes, 0), &word_ctx(4)).unwrap();
    let mut out = Writer::<BE>::new();
    w.encode(&mut out, &word_ctx(8)).unwrap();
    assert_eq!(out.into_vec(), words_bytes::<BE>(8));
}

#[test]
fn a_word_size_other_than_4_or_8_is_an_error() {
    let bytes = [0u8; 64];
    let e = Words::decode(&mut Reader::<LE>::new(&bytes, 0x100), &word_ctx(2)).unwrap_err();
    let ErrorKind::Invalid { expected, found } = e.kind() else {
        panic!("expected Invalid, got {e}");
    };
    assert_eq!(expected, "a word size of 4 or 8 bytes");
    assert_eq!(found, "2");
    assert_eq!(e.offset(), Some(0x100));
    assert_eq!(e.path_string(), "count");
    let w = Words::default();
    let mut out = Writer::<LE>::new();
    assert!(w.encode(&mut out, &word_ctx(0)).is_err());
}

#[test]
fn a_value_too_large_for_a_4_byte_word_is_an_error_not_a_truncation() {
    let w = Words {
        count: 1,
        pcs: vec![0x1_0000_0000],
        extra: None,
        fixed: 0,
    };
    let mut out = Writer::<LE>::new();
    let e = w.encode(&mut out, &word_ctx(4)).unwrap_err();
    assert_eq!(e.path_string(), "pcs[0]");
    assert!(e.to_string().contains("0x100000000"), "{e}");
    let mut out = Writer::<LE>::new();
    w.encode(&mut out, &word_ctx(8)).unwrap();
}

#[test]
fn a_computed_word_is_patched_with_the_structure_size() {
    for ws in [4u8, 8] {
        let v = SizedWords { a: 9, tail: None };
        let mut out = Writer::<BE>::new();
        v.encode(&mut out, &Ctx::default(), u64::from(ws)).unwrap();
        let bytes = out.into_vec();
        assert_eq!(bytes.len(), 2 * usize::from(ws));
        let mut r = Reader::<BE>::new(&bytes, 0);
        assert_eq!(r.word(u64::from(ws)).unwrap(), 2 * u64::from(ws));
        let back = SizedWords::decode(
            &mut Reader::<BE>::new(&bytes, 0),
            &Ctx::default(),
            u64::from(ws),
        )
        .unwrap();
        assert_eq!(back, v);
    }
}
