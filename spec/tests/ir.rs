//! A spec using every construct of SYNTAX.md loads into the expected IR.

use spec::ir::*;

const COMMON: &str = r#"
// Plain comment: ignored.
/// The magic.
/// Second doc line.
const MAGIC: u64 = 0x32454c4946524550
const MINUS_ONE: i32 = -1
const BIG_MINUS: u16 = -1

/// Where a callchain entry comes from.
enum CallchainContext: u64 {
  /// Hypervisor.
  HV = -32,
  KERNEL = -128
  USER = -512, MAX = 0xffff_ffff_ffff_f001
  ALIAS = -32
}

/// Sample fields.
flags SampleType: u64 {
  /// Instruction pointer.
  IP = 0
  TID = 1, TIME = 2, CALLCHAIN = 5
  REGS = 12
  HIGH = 63
}

flags RecordMisc: u16 { CPUMODE = 0..2, EXACT_IP = 14 }

/// The attr flags word.
bitfield AttrFlags: u64 {
  /// Off by default.
  disabled: 1
  inherit: 1, precise_ip: 2
  reserved: 60
}

/// Run-time values.
context {
  /// What the samples hold.
  sample_type: SampleType
  sample_id_all: bool
  nr_cpus_avail: u32
  mode: CallchainContext
}
"#;

const STRUCTS: &str = r#"
/// Registers selected by a mask.
struct Regs(mask: u64) {
  abi: u64
  regs: [u64; popcount(mask)] if abi != 0
}

struct SampleId {
  /// Process id.
  @signed pid: u32 if ctx.sample_type has TID
  time: u64 if ctx.sample_type has TIME
  @hex fixed: [u32; 2]
  @hex(CallchainContext, PERF_CONTEXT_) ips: [u64; 2]
}

/// A self-delimiting struct.
struct Attr bounded_by max(size, 64) pad_to 8 {
  type: u32
  size: u32 = sizeof(self)
  attr_flags: AttrFlags
  extra: u64 if remaining >= 8
}

struct Text {
  len: u32 = len(text)
  text: str[len]
  whole: u32 = sizeof(text)
}

struct Sizes {
  nr: u32 = count(ids)
  ids: [u64; nr]
  counters: [u64; nr]
  nbytes: u16 = len(blob) + 4
  blob: bytes[nbytes - 4]
}

record Mmap = 1 trailer SampleId if ctx.sample_id_all pad_to 8 {
  misc: RecordMisc
  pid: u32, tid: u32
  /// The file.
  filename: cstr
  rest: str[..]
}

record Sample = 9 {
  st: SampleType
  regs: Regs(ctx.sample_type) if st has REGS && ctx.nr_cpus_avail > 1 || !(ctx.sample_type has IP)
  size: u32
  raw: bytes[align(size, 8) - min(size, 4) * 2 / 1] within size + 0
  mixed: u32 if (size & 3 | 1) == 1 && size != 2 && size < 3 && size <= 4 && size > 0 && size >= 0
  kind: u32
  body: switch kind as SampleBody {
    1 => One: u32
    -1 => MinusOne: [u8; ..]
    0x10 => Nested: switch size > 4 {
      true => Big: u64
      false => Small: u8
    }
    _ => Other: bytes[..]
  }
  small: i8
  by_small: switch small { -1 => Neg: u8, _ => Pos: u16 }
  feat_id: u32
  data: feature(feat_id)
  ctx_mode: switch ctx.mode { -128 => Kernel: u8, _ => Rest: u8 }
  /// Bytes after the record.
  payload aux: bytes[size]
}

record Aux = 11 {
  size: u64 = len(data)
  @text note: bytes[4]
  payload data: bytes[size]
}

/// The hostname.
feature Hostname = 3 pad_to 4 { value: Text }
feature Empty = 255 { }
"#;

fn load() -> Spec {
    let sources = vec![
        ("00_common.pds".to_string(), COMMON.to_string()),
        ("10_structs.pds".to_string(), STRUCTS.to_string()),
    ];
    match spec::load_sources("every_construct", &sources) {
        Ok(spec) => spec,
        Err(d) => panic!("unexpected diagnostics:\n{d}"),
    }
}

fn field<'s>(s: &'s StructDef, name: &str) -> &'s Field {
    s.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name} in {}", s.name))
}

#[test]
fn items_are_counted_and_named() {
    let spec = load();
    assert_eq!(spec.name, "every_construct");
    assert_eq!(spec.consts.len(), 3);
    assert_eq!(spec.enums.len(), 1);
    assert_eq!(spec.flags.len(), 2);
    assert_eq!(spec.bitfields.len(), 1);
    assert_eq!(spec.context.fields.len(), 4);
    assert_eq!(spec.records().count(), 3);
    assert_eq!(spec.features().count(), 2);
    assert_eq!(spec.structs.len(), 10);
}

#[test]
fn constants_and_negative_values_are_twos_complement() {
    let spec = load();
    assert_eq!(spec.consts[0].value, 0x32454c4946524550);
    assert_eq!(spec.consts[0].doc, "The magic.\nSecond doc line.");
    assert_eq!(spec.consts[1].ty, Prim::I32);
    assert_eq!(spec.consts[1].value, 0xffff_ffff);
    assert_eq!(spec.consts[2].value, 0xffff);
    let e = spec.find_enum("CallchainContext").unwrap();
    assert_eq!(e.repr, Prim::U64);
    let values: Vec<u64> = e.variants.iter().map(|v| v.value).collect();
    assert_eq!(
        values,
        [
            0xffff_ffff_ffff_ffe0,
            0xffff_ffff_ffff_ff80,
            0xffff_ffff_ffff_fe00,
            0xffff_ffff_ffff_f001,
            0xffff_ffff_ffff_ffe0,
        ]
    );
    assert_eq!(e.variants[0].doc, "Hypervisor.");
    assert_eq!(e.doc, "Where a callchain entry comes from.");
}

#[test]
fn flags_bits_and_masks() {
    let spec = load();
    let st = spec.find_flags("SampleType").unwrap();
    assert_eq!(st.bits[0].doc, "Instruction pointer.");
    let high = st.bits.iter().find(|b| b.name == "HIGH").unwrap();
    assert_eq!(high.mask(), 1 << 63);
    let misc = spec.find_flags("RecordMisc").unwrap();
    assert_eq!((misc.bits[0].lo, misc.bits[0].hi), (0, 2));
    assert_eq!(misc.bits[0].mask(), 0b111);
    assert_eq!(misc.repr, Prim::U16);
}

#[test]
fn bitfield_positions_are_cumulative() {
    let spec = load();
    let b = spec.find_bitfield("AttrFlags").unwrap();
    let layout: Vec<(&str, u8, u8)> = b
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.pos, m.width))
        .collect();
    assert_eq!(
        layout,
        [
            ("disabled", 0, 1),
            ("inherit", 1, 1),
            ("precise_ip", 2, 2),
            ("reserved", 4, 60)
        ]
    );
    assert_eq!(b.members[0].doc, "Off by default.");
}

#[test]
fn context_types() {
    let spec = load();
    let types: Vec<&ScalarType> = spec.context.fields.iter().map(|f| &f.ty).collect();
    assert_eq!(
        types,
        [
            &ScalarType::Flags("SampleType".into()),
            &ScalarType::Prim(Prim::Bool),
            &ScalarType::Prim(Prim::U32),
            &ScalarType::Enum("CallchainContext".into()),
        ]
    );
    assert_eq!(spec.context.fields[0].doc, "What the samples hold.");
}

#[test]
fn has_carries_flags_and_mask() {
    let spec = load();
    let sid = spec.find_struct("SampleId").unwrap();
    assert_eq!(
        field(sid, "time").cond,
        Some(Expr::Has {
            value: Box::new(Expr::Ctx("sample_type".into())),
            flags: "SampleType".into(),
            flag: "TIME".into(),
            mask: 4,
        })
    );
    let sample = spec.find_struct("Sample").unwrap();
    // `st has REGS && ctx... > 1 || !(...)`: `||` is the root, `has` binds tighter than `&&`.
    let Some(Expr::Binary(BinOp::Or, lhs, rhs)) = &field(sample, "regs").cond else {
        panic!("bad cond {:?}", field(sample, "regs").cond);
    };
    let Expr::Binary(BinOp::And, has, _) = &**lhs else {
        panic!("bad lhs {lhs:?}");
    };
    assert!(
        matches!(&**has, Expr::Has { value, mask: 4096, .. } if **value == Expr::Field("st".into()))
    );
    assert!(matches!(&**rhs, Expr::Not(_)));
}

#[test]
fn params_args_and_functions() {
    let spec = load();
    let regs = spec.find_struct("Regs").unwrap();
    assert_eq!(
        regs.params,
        [Param {
            name: "mask".into(),
            ty: ScalarType::Prim(Prim::U64)
        }]
    );
    assert_eq!(
        field(regs, "regs").ty,
        TypeRef::Array {
            elem: Box::new(TypeRef::Scalar(ScalarType::Prim(Prim::U64))),
            len: Len::Expr(Expr::Call(Func::Popcount, vec![Expr::Param("mask".into())])),
        }
    );
    assert_eq!(regs.doc, "Registers selected by a mask.");
    let sample = spec.find_struct("Sample").unwrap();
    assert_eq!(
        field(sample, "regs").ty,
        TypeRef::Struct {
            name: "Regs".into(),
            args: vec![Expr::Ctx("sample_type".into())]
        }
    );
    assert_eq!(
        field(sample, "raw").within,
        Some(Expr::Binary(
            BinOp::Add,
            Box::new(Expr::Field("size".into())),
            Box::new(Expr::Int(0))
        ))
    );
    // `a - b * c / d`: `*` and `/` bind tighter and associate to the left.
    let TypeRef::Bytes(Len::Expr(Expr::Binary(BinOp::Sub, _, product))) = &field(sample, "raw").ty
    else {
        panic!("bad raw type");
    };
    assert!(
        matches!(&**product, Expr::Binary(BinOp::Div, inner, _) if matches!(**inner, Expr::Binary(BinOp::Mul, _, _)))
    );
}

#[test]
fn computed_fields_and_rest_lengths() {
    let spec = load();
    let attr = spec.find_struct("Attr").unwrap();
    assert_eq!(field(attr, "size").computed, Some(Expr::SizeOfSelf));
    assert_eq!(
        attr.bounded_by,
        Some(Expr::Call(
            Func::Max,
            vec![Expr::Field("size".into()), Expr::Int(64)]
        ))
    );
    assert_eq!(attr.pad_to, Some(8));
    assert!(attr.is_bounded());
    assert_eq!(
        field(attr, "extra").cond,
        Some(Expr::Binary(
            BinOp::Ge,
            Box::new(Expr::Remaining),
            Box::new(Expr::Int(8))
        ))
    );
    let text = spec.find_struct("Text").unwrap();
    assert_eq!(
        field(text, "len").computed,
        Some(Expr::LenOf("text".into()))
    );
    assert_eq!(
        field(text, "whole").computed,
        Some(Expr::SizeOf("text".into()))
    );
    let sizes = spec.find_struct("Sizes").unwrap();
    assert_eq!(
        field(sizes, "nr").computed,
        Some(Expr::CountOf("ids".into()))
    );
    let mmap = spec.find_struct("Mmap").unwrap();
    assert_eq!(field(mmap, "rest").ty, TypeRef::Str(Len::Rest));
    assert_eq!(field(mmap, "filename").ty, TypeRef::CStr);
    assert_eq!(field(mmap, "filename").doc, "The file.");
    let sample = spec.find_struct("Sample").unwrap();
    let TypeRef::Switch(body) = &field(sample, "body").ty else {
        panic!("not a switch");
    };
    assert_eq!(
        body.arms[1].ty,
        TypeRef::Array {
            elem: Box::new(TypeRef::Scalar(ScalarType::Prim(Prim::U8))),
            len: Len::Rest
        }
    );
    assert_eq!(body.arms[3].ty, TypeRef::Bytes(Len::Rest));
}

#[test]
fn switches() {
    let spec = load();
    let sample = spec.find_struct("Sample").unwrap();
    let TypeRef::Switch(body) = &field(sample, "body").ty else {
        panic!("not a switch");
    };
    assert_eq!(body.enum_name, "SampleBody");
    let pats: Vec<Pattern> = body.arms.iter().map(|a| a.pat).collect();
    assert_eq!(
        pats,
        [
            Pattern::Int(1),
            // Two's complement in the width of `kind` (u32).
            Pattern::Int(0xffff_ffff),
            Pattern::Int(0x10),
            Pattern::Default
        ]
    );
    let TypeRef::Switch(nested) = &body.arms[2].ty else {
        panic!("not nested");
    };
    assert_eq!(nested.enum_name, "SampleBodyNested");
    assert_eq!(nested.arms[0].pat, Pattern::Bool(true));
    let TypeRef::Switch(by_small) = &field(sample, "by_small").ty else {
        panic!("not a switch");
    };
    assert_eq!(by_small.enum_name, "SampleBySmall");
    assert_eq!(by_small.arms[0].pat, Pattern::Int(0xff));
    let TypeRef::Switch(ctx_mode) = &field(sample, "ctx_mode").ty else {
        panic!("not a switch");
    };
    assert_eq!(ctx_mode.on, Expr::Ctx("mode".into()));
    assert_eq!(ctx_mode.arms[0].pat, Pattern::Int(0xffff_ffff_ffff_ff80));
    assert_eq!(
        field(sample, "data").ty,
        TypeRef::FeatureById(Expr::Field("feat_id".into()))
    );
}

#[test]
fn records_and_features() {
    let spec = load();
    let mmap = spec.find_struct("Mmap").unwrap();
    assert_eq!(
        mmap.kind,
        StructKind::Record {
            id: 1,
            trailer: Some(Trailer {
                ty: "SampleId".into(),
                cond: Some(Expr::Ctx("sample_id_all".into())),
            }),
        }
    );
    assert_eq!(mmap.pad_to, Some(8));
    assert_eq!(mmap.payload, None);
    let sample = spec.find_struct("Sample").unwrap();
    let payload = sample.payload.as_ref().unwrap();
    assert_eq!(payload.name, "aux");
    assert_eq!(payload.doc, "Bytes after the record.");
    assert_eq!(payload.len, Expr::Field("size".into()));
    let aux = spec.find_struct("Aux").unwrap();
    assert_eq!(
        field(aux, "size").computed,
        Some(Expr::LenOf("data".into()))
    );
    let hostname = spec.find_struct("Hostname").unwrap();
    assert_eq!(hostname.kind, StructKind::Feature { id: 3 });
    assert_eq!(hostname.pad_to, Some(4));
    assert_eq!(hostname.doc, "The hostname.");
    assert_eq!(
        spec.features().map(|(id, _)| id).collect::<Vec<_>>(),
        [3, 255]
    );
}

#[test]
fn display_attributes() {
    let spec = load();
    let id = spec.find_struct("SampleId").unwrap();
    assert_eq!(field(id, "pid").display, Some(Display::Signed));
    assert_eq!(field(id, "pid").doc, "Process id.");
    assert_eq!(field(id, "time").display, None);
    let aux = spec.find_struct("Aux").unwrap();
    assert_eq!(field(aux, "note").display, Some(Display::Text));
    assert_eq!(
        field(id, "fixed").display,
        Some(Display::Hex {
            names: None,
            prefix: None
        })
    );
    assert_eq!(
        field(id, "ips").display,
        Some(Display::Hex {
            names: Some("CallchainContext".into()),
            prefix: Some("PERF_CONTEXT_".into())
        })
    );
}

#[test]
fn spans_point_at_names() {
    let spec = load();
    let mmap = spec.find_struct("Mmap").unwrap();
    assert_eq!(mmap.span.file, "10_structs.pds");
    let misc = field(mmap, "misc");
    assert_eq!((misc.span.line, misc.span.col), (39, 3));
    assert_eq!(spec.consts[0].span.file, "00_common.pds");
    assert_eq!((spec.consts[0].span.line, spec.consts[0].span.col), (5, 7));
}

#[test]
fn ir_serializes_to_json() {
    let json = serde_json::to_string(&load()).unwrap();
    assert!(json.contains("\"SampleBodyNested\""));
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir()
            .join(format!("spec-test-{}-{name}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(parent) = self.0.parent() {
            let _ = std::fs::remove_dir_all(parent);
        }
    }
}

#[test]
fn load_dir_reads_pds_files_in_name_order_as_one_spec() {
    let dir = TempDir::new("my_spec");
    // `b.pds` uses a struct of `a.pds`; the other files are ignored.
    std::fs::write(dir.0.join("b.pds"), "record R = 1 { inner: Inner }\n").unwrap();
    std::fs::write(dir.0.join("a.pds"), "struct Inner { a: u32 }\n").unwrap();
    std::fs::write(dir.0.join("notes.txt"), "not a spec {").unwrap();
    let spec = spec::load_dir(&dir.0).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(spec.name, "my_spec");
    let names: Vec<(&str, &str)> = spec
        .structs
        .iter()
        .map(|s| (s.name.as_str(), s.span.file.as_str()))
        .collect();
    assert_eq!(names, [("Inner", "a.pds"), ("R", "b.pds")]);
}

#[test]
fn load_dir_errors_name_the_file_path() {
    let dir = TempDir::new("broken");
    std::fs::write(dir.0.join("x.pds"), "struct A { a: Nope }\n").unwrap();
    let err = spec::load_dir(&dir.0).unwrap_err();
    assert_eq!(err.len(), 1);
    let d = &err.list[0];
    assert_eq!((d.line, d.col, d.width), (1, 15, 4));
    assert!(
        d.file.ends_with("x.pds") && d.file.contains("broken"),
        "{}",
        d.file
    );
    assert_eq!(d.message, "unknown type `Nope`");
    let error: &dyn std::error::Error = &err;
    assert!(error
        .to_string()
        .starts_with("error: unknown type `Nope`\n --> "));
}

#[test]
fn load_dir_without_pds_files_is_an_error() {
    let dir = TempDir::new("empty");
    let err = spec::load_dir(&dir.0).unwrap_err();
    assert!(
        err.to_string().starts_with("error: no `.pds` files in"),
        "{err}"
    );
    assert!(spec::load_dir(&dir.0.join("missing")).is_err());
}

#[test]
fn words_have_run_time_sizes() {
    let src = "context {\n  word_size: u8\n}\n\
               struct Slots(ws: u8) {\n  a: word[ws]\n  b: word[8]\n}\n\
               struct Rec {\n  count: word[ctx.word_size]\n  n: word[ctx.word_size] = count(pcs)\n  \
               pcs: [word[ctx.word_size]; n]\n  s: Slots(ctx.word_size) if count != 0\n}\n";
    let spec = match spec::load_sources("words", &[("w.pds".to_string(), src.to_string())]) {
        Ok(spec) => spec,
        Err(d) => panic!("unexpected diagnostics:\n{d}"),
    };
    let rec = spec.find_struct("Rec").expect("Rec");
    let ctx_word = TypeRef::Word(Expr::Ctx("word_size".into()));
    assert_eq!(field(rec, "count").ty, ctx_word);
    assert_eq!(field(rec, "n").computed, Some(Expr::CountOf("pcs".into())));
    assert_eq!(
        field(rec, "pcs").ty,
        TypeRef::Array {
            elem: Box::new(ctx_word.clone()),
            len: Len::Expr(Expr::Field("n".into())),
        }
    );
    // A word field is an integer value in expressions.
    assert!(matches!(
        &field(rec, "s").cond,
        Some(Expr::Binary(BinOp::Ne, a, _)) if **a == Expr::Field("count".into())
    ));
    let slots = spec.find_struct("Slots").expect("Slots");
    assert_eq!(
        field(slots, "a").ty,
        TypeRef::Word(Expr::Param("ws".into()))
    );
    assert_eq!(field(slots, "b").ty, TypeRef::Word(Expr::Int(8)));
}
