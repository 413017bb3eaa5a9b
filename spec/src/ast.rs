//! The syntax tree of a `.pds` file, as written, with source spans. Nothing is resolved yet:
//! names are plain identifiers and literals keep their sign.

use crate::ir::BinOp;

/// A byte range `lo..hi` in file number `file` (an index into the loaded sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub file: usize,
    pub lo: usize,
    pub hi: usize,
}

impl Span {
    /// The span covering both `self` and `other` (same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// An integer literal: decimal or hex magnitude with an optional leading `-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntLit {
    pub negative: bool,
    pub magnitude: u64,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// Index of the file in the loaded sources (the `file` of every span in it).
    pub index: usize,
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Const(ConstItem),
    Enum(EnumItem),
    Flags(FlagsItem),
    Bitfield(BitfieldItem),
    Context(ContextItem),
    Struct(Box<StructItem>),
}

impl Item {
    /// The declared name (`None` for the context block).
    pub fn name(&self) -> Option<&Ident> {
        match self {
            Item::Const(i) => Some(&i.name),
            Item::Enum(i) => Some(&i.name),
            Item::Flags(i) => Some(&i.name),
            Item::Bitfield(i) => Some(&i.name),
            Item::Context(_) => None,
            Item::Struct(i) => Some(&i.name),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConstItem {
    pub doc: String,
    pub name: Ident,
    pub ty: Ident,
    pub value: IntLit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumItem {
    pub doc: String,
    pub name: Ident,
    pub repr: Ident,
    pub variants: Vec<EnumVariant>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumVariant {
    pub doc: String,
    pub name: Ident,
    pub value: IntLit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlagsItem {
    pub doc: String,
    pub name: Ident,
    pub repr: Ident,
    pub members: Vec<FlagMember>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlagMember {
    pub doc: String,
    pub name: Ident,
    pub lo: IntLit,
    /// The upper bit of a range `lo..hi` (inclusive).
    pub hi: Option<IntLit>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BitfieldItem {
    pub doc: String,
    pub name: Ident,
    pub repr: Ident,
    pub members: Vec<BitfieldMember>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BitfieldMember {
    pub doc: String,
    pub name: Ident,
    pub width: IntLit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContextItem {
    pub doc: String,
    /// The `context` keyword.
    pub span: Span,
    pub fields: Vec<ContextField>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContextField {
    pub doc: String,
    pub name: Ident,
    pub ty: Ident,
    /// `from Struct.field[.member]`: where the container takes the value from (an attr's
    /// field, a feature's field); `None` for values it sets itself (a record's misc).
    pub source: Option<Vec<Ident>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructKeyword {
    Struct,
    Record,
    Feature,
}

impl StructKeyword {
    pub fn as_str(self) -> &'static str {
        match self {
            StructKeyword::Struct => "struct",
            StructKeyword::Record => "record",
            StructKeyword::Feature => "feature",
        }
    }
}

/// A `struct`, `record` or `feature` item. The parser accepts every header clause on every
/// kind; validation says which ones make sense.
#[derive(Debug, Clone, PartialEq)]
pub struct StructItem {
    pub doc: String,
    pub keyword: StructKeyword,
    pub keyword_span: Span,
    pub name: Ident,
    pub params: Vec<ParamDecl>,
    /// `= ID` of a record or feature.
    pub id: Option<IntLit>,
    pub trailer: Option<TrailerDecl>,
    /// `bounded_by EXPR` and the span of the keyword.
    pub bounded_by: Option<(Span, Expr)>,
    /// `pad_to N` and the span of the keyword.
    pub pad_to: Option<(Span, IntLit)>,
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    pub name: Ident,
    pub ty: Ident,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrailerDecl {
    /// The `trailer` keyword.
    pub span: Span,
    pub ty: Ident,
    pub cond: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Member {
    Field(Box<FieldDecl>),
    Payload(Box<PayloadDecl>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FieldDecl {
    pub doc: String,
    /// `@hex`, `@hex(Enum)`, `@signed`, `@name_by(f.m, a, b)` before the field name: how a
    /// dump shows the value.
    pub display: Option<DisplayDecl>,
    pub name: Ident,
    pub ty: TypeExpr,
    pub computed: Option<Expr>,
    pub cond: Option<Expr>,
    pub within: Option<Expr>,
    pub big_endian_if: Option<Expr>,
}

/// A display attribute `@NAME` or `@NAME(ARG)`.
#[derive(Debug, Clone, PartialEq)]
pub struct DisplayDecl {
    /// From the `@` to the end of the attribute.
    pub span: Span,
    pub name: Ident,
    /// Arguments: names, or `field.member` paths.
    pub args: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PayloadDecl {
    pub doc: String,
    /// The `payload` keyword.
    pub span: Span,
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    /// A primitive or declared type, with `(args)` when given.
    Named {
        name: Ident,
        args: Option<Vec<Expr>>,
    },
    Array {
        elem: Box<TypeExpr>,
        len: LenExpr,
    },
    Bytes(LenExpr),
    Str(LenExpr),
    CStr,
    /// `word[e]`: an unsigned word of `e` (4 or 8) bytes, `e` known before the structure.
    Word(Expr),
    /// `split[HI, LO]`: one unsigned integer stored as two, most significant part first.
    Split {
        hi: Ident,
        lo: Ident,
    },
    Switch(SwitchExpr),
    /// `feature(e)`.
    Feature(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum LenExpr {
    Expr(Expr),
    /// `..`, with the span of the dots.
    Rest(Span),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SwitchExpr {
    pub on: Expr,
    pub as_name: Option<Ident>,
    pub arms: Vec<ArmDecl>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ArmDecl {
    pub pat: PatternDecl,
    pub variant: Ident,
    pub ty: TypeExpr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatternDecl {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    Int(IntLit),
    Bool(bool),
    Default,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Int(u64),
    Bool(bool),
    /// A field or parameter name.
    Name(String),
    /// `ctx.NAME`.
    Ctx(Ident),
    Remaining,
    /// `self`, only meaningful as the argument of `sizeof`.
    SelfValue,
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `value has FLAG`.
    Has(Box<Expr>, Ident),
    /// `name(args)`; the name is checked by validation.
    Call(Ident, Vec<Expr>),
}
