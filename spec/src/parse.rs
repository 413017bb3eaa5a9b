//! The `.pds` parser (nom 7), from text to [`crate::ast`].
//!
//! Parsers work on `&str` slices of one source text; a span is computed from how much of the
//! text is left. Whitespace and comments are skipped before every token, so an error is
//! always reported at the start of a real token. Once a construct is recognised by its first
//! token (a keyword, a field name followed by `:`…) the rest is parsed under `cut`, so the
//! error names what was expected at the point of failure instead of backtracking.
//!
//! Keywords are contextual: which words a name cannot be depends on what it names
//! ([`RESERVED`], [`EXPRESSION_WORDS`]), and a word that could be a keyword or a name is
//! told apart by what follows it (`if: u32` is a field), as `spec/SYNTAX.md` lists.

use std::cell::Cell;

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::combinator::{opt, recognize};
use nom::error::{ErrorKind, ParseError};
use nom::sequence::pair;
use nom::{Err, IResult};

use crate::ast::*;
use crate::diag::Report;
use crate::ir::BinOp;

/// Words of the language. They are keywords only where the grammar needs them (see
/// `spec/SYNTAX.md`, "Reserved words"): all of them in the names of items, switch enums
/// and switch variants, which are type names (a type position reads `bytes`, `switch`…
/// as the keyword, and codegen emits these names as Rust types unescaped); only
/// [`EXPRESSION_WORDS`] in the names that expressions refer to; none elsewhere.
pub const RESERVED: &[&str] = &[
    "struct",
    "record",
    "feature",
    "enum",
    "flags",
    "bitfield",
    "context",
    "const",
    "switch",
    "if",
    "within",
    "big_endian_if",
    "bounded_by",
    "pad_to",
    "trailer",
    "payload",
    "as",
    "true",
    "false",
    "remaining",
    "ctx",
    "self",
    "bytes",
    "str",
    "cstr",
    "word",
    "split",
    "has",
];

/// Words that are a value by themselves in an expression (`remaining`, `ctx.NAME`…): a
/// field, payload or parameter so named could not be referred to, so these are reserved
/// in those names.
pub const EXPRESSION_WORDS: &[&str] = &["true", "false", "remaining", "self", "ctx"];

const ITEM_KEYWORDS: &[&str] = &[
    "struct", "record", "feature", "enum", "flags", "bitfield", "context", "const",
];

/// Deepest nesting of expressions / types; protects the stack against hostile input.
const MAX_DEPTH: u32 = 64;

/// Parses one source file. A syntax error stops the parse of that file.
pub(crate) fn parse_file(file: usize, text: &str) -> Result<File, Report> {
    let parser = Parser {
        src: text,
        file,
        depth: Cell::new(0),
    };
    parser.file(text).map(|items| File { index: file, items })
}

/// A parse failure at `at` (the unparsed rest of the input).
#[derive(Debug)]
pub(crate) struct PError<'a> {
    at: &'a str,
    /// What would have been accepted at `at`, e.g. "`}`" or "a type".
    expected: Vec<String>,
    /// A specific error replacing the "expected …" message (e.g. a literal too large).
    custom: Option<Box<Report>>,
}

impl<'a> PError<'a> {
    fn expected(at: &'a str, what: impl Into<String>) -> PError<'a> {
        PError {
            at,
            expected: vec![what.into()],
            custom: None,
        }
    }
}

impl<'a> ParseError<&'a str> for PError<'a> {
    fn from_error_kind(input: &'a str, _kind: ErrorKind) -> Self {
        PError {
            at: input,
            expected: Vec::new(),
            custom: None,
        }
    }
    fn append(_input: &'a str, _kind: ErrorKind, other: Self) -> Self {
        other
    }
    /// Of two alternatives, the one that got further explains the failure best; at the
    /// same position, both expectations are listed.
    fn or(mut self, other: Self) -> Self {
        match self.at.len().cmp(&other.at.len()) {
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Equal => {
                for e in other.expected {
                    if !self.expected.contains(&e) {
                        self.expected.push(e);
                    }
                }
                self
            }
        }
    }
}

type PResult<'a, T> = IResult<&'a str, T, PError<'a>>;

fn fail<'a, T>(at: &'a str, what: impl Into<String>) -> PResult<'a, T> {
    Err(Err::Error(PError::expected(at, what)))
}

/// Skips whitespace and `//` comments (doc comments are read back from the text later).
/// Whitespace and `//` comments: `many0(alt((multispace1, preceded(tag("//"),
/// not_line_ending))))` written out, as every token starts with it (the combinators cost
/// most of a parse). A comment ends before `\n` or `\r\n`; one that meets a lone `\r`
/// is not a comment (nom's `not_line_ending` fails there), so the skip stops before it.
fn sp(i: &str) -> PResult<'_, ()> {
    // Most calls find a token at once (the parser tries alternatives at one place).
    if !matches!(
        i.as_bytes().first(),
        Some(b' ' | b'\t' | b'\r' | b'\n' | b'/')
    ) {
        return Ok((i, ()));
    }
    let mut rest = i;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        if trimmed.len() != rest.len() {
            rest = trimmed;
            continue;
        }
        let Some(text) = rest.strip_prefix("//") else {
            break;
        };
        match text.find(['\n', '\r']) {
            None => rest = &text[text.len()..],
            Some(end) if text[end..].starts_with('\n') || text[end..].starts_with("\r\n") => {
                rest = &text[end..]
            }
            Some(_) => break,
        }
    }
    Ok((rest, ()))
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Any identifier-shaped word, reserved or not.
fn word(i: &str) -> PResult<'_, &str> {
    let (i, _) = sp(i)?;
    let ident: PResult<'_, &str> =
        recognize(pair(take_while1(is_ident_start), take_while(is_ident_char)))(i);
    match ident {
        Ok(ok) => Ok(ok),
        Err(_) => fail(i, "an identifier"),
    }
}

/// The word at the start of `i` (after whitespace), without consuming it.
fn peek_word(i: &str) -> Option<&str> {
    word(i).ok().map(|(_, w)| w)
}

/// Describes the token at `at` for "found …" and returns its length in bytes.
fn describe_found(at: &str) -> (String, usize) {
    let Some(c) = at.chars().next() else {
        return ("end of file".to_string(), 0);
    };
    if is_ident_char(c) {
        let len = at.find(|c: char| !is_ident_char(c)).unwrap_or(at.len());
        let w = &at[..len];
        if RESERVED.contains(&w) {
            return (format!("keyword `{w}`"), len);
        }
        return (format!("`{w}`"), len);
    }
    for op in ["==", "!=", "<=", ">=", "&&", "||", "=>", ".."] {
        if at.starts_with(op) {
            return (format!("`{op}`"), 2);
        }
    }
    (format!("`{c}`"), c.len_utf8())
}

fn list_expected(expected: &[String]) -> String {
    match expected {
        [] => "something else".to_string(),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        many => format!("one of {}", many.join(", ")),
    }
}

struct Parser<'a> {
    src: &'a str,
    file: usize,
    depth: Cell<u32>,
}

impl<'a> Parser<'a> {
    fn offset(&self, rest: &str) -> usize {
        self.src.len() - rest.len()
    }

    /// The span of `piece`, a sub-slice of the source.
    fn span_of(&self, piece: &str) -> Span {
        let lo = (piece.as_ptr() as usize).saturating_sub(self.src.as_ptr() as usize);
        Span {
            file: self.file,
            lo,
            hi: lo + piece.len(),
        }
    }

    /// The span from `start` (a rest of the input) up to `end` (a later rest).
    fn span_between(&self, start: &str, end: &str) -> Span {
        Span {
            file: self.file,
            lo: self.offset(start),
            hi: self.offset(end),
        }
    }

    fn report(&self, e: PError<'a>) -> Report {
        if let Some(report) = e.custom {
            return *report;
        }
        let (found, len) = describe_found(e.at);
        let lo = self.offset(e.at);
        let span = Span {
            file: self.file,
            lo,
            hi: lo + len,
        };
        let expected = list_expected(&e.expected);
        Report::new(
            span,
            format!("expected {expected}, found {found}"),
            format!("expected {expected}"),
        )
    }

    /// A failure with its own message at the token starting `at`.
    fn custom<T>(
        &self,
        at: &'a str,
        span: Span,
        message: String,
        label: &str,
        help: Option<String>,
    ) -> PResult<'a, T> {
        let mut report = Report::new(span, message, label);
        report.help = help;
        Err(Err::Failure(PError {
            at,
            expected: Vec::new(),
            custom: Some(Box::new(report)),
        }))
    }

    /// Reads the `///` lines directly above the line of `offset`, when the token at
    /// `offset` is the first of its line.
    fn doc_before(&self, offset: usize) -> String {
        let src = self.src;
        let line_start = src[..offset].rfind('\n').map_or(0, |p| p + 1);
        if !src[line_start..offset].trim().is_empty() {
            return String::new();
        }
        let mut lines = Vec::new();
        let mut end = line_start;
        while end > 0 {
            let prev_end = end - 1;
            let prev_start = src[..prev_end].rfind('\n').map_or(0, |p| p + 1);
            let line = src[prev_start..prev_end].trim();
            match line.strip_prefix("///") {
                Some(rest) if !rest.starts_with('/') => {
                    lines.push(rest.strip_prefix(' ').unwrap_or(rest));
                    end = prev_start;
                }
                _ => break,
            }
        }
        lines.reverse();
        lines.join("\n")
    }

    fn doc_at(&self, rest: &str) -> String {
        match sp(rest) {
            Ok((r, ())) => self.doc_before(self.offset(r)),
            Err(_) => String::new(),
        }
    }

    // ---------------------------------------------------------------- tokens

    /// Punctuation `p`, not the start of a longer operator.
    fn sym(&self, p: &'static str) -> impl Fn(&'a str) -> PResult<'a, Span> + '_ {
        move |i| {
            let (i, _) = sp(i)?;
            let Ok((rest, matched)) = tag::<_, _, PError<'a>>(p)(i) else {
                return fail(i, format!("`{p}`"));
            };
            let next = rest.chars().next();
            let longer = match p {
                "=" => matches!(next, Some('=' | '>')),
                "|" => next == Some('|'),
                "&" => next == Some('&'),
                "<" | ">" | "!" => next == Some('='),
                "." => next == Some('.'),
                _ => false,
            };
            if longer {
                return fail(i, format!("`{p}`"));
            }
            Ok((rest, self.span_of(matched)))
        }
    }

    /// The keyword `kw`.
    fn kw(&self, kw: &'static str) -> impl Fn(&'a str) -> PResult<'a, Span> + '_ {
        move |i| {
            let (i, _) = sp(i)?;
            match word(i) {
                Ok((rest, w)) if w == kw => Ok((rest, self.span_of(w))),
                _ => fail(i, format!("`{kw}`")),
            }
        }
    }

    /// The name of an item, a switch enum or a switch variant: a type name, where every
    /// word of the language is reserved. `what` describes it for errors ("an item name").
    fn name(&self, what: &'static str) -> impl Fn(&'a str) -> PResult<'a, Ident> + '_ {
        move |i| {
            let (i, _) = sp(i)?;
            let (rest, w) = match word(i) {
                Ok(ok) => ok,
                Err(_) => return fail(i, what),
            };
            if RESERVED.contains(&w) {
                return self.custom(
                    i,
                    self.span_of(w),
                    format!("expected {what}, found keyword `{w}`"),
                    "reserved word",
                    Some(format!(
                        "`{w}` is a word of the spec language, reserved in the names of items, \
                         switch enums and switch variants; choose another name (e.g. `{w}_`)"
                    )),
                );
            }
            Ok((rest, self.ident(w)))
        }
    }

    /// The name of a field, payload or parameter: any word but the [`EXPRESSION_WORDS`],
    /// which an expression would read as themselves.
    fn value_name(&self, what: &'static str) -> impl Fn(&'a str) -> PResult<'a, Ident> + '_ {
        move |i| {
            let (i, _) = sp(i)?;
            let (rest, w) = match word(i) {
                Ok(ok) => ok,
                Err(_) => return fail(i, what),
            };
            if EXPRESSION_WORDS.contains(&w) {
                let meaning = match w {
                    "true" | "false" => "a boolean",
                    "remaining" => "the bytes left in the enclosing body",
                    "self" => "the structure itself (`sizeof(self)`)",
                    _ => "the context (`ctx.NAME`)",
                };
                return self.custom(
                    i,
                    self.span_of(w),
                    format!("expected {what}, found keyword `{w}`"),
                    "reserved in expressions",
                    Some(format!(
                        "in an expression `{w}` is {meaning}, so no field, payload or \
                         parameter can be named `{w}`; choose another name (e.g. `{w}_`)"
                    )),
                );
            }
            Ok((rest, self.ident(w)))
        }
    }

    /// A name no expression or type reads as a keyword (an enum variant, a flag, a bit-field
    /// member, a context value, a display attribute…): any word.
    fn any_name(&self, what: &'static str) -> impl Fn(&'a str) -> PResult<'a, Ident> + '_ {
        move |i| {
            let (i, _) = sp(i)?;
            match word(i) {
                Ok((rest, w)) => Ok((rest, self.ident(w))),
                Err(_) => fail(i, what),
            }
        }
    }

    fn ident(&self, w: &'a str) -> Ident {
        Ident {
            name: w.to_string(),
            span: self.span_of(w),
        }
    }

    /// The keyword `kw` that introduces a clause after a field or an operand (`if`,
    /// `within`, `big_endian_if`, `has`, `from`) or a payload: not when a `:` follows, as
    /// then it is the name of the next field (`if: u32`).
    fn clause_kw(&self, kw: &'static str) -> impl Fn(&'a str) -> PResult<'a, Span> + '_ {
        move |i| {
            let (rest, span) = self.kw(kw)(i)?;
            if self.sym(":")(rest).is_ok() {
                return fail(sp_or(i), format!("`{kw}`"));
            }
            Ok((rest, span))
        }
    }

    /// An integer literal: `123`, `0x7b`, `-128`, with optional `_` separators.
    fn int(&self, i: &'a str) -> PResult<'a, IntLit> {
        let (i, _) = sp(i)?;
        let start = i;
        let (i, minus) = opt(tag("-"))(i)?;
        let (digits_start, hex) = match i.get(..2) {
            Some("0x" | "0X") => (&i[2..], true),
            _ => (i, false),
        };
        if !hex && !digits_start.starts_with(|c: char| c.is_ascii_digit()) {
            return fail(start, "an integer");
        }
        // Take the whole word so that `12ab` or `0xZZ` is reported as one bad literal.
        let (rest, body) = take_while(is_ident_char)(digits_start)?;
        let text = &start[..start.len() - rest.len()];
        let span = self.span_of(text);
        let digits: String = body.chars().filter(|&c| c != '_').collect();
        let radix = if hex { 16 } else { 10 };
        let bad_digit = digits.chars().any(|c| !c.is_digit(radix));
        if digits.is_empty() || bad_digit {
            let kind = if hex { "hexadecimal" } else { "decimal" };
            return self.custom(
                start,
                span,
                format!("invalid integer literal `{text}`"),
                &format!("not a {kind} integer"),
                Some("integers are decimal (`123`) or hexadecimal (`0x7b`), optionally negative (`-1`)".into()),
            );
        }
        let Ok(magnitude) = u64::from_str_radix(&digits, radix) else {
            return self.custom(
                start,
                span,
                format!("integer literal `{text}` does not fit in 64 bits"),
                "too large",
                None,
            );
        };
        Ok((
            rest,
            IntLit {
                negative: minus.is_some(),
                magnitude,
                span,
            },
        ))
    }

    fn enter(&self, at: &'a str) -> PResult<'a, ()> {
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            let (found, len) = describe_found(at);
            let lo = self.offset(at);
            let span = Span {
                file: self.file,
                lo,
                hi: lo + len,
            };
            let _ = found;
            return self.custom(
                at,
                span,
                format!("nesting is deeper than {MAX_DEPTH} levels"),
                "too deep",
                None,
            );
        }
        self.depth.set(depth);
        Ok((at, ()))
    }

    fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }

    // ---------------------------------------------------------------- items

    fn file(&self, mut i: &'a str) -> Result<Vec<Item>, Report> {
        let mut items = Vec::new();
        loop {
            let rest = match sp(i) {
                Ok((rest, ())) => rest,
                Err(_) => i,
            };
            if rest.is_empty() {
                return Ok(items);
            }
            match self.item(rest) {
                Ok((rest, item)) => {
                    items.push(item);
                    i = rest;
                }
                Err(Err::Error(e) | Err::Failure(e)) => return Err(self.report(e)),
                Err(Err::Incomplete(_)) => {
                    return Err(self.report(PError::expected(rest, "more input")));
                }
            }
        }
    }

    fn item(&self, i: &'a str) -> PResult<'a, Item> {
        let doc = self.doc_at(i);
        let what = "an item (`struct`, `record`, `feature`, `enum`, `flags`, `bitfield`, \
                    `const` or `context`)";
        let (rest, w) = match word(i) {
            Ok(ok) => ok,
            Err(Err::Error(e)) => return fail(e.at, what),
            Err(e) => return Err(e),
        };
        let keyword_span = self.span_of(w);
        let result = match w {
            "const" => self.const_item(rest, doc).map(|(r, x)| (r, Item::Const(x))),
            "enum" => self.enum_item(rest, doc).map(|(r, x)| (r, Item::Enum(x))),
            "flags" => self.flags_item(rest, doc).map(|(r, x)| (r, Item::Flags(x))),
            "bitfield" => self
                .bitfield_item(rest, doc)
                .map(|(r, x)| (r, Item::Bitfield(x))),
            "context" => self
                .context_item(rest, doc, keyword_span)
                .map(|(r, x)| (r, Item::Context(x))),
            "struct" => self
                .struct_item(rest, doc, StructKeyword::Struct, keyword_span)
                .map(|(r, x)| (r, Item::Struct(Box::new(x)))),
            "record" => self
                .struct_item(rest, doc, StructKeyword::Record, keyword_span)
                .map(|(r, x)| (r, Item::Struct(Box::new(x)))),
            "feature" => self
                .struct_item(rest, doc, StructKeyword::Feature, keyword_span)
                .map(|(r, x)| (r, Item::Struct(Box::new(x)))),
            _ => {
                let (at, ()) = sp(i)?;
                return fail(at, what);
            }
        };
        // After the item keyword, any error is final.
        result.map_err(|e| match e {
            Err::Error(e) => Err::Failure(e),
            other => other,
        })
    }

    /// `{ elem [,] elem [,] … }`; the elements are parsed by `elem`. `name_then` is what
    /// follows the name an element starts with (`: TYPE`), `None` when elements do not
    /// start with a name.
    fn block<T>(
        &self,
        i: &'a str,
        elem_what: &'static str,
        name_then: Option<&'static str>,
        mut elem: impl FnMut(&'a str) -> PResult<'a, T>,
    ) -> PResult<'a, Vec<T>> {
        let (mut i, open) = self.sym("{")(i)?;
        let mut items = Vec::new();
        loop {
            let (rest, ()) = sp(i)?;
            if rest.is_empty() {
                let (line, col) = self.line_col(open.lo);
                return self.custom(
                    rest,
                    open,
                    "unterminated block: this `{` is never closed".to_string(),
                    "unclosed `{`",
                    Some(format!(
                        "add `}}` to close the block opened at line {line}, column {col}"
                    )),
                );
            }
            if let Ok((rest, _)) = self.sym("}")(rest) {
                return Ok((rest, items));
            }
            // A missing `}` usually shows up as the next item's keyword; but an item keyword
            // followed by `:` or `=` is a name (`flags: u32`, `struct = 1`).
            if let Some(w) = peek_word(rest) {
                let after = &rest[w.len()..];
                let used_as_name = self.sym(":")(after).is_ok() || self.sym("=")(after).is_ok();
                if ITEM_KEYWORDS.contains(&w) && !used_as_name {
                    let (line, col) = self.line_col(open.lo);
                    let span = self.span_of(&rest[..w.len()]);
                    // Neither reading works: a name that lost what follows it, or a broken
                    // item after a missing `}`. Say both.
                    if let (Some(then), false) = (name_then, self.starts_an_item(rest)) {
                        let punct = then.trim_start().split(' ').next().unwrap_or(then);
                        return self.custom(
                            rest,
                            span,
                            format!(
                                "`{w}` is neither {elem_what} (no `{punct}` follows) nor the \
                                 start of an item"
                            ),
                            "a name or an item keyword",
                            Some(format!(
                                "if `{w}` is a name, write `{w}{then}`; if it starts an item, \
                                 close the block opened at line {line}, column {col} with `}}` \
                                 before it"
                            )),
                        );
                    }
                    return self.custom(
                        rest,
                        span,
                        format!("expected `}}` before `{w}`"),
                        "expected `}`",
                        Some(format!(
                            "the block opened at line {line}, column {col} is not closed"
                        )),
                    );
                }
            }
            match elem(rest) {
                Ok((rest, item)) => {
                    items.push(item);
                    i = match self.sym(",")(rest) {
                        Ok((rest, _)) => rest,
                        Err(_) => rest,
                    };
                }
                Err(Err::Error(mut e)) => {
                    if e.at.len() == rest.len() {
                        e.expected = vec![elem_what.to_string(), "`}`".to_string()];
                    }
                    return Err(Err::Failure(e));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether an item header parses at `i` (a const, or an item up to its `{`): a lookahead
    /// that reads no block, so it cannot nest.
    fn starts_an_item(&self, i: &'a str) -> bool {
        let Ok((rest, w)) = word(i) else {
            return false;
        };
        let keyword = match w {
            "struct" => StructKeyword::Struct,
            "record" => StructKeyword::Record,
            "feature" => StructKeyword::Feature,
            "context" => return self.sym("{")(rest).is_ok(),
            "const" => return self.const_item(rest, String::new()).is_ok(),
            "enum" | "flags" | "bitfield" => {
                return self
                    .repr_header(rest, "a name")
                    .and_then(|(r, _)| self.sym("{")(r))
                    .is_ok();
            }
            _ => return false,
        };
        self.struct_header(rest, String::new(), keyword, self.span_of(w))
            .is_ok()
    }

    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.src[..offset.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    fn const_item(&self, i: &'a str, doc: String) -> PResult<'a, ConstItem> {
        let (i, name) = self.name("a constant name")(i)?;
        let (i, _) = self.sym(":")(i)?;
        let (i, ty) = self.name("a type")(i)?;
        let (i, _) = self.sym("=")(i)?;
        let (i, value) = self.int(i)?;
        Ok((
            i,
            ConstItem {
                doc,
                name,
                ty,
                value,
            },
        ))
    }

    /// `Name: REPR` of an enum, flags or bitfield item.
    fn repr_header(&self, i: &'a str, what: &'static str) -> PResult<'a, (Ident, Ident)> {
        let (i, name) = self.name(what)(i)?;
        let (i, _) = self.sym(":")(i)?;
        let (i, repr) = self.name("an integer type")(i)?;
        Ok((i, (name, repr)))
    }

    fn enum_item(&self, i: &'a str, doc: String) -> PResult<'a, EnumItem> {
        let (i, (name, repr)) = self.repr_header(i, "an enum name")?;
        let (i, variants) = self.block(i, "a variant name", Some(" = VALUE"), |i| {
            let doc = self.doc_at(i);
            let (i, name) = self.any_name("a variant name")(i)?;
            let (i, _) = self.sym("=")(i)?;
            let (i, value) = self.int(i)?;
            Ok((i, EnumVariant { doc, name, value }))
        })?;
        Ok((
            i,
            EnumItem {
                doc,
                name,
                repr,
                variants,
            },
        ))
    }

    fn flags_item(&self, i: &'a str, doc: String) -> PResult<'a, FlagsItem> {
        let (i, (name, repr)) = self.repr_header(i, "a flags name")?;
        let (i, members) = self.block(i, "a flag name", Some(" = BIT"), |i| {
            let doc = self.doc_at(i);
            let (i, name) = self.any_name("a flag name")(i)?;
            let (i, _) = self.sym("=")(i)?;
            let (i, lo) = self.int(i)?;
            let (i, hi) = match self.sym("..")(i) {
                Ok((i, _)) => {
                    let (i, hi) = self.int(i)?;
                    (i, Some(hi))
                }
                Err(_) => (i, None),
            };
            Ok((i, FlagMember { doc, name, lo, hi }))
        })?;
        Ok((
            i,
            FlagsItem {
                doc,
                name,
                repr,
                members,
            },
        ))
    }

    fn bitfield_item(&self, i: &'a str, doc: String) -> PResult<'a, BitfieldItem> {
        let (i, (name, repr)) = self.repr_header(i, "a bitfield name")?;
        let (i, members) = self.block(i, "a member name", Some(": WIDTH"), |i| {
            let doc = self.doc_at(i);
            let (i, name) = self.any_name("a member name")(i)?;
            let (i, _) = self.sym(":")(i)?;
            let (i, width) = self.int(i)?;
            Ok((i, BitfieldMember { doc, name, width }))
        })?;
        Ok((
            i,
            BitfieldItem {
                doc,
                name,
                repr,
                members,
            },
        ))
    }

    fn context_item(&self, i: &'a str, doc: String, span: Span) -> PResult<'a, ContextItem> {
        let (i, fields) = self.block(i, "a context field name", Some(": TYPE"), |i| {
            let doc = self.doc_at(i);
            let (i, name) = self.any_name("a context field name")(i)?;
            let (i, _) = self.sym(":")(i)?;
            let (i, ty) = self.name("a type")(i)?;
            // `from Struct.field.member`.
            let (i, source) = match self.clause_kw("from")(i) {
                Ok((mut i, _)) => {
                    let (rest, first) = self.name("a struct name")(i)?;
                    let mut path = vec![first];
                    i = rest;
                    loop {
                        let (rest, _) = self.sym(".")(i)?;
                        let (rest, step) = self.any_name("a field name")(rest)?;
                        path.push(step);
                        i = rest;
                        if self.sym(".")(i).is_err() {
                            break;
                        }
                    }
                    (i, Some(path))
                }
                Err(_) => (i, None),
            };
            Ok((
                i,
                ContextField {
                    doc,
                    name,
                    ty,
                    source,
                },
            ))
        })?;
        Ok((i, ContextItem { doc, span, fields }))
    }

    fn struct_item(
        &self,
        i: &'a str,
        doc: String,
        keyword: StructKeyword,
        keyword_span: Span,
    ) -> PResult<'a, StructItem> {
        let (i, header) = self.struct_header(i, doc, keyword, keyword_span)?;
        let (i, members) = self.block(i, "a field name", Some(": TYPE"), |i| self.member(i))?;
        Ok((i, StructItem { members, ..header }))
    }

    /// A struct, record or feature up to its `{` (not consumed), without members.
    fn struct_header(
        &self,
        i: &'a str,
        doc: String,
        keyword: StructKeyword,
        keyword_span: Span,
    ) -> PResult<'a, StructItem> {
        let (mut i, name) = self.name("an item name")(i)?;
        let mut params = Vec::new();
        if let Ok((rest, _)) = self.sym("(")(i) {
            i = rest;
            loop {
                if let Ok((rest, _)) = self.sym(")")(i) {
                    i = rest;
                    break;
                }
                let (rest, pname) = self
                    .value_name("a parameter name")
                    .or_else_expect(i, "`)`")?;
                let (rest, _) = self.sym(":")(rest)?;
                let (rest, ty) = self.name("a type")(rest)?;
                params.push(ParamDecl { name: pname, ty });
                i = match self.sym(",")(rest) {
                    Ok((rest, _)) => rest,
                    Err(_) => {
                        let (rest, _) = self.sym(")").or_else_expect(rest, "`,`")?;
                        i = rest;
                        break;
                    }
                };
            }
        }
        let mut id = None;
        if let Ok((rest, _)) = self.sym("=")(i) {
            let (rest, value) = self.int(rest)?;
            id = Some(value);
            i = rest;
        }
        let mut trailer = None;
        let mut bounded_by = None;
        let mut pad_to = None;
        loop {
            let (rest, ()) = sp(i)?;
            let clause = peek_word(rest).unwrap_or("");
            let clause_span = self.span_of(&rest[..clause.len()]);
            let duplicate = match clause {
                "trailer" => trailer.is_some(),
                "bounded_by" => bounded_by.is_some(),
                "pad_to" => pad_to.is_some(),
                _ => false,
            };
            if duplicate {
                return self.custom(
                    rest,
                    clause_span,
                    format!("duplicate `{clause}` clause"),
                    "given twice",
                    None,
                );
            }
            match clause {
                "trailer" => {
                    let (rest, ty) = self.name("a struct name")(&rest[clause.len()..])?;
                    let (rest, cond) = match self.kw("if")(rest) {
                        Ok((rest, _)) => {
                            let (rest, e) = self.expr(rest)?;
                            (rest, Some(e))
                        }
                        Err(_) => (rest, None),
                    };
                    trailer = Some(TrailerDecl {
                        span: clause_span,
                        ty,
                        cond,
                    });
                    i = rest;
                }
                "bounded_by" => {
                    let (rest, e) = self.expr(&rest[clause.len()..])?;
                    bounded_by = Some((clause_span, e));
                    i = rest;
                }
                "pad_to" => {
                    let (rest, n) = self.int(&rest[clause.len()..])?;
                    pad_to = Some((clause_span, n));
                    i = rest;
                }
                _ => {
                    i = rest;
                    break;
                }
            }
        }
        let header_expected = match keyword {
            StructKeyword::Struct => "`{`, `bounded_by` or `pad_to`",
            StructKeyword::Record => "`{`, `trailer` or `pad_to`",
            StructKeyword::Feature => "`{` or `pad_to`",
        };
        if self.sym("{")(i).is_err() {
            let at = sp(i)?.0;
            return fail(at, header_expected);
        }
        Ok((
            i,
            StructItem {
                doc,
                keyword,
                keyword_span,
                name,
                params,
                id,
                trailer,
                bounded_by,
                pad_to,
                members: Vec::new(),
            },
        ))
    }

    fn member(&self, i: &'a str) -> PResult<'a, Member> {
        let doc = self.doc_at(i);
        if let Ok((rest, span)) = self.clause_kw("payload")(i) {
            let (rest, name) = self.value_name("a payload name")(rest)?;
            let (rest, _) = self.sym(":")(rest)?;
            let (rest, ty) = self.ty(rest)?;
            return Ok((
                rest,
                Member::Payload(Box::new(PayloadDecl {
                    doc,
                    span,
                    name,
                    ty,
                })),
            ));
        }
        let (i, display) = self.display(i)?;
        let (i, name) = self.value_name("a field name")(i)?;
        let (i, _) = self.sym(":")(i)?;
        let (i, ty) = self.ty(i)?;
        let (i, computed) = self.opt_clause(i, "=")?;
        let (i, cond) = self.opt_clause(i, "if")?;
        let (i, within) = self.opt_clause(i, "within")?;
        let (i, big_endian_if) = self.opt_clause(i, "big_endian_if")?;
        Ok((
            i,
            Member::Field(Box::new(FieldDecl {
                doc,
                display,
                name,
                ty,
                computed,
                cond,
                within,
                big_endian_if,
            })),
        ))
    }

    /// A display attribute `@NAME` or `@NAME(ARG)` before a field, when present.
    fn display(&self, i: &'a str) -> PResult<'a, Option<DisplayDecl>> {
        let Ok((rest, _)) = self.sym("@")(i) else {
            return Ok((i, None));
        };
        let start = sp(i)?.0;
        let (rest, name) =
            self.any_name("a display attribute (`hex`, `signed` or `name_by`)")(rest)?;
        let mut args = Vec::new();
        let mut rest = rest;
        if let Ok((r, _)) = self.sym("(")(rest) {
            let mut r = r;
            loop {
                let (r2, mut arg) = self.any_name("a name")(r)?;
                r = r2;
                if let Ok((r3, _)) = self.sym(".")(r) {
                    let (r3, member) = self.any_name("a member name")(r3)?;
                    arg.name = format!("{}.{}", arg.name, member.name);
                    arg.span.hi = member.span.hi;
                    r = r3;
                }
                args.push(arg);
                match self.sym(",")(r) {
                    Ok((r4, _)) => r = r4,
                    Err(_) => break,
                }
            }
            let (r, _) = self.sym(")")(r)?;
            rest = r;
        }
        let span = self.span_between(start, rest);
        Ok((rest, Some(DisplayDecl { span, name, args })))
    }

    /// `= EXPR`, `if EXPR`, `within EXPR` or `big_endian_if EXPR`, when present.
    fn opt_clause(&self, i: &'a str, intro: &'static str) -> PResult<'a, Option<Expr>> {
        let matched = if intro == "=" {
            self.sym("=")(i)
        } else {
            self.clause_kw(intro)(i)
        };
        match matched {
            Ok((rest, _)) => {
                let (rest, e) = self.expr(rest)?;
                Ok((rest, Some(e)))
            }
            Err(_) => Ok((i, None)),
        }
    }

    // ---------------------------------------------------------------- types

    fn ty(&self, i: &'a str) -> PResult<'a, TypeExpr> {
        let (i, ()) = sp(i)?;
        self.enter(i)?;
        let result = self.ty_inner(i);
        self.leave();
        result
    }

    fn ty_inner(&self, start: &'a str) -> PResult<'a, TypeExpr> {
        let what = "a type";
        if let Ok((i, _)) = self.sym("[")(start) {
            let (i, elem) = self.ty(i)?;
            let (i, _) = self.sym(";")(i)?;
            let (i, len) = self.len(i)?;
            let (i, _) = self.sym("]")(i)?;
            let kind = TypeKind::Array {
                elem: Box::new(elem),
                len,
            };
            let span = self.span_between(start, i);
            return Ok((i, TypeExpr { kind, span }));
        }
        let (i, w) = match word(start) {
            Ok(ok) => ok,
            Err(_) => return fail(start, what),
        };
        let (i, kind) = match w {
            "bytes" | "str" => {
                let (i, _) = self.sym("[")(i)?;
                let (i, len) = self.len(i)?;
                let (i, _) = self.sym("]")(i)?;
                let kind = if w == "bytes" {
                    TypeKind::Bytes(len)
                } else {
                    TypeKind::Str(len)
                };
                (i, kind)
            }
            "cstr" => (i, TypeKind::CStr),
            "word" => {
                let (i, _) = self.sym("[")(i)?;
                let (i, e) = self.expr(i)?;
                let (i, _) = self.sym("]")(i)?;
                (i, TypeKind::Word(e))
            }
            "split" => {
                let (i, _) = self.sym("[")(i)?;
                let (i, hi) = self.any_name("an unsigned primitive type")(i)?;
                let (i, _) = self.sym(",")(i)?;
                let (i, lo) = self.any_name("an unsigned primitive type")(i)?;
                let (i, _) = self.sym("]")(i)?;
                (i, TypeKind::Split { hi, lo })
            }
            "feature" => {
                let (i, _) = self.sym("(")(i)?;
                let (i, e) = self.expr(i)?;
                let (i, _) = self.sym(")")(i)?;
                (i, TypeKind::Feature(e))
            }
            "switch" => {
                let (i, sw) = self.switch(i)?;
                (i, TypeKind::Switch(sw))
            }
            _ if RESERVED.contains(&w) => {
                return self.custom(
                    start,
                    self.span_of(w),
                    format!("expected a type, found keyword `{w}`"),
                    "not a type",
                    None,
                );
            }
            _ => {
                let name = Ident {
                    name: w.to_string(),
                    span: self.span_of(w),
                };
                match self.sym("(")(i) {
                    Ok((i, _)) => {
                        let (i, args) = self.args(i)?;
                        (
                            i,
                            TypeKind::Named {
                                name,
                                args: Some(args),
                            },
                        )
                    }
                    Err(_) => (i, TypeKind::Named { name, args: None }),
                }
            }
        };
        let span = self.span_between(start, i);
        Ok((i, TypeExpr { kind, span }))
    }

    /// The length inside `[…]`: `..` or an expression.
    fn len(&self, i: &'a str) -> PResult<'a, LenExpr> {
        match self.sym("..")(i) {
            Ok((rest, span)) => Ok((rest, LenExpr::Rest(span))),
            Err(_) => {
                let (rest, e) = self
                    .expr(i)
                    .map_err(|e| e.map(|e| e.or(PError::expected(sp_or(i), "`..`"))))?;
                Ok((rest, LenExpr::Expr(e)))
            }
        }
    }

    fn switch(&self, i: &'a str) -> PResult<'a, SwitchExpr> {
        let (i, on) = self.expr(i)?;
        let (i, as_name) = match self.kw("as")(i) {
            Ok((i, _)) => {
                let (i, n) = self.name("an enum name")(i)?;
                (i, Some(n))
            }
            Err(_) => (i, None),
        };
        let (i, arms) = self.block(
            i,
            "a pattern (an integer, `true`, `false` or `_`)",
            None,
            |i| {
                let (i, pat) = self.pattern(i)?;
                let (i, _) = self.sym("=>")(i)?;
                let (i, variant) = self.name("a variant name")(i)?;
                let (i, _) = self.sym(":")(i)?;
                let (i, ty) = self.ty(i)?;
                Ok((i, ArmDecl { pat, variant, ty }))
            },
        )?;
        Ok((i, SwitchExpr { on, as_name, arms }))
    }

    fn pattern(&self, i: &'a str) -> PResult<'a, PatternDecl> {
        let (i, ()) = sp(i)?;
        if let Ok((rest, w)) = word(i) {
            let kind = match w {
                "_" => PatternKind::Default,
                "true" => PatternKind::Bool(true),
                "false" => PatternKind::Bool(false),
                _ => return fail(i, "a pattern (an integer, `true`, `false` or `_`)"),
            };
            return Ok((
                rest,
                PatternDecl {
                    kind,
                    span: self.span_of(w),
                },
            ));
        }
        match self.int(i) {
            Ok((rest, lit)) => Ok((
                rest,
                PatternDecl {
                    kind: PatternKind::Int(lit),
                    span: lit.span,
                },
            )),
            Err(Err::Error(_)) => fail(i, "a pattern (an integer, `true`, `false` or `_`)"),
            Err(e) => Err(e),
        }
    }

    // ---------------------------------------------------------------- expressions

    pub fn expr(&self, i: &'a str) -> PResult<'a, Expr> {
        let (i, ()) = sp(i)?;
        self.enter(i)?;
        let result = self.climb(i, 0);
        self.leave();
        result
    }

    /// Binary operators and their precedence, lowest first (`has` is level 5). Longer
    /// operators come before their prefixes (`<=` before `<`).
    const BINARY_OPS: &'static [(&'static str, u8, BinOp)] = &[
        ("||", 0, BinOp::Or),
        ("&&", 1, BinOp::And),
        ("|", 2, BinOp::BitOr),
        ("&", 3, BinOp::BitAnd),
        ("==", 4, BinOp::Eq),
        ("!=", 4, BinOp::Ne),
        ("<=", 4, BinOp::Le),
        (">=", 4, BinOp::Ge),
        ("<", 4, BinOp::Lt),
        (">", 4, BinOp::Gt),
        ("+", 6, BinOp::Add),
        ("-", 6, BinOp::Sub),
        ("*", 7, BinOp::Mul),
        ("/", 7, BinOp::Div),
    ];
    const HAS_PRECEDENCE: u8 = 5;
    const COMPARISON_PRECEDENCE: u8 = 4;

    /// Precedence climbing: parses operators of precedence `min` or higher. (One frame per
    /// operand instead of one per precedence level keeps deep nesting off the stack.)
    fn climb(&self, i: &'a str, min: u8) -> PResult<'a, Expr> {
        let (mut i, mut lhs) = self.unary(i)?;
        loop {
            if min <= Self::HAS_PRECEDENCE {
                if let Ok((rest, _)) = self.clause_kw("has")(i) {
                    let (rest, flag) = self.any_name("a flag name")(rest)?;
                    let span = lhs.span.to(flag.span);
                    lhs = Expr {
                        kind: ExprKind::Has(Box::new(lhs), flag),
                        span,
                    };
                    i = rest;
                    continue;
                }
            }
            let next = Self::BINARY_OPS
                .iter()
                .filter(|(_, prec, _)| *prec >= min)
                .find_map(|&(text, prec, op)| self.sym(text)(i).ok().map(|(r, _)| (r, prec, op)));
            let Some((rest, prec, op)) = next else {
                return Ok((i, lhs));
            };
            let (rest, rhs) = self.climb(rest, prec + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
            i = rest;
            // Comparisons do not chain (`a < b < c` is a mistake).
            if prec == Self::COMPARISON_PRECEDENCE {
                self.no_second_comparison(i)?;
            }
        }
    }

    fn no_second_comparison(&self, i: &'a str) -> PResult<'a, ()> {
        let comparisons = Self::BINARY_OPS
            .iter()
            .filter(|(_, prec, _)| *prec == Self::COMPARISON_PRECEDENCE);
        for &(op_text, _, _) in comparisons {
            if let Ok((_, span)) = self.sym(op_text)(i) {
                return self.custom(
                    i,
                    span,
                    "comparison operators cannot be chained".to_string(),
                    "second comparison",
                    Some("combine two comparisons with `&&`, e.g. `1 < a && a < 4`".to_string()),
                );
            }
        }
        Ok((i, ()))
    }

    fn unary(&self, i: &'a str) -> PResult<'a, Expr> {
        let (i, ()) = sp(i)?;
        if let Ok((rest, bang)) = self.sym("!")(i) {
            self.enter(rest)?;
            let result = self.unary(rest);
            self.leave();
            let (rest, inner) = result?;
            let span = bang.to(inner.span);
            return Ok((
                rest,
                Expr {
                    kind: ExprKind::Not(Box::new(inner)),
                    span,
                },
            ));
        }
        self.primary(i)
    }

    fn primary(&self, start: &'a str) -> PResult<'a, Expr> {
        let what = "an expression";
        if let Ok((i, _)) = self.sym("(")(start) {
            let (i, inner) = self.expr(i)?;
            let (i, _) = self.sym(")")(i)?;
            let span = self.span_between(start, i);
            return Ok((i, Expr { span, ..inner }));
        }
        if start.starts_with(|c: char| c.is_ascii_digit()) {
            let (i, lit) = self.int(start)?;
            return Ok((
                i,
                Expr {
                    kind: ExprKind::Int(lit.magnitude),
                    span: lit.span,
                },
            ));
        }
        let Ok((i, w)) = word(start) else {
            return fail(start, what);
        };
        let span = self.span_of(w);
        let simple = |kind| Ok((i, Expr { kind, span }));
        match w {
            "true" => simple(ExprKind::Bool(true)),
            "false" => simple(ExprKind::Bool(false)),
            "remaining" => simple(ExprKind::Remaining),
            "self" => simple(ExprKind::SelfValue),
            "ctx" => {
                let (i, _) = self.sym(".")(i)?;
                let (i, name) = self.any_name("a context field name")(i)?;
                let span = span.to(name.span);
                Ok((
                    i,
                    Expr {
                        kind: ExprKind::Ctx(name),
                        span,
                    },
                ))
            }
            // An item keyword that starts an item header is that item, after an expression
            // cut short (`if` at the end of a line). Not `context`, whose header is only `{`:
            // `switch context {` switches on a field.
            _ if ITEM_KEYWORDS.contains(&w) && w != "context" && self.starts_an_item(start) => self
                .custom(
                    start,
                    span,
                    format!("expected an expression, found keyword `{w}`"),
                    "not an expression",
                    None,
                ),
            // Any other word names a field or parameter, keywords included (`flags`, `if`).
            _ => {
                if let Ok((i, _)) = self.sym("(")(i) {
                    let (i, args) = self.args(i)?;
                    let name = Ident {
                        name: w.to_string(),
                        span,
                    };
                    let span = self.span_between(start, i);
                    return Ok((
                        i,
                        Expr {
                            kind: ExprKind::Call(name, args),
                            span,
                        },
                    ));
                }
                simple(ExprKind::Name(w.to_string()))
            }
        }
    }

    /// Comma-separated expressions up to `)` (the `(` is already consumed).
    fn args(&self, mut i: &'a str) -> PResult<'a, Vec<Expr>> {
        let mut args = Vec::new();
        if let Ok((rest, _)) = self.sym(")")(i) {
            return Ok((rest, args));
        }
        loop {
            let (rest, e) = self.expr(i)?;
            args.push(e);
            if let Ok((rest, _)) = self.sym(",")(rest) {
                i = rest;
                continue;
            }
            let (rest, _) = self.sym(")").or_else_expect(rest, "`,`")?;
            return Ok((rest, args));
        }
    }
}

/// The input after whitespace (for error positions).
fn sp_or(i: &str) -> &str {
    sp(i).map_or(i, |(r, ())| r)
}

/// Runs a parser and, when it fails without consuming anything, adds another expectation
/// (e.g. "`,`" when looking for `)` after an argument).
trait OrElseExpect<'a, T> {
    fn or_else_expect(&self, i: &'a str, also: &'static str) -> PResult<'a, T>;
}

impl<'a, T, F: Fn(&'a str) -> PResult<'a, T>> OrElseExpect<'a, T> for F {
    fn or_else_expect(&self, i: &'a str, also: &'static str) -> PResult<'a, T> {
        self(i).map_err(|e| match e {
            Err::Error(mut e) => {
                if e.at.len() == sp_or(i).len() {
                    e.expected.push(also.to_string());
                }
                Err::Error(e)
            }
            other => other,
        })
    }
}
