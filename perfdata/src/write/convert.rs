//! `perfdata convert` as a library call: a file is converted record by record, from a
//! memory map, through the stages into a [`Sink`]; nothing per record is kept, so
//! memory does not grow with the file. The output goes through [`save_checked`]: a
//! temporary file, read back, then renamed into place.
//!
//! The stage order is fixed: decompress → layout change → typed → compress (in the
//! output's byte order) → sink (which applies the output's byte order). The result is
//! byte for byte what the model path gives ([`Builder::read`], the [`Builder`]
//! conversions in that order, [`Builder::save`]).

use super::encode::RecordEncoder;
use super::model::{Builder, RecordItem};
use super::read_back::{read_back_file_carrying, Carried};
use super::save::{save_then, Written};
use super::sink::{FileSink, PipeSink, Sink};
use super::stages::{
    pipe_event_types, Compress, CompressedKind, Decompress, Emit, Pipeline, Stage, ToFile, ToPipe,
    Typed,
};
use super::writer_thread::WriterThread;
use crate::container::{
    decode_body, is_compressed, Damage, Layout, MappedFile, Origin, PerfData, RecordCursor,
    Recovery, ReleaseBehind, SliceSource,
};
use crate::generated::perf_data::{Ctx, FeatureBody, FeatureId, RecordBody, RecordType};
use crate::rt::{static_endian, Endianness, Error, StaticEndian};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

/// What to change. `None` / `false` keeps what the input has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// The output's byte order (`--endian`). Compressed records are expanded for it and,
    /// unless `decompress`, compressed again in the new order.
    pub endian: Option<Endianness>,
    /// The output's layout (`--layout`): file → pipe streams the header's content as
    /// HEADER_* records, pipe → file gathers them into sections.
    pub layout: Option<Layout>,
    /// Expand COMPRESSED/COMPRESSED2 records.
    pub decompress: bool,
    /// Compress the kernel records (after expanding any compressed ones).
    pub compress: Option<(CompressedKind, i32)>,
    /// Decode every record and feature and encode it again.
    pub typed: bool,
}

/// zstd level when the input's HEADER_COMPRESSED does not say.
const DEFAULT_LEVEL: i32 = 3;

/// The steps a conversion of a given input takes, decided before the first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The input's byte order: raw record bytes are in it through every stage.
    pub src: Endianness,
    /// The output's byte order, applied where records are encoded (compressor, sink).
    pub dst: Endianness,
    /// Expand compressed records first: asked for, or needed by a byte-order change or
    /// a (re)compression.
    pub decompress: bool,
    /// The output's layout.
    pub layout: Layout,
    /// Decode every record and feature and encode it again.
    pub typed: bool,
    /// Compress the output with this record type and zstd level: asked for, or the
    /// input's own compression kept across a byte-order change.
    pub compress: Option<(CompressedKind, i32)>,
}

impl Plan {
    /// Compressed records hold records in one byte order: a byte-order change expands
    /// them and, unless asked to decompress, compresses again in the new order (same
    /// record type, the input's level).
    /// `release` is told how far a walk over the input has come (see [`input_compression`]).
    pub fn new(
        data: &PerfData<'_>,
        opts: &ConvertOptions,
        release: &mut ReleaseBehind<'_>,
    ) -> Result<Self, Error> {
        let src = data.format.endian;
        let dst = opts.endian.unwrap_or(src);
        let reorder = dst != src;
        let recompress = match opts.compress {
            Some(c) => Some(c),
            None if reorder && !opts.decompress => input_compression(data, release)?,
            None => None,
        };
        Ok(Plan {
            src,
            dst,
            decompress: opts.decompress || recompress.is_some() || reorder,
            layout: opts.layout.unwrap_or(data.format.layout),
            typed: opts.typed,
            compress: recompress,
        })
    }

    /// Nothing to change: the records can be copied as they are.
    fn is_copy(&self, data: &PerfData<'_>) -> bool {
        self.src == self.dst
            && !self.decompress
            && !self.typed
            && self.compress.is_none()
            && self.layout == data.format.layout
    }
}

/// How the input is compressed, if it is: the type of its first compressed record and the
/// level its HEADER_COMPRESSED states. Stops at the first compressed record; `release` is
/// told how far the walk has come.
pub fn input_compression(
    data: &PerfData<'_>,
    release: &mut ReleaseBehind<'_>,
) -> Result<Option<(CompressedKind, i32)>, Error> {
    let mut level = None;
    for f in &data.features {
        if f.id == FeatureId::COMPRESSED {
            if let FeatureBody::CompressedFeature(c) = data.feature(f)? {
                level = Some(c.comp_level as i32);
            }
        }
    }
    let mut kind = None;
    let src = data.format.endian;
    data.for_each_record(&mut |origin, rec, _| {
        if origin == Origin::Input {
            release.reached(rec.offset);
        }
        let ty = rec.record_type();
        if ty == RecordType::HEADER_FEATURE {
            if let Ok(RecordBody::HeaderFeature(h)) =
                decode_body(src, ty, rec.body, 0, &Ctx::default())
            {
                if let Some(FeatureBody::CompressedFeature(c)) = h.data.as_deref() {
                    level = Some(c.comp_level as i32);
                }
            }
        }
        if is_compressed(ty) {
            kind = Some(if ty == RecordType::COMPRESSED {
                CompressedKind::Compressed
            } else {
                CompressedKind::Compressed2
            });
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(kind.map(|k| (k, level.unwrap_or(DEFAULT_LEVEL))))
}

/// Where the input's records end when bytes that frame no record follow the last one, to
/// the end (text `perf record` printed, appended to a pipe stream; a stream cut inside
/// its last record): the absolute offset of those bytes. `None` when every byte frames
/// records, or when records parse again after the damage (damage, not a tail).
pub fn unframed_tail(data: &PerfData<'_>) -> Option<u64> {
    let mut records = RecordCursor::framing_only(SliceSource::new(
        data.data(),
        data.data_offset(),
        data.format.endian,
    ))
    .salvaging();
    loop {
        match records.next_in_input() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => return None,
        }
    }
    match records.take_damage().as_slice() {
        [Damage {
            recovery: Recovery::Stopped { start },
            ..
        }] => Some(*start),
        _ => None,
    }
}

/// What a conversion did beyond what was asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Converted {
    /// Bytes after the input's last record that frame no record, left out of a
    /// conversion that changes the records' layout or byte order (which cannot carry
    /// bytes it cannot read): their offset in the input and their length. A copy keeps
    /// them.
    pub dropped_tail: Option<(u64, u64)>,
}

/// Converts the file at `input` into `output` (which may be `input`).
pub fn convert_file(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<(), Error> {
    convert_file_reporting(input, output, opts).map(drop)
}

/// [`convert_file`], saying what it left out.
pub fn convert_file_reporting(
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
) -> Result<Converted, Error> {
    let at = |e: Error| match e.file() {
        Some(_) => e,
        None => e.in_file(input),
    };
    let mut converted = Converted::default();
    // Everything about the input lives inside the closure: its map is gone before the
    // output is mapped to be read back.
    save_then(output, |out| {
        let map = MappedFile::open(input)?;
        let mut data = PerfData::open(map.bytes()).map_err(at)?;
        // Damaged features are carried as they are (in the input's byte order; another
        // order cannot decode them and fails, naming the feature).
        let damaged = data.damaged_features();
        // Opening a pipe walked all of it: its pages need not stay resident.
        map.release_before(u64::MAX);
        let mut release = ReleaseBehind::new(&map);
        let plan = Plan::new(&data, opts, &mut release).map_err(at)?;
        if plan.is_copy(&data) {
            return copy_checked(input, &map, &data, damaged, out);
        }
        // Bytes after the last record that frame none cannot be carried into another
        // layout or byte order (nothing says what they are): the records end before them,
        // and the caller is told.
        // This walk maps every page of the input (it reads each record's header): the
        // faults are taken on the second core, idle until the stream's writing thread.
        if let Some(t) = map.walk_with_pages_mapped_alongside(|| unframed_tail(&data)) {
            let end = data.data_offset() + data.data().len() as u64;
            converted.dropped_tail = Some((t, end - t));
            data.end_data_at(t);
        }
        // The hot path: monomorphised for both the input's and the output's byte order.
        static_endian!(plan.src, |s| static_endian!(plan.dst, |d| stream(
            s,
            d,
            &data,
            &plan,
            out,
            &mut release
        )))
        .map(|()| Written::ReadBack(Carried::from(damaged)))
        .map_err(at)
    })?;
    Ok(converted)
}

impl Carried {
    /// With the unframed tail `data` has, as an offset in its data.
    fn with_tail_of(mut self, data: &PerfData<'_>) -> Self {
        self.unframed_tail = unframed_tail(data).map(|t| t - data.data_offset());
        self
    }
}

type Out<'o> = BufWriter<&'o mut std::fs::File>;

/// No change: [`copy`], checked without walking the output. On the other core while
/// the kernel copies, the input is read back (the check every output gets, allowing its
/// own damage), then the output is compared with the input byte for byte as far as the
/// copy has come, one read of each. Equal, the output reads back as the input did;
/// different (a header part the writer laid out otherwise), it is read back as any output.
fn copy_checked(
    input: &Path,
    map: &MappedFile,
    data: &PerfData<'_>,
    damaged: Vec<FeatureId>,
    out: &mut Out<'_>,
) -> Result<Written, Error> {
    let carried = Carried::from(damaged);
    // A second handle for the checker's positioned reads (they leave the writer's offset).
    let written = out.get_ref().try_clone()?;
    let (progress, copied_so_far) = std::sync::mpsc::channel();
    let (copied, checked) = std::thread::scope(|scope| {
        let check = scope.spawn(|| {
            let read_back = read_back_input(input, data, &carried);
            let same = same_as_copied(&written, map, data, copied_so_far);
            (read_back, same)
        });
        let copied = std::fs::File::open(input)
            .map_err(Error::from)
            .and_then(|mut src| {
                copy(data, &mut src, out, &mut |n| {
                    let _ = progress.send(Copied::Data(n));
                })
            })
            .and_then(|()| out.flush().map_err(Error::from))
            .map(|()| {
                let _ = progress.send(Copied::All);
            });
        drop(progress);
        (copied, check.join())
    });
    copied?;
    let (input_read_back, same) =
        checked.map_err(|_| Error::other("the thread checking the copy panicked"))?;
    if same? {
        return Ok(Written::Checked(input_read_back));
    }
    // Bytes after the last record that frame none are copied as they are: the output,
    // read back, may end in them too (found only now: the walk costs).
    Ok(Written::ReadBack(carried.with_tail_of(data)))
}

/// How far a copy has come.
enum Copied {
    /// This many bytes of the data section.
    Data(u64),
    /// Everything, flushed.
    All,
}

/// Whether `file`, as [`copy_checked`]'s copy writes it, holds exactly the bytes of `map`
/// (the input): the data section compared as `progress` says it is copied, the rest once
/// all is. The file is read in blocks; the map's pages are released behind the
/// comparison, so memory stays bounded at any size. `false` when the copy stopped.
fn same_as_copied(
    file: &std::fs::File,
    map: &MappedFile,
    data: &PerfData<'_>,
    progress: std::sync::mpsc::Receiver<Copied>,
) -> Result<bool, Error> {
    let want = map.bytes();
    let start = data.data_offset();
    let end = start + data.data().len() as u64;
    let mut same = SameBytes {
        file,
        want,
        block: vec![0u8; 1 << 18],
        release: ReleaseBehind::new(map),
    };
    let mut compared = start;
    for copied in progress {
        match copied {
            Copied::Data(n) => {
                if !same.range(compared, start + n)? {
                    return Ok(false);
                }
                compared = start + n;
            }
            Copied::All => {
                return Ok(file.metadata()?.len() == want.len() as u64
                    && same.range(compared, end)?
                    && same.range(0, start)?
                    && same.range(end, want.len() as u64)?);
            }
        }
    }
    Ok(false)
}

/// A file compared with bytes in memory, a block at a time.
struct SameBytes<'a> {
    file: &'a std::fs::File,
    want: &'a [u8],
    block: Vec<u8>,
    release: ReleaseBehind<'a>,
}

impl SameBytes<'_> {
    /// Whether the file's bytes `from..to` are those of `want`. A file that ends first,
    /// or cannot be read at an offset, is not the same.
    fn range(&mut self, from: u64, to: u64) -> Result<bool, Error> {
        let Some(want) = self.want.get(from as usize..to as usize) else {
            return Ok(false);
        };
        let mut at = from;
        for expected in want.chunks(self.block.len()) {
            let got = &mut self.block[..expected.len()];
            match read_exact_at(self.file, got, at) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::Unsupported => return Ok(false),
                Err(e) => return Err(e.into()),
            }
            if got != expected {
                return Ok(false);
            }
            at += expected.len() as u64;
            self.release.reached(at);
        }
        Ok(true)
    }
}

/// `buf.len()` bytes of `file` at `offset`, leaving its offset as it is.
#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Elsewhere a positioned read moves the file's offset (the writer's): the copy is read
/// back instead.
#[cfg(not(unix))]
fn read_exact_at(_: &std::fs::File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// The read-back of the input, as of a copy of it: the walk may stop in bytes after the
/// last record that frame none (a copy keeps them); where those start is looked for (a
/// walk of its own) only when the walk failed.
fn read_back_input(input: &Path, data: &PerfData<'_>, carried: &Carried) -> Result<(), Error> {
    read_back_file_carrying(input, carried).or_else(|e| {
        let with_tail = carried.clone().with_tail_of(data);
        match with_tail.unframed_tail {
            Some(_) => read_back_file_carrying(input, &with_tail),
            None => Err(e),
        }
    })
}

/// No change: the header part is written by the sink (so it is the writer's, as in the
/// model path) and the records are copied as they are, in parts ([`copy_in_parts`]).
fn copy(
    data: &PerfData<'_>,
    src: &mut std::fs::File,
    out: &mut Out<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Error> {
    let head = Builder::read_head(data)?;
    src.seek(SeekFrom::Start(data.data_offset()))?;
    let len = data.data().len() as u64;
    let fctx = data.session.feature_ctx();
    static_endian!(data.format.endian, |e| copy_as(
        e,
        data.format.layout,
        &head,
        fctx,
        (src, len),
        out,
        progress
    ))
}

/// [`copy`] with the header part written in byte order `E` (the input's).
fn copy_as<E: StaticEndian>(
    _: E,
    layout: Layout,
    head: &Builder<'_>,
    fctx: Ctx,
    (src, len): (&mut std::fs::File, u64),
    out: &mut Out<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Error> {
    let enc = RecordEncoder::<E>::new(head.endian, &head.attrs, fctx);
    match layout {
        Layout::File => {
            let mut sink = FileSink::begin(out, head, !head.features.is_empty(), enc)?;
            copy_in_parts(&mut sink, src, len, progress)?;
            sink.finish(&head.features, &head.feature_table_slack)?;
        }
        Layout::Pipe => {
            let mut sink = PipeSink::begin(out, enc)?;
            copy_in_parts(&mut sink, src, len, progress)?;
            sink.finish(&[], &[])?;
        }
    }
    Ok(())
}

/// The bytes copied between two reports of [`copy_in_parts`].
const COPY_PART: u64 = 32 << 20;

/// `len` bytes of records from `src` into `sink`, saying how many are copied after each
/// part (so that they can be checked while the next part is copied).
fn copy_in_parts(
    sink: &mut impl Sink,
    src: &mut std::fs::File,
    len: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Error> {
    let mut copied = 0;
    while copied < len {
        let part = (len - copied).min(COPY_PART);
        sink.copy_records(src, part)?;
        copied += part;
        progress(copied);
    }
    Ok(())
}

/// Records of the input (bytes in order `S`) through the stages into a sink in order `D`.
fn stream<S: StaticEndian, D: StaticEndian>(
    s: S,
    _: D,
    data: &PerfData<'_>,
    plan: &Plan,
    out: &mut Out<'_>,
    release: &mut ReleaseBehind<'_>,
) -> Result<(), Error> {
    let fctx = data.session.feature_ctx();
    let mut head = Builder::read_head(data)?;
    // Kept outside the pipeline (borrowed into it): its attrs are checked at the end.
    let pipe_to_file = data.format.layout == Layout::Pipe && plan.layout == Layout::File;
    let mut to_file = pipe_to_file.then(ToFile::new);
    let mut pipeline = Pipeline::default();
    if plan.decompress {
        pipeline.push_stage(Decompress::new());
    }
    if let Some(t) = to_file.as_mut() {
        pipeline.push_stage(StageRef(t));
    }
    if data.format.layout == Layout::File && plan.layout == Layout::Pipe {
        pipeline.push_stage(ToPipe::new());
    }
    if plan.typed {
        pipeline.push_stage(Typed::reencoding());
    }
    if let Some((kind, level)) = plan.compress {
        pipeline.push_stage(Compress::<D>::new(kind, level)?);
    }
    pipeline.begin(&mut head, fctx)?;
    if pipe_to_file {
        // A file's event_types section precedes its data: the HEADER_EVENT_TYPE records
        // ToFile moves there are gathered first (ToFile sets the same at its finish).
        head.event_types = pipe_event_types(data)?;
    }

    let enc = RecordEncoder::<D>::new(head.endian, &head.attrs, fctx);
    // Every record is encoded on this thread; its bytes are copied into the file on
    // another (a handle sharing `out`'s position, left where the sink leaves it).
    out.flush()?;
    let mut file = WriterThread::new(out.get_ref().try_clone()?)?;
    match plan.layout {
        Layout::File => {
            // Features arrive at the end when they come from a pipe or a compressor.
            let features_follow = !head.features.is_empty()
                || plan.compress.is_some()
                || data.format.layout == Layout::Pipe;
            let sink = FileSink::begin(&mut file, &head, features_follow, enc)?;
            feed(s, data, pipeline, sink, &mut head, release)?;
        }
        Layout::Pipe => {
            let sink = PipeSink::begin(&mut file, enc)?;
            feed(s, data, pipeline, sink, &mut head, release)?;
        }
    }
    file.finish()?;
    // The output was written, but will not replace anything: an error here drops it.
    if to_file.as_ref().is_some_and(ToFile::attrs_changed) {
        return Err(Error::other(
            "the stream declares attrs (HEADER_ATTR) that its first pass did not see: cannot write them before the data",
        ));
    }
    Ok(())
}

/// The input's records (bytes in order `S`), framed as they sit in it, through the
/// stages into `sink`; then what the stages still hold, and the features.
fn feed<S: StaticEndian>(
    s: S,
    data: &PerfData<'_>,
    mut pipeline: Pipeline<'_>,
    mut sink: impl Sink,
    head: &mut Builder<'_>,
    release: &mut ReleaseBehind<'_>,
) -> Result<(), Error> {
    let session = &data.session;
    let mut records =
        RecordCursor::framing_only(SliceSource::new(data.data(), data.data_offset(), s));
    while let Some(rec) = records.next_in_input()? {
        let index = records.records_framed();
        // Records behind this one are written: their pages need not stay resident.
        release.reached(rec.offset);
        let ty = rec.record_type();
        pipeline
            .push(RecordItem::raw(session, &rec, s), &mut |it| {
                sink.record(&it)
            })
            .map_err(|e| e.with_record(index - 1, ty.label()))?;
    }
    pipeline.finish(head, &mut |it| sink.record(&it))?;
    drop(pipeline);
    sink.finish(&head.features, &head.feature_table_slack)
}

/// A stage borrowed into a pipeline, so the caller can still look at it afterwards.
struct StageRef<'s, T: Stage>(&'s mut T);

impl<T: Stage> Stage for StageRef<'_, T> {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        self.0.begin(head, fctx)
    }
    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        self.0.push(item, out)
    }
    fn finish(&mut self, head: &mut Builder<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        self.0.finish(head, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_compares_every_byte_and_stops_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        // Longer than a block, not a multiple of it.
        let bytes: Vec<u8> = (0..(1u32 << 18) * 3 + 77)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&a, &bytes).unwrap();
        let map = MappedFile::open(&a).unwrap();
        let b = dir.path().join("b");
        let len = bytes.len() as u64;
        let same = |content: &[u8], from: u64, to: u64| {
            std::fs::write(&b, content).unwrap();
            let file = std::fs::File::open(&b).unwrap();
            let mut same = SameBytes {
                file: &file,
                want: map.bytes(),
                block: vec![0u8; 1 << 18],
                release: ReleaseBehind::new(&map),
            };
            same.range(from, to).unwrap()
        };
        assert!(same(&bytes, 0, len));
        assert!(same(&bytes, 1000, len - 3));
        let mut last = bytes.clone();
        *last.last_mut().unwrap() ^= 1;
        assert!(!same(&last, 0, len));
        assert!(same(&last, 0, len - 1));
        let mut second_block = bytes.clone();
        second_block[(1 << 18) + 5] ^= 0x80;
        assert!(!same(&second_block, 0, len));
        assert!(!same(&bytes[..bytes.len() - 1], 0, len));
        assert!(!same(&bytes, 0, len + 1));
    }
}
