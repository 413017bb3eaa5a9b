//! Words of the language as names: a spec transcribes a kernel struct as written (`flags`,
//! `type`, `len`…). Keywords are reserved only where the grammar needs them (SYNTAX.md,
//! "Reserved words"); the places where they stay reserved are in `diagnostics.rs`.

use spec::ir::*;

/// Every kind of name that accepts keywords, each placed where a keyword-reading parser
/// would take it for a clause: a field named `if` right after a field, `has` right after a
/// condition, `big_endian_if` right after a `within`, `from` after a context value…
const SPEC: &str = r#"
enum Kind: u8 { struct = 1, enum = 2, if = 3, flags = 4 }
flags Bits: u32 { struct = 0, if = 1, record = 2, has = 3 }
bitfield Word: u32 { type: 1, flags: 1, if: 1, struct: 1, rest: 28 }
context {
  flags: Bits
  struct: u32 from Rec.struct
  from: u32
  if: bool from Rec.word.if
  enum: Kind from Rec.enum
}
struct Inner(len: u32, if: u32) {
  data: bytes[len]
  more: [u8; if]
}
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
  big_endian_if: u32 if ctx.struct > 0
  payload: u32
  word: Word
  @name_by(word.flags, struct, enum) either: u32
  str: cstr
  switch: u32
  as: switch switch { 1 => One: u32, _ => Other: bytes[..] }
  const: Inner(struct, switch)
  feature: u16
  record: u8, context: u8, bitfield: u8, trailer: u8, pad_to: u8, bounded_by: u8
  by_context: switch context { 1 => One8: u8, _ => Other8: u16 } if struct != 0
  payload data: bytes[struct]
}
"#;

fn load() -> Spec {
    let sources = vec![("keywords.pds".to_string(), SPEC.to_string())];
    match spec::load_sources("keywords", &sources) {
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
fn fields_keep_their_kernel_names() {
    let spec = load();
    let rec = spec.find_struct("Rec").unwrap();
    let names: Vec<&str> = rec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "flags",
            "struct",
            "enum",
            "len",
            "count",
            "bytes",
            "if",
            "type",
            "has",
            "within",
            "big_endian_if",
            "payload",
            "word",
            "either",
            "str",
            "switch",
            "as",
            "const",
            "feature",
            "record",
            "context",
            "bitfield",
            "trailer",
            "pad_to",
            "bounded_by",
            "by_context",
        ]
    );
    assert_eq!(
        field(rec, "flags").ty,
        TypeRef::Scalar(ScalarType::Flags("Bits".into()))
    );
    assert_eq!(rec.payload.as_ref().unwrap().name, "data");
    assert_eq!(
        rec.payload.as_ref().unwrap().len,
        Expr::Field("struct".into())
    );
}

#[test]
fn keyword_names_in_expressions() {
    let spec = load();
    let rec = spec.find_struct("Rec").unwrap();
    // `len(…)` / `count(…)` are calls; `len` alone is the field.
    assert_eq!(
        field(rec, "len").computed,
        Some(Expr::LenOf("bytes".into()))
    );
    assert_eq!(
        field(rec, "count").computed,
        Some(Expr::CountOf("if".into()))
    );
    assert_eq!(
        field(rec, "bytes").ty,
        TypeRef::Bytes(Len::Expr(Expr::Field("len".into())))
    );
    assert_eq!(
        field(rec, "if").ty,
        TypeRef::Array {
            elem: Box::new(TypeRef::Scalar(ScalarType::Prim(Prim::U32))),
            len: Len::Expr(Expr::Field("count".into())),
        }
    );
    // `has` then a flag named `struct`; the next field is named `has`.
    assert_eq!(
        field(rec, "type").cond,
        Some(Expr::Has {
            value: Box::new(Expr::Field("flags".into())),
            flags: "Bits".into(),
            flag: "struct".into(),
            mask: 1,
        })
    );
    assert_eq!(
        field(rec, "has").cond,
        Some(Expr::Has {
            value: Box::new(Expr::Ctx("flags".into())),
            flags: "Bits".into(),
            flag: "if".into(),
            mask: 2,
        })
    );
    assert_eq!(field(rec, "within").within, Some(Expr::Int(4)));
    assert_eq!(
        field(rec, "big_endian_if").cond,
        Some(Expr::Binary(
            BinOp::Gt,
            Box::new(Expr::Ctx("struct".into())),
            Box::new(Expr::Int(0))
        ))
    );
    // `switch switch`: the keyword, then the field it switches on.
    let TypeRef::Switch(sw) = &field(rec, "as").ty else {
        panic!("`as` is a switch");
    };
    assert_eq!(sw.on, Expr::Field("switch".into()));
    assert_eq!(sw.enum_name, "RecAs");
    let TypeRef::Switch(sw) = &field(rec, "by_context").ty else {
        panic!("`by_context` is a switch");
    };
    assert_eq!(sw.on, Expr::Field("context".into()));
    assert_eq!(
        field(rec, "by_context").cond,
        Some(Expr::Binary(
            BinOp::Ne,
            Box::new(Expr::Field("struct".into())),
            Box::new(Expr::Int(0))
        ))
    );
    assert_eq!(
        field(rec, "const").ty,
        TypeRef::Struct {
            name: "Inner".into(),
            args: vec![Expr::Field("struct".into()), Expr::Field("switch".into())],
        }
    );
    assert_eq!(
        field(rec, "either").display,
        Some(Display::NameBy {
            field: "word".into(),
            member: "flags".into(),
            set: "struct".into(),
            clear: "enum".into(),
        })
    );
}

#[test]
fn parameters_members_and_context_values() {
    let spec = load();
    let inner = spec.find_struct("Inner").unwrap();
    let params: Vec<&str> = inner.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["len", "if"]);
    assert_eq!(
        field(inner, "more").ty,
        TypeRef::Array {
            elem: Box::new(TypeRef::Scalar(ScalarType::Prim(Prim::U8))),
            len: Len::Expr(Expr::Param("if".into())),
        }
    );

    let kind = spec.find_enum("Kind").unwrap();
    let variants: Vec<&str> = kind.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(variants, ["struct", "enum", "if", "flags"]);
    let bits = spec.find_flags("Bits").unwrap();
    let flags: Vec<&str> = bits.bits.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(flags, ["struct", "if", "record", "has"]);
    let word = spec.find_bitfield("Word").unwrap();
    let members: Vec<&str> = word.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(members, ["type", "flags", "if", "struct", "rest"]);

    let context: Vec<&str> = spec
        .context
        .fields
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(context, ["flags", "struct", "from", "if", "enum"]);
    let source = |name: &str| {
        spec.context
            .fields
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .source
            .clone()
    };
    assert_eq!(source("from"), None);
    assert_eq!(
        source("if").unwrap().path,
        [
            SourceStep::Field {
                name: "word".into(),
                optional: false
            },
            SourceStep::Member { name: "if".into() },
        ]
    );
    assert_eq!(
        source("struct").unwrap().path,
        [SourceStep::Field {
            name: "struct".into(),
            optional: false
        }]
    );
}

/// The places keywords stay reserved still say so (texts in `diagnostics.rs` snapshots).
#[test]
fn reserved_where_the_grammar_needs_them() {
    for (text, want) in [
        ("struct A { remaining: u32 }", "found keyword `remaining`"),
        ("struct A { self: u32 }", "found keyword `self`"),
        (
            "record A = 1 { payload true: bytes[4] }",
            "found keyword `true`",
        ),
        ("struct A(ctx: u32) { a: u32 }", "found keyword `ctx`"),
        ("struct bytes { a: u32 }", "found keyword `bytes`"),
        ("enum if: u8 { A = 1 }", "found keyword `if`"),
        (
            "struct A { k: u8, v: switch k as struct { _ => B: u8 } }",
            "found keyword `struct`",
        ),
        ("struct A { a: u32, b: feature }", "expected `(`"),
    ] {
        let sources = vec![("k.pds".to_string(), text.to_string())];
        let message = match spec::load_sources("k", &sources) {
            Ok(_) => panic!("`{text}` was accepted"),
            Err(d) => d.to_string(),
        };
        assert!(message.contains(want), "`{text}`:\n{message}");
    }
}
