//! Layout plans and zero-copy views of records (the fast read path).
//!
//! For a record (or a trailer struct) the leading fields whose presence depends only on
//! the context (`if ctx.sample_type has TIME`) and whose size is fixed sit at offsets that
//! the context alone decides. `<Name>Layout::new(ctx)` computes those offsets once per
//! event; `<Name>View` reads any of them with one load, and walks to the fields after
//! the fixed prefix only when asked. Nothing here is hand-written layout: offsets, sizes,
//! conditions and the order of fields all come from the spec.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use spec::ir::{Expr, Field, Len, StructDef, StructKind, TypeRef};

use super::expr::{mentions, walk_expr, Env, Mode};
use super::names::{doc_attrs, id_const_name, ident, Dispatch};
use super::Gen;
use crate::names::snake;

/// Names of a view's own members, which fields must not take (`x_in` too, checked below).
const RESERVED: &[&str] = &[
    "new",
    "fixed_len",
    "view_bytes",
    "view_offset",
    "view_ctx",
    "walk_reader",
];

/// True when `e` reads nothing but the context and literals: it has one value per event.
fn ctx_only(e: &Expr) -> bool {
    let mut ok = true;
    walk_expr(e, &mut |x| {
        ok &= !matches!(
            x,
            Expr::Field(_)
                | Expr::Param(_)
                | Expr::Remaining
                | Expr::LenOf(_)
                | Expr::CountOf(_)
                | Expr::SizeOfSelf
                | Expr::SizeOf(_)
        );
    });
    ok
}

/// True when every expression inside `ty` (lengths, struct arguments, switch subjects)
/// reads only the context.
fn ty_ctx_only(ty: &TypeRef) -> bool {
    match ty {
        TypeRef::Scalar(_) | TypeRef::CStr | TypeRef::Split { .. } => true,
        TypeRef::Struct { args, .. } => args.iter().all(ctx_only),
        TypeRef::Array { elem, len } => ty_ctx_only(elem) && len_ctx_only(len),
        TypeRef::Bytes(len) | TypeRef::Str(len) => len_ctx_only(len),
        TypeRef::Switch(sw) => ctx_only(&sw.on) && sw.arms.iter().all(|a| ty_ctx_only(&a.ty)),
        TypeRef::FeatureById(e) | TypeRef::Word(e) => ctx_only(e),
    }
}

fn len_ctx_only(len: &Len) -> bool {
    match len {
        Len::Expr(e) => ctx_only(e),
        Len::Rest => true,
    }
}

impl Gen<'_> {
    /// Layouts and views for every record and trailer struct that has a fixed prefix, and
    /// `RecordType::has_<trailer>(ctx)`.
    pub(super) fn views(&self) -> TokenStream {
        let mut out = TokenStream::new();
        for s in &self.spec.structs {
            let is_record = matches!(s.kind, StructKind::Record { .. });
            if is_record || self.layout.of_struct(&s.name).is_trailer {
                out.extend(self.view_items(s));
            }
        }
        if self.spec.records().next().is_some() {
            out.extend(self.trailer_presence());
        }
        out
    }

    /// A field at an offset the context decides: fixed size, present by a context-only
    /// condition, decoded as it is stored.
    fn in_fixed_prefix(&self, f: &Field) -> bool {
        f.within.is_none()
            && f.big_endian_if.is_none()
            && self.layout.is_flat(&f.ty)
            && f.cond.as_ref().is_none_or(ctx_only)
    }

    /// A field after the prefix that a view can reach by walking: what it is and whether
    /// it is there depend on the context only.
    fn walkable(&self, f: &Field) -> bool {
        f.computed.is_none()
            && f.within.is_none()
            && f.big_endian_if.is_none()
            && f.cond.as_ref().is_none_or(ctx_only)
            && ty_ctx_only(&f.ty)
    }

    fn view_items(&self, s: &StructDef) -> TokenStream {
        let prefix_len = s
            .fields
            .iter()
            .take_while(|f| self.in_fixed_prefix(f))
            .count();
        if prefix_len == 0 {
            return quote!();
        }
        let (prefix, rest) = s.fields.split_at(prefix_len);
        let env = Env::new(s, Mode::Decode);
        let name = format_ident!("{}", s.name);
        let layout = format_ident!("{}Layout", s.name);
        let view = format_ident!("{}View", s.name);

        let mut layout_fields = TokenStream::new();
        let mut layout_stmts = TokenStream::new();
        let mut layout_inits = Vec::new();
        let mut accessors = TokenStream::new();
        for f in prefix {
            let id = ident(&f.name);
            if RESERVED.contains(&id.to_string().as_str()) {
                panic!(
                    "struct `{}`: a field named `{id}` clashes with its view",
                    s.name
                );
            }
            let size = self.flat_size(&f.ty);
            let size = u16::try_from(size).expect("a fixed field is smaller than 64 KiB");
            let ty = self.rust_ty(&f.ty);
            let fdoc = doc_attrs(&f.doc);
            let read = quote!(rt::FixedElem::decode_elem(
                self.bytes.get(o as usize..).unwrap_or(&[]),
                self.endian
            ));
            match &f.cond {
                Some(c) => {
                    let ct = self.bool_expr(c, &env).ts;
                    let ldoc = format!(
                        " Offset of `{}`; `None` when the context leaves it out.",
                        f.name
                    );
                    layout_fields.extend(quote! { #[doc = #ldoc] pub #id: Option<u16>, });
                    layout_stmts.extend(quote! {
                        let #id = if #ct { let o = at; at += #size; Some(o) } else { None };
                    });
                    accessors.extend(quote! {
                        #fdoc
                        #[inline]
                        pub fn #id(&self) -> Option<#ty> {
                            self.layout.#id.map(|o| #read)
                        }
                    });
                }
                None => {
                    let ldoc = format!(" Offset of `{}`.", f.name);
                    layout_fields.extend(quote! { #[doc = #ldoc] pub #id: u16, });
                    layout_stmts.extend(quote! { let #id = at; at += #size; });
                    accessors.extend(quote! {
                        #fdoc
                        #[inline]
                        pub fn #id(&self) -> #ty {
                            let o = self.layout.#id;
                            #read
                        }
                    });
                }
            }
            layout_inits.push(id);
        }

        // Fields after the prefix, reached by walking from its end while every field on
        // the way is walkable.
        let walk: Vec<&Field> = rest.iter().take_while(|f| self.walkable(f)).collect();
        for (k, f) in walk.iter().enumerate() {
            let id = ident(&f.name);
            if RESERVED.contains(&id.to_string().as_str()) {
                panic!(
                    "struct `{}`: a field named `{id}` clashes with its view",
                    s.name
                );
            }
            let id_in = format_ident!("{}_in", f.name);
            if s.fields.iter().any(|g| id_in == g.name) {
                panic!(
                    "struct `{}`: a field named `{id_in}` clashes with its view",
                    s.name
                );
            }
            let ty = self.rust_ty(&f.ty);
            let ret = if f.cond.is_some() {
                quote!(Option<#ty>)
            } else {
                quote!(#ty)
            };
            let steps: TokenStream = walk[..k].iter().map(|g| self.walk_skip(g, &env)).collect();
            let v = self.walk_value(f, &env);
            let fdoc = doc_attrs(&f.doc);
            accessors.extend(quote! {
                #fdoc
                ///
                /// Decoded from the bytes on demand (the fields before it are skipped).
                #[inline]
                pub fn #id(&self) -> rt::Result<#ret> {
                    match self.endian.kind() {
                        rt::Endianness::Little => self.#id_in::<rt::LittleEndian>(),
                        rt::Endianness::Big => self.#id_in::<rt::BigEndian>(),
                    }
                }
                #[inline]
                fn #id_in<O: rt::StaticEndian>(&self) -> rt::Result<#ret> {
                    let ctx = self.ctx;
                    let _ = ctx;
                    let r = &mut self.walk_reader::<O>();
                    #steps
                    Ok(#v)
                }
            });
        }
        // Every field after the prefix walkable: a check of the whole body that makes the
        // decoder's checks without building the value.
        if walk.len() == rest.len() && !walk.is_empty() {
            let steps: TokenStream = walk.iter().map(|g| self.walk_skip(g, &env)).collect();
            let vdoc = format!(
                " Decodes every field after the fixed ones and drops it: the checks \
                 [`{}::decode`] makes, without building the value.",
                s.name
            );
            accessors.extend(quote! {
                #[doc = #vdoc]
                #[inline]
                pub fn validate(&self) -> rt::Result<()> {
                    match self.endian.kind() {
                        rt::Endianness::Little => self.validate_in::<rt::LittleEndian>(),
                        rt::Endianness::Big => self.validate_in::<rt::BigEndian>(),
                    }
                }
                #[inline]
                fn validate_in<O: rt::StaticEndian>(&self) -> rt::Result<()> {
                    let ctx = self.ctx;
                    let _ = ctx;
                    let r = &mut self.walk_reader::<O>();
                    #steps
                    Ok(())
                }
            });
        }
        let rest_fn = if walk.is_empty() {
            quote!()
        } else {
            quote! {
                /// A reader over the bytes after the fixed prefix (the trailer excluded).
                #[inline]
                fn walk_reader<O: rt::StaticEndian>(&self) -> rt::Reader<'a, O> {
                    let start = usize::from(self.layout.fixed_len);
                    rt::Reader::new(self.bytes.get(start..).unwrap_or(&[]), self.base + start as u64)
                }
            }
        };

        // A record's view excludes its trailer, which is read from the end.
        let trailer_len = match self.trailer_field(s) {
            Some((_, tdef, cond)) => {
                let tname = format_ident!("{}", tdef.name);
                match cond {
                    Some(c) => {
                        let ct = self.bool_expr(c, &env).ts;
                        quote!(if #ct { #tname::encoded_size(ctx) } else { 0 })
                    }
                    None => quote!(#tname::encoded_size(ctx)),
                }
            }
            None => quote!(0usize),
        };
        let ldoc = format!(
            " Where the fixed-position fields of [`{0}`] sit for one context: computed once per \
             event with [`{1}::new`] and shared by every [`{2}`] of that event.",
            s.name, layout, view
        );
        let vdoc = format!(
            " A zero-copy view of a [`{0}`] body: fixed-position fields are read at the offsets \
             of a [`{1}`] (one load each), later fields are decoded when asked. Nothing is \
             copied or allocated; [`{0}::decode`] gives the owned value.",
            s.name, layout
        );
        let layout_ignores_ctx = if mentions(&layout_stmts, "ctx") {
            quote!()
        } else {
            quote!(let _ = ctx;)
        };
        let new_ignores_ctx = if mentions(&trailer_len, "ctx") {
            quote!()
        } else {
            quote!(let _ = ctx;)
        };
        let new_doc = format!(
            " A view of `body` (the bytes after the record header, at absolute offset `base`) \
             decoded with `ctx`, whose layout is `layout` (`{layout}::new(ctx)`). Checks that \
             the fixed-position fields and the trailer fit in the body; later fields are \
             checked when read."
        );
        quote! {
            #[doc = #ldoc]
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
            pub struct #layout {
                #layout_fields
                /// Bytes of the fixed-position fields (where the first field whose position
                /// depends on the data begins).
                pub fixed_len: u16,
            }
            impl #layout {
                /// The offsets for records decoded in context `ctx`.
                pub fn new(ctx: &Ctx) -> Self {
                    #layout_ignores_ctx
                    let mut at: u16 = 0;
                    #layout_stmts
                    Self { #(#layout_inits,)* fixed_len: at }
                }
            }
            #[doc = #vdoc]
            #[derive(Clone, Copy, Debug)]
            pub struct #view<'a, E: rt::Endian = rt::Endianness> {
                bytes: &'a [u8],
                base: u64,
                endian: E,
                ctx: &'a Ctx,
                layout: &'a #layout,
            }
            impl<'a, E: rt::Endian> #view<'a, E> {
                #[doc = #new_doc]
                #[inline]
                pub fn new(
                    body: &'a [u8],
                    base: u64,
                    endian: E,
                    ctx: &'a Ctx,
                    layout: &'a #layout,
                ) -> rt::Result<Self> {
                    #new_ignores_ctx
                    let trailer = #trailer_len;
                    let need = usize::from(layout.fixed_len) + trailer;
                    if body.len() < need {
                        return Err(rt::Error::unexpected_end(base, need as u64, body.len() as u64))
                            .field(stringify!(#name));
                    }
                    Ok(Self { bytes: &body[..body.len() - trailer], base, endian, ctx, layout })
                }
                /// The body bytes this view reads (the trailer excluded).
                pub fn view_bytes(&self) -> &'a [u8] {
                    self.bytes
                }
                /// Absolute offset of the body.
                pub fn view_offset(&self) -> u64 {
                    self.base
                }
                /// The context the view decodes with.
                pub fn view_ctx(&self) -> &'a Ctx {
                    self.ctx
                }
                /// The same view, its byte order a run-time value (to keep beside views
                /// of other orders).
                #[inline]
                pub fn in_runtime_order(self) -> #view<'a> {
                    #view {
                        bytes: self.bytes,
                        base: self.base,
                        endian: self.endian.kind(),
                        ctx: self.ctx,
                        layout: self.layout,
                    }
                }
                #accessors
                #rest_fn
            }
        }
    }

    /// Decodes a walkable field and drops it (typed, so that arrays know their element).
    fn walk_skip(&self, f: &Field, env: &Env) -> TokenStream {
        let v = self.walk_value(f, env);
        let ty = self.rust_ty(&f.ty);
        let ty = if f.cond.is_some() {
            quote!(Option<#ty>)
        } else {
            ty
        };
        quote!(let _: #ty = #v;)
    }

    /// The decoding of a walkable field as one expression (`?` inside), as `decode` does it.
    fn walk_value(&self, f: &Field, env: &Env) -> TokenStream {
        let fname = f.name.as_str();
        let d = self.decode_value(&f.ty, env);
        let val = if d.plain {
            d.ts.clone()
        } else if d.fallible {
            let dt = d.result();
            quote!(rt::in_field(#fname, || #dt)?)
        } else {
            let dt = &d.ts;
            quote!(#dt.field(#fname)?)
        };
        match &f.cond {
            Some(c) => {
                let ct = self.bool_expr(c, env).ts;
                quote!(if #ct { Some(#val) } else { None })
            }
            None => val,
        }
    }

    /// `RecordType::has_<trailer>(ctx)`: whether a record of that type ends with the trailer.
    fn trailer_presence(&self) -> TokenStream {
        let mut by_trailer: std::collections::BTreeMap<String, TokenStream> = Default::default();
        for (_, s) in self.spec.records() {
            let Some((_, tdef, cond)) = self.trailer_field(s) else {
                continue;
            };
            let env = Env::new(s, Mode::Decode);
            let c = format_ident!("{}", id_const_name(&s.name, Dispatch::Record));
            let present = match cond {
                Some(e) => {
                    if !ctx_only(e) {
                        panic!(
                            "record `{}`: a trailer condition may read the context only",
                            s.name
                        );
                    }
                    self.bool_expr(e, &env).ts
                }
                None => quote!(true),
            };
            by_trailer
                .entry(tdef.name.clone())
                .or_default()
                .extend(quote! { RecordType::#c => #present, });
        }
        let mut fns = TokenStream::new();
        for (t, arms) in by_trailer {
            let f = format_ident!("has_{}", snake(&t));
            let doc = format!(
                " True when a record of this type decoded in context `ctx` ends with a `{t}` \
                 trailer (unknown types: false)."
            );
            fns.extend(quote! {
                #[doc = #doc]
                pub fn #f(self, ctx: &Ctx) -> bool {
                    let _ = ctx;
                    match self {
                        #arms
                        _ => false,
                    }
                }
            });
        }
        quote! {
            impl RecordType {
                #fns
            }
        }
    }
}
