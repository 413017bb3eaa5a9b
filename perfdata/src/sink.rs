//! The streaming writer: records are written as they arrive, nothing per record is kept.
//!
//! File layout: [`FileSink::begin`] writes a placeholder header, the ids, the attrs and
//! the event_types (all known before the data), [`FileSink::record`] appends to the data
//! section, [`FileSink::finish`] writes the feature table and payloads and then seeks back
//! to write the real header. Pipe layout: [`PipeSink`] writes the header, then records.
//! [`crate::write`] writes a whole [`PerfFile`] through the same sinks.
//!
//! Everything positional is computed here from the content: ids and attrs sections,
//! `attr_size`, the data section, the feature bitmap and table, every `header.size`. The
//! layout is perf's own (header, ids, attrs, event_types if any, data, feature table, feature
//! payloads in id order), so a perf-written file is rewritten to the same bytes.

use crate::container::stream::HEADER_SIZE;
use crate::container::EventAttr;
use crate::generated::perf_data::{
    AttrEntry, Ctx, EventHeader, FeatureBody, FeatureId, FileHeader, FileSection, PipeHeader,
    RecordBody, RecordType, SampleIds, PERF_FILE_HEADER_SIZE, PERF_FILE_HEADER_SIZE_NO_FEATURES,
    PERF_MAGIC, PERF_MAGIC_V1, PERF_PIPE_HEADER_SIZE,
};
use crate::model::{FeatureData, FeatureItem, PerfFile, RecordData, RecordItem};
use crate::placement::{after_data_fits, Part};
use crate::rt::{Array, Bytes, Endianness, Error, Reader, StaticEndian, Writer};
use std::io::{Read, Seek, SeekFrom, Write};

/// Encodes records and features for an output in byte order `E`. Raw bytes are in the
/// input's order (`src`): copied when the orders agree, decoded and encoded otherwise.
pub struct RecordEncoder<E: StaticEndian> {
    src: Endianness,
    /// The decoding context each attr gives (by index, as `RecordItem::attr`).
    attr_ctx: Vec<Ctx>,
    /// NRCPUS: per-CPU feature payloads need it.
    feature_ctx: Ctx,
    header: Writer<E>,
    body: Writer<E>,
}

impl<E: StaticEndian> RecordEncoder<E> {
    /// `feature_ctx`: the CPU counts (see [`PerfFile::feature_ctx`]).
    pub fn new(src: Endianness, attrs: &[EventAttr<'_>], feature_ctx: Ctx) -> Self {
        RecordEncoder {
            src,
            attr_ctx: attrs.iter().map(|a| Ctx::from_attr(&a.attr)).collect(),
            feature_ctx,
            header: Writer::with_capacity(HEADER_SIZE),
            body: Writer::with_capacity(64 << 10),
        }
    }

    /// For a model: its byte order, attrs and CPU counts.
    pub fn for_file(file: &PerfFile<'_>) -> Self {
        Self::new(file.endian, &file.attrs, file.feature_ctx())
    }

    /// Byte order of the raw bytes this encoder is given.
    pub fn source_endian(&self) -> Endianness {
        self.src
    }

    /// The context for features.
    pub fn feature_ctx(&self) -> Ctx {
        self.feature_ctx
    }

    /// The decoding context of `item`: its attr's layout, its misc bits, the CPU counts.
    pub fn ctx(&self, item: &RecordItem<'_>) -> Ctx {
        crate::stages::typed::item_ctx(&self.attr_ctx, &self.feature_ctx, item)
    }

    /// Decodes a raw body in the source order (owned, so the value outlives `body`'s
    /// borrow only when the caller needs it to).
    pub fn decode<'b>(
        &self,
        ty: RecordType,
        body: &'b [u8],
        ctx: &Ctx,
    ) -> Result<RecordBody<'b>, Error> {
        crate::container::file::decode_body(self.src, ty, body, 0, ctx)
    }

    /// Writes one record (header, body, payload) to `out`; returns the bytes written.
    pub fn write(&mut self, item: &RecordItem<'_>, out: &mut impl Write) -> Result<u64, Error> {
        self.body.clear();
        let ctx = self.ctx(item);
        // Raw compressed records hold records in the input's order (a compressor writing
        // for this output emits them typed, their content already in this order).
        let compressed = item.ty == RecordType::COMPRESSED || item.ty == RecordType::COMPRESSED2;
        if compressed && E::KIND != self.src && matches!(item.data, RecordData::Raw { .. }) {
            return Err(Error::other(
                "compressed records hold records in the input's byte order: decompress before converting",
            ));
        }
        // Raw bodies in the output's order are written as they are, not copied first.
        let mut as_is: Option<&[u8]> = None;
        let payload: &[u8] = match &item.data {
            RecordData::Raw { body, payload } if E::KIND == self.src => {
                as_is = Some(body);
                payload
            }
            RecordData::Raw { body, payload } => {
                if item.ty.name().is_none() {
                    return Err(Error::other(format!(
                        "record type {} is not described by the spec: its bytes cannot be converted to another byte order",
                        item.ty.0
                    )));
                }
                self.decode(item.ty, body, &ctx)?
                    .encode(&mut self.body, &ctx)?;
                // Payloads (tracing data, AUX data) are bytes in the producer's own terms.
                payload
            }
            RecordData::Typed(body) => {
                body.encode(&mut self.body, &ctx)?;
                body.payload().unwrap_or(&[])
            }
        };
        // The body is encoded first: the header's size follows from it.
        let body = as_is.unwrap_or(self.body.as_slice());
        let size = HEADER_SIZE + body.len();
        let size = u16::try_from(size).map_err(|_| {
            Error::inconsistent(format!(
                "a {} record of {size} bytes does not fit perf_event_header.size (at most 65535)",
                item.ty
            ))
        })?;
        self.header.clear();
        EventHeader {
            type_: item.ty.0,
            misc: item.misc,
            size,
        }
        .encode(&mut self.header, &Ctx::default())?;
        out.write_all(self.header.as_slice())?;
        out.write_all(body)?;
        out.write_all(payload)?;
        Ok((usize::from(size) + payload.len()) as u64)
    }

    /// Appends one feature payload to `w`.
    pub fn encode_feature(
        &self,
        id: FeatureId,
        data: &FeatureData<'_>,
        w: &mut Writer<E>,
    ) -> Result<(), Error> {
        let ctx = self.feature_ctx;
        match data {
            FeatureData::Raw(bytes) if E::KIND == self.src => {
                w.put_bytes(bytes);
                Ok(())
            }
            FeatureData::Raw(bytes) => {
                // Another byte order: through the typed value.
                let typed =
                    FeatureBody::decode(id, &mut Reader::in_order(bytes, 0, self.src), &ctx)?;
                refuse_unknown_feature(&typed, id)?;
                typed.encode(w, &ctx)
            }
            FeatureData::Typed(body) => {
                if E::KIND != self.src {
                    refuse_unknown_feature(body, id)?;
                }
                body.encode(w, &ctx)
            }
        }
    }
}

pub(crate) fn refuse_unknown_feature(body: &FeatureBody<'_>, id: FeatureId) -> Result<(), Error> {
    if matches!(body, FeatureBody::Unknown(_)) {
        return Err(Error::other(format!(
            "feature {id} is not described by the spec: its bytes cannot be converted to another byte order"
        )));
    }
    Ok(())
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
    /// (see [`PerfFile::placement`]).
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
        head: &PerfFile<'_>,
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

    pub fn encoder(&self) -> &RecordEncoder<E> {
        &self.enc
    }

    /// Appends one record to the data section.
    pub fn record(&mut self, item: &RecordItem<'_>) -> Result<(), Error> {
        self.data.size += self.enc.write(item, &mut self.out)?;
        Ok(())
    }

    /// Appends `len` bytes of already-framed records in the output's byte order, read
    /// from `src` (a plain copy: `std::io::copy` uses `copy_file_range` between files).
    pub fn copy_records(&mut self, src: &mut impl Read, len: u64) -> Result<(), Error> {
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
    /// written after the table, see [`PerfFile::feature_table_slack`]), then the real
    /// header. Returns the output, positioned at its end.
    pub fn finish(mut self, features: &[FeatureItem<'_>], slack: &[u8]) -> Result<W, Error> {
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
        let placed = !after_data.is_empty() && after_data_fits(&after_data, &ids);
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
        Ok(self.out)
    }
}

/// A pipe-layout output being written: the header, then records as they come.
pub struct PipeSink<W: Write, E: StaticEndian> {
    out: W,
    enc: RecordEncoder<E>,
}

impl<W: Write, E: StaticEndian> PipeSink<W, E> {
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

    pub fn encoder(&self) -> &RecordEncoder<E> {
        &self.enc
    }

    pub fn record(&mut self, item: &RecordItem<'_>) -> Result<(), Error> {
        self.enc.write(item, &mut self.out)?;
        Ok(())
    }

    /// Appends `len` bytes of already-framed records in the output's byte order.
    pub fn copy_records(&mut self, src: &mut impl Read, len: u64) -> Result<(), Error> {
        let copied = std::io::copy(&mut src.take(len), &mut self.out)?;
        if copied != len {
            return Err(Error::unexpected_end(0, len, copied));
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<W, Error> {
        self.out.flush()?;
        Ok(self.out)
    }
}
