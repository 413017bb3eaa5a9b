//! Writing a [`PerfFile`]: file or pipe layout, either byte order.
//!
//! Everything positional is computed here from the content: the ids and attrs sections,
//! `attr_size`, the data section, the feature bitmap and table, every record's
//! `header.size`. The layout is perf's own (header, ids, attrs, event_types if any, data,
//! feature table, feature payloads in id order), so a perf-written file is rewritten to
//! the same bytes. [`save`] writes to a temporary file beside the target and renames it
//! into place: the target (even when it is the input) is never left half-written.

use crate::container::Layout;
use crate::generated::perf_data::{
    AttrEntry, Ctx, EventHeader, FeatureBody, FeatureId, FileHeader, FileSection, PipeHeader,
    RecordBody, RecordType, SampleIds, PERF_FILE_HEADER_SIZE, PERF_FILE_HEADER_SIZE_NO_FEATURES,
    PERF_MAGIC, PERF_MAGIC_V1, PERF_PIPE_HEADER_SIZE,
};
use crate::model::{FeatureData, PerfFile, RecordData, RecordItem};
use crate::rt::{Array, BigEndian, Endian, Endianness, Error, LittleEndian, Reader, Writer};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// How to write. `None` keeps what the input had.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    pub endian: Option<Endianness>,
}

impl WriteOptions {
    pub fn endian(mut self, endian: Endianness) -> Self {
        self.endian = Some(endian);
        self
    }
}

/// Writes `file` to `path` through a temporary file in the same directory, renamed into
/// place once complete (so `path` may be the file `file` was read from).
pub fn save(file: &PerfFile<'_>, path: &Path, opts: WriteOptions) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        write(file, &mut out, opts)?;
        out.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| Error::from(e.error))?;
    Ok(())
}

/// Writes `file` to `out` in its layout (file layout needs `Seek`: the header is written
/// last, once the sizes are known).
pub fn write<W: Write + Seek>(
    file: &PerfFile<'_>,
    out: &mut W,
    opts: WriteOptions,
) -> Result<(), Error> {
    match (opts.endian.unwrap_or(file.endian), file.layout) {
        (Endianness::Little, Layout::File) => write_file_as::<LittleEndian, W>(file, out),
        (Endianness::Big, Layout::File) => write_file_as::<BigEndian, W>(file, out),
        (Endianness::Little, Layout::Pipe) => write_pipe_as::<LittleEndian>(file, out),
        (Endianness::Big, Layout::Pipe) => write_pipe_as::<BigEndian>(file, out),
    }
}

/// Writes a pipe-layout `file` to any `Write` (a pipe, stdout).
pub fn write_pipe<W: Write>(
    file: &PerfFile<'_>,
    out: &mut W,
    opts: WriteOptions,
) -> Result<(), Error> {
    if file.layout != Layout::Pipe {
        return Err(Error::other(
            "write_pipe needs a pipe-layout PerfFile (convert it first)",
        ));
    }
    match opts.endian.unwrap_or(file.endian) {
        Endianness::Little => write_pipe_as::<LittleEndian>(file, out),
        Endianness::Big => write_pipe_as::<BigEndian>(file, out),
    }
}

fn write_pipe_as<E: Endian>(file: &PerfFile<'_>, out: &mut impl Write) -> Result<(), Error> {
    let mut w = Writer::<E>::new();
    PipeHeader {
        magic: PERF_MAGIC,
        size: PERF_PIPE_HEADER_SIZE,
    }
    .encode(&mut w, &Ctx::default())?;
    out.write_all(w.as_slice())?;
    let mut buf = Writer::<E>::new();
    for (i, item) in file.records.iter().enumerate() {
        write_record::<E>(file, item, &mut buf, out)
            .map_err(|e| e.with_record(i as u64, item.ty))?;
    }
    Ok(())
}

fn write_file_as<E: Endian, W: Write + Seek>(
    file: &PerfFile<'_>,
    out: &mut W,
) -> Result<(), Error> {
    if file.legacy_v1 && E::KIND != file.endian {
        return Err(Error::other(
            "a legacy PERFFILE (v1) file keeps its byte order: its magic does not record one",
        ));
    }
    let ctx = Ctx::default();
    let start = out.stream_position()?;
    let header_size = if file.short_header && file.features.is_empty() {
        PERF_FILE_HEADER_SIZE_NO_FEATURES
    } else {
        PERF_FILE_HEADER_SIZE
    };
    // Placeholder header; rewritten at the end.
    out.write_all(&vec![0u8; header_size as usize])?;
    let mut pos = header_size;

    // ids of each attr, then the attrs section.
    let mut id_sections = vec![];
    for a in &file.attrs {
        let mut w = Writer::<E>::new();
        SampleIds {
            ids: Array::from(a.ids.clone()),
        }
        .encode(&mut w, &ctx)?;
        id_sections.push(FileSection {
            offset: pos,
            size: w.len() as u64,
        });
        pos += w.len() as u64;
        out.write_all(w.as_slice())?;
    }
    let attr_size = match file.attrs.first() {
        Some(a) => {
            u64::from(a.attr.size.max(64))
                + 16
                + a.entry_tail.as_ref().map_or(0, |t| t.len() as u64)
        }
        None => 0,
    };
    let attrs_offset = pos;
    for (i, (a, ids)) in file.attrs.iter().zip(&id_sections).enumerate() {
        let mut w = Writer::<E>::new();
        AttrEntry {
            attr: a.attr.clone(),
            ids: *ids,
            tail: a.entry_tail.clone(),
        }
        .encode(&mut w, &ctx, attr_size)
        .map_err(|e| e.in_field("attrs").in_index(i))?;
        if w.len() as u64 != attr_size {
            return Err(Error::inconsistent(format!(
                "attr {i} encodes to {} bytes, attr 0 to {attr_size}: the attrs section needs one entry size",
                w.len()
            )));
        }
        pos += w.len() as u64;
        out.write_all(w.as_slice())?;
    }
    let attrs = FileSection {
        offset: attrs_offset,
        size: pos - attrs_offset,
    };
    let mut event_types = FileSection::default();
    if let Some(et) = &file.event_types {
        let mut w = Writer::<E>::new();
        et.encode(&mut w, &ctx)?;
        event_types = FileSection {
            offset: pos,
            size: w.len() as u64,
        };
        pos += w.len() as u64;
        out.write_all(w.as_slice())?;
    }

    // The record stream.
    let data_offset = pos;
    let mut counted = CountingWriter {
        inner: &mut *out,
        count: 0,
    };
    let mut buf = Writer::<E>::new();
    for (i, item) in file.records.iter().enumerate() {
        write_record::<E>(file, item, &mut buf, &mut counted)
            .map_err(|e| e.with_record(i as u64, item.ty))?;
    }
    let data = FileSection {
        offset: data_offset,
        size: counted.count,
    };
    pos += counted.count;

    // Feature table and payloads, in id order.
    let mut features: Vec<_> = file.features.iter().collect();
    features.sort_by_key(|f| f.id.0);
    let mut bitmap = [0u64; 4];
    let mut payloads = Writer::<E>::new();
    let mut table = Writer::<E>::new();
    let table_size = 16 * features.len() as u64 + file.feature_table_slack.len() as u64;
    let fctx = file.feature_ctx();
    for f in &features {
        if f.id.0 >= 256 {
            return Err(Error::inconsistent(format!(
                "feature id {} does not fit the 256-bit feature bitmap",
                f.id.0
            )));
        }
        if features.iter().filter(|g| g.id == f.id).count() > 1 {
            return Err(Error::inconsistent(format!(
                "feature {} appears twice",
                f.id
            )));
        }
        bitmap[f.id.0 as usize / 64] |= 1 << (f.id.0 % 64);
        let before = payloads.len();
        encode_feature::<E>(file, &f.data, f.id, &fctx, &mut payloads)
            .map_err(|e| e.with_feature(f.id))?;
        FileSection {
            offset: pos + table_size + before as u64,
            size: (payloads.len() - before) as u64,
        }
        .encode(&mut table, &ctx)?;
    }
    out.write_all(table.as_slice())?;
    out.write_all(&file.feature_table_slack)?;
    out.write_all(payloads.as_slice())?;

    let header = FileHeader {
        magic: PERF_MAGIC,
        size: header_size,
        attr_size,
        attrs,
        data,
        event_types,
        adds_features: (header_size == PERF_FILE_HEADER_SIZE).then(|| Array::from(bitmap.to_vec())),
    };
    let mut w = Writer::<E>::new();
    header.encode(&mut w, &ctx)?;
    let mut header_bytes = w.into_vec();
    if file.legacy_v1 {
        // "PERFFILE" does not depend on byte order: always these 8 bytes.
        header_bytes[..8].copy_from_slice(&PERF_MAGIC_V1.to_le_bytes());
    }
    out.seek(SeekFrom::Start(start))?;
    out.write_all(&header_bytes)?;
    out.seek(SeekFrom::End(0))?;
    Ok(())
}

fn encode_feature<E: Endian>(
    file: &PerfFile<'_>,
    data: &FeatureData<'_>,
    id: FeatureId,
    ctx: &Ctx,
    w: &mut Writer<E>,
) -> Result<(), Error> {
    match data {
        FeatureData::Raw(bytes) if E::KIND == file.endian => {
            w.put_bytes(bytes);
            Ok(())
        }
        FeatureData::Raw(bytes) => {
            // Another byte order: through the typed value.
            let typed = match file.endian {
                Endianness::Little => {
                    FeatureBody::decode(id, &mut Reader::<LittleEndian>::new(bytes, 0), ctx)
                }
                Endianness::Big => {
                    FeatureBody::decode(id, &mut Reader::<BigEndian>::new(bytes, 0), ctx)
                }
            }?;
            refuse_unknown_feature(&typed, id)?;
            typed.encode(w, ctx)
        }
        FeatureData::Typed(body) => {
            if E::KIND != file.endian {
                refuse_unknown_feature(body, id)?;
            }
            body.encode(w, ctx)
        }
    }
}

fn refuse_unknown_feature(body: &FeatureBody<'_>, id: FeatureId) -> Result<(), Error> {
    if matches!(body, FeatureBody::Unknown(_)) {
        return Err(Error::other(format!(
            "feature {id} is not described by the spec: its bytes cannot be converted to another byte order"
        )));
    }
    Ok(())
}

/// Encodes one record (header, body, payload) and writes it to `out`.
fn write_record<E: Endian>(
    file: &PerfFile<'_>,
    item: &RecordItem<'_>,
    buf: &mut Writer<E>,
    out: &mut impl Write,
) -> Result<(), Error> {
    buf.clear();
    let ctx = file.record_ctx(item);
    let payload: &[u8] = match &item.data {
        RecordData::Raw { body, payload } if E::KIND == file.endian => {
            buf.put_bytes(body);
            payload
        }
        RecordData::Raw { body, payload } => {
            if item.ty.name().is_none() {
                return Err(Error::other(format!(
                    "record type {} is not described by the spec: its bytes cannot be converted to another byte order",
                    item.ty.0
                )));
            }
            if item.ty == RecordType::COMPRESSED || item.ty == RecordType::COMPRESSED2 {
                return Err(Error::other(
                    "compressed records hold records in the input's byte order: decompress before converting",
                ));
            }
            let typed = match file.endian {
                Endianness::Little => {
                    RecordBody::decode(item.ty, &mut Reader::<LittleEndian>::new(body, 0), &ctx)
                }
                Endianness::Big => {
                    RecordBody::decode(item.ty, &mut Reader::<BigEndian>::new(body, 0), &ctx)
                }
            }?;
            typed.encode(buf, &ctx)?;
            // Payloads (tracing data, AUX data) are bytes in the producer's own terms.
            payload
        }
        RecordData::Typed(body) => {
            body.encode(buf, &ctx)?;
            body.payload().unwrap_or(&[])
        }
    };
    // The body is encoded first: the header's size follows from it.
    let size = EVENT_HEADER_SIZE + buf.len();
    let size = u16::try_from(size).map_err(|_| {
        Error::inconsistent(format!(
            "a {} record of {size} bytes does not fit perf_event_header.size (at most 65535)",
            item.ty
        ))
    })?;
    let mut header = Writer::<E>::with_capacity(EVENT_HEADER_SIZE);
    EventHeader {
        type_: item.ty.0,
        misc: item.misc,
        size,
    }
    .encode(&mut header, &Ctx::default())?;
    out.write_all(header.as_slice())?;
    out.write_all(buf.as_slice())?;
    out.write_all(payload)?;
    Ok(())
}

/// `sizeof(struct perf_event_header)`: what a record's size counts besides its body.
const EVENT_HEADER_SIZE: usize = crate::container::stream::HEADER_SIZE;

/// Counts the bytes written through it (the data section's size).
struct CountingWriter<'w, W: Write> {
    inner: &'w mut W,
    count: u64,
}

impl<W: Write> Write for CountingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
