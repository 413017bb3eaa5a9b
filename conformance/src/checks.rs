//! The checks: each compares perf's view of a file (its text, parsed by `perf_text`) with
//! our decode (`ours` + `expect`) and returns pass / FAIL / skip.

use crate::expect;
use crate::facts::{compare, Facts, Mismatch, Val};
use crate::ours::{Decoded, OurRecord};
use crate::perf_text::{self, DumpRecord, Stamp};
use perfdata::generated::perf_data::{AttrType, RecordBody, RecordType};
use std::collections::HashMap;
use std::fmt;

/// How many mismatches a failure shows.
pub const SHOW: usize = 6;

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Passed; what was compared.
    Pass(String),
    /// Failed; the first mismatches (and a count line).
    Fail(Vec<String>),
    /// Not run; why.
    Skip(String),
}

impl Outcome {
    pub fn is_fail(&self) -> bool {
        matches!(self, Outcome::Fail(_))
    }

    /// The table cell.
    pub fn cell(&self) -> String {
        match self {
            Outcome::Pass(_) => "pass".into(),
            Outcome::Fail(_) => "FAIL".into(),
            Outcome::Skip(why) => format!("skip({why})"),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pass(what) => write!(f, "pass: {what}"),
            Outcome::Fail(lines) => write!(f, "FAIL: {}", lines.join("\n      ")),
            Outcome::Skip(why) => write!(f, "skip: {why}"),
        }
    }
}

/// Turns mismatches (and lines perf printed that no parser understood) into an outcome.
fn outcome(agreed: usize, what: &str, mismatches: &[Mismatch], unparsed: &[String]) -> Outcome {
    if mismatches.is_empty() && unparsed.is_empty() {
        return Outcome::Pass(format!("{agreed} {what} agree"));
    }
    let mut lines: Vec<String> = mismatches
        .iter()
        .take(SHOW)
        .map(|m| m.to_string())
        .collect();
    lines.extend(
        unparsed
            .iter()
            .take(SHOW.saturating_sub(lines.len()).max(1))
            .map(|u| format!("perf printed a line the suite does not understand: {u}")),
    );
    lines.push(format!(
        "({} mismatches, {} unparsed lines, {agreed} {what} agree)",
        mismatches.len(),
        unparsed.len()
    ));
    Outcome::Fail(lines)
}

// ---------------------------------------------------------------------------------------
// 1. header
// ---------------------------------------------------------------------------------------

/// Check 1: every value `perf report --header-only -I` prints equals our decoded value,
/// and every value we expect perf to print is there.
pub fn check_header(perf: &str, d: &Decoded) -> (Outcome, Vec<String>) {
    let parsed = perf_text::parse_header(perf);
    let mut notes = vec![];
    let ours = expect::header_facts(d, &mut notes);
    let mut mismatches = vec![];
    let agreed = compare("", &parsed.facts, &ours, &mut mismatches);
    (
        outcome(agreed, "header values", &mismatches, &parsed.unparsed),
        notes,
    )
}

// ---------------------------------------------------------------------------------------
// 2. records
// ---------------------------------------------------------------------------------------

/// perf's name for a record type (`perf_event__name`): ours without `HEADER_`.
fn perf_name(ty: RecordType) -> String {
    ty.name()
        .map(|n| n.strip_prefix("HEADER_").unwrap_or(n).to_string())
        .unwrap_or_else(|| format!("{}", ty.0))
}

type Key = (String, u64, u64, u32);

fn stream_of(d: &Decoded, r: &DumpRecord) -> String {
    if !d.directory {
        return String::new();
    }
    r.path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .unwrap_or("")
        .to_string()
}

fn stamp_time(s: &Stamp, d: &Decoded) -> Option<u64> {
    match s {
        Stamp::Values(v) if !v.is_empty() => {
            let has_time = d
                .combined_sample_type(d.attrs.len())
                .contains(perfdata::generated::perf_data::SampleType::TIME);
            has_time.then(|| *v.last().expect("non-empty"))
        }
        _ => None,
    }
}

/// Check 2: the records `perf report -D` prints are exactly ours — same (stream, offset,
/// size, type) — and every value perf prints for a record equals our decode. perf prints
/// records in delivery (time) order, so they are matched by where they are: by offset,
/// and for records decompressed from a COMPRESSED record (perf prints the compressed
/// record's offset for all of them) by offset, size, type and time. COMPRESSED records
/// themselves are not printed by perf and are not compared. When perf's output has hex
/// dumps (live runs), each record's bytes are compared too.
pub fn check_records(perf: &str, d: &Decoded) -> (Outcome, Vec<String>) {
    let mut notes = vec![];
    let dump = perf_text::parse_dump(perf);
    let mut mismatches = vec![];
    let mut unparsed = vec![];
    let mut agreed = 0usize;
    for e in &d.errors {
        mismatches.push(Mismatch {
            at: "stream".into(),
            key: "walk".into(),
            perf: None,
            ours: Some(Val::Text(e.clone())),
        });
    }
    let ours: Vec<&OurRecord> = d
        .records
        .iter()
        .filter(|r| r.type_ != RecordType::COMPRESSED && r.type_ != RecordType::COMPRESSED2)
        .collect();
    let mut by_key: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, r) in ours.iter().enumerate() {
        by_key
            .entry((r.stream.clone(), r.offset, u64::from(r.size), r.type_.0))
            .or_default()
            .push(i);
    }
    let mut used = vec![false; ours.len()];
    let mut not_compared: HashMap<String, usize> = HashMap::new();
    for p in &dump {
        let ty = p.type_num.unwrap_or(u32::MAX);
        let key = (stream_of(d, p), p.offset, p.size, ty);
        let at = format!(
            "record {}{:#x} {}",
            p.path.as_deref().map_or(String::new(), |s| format!("{s}@")),
            p.offset,
            p.name
        );
        let candidates = by_key.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let ptime = stamp_time(&p.stamp, d);
        let pick = candidates
            .iter()
            .copied()
            .filter(|&i| !used[i])
            .find(|&i| match (ptime, expect::expected_stamp(d, ours[i])) {
                (Some(t), Stamp::Values(v)) => v.last() == Some(&t),
                _ => true,
            })
            .or_else(|| candidates.iter().copied().find(|&i| !used[i]));
        let Some(i) = pick else {
            mismatches.push(Mismatch {
                at,
                key: "record (stream, offset, size, type)".into(),
                perf: Some(Val::Text(format!("{key:?}"))),
                ours: None,
            });
            continue;
        };
        used[i] = true;
        let r = ours[i];
        agreed += 4; // stream, offset, size, type
        let mut pf = Facts::new();
        let mut of = Facts::new();
        pf.push("name", p.name.clone());
        of.push("name", perf_name(r.type_));
        let stamp_text = |s: &Stamp| match s {
            Stamp::NoSampleIdAll => "-1 -1".to_string(),
            Stamp::Values(v) => v.iter().map(u64::to_string).collect::<Vec<_>>().join(" "),
        };
        pf.push("cpu/time", stamp_text(&p.stamp));
        of.push("cpu/time", stamp_text(&expect::expected_stamp(d, r)));
        if let Some(raw) = &p.raw {
            pf.push("bytes", hex(raw));
            of.push("bytes", hex(&r.bytes));
        }
        let (perf_facts, bad) = perf_text::dump_record_facts(p);
        for b in bad {
            if b.ends_with("values not compared (no parser)") {
                *not_compared.entry(p.name.clone()).or_default() += 1;
            } else {
                unparsed.push(format!("{at}: {b}"));
            }
        }
        pf.extend(perf_facts);
        match expect::record_facts(d, r) {
            Some(f) => of.extend(f),
            None => {
                of.push(
                    "decode",
                    format!(
                        "error: {}",
                        r.body.as_ref().err().cloned().unwrap_or_default()
                    ),
                );
            }
        }
        agreed += compare(&at, &pf, &of, &mut mismatches);
    }
    for (i, r) in ours.iter().enumerate() {
        if !used[i] {
            mismatches.push(Mismatch {
                at: format!("record {}", r.place()),
                key: "record (stream, offset, size, type)".into(),
                perf: None,
                ours: Some(Val::Text(format!(
                    "({:?}, {:#x}, {:#x}, {} {})",
                    r.stream,
                    r.offset,
                    r.size,
                    r.type_.0,
                    perf_name(r.type_)
                ))),
            });
        }
    }
    let mut nc: Vec<_> = not_compared.into_iter().collect();
    nc.sort();
    for (name, n) in nc {
        notes.push(format!(
            "{n} {name} records: values not compared (no parser)"
        ));
    }
    if dump.iter().all(|r| r.raw.is_none()) {
        notes.push("record bytes not compared (perf output without hex dumps)".into());
    }
    let what = format!("values of {} records", dump.len());
    (outcome(agreed, &what, &mismatches, &unparsed), notes)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------------------------------
// 3. samples
// ---------------------------------------------------------------------------------------

/// What `perf script` runs are needed for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptPlan {
    /// No sampling events, no stat data.
    Nothing,
    /// `perf stat record` data: perf script prints the counts.
    Stat,
    /// Samples: `-F <fields> --ns -G`, and a second run for tracepoint fields.
    Samples {
        fields: Vec<&'static str>,
        trace: Option<Vec<&'static str>>,
    },
}

impl ScriptPlan {
    /// The plan for a decoded file.
    pub fn for_file(d: &Decoded) -> ScriptPlan {
        let has_samples = d.records.iter().any(|r| r.type_ == RecordType::SAMPLE);
        let has_stat = d.records.iter().any(|r| r.type_ == RecordType::STAT);
        if !has_samples {
            return if has_stat {
                ScriptPlan::Stat
            } else {
                ScriptPlan::Nothing
            };
        }
        let fields = expect::script_fields(d);
        let tracepoint = d.attrs.iter().any(|a| {
            a.attr.type_ == AttrType::TRACEPOINT
                && a.attr
                    .sample_type
                    .contains(perfdata::generated::perf_data::SampleType::RAW)
        });
        let trace = tracepoint.then(|| {
            let mut t: Vec<&'static str> = fields
                .iter()
                .copied()
                .filter(|f| matches!(*f, "pid" | "tid" | "cpu" | "time" | "event"))
                .collect();
            t.push("trace");
            t
        });
        ScriptPlan::Samples { fields, trace }
    }

    /// `perf script` arguments of the main run.
    pub fn args(&self) -> Vec<String> {
        match self {
            ScriptPlan::Nothing | ScriptPlan::Stat => vec![],
            ScriptPlan::Samples { fields, .. } => script_args(fields),
        }
    }

    /// `perf script` arguments of the tracepoint run.
    pub fn trace_args(&self) -> Option<Vec<String>> {
        match self {
            ScriptPlan::Samples { trace: Some(t), .. } => Some(script_args(t)),
            _ => None,
        }
    }
}

fn script_args(fields: &[&str]) -> Vec<String> {
    vec![
        "-F".into(),
        fields.join(","),
        "--ns".into(),
        "--hide-call-graph".into(),
    ]
}

/// Matches perf's lines with ours: in order, except that lines with the same time may be
/// in any order (perf's sort is by time only).
fn match_lines(
    perf: &[(usize, Facts)],
    ours: &[Facts],
    at_prefix: &str,
    mismatches: &mut Vec<Mismatch>,
) -> usize {
    let mut agreed = 0;
    if perf.len() != ours.len() {
        mismatches.push(Mismatch {
            at: at_prefix.into(),
            key: "number of samples".into(),
            perf: Some(Val::from(perf.len() as u64)),
            ours: Some(Val::from(ours.len() as u64)),
        });
    }
    let time_of = |f: &Facts| {
        f.list
            .iter()
            .find(|x| x.key == "time")
            .map(|x| x.val.clone())
    };
    let mut used = vec![false; ours.len()];
    let mut next = 0usize;
    for (line, pf) in perf {
        while next < ours.len() && used[next] {
            next += 1;
        }
        // Same-time candidates from `next` on.
        let t = time_of(pf);
        let mut pick = None;
        let mut j = next;
        while j < ours.len() && t.is_some() && time_of(&ours[j]) == t {
            if !used[j] && ours[j].list == pf.list {
                pick = Some(j);
                break;
            }
            j += 1;
        }
        let pick = pick.or((next < ours.len()).then_some(next));
        let Some(i) = pick else {
            mismatches.push(Mismatch {
                at: format!("{at_prefix} line {line}"),
                key: "sample".into(),
                perf: Some(Val::Text("a sample".into())),
                ours: None,
            });
            continue;
        };
        used[i] = true;
        // Keys we cannot derive from the file (see `expect::script_facts`) are dropped
        // from perf's side too.
        let mut pf = pf.clone();
        for optional in ["event"] {
            if !ours[i].list.iter().any(|f| f.key == optional) {
                pf.list.retain(|f| f.key != optional);
            }
        }
        let at = format!("{at_prefix} line {line}");
        agreed += compare(&at, &pf, &ours[i], mismatches);
    }
    agreed
}

/// Check 3: `perf script` output, sample by sample, equals our decode. `script` is the
/// main run's output, `trace` the tracepoint run's (when the plan has one).
pub fn check_samples(
    plan: &ScriptPlan,
    script: &str,
    trace: Option<&str>,
    d: &Decoded,
) -> (Outcome, Vec<String>) {
    let mut notes = vec![];
    let mut mismatches = vec![];
    let names = d.event_names();
    match plan {
        ScriptPlan::Nothing => (Outcome::Skip("no samples".into()), notes),
        ScriptPlan::Stat => {
            let (lines, bad) = perf_text::parse_stat_script(script);
            let mut perf: Vec<(usize, Facts)> =
                lines.into_iter().map(|l| (l.line, l.facts)).collect();
            let mut ours = stat_lines(d, &names);
            let key = |f: &Facts| format!("{:?}", f.list);
            perf.sort_by_key(|(_, f)| key(f));
            ours.sort_by_key(key);
            let agreed = match_lines(&perf, &ours, "stat", &mut mismatches);
            notes.push("stat counts compared as sorted sets".into());
            (outcome(agreed, "stat values", &mismatches, &bad), notes)
        }
        ScriptPlan::Samples { fields, trace: tf } => {
            let (lines, bad) = perf_text::parse_script(script, fields);
            let perf: Vec<(usize, Facts)> = lines.into_iter().map(|l| (l.line, l.facts)).collect();
            let samples = expect::script_samples(d);
            let ours: Vec<Facts> = samples
                .iter()
                .map(|s| expect::script_facts(&names, s, fields))
                .collect();
            let mut agreed = match_lines(&perf, &ours, "script", &mut mismatches);
            let mut unparsed = bad;
            if let (Some(tf), Some(text)) = (tf, trace) {
                let (a, u) =
                    check_trace(tf, text, d, &names, &samples, &mut mismatches, &mut notes);
                agreed += a;
                unparsed.extend(u);
            }
            notes.push(format!("perf script {}", plan.args().join(" ")));
            notes.push(
                "callchains are compared raw in check 2 (perf script prints them resolved)".into(),
            );
            let what = format!("values of {} samples", ours.len());
            (outcome(agreed, &what, &mismatches, &unparsed), notes)
        }
    }
}

fn check_trace(
    fields: &[&'static str],
    text: &str,
    d: &Decoded,
    names: &[Option<String>],
    samples: &[expect::ScriptSample<'_>],
    mismatches: &mut Vec<Mismatch>,
    notes: &mut Vec<String>,
) -> (usize, Vec<String>) {
    let Some(td) = d.tracing_data() else {
        mismatches.push(Mismatch {
            at: "trace".into(),
            key: "tracing data".into(),
            perf: Some(Val::Text("present".into())),
            ours: None,
        });
        return (0, vec![]);
    };
    let formats = crate::tracepoint::formats(&td);
    let big = td.big_endian != 0;
    let (lines, bad) = perf_text::parse_script(text, fields);
    let tp: Vec<&expect::ScriptSample<'_>> = samples
        .iter()
        .filter(|s| matches!(&s.record.body, Ok(RecordBody::Sample(x)) if x.raw.is_some()))
        .collect();
    let mut perf = vec![];
    let mut ours = vec![];
    let mut skipped = 0;
    for (n, l) in lines.iter().enumerate() {
        let mut pf = Facts::new();
        let mut trace_text = String::new();
        for f in &l.facts.list {
            if f.key == "trace" {
                if let Val::Text(t) = &f.val {
                    trace_text = t.clone();
                }
            } else {
                pf.push(f.key.clone(), f.val.clone());
            }
        }
        let mut of = tp
            .get(n)
            .map(|s| expect::script_facts(names, s, fields))
            .unwrap_or_default();
        if let Some(Ok(RecordBody::Sample(s))) = tp.get(n).map(|s| &s.record.body) {
            let raw = s.raw.as_ref().map(|r| r.data.as_slice()).unwrap_or(&[]);
            let id = raw.get(..2).map(|b| {
                if big {
                    u16::from_be_bytes([b[0], b[1]])
                } else {
                    u16::from_le_bytes([b[0], b[1]])
                }
            });
            match id.and_then(|id| formats.get(&id)) {
                Some(fmt) => {
                    let (p, o, s) = crate::tracepoint::trace_facts(&trace_text, raw, fmt, big);
                    pf.extend(p);
                    of.extend(o);
                    skipped += s;
                }
                None => of.push("trace format", format!("no format for id {id:?}")),
            }
        }
        perf.push((l.line, pf));
        ours.push(of);
    }
    while ours.len() < tp.len() {
        ours.push(Facts::new());
    }
    notes.push(format!(
        "tracepoint fields: {skipped} values perf prints through print helpers not compared"
    ));
    (match_lines(&perf, &ours, "trace", mismatches), bad)
}

/// `perf script` of stat data, from our STAT / STAT_ROUND / CPU_MAP / THREAD_MAP records.
fn stat_lines(d: &Decoded, names: &[Option<String>]) -> Vec<Facts> {
    let mut cpus: Vec<i64> = vec![];
    let mut threads: Vec<i64> = vec![];
    let mut pending: Vec<Facts> = vec![];
    let mut out = vec![];
    for r in &d.records {
        match &r.body {
            Ok(RecordBody::CpuMap(m)) => {
                cpus = expect::cpu_map_cpus(&m.data);
                cpus.sort_unstable();
            }
            Ok(RecordBody::ThreadMap(t)) => {
                threads = t.entries.iter().map(|e| i64::from(e.pid as i32)).collect();
            }
            Ok(RecordBody::Stat(s)) => {
                let mut f = Facts::new();
                f.push("cpu", cpus.get(s.cpu as usize).copied().unwrap_or(-1));
                f.push(
                    "thread",
                    threads.get(s.thread as usize).copied().unwrap_or(-1),
                );
                f.push("val", s.val);
                f.push("ena", s.ena);
                f.push("run", s.run);
                let event = d
                    .attrs
                    .iter()
                    .position(|a| a.ids.contains(&s.id))
                    .and_then(|i| names.get(i).cloned().flatten())
                    .unwrap_or_else(|| "[unknown]".into());
                f.push("event", event);
                pending.push(f);
            }
            Ok(RecordBody::StatRound(sr)) => {
                for p in pending.drain(..) {
                    let mut f = Facts::new();
                    for x in p.list {
                        if x.key == "event" {
                            f.push("time", sr.time);
                        }
                        f.push(x.key, x.val);
                    }
                    out.push(f);
                }
            }
            _ => {}
        }
    }
    out
}
