//! Tracepoint samples by field, and as perf script prints them.
//!
//! The event format files a recording carries in its tracing data (the TRACING_DATA
//! feature, or a pipe's HEADER_TRACING_DATA record) name each field of a tracepoint's
//! RAW data, with its offset, size and sign (`field:pid_t prev_pid; offset:24; size:4;
//! signed:1;`), and end with the event's `print fmt:` line, a C format string and
//! argument expressions (`"prev_comm=%s prev_pid=%d", REC->prev_comm, REC->prev_pid`).
//! The format files are text written by the kernel, not a perf.data layout: this module
//! parses them ([`format`](Format)), reads a RAW sample's fields through them
//! ([`Formats::decode`], [`field_value`]) and prints a sample's `trace` text
//! ([`Formats::print_trace`]).
//!
//! The text is what perf 6.1's `perf script` prints, byte for byte: the `print fmt` is
//! parsed and evaluated by the rules of the libtraceevent copy perf 6.1 links
//! (`tools/lib/traceevent/event-parse.c` of Linux 6.1), quirks included:
//! * a format with a function libtraceevent does not know (`sizeof`, `__get_cpumask`,
//!   `__get_sockaddr`, `__print_flags_u64`…) does not parse: perf prints
//!   `[FAILED TO PARSE]` and ` name=value` for each field ([`UnknownHelpers`] reports
//!   such helpers once each);
//! * `%c`, `% d`, `%+d` print `>c<`, `> <`, `>+<` and take no argument (the arguments
//!   after them shift);
//! * `__print_flags` prints matching names joined by its delimiter, then the rest as
//!   `0x…`; `__print_symbolic` prints the name or `0x…`; names the kernel left as
//!   enum identifiers read as 0;
//! * `%pS`/`%pF` print `symbol+0xoffset`, `%ps`/`%pf` the symbol, through the
//!   [`KernelSymbols`] the caller passes (perf uses its machine's kernel maps);
//!   an address no symbol contains prints as `0x…`;
//! * `%p` prints `0x…` or `(nil)`; `%pI4 %pI6c %pISpc %pM %pU %*ph` as the kernel does;
//! * operators bind by libtraceevent's priorities (an operator after a parenthesised
//!   group or a ternary may bind unlike C); arithmetic is unsigned 64-bit.
//!
//! perf 6.1 as Debian packages it loads no libtraceevent plugins (it looks only in
//! `~/.local/lib/traceevent/plugins`), so no event is printed by a plugin's handler:
//! neither are ours. Where perf's output is not defined we choose:
//! * a field or located data past the payload, a division by zero, a `*` width from the
//!   payload beyond 65536: a [`TraceError`] (perf reads its own memory or dies);
//! * `__get_dynamic_array(x)` used as a number: the data's offset in the payload (perf
//!   prints an address in its own memory);
//! * `%zu`/`%zx` (libtraceevent passes an `int`, printf reads a `size_t`): the low 32
//!   bits, zero-extended, as the compiler's 32-bit move leaves them;
//! * a bprint record whose format does not parse: an error for that record (perf marks
//!   the event failed for the rest of the run).
//!
//! Some of libtraceevent's state lives as long as the formats, and so it does here: a
//! char array of an unparsed format, once printed as `ARRAY[…]` because it held a byte
//! that is not printable, prints so for every later sample. Print samples in perf's
//! order (time order) for the same text.
//!
//! ```
//! use perfdata::tracepoint::{FieldValue, Formats, NoKernelSymbols};
//! use perfdata::Recording;
//! use perfdata::types::RecordBody;
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tracepoint.data");
//! let recording = Recording::open(path)?;
//! let data = recording.data()?;
//! let formats = Formats::of_file(&data).expect("a recording with tracing data");
//! let mut seen = 0;
//! recording.for_each_record(&mut |_, _, rec, ctx| {
//!     if let RecordBody::Sample(s) = data.decode(&rec, ctx)? {
//!         let raw = s.raw.as_ref().expect("tracepoint samples carry RAW data");
//!         let (format, fields) = formats.decode(&raw.data).expect("a known event");
//!         assert_eq!(fields[0].0.name, "common_type");
//!         if format.name == "sched_switch" {
//!             assert_eq!(format.system, "sched");
//!             assert!(matches!(fields.iter().find(|f| f.0.name == "prev_comm").unwrap().1,
//!                 Some(FieldValue::Text(_))));
//!             // perf script's `trace` field of the sample.
//!             let mut text = String::new();
//!             formats.print_trace(&raw.data, &NoKernelSymbols, &mut text).unwrap();
//!             assert!(text.starts_with("prev_comm="), "{text}");
//!             assert!(text.contains(" ==> next_comm="), "{text}");
//!         }
//!         seen += 1;
//!     }
//!     Ok(true)
//! })?;
//! assert!(seen > 0);
//! # Ok::<(), perfdata::rt::Error>(())
//! ```

mod format;
mod formats;
mod print;

pub use format::{
    field_bytes, field_value, int_elements, parse_format, read_uint, Field, FieldBytes,
    FieldTraits, FieldValue, Format,
};
pub use formats::Formats;
pub use print::{
    FlagDefinition, KernelSymbols, NoKernelSymbols, PrintFmt, PrintFmtError, TraceError,
    UnknownHelpers,
};
