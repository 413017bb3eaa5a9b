//! The value types: consts' companions, enums, flags, bit-fields and the context.

use std::collections::{BTreeSet, HashSet};

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use spec::ir::{BitfieldDef, Display, EnumDef, FlagsDef, Prim};

use super::expr::{lit_prim, lit_u64, lit_usize, prim_put, prim_to_u64};
use super::names::{doc_attrs, id_const_name, ident, prim_ty, Dispatch};
use super::Gen;
use crate::names::{screaming_snake, snake};

/// The type whose `rt::ValueNames` names the values of `@hex(Enum[, PREFIX])`: the enum,
/// or a generated one that prefixes its names.
pub(super) fn value_names_ty(e: &str, prefix: Option<&str>) -> String {
    match prefix {
        None => e.to_string(),
        Some(p) => format!("{e}Names_{p}"),
    }
}

/// `Debug`, `Display` and `Serialize` for an open value type with a `name()`: the name
/// when the spec has one, else the number (`ser_unknown` serialises `self.0`).
pub(super) fn named_value_impls(ty: &Ident, ser_unknown: TokenStream) -> TokenStream {
    let debug_fmt = format!("{ty}({{}})");
    quote! {
        impl core::fmt::Debug for #ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, #debug_fmt, self.0),
                }
            }
        }
        impl core::fmt::Display for #ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}", self.0),
                }
            }
        }
        impl rt::Serialize for #ty {
            fn serialize<S: rt::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.name() {
                    Some(n) => s.serialize_str(n),
                    None => #ser_unknown,
                }
            }
        }
    }
}

impl<'s> Gen<'s> {
    fn serialize_number(&self, p: Prim) -> TokenStream {
        match p {
            Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64 => {
                quote!(s.serialize_i64(i64::from(self.0)))
            }
            Prim::F64 => quote!(s.serialize_f64(self.0)),
            Prim::Bool => quote!(s.serialize_bool(self.0)),
            Prim::U64 => quote!(s.serialize_u64(self.0)),
            _ => quote!(s.serialize_u64(u64::from(self.0))),
        }
    }

    fn newtype_fixed_elem(
        &self,
        name: &Ident,
        p: Prim,
        decode: TokenStream,
        encode: TokenStream,
    ) -> TokenStream {
        let size = lit_usize(p.size() as usize);
        quote! {
            impl rt::FixedElem for #name {
                const SIZE: usize = #size;
                #[inline]
                fn decode_elem<E: rt::Endian>(b: &[u8], e: E) -> Self {
                    #decode
                }
                #[inline]
                fn encode_elem<E: rt::Endian>(&self, w: &mut rt::Writer<E>) {
                    #encode
                }
            }
        }
    }

    pub(super) fn enum_item(&self, e: &EnumDef) -> TokenStream {
        let name = format_ident!("{}", e.name);
        let repr = prim_ty(e.repr);
        let doc = doc_attrs(&e.doc);
        let mut consts = TokenStream::new();
        let mut arms = TokenStream::new();
        let mut seen = HashSet::new();
        for v in &e.variants {
            let c = ident(&v.name);
            let val = lit_prim(e.repr, v.value);
            let vdoc = doc_attrs(&v.doc);
            consts.extend(quote! { #vdoc pub const #c: Self = Self(#val); });
            if seen.insert(v.value) {
                let s = &v.name;
                arms.extend(quote! { Self::#c => Some(#s), });
            }
        }
        let name_impls = named_value_impls(&name, self.serialize_number(e.repr));
        let value_name = if e.repr == Prim::U64 {
            quote!(Self(v).name())
        } else {
            quote!(#repr::try_from(v).ok().and_then(|x| Self(x).name()))
        };
        let put = prim_put(e.repr);
        let fixed = self.newtype_fixed_elem(
            &name,
            e.repr,
            quote!(Self(rt::elem_at::<#repr, E>(b, 0, e))),
            quote!(w.#put(self.0);),
        );
        quote! {
            #doc
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            pub struct #name(pub #repr);
            impl #name {
                #consts
                /// The variant's name, `None` for a value the spec does not name.
                pub fn name(self) -> Option<&'static str> {
                    match self {
                        #arms
                        _ => None,
                    }
                }
            }
            #name_impls
            impl rt::ValueNames for #name {
                fn value_name(v: u64) -> Option<&'static str> {
                    #value_name
                }
            }
            #fixed
        }
    }

    /// Every `(enum, prefix)` of a `@hex(Enum, PREFIX)`, once.
    pub(super) fn prefixed_names(&self) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        for s in &self.spec.structs {
            for f in &s.fields {
                if let Some(Display::Hex {
                    names: Some(e),
                    prefix: Some(p),
                }) = &f.display
                {
                    out.insert((e.clone(), p.clone()));
                }
            }
        }
        out
    }

    /// The names of `e`'s values with `prefix` before them (`PERF_CONTEXT_KERNEL`).
    pub(super) fn prefixed_names_item(&self, e: &str, prefix: &str) -> TokenStream {
        let def = self
            .spec
            .enums
            .iter()
            .find(|d| d.name == e)
            .unwrap_or_else(|| panic!("unknown enum `{e}`"));
        let ty = format_ident!("{}", value_names_ty(e, Some(prefix)));
        let mut arms = TokenStream::new();
        let mut seen = HashSet::new();
        for v in &def.variants {
            if seen.insert(v.value) {
                let val = lit_u64(v.value);
                let name = format!("{prefix}{}", v.name);
                arms.extend(quote! { #val => Some(#name), });
            }
        }
        let doc = format!(" The values of [`{e}`] by their names prefixed with `{prefix}`.");
        quote! {
            #[doc = #doc]
            #[allow(non_camel_case_types)]
            pub enum #ty {}
            impl rt::ValueNames for #ty {
                fn value_name(v: u64) -> Option<&'static str> {
                    match v {
                        #arms
                        _ => None,
                    }
                }
            }
        }
    }

    pub(super) fn flags_item(&self, fl: &FlagsDef) -> TokenStream {
        let name = format_ident!("{}", fl.name);
        let repr = prim_ty(fl.repr);
        let doc = doc_attrs(&fl.doc);
        let table = format_ident!("{}_NAMES", screaming_snake(&fl.name));
        let mut consts = TokenStream::new();
        let mut accessors = TokenStream::new();
        let mut names = TokenStream::new();
        for b in &fl.bits {
            let c = ident(&b.name);
            let bdoc = doc_attrs(&b.doc);
            let mask = if b.lo == b.hi {
                if b.lo == 0 {
                    quote!(1)
                } else {
                    let lo = Literal::u8_unsuffixed(b.lo);
                    quote!(1 << #lo)
                }
            } else {
                lit_u64(b.mask())
            };
            consts.extend(quote! { #bdoc pub const #c: Self = Self(#mask); });
            if b.lo != b.hi {
                let getter = ident(&b.name.to_ascii_lowercase());
                let setter = format_ident!("set_{}", b.name.to_ascii_lowercase());
                let m = lit_u64(b.mask());
                let get_doc = format!(
                    " The value of the `{}` bit range ({}..={}).",
                    b.name, b.lo, b.hi
                );
                let set_doc = format!(
                    " Sets the `{}` bit range ({}..={}); extra high bits of `v` are dropped.",
                    b.name, b.lo, b.hi
                );
                let (get, set) = if b.lo == 0 {
                    (
                        quote!(self.0 & #m),
                        quote!(self.0 = (self.0 & !#m) | (v & #m);),
                    )
                } else {
                    let lo = Literal::u8_unsuffixed(b.lo);
                    (
                        quote!((self.0 & #m) >> #lo),
                        quote!(self.0 = (self.0 & !#m) | ((v << #lo) & #m);),
                    )
                };
                accessors.extend(quote! {
                    #[doc = #get_doc]
                    pub fn #getter(self) -> #repr { #get }
                    #[doc = #set_doc]
                    pub fn #setter(&mut self, v: #repr) { #set }
                });
            }
            let (n, lo, hi) = (
                &b.name,
                Literal::u8_unsuffixed(b.lo),
                Literal::u8_unsuffixed(b.hi),
            );
            names.extend(quote! { rt::FlagName { name: #n, lo: #lo, hi: #hi }, });
        }
        let ser_value = prim_to_u64(fl.repr, quote!(self.0));
        let ser = quote!(rt::serialize_flags(s, #ser_value, #table));
        let put = prim_put(fl.repr);
        let fixed = self.newtype_fixed_elem(
            &name,
            fl.repr,
            quote!(Self(rt::elem_at::<#repr, E>(b, 0, e))),
            quote!(w.#put(self.0);),
        );
        let as_u64 = prim_to_u64(fl.repr, quote!(self.0));
        quote! {
            #doc
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            pub struct #name(pub #repr);
            impl #name {
                #consts
                /// No bit set.
                pub const EMPTY: Self = Self(0);
                /// True when every bit of `other` is set.
                pub const fn contains(self, other: Self) -> bool {
                    self.0 & other.0 == other.0
                }
                /// True when any bit of `other` is set.
                pub const fn intersects(self, other: Self) -> bool {
                    self.0 & other.0 != 0
                }
                #accessors
            }
            const #table: &[rt::FlagName] = &[#names];
            impl core::ops::BitOr for #name {
                type Output = Self;
                fn bitor(self, o: Self) -> Self { Self(self.0 | o.0) }
            }
            impl core::ops::BitOrAssign for #name {
                fn bitor_assign(&mut self, o: Self) { self.0 |= o.0; }
            }
            impl core::ops::BitAnd for #name {
                type Output = Self;
                fn bitand(self, o: Self) -> Self { Self(self.0 & o.0) }
            }
            impl core::fmt::Debug for #name {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    rt::fmt_flags(f, #as_u64, #table)
                }
            }
            impl rt::Serialize for #name {
                fn serialize<S: rt::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    #ser
                }
            }
            #fixed
        }
    }

    pub(super) fn bitfield_item(&self, bf: &BitfieldDef) -> TokenStream {
        let name = format_ident!("{}", bf.name);
        let p = bf.repr;
        let repr = prim_ty(p);
        let bits = p.size() * 8;
        let bits_lit = Literal::u32_unsuffixed(bits);
        let doc = doc_attrs(&bf.doc);
        let name_str = &bf.name;
        let mut table = TokenStream::new();
        let mut accessors = TokenStream::new();
        for m in &bf.members {
            let (n, pos, width) = (
                &m.name,
                Literal::u8_unsuffixed(m.pos),
                Literal::u8_unsuffixed(m.width),
            );
            table.extend(quote! { (#n, #pos, #width), });
            let getter = ident(&m.name);
            let setter = format_ident!("set_{}", m.name);
            let mdoc = doc_attrs(&m.doc);
            let full = u32::from(m.width) >= bits;
            let ones: u64 = if m.width >= 64 {
                u64::MAX
            } else {
                (1u64 << m.width) - 1
            };
            let mask = lit_u64(ones);
            let shifted = |x: TokenStream| -> TokenStream {
                if m.pos == 0 {
                    x
                } else {
                    let pos = Literal::u8_unsuffixed(m.pos);
                    quote!((#x >> #pos))
                }
            };
            let set_doc = format!(
                " Sets `{}` ({} bit{} at {}).",
                m.name,
                m.width,
                if m.width == 1 { "" } else { "s" },
                m.pos
            );
            if m.width == 1 {
                let get = shifted(quote!(self.0));
                let shift_in = if m.pos == 0 {
                    quote!(#repr::from(v))
                } else {
                    let pos = Literal::u8_unsuffixed(m.pos);
                    quote!(#repr::from(v) << #pos)
                };
                let clear = if m.pos == 0 {
                    quote!(!1)
                } else {
                    let pos = Literal::u8_unsuffixed(m.pos);
                    quote!(!(1 << #pos))
                };
                accessors.extend(quote! {
                    #mdoc
                    pub fn #getter(self) -> bool { #get & 1 != 0 }
                    #[doc = #set_doc]
                    pub fn #setter(&mut self, v: bool) { self.0 = (self.0 & #clear) | #shift_in; }
                });
            } else if full {
                accessors.extend(quote! {
                    #mdoc
                    pub fn #getter(self) -> #repr { self.0 }
                    #[doc = #set_doc]
                    pub fn #setter(&mut self, v: #repr) { self.0 = v; }
                });
            } else {
                let get = shifted(quote!(self.0));
                let (clear, shift_in) = if m.pos == 0 {
                    (quote!(!#mask), quote!((v & #mask)))
                } else {
                    let pos = Literal::u8_unsuffixed(m.pos);
                    (quote!(!(#mask << #pos)), quote!(((v & #mask) << #pos)))
                };
                accessors.extend(quote! {
                    #mdoc
                    pub fn #getter(self) -> #repr { #get & #mask }
                    #[doc = #set_doc]
                    pub fn #setter(&mut self, v: #repr) { self.0 = (self.0 & #clear) | #shift_in; }
                });
            }
        }
        let to64 = prim_to_u64(p, quote!(raw));
        let self64 = prim_to_u64(p, quote!(self.0));
        let narrow = |x: TokenStream| -> TokenStream {
            if p == Prim::U64 {
                x
            } else {
                quote!(#x as #repr)
            }
        };
        let from = narrow(quote!(rt::bitfield_from_file(#to64, #bits_lit, Self::FIELDS, e)));
        let to = narrow(quote!(rt::bitfield_to_file(#self64, #bits_lit, Self::FIELDS, e)));
        let put = prim_put(p);
        let fixed = self.newtype_fixed_elem(
            &name,
            p,
            quote!(Self::from_file(rt::elem_at::<#repr, E>(b, 0, e), e)),
            quote!(w.#put(self.to_file(w.endian()));),
        );
        quote! {
            #doc
            ///
            /// Holds the canonical value: members at their little-endian positions, whatever
            /// the byte order of the file.
            #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            pub struct #name(pub #repr);
            impl #name {
                /// `(name, position, width)` of each member, positions as on a little-endian
                /// producer.
                pub const FIELDS: &'static [(&'static str, u8, u8)] = &[#table];
                /// The canonical value of a word read in file order from a producer of byte
                /// order `e` (a big-endian producer allocates members from the MSB).
                pub fn from_file<E: rt::Endian>(raw: #repr, e: E) -> Self {
                    Self(#from)
                }
                /// The word to write in byte order `e`.
                pub fn to_file<E: rt::Endian>(self, e: E) -> #repr {
                    #to
                }
                #accessors
            }
            impl core::fmt::Debug for #name {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    rt::fmt_bitfield(f, #name_str, #self64, Self::FIELDS)
                }
            }
            impl rt::Serialize for #name {
                fn serialize<S: rt::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    rt::serialize_bitfield(s, #self64, Self::FIELDS)
                }
            }
            #fixed
        }
    }

    pub(super) fn context_item(&self) -> TokenStream {
        let mut fields = TokenStream::new();
        for f in &self.spec.context.fields {
            let id = ident(&f.name);
            let ty = self.scalar_ty(&f.ty);
            let doc = doc_attrs(&f.doc);
            fields.extend(quote! { #doc pub #id: #ty, });
        }
        let sources = self.context_sources();
        quote! {
            /// Values the surrounding program supplies while decoding and encoding (the spec's
            /// `context`).
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct Ctx { #fields }
            #sources
        }
    }

    /// For each struct the context takes values from (`from Struct.field…`): `from_S`
    /// (those values, the others default) and `take_from_S`; `take_from_feature` over the
    /// feature sources and `FeatureId::CONTEXT_SOURCES`, the features to read first. The
    /// container builds every context through these, so a new source is a spec edit.
    fn context_sources(&self) -> TokenStream {
        let mut by_struct: Vec<(&str, bool, TokenStream)> = vec![];
        let mut feature_copies = TokenStream::new();
        for f in &self.spec.context.fields {
            let Some(src) = &f.source else { continue };
            let field = ident(&f.name);
            if src.is_feature {
                feature_copies.extend(quote! { self.#field = other.#field; });
            }
            let mut value = quote!(v);
            let mut optional = false;
            for step in &src.path {
                match step {
                    spec::ir::SourceStep::Field {
                        name,
                        optional: opt,
                    } => {
                        let id = ident(name);
                        value = match (optional, *opt) {
                            (false, _) => quote!(#value.#id),
                            (true, true) => quote!(#value.as_ref().and_then(|x| x.#id)),
                            (true, false) => quote!(#value.as_ref().map(|x| x.#id)),
                        };
                        optional |= *opt;
                    }
                    spec::ir::SourceStep::Member { name } => {
                        let id = ident(name);
                        value = if optional {
                            quote!(#value.as_ref().map(|x| x.#id()))
                        } else {
                            quote!(#value.#id())
                        };
                    }
                }
            }
            if optional {
                value = quote!(#value.unwrap_or_default());
            }
            let assign = quote! { self.#field = #value; };
            match by_struct.iter_mut().find(|(n, _, _)| *n == src.strukt) {
                Some((_, _, body)) => body.extend(assign),
                None => by_struct.push((&src.strukt, src.is_feature, assign)),
            }
        }
        if by_struct.is_empty() {
            return quote!();
        }
        let mut methods = TokenStream::new();
        let mut feature_arms = TokenStream::new();
        let mut feature_ids = vec![];
        for (name, is_feature, body) in &by_struct {
            let ty = {
                let id = format_ident!("{}", name);
                if self.layout.of_struct(name).borrows {
                    quote!(#id<'_>)
                } else {
                    quote!(#id)
                }
            };
            let snake_name = snake(name);
            let from = format_ident!("from_{}", snake_name);
            let take = format_ident!("take_from_{}", snake_name);
            let from_doc = format!(" The context values `{name}` gives (`from {name}.…` in the spec); the others are their defaults.");
            let take_doc = format!(" Sets the context values `{name}` gives, leaving the others.");
            methods.extend(quote! {
                #[doc = #from_doc]
                pub fn #from(v: &#ty) -> Self {
                    let mut c = Self::default();
                    c.#take(v);
                    c
                }
                #[doc = #take_doc]
                pub fn #take(&mut self, v: &#ty) {
                    #body
                }
            });
            if *is_feature {
                let v = format_ident!("{}", name);
                feature_arms.extend(quote! { FeatureBody::#v(v) => self.#take(v), });
                let c = format_ident!("{}", id_const_name(name, Dispatch::Feature));
                feature_ids.push(quote!(FeatureId::#c));
            }
        }
        let feature_fns = if feature_ids.is_empty() {
            quote!()
        } else {
            quote! {
                /// Sets the context values a feature gives (see
                /// [`FeatureId::CONTEXT_SOURCES`]); other features change nothing.
                pub fn take_from_feature(&mut self, f: &FeatureBody<'_>) {
                    match f {
                        #feature_arms
                        _ => {}
                    }
                }
                /// Copies the values that come from features from `other` (a per-event
                /// context gets the recording's feature values this way).
                pub fn take_feature_values(&mut self, other: &Ctx) {
                    #feature_copies
                }
            }
        };
        let sources_const = if feature_ids.is_empty() {
            quote!()
        } else {
            quote! {
                impl FeatureId {
                    /// The features the context takes values from (`from FEATURE.…` in the
                    /// spec): a reader decodes these first, because other features are sized
                    /// by them.
                    pub const CONTEXT_SOURCES: &'static [FeatureId] = &[#(#feature_ids),*];
                }
            }
        };
        quote! {
            impl Ctx {
                #methods
                #feature_fns
            }
            #sources_const
        }
    }
}
