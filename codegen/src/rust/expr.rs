//! Spec expressions as Rust expressions, and the literals and primitive helpers they use.

use std::collections::HashSet;

use proc_macro2::{Ident, Literal, TokenStream, TokenTree};
use quote::{format_ident, quote};
use spec::ir::{BinOp, Expr, Field, Func, Prim, ScalarType, StructDef, TypeRef};

use super::names::{ident, local};
use super::Gen;

pub(super) fn lit_u64(v: u64) -> TokenStream {
    if v > 0xffff {
        let s = format!("{v:#x}");
        let l: Literal = s.parse().expect("hex literal");
        quote!(#l)
    } else {
        let l = Literal::u64_unsuffixed(v);
        quote!(#l)
    }
}

pub(super) fn lit_usize(v: usize) -> TokenStream {
    let l = Literal::usize_unsuffixed(v);
    quote!(#l)
}

/// A literal of type `p` for a value stored as two's complement in `p`'s width.
pub(super) fn lit_prim(p: Prim, v: u64) -> TokenStream {
    let bits = p.size() * 8;
    let signed = matches!(p, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64);
    if signed && bits > 0 {
        let shift = 64 - bits;
        let sv = ((v << shift) as i64) >> shift;
        if sv < 0 {
            if sv == i64::MIN {
                return quote!(i64::MIN);
            }
            let mag = Literal::u64_unsuffixed(sv.unsigned_abs());
            return quote!(-#mag);
        }
        return lit_u64(sv as u64);
    }
    if p == Prim::F64 {
        let l = Literal::f64_suffixed(f64::from_bits(v));
        return quote!(#l);
    }
    lit_u64(v)
}

/// `r.u32()` etc.
pub(super) fn prim_read(p: Prim) -> TokenStream {
    let m = format_ident!("{}", p.name());
    quote!(r.#m())
}

/// `w.put_u32` etc.
pub(super) fn prim_put(p: Prim) -> Ident {
    format_ident!("put_{}", p.name())
}

/// `v` (of prim type `p`) as a `u64` expression.
pub(super) fn prim_to_u64(p: Prim, v: TokenStream) -> TokenStream {
    match p {
        Prim::U64 => v,
        Prim::U8 | Prim::U16 | Prim::U32 => quote!(u64::from(#v)),
        Prim::Bool => quote!(u64::from(#v)),
        _ => quote!(#v as u64),
    }
}

/// True when [`prim_to_u64`] gives a cast (which needs parentheses as an operand).
fn prim_cast(p: Prim) -> bool {
    !matches!(p, Prim::U64 | Prim::U8 | Prim::U16 | Prim::U32 | Prim::Bool)
}

pub(super) fn mentions(ts: &TokenStream, name: &str) -> bool {
    ts.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}

/// `name` as a parameter: itself when the body uses it, `_name` otherwise.
pub(super) fn param_ident(body: &TokenStream, name: &str) -> Ident {
    if mentions(body, name) {
        format_ident!("{}", name)
    } else {
        format_ident!("_{}", name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ty {
    U64,
    Bool,
}

pub(super) struct Out {
    pub(super) ts: TokenStream,
    pub(super) ty: Ty,
    /// Contains `?` (must sit in a function or closure returning `rt::Result`).
    pub(super) fallible: bool,
    /// An infix expression (parenthesise as an operand or receiver).
    pub(super) infix: bool,
    /// (Decoded values only) `ts` is the value itself rather than an `rt::Result`.
    pub(super) plain: bool,
}

impl Out {
    fn atom(ts: TokenStream, ty: Ty) -> Out {
        Out {
            ts,
            ty,
            fallible: false,
            infix: false,
            plain: false,
        }
    }
    /// The decoded value as an `rt::Result` expression.
    pub(super) fn result(&self) -> TokenStream {
        let ts = &self.ts;
        if self.plain {
            quote!(Ok(#ts))
        } else {
            ts.clone()
        }
    }
    fn operand(&self) -> TokenStream {
        let ts = &self.ts;
        if self.infix {
            quote!((#ts))
        } else {
            ts.clone()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Decode,
    Encode,
    /// `encoded_size(ctx)` of a trailer: infallible, context only.
    Size,
}

/// Everything an expression can refer to.
pub(super) struct Env<'e> {
    pub(super) s: &'e StructDef,
    pub(super) mode: Mode,
    /// Fields whose locals the generated code refers to.
    pub(super) used: std::cell::RefCell<HashSet<String>>,
}

impl<'e> Env<'e> {
    pub(super) fn new(s: &'e StructDef, mode: Mode) -> Self {
        Env {
            s,
            mode,
            used: Default::default(),
        }
    }
}

pub(super) fn walk_expr<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    f(e);
    match e {
        Expr::Not(x) => walk_expr(x, f),
        Expr::Binary(_, a, b) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        Expr::Has { value, .. } => walk_expr(value, f),
        Expr::Call(_, args) => args.iter().for_each(|a| walk_expr(a, f)),
        _ => {}
    }
}

pub(super) fn uses_remaining(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| found |= matches!(x, Expr::Remaining));
    found
}

pub(super) fn field_refs(e: &Expr) -> Vec<String> {
    let mut v = Vec::new();
    walk_expr(e, &mut |x| {
        if let Expr::Field(n) = x {
            v.push(n.clone());
        }
    });
    v
}

pub(super) fn uses_sizeof(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        found |= matches!(x, Expr::SizeOf(_) | Expr::SizeOfSelf)
    });
    found
}

impl<'s> Gen<'s> {
    pub(super) fn field_def<'e>(&self, s: &'e StructDef, name: &str) -> Option<&'e Field> {
        s.fields.iter().find(|f| f.name == name)
    }

    fn ctx_ty(&self, name: &str) -> &'s ScalarType {
        match self.spec.context.fields.iter().find(|f| f.name == name) {
            Some(f) => &f.ty,
            None => panic!("unknown context field `{name}`"),
        }
    }

    fn param_scalar<'e>(&self, s: &'e StructDef, name: &str) -> &'e ScalarType {
        match s.params.iter().find(|p| p.name == name) {
            Some(p) => &p.ty,
            None => panic!("struct `{}`: unknown parameter `{name}`", s.name),
        }
    }

    /// A scalar value `v` of type `st` as a u64 (or bool) expression.
    fn scalar_value(&self, st: &ScalarType, v: TokenStream) -> Out {
        match st {
            ScalarType::Prim(Prim::Bool) => Out::atom(v, Ty::Bool),
            ScalarType::Prim(p) => {
                let ts = prim_to_u64(*p, v);
                Out {
                    infix: prim_cast(*p),
                    ..Out::atom(ts, Ty::U64)
                }
            }
            other => {
                let p = self.spec.scalar_repr(other);
                Out {
                    infix: prim_cast(p),
                    ..Out::atom(prim_to_u64(p, quote!(#v.0)), Ty::U64)
                }
            }
        }
    }

    pub(super) fn expr(&self, e: &Expr, env: &Env) -> Out {
        match e {
            Expr::Int(v) => Out::atom(lit_u64(*v), Ty::U64),
            Expr::Bool(b) => Out::atom(quote!(#b), Ty::Bool),
            Expr::Field(name) => {
                let f = match self.field_def(env.s, name) {
                    Some(f) => f,
                    None => panic!(
                        "struct `{}`: unknown field `{name}` in an expression",
                        env.s.name
                    ),
                };
                let l = local(name);
                let split_value;
                let st = match &f.ty {
                    TypeRef::Scalar(st) => st,
                    // A split's value is the unsigned primitive of its width.
                    TypeRef::Split { hi, lo } => {
                        split_value = ScalarType::Prim(TypeRef::split_value(*hi, *lo));
                        &split_value
                    }
                    TypeRef::Word(_) => {
                        env.used.borrow_mut().insert(name.clone());
                        return if f.cond.is_some() {
                            Out::atom(quote!(#l.unwrap_or(0)), Ty::U64)
                        } else {
                            Out::atom(quote!(#l), Ty::U64)
                        };
                    }
                    _ => panic!("struct `{}`: field `{name}` is not a scalar", env.s.name),
                };
                env.used.borrow_mut().insert(name.clone());
                if f.cond.is_some() {
                    let inner = self.scalar_value(st, quote!(x));
                    let default = if inner.ty == Ty::Bool {
                        quote!(false)
                    } else {
                        quote!(0)
                    };
                    let body = inner.ts;
                    let text = body.to_string();
                    if text == "x" {
                        Out::atom(quote!(#l.unwrap_or(#default)), inner.ty)
                    } else if text == "u64 :: from (x)" {
                        Out::atom(quote!(#l.map_or(#default, u64::from)), inner.ty)
                    } else {
                        Out::atom(quote!(#l.map_or(#default, |x| #body)), inner.ty)
                    }
                } else {
                    self.scalar_value(st, quote!(#l))
                }
            }
            Expr::Param(name) => {
                let st = self.param_scalar(env.s, name);
                let l = local(name);
                let ty = if matches!(st, ScalarType::Prim(Prim::Bool)) {
                    Ty::Bool
                } else {
                    Ty::U64
                };
                Out::atom(quote!(#l), ty)
            }
            Expr::Ctx(name) => {
                let st = self.ctx_ty(name);
                let id = ident(name);
                self.scalar_value(st, quote!(ctx.#id))
            }
            Expr::Remaining => {
                if env.mode != Mode::Decode {
                    panic!(
                        "struct `{}`: `remaining` cannot be evaluated while encoding",
                        env.s.name
                    );
                }
                Out {
                    infix: true,
                    ..Out::atom(quote!(r.remaining() as u64), Ty::U64)
                }
            }
            Expr::Not(x) => {
                let o = self.expr(x, env);
                let ts = o.operand();
                match o.ty {
                    Ty::Bool => Out {
                        ts: quote!(!#ts),
                        ty: Ty::Bool,
                        fallible: o.fallible,
                        infix: false,
                        plain: false,
                    },
                    Ty::U64 => Out {
                        ts: quote!(#ts == 0),
                        ty: Ty::Bool,
                        fallible: o.fallible,
                        infix: true,
                        plain: false,
                    },
                }
            }
            Expr::Binary(op, a, b) => self.binary(*op, a, b, env),
            Expr::Has {
                value,
                flags,
                flag,
                mask,
            } => {
                let v = self.expr(value, env);
                // A flags-typed value: use its named constant.
                let direct = match &**value {
                    Expr::Ctx(n) => matches!(self.ctx_ty(n), ScalarType::Flags(fl) if fl == flags).then(|| {
                        let id = ident(n);
                        quote!(ctx.#id)
                    }),
                    Expr::Field(n) => self.field_def(env.s, n).and_then(|f| {
                        (f.cond.is_none() && matches!(&f.ty, TypeRef::Scalar(ScalarType::Flags(fl)) if fl == flags))
                            .then(|| {
                                let l = local(n);
                                quote!(#l)
                            })
                    }),
                    _ => None,
                };
                let single = mask.is_power_of_two();
                if let Some(d) = direct {
                    let t = format_ident!("{}", flags);
                    let c = ident(flag);
                    let m = if single {
                        quote!(contains)
                    } else {
                        quote!(intersects)
                    };
                    Out::atom(quote!(#d.#m(#t::#c)), Ty::Bool)
                } else {
                    let m = lit_u64(*mask);
                    let ts = v.operand();
                    Out {
                        ts: quote!(#ts & #m != 0),
                        ty: Ty::Bool,
                        fallible: v.fallible,
                        infix: true,
                        plain: false,
                    }
                }
            }
            Expr::Call(func, args) => {
                let outs: Vec<Out> = args.iter().map(|a| self.expr(a, env)).collect();
                let fallible = outs.iter().any(|o| o.fallible);
                let recv = |o: &Out| -> TokenStream {
                    if let Some(Expr::Int(v)) = args.first() {
                        let l = Literal::u64_suffixed(*v);
                        let _ = o;
                        quote!(#l)
                    } else {
                        o.operand()
                    }
                };
                let ts = match func {
                    Func::Popcount => {
                        let a = recv(&outs[0]);
                        quote!(u64::from(#a.count_ones()))
                    }
                    Func::Max | Func::Min => {
                        let a = recv(&outs[0]);
                        let b = &outs[1].ts;
                        let m = if *func == Func::Max {
                            quote!(max)
                        } else {
                            quote!(min)
                        };
                        quote!(#a.#m(#b))
                    }
                    Func::Align => {
                        let a = &outs[0].ts;
                        let b = &outs[1].ts;
                        quote!(rt::align(#a, #b))
                    }
                };
                Out {
                    ts,
                    ty: Ty::U64,
                    fallible,
                    infix: false,
                    plain: false,
                }
            }
            Expr::LenOf(_) | Expr::CountOf(_) | Expr::SizeOf(_) | Expr::SizeOfSelf => {
                panic!(
                    "struct `{}`: len/count/sizeof outside a computed field",
                    env.s.name
                )
            }
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr, env: &Env) -> Out {
        let x = self.expr(a, env);
        let y = self.expr(b, env);
        let fallible = x.fallible || y.fallible;
        let as_bool = |o: &Out| -> TokenStream {
            match o.ty {
                Ty::Bool => o.operand(),
                Ty::U64 => {
                    let t = o.operand();
                    quote!((#t != 0))
                }
            }
        };
        let infix = |ts: TokenStream, ty: Ty| Out {
            ts,
            ty,
            fallible,
            infix: true,
            plain: false,
        };
        let call = |ts: TokenStream| Out {
            ts,
            ty: Ty::U64,
            fallible,
            infix: false,
            plain: false,
        };
        let (xa, ya) = (x.operand(), y.operand());
        let recv = || -> TokenStream {
            if let Expr::Int(v) = a {
                let l = Literal::u64_suffixed(*v);
                quote!(#l)
            } else {
                xa.clone()
            }
        };
        match op {
            BinOp::Or => {
                let (p, q) = (as_bool(&x), as_bool(&y));
                infix(quote!(#p || #q), Ty::Bool)
            }
            BinOp::And => {
                let (p, q) = (as_bool(&x), as_bool(&y));
                infix(quote!(#p && #q), Ty::Bool)
            }
            BinOp::Eq => infix(quote!(#xa == #ya), Ty::Bool),
            BinOp::Ne => infix(quote!(#xa != #ya), Ty::Bool),
            BinOp::Lt => infix(quote!(#xa < #ya), Ty::Bool),
            BinOp::Le => infix(quote!(#xa <= #ya), Ty::Bool),
            BinOp::Gt => infix(quote!(#xa > #ya), Ty::Bool),
            BinOp::Ge => infix(quote!(#xa >= #ya), Ty::Bool),
            BinOp::BitAnd => infix(quote!(#xa & #ya), Ty::U64),
            BinOp::BitOr => infix(quote!(#xa | #ya), Ty::U64),
            BinOp::Add => {
                let r = recv();
                let yb = &y.ts;
                call(quote!(#r.saturating_add(#yb)))
            }
            BinOp::Mul => {
                let r = recv();
                let yb = &y.ts;
                call(quote!(#r.saturating_mul(#yb)))
            }
            BinOp::Sub => {
                let (xs, yb) = (&x.ts, &y.ts);
                if env.mode == Mode::Size {
                    let r = recv();
                    call(quote!(#r.saturating_sub(#yb)))
                } else {
                    Out {
                        ts: quote!(rt::sub(#xs, #yb)?),
                        ty: Ty::U64,
                        fallible: true,
                        infix: false,
                        plain: false,
                    }
                }
            }
            BinOp::Div => {
                let (xs, yb) = (&x.ts, &y.ts);
                if env.mode == Mode::Size {
                    let r = recv();
                    call(quote!(#r.checked_div(#yb).unwrap_or(0)))
                } else {
                    Out {
                        ts: quote!(rt::div(#xs, #yb)?),
                        ty: Ty::U64,
                        fallible: true,
                        infix: false,
                        plain: false,
                    }
                }
            }
        }
    }

    pub(super) fn bool_expr(&self, e: &Expr, env: &Env) -> Out {
        let o = self.expr(e, env);
        match o.ty {
            Ty::Bool => o,
            Ty::U64 => {
                let t = o.operand();
                Out {
                    ts: quote!(#t != 0),
                    ty: Ty::Bool,
                    fallible: o.fallible,
                    infix: true,
                    plain: false,
                }
            }
        }
    }

    pub(super) fn u64_expr(&self, e: &Expr, env: &Env) -> Out {
        let o = self.expr(e, env);
        match o.ty {
            Ty::U64 => o,
            Ty::Bool => {
                let t = o.ts;
                Out {
                    ts: quote!(u64::from(#t)),
                    ty: Ty::U64,
                    fallible: o.fallible,
                    infix: false,
                    plain: false,
                }
            }
        }
    }
}
