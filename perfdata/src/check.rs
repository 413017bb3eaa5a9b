//! Validating a perf.data input: every problem, where it is, and whether the file is
//! still readable (what `perfdata check` prints).
//!
//! Problems found: the input cannot be opened (header, attrs); damaged feature sections
//! and a cut feature table; damaged records (framing or body) — the walk salvages past
//! them, so every one is listed; records past the data section (a recording that never
//! finished); record types the spec does not know; attrs without ids when there are
//! several (their records cannot be told apart); records naming an id no attr has;
//! records delivered out of time order at a FINISHED_ROUND (perf's "out of order
//! events"); sections that overlap; bytes after the last section.

use crate::container::{
    Damage, Origin, PerfData, RawRecord, RecordCtx, RecordWalk, Recording, Recovery,
};
use crate::generated::perf_data::RecordType;
use crate::rt::{Error, ErrorKind};
use crate::write::Placement;
use std::collections::BTreeMap;

/// What kind of problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The header or attrs cannot be read: nothing else can be.
    Unreadable,
    /// A feature section that does not decode, lies outside the file, or is missing
    /// from a feature table cut short. Features are metadata: the records still read.
    DamagedFeature,
    /// A record whose framing or body does not decode; the walk salvages past it, so
    /// each one is listed.
    DamagedRecord,
    /// Records run past the data section the header declares.
    RecordOutsideData,
    /// Records of a type the spec does not describe: kept as bytes, never decoded (one
    /// problem per type, with the count and the first offset).
    UnknownRecordType,
    /// An attr with no sample ids in a recording with several attrs: nothing tells its
    /// records from the other attrs', so they may be decoded with the wrong layout.
    AttrWithoutIds,
    /// Records whose sample id no attr has.
    RecordWithoutAttr,
    /// Records arriving after a FINISHED_ROUND flushed a later time.
    UnsortedRound,
    /// Sections that overlap (or lie outside the file): readable, but no writer that
    /// computes offsets reproduces them.
    SectionLayout,
    /// Bytes after the last section of a file, or after the last record of a stream
    /// (text a tool appended): no reader looks at them.
    TrailingBytes,
}

/// One problem: where it is and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// What kind of problem; an [`Unreadable`](ProblemKind::Unreadable) one makes the
    /// whole verdict unreadable ([`Report::status`]).
    pub kind: ProblemKind,
    /// Absolute byte offset, when known.
    pub offset: Option<u64>,
    /// The record (`record #12 SAMPLE`), feature (`feature 8 CPUDESC`) or part.
    pub place: String,
    /// The field path inside it, when known.
    pub field: String,
    /// What the format allows there (`a record size of at least 8`, `16 bytes`), when
    /// the problem is a value or a length; `None` otherwise.
    pub expected: Option<String>,
    /// What the input holds instead (`3`, `5 bytes`), alongside
    /// [`expected`](Problem::expected).
    pub found: Option<String>,
    /// The whole message.
    pub message: String,
}

impl Problem {
    fn new(kind: ProblemKind, offset: Option<u64>, place: impl Into<String>, msg: String) -> Self {
        Problem {
            kind,
            offset,
            place: place.into(),
            field: String::new(),
            expected: None,
            found: None,
            message: msg,
        }
    }

    fn from_error(kind: ProblemKind, e: &Error) -> Self {
        let place = match (e.record(), e.feature()) {
            (Some((i, t)), _) => format!("record #{i} {t}"),
            (None, Some(f)) => format!("feature {f}"),
            (None, None) => String::new(),
        };
        let (expected, found) = match e.kind() {
            ErrorKind::Invalid { expected, found } => (Some(expected.clone()), Some(found.clone())),
            ErrorKind::UnexpectedEnd { needed, available } => (
                Some(format!("{needed} bytes")),
                Some(format!("{available} bytes")),
            ),
            _ => (None, None),
        };
        Problem {
            kind,
            offset: e.offset(),
            place,
            field: e.path_string(),
            expected,
            found,
            message: e.to_string(),
        }
    }
}

/// The verdict, as `perfdata check`'s exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No problem (exit 0).
    Clean,
    /// Problems, but everything else reads (exit 1).
    Damaged,
    /// Cannot be read at all (exit 2).
    Unreadable,
}

impl Status {
    /// The exit status `perfdata check` ends with: 0 clean, 1 damaged, 2 unreadable.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Clean => 0,
            Status::Damaged => 1,
            Status::Unreadable => 2,
        }
    }
}

/// Everything [`check_recording`] / [`check_bytes`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Every problem found, in the order checked: features, attrs, records in walk
    /// order (main file, then each `data.N` stream), then per-type and whole-file
    /// summaries (unknown types, records without attr, rounds, sections).
    pub problems: Vec<Problem>,
    /// Records read (those inside compressed records included).
    pub records: u64,
}

impl Report {
    /// The verdict: [`Status::Unreadable`] when any problem is
    /// [`ProblemKind::Unreadable`], else clean or damaged by whether there are problems.
    pub fn status(&self) -> Status {
        if self
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Unreadable)
        {
            Status::Unreadable
        } else if self.problems.is_empty() {
            Status::Clean
        } else {
            Status::Damaged
        }
    }

    fn unreadable(e: &Error) -> Self {
        Report {
            problems: vec![],
            records: 0,
        }
        .with_open_error(e)
    }

    /// This report with `e` (the input could not be opened) as an [`ProblemKind::Unreadable`]
    /// problem.
    pub fn with_open_error(mut self, e: &Error) -> Self {
        self.problems
            .push(Problem::from_error(ProblemKind::Unreadable, e));
        self
    }
}

/// Checks a whole input held in memory (file or pipe layout).
pub fn check_bytes(bytes: &[u8]) -> Report {
    match PerfData::open(bytes) {
        Ok(data) => check_data(&data, &[]),
        Err(e) => Report::unreadable(&e),
    }
}

/// Checks a recording on disk (a file, or a `--threads` directory with its streams).
pub fn check_recording(recording: &Recording) -> Report {
    match recording.data() {
        Ok(data) => {
            let streams: Vec<&[u8]> = recording.streams_bytes().collect();
            check_data(&data, &streams)
        }
        Err(e) => Report::unreadable(&e),
    }
}

fn check_data(data: &PerfData<'_>, streams: &[&[u8]]) -> Report {
    let mut problems: Vec<Problem> = data
        .feature_problems()
        .iter()
        .map(|e| Problem::from_error(ProblemKind::DamagedFeature, e))
        .collect();
    let attrs = &data.session.attrs;
    if attrs.len() > 1 {
        for (i, _) in attrs.iter().enumerate().filter(|(_, a)| a.ids.is_empty()) {
            problems.push(Problem::new(
                ProblemKind::AttrWithoutIds,
                None,
                format!("attr {i}"),
                format!(
                    "attr {i} has no ids: with {} attrs, its records cannot be told from the others'",
                    attrs.len()
                ),
            ));
        }
    }
    if data.unfinished {
        problems.push(Problem::new(
            ProblemKind::RecordOutsideData,
            Some(40),
            "header",
            format!(
                "the header's data section has size 0 (the recording never finished): the records from {:#x} to the end of the file were read",
                data.data_offset()
            ),
        ));
    }
    let mut walk = Walk::default();
    let data_end = data.data_offset() + data.data().len() as u64;
    let mut records = data.records().salvaging();
    let salvaged = records
        .for_each(|o, r, c| {
            walk.record(data, o, &r, c);
            Ok(true)
        })
        .map(|()| records.take_damage());
    let mut framing = |damage: Vec<Damage>| {
        let last = damage.len().saturating_sub(1);
        for (i, d) in damage.iter().enumerate() {
            let e = &d.error;
            let cut = matches!(e.kind(), ErrorKind::UnexpectedEnd { .. });
            let kind = if cut && data.header.is_some() && e.offset().is_some_and(|o| o < data_end) {
                ProblemKind::RecordOutsideData
            } else if i == last && cut && data.header.is_none() {
                // The last "record" of a stream runs past its end and nothing parses
                // after it: bytes after the last record (text a tool appended).
                ProblemKind::TrailingBytes
            } else {
                ProblemKind::DamagedRecord
            };
            let mut p = Problem::from_error(kind, e);
            // How salvaging went on belongs to the damage it went past.
            p.message = d.to_string();
            problems.push(p);
        }
    };
    let fatal = |error| {
        vec![Damage {
            error,
            recovery: Recovery::AtEnd,
        }]
    };
    match salvaged {
        Ok(damage) => framing(damage),
        Err(e) => framing(fatal(e)),
    }
    for bytes in streams {
        walk.round = RoundCheck::default();
        let mut records = data.records_in(bytes, 0).salvaging();
        let salvaged = records
            .for_each(|o, r, c| {
                walk.record(data, o, &r, c);
                Ok(true)
            })
            .map(|()| records.take_damage());
        match salvaged {
            Ok(damage) => framing(damage),
            Err(e) => framing(fatal(e)),
        }
    }
    problems.append(&mut walk.problems);
    for (ty, (count, first)) in &walk.unknown {
        problems.push(Problem::new(
            ProblemKind::UnknownRecordType,
            Some(*first),
            format!("record type {ty}"),
            format!("{count} record(s) of type {ty}, which the spec does not describe (first at {first:#x}): kept as bytes"),
        ));
    }
    if let Some((count, first)) = walk.without_attr {
        problems.push(Problem::new(
            ProblemKind::RecordWithoutAttr,
            Some(first),
            "records",
            format!("{count} record(s) name a sample id no attr has (first at {first:#x}): their fields cannot be decoded"),
        ));
    }
    if let Some(first) = walk.round.first.take() {
        problems.push(Problem::new(
            ProblemKind::UnsortedRound,
            Some(first.1),
            format!("record #{}", first.0),
            format!(
                "{} record(s) arrive after a FINISHED_ROUND delivered a later time (first: record #{} at {:#x}, time {} < {} already delivered): perf reports them as out of order",
                walk.round.violations, first.0, first.1, first.2, first.3
            ),
        ));
    }
    if let Some(h) = &data.header {
        let placed = Placement::check(data, h);
        if let Err(Some((at, why))) = &placed {
            problems.push(Problem::new(
                ProblemKind::SectionLayout,
                Some(*at),
                "sections",
                format!("{why}: a rewrite lays the file out anew (not byte for byte)"),
            ));
        }
        if let Ok(p) = placed {
            // Parts the writer does not put before the data (a feature section there):
            // a rewrite lays them out after it.
            let event_types = h.event_types.size > 0;
            if p.before_data_for(data.session.attrs.len(), event_types)
                .is_none()
            {
                problems.push(Problem::new(
                    ProblemKind::SectionLayout,
                    Some(h.data.offset),
                    "sections",
                    "a section other than the ids, attrs and event types before the data section: a rewrite lays the file out anew (not byte for byte)".to_string(),
                ));
            }
            if !p.trailing.is_empty() {
                let at = data.bytes.len() - p.trailing.len();
                problems.push(Problem::new(
                    ProblemKind::TrailingBytes,
                    Some(at as u64),
                    "end of file",
                    format!(
                        "{} byte(s) after the last section, from {at:#x}",
                        p.trailing.len()
                    ),
                ));
            }
        }
    }
    Report {
        problems,
        records: walk.records,
    }
}

/// What the record walk collects.
#[derive(Default)]
struct Walk {
    records: u64,
    problems: Vec<Problem>,
    /// Unknown type → (count, first offset).
    unknown: BTreeMap<u32, (u64, u64)>,
    without_attr: Option<(u64, u64)>,
    round: RoundCheck,
}

impl Walk {
    fn record(
        &mut self,
        data: &PerfData<'_>,
        origin: Origin,
        rec: &RawRecord<'_>,
        ctx: &RecordCtx,
    ) {
        let index = self.records;
        self.records += 1;
        let ty = rec.record_type();
        let at = origin.input_offset(rec.offset);
        if ty.name().is_none() {
            let e = self.unknown.entry(ty.0).or_insert((0, at));
            e.0 += 1;
            return;
        }
        if ty == RecordType::SAMPLE && ctx.attr.is_none() && !data.session.attrs.is_empty() {
            let e = self.without_attr.get_or_insert((0, at));
            e.0 += 1;
            return;
        }
        let decoded = match data.sample(rec, ctx) {
            Ok(Some(s)) => s.validate(),
            Ok(None) => data.decode(rec, ctx).map(drop),
            Err(e) => Err(e),
        };
        if let Err(e) = decoded {
            let e = e.with_record(index, ty.label());
            self.problems
                .push(Problem::from_error(ProblemKind::DamagedRecord, &e));
        }
        if ty == RecordType::FINISHED_ROUND {
            self.round.finished_round();
        } else if ty == RecordType::FINISHED_INIT {
            self.round.deliver_all();
        } else if let Some(time) = data.time(rec, ctx) {
            self.round.timed(index, at, time);
        }
    }
}

/// perf's round rule (see [`crate::TimeOrdered`]): at a FINISHED_ROUND the
/// records up to `next_flush` are delivered and `next_flush` becomes the largest time
/// queued. A record whose time is below the last delivered one is out of order.
#[derive(Default)]
struct RoundCheck {
    /// Times queued and not yet delivered (one round's worth).
    queued: Vec<u64>,
    next_flush: u64,
    max_seen: u64,
    delivered: Option<u64>,
    violations: u64,
    /// (record index, offset, time, delivered time) of the first violation.
    first: Option<(u64, u64, u64, u64)>,
}

impl RoundCheck {
    fn timed(&mut self, index: u64, at: u64, time: u64) {
        if let Some(d) = self.delivered.filter(|&d| time < d) {
            self.violations += 1;
            self.first.get_or_insert((index, at, time, d));
        }
        self.max_seen = self.max_seen.max(time);
        self.queued.push(time);
    }

    fn finished_round(&mut self) {
        let limit = self.next_flush;
        let mut delivered = self.delivered;
        self.queued.retain(|&t| {
            if t <= limit {
                delivered = Some(delivered.map_or(t, |d| d.max(t)));
                false
            } else {
                true
            }
        });
        self.delivered = delivered;
        self.next_flush = self.max_seen;
    }

    fn deliver_all(&mut self) {
        if let Some(&m) = self.queued.iter().max() {
            self.delivered = Some(self.delivered.map_or(m, |d| d.max(m)));
        }
        self.queued.clear();
    }
}
