//! Rust names derived from spec names.

use codegen::names::{screaming_snake, snake};
use codegen::rust::rust_name;

#[test]
fn record_and_feature_constants() {
    for (name, want) in [
        ("Mmap2", "MMAP2"),
        ("HeaderAttr", "HEADER_ATTR"),
        ("SwitchCpuWide", "SWITCH_CPU_WIDE"),
        ("AuxOutputHwId", "AUX_OUTPUT_HW_ID"),
        ("Nrcpus", "NRCPUS"),
        ("CPUTopology", "CPU_TOPOLOGY"),
        ("Compressed2", "COMPRESSED2"),
    ] {
        assert_eq!(screaming_snake(name), want);
    }
}

#[test]
fn trailer_fields_and_keywords() {
    assert_eq!(snake("SampleId"), "sample_id");
    assert_eq!(snake("Sched2Stat"), "sched2_stat");
    assert_eq!(rust_name("type"), "type_");
    assert_eq!(rust_name("priv"), "priv_");
    assert_eq!(rust_name("pid"), "pid");
}

/// Spec names that are Rust keywords or words of the spec language (a kernel struct as
/// written: `flags`, `type`, `struct`…) give valid Rust: Rust keywords take a trailing `_`
/// and keep their spec name in serialized output.
#[test]
fn keyword_names_generate_valid_rust() {
    let text = r#"
enum Kind: u8 { struct = 1, enum = 2, if = 3, flags = 4 }
flags Bits: u32 { struct = 0, if = 1, record = 2, has = 3 }
bitfield Word: u32 { type: 1, flags: 1, if: 1, struct: 1, rest: 28 }
context {
  flags: Bits
  struct: u32 from Rec.struct
  if: bool from Rec.word.if
  enum: Kind
}
struct Inner(len: u32, if: u32) { data: bytes[len], more: [u8; if] }
record Rec = 1 {
  flags: Bits
  struct: u32
  enum: Kind
  len: u32 = len(bytes)
  count: u32 = count(if)
  bytes: bytes[len]
  if: [u32; count]
  @hex type: u64 if flags has struct
  has: u32 if ctx.flags has if
  within: u32 within 4
  payload: u32
  word: Word
  switch: u32
  as: switch switch { 1 => One: u32, _ => Other: bytes[..] }
  const: Inner(struct, switch)
  payload data: bytes[struct]
}
"#;
    let spec = match spec::load_sources("kw", &[("kw.pds".to_string(), text.to_string())]) {
        Ok(s) => s,
        Err(d) => panic!("spec does not load:\n{d}"),
    };
    // `generate_rust` itself panics if the tokens do not parse; parse the formatted file too.
    let out = codegen::generate_rust(&spec, "kw.pds").expect("rustfmt formats it");
    syn::parse_file(&out).expect("generated code parses");
    for want in [
        "pub struct_: u32,",
        "#[serde(rename = \"struct\")]",
        "pub enum_: Kind,",
        "pub if_: rt::Array<'a, u32>,",
        "pub type_: Option<u64>,",
        "pub flags: Bits,",
        "pub has: Option<u32>,",
        "pub as_: RecAs<'a>,",
        "pub const_: Inner<'a>,",
        "pub const struct_: Self",
        "pub fn if_(self)",
        "pub fn set_if(",
        "self.if_ = v.word.if_();",
        "ctx.flags.contains(Bits::if_)",
    ] {
        assert!(
            out.contains(want),
            "`{want}` missing from the generated code"
        );
    }
}
