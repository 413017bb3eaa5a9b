//! The `print fmt:` line's arguments → expression trees, as libtraceevent 6.1's
//! `event_read_print` builds them (`process_arg`, `process_op`, `process_paren`…).
//!
//! The port keeps libtraceevent's grammar exactly, odd corners included, because perf
//! prints what that grammar makes of a format: an operator after a parenthesised
//! expression or a ternary can bind unlike C (`a & (b | c)` rotates into `(a & b) | c`),
//! an unknown function (`sizeof`, `__get_cpumask`…) makes the whole format fail, and
//! `__print_flags` values are evaluated once, here, with their own integer rules.

use super::lex::{Kind, LexError, Lexer, Token};
use crate::tracepoint::Field;

/// One flag or symbol of `__print_flags` / `__print_symbolic`: the value as
/// libtraceevent keeps it (text, evaluated when printing) and the name printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlagSym {
    pub value: String,
    pub name: String,
}

/// An argument expression (libtraceevent's `struct tep_print_arg`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    /// The empty left side of a unary operator.
    Null,
    /// A number, name or quoted text, as written (names read as 0 in arithmetic).
    Atom(String),
    /// `REC->name`, looked up when printing (common fields first).
    Field(String),
    Flags {
        value: Box<Arg>,
        delim: Option<String>,
        flags: Vec<FlagSym>,
    },
    Symbol {
        value: Box<Arg>,
        symbols: Vec<FlagSym>,
    },
    /// `__print_hex` (spaced) or `__print_hex_str`.
    Hex {
        data: Box<Arg>,
        len: Box<Arg>,
        spaced: bool,
    },
    /// `__print_array(array, count, element size)`.
    IntArray {
        data: Box<Arg>,
        count: Box<Arg>,
        el_size: Box<Arg>,
    },
    /// `(type) item`.
    Cast {
        ty: String,
        item: Box<Arg>,
    },
    /// `__get_str(name)` / `__get_rel_str(name)`.
    Str(String),
    /// A string argument of a binary printk (bprint events).
    BStr(String),
    /// `__get_dynamic_array(field)`: index of the (non-common) field.
    DynArray(usize),
    /// `__get_dynamic_array_len(field)`.
    DynArrayLen(usize),
    /// `__get_bitmask(name)`.
    Bitmask(String),
    Op(Op),
}

/// An operator node. A unary operator has `left: Some(Null)`; `?` has a `:` node on
/// its right; `[` has the index on its right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Op {
    pub op: String,
    /// `None` only while a unary operator is being read.
    pub left: Option<Box<Arg>>,
    pub right: Option<Box<Arg>>,
    pub prio: i32,
}

impl Arg {
    /// libtraceevent's number for the argument's kind (`enum tep_print_arg_type`),
    /// which perf prints in `ARG TYPE NOT FIELD BUT <n>`.
    pub(crate) fn type_number(&self) -> u32 {
        match self {
            Arg::Null => 0,
            Arg::Atom(_) => 1,
            Arg::Field(_) => 2,
            Arg::Flags { .. } => 3,
            Arg::Symbol { .. } => 4,
            Arg::Hex { spaced: true, .. } => 5,
            Arg::IntArray { .. } => 6,
            Arg::Cast { .. } => 7,
            Arg::Str(_) => 8,
            Arg::BStr(_) => 9,
            Arg::DynArray(_) => 10,
            Arg::Op(_) => 11,
            Arg::Bitmask(_) => 13,
            Arg::DynArrayLen(_) => 14,
            Arg::Hex { spaced: false, .. } => 15,
        }
    }
}

/// Why a `print fmt:` line does not parse (perf then prints `[FAILED TO PARSE]` and the
/// event's fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrintFmtError {
    /// The format file has no `print fmt:` line.
    Missing,
    /// A quoted string that does not end.
    Unterminated,
    /// A function libtraceevent 6.1 does not know (`sizeof`, `__get_cpumask`,
    /// `__print_flags_u64`…).
    UnknownHelper(String),
    /// `__get_dynamic_array(x)` (or its length) of a field the event does not have.
    NoSuchField(String),
    /// An operator libtraceevent does not evaluate.
    UnknownOp(String),
    /// A conversion without an argument, a length modifier out of range, or another
    /// conversion libtraceevent rejects.
    BadConversion(String),
    /// A field declaration libtraceevent cannot read.
    BadField(String),
    /// Parentheses or operators nested deeper than any kernel format nests them.
    TooDeep,
    /// Any other syntax libtraceevent rejects: what was expected, what came.
    Syntax {
        /// What libtraceevent expects there.
        expected: String,
        /// The token found instead.
        found: String,
    },
}

impl PrintFmtError {
    /// The unknown helper (function) that made the format fail, if that is why.
    pub fn unknown_helper(&self) -> Option<&str> {
        match self {
            PrintFmtError::UnknownHelper(h) => Some(h),
            _ => None,
        }
    }
}

impl std::fmt::Display for PrintFmtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintFmtError::Missing => write!(f, "no `print fmt:` line"),
            PrintFmtError::Unterminated => write!(f, "a quoted string does not end"),
            PrintFmtError::UnknownHelper(h) => write!(f, "unknown helper `{h}`"),
            PrintFmtError::NoSuchField(n) => write!(f, "no field `{n}`"),
            PrintFmtError::UnknownOp(o) => write!(f, "operator `{o}` not evaluated"),
            PrintFmtError::BadConversion(c) => write!(f, "conversion `{c}`"),
            PrintFmtError::BadField(d) => write!(f, "field declaration `{d}`"),
            PrintFmtError::TooDeep => write!(f, "expressions nested too deep"),
            PrintFmtError::Syntax { expected, found } => {
                write!(f, "expected {expected}, found `{found}`")
            }
        }
    }
}

impl std::error::Error for PrintFmtError {}

impl From<LexError> for PrintFmtError {
    fn from(e: LexError) -> Self {
        match e {
            LexError::Unterminated => PrintFmtError::Unterminated,
        }
    }
}

type Res<T> = Result<T, PrintFmtError>;

fn syntax(expected: &str, found: &Token) -> PrintFmtError {
    PrintFmtError::Syntax {
        expected: expected.to_string(),
        found: found.text.clone(),
    }
}

fn expect(t: &Token, kind: Kind, text: &str) -> Res<()> {
    if t.is(kind, text) {
        Ok(())
    } else {
        Err(syntax(&format!("`{text}`"), t))
    }
}

/// libtraceevent's operator priorities (`get_op_prio`): a lower number binds tighter.
pub(crate) fn op_prio(op: &str) -> Option<i32> {
    Some(match op {
        "~" | "!" => 4,
        "*" | "/" | "%" => 6,
        "+" | "-" => 7,
        "<<" | ">>" => 8,
        "<" | ">" | "<=" | ">=" => 9,
        "==" | "!=" => 10,
        "&" => 11,
        "^" => 12,
        "|" => 13,
        "&&" => 14,
        "||" => 15,
        "?" => 16,
        "++" | "--" => 3,
        _ => return None,
    })
}

const BINARY: &[&str] = &[
    ">>", "<<", "&", "|", "&&", "||", "-", "+", "*", "^", "/", "%", "<", ">", "<=", ">=", "==",
    "!=",
];

/// How deep the parser recurses (nested parentheses, chained operators) before it
/// gives up: kernel formats stay far below; a hostile format would overflow the stack.
const MAX_DEPTH: usize = 400;

/// The parser: the token stream and the event's fields.
pub(crate) struct Parser<'t, 'f> {
    lex: Lexer<'t>,
    fields: &'f [Field],
    depth: usize,
}

impl<'t, 'f> Parser<'t, 'f> {
    pub(crate) fn new(text: &'t [u8], fields: &'f [Field]) -> Self {
        Parser {
            lex: Lexer::new(text),
            fields,
            depth: 0,
        }
    }

    fn token(&mut self) -> Res<Token> {
        Ok(self.lex.token()?)
    }

    fn token_item(&mut self) -> Res<Token> {
        Ok(self.lex.token_item()?)
    }

    /// A non-common field by name (`tep_find_field`).
    fn find_field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| !f.common && f.name == name)
    }

    /// `print fmt: "…", args…` (`event_read_print`): the format string (escapes as
    /// written) and the arguments.
    pub(crate) fn print_fmt(&mut self) -> Res<(String, Vec<Arg>)> {
        expect(&self.token_item()?, Kind::Item, "print")?;
        expect(&self.token()?, Kind::Item, "fmt")?;
        expect(&self.token()?, Kind::Op, ":")?;
        let t = self.token()?;
        if t.kind != Kind::DQuote {
            return Err(syntax("the format string", &t));
        }
        let mut format = t.text;
        loop {
            let t = self.token_item()?;
            match t.kind {
                Kind::None => return Ok((format, vec![])),
                Kind::DQuote => format.push_str(&t.text),
                _ => {
                    expect(&t, Kind::Delim, ",")?;
                    break;
                }
            }
        }
        Ok((format, self.print_args()?))
    }

    /// `event_read_print_args`.
    fn print_args(&mut self) -> Res<Vec<Arg>> {
        let mut args = vec![];
        let mut kind = None;
        loop {
            if kind == Some(Kind::Newline) {
                kind = Some(self.token_item()?.kind);
            } else {
                let mut arg = Arg::Null;
                let mut tok = self.process_arg(&mut arg)?;
                if tok.kind == Kind::Op {
                    tok = self.process_op(&mut arg, tok)?;
                    args.push(arg);
                    kind = Some(tok.kind);
                } else {
                    args.push(arg);
                    if tok.is(Kind::Delim, ",") {
                        kind = Some(tok.kind);
                    } else {
                        break;
                    }
                }
            }
            if kind == Some(Kind::None) {
                break;
            }
        }
        Ok(args)
    }

    /// `process_arg`: reads a token and the argument it starts.
    fn process_arg(&mut self, arg: &mut Arg) -> Res<Token> {
        let t = self.token()?;
        self.process_arg_token(arg, t)
    }

    /// Runs `f` one level deeper, failing past [`MAX_DEPTH`].
    fn deeper<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        if self.depth >= MAX_DEPTH {
            return Err(PrintFmtError::TooDeep);
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// `process_arg_token`: the argument that `t` starts; returns the token after it.
    fn process_arg_token(&mut self, arg: &mut Arg, t: Token) -> Res<Token> {
        self.deeper(|p| p.arg_token(arg, t))
    }

    fn arg_token(&mut self, arg: &mut Arg, t: Token) -> Res<Token> {
        match t.kind {
            Kind::Item => {
                if t.text == "REC" {
                    return self.process_entry(arg);
                }
                let mut atom = t.text;
                let mut next = self.token_item()?;
                if next.is(Kind::Delim, "(") {
                    return self.process_function(arg, &atom);
                }
                // Atoms can be several words (`unsigned long`).
                while next.kind == Kind::Item {
                    atom.push(' ');
                    atom.push_str(&next.text);
                    next = self.token_item()?;
                }
                *arg = Arg::Atom(atom);
                Ok(next)
            }
            Kind::DQuote | Kind::SQuote => {
                *arg = Arg::Atom(t.text);
                self.token_item()
            }
            Kind::Delim if t.text == "(" => self.process_paren(arg),
            Kind::Delim | Kind::Op => {
                *arg = Arg::Op(Op {
                    op: t.text.clone(),
                    left: None,
                    right: None,
                    prio: 0,
                });
                self.process_op(arg, t)
            }
            _ => Err(syntax("an argument", &t)),
        }
    }

    /// `process_entry`: `REC->field`.
    fn process_entry(&mut self, arg: &mut Arg) -> Res<Token> {
        expect(&self.token()?, Kind::Op, "->")?;
        let name = self.token()?;
        if name.kind != Kind::Item {
            return Err(syntax("a field name", &name));
        }
        *arg = Arg::Field(name.text);
        self.token()
    }

    /// `process_op`: `tok` is an operator following `arg` (or, for a unary operator,
    /// `arg` is that operator with no left side yet).
    fn process_op(&mut self, arg: &mut Arg, tok: Token) -> Res<Token> {
        self.deeper(|p| p.op(arg, tok))
    }

    fn op(&mut self, arg: &mut Arg, tok: Token) -> Res<Token> {
        let op = tok.text;
        // The node whose subtree a following lower-priority operator extends (C's
        // `right`); a path from `arg`: the right child, or the left child after a rotation.
        let mut follow: Option<Side> = None;
        let next = if matches!(arg, Arg::Op(o) if o.left.is_none()) {
            if !matches!(op.as_str(), "~" | "!" | "+" | "-") {
                return Err(PrintFmtError::UnknownOp(op));
            }
            let mut right = Arg::Null;
            let next = self.process_arg(&mut right)?;
            if let Arg::Op(o) = arg {
                o.left = Some(Box::new(Arg::Null));
                o.right = Some(Box::new(right));
            }
            follow = Some(Side::Right);
            next
        } else if op == "?" {
            let left = std::mem::replace(arg, Arg::Null);
            *arg = Arg::Op(Op {
                op,
                left: Some(Box::new(left)),
                right: None,
                prio: 0,
            });
            self.process_cond(arg)?
        } else if BINARY.contains(&op.as_str()) {
            let left = std::mem::replace(arg, Arg::Null);
            let prio = if left == Arg::Null {
                0
            } else {
                op_prio(&op).ok_or_else(|| PrintFmtError::UnknownOp(op.clone()))?
            };
            let next = self.token_item()?;
            // `(type *)`: a pointer type, not a product.
            if op == "*" && next.is(Kind::Delim, ")") {
                let Arg::Atom(mut ty) = left else {
                    return Err(syntax("a type before `*)`", &next));
                };
                ty.push_str(" *");
                *arg = Arg::Atom(ty);
                return Ok(next);
            }
            let mut right = Arg::Null;
            let after = self.process_arg_token(&mut right, next)?;
            match right {
                // libtraceevent rotates by priority alone, parentheses notwithstanding.
                Arg::Op(mut r) if op_prio(&op).unwrap_or(-1) < op_prio(&r.op).unwrap_or(-1) => {
                    let inner = r.left.take();
                    let old = Op {
                        op,
                        left: Some(Box::new(left)),
                        right: inner,
                        prio,
                    };
                    r.left = Some(Box::new(Arg::Op(old)));
                    *arg = Arg::Op(r);
                    follow = Some(Side::Left);
                }
                right => {
                    *arg = Arg::Op(Op {
                        op,
                        left: Some(Box::new(left)),
                        right: Some(Box::new(right)),
                        prio,
                    });
                    follow = Some(Side::Right);
                }
            }
            after
        } else if op == "[" {
            let left = std::mem::replace(arg, Arg::Null);
            *arg = Arg::Op(Op {
                op,
                left: Some(Box::new(left)),
                right: None,
                prio: 0,
            });
            self.process_array(arg)?
        } else {
            return Err(PrintFmtError::UnknownOp(op));
        };

        if next.kind == Kind::Op && next.text != ":" {
            let prio = op_prio(&next.text).unwrap_or(-1);
            let Arg::Op(o) = arg else {
                return Ok(next);
            };
            if prio > o.prio {
                return self.process_op(arg, next);
            }
            // C continues with its `right` variable, unset after `?` and `[` (a crash).
            let target = match follow {
                Some(Side::Right) => o.right.as_deref_mut(),
                Some(Side::Left) => o.left.as_deref_mut(),
                None => None,
            };
            let Some(target) = target else {
                return Err(syntax("an operator perf can place", &next));
            };
            return self.process_op(target, next);
        }
        Ok(next)
    }

    /// `process_cond`: the `b : c` of `a ? b : c`, stored on `top`'s right.
    fn process_cond(&mut self, top: &mut Arg) -> Res<Token> {
        let mut left = Arg::Null;
        let mut tok = self.process_arg(&mut left)?;
        while tok.kind == Kind::Op && tok.text != ":" {
            tok = self.process_op(&mut left, tok)?;
        }
        expect(&tok, Kind::Op, ":")?;
        let mut right = Arg::Null;
        let next = self.process_arg(&mut right)?;
        if let Arg::Op(o) = top {
            o.right = Some(Box::new(Arg::Op(Op {
                op: ":".into(),
                left: Some(Box::new(left)),
                right: Some(Box::new(right)),
                prio: 0,
            })));
        }
        Ok(next)
    }

    /// `process_array`: the index of `x[i]` (one argument, no operators), stored on
    /// `top`'s right.
    fn process_array(&mut self, top: &mut Arg) -> Res<Token> {
        let mut index = Arg::Null;
        let tok = self.process_arg(&mut index)?;
        expect(&tok, Kind::Op, "]")?;
        if let Arg::Op(o) = top {
            o.right = Some(Box::new(index));
        }
        self.token_item()
    }

    /// `process_paren`: `( … )`, a cast when a name or `(` follows.
    fn process_paren(&mut self, arg: &mut Arg) -> Res<Token> {
        let mut tok = self.process_arg(arg)?;
        if tok.kind == Kind::Op {
            tok = self.process_op(arg, tok)?;
        }
        expect(&tok, Kind::Delim, ")")?;
        let next = self.token_item()?;
        if next.kind.is_item() || next.is(Kind::Delim, "(") {
            let Arg::Atom(ty) = std::mem::replace(arg, Arg::Null) else {
                return Err(syntax("a type in a cast", &next));
            };
            let mut item = Arg::Null;
            let after = self.process_arg_token(&mut item, next)?;
            *arg = Arg::Cast {
                ty,
                item: Box::new(item),
            };
            return Ok(after);
        }
        Ok(next)
    }

    /// `process_field_arg`: an argument and the operators after it.
    fn field_arg(&mut self) -> Res<(Arg, Token)> {
        let mut arg = Arg::Null;
        let mut tok = self.process_arg(&mut arg)?;
        while tok.kind == Kind::Op {
            tok = self.process_op(&mut arg, tok)?;
        }
        Ok((arg, tok))
    }

    /// `process_function`: `name(` has been read.
    fn process_function(&mut self, arg: &mut Arg, name: &str) -> Res<Token> {
        match name {
            "__print_flags" => self.process_flags(arg),
            "__print_symbolic" => self.process_symbols(arg),
            "__print_hex" | "__print_hex_str" => {
                let data = self.delimited(",")?;
                let len = self.delimited(")")?;
                *arg = Arg::Hex {
                    data: Box::new(data),
                    len: Box::new(len),
                    spaced: name == "__print_hex",
                };
                self.token_item()
            }
            "__print_array" => {
                let data = self.delimited(",")?;
                let count = self.delimited(",")?;
                let el_size = self.delimited(")")?;
                *arg = Arg::IntArray {
                    data: Box::new(data),
                    count: Box::new(count),
                    el_size: Box::new(el_size),
                };
                self.token_item()
            }
            "__get_str" | "__get_rel_str" | "__get_bitmask" | "__get_rel_bitmask" => {
                let t = self.token()?;
                if t.kind != Kind::Item {
                    return Err(syntax("a field name", &t));
                }
                expect(&self.token()?, Kind::Delim, ")")?;
                *arg = if name.contains("str") {
                    Arg::Str(t.text)
                } else {
                    Arg::Bitmask(t.text)
                };
                self.token()
            }
            "__get_dynamic_array" | "__get_rel_dynamic_array" => self.process_dynamic_array(arg),
            "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => {
                let t = self.token()?;
                if t.kind != Kind::Item {
                    return Err(syntax("a field name", &t));
                }
                let f = self
                    .find_field(&t.text)
                    .ok_or(PrintFmtError::NoSuchField(t.text))?;
                *arg = Arg::DynArrayLen(f);
                expect(&self.token()?, Kind::Delim, ")")?;
                self.token()
            }
            "__builtin_expect" => {
                let tok = self.process_arg(arg)?;
                if !(tok.kind == Kind::Delim && tok.text.starts_with(',')) {
                    return Err(syntax("`,`", &tok));
                }
                let t = self.token()?;
                if t.kind != Kind::Item {
                    return Err(syntax("a constant", &t));
                }
                expect(&self.token()?, Kind::Delim, ")")?;
                self.token_item()
            }
            // perf registers no print functions and loads no plugins (see the module doc).
            _ => Err(PrintFmtError::UnknownHelper(name.to_string())),
        }
    }

    /// `alloc_and_process_delim`: one argument (no operators) and the delimiter after it.
    fn delimited(&mut self, delim: &str) -> Res<Arg> {
        let mut arg = Arg::Null;
        let tok = self.process_arg(&mut arg)?;
        expect(&tok, Kind::Delim, delim)?;
        Ok(arg)
    }

    fn process_flags(&mut self, arg: &mut Arg) -> Res<Token> {
        let (value, tok) = self.field_arg()?;
        expect(&tok, Kind::Delim, ",")?;
        let mut t = self.token_item()?;
        let mut delim = None;
        if t.kind.is_item() {
            delim = Some(t.text);
            t = self.token_item()?;
        }
        expect(&t, Kind::Delim, ",")?;
        let (flags, tok) = self.process_fields()?;
        expect(&tok, Kind::Delim, ")")?;
        *arg = Arg::Flags {
            value: Box::new(value),
            delim,
            flags,
        };
        self.token_item()
    }

    fn process_symbols(&mut self, arg: &mut Arg) -> Res<Token> {
        let (value, tok) = self.field_arg()?;
        expect(&tok, Kind::Delim, ",")?;
        let (symbols, tok) = self.process_fields()?;
        expect(&tok, Kind::Delim, ")")?;
        *arg = Arg::Symbol {
            value: Box::new(value),
            symbols,
        };
        self.token_item()
    }

    /// `process_fields`: `{ value, "name" }, …`, each side evaluated now (`arg_eval`).
    fn process_fields(&mut self) -> Res<(Vec<FlagSym>, Token)> {
        let mut list = vec![];
        loop {
            let t = self.token_item()?;
            if !t.is(Kind::Op, "{") {
                return Ok((list, t));
            }
            let mut value = Arg::Null;
            let mut tok = self.process_arg(&mut value)?;
            if tok.kind == Kind::Op {
                tok = self.process_op(&mut value, tok)?;
            }
            expect(&tok, Kind::Delim, ",")?;
            let value = arg_eval(&value)?;
            let mut name = Arg::Null;
            let tok = self.process_arg(&mut name)?;
            expect(&tok, Kind::Op, "}")?;
            let name = arg_eval(&name)?;
            list.push(FlagSym { value, name });
            let t = self.token_item()?;
            if !t.is(Kind::Delim, ",") {
                return Ok((list, t));
            }
        }
    }

    /// `process_dynamic_array`, with libtraceevent's inverted test: an index in
    /// brackets (`__get_dynamic_array(x)[i]`) fails.
    fn process_dynamic_array(&mut self, arg: &mut Arg) -> Res<Token> {
        let t = self.token()?;
        if t.kind != Kind::Item {
            return Err(syntax("a field name", &t));
        }
        let f = self
            .find_field(&t.text)
            .ok_or(PrintFmtError::NoSuchField(t.text))?;
        *arg = Arg::DynArray(f);
        expect(&self.token()?, Kind::Delim, ")")?;
        let t = self.token_item()?;
        if !t.is(Kind::Op, "[") {
            return Ok(t);
        }
        let mut index = Arg::Null;
        let tok = self.process_arg(&mut index)?;
        if tok.is(Kind::Op, "]") {
            return Err(syntax("no index after __get_dynamic_array()", &tok));
        }
        self.token_item()
    }
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Left,
    Right,
}

/// `arg_eval`: a `__print_flags`/`__print_symbolic` entry as text: an atom as written,
/// an operation as its signed value (`arg_num_eval`), a cast as its item.
fn arg_eval(arg: &Arg) -> Res<String> {
    match arg {
        Arg::Atom(a) => Ok(a.clone()),
        Arg::Cast { item, .. } => arg_eval(item),
        Arg::Op(_) => Ok(arg_num_eval(arg)?.to_string()),
        other => Err(PrintFmtError::Syntax {
            expected: "a constant".into(),
            found: format!("{other:?}"),
        }),
    }
}

/// `arg_num_eval`: constant arithmetic on signed 64-bit values (C's `long long`).
fn arg_num_eval(arg: &Arg) -> Res<i64> {
    let bad = |op: &str| PrintFmtError::UnknownOp(op.to_string());
    match arg {
        Arg::Atom(a) => Ok(super::num::strtoll(a)),
        Arg::Cast { ty, item } => {
            let v = arg_num_eval(item)?;
            Ok(super::eval::cast(v as u64, ty, false) as i64)
        }
        Arg::Op(o) => {
            let op = o.op.as_str();
            let side = |s: &Option<Box<Arg>>| match s.as_deref() {
                Some(a) => arg_num_eval(a),
                None => Err(bad(op)),
            };
            // A unary `-`/`+` reads its empty left side as 0; other operators evaluate
            // both sides (an empty one is an error).
            let left = |s: &Option<Box<Arg>>| match s.as_deref() {
                Some(Arg::Null) if matches!(op, "-" | "+") => Ok(0),
                _ => side(s),
            };
            Ok(match op {
                "~" => !side(&o.right)?,
                _ => {
                    let l = left(&o.left)?;
                    let r = side(&o.right)?;
                    match op {
                        "|" => l | r,
                        "||" => i64::from(l != 0 || r != 0),
                        "&" => l & r,
                        "&&" => i64::from(l != 0 && r != 0),
                        "<" => i64::from(l < r),
                        "<<" => l.wrapping_shl(r as u32),
                        "<=" => i64::from(l <= r),
                        ">" => i64::from(l > r),
                        ">>" => l.wrapping_shr(r as u32),
                        ">=" => i64::from(l >= r),
                        "==" => i64::from(l == r),
                        "!=" => i64::from(l != r),
                        "-" => l.wrapping_sub(r),
                        "+" => l.wrapping_add(r),
                        _ => return Err(bad(op)),
                    }
                }
            })
        }
        other => Err(PrintFmtError::Syntax {
            expected: "a constant".into(),
            found: format!("{other:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Res<(String, Vec<Arg>)> {
        Parser::new(text.as_bytes(), &[]).print_fmt()
    }

    fn atom(a: &str) -> Box<Arg> {
        Box::new(Arg::Atom(a.into()))
    }

    fn field(a: &str) -> Box<Arg> {
        Box::new(Arg::Field(a.into()))
    }

    fn op(o: &str, l: Box<Arg>, r: Box<Arg>, prio: i32) -> Box<Arg> {
        Box::new(Arg::Op(Op {
            op: o.into(),
            left: Some(l),
            right: Some(r),
            prio,
        }))
    }

    #[test]
    fn precedence_and_libtraceevent_rotation() {
        let (_, a) =
            args("print fmt: \"%d %d\", REC->a + REC->b * 2, REC->c & (REC->d | 1)\n").unwrap();
        assert_eq!(
            a[0],
            *op("+", field("a"), op("*", field("b"), atom("2"), 6), 7)
        );
        // The parenthesised `|` rotates above `&`, as libtraceevent does.
        assert_eq!(
            a[1],
            *op("|", op("&", field("c"), field("d"), 11), atom("1"), 13)
        );
    }

    #[test]
    fn casts_pointers_ternaries() {
        let (f, a) =
            args("print fmt: \"x=%s %p\", REC->v ? \"yes\" : \"no\", (void *)REC->p\n").unwrap();
        assert_eq!(f, "x=%s %p");
        let Arg::Op(t) = &a[0] else { panic!() };
        assert_eq!(t.op, "?");
        assert_eq!(
            a[1],
            Arg::Cast {
                ty: "void *".into(),
                item: field("p")
            }
        );
    }

    #[test]
    fn flags_are_evaluated_when_parsed() {
        let (_, a) = args(
            "print fmt: \"%s\", __print_flags(REC->f, \"|\", { 0x01, \"A\" }, { (1UL << 3), \"B\" }, { -1, \"C\" })\n",
        )
        .unwrap();
        let Arg::Flags { delim, flags, .. } = &a[0] else {
            panic!()
        };
        assert_eq!(delim.as_deref(), Some("|"));
        let v: Vec<(&str, &str)> = flags
            .iter()
            .map(|f| (f.value.as_str(), f.name.as_str()))
            .collect();
        assert_eq!(v, [("0x01", "A"), ("8", "B"), ("-1", "C")]);
    }

    #[test]
    fn deep_nesting_fails_instead_of_overflowing() {
        let deep = format!(
            "print fmt: \"%d\", {}1{}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        );
        assert_eq!(args(&deep).unwrap_err(), PrintFmtError::TooDeep);
        let long = format!("print fmt: \"%d\", 1{}\n", " + 1".repeat(5000));
        assert_eq!(args(&long).unwrap_err(), PrintFmtError::TooDeep);
    }

    #[test]
    fn unknown_helpers_fail() {
        assert_eq!(
            args("print fmt: \"%d\", sizeof(int)\n").unwrap_err(),
            PrintFmtError::UnknownHelper("sizeof".into())
        );
        assert!(args("print fmt: \"%d\", __get_dynamic_array_len(nope)\n").is_err());
        assert!(args("print fmt: \"%d\", REC->a ^^ 1\n").is_err());
    }
}
