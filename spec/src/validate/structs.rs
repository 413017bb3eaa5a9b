//! Structs, records and features: header clauses by kind, parameters, and the members in
//! order (each field's type, conditions and computed value see the fields before it);
//! then what needs every field: `@name_by` paths, `bounded_by`, `len/count/sizeof`
//! targets, the trailer.

use crate::ast::{self, Ident, LenExpr, Member, Span, TypeKind};
use crate::ir::{self, Prim, ScalarType, TypeRef};

use super::common::{camel_case, describe_type, mentions_field, prim_named};
use super::scope::{MemberRef, Mode, Scope, Ty};
use super::suggest::did_you_mean;
use super::{Named, Validator};

/// Where a `payload` member stands among the members of its struct.
#[derive(Clone, Copy)]
struct PayloadPosition {
    is_last: bool,
    is_first: bool,
    is_only: bool,
}

impl<'a> Validator<'a> {
    pub(super) fn struct_item(&mut self, s: &'a ast::StructItem) -> ir::StructDef {
        use ast::StructKeyword as K;
        let kw = s.keyword.as_str();
        // Header clauses that do not fit the kind.
        match s.keyword {
            K::Struct => {
                if let Some(id) = &s.id {
                    self.error_help(
                        id.span,
                        "a `struct` has no id",
                        "unexpected id",
                        Some(format!(
                            "declare it as `record {} = ID` or `feature {} = ID`, or remove \
                             the id",
                            s.name.name, s.name.name
                        )),
                    );
                }
            }
            K::Record | K::Feature => {
                if s.id.is_none() {
                    self.error_help(
                        s.name.span,
                        format!("{kw} `{}` has no id", s.name.name),
                        "missing `= ID`",
                        Some(format!("write `{kw} {} = ID`", s.name.name)),
                    );
                }
                if let Some(p) = s.params.first() {
                    self.error(
                        p.name.span,
                        format!("a {kw} cannot have parameters"),
                        format!("parameter of a {kw}"),
                    );
                }
                if let Some((span, _)) = &s.bounded_by {
                    self.error_help(
                        *span,
                        format!("a {kw} cannot be `bounded_by`"),
                        "not allowed here",
                        Some(format!(
                            "a {kw} body is already bounded by its {}",
                            if s.keyword == K::Record {
                                "header's size"
                            } else {
                                "section's size"
                            }
                        )),
                    );
                }
            }
        }
        if s.keyword != K::Record {
            if let Some(t) = &s.trailer {
                self.error(
                    t.span,
                    "only a `record` can have a trailer",
                    "not allowed here",
                );
            }
        }
        let kind = match s.keyword {
            K::Struct => ir::StructKind::Plain,
            K::Record => ir::StructKind::Record {
                id: s
                    .id
                    .and_then(|id| self.small_lit(&id, u64::from(u32::MAX), "a record id"))
                    .unwrap_or(0) as u32,
                trailer: None,
            },
            K::Feature => ir::StructKind::Feature {
                id: s
                    .id
                    .and_then(|id| self.small_lit(&id, 255, "a feature id"))
                    .unwrap_or(0) as u32,
            },
        };
        let pad_to = s.pad_to.and_then(|(_, n)| {
            if n.negative || !n.magnitude.is_power_of_two() || n.magnitude > 1 << 31 {
                self.error_help(
                    n.span,
                    "`pad_to` must be a power of two",
                    "not a power of two",
                    Some("e.g. `pad_to 8`".to_string()),
                );
                None
            } else {
                Some(n.magnitude as u32)
            }
        });

        // Parameters.
        self.check_unique(s.params.iter().map(|p| &p.name), "parameter");
        let mut params = Vec::new();
        for p in &s.params {
            if let Some(ty) = self.param_type(&p.ty) {
                params.push(ir::Param {
                    name: p.name.name.clone(),
                    ty,
                });
            }
        }

        // Member names.
        let member_names: Vec<&Ident> = s
            .members
            .iter()
            .map(|m| match m {
                Member::Field(f) => &f.name,
                Member::Payload(p) => &p.name,
            })
            .collect();
        self.check_unique(member_names.iter().copied(), "field");
        for name in &member_names {
            if let Some(p) = s.params.iter().find(|p| p.name.name == name.name) {
                let at = self.where_(p.name.span);
                self.error_help(
                    name.span,
                    format!(
                        "field `{}` has the same name as a parameter of `{}`",
                        name.name, s.name.name
                    ),
                    "clashes with a parameter",
                    Some(format!(
                        "rename the field or the parameter declared at {at}"
                    )),
                );
            }
        }
        let all_members: Vec<String> = member_names.iter().map(|n| n.name.clone()).collect();

        // Fields, in order: each sees the fields before it.
        let mut visible: Vec<(String, Option<TypeRef>)> = Vec::new();
        let mut fields = Vec::new();
        let mut payload = None;
        let mut member_refs: Vec<(String, MemberRef)> = Vec::new();
        let mut computed_spans: Vec<(String, Span, ir::Expr)> = Vec::new();
        let member_count = s.members.len();
        let payload_indices: Vec<usize> = s
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m, Member::Payload(_)))
            .map(|(i, _)| i)
            .collect();
        for (index, member) in s.members.iter().enumerate() {
            match member {
                Member::Payload(p) => {
                    let position = PayloadPosition {
                        is_last: index + 1 == member_count,
                        is_first: payload_indices.first() == Some(&index),
                        is_only: payload_indices.len() == 1,
                    };
                    let lowered = self.payload(s, p, position, &params, &all_members, &visible);
                    payload = payload.or(lowered);
                }
                Member::Field(f) => {
                    let scope = Scope {
                        struct_name: &s.name.name,
                        is_record: s.keyword == K::Record,
                        params: &params,
                        all_members: &all_members,
                        visible: &visible,
                        mode: Mode::Normal,
                    };
                    let hint = format!("{}{}", s.name.name, camel_case(&f.name.name));
                    let ty = self.type_expr(&f.ty, &scope, &hint);
                    let cond = f
                        .cond
                        .as_ref()
                        .and_then(|e| self.expect_ty(e, &scope, Ty::Bool, "a condition"));
                    let within = f
                        .within
                        .as_ref()
                        .and_then(|e| self.expect_ty(e, &scope, Ty::Int, "a `within` size"));
                    let big_endian_if = f.big_endian_if.as_ref().and_then(|e| {
                        self.expect_ty(e, &scope, Ty::Bool, "a `big_endian_if` condition")
                    });
                    if let (Some(e), Some(t)) = (&f.big_endian_if, &ty) {
                        if !matches!(t, TypeRef::Struct { .. }) {
                            self.error_help(
                                e.span,
                                format!("`big_endian_if` on field `{}`, which is not a struct", f.name.name),
                                "byte order switched here",
                                Some("put the fields whose byte order is stated by the data into a struct of their own".to_string()),
                            );
                        }
                    }
                    let computed = f.computed.as_ref().and_then(|e| {
                        let computed_scope = Scope {
                            mode: Mode::Computed,
                            ..scope
                        };
                        let mut refs = Vec::new();
                        let result = self.computed_expr(e, &computed_scope, &mut refs);
                        member_refs.extend(refs.into_iter().map(|r| (f.name.name.clone(), r)));
                        result
                    });
                    if let (Some(_), Some(ty)) = (&f.computed, &ty) {
                        let integer = matches!(ty, TypeRef::Scalar(ScalarType::Prim(p)) if *p != Prim::F64 && *p != Prim::Bool)
                            || matches!(ty, TypeRef::Word(_));
                        if !integer {
                            self.error_help(
                                f.ty.span,
                                format!("computed field `{}` must have an integer type, not {}", f.name.name, describe_type(ty)),
                                "not an integer type",
                                Some("a computed field holds a length, a count or a size: declare it `u8`, `u16`, `u32` or `u64`".to_string()),
                            );
                        }
                    }
                    if let (Some(e), Some(c)) = (&f.computed, &computed) {
                        computed_spans.push((f.name.name.clone(), e.span, c.clone()));
                    }
                    let display = match (&f.display, &ty) {
                        (Some(d), Some(t)) => self.display(d, &f.name.name, t),
                        _ => None,
                    };
                    visible.push((f.name.name.clone(), ty.clone()));
                    if let Some(ty) = ty {
                        fields.push(ir::Field {
                            name: f.name.name.clone(),
                            doc: f.doc.clone(),
                            ty,
                            computed,
                            cond,
                            within,
                            big_endian_if,
                            display,
                            span: self.ir_span(f.name.span),
                        });
                    }
                }
            }
        }

        self.check_name_by(&fields);
        let bounded_by = s.bounded_by.as_ref().and_then(|(_, e)| {
            // The bound is applied once the fields it mentions are decoded: any field.
            let scope = Scope {
                struct_name: &s.name.name,
                is_record: false,
                params: &params,
                all_members: &all_members,
                visible: &visible,
                mode: Mode::Normal,
            };
            self.expect_ty(e, &scope, Ty::Int, "a `bounded_by` size")
        });

        self.check_member_refs(&member_refs, &computed_spans, &fields, payload.as_ref());

        let mut def = ir::StructDef {
            name: s.name.name.clone(),
            doc: s.doc.clone(),
            kind,
            params,
            bounded_by,
            pad_to,
            fields,
            payload,
            span: self.ir_span(s.name.span),
        };
        // The trailer condition sees no field: it is evaluated before the body is decoded.
        if let (Some(t), ir::StructKind::Record { trailer, .. }) = (&s.trailer, &mut def.kind) {
            let scope = Scope {
                struct_name: &s.name.name,
                is_record: true,
                params: &[],
                all_members: &[],
                visible: &[],
                mode: Mode::Trailer,
            };
            let cond = t
                .cond
                .as_ref()
                .map(|e| self.expect_ty(e, &scope, Ty::Bool, "a trailer condition"));
            *trailer = Some(ir::Trailer {
                ty: t.ty.name.clone(),
                cond: cond.flatten(),
            });
        }
        def
    }

    fn payload(
        &mut self,
        s: &ast::StructItem,
        p: &ast::PayloadDecl,
        position: PayloadPosition,
        params: &[ir::Param],
        all_members: &[String],
        visible: &[(String, Option<TypeRef>)],
    ) -> Option<ir::Payload> {
        if s.keyword != ast::StructKeyword::Record {
            self.error_help(
                p.span,
                format!(
                    "a `payload` is only allowed in a `record`, not in a `{}`",
                    s.keyword.as_str()
                ),
                "not in a record",
                Some("declare the bytes as a field: `name: bytes[LEN]`".to_string()),
            );
            return None;
        }
        if !position.is_first {
            self.error(
                p.span,
                "a record can have only one `payload`",
                "second payload",
            );
            return None;
        }
        // With several payloads, the extra ones are the mistake, not the first one's place.
        if !position.is_last && position.is_only {
            self.error_help(
                p.span,
                "the `payload` must be the last member of the record",
                "not last",
                Some("move it after the other fields".to_string()),
            );
            return None;
        }
        let TypeKind::Bytes(LenExpr::Expr(len)) = &p.ty.kind else {
            self.error_help(
                p.ty.span,
                "a payload must be `bytes[LEN]` with a length expression",
                "not `bytes[LEN]`",
                Some("the payload follows the record, so its length must be given by a field, e.g. `bytes[size]`".to_string()),
            );
            return None;
        };
        let scope = Scope {
            struct_name: &s.name.name,
            is_record: true,
            params,
            all_members,
            visible,
            mode: Mode::Normal,
        };
        let len = self.expect_ty(len, &scope, Ty::Int, "a payload length")?;
        Some(ir::Payload {
            name: p.name.name.clone(),
            doc: p.doc.clone(),
            len,
            span: self.ir_span(p.name.span),
        })
    }

    fn param_type(&mut self, ty: &Ident) -> Option<ScalarType> {
        match prim_named(&ty.name) {
            Some(p) if p != Prim::Bool && p != Prim::F64 => return Some(ScalarType::Prim(p)),
            Some(_) => {}
            None => match self.items.get(&ty.name) {
                Some((Named::Enum, _)) => return Some(ScalarType::Enum(ty.name.clone())),
                Some((Named::Flags, _)) => return Some(ScalarType::Flags(ty.name.clone())),
                Some((Named::Bitfield, _)) => return Some(ScalarType::Bitfield(ty.name.clone())),
                Some(_) => {}
                None => {
                    let help = did_you_mean(&ty.name, self.type_names());
                    self.error_help(
                        ty.span,
                        format!("unknown type `{}`", ty.name),
                        "not declared",
                        help,
                    );
                    return None;
                }
            },
        }
        self.error_help(
            ty.span,
            format!(
                "a parameter must have an integer, enum, flags or bitfield type, not `{}`",
                ty.name
            ),
            "not a scalar type",
            Some(
                "parameters are values passed at each use site, e.g. `struct Regs(mask: u64)`"
                    .to_string(),
            ),
        );
        None
    }

    /// Checks `len(f)`, `count(f)`, `sizeof(f)` of computed fields now that every field has
    /// its type, and that the field a count or length is stored in really is that length.
    fn check_member_refs(
        &mut self,
        refs: &[(String, MemberRef)],
        computed: &[(String, Span, ir::Expr)],
        fields: &[ir::Field],
        payload: Option<&ir::Payload>,
    ) {
        for (computed_field, r) in refs {
            let (len, ty_desc) = if let Some(f) = fields.iter().find(|f| f.name == r.target) {
                let len = match (&f.ty, r.func) {
                    (TypeRef::Array { len, .. }, "count") => Some(len),
                    (TypeRef::Bytes(len) | TypeRef::Str(len), "len") => Some(len),
                    (_, "sizeof") => continue,
                    _ => None,
                };
                (len.cloned(), describe_type(&f.ty))
            } else if let Some(p) = payload.filter(|p| p.name == r.target) {
                match r.func {
                    "len" => (Some(ir::Len::Expr(p.len.clone())), String::new()),
                    "sizeof" => continue,
                    _ => (None, "a payload".to_string()),
                }
            } else {
                // The target did not resolve (already reported).
                continue;
            };
            let Some(len) = len else {
                let (needs, help) = if r.func == "count" {
                    ("an array", "`count(f)` counts the elements of an array field; use `len(f)` for bytes and strings")
                } else {
                    ("a `bytes` or `str` field", "`len(f)` is the byte length of a bytes or str field; use `count(f)` for arrays or `sizeof(f)` for any field")
                };
                self.error_help(
                    r.span,
                    format!(
                        "`{}({})` needs {needs}, but `{}` is {ty_desc}",
                        r.func, r.target, r.target
                    ),
                    format!("not {needs}"),
                    Some(help.to_string()),
                );
                continue;
            };
            let Some((_, _, expr)) = computed.iter().find(|(n, _, _)| n == computed_field) else {
                continue;
            };
            // `nr: u32 = count(x)` must be x's length: `[T; nr]`. In a larger expression
            // (`len(x) + 4`) the length must at least mention the field.
            let exact = matches!(expr, ir::Expr::CountOf(_) | ir::Expr::LenOf(_));
            let ok = match &len {
                ir::Len::Expr(ir::Expr::Field(n)) => n == computed_field,
                ir::Len::Expr(e) => !exact && mentions_field(e, computed_field),
                ir::Len::Rest => false,
            };
            if !ok {
                let shape = if r.func == "count" {
                    format!("[T; {computed_field}]")
                } else {
                    format!("bytes[{computed_field}]` or `str[{computed_field}]")
                };
                self.error_help(
                    r.span,
                    format!(
                        "`{computed_field}` is computed from `{}({})`, but `{}` does not use `{computed_field}` as its length",
                        r.func, r.target, r.target
                    ),
                    format!("`{}`'s length is not `{computed_field}`", r.target),
                    Some(format!(
                        "declare `{}` as `{shape}`, or make `{computed_field}` a plain (not computed) field",
                        r.target
                    )),
                );
            }
        }
    }
}
