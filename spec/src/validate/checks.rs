//! Whole-spec checks, once everything is lowered: record and feature ids are unique,
//! trailers have a size known from the context, no struct contains itself, switch enum
//! names do not clash.

use std::collections::HashMap;

use crate::ast::{self, Ident, Span};
use crate::ir::{self, TypeRef};

use super::common::{describe_type, uses_fields_or_remaining};
use super::suggest::did_you_mean;
use super::{Named, Validator};

impl<'a> Validator<'a> {
    pub(super) fn check_ids(&mut self, items: &[&ast::Item]) {
        let mut records: HashMap<u64, &Ident> = HashMap::new();
        let mut features: HashMap<u64, &Ident> = HashMap::new();
        for item in items {
            let ast::Item::Struct(s) = item else { continue };
            let Some(id) = s.id else { continue };
            if id.negative {
                continue; // reported as out of range
            }
            let seen = match s.keyword {
                ast::StructKeyword::Record => &mut records,
                ast::StructKeyword::Feature => &mut features,
                ast::StructKeyword::Struct => continue,
            };
            if let Some(first) = seen.get(&id.magnitude) {
                let (first_name, at) = (first.name.clone(), self.where_(first.span));
                self.error_help(
                    id.span,
                    format!(
                        "{} id {} is already used by `{first_name}`",
                        s.keyword.as_str(),
                        id.magnitude
                    ),
                    "duplicate id",
                    Some(format!("`{first_name}` is declared at {at}")),
                );
            } else {
                seen.insert(id.magnitude, &s.name);
            }
        }
    }

    /// A trailer is parsed from the end of a record, so its size must be known without
    /// decoding it: fixed-size scalar fields and arrays of them, whose lengths and
    /// conditions depend only on the context.
    pub(super) fn check_trailers(&mut self, items: &[&ast::Item], spec: &ir::Spec) {
        for item in items {
            let ast::Item::Struct(s) = item else { continue };
            let Some(t) = &s.trailer else { continue };
            if s.keyword != ast::StructKeyword::Record {
                continue;
            }
            let target = match self.items.get(&t.ty.name).map(|x| x.0) {
                Some(Named::Struct(target)) => target,
                Some(_) => {
                    self.error(
                        t.ty.span,
                        format!("a trailer must be a struct, and `{}` is not", t.ty.name),
                        "not a struct",
                    );
                    continue;
                }
                None => {
                    let names: Vec<&str> = self
                        .items
                        .iter()
                        .filter(|(_, (n, _))| matches!(n, Named::Struct(_)))
                        .map(|(k, _)| k.as_str())
                        .collect();
                    let help = did_you_mean(&t.ty.name, names);
                    self.error_help(
                        t.ty.span,
                        format!("unknown struct `{}`", t.ty.name),
                        "not declared",
                        help,
                    );
                    continue;
                }
            };
            let problem = if target.keyword != ast::StructKeyword::Struct {
                Some(format!("it is a {}", target.keyword.as_str()))
            } else if !target.params.is_empty() {
                Some("it has parameters".to_string())
            } else if target.bounded_by.is_some() {
                Some("it is `bounded_by`".to_string())
            } else {
                spec.find_struct(&t.ty.name).and_then(|def| {
                    def.fields.iter().find_map(|f| {
                        let fixed = match &f.ty {
                            TypeRef::Scalar(_) | TypeRef::Split { .. } => true,
                            TypeRef::Array {
                                elem,
                                len: ir::Len::Expr(len),
                            } => {
                                matches!(**elem, TypeRef::Scalar(_))
                                    && !uses_fields_or_remaining(len)
                            }
                            _ => false,
                        };
                        if !fixed {
                            return Some(format!(
                                "field `{}` is {}, whose size is not fixed",
                                f.name,
                                describe_type(&f.ty)
                            ));
                        }
                        if f.cond.as_ref().is_some_and(uses_fields_or_remaining) {
                            return Some(format!(
                                "the condition of field `{}` depends on decoded data",
                                f.name
                            ));
                        }
                        if f.within.is_some() {
                            return Some(format!("field `{}` has a `within` size", f.name));
                        }
                        None
                    })
                })
            };
            if let Some(problem) = problem {
                self.error_help(
                    t.ty.span,
                    format!("`{}` cannot be a trailer: {problem}", t.ty.name),
                    "not a fixed-size trailer",
                    Some("a trailer is read from the end of the record, so its size must follow from the context alone: scalar fields and fixed arrays of scalars, conditions on `ctx` only".to_string()),
                );
            }
        }
    }

    /// The generated Rust struct of a bounded struct (every record and feature) has a
    /// member `tail` for the bytes after its last field, and a record's trailer is the
    /// member named after its struct (`SampleId` → `sample_id`): a field or a trailer that
    /// takes one of those names would make two members of one name.
    pub(super) fn check_member_names(&mut self, items: &[&ast::Item]) {
        for item in items {
            let ast::Item::Struct(s) = item else { continue };
            let bounded = s.keyword != ast::StructKeyword::Struct || s.bounded_by.is_some();
            let members: Vec<&Ident> = s
                .members
                .iter()
                .map(|m| match m {
                    ast::Member::Field(f) => &f.name,
                    ast::Member::Payload(p) => &p.name,
                })
                .collect();
            if bounded {
                for m in members.iter().filter(|m| m.name == "tail") {
                    self.error_help(
                        m.span,
                        match s.keyword {
                            ast::StructKeyword::Struct => {
                                "a `bounded_by` struct cannot have a member named `tail`".into()
                            }
                            k => format!("a {} cannot have a member named `tail`", k.as_str()),
                        },
                        "reserved in a bounded struct",
                        Some("`tail` holds the bytes after the last field of a record, a feature or a `bounded_by` struct: rename the field".to_string()),
                    );
                }
            }
            let Some(t) = &s.trailer else { continue };
            let member = crate::names::snake(&t.ty.name);
            if bounded && member == "tail" {
                self.error_help(
                    t.ty.span,
                    format!(
                        "the trailer `{}` would be the member `tail` of `{}`",
                        t.ty.name, s.name.name
                    ),
                    "clashes with the bytes after the last field",
                    Some("a trailer is the member named after its struct, and `tail` holds the bytes after a record's last field: rename the struct".to_string()),
                );
            } else if let Some(m) = members.iter().find(|m| m.name == member) {
                self.error_help(
                    t.ty.span,
                    format!(
                        "the trailer `{}` would be the member `{member}` of `{}`, the name of one of its fields",
                        t.ty.name, s.name.name
                    ),
                    "clashes with a field",
                    Some(format!(
                        "a trailer is the member named after its struct: rename the field `{}` or the struct",
                        m.name
                    )),
                );
            }
        }
    }

    /// A struct may not contain itself other than through an array: its Rust type would
    /// have an infinite size.
    pub(super) fn check_recursion(&mut self, spec: &ir::Spec) {
        fn direct_structs<'t>(t: &'t TypeRef, out: &mut Vec<&'t str>) {
            match t {
                TypeRef::Struct { name, .. } => out.push(name),
                TypeRef::Switch(sw) => sw.arms.iter().for_each(|a| direct_structs(&a.ty, out)),
                _ => {}
            }
        }
        let edges: HashMap<&str, Vec<&str>> = spec
            .structs
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                s.fields
                    .iter()
                    .for_each(|f| direct_structs(&f.ty, &mut out));
                (s.name.as_str(), out)
            })
            .collect();
        for s in &spec.structs {
            // Depth-first search for a path back to `s`.
            let mut stack: Vec<&str> = edges.get(s.name.as_str()).cloned().unwrap_or_default();
            let mut seen: Vec<&str> = Vec::new();
            let mut cyclic = false;
            while let Some(n) = stack.pop() {
                if n == s.name {
                    cyclic = true;
                    break;
                }
                if !seen.contains(&n) {
                    seen.push(n);
                    stack.extend(edges.get(n).into_iter().flatten());
                }
            }
            if cyclic {
                if let Some((_, span)) = self.items.get(&s.name) {
                    self.error_help(
                        *span,
                        format!("struct `{}` contains itself", s.name),
                        "recursive without an array",
                        Some("a struct can only contain itself through an array (`[T; n]`), otherwise its size is infinite".to_string()),
                    );
                }
            }
        }
    }

    pub(super) fn check_switch_names(&mut self) {
        let names = std::mem::take(&mut self.switch_names);
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for (name, span) in &names {
            if let Some((_, item_span)) = self.items.get(name) {
                let at = self.where_(*item_span);
                self.error_help(
                    *span,
                    format!("the switch enum `{name}` has the same name as an item"),
                    "name clash",
                    Some(format!(
                        "`{name}` is declared at {at}; name the switch with `as OtherName`"
                    )),
                );
            } else if let Some(first) = seen.get(name.as_str()) {
                let at = self.where_(*first);
                self.error_help(
                    *span,
                    format!("two switches generate the enum `{name}`"),
                    "name clash",
                    Some(format!(
                        "the other switch is at {at}; name one with `as OtherName`"
                    )),
                );
            } else {
                seen.insert(name, *span);
            }
        }
    }
}
