//! `encode`: writing a struct, computed fields computed, sizes patched once known.

use std::collections::HashSet;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use spec::ir::{
    Arm, BinOp, Expr, Field, Func, Len, Pattern, Prim, ScalarType, StructDef, Switch, TypeRef,
};

use super::expr::{
    field_refs, lit_prim, lit_u64, lit_usize, mentions, param_ident, prim_put, uses_remaining,
    uses_sizeof, walk_expr, Env, Mode,
};
use super::names::{ident, local, prim_ty};
use super::Gen;

/// Where a value to encode is.
struct Place {
    /// The value (`self.x`) or a reference to it (`x0`).
    place: TokenStream,
    is_ref: bool,
    /// Error-path suffix for fallible calls: `.index(i0).field("x")`.
    chain: TokenStream,
    /// Nesting depth (names loop variables).
    depth: usize,
}

/// What encoding one struct shares.
struct EncCx<'e> {
    env: &'e Env<'e>,
    /// Computed fields written as placeholders and patched at the end.
    deferred: &'e HashSet<String>,
}

impl<'s> Gen<'s> {
    fn deferred_fields(&self, s: &StructDef) -> HashSet<String> {
        s.fields
            .iter()
            .filter(|f| f.computed.as_ref().is_some_and(uses_sizeof))
            .map(|f| f.name.clone())
            .collect()
    }

    /// Whether `e` can be evaluated while encoding (before deferred fields are patched).
    fn encode_evaluable(&self, e: &Expr, deferred: &HashSet<String>) -> bool {
        !uses_remaining(e) && field_refs(e).iter().all(|n| !deferred.contains(n))
    }

    /// The value of a computed field's expression from the content (`self`).
    fn computed_value(&self, e: &Expr, s: &StructDef) -> TokenStream {
        self.computed_value_inner(e, s, true).0
    }

    /// `(tokens, is a cast that needs parentheses as a receiver)`. `from_self`: the content
    /// is `self.x` (encoding), else the decoded locals.
    pub(super) fn computed_value_inner(
        &self,
        e: &Expr,
        s: &StructDef,
        from_self: bool,
    ) -> (TokenStream, bool) {
        let field = |name: &str| -> TokenStream {
            if from_self {
                let id = ident(name);
                quote!(self.#id)
            } else {
                let l = local(name);
                quote!(#l)
            }
        };
        let recv = |(ts, infix): (TokenStream, bool)| if infix { quote!((#ts)) } else { ts };
        let len_of = |name: &str| -> (TokenStream, bool) {
            if let Some(p) = &s.payload {
                if p.name == name {
                    let v = field(name);
                    return (quote!(#v.len() as u64), true);
                }
            }
            let f = match self.field_def(s, name) {
                Some(f) => f,
                None => panic!(
                    "struct `{}`: computed value refers to unknown field `{name}`",
                    s.name
                ),
            };
            let v = field(name);
            if f.cond.is_some() {
                (quote!(#v.as_ref().map_or(0, |x| x.len() as u64)), false)
            } else {
                (quote!(#v.len() as u64), true)
            }
        };
        let plain = |ts: TokenStream| (ts, false);
        match e {
            Expr::Int(v) => {
                let l = Literal::u64_suffixed(*v);
                plain(quote!(#l))
            }
            Expr::LenOf(n) | Expr::CountOf(n) => len_of(n),
            Expr::SizeOf(n) => {
                let id = format_ident!("sizeof_{}", n);
                plain(quote!(#id))
            }
            Expr::SizeOfSelf => plain(quote!(sizeof_self)),
            Expr::Binary(op, a, b) => {
                let x = recv(self.computed_value_inner(a, s, from_self));
                let y = self.computed_value_inner(b, s, from_self).0;
                plain(match op {
                    BinOp::Add => quote!(#x.saturating_add(#y)),
                    BinOp::Sub => quote!(#x.saturating_sub(#y)),
                    BinOp::Mul => quote!(#x.saturating_mul(#y)),
                    BinOp::Div => quote!(#x.checked_div(#y).unwrap_or(0)),
                    _ => panic!("struct `{}`: operator {op:?} in a computed value", s.name),
                })
            }
            Expr::Call(Func::Align, args) if args.len() == 2 => {
                let x = self.computed_value_inner(&args[0], s, from_self).0;
                let y = self.computed_value_inner(&args[1], s, from_self).0;
                plain(quote!(rt::align(#x, #y)))
            }
            Expr::Call(Func::Max, args) | Expr::Call(Func::Min, args) if args.len() == 2 => {
                let x = self.computed_value_inner(&args[0], s, from_self).0;
                let y = self.computed_value_inner(&args[1], s, from_self).0;
                let m = if matches!(e, Expr::Call(Func::Max, _)) {
                    quote!(max)
                } else {
                    quote!(min)
                };
                plain(quote!(u64::#m(#x, #y)))
            }
            other => panic!(
                "struct `{}`: unsupported computed expression {}",
                s.name, other
            ),
        }
    }

    /// Statements writing one value of `ty` held at `place` (`is_ref`: `place` is a
    /// reference). `chain`: the error-path suffix (`.index(i0).field("x")`).
    fn encode_value(
        &self,
        ty: &TypeRef,
        at: &Place,
        cx: &EncCx,
        skip_len_check: bool,
    ) -> TokenStream {
        let (place, is_ref, chain, depth) = (&at.place, at.is_ref, &at.chain, at.depth);
        let (env, deferred) = (cx.env, cx.deferred);
        let by_val = || {
            if is_ref {
                quote!(*#place)
            } else {
                place.clone()
            }
        };
        let by_ref = || {
            if is_ref {
                place.clone()
            } else {
                quote!(&#place)
            }
        };
        let len_check = |len: &Len, unit: &str| -> TokenStream {
            match len {
                Len::Expr(e) if !skip_len_check && self.encode_evaluable(e, deferred) => {
                    let o = self.u64_expr(e, env);
                    let ot = o.ts;
                    let text = e.to_string();
                    quote!(rt::check_len(#place.len(), #ot, #unit, #text) #chain?;)
                }
                _ => quote!(),
            }
        };
        match ty {
            TypeRef::Scalar(st) => {
                let p = self.spec.scalar_repr(st);
                let put = prim_put(p);
                match st {
                    ScalarType::Prim(_) => {
                        let v = by_val();
                        quote!(w.#put(#v);)
                    }
                    ScalarType::Enum(_) | ScalarType::Flags(_) => quote!(w.#put(#place.0);),
                    ScalarType::Bitfield(_) => quote!(w.#put(#place.to_file(w.endian()));),
                }
            }
            TypeRef::Struct { name, args } => {
                let mut a = TokenStream::new();
                for (arg, p) in args.iter().zip(&self.struct_def(name).params) {
                    if !self.encode_evaluable(arg, deferred) {
                        panic!("struct `{}`: argument {arg} of `{name}` cannot be evaluated while encoding", env.s.name);
                    }
                    let o = if matches!(p.ty, ScalarType::Prim(Prim::Bool)) {
                        self.bool_expr(arg, env)
                    } else {
                        self.u64_expr(arg, env)
                    };
                    let t = o.ts;
                    a.extend(quote!(, #t));
                }
                quote!(#place.encode(w, ctx #a) #chain?;)
            }
            TypeRef::Array { elem, len } => {
                let check = len_check(len, "elements");
                if self.layout.is_flat(elem) {
                    quote!(#check #place.encode(w);)
                } else {
                    let i = format_ident!("i{}", depth);
                    let v = format_ident!("v{}", depth);
                    let inner_chain = quote!(.index(#i) #chain);
                    let inner = self.encode_value(
                        elem,
                        &Place {
                            place: quote!(#v),
                            is_ref: true,
                            chain: inner_chain,
                            depth: depth + 1,
                        },
                        cx,
                        false,
                    );
                    let uses_i = mentions(&inner, &i.to_string());
                    let lp = if uses_i {
                        quote!(for (#i, #v) in #place.iter().enumerate() { #inner })
                    } else {
                        quote!(for #v in #place.iter() { #inner })
                    };
                    quote!(#check #lp)
                }
            }
            TypeRef::Bytes(len) => {
                let check = len_check(len, "bytes");
                let b = by_ref();
                quote!(#check w.put_bytes(#b);)
            }
            TypeRef::Str(len) => {
                let check = len_check(len, "bytes");
                quote!(#check w.put_bytes(#place.raw());)
            }
            TypeRef::CStr => {
                let b = by_ref();
                quote!(w.put_cstr(#b) #chain?;)
            }
            TypeRef::Word(e) => {
                let n = self.u64_expr(e, env).ts;
                let v = by_val();
                quote!(w.put_word(#n, #v) #chain?;)
            }
            TypeRef::Split { hi, lo } => {
                let (h, l) = (hi.size(), lo.size());
                let v = by_val();
                quote!(w.put_split(#h, #l, u64::from(#v));)
            }
            TypeRef::Switch(sw) => self.encode_switch(sw, at, cx),
            TypeRef::FeatureById(e) => {
                let check = if self.encode_evaluable(e, deferred) {
                    let o = self.u64_expr(e, env);
                    let ot = o.ts;
                    let text = e.to_string();
                    quote! {
                        if let Some(id) = #place.feature_id() {
                            rt::check_variant(u64::from(id.0) == #ot, &id.to_string(), #text, #ot) #chain?;
                        }
                    }
                } else {
                    quote!()
                };
                quote!(#check #place.encode(w, ctx) #chain?;)
            }
        }
    }

    fn encode_switch(&self, sw: &Switch, at: &Place, cx: &EncCx) -> TokenStream {
        let (place, is_ref, chain, depth) = (&at.place, at.is_ref, &at.chain, at.depth);
        let (env, deferred) = (cx.env, cx.deferred);
        let enum_id = format_ident!("{}", sw.enum_name);
        let evaluable = self.encode_evaluable(&sw.on, deferred);
        let on = self.expr(&sw.on, env);
        let on_text = sw.on.to_string();
        let explicit: Vec<&Pattern> = sw
            .arms
            .iter()
            .map(|a| &a.pat)
            .filter(|p| **p != Pattern::Default)
            .collect();
        let disc = format_ident!("disc{}", depth);
        let mut arms = TokenStream::new();
        // Group arms by variant (one variant may serve several patterns).
        let mut variants: Vec<(&str, Vec<&Arm>)> = Vec::new();
        for a in &sw.arms {
            match variants.iter_mut().find(|(v, _)| *v == a.variant) {
                Some((_, v)) => v.push(a),
                None => variants.push((&a.variant, vec![a])),
            }
        }
        for (vname, group) in &variants {
            let v = format_ident!("{}", vname);
            let x = format_ident!("x{}", depth);
            let inner = self.encode_value(
                &group[0].ty,
                &Place {
                    place: quote!(#x),
                    is_ref: true,
                    chain: chain.clone(),
                    depth: depth + 1,
                },
                cx,
                false,
            );
            let check = if evaluable {
                let conds: Vec<TokenStream> = group
                    .iter()
                    .map(|a| match a.pat {
                        Pattern::Default => {
                            if explicit.is_empty() {
                                quote!(true)
                            } else {
                                let pats = explicit.iter().map(|p| self.pattern_tokens(p));
                                quote!(!matches!(#disc, #(#pats)|*))
                            }
                        }
                        Pattern::Bool(true) => quote!(#disc),
                        Pattern::Bool(false) => quote!(!#disc),
                        p => {
                            let pt = self.pattern_tokens(&p);
                            quote!(#disc == #pt)
                        }
                    })
                    .collect();
                let vs = vname.to_string();
                quote!(rt::check_variant(#(#conds)||*, #vs, #on_text, #disc) #chain?;)
            } else {
                quote!()
            };
            arms.extend(quote! { #enum_id::#v(#x) => { #check #inner } });
        }
        let m = if is_ref {
            place.clone()
        } else {
            quote!(&#place)
        };
        let pre = if evaluable && mentions(&arms, &disc.to_string()) {
            let ot = on.ts;
            quote!(let #disc = #ot;)
        } else {
            quote!()
        };
        quote! { #pre match #m { #arms } }
    }

    pub(super) fn encode_fn(&self, s: &StructDef) -> TokenStream {
        // Pass 1 finds the fields whose values later expressions use; pass 2 binds them.
        let (_, used) = self.encode_fn_pass(s, &HashSet::new());
        self.encode_fn_pass(s, &used).0
    }

    fn encode_fn_pass(
        &self,
        s: &StructDef,
        refs: &HashSet<String>,
    ) -> (TokenStream, HashSet<String>) {
        let env = Env::new(s, Mode::Encode);
        let deferred = self.deferred_fields(s);
        let mut body = TokenStream::new();
        let mut patches = TokenStream::new();
        let bounded = s.is_bounded();
        let trailer = self.trailer_field(s);
        let sizeof_fields: HashSet<String> = s
            .fields
            .iter()
            .filter_map(|f| f.computed.as_ref())
            .flat_map(|e| {
                let mut v = Vec::new();
                walk_expr(e, &mut |x| {
                    if let Expr::SizeOf(n) = x {
                        v.push(n.clone());
                    }
                });
                v
            })
            .collect();
        let needs_self = s
            .fields
            .iter()
            .filter_map(|f| f.computed.as_ref())
            .any(|e| {
                let mut found = false;
                walk_expr(e, &mut |x| found |= matches!(x, Expr::SizeOfSelf));
                found
            });
        let needs_start = bounded || s.pad_to.is_some() || needs_self || s.bounded_by.is_some();
        if needs_start {
            body.extend(quote!(let start = w.len();));
        }
        for f in &s.fields {
            let fname = f.name.as_str();
            let id = ident(fname);
            let l = local(fname);
            let chain = quote!(.field(#fname));
            let measure = sizeof_fields.contains(fname);
            let at = format_ident!("{}_at", fname);
            if measure {
                body.extend(quote!(let #at = w.len();));
            }
            if let (Some(ce), TypeRef::Word(size)) = (&f.computed, &f.ty) {
                body.extend(self.encode_computed_word(
                    s,
                    f,
                    ce,
                    size,
                    &env,
                    &deferred,
                    &mut patches,
                ));
            } else if let Some(ce) = &f.computed {
                let p = match &f.ty {
                    TypeRef::Scalar(ScalarType::Prim(p)) => *p,
                    _ => panic!(
                        "struct `{}`: computed field `{fname}` must have an integer type",
                        s.name
                    ),
                };
                let pty = prim_ty(p);
                let put = prim_put(p);
                if deferred.contains(fname) {
                    let zero = lit_prim(p, 0);
                    let patch = format_ident!(
                        "patch_{}",
                        match p {
                            Prim::U8 | Prim::I8 => "u8",
                            Prim::U16 | Prim::I16 => "u16",
                            Prim::U32 | Prim::I32 => "u32",
                            _ => "u64",
                        }
                    );
                    let value = self.computed_value(ce, s);
                    let cast = match p {
                        Prim::I8 => quote!(as u8),
                        Prim::I16 => quote!(as u16),
                        Prim::I32 => quote!(as u32),
                        Prim::I64 => quote!(as u64),
                        _ => quote!(),
                    };
                    body.extend(quote! {
                        // Written once its value is known (below).
                        let #at = w.len();
                        w.#put(#zero);
                    });
                    patches.extend(quote! {
                        let #l: #pty = rt::fit(#value) #chain?;
                        w.#patch(#at, #l #cast);
                    });
                } else {
                    let value = self.computed_value(ce, s);
                    match &f.cond {
                        Some(c) if self.encode_evaluable(c, &deferred) => {
                            let c = self.bool_expr(c, &env);
                            let ct = c.ts;
                            body.extend(quote! {
                                let #l: Option<#pty> = if #ct { Some(rt::fit(#value) #chain?) } else { None };
                                if let Some(v_) = #l { w.#put(v_); }
                            });
                        }
                        _ => {
                            body.extend(quote! {
                                let #l: #pty = rt::fit(#value) #chain?;
                                w.#put(#l);
                            });
                        }
                    }
                }
            } else {
                // A stored field.
                let place = quote!(self.#id);
                let skip = self.len_is_own_count(s, f);
                let mut stmts = TokenStream::new();
                let write = |place: &TokenStream, is_ref: bool| -> TokenStream {
                    let cx = EncCx {
                        env: &env,
                        deferred: &deferred,
                    };
                    let at = Place {
                        place: place.clone(),
                        is_ref,
                        chain: chain.clone(),
                        depth: 0,
                    };
                    let mut inner = self.encode_value(&f.ty, &at, &cx, skip);
                    // The data states this field's byte order: encode it in that order.
                    if let Some(be) = &f.big_endian_if {
                        let ct = self.bool_expr(be, &env).ts;
                        inner = quote! {
                            w.with_endian(
                                if #ct { rt::Endianness::Big } else { rt::Endianness::Little },
                                |w| -> rt::Result<()> { #inner Ok(()) },
                            )?;
                        };
                    }
                    match &f.within {
                        Some(wexpr) => {
                            let wat = format_ident!("within_at");
                            if self.encode_evaluable(wexpr, &deferred) {
                                let o = self.u64_expr(wexpr, &env);
                                let ot = o.ts;
                                let text = wexpr.to_string();
                                quote! {
                                    let #wat = w.len();
                                    #inner
                                    rt::check_len(w.len() - #wat, #ot, "bytes", #text) #chain?;
                                }
                            } else {
                                inner
                            }
                        }
                        None => inner,
                    }
                };
                match &f.cond {
                    Some(c) => {
                        if self.encode_evaluable(c, &deferred) {
                            let co = self.bool_expr(c, &env);
                            let ct = co.ts;
                            let text = c.to_string();
                            stmts.extend(
                                quote!(rt::check_presence(#place.is_some(), #ct, #text) #chain?;),
                            );
                        }
                        let inner = write(&quote!(v_), true);
                        stmts.extend(quote!(if let Some(v_) = &#place { #inner }));
                    }
                    None => stmts.extend(write(&place, false)),
                }
                body.extend(stmts);
                if refs.contains(fname)
                    && matches!(
                        f.ty,
                        TypeRef::Scalar(_) | TypeRef::Word(_) | TypeRef::Split { .. }
                    )
                {
                    body.extend(quote!(let #l = self.#id;));
                }
            }
            if measure {
                let sz = format_ident!("sizeof_{}", fname);
                body.extend(quote!(let #sz = (w.len() - #at) as u64;));
            }
        }
        if bounded {
            let p = lit_u64(u64::from(s.pad_to.unwrap_or(1)));
            body.extend(quote!(w.put_tail(&self.tail, start, #p);));
        } else if let Some(p) = s.pad_to {
            let p = lit_u64(u64::from(p));
            body.extend(quote!(w.pad_from(start, #p);));
        }
        if let Some((tid, _, cond)) = &trailer {
            let tstr = tid.to_string();
            if let Some(c) = cond {
                if self.encode_evaluable(c, &deferred) {
                    let co = self.bool_expr(c, &env);
                    let ct = co.ts;
                    let text = c.to_string();
                    body.extend(
                        quote!(rt::check_presence(self.#tid.is_some(), #ct, #text).field(#tstr)?;),
                    );
                }
            } else {
                body.extend(
                    quote!(rt::check_presence(self.#tid.is_some(), true, "true").field(#tstr)?;),
                );
            }
            body.extend(quote! {
                if let Some(t) = &self.#tid {
                    t.encode(w, ctx).field(#tstr)?;
                }
            });
        }
        if needs_self {
            body.extend(quote!(let sizeof_self = (w.len() - start) as u64;));
        }
        body.extend(patches);
        if let Some(b) = &s.bounded_by {
            if !uses_remaining(b) {
                let o = self.u64_expr(b, &env);
                let ot = o.ts;
                let text = b.to_string();
                body.extend(quote!(rt::check_len(w.len() - start, #ot, "bytes", #text)?;));
            }
        }
        if let Some(p) = &s.payload {
            let trivially = match &p.len {
                Expr::Field(n) => self
                    .field_def(s, n)
                    .and_then(|f| f.computed.as_ref())
                    .is_some_and(|c| matches!(c, Expr::LenOf(x) if *x == p.name)),
                _ => false,
            };
            if !trivially && !uses_remaining(&p.len) {
                let o = self.u64_expr(&p.len, &env);
                let ot = o.ts;
                let id = ident(&p.name);
                let text = p.len.to_string();
                let pname = &p.name;
                body.extend(
                    quote!(rt::check_len(self.#id.len(), #ot, "bytes", #text).field(#pname)?;),
                );
            }
        }
        body.extend(quote!(Ok(())));
        let params = self.params_sig(s, &body);
        let ctx_id = param_ident(&body, "ctx");
        let w_id = param_ident(&body, "w");
        let f = quote! {
            /// Encodes in byte order `E`, computing lengths, counts and sizes from the content;
            /// a value that contradicts itself is an `Inconsistent` error.
            pub fn encode<E: rt::Endian>(&self, #w_id: &mut rt::Writer<E>, #ctx_id: &Ctx #params) -> rt::Result<()> {
                #body
            }
        };
        let used = env.used.into_inner();
        (f, used)
    }

    /// True when `f`'s length is a computed field that counts `f` itself (no check needed).
    /// A computed `word[size]` field: written at once, or as a zero word patched once its
    /// value is known (`deferred`, e.g. a `sizeof(self)`).
    #[allow(clippy::too_many_arguments)]
    fn encode_computed_word(
        &self,
        s: &StructDef,
        f: &Field,
        ce: &Expr,
        size: &Expr,
        env: &Env,
        deferred: &HashSet<String>,
        patches: &mut TokenStream,
    ) -> TokenStream {
        let fname = f.name.as_str();
        let l = local(fname);
        let chain = quote!(.field(#fname));
        let n = self.u64_expr(size, env).ts;
        let value = self.computed_value(ce, s);
        if deferred.contains(fname) {
            let at = format_ident!("{}_at", fname);
            let ws = format_ident!("{}_size", fname);
            patches.extend(quote! {
                let #l: u64 = rt::fit(#value) #chain?;
                w.patch_word(#at, #ws, #l) #chain?;
            });
            return quote! {
                // Written once its value is known (below).
                let #ws = #n;
                let #at = w.len();
                w.put_word(#ws, 0) #chain?;
            };
        }
        match &f.cond {
            Some(c) if self.encode_evaluable(c, deferred) => {
                let ct = self.bool_expr(c, env).ts;
                quote! {
                    let #l: Option<u64> = if #ct { Some(rt::fit(#value) #chain?) } else { None };
                    if let Some(v_) = #l { w.put_word(#n, v_) #chain?; }
                }
            }
            _ => quote! {
                let #l: u64 = rt::fit(#value) #chain?;
                w.put_word(#n, #l) #chain?;
            },
        }
    }

    fn len_is_own_count(&self, s: &StructDef, f: &Field) -> bool {
        let len = match &f.ty {
            TypeRef::Array {
                len: Len::Expr(e), ..
            }
            | TypeRef::Bytes(Len::Expr(e))
            | TypeRef::Str(Len::Expr(e)) => e,
            _ => return false,
        };
        match len {
            Expr::Field(n) => self
                .field_def(s, n)
                .and_then(|c| c.computed.as_ref())
                .is_some_and(|c| matches!(c, Expr::LenOf(x) | Expr::CountOf(x) if *x == f.name)),
            _ => false,
        }
    }

    pub(super) fn encoded_size_fn(&self, s: &StructDef) -> TokenStream {
        let env = Env::new(s, Mode::Size);
        let mut body = TokenStream::new();
        for f in &s.fields {
            let size = match &f.ty {
                TypeRef::Scalar(st) => lit_usize(self.spec.scalar_repr(st).size() as usize),
                TypeRef::Split { hi, lo } => lit_usize((hi.size() + lo.size()) as usize),
                TypeRef::Array {
                    elem,
                    len: Len::Expr(e),
                } if self.layout.is_flat(elem) => {
                    let per = lit_usize(self.flat_size(elem));
                    let n = self.u64_expr(e, &env);
                    let nt = n.ts;
                    quote!(usize::try_from(#nt).unwrap_or(usize::MAX).saturating_mul(#per))
                }
                _ => panic!(
                    "struct `{}` is a trailer but field `{}` has no fixed size",
                    s.name, f.name
                ),
            };
            match &f.cond {
                Some(c) => {
                    let c = self.bool_expr(c, &env);
                    let ct = c.ts;
                    body.extend(quote!(if #ct { n = n.saturating_add(#size); }));
                }
                None => body.extend(quote!(n = n.saturating_add(#size);)),
            }
        }
        let ctx_id = param_ident(&body, "ctx");
        quote! {
            /// Encoded size given the context (the trailer is read from the end of a body).
            pub fn encoded_size(#ctx_id: &Ctx) -> usize {
                let mut n = 0usize;
                #body
                n
            }
        }
    }
}
