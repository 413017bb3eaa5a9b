//! Rust names for spec names and types: identifiers (keywords escaped), the locals of
//! generated functions, the id constants of records and features, doc comments, and the
//! Rust type of every spec type. The bottom of the generator's modules: it imports none of
//! its siblings, so every other module may use it.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use spec::ir::{Prim, ScalarType, Switch, TypeRef};

use super::Gen;
use crate::names::kernel_id_name;

const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Names the generated functions use for their own locals and parameters.
const INTERNAL_NAMES: &[&str] = &[
    "r",
    "w",
    "ctx",
    "start",
    "tail",
    "trailer_r",
    "sizeof_self",
    "within_at",
    "v_",
];

/// C-style indexing in spec docs (ips\[nr\]) is not a rustdoc link: escape its brackets
/// (code spans keep them as they are).
fn escape_index_brackets(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut prev: Option<char> = None;
    let mut escaped_open = false;
    let mut in_code = false;
    for c in line.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '[' if !in_code && prev.is_some_and(|p| p.is_alphanumeric() || p == '_') => {
                out.push_str("\\[");
                escaped_open = true;
            }
            ']' if escaped_open => {
                out.push_str("\\]");
                escaped_open = false;
            }
            _ => out.push(c),
        }
        prev = Some(c);
    }
    out
}

/// A Rust identifier for a spec name: keywords get a trailing `_` (`type` → `type_`).
pub fn rust_name(name: &str) -> String {
    if RUST_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

pub(super) fn ident(name: &str) -> Ident {
    Ident::new(&rust_name(name), Span::call_site())
}

/// The local variable holding a field's (or parameter's) decoded value.
pub(super) fn local(name: &str) -> Ident {
    if INTERNAL_NAMES.contains(&name) {
        format_ident!("{}_", name)
    } else {
        ident(name)
    }
}

/// Which of the two id-keyed dispatches (records by `RecordType`, features by `FeatureId`)
/// an item belongs to. Here rather than in `dispatch`, which uses `items`, because `items`
/// (context sources), `structs` and `views` name id constants too.
#[derive(Clone, Copy)]
pub(super) enum Dispatch {
    Record,
    Feature,
}

/// The id constant of a record or feature: its name in SCREAMING_SNAKE_CASE. Structs,
/// records and features share one namespace in the spec, so a feature whose kernel name is
/// also a record's (AUXTRACE, STAT, COMPRESSED) is declared `XFeature`; its id constant
/// drops the suffix (`FeatureId::STAT`).
pub(super) fn id_const_name(name: &str, kind: Dispatch) -> String {
    kernel_id_name(name, matches!(kind, Dispatch::Feature))
}

/// The Rust type of a primitive.
pub(super) fn prim_ty(p: Prim) -> TokenStream {
    match p {
        Prim::U8 => quote!(u8),
        Prim::U16 => quote!(u16),
        Prim::U32 => quote!(u32),
        Prim::U64 => quote!(u64),
        Prim::I8 => quote!(i8),
        Prim::I16 => quote!(i16),
        Prim::I32 => quote!(i32),
        Prim::I64 => quote!(i64),
        Prim::F64 => quote!(f64),
        Prim::Bool => quote!(bool),
    }
}

pub(super) fn doc_attrs(doc: &str) -> TokenStream {
    let mut out = TokenStream::new();
    for line in doc.lines() {
        let text = if line.is_empty() {
            String::new()
        } else {
            format!(" {}", escape_index_brackets(line))
        };
        out.extend(quote!(#[doc = #text]));
    }
    out
}

impl<'s> Gen<'s> {
    /// True when values of the switch's enum borrow from the input.
    pub(super) fn switch_lt(&self, sw: &Switch) -> bool {
        sw.arms.iter().any(|a| self.layout.borrows(&a.ty))
    }

    /// Encoded size of a flat type (`rt::FixedElem::SIZE`).
    pub(super) fn flat_size(&self, ty: &TypeRef) -> usize {
        match self.layout.flat_size(ty).map(usize::try_from) {
            Some(Ok(n)) => n,
            _ => panic!("`{ty}` is not a flat type of a known size"),
        }
    }

    pub(super) fn lt_of(&self, has: bool) -> TokenStream {
        if has {
            quote!(<'a>)
        } else {
            quote!()
        }
    }

    pub(super) fn struct_ty(&self, name: &str) -> TokenStream {
        let id = format_ident!("{}", name);
        if self.layout.of_struct(name).borrows {
            quote!(#id<'a>)
        } else {
            quote!(#id)
        }
    }

    pub(super) fn scalar_ty(&self, st: &ScalarType) -> TokenStream {
        match st {
            ScalarType::Prim(p) => prim_ty(*p),
            ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n) => {
                let id = format_ident!("{}", n);
                quote!(#id)
            }
        }
    }

    /// The Rust type of a (stored) value of `ty`.
    pub(super) fn rust_ty(&self, ty: &TypeRef) -> TokenStream {
        match ty {
            TypeRef::Scalar(st) => self.scalar_ty(st),
            TypeRef::Word(_) => quote!(u64),
            TypeRef::Split { hi, lo } => prim_ty(TypeRef::split_value(*hi, *lo)),
            TypeRef::Struct { name, .. } => self.struct_ty(name),
            TypeRef::Array { elem, .. } => {
                let e = self.rust_ty(elem);
                if self.layout.is_flat(elem) {
                    quote!(rt::Array<'a, #e>)
                } else {
                    quote!(Vec<#e>)
                }
            }
            TypeRef::Bytes(_) => quote!(rt::Bytes<'a>),
            TypeRef::Str(_) | TypeRef::CStr => quote!(rt::Str<'a>),
            TypeRef::Switch(sw) => {
                let id = format_ident!("{}", sw.enum_name);
                let lt = self.lt_of(self.switch_lt(sw));
                quote!(#id #lt)
            }
            TypeRef::FeatureById(_) => quote!(Box<FeatureBody<'a>>),
        }
    }
}
