//! A whole perf.data input held in memory (or a memory map): file or pipe layout.

use super::cursor::{RecordCursor, SliceSource};
use super::format::{detect, Format, Layout};
use super::framing::{decode_feature, decode_record, RawRecord, HEADER_SIZE};
use super::origin::Origin;
use super::records::{RecordWalk, Records};
use super::session::{EventAttr, RecordCtx, Session};
use crate::generated::perf_data::{
    AttrEntry, Ctx, FeatureBody, FeatureId, FileHeader, FileSection, RecordBody, RecordType,
    SampleIds, SampleView,
};
use crate::rt::{static_endian, Endian, Endianness, Error, Reader};

/// Where a feature's payload is (file mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSection {
    /// Which feature: its bit in the header's feature bitmap.
    pub id: FeatureId,
    /// Absolute offset of the payload in the file, as the feature table says (not
    /// checked against the file's length: [`PerfData::feature_bytes`] does that).
    pub offset: u64,
    /// Length of the payload in bytes, as the feature table says.
    pub size: u64,
}

/// What the record walks call for each record: where it came from, its bytes, and its
/// decoding context. It returns `false` to stop.
pub type RecordFn<'f> = dyn FnMut(Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error> + 'f;

/// A parsed perf.data input.
pub struct PerfData<'a> {
    /// The whole input, from the magic on: every offset the reader reports is into it.
    pub bytes: &'a [u8],
    /// Byte order and layout, from the magic and header size ([`detect`]).
    pub format: Format,
    /// File mode only.
    pub header: Option<FileHeader<'a>>,
    /// File mode: the attrs section. Pipe mode: filled by [`PerfData::for_each_record`]'s
    /// first pass over HEADER_ATTR records (see [`PerfData::open`]).
    pub session: Session<'a>,
    /// File mode only, in id order.
    pub features: Vec<FeatureSection>,
    /// Bytes between the end of the feature table and the first feature payload. perf
    /// reserves one table entry per feature it means to write; when writing one fails it
    /// clears the bit but leaves the entry (zeros), so these are usually empty or zeros.
    pub feature_table_slack: &'a [u8],
    /// The file header says data.size 0: the recorder never finished. The records run to
    /// the end of the file; a last record may be cut (reported by the record walk).
    pub unfinished: bool,
    /// The feature table ends before the bitmap's last entry (the file was cut or the
    /// bitmap is garbage): the features from this id on are missing. Records are not
    /// affected; [`PerfData::feature_problems`] reports it.
    pub feature_table_cut: Option<FeatureId>,
    data_start: usize,
    data_end: usize,
}

fn section(bytes: &[u8], s: &FileSection, what: &str) -> Result<(usize, usize), Error> {
    let start = usize::try_from(s.offset).unwrap_or(usize::MAX);
    let end = start.checked_add(usize::try_from(s.size).unwrap_or(usize::MAX));
    match end {
        Some(end) if end <= bytes.len() => Ok((start, end)),
        _ => Err(Error::invalid(
            Some(s.offset),
            format!("the {what} section inside the file ({} bytes)", bytes.len()),
            format!("offset {} size {}", s.offset, s.size),
        )),
    }
}

impl<'a> PerfData<'a> {
    /// Parses the header, attrs and feature table (file mode) or the pipe header; in pipe
    /// mode also walks the stream once to collect HEADER_ATTR and NRCPUS.
    pub fn open(bytes: &'a [u8]) -> Result<Self, Error> {
        let format = detect(bytes)?;
        let e = format.endian;
        let ctx = Ctx::default();
        if format.layout == Layout::Pipe {
            let mut data = PerfData {
                bytes,
                format,
                header: None,
                session: Session::default(),
                features: vec![],
                feature_table_slack: &[],
                unfinished: false,
                feature_table_cut: None,
                data_start: 16,
                data_end: bytes.len(),
            };
            let mut session = Session::default();
            // The setup records (HEADER_ATTR, HEADER_FEATURE) are never inside compressed
            // chunks — perf compresses only ring-buffer data — so this pass frames the
            // stream without decompressing it. A stream that breaks off later still opens:
            // the records before the break are readable, and `for_each_record` reports the
            // break where it is.
            let source = SliceSource::new(data.data(), data.data_start as u64, e);
            let mut records = RecordCursor::framing_only(source);
            while let Ok(Some(rec)) = records.next_in_input() {
                if session.note_record(&rec, e).is_err() {
                    break;
                }
            }
            data.session = session;
            return Ok(data);
        }
        let header = FileHeader::decode(&mut Reader::in_order(bytes, 0, e), &ctx)
            .map_err(|e| e.in_field("perf_file_header"))?;
        let (data_start, mut data_end) = section(bytes, &header.data, "data")?;
        // perf writes the header first with data.size 0 and rewrites it when recording
        // ends: 0 means the recorder never finished. Its records run to the end of the
        // file (what was flushed), and there is no feature table.
        // An empty recording that did finish also says 0; its feature table then follows
        // at the data offset.
        let unfinished = header.data.size == 0
            && bytes.len() > data_start
            && !feature_table_at(bytes, data_start, header.adds_features.as_ref(), e);
        if unfinished {
            data_end = bytes.len();
        }
        let mut session = Session::default();
        let (attrs_start, attrs_end) = section(bytes, &header.attrs, "attrs")?;
        if header.attr_size == 0 && attrs_end > attrs_start {
            return Err(Error::invalid(Some(16), "attr_size > 0", "0"));
        }
        let entry_size = usize::try_from(header.attr_size).unwrap_or(usize::MAX);
        let mut at = attrs_start;
        while at < attrs_end {
            let end = at.saturating_add(entry_size).min(attrs_end);
            let mut r = Reader::in_order(&bytes[at..end], at as u64, e);
            let entry = AttrEntry::decode(&mut r, &ctx, header.attr_size)
                .map_err(|e| e.in_field("attrs"))?;
            let (ids_start, ids_end) = section(bytes, &entry.ids, "attr ids")?;
            let ids = SampleIds::decode(
                &mut Reader::in_order(&bytes[ids_start..ids_end], ids_start as u64, e),
                &ctx,
            )
            .map_err(|e| e.in_field("attr ids"))?;
            session.add_attr(EventAttr {
                attr: entry.attr,
                ids: ids.ids.iter().collect(),
                entry_tail: entry.tail,
            });
            at = end;
        }
        let mut features = vec![];
        let mut feature_table_cut = None;
        if let Some(bitmap) = header.adds_features.as_ref().filter(|_| !unfinished) {
            let mut table =
                Reader::in_order(bytes.get(data_end..).unwrap_or(&[]), data_end as u64, e);
            for bit in 0..256u32 {
                let word = bitmap.get(bit as usize / 64).unwrap_or(0);
                if word & (1u64 << (bit % 64)) == 0 {
                    continue;
                }
                // Features are metadata: a table cut short loses the features it no
                // longer lists, not the file.
                let Ok(s) = FileSection::decode(&mut table, &ctx) else {
                    feature_table_cut = Some(FeatureId(bit));
                    break;
                };
                features.push(FeatureSection {
                    id: FeatureId(bit),
                    offset: s.offset,
                    size: s.size,
                });
            }
        }
        let table_end = data_end.saturating_add(16 * features.len());
        let feature_table_slack = features
            .iter()
            .map(|f| usize::try_from(f.offset).unwrap_or(usize::MAX))
            .min()
            .filter(|&first| first >= table_end && first <= bytes.len())
            .map_or(&[][..], |first| &bytes[table_end..first]);
        let mut data = PerfData {
            bytes,
            format,
            header: Some(header),
            session,
            features,
            feature_table_slack,
            unfinished,
            feature_table_cut,
            data_start,
            data_end,
        };
        // The features the spec's context takes values from come first: others are sized
        // by them (NRCPUS: CPU_TOPOLOGY, CPU_DOMAIN_INFO loop per CPU). A damaged one is
        // reported by `feature_problems`; the features it sizes then decode without it.
        let sources: Vec<FeatureSection> = data
            .features
            .iter()
            .filter(|f| FeatureId::CONTEXT_SOURCES.contains(&f.id))
            .copied()
            .collect();
        for f in sources {
            if let Ok(feature) = data.feature(&f) {
                data.session.observe_feature(&feature);
            }
        }
        Ok(data)
    }

    /// The ids section of each attr (file layout; empty in pipe layout), as the attrs
    /// section gives them.
    pub fn attr_id_sections(&self) -> Result<Vec<FileSection>, Error> {
        let Some(header) = &self.header else {
            return Ok(vec![]);
        };
        let (start, end) = section(self.bytes, &header.attrs, "attrs")?;
        let size = usize::try_from(header.attr_size).unwrap_or(usize::MAX);
        let mut sections = vec![];
        let mut at = start;
        while at < end && size > 0 {
            let next = at.saturating_add(size).min(end);
            let entry = AttrEntry::decode(
                &mut Reader::in_order(&self.bytes[at..next], at as u64, self.format.endian),
                &Ctx::default(),
                header.attr_size,
            )
            .map_err(|e| e.in_field("attrs"))?;
            sections.push(entry.ids);
            at = next;
        }
        Ok(sections)
    }

    /// The payload bytes of a feature section.
    pub fn feature_bytes(&self, f: &FeatureSection) -> Result<&'a [u8], Error> {
        let (start, end) = section(
            self.bytes,
            &FileSection {
                offset: f.offset,
                size: f.size,
            },
            "feature",
        )
        .map_err(|e| e.with_feature(f.id.label()))?;
        Ok(&self.bytes[start..end])
    }

    /// The bytes of a feature section that are in the file: all of them, or those before
    /// the end of a file that cuts the section short (what a rewrite keeps of a damaged
    /// feature: its bytes as they are).
    pub fn feature_bytes_in_file(&self, f: &FeatureSection) -> &'a [u8] {
        let len = self.bytes.len() as u64;
        let start = f.offset.min(len);
        let end = f.offset.saturating_add(f.size).min(len);
        &self.bytes[start as usize..end as usize]
    }

    /// Every problem with the header features, in id order: a feature table cut short,
    /// sections outside the file, payloads that do not decode. Each error names the
    /// feature and the byte offset. Features are metadata: the records read regardless,
    /// and rewrites keep a damaged section's bytes as they are.
    pub fn feature_problems(&self) -> Vec<Error> {
        let mut problems: Vec<Error> = self
            .features
            .iter()
            .filter_map(|f| self.feature(f).err())
            .collect();
        if let Some(id) = self.feature_table_cut {
            let at = self.data_end as u64 + 16 * self.features.len() as u64;
            let available = (self.bytes.len() as u64).saturating_sub(at);
            problems.push(
                Error::unexpected_end(at, 16, available.min(16))
                    .in_field("feature section table")
                    .with_feature(id.label()),
            );
        }
        problems
    }

    /// The features that [`PerfData::feature_problems`] reports.
    pub fn damaged_features(&self) -> Vec<FeatureId> {
        self.features
            .iter()
            .filter(|f| self.feature(f).is_err())
            .map(|f| f.id)
            .collect()
    }

    /// Decodes one feature section.
    pub fn feature(&self, f: &FeatureSection) -> Result<FeatureBody<'a>, Error> {
        let bytes = self.feature_bytes(f)?;
        decode_feature(
            self.format.endian,
            f.id,
            bytes,
            f.offset,
            &self.session.feature_ctx(),
        )
    }

    /// Decodes a record's body (in this input's byte order) with the context
    /// [`PerfData::for_each_record`] gave for it.
    pub fn decode<'r>(&self, rec: &RawRecord<'r>, ctx: &Ctx) -> Result<RecordBody<'r>, Error> {
        decode_record(self.format.endian, rec, ctx)
    }

    /// A zero-copy view of a SAMPLE record (`None` for other types): its fixed fields
    /// (ip, pid, tid, time, id, cpu, period…) are read at offsets computed once per event,
    /// its callchain and later fields decoded when asked. The fast way to read samples.
    #[inline]
    pub fn sample<'r>(
        &'r self,
        rec: &RawRecord<'r>,
        ctx: &'r RecordCtx,
    ) -> Result<Option<SampleView<'r>>, Error> {
        self.sample_as(self.format.endian, rec, ctx)
    }

    /// [`PerfData::sample`] in byte order `E`, this input's: a view whose reads are
    /// monomorphised for a compile-time order, in a walk that has one
    /// (`static_endian!(data.format.endian, |e| … data.sample_as(e, …) …)`, as
    /// [`PerfData::records_as`]).
    #[inline]
    pub fn sample_as<'r, E: Endian>(
        &'r self,
        e: E,
        rec: &RawRecord<'r>,
        ctx: &'r RecordCtx,
    ) -> Result<Option<SampleView<'r, E>>, Error> {
        debug_assert_eq!(e.kind(), self.format.endian, "the input's byte order");
        if rec.record_type() != RecordType::SAMPLE {
            return Ok(None);
        }
        let Some(plan) = ctx.attr.and_then(|i| self.session.plan(i)) else {
            return Ok(None);
        };
        let base = rec.offset + HEADER_SIZE as u64;
        SampleView::new(rec.body, base, e, &ctx.ctx, &plan.sample).map(Some)
    }

    /// The timestamp of a record (SAMPLE's `time` or the sample_id trailer's), read at the
    /// offset its event's plan gives; `None` when the record has none.
    #[inline]
    pub fn time(&self, rec: &RawRecord<'_>, ctx: &RecordCtx) -> Option<u64> {
        self.session
            .record_time(rec.record_type(), rec.body, ctx, self.format.endian)
    }

    /// The record stream: the data section (file) or everything after the pipe header.
    pub fn data(&self) -> &'a [u8] {
        &self.bytes[self.data_start..self.data_end]
    }

    /// Ends [`PerfData::data`] at absolute offset `end` (within it): the bytes after are
    /// left out of every walk (a conversion leaving out a tail that frames no record).
    pub(crate) fn end_data_at(&mut self, end: u64) {
        let end = usize::try_from(end).unwrap_or(usize::MAX);
        self.data_end = end.clamp(self.data_start, self.data_end);
    }

    /// Offset of [`PerfData::data`] in the input.
    pub fn data_offset(&self) -> u64 {
        self.data_start as u64
    }

    /// The records of the data section in file order: a lending cursor (see
    /// [`Records`]) that expands COMPRESSED/COMPRESSED2 records (the compressed records
    /// themselves come too, with `Origin::Input`, before the records they contain) and
    /// gives each record's decoding context. Nothing is allocated per record.
    pub fn records(&self) -> Records<'_, 'a, Endianness> {
        self.records_in(self.data(), self.data_offset())
    }

    /// [`PerfData::records`] for another stream of the same recording (a `data.N` file of
    /// a directory), decoded with this input's attrs; compressed records are expanded
    /// (each stream is its own zstd stream). `base` is the offset reported for `bytes[0]`.
    pub fn records_in<'d>(&'d self, bytes: &'d [u8], base: u64) -> Records<'d, 'a, Endianness> {
        self.records_in_as(self.format.endian, bytes, base)
    }

    /// [`PerfData::records`] in byte order `E`: a compile-time order for hot loops
    /// (`static_endian!(data.format.endian, |e| data.records_as(e)…)`, see
    /// [`crate::rt::static_endian`]).
    pub fn records_as<E: Endian>(&self, e: E) -> Records<'_, 'a, E> {
        self.records_in_as(e, self.data(), self.data_offset())
    }

    /// [`PerfData::records_in`] in byte order `E` (see [`PerfData::records_as`]).
    pub fn records_in_as<'d, E: Endian>(
        &'d self,
        e: E,
        bytes: &'d [u8],
        base: u64,
    ) -> Records<'d, 'a, E> {
        Records::new(&self.session, SliceSource::new(bytes, base, e))
    }

    /// Calls `f` for every record of [`PerfData::records`] (`f` returns `false` to stop),
    /// in the input's byte order picked at compile time.
    pub fn for_each_record(&self, f: &mut RecordFn<'_>) -> Result<(), Error> {
        static_endian!(self.format.endian, |e| self.records_as(e).for_each(&mut *f))
    }
}

/// True when a feature table for `bitmap` sits at `at`: every section it lists lies in
/// the file after the table (record bytes read as sections give offsets far outside).
fn feature_table_at(
    bytes: &[u8],
    at: usize,
    bitmap: Option<&crate::rt::Array<'_, u64>>,
    e: Endianness,
) -> bool {
    let Some(bitmap) = bitmap else {
        return false;
    };
    let n: usize = bitmap.iter().map(|w| w.count_ones() as usize).sum();
    let table_end = at.saturating_add(16 * n);
    if n == 0 || table_end > bytes.len() {
        return false;
    }
    let mut table = Reader::in_order(&bytes[at..table_end], at as u64, e);
    (0..n).all(|_| match FileSection::decode(&mut table, &Ctx::default()) {
        Ok(s) => {
            s.offset >= table_end as u64
                && s.offset
                    .checked_add(s.size)
                    .is_some_and(|end| end <= bytes.len() as u64)
        }
        Err(_) => false,
    })
}
