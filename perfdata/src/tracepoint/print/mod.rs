//! A tracepoint's `print fmt:` line, parsed and evaluated as libtraceevent 6.1 (the copy
//! perf 6.1 links) does, so that the text equals perf script's `trace` field byte for
//! byte. [`super`]'s doc says what matches perf and what cannot.

mod bprint;
pub(crate) mod cprintf;
mod defines;
pub(crate) mod eval;
pub(crate) mod lex;
pub(crate) mod num;
pub(crate) mod parse;
mod pieces;
mod pointer;
#[cfg(test)]
mod tests;

pub use defines::FlagDefinition;
pub use parse::PrintFmtError;

use parse::{Arg, Parser};
use pieces::Piece;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// A parsed `print fmt:` line: the format string and its argument expressions, with
/// each conversion bound to its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintFmt {
    format: String,
    args: Vec<Arg>,
    pieces: Vec<Piece>,
    /// ftrace's `bprint` (`trace_printk`): the format comes with each record.
    bprint: bool,
}

impl PrintFmt {
    /// Parses the text from `print fmt:` on, for an event with `fields`; `ftrace` for
    /// ftrace's own events (`name` `bprint` formats each record by its own format).
    pub(crate) fn parse(
        text: &[u8],
        fields: &[crate::tracepoint::Field],
        ftrace: bool,
        name: &str,
    ) -> Result<PrintFmt, PrintFmtError> {
        let (format, mut args) = Parser::new(text, fields).print_fmt()?;
        if ftrace && args.is_empty() {
            // Old ftrace formats have no arguments: libtraceevent passes every field.
            args = fields
                .iter()
                .filter(|f| !f.common)
                .map(|f| Arg::Field(f.name.clone()))
                .collect();
        }
        let bprint = ftrace && name == "bprint";
        let pieces = if bprint {
            vec![]
        } else {
            pieces::pieces(format.as_bytes(), args.len())?
        };
        Ok(PrintFmt {
            format,
            args,
            pieces,
            bprint,
        })
    }

    /// The format string, escapes as written (`prev_comm=%s prev_pid=%d …`).
    pub fn format(&self) -> &str {
        &self.format
    }

    /// How many arguments follow the format string.
    pub fn arg_count(&self) -> usize {
        self.args.len()
    }
}

/// Names the kernel function an address lies in, for `%pS`/`%ps`/`%pF`/`%pf` (perf
/// resolves them with its machine's kernel maps: `/proc/kallsyms`, a vmlinux, modules).
pub trait KernelSymbols {
    /// The function containing `addr`: its name and `addr`'s offset from its start
    /// (perf: `machine__resolve_kernel_addr`, the symbol of the kernel map or module
    /// containing the address; its module is not printed).
    fn resolve(&self, addr: u64) -> Option<(Cow<'_, str>, u64)>;
}

/// No kernel symbols: every `%pS` prints as a hex address (`0xffffffff81234567`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKernelSymbols;

impl KernelSymbols for NoKernelSymbols {
    fn resolve(&self, _: u64) -> Option<(Cow<'_, str>, u64)> {
        None
    }
}

/// Why a RAW sample's trace text could not be made. perf itself reads past such a
/// payload or crashes; we stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// The payload is too short to hold the event's `common_type`.
    NoEventType {
        /// The payload's size in bytes.
        len: usize,
    },
    /// No format of the tracing data has this `common_type`.
    UnknownEvent {
        /// The payload's `common_type`.
        id: u64,
    },
    /// A field, or data a field locates, lies outside the payload.
    OutsidePayload {
        /// `system:name` of the event.
        event: String,
        /// The field (or helper) that reads outside.
        field: String,
        /// The payload's size in bytes.
        len: usize,
    },
    /// A `/` or `%` by zero in an argument (perf dies of SIGFPE).
    DivideByZero {
        /// `system:name` of the event.
        event: String,
    },
    /// A width or precision beyond any sane text (`%*s` of 2^31 from the payload).
    TooWide {
        /// `system:name` of the event.
        event: String,
        /// The width asked for.
        width: i64,
    },
    /// An argument shape perf reads as unrelated memory (e.g. `__print_hex` of an
    /// expression rather than a field), or a bprint record whose format does not parse.
    Unsupported {
        /// `system:name` of the event.
        event: String,
        /// What is not supported.
        what: String,
    },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::NoEventType { len } => {
                write!(f, "a tracepoint payload of {len} bytes holds no event type")
            }
            TraceError::UnknownEvent { id } => {
                write!(f, "no tracepoint format has id {id}")
            }
            TraceError::OutsidePayload { event, field, len } => write!(
                f,
                "{event}: field `{field}` lies outside the {len}-byte payload"
            ),
            TraceError::DivideByZero { event } => write!(f, "{event}: division by zero"),
            TraceError::TooWide { event, width } => {
                write!(f, "{event}: a field width of {width} from the payload")
            }
            TraceError::Unsupported { event, what } => write!(f, "{event}: {what}"),
        }
    }
}

impl std::error::Error for TraceError {}

/// Reports each unknown helper once: perf (libtraceevent) prints a warning per event
/// when it parses the formats; a tool that prints traces can say once per helper why an
/// event prints as `[FAILED TO PARSE]`.
#[derive(Debug, Clone, Default)]
pub struct UnknownHelpers {
    seen: BTreeSet<String>,
}

impl UnknownHelpers {
    /// The helper that `format`'s print format fails on, the first time it is met.
    pub fn first_use<'f>(&mut self, format: &'f super::Format) -> Option<&'f str> {
        let helper = format.print.as_ref().err()?.unknown_helper()?;
        self.seen.insert(helper.to_string()).then_some(helper)
    }

    /// The helpers met so far, sorted.
    pub fn seen(&self) -> impl Iterator<Item = &str> {
        self.seen.iter().map(String::as_str)
    }
}
