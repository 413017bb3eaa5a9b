//! `perf script -F`: which fields each kind of event prints. perf keeps one field set per
//! output type (hardware, software, tracepoint, …), starts from its defaults, lets `-F`
//! replace, add to or take from them, then drops the defaults a recording's events cannot
//! give (a field the user asked for that the events cannot give is an error). This module
//! is that table and its rules, as perf 6.1's `builtin-script.c` has them.

use crate::BadOption;

/// One `-F` field, a bit of a [`Fields`] set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field(u64);

/// A set of fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fields(pub u64);

macro_rules! fields {
    ($($id:ident = $bit:expr, $name:expr;)*) => {
        impl Field {
            $(#[doc = concat!("`", $name, "`")] pub const $id: Field = Field(1 << $bit);)*
        }
        /// Every field by its `-F` name, in perf's order.
        const NAMES: &[(&str, Field)] = &[$(($name, Field::$id)),*];
    };
}

fields! {
    COMM = 0, "comm";
    TID = 1, "tid";
    PID = 2, "pid";
    TIME = 3, "time";
    CPU = 4, "cpu";
    EVNAME = 5, "event";
    TRACE = 6, "trace";
    IP = 7, "ip";
    SYM = 8, "sym";
    DSO = 9, "dso";
    ADDR = 10, "addr";
    SYMOFFSET = 11, "symoff";
    SRCLINE = 12, "srcline";
    PERIOD = 13, "period";
    IREGS = 14, "iregs";
    UREGS = 15, "uregs";
    BRSTACK = 16, "brstack";
    BRSTACKSYM = 17, "brstacksym";
    DATA_SRC = 18, "data_src";
    WEIGHT = 19, "weight";
    BPF_OUTPUT = 20, "bpf-output";
    CALLINDENT = 21, "callindent";
    INSN = 22, "insn";
    INSNLEN = 23, "insnlen";
    BRSTACKINSN = 24, "brstackinsn";
    BRSTACKOFF = 25, "brstackoff";
    SYNTH = 26, "synth";
    PHYS_ADDR = 27, "phys_addr";
    METRIC = 29, "metric";
    MISC = 30, "misc";
    SRCCODE = 31, "srccode";
    IPC = 32, "ipc";
    TOD = 33, "tod";
    DATA_PAGE_SIZE = 34, "data_page_size";
    CODE_PAGE_SIZE = 35, "code_page_size";
    INS_LAT = 36, "ins_lat";
    BRSTACKINSNLEN = 37, "brstackinsnlen";
}

impl Field {
    /// The field's `-F` name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    fn by_name(name: &str) -> Option<Field> {
        NAMES
            .iter()
            .find(|(n, _)| !n.is_empty() && *n == name)
            .map(|(_, f)| *f)
    }
}

/// The bit of a field in a [`Fields`] set.
pub(crate) fn bit(f: Field) -> u64 {
    f.0
}

impl Fields {
    /// `f` is in the set.
    pub fn has(self, f: Field) -> bool {
        self.0 & f.0 != 0
    }

    fn with(self, f: Field) -> Fields {
        Fields(self.0 | f.0)
    }

    fn without(self, f: Field) -> Fields {
        Fields(self.0 & !f.0)
    }

    fn of(list: &[Field]) -> Fields {
        Fields(list.iter().fold(0, |a, f| a | f.0))
    }
}

/// perf script's output types: the `PERF_TYPE_*` of an event's attr (a PMU's own type
/// number is [`OutputType::Other`]), and synthesized events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputType {
    /// `PERF_TYPE_HARDWARE`.
    Hardware,
    /// `PERF_TYPE_SOFTWARE`.
    Software,
    /// `PERF_TYPE_TRACEPOINT`.
    Tracepoint,
    /// `PERF_TYPE_HW_CACHE`.
    HwCache,
    /// `PERF_TYPE_RAW`.
    Raw,
    /// `PERF_TYPE_BREAKPOINT`.
    Breakpoint,
    /// `PERF_TYPE_SYNTH` (synthesized by perf from an AUX trace).
    Synth,
    /// Any other type: a dynamic PMU's.
    Other,
}

/// Every output type, in perf's order (its warnings name them in this order).
pub(super) const TYPES: [OutputType; 8] = [
    OutputType::Hardware,
    OutputType::Software,
    OutputType::Tracepoint,
    OutputType::HwCache,
    OutputType::Raw,
    OutputType::Breakpoint,
    OutputType::Synth,
    OutputType::Other,
];

impl OutputType {
    /// The output type of an attr's `type`.
    pub fn of_attr_type(ty: u32) -> OutputType {
        match ty {
            0 => OutputType::Hardware,
            1 => OutputType::Software,
            2 => OutputType::Tracepoint,
            3 => OutputType::HwCache,
            4 => OutputType::Raw,
            5 => OutputType::Breakpoint,
            // PERF_TYPE_SYNTH: INT_MAX + 1.
            0x8000_0000 => OutputType::Synth,
            _ => OutputType::Other,
        }
    }

    fn index(self) -> usize {
        TYPES.iter().position(|&t| t == self).unwrap_or(0)
    }

    /// The name perf's messages give the type.
    pub fn name(self) -> &'static str {
        match self {
            OutputType::Hardware => "hardware",
            OutputType::Software => "software",
            OutputType::Tracepoint => "tracepoint",
            OutputType::Raw => "raw",
            OutputType::Breakpoint => "breakpoint",
            OutputType::Synth => "synth",
            OutputType::HwCache | OutputType::Other => "unknown",
        }
    }

    /// perf's default fields of the type.
    fn defaults(self) -> Fields {
        use Field as F;
        let common = [
            F::COMM,
            F::TID,
            F::CPU,
            F::TIME,
            F::EVNAME,
            F::IP,
            F::SYM,
            F::SYMOFFSET,
            F::DSO,
        ];
        let base = Fields::of(&common);
        match self {
            OutputType::Hardware
            | OutputType::HwCache
            | OutputType::Breakpoint
            | OutputType::Other => base.with(F::PERIOD),
            OutputType::Software => base.with(F::PERIOD).with(F::BPF_OUTPUT),
            OutputType::Tracepoint => {
                Fields::of(&[F::COMM, F::TID, F::CPU, F::TIME, F::EVNAME, F::TRACE])
            }
            OutputType::Raw => Fields::of(&[
                F::PERIOD,
                F::ADDR,
                F::DATA_SRC,
                F::WEIGHT,
                F::PHYS_ADDR,
                F::DATA_PAGE_SIZE,
                F::CODE_PAGE_SIZE,
                F::INS_LAT,
            ])
            .with_all(base),
            OutputType::Synth => base.with(F::SYNTH),
        }
    }

    /// Fields the type can never print.
    fn invalid(self) -> Fields {
        match self {
            OutputType::Software => Fields::of(&[Field::TRACE]),
            OutputType::Tracepoint => Fields::default(),
            _ => Fields::of(&[Field::TRACE, Field::BPF_OUTPUT]),
        }
    }
}

impl Fields {
    fn with_all(self, other: Fields) -> Fields {
        Fields(self.0 | other.0)
    }
}

/// One type's fields as the options left them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeFields {
    /// The fields printed.
    pub fields: Fields,
    /// `-F` named the type, or set fields for every type.
    pub user_set: bool,
    /// Set through a `-F` without a type (applies to every type that has events).
    pub wildcard_set: bool,
    /// The fields the user asked for by name: an event that cannot give one is an error.
    pub user_fields: Fields,
}

impl TypeFields {
    /// A `-F` token's change: `field` added or (`remove`) taken away, as the user's.
    fn change(&mut self, field: Field, remove: bool) {
        if remove {
            self.fields = self.fields.without(field);
            self.user_fields = self.user_fields.without(field);
        } else {
            self.fields = self.fields.with(field);
            self.user_fields = self.user_fields.with(field);
        }
        self.user_set = true;
        self.wildcard_set = true;
    }
}

/// The fields of every output type: perf's defaults changed by each `-F` in turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    types: [TypeFields; 8],
    /// `-F flags` (`+flags`): the sample's branch flags.
    pub flags: bool,
    /// Warnings perf prints while parsing (`'trace' not valid for hardware events. Ignoring.`).
    pub warnings: Vec<String>,
}

impl Default for FieldSpec {
    fn default() -> Self {
        FieldSpec {
            types: TYPES.map(|t| TypeFields {
                fields: t.defaults(),
                user_set: false,
                wildcard_set: false,
                user_fields: Fields::default(),
            }),
            flags: false,
            warnings: vec![],
        }
    }
}

/// How one `-F` token changes a set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Default,
    Set,
    Add,
    Remove,
}

impl FieldSpec {
    /// The fields of an output type.
    pub fn get(&self, t: OutputType) -> &TypeFields {
        &self.types[t.index()]
    }

    pub(crate) fn get_mut(&mut self, t: OutputType) -> &mut TypeFields {
        &mut self.types[t.index()]
    }

    /// Any `-F` was given.
    pub fn user_set(&self) -> bool {
        self.types.iter().any(|t| t.user_set)
    }

    /// Applies one `-F` argument (`comm,tid,ip`, `+period,-cpu`, `trace:comm,trace`), as
    /// perf's `parse_output_fields`.
    pub fn apply(&mut self, arg: &str) -> Result<(), BadOption> {
        let bad = |m: &str| BadOption::new("-F", m);
        let (ty, list) = match arg.split_once(':') {
            Some((t, rest)) => {
                let ty = match t {
                    "hw" => OutputType::Hardware,
                    "sw" => OutputType::Software,
                    "trace" => OutputType::Tracepoint,
                    "raw" => OutputType::Raw,
                    "break" => OutputType::Breakpoint,
                    "synth" => OutputType::Synth,
                    _ => return Err(bad("Invalid event type in field string.")),
                };
                let tf = self.get_mut(ty);
                tf.user_set = true;
                tf.wildcard_set = false;
                (Some(ty), rest)
            }
            None => {
                if arg.is_empty() {
                    return Err(bad("Cannot set fields to 'none' for all event types."));
                }
                // `+`/`-` keep the defaults.
                if !arg.contains('+') && !arg.contains('-') {
                    if self.user_set() {
                        self.warnings
                            .push("Overriding previous field request for all events.".into());
                    }
                    for t in &mut self.types {
                        t.fields = Fields::default();
                        t.user_set = true;
                        t.wildcard_set = true;
                    }
                }
                (None, arg)
            }
        };
        if let Some(ty) = ty {
            // A type's list replaces its fields unless it only adds or removes.
            if !list.starts_with('+') && !list.starts_with('-') {
                self.get_mut(ty).fields = Fields::default();
            }
        }
        let mut change = Change::Default;
        for tok in list.split(',').filter(|t| !t.is_empty()) {
            let (c, name) = if let Some(n) = tok.strip_prefix('+') {
                (Change::Add, n)
            } else if let Some(n) = tok.strip_prefix('-') {
                (Change::Remove, n)
            } else {
                (Change::Set, tok)
            };
            let mixed = match c {
                Change::Set => !matches!(change, Change::Set | Change::Default),
                _ => change == Change::Set,
            };
            if mixed {
                return Err(bad("Cannot mix +-field with overridden fields"));
            }
            change = c;
            if name == "flags" {
                self.flags = c != Change::Remove;
                continue;
            }
            let Some(field) = Field::by_name(name) else {
                return Err(bad("Invalid field requested."));
            };
            match ty {
                None => {
                    for (i, t) in TYPES.iter().enumerate() {
                        if t.invalid().has(field) {
                            self.warnings.push(format!(
                                "'{}' not valid for {} events. Ignoring.",
                                field.name(),
                                t.name()
                            ));
                            continue;
                        }
                        self.types[i].change(field, c == Change::Remove);
                    }
                }
                Some(ty) => {
                    if ty.invalid().has(field) {
                        return Err(bad(&format!(
                            "'{}' not valid for {} events.",
                            field.name(),
                            ty.name()
                        )));
                    }
                    self.get_mut(ty).change(field, c == Change::Remove);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_replaces_every_type_and_warns_for_invalid_fields() {
        let mut s = FieldSpec::default();
        s.apply("comm,trace").unwrap();
        let hw = s.get(OutputType::Hardware);
        assert_eq!(hw.fields, Fields::of(&[Field::COMM]));
        let tp = s.get(OutputType::Tracepoint);
        assert_eq!(tp.fields, Fields::of(&[Field::COMM, Field::TRACE]));
        assert!(s
            .warnings
            .contains(&"'trace' not valid for hardware events. Ignoring.".to_string()));
    }

    #[test]
    fn plus_and_minus_keep_the_defaults() {
        let mut s = FieldSpec::default();
        s.apply("+period,-cpu").unwrap();
        let sw = s.get(OutputType::Software).fields;
        assert!(sw.has(Field::PERIOD) && !sw.has(Field::CPU) && sw.has(Field::COMM));
    }

    #[test]
    fn mixing_set_and_add_is_refused() {
        let mut s = FieldSpec::default();
        let e = s.apply("comm,+tid").unwrap_err();
        assert_eq!(e.message, "Cannot mix +-field with overridden fields");
        assert!(FieldSpec::default().apply("nope").is_err());
        assert!(FieldSpec::default().apply("hw:trace").is_err());
        assert!(FieldSpec::default().apply("foo:comm").is_err());
    }

    #[test]
    fn a_typed_list_changes_that_type_only() {
        let mut s = FieldSpec::default();
        s.apply("trace:comm,tid").unwrap();
        assert_eq!(
            s.get(OutputType::Tracepoint).fields,
            Fields::of(&[Field::COMM, Field::TID])
        );
        assert_eq!(
            s.get(OutputType::Software).fields,
            OutputType::Software.defaults()
        );
    }
}
