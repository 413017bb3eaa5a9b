//! Validation: from the syntax trees of all files of a spec to the typed [`ir::Spec`].
//!
//! Names are global across files, so items are registered first; then each item is
//! checked and lowered. Errors are collected (not stopped at) so that one run reports
//! everything; a part that fails is left out of the IR, and the IR is only returned when
//! there is no error at all.

use std::collections::HashMap;

use crate::ast::{self, ExprKind, Ident, IntLit, LenExpr, Member, PatternKind, Span, TypeKind};
use crate::diag::{Report, SourceMap};
use crate::ir::{self, BinOp, Prim, ScalarType, TypeRef};

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

/// The type of an expression, for checking. `Unknown` follows an error and is accepted
/// everywhere so that one mistake is reported once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Int,
    Bool,
    Unknown,
}

/// Where an expression appears, which decides what it may mention.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Conditions, lengths, arguments…: earlier fields, parameters, `ctx`, `remaining`.
    Normal,
    /// `= EXPR` of a computed field: `len/count/sizeof`, integers and arithmetic.
    Computed,
    /// A record's trailer condition: no fields and no `remaining` (the trailer is located
    /// before any field is decoded).
    Trailer,
}

/// The struct an expression belongs to.
struct Scope<'s> {
    struct_name: &'s str,
    is_record: bool,
    params: &'s [ir::Param],
    /// Every member name of the struct (fields and payload), for `len/count/sizeof`.
    all_members: &'s [String],
    /// The fields decoded before the expression, with their type when it resolved.
    visible: &'s [(String, Option<TypeRef>)],
    mode: Mode,
}

/// A `len(f)`, `count(f)` or `sizeof(f)` seen in a computed field, checked once every field
/// of the struct has its type.
struct MemberRef {
    func: &'static str,
    target: String,
    span: Span,
}

/// Where a `payload` member stands among the members of its struct.
#[derive(Clone, Copy)]
struct PayloadPosition {
    is_last: bool,
    is_first: bool,
    is_only: bool,
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

const FUNCTIONS: &[&str] = &["popcount", "max", "min", "align", "len", "count", "sizeof"];

fn prim_named(name: &str) -> Option<Prim> {
    Some(match name {
        "u8" => Prim::U8,
        "u16" => Prim::U16,
        "u32" => Prim::U32,
        "u64" => Prim::U64,
        "i8" => Prim::I8,
        "i16" => Prim::I16,
        "i32" => Prim::I32,
        "i64" => Prim::I64,
        "f64" => Prim::F64,
        "bool" => Prim::Bool,
        _ => return None,
    })
}

const PRIM_NAMES: &[&str] = &[
    "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f64", "bool",
];

fn is_signed(p: Prim) -> bool {
    matches!(p, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
}

fn is_unsigned(p: Prim) -> bool {
    matches!(p, Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64)
}

fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `sample_type` -> `SampleType`.
pub fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// Edit distance counting a swap of two neighbouring characters as one edit (optimal
/// string alignment), since `TIEM` for `TIME` is a typical typo.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo. Short names
/// (one or two characters) get no suggestion: any other short name would be "close".
fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = name.chars().count() / 3;
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(name) {
                0
            } else {
                edit_distance(name, c)
            };
            (d, c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn did_you_mean<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// True when the expression mentions a field or `remaining` (not allowed in trailers).
fn uses_fields_or_remaining(e: &ir::Expr) -> bool {
    use ir::Expr as E;
    match e {
        E::Field(_) | E::Remaining | E::LenOf(_) | E::CountOf(_) | E::SizeOf(_) => true,
        E::SizeOfSelf | E::Int(_) | E::Bool(_) | E::Param(_) | E::Ctx(_) => false,
        E::Not(x) => uses_fields_or_remaining(x),
        E::Binary(_, a, b) => uses_fields_or_remaining(a) || uses_fields_or_remaining(b),
        E::Has { value, .. } => uses_fields_or_remaining(value),
        E::Call(_, args) => args.iter().any(uses_fields_or_remaining),
    }
}

fn mentions_field(e: &ir::Expr, name: &str) -> bool {
    use ir::Expr as E;
    match e {
        E::Field(n) => n == name,
        E::Not(x) => mentions_field(x, name),
        E::Binary(_, a, b) => mentions_field(a, name) || mentions_field(b, name),
        E::Has { value, .. } => mentions_field(value, name),
        E::Call(_, args) => args.iter().any(|a| mentions_field(a, name)),
        _ => false,
    }
}

fn scalar_name(t: &ScalarType) -> &str {
    match t {
        ScalarType::Prim(p) => p.name(),
        ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n) => n,
    }
}

fn describe_type(t: &TypeRef) -> String {
    match t {
        TypeRef::Scalar(ScalarType::Prim(p)) => format!("`{}`", p.name()),
        TypeRef::Scalar(ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n)) => {
            format!("`{n}`")
        }
        TypeRef::Struct { name, .. } => format!("struct `{name}`"),
        TypeRef::Array { .. } => "an array".to_string(),
        TypeRef::Bytes(_) => "`bytes`".to_string(),
        TypeRef::Str(_) => "`str`".to_string(),
        TypeRef::CStr => "`cstr`".to_string(),
        TypeRef::Word(_) => "a `word`".to_string(),
        TypeRef::Switch(_) => "a `switch`".to_string(),
        TypeRef::FeatureById(_) => "`feature(…)`".to_string(),
    }
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

    /// Checks a field's display attribute: `@hex` / `@hex(Enum)` / `@signed` on an
    /// unsigned integer field (a primitive or a word) or an array of those;
    /// `@name_by(field.member, set, clear)` on any field.
    fn display(&mut self, d: &ast::DisplayDecl, field: &str, ty: &TypeRef) -> Option<ir::Display> {
        let mut elem = ty;
        while let TypeRef::Array { elem: e, .. } = elem {
            elem = e;
        }
        let unsigned = matches!(
            elem,
            TypeRef::Scalar(ScalarType::Prim(
                Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64
            )) | TypeRef::Word(_)
        );
        let display = match (d.name.name.as_str(), d.args.as_slice()) {
            ("hex", []) => ir::Display::Hex {
                names: None,
                prefix: None,
            },
            ("hex", [arg] | [arg, _]) => match self.items.get(&arg.name).map(|x| &x.0) {
                Some(Named::Enum) => ir::Display::Hex {
                    names: Some(arg.name.clone()),
                    prefix: d.args.get(1).map(|p| p.name.clone()),
                },
                _ => {
                    self.error_help(
                        arg.span,
                        format!("`@hex({})`: `{}` is not an enum", arg.name, arg.name),
                        "not an enum",
                        Some("the argument of `@hex` names an enum whose values are printed by name (e.g. `@hex(CallchainContext)`)".to_string()),
                    );
                    return None;
                }
            },
            ("signed", []) => ir::Display::Signed,
            ("text", []) => {
                if !matches!(ty, TypeRef::Bytes(_)) {
                    self.error_help(
                        d.span,
                        format!("`@text` on field `{field}`, which is {}", describe_type(ty)),
                        "display attribute here",
                        Some("`@text` applies to `bytes[…]` fields that hold text; `str` and `cstr` are text already".to_string()),
                    );
                    return None;
                }
                return Some(ir::Display::Text);
            }
            ("name_by", [by, set, clear]) => {
                let display = self.name_by(by, set, clear)?;
                return Some(display);
            }
            (name @ ("hex" | "signed" | "text" | "name_by"), args) => {
                let span = args.first().map_or(d.name.span, |a| a.span);
                self.error_help(
                    span,
                    format!(
                        "`@{name}` takes {}",
                        match name {
                            "hex" => "no argument, an enum name, or an enum name and a prefix",
                            "signed" | "text" => "no argument",
                            _ => "three arguments: `field.member, name_if_set, name_if_clear`",
                        }
                    ),
                    "wrong arguments",
                    None,
                );
                return None;
            }
            (other, _) => {
                self.error_help(
                    d.name.span,
                    format!("unknown display attribute `@{other}`"),
                    "unknown attribute",
                    Some("display attributes are `@hex`, `@hex(Enum)`, `@signed`, `@text` and `@name_by(field.member, if_set, if_clear)`".to_string()),
                );
                return None;
            }
        };
        if !unsigned {
            self.error_help(
                d.span,
                format!(
                    "`@{}` on field `{field}`, which is {}",
                    d.name.name,
                    describe_type(ty)
                ),
                "display attribute here",
                Some("display attributes apply to unsigned integer fields (`u8`…`u64`, `word[…]`) and arrays of them".to_string()),
            );
            return None;
        }
        Some(display)
    }

    /// `@name_by(field.member, set, clear)`; that `field` is a bit-field field of the
    /// structure with a one-bit `member` is checked once all its fields are known.
    fn name_by(&mut self, by: &Ident, set: &Ident, clear: &Ident) -> Option<ir::Display> {
        let Some((field, member)) = by.name.split_once('.') else {
            self.error_help(
                by.span,
                format!("`@name_by({})`: expected `field.member`", by.name),
                "not a `field.member` path",
                Some("the first argument names a one-bit member of a bit-field field of the structure (`attr_flags.freq`)".to_string()),
            );
            return None;
        };
        self.pending_name_by
            .push((by.span, field.to_string(), member.to_string()));
        Some(ir::Display::NameBy {
            field: field.to_string(),
            member: member.to_string(),
            set: set.name.clone(),
            clear: clear.name.clone(),
        })
    }

    /// Checks the `@name_by` paths of a structure against its fields.
    fn check_name_by(&mut self, fields: &[ir::Field]) {
        for (span, field, member) in std::mem::take(&mut self.pending_name_by) {
            let one_bit = fields
                .iter()
                .find(|f| f.name == field && f.cond.is_none())
                .and_then(|f| match &f.ty {
                    TypeRef::Scalar(ScalarType::Bitfield(b)) => self.bitfield_members.get(b),
                    _ => None,
                })
                .is_some_and(|members| members.iter().any(|(m, w)| *m == member && *w == 1));
            if !one_bit {
                self.error_help(
                    span,
                    format!("`@name_by({field}.{member})`: `{field}` is not an unconditional bit-field field of this structure with a one-bit member `{member}`"),
                    "not a one-bit bit-field member",
                    None,
                );
            }
        }
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

    // ------------------------------------------------------------ pass 1: names

    fn register(&mut self, items: &[&'a ast::Item]) {
        for item in items {
            let Some(name) = item.name() else { continue };
            let named = match item {
                ast::Item::Const(_) => Named::Const,
                ast::Item::Enum(_) => Named::Enum,
                ast::Item::Flags(_) => Named::Flags,
                ast::Item::Bitfield(_) => Named::Bitfield,
                ast::Item::Struct(s) => Named::Struct(s.as_ref()),
                ast::Item::Context(_) => continue,
            };
            if PRIM_NAMES.contains(&name.name.as_str()) {
                self.error(
                    name.span,
                    format!(
                        "`{}` is a primitive type and cannot be redefined",
                        name.name
                    ),
                    "primitive type name",
                );
                continue;
            }
            if let Some((_, first)) = self.items.get(&name.name) {
                let first = self.where_(*first);
                self.error_help(
                    name.span,
                    format!("the name `{}` is defined more than once", name.name),
                    "redefined here",
                    Some(format!("the first definition is at {first}")),
                );
                continue;
            }
            self.items.insert(name.name.clone(), (named, name.span));
        }
    }

    fn type_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .items
            .iter()
            .filter(|(_, (n, _))| !matches!(n, Named::Const))
            .map(|(k, _)| k.as_str())
            .collect();
        names.extend(PRIM_NAMES.iter().filter(|p| **p != "bool"));
        names.sort_unstable();
        names
    }

    // ------------------------------------------------------------ pass 2: lowering

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
        self.check_switch_names();
        spec
    }

    /// An unsigned integer type for an enum, flags or bitfield.
    fn repr(&mut self, repr: &Ident, what: &str) -> Option<Prim> {
        match prim_named(&repr.name) {
            Some(p) if is_unsigned(p) => Some(p),
            Some(p) => {
                let suggestion = match p {
                    Prim::I8 => Some("u8"),
                    Prim::I16 => Some("u16"),
                    Prim::I32 => Some("u32"),
                    Prim::I64 => Some("u64"),
                    _ => None,
                };
                self.error_help(
                    repr.span,
                    format!(
                        "the representation of {what} must be an unsigned integer type, \
                         not `{}`",
                        repr.name
                    ),
                    "not an unsigned integer",
                    Some(match suggestion {
                        Some(s) => format!(
                            "use `{s}`; negative values can still be written and are stored \
                             as two's complement"
                        ),
                        None => "use one of `u8`, `u16`, `u32`, `u64`".to_string(),
                    }),
                );
                None
            }
            None => {
                self.error_help(
                    repr.span,
                    format!("unknown integer type `{}`", repr.name),
                    "not an unsigned integer type",
                    did_you_mean(&repr.name, ["u8", "u16", "u32", "u64"])
                        .or_else(|| Some("use one of `u8`, `u16`, `u32`, `u64`".to_string())),
                );
                None
            }
        }
    }

    /// The value of `lit` in the width of `prim`, negative values in two's complement.
    /// Unsigned types accept negative literals down to the signed minimum of their width.
    fn lit_value(&mut self, lit: &IntLit, prim: Prim) -> Option<u64> {
        // `bool` has no width; it never reaches here, but 64 bits is harmless if it does.
        let bits = match prim.size() {
            0 => 64,
            n => n * 8,
        };
        let mask = width_mask(bits);
        let half = 1u64 << (bits - 1);
        let (ok, range) = if lit.negative {
            let min = half;
            let range = if is_signed(prim) {
                format!("-{half}..={}", half - 1)
            } else {
                format!("-{half}..={mask}")
            };
            (lit.magnitude <= min, range)
        } else if is_signed(prim) {
            (lit.magnitude < half, format!("-{half}..={}", half - 1))
        } else {
            (lit.magnitude <= mask, format!("-{half}..={mask}"))
        };
        if !ok {
            let sign = if lit.negative { "-" } else { "" };
            self.error_help(
                lit.span,
                format!(
                    "`{sign}{}` is out of range for `{}`",
                    lit.magnitude,
                    prim.name()
                ),
                "out of range",
                Some(format!(
                    "`{}` holds {range} (negative values as two's complement)",
                    prim.name()
                )),
            );
            return None;
        }
        Some(if lit.negative {
            lit.magnitude.wrapping_neg() & mask
        } else {
            lit.magnitude
        })
    }

    /// A non-negative literal no larger than `max`.
    fn small_lit(&mut self, lit: &IntLit, max: u64, what: &str) -> Option<u64> {
        if lit.negative || lit.magnitude > max {
            let sign = if lit.negative { "-" } else { "" };
            self.error(
                lit.span,
                format!(
                    "{what} must be between 0 and {max}, found `{sign}{}`",
                    lit.magnitude
                ),
                "out of range",
            );
            return None;
        }
        Some(lit.magnitude)
    }

    fn const_item(&mut self, c: &ast::ConstItem) -> Option<ir::ConstDef> {
        let ty = match prim_named(&c.ty.name) {
            Some(p) if p != Prim::Bool && p != Prim::F64 => p,
            _ => {
                self.error_help(
                    c.ty.span,
                    format!("a constant must have an integer type, not `{}`", c.ty.name),
                    "not an integer type",
                    Some(
                        "constants are integers: use one of `u8` … `u64`, `i8` … `i64`".to_string(),
                    ),
                );
                return None;
            }
        };
        let value = self.lit_value(&c.value, ty)?;
        Some(ir::ConstDef {
            name: c.name.name.clone(),
            doc: c.doc.clone(),
            ty,
            value,
            span: self.ir_span(c.name.span),
        })
    }

    fn enum_item(&mut self, e: &ast::EnumItem) -> Option<ir::EnumDef> {
        self.check_unique(e.variants.iter().map(|v| &v.name), "variant");
        let repr = self.repr(&e.repr, "an enum")?;
        let mut variants = Vec::new();
        for v in &e.variants {
            // Equal values are allowed: they are aliases.
            if let Some(value) = self.lit_value(&v.value, repr) {
                variants.push(ir::EnumVariant {
                    name: v.name.name.clone(),
                    doc: v.doc.clone(),
                    value,
                });
            }
        }
        Some(ir::EnumDef {
            name: e.name.name.clone(),
            doc: e.doc.clone(),
            repr,
            variants,
            span: self.ir_span(e.name.span),
        })
    }

    fn flags_item(&mut self, f: &ast::FlagsItem) -> Option<ir::FlagsDef> {
        self.check_unique(f.members.iter().map(|m| &m.name), "flag");
        let repr = self.repr(&f.repr, "flags")?;
        let bits = u64::from(repr.size() * 8);
        let mut members = Vec::new();
        for m in &f.members {
            let what = format!("a bit of `{}`", repr.name());
            let Some(lo) = self.small_lit(&m.lo, bits - 1, &what) else {
                continue;
            };
            let hi = match &m.hi {
                None => lo,
                Some(hi_lit) => {
                    let Some(hi) = self.small_lit(hi_lit, bits - 1, &what) else {
                        continue;
                    };
                    if hi < lo {
                        self.error_help(
                            m.lo.span.to(hi_lit.span),
                            format!("the bit range `{lo}..{hi}` is empty"),
                            "empty range",
                            Some(format!("write the low bit first: `{hi}..{lo}`")),
                        );
                        continue;
                    }
                    hi
                }
            };
            members.push(ir::FlagBit {
                name: m.name.name.clone(),
                doc: m.doc.clone(),
                lo: lo as u8,
                hi: hi as u8,
            });
        }
        Some(ir::FlagsDef {
            name: f.name.name.clone(),
            doc: f.doc.clone(),
            repr,
            bits: members,
            span: self.ir_span(f.name.span),
        })
    }

    fn bitfield_item(&mut self, b: &ast::BitfieldItem) -> Option<ir::BitfieldDef> {
        self.check_unique(b.members.iter().map(|m| &m.name), "bitfield member");
        let repr = self.repr(&b.repr, "a bitfield")?;
        let bits = u64::from(repr.size() * 8);
        let mut members = Vec::new();
        let mut pos = 0u64;
        let mut widths_ok = true;
        for m in &b.members {
            let lit = m.width;
            if lit.negative || lit.magnitude == 0 || lit.magnitude > bits {
                let sign = if lit.negative { "-" } else { "" };
                self.error(
                    lit.span,
                    format!(
                        "a member of a `{}` bitfield is 1 to {bits} bits wide, not `{sign}{}`",
                        repr.name(),
                        lit.magnitude
                    ),
                    "invalid width",
                );
                widths_ok = false;
                continue;
            }
            if pos < bits {
                members.push(ir::BitfieldMember {
                    name: m.name.name.clone(),
                    doc: m.doc.clone(),
                    pos: pos as u8,
                    width: lit.magnitude as u8,
                });
            }
            pos += lit.magnitude;
        }
        if widths_ok && pos != bits {
            let help = if pos < bits {
                format!(
                    "add a member for the {} missing bit(s), e.g. `reserved: {}`",
                    bits - pos,
                    bits - pos
                )
            } else {
                format!("remove {} bit(s) from the members", pos - bits)
            };
            self.error_help(
                b.name.span,
                format!(
                    "the members of bitfield `{}` are {pos} bits wide in total, but its \
                     representation `{}` has {bits}",
                    b.name.name,
                    repr.name()
                ),
                format!("{pos} bits instead of {bits}"),
                Some(help),
            );
            return None;
        }
        Some(ir::BitfieldDef {
            name: b.name.name.clone(),
            doc: b.doc.clone(),
            repr,
            members,
            span: self.ir_span(b.name.span),
        })
    }

    fn context_block(&mut self, c: &'a ast::ContextItem) {
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
    fn resolve_context_sources(&mut self, spec: &mut ir::Spec) {
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

    // ------------------------------------------------------------ structs

    fn struct_item(&mut self, s: &'a ast::StructItem) -> ir::StructDef {
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

    // ------------------------------------------------------------ types

    fn type_expr(&mut self, t: &ast::TypeExpr, scope: &Scope, hint: &str) -> Option<TypeRef> {
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

    // ------------------------------------------------------------ expressions

    /// Checks `e` and requires type `want`; `what` names the role for the message.
    fn expect_ty(
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
    fn scalar_of(&self, e: &ir::Expr, scope: &Scope) -> Option<ScalarType> {
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

    fn scalar_prim(&self, s: &ScalarType) -> Prim {
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

    fn computed_expr(
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

    fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> (ir::Expr, Ty) {
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
                TypeRef::Word(_) => (ir::Expr::Field(n.to_string()), Ty::Int),
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

    // ------------------------------------------------------------ whole-spec checks

    fn check_ids(&mut self, items: &[&ast::Item]) {
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
    fn check_trailers(&mut self, items: &[&ast::Item], spec: &ir::Spec) {
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
                            TypeRef::Scalar(_) => true,
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

    /// A struct may not contain itself other than through an array: its Rust type would
    /// have an infinite size.
    fn check_recursion(&mut self, spec: &ir::Spec) {
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

    fn check_switch_names(&mut self) {
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
