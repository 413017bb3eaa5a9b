//! The `context` blocks (they add up across files) and, once the structs are lowered, the
//! `from Struct.field[.member]` source of each context value.

use crate::ast::{self, Ident};
use crate::ir::{self, Prim, ScalarType, TypeRef};

use super::common::{describe_type, prim_named, scalar_name};
use super::suggest::did_you_mean;
use super::{Named, Validator};

impl<'a> Validator<'a> {
    pub(super) fn context_block(&mut self, c: &'a ast::ContextItem) {
        self.context_declared = true;
        for f in &c.fields {
            // Blocks add up: a name is declared once across all of them.
            if let Some(first) = self.context_names.iter().find(|n| n.name == f.name.name) {
                let first = self.where_(first.span);
                self.error_help(
                    f.name.span,
                    format!("duplicate context field `{}`", f.name.name),
                    "defined again here",
                    Some(format!("the first `{}` is at {first}", f.name.name)),
                );
                continue;
            }
            self.context_names.push(f.name.clone());
            if let Some(path) = &f.source {
                self.context_sources.push((f.name.name.clone(), path));
            }
            let ty = match prim_named(&f.ty.name) {
                Some(p) => Some(ScalarType::Prim(p)),
                None => {
                    match self.items.get(&f.ty.name) {
                        Some((Named::Enum, _)) => Some(ScalarType::Enum(f.ty.name.clone())),
                        Some((Named::Flags, _)) => Some(ScalarType::Flags(f.ty.name.clone())),
                        Some(_) => {
                            self.error_help(
                            f.ty.span,
                            format!("context field `{}` cannot have type `{}`", f.name.name, f.ty.name),
                            "not allowed in the context",
                            Some("context values are a primitive, `bool`, an enum or a flags type".to_string()),
                        );
                            None
                        }
                        None => {
                            let mut candidates = self.type_names();
                            candidates.push("bool");
                            let help = did_you_mean(&f.ty.name, candidates);
                            self.error_help(
                                f.ty.span,
                                format!("unknown type `{}`", f.ty.name),
                                "not declared",
                                help,
                            );
                            None
                        }
                    }
                }
            };
            if let Some(ty) = ty {
                if self.context.iter().all(|x| x.name != f.name.name) {
                    self.context.push(ir::ContextField {
                        name: f.name.name.clone(),
                        doc: f.doc.clone(),
                        ty,
                        source: None,
                    });
                }
            }
        }
    }

    /// Resolves every `from Struct.field…` of the context against the structs: the path
    /// must name stored fields (a conditional one reads as its default when absent), then
    /// at most one bit-field member, and end on the context field's type.
    pub(super) fn resolve_context_sources(&mut self, spec: &mut ir::Spec) {
        let sources = std::mem::take(&mut self.context_sources);
        for (name, path) in sources {
            let Some(index) = spec.context.fields.iter().position(|c| c.name == name) else {
                continue;
            };
            let want = spec.context.fields[index].ty.clone();
            if let Some(src) = self.context_source(spec, &name, &want, path) {
                spec.context.fields[index].source = Some(src);
            }
        }
        self.context = spec.context.fields.clone();
    }

    fn context_source(
        &mut self,
        spec: &ir::Spec,
        ctx_name: &str,
        want: &ScalarType,
        path: &[Ident],
    ) -> Option<ir::ContextSource> {
        let root = &path[0];
        let Some(top) = spec.structs.iter().find(|s| s.name == root.name) else {
            let help = did_you_mean(&root.name, spec.structs.iter().map(|s| s.name.as_str()));
            self.error_help(
                root.span,
                format!("unknown struct `{}`", root.name),
                "a context value comes from a struct, record or feature",
                help,
            );
            return None;
        };
        let is_feature = matches!(top.kind, ir::StructKind::Feature { .. });
        let mut steps = vec![];
        let mut current: &ir::StructDef = top;
        let mut got: Option<ScalarType> = None;
        for (i, step) in path[1..].iter().enumerate() {
            let last = i + 2 == path.len();
            if let Some(ScalarType::Bitfield(b)) = &got {
                let def = spec.bitfields.iter().find(|d| &d.name == b)?;
                let Some(m) = def.members.iter().find(|m| m.name == step.name) else {
                    let help =
                        did_you_mean(&step.name, def.members.iter().map(|m| m.name.as_str()));
                    self.error_help(
                        step.span,
                        format!("bit-field `{b}` has no member `{}`", step.name),
                        "not a member",
                        help,
                    );
                    return None;
                };
                steps.push(ir::SourceStep::Member {
                    name: m.name.clone(),
                });
                got = Some(if m.width == 1 {
                    ScalarType::Prim(Prim::Bool)
                } else {
                    ScalarType::Prim(def.repr)
                });
                if !last {
                    self.error(
                        path[i + 2].span,
                        "a bit-field member has no fields",
                        "nothing to read here",
                    );
                    return None;
                }
                continue;
            }
            if got.is_some() {
                self.error(
                    step.span,
                    format!("`{}` is read from a value that has no fields", step.name),
                    "no fields here",
                );
                return None;
            }
            let Some(field) = current.fields.iter().find(|f| f.name == step.name) else {
                let help = did_you_mean(&step.name, current.fields.iter().map(|f| f.name.as_str()));
                self.error_help(
                    step.span,
                    format!("`{}` has no field `{}`", current.name, step.name),
                    "not a field",
                    help,
                );
                return None;
            };
            if field.computed.is_some() {
                self.error_help(
                    step.span,
                    format!(
                        "field `{}` is computed by the writer, not stored",
                        step.name
                    ),
                    "not stored",
                    Some("take the value from a stored field".to_string()),
                );
                return None;
            }
            steps.push(ir::SourceStep::Field {
                name: field.name.clone(),
                optional: field.cond.is_some(),
            });
            match &field.ty {
                TypeRef::Scalar(st) => got = Some(st.clone()),
                TypeRef::Struct { name, .. } if !last => {
                    current = spec.structs.iter().find(|s| &s.name == name)?;
                }
                other => {
                    self.error_help(
                        step.span,
                        format!(
                            "context field `{ctx_name}` cannot come from {}",
                            describe_type(other)
                        ),
                        "not a scalar",
                        Some(
                            "a context value is read from a scalar field or a bit-field member"
                                .to_string(),
                        ),
                    );
                    return None;
                }
            }
        }
        match got {
            Some(t) if &t == want => Some(ir::ContextSource {
                strukt: top.name.clone(),
                is_feature,
                path: steps,
            }),
            Some(t) => {
                let end = path.last().expect("a path has a struct and a field");
                self.error(
                    end.span,
                    format!(
                        "context field `{ctx_name}` is `{}`, but this is `{}`",
                        scalar_name(want),
                        scalar_name(&t)
                    ),
                    "of another type",
                );
                None
            }
            None => {
                self.error(
                    root.span,
                    format!("`{}` names a struct, not a value", root.name),
                    "add `.field`",
                );
                None
            }
        }
    }
}
