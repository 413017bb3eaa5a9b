//! What perf's Python host tells a script about an event's `__print_flags` and
//! `__print_symbolic` tables before it hands over a sample (`define_flag_field`,
//! `define_flag_value`, `define_symbolic_field`, `define_symbolic_value`), in the order
//! and with the values perf 6.1's `define_event_symbols` walks the parsed print format.

use super::parse::Arg;
use super::PrintFmt;

/// One call perf's Python host makes for an event's flag and symbol tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagDefinition {
    /// `define_flag_field(event, field, delim)` (`symbolic`: `define_symbolic_field(event,
    /// field)`).
    Field {
        /// A `__print_symbolic` table rather than `__print_flags`.
        symbolic: bool,
        /// The field the table is of (the last `REC->field` met before it).
        field: String,
        /// `__print_flags`' delimiter (empty when the format gives none).
        delim: String,
    },
    /// `define_flag_value(event, field, value, name)` (`symbolic`:
    /// `define_symbolic_value`).
    Value {
        /// A `__print_symbolic` entry rather than `__print_flags`.
        symbolic: bool,
        /// The field the table is of.
        field: String,
        /// The value as perf's `eval_flag` reads it (a number, a softirq or hrtimer
        /// name, else 0), as a C `long`.
        value: i64,
        /// The name printed for it.
        name: String,
    },
}

impl PrintFmt {
    /// The definitions perf's Python host makes for this format, in its order.
    /// `current` is the field the walk starts with and ends on: perf keeps it across
    /// events (a table before any field names the previous event's last field).
    ///
    /// perf walks every argument: a field names the current field; a constant (any
    /// atom, quoted text included) defines value 0 with the atom as its name, under
    /// the current field; a flag or symbol table defines its field, then each entry.
    /// It looks into casts, operators, `__print_hex` and `__print_array`, and stops
    /// at the first `__get_dynamic_array`, `__get_bitmask` or bprint string of the
    /// argument list.
    pub fn flag_definitions(&self, current: &mut String) -> Vec<FlagDefinition> {
        let mut out = vec![];
        for arg in &self.args {
            if !walk(arg, current, &mut out) {
                break;
            }
        }
        out
    }
}

/// One argument; false where perf's walk returns without going on to the next one.
fn walk(arg: &Arg, current: &mut String, out: &mut Vec<FlagDefinition>) -> bool {
    match arg {
        Arg::Null | Arg::Str(_) => {}
        Arg::Atom(a) => out.push(FlagDefinition::Value {
            symbolic: false,
            field: current.clone(),
            value: 0,
            name: a.clone(),
        }),
        Arg::Field(name) => *current = name.clone(),
        Arg::Flags {
            value,
            delim,
            flags,
        } => {
            walk(value, current, out);
            out.push(FlagDefinition::Field {
                symbolic: false,
                field: current.clone(),
                delim: delim.clone().unwrap_or_default(),
            });
            out.extend(flags.iter().map(|f| FlagDefinition::Value {
                symbolic: false,
                field: current.clone(),
                value: perf_eval_flag(&f.value),
                name: f.name.clone(),
            }));
        }
        Arg::Symbol { value, symbols } => {
            walk(value, current, out);
            out.push(FlagDefinition::Field {
                symbolic: true,
                field: current.clone(),
                delim: String::new(),
            });
            out.extend(symbols.iter().map(|f| FlagDefinition::Value {
                symbolic: true,
                field: current.clone(),
                value: perf_eval_flag(&f.value),
                name: f.name.clone(),
            }));
        }
        Arg::Hex { data, len, .. } => {
            walk(data, current, out);
            walk(len, current, out);
        }
        Arg::IntArray {
            data,
            count,
            el_size,
        } => {
            walk(data, current, out);
            walk(count, current, out);
            walk(el_size, current, out);
        }
        Arg::Cast { item, .. } => {
            walk(item, current, out);
        }
        Arg::Op(o) => {
            for side in [&o.left, &o.right].into_iter().flatten() {
                walk(side, current, out);
            }
        }
        Arg::BStr(_) | Arg::DynArray(_) | Arg::DynArrayLen(_) | Arg::Bitmask(_) => return false,
    }
    true
}

/// perf's own `eval_flag` (not libtraceevent's): a number when the text starts with a
/// digit, one of the softirq and hrtimer names it knows, else 0.
fn perf_eval_flag(value: &str) -> i64 {
    super::num::flag_value(value).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracepoint::parse_format;

    #[test]
    fn flags_symbols_and_atoms_in_perfs_order() {
        let text = "name: e\nID: 1\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\
\tfield:long state;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield:int mode;\toffset:16;\tsize:4;\tsigned:1;\n\n\
print fmt: \"%s %s %s\", REC->state ? __print_flags(REC->state, \"|\", { 0x01, \"S\" }, { 0x02, \"D\" }) : \"R\", __print_symbolic(REC->mode, { HI_SOFTIRQ, \"HI\" }, { 3, \"THREE\" }, { GFP_X, \"X\" }), \"+\"\n";
        let f = parse_format(text).unwrap();
        let p = f.print.as_ref().unwrap();
        let mut cur = String::new();
        let d = p.flag_definitions(&mut cur);
        let v = |symbolic, field: &str, value, name: &str| FlagDefinition::Value {
            symbolic,
            field: field.into(),
            value,
            name: name.into(),
        };
        assert_eq!(
            d,
            vec![
                FlagDefinition::Field {
                    symbolic: false,
                    field: "state".into(),
                    delim: "|".into()
                },
                v(false, "state", 1, "S"),
                v(false, "state", 2, "D"),
                v(false, "state", 0, "R"),
                FlagDefinition::Field {
                    symbolic: true,
                    field: "mode".into(),
                    delim: String::new()
                },
                v(true, "mode", 0, "HI"),
                v(true, "mode", 3, "THREE"),
                v(true, "mode", 0, "X"),
                v(false, "mode", 0, "+"),
            ]
        );
        assert_eq!(cur, "mode");
    }
}
