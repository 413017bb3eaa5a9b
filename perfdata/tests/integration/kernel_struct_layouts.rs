//! An independent check of the spec against the kernel's and perf's own C struct
//! definitions, for every record type and header feature that no file recordable on the
//! project's machine contains.
//!
//! Each test builds the bytes BY HAND from the C definition (cited above the test), once in
//! little-endian and once in big-endian byte order (a C compiler's layout on each), then:
//! decodes the little-endian bytes with the generated code and checks the field VALUES;
//! checks that encoding gives the same bytes back; that encoding as big-endian gives the
//! hand-built big-endian bytes; that decoding those gives the same value, which encodes back
//! to the original little-endian bytes; and that no decoded value keeps unknown bytes (a
//! non-canonical `tail`).
//!
//! Sources (read through the code index; torvalds/linux unless said otherwise):
//! - `include/uapi/linux/perf_event.h`: `enum perf_event_type` record comments (records
//!   1-21), `struct sample_id`, `struct read_format`, `PERF_RECORD_SAMPLE` layout,
//!   `struct perf_branch_entry`, `union perf_mem_data_src`, `union perf_sample_weight`.
//! - `kernel/events/core.c` `perf_output_sample()` (field order of the newest fields:
//!   ... PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX), `perf_output_sample_ustack()`,
//!   `perf_event_text_poke()`; `include/linux/perf_event.h` `perf_sample_save_brstack()`.
//! - `tools/lib/perf/include/perf/event.h` (perf's user records and record structs) and
//!   `schedstat-v15.h`, `-v16.h`, `-v17.h`.
//! - `tools/perf/util/evsel.c` `evsel__parse_sample()`, `evsel__bitfield_swap_branch_flags()`,
//!   `evsel__id_hdr_size()`; `evlist.c` `evlist__id_hdr_size()`.
//! - `tools/perf/util/header.c` (`write_*`/`process_*` of the features),
//!   `tools/perf/util/auxtrace.c` (`auxtrace_index__write()`, `auxtrace_synth_guest_error()`),
//!   `tools/perf/util/synthetic-events.c` / `event.c` (record sizing),
//!   `tools/perf/util/bpf-event.c` (`synthesize_perf_record_bpf_metadata()`).

use crate::common;
use common::{hex, tails};

use perfdata::rt::{Array, BigEndian, LittleEndian, Payload, Reader, StaticEndian, Writer};
use perfdata::types::*;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Bytes built field by field in one byte order.
struct B {
    be: bool,
    v: Vec<u8>,
}

impl B {
    fn u8(&mut self, x: u8) -> &mut Self {
        self.v.push(x);
        self
    }
    fn u16(&mut self, x: u16) -> &mut Self {
        let b = if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
    fn u32(&mut self, x: u32) -> &mut Self {
        let b = if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
    fn u64(&mut self, x: u64) -> &mut Self {
        let b = if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.v.extend_from_slice(b);
        self
    }
    fn zeros(&mut self, n: usize) -> &mut Self {
        self.v.resize(self.v.len() + n, 0);
        self
    }
    /// Zero bytes up to a multiple of `align` (counted from the start of the body).
    fn pad_to(&mut self, align: usize) -> &mut Self {
        let n = self.v.len().next_multiple_of(align) - self.v.len();
        self.zeros(n)
    }
    /// `char name[n]`: the text, then NULs up to `n` bytes.
    fn fixed_str(&mut self, s: &str, n: usize) -> &mut Self {
        assert!(s.len() <= n);
        self.bytes(s.as_bytes()).zeros(n - s.len())
    }
    /// perf's `do_write_string()`: u32 len = NUL-inclusive length rounded up to
    /// `NAME_ALIGN` (64), then the text zero-padded to `len`.
    fn perf_str(&mut self, s: &str) -> &mut Self {
        let len = (s.len() + 1).next_multiple_of(64);
        self.u32(len as u32).fixed_str(s, len)
    }
    fn len(&self) -> usize {
        self.v.len()
    }
}

/// The same field sequence built little-endian and big-endian.
fn both(f: impl Fn(&mut B)) -> (Vec<u8>, Vec<u8>) {
    let mut le = B {
        be: false,
        v: vec![],
    };
    f(&mut le);
    let mut be = B {
        be: true,
        v: vec![],
    };
    f(&mut be);
    assert_eq!(le.v.len(), be.v.len(), "both byte orders have one size");
    (le.v, be.v)
}

fn encode_record<E: StaticEndian>(v: &RecordBody<'_>, ctx: &Ctx) -> Vec<u8> {
    let mut w = Writer::<E>::new();
    v.encode(&mut w, ctx)
        .unwrap_or_else(|e| panic!("encode {:?}: {e}", v.record_type()));
    w.into_vec()
}

/// Decodes the little-endian body `le` of a record of type `ty` and checks every round
/// trip against the hand-built bytes of both byte orders; returns the decoded value.
fn record<'a>(ty: RecordType, le: &'a [u8], be: &[u8], ctx: &Ctx) -> RecordBody<'a> {
    let mut r = Reader::<LittleEndian>::new(le, 0);
    let v = RecordBody::decode(ty, &mut r, ctx).unwrap_or_else(|e| panic!("decode {ty:?}: {e}"));
    assert_eq!(r.remaining(), 0, "{ty:?}: the body is consumed entirely");
    assert!(
        !matches!(v, RecordBody::Unknown(_)),
        "{ty:?} decoded as Unknown"
    );
    assert_eq!(
        hex(&encode_record::<LittleEndian>(&v, ctx)),
        hex(le),
        "{ty:?}: LE decode -> encode is not the identity"
    );
    assert_eq!(
        hex(&encode_record::<BigEndian>(&v, ctx)),
        hex(be),
        "{ty:?}: the BE encoding differs from the hand-built BE bytes"
    );
    let back = RecordBody::decode(ty, &mut Reader::<BigEndian>::new(be, 0), ctx)
        .unwrap_or_else(|e| panic!("decode BE {ty:?}: {e}"));
    assert_eq!(
        back.clone().into_owned(),
        v.clone().into_owned(),
        "{ty:?}: the value changed through big-endian bytes"
    );
    assert_eq!(
        hex(&encode_record::<LittleEndian>(&back, ctx)),
        hex(le),
        "{ty:?}: BE -> LE does not give the original bytes"
    );
    let t = tails(&v);
    assert!(t.is_empty(), "{ty:?}: unknown bytes kept: {t:?}");
    v
}

fn encode_feature<E: StaticEndian>(v: &FeatureBody<'_>, ctx: &Ctx) -> Vec<u8> {
    let mut w = Writer::<E>::new();
    v.encode(&mut w, ctx)
        .unwrap_or_else(|e| panic!("encode: {e}"));
    w.into_vec()
}

/// As [`record`], for a header feature section.
fn feature<'a>(id: FeatureId, le: &'a [u8], be: &[u8], ctx: &Ctx) -> FeatureBody<'a> {
    let mut r = Reader::<LittleEndian>::new(le, 0);
    let v = FeatureBody::decode(id, &mut r, ctx).unwrap_or_else(|e| panic!("decode {id:?}: {e}"));
    assert_eq!(r.remaining(), 0, "{id:?}: the section is consumed entirely");
    assert!(
        !matches!(v, FeatureBody::Unknown(_)),
        "{id:?} decoded as Unknown"
    );
    assert_eq!(
        hex(&encode_feature::<LittleEndian>(&v, ctx)),
        hex(le),
        "{id:?}: LE decode -> encode is not the identity"
    );
    assert_eq!(
        hex(&encode_feature::<BigEndian>(&v, ctx)),
        hex(be),
        "{id:?}: the BE encoding differs from the hand-built BE bytes"
    );
    let back = FeatureBody::decode(id, &mut Reader::<BigEndian>::new(be, 0), ctx)
        .unwrap_or_else(|e| panic!("decode BE {id:?}: {e}"));
    assert_eq!(
        back.clone().into_owned(),
        v.clone().into_owned(),
        "{id:?}: the value changed through big-endian bytes"
    );
    assert_eq!(
        hex(&encode_feature::<LittleEndian>(&back, ctx)),
        hex(le),
        "{id:?}: BE -> LE does not give the original bytes"
    );
    let t = tails(&v);
    assert!(t.is_empty(), "{id:?}: unknown bytes kept: {t:?}");
    v
}

/// The sample_id bits the brief asks for: TID | TIME | ID | CPU | IDENTIFIER.
fn id_bits() -> SampleType {
    SampleType::TID | SampleType::TIME | SampleType::ID | SampleType::CPU | SampleType::IDENTIFIER
}

/// A context whose records carry the `struct sample_id` trailer for `sample_type`.
fn sid_ctx(sample_type: SampleType) -> Ctx {
    Ctx {
        sample_type,
        sample_id_all: true,
        ..Ctx::default()
    }
}

/// `struct sample_id` (uapi, comment above `PERF_RECORD_MMAP`):
/// `{ u32 pid, tid; } && TID`, `{ u64 time; } && TIME`, `{ u64 id; } && ID`,
/// `{ u64 stream_id; } && STREAM_ID`, `{ u32 cpu, res; } && CPU`, `{ u64 id; } && IDENTIFIER`.
/// Values derived from `k` so each record's trailer is distinct.
fn push_sample_id(b: &mut B, st: SampleType, k: u64) {
    if st.contains(SampleType::TID) {
        b.u32(0x1000 + k as u32).u32(0x2000 + k as u32);
    }
    if st.contains(SampleType::TIME) {
        b.u64(0x0011_2233_4455_0000 + k);
    }
    if st.contains(SampleType::ID) {
        b.u64(0x0a0b_0c0d_0000_0000 + k);
    }
    if st.contains(SampleType::STREAM_ID) {
        b.u64(0x5757_0000_0000_0000 + k);
    }
    if st.contains(SampleType::CPU) {
        b.u32(k as u32 % 64).u32(0);
    }
    if st.contains(SampleType::IDENTIFIER) {
        b.u64(0x0a0b_0c0d_0000_0000 + k);
    }
}

fn check_sample_id(s: &Option<SampleId>, st: SampleType, k: u64) {
    let s = s.as_ref().expect("a sample_id trailer");
    let has = |b| st.contains(b);
    assert_eq!(s.pid, has(SampleType::TID).then_some(0x1000 + k as u32));
    assert_eq!(s.tid, has(SampleType::TID).then_some(0x2000 + k as u32));
    assert_eq!(
        s.time,
        has(SampleType::TIME).then_some(0x0011_2233_4455_0000 + k)
    );
    assert_eq!(
        s.id,
        has(SampleType::ID).then_some(0x0a0b_0c0d_0000_0000 + k)
    );
    assert_eq!(
        s.stream_id,
        has(SampleType::STREAM_ID).then_some(0x5757_0000_0000_0000 + k)
    );
    assert_eq!(s.cpu, has(SampleType::CPU).then_some(k as u32 % 64));
    assert_eq!(s.cpu_res, has(SampleType::CPU).then_some(0));
    assert_eq!(
        s.identifier,
        has(SampleType::IDENTIFIER).then_some(0x0a0b_0c0d_0000_0000 + k)
    );
}

// ---------------------------------------------------------------------------------------
// Kernel records
// ---------------------------------------------------------------------------------------

/// PERF_RECORD_LOST (2), uapi: `struct { header; u64 id; u64 lost; struct sample_id; }`.
#[test]
fn lost() {
    for ctx in [sid_ctx(id_bits()), Ctx::default()] {
        let st = ctx.sample_type;
        let trailer = ctx.sample_id_all;
        let (le, be) = both(|b| {
            b.u64(0x0102_0304_0506_0708).u64(0x1_0000_0003);
            if trailer {
                push_sample_id(b, st, 2);
            }
        });
        assert_eq!(le.len(), if trailer { 16 + 40 } else { 16 });
        let RecordBody::Lost(x) = record(RecordType::LOST, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!((x.id, x.lost), (0x0102_0304_0506_0708, 0x1_0000_0003));
        if trailer {
            check_sample_id(&x.sample_id, st, 2);
        } else {
            assert!(x.sample_id.is_none());
        }
    }
}

/// PERF_RECORD_THROTTLE (5) / UNTHROTTLE (6), uapi:
/// `struct { header; u64 time; u64 id; u64 stream_id; struct sample_id; }` (one comment for
/// both types). The trailer here also has STREAM_ID.
#[test]
fn throttle_and_unthrottle() {
    let st = id_bits() | SampleType::STREAM_ID;
    let ctx = sid_ctx(st);
    for (ty, k) in [(RecordType::THROTTLE, 5), (RecordType::UNTHROTTLE, 6)] {
        let (le, be) = both(|b| {
            b.u64(0x1111_2222_3333_0000 + k)
                .u64(0x4444_5555_6666_0000 + k)
                .u64(0x7777_8888_9999_0000 + k);
            push_sample_id(b, st, k);
        });
        assert_eq!(le.len(), 24 + 48);
        let (time, id, stream_id, sid) = match record(ty, &le, &be, &ctx) {
            RecordBody::Throttle(x) => (x.time, x.id, x.stream_id, x.sample_id),
            RecordBody::Unthrottle(x) => (x.time, x.id, x.stream_id, x.sample_id),
            other => panic!("{other:?}"),
        };
        assert_eq!(time, 0x1111_2222_3333_0000 + k);
        assert_eq!(id, 0x4444_5555_6666_0000 + k);
        assert_eq!(stream_id, 0x7777_8888_9999_0000 + k);
        check_sample_id(&sid, st, k);
    }
}

/// `struct read_format` (uapi, v6.x with PERF_FORMAT_LOST):
/// ```text
/// { u64 value;
///   { u64 time_enabled; } && PERF_FORMAT_TOTAL_TIME_ENABLED
///   { u64 time_running; } && PERF_FORMAT_TOTAL_TIME_RUNNING
///   { u64 id;           } && PERF_FORMAT_ID
///   { u64 lost;         } && PERF_FORMAT_LOST
/// } && !PERF_FORMAT_GROUP
/// { u64 nr;
///   { u64 time_enabled; } && PERF_FORMAT_TOTAL_TIME_ENABLED
///   { u64 time_running; } && PERF_FORMAT_TOTAL_TIME_RUNNING
///   { u64 value; { u64 id; } && PERF_FORMAT_ID; { u64 lost; } && PERF_FORMAT_LOST } cntr[nr];
/// } && PERF_FORMAT_GROUP
/// ```
/// Pushes it for `rf` with `nr` members (group) and values derived from `k`.
fn push_read_format(b: &mut B, rf: ReadFormat, nr: u64, k: u64) {
    let has = |f| rf.contains(f);
    if has(ReadFormat::GROUP) {
        b.u64(nr);
        if has(ReadFormat::TOTAL_TIME_ENABLED) {
            b.u64(0xe0e0_0000 + k);
        }
        if has(ReadFormat::TOTAL_TIME_RUNNING) {
            b.u64(0xf0f0_0000 + k);
        }
        for i in 0..nr {
            b.u64(0x1_0000_0000 * (i + 1) + k);
            if has(ReadFormat::ID) {
                b.u64(0x1d00 + i);
            }
            if has(ReadFormat::LOST) {
                b.u64(0x1057 + i);
            }
        }
    } else {
        b.u64(0x1_0000_0000 + k);
        if has(ReadFormat::TOTAL_TIME_ENABLED) {
            b.u64(0xe0e0_0000 + k);
        }
        if has(ReadFormat::TOTAL_TIME_RUNNING) {
            b.u64(0xf0f0_0000 + k);
        }
        if has(ReadFormat::ID) {
            b.u64(0x1d00);
        }
        if has(ReadFormat::LOST) {
            b.u64(0x1057);
        }
    }
}

fn check_read_format(v: &ReadData, rf: ReadFormat, nr: u64, k: u64) {
    let has = |f| rf.contains(f);
    match &v.values {
        ReadValues::Single(s) => {
            assert!(!has(ReadFormat::GROUP));
            assert_eq!(s.value, 0x1_0000_0000 + k);
            assert_eq!(
                s.time_enabled,
                has(ReadFormat::TOTAL_TIME_ENABLED).then_some(0xe0e0_0000 + k)
            );
            assert_eq!(
                s.time_running,
                has(ReadFormat::TOTAL_TIME_RUNNING).then_some(0xf0f0_0000 + k)
            );
            assert_eq!(s.id, has(ReadFormat::ID).then_some(0x1d00));
            assert_eq!(s.lost, has(ReadFormat::LOST).then_some(0x1057));
        }
        ReadValues::Group(g) => {
            assert!(has(ReadFormat::GROUP));
            assert_eq!(
                g.time_enabled,
                has(ReadFormat::TOTAL_TIME_ENABLED).then_some(0xe0e0_0000 + k)
            );
            assert_eq!(
                g.time_running,
                has(ReadFormat::TOTAL_TIME_RUNNING).then_some(0xf0f0_0000 + k)
            );
            assert_eq!(g.values.len() as u64, nr);
            for (i, x) in g.values.iter().enumerate() {
                let i = i as u64;
                assert_eq!(x.value, 0x1_0000_0000 * (i + 1) + k);
                assert_eq!(x.id, has(ReadFormat::ID).then_some(0x1d00 + i));
                assert_eq!(x.lost, has(ReadFormat::LOST).then_some(0x1057 + i));
            }
        }
    }
}

/// Every read_format combination of the five bits.
fn read_formats(group: bool) -> Vec<ReadFormat> {
    (0u64..16)
        .map(|bits| {
            // bits 0,1,2 -> ENABLED, RUNNING, ID; bit 3 -> LOST (bit 4 of read_format)
            let mut v = bits & 7;
            if bits & 8 != 0 {
                v |= ReadFormat::LOST.0;
            }
            if group {
                v |= ReadFormat::GROUP.0;
            }
            ReadFormat(v)
        })
        .collect()
}

/// PERF_RECORD_READ (8), uapi:
/// `struct { header; u32 pid, tid; struct read_format values; struct sample_id; }`,
/// for every read_format without GROUP and with GROUP (3 members).
#[test]
fn read_record_every_read_format() {
    for group in [false, true] {
        for rf in read_formats(group) {
            let st = id_bits();
            let ctx = Ctx {
                read_format: rf,
                ..sid_ctx(st)
            };
            let nr = 3;
            let (le, be) = both(|b| {
                b.u32(4242).u32(4243);
                push_read_format(b, rf, nr, 8);
                push_sample_id(b, st, 8);
            });
            let RecordBody::Read(x) = record(RecordType::READ, &le, &be, &ctx) else {
                panic!()
            };
            assert_eq!((x.pid, x.tid), (4242, 4243), "{rf:?}");
            check_read_format(&x.values, rf, nr, 8);
            check_sample_id(&x.sample_id, st, 8);
        }
    }
}

/// The flag word of `struct perf_branch_entry` as a C compiler lays it out. uapi:
/// `u64 mispred:1, predicted:1, in_tx:1, abort:1, cycles:16, type:4, spec:2, new_type:4,
/// priv:3, reserved:31` — from bit 0 up on a little-endian producer; on a
/// big-endian one from bit 63 down, which is exactly the positions perf's
/// `evsel__bitfield_swap_branch_flags()` uses for a big-endian host (63, 62, 61, 60,
/// 44/16, 40/4, 38/2, 34/4, 31/3, 0/31).
#[allow(clippy::too_many_arguments)]
fn branch_flags_word(
    be: bool,
    mispred: u64,
    predicted: u64,
    in_tx: u64,
    abort: u64,
    cycles: u64,
    ty: u64,
    spec: u64,
    new_type: u64,
    priv_: u64,
) -> u64 {
    if be {
        mispred << 63
            | predicted << 62
            | in_tx << 61
            | abort << 60
            | cycles << 44
            | ty << 40
            | spec << 38
            | new_type << 34
            | priv_ << 31
    } else {
        mispred
            | predicted << 1
            | in_tx << 2
            | abort << 3
            | cycles << 4
            | ty << 20
            | spec << 24
            | new_type << 26
            | priv_ << 30
    }
}

/// SAMPLE (9) with BRANCH_STACK. uapi (v6.8+):
/// ```text
/// { u64 nr;
///   { u64 hw_idx; } && PERF_SAMPLE_BRANCH_HW_INDEX
///   { u64 from, to, flags } lbr[nr];
///   { u64 counters; } cntr[nr] && PERF_SAMPLE_BRANCH_COUNTERS
/// } && PERF_SAMPLE_BRANCH_STACK
/// ```
/// (`perf_sample_save_brstack()`: "The extension space for counters is appended after the
/// struct perf_branch_stack".) Every combination of HW_INDEX and COUNTERS, and nr = 0.
#[test]
fn sample_branch_stack_hw_index_and_counters() {
    let st = SampleType::IDENTIFIER
        | SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::BRANCH_STACK;
    let entries: [(u64, u64, [u64; 9]); 2] = [
        (
            0xffff_ffff_8100_1000,
            0x0000_5555_0000_2000,
            [1, 0, 1, 0, 0x1234, 5, 2, 3, 6],
        ),
        (
            0x0000_7fff_0000_3000,
            0x0000_7fff_0000_4000,
            [0, 1, 0, 1, 0xfedc, 0xf, 1, 0xa, 3],
        ),
    ];
    for bst in [
        BranchSampleType::ANY,
        BranchSampleType::ANY | BranchSampleType::HW_INDEX,
        BranchSampleType::ANY | BranchSampleType::COUNTERS,
        BranchSampleType::ANY | BranchSampleType::HW_INDEX | BranchSampleType::COUNTERS,
    ] {
        for nr in [2usize, 0] {
            let ctx = Ctx {
                sample_type: st,
                branch_sample_type: bst,
                ..Ctx::default()
            };
            let hw = bst.contains(BranchSampleType::HW_INDEX);
            let cn = bst.contains(BranchSampleType::COUNTERS);
            let (le, be) = both(|b| {
                b.u64(0x1de7)
                    .u64(0xffff_ffff_8100_0042)
                    .u32(77)
                    .u32(78)
                    .u64(0x0011_2233_4455_6677)
                    .u64(nr as u64);
                if hw {
                    b.u64(0x4d1d);
                }
                for (from, to, f) in &entries[..nr] {
                    let w = branch_flags_word(
                        b.be, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8],
                    );
                    b.u64(*from).u64(*to).u64(w);
                }
                if cn {
                    for i in 0..nr {
                        b.u64(0xc0_0000 + i as u64);
                    }
                }
            });
            let RecordBody::Sample(s) = record(RecordType::SAMPLE, &le, &be, &ctx) else {
                panic!()
            };
            assert_eq!(s.identifier, Some(0x1de7));
            assert_eq!(s.ip, Some(0xffff_ffff_8100_0042));
            assert_eq!((s.pid, s.tid), (Some(77), Some(78)));
            assert_eq!(s.time, Some(0x0011_2233_4455_6677));
            let bs = s.branch_stack.as_ref().unwrap();
            assert_eq!(bs.hw_idx, hw.then_some(0x4d1d), "{bst:?}");
            assert_eq!(bs.entries.len(), nr);
            for (i, (from, to, f)) in entries[..nr].iter().enumerate() {
                let e = bs.entries.get(i).unwrap();
                assert_eq!((e.from, e.to), (*from, *to));
                let bf = e.branch_flags;
                assert_eq!(bf.mispred(), f[0] == 1);
                assert_eq!(bf.predicted(), f[1] == 1);
                assert_eq!(bf.in_tx(), f[2] == 1);
                assert_eq!(bf.abort(), f[3] == 1);
                assert_eq!(bf.cycles(), f[4]);
                assert_eq!(bf.type_(), f[5]);
                assert_eq!(bf.spec(), f[6]);
                assert_eq!(bf.new_type(), f[7]);
                assert_eq!(bf.priv_(), f[8]);
                assert_eq!(bf.reserved(), 0);
            }
            let counters = bs.counters.as_ref().map(Array::to_vec);
            assert_eq!(
                counters,
                cn.then(|| (0..nr as u64).map(|i| 0xc0_0000 + i).collect::<Vec<_>>())
            );
            assert!(s.regs_user.is_none() && s.aux.is_none());
        }
    }
}

/// SAMPLE (9) with WEIGHT_STRUCT, DATA_SRC, TRANSACTION after the fixed fields. uapi:
/// `union perf_sample_weight { u64 full; struct { u32 var1_dw; u16 var2_w; u16 var3_w; } }`
/// on little-endian, `{ u16 var3_w; u16 var2_w; u32 var1_dw; }` on big-endian (so the u64
/// value is var1 | var2 << 32 | var3 << 48 on both); `union perf_mem_data_src` is declared
/// per byte order the same way (value-based `PERF_MEM_*_SHIFT`s); `u64 transaction` holds
/// `PERF_TXN_*` in bits 0-7 and the abort code in bits 32-63 (`PERF_TXN_ABORT_SHIFT` 32).
#[test]
fn sample_weight_struct_data_src_transaction() {
    let st = SampleType::IDENTIFIER
        | SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::ADDR
        | SampleType::ID
        | SampleType::STREAM_ID
        | SampleType::CPU
        | SampleType::PERIOD
        | SampleType::WEIGHT_STRUCT
        | SampleType::DATA_SRC
        | SampleType::TRANSACTION;
    let ctx = Ctx {
        sample_type: st,
        ..Ctx::default()
    };
    // PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT|L1) | PERF_MEM_S(SNOOP, NONE)
    // | PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, HIT|L1) | PERF_MEM_S(LVLNUM, L1)
    // | PERF_MEM_S(REMOTE, REMOTE) | PERF_MEM_S(SNOOPX, FWD) | PERF_MEM_S(BLK, DATA)
    // | PERF_MEM_S(HOPS, 1)
    let data_src: u64 = 0x02
        | (0x02 | 0x08) << 5
        | 0x02 << 19
        | 0x01 << 24
        | (0x02 | 0x08) << 26
        | 0x01 << 33
        | 0x01 << 37
        | 0x01 << 38
        | 0x02 << 40
        | 0x02 << 43;
    // PERF_TXN_TRANSACTION | SYNC | RETRY | CONFLICT, abort code 0xdeadbeef
    let txn: u64 = 0x2 | 0x4 | 0x10 | 0x20 | 0xdead_beef << 32;
    let (le, be) = both(|b| {
        b.u64(0x1de7) // identifier
            .u64(0x4000_1234) // ip
            .u32(100)
            .u32(101) // pid, tid
            .u64(0x0102_0304_0506_0708) // time
            .u64(0x7fff_dead_0000) // addr
            .u64(0x1de7) // id
            .u64(0x5eed) // stream_id
            .u32(3)
            .u32(0) // cpu, res
            .u64(10007); // period
                         // union perf_sample_weight, struct view per byte order
        if b.be {
            b.u16(0x7788).u16(0x5566).u32(0x1122_3344);
        } else {
            b.u32(0x1122_3344).u16(0x5566).u16(0x7788);
        }
        b.u64(data_src).u64(txn);
    });
    let RecordBody::Sample(s) = record(RecordType::SAMPLE, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(s.identifier, Some(0x1de7));
    assert_eq!(s.ip, Some(0x4000_1234));
    assert_eq!((s.pid, s.tid), (Some(100), Some(101)));
    assert_eq!(s.time, Some(0x0102_0304_0506_0708));
    assert_eq!(s.addr, Some(0x7fff_dead_0000));
    assert_eq!(s.id, Some(0x1de7));
    assert_eq!(s.stream_id, Some(0x5eed));
    assert_eq!((s.cpu, s.cpu_res), (Some(3), Some(0)));
    assert_eq!(s.period, Some(10007));
    let w = s.weight.unwrap();
    assert_eq!(w, 0x7788_5566_1122_3344);
    assert_eq!(
        (w & 0xffff_ffff, (w >> 32) & 0xffff, w >> 48),
        (0x1122_3344, 0x5566, 0x7788),
        "var1_dw, var2_w, var3_w"
    );
    let d = s.data_src.unwrap();
    assert_eq!(d.0, data_src);
    assert_eq!(d.op(), 0x02);
    assert_eq!(d.lvl(), 0x0a);
    assert_eq!(d.snoop(), 0x02);
    assert_eq!(d.lock(), 0x01);
    assert_eq!(d.dtlb(), 0x0a);
    assert_eq!(d.lvl_num(), 0x01);
    assert!(d.contains(MemDataSrc::REMOTE));
    assert_eq!(d.snoopx(), 0x01);
    assert_eq!(d.blk(), 0x02);
    assert_eq!(d.hops(), 0x02);
    let t = s.transaction.unwrap();
    assert!(t.contains(Transaction::TRANSACTION | Transaction::SYNC));
    assert!(t.contains(Transaction::RETRY | Transaction::CONFLICT));
    assert!(!t.intersects(Transaction::ELISION | Transaction::ASYNC));
    assert_eq!(t.abort_code(), 0xdead_beef);
    assert!(s.read.is_none() && s.callchain.is_none() && s.branch_stack.is_none());
}

/// SAMPLE (9) with REGS_USER, STACK_USER, REGS_INTR. uapi:
/// `{ u64 abi; u64 regs[weight(mask)]; } && REGS_USER`,
/// `{ u64 size; char data[size]; u64 dyn_size; } && STACK_USER`,
/// `{ u64 abi; u64 regs[weight(mask)]; } && REGS_INTR`. The regs are absent when
/// `abi == PERF_SAMPLE_REGS_ABI_NONE` (core.c: `if (abi) perf_output_sample_regs(...)`);
/// `perf_output_sample_ustack()` writes only `u64 size = 0` when there is nothing to dump
/// (no data, no dyn_size — evsel__parse_sample: `if (!sz) ... else { data; dyn_size }`).
#[test]
fn sample_regs_abi_none_and_user_stack_sizes() {
    let st =
        SampleType::TID | SampleType::REGS_USER | SampleType::STACK_USER | SampleType::REGS_INTR;
    let ctx = Ctx {
        sample_type: st,
        sample_regs_user: 0b1011,                // 3 registers
        sample_regs_intr: 0x8000_0000_0000_0001, // 2 registers
        ..Ctx::default()
    };
    // (user abi, stack size, dyn_size, intr abi)
    for (uabi, ssize, dyn_size, iabi) in [(0u64, 0usize, 0u64, 2u64), (2, 16, 12, 0), (1, 8, 8, 1)]
    {
        let (le, be) = both(|b| {
            b.u32(300).u32(301);
            b.u64(uabi);
            if uabi != 0 {
                b.u64(0xa0).u64(0xa1).u64(0xa3);
            }
            b.u64(ssize as u64);
            if ssize != 0 {
                let data: Vec<u8> = (0..ssize as u8).map(|i| 0xd0 ^ i).collect();
                b.bytes(&data).u64(dyn_size);
            }
            b.u64(iabi);
            if iabi != 0 {
                b.u64(0x1000).u64(0x1063);
            }
        });
        let RecordBody::Sample(s) = record(RecordType::SAMPLE, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!((s.pid, s.tid), (Some(300), Some(301)));
        let ru = s.regs_user.as_ref().unwrap();
        assert_eq!(ru.abi, SampleRegsAbi(uabi));
        assert_eq!(
            ru.regs.as_ref().map(Array::to_vec),
            (uabi != 0).then(|| vec![0xa0, 0xa1, 0xa3])
        );
        let su = s.stack_user.as_ref().unwrap();
        assert_eq!(su.data.len(), ssize);
        assert!(su
            .data
            .iter()
            .enumerate()
            .all(|(i, &x)| x == 0xd0 ^ i as u8));
        assert_eq!(su.dyn_size, (ssize != 0).then_some(dyn_size));
        let ri = s.regs_intr.as_ref().unwrap();
        assert_eq!(ri.abi, SampleRegsAbi(iabi));
        assert_eq!(
            ri.regs.as_ref().map(Array::to_vec),
            (iabi != 0).then(|| vec![0x1000, 0x1063])
        );
    }
}

/// SAMPLE (9): the fields after REGS_INTR. The uapi comment of the stored 5.x header lists
/// AUX before DATA_PAGE_SIZE/CODE_PAGE_SIZE and omits CGROUP, but the code that writes
/// them, `perf_output_sample()` in kernel/events/core.c, emits PHYS_ADDR, CGROUP,
/// DATA_PAGE_SIZE, CODE_PAGE_SIZE and AUX last (`{ u64 size; char data[size]; }`), and
/// perf's `evsel__parse_sample()` reads them in that order: the code is what files
/// contain, and the spec follows it.
#[test]
fn sample_aux_is_last() {
    let st = SampleType::IP
        | SampleType::PHYS_ADDR
        | SampleType::CGROUP
        | SampleType::DATA_PAGE_SIZE
        | SampleType::CODE_PAGE_SIZE
        | SampleType::AUX;
    let ctx = Ctx {
        sample_type: st,
        ..Ctx::default()
    };
    for aux_len in [24usize, 0] {
        let aux: Vec<u8> = (0..aux_len as u8).map(|i| i.wrapping_mul(37)).collect();
        let (le, be) = both(|b| {
            b.u64(0x40_1000) // ip
                .u64(0x1_2345_6000) // phys_addr
                .u64(0xc9_0001) // cgroup
                .u64(0x20_0000) // data_page_size
                .u64(0x1000) // code_page_size
                .u64(aux.len() as u64)
                .bytes(&aux);
        });
        let RecordBody::Sample(s) = record(RecordType::SAMPLE, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(s.ip, Some(0x40_1000));
        assert_eq!(s.phys_addr, Some(0x1_2345_6000));
        assert_eq!(s.cgroup, Some(0xc9_0001));
        assert_eq!(s.data_page_size, Some(0x20_0000));
        assert_eq!(s.code_page_size, Some(0x1000));
        assert_eq!(s.aux.as_ref().unwrap().data.as_slice(), &aux[..]);
    }
}

/// SAMPLE (9) with READ (a `struct read_format` inside the sample) for every read_format,
/// group (2 members) or not, followed by a CALLCHAIN with context markers
/// (`PERF_CONTEXT_KERNEL` = (u64)-128, `PERF_CONTEXT_USER` = (u64)-512) to show the READ
/// block has the right length.
#[test]
fn sample_read_group_and_single() {
    let st = SampleType::IDENTIFIER
        | SampleType::TID
        | SampleType::TIME
        | SampleType::READ
        | SampleType::CALLCHAIN;
    for group in [true, false] {
        for rf in read_formats(group) {
            let ctx = Ctx {
                sample_type: st,
                read_format: rf,
                ..Ctx::default()
            };
            let ips = [
                CallchainContext::KERNEL.0,
                0xffff_ffff_8100_0010,
                CallchainContext::USER.0,
                0x0040_1234,
            ];
            let (le, be) = both(|b| {
                b.u64(0x1de7).u32(9).u32(10).u64(0x0505_0505_0000_0009);
                push_read_format(b, rf, 2, 9);
                b.u64(ips.len() as u64);
                for ip in ips {
                    b.u64(ip);
                }
            });
            let RecordBody::Sample(s) = record(RecordType::SAMPLE, &le, &be, &ctx) else {
                panic!()
            };
            assert_eq!(s.identifier, Some(0x1de7));
            assert_eq!(
                (s.pid, s.tid, s.time),
                (Some(9), Some(10), Some(0x0505_0505_0000_0009))
            );
            check_read_format(s.read.as_ref().unwrap(), rf, 2, 9);
            assert_eq!(s.callchain.as_ref().unwrap().ips.to_vec(), ips.to_vec());
        }
    }
}

/// PERF_RECORD_MMAP2 (10) with `PERF_RECORD_MISC_MMAP_BUILD_ID` (misc bit 14), uapi:
/// `u32 pid, tid; u64 addr, len, pgoff; union { struct { u32 maj, min; u64 ino,
/// ino_generation; }; struct { u8 build_id_size; u8 __reserved_1; u16 __reserved_2;
/// u8 build_id[20]; }; }; u32 prot, flags; char filename[]; struct sample_id;` — and the
/// inode variant for contrast.
#[test]
fn mmap2_build_id_and_inode() {
    let st = id_bits();
    let build_id: Vec<u8> = (0..16u8).map(|i| 0xb0 + i).collect();
    for with_build_id in [true, false] {
        let misc = if with_build_id {
            RecordMisc::MMAP_BUILD_ID | RecordMisc(2) // | PERF_RECORD_MISC_USER
        } else {
            RecordMisc(2)
        };
        let ctx = Ctx {
            misc,
            ..sid_ctx(st)
        };
        let (le, be) = both(|b| {
            b.u32(1234)
                .u32(1235)
                .u64(0x7f00_1234_0000)
                .u64(0x21_000)
                .u64(0x3000);
            if with_build_id {
                b.u8(16).u8(0).u16(0).bytes(&build_id).zeros(4);
            } else {
                b.u32(8).u32(3).u64(0x0123_4567_89ab).u64(0x77);
            }
            b.u32(5) // PROT_READ | PROT_EXEC
                .u32(2) // MAP_PRIVATE
                .bytes(b"/usr/lib/libfoo.so.1\0")
                .pad_to(8);
            push_sample_id(b, st, 10);
        });
        let RecordBody::Mmap2(m) = record(RecordType::MMAP2, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!((m.pid, m.tid), (1234, 1235));
        assert_eq!(
            (m.addr, m.len, m.pgoff),
            (0x7f00_1234_0000, 0x21_000, 0x3000)
        );
        match &m.file_id {
            Mmap2FileId::BuildId(x) => {
                assert!(with_build_id);
                assert_eq!(x.build_id_size, 16);
                assert_eq!((x.reserved1, x.reserved2), (0, 0));
                assert_eq!(&x.build_id[..16], &build_id[..]);
                assert_eq!(&x.build_id[16..], &[0; 4]);
            }
            Mmap2FileId::Inode(x) => {
                assert!(!with_build_id);
                assert_eq!(
                    (x.maj, x.min, x.ino, x.ino_generation),
                    (8, 3, 0x0123_4567_89ab, 0x77)
                );
            }
        }
        assert_eq!((m.prot, m.map_flags), (5, 2));
        assert_eq!(m.filename.text(), b"/usr/lib/libfoo.so.1");
        assert_eq!(
            m.filename.len(),
            24,
            "NUL + zero padding to 8 kept in the region"
        );
        check_sample_id(&m.sample_id, st, 10);
    }
}

/// PERF_RECORD_AUX (11), uapi: `u64 aux_offset; u64 aux_size; u64 flags; struct sample_id;`
/// with `PERF_AUX_FLAG_TRUNCATED | PARTIAL` and the CoreSight RAW format type
/// (`PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW` 0x0100 in `PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK`).
#[test]
fn aux_record() {
    let st = id_bits();
    let ctx = sid_ctx(st);
    let flags = 0x01 | 0x04 | 0x0100;
    let (le, be) = both(|b| {
        b.u64(0x0001_0000).u64(0x8000).u64(flags);
        push_sample_id(b, st, 11);
    });
    let RecordBody::Aux(a) = record(RecordType::AUX, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!((a.aux_offset, a.aux_size), (0x0001_0000, 0x8000));
    assert!(a
        .aux_flags
        .contains(AuxFlags::TRUNCATED | AuxFlags::PARTIAL));
    assert!(!a
        .aux_flags
        .intersects(AuxFlags::OVERWRITE | AuxFlags::COLLISION));
    assert_eq!(a.aux_flags.pmu_format_type(), 1);
    check_sample_id(&a.sample_id, st, 11);
}

/// PERF_RECORD_ITRACE_START (12), uapi: `u32 pid; u32 tid; struct sample_id;`.
#[test]
fn itrace_start() {
    let st = id_bits();
    let ctx = sid_ctx(st);
    let (le, be) = both(|b| {
        b.u32(0x0102_0304).u32(0x0506_0708);
        push_sample_id(b, st, 12);
    });
    let RecordBody::ItraceStart(x) = record(RecordType::ITRACE_START, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!((x.pid, x.tid), (0x0102_0304, 0x0506_0708));
    check_sample_id(&x.sample_id, st, 12);
}

/// PERF_RECORD_LOST_SAMPLES (13), uapi: `u64 lost; struct sample_id;` (also synthesized by
/// perf with `PERF_RECORD_MISC_LOST_SAMPLES_BPF`, misc bit 15, and a real sample_id).
#[test]
fn lost_samples() {
    let st = id_bits();
    for misc in [RecordMisc::EMPTY, RecordMisc::EXT_RESERVED] {
        let ctx = Ctx {
            misc,
            ..sid_ctx(st)
        };
        let (le, be) = both(|b| {
            b.u64(0x0000_0001_0000_0013);
            push_sample_id(b, st, 13);
        });
        let RecordBody::LostSamples(x) = record(RecordType::LOST_SAMPLES, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(x.lost, 0x0000_0001_0000_0013);
        check_sample_id(&x.sample_id, st, 13);
    }
}

/// PERF_RECORD_TEXT_POKE (20), uapi: `u64 addr; u16 old_len; u16 new_len; u8 bytes[];
/// struct sample_id;`. kernel/events/core.c `perf_event_text_poke()`:
/// `tot = sizeof(old_len) + old_len + sizeof(new_len) + new_len;
/// pad = ALIGN(tot, sizeof(u64)) - tot;` and `header.size = sizeof(event_id) + tot + pad`,
/// the pad bytes being written as zeros before the sample_id.
#[test]
fn text_poke_padding() {
    let st = id_bits();
    let ctx = sid_ctx(st);
    for (old_len, new_len) in [(3usize, 2usize), (0, 5), (2, 2), (7, 6), (1, 0), (5, 7)] {
        let old: Vec<u8> = (0..old_len as u8).map(|i| 0x90 + i).collect();
        let new: Vec<u8> = (0..new_len as u8).map(|i| 0xe8 + i).collect();
        let tot = 4 + old_len + new_len;
        let pad = tot.next_multiple_of(8) - tot;
        let (le, be) = both(|b| {
            b.u64(0xffff_ffff_c000_1230)
                .u16(old_len as u16)
                .u16(new_len as u16)
                .bytes(&old)
                .bytes(&new)
                .zeros(pad);
            assert_eq!(b.len() % 8, 0);
            push_sample_id(b, st, 20);
        });
        let RecordBody::TextPoke(x) = record(RecordType::TEXT_POKE, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(x.addr, 0xffff_ffff_c000_1230);
        assert_eq!(x.old_bytes.as_slice(), &old[..]);
        assert_eq!(x.new_bytes.as_slice(), &new[..]);
        assert!(x.tail.is_none(), "the kernel's zero pad is canonical");
        check_sample_id(&x.sample_id, st, 20);
    }
}

/// PERF_RECORD_AUX_OUTPUT_HW_ID (21), uapi: `u64 hw_id; struct sample_id;`.
#[test]
fn aux_output_hw_id() {
    let st = id_bits();
    let ctx = sid_ctx(st);
    let (le, be) = both(|b| {
        b.u64(0x0000_0000_0000_0021);
        push_sample_id(b, st, 21);
    });
    let RecordBody::AuxOutputHwId(x) = record(RecordType::AUX_OUTPUT_HW_ID, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.hw_id, 0x21);
    check_sample_id(&x.sample_id, st, 21);
}

/// PERF_RECORD_CALLCHAIN_DEFERRED (22), uapi ("perf: Support deferred user callchains"):
/// `struct { header; u64 cookie; u64 nr; u64 ips[nr]; struct sample_id; }`.
#[test]
fn callchain_deferred() {
    let st = id_bits();
    let ctx = sid_ctx(st);
    let ips = [
        CallchainContext::USER.0,
        0x0040_1000,
        0x0040_2000,
        0x7f00_0000_3000,
    ];
    let (le, be) = both(|b| {
        b.u64(0xc00c_1e00_0000_0022).u64(ips.len() as u64);
        for ip in ips {
            b.u64(ip);
        }
        push_sample_id(b, st, 22);
    });
    let RecordBody::CallchainDeferred(x) = record(RecordType::CALLCHAIN_DEFERRED, &le, &be, &ctx)
    else {
        panic!()
    };
    assert_eq!(x.cookie, 0xc00c_1e00_0000_0022);
    assert_eq!(x.ips.to_vec(), ips.to_vec());
    check_sample_id(&x.sample_id, st, 22);
}

// ---------------------------------------------------------------------------------------
// perf's user records
// ---------------------------------------------------------------------------------------

/// PERF_RECORD_HEADER_EVENT_TYPE (65), event.h: `struct perf_trace_event_type { u64
/// event_id; char name[MAX_EVENT_NAME (64)]; }` after the header. The writer,
/// `perf_event__synthesize_event_type()` (util/event.c of perf 3.x), does NOT write the
/// whole struct: `size = PERF_ALIGN(strlen(name), sizeof(u64)); header.size =
/// sizeof(ev.event_type) - (sizeof(name) - size);` — the name region is the name rounded
/// up to 8 bytes (no NUL at all when strlen is a multiple of 8). The full 64-byte form is
/// checked too.
#[test]
fn header_event_type_sized_by_name() {
    let ctx = Ctx::default();
    for (id, name, region) in [
        (0x13d_u64, "sched:sched_switch", 24usize),
        (0x2a, "irq:abcd", 8),
        (0x15, "raw_syscalls:sys_enter", 24),
        (0x7, "x", 8),
        (0x99, "kmem:kmalloc", 64),
    ] {
        let (le, be) = both(|b| {
            b.u64(id).fixed_str(name, region);
        });
        assert_eq!(le.len(), 8 + region);
        let RecordBody::HeaderEventType(x) = record(RecordType::HEADER_EVENT_TYPE, &le, &be, &ctx)
        else {
            panic!()
        };
        assert_eq!(x.event_id, id);
        assert_eq!(x.name.text(), name.as_bytes());
        assert_eq!(x.name.len(), region);
    }
}

/// PERF_RECORD_ID_INDEX (69), event.h: `struct perf_record_id_index { header; u64 nr;
/// struct id_index_entry entries[]; }`, `id_index_entry { u64 id, idx, cpu, tid; }`, and
/// after the whole first array, when the writer needs it, `id_index_entry_2 { u64
/// machine_pid, vcpu; }[nr]` (session.c: present iff `header.size >= sizeof(*ie) +
/// nr * (sizeof(id_index_entry) + sizeof(id_index_entry_2))`).
#[test]
fn id_index_with_and_without_guest_array() {
    let ctx = Ctx::default();
    for with2 in [false, true] {
        let (le, be) = both(|b| {
            b.u64(2);
            b.u64(0x1d01).u64(0).u64(3).u64(u64::MAX); // cpu 3, any thread
            b.u64(0x1d02).u64(1).u64(u64::MAX).u64(4321); // any cpu, tid 4321
            if with2 {
                b.u64(0).u64(0); // host
                b.u64(9876).u64(2); // guest machine pid 9876, vcpu 2
            }
        });
        assert_eq!(le.len(), if with2 { 8 + 64 + 32 } else { 8 + 64 });
        let RecordBody::IdIndex(x) = record(RecordType::ID_INDEX, &le, &be, &ctx) else {
            panic!()
        };
        let e: Vec<_> = x
            .entries
            .iter()
            .map(|e| (e.id, e.idx, e.cpu, e.tid))
            .collect();
        assert_eq!(
            e,
            vec![(0x1d01, 0, 3, u64::MAX), (0x1d02, 1, u64::MAX, 4321)]
        );
        let e2 = x.entries2.as_ref().map(|a| {
            a.iter()
                .map(|e| (e.machine_pid, e.vcpu))
                .collect::<Vec<_>>()
        });
        assert_eq!(e2, with2.then(|| vec![(0, 0), (9876, 2)]));
    }
}

/// PERF_RECORD_AUXTRACE_INFO (70), event.h: `u32 type; u32 reserved__; u64 priv[];`.
#[test]
fn auxtrace_info() {
    let ctx = Ctx::default();
    let priv_ = [8u64, 0x0000_0001_0000_0000, 0x1e, 0x3, 0xffff_ffff_ffff];
    let (le, be) = both(|b| {
        b.u32(1).u32(0); // PERF_AUXTRACE_INTEL_PT
        for p in priv_ {
            b.u64(p);
        }
    });
    let RecordBody::AuxtraceInfo(x) = record(RecordType::AUXTRACE_INFO, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.type_, AuxtraceType::INTEL_PT);
    assert_eq!(x.reserved, 0);
    assert_eq!(x.priv_.to_vec(), priv_.to_vec());
}

/// PERF_RECORD_AUXTRACE (71), event.h: `u64 size, offset, reference; u32 idx, tid, cpu,
/// reserved__;` — header.size is sizeof (48) and `size` bytes of AUX data follow the
/// record outside header.size.
#[test]
fn auxtrace_payload_outside_the_record() {
    let ctx = Ctx::default();
    let data: Vec<u8> = (0..0x40u8).collect();
    let (le, be) = both(|b| {
        b.u64(data.len() as u64)
            .u64(0x0000_0002_0000_0000)
            .u64(0x1234_5678_9abc_def0)
            .u32(3)
            .u32(u32::MAX) // tid -1: per-CPU mode
            .u32(2)
            .u32(0);
    });
    assert_eq!(le.len(), 40, "header.size 48");
    let mut v = record(RecordType::AUXTRACE, &le, &be, &ctx);
    assert_eq!(v.payload_len(), 0x40);
    let RecordBody::Auxtrace(x) = &v else {
        panic!()
    };
    assert_eq!(x.offset, 0x0000_0002_0000_0000);
    assert_eq!(x.reference, 0x1234_5678_9abc_def0);
    assert_eq!((x.idx, x.tid, x.cpu, x.reserved), (3, u32::MAX, 2, 0));
    assert!(matches!(x.data, Payload::Pending(0x40)));
    // Attaching the bytes does not change the record's own bytes.
    v.set_payload(data[..].into());
    assert_eq!(v.payload_len(), 0x40);
    let RecordBody::Auxtrace(x) = &v else {
        panic!()
    };
    assert_eq!(x.data.bytes(), Some(&data[..]));
    assert_eq!(hex(&encode_record::<LittleEndian>(&v, &ctx)), hex(&le));
    assert_eq!(hex(&encode_record::<BigEndian>(&v, &ctx)), hex(&be));
}

/// PERF_RECORD_AUXTRACE_ERROR (72), event.h: `u32 type, code, cpu, pid, tid, fmt; u64 ip;
/// u64 time; char msg[MAX_AUXTRACE_ERROR_MSG (64)]; u32 machine_pid; u32 vcpu;`.
/// auxtrace.c `auxtrace_synth_guest_error()`: fmt 1 is cut after the msg's NUL
/// (`size = msg - record + strlen(msg) + 1`) and padded to 8; fmt 2 (machine_pid != 0) is
/// the whole struct. fmt 0, the oldest, had no `time`: the message starts where `time`
/// is (perf_event__fprintf_auxtrace_error: `if (!e->fmt) msg = (const char *)&e->time;`).
#[test]
fn auxtrace_error_formats() {
    let ctx = Ctx::default();
    for (fmt, msg) in [
        (0u32, "old decoder error"),
        (1, "Lost trace data"),
        (1, "bad packet"),
        (2, "guest: overflow packet"),
    ] {
        let (le, be) = both(|b| {
            b.u32(1) // PERF_AUXTRACE_ERROR_ITRACE
                .u32(6)
                .u32(3)
                .u32(500)
                .u32(501)
                .u32(fmt)
                .u64(0xffff_ffff_8100_abcd);
            if fmt >= 1 {
                b.u64(0x0000_1234_5678_9abc);
            }
            if fmt == 2 {
                b.fixed_str(msg, 64).u32(7777).u32(3);
            } else {
                // + 8 for the header: pad the whole record to 8
                b.bytes(msg.as_bytes()).u8(0).pad_to(8);
            }
        });
        let RecordBody::AuxtraceError(x) = record(RecordType::AUXTRACE_ERROR, &le, &be, &ctx)
        else {
            panic!()
        };
        assert_eq!((x.type_, x.code, x.cpu, x.pid, x.tid), (1, 6, 3, 500, 501));
        assert_eq!(x.fmt, fmt);
        assert_eq!(x.ip, 0xffff_ffff_8100_abcd);
        assert_eq!(x.time, (fmt >= 1).then_some(0x0000_1234_5678_9abc));
        assert_eq!(x.msg.text(), msg.as_bytes());
        assert_eq!(x.machine_pid, (fmt == 2).then_some(7777));
        assert_eq!(x.vcpu, (fmt == 2).then_some(3));
    }
}

/// PERF_RECORD_TIME_CONV (79), event.h: `u64 time_shift, time_mult, time_zero, time_cycles,
/// time_mask; u8 cap_user_time_zero; u8 cap_user_time_short; u8 reserved[6];`
/// (header.size = sizeof = 56); files of perf < 5.10 end after time_zero (header.size 32).
#[test]
fn time_conv_short_and_long() {
    let ctx = Ctx::default();
    for long in [false, true] {
        let (le, be) = both(|b| {
            b.u64(31).u64(0x3d09_0000).u64(0x0001_0203_0405_0607);
            if long {
                b.u64(0x00ff_eedd_ccbb)
                    .u64(0x00ff_ffff_ffff_ffff)
                    .u8(1)
                    .u8(1)
                    .zeros(6);
            }
        });
        assert_eq!(le.len() + 8, if long { 56 } else { 32 });
        let RecordBody::TimeConv(x) = record(RecordType::TIME_CONV, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(
            (x.time_shift, x.time_mult, x.time_zero),
            (31, 0x3d09_0000, 0x0001_0203_0405_0607)
        );
        assert_eq!(x.time_cycles, long.then_some(0x00ff_eedd_ccbb));
        assert_eq!(x.time_mask, long.then_some(0x00ff_ffff_ffff_ffff));
        assert_eq!(x.cap_user_time_zero, long.then_some(1));
        assert_eq!(x.cap_user_time_short, long.then_some(1));
        assert_eq!(
            x.reserved.as_ref().map(|r| r.to_vec()),
            long.then(|| vec![0; 6])
        );
    }
}

/// PERF_RECORD_CPU_MAP (74), event.h: `struct perf_record_cpu_map_data` is `__packed`:
/// `u16 type; union { cpu_map_entries { u16 nr; u16 cpu[]; };
/// perf_record_mask_cpu_map32 { u16 nr; u16 long_size (4); u32 mask[]; };
/// perf_record_mask_cpu_map64 { u16 nr; u16 long_size (8); char __pad[4]; u64 mask[]; };
/// perf_record_range_cpu_map { u8 any_cpu; u8 __pad; u16 start_cpu; u16 end_cpu; }; }`.
/// synthetic-events.c `cpu_map_data__alloc()` sizes the record `PERF_ALIGN(size, 8)`.
#[test]
fn cpu_map_every_encoding() {
    let ctx = Ctx::default();

    // CPUS: 0, 5 and the "any CPU" -1 (as u16).
    let (le, be) = both(|b| {
        b.u16(0).u16(3).u16(0).u16(5).u16(0xffff).pad_to(8);
    });
    assert_eq!(le.len(), 16);
    let RecordBody::CpuMap(x) = record(RecordType::CPU_MAP, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.data.type_, CpuMapType::CPUS);
    let CpuMapEncoding::Cpus(c) = &x.data.data else {
        panic!("{:?}", x.data)
    };
    assert_eq!(c.cpus.to_vec(), vec![0, 5, 0xffff]);

    // MASK with 32-bit words: the words start at byte 6, unaligned (packed struct).
    let (le, be) = both(|b| {
        b.u16(1)
            .u16(2)
            .u16(4)
            .u32(0x8000_0001)
            .u32(0x0000_0003)
            .pad_to(8);
    });
    assert_eq!(le.len(), 16);
    let RecordBody::CpuMap(x) = record(RecordType::CPU_MAP, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.data.type_, CpuMapType::MASK);
    let CpuMapEncoding::Mask(m) = &x.data.data else {
        panic!("{:?}", x.data)
    };
    assert_eq!((m.nr, m.long_size), (2, 4));
    let CpuMapMaskWords::Mask32(w) = &m.words else {
        panic!("{:?}", m.words)
    };
    assert_eq!(w.mask.to_vec(), vec![0x8000_0001, 0x0000_0003]);

    // MASK with 64-bit words: 4 legacy pad bytes, then the words at byte 10.
    let (le, be) = both(|b| {
        b.u16(1)
            .u16(2)
            .u16(8)
            .zeros(4)
            .u64(0x0123_4567_89ab_cdef)
            .u64(0x8000_0000_0000_0001)
            .pad_to(8);
    });
    assert_eq!(le.len(), 32);
    let RecordBody::CpuMap(x) = record(RecordType::CPU_MAP, &le, &be, &ctx) else {
        panic!()
    };
    let CpuMapEncoding::Mask(m) = &x.data.data else {
        panic!("{:?}", x.data)
    };
    assert_eq!((m.nr, m.long_size), (2, 8));
    let CpuMapMaskWords::Mask64(w) = &m.words else {
        panic!("{:?}", m.words)
    };
    assert_eq!(w.pad, 0);
    assert_eq!(
        w.mask.to_vec(),
        vec![0x0123_4567_89ab_cdef, 0x8000_0000_0000_0001]
    );

    // RANGE_CPUS: 2..=7 plus "any CPU"; exactly 8 bytes (perf asserts
    // sizeof(u16) + sizeof(struct perf_record_range_cpu_map) == sizeof(u64)).
    let (le, be) = both(|b| {
        b.u16(2).u8(1).u8(0).u16(2).u16(7);
    });
    assert_eq!(le.len(), 8);
    let RecordBody::CpuMap(x) = record(RecordType::CPU_MAP, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.data.type_, CpuMapType::RANGE_CPUS);
    let CpuMapEncoding::Range(r) = &x.data.data else {
        panic!("{:?}", x.data)
    };
    assert_eq!((r.any_cpu, r.pad, r.start_cpu, r.end_cpu), (1, 0, 2, 7));
}

/// PERF_RECORD_BPF_METADATA (84), event.h: `char prog_name[BPF_PROG_NAME_LEN
/// (= KSYM_NAME_LEN = 512)]; u64 nr_entries; struct perf_record_bpf_metadata_entry
/// { char key[64]; char value[256]; } entries[];`. bpf-event.c
/// `synthesize_perf_record_bpf_metadata()` then appends `machine->id_hdr_size` zero bytes:
/// `memset((void *)event + event->header.size, 0, machine->id_hdr_size);
/// event->header.size += machine->id_hdr_size;` — the zeroed sample_id slot perf gives all
/// its synthesized records (KSYMBOL, BPF_EVENT the same way); `evlist__id_hdr_size()` is the
/// `evsel__id_hdr_size()` of the first event when it has `sample_id_all`, else 0.
#[test]
fn bpf_metadata_with_perf_id_hdr_padding() {
    let st = id_bits();
    for ctx in [sid_ctx(st), Ctx::default()] {
        let id_hdr_size = if ctx.sample_id_all { 40 } else { 0 };
        let (le, be) = both(|b| {
            b.fixed_str("bpf_prog_0123456789abcdef_sample_filter", 512)
                .u64(2)
                .fixed_str("bpf_metadata_test_value", 64)
                .fixed_str("42", 256)
                .fixed_str("bpf_metadata_owner", 64)
                .fixed_str("\"perf\"", 256)
                .zeros(id_hdr_size);
        });
        assert_eq!(le.len(), 512 + 8 + 2 * 320 + id_hdr_size);
        let RecordBody::BpfMetadata(x) = record(RecordType::BPF_METADATA, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(
            x.prog_name.text(),
            b"bpf_prog_0123456789abcdef_sample_filter"
        );
        assert_eq!(x.prog_name.len(), 512);
        let kv: Vec<_> = x
            .entries
            .iter()
            .map(|e| {
                (
                    e.key.to_str_lossy().into_owned(),
                    e.value.to_str_lossy().into_owned(),
                )
            })
            .collect();
        assert_eq!(
            kv,
            vec![
                ("bpf_metadata_test_value".into(), "42".into()),
                ("bpf_metadata_owner".into(), "\"perf\"".into())
            ]
        );
        assert!(x
            .entries
            .iter()
            .all(|e| e.key.len() == 64 && e.value.len() == 256));
        if ctx.sample_id_all {
            let s = x.sample_id.as_ref().expect("the id_hdr_size slot");
            assert_eq!(
                (s.pid, s.tid, s.time, s.id, s.cpu, s.identifier),
                (Some(0), Some(0), Some(0), Some(0), Some(0), Some(0))
            );
        } else {
            assert!(x.sample_id.is_none());
        }
    }
}

/// `CPU_FIELD`s of schedstat-v15.h / -v16.h / -v17.h (identical): u32 yld_count, array_exp,
/// sched_count, sched_goidle, ttwu_count, ttwu_local; u64 rq_cpu_time, run_delay, pcount.
fn push_schedstat_cpu_fields(b: &mut B) {
    for i in 0..6u32 {
        b.u32(0x0c00 + i);
    }
    for i in 0..3u64 {
        b.u64(0x0c00_0000_0000 + i);
    }
}

/// PERF_RECORD_SCHEDSTAT_CPU (85), event.h: `struct perf_record_schedstat_cpu { header;
/// u64 timestamp; u32 cpu; u16 version; char __pad[2]; union { v15; v16; v17; }; }`,
/// written with `header.size = PERF_ALIGN(sizeof(struct), sizeof(u64))` = 72
/// (synthetic-events.c `__synthesize_schedstat_cpu()`).
#[test]
fn schedstat_cpu_versions() {
    let ctx = Ctx::default();
    for version in [15u16, 16, 17] {
        let (le, be) = both(|b| {
            b.u64(0x0000_0001_0000_4000).u32(7).u16(version).zeros(2);
            push_schedstat_cpu_fields(b);
        });
        assert_eq!(le.len() + 8, 72);
        let RecordBody::SchedstatCpu(x) = record(RecordType::SCHEDSTAT_CPU, &le, &be, &ctx) else {
            panic!()
        };
        assert_eq!(
            (x.timestamp, x.cpu, x.version, x.pad),
            (0x0000_0001_0000_4000, 7, version, 0)
        );
        let f = match &x.stats {
            SchedstatCpuStats::V15(f) => {
                assert_eq!(version, 15);
                f
            }
            SchedstatCpuStats::V16(f) => {
                assert_eq!(version, 16);
                f
            }
            SchedstatCpuStats::V17(f) => {
                assert_eq!(version, 17);
                f
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            [
                f.yld_count,
                f.array_exp,
                f.sched_count,
                f.sched_goidle,
                f.ttwu_count,
                f.ttwu_local
            ],
            [0x0c00, 0x0c01, 0x0c02, 0x0c03, 0x0c04, 0x0c05]
        );
        assert_eq!(
            [f.rq_cpu_time, f.run_delay, f.pcount],
            [0x0c00_0000_0000, 0x0c00_0000_0001, 0x0c00_0000_0002]
        );
    }
}

fn lb(base: u32) -> [u32; 8] {
    std::array::from_fn(|i| base + i as u32)
}

fn check_lb(l: &SchedstatLb, base: u32) {
    assert_eq!(
        [
            l.lb_count,
            l.lb_balanced,
            l.lb_failed,
            l.lb_imbalance,
            l.lb_gained,
            l.lb_hot_gained,
            l.lb_nobusyq,
            l.lb_nobusyg
        ],
        lb(base)
    );
}

fn check_lb17(l: &SchedstatLbV17, base: u32) {
    let want: [u32; 11] = std::array::from_fn(|i| base + i as u32);
    assert_eq!(
        [
            l.lb_count,
            l.lb_balanced,
            l.lb_failed,
            l.lb_imbalance_load,
            l.lb_imbalance_util,
            l.lb_imbalance_task,
            l.lb_imbalance_misfit,
            l.lb_gained,
            l.lb_hot_gained,
            l.lb_nobusyq,
            l.lb_nobusyg
        ],
        want
    );
}

fn check_domain_tail(t: &SchedstatDomainTail) {
    let want: [u32; 12] = std::array::from_fn(|i| 0xa000 + i as u32);
    assert_eq!(
        [
            t.alb_count,
            t.alb_failed,
            t.alb_pushed,
            t.sbe_count,
            t.sbe_balanced,
            t.sbe_pushed,
            t.sbf_count,
            t.sbf_balanced,
            t.sbf_pushed,
            t.ttwu_wake_remote,
            t.ttwu_move_affine,
            t.ttwu_move_balance
        ],
        want
    );
}

/// PERF_RECORD_SCHEDSTAT_DOMAIN (86), event.h: `struct perf_record_schedstat_domain {
/// header; u64 timestamp; u32 cpu; u16 version; u16 domain; union { v15; v16; v17; }; }`
/// with the `DOMAIN_FIELD`s of schedstat-v15.h (categories idle, busy, newidle: 8 x u32
/// each), -v16.h (busy, idle, newidle), -v17.h (busy, idle, newidle: 11 x u32 each, the
/// imbalance split into load/util/task/misfit), then alb_*, sbe_*, sbf_*, ttwu_* (12 x u32).
/// `__synthesize_schedstat_domain()` writes `PERF_ALIGN(sizeof(struct), 8)` = 208 bytes
/// for every version: the union is as large as v17 (180 bytes), so v15/v16 records end
/// with 40 zero bytes and v17 records with the 4 bytes of struct padding.
#[test]
fn schedstat_domain_versions() {
    let ctx = Ctx::default();
    for version in [15u16, 16, 17] {
        let (le, be) = both(|b| {
            b.u64(0x0000_0001_0000_5000).u32(3).u16(version).u16(2);
            let per_cat = if version == 17 { 11 } else { 8 };
            // categories in file order, with values telling which one they are
            let bases: [u32; 3] = if version == 15 {
                [0x1d00, 0xb500, 0x3e00] // idle, busy, newidle
            } else {
                [0xb500, 0x1d00, 0x3e00] // busy, idle, newidle
            };
            for base in bases {
                for i in 0..per_cat {
                    b.u32(base + i);
                }
            }
            for i in 0..12 {
                b.u32(0xa000 + i);
            }
            b.pad_to(200); // to header.size 208
        });
        assert_eq!(le.len() + 8, 208);
        let RecordBody::SchedstatDomain(x) = record(RecordType::SCHEDSTAT_DOMAIN, &le, &be, &ctx)
        else {
            panic!()
        };
        assert_eq!(
            (x.timestamp, x.cpu, x.version, x.domain),
            (0x0000_0001_0000_5000, 3, version, 2)
        );
        let rest = if version == 17 { 4 } else { 40 };
        assert_eq!(x.union_rest.as_slice(), &vec![0; rest][..], "union_rest");
        match &x.stats {
            SchedstatDomainStats::V15(d) => {
                assert_eq!(version, 15);
                check_lb(&d.idle, 0x1d00);
                check_lb(&d.busy, 0xb500);
                check_lb(&d.newidle, 0x3e00);
                check_domain_tail(&d.other);
            }
            SchedstatDomainStats::V16(d) => {
                assert_eq!(version, 16);
                check_lb(&d.busy, 0xb500);
                check_lb(&d.idle, 0x1d00);
                check_lb(&d.newidle, 0x3e00);
                check_domain_tail(&d.other);
            }
            SchedstatDomainStats::V17(d) => {
                assert_eq!(version, 17);
                check_lb17(&d.busy, 0xb500);
                check_lb17(&d.idle, 0x1d00);
                check_lb17(&d.newidle, 0x3e00);
                check_domain_tail(&d.other);
            }
            other => panic!("{other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Header features
// ---------------------------------------------------------------------------------------

/// HEADER_AUXTRACE (18), auxtrace.c `auxtrace_index__write()`: `u64 total`, then per entry
/// `struct auxtrace_index_entry { u64 file_offset; u64 sz; }`.
#[test]
fn feature_auxtrace_index() {
    let ctx = Ctx::default();
    let (le, be) = both(|b| {
        b.u64(2).u64(0x1_0000).u64(48).u64(0x2_4030).u64(48);
    });
    let FeatureBody::AuxtraceFeature(x) = feature(FeatureId::AUXTRACE, &le, &be, &ctx) else {
        panic!()
    };
    assert!(x.simpleperf.is_none(), "{x:?}");
    let x = x.perf.expect("perf's layout");
    let e: Vec<_> = x.entries.iter().map(|e| (e.file_offset, e.sz)).collect();
    assert_eq!(e, vec![(0x1_0000, 48), (0x2_4030, 48)]);
}

/// HEADER_AUXTRACE (18) as simpleperf writes it (AOSP record_file_writer.cpp
/// `WriteAuxTraceFeature`): per AUXTRACE record its file offset and
/// `AuxTraceRecord::Size()` (48), and no count before them. Read as perf's layout the
/// first offset was a count ("element count … is too large").
#[test]
fn feature_auxtrace_index_as_simpleperf_writes_it() {
    let ctx = Ctx::default();
    let (le, be) = both(|b| {
        b.u64(0x1_0000)
            .u64(48)
            .u64(0x2_4030)
            .u64(48)
            .u64(0x3_8000)
            .u64(48);
    });
    let FeatureBody::AuxtraceFeature(x) = feature(FeatureId::AUXTRACE, &le, &be, &ctx) else {
        panic!()
    };
    assert!(x.perf.is_none(), "{x:?}");
    let x = x.simpleperf.expect("simpleperf's layout");
    let e: Vec<_> = x.entries.iter().map(|e| (e.file_offset, e.sz)).collect();
    assert_eq!(e, vec![(0x1_0000, 48), (0x2_4030, 48), (0x3_8000, 48)]);
}

/// HEADER_BRANCH_STACK (15): header.c `write_branch_stack()` writes nothing (a flag only).
#[test]
fn feature_branch_stack_is_empty() {
    let ctx = Ctx::default();
    let FeatureBody::BranchStack(x) = feature(FeatureId::BRANCH_STACK, &[], &[], &ctx) else {
        panic!()
    };
    assert!(x.tail.is_none());
}

/// HEADER_DIR_FORMAT (24), header.c `write_dir_format()`: `u64 data->dir.version`.
#[test]
fn feature_dir_format() {
    let ctx = Ctx::default();
    let (le, be) = both(|b| {
        b.u64(1);
    });
    let FeatureBody::DirFormat(x) = feature(FeatureId::DIR_FORMAT, &le, &be, &ctx) else {
        panic!()
    };
    assert_eq!(x.version, 1);
}

/// HEADER_HYBRID_TOPOLOGY (30), header.c `write_hybrid_topology()`: `u32 nr`, then per
/// node `do_write_string(pmu_name)`, `do_write_string(cpus)`.
#[test]
fn feature_hybrid_topology() {
    let ctx = Ctx::default();
    let (le, be) = both(|b| {
        b.u32(2)
            .perf_str("cpu_core")
            .perf_str("0-15")
            .perf_str("cpu_atom")
            .perf_str("16-23");
    });
    let FeatureBody::HybridTopology(x) = feature(FeatureId::HYBRID_TOPOLOGY, &le, &be, &ctx) else {
        panic!()
    };
    let n: Vec<_> = x
        .nodes
        .iter()
        .map(|n| {
            (
                n.pmu_name.text.to_str_lossy().into_owned(),
                n.cpus.text.to_str_lossy().into_owned(),
            )
        })
        .collect();
    assert_eq!(
        n,
        vec![
            ("cpu_core".into(), "0-15".into()),
            ("cpu_atom".into(), "16-23".into())
        ]
    );
}

/// HEADER_CPU_DOMAIN_INFO (32), header.c `write_cpu_domain_info()`: `u32 schedstat_version;
/// u32 max_sched_domains` (max index + 1), then per CPU in /proc/schedstat `u32 cpu;
/// u32 nr_domains;` and per domain `u32 domain; [string dname if schedstat_version >= 17];
/// string cpumask; string cpulist`. `process_cpu_domain_info()` reads `nr_cpus_online`
/// CPUs.
#[test]
fn feature_cpu_domain_info_v16_and_v17() {
    let ctx = Ctx {
        nr_cpus_avail: 4,
        nr_cpus_online: 2,
        ..Ctx::default()
    };
    let domains = [
        (0u32, "SMT", "00000003", "0-1"),
        (1, "MC", "0000000f", "0-3"),
    ];
    for version in [15u32, 16, 17] {
        let (le, be) = both(|b| {
            b.u32(version).u32(2);
            for cpu in [0u32, 2] {
                b.u32(cpu).u32(2);
                for (d, name, mask, list) in domains {
                    b.u32(d);
                    if version >= 17 {
                        b.perf_str(name);
                    }
                    b.perf_str(mask).perf_str(list);
                }
            }
        });
        let FeatureBody::CpuDomainInfo(x) = feature(FeatureId::CPU_DOMAIN_INFO, &le, &be, &ctx)
        else {
            panic!()
        };
        assert_eq!((x.schedstat_version, x.max_sched_domains), (version, 2));
        assert_eq!(x.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(), vec![0, 2]);
        for c in &x.cpus {
            assert_eq!(c.domains.len(), 2);
            for (d, (n, name, mask, list)) in c.domains.iter().zip(domains) {
                assert_eq!(d.domain, n);
                assert_eq!(
                    d.dname.as_ref().map(|s| s.text.to_str_lossy().into_owned()),
                    (version >= 17).then(|| name.to_string())
                );
                assert_eq!(d.cpumask.text.text(), mask.as_bytes());
                assert_eq!(d.cpulist.text.text(), list.as_bytes());
            }
        }
    }
}

/// HEADER_CPU_TOPOLOGY (13), header.c `write_cpu_topology()`: `u32 nr` + package (core
/// siblings) cpu-list strings, `u32 nr` + core (thread siblings) strings; then
/// `{ u32 core_id; u32 socket_id; }[nr_cpus_avail]`; then, when the host has dies (and
/// always since "perf header: Write die_cpus_lists even if empty"), `u32 nr` + die
/// strings and `u32 die_id[nr_cpus_avail]`. `process_cpu_topology()` reads each later
/// block only `if (ff->size > size read so far)`: files of older perf lack them.
#[test]
fn feature_cpu_topology_without_and_with_dies() {
    let ctx = Ctx {
        nr_cpus_avail: 4,
        nr_cpus_online: 4,
        ..Ctx::default()
    };
    // 0: strings only (oldest); 1: + per-CPU ids; 2: + dies; 3: + an empty die list
    for blocks in 0..4 {
        let (le, be) = both(|b| {
            b.u32(1).perf_str("0-3");
            b.u32(2).perf_str("0,2").perf_str("1,3");
            if blocks >= 1 {
                for cpu in 0..4u32 {
                    b.u32(cpu % 2).u32(0x50c + cpu / 2); // core_id, socket_id
                }
            }
            if blocks == 2 {
                b.u32(2).perf_str("0-1").perf_str("2-3");
                for cpu in 0..4u32 {
                    b.u32(0xd1e0 + cpu / 2);
                }
            }
            if blocks == 3 {
                b.u32(0);
                for _ in 0..4 {
                    b.u32(0);
                }
            }
        });
        let FeatureBody::CpuTopology(x) = feature(FeatureId::CPU_TOPOLOGY, &le, &be, &ctx) else {
            panic!()
        };
        let s = |v: &Vec<PerfString<'_>>| {
            v.iter()
                .map(|p| p.text.to_str_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(s(&x.package_cpus), vec!["0-3"]);
        assert_eq!(s(&x.core_cpus), vec!["0,2", "1,3"]);
        let ids = x.cpus.as_ref().map(|a| {
            a.iter()
                .map(|c| (c.core_id, c.socket_id))
                .collect::<Vec<_>>()
        });
        assert_eq!(
            ids,
            (blocks >= 1).then(|| vec![(0, 0x50c), (1, 0x50c), (0, 0x50d), (1, 0x50d)])
        );
        match (&x.dies, blocks) {
            (None, 0 | 1) => {}
            (Some(d), 2) => {
                assert_eq!(s(&d.die_cpus), vec!["0-1", "2-3"]);
                assert_eq!(d.die_ids.to_vec(), vec![0xd1e0, 0xd1e0, 0xd1e1, 0xd1e1]);
            }
            (Some(d), 3) => {
                assert!(d.die_cpus.is_empty());
                assert_eq!(d.die_ids.to_vec(), vec![0; 4]);
            }
            (d, n) => panic!("blocks {n}: dies {d:?}"),
        }
    }
}
