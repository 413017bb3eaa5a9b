//! Where each part of a file-layout input sat, and the bytes between the parts: what the
//! writer needs to lay an unmodified file out exactly as its producer did (a data section
//! page-aligned after a gap, a zero-size event_types section with an offset, another
//! section order), whoever wrote it.
//!
//! The writer still computes every offset and size from the content (so a file cannot
//! be inconsistent); a placement only says in which order the parts go and which bytes
//! lie between them. It is used where it still describes the model (the same attrs, the
//! same set of features), and dropped otherwise: an edited file may be re-laid out.

use crate::container::PerfData;
use crate::generated::perf_data::{FeatureId, FileHeader};
use crate::rt::Bytes;

/// One part of a file-layout perf.data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// The ids section of attr `i`.
    Ids(usize),
    /// The attrs section: one entry per event, its `perf_event_attr` and where its ids
    /// section is.
    Attrs,
    /// The obsolete event_types section: tracepoint ids and names in legacy files;
    /// newer perf writes it as zeros (no part, or one of size 0).
    EventTypes,
    /// The data section: the records.
    Data,
    /// The feature table: one section descriptor per bit of the feature bitmap, right
    /// after the data.
    FeatureTable,
    /// The payload of one feature.
    Feature(FeatureId),
}

/// The parts of a file in file order, each with the bytes between the previous part's
/// end (or the header's) and its start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placement<'a> {
    /// Up to and including [`Part::Data`].
    pub before_data: Vec<(Bytes<'a>, Part)>,
    /// [`Part::FeatureTable`] then the features in file order. The bytes between the
    /// table and the first payload are [`Builder::feature_table_slack`](super::Builder::feature_table_slack),
    /// so the first feature's gap here is empty.
    pub after_data: Vec<(Bytes<'a>, Part)>,
    /// Bytes after the last part, to the end of the file.
    pub trailing: Bytes<'a>,
}

impl<'a> Placement<'a> {
    /// The placement of `data`'s parts, or `None` when they cannot be described as an
    /// order with gaps (see [`Placement::check`]).
    pub fn of(data: &PerfData<'a>, header: &FileHeader<'_>) -> Option<Self> {
        Self::check(data, header).ok()
    }

    /// The placement of `data`'s parts, or why there is none: a recording that never
    /// finished or whose feature table is cut (`None`: reported elsewhere), or parts that
    /// overlap or lie outside the file (the offset where, and which parts) — a layout no
    /// writer that computes its offsets can reproduce.
    pub fn check(
        data: &PerfData<'a>,
        header: &FileHeader<'_>,
    ) -> Result<Self, Option<(u64, String)>> {
        if data.unfinished || data.feature_table_cut.is_some() {
            return Err(None);
        }
        let len = data.bytes.len() as u64;
        let outside =
            |what: String| Some((0, format!("{what}: its section runs past the 64-bit range")));
        // (start, end, part) for every part.
        let mut parts: Vec<(u64, u64, Part)> = vec![];
        let ids = data
            .attr_id_sections()
            .map_err(|e| Some((e.offset().unwrap_or(0), e.to_string())))?;
        for (i, s) in ids.iter().enumerate() {
            if s.size % 8 != 0 {
                // perf reads size / 8 ids and skips the rest; a writer writes whole ids.
                return Err(Some((
                    s.offset,
                    format!(
                        "attr {i}'s ids section is {} bytes, not a whole number of 8-byte ids ({} read, {} byte(s) left over)",
                        s.size,
                        s.size / 8,
                        s.size % 8
                    ),
                )));
            }
            let end = s
                .offset
                .checked_add(s.size)
                .ok_or_else(|| outside(format!("attr {i}'s ids")))?;
            parts.push((s.offset, end, Part::Ids(i)));
        }
        let end = |offset: u64, size: u64, what: &str| {
            offset
                .checked_add(size)
                .ok_or_else(|| outside(what.to_string()))
        };
        parts.push((
            header.attrs.offset,
            end(header.attrs.offset, header.attrs.size, "attrs")?,
            Part::Attrs,
        ));
        let et = &header.event_types;
        if et.offset != 0 || et.size != 0 {
            parts.push((
                et.offset,
                end(et.offset, et.size, "event_types")?,
                Part::EventTypes,
            ));
        }
        let data_start = data.data_offset();
        let data_end = data_start + data.data().len() as u64;
        parts.push((data_start, data_end, Part::Data));
        let table_end = data_end + 16 * data.features.len() as u64;
        if !data.features.is_empty() {
            parts.push((data_end, table_end, Part::FeatureTable));
        }
        for f in &data.features {
            parts.push((
                f.offset,
                end(f.offset, f.size, "a feature")?,
                Part::Feature(f.id),
            ));
        }
        // Zero-size parts at the same place go in perf's order (the enum's).
        parts.sort_by_key(|&(start, end, part)| (start, end, part));
        let data_at = parts
            .iter()
            .position(|p| p.2 == Part::Data)
            .expect("the data part is there");
        let mut placement = Placement::default();
        let mut at = header.size;
        let mut previous = "the file header".to_string();
        for (i, &(start, end, part)) in parts.iter().enumerate() {
            if start < at {
                return Err(Some((
                    start,
                    format!(
                        "{} (from {start:#x}) overlaps {previous} (to {at:#x})",
                        name(part)
                    ),
                )));
            }
            if end > len {
                return Err(Some((
                    start,
                    format!(
                        "{} (from {start:#x} to {end:#x}) runs past the end of the file ({len:#x})",
                        name(part)
                    ),
                )));
            }
            let gap = Bytes::borrowed(&data.bytes[at as usize..start as usize]);
            // The table is where the data ends; the slack after it is the model's.
            if part == Part::FeatureTable && !gap.is_empty() {
                return Err(Some((
                    start,
                    "bytes between the data and the feature table".into(),
                )));
            }
            if i <= data_at {
                placement.before_data.push((gap, part));
            } else {
                placement.after_data.push((gap, part));
            }
            at = end;
            if part == Part::FeatureTable {
                at += data.feature_table_slack.len() as u64;
            }
            previous = name(part);
        }
        placement.trailing = Bytes::borrowed(&data.bytes[at as usize..]);
        Ok(placement)
    }

    /// A copy that borrows nothing from the input.
    pub fn into_owned(self) -> Placement<'static> {
        let own = |v: Vec<(Bytes<'a>, Part)>| {
            v.into_iter()
                .map(|(g, p)| (g.into_owned(), p))
                .collect::<Vec<_>>()
        };
        Placement {
            before_data: own(self.before_data),
            after_data: own(self.after_data),
            trailing: self.trailing.into_owned(),
        }
    }

    /// The parts before the data, if they are still those of a model with `attrs` attrs
    /// and (`event_types`) an event_types section.
    pub fn before_data_for(&self, attrs: usize, event_types: bool) -> Option<&[(Bytes<'a>, Part)]> {
        let mut ids = vec![false; attrs];
        let (mut seen_attrs, mut seen_et) = (false, false);
        for (_, part) in &self.before_data {
            match *part {
                Part::Ids(i) if i < attrs && !ids[i] => ids[i] = true,
                Part::Attrs if !seen_attrs => seen_attrs = true,
                Part::EventTypes if !seen_et => seen_et = true,
                Part::Data => {}
                _ => return None,
            }
        }
        let whole = ids.iter().all(|&s| s) && seen_attrs && (seen_et || !event_types);
        let data_last = self.before_data.last().map(|p| p.1) == Some(Part::Data);
        (whole && data_last).then_some(&self.before_data[..])
    }

    /// The parts after the data, if they are still those of a model with these features
    /// (in id order, without duplicates).
    pub fn after_data_for(&self, features: &[FeatureId]) -> Option<&[(Bytes<'a>, Part)]> {
        after_data_fits(&self.after_data, features).then_some(&self.after_data[..])
    }
}

/// Whether `parts` (a placement's parts after the data) are the feature table and
/// exactly `features` (in id order, without duplicates).
pub fn after_data_fits(parts: &[(Bytes<'_>, Part)], features: &[FeatureId]) -> bool {
    let mut placed: Vec<FeatureId> = vec![];
    let mut table = false;
    for (i, (_, part)) in parts.iter().enumerate() {
        match *part {
            Part::FeatureTable if i == 0 => table = true,
            Part::Feature(id) => placed.push(id),
            _ => return false,
        }
    }
    placed.sort_by_key(|id| id.0);
    placed == features && (table || features.is_empty())
}

/// A part as messages name it.
fn name(part: Part) -> String {
    match part {
        Part::Ids(i) => format!("the ids of attr {i}"),
        Part::Attrs => "the attrs section".into(),
        Part::EventTypes => "the event_types section".into(),
        Part::Data => "the data section".into(),
        Part::FeatureTable => "the feature table".into(),
        Part::Feature(id) => format!("feature {}", id.label()),
    }
}
