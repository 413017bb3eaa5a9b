//! `RecordBody` / `FeatureBody`: one enum over every record or feature, keyed by id.

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use spec::ir::{StructDef, StructKind};

use super::expr::{lit_u64, param_ident};
use super::items::named_value_impls;
use super::names::{id_const_name, ident, Dispatch};
use super::Gen;
use crate::names::snake;

impl<'s> Gen<'s> {
    pub(super) fn dispatch(&self, items: &[(u32, &StructDef)], kind: Dispatch) -> TokenStream {
        let (id_ty, body_ty, what) = match kind {
            Dispatch::Record => (
                format_ident!("RecordType"),
                format_ident!("RecordBody"),
                "record",
            ),
            Dispatch::Feature => (
                format_ident!("FeatureId"),
                format_ident!("FeatureBody"),
                "feature",
            ),
        };
        let id_name_impls = named_value_impls(&id_ty, quote!(s.serialize_u32(self.0)));
        let mut consts = TokenStream::new();
        let mut names = TokenStream::new();
        let mut variants = TokenStream::new();
        let mut decode_arms = TokenStream::new();
        let mut encode_arms = TokenStream::new();
        let mut id_arms = TokenStream::new();
        let mut owned_arms = TokenStream::new();
        let mut payload_len_arms = TokenStream::new();
        let mut set_payload_arms = TokenStream::new();
        let mut payload_arms = TokenStream::new();
        let mut tail_arms = TokenStream::new();
        // Trailer accessors: one per trailer type, over every record that has it.
        let mut trailer_arms: std::collections::BTreeMap<String, TokenStream> = Default::default();
        let mut froms = TokenStream::new();
        let mut seen = HashSet::new();
        let mut payload_ids = vec![];
        for (id, s) in items {
            let c = format_ident!("{}", id_const_name(&s.name, kind));
            if s.payload.is_some() {
                payload_ids.push(c.clone());
            }
            let cs = c.to_string();
            let idl = lit_u64(u64::from(*id));
            // The first paragraph of the item's doc, whole (a first line alone can stop
            // mid-sentence).
            let summary: Vec<&str> = s
                .doc
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let cdoc = if summary.is_empty() {
                format!(" `{}` ({id}).", s.name)
            } else {
                format!(" {}", summary.join(" "))
            };
            consts.extend(quote! { #[doc = #cdoc] pub const #c: Self = Self(#idl); });
            if seen.insert(*id) {
                names.extend(quote! { Self::#c => Some(#cs), });
            }
            let v = format_ident!("{}", s.name);
            let vty = self.struct_ty(&s.name);
            let vdoc = format!(" `{cs}` ({id}).");
            variants.extend(quote! { #[doc = #vdoc] #v(#vty), });
            decode_arms.extend(quote! { #id_ty::#c => Self::#v(#v::decode(r, ctx)?), });
            encode_arms.extend(quote! { Self::#v(x) => x.encode(w, ctx), });
            id_arms.extend(quote! { Self::#v(_) => Some(#id_ty::#c), });
            if self.layout.of_struct(&s.name).borrows {
                owned_arms.extend(quote! { Self::#v(x) => #body_ty::#v(x.into_owned()), });
            } else {
                owned_arms.extend(quote! { Self::#v(x) => #body_ty::#v(x), });
            }
            if let StructKind::Record {
                trailer: Some(t), ..
            } = &s.kind
            {
                let field = ident(&snake(&t.ty));
                trailer_arms
                    .entry(t.ty.clone())
                    .or_default()
                    .extend(quote! { Self::#v(x) => x.#field.as_ref(), });
            }
            if s.is_bounded() {
                tail_arms.extend(quote! { Self::#v(x) => x.tail.as_deref(), });
            }
            if let Some(payload) = &s.payload {
                payload_len_arms.extend(quote! { Self::#v(x) => x.payload_len(), });
                set_payload_arms.extend(quote! { Self::#v(x) => x.set_payload(b), });
                let field = ident(&payload.name);
                payload_arms.extend(quote! { Self::#v(x) => x.#field.bytes(), });
            }
            froms.extend(quote! {
                impl<'a> From<#vty> for #body_ty<'a> {
                    fn from(x: #vty) -> Self {
                        Self::#v(x)
                    }
                }
            });
        }
        let id_doc = match kind {
            Dispatch::Record => " A record type (`perf_event_header.type`): an open enum over every `record` of the spec.",
            Dispatch::Feature => " A header feature id (feature bit): an open enum over every `feature` of the spec.",
        };
        let body_doc = match kind {
            Dispatch::Record => " The body of a record, by type; unknown types keep their bytes.",
            Dispatch::Feature => {
                " The payload of a header feature, by id; unknown features keep their bytes."
            }
        };
        let (id_method, id_method_doc) = match kind {
            Dispatch::Record => (
                format_ident!("record_type"),
                " The record type, `None` for `Unknown`.",
            ),
            Dispatch::Feature => (
                format_ident!("feature_id"),
                " The feature id, `None` for `Unknown`.",
            ),
        };
        let unknown_doc = format!(" A {what} this spec does not describe: its bytes as they are.");
        let trailer_fns: TokenStream = trailer_arms
            .iter()
            .map(|(ty, arms)| {
                let f = ident(&snake(ty));
                let t = self.struct_ty(ty);
                let doc = format!(" The `{ty}` trailer of records that carry one (`None` for the others, or when absent).");
                quote! {
                    #[doc = #doc]
                    pub fn #f(&self) -> Option<&#t> {
                        match self {
                            #arms
                            _ => None,
                        }
                    }
                }
            })
            .collect();
        let payload_fns = match kind {
            Dispatch::Record => quote! {
                #trailer_fns
                /// Bytes of the payload following the record outside `header.size` (0 for
                /// records without one).
                pub fn payload_len(&self) -> u64 {
                    match self {
                        #payload_len_arms
                        _ => 0,
                    }
                }
                /// The payload bytes once attached (`None` while pending or for records
                /// without a payload).
                pub fn payload(&self) -> Option<&[u8]> {
                    match self {
                        #payload_arms
                        _ => None,
                    }
                }
                /// Attaches the payload bytes (ignored by records without a payload).
                pub fn set_payload(&mut self, b: rt::Bytes<'a>) {
                    match self {
                        #set_payload_arms
                        _ => { let _ = b; }
                    }
                }
            },
            Dispatch::Feature => quote!(),
        };
        let has_payload_fn = match kind {
            Dispatch::Record => {
                let test = if payload_ids.is_empty() {
                    quote!(false)
                } else {
                    quote!(matches!(self, #(Self::#payload_ids)|*))
                };
                quote! {
                    /// True for the record types followed by a payload outside `header.size`
                    /// (the container must read `payload_len()` more bytes).
                    pub fn has_payload(self) -> bool {
                        #test
                    }
                }
            }
            Dispatch::Feature => quote!(),
        };
        let ctx_d = param_ident(&decode_arms, "ctx");
        let ctx_e = param_ident(&encode_arms, "ctx");
        let decode_doc = format!(" Decodes the body of a {what} of `id` from `r` (exactly the body); unknown ids give `Unknown`.");
        quote! {
            #[doc = #id_doc]
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            pub struct #id_ty(pub u32);
            impl #id_ty {
                #consts
                #has_payload_fn
                /// The name, `None` for a value the spec does not name.
                pub fn name(self) -> Option<&'static str> {
                    match self {
                        #names
                        _ => None,
                    }
                }
            }
            #id_name_impls

            #[doc = #body_doc]
            #[derive(Debug, Clone, PartialEq, rt::Serialize)]
            #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
            #[serde(crate = "::perfdata::rt::serde", untagged)]
            pub enum #body_ty<'a> {
                #variants
                #[doc = #unknown_doc]
                Unknown(rt::Bytes<'a>),
            }
            impl Default for #body_ty<'_> {
                fn default() -> Self {
                    Self::Unknown(rt::Bytes::default())
                }
            }
            impl<'a> #body_ty<'a> {
                #[doc = #decode_doc]
                pub fn decode<E: rt::Endian>(id: #id_ty, r: &mut rt::Reader<'a, E>, #ctx_d: &Ctx) -> rt::Result<Self> {
                    Ok(match id {
                        #decode_arms
                        _ => Self::Unknown(r.rest_bytes()),
                    })
                }
                /// Encodes the body in byte order `E` (`Unknown`: its bytes as they are).
                pub fn encode<E: rt::Endian>(&self, w: &mut rt::Writer<E>, #ctx_e: &Ctx) -> rt::Result<()> {
                    match self {
                        #encode_arms
                        Self::Unknown(b) => {
                            w.put_bytes(b);
                            Ok(())
                        }
                    }
                }
                #[doc = #id_method_doc]
                pub fn #id_method(&self) -> Option<#id_ty> {
                    match self {
                        #id_arms
                        Self::Unknown(_) => None,
                    }
                }
                #payload_fns
                /// The bytes after the last field the spec knows (kept so that a rewrite is
                /// exact): `None` when there are none, or for `Unknown`.
                pub fn tail(&self) -> Option<&[u8]> {
                    match self {
                        #tail_arms
                        _ => None,
                    }
                }
                /// A copy that borrows nothing from the input.
                pub fn into_owned(self) -> #body_ty<'static> {
                    match self {
                        #owned_arms
                        Self::Unknown(b) => #body_ty::Unknown(b.into_owned()),
                    }
                }
            }
            impl<'a> rt::IntoOwned for #body_ty<'a> {
                type Owned = #body_ty<'static>;
                fn into_owned(self) -> #body_ty<'static> {
                    #body_ty::into_owned(self)
                }
            }
            #froms
        }
    }
}
