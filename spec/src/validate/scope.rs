//! What the checks of an expression share with the phases that call them: the scope an
//! expression is checked in (its struct, the fields it can see, the mode), the type it
//! has, and the `len/count/sizeof` references of computed fields. It imports no sibling.

use crate::ast::Span;
use crate::ir::{self, TypeRef};

/// The type of an expression, for checking. `Unknown` follows an error and is accepted
/// everywhere so that one mistake is reported once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ty {
    Int,
    Bool,
    Unknown,
}

/// Where an expression appears, which decides what it may mention.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Conditions, lengths, arguments…: earlier fields, parameters, `ctx`, `remaining`.
    Normal,
    /// `= EXPR` of a computed field: `len/count/sizeof`, integers and arithmetic.
    Computed,
    /// A record's trailer condition: no fields and no `remaining` (the trailer is located
    /// before any field is decoded).
    Trailer,
}

/// The struct an expression belongs to.
pub(super) struct Scope<'s> {
    pub(super) struct_name: &'s str,
    pub(super) is_record: bool,
    pub(super) params: &'s [ir::Param],
    /// Every member name of the struct (fields and payload), for `len/count/sizeof`.
    pub(super) all_members: &'s [String],
    /// The fields decoded before the expression, with their type when it resolved.
    pub(super) visible: &'s [(String, Option<TypeRef>)],
    pub(super) mode: Mode,
}

/// A `len(f)`, `count(f)` or `sizeof(f)` seen in a computed field, checked once every field
/// of the struct has its type.
pub(super) struct MemberRef {
    pub(super) func: &'static str,
    pub(super) target: String,
    pub(super) span: Span,
}
