//! Snapshots of the generated Rust for small specs, one group of constructs each. Review a
//! changed snapshot as you would review the code (`cargo insta review`, or
//! `INSTA_UPDATE=always` then read the diff).

fn generate(spec_text: &str) -> String {
    let spec = match spec::load_sources("snap", &[("snap.pds".to_string(), spec_text.to_string())])
    {
        Ok(s) => s,
        Err(d) => panic!("spec does not load:\n{d}"),
    };
    codegen::generate_rust(&spec, "snap.pds").expect("rustfmt formats the generated code")
}

#[test]
fn enums_flags_bitfields_context() {
    insta::assert_snapshot!(generate(
        r#"
/// A magic number.
const MAGIC: u64 = 0x32454c4946524550
/// Record kinds.
enum Kind: u16 {
  /// the first
  A = 1
  B = 2
  /// an alias of B
  B2 = 2
}
/// Negative markers.
enum Marker: u64 { HV = -32 }
/// Sample bits.
flags Bits: u64 {
  /// bit zero
  IP = 0
  TID = 1
  HIGH = 40
}
/// With a range.
flags Misc: u16 { CPUMODE = 0..2, EXEC = 13 }
/// A C bit-field word.
bitfield Word: u32 {
  /// one bit
  on: 1
  /// two bits
  level: 2
  type: 5
  rest: 24
}
/// Supplied by the caller.
context {
  /// which fields
  bits: Bits
  with_trailer: bool
  nr: u32
}
"#
    ));
}

#[test]
fn record_with_trailer_payload_and_padding() {
    insta::assert_snapshot!(generate(
        r#"
context {
  bits: Bits
  sample_id_all: bool
}
flags Bits: u64 { TID = 1, TIME = 2 }
/// Read from the end.
struct SampleId {
  pid: u32 if ctx.bits has TID
  time: u64 if ctx.bits has TIME
}
/// A mapping.
record Mmap = 1 trailer SampleId if ctx.sample_id_all {
  /// process id
  pid: u32
  /// NUL-terminated
  filename: cstr
}
/// Data follows the record.
record Tracing = 66 pad_to 8 {
  /// bytes of data
  size: u32 = len(data)
  /// the data
  payload data: bytes[size]
}
"#
    ));
}

#[test]
fn computed_bounded_within_switch_rest_feature() {
    insta::assert_snapshot!(generate(
        r#"
context {
  misc: Misc
  mask: u64
}
flags Misc: u16 { BUILD_ID = 14 }
/// Fixed-size element.
struct Pair { a: u32, b: u32 }
/// A parameter and a popcount.
struct Regs(mask: u64) {
  abi: u64
  regs: [u64; popcount(mask)] if abi != 0
}
/// Self-delimiting.
struct Attr bounded_by max(size, 16) {
  type: u32
  size: u32 = sizeof(self)
  config: u64
  extra: u64 if remaining >= 8
}
/// Text with its length.
struct Name {
  len: u32 = len(text)
  text: str[len]
}
/// Every field kind.
record Many = 10 {
  nr: u64 = count(pairs)
  pairs: [Pair; nr]
  names: [Name; nr]
  regs: Regs(ctx.mask) within 16
  len: u16 = sizeof(attr)
  attr: Attr within len
  file: switch ctx.misc has BUILD_ID as FileId {
    false => Inode: Pair
    true => BuildId: bytes[20]
  }
  kind: u8
  value: switch kind {
    1 => One: u32
    _ => Other: bytes[..]
  }
}
/// The rest of the body.
record Rest = 11 {
  attr: Attr
  ids: [u64; ..]
  names: [Name; ..]
  text: str[..]
}
/// A feature by id.
record HeaderFeature = 80 {
  feat_id: u64
  data: feature(feat_id)
}
/// A host name.
feature Hostname = 3 { value: Name }
/// CPU counts.
feature NrCpus = 7 { avail: u32, online: u32 }
"#
    ));
}

#[test]
fn run_time_sized_words() {
    insta::assert_snapshot!(generate(
        r#"
context {
  /// the producer's word size: 4 or 8
  word_size: u8
}
/// A count-prefixed stack of words.
struct Stack {
  count: word[ctx.word_size]
  n: word[ctx.word_size] = count(pcs)
  pcs: [word[ctx.word_size]; n]
  more: word[ctx.word_size] if count > 1
}
/// A parameter size and a size patched after the body.
struct Sized(ws: u8) bounded_by size {
  size: word[ws] = sizeof(self)
  v: word[8]
}
"#
    ));
}

#[test]
fn split_integers() {
    insta::assert_snapshot!(generate(
        r#"
/// simpleperf's record header: a 32-bit size over two 16-bit halves.
struct SplitHeader {
  type: u32
  size: split[u16, u16]
}
/// A split used as a length, in a condition, conditional itself and in an array.
struct Uses {
  wide: split[u32, u32]
  n: split[u8, u8]
  data: bytes[n]
  more: split[u16, u16] if wide > 0xffff_ffff
  all: [split[u16, u16]; n]
}
/// A split in a trailer.
struct Ident { id: split[u16, u16] }
record R = 1 trailer Ident { x: u32 }
"#
    ));
}

#[test]
fn display_attributes_spec_names_and_single_values() {
    insta::assert_snapshot!(generate(
        r#"
enum Marker: u64 { KERNEL = -128 }
bitfield Flags: u8 { freq: 1, rest: 7 }
struct Attr {
  @name_by(bits.freq, sample_freq, sample_period) period: u64
  @hex id: u64 if period > 0
  bits: Flags
  @text note: bytes[2]
}
struct Text {
  len: u32 = len(text)
  text: str[len]
}
record Sample = 9 {
  @hex ip: u64
  @signed pid: u32
  @hex(Marker, PERF_CONTEXT_) ips: [u64; 2]
  type: u32
  @text note: bytes[2]
}
feature Hostname = 3 { value: Text }
"#
    ));
}
