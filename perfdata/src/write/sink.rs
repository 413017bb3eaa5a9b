//! The streaming writer: records are written as they arrive, nothing per record is kept.
//!
//! File layout: [`FileSink::begin`] writes a placeholder header, the ids, the attrs and
//! the event_types (all known before the data), [`FileSink::record`] appends to the data
//! section, [`FileSink::finish`] writes the feature table and payloads and then seeks back
//! to write the real header. Pipe layout: [`PipeSink`] writes the header, then records.
//! Both are a [`Sink`]; [`Builder::write_to`] and `convert` write through them.
//!
//! Everything positional is computed here from the content: ids and attrs sections,
//! `attr_size`, the data section, the feature bitmap and table, every `header.size`. The
//! layout is perf's own (header, ids, attrs, event_types if any, data, feature table, feature
//! payloads in id order), so a perf-written file is rewritten to the same bytes.

use super::encode::RecordEncoder;
use super::model::{Builder, FeatureItem, RecordItem};
use super::placement::{after_data_fits, Part};
use crate::generated::perf_data::{
    AttrEntry, Ctx, FeatureId, FileHeader, FileSection, PipeHeader, SampleIds,
    PERF_FILE_HEADER_SIZE, PERF_FILE_HEADER_SIZE_NO_FEATURES, PERF_MAGIC, PERF_MAGIC_V1,
    PERF_PIPE_HEADER_SIZE,
};
use crate::rt::{Array, Bytes, Error, StaticEndian, Writer};
use std::io::{Read, Seek, SeekFrom, Write};

/// An output being written, record by record: [`FileSink`] or [`PipeSink`].
pub trait Sink {
    /// Appends one record.
    fn record(&mut self, item: &RecordItem<'_>) -> Result<(), Error>;
    /// Appends `len` bytes of records already framed in the output's byte order, read
    /// from `src` (a plain copy: `std::io::copy` uses `copy_file_range` between files).
    fn copy_records(&mut self, src: &mut impl Read, len: u64) -> Result<(), Error>;
    /// After the last record: the header features (file layout; a pipe carries its
    /// features as records and takes none here) and the bytes after the feature table
    /// (see [`Builder::feature_table_slack`]). Flushes the output.
    fn finish(self, features: &[FeatureItem<'_>], slack: &[u8]) -> Result<(), Error>;
}

/// Where the data section starts and how much of it is written (file layout).
struct DataSection {
    offset: u64,
    size: u64,
}

/// A file-layout output being written.
pub struct FileSink<W: Write + Seek, E: StaticEndian> {
    out: W,
    enc: RecordEncoder<E>,
    start: u64,
    header_size: u64,
    legacy_v1: bool,
    attr_size: u64,
    attrs: FileSection,
    event_types: FileSection,
    data: DataSection,
    /// The input's placement of the feature table and payloads, and its trailing bytes
    /// (see [`Builder::placement`]).
    after_data: Vec<(Bytes<'static>, Part)>,
    trailing: Bytes<'static>,
}

impl<W: Write + Seek, E: StaticEndian> FileSink<W, E> {
    /// Writes everything before the data: a placeholder header, the ids and attrs sections
    /// and event_types, from `head` (its records are ignored), in the order and with the
    /// gaps of `head.placement` when it still fits, else in perf's order. `features_follow`:
    /// whether [`FileSink::finish`] will get features (a header without the feature bitmap
    /// is only kept for an input that had one and still has no features).
    pub fn begin(
        mut out: W,
        head: &Builder<'_>,
        features_follow: bool,
        enc: RecordEncoder<E>,
    ) -> Result<Self, Error> {
        if head.legacy_v1 && E::KIND != head.endian {
            return Err(Error::other(
                "a legacy PERFFILE (v1) file keeps its byte order: its magic does not record one",
            ));
        }
        let ctx = Ctx::default();
        let start = out.stream_position()?;
        let header_size = if head.short_header && !features_follow {
            PERF_FILE_HEADER_SIZE_NO_FEATURES
        } else {
            PERF_FILE_HEADER_SIZE
        };
        let n = head.attrs.len();
        let placed = head
            .placement
            .as_ref()
            .and_then(|p| p.before_data_for(n, head.event_types.is_some()));
        let canonical: Vec<(Bytes<'_>, Part)>;
        let order = match placed {
            Some(order) => order,
            None => {
                canonical = (0..n)
                    .map(Part::Ids)
                    .chain([Part::Attrs])
                    .chain(head.event_types.as_ref().map(|_| Part::EventTypes))
                    .chain([Part::Data])
                    .map(|p| (Bytes::default(), p))
                    .collect();
                &canonical
            }
        };

        // The content of each part, then where each goes, then the attrs (which point
        // at the ids sections, wherever those are).
        let mut ids = vec![];
        for a in &head.attrs {
            let mut w = Writer::<E>::new();
            SampleIds {
                ids: Array::from(a.ids.clone()),
            }
            .encode(&mut w, &ctx)?;
            ids.push(w.into_vec());
        }
        let event_types = match &head.event_types {
            Some(et) => {
                let mut w = Writer::<E>::new();
                et.encode(&mut w, &ctx)?;
                w.into_vec()
            }
            None => vec![],
        };
        let attr_size = match head.attrs.first() {
            Some(a) => {
                u64::from(a.attr.size.max(64))
                    + 16
                    + a.entry_tail.as_ref().map_or(0, |t| t.len() as u64)
            }
            None => 0,
        };
        if head.legacy_v1
            && !crate::container::LEGACY_ATTR_SIZES
                .iter()
                .any(|s| s + 16 == attr_size)
        {
            // A reader tells a PERFFILE file's byte order by its attr_size alone.
            return Err(Error::other(format!(
                "a legacy PERFFILE (v1) file is recognised by its attr size (a 64-104 byte attr + 16); this one's would be {attr_size}, which no reader would recognise"
            )));
        }
        let mut id_sections = vec![FileSection::default(); n];
        let mut attrs = FileSection::default();
        let mut et_section = FileSection::default();
        let mut pos = header_size;
        for (gap, part) in order {
            pos += gap.len() as u64;
            let size = match *part {
                Part::Ids(i) => ids[i].len() as u64,
                Part::Attrs => attr_size * n as u64,
                Part::EventTypes => event_types.len() as u64,
                _ => 0,
            };
            let here = FileSection { offset: pos, size };
            match *part {
                Part::Ids(i) => id_sections[i] = here,
                Part::Attrs => attrs = here,
                Part::EventTypes => et_section = here,
                _ => {}
            }
            pos += size;
        }
        let mut entries = Writer::<E>::new();
        for (i, (a, ids)) in head.attrs.iter().zip(&id_sections).enumerate() {
            let before = entries.len();
            AttrEntry {
                attr: a.attr.clone(),
                ids: *ids,
                tail: a.entry_tail.clone(),
            }
            .encode(&mut entries, &ctx, attr_size)
            .map_err(|e| e.in_field("attrs").in_index(i))?;
            let len = (entries.len() - before) as u64;
            if len != attr_size {
                return Err(Error::inconsistent(format!(
                    "attr {i} encodes to {len} bytes, attr 0 to {attr_size}: the attrs section needs one entry size",
                )));
            }
        }

        out.write_all(&vec![0u8; header_size as usize])?;
        for (gap, part) in order {
            out.write_all(gap)?;
            match *part {
                Part::Ids(i) => out.write_all(&ids[i])?,
                Part::Attrs => out.write_all(entries.as_slice())?,
                Part::EventTypes => out.write_all(&event_types)?,
                _ => {}
            }
        }
        let (after_data, trailing) = match &head.placement {
            Some(p) => (
                p.after_data
                    .iter()
                    .map(|(g, part)| (g.clone().into_owned(), *part))
                    .collect(),
                p.trailing.clone().into_owned(),
            ),
            None => (vec![], Bytes::default()),
        };
        Ok(FileSink {
            out,
            enc,
            start,
            header_size,
            legacy_v1: head.legacy_v1,
            attr_size,
            attrs,
            event_types: et_section,
            data: DataSection {
                offset: pos,
                size: 0,
            },
            after_data,
            trailing,
        })
    }

    /// The encoder records go through (its byte orders and decoding contexts).
    pub fn encoder(&self) -> &RecordEncoder<E> {
        &self.enc
    }
}

impl<W: Write + Seek, E: StaticEndian> Sink for FileSink<W, E> {
    /// Appends one record to the data section.
    fn record(&mut self, item: &RecordItem<'_>) -> Result<(), Error> {
        self.data.size += self.enc.write(item, &mut self.out)?;
        Ok(())
    }

    fn copy_records(&mut self, src: &mut impl Read, len: u64) -> Result<(), Error> {
        let copied = std::io::copy(&mut src.take(len), &mut self.out)?;
        if copied != len {
            return Err(Error::unexpected_end(
                self.data.offset + self.data.size + copied,
                len,
                copied,
            ));
        }
        self.data.size += len;
        Ok(())
    }

    /// Writes the feature table and payloads (in the input's order and with its gaps
    /// when the placement still fits these features, else in id order; `slack` is
    /// written after the table), then the real header; the output is left at its end.
    fn finish(mut self, features: &[FeatureItem<'_>], slack: &[u8]) -> Result<(), Error> {
        let ctx = Ctx::default();
        if self.header_size != PERF_FILE_HEADER_SIZE && !features.is_empty() {
            return Err(Error::inconsistent(
                "features for a file header without a feature bitmap",
            ));
        }
        let mut sorted: Vec<&FeatureItem<'_>> = features.iter().collect();
        sorted.sort_by_key(|f| f.id.0);
        let mut bitmap = [0u64; 4];
        let mut payloads = Writer::<E>::new();
        // Where each feature's payload is in `payloads`, in id order.
        let mut ranges = vec![];
        for (i, f) in sorted.iter().enumerate() {
            if f.id.0 >= 256 {
                return Err(Error::inconsistent(format!(
                    "feature id {} does not fit the 256-bit feature bitmap",
                    f.id.0
                )));
            }
            if i > 0 && sorted[i - 1].id == f.id {
                return Err(Error::inconsistent(format!(
                    "feature {} appears twice",
                    f.id
                )));
            }
            bitmap[f.id.0 as usize / 64] |= 1 << (f.id.0 % 64);
            let before = payloads.len();
            self.enc
                .encode_feature(f.id, &f.data, &mut payloads)
                .map_err(|e| e.with_feature(f.id))?;
            ranges.push(before..payloads.len());
        }
        let ids: Vec<FeatureId> = sorted.iter().map(|f| f.id).collect();
        let after_data = std::mem::take(&mut self.after_data);
        let canonical: Vec<(Bytes<'_>, Part)>;
        // An empty data section is read as a recording that never finished (its records
        // running to the end of the file) unless a feature table follows it at once, or
        // nothing does, as perf reads it. So after an empty data section: the input's
        // layout only when its table comes first, and without features nothing at all
        // (no unused table entries, no trailing bytes).
        let empty = self.data.size == 0;
        let slack = if empty && features.is_empty() {
            self.trailing = Bytes::default();
            &[][..]
        } else {
            slack
        };
        let table_first =
            matches!(after_data.first(), Some((gap, Part::FeatureTable)) if gap.is_empty());
        let placed =
            !after_data.is_empty() && after_data_fits(&after_data, &ids) && (!empty || table_first);
        let order = match placed {
            true => &after_data[..],
            false => {
                canonical = [Part::FeatureTable]
                    .into_iter()
                    .chain(ids.iter().map(|&id| Part::Feature(id)))
                    .map(|p| (Bytes::default(), p))
                    .collect();
                &canonical
            }
        };
        let index = |id: FeatureId| ids.binary_search_by_key(&id.0, |i| i.0).ok();
        let table_size = 16 * sorted.len() as u64 + slack.len() as u64;
        let mut sections = vec![FileSection::default(); ids.len()];
        let mut pos = self.data.offset + self.data.size;
        for (gap, part) in order {
            pos += gap.len() as u64;
            match *part {
                Part::FeatureTable => pos += table_size,
                Part::Feature(id) => {
                    let i = index(id).expect("after_data_fits checked the features");
                    let size = ranges[i].len() as u64;
                    sections[i] = FileSection { offset: pos, size };
                    pos += size;
                }
                _ => {}
            }
        }
        let mut table = Writer::<E>::new();
        for s in &sections {
            s.encode(&mut table, &ctx)?;
        }
        for (gap, part) in order {
            self.out.write_all(gap)?;
            match *part {
                Part::FeatureTable => {
                    self.out.write_all(table.as_slice())?;
                    self.out.write_all(slack)?;
                }
                Part::Feature(id) => {
                    let i = index(id).expect("after_data_fits checked the features");
                    self.out
                        .write_all(&payloads.as_slice()[ranges[i].clone()])?;
                }
                _ => {}
            }
        }
        self.out.write_all(&self.trailing)?;
        pos += self.trailing.len() as u64;

        let header = FileHeader {
            magic: PERF_MAGIC,
            size: self.header_size,
            attr_size: self.attr_size,
            attrs: self.attrs,
            data: FileSection {
                offset: self.data.offset,
                size: self.data.size,
            },
            event_types: self.event_types,
            adds_features: (self.header_size == PERF_FILE_HEADER_SIZE)
                .then(|| Array::from(bitmap.to_vec())),
        };
        let mut w = Writer::<E>::new();
        header.encode(&mut w, &ctx)?;
        let mut header_bytes = w.into_vec();
        if self.legacy_v1 {
            // "PERFFILE" does not depend on byte order: always these 8 bytes.
            header_bytes[..8].copy_from_slice(&PERF_MAGIC_V1.to_le_bytes());
        }
        self.out.seek(SeekFrom::Start(self.start))?;
        self.out.write_all(&header_bytes)?;
        self.out.seek(SeekFrom::Start(self.start + pos))?;
        self.out.flush()?;
        Ok(())
    }
}

/// A pipe-layout output being written: the header, then records as they come.
pub struct PipeSink<W: Write, E: StaticEndian> {
    out: W,
    enc: RecordEncoder<E>,
}

impl<W: Write, E: StaticEndian> PipeSink<W, E> {
    /// Writes the 16-byte pipe header (magic and size, in byte order `E`); the records
    /// follow, the header content among them (HEADER_ATTR, HEADER_FEATURE…).
    pub fn begin(mut out: W, enc: RecordEncoder<E>) -> Result<Self, Error> {
        let mut w = Writer::<E>::new();
        PipeHeader {
            magic: PERF_MAGIC,
            size: PERF_PIPE_HEADER_SIZE,
        }
        .encode(&mut w, &Ctx::default())?;
        out.write_all(w.as_slice())?;
        Ok(PipeSink { out, enc })
    }

    /// The encoder records go through (its byte orders and decoding contexts).
    pub fn encoder(&self) -> &RecordEncoder<E> {
        &self.enc
    }
}

impl<W: Write, E: StaticEndian> Sink for PipeSink<W, E> {
    fn record(&mut self, item: &RecordItem<'_>) -> Result<(), Error> {
        self.enc.write(item, &mut self.out)?;
        Ok(())
    }

    fn copy_records(&mut self, src: &mut impl Read, len: u64) -> Result<(), Error> {
        let copied = std::io::copy(&mut src.take(len), &mut self.out)?;
        if copied != len {
            return Err(Error::unexpected_end(0, len, copied));
        }
        Ok(())
    }

    fn finish(mut self, features: &[FeatureItem<'_>], _slack: &[u8]) -> Result<(), Error> {
        if !features.is_empty() {
            return Err(Error::inconsistent(
                "feature sections for a pipe-layout output (a pipe carries its features as HEADER_FEATURE records)",
            ));
        }
        self.out.flush()?;
        Ok(())
    }
}
