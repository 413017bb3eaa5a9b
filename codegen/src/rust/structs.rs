//! Structs, records and features as Rust types: the struct, its `into_owned`, its
//! serialisation and, for flat structs, `rt::FixedElem`; the enums of switches.

use std::collections::HashSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use spec::ir::{Display, Expr, Field, Pattern, Prim, ScalarType, StructDef, StructKind, Switch};

use super::expr::{lit_usize, param_ident};
use super::items::value_names_ty;
use super::names::{doc_attrs, id_const_name, ident, local, rust_name, Dispatch};
use super::Gen;
use crate::names::snake;

/// The serde attributes of a stored field: its spec name when Rust's differs (`type`
/// for `type_`), and its display attribute (`@hex`, `@hex(Enum)`, `@signed`).
fn serde_field_attrs(f: &Field) -> TokenStream {
    let mut out = TokenStream::new();
    if rust_name(&f.name) != f.name {
        let n = &f.name;
        out.extend(quote!(#[serde(rename = #n)]));
    }
    let with = match &f.display {
        None => return out,
        Some(Display::Hex { names: None, .. }) => "rt::ser_hex".to_string(),
        Some(Display::Hex {
            names: Some(e),
            prefix,
        }) => format!(
            "rt::ser_hex_named::<{}, _, _>",
            value_names_ty(e, prefix.as_deref())
        ),
        Some(Display::Signed) => "rt::ser_signed".to_string(),
        Some(Display::Text) => "rt::ser_text".to_string(),
        // Written out by `written_out_serialize`.
        Some(Display::NameBy { .. }) => return out,
    };
    out.extend(quote!(#[serde(serialize_with = #with)]));
    out
}

impl<'s> Gen<'s> {
    pub(super) fn trailer_field<'x>(
        &self,
        s: &'x StructDef,
    ) -> Option<(Ident, &'s StructDef, Option<&'x Expr>)> {
        match &s.kind {
            StructKind::Record {
                trailer: Some(t), ..
            } => {
                let def = self.struct_def(&t.ty);
                Some((format_ident!("{}", snake(&t.ty)), def, t.cond.as_ref()))
            }
            _ => None,
        }
    }

    pub(super) fn struct_item(&self, s: &'s StructDef) -> TokenStream {
        let name = format_ident!("{}", s.name);
        let has_lt = self.layout.of_struct(&s.name).borrows;
        let lt = self.lt_of(has_lt);
        let doc = doc_attrs(&s.doc);
        let fixed = self.layout.of_struct(&s.name).flat;
        // A feature holding one value (a perf string) is shown as that value (dumps name
        // it by the feature), or as `{value, tail}` when it has bytes after it: its
        // `Serialize` is written out below instead of derived.
        let stored: Vec<&Field> = s.fields.iter().filter(|f| f.computed.is_none()).collect();
        let one_bounded_value = match stored.as_slice() {
            [f] => {
                matches!(s.kind, StructKind::Feature { .. })
                    && s.payload.is_none()
                    && self.trailer_field(s).is_none()
                    && f.cond.is_none()
                    && f.display.is_none()
                    && rust_name(&f.name) == f.name
            }
            _ => false,
        };
        // A field named by a bit of another field (`@name_by`): the whole `Serialize` is
        // written out (a derived one has fixed keys).
        let named_by = s
            .fields
            .iter()
            .any(|f| matches!(f.display, Some(Display::NameBy { .. })));
        let written_out = one_bounded_value || named_by;
        let serde_attr = |t: TokenStream| if written_out { quote!() } else { t };

        let mut fields = TokenStream::new();
        let mut stored_names: Vec<String> = Vec::new();
        for f in &s.fields {
            if f.computed.is_some() {
                continue;
            }
            let id = ident(&f.name);
            stored_names.push(rust_name(&f.name));
            let ty = self.rust_ty(&f.ty);
            let mut fdoc = doc_attrs(&f.doc);
            fdoc.extend(serde_attr(serde_field_attrs(f)));
            if f.cond.is_some() {
                let skip = serde_attr(quote!(#[serde(skip_serializing_if = "Option::is_none")]));
                fields.extend(quote! {
                    #fdoc
                    #skip
                    pub #id: Option<#ty>,
                });
            } else {
                fields.extend(quote! { #fdoc pub #id: #ty, });
            }
        }
        if let Some(p) = &s.payload {
            let id = ident(&p.name);
            stored_names.push(rust_name(&p.name));
            let pdoc = doc_attrs(&p.doc);
            fields.extend(quote! {
                #pdoc
                ///
                /// The bytes after the record (outside `header.size`): `Pending(len)` after
                /// `decode`, until the container attaches them with `set_payload`.
                pub #id: rt::Payload<'a>,
            });
        }
        if s.is_bounded() {
            stored_names.push("tail".into());
            let skip = serde_attr(quote!(#[serde(skip_serializing_if = "Option::is_none")]));
            fields.extend(quote! {
                /// Bytes after the last known field: `None` when there were none (or only the
                /// canonical padding), else exactly these bytes.
                #skip
                pub tail: rt::Tail<'a>,
            });
        }
        if let Some((tid, tdef, _)) = self.trailer_field(s) {
            stored_names.push(tid.to_string());
            let tty = self.struct_ty(&tdef.name);
            let tdoc = format!(
                " The `{}` trailer, read from the end of the body.",
                tdef.name
            );
            let tskip = serde_attr(quote!(#[serde(skip_serializing_if = "Option::is_none")]));
            fields.extend(quote! {
                #[doc = #tdoc]
                #tskip
                pub #tid: Option<#tty>,
            });
        }
        let mut seen = HashSet::new();
        for n in &stored_names {
            if !seen.insert(n.clone()) {
                panic!("struct `{}`: two members are named `{n}` in Rust", s.name);
            }
        }

        let derive = if fixed {
            quote!(#[derive(Debug, Clone, Copy, PartialEq, Default, rt::Serialize)])
        } else {
            quote!(#[derive(Debug, Clone, PartialEq, Default, rt::Serialize)])
        };
        // A structure holding one value (a perf string: its length is computed) is shown
        // as that value.
        let single_value = stored_names.len() == 1
            && s.fields
                .iter()
                .filter(|f| f.computed.is_none())
                .all(|f| f.cond.is_none());
        let derive = if single_value {
            quote!(#derive #[serde(transparent)])
        } else {
            derive
        };
        let (derive, serde_crate, serialize_impl) = if one_bounded_value {
            let f = stored[0];
            let fid = ident(&f.name);
            let fname = &f.name;
            let sname = &s.name;
            let impl_lt = if has_lt { quote!(<'a>) } else { quote!() };
            let derive = if fixed {
                quote!(#[derive(Debug, Clone, Copy, PartialEq, Default)])
            } else {
                quote!(#[derive(Debug, Clone, PartialEq, Default)])
            };
            let ser = quote! {
                impl #impl_lt rt::Serialize for #name #lt {
                    fn serialize<S: rt::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        match &self.tail {
                            None => rt::Serialize::serialize(&self.#fid, s),
                            Some(tail) => {
                                use rt::serde::ser::SerializeStruct;
                                let mut st = s.serialize_struct(#sname, 2)?;
                                st.serialize_field(#fname, &self.#fid)?;
                                st.serialize_field("tail", tail)?;
                                st.end()
                            }
                        }
                    }
                }
            };
            (derive, quote!(), ser)
        } else if named_by {
            let impl_lt = if has_lt { quote!(<'a>) } else { quote!() };
            let derive = if fixed {
                quote!(#[derive(Debug, Clone, Copy, PartialEq, Default)])
            } else {
                quote!(#[derive(Debug, Clone, PartialEq, Default)])
            };
            let body = self.written_out_serialize(s);
            let ser = quote! {
                impl #impl_lt rt::Serialize for #name #lt {
                    fn serialize<S: rt::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        use rt::serde::ser::SerializeMap;
                        let mut m = s.serialize_map(None)?;
                        #body
                        m.end()
                    }
                }
            };
            (derive, quote!(), ser)
        } else {
            (
                derive,
                quote!(#[serde(crate = "::perfdata::rt::serde")]),
                quote!(),
            )
        };
        let decode = self.decode_fn(s);
        let encode = self.encode_fn(s);
        let into_owned = self.owned_fn(s);
        let extra = self.struct_extras(s);
        let impl_lt = if has_lt { quote!(<'a>) } else { quote!() };
        let fixed_impl = if fixed {
            self.struct_fixed_elem(s)
        } else {
            quote!()
        };
        let owned_impl = if has_lt {
            quote! {
                impl<'a> rt::IntoOwned for #name<'a> {
                    type Owned = #name<'static>;
                    fn into_owned(self) -> #name<'static> {
                        #name::into_owned(self)
                    }
                }
            }
        } else {
            quote!()
        };
        let size_fn = if self.layout.of_struct(&s.name).is_trailer {
            self.encoded_size_fn(s)
        } else {
            quote!()
        };
        quote! {
            #doc
            #derive
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            #serde_crate
            pub struct #name #lt { #fields }
            #serialize_impl
            impl #impl_lt #name #lt {
                #extra
                #decode
                #encode
                #size_fn
                #into_owned
            }
            #fixed_impl
            #owned_impl
        }
    }

    /// The entries of a written-out `Serialize` (see `@name_by`): what the derived one
    /// would write, with the key of a `@name_by` field chosen by its bit.
    fn written_out_serialize(&self, s: &StructDef) -> TokenStream {
        let mut out = TokenStream::new();
        for f in s.fields.iter().filter(|f| f.computed.is_none()) {
            let id = ident(&f.name);
            let shown = match &f.display {
                Some(Display::Hex { names: None, .. }) => quote!(&rt::Hex(v)),
                Some(Display::Hex {
                    names: Some(e),
                    prefix,
                }) => {
                    let e = format_ident!("{}", value_names_ty(e, prefix.as_deref()));
                    quote!(&rt::HexNamed::<#e, _>(v, core::marker::PhantomData))
                }
                Some(Display::Signed) => quote!(&rt::Signed(v)),
                Some(Display::Text) => quote!(&rt::Text(v)),
                _ => quote!(v),
            };
            let key = match &f.display {
                Some(Display::NameBy {
                    field,
                    member,
                    set,
                    clear,
                }) => {
                    let by = ident(field);
                    let member = ident(member);
                    quote!(if self.#by.#member() { #set } else { #clear })
                }
                _ => {
                    let n = &f.name;
                    quote!(#n)
                }
            };
            if f.cond.is_some() {
                out.extend(quote! {
                    if let Some(v) = &self.#id {
                        m.serialize_entry(#key, #shown)?;
                    }
                });
            } else {
                out.extend(quote! {
                    let v = &self.#id;
                    m.serialize_entry(#key, #shown)?;
                });
            }
        }
        if let Some(p) = &s.payload {
            let id = ident(&p.name);
            let n = &p.name;
            out.extend(quote!(m.serialize_entry(#n, &self.#id)?;));
        }
        if s.is_bounded() {
            out.extend(quote! {
                if let Some(t) = &self.tail {
                    m.serialize_entry("tail", t)?;
                }
            });
        }
        if let Some((tid, _, _)) = self.trailer_field(s) {
            let n = tid.to_string();
            out.extend(quote! {
                if let Some(t) = &self.#tid {
                    m.serialize_entry(#n, t)?;
                }
            });
        }
        out
    }

    fn struct_extras(&self, s: &StructDef) -> TokenStream {
        let mut out = TokenStream::new();
        match &s.kind {
            StructKind::Record { .. } => {
                let c = format_ident!("{}", id_const_name(&s.name, Dispatch::Record));
                out.extend(quote! {
                    /// This record's `perf_event_header.type`.
                    pub const TYPE: RecordType = RecordType::#c;
                });
            }
            StructKind::Feature { .. } => {
                let c = format_ident!("{}", id_const_name(&s.name, Dispatch::Feature));
                out.extend(quote! {
                    /// This feature's id.
                    pub const ID: FeatureId = FeatureId::#c;
                });
            }
            StructKind::Plain => {}
        }
        if let Some(p) = &s.payload {
            let id = ident(&p.name);
            out.extend(quote! {
                /// Bytes of the payload that follows the record outside its `header.size`.
                pub fn payload_len(&self) -> u64 {
                    self.#id.len() as u64
                }
                /// Attaches the payload bytes (read by the container after the record).
                pub fn set_payload(&mut self, b: rt::Bytes<'a>) {
                    self.#id = rt::Payload::Data(b);
                }
            });
        }
        out
    }

    pub(super) fn params_sig(&self, s: &StructDef, body: &TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        for p in &s.params {
            let l = local(&p.name);
            let id = param_ident(body, &l.to_string());
            let ty = if matches!(p.ty, ScalarType::Prim(Prim::Bool)) {
                quote!(bool)
            } else {
                quote!(u64)
            };
            out.extend(quote!(, #id: #ty));
        }
        out
    }

    fn struct_fixed_elem(&self, s: &StructDef) -> TokenStream {
        let name = format_ident!("{}", s.name);
        let mut off = 0usize;
        let mut dec = TokenStream::new();
        let mut enc = TokenStream::new();
        for f in &s.fields {
            let id = ident(&f.name);
            let ty = self.rust_ty(&f.ty);
            let o = lit_usize(off);
            dec.extend(quote!(#id: rt::elem_at::<#ty, E>(b, #o, e),));
            enc.extend(quote!(rt::FixedElem::encode_elem(&self.#id, w);));
            off += self.flat_size(&f.ty);
        }
        let size = lit_usize(off);
        quote! {
            impl rt::FixedElem for #name {
                const SIZE: usize = #size;
                fn decode_elem<E: rt::Endian>(b: &[u8], e: E) -> Self {
                    Self { #dec }
                }
                fn encode_elem<E: rt::Endian>(&self, w: &mut rt::Writer<E>) {
                    #enc
                }
            }
        }
    }

    fn owned_fn(&self, s: &StructDef) -> TokenStream {
        let name = format_ident!("{}", s.name);
        if !self.layout.of_struct(&s.name).borrows {
            return quote! {
                /// The value itself (it borrows nothing).
                pub fn into_owned(self) -> Self {
                    self
                }
            };
        }
        let mut inits = TokenStream::new();
        for f in &s.fields {
            if f.computed.is_some() {
                continue;
            }
            let id = ident(&f.name);
            if self.layout.borrows(&f.ty) {
                inits.extend(quote!(#id: rt::IntoOwned::into_owned(self.#id),));
            } else {
                inits.extend(quote!(#id: self.#id,));
            }
        }
        if let Some(p) = &s.payload {
            let id = ident(&p.name);
            inits.extend(quote!(#id: self.#id.into_owned(),));
        }
        if s.is_bounded() {
            inits.extend(quote!(tail: self.tail.map(rt::Bytes::into_owned),));
        }
        if let Some((tid, tdef, _)) = self.trailer_field(s) {
            if self.layout.of_struct(&tdef.name).borrows {
                inits.extend(quote!(#tid: rt::IntoOwned::into_owned(self.#tid),));
            } else {
                inits.extend(quote!(#tid: self.#tid,));
            }
        }
        quote! {
            /// A copy that borrows nothing from the input.
            pub fn into_owned(self) -> #name<'static> {
                #name { #inits }
            }
        }
    }

    pub(super) fn switch_enum(&self, sw: &Switch) -> TokenStream {
        let name = format_ident!("{}", sw.enum_name);
        let has_lt = self.switch_lt(sw);
        let lt = self.lt_of(has_lt);
        let mut variants = TokenStream::new();
        let mut owned = TokenStream::new();
        let mut seen = HashSet::new();
        let on_text = sw.on.to_string();
        let mut first = None;
        for a in &sw.arms {
            if !seen.insert(a.variant.clone()) {
                continue;
            }
            let v = format_ident!("{}", a.variant);
            first.get_or_insert(v.clone());
            let ty = self.rust_ty(&a.ty);
            let pats: Vec<String> = sw
                .arms
                .iter()
                .filter(|x| x.variant == a.variant)
                .map(|x| match x.pat {
                    Pattern::Int(i) => i.to_string(),
                    Pattern::Bool(b) => b.to_string(),
                    Pattern::Default => "any other value".into(),
                })
                .collect();
            let doc = format!(" `{on_text}` is {}.", pats.join(" or "));
            variants.extend(quote! { #[doc = #doc] #v(#ty), });
            if self.layout.borrows(&a.ty) {
                owned.extend(quote! { Self::#v(x) => #name::#v(rt::IntoOwned::into_owned(x)), });
            } else {
                owned.extend(quote! { Self::#v(x) => #name::#v(x), });
            }
        }
        let doc = format!(" The choice made by `switch {on_text}`.");
        let into_owned = if has_lt {
            quote! {
                impl<'a> #name<'a> {
                    /// A copy that borrows nothing from the input.
                    pub fn into_owned(self) -> #name<'static> {
                        match self { #owned }
                    }
                }
                impl<'a> rt::IntoOwned for #name<'a> {
                    type Owned = #name<'static>;
                    fn into_owned(self) -> #name<'static> {
                        #name::into_owned(self)
                    }
                }
            }
        } else {
            quote! {
                impl #name {
                    /// The value itself (it borrows nothing).
                    pub fn into_owned(self) -> Self {
                        self
                    }
                }
            }
        };
        let first = first.expect("a switch has arms");
        let impl_lt = self.lt_of(has_lt);
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, PartialEq, rt::Serialize)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            #[serde(crate = "::perfdata::rt::serde")]
            pub enum #name #lt { #variants }
            impl #impl_lt Default for #name #lt {
                fn default() -> Self {
                    Self::#first(Default::default())
                }
            }
            #into_owned
        }
    }
}
