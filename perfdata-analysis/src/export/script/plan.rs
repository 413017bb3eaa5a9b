//! What each event prints: perf's field table checked against the recording's events
//! (`perf_session__check_output_opt`, `evsel__check_attr`), done once before anything is
//! printed (and again when a pipe brings more events).

use super::fields::{bit, Field, FieldSpec, Fields, OutputType, TypeFields, TYPES};
use crate::BadOption;
use perfdata::tracepoint::Formats;
use perfdata::types::{FeatureId, SampleType};
use perfdata::PerfData;

/// An event as the printer sees it.
#[derive(Debug, Clone)]
pub(super) struct EventPlan {
    pub(super) ty: OutputType,
    pub(super) callchain: bool,
    pub(super) name: String,
}

/// The fields each output type prints once checked against the recording's events.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// Per output type (index of [`OutputType`] in perf's order).
    pub(super) fields: Vec<(OutputType, Fields)>,
    pub(super) events: Vec<EventPlan>,
    pub(super) use_callchain: bool,
    pub(super) name_width: usize,
}

impl Plan {
    /// Checks the fields against the recording's events, as perf does before it prints
    /// anything (`perf_session__check_output_opt`): a default field an event cannot give
    /// is dropped, a field asked for that it cannot give is an error.
    pub(super) fn new(
        fields: &FieldSpec,
        hide_call_graph: bool,
        data: &PerfData<'_>,
        events: &[String],
        formats: Option<&Formats>,
    ) -> Result<Plan, BadOption> {
        let attrs = &data.session.attrs;
        // A tracepoint the recording names by its type and config alone (no EVENT_DESC:
        // an old pipe) is named `system:event` from its format, as perf names it.
        let events: Vec<String> = attrs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let named = events.get(i).cloned().unwrap_or_default();
                let default = perfdata::events::default_event_name(a.attr.type_, a.attr.config);
                match formats {
                    Some(f) if a.attr.type_.0 == 2 && named == default => f
                        .get(a.attr.config as u16)
                        .map_or(named, |f| format!("{}:{}", f.system, f.name)),
                    _ => named,
                }
            })
            .collect();
        let events = &events[..];
        let pipe = data.header.is_none();
        let has_feature = |id: FeatureId| data.features.iter().any(|f| f.id == id);
        let has_stat = has_feature(FeatureId::STAT);
        let allow_user_set = has_feature(FeatureId::AUXTRACE);
        let has_traces = attrs.iter().any(|a| a.attr.type_.0 == 2);
        let callchain =
            |a: &perfdata::EventAttr<'_>| a.attr.sample_type.contains(SampleType::CALLCHAIN);
        let mut use_callchain = !hide_call_graph;
        if !pipe && !attrs.iter().any(callchain) {
            use_callchain = false;
        }
        let mut spec = fields.clone();
        for ty in TYPES {
            let first = attrs
                .iter()
                .position(|a| OutputType::of_attr_type(a.attr.type_.0) == ty);
            let tf = *spec.get(ty);
            let Some(i) = first else {
                if tf.user_set && !tf.wildcard_set && ty != OutputType::Synth {
                    return Err(BadOption::new(
                        "-F",
                        format!(
                            "{} events do not exist. Remove corresponding -F option to proceed.",
                            ty.name()
                        ),
                    ));
                }
                continue;
            };
            if tf.fields.0 == 0 || has_stat {
                continue;
            }
            let name = events.get(i).map_or("", String::as_str);
            let st = attrs[i].attr.sample_type;
            let tf = spec.get_mut(ty);
            check_attr(tf, st, name, has_traces, allow_user_set)?;
        }
        // Tracepoints print their call chains when they have one and -F left them alone.
        if use_callchain
            && !spec.get(OutputType::Tracepoint).user_set
            && attrs.iter().any(|a| a.attr.type_.0 == 2 && callchain(a))
        {
            let tf = spec.get_mut(OutputType::Tracepoint);
            for f in [Field::IP, Field::SYM, Field::SYMOFFSET, Field::DSO] {
                tf.fields.0 |= bit(f);
            }
        }
        Ok(Plan {
            fields: TYPES.iter().map(|&t| (t, spec.get(t).fields)).collect(),
            events: attrs
                .iter()
                .enumerate()
                .map(|(i, a)| EventPlan {
                    ty: OutputType::of_attr_type(a.attr.type_.0),
                    callchain: callchain(a),
                    name: events.get(i).cloned().unwrap_or_default(),
                })
                .collect(),
            use_callchain,
            name_width: events.iter().map(|e| e.len()).max().unwrap_or(0),
        })
    }

    pub(super) fn fields(&self, ty: OutputType) -> Fields {
        self.fields
            .iter()
            .find(|(t, _)| *t == ty)
            .map_or(Fields::default(), |(_, f)| *f)
    }
}

/// perf's `evsel__check_attr` for the first event of an output type.
fn check_attr(
    tf: &mut TypeFields,
    st: SampleType,
    evname: &str,
    has_traces: bool,
    allow_user_set: bool,
) -> Result<(), BadOption> {
    let bad = |m: String| Err(BadOption::new("-F", m));
    if tf.fields.has(Field::TRACE) && !has_traces {
        return bad("No trace sample to read. Did you call 'perf record -R'?".into());
    }
    let checks: &[(Field, SampleType, &str, bool)] = &[
        (Field::IP, SampleType::IP, "IP", false),
        (Field::ADDR, SampleType::ADDR, "ADDR", allow_user_set),
        (Field::DATA_SRC, SampleType::DATA_SRC, "DATA_SRC", false),
        (
            Field::WEIGHT,
            SampleType(SampleType::WEIGHT.0 | SampleType::WEIGHT_STRUCT.0),
            "WEIGHT",
            false,
        ),
    ];
    for &(field, bit, msg, allow) in checks {
        if tf.fields.has(field) {
            check_stype(tf, st, bit, msg, field, allow, evname)?;
        }
    }
    let addr_or_ip = SampleType(SampleType::IP.0 | SampleType::ADDR.0);
    if tf.fields.has(Field::SYM) && !st.intersects(addr_or_ip) {
        return bad("Display of symbols requested but neither sample IP nor sample address\navailable. Hence, no addresses to convert to symbols.".into());
    }
    if tf.fields.has(Field::SYMOFFSET) && !tf.fields.has(Field::SYM) {
        return bad("Display of offsets requested but symbol is notselected.".into());
    }
    if tf.fields.has(Field::DSO) && !st.intersects(addr_or_ip) {
        return bad("Display of DSO requested but no address to convert.".into());
    }
    if (tf.fields.has(Field::SRCLINE) || tf.fields.has(Field::SRCCODE)) && !tf.fields.has(Field::IP)
    {
        return bad("Display of source line number requested but sample IP is not\nselected. Hence, no address to lookup the source line number.".into());
    }
    if tf.fields.has(Field::PID) || tf.fields.has(Field::TID) {
        check_pair_tid(tf, st, evname)?;
    }
    let later: &[(Field, SampleType, &str, bool)] = &[
        (Field::TIME, SampleType::TIME, "TIME", false),
        (Field::CPU, SampleType::CPU, "CPU", allow_user_set),
        (Field::IREGS, SampleType::REGS_INTR, "IREGS", false),
        (Field::UREGS, SampleType::REGS_USER, "UREGS", false),
        (Field::PHYS_ADDR, SampleType::PHYS_ADDR, "PHYS_ADDR", false),
        (
            Field::DATA_PAGE_SIZE,
            SampleType::DATA_PAGE_SIZE,
            "DATA_PAGE_SIZE",
            false,
        ),
        (
            Field::CODE_PAGE_SIZE,
            SampleType::CODE_PAGE_SIZE,
            "CODE_PAGE_SIZE",
            false,
        ),
        (
            Field::INS_LAT,
            SampleType::WEIGHT_STRUCT,
            "WEIGHT_STRUCT",
            false,
        ),
    ];
    for &(field, bit, msg, allow) in later {
        if tf.fields.has(field) {
            check_stype(tf, st, bit, msg, field, allow, evname)?;
        }
    }
    Ok(())
}

fn check_pair_tid(tf: &mut TypeFields, st: SampleType, evname: &str) -> Result<(), BadOption> {
    if st.contains(SampleType::TID) {
        return Ok(());
    }
    let both = bit(Field::PID) | bit(Field::TID);
    if tf.user_fields.0 & both != 0 {
        return Err(BadOption::new(
            "-F",
            format!("Samples for '{evname}' event do not have TID attribute set. Cannot print '' field."),
        ));
    }
    tf.fields.0 &= !both;
    Ok(())
}

/// perf's `evsel__do_check_stype`.
fn check_stype(
    tf: &mut TypeFields,
    st: SampleType,
    wanted: SampleType,
    msg: &str,
    field: Field,
    allow_user_set: bool,
    evname: &str,
) -> Result<(), BadOption> {
    if st.intersects(wanted) {
        return Ok(());
    }
    if tf.user_fields.has(field) {
        if allow_user_set {
            return Ok(());
        }
        return Err(BadOption::new(
            "-F",
            format!(
                "Samples for '{evname}' event do not have {msg} attribute set. Cannot print '{}' field.",
                field.name()
            ),
        ));
    }
    tf.fields.0 &= !bit(field);
    Ok(())
}
