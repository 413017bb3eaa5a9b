//! Free functions the phases share: primitive type names and ranges, names in messages
//! and in generated names, and facts about lowered expressions. It imports no sibling.

use crate::ir::{self, Prim, ScalarType, TypeRef};

pub(super) fn prim_named(name: &str) -> Option<Prim> {
    Some(match name {
        "u8" => Prim::U8,
        "u16" => Prim::U16,
        "u32" => Prim::U32,
        "u64" => Prim::U64,
        "i8" => Prim::I8,
        "i16" => Prim::I16,
        "i32" => Prim::I32,
        "i64" => Prim::I64,
        "f64" => Prim::F64,
        "bool" => Prim::Bool,
        _ => return None,
    })
}

pub(super) const PRIM_NAMES: &[&str] = &[
    "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f64", "bool",
];

pub(super) fn is_signed(p: Prim) -> bool {
    matches!(p, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
}

pub(super) fn is_unsigned(p: Prim) -> bool {
    matches!(p, Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64)
}

pub(super) fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `sample_type` -> `SampleType`.
pub fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// True when the expression mentions a field or `remaining` (not allowed in trailers).
pub(super) fn uses_fields_or_remaining(e: &ir::Expr) -> bool {
    use ir::Expr as E;
    match e {
        E::Field(_) | E::Remaining | E::LenOf(_) | E::CountOf(_) | E::SizeOf(_) => true,
        E::SizeOfSelf | E::Int(_) | E::Bool(_) | E::Param(_) | E::Ctx(_) => false,
        E::Not(x) => uses_fields_or_remaining(x),
        E::Binary(_, a, b) => uses_fields_or_remaining(a) || uses_fields_or_remaining(b),
        E::Has { value, .. } => uses_fields_or_remaining(value),
        E::Call(_, args) => args.iter().any(uses_fields_or_remaining),
    }
}

pub(super) fn mentions_field(e: &ir::Expr, name: &str) -> bool {
    use ir::Expr as E;
    match e {
        E::Field(n) => n == name,
        E::Not(x) => mentions_field(x, name),
        E::Binary(_, a, b) => mentions_field(a, name) || mentions_field(b, name),
        E::Has { value, .. } => mentions_field(value, name),
        E::Call(_, args) => args.iter().any(|a| mentions_field(a, name)),
        _ => false,
    }
}

pub(super) fn scalar_name(t: &ScalarType) -> &str {
    match t {
        ScalarType::Prim(p) => p.name(),
        ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n) => n,
    }
}

pub(super) fn describe_type(t: &TypeRef) -> String {
    match t {
        TypeRef::Scalar(ScalarType::Prim(p)) => format!("`{}`", p.name()),
        TypeRef::Scalar(ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n)) => {
            format!("`{n}`")
        }
        TypeRef::Struct { name, .. } => format!("struct `{name}`"),
        TypeRef::Array { .. } => "an array".to_string(),
        TypeRef::Bytes(_) => "`bytes`".to_string(),
        TypeRef::Str(_) => "`str`".to_string(),
        TypeRef::CStr => "`cstr`".to_string(),
        TypeRef::Word(_) => "a `word`".to_string(),
        TypeRef::Split { hi, lo } => format!("a `split[{}, {}]`", hi.name(), lo.name()),
        TypeRef::Switch(_) => "a `switch`".to_string(),
        TypeRef::FeatureById(_) => "`feature(…)`".to_string(),
    }
}
