//! Field types: primitives and declared names, struct references and their arguments,
//! arrays, bytes and strings with their lengths, words, `feature(…)` and switches.

use crate::ast::{self, Ident, LenExpr, PatternKind, Span, TypeKind};
use crate::ir::{self, Prim, ScalarType, TypeRef};

use super::common::{is_signed, prim_named, uses_fields_or_remaining};
use super::scope::{Scope, Ty};
use super::suggest::did_you_mean;
use super::{Named, Validator};

impl<'a> Validator<'a> {
    pub(super) fn type_expr(
        &mut self,
        t: &ast::TypeExpr,
        scope: &Scope,
        hint: &str,
    ) -> Option<TypeRef> {
        match &t.kind {
            TypeKind::Named { name, args } => self.named_type(name, args.as_deref(), scope),
            TypeKind::Array { elem, len } => {
                let elem = self.type_expr(elem, scope, hint);
                let len = self.len_expr(len, scope);
                Some(TypeRef::Array {
                    elem: Box::new(elem?),
                    len: len?,
                })
            }
            TypeKind::Bytes(len) => self.len_expr(len, scope).map(TypeRef::Bytes),
            TypeKind::Str(len) => self.len_expr(len, scope).map(TypeRef::Str),
            TypeKind::CStr => Some(TypeRef::CStr),
            TypeKind::Word(e) => self.word_size(e, scope).map(TypeRef::Word),
            TypeKind::Split { hi, lo } => self.split(t.span, hi, lo),
            TypeKind::Feature(e) => {
                if !scope.is_record {
                    self.error_help(
                        t.span,
                        "`feature(…)` is only allowed in a `record`",
                        "not in a record",
                        Some("use it in the record that carries a feature section, e.g. `data: feature(feat_id)`".to_string()),
                    );
                }
                let e = self.expect_ty(e, scope, Ty::Int, "a feature id")?;
                scope.is_record.then_some(TypeRef::FeatureById(e))
            }
            TypeKind::Switch(sw) => self.switch(sw, scope, hint).map(TypeRef::Switch),
        }
    }

    /// The size of a `word[e]`: known before the structure is decoded (context values,
    /// parameters, integers) and, when written as a literal, 4 or 8.
    fn word_size(&mut self, e: &ast::Expr, scope: &Scope) -> Option<ir::Expr> {
        let size = self.expect_ty(e, scope, Ty::Int, "a word size")?;
        if uses_fields_or_remaining(&size) {
            self.error_help(
                e.span,
                "the size of a `word` must be known before the structure is decoded",
                "depends on decoded data",
                Some(
                    "give it from the context or a parameter, e.g. `word[ctx.word_size]`"
                        .to_string(),
                ),
            );
            return None;
        }
        if let ir::Expr::Int(n) = size {
            if n != 4 && n != 8 {
                self.error_help(
                    e.span,
                    format!("a `word` is 4 or 8 bytes, not {n}"),
                    "not 4 or 8",
                    Some("a word's size comes from the context (`word[ctx.word_size]`); a fixed size is a primitive type such as `u32`".to_string()),
                );
                return None;
            }
        }
        Some(size)
    }

    /// A `split[HI, LO]`: two unsigned primitives whose widths add up to one (16, 32 or
    /// 64 bits), so that the value has a type of its own.
    fn split(&mut self, span: Span, hi: &Ident, lo: &Ident) -> Option<TypeRef> {
        let mut part = |p: &Ident| match prim_named(&p.name) {
            Some(prim @ (Prim::U8 | Prim::U16 | Prim::U32)) => Some(prim),
            other => {
                let found = match other {
                    Some(prim) => format!("`{}`", prim.name()),
                    None => format!("`{}`", p.name),
                };
                self.error_help(
                    p.span,
                    format!("a part of a `split` is `u8`, `u16` or `u32`, not {found}"),
                    "not an unsigned primitive narrower than 64 bits",
                    Some("the parts are the stored halves of one unsigned integer, most significant first: `split[u16, u16]`".to_string()),
                );
                None
            }
        };
        let (hi, lo) = (part(hi)?, part(lo)?);
        if Prim::unsigned_of_size(hi.size() + lo.size()).is_none() {
            self.error_help(
                span,
                format!(
                    "a `split[{}, {}]` is {} bits wide; its parts must add up to 16, 32 or 64 bits",
                    hi.name(),
                    lo.name(),
                    8 * (hi.size() + lo.size())
                ),
                "no integer type this wide",
                Some("the value of a split is the unsigned integer of both parts, e.g. `split[u16, u16]` is a `u32`".to_string()),
            );
            return None;
        }
        Some(TypeRef::Split { hi, lo })
    }

    fn named_type(
        &mut self,
        name: &Ident,
        args: Option<&[ast::Expr]>,
        scope: &Scope,
    ) -> Option<TypeRef> {
        let scalar = match prim_named(&name.name) {
            Some(Prim::Bool) => {
                self.error_help(
                    name.span,
                    "`bool` is only allowed in the `context`",
                    "not an encoded type",
                    Some("a flag stored in the data is an integer or a `flags` member".to_string()),
                );
                return None;
            }
            Some(p) => Some(ScalarType::Prim(p)),
            None => match self.items.get(&name.name).map(|x| x.0) {
                Some(Named::Enum) => Some(ScalarType::Enum(name.name.clone())),
                Some(Named::Flags) => Some(ScalarType::Flags(name.name.clone())),
                Some(Named::Bitfield) => Some(ScalarType::Bitfield(name.name.clone())),
                Some(Named::Const) => {
                    self.error(
                        name.span,
                        format!("`{}` is a constant, not a type", name.name),
                        "not a type",
                    );
                    return None;
                }
                Some(Named::Struct(target)) => {
                    return self.struct_ref(name, target, args, scope);
                }
                None => {
                    let help = did_you_mean(&name.name, self.type_names());
                    self.error_help(
                        name.span,
                        format!("unknown type `{}`", name.name),
                        "not declared",
                        help,
                    );
                    return None;
                }
            },
        };
        if args.is_some() {
            self.error_help(
                name.span,
                format!("`{}` takes no arguments", name.name),
                "not a struct with parameters",
                Some("only structs declared with parameters take arguments".to_string()),
            );
            return None;
        }
        scalar.map(TypeRef::Scalar)
    }

    fn struct_ref(
        &mut self,
        name: &Ident,
        target: &ast::StructItem,
        args: Option<&[ast::Expr]>,
        scope: &Scope,
    ) -> Option<TypeRef> {
        if target.keyword != ast::StructKeyword::Struct {
            self.error_help(
                name.span,
                format!(
                    "`{}` is a {}, which cannot be used as a field type",
                    name.name,
                    target.keyword.as_str()
                ),
                "not a struct",
                Some(format!(
                    "declare the shared layout as a `struct` and use it in the {}",
                    target.keyword.as_str()
                )),
            );
            return None;
        }
        let given = args.map_or(0, |a| a.len());
        let wanted = target.params.len();
        if given != wanted {
            let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
            let signature: Vec<String> = target
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name.name, p.ty.name))
                .collect();
            self.error_help(
                name.span,
                format!(
                    "struct `{}` takes {wanted} {} but {given} {} {} given",
                    name.name,
                    plural(wanted),
                    plural(given),
                    if given == 1 { "was" } else { "were" }
                ),
                format!("expected {wanted} {}", plural(wanted)),
                Some(if wanted == 0 {
                    format!("write `{}` without parentheses", name.name)
                } else {
                    format!(
                        "`{}` is declared as `{}({})`",
                        name.name,
                        name.name,
                        signature.join(", ")
                    )
                }),
            );
        }
        let mut ir_args = Vec::new();
        let mut ok = given == wanted;
        for a in args.unwrap_or(&[]) {
            match self.expect_ty(a, scope, Ty::Int, "a struct argument") {
                Some(e) => ir_args.push(e),
                None => ok = false,
            }
        }
        ok.then(|| TypeRef::Struct {
            name: name.name.clone(),
            args: ir_args,
        })
    }

    fn len_expr(&mut self, len: &LenExpr, scope: &Scope) -> Option<ir::Len> {
        match len {
            LenExpr::Rest(_) => Some(ir::Len::Rest),
            LenExpr::Expr(e) => self
                .expect_ty(e, scope, Ty::Int, "a length")
                .map(ir::Len::Expr),
        }
    }

    fn switch(&mut self, sw: &ast::SwitchExpr, scope: &Scope, hint: &str) -> Option<ir::Switch> {
        let (on, on_ty) = self.expr(&sw.on, scope);
        // Negative patterns are two's complement in the width of what is switched on.
        let on_width = match self.scalar_of(&on, scope) {
            Some(s) => self.scalar_prim(&s),
            None => Prim::U64,
        };
        let enum_name = match &sw.as_name {
            Some(n) => n.name.clone(),
            None => hint.to_string(),
        };
        let name_span = sw.as_name.as_ref().map_or(sw.on.span, |n| n.span);
        self.switch_names.push((enum_name.clone(), name_span));
        if sw.arms.is_empty() {
            self.error_help(
                sw.on.span,
                "a switch needs at least one arm",
                "no arms",
                Some("add arms such as `1 => One: u32` or `_ => Other: bytes[..]`".to_string()),
            );
            return None;
        }
        self.check_unique(sw.arms.iter().map(|a| &a.variant), "switch variant");

        let mut arms = Vec::new();
        let mut seen: Vec<(ir::Pattern, Span)> = Vec::new();
        let mut ok = true;
        for arm in &sw.arms {
            let pat = match arm.pat.kind {
                PatternKind::Default => Some(ir::Pattern::Default),
                PatternKind::Bool(b) => {
                    if on_ty == Ty::Int {
                        self.error_help(
                            arm.pat.span,
                            format!("a `{b}` pattern cannot match an integer"),
                            "boolean pattern",
                            Some("the switch is on an integer: use integer patterns".to_string()),
                        );
                        None
                    } else {
                        Some(ir::Pattern::Bool(b))
                    }
                }
                PatternKind::Int(lit) => {
                    if on_ty == Ty::Bool {
                        self.error_help(
                            arm.pat.span,
                            "an integer pattern cannot match a condition",
                            "integer pattern",
                            Some(
                                "the switch is on a boolean: use `true`, `false` and `_`"
                                    .to_string(),
                            ),
                        );
                        None
                    } else {
                        let unsigned = if is_signed(on_width) {
                            match on_width {
                                Prim::I8 => Prim::U8,
                                Prim::I16 => Prim::U16,
                                Prim::I32 => Prim::U32,
                                _ => Prim::U64,
                            }
                        } else {
                            on_width
                        };
                        self.lit_value(&lit, unsigned).map(ir::Pattern::Int)
                    }
                }
            };
            let Some(pat) = pat else {
                ok = false;
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(p, _)| *p == pat) {
                let first = self.where_(*first);
                let (message, label) = if pat == ir::Pattern::Default {
                    (
                        "a switch can have only one `_` arm".to_string(),
                        "second `_`",
                    )
                } else {
                    (
                        "this pattern is already matched by an earlier arm".to_string(),
                        "repeated pattern",
                    )
                };
                self.error_help(
                    arm.pat.span,
                    message,
                    label,
                    Some(format!("the earlier arm is at {first}")),
                );
                ok = false;
                continue;
            }
            seen.push((pat, arm.pat.span));
            let arm_hint = format!("{enum_name}{}", arm.variant.name);
            let ty = self.type_expr(&arm.ty, scope, &arm_hint);
            match ty {
                Some(ty) => arms.push(ir::Arm {
                    pat,
                    variant: arm.variant.name.clone(),
                    ty,
                }),
                None => ok = false,
            }
        }
        (ok && on_ty != Ty::Unknown).then_some(ir::Switch {
            on,
            enum_name,
            arms,
        })
    }
}
