//! The validated, typed intermediate representation of a spec.
//!
//! Produced by [`crate::validate`] from the parsed syntax; consumed by `codegen`. Every name
//! in the IR is resolved: a [`TypeRef::Struct`] names a struct that exists, a
//! [`Expr::Has`] carries the mask it tests, expressions only mention fields that are
//! decoded before them (computed fields excepted), and so on. Code generation can trust it.

use serde::Serialize;
use std::fmt;

/// Where an item or field was declared (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

/// One whole spec (all its files).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spec {
    /// The spec's name, e.g. `perf_data` (the stem of its first file).
    pub name: String,
    /// Items in declaration order within each kind.
    pub consts: Vec<ConstDef>,
    pub enums: Vec<EnumDef>,
    pub flags: Vec<FlagsDef>,
    pub bitfields: Vec<BitfieldDef>,
    /// The run-time context; empty `fields` when the spec declares none.
    pub context: ContextDef,
    /// Plain structs, records and features, in declaration order.
    pub structs: Vec<StructDef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Prim {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F64,
    /// Only in the context.
    Bool,
}

impl Prim {
    /// Encoded size in bytes (`Bool` has none: it never appears in a layout).
    pub fn size(self) -> u32 {
        match self {
            Prim::U8 | Prim::I8 => 1,
            Prim::U16 | Prim::I16 => 2,
            Prim::U32 | Prim::I32 => 4,
            Prim::U64 | Prim::I64 | Prim::F64 => 8,
            Prim::Bool => 0,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Prim::U8 => "u8",
            Prim::U16 => "u16",
            Prim::U32 => "u32",
            Prim::U64 => "u64",
            Prim::I8 => "i8",
            Prim::I16 => "i16",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::F64 => "f64",
            Prim::Bool => "bool",
        }
    }

    /// The unsigned primitive of `size` bytes (1, 2, 4 or 8).
    pub fn unsigned_of_size(size: u32) -> Option<Prim> {
        match size {
            1 => Some(Prim::U8),
            2 => Some(Prim::U16),
            4 => Some(Prim::U32),
            8 => Some(Prim::U64),
            _ => None,
        }
    }
}

impl TypeRef {
    /// The value type of a `split[HI, LO]`: the unsigned primitive as wide as both parts
    /// (validation accepts only pairs for which it exists).
    pub fn split_value(hi: Prim, lo: Prim) -> Prim {
        Prim::unsigned_of_size(hi.size() + lo.size()).unwrap_or(Prim::U64)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstDef {
    pub name: String,
    pub doc: String,
    pub ty: Prim,
    /// Two's complement in the width of `ty` for negative literals.
    pub value: u64,
    pub span: Span,
}

/// An open enum over an integer: named values, unknown values carried as numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumDef {
    pub name: String,
    pub doc: String,
    pub repr: Prim,
    pub variants: Vec<EnumVariant>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumVariant {
    pub name: String,
    pub doc: String,
    /// Two's complement in the width of the repr for negative literals.
    pub value: u64,
}

/// Value-based bit flags over an integer (mask `1 << bit`, or a bit range read by value).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagsDef {
    pub name: String,
    pub doc: String,
    pub repr: Prim,
    pub bits: Vec<FlagBit>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagBit {
    pub name: String,
    pub doc: String,
    /// Lowest bit (inclusive).
    pub lo: u8,
    /// Highest bit (inclusive); `lo == hi` for a single flag.
    pub hi: u8,
}

impl FlagBit {
    pub fn mask(&self) -> u64 {
        let width = u32::from(self.hi - self.lo) + 1;
        let ones = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        ones << self.lo
    }
}

/// A C bit-field storage word. Members are listed as in C: widths allocated from the LSB on
/// a little-endian producer, from the MSB on a big-endian one. Widths sum to the repr width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BitfieldDef {
    pub name: String,
    pub doc: String,
    pub repr: Prim,
    pub members: Vec<BitfieldMember>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BitfieldMember {
    pub name: String,
    pub doc: String,
    /// Bit position of the member's least significant bit on a little-endian producer.
    pub pos: u8,
    pub width: u8,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ContextDef {
    pub fields: Vec<ContextField>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextField {
    pub name: String,
    pub doc: String,
    pub ty: ScalarType,
    /// `from Struct.field…`: where the container takes the value from.
    pub source: Option<ContextSource>,
}

/// Where a context value comes from: a field (or a bit-field member of a field) of a
/// struct the container decodes — an attr, a feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextSource {
    /// The struct the value is read from.
    pub strukt: String,
    /// True when that struct is a feature (the container reads it before the others).
    pub is_feature: bool,
    /// From the struct to the value.
    pub path: Vec<SourceStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum SourceStep {
    /// A stored field; `optional` when it is conditional (absent reads as the default).
    Field { name: String, optional: bool },
    /// A member of the bit-field the previous step gives.
    Member { name: String },
}

/// A type that decodes to one value of fixed size and can appear in expressions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum ScalarType {
    Prim(Prim),
    /// Name of an [`EnumDef`].
    Enum(String),
    /// Name of a [`FlagsDef`].
    Flags(String),
    /// Name of a [`BitfieldDef`].
    Bitfield(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StructKind {
    Plain,
    /// A record of the event stream: `id` is the `perf_event_header.type`.
    Record {
        id: u32,
        trailer: Option<Trailer>,
    },
    /// A header feature section: `id` is the feature bit.
    Feature {
        id: u32,
    },
}

/// A structure parsed from the end of a record body (the sample_id trailer).
/// The trailer struct is always fixed-size given the context (validated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trailer {
    pub ty: String,
    pub cond: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructDef {
    pub name: String,
    pub doc: String,
    pub kind: StructKind,
    pub params: Vec<Param>,
    /// `bounded_by EXPR`: the struct limits itself to EXPR bytes from its start as soon as
    /// the fields EXPR mentions are decoded.
    pub bounded_by: Option<Expr>,
    /// `pad_to N`: the writer zero-pads the body to a multiple of N bytes.
    pub pad_to: Option<u32>,
    pub fields: Vec<Field>,
    /// Records only: bytes that follow the record outside `header.size`.
    pub payload: Option<Payload>,
    pub span: Span,
}

impl StructDef {
    /// True when the body is bounded, so that unknown trailing bytes are kept as a tail.
    pub fn is_bounded(&self) -> bool {
        !matches!(self.kind, StructKind::Plain) || self.bounded_by.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: String,
    pub ty: ScalarType,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    pub name: String,
    pub doc: String,
    pub ty: TypeRef,
    /// `= EXPR`: computed by the writer, not stored in the owned model.
    pub computed: Option<Expr>,
    /// `if EXPR`: present only when true.
    pub cond: Option<Expr>,
    /// `within EXPR`: decoded inside exactly EXPR bytes.
    pub within: Option<Expr>,
    /// `big_endian_if EXPR`: the field (a struct) is in big-endian order when EXPR is true
    /// and little-endian when false, whatever the file's order — for data that states its
    /// own byte order (the tracing data's `big_endian` byte).
    pub big_endian_if: Option<Expr>,
    /// `@hex` / `@hex(Enum)` / `@signed`: how dumps show the value (not its bytes).
    pub display: Option<Display>,
    pub span: Span,
}

/// How a dump (JSON, text) shows an integer field: a fact about what the number means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Display {
    /// An address or a 64-bit identifier: a `"0x…"` string (exact in every JSON reader).
    /// With an enum, values the enum names (markers stored among addresses) print as
    /// that name instead.
    /// With a second argument, a prefix: names print as `PREFIX` + name (the C names,
    /// `PERF_CONTEXT_KERNEL`).
    Hex {
        names: Option<String>,
        prefix: Option<String>,
    },
    /// An unsigned word that holds a signed value (`pid` -1): printed as signed.
    Signed,
    /// Raw bytes that hold text (tracefs `format` files): printed as a string, invalid
    /// UTF-8 replaced.
    Text,
    /// A C union of two meanings told apart by a bit-field member of another field of the
    /// structure: shown under the name `set` when the member is set, else `clear`
    /// (`sample_freq` / `sample_period` by `attr_flags.freq`).
    NameBy {
        field: String,
        member: String,
        set: String,
        clear: String,
    },
}

/// `payload NAME: bytes[EXPR]` of a record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Payload {
    pub name: String,
    pub doc: String,
    /// Its length in bytes; mentions fields of the record.
    pub len: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TypeRef {
    Scalar(ScalarType),
    /// A struct, with one argument per parameter.
    Struct {
        name: String,
        args: Vec<Expr>,
    },
    Array {
        elem: Box<TypeRef>,
        len: Len,
    },
    Bytes(Len),
    /// A text region: text up to the first NUL, the remaining bytes kept as padding.
    Str(Len),
    /// NUL-terminated text without padding.
    CStr,
    /// An unsigned integer of a size known at run time: the expression (made of `ctx`
    /// values, parameters and integers only) gives 4 or 8 bytes. Its value is a `u64`.
    Word(Expr),
    /// One unsigned integer stored as two unsigned primitives, the most significant part
    /// first, each in the producer's byte order (simpleperf's 32-bit record size over the
    /// `misc` and `size` halves of `perf_event_header`). Its value is the unsigned
    /// primitive of the two widths added ([`TypeRef::split_value`]).
    Split {
        hi: Prim,
        lo: Prim,
    },
    Switch(Switch),
    /// The payload of the feature whose id the expression gives.
    FeatureById(Expr),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Len {
    Expr(Expr),
    /// To the end of the enclosing bounded body.
    Rest,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Switch {
    pub on: Expr,
    /// Name of the generated Rust enum: `as Name`, else `<Struct><Field>` in CamelCase.
    pub enum_name: String,
    pub arms: Vec<Arm>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub pat: Pattern,
    pub variant: String,
    pub ty: TypeRef,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pattern {
    Int(u64),
    Bool(bool),
    Default,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    BitAnd,
    BitOr,
}

impl BinOp {
    /// The operator as written in a spec.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Func {
    Popcount,
    Max,
    Min,
    Align,
}

impl Func {
    /// The function as written in a spec.
    pub fn name(self) -> &'static str {
        match self {
            Func::Popcount => "popcount",
            Func::Max => "max",
            Func::Min => "min",
            Func::Align => "align",
        }
    }
}

/// Expressions. Numbers are evaluated as `u64` (wrapping is an error at run time only for
/// counts and sizes, which are checked against the input); comparisons give `bool`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Expr {
    Int(u64),
    Bool(bool),
    /// An earlier field of the enclosing struct (its decoded value, computed or not).
    Field(String),
    /// A parameter of the enclosing struct.
    Param(String),
    /// `ctx.NAME`.
    Ctx(String),
    /// Bytes left in the enclosing bounded body.
    Remaining,
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `value has FLAG`: `(value & mask) != 0`; `flags` names the [`FlagsDef`].
    Has {
        value: Box<Expr>,
        flags: String,
        flag: String,
        mask: u64,
    },
    Call(Func, Vec<Expr>),
    /// `len(f)`: byte length of bytes/str field `f` (computed fields only).
    LenOf(String),
    /// `count(f)`: number of elements of array field `f` (computed fields only).
    CountOf(String),
    /// `sizeof(self)`: encoded size of the enclosing struct (computed fields only).
    SizeOfSelf,
    /// `sizeof(f)`: encoded size of field `f` (computed fields only).
    SizeOf(String),
}

impl Spec {
    pub fn find_struct(&self, name: &str) -> Option<&StructDef> {
        self.structs.iter().find(|s| s.name == name)
    }
    pub fn find_enum(&self, name: &str) -> Option<&EnumDef> {
        self.enums.iter().find(|s| s.name == name)
    }
    pub fn find_flags(&self, name: &str) -> Option<&FlagsDef> {
        self.flags.iter().find(|s| s.name == name)
    }
    pub fn find_bitfield(&self, name: &str) -> Option<&BitfieldDef> {
        self.bitfields.iter().find(|s| s.name == name)
    }
    /// The integer representation and encoded size of a scalar type.
    pub fn scalar_repr(&self, ty: &ScalarType) -> Prim {
        match ty {
            ScalarType::Prim(p) => *p,
            ScalarType::Enum(n) => self.find_enum(n).map_or(Prim::U64, |d| d.repr),
            ScalarType::Flags(n) => self.find_flags(n).map_or(Prim::U64, |d| d.repr),
            ScalarType::Bitfield(n) => self.find_bitfield(n).map_or(Prim::U64, |d| d.repr),
        }
    }
    pub fn records(&self) -> impl Iterator<Item = (u32, &StructDef)> {
        self.structs.iter().filter_map(|s| match s.kind {
            StructKind::Record { id, .. } => Some((id, s)),
            _ => None,
        })
    }
    pub fn features(&self) -> impl Iterator<Item = (u32, &StructDef)> {
        self.structs.iter().filter_map(|s| match s.kind {
            StructKind::Feature { id } => Some((id, s)),
            _ => None,
        })
    }
}

/// Spec text, fully parenthesised below the top level (`a + (b * c)`), so that the docs and
/// generated panics show an expression without the reader knowing the precedences.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn write(e: &Expr, top: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let grouped =
                |f: &mut fmt::Formatter<'_>,
                 body: &dyn Fn(&mut fmt::Formatter<'_>) -> fmt::Result| {
                    if top {
                        body(f)
                    } else {
                        f.write_str("(")?;
                        body(f)?;
                        f.write_str(")")
                    }
                };
            match e {
                Expr::Int(v) if *v > 0xffff => write!(f, "{v:#x}"),
                Expr::Int(v) => write!(f, "{v}"),
                Expr::Bool(b) => write!(f, "{b}"),
                Expr::Field(n) | Expr::Param(n) => f.write_str(n),
                Expr::Ctx(n) => write!(f, "ctx.{n}"),
                Expr::Remaining => f.write_str("remaining"),
                Expr::Not(x) => {
                    f.write_str("!")?;
                    write(x, false, f)
                }
                Expr::Binary(op, a, b) => grouped(f, &|f| {
                    write(a, false, f)?;
                    write!(f, " {} ", op.symbol())?;
                    write(b, false, f)
                }),
                Expr::Has { value, flag, .. } => grouped(f, &|f| {
                    write(value, false, f)?;
                    write!(f, " has {flag}")
                }),
                Expr::Call(func, args) => {
                    write!(f, "{}(", func.name())?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write(a, true, f)?;
                    }
                    f.write_str(")")
                }
                Expr::LenOf(n) => write!(f, "len({n})"),
                Expr::CountOf(n) => write!(f, "count({n})"),
                Expr::SizeOfSelf => f.write_str("sizeof(self)"),
                Expr::SizeOf(n) => write!(f, "sizeof({n})"),
            }
        }
        write(self, true, f)
    }
}

/// `..` for [`Len::Rest`].
impl fmt::Display for Len {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Len::Expr(e) => e.fmt(f),
            Len::Rest => f.write_str(".."),
        }
    }
}

/// The type as spec text (`[u64; nr]`, `Mmap2File`, `word[ctx.word_size]`); scalars by
/// their own name, switches by their enum's.
impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::Scalar(ScalarType::Prim(p)) => f.write_str(p.name()),
            TypeRef::Scalar(
                ScalarType::Enum(n) | ScalarType::Flags(n) | ScalarType::Bitfield(n),
            ) => f.write_str(n),
            TypeRef::Struct { name, args } if args.is_empty() => f.write_str(name),
            TypeRef::Struct { name, args } => {
                write!(f, "{name}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            TypeRef::Array { elem, len } => write!(f, "[{elem}; {len}]"),
            TypeRef::Bytes(l) => write!(f, "bytes[{l}]"),
            TypeRef::Str(l) => write!(f, "str[{l}]"),
            TypeRef::CStr => f.write_str("cstr"),
            TypeRef::Word(e) => write!(f, "word[{e}]"),
            TypeRef::Split { hi, lo } => write!(f, "split[{}, {}]", hi.name(), lo.name()),
            TypeRef::Switch(sw) => f.write_str(&sw.enum_name),
            TypeRef::FeatureById(e) => write!(f, "feature({e})"),
        }
    }
}
