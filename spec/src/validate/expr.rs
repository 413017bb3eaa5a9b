//! Expressions: their type (integer or boolean) and what each place may mention —
//! conditions and lengths see the fields decoded before them, computed fields only
//! `len/count/sizeof`, a trailer's condition no field — lowered to `ir::Expr`.

use crate::ast::{self, ExprKind, Ident, Span};
use crate::ir::{self, BinOp, Prim, ScalarType, TypeRef};

use super::common::describe_type;
use super::scope::{MemberRef, Mode, Scope, Ty};
use super::suggest::did_you_mean;
use super::Validator;

const FUNCTIONS: &[&str] = &["popcount", "max", "min", "align", "len", "count", "sizeof"];

impl<'a> Validator<'a> {
    /// Checks `e` and requires type `want`; `what` names the role for the message.
    pub(super) fn expect_ty(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        want: Ty,
        what: &str,
    ) -> Option<ir::Expr> {
        let (ir_expr, ty) = self.expr(e, scope);
        if ty == Ty::Unknown {
            return None;
        }
        if ty != want {
            let (want_s, got_s, help) = match want {
                Ty::Bool => (
                    "a boolean",
                    "an integer",
                    "compare it, e.g. `x != 0`, or test a flag with `x has FLAG`",
                ),
                _ => (
                    "an integer",
                    "a boolean",
                    "conditions belong in `if EXPR`; here an integer value is needed",
                ),
            };
            self.error_help(
                e.span,
                format!("{what} must be {want_s}, but this expression is {got_s}"),
                format!("expected {want_s}"),
                Some(help.to_string()),
            );
            return None;
        }
        Some(ir_expr)
    }

    /// The scalar type behind a plain reference (field, parameter or `ctx` value).
    pub(super) fn scalar_of(&self, e: &ir::Expr, scope: &Scope) -> Option<ScalarType> {
        match e {
            ir::Expr::Field(n) => match scope.visible.iter().find(|(f, _)| f == n) {
                Some((_, Some(TypeRef::Scalar(s)))) => Some(s.clone()),
                _ => None,
            },
            ir::Expr::Param(n) => scope
                .params
                .iter()
                .find(|p| &p.name == n)
                .map(|p| p.ty.clone()),
            ir::Expr::Ctx(n) => self
                .context
                .iter()
                .find(|c| &c.name == n)
                .map(|c| c.ty.clone()),
            _ => None,
        }
    }

    pub(super) fn scalar_prim(&self, s: &ScalarType) -> Prim {
        match s {
            ScalarType::Prim(p) => *p,
            ScalarType::Flags(n) | ScalarType::Enum(n) | ScalarType::Bitfield(n) => {
                self.reprs.get(n).copied().unwrap_or(Prim::U64)
            }
        }
    }

    fn scalar_ty(&mut self, s: &ScalarType, span: Span, what: &str) -> Ty {
        match s {
            ScalarType::Prim(Prim::Bool) => Ty::Bool,
            ScalarType::Prim(Prim::F64) => {
                self.error(
                    span,
                    format!("{what} is an `f64`; expressions work on integers"),
                    "floating point",
                );
                Ty::Unknown
            }
            _ => Ty::Int,
        }
    }

    pub(super) fn computed_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        refs: &mut Vec<MemberRef>,
    ) -> Option<ir::Expr> {
        let (ir_expr, ty) = self.expr_in(e, scope, refs);
        match ty {
            Ty::Int => Some(ir_expr),
            Ty::Unknown => None,
            Ty::Bool => {
                self.error(
                    e.span,
                    "a computed value must be an integer",
                    "expected an integer",
                );
                None
            }
        }
    }

    pub(super) fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> (ir::Expr, Ty) {
        let mut refs = Vec::new();
        self.expr_in(e, scope, &mut refs)
    }

    fn expr_in(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        refs: &mut Vec<MemberRef>,
    ) -> (ir::Expr, Ty) {
        let unknown = (ir::Expr::Int(0), Ty::Unknown);
        let computed = scope.mode == Mode::Computed;
        let not_in_computed = |v: &mut Self, what: &str| {
            v.error_help(
                e.span,
                format!("{what} cannot be used in a computed field"),
                "not allowed in `= EXPR`",
                Some("a computed field is written from `len(f)`, `count(f)`, `sizeof(self)`, `sizeof(f)`, integers and `+ - * /`".to_string()),
            );
        };
        match &e.kind {
            ExprKind::Int(v) => (ir::Expr::Int(*v), Ty::Int),
            ExprKind::Bool(b) => (ir::Expr::Bool(*b), Ty::Bool),
            ExprKind::Remaining => {
                if computed {
                    not_in_computed(self, "`remaining`");
                    return unknown;
                }
                if scope.mode == Mode::Trailer {
                    self.error(
                        e.span,
                        "a trailer condition cannot use `remaining`",
                        "not allowed here",
                    );
                    return unknown;
                }
                (ir::Expr::Remaining, Ty::Int)
            }
            ExprKind::SelfValue => {
                self.error_help(
                    e.span,
                    "`self` can only be used as `sizeof(self)`",
                    "unexpected `self`",
                    None,
                );
                unknown
            }
            ExprKind::Name(n) => self.name_ref(n, e.span, scope),
            ExprKind::Ctx(id) => {
                if computed {
                    not_in_computed(self, "a `ctx` value");
                    return unknown;
                }
                match self
                    .context
                    .iter()
                    .find(|c| c.name == id.name)
                    .map(|c| c.ty.clone())
                {
                    Some(ty) => {
                        let t = self.scalar_ty(&ty, e.span, &format!("`ctx.{}`", id.name));
                        (ir::Expr::Ctx(id.name.clone()), t)
                    }
                    None => {
                        let help = if self.context_declared {
                            did_you_mean(&id.name, self.context.iter().map(|c| c.name.as_str()))
                                .or_else(|| {
                                    Some(format!("add `{}: TYPE` to the `context` block", id.name))
                                })
                        } else {
                            Some(format!(
                                "the spec declares no context: add `context {{ {}: TYPE }}`",
                                id.name
                            ))
                        };
                        self.error_help(
                            id.span,
                            format!("unknown context field `{}`", id.name),
                            "not in the context",
                            help,
                        );
                        unknown
                    }
                }
            }
            ExprKind::Not(inner) => {
                if computed {
                    not_in_computed(self, "`!`");
                    return unknown;
                }
                let (x, t) = self.expr_in(inner, scope, refs);
                match t {
                    Ty::Bool => (ir::Expr::Not(Box::new(x)), Ty::Bool),
                    Ty::Unknown => unknown,
                    Ty::Int => {
                        self.error_help(
                            inner.span,
                            "`!` needs a boolean, but this expression is an integer",
                            "expected a boolean",
                            Some("write `x == 0` to test for zero".to_string()),
                        );
                        unknown
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                if computed && !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
                    not_in_computed(self, &format!("the operator `{}`", op.symbol()));
                    return unknown;
                }
                let (xa, ta) = self.expr_in(a, scope, refs);
                let (xb, tb) = self.expr_in(b, scope, refs);
                if ta == Ty::Unknown || tb == Ty::Unknown {
                    return unknown;
                }
                let result = match op {
                    BinOp::Or | BinOp::And => self
                        .operands(*op, (a, ta), (b, tb), Ty::Bool)
                        .then_some(Ty::Bool),
                    BinOp::Eq | BinOp::Ne => {
                        if ta != tb {
                            self.error(
                                e.span,
                                format!("`{}` compares an integer with a boolean", op.symbol()),
                                "mismatched types",
                            );
                            None
                        } else {
                            Some(Ty::Bool)
                        }
                    }
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => self
                        .operands(*op, (a, ta), (b, tb), Ty::Int)
                        .then_some(Ty::Bool),
                    _ => self
                        .operands(*op, (a, ta), (b, tb), Ty::Int)
                        .then_some(Ty::Int),
                };
                match result {
                    Some(t) => (ir::Expr::Binary(*op, Box::new(xa), Box::new(xb)), t),
                    None => unknown,
                }
            }
            ExprKind::Has(value, flag) => {
                if computed {
                    not_in_computed(self, "`has`");
                    return unknown;
                }
                self.has(value, flag, scope, refs)
            }
            ExprKind::Call(func, args) => self.call(e, func, args, scope, refs),
        }
    }

    /// Checks that both operands of `op` have type `want`.
    fn operands(&mut self, op: BinOp, a: (&ast::Expr, Ty), b: (&ast::Expr, Ty), want: Ty) -> bool {
        let mut ok = true;
        for (operand, t) in [a, b] {
            if t != want {
                let (want_s, help) = if want == Ty::Bool {
                    ("booleans", "compare the integer, e.g. `x != 0`")
                } else {
                    (
                        "integers",
                        "booleans can only be combined with `&&`, `||`, `!`, `==` and `!=`",
                    )
                };
                self.error_help(
                    operand.span,
                    format!("`{}` works on {want_s}", op.symbol()),
                    format!(
                        "expected {}",
                        if want == Ty::Bool {
                            "a boolean"
                        } else {
                            "an integer"
                        }
                    ),
                    Some(help.to_string()),
                );
                ok = false;
            }
        }
        ok
    }

    fn name_ref(&mut self, n: &str, span: Span, scope: &Scope) -> (ir::Expr, Ty) {
        let unknown = (ir::Expr::Int(0), Ty::Unknown);
        match scope.mode {
            Mode::Computed => {
                self.error_help(
                    span,
                    format!("a computed field cannot use `{n}` directly"),
                    "not allowed in `= EXPR`",
                    Some(format!(
                        "computed values are made of `len({n})`, `count({n})`, `sizeof({n})`, `sizeof(self)`, integers and `+ - * /`"
                    )),
                );
                return unknown;
            }
            Mode::Trailer => {
                self.error_help(
                    span,
                    format!("a trailer condition cannot use `{n}`"),
                    "not allowed here",
                    Some("the trailer is located before the record's fields are decoded: use `ctx` values".to_string()),
                );
                return unknown;
            }
            Mode::Normal => {}
        }
        if let Some(p) = scope.params.iter().find(|p| p.name == n) {
            let ty = p.ty.clone();
            let t = self.scalar_ty(&ty, span, &format!("parameter `{n}`"));
            return (ir::Expr::Param(n.to_string()), t);
        }
        if let Some((_, ty)) = scope.visible.iter().find(|(f, _)| f == n) {
            let Some(ty) = ty.clone() else { return unknown };
            return match &ty {
                TypeRef::Scalar(s) => {
                    let t = self.scalar_ty(s, span, &format!("field `{n}`"));
                    (ir::Expr::Field(n.to_string()), t)
                }
                TypeRef::Word(_) | TypeRef::Split { .. } => {
                    (ir::Expr::Field(n.to_string()), Ty::Int)
                }
                other => {
                    self.error_help(
                        span,
                        format!(
                            "field `{n}` is {} and cannot be used as a value",
                            describe_type(other)
                        ),
                        "not a scalar field",
                        Some(
                            "expressions can use integer, enum, flags and bitfield fields"
                                .to_string(),
                        ),
                    );
                    unknown
                }
            };
        }
        if scope.all_members.iter().any(|m| m == n) {
            self.error_help(
                span,
                format!("field `{n}` is used before it is decoded"),
                "not decoded yet",
                Some(format!(
                    "an expression can only use fields declared before it in `{}`",
                    scope.struct_name
                )),
            );
            return unknown;
        }
        let mut candidates: Vec<&str> = scope.visible.iter().map(|(f, _)| f.as_str()).collect();
        candidates.extend(scope.params.iter().map(|p| p.name.as_str()));
        let help = did_you_mean(n, candidates).or_else(|| {
            self.context
                .iter()
                .any(|c| c.name == n)
                .then(|| format!("to use the context value, write `ctx.{n}`"))
        });
        self.error_help(
            span,
            format!("unknown name `{n}` in `{}`", scope.struct_name),
            "not a field or parameter",
            help,
        );
        unknown
    }

    fn has(
        &mut self,
        value: &ast::Expr,
        flag: &Ident,
        scope: &Scope,
        refs: &mut Vec<MemberRef>,
    ) -> (ir::Expr, Ty) {
        let unknown = (ir::Expr::Int(0), Ty::Unknown);
        let (v, t) = self.expr_in(value, scope, refs);
        if t == Ty::Unknown {
            return unknown;
        }
        let scalar = self.scalar_of(&v, scope);
        let Some(ScalarType::Flags(flags_name)) = scalar else {
            let what = match &scalar {
                Some(ScalarType::Prim(p)) => format!("is a `{}`", p.name()),
                Some(ScalarType::Enum(n) | ScalarType::Bitfield(n)) => format!("is a `{n}`"),
                None if matches!(&v, ir::Expr::Field(n) if scope.visible.iter().any(|(f, t)| f == n && matches!(t, Some(TypeRef::Word(_))))) => {
                    "is a `word`".to_string()
                }
                None if matches!(&v, ir::Expr::Field(n) if scope.visible.iter().any(|(f, t)| f == n && matches!(t, Some(TypeRef::Split { .. })))) => {
                    "is a `split`".to_string()
                }
                _ => "is not a field, parameter or `ctx` value".to_string(),
            };
            self.error_help(
                value.span,
                format!("`has` needs a value of a flags type, but this {what}"),
                "not a flags value",
                Some(
                    "declare the value with a `flags` type, or test bits with `(x & MASK) != 0`"
                        .to_string(),
                ),
            );
            return unknown;
        };
        let Some(def) = self.flags.get(&flags_name) else {
            return unknown;
        };
        match def.bits.iter().find(|b| b.name == flag.name) {
            Some(bit) => (
                ir::Expr::Has {
                    value: Box::new(v),
                    flags: flags_name.clone(),
                    flag: flag.name.clone(),
                    mask: bit.mask(),
                },
                Ty::Bool,
            ),
            None => {
                let help = did_you_mean(&flag.name, def.bits.iter().map(|b| b.name.as_str()));
                self.error_help(
                    flag.span,
                    format!("`{flags_name}` has no flag `{}`", flag.name),
                    format!("not a member of `{flags_name}`"),
                    help,
                );
                unknown
            }
        }
    }

    fn call(
        &mut self,
        e: &ast::Expr,
        func: &Ident,
        args: &[ast::Expr],
        scope: &Scope,
        refs: &mut Vec<MemberRef>,
    ) -> (ir::Expr, Ty) {
        let unknown = (ir::Expr::Int(0), Ty::Unknown);
        let name = func.name.as_str();
        let arity = match name {
            "popcount" | "len" | "count" | "sizeof" => 1,
            "max" | "min" | "align" => 2,
            _ => {
                let help = did_you_mean(name, FUNCTIONS.iter().copied()).or_else(|| {
                    Some(format!(
                        "the functions are {}",
                        FUNCTIONS
                            .iter()
                            .map(|f| format!("`{f}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                });
                self.error_help(
                    func.span,
                    format!("unknown function `{name}`"),
                    "unknown function",
                    help,
                );
                return unknown;
            }
        };
        if args.len() != arity {
            self.error(
                e.span,
                format!(
                    "`{name}` takes {arity} argument{} but {} {} given",
                    if arity == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
                "wrong number of arguments",
            );
            return unknown;
        }
        if let Some(member_func) = ["len", "count", "sizeof"].into_iter().find(|f| *f == name) {
            if scope.mode != Mode::Computed {
                self.error_help(
                    e.span,
                    format!("`{name}(…)` is only allowed in a computed field"),
                    "not in `= EXPR`",
                    Some(format!("a computed field is declared as `name: u32 = {name}(field)`; other expressions use the field that holds the value")),
                );
                return unknown;
            }
            let arg = &args[0];
            return match &arg.kind {
                ExprKind::SelfValue if name == "sizeof" => (ir::Expr::SizeOfSelf, Ty::Int),
                ExprKind::Name(target) if scope.all_members.iter().any(|m| m == target) => {
                    refs.push(MemberRef {
                        func: member_func,
                        target: target.clone(),
                        span: e.span,
                    });
                    let x = match name {
                        "len" => ir::Expr::LenOf(target.clone()),
                        "count" => ir::Expr::CountOf(target.clone()),
                        _ => ir::Expr::SizeOf(target.clone()),
                    };
                    (x, Ty::Int)
                }
                ExprKind::Name(target) => {
                    let help = did_you_mean(target, scope.all_members.iter().map(String::as_str));
                    self.error_help(
                        arg.span,
                        format!("`{}` has no field `{target}`", scope.struct_name),
                        "unknown field",
                        help,
                    );
                    unknown
                }
                _ => {
                    let accepted = if name == "sizeof" {
                        "a field name or `self`"
                    } else {
                        "a field name"
                    };
                    self.error(
                        arg.span,
                        format!("the argument of `{name}` must be {accepted}"),
                        "not a field name",
                    );
                    unknown
                }
            };
        }
        let mut ir_args = Vec::new();
        let mut ok = true;
        for a in args {
            let (x, t) = self.expr_in(a, scope, refs);
            match t {
                Ty::Int => ir_args.push(x),
                Ty::Unknown => ok = false,
                Ty::Bool => {
                    self.error(
                        a.span,
                        format!("the arguments of `{name}` must be integers"),
                        "expected an integer",
                    );
                    ok = false;
                }
            }
        }
        if !ok {
            return unknown;
        }
        let f = match name {
            "popcount" => ir::Func::Popcount,
            "max" => ir::Func::Max,
            "min" => ir::Func::Min,
            _ => ir::Func::Align,
        };
        (ir::Expr::Call(f, ir_args), Ty::Int)
    }
}
