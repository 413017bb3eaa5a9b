//! A whole perf.data input held in memory (or a memory map): file or pipe layout.

use super::cursor::{RecordCursor, SliceSource};
use super::format::{detect, Format, Layout};
use super::records::{RecordWalk, Records};
use super::session::{EventAttr, RecordCtx, Session};
use super::stream::{RawRecord, RecordWalker, HEADER_SIZE};
use crate::generated::perf_data::{
    AttrEntry, Ctx, FeatureBody, FeatureId, FileHeader, FileSection, RecordBody, RecordType,
    SampleIds, SampleView,
};
use crate::rt::{static_endian, Endian, Endianness, Error, Reader};

/// Where a feature's payload is (file mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSection {
    pub id: FeatureId,
    pub offset: u64,
    pub size: u64,
}

/// Where a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Directly in the input, at `RawRecord::offset`.
    Stream,
    /// Decompressed from the COMPRESSED/COMPRESSED2 stream; `RawRecord::offset` is the
    /// offset within the decompressed bytes, and this is the offset of the compressed record
    /// whose data completed it.
    Compressed { record_offset: u64 },
}

/// Damage that a salvaging walk went past: the error where the damage is (offset, record,
/// field) and how the walk went on after it.
#[derive(Debug)]
pub struct Damage {
    pub error: Error,
    pub recovery: Recovery,
}

/// How a salvaging walk went on after damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Bytes `start..end` (absolute offsets) were skipped: records parse again at `end`.
    Skipped { start: u64, end: u64 },
    /// Nothing parses after the damage: the rest of the stream, from `start`, is unread.
    Stopped { start: u64 },
    /// A compressed chunk did not decompress: the zstd stream was dropped and restarts at
    /// the next compressed record after the one at `record_offset`.
    CompressedStreamRestarted { record_offset: u64 },
    /// The framing inside decompressed data was lost: the decompressed bytes pending were
    /// dropped.
    DecompressedBytesDropped,
    /// The damage is at the end (the compressed stream stops inside a record): nothing
    /// was left to skip.
    AtEnd,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        match self.recovery {
            Recovery::Skipped { start, end } => {
                write!(f, "; salvage: skipped bytes {start:#x}..{end:#x}")
            }
            Recovery::Stopped { start } => {
                write!(
                    f,
                    "; salvage: nothing parses after it, bytes from {start:#x} unread"
                )
            }
            Recovery::CompressedStreamRestarted { record_offset } => write!(
                f,
                "; salvage: dropped the compressed stream up to the record at {record_offset:#x}"
            ),
            Recovery::DecompressedBytesDropped => {
                write!(f, "; salvage: dropped the decompressed bytes pending")
            }
            Recovery::AtEnd => Ok(()),
        }
    }
}

/// What the record walks call for each record: where it came from, its bytes, and its
/// decoding context. It returns `false` to stop.
pub type RecordFn<'f> = dyn FnMut(Origin, RawRecord<'_>, &RecordCtx) -> Result<bool, Error> + 'f;

/// A parsed perf.data input.
pub struct PerfData<'a> {
    pub bytes: &'a [u8],
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
        .map_err(|e| e.with_feature(feature_label(f.id)))?;
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
                    .with_feature(feature_label(id)),
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
        FeatureBody::decode(
            f.id,
            &mut Reader::in_order(bytes, f.offset, self.format.endian),
            &self.session.feature_ctx(),
        )
        .map_err(|e| e.or_offset(f.offset).with_feature(feature_label(f.id)))
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
        if rec.record_type() != RecordType::SAMPLE {
            return Ok(None);
        }
        let Some(plan) = ctx.attr.and_then(|i| self.session.plan(i)) else {
            return Ok(None);
        };
        let base = rec.offset + HEADER_SIZE as u64;
        SampleView::new(rec.body, base, self.format.endian, &ctx.ctx, &plan.sample).map(Some)
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

    /// Offset of [`PerfData::data`] in the input.
    pub fn data_offset(&self) -> u64 {
        self.data_start as u64
    }

    /// The records of the data section in file order: a lending cursor (see
    /// [`Records`]) that expands COMPRESSED/COMPRESSED2 records (the compressed records
    /// themselves come too, with `Origin::Stream`, before the records they contain) and
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

/// The first position after `failed_at` from which records parse again: three known
/// record types in a row, or known records up to the exact end of the stream. Kernel
/// records are multiples of 8 bytes, so the next record is first looked for 8, 16, …
/// bytes after the damaged one, within the largest record size (in a pipe stream the
/// unpadded setup records leave the kernel records off 8-byte alignment); then at every
/// byte. Each byte is looked at a bounded number of times: salvaging stays linear.
pub(crate) fn resync<E: Endian>(data: &[u8], failed_at: usize, e: E) -> Option<usize> {
    let parses_at = |at: usize| {
        const CHAIN: usize = 3;
        let mut good = 0;
        let mut walker = RecordWalker::in_order(&data[at..], 0, e);
        for rec in walker.by_ref().take(CHAIN) {
            match rec {
                Ok(r) if r.record_type().name().is_some() => good += 1,
                _ => break,
            }
        }
        good == CHAIN || (good > 0 && walker.rest().is_empty())
    };
    let candidates = |step: usize, window: usize| {
        (failed_at + step..)
            .step_by(step)
            .take_while(move |&at| at + HEADER_SIZE <= data.len() && at - failed_at <= window)
    };
    candidates(8, usize::from(u16::MAX))
        .find(|&at| parses_at(at))
        .or_else(|| candidates(1, usize::MAX).find(|&at| parses_at(at)))
}

/// Decodes a record's body in byte order `endian` with context `ctx`: the one function
/// every reader (files, streams, the CLI) decodes records with. Errors name the record
/// type's field path and the absolute offset.
pub fn decode_record<'r>(
    endian: Endianness,
    rec: &RawRecord<'r>,
    ctx: &Ctx,
) -> Result<RecordBody<'r>, Error> {
    let ty = rec.record_type();
    decode_body(endian, ty, rec.body, rec.offset + HEADER_SIZE as u64, ctx)
        .map_err(|e| e.in_field(ty.name().unwrap_or("record")))
}

/// Decodes the body of a record of type `ty` held in `body` (whose first byte is at
/// absolute offset `base`, for errors) in byte order `endian`: the byte-order dispatch
/// under [`decode_record`], for bodies that are not framed records of an input (the
/// editable model's, a conversion's).
pub fn decode_body<'r>(
    endian: Endianness,
    ty: RecordType,
    body: &'r [u8],
    base: u64,
    ctx: &Ctx,
) -> Result<RecordBody<'r>, Error> {
    // Hot (every record of `dump`, `convert --typed`): monomorphised per byte order.
    static_endian!(endian, |e| RecordBody::decode(
        ty,
        &mut Reader::in_order(body, base, e),
        ctx
    ))
}

/// A feature as errors name it: its id and, when the spec knows it, its name
/// (`8 CPUDESC`).
pub fn feature_label(id: FeatureId) -> String {
    match id.name() {
        Some(n) => format!("{} {n}", id.0),
        None => id.0.to_string(),
    }
}

/// A record type by name, or by number when unknown.
pub fn record_name(ty: RecordType) -> String {
    ty.name().map_or_else(|| ty.0.to_string(), str::to_string)
}

/// A record type as errors name it ([`crate::rt::Error::with_record`]): its name, or
/// `UNKNOWN(n)` (as `perfdata dump` prints it).
pub fn record_label(ty: RecordType) -> String {
    ty.name()
        .map_or_else(|| format!("UNKNOWN({})", ty.0), str::to_string)
}

/// The type named in the error for a record the walk could not frame: the type in its
/// header when the header is there, `?` when not even that could be read.
pub fn failed_record_label<E: Endian>(w: &RecordWalker<'_, E>) -> String {
    w.failed_header()
        .map_or_else(|| "?".to_string(), |h| record_label(RecordType(h.type_)))
}
