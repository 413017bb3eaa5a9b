//! The checks: each compares perf's view of a file (its text, parsed by `perf_text`) with
//! our decode (`ours` + `expect`) and returns pass / FAIL / skip.

use crate::expect;
use crate::facts::{compare, Facts, Mismatch, Val};
use crate::ours::{Decoded, OurRecord};
use crate::perf_text::{self, DumpRecord, Stamp};
use perfdata::types::{AttrType, RecordBody, RecordType};
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
                .contains(perfdata::types::SampleType::TIME);
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

/// A stamp as perf prints it.
fn stamp_text(s: &Stamp) -> String {
    match s {
        Stamp::NoSampleIdAll => "-1 -1".to_string(),
        Stamp::Values(v) => v.iter().map(u64::to_string).collect::<Vec<_>>().join(" "),
    }
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
                    .contains(perfdata::types::SampleType::RAW)
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
    let formats = crate::tracepoint::Formats::new(&td);
    let endian = formats.endian;
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
            match formats.format_of(raw) {
                Some(fmt) => {
                    let (p, o, s) = crate::tracepoint::trace_facts(&trace_text, raw, fmt, endian);
                    pf.extend(p);
                    of.extend(o);
                    skipped += s;
                }
                None => of.push(
                    "trace format",
                    format!("no format for common_type of {:02x?}", raw.get(..2)),
                ),
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

// ---------------------------------------------------------------------------------------
// 4. rewrite
// ---------------------------------------------------------------------------------------

/// The first offset where `a` and `b` differ (or where the shorter one ends).
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

/// The record of a stream that holds byte `at` (`base`: offset of `buf[0]`).
fn record_at(buf: &[u8], base: u64, at: u64, endian: perfdata::rt::Endianness) -> String {
    for (i, rec) in perfdata::RecordFramer::in_order(buf, base, endian).enumerate() {
        let Ok(rec) = rec else { break };
        let end = rec.offset + rec.stream_len() as u64;
        if (rec.offset..end).contains(&at) {
            return format!(
                "record #{i} {} at {:#x} (+{:#x})",
                perf_name(rec.record_type()),
                rec.offset,
                at - rec.offset
            );
        }
    }
    "after the last record".into()
}

/// Where byte `at` of an input is: header, attrs, which record, which feature. `stream`:
/// the input is a bare record stream (a `data.N` file) in that byte order.
pub fn locate(input: &[u8], stream: Option<perfdata::rt::Endianness>, at: u64) -> String {
    use perfdata::{Layout, PerfData};
    let records = |buf: &[u8], base: u64, endian| record_at(buf, base, at, endian);
    if let Some(endian) = stream {
        return records(input, 0, endian);
    }
    let Ok(data) = PerfData::open(input) else {
        return format!("byte {at:#x}");
    };
    let endian = data.format.endian;
    match (&data.header, data.format.layout) {
        (_, Layout::Pipe) if at < 16 => "the pipe header".into(),
        (Some(h), Layout::File) => {
            let within = |o: u64, s: u64| (o..o + s).contains(&at);
            if at < h.size {
                "the file header".into()
            } else if within(h.data.offset, h.data.size) {
                records(data.data(), data.data_offset(), endian)
            } else if within(h.attrs.offset, h.attrs.size) {
                "the attrs section".into()
            } else if let Some(f) = data.features.iter().find(|f| within(f.offset, f.size)) {
                format!("feature {:?} (+{:#x})", f.id, at - f.offset)
            } else if at < h.attrs.offset {
                "the attr ids".into()
            } else {
                "the feature table".into()
            }
        }
        _ => records(data.data(), data.data_offset(), endian),
    }
}

fn show_byte(b: &[u8], at: usize) -> String {
    b.get(at)
        .map_or("(end)".to_string(), |x| format!("{x:#04x}"))
}

/// Check 4: the writer's copy-through and typed rewrites of every stream of an input are
/// byte-identical to it.
pub fn check_rewrite(rewritten: &[crate::variants::Rewritten]) -> Outcome {
    let mut fails = vec![];
    let mut sizes = vec![];
    // data.N streams have the byte order of the directory's `data`.
    let endian = rewritten
        .first()
        .and_then(|r| perfdata::PerfData::open(&r.input).ok())
        .map_or(perfdata::rt::Endianness::Little, |d| d.format.endian);
    for r in rewritten {
        let name = if r.name.is_empty() {
            String::new()
        } else {
            format!("{}: ", r.name)
        };
        let stream = r.name.starts_with("data.").then_some(endian);
        for (how, out) in [("copy-through", &r.copy), ("typed rewrite", &r.typed)] {
            match out {
                Err(e) => fails.push(format!("{name}{how}: {e}")),
                Ok(out) => {
                    if let Some(at) = first_difference(&r.input, out) {
                        fails.push(format!(
                            "{name}{how}: differs from the input at byte {at:#x}, in {}: input {} vs output {} ({} bytes in, {} out)",
                            locate(&r.input, stream, at as u64),
                            show_byte(&r.input, at),
                            show_byte(out, at),
                            r.input.len(),
                            out.len()
                        ));
                    }
                }
            }
        }
        sizes.push(format!("{}{} bytes", name, r.input.len()));
    }
    if fails.is_empty() {
        let what = if rewritten.len() > 1 {
            " (`data` as a file; each data.N record stream re-encoded in the model of `data`)"
        } else {
            ""
        };
        Outcome::Pass(format!(
            "copy-through and typed rewrite byte-identical: {}{what}",
            sizes.join(", ")
        ))
    } else {
        Outcome::Fail(fails)
    }
}

// ---------------------------------------------------------------------------------------
// 5. perf reads what we write
// ---------------------------------------------------------------------------------------

/// How check 5 compares perf's output for one variant with its output for the original:
/// what legitimately differs for that variant, and only that, is left out.
#[derive(Debug, Clone, Default)]
pub struct ReadsNorm {
    /// The variant's name, for messages.
    pub label: String,
    /// Compare record offsets (the variant has the original's layout: copy, byte order).
    pub offsets: bool,
    /// Compare the records' bytes from perf's hex dumps (not across a byte-order change).
    pub hex: bool,
    /// The variant is the other byte order. perf 6.1 misses three swaps, and for each the
    /// original's text is replaced by what perf prints for the unswapped value:
    /// * `perf_event__mmap2_swap` does not swap MMAP2 `prot` and `flags`: every value the
    ///   kernel reports (PROT_* ≤ 7; MAP_* flags below 2^24) has, byte-swapped, none of
    ///   the bits perf tests, so it prints `---p`;
    /// * `perf_event__event_update_swap` swaps `type` and `id` only: the SCALE double is
    ///   printed byte-swapped (predicted from the record's bytes in perf's hex dump);
    /// * `perf_event__attr_swap` does not swap `sample_regs_intr`: the intr-regs mask is
    ///   printed byte-swapped, and the register names perf derives from it are wrong —
    ///   they are left out (the values are compared).
    pub swapped: bool,
    /// Compare as sorted lists (a `--threads` directory vs one file: delivery order
    /// differs).
    pub sorted: bool,
    /// Compare `perf script` lines as the values `perf_text::parse_script` reads with
    /// these fields, not as text (register names are not values: see `swapped`).
    pub script_fields: Option<Vec<&'static str>>,
    /// Further things left out, with the reason (for the pass message).
    pub notes: Vec<String>,
    /// Records perf prints for the original that the conversion legitimately removed, by
    /// position among the printed user-type records (type ≥ 64), with their type.
    pub only_original: Vec<(usize, u32)>,
    /// Records the conversion legitimately added, likewise.
    pub only_variant: Vec<(usize, u32)>,
}

impl ReadsNorm {
    /// What this comparison leaves out, for the pass message.
    pub fn left_out(&self) -> Vec<String> {
        let mut v = vec![];
        if !self.offsets {
            v.push("offsets".to_string());
        }
        if !self.hex {
            v.push("hex dumps (byte order)".to_string());
        }
        if self.swapped {
            v.push(
                "what perf 6.1 does not swap (MMAP2 prot/flags, EVENT_UPDATE scale, intr-regs mask: predicted; intr-reg names)"
                    .to_string(),
            );
        }
        if self.sorted {
            v.push("order".to_string());
        }
        if self.script_fields.is_some() {
            v.push("perf script compared as parsed values (register names left out)".to_string());
        }
        v.extend(self.notes.iter().cloned());
        let names = |x: &[(usize, u32)]| {
            let mut counts: Vec<(String, usize)> = vec![];
            for (_, t) in x {
                let n = perf_name(RecordType(*t));
                match counts.iter_mut().find(|c| c.0 == n) {
                    Some(c) => c.1 += 1,
                    None => counts.push((n, 1)),
                }
            }
            counts
                .iter()
                .map(|(n, c)| format!("{c} {n}"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        if !self.only_original.is_empty() {
            v.push(format!(
                "records only in the original: {}",
                names(&self.only_original)
            ));
        }
        if !self.only_variant.is_empty() {
            v.push(format!(
                "records only in the variant: {}",
                names(&self.only_variant)
            ));
        }
        v
    }
}

/// The MMAP2 text perf 6.1 prints for the byte-swapped file: prot/flags `---p`.
fn swapped_mmap2(rest: &str) -> String {
    match rest.find("]: ") {
        Some(at) if rest.len() >= at + 7 => {
            format!("{}]: ---p{}", &rest[..at], &rest[at + 7..])
        }
        _ => rest.to_string(),
    }
}

/// C's `%f` of a double.
fn c_f(x: f64) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else {
        format!("{x:.6}")
    }
}

/// The detail lines of a record as perf 6.1 prints them for the byte-swapped file
/// (`original`: these are the original's lines), see [`ReadsNorm::swapped`].
fn swapped_details(r: &DumpRecord, original: bool) -> Vec<String> {
    let mut out = vec![];
    let mut in_intr = false;
    for d in &r.details {
        if let Some(rest) = d.strip_prefix("... intr regs: mask ") {
            in_intr = true;
            let (mask, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            match (original, crate::facts::num(mask)) {
                (true, Some(m)) => out.push(format!(
                    "... intr regs: mask {:#x} {tail}",
                    (m as u64).swap_bytes()
                )),
                _ => out.push(d.clone()),
            }
            continue;
        }
        if in_intr {
            if let Some(reg) = d.strip_prefix(".... ") {
                let value = reg.split_whitespace().nth(1).unwrap_or("");
                out.push(format!(".... ? {value}"));
                continue;
            }
            in_intr = false;
        }
        if original && r.name == "EVENT_UPDATE" && d.starts_with("... scale:") {
            // perf_event__event_update_swap leaves the double as it is in the file.
            let bits = r
                .raw
                .as_deref()
                .and_then(|b| b.get(24..32))
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            match bits {
                Some(bits) => out.push(format!(
                    "... scale: {}",
                    c_f(f64::from_bits(bits.swap_bytes()))
                )),
                None => out.push(format!("{d} (not predicted: no hex dump)")),
            }
            continue;
        }
        out.push(d.clone());
    }
    out
}

/// One record of `perf report -D` as facts, offset / bytes as `norm` says.
fn dump_view(r: &DumpRecord, norm: &ReadsNorm, original: bool) -> Facts {
    let mut f = Facts::new();
    f.push("type", r.type_num.unwrap_or(u32::MAX));
    let rest = if original && norm.swapped && r.name == "MMAP2" {
        swapped_mmap2(&r.rest)
    } else {
        r.rest.clone()
    };
    let details = if norm.swapped {
        swapped_details(r, original)
    } else {
        r.details.clone()
    };
    f.push(
        "line",
        format!(
            "{} [{:#x}]: PERF_RECORD_{}{rest}",
            stamp_text(&r.stamp),
            r.size,
            r.name
        ),
    );
    if norm.offsets {
        f.push("offset", r.offset);
    }
    for d in details {
        f.push("detail", d);
    }
    if norm.hex {
        for (i, chunk) in r.raw.as_deref().unwrap_or(&[]).chunks(16).enumerate() {
            f.push(format!("bytes+{:#06x}", i * 16), hex(chunk));
        }
    }
    f
}

/// The printed records without the ones `drop` names (position among the user-type
/// records, type); a named record perf printed with another type is a mismatch.
fn without<'d>(
    dump: &'d [DumpRecord],
    drop: &[(usize, u32)],
    side: &str,
    label: &str,
    out: &mut Vec<String>,
) -> Vec<&'d DumpRecord> {
    let mut kept = vec![];
    let mut user = 0usize;
    let mut dropped = 0usize;
    let mut wrong = false;
    for r in dump {
        let ty = r.type_num.unwrap_or(0);
        if ty >= 64 {
            let at = user;
            user += 1;
            if let Some((_, want)) = drop.iter().find(|(p, _)| *p == at) {
                if *want == ty {
                    dropped += 1;
                    continue;
                }
                wrong = true;
                out.push(format!(
                    "{label}: the conversion's framing record (user record #{at}, {}) is, in perf's view of the {side}, a PERF_RECORD_{} (line {})",
                    perf_name(RecordType(*want)),
                    r.name,
                    r.line
                ));
            }
        }
        kept.push(r);
    }
    if dropped < drop.len() && !wrong {
        out.push(format!(
            "{label}: perf printed {dropped} of the {} framing records the conversion moved ({side})",
            drop.len()
        ));
    }
    kept
}

/// `perf report -D` of a variant vs the original's: the same records with the same
/// contents, in the same order. Returns the number of records that agreed.
pub fn compare_dumps(
    original: &str,
    variant: &str,
    norm: &ReadsNorm,
    out: &mut Vec<String>,
) -> usize {
    let label = &norm.label;
    let (o, v) = (
        perf_text::parse_dump(original),
        perf_text::parse_dump(variant),
    );
    let o = without(&o, &norm.only_original, "original", label, out);
    let v = without(&v, &norm.only_variant, "variant", label, out);
    let mut o: Vec<(&DumpRecord, Facts)> = o
        .into_iter()
        .map(|r| (r, dump_view(r, norm, true)))
        .collect();
    let mut v: Vec<(&DumpRecord, Facts)> = v
        .into_iter()
        .map(|r| (r, dump_view(r, norm, false)))
        .collect();
    if norm.sorted {
        let key = |x: &(&DumpRecord, Facts)| format!("{:?}", x.1.list);
        o.sort_by_key(key);
        v.sort_by_key(key);
    }
    if o.len() != v.len() {
        out.push(format!(
            "{label}: perf report -D printed {} records for the original, {} for the variant",
            o.len(),
            v.len()
        ));
    }
    let mut agreed = 0;
    for (i, ((or, of), (vr, vf))) in o.iter().zip(&v).enumerate() {
        let mut m = vec![];
        compare("", of, vf, &mut m);
        if m.is_empty() {
            agreed += 1;
            continue;
        }
        for m in m.iter().take(2) {
            let show = |x: &Option<Val>| x.as_ref().map_or("(absent)".to_string(), Val::to_string);
            out.push(format!(
                "{label}: perf report -D record #{i} PERF_RECORD_{} (original line {}, variant line {}) {}: original {} vs variant {}",
                or.name,
                or.line,
                vr.line,
                m.key,
                show(&m.perf),
                show(&m.ours)
            ));
        }
    }
    agreed
}

/// `perf script` of a variant vs the original's, line by line (sorted when `sorted`).
/// Returns the number of lines that agreed.
/// With `fields`, lines are compared as the values `perf_text::parse_script` reads.
pub fn compare_scripts(
    what: &str,
    original: &str,
    variant: &str,
    fields: Option<&[&'static str]>,
    norm: &ReadsNorm,
    out: &mut Vec<String>,
) -> usize {
    let (sorted, label) = (norm.sorted, norm.label.as_str());
    if let Some(fields) = fields {
        let (o, ou) = perf_text::parse_script(original, fields);
        let (v, vu) = perf_text::parse_script(variant, fields);
        for u in ou.iter().chain(&vu).take(2) {
            out.push(format!(
                "{label}: {what}: a line the suite does not understand: {u}"
            ));
        }
        if o.len() != v.len() {
            out.push(format!(
                "{label}: {what} printed {} samples for the original, {} for the variant",
                o.len(),
                v.len()
            ));
        }
        let mut agreed = 0;
        for (a, b) in o.iter().zip(&v) {
            let mut m = vec![];
            compare("", &a.facts, &b.facts, &mut m);
            if m.is_empty() {
                agreed += 1;
            }
            for m in m.iter().take(2) {
                let show =
                    |x: &Option<Val>| x.as_ref().map_or("(absent)".to_string(), Val::to_string);
                out.push(format!(
                    "{label}: {what}: original line {} vs variant line {}: {} original {} vs variant {}",
                    a.line,
                    b.line,
                    m.key,
                    show(&m.perf),
                    show(&m.ours)
                ));
            }
        }
        return agreed;
    }
    let mut o: Vec<(usize, &str)> = original
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    let mut v: Vec<(usize, &str)> = variant
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    if sorted {
        o.sort_by_key(|x| x.1);
        v.sort_by_key(|x| x.1);
    }
    if o.len() != v.len() {
        out.push(format!(
            "{label}: {what} printed {} lines for the original, {} for the variant",
            o.len(),
            v.len()
        ));
    }
    let mut agreed = 0;
    for ((ol, a), (vl, b)) in o.iter().zip(&v) {
        if a == b {
            agreed += 1;
        } else {
            out.push(format!(
                "{label}: {what}: original line {ol} {a:?} vs variant line {vl} {b:?}"
            ));
        }
    }
    agreed
}

/// perf's output for one file: `perf report -D`, and the `perf script` runs of its plan.
#[derive(Debug, Clone, Default)]
pub struct ReadsView {
    pub dump: String,
    pub script: Option<String>,
    pub trace: Option<String>,
}

/// Check 5 for one variant: perf's output for it equals perf's output for the original,
/// up to what `norm` leaves out.
pub fn check_variant(original: &ReadsView, variant: &ReadsView, norm: &ReadsNorm) -> Outcome {
    let mut out = vec![];
    let records = compare_dumps(&original.dump, &variant.dump, norm, &mut out);
    let mut lines = 0;
    for (what, o, v, fields) in [
        (
            "perf script",
            &original.script,
            &variant.script,
            norm.script_fields.as_deref(),
        ),
        ("perf script (trace)", &original.trace, &variant.trace, None),
    ] {
        match (o, v) {
            (Some(o), Some(v)) => lines += compare_scripts(what, o, v, fields, norm, &mut out),
            (None, None) => {}
            _ => out.push(format!("{}: {what} run on one side only", norm.label)),
        }
    }
    if out.is_empty() {
        let left_out = norm.left_out();
        let left_out = if left_out.is_empty() {
            String::new()
        } else {
            format!("; left out: {}", left_out.join(", "))
        };
        Outcome::Pass(format!("{records} records, {lines} script lines{left_out}"))
    } else {
        let n = out.len();
        out.truncate(SHOW);
        out.push(format!(
            "({n} differences; {records} records and {lines} script lines agree)"
        ));
        Outcome::Fail(out)
    }
}

/// Check 5 over all variants of an input: FAIL if one fails, skip if none could be
/// compared, pass otherwise (saying what was compared and what was skipped, and why).
pub fn combine_variants(results: &[(String, Outcome)]) -> Outcome {
    let mut fails = vec![];
    let mut passed = vec![];
    // (reason, variants), in order.
    let mut skipped: Vec<(String, Vec<&str>)> = vec![];
    for (name, o) in results {
        match o {
            Outcome::Fail(lines) => fails.extend(lines.iter().map(|l| {
                if l.starts_with(name.as_str()) {
                    l.clone()
                } else {
                    format!("{name}: {l}")
                }
            })),
            Outcome::Pass(what) => passed.push(format!("{name} ({what})")),
            Outcome::Skip(why) => match skipped.iter_mut().find(|(w, _)| w == why) {
                Some((_, names)) => names.push(name),
                None => skipped.push((why.clone(), vec![name])),
            },
        }
    }
    let skipped: Vec<String> = skipped
        .iter()
        .map(|(why, names)| format!("{}: {why}", names.join(", ")))
        .collect();
    if !fails.is_empty() {
        return Outcome::Fail(fails);
    }
    if passed.is_empty() {
        return Outcome::Skip(skipped.join("; "));
    }
    let mut text = format!("perf reads as the original: {}", passed.join(", "));
    if !skipped.is_empty() {
        text.push_str(&format!("; not compared: {}", skipped.join("; ")));
    }
    Outcome::Pass(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, rest: &str, details: &[&str], raw: Option<Vec<u8>>) -> DumpRecord {
        DumpRecord {
            line: 1,
            path: None,
            type_num: Some(0),
            stamp: Stamp::Values(vec![]),
            offset: 0,
            size: 0,
            name: name.into(),
            rest: rest.into(),
            details: details.iter().map(|d| d.to_string()).collect(),
            raw,
        }
    }

    #[test]
    fn what_perf_6_1_prints_for_a_byte_swapped_file() {
        let m = record(
            "MMAP2",
            " 1/1: [0x1(0x2) @ 0 fe:00 3 0]: r-xp /bin/sh",
            &[],
            None,
        );
        assert_eq!(
            swapped_mmap2(&m.rest),
            " 1/1: [0x1(0x2) @ 0 fe:00 3 0]: ---p /bin/sh"
        );
        // EVENT_UPDATE SCALE: header, type, id, then the double (1e-6 here).
        let mut raw = vec![0u8; 24];
        raw.extend_from_slice(&1e-6f64.to_bits().to_le_bytes());
        let u = record(
            "EVENT_UPDATE",
            "",
            &["... id:    5", "... scale: 0.000001"],
            Some(raw),
        );
        assert_eq!(
            swapped_details(&u, true),
            ["... id:    5", "... scale: -0.000000"]
        );
        assert_eq!(swapped_details(&u, false)[1], "... scale: 0.000001");
        let r = record(
            "SAMPLE",
            "",
            &[
                "... intr regs: mask 0x181 ABI 64-bit",
                ".... AX    0x0000000000000043",
                ".... SP    0x00007ffe84da7b38",
                "... user regs: mask 0x3 ABI 64-bit",
                ".... AX    0x0000000000000001",
            ],
            None,
        );
        assert_eq!(
            swapped_details(&r, true),
            [
                "... intr regs: mask 0x8101000000000000 ABI 64-bit",
                ".... ? 0x0000000000000043",
                ".... ? 0x00007ffe84da7b38",
                "... user regs: mask 0x3 ABI 64-bit",
                ".... AX    0x0000000000000001",
            ]
        );
        assert_eq!(c_f(f64::NAN), "nan");
        assert_eq!(c_f(2.5), "2.500000");
    }
}
