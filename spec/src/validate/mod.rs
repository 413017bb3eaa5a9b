//! Validation: from the syntax trees of all files of a spec to the typed [`ir::Spec`].
//!
//! Names are global across files, so items are registered first; then each item is
//! checked and lowered. Errors are collected (not stopped at) so that one run reports
//! everything; a part that fails is left out of the IR, and the IR is only returned when
//! there is no error at all.
//!
//! One file per phase, in the order they run:
//! * `register`: pass 1, every item name;
//! * pass 2, lowering (driven from here): `context` (the context blocks), `scalars`
//!   (constants, enums, flags, bit-fields), `structs` (structs, records, features), which
//!   checks field types with `types`, expressions with `expr` and display attributes with
//!   `display`; then the context values' sources (`context` again);
//! * `checks`: whole-spec checks (ids, trailers, recursion, switch enum names).
//!
//! This module holds the shared state (`Validator`'s fields), the reporting helpers and the
//! driver of pass 2; every phase adds its methods to `Validator`. What the phases share
//! lives below them and imports no sibling: `common` (primitive names, descriptions for
//! messages, facts about expressions), `suggest` (did-you-mean) and `scope` (the scope and
//! type of an expression being checked). A phase imports only those, never another phase.

mod checks;
mod common;
mod context;
mod display;
mod expr;
mod register;
mod scalars;
mod scope;
mod structs;
mod suggest;
mod types;

use std::collections::HashMap;

use crate::ast::{self, Ident, Span};
use crate::diag::{Report, SourceMap};
use crate::ir::{self, Prim};

pub use common::camel_case;

pub(crate) fn validate(
    name: &str,
    files: &[ast::File],
    map: &SourceMap,
    ir_file_names: &[String],
) -> Result<ir::Spec, Vec<Report>> {
    let mut v = Validator {
        map,
        ir_file_names,
        reports: Vec::new(),
        items: HashMap::new(),
        context: Vec::new(),
        context_names: Vec::new(),
        context_sources: Vec::new(),
        context_declared: false,
        flags: HashMap::new(),
        reprs: HashMap::new(),
        switch_names: Vec::new(),
        bitfield_members: HashMap::new(),
        pending_name_by: Vec::new(),
    };
    let all: Vec<&ast::Item> = files.iter().flat_map(|f| f.items.iter()).collect();
    v.register(&all);
    let spec = v.lower(name, &all);
    if v.reports.is_empty() {
        Ok(spec)
    } else {
        Err(v.reports)
    }
}

/// What a global name refers to.
#[derive(Clone, Copy)]
enum Named<'a> {
    Const,
    Enum,
    Flags,
    Bitfield,
    Struct(&'a ast::StructItem),
}

struct Validator<'a> {
    map: &'a SourceMap<'a>,
    ir_file_names: &'a [String],
    reports: Vec<Report>,
    /// Every item name, with what it is and where it was declared.
    items: HashMap<String, (Named<'a>, Span)>,
    context: Vec<ir::ContextField>,
    /// Context fields' declarations (every block's), for duplicates across blocks.
    context_names: Vec<Ident>,
    /// `from …` paths of context fields, resolved once the structs are known.
    context_sources: Vec<(String, &'a [Ident])>,
    context_declared: bool,
    /// Flags definitions by name, for `has`.
    flags: HashMap<String, ir::FlagsDef>,
    /// The representation of every valid enum, flags and bitfield, by name.
    reprs: HashMap<String, Prim>,
    /// Generated switch enum names, to detect clashes.
    switch_names: Vec<(String, Span)>,
    /// `(member, width)` of every valid bitfield, by name (for `@name_by`).
    bitfield_members: HashMap<String, Vec<(String, u8)>>,
    /// `@name_by` paths of the structure being checked: where, field, member.
    pending_name_by: Vec<(Span, String, String)>,
}

impl<'a> Validator<'a> {
    fn error(&mut self, span: Span, message: impl Into<String>, label: impl Into<String>) {
        self.reports.push(Report::new(span, message, label));
    }

    fn error_help(
        &mut self,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
        help: Option<String>,
    ) {
        let mut report = Report::new(span, message, label);
        report.help = help;
        self.reports.push(report);
    }

    fn ir_span(&self, span: Span) -> ir::Span {
        let (line, col, _) = self.map.locate(span.file, span.lo);
        ir::Span {
            file: self
                .ir_file_names
                .get(span.file)
                .cloned()
                .unwrap_or_default(),
            line,
            col,
        }
    }

    fn where_(&self, span: Span) -> String {
        let (line, col, _) = self.map.locate(span.file, span.lo);
        format!("{}:{line}:{col}", self.map.file_name(span.file))
    }

    /// Reports the second and later occurrences of each name.
    fn check_unique<'i>(&mut self, names: impl IntoIterator<Item = &'i Ident>, what: &str) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for ident in names {
            if let Some(first) = seen.get(ident.name.as_str()) {
                let first = self.where_(*first);
                self.error_help(
                    ident.span,
                    format!("duplicate {what} `{}`", ident.name),
                    "defined again here",
                    Some(format!("the first `{}` is at {first}", ident.name)),
                );
            } else {
                seen.insert(&ident.name, ident.span);
            }
        }
    }

    /// Pass 2: lowers every item, then runs the checks that need the whole spec.
    fn lower(&mut self, name: &str, items: &[&'a ast::Item]) -> ir::Spec {
        let mut spec = ir::Spec {
            name: name.to_string(),
            consts: Vec::new(),
            enums: Vec::new(),
            flags: Vec::new(),
            bitfields: Vec::new(),
            context: ir::ContextDef::default(),
            structs: Vec::new(),
        };
        // Everything but structs first: every struct may use them, wherever declared.
        // Context blocks add up (a file may declare the context values it introduces).
        for item in items {
            match item {
                ast::Item::Context(c) => self.context_block(c),
                ast::Item::Flags(f) => {
                    if let Some(def) = self.flags_item(f) {
                        self.reprs.insert(def.name.clone(), def.repr);
                        self.flags.insert(def.name.clone(), def.clone());
                        spec.flags.push(def);
                    }
                }
                ast::Item::Const(c) => {
                    if let Some(def) = self.const_item(c) {
                        spec.consts.push(def);
                    }
                }
                ast::Item::Enum(e) => {
                    if let Some(def) = self.enum_item(e) {
                        self.reprs.insert(def.name.clone(), def.repr);
                        spec.enums.push(def);
                    }
                }
                ast::Item::Bitfield(b) => {
                    if let Some(def) = self.bitfield_item(b) {
                        self.reprs.insert(def.name.clone(), def.repr);
                        self.bitfield_members.insert(
                            def.name.clone(),
                            def.members
                                .iter()
                                .map(|m| (m.name.clone(), m.width))
                                .collect(),
                        );
                        spec.bitfields.push(def);
                    }
                }
                ast::Item::Struct(_) => {}
            }
        }
        spec.context.fields = self.context.clone();
        for item in items {
            if let ast::Item::Struct(s) = item {
                let def = self.struct_item(s);
                spec.structs.push(def);
            }
        }
        spec.context.fields = self.context.clone();
        self.resolve_context_sources(&mut spec);
        self.check_recursion(&spec);
        self.check_ids(items);
        self.check_trailers(items, &spec);
        self.check_member_names(items);
        self.check_switch_names();
        spec
    }
}
