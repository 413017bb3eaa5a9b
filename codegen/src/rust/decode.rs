//! `decode`: reading a struct from a bounded reader.

use std::collections::{BTreeSet, HashSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use spec::ir::{Expr, Len, Pattern, Prim, ScalarType, StructDef, StructKind, Switch, TypeRef};

use super::expr::{
    field_refs, lit_u64, lit_usize, param_ident, prim_read, prim_to_u64, walk_expr, Env, Mode, Out,
    Ty,
};
use super::names::{ident, local};
use super::Gen;

impl<'s> Gen<'s> {
    /// Field names mentioned by any expression of `s` that decode evaluates.
    fn decode_refs(&self, s: &StructDef) -> HashSet<String> {
        let mut refs = HashSet::new();
        let mut add = |e: &Expr| refs.extend(field_refs(e));
        fn ty_exprs<'e>(ty: &'e TypeRef, out: &mut Vec<&'e Expr>) {
            match ty {
                TypeRef::Struct { args, .. } => out.extend(args.iter()),
                TypeRef::Array { elem, len } => {
                    if let Len::Expr(e) = len {
                        out.push(e);
                    }
                    ty_exprs(elem, out);
                }
                TypeRef::Bytes(Len::Expr(e)) | TypeRef::Str(Len::Expr(e)) => out.push(e),
                TypeRef::Switch(sw) => {
                    out.push(&sw.on);
                    for a in &sw.arms {
                        ty_exprs(&a.ty, out);
                    }
                }
                TypeRef::FeatureById(e) | TypeRef::Word(e) => out.push(e),
                _ => {}
            }
        }
        let mut exprs: Vec<&Expr> = Vec::new();
        for f in &s.fields {
            ty_exprs(&f.ty, &mut exprs);
            exprs.extend(f.cond.iter());
            exprs.extend(f.within.iter());
            exprs.extend(f.big_endian_if.iter());
        }
        exprs.extend(s.bounded_by.iter());
        exprs.extend(s.payload.iter().map(|p| &p.len));
        for e in exprs {
            add(e);
        }
        refs
    }

    /// An expression of type `rt::Result<T>` decoding one value of `ty` from `r`.
    pub(super) fn decode_value(&self, ty: &TypeRef, env: &Env) -> Out {
        let ok = |ts: TokenStream| Out {
            ts,
            ty: Ty::U64,
            fallible: false,
            infix: false,
            plain: false,
        };
        match ty {
            TypeRef::Scalar(st) => match st {
                ScalarType::Prim(p) => ok(prim_read(*p)),
                ScalarType::Enum(n) | ScalarType::Flags(n) => {
                    let p = self.spec.scalar_repr(st);
                    let id = format_ident!("{}", n);
                    let rd = prim_read(p);
                    ok(quote!(#rd.map(#id)))
                }
                ScalarType::Bitfield(n) => {
                    let p = self.spec.scalar_repr(st);
                    let id = format_ident!("{}", n);
                    let rd = prim_read(p);
                    ok(quote!(#rd.map(|v| #id::from_file(v, r.endian()))))
                }
            },
            TypeRef::Struct { name, args } => {
                let id = format_ident!("{}", name);
                let mut fallible = false;
                let mut a = TokenStream::new();
                for (arg, p) in args.iter().zip(&self.struct_def(name).params) {
                    let o = if matches!(p.ty, ScalarType::Prim(Prim::Bool)) {
                        self.bool_expr(arg, env)
                    } else {
                        self.u64_expr(arg, env)
                    };
                    fallible |= o.fallible;
                    let t = o.ts;
                    a.extend(quote!(, #t));
                }
                Out {
                    ts: quote!(#id::decode(r, ctx #a)),
                    ty: Ty::U64,
                    fallible,
                    infix: false,
                    plain: false,
                }
            }
            TypeRef::Array { elem, len } => {
                if self.layout.is_flat(elem) {
                    match len {
                        Len::Rest => ok(quote!(rt::Array::decode_rest(r))),
                        Len::Expr(e) => {
                            let n = self.u64_expr(e, env);
                            let nt = n.ts;
                            Out {
                                ts: quote!(rt::Array::decode(r, #nt)),
                                fallible: n.fallible,
                                ..ok(quote!())
                            }
                        }
                    }
                } else {
                    let el = self.decode_value(elem, env);
                    let et = el.result();
                    match len {
                        Len::Rest => ok(quote!(r.read_to_end(|r| #et))),
                        Len::Expr(e) => {
                            let n = self.u64_expr(e, env);
                            let nt = n.ts;
                            let min = match elem.as_ref() {
                                // A word's size is known at run time: check the count
                                // against it, not against the 4-byte lower bound.
                                TypeRef::Word(size) if !matches!(size, Expr::Int(_)) => {
                                    let st = self.u64_expr(size, env).ts;
                                    quote!(usize::try_from(#st).unwrap_or(usize::MAX))
                                }
                                TypeRef::Word(Expr::Int(n)) => lit_usize(*n as usize),
                                _ => lit_usize(
                                    self.layout.min_size(elem).min(usize::MAX as u64) as usize
                                ),
                            };
                            Out {
                                ts: quote!(r.read_count(#nt, #min, |r| #et)),
                                fallible: n.fallible,
                                ..ok(quote!())
                            }
                        }
                    }
                }
            }
            TypeRef::Bytes(len) | TypeRef::Str(len) => {
                let is_str = matches!(ty, TypeRef::Str(_));
                match len {
                    Len::Rest => {
                        let m = if is_str {
                            quote!(rest_str)
                        } else {
                            quote!(rest_bytes)
                        };
                        Out {
                            plain: true,
                            ..ok(quote!(r.#m()))
                        }
                    }
                    Len::Expr(e) => {
                        let n = self.u64_expr(e, env);
                        let nt = n.ts;
                        let m = if is_str {
                            quote!(str_field)
                        } else {
                            quote!(bytes_field)
                        };
                        Out {
                            ts: quote!(r.#m(#nt)),
                            fallible: n.fallible,
                            ..ok(quote!())
                        }
                    }
                }
            }
            TypeRef::CStr => ok(quote!(r.cstr())),
            TypeRef::Split { hi, lo } => {
                let (h, l) = (hi.size(), lo.size());
                match TypeRef::split_value(*hi, *lo) {
                    Prim::U64 => ok(quote!(r.split(#h, #l))),
                    p => {
                        let v = super::names::prim_ty(p);
                        // Lossless: the value type is exactly as wide as both parts.
                        ok(quote!(r.split(#h, #l).map(|v| v as #v)))
                    }
                }
            }
            TypeRef::Word(e) => {
                let n = self.u64_expr(e, env);
                let nt = n.ts;
                Out {
                    ts: quote!(r.word(#nt)),
                    fallible: n.fallible,
                    ..ok(quote!())
                }
            }
            TypeRef::Switch(sw) => self.decode_switch(sw, env),
            TypeRef::FeatureById(e) => {
                let n = self.u64_expr(e, env);
                let nt = n.ts;
                Out {
                    ts: quote!(FeatureBody::decode(FeatureId(rt::saturate_u32(#nt)), r, ctx).map(Box::new)),
                    fallible: n.fallible,
                    ..ok(quote!())
                }
            }
        }
    }

    pub(super) fn pattern_tokens(&self, pat: &Pattern) -> TokenStream {
        match pat {
            Pattern::Int(v) => lit_u64(*v),
            Pattern::Bool(b) => quote!(#b),
            Pattern::Default => quote!(_),
        }
    }

    fn decode_switch(&self, sw: &Switch, env: &Env) -> Out {
        let on = self.expr(&sw.on, env);
        let enum_id = format_ident!("{}", sw.enum_name);
        let mut arms = TokenStream::new();
        let mut fallible = on.fallible;
        let mut has_default = false;
        let mut bools = BTreeSet::new();
        for a in &sw.arms {
            let pat = self.pattern_tokens(&a.pat);
            has_default |= a.pat == Pattern::Default;
            if let Pattern::Bool(b) = a.pat {
                bools.insert(b);
            }
            let v = format_ident!("{}", a.variant);
            let d = self.decode_value(&a.ty, env);
            fallible |= d.fallible;
            let arm = if d.plain {
                let dt = d.ts;
                quote!(Ok(#enum_id::#v(#dt)))
            } else {
                let dt = d.ts;
                quote!(#dt.map(#enum_id::#v))
            };
            arms.extend(quote! { #pat => #arm, });
        }
        let exhaustive = has_default || (on.ty == Ty::Bool && bools.len() == 2);
        if !exhaustive {
            let on_text = sw.on.to_string();
            let list: Vec<String> = sw
                .arms
                .iter()
                .map(|a| match a.pat {
                    Pattern::Int(v) => v.to_string(),
                    Pattern::Bool(b) => b.to_string(),
                    Pattern::Default => "_".into(),
                })
                .collect();
            let list = list.join(", ");
            arms.extend(quote! { other => Err(rt::no_arm(r.offset(), #on_text, other, #list)), });
        }
        let ot = on.ts;
        Out {
            ts: quote!(match #ot { #arms }),
            ty: Ty::U64,
            fallible,
            infix: false,
            plain: false,
        }
    }

    pub(super) fn decode_fn(&self, s: &StructDef) -> TokenStream {
        let env = Env::new(s, Mode::Decode);
        let refs = self.decode_refs(s);
        let mut body = TokenStream::new();
        let bounded = s.is_bounded();
        let trailer = self.trailer_field(s);
        let needs_start = bounded || s.pad_to.is_some();
        if needs_start {
            body.extend(quote!(let start = r.offset();));
        }
        if let Some((tid, tdef, cond)) = &trailer {
            let tname = format_ident!("{}", tdef.name);
            let tstr = tid.to_string();
            let split = quote!(r.split_trailer(#tname::encoded_size(ctx)).field(#tstr)?);
            match cond {
                Some(c) => {
                    let c = self.bool_expr(c, &env);
                    let ct = c.ts;
                    body.extend(quote! {
                        let trailer_r = if #ct { Some(#split) } else { None };
                    });
                }
                None => body.extend(quote!(let trailer_r = Some(#split);)),
            }
        }
        // bounded_by: where to limit the reader.
        let limit_after: Option<usize> = s.bounded_by.as_ref().map(|b| {
            let names = field_refs(b);
            s.fields
                .iter()
                .enumerate()
                .filter(|(_, f)| names.contains(&f.name))
                .map(|(i, _)| i + 1)
                .max()
                .unwrap_or(0)
        });
        let limit_stmt = |body: &mut TokenStream| {
            if let Some(b) = &s.bounded_by {
                let o = self.u64_expr(b, &env);
                let ot = o.ts;
                body.extend(quote! {
                    // `bounded_by`: the structure is this many bytes from its start.
                    let r = &mut r.limit_to(start, #ot)?;
                });
            }
        };
        let checks = self.decode_checks(s);
        let mut measured = HashSet::new();
        for (_, e) in &checks {
            walk_expr(e, &mut |x| {
                if let Expr::SizeOf(n) = x {
                    measured.insert(n.clone());
                }
            });
        }
        let mut locals = Vec::new();
        for (i, f) in s.fields.iter().enumerate() {
            if limit_after == Some(i) {
                limit_stmt(&mut body);
            }
            let fname = f.name.as_str();
            let at = format_ident!("{}_at", fname);
            if measured.contains(fname) {
                body.extend(quote!(let #at = r.offset();));
            }
            let l = local(fname);
            let stored = f.computed.is_none();
            let used = stored || refs.contains(fname);
            let d = self.decode_value(&f.ty, &env);
            let val = if d.plain && f.within.is_none() && f.big_endian_if.is_none() {
                d.ts.clone()
            } else if f.within.is_some() || f.big_endian_if.is_some() || d.fallible {
                let dt = &d.result();
                let mut inner = match &f.within {
                    Some(w) => {
                        let n = self.u64_expr(w, &env);
                        let nt = n.ts;
                        quote!(r.within(#nt, |r| #dt))
                    }
                    None => dt.clone(),
                };
                // The data states this field's byte order: decode it in that order.
                if let Some(be) = &f.big_endian_if {
                    let ct = self.bool_expr(be, &env).ts;
                    inner = quote! {
                        r.with_endian(
                            if #ct { rt::Endianness::Big } else { rt::Endianness::Little },
                            |r| #inner,
                        )
                    };
                }
                if d.fallible
                    || f.big_endian_if.is_some()
                    || f.within
                        .as_ref()
                        .is_some_and(|w| self.u64_expr(w, &env).fallible)
                {
                    quote!(rt::in_field(#fname, || #inner)?)
                } else {
                    quote!(#inner.field(#fname)?)
                }
            } else {
                let dt = d.ts;
                quote!(#dt.field(#fname)?)
            };
            let val = match &f.cond {
                Some(c) => {
                    let c = self.bool_expr(c, &env);
                    let ct = c.ts;
                    quote!(if #ct { Some(#val) } else { None })
                }
                None => val,
            };
            let used = used || checks.iter().any(|(n, _)| n == fname);
            if used {
                body.extend(quote!(let #l = #val;));
            } else {
                body.extend(quote!(let _ = #val;));
            }
            if measured.contains(fname) {
                let sz = format_ident!("sizeof_{}", fname);
                body.extend(quote!(let #sz = r.offset() - #at;));
            }
            if stored {
                locals.push((ident(fname), l));
            }
        }
        if limit_after == Some(s.fields.len()) {
            limit_stmt(&mut body);
        }
        if !bounded {
            if let Some(p) = s.pad_to {
                let p = lit_u64(u64::from(p));
                body.extend(quote!(r.zero_padding(start, #p)?;));
            }
        }
        if let Some(p) = &s.payload {
            let o = self.u64_expr(&p.len, &env);
            let ot = o.ts;
            let id = ident(&p.name);
            let l = local(&p.name);
            body.extend(quote!(let #l = rt::Payload::Pending(#ot);));
            locals.push((id, l));
        }
        if bounded {
            let p = lit_u64(u64::from(s.pad_to.unwrap_or(1)));
            body.extend(quote!(let tail = r.tail(start, #p);));
            locals.push((format_ident!("tail"), format_ident!("tail")));
        }
        let needs_self = checks.iter().any(|(_, e)| {
            let mut found = false;
            walk_expr(e, &mut |x| found |= matches!(x, Expr::SizeOfSelf));
            found
        });
        if needs_self {
            let tlen = if trailer.is_some() {
                quote!(+ trailer_r.as_ref().map_or(0, |t| t.remaining() as u64))
            } else {
                quote!()
            };
            body.extend(quote!(let sizeof_self = r.offset() - start #tlen;));
        }
        for (name, e) in &checks {
            // A computed value the writer would compute differently cannot round-trip.
            let f = self.field_def(s, name).expect("checked field");
            let p = match &f.ty {
                TypeRef::Scalar(ScalarType::Prim(p)) => *p,
                TypeRef::Word(_) => Prim::U64,
                TypeRef::Split { hi, lo } => TypeRef::split_value(*hi, *lo),
                _ => panic!(
                    "struct `{}`: computed field `{name}` must have an integer type",
                    s.name
                ),
            };
            let l = local(name);
            let text = e.to_string();
            let value = self.computed_value_inner(e, s, false).0;
            let stmt = |v: TokenStream| {
                let found = prim_to_u64(p, v);
                quote!(rt::check_computed(#found, #value, #text).field(#name)?;)
            };
            if f.cond.is_some() {
                let inner = stmt(quote!(v_));
                body.extend(quote!(if let Some(v_) = #l { #inner }));
            } else {
                body.extend(stmt(quote!(#l)));
            }
        }
        if let Some((tid, tdef, _)) = &trailer {
            let tname = format_ident!("{}", tdef.name);
            let tstr = tid.to_string();
            body.extend(quote! {
                let #tid = match trailer_r {
                    Some(mut t) => Some(#tname::decode(&mut t, ctx).field(#tstr)?),
                    None => None,
                };
            });
            locals.push((tid.clone(), tid.clone()));
        }
        let inits = locals
            .iter()
            .map(|(f, l)| if f == l { quote!(#f) } else { quote!(#f: #l) });
        body.extend(quote!(Ok(Self { #(#inits),* })));
        let params = self.params_sig(s, &body);
        let ctx_id = param_ident(&body, "ctx");
        let r_id = param_ident(&body, "r");
        let rlt = if self.layout.of_struct(&s.name).borrows {
            quote!('a)
        } else {
            quote!('_)
        };
        let fdoc = self.decode_doc(s);
        // A small plain structure (a count and its array: a callchain) is decoded where it
        // is asked for: a view's on-demand field would otherwise cost a call per record.
        let inline = (matches!(s.kind, StructKind::Plain)
            && s.fields.len() <= 2
            && trailer.is_none()
            && s.payload.is_none())
        .then(|| quote!(#[inline]));
        quote! {
            #[doc = #fdoc]
            #inline
            pub fn decode<E: rt::Endian>(#r_id: &mut rt::Reader<#rlt, E>, #ctx_id: &Ctx #params) -> rt::Result<Self> {
                #body
            }
        }
    }

    /// Computed fields whose decoded value decoding does not already make consistent (a
    /// `len`/`count` that is exactly the length of its field is): `(field, expression)`.
    fn decode_checks(&self, s: &'s StructDef) -> Vec<(String, &'s Expr)> {
        let mut out = Vec::new();
        for f in &s.fields {
            let Some(e) = &f.computed else { continue };
            let trivial = match e {
                Expr::LenOf(t) | Expr::CountOf(t) => {
                    s.payload.as_ref().is_some_and(|p| p.name == *t)
                        || self.field_def(s, t).is_some_and(|tf| match &tf.ty {
                            TypeRef::Array {
                                len: Len::Expr(Expr::Field(n)),
                                ..
                            }
                            | TypeRef::Bytes(Len::Expr(Expr::Field(n)))
                            | TypeRef::Str(Len::Expr(Expr::Field(n))) => *n == f.name,
                            _ => false,
                        })
                }
                Expr::SizeOf(t) => self
                    .field_def(s, t)
                    .is_some_and(|tf| matches!(&tf.within, Some(Expr::Field(n)) if *n == f.name)),
                Expr::SizeOfSelf => matches!(&s.bounded_by, Some(Expr::Field(n)) if *n == f.name),
                _ => false,
            };
            let mentions_payload = s.payload.as_ref().is_some_and(|p| {
                let mut found = false;
                walk_expr(e, &mut |x| {
                    found |= matches!(x, Expr::LenOf(n) if *n == p.name)
                });
                found
            });
            if !trivial && !mentions_payload {
                out.push((f.name.clone(), e));
            }
        }
        out
    }

    pub(super) fn decode_doc(&self, s: &StructDef) -> String {
        match &s.kind {
            StructKind::Record { .. } => " Decodes the record body (after the 8-byte header) from `r`, which holds exactly the body.".into(),
            StructKind::Feature { .. } => " Decodes the feature section from `r`, which holds exactly the section.".into(),
            StructKind::Plain if s.bounded_by.is_some() => " Decodes from `r`; the structure limits itself to its `bounded_by` size.".into(),
            StructKind::Plain => " Decodes from `r`.".into(),
        }
    }
}
