//! Whole-file conversions on a [`PerfFile`]: decompressing and compressing the record
//! stream, and moving between the file and pipe layouts. Each keeps every record's content;
//! only framing changes (compressed chunks, HEADER_* records vs. sections).

use crate::container::decompress::{zstd_data, Decompressor};
use crate::container::session::Session;
use crate::container::{EventAttr, Layout, RecordWalker};
use crate::generated::perf_data::{
    BuildId, BuildIdEntry, BuildIdMisc, Compressed, Compressed2, CompressedFeature,
    CompressionType, Ctx, EventHeader, FeatureBody, FeatureId, HeaderAttr, HeaderFeature,
    RecordBody, RecordMisc, RecordType, HEADER_LAST_FEATURE,
};
use crate::model::{FeatureData, FeatureItem, PerfFile, RecordData, RecordItem};
use crate::rt::{
    Array, BigEndian, Bytes, Endian, Endianness, Error, LittleEndian, Payload, Reader, Writer,
};
use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

/// Which compressed record type to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressedKind {
    /// PERF_RECORD_COMPRESSED2 (83): 8-byte aligned; perf ≥ 6.16.
    #[default]
    Compressed2,
    /// PERF_RECORD_COMPRESSED (81): what older perf (e.g. 6.1) reads.
    Compressed,
}

/// Most zstd bytes one compressed record carries (its size must fit `header.size`, a u16,
/// with the header and COMPRESSED2's size field and padding).
const MAX_ZSTD_PER_RECORD: usize = 65_504;
/// Uncompressed bytes handed to the compressor at once; also announced to readers as
/// HEADER_COMPRESSED.comp_mmap_len, which perf uses to size its decompression buffer.
const CHUNK: usize = 256 << 10;

fn endian_dispatch<T>(endian: Endianness, le: impl FnOnce() -> T, be: impl FnOnce() -> T) -> T {
    match endian {
        Endianness::Little => le(),
        Endianness::Big => be(),
    }
}

fn session_of(file: &PerfFile<'_>) -> Session<'static> {
    let mut session = Session::default();
    for a in &file.attrs {
        session.add_attr(a.clone().into_owned());
    }
    let ctx = file.feature_ctx();
    session.nr_cpus_avail = ctx.nr_cpus_avail;
    session.nr_cpus_online = ctx.nr_cpus_online;
    session
}

/// The record's body (and payload) bytes in the file's own byte order.
fn record_bytes(file: &PerfFile<'_>, item: &RecordItem<'_>) -> Result<(Vec<u8>, Vec<u8>), Error> {
    match &item.data {
        RecordData::Raw { body, payload } => Ok((body.to_vec(), payload.to_vec())),
        RecordData::Typed(b) => {
            let ctx = file.record_ctx(item);
            let body = endian_dispatch(
                file.endian,
                || {
                    let mut w = Writer::<LittleEndian>::new();
                    b.encode(&mut w, &ctx).map(|_| w.into_vec())
                },
                || {
                    let mut w = Writer::<BigEndian>::new();
                    b.encode(&mut w, &ctx).map(|_| w.into_vec())
                },
            )?;
            Ok((body, b.payload().unwrap_or(&[]).to_vec()))
        }
    }
}

/// Replaces every COMPRESSED / COMPRESSED2 record with the records it holds (one
/// continuous zstd stream, records may straddle chunks) and drops HEADER_COMPRESSED.
pub fn decompress(file: &mut PerfFile<'_>) -> Result<(), Error> {
    let session = session_of(file);
    let mut out: Vec<RecordItem<'static>> = Vec::with_capacity(file.records.len());
    let mut decompressor: Option<Decompressor> = None;
    let records = std::mem::take(&mut file.records);
    for (i, item) in records.into_iter().enumerate() {
        if item.ty != RecordType::COMPRESSED && item.ty != RecordType::COMPRESSED2 {
            out.push(owned(item));
            continue;
        }
        let (body, _) = record_bytes(file, &item)?;
        let zdata = match file.endian {
            Endianness::Little => zstd_data::<LittleEndian>(item.ty, &body, 0),
            Endianness::Big => zstd_data::<BigEndian>(item.ty, &body, 0),
        }
        .map_err(|e| e.with_record(i as u64, item.ty))?
        .unwrap_or_default();
        let d = match &mut decompressor {
            Some(d) => d,
            None => decompressor.insert(Decompressor::new()?),
        };
        d.feed(&zdata, i as u64)?;
        let taken = match file.endian {
            Endianness::Little => take_records::<LittleEndian>(d.pending(), &session, &mut out)?,
            Endianness::Big => take_records::<BigEndian>(d.pending(), &session, &mut out)?,
        };
        d.consume(taken);
    }
    if let Some(d) = &decompressor {
        if !d.pending().is_empty() {
            return Err(Error::other(format!(
                "the compressed stream ends inside a record ({} bytes left)",
                d.pending().len()
            )));
        }
    }
    file.records = out;
    file.features.retain(|f| f.id != FeatureId::COMPRESSED);
    file.records
        .retain(|r| !is_feature_record(file.endian, r, FeatureId::COMPRESSED));
    Ok(())
}

/// Moves the complete records at the start of `pending` into `out`; returns their length.
fn take_records<E: Endian>(
    pending: &[u8],
    session: &Session<'_>,
    out: &mut Vec<RecordItem<'static>>,
) -> Result<usize, Error> {
    let mut taken = 0;
    for rec in RecordWalker::<E>::new(pending, 0) {
        match rec {
            Ok(rec) => {
                taken += rec.stream_len();
                let ty = rec.record_type();
                out.push(RecordItem {
                    ty,
                    misc: rec.header.misc,
                    attr: session.attr_index::<E>(ty, rec.body),
                    data: RecordData::Raw {
                        body: Bytes::from(rec.body.to_vec()),
                        payload: Bytes::from(rec.payload.to_vec()),
                    },
                });
            }
            Err(e) if matches!(e.kind(), crate::rt::ErrorKind::UnexpectedEnd { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(taken)
}

fn owned(item: RecordItem<'_>) -> RecordItem<'static> {
    item.into_owned()
}

/// True when `r` is the pipe's end-of-features marker: a HEADER_FEATURE without payload.
/// Its id is the producer's `HEADER_LAST_FEATURE`, which differs between perf versions.
fn is_end_marker(endian: Endianness, r: &RecordItem<'_>) -> bool {
    header_feature(endian, r).is_some_and(|h| h.data.is_none())
}

/// The HEADER_FEATURE record `r` holds, decoded.
fn header_feature(endian: Endianness, r: &RecordItem<'_>) -> Option<HeaderFeature<'static>> {
    if r.ty != RecordType::HEADER_FEATURE {
        return None;
    }
    match &r.data {
        RecordData::Typed(b) => match &**b {
            RecordBody::HeaderFeature(h) => Some(h.clone().into_owned()),
            _ => None,
        },
        RecordData::Raw { body, .. } => {
            let ctx = Ctx::default();
            let decoded = endian_dispatch(
                endian,
                || RecordBody::decode(r.ty, &mut Reader::<LittleEndian>::new(body, 0), &ctx),
                || RecordBody::decode(r.ty, &mut Reader::<BigEndian>::new(body, 0), &ctx),
            );
            match decoded {
                Ok(RecordBody::HeaderFeature(h)) => Some(h.into_owned()),
                _ => None,
            }
        }
    }
}

/// True when `r` is a HEADER_FEATURE record carrying feature `id`.
fn is_feature_record(endian: Endianness, r: &RecordItem<'_>, id: FeatureId) -> bool {
    header_feature(endian, r).is_some_and(|h| h.feat_id == u64::from(id.0))
}

/// Compresses the kernel records (types below 64: what perf compresses from its ring
/// buffers) into COMPRESSED2 or COMPRESSED records, keeping perf's own records
/// uncompressed between them, and records HEADER_COMPRESSED. One zstd stream is used for
/// the whole file, flushed at the end of each compressed record, as perf does.
pub fn compress(file: &mut PerfFile<'_>, kind: CompressedKind, level: i32) -> Result<(), Error> {
    if file
        .records
        .iter()
        .any(|r| r.ty == RecordType::COMPRESSED || r.ty == RecordType::COMPRESSED2)
    {
        return Err(Error::other("the stream is already compressed"));
    }
    let mut encoder = Encoder::new(level)?;
    let records = std::mem::take(&mut file.records);
    let mut out: Vec<RecordItem<'static>> = Vec::with_capacity(records.len() / 8 + 8);
    let mut chunk: Vec<u8> = Vec::with_capacity(CHUNK);
    let (mut raw_total, mut zstd_total) = (0u64, 0u64);
    let mut flush =
        |chunk: &mut Vec<u8>, out: &mut Vec<RecordItem<'static>>| -> Result<(), Error> {
            if chunk.is_empty() {
                return Ok(());
            }
            raw_total += chunk.len() as u64;
            for piece in compress_chunk(&mut encoder, chunk)? {
                zstd_total += piece.len() as u64;
                out.push(compressed_record(kind, piece));
            }
            chunk.clear();
            Ok(())
        };
    for item in records {
        if item.ty.0 >= 64 {
            flush(&mut chunk, &mut out)?;
            out.push(owned(item));
            continue;
        }
        let (body, payload) = record_bytes(file, &item)?;
        let mut w = Vec::with_capacity(8 + body.len());
        let size = u16::try_from(8 + body.len())
            .map_err(|_| Error::other("record larger than 65535 bytes"))?;
        // perf_event_header, in the file's byte order (the compressed stream holds records
        // exactly as they would sit in the data section).
        let header = EventHeader {
            type_: item.ty.0,
            misc: item.misc,
            size,
        };
        match file.endian {
            Endianness::Little => w.extend_from_slice(&encode_header::<LittleEndian>(&header)?),
            Endianness::Big => w.extend_from_slice(&encode_header::<BigEndian>(&header)?),
        }
        w.extend_from_slice(&body);
        w.extend_from_slice(&payload);
        if chunk.len() + w.len() > CHUNK {
            flush(&mut chunk, &mut out)?;
        }
        chunk.extend_from_slice(&w);
    }
    flush(&mut chunk, &mut out)?;
    file.records = out;
    let feature = CompressedFeature {
        comp_ver: 1,
        comp_type: CompressionType::ZSTD,
        comp_level: level.max(0) as u32,
        comp_ratio: (raw_total / zstd_total.max(1)) as u32,
        comp_mmap_len: CHUNK as u32,
        tail: None,
    };
    match file.layout {
        Layout::File => {
            file.features.retain(|f| f.id != FeatureId::COMPRESSED);
            file.features.push(FeatureItem {
                id: FeatureId::COMPRESSED,
                data: FeatureData::Typed(Box::new(FeatureBody::CompressedFeature(feature))),
            });
            file.features.sort_by_key(|f| f.id.0);
        }
        Layout::Pipe => {
            // Announce it with the other features, before the end-of-features marker.
            let at = file
                .records
                .iter()
                .position(|r| is_end_marker(file.endian, r) || r.ty.0 < 64)
                .unwrap_or(0);
            file.records.insert(
                at,
                feature_record(
                    FeatureId::COMPRESSED,
                    FeatureBody::CompressedFeature(feature),
                ),
            );
        }
    }
    Ok(())
}

fn encode_header<E: Endian>(h: &EventHeader) -> Result<Vec<u8>, Error> {
    let mut w = Writer::<E>::new();
    h.encode(&mut w, &Ctx::default())?;
    Ok(w.into_vec())
}

/// Compresses `input` and flushes; returns the zstd bytes split into record-sized pieces.
fn compress_chunk(encoder: &mut Encoder<'static>, input: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let mut pieces = vec![];
    let mut buf = vec![0u8; MAX_ZSTD_PER_RECORD];
    let mut inb = InBuffer::around(input);
    loop {
        let mut outb = OutBuffer::around(&mut buf[..]);
        if inb.pos() < input.len() {
            encoder.run(&mut inb, &mut outb)?;
            let n = outb.pos();
            if n > 0 {
                pieces.push(buf[..n].to_vec());
            }
        } else {
            let remaining = encoder.flush(&mut outb)?;
            let n = outb.pos();
            if n > 0 {
                pieces.push(buf[..n].to_vec());
            }
            if remaining == 0 {
                break;
            }
        }
    }
    Ok(pieces)
}

fn compressed_record(kind: CompressedKind, data: Vec<u8>) -> RecordItem<'static> {
    let (ty, body) = match kind {
        CompressedKind::Compressed2 => (
            RecordType::COMPRESSED2,
            RecordBody::Compressed2(Compressed2 {
                data: Bytes::from(data),
                ..Default::default()
            }),
        ),
        CompressedKind::Compressed => (
            RecordType::COMPRESSED,
            RecordBody::Compressed(Compressed {
                data: Bytes::from(data),
                ..Default::default()
            }),
        ),
    };
    RecordItem {
        ty,
        misc: RecordMisc::default(),
        attr: None,
        data: RecordData::Typed(Box::new(body)),
    }
}

fn feature_record(id: FeatureId, body: FeatureBody<'static>) -> RecordItem<'static> {
    RecordItem {
        ty: RecordType::HEADER_FEATURE,
        misc: RecordMisc::default(),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderFeature(HeaderFeature {
            feat_id: u64::from(id.0),
            data: Some(Box::new(body)),
            // Unpadded, as perf before ~6.14 writes them: older readers take padding for
            // data (perf 6.1 reads it as CPU_TOPOLOGY die ids), newer ones accept both.
            tail: Some(Bytes::default()),
        }))),
    }
}

/// The decoded value of a feature, whatever form the model holds it in.
fn feature_value(file: &PerfFile<'_>, f: &FeatureItem<'_>) -> Result<FeatureBody<'static>, Error> {
    match &f.data {
        FeatureData::Typed(b) => Ok((**b).clone().into_owned()),
        FeatureData::Raw(bytes) => {
            let ctx = file.feature_ctx();
            endian_dispatch(
                file.endian,
                || FeatureBody::decode(f.id, &mut Reader::<LittleEndian>::new(bytes, 0), &ctx),
                || FeatureBody::decode(f.id, &mut Reader::<BigEndian>::new(bytes, 0), &ctx),
            )
            .map(FeatureBody::into_owned)
            .map_err(|e| e.with_feature(f.id))
        }
    }
}

/// File layout → pipe layout, as `perf record -o -` would have streamed it: HEADER_ATTR
/// records, then every feature as a HEADER_FEATURE record (TRACING_DATA as
/// HEADER_TRACING_DATA with its payload, BUILD_ID as HEADER_BUILD_ID records) and the
/// end-of-features marker, then the data records.
pub fn to_pipe(file: &mut PerfFile<'_>) -> Result<(), Error> {
    if file.layout == Layout::Pipe {
        return Ok(());
    }
    let mut prologue: Vec<RecordItem<'static>> = vec![];
    for a in &file.attrs {
        prologue.push(RecordItem {
            ty: RecordType::HEADER_ATTR,
            misc: RecordMisc::default(),
            attr: None,
            data: RecordData::Typed(Box::new(RecordBody::HeaderAttr(HeaderAttr {
                attr: a.attr.clone().into_owned(),
                ids: Array::from(a.ids.clone()),
                tail: None,
            }))),
        });
    }
    for f in &file.features {
        let value = feature_value(file, f)?;
        match value {
            FeatureBody::TracingData(_) => {
                let bytes = match &f.data {
                    FeatureData::Raw(b) => b.to_vec(),
                    FeatureData::Typed(b) => endian_dispatch(
                        file.endian,
                        || {
                            let mut w = Writer::<LittleEndian>::new();
                            b.encode(&mut w, &file.feature_ctx()).map(|_| w.into_vec())
                        },
                        || {
                            let mut w = Writer::<BigEndian>::new();
                            b.encode(&mut w, &file.feature_ctx()).map(|_| w.into_vec())
                        },
                    )?,
                };
                // perf pads the tracing data that follows the record to 8 bytes and
                // checks that `size` says so.
                let mut bytes = bytes;
                bytes.resize(bytes.len().next_multiple_of(8), 0);
                prologue.push(RecordItem {
                    ty: RecordType::HEADER_TRACING_DATA,
                    misc: RecordMisc::default(),
                    attr: None,
                    data: RecordData::Typed(Box::new(RecordBody::HeaderTracingData(
                        crate::generated::perf_data::HeaderTracingData {
                            data: Payload::Data(Bytes::from(bytes)),
                            tail: None,
                        },
                    ))),
                });
            }
            FeatureBody::BuildId(list) => {
                for entry in list.entries {
                    prologue.push(build_id_record(entry));
                }
            }
            other => prologue.push(feature_record(f.id, other)),
        }
    }
    prologue.push(RecordItem {
        ty: RecordType::HEADER_FEATURE,
        misc: RecordMisc::default(),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderFeature(HeaderFeature {
            feat_id: file.pipe_end_marker.unwrap_or_else(|| end_marker_for(file)),
            data: None,
            tail: None,
        }))),
    });
    // Attr indices of the data records are unchanged: attrs keep their order.
    let records = std::mem::take(&mut file.records);
    let shifted: Vec<RecordItem<'static>> = records.into_iter().map(owned).collect();
    prologue.extend(shifted);
    file.records = prologue;
    file.features.clear();
    file.feature_table_slack = Bytes::default();
    file.event_types = None;
    file.layout = Layout::Pipe;
    Ok(())
}

/// The id that ends the features of a pipe made from `file`. Readers stop at their own
/// `HEADER_LAST_FEATURE` and take any smaller id for a real (here empty) feature, so the
/// marker follows the readers: 32 for perf 6.x (which rejects a larger id as "wrong feature
/// ID" and fails on the empty feature a smaller one would be), 33 when the file comes from
/// a perf (≥ 7.0, approximately) that knows CPU_DOMAIN_INFO and only its readers can read it
/// all anyway.
fn end_marker_for(file: &PerfFile<'_>) -> u64 {
    const PERF_6_LAST_FEATURE: u64 = 32;
    let version = file
        .features
        .iter()
        .find(|f| f.id == FeatureId::VERSION)
        .and_then(|f| match feature_value(file, f).ok()? {
            FeatureBody::Version(v) => {
                let text = v.value.text.to_str_lossy().into_owned();
                let mut parts = text.split(|c: char| !c.is_ascii_digit());
                Some((
                    parts.next()?.parse::<u32>().ok()?,
                    parts.next()?.parse::<u32>().ok()?,
                ))
            }
            _ => None,
        });
    let knows_cpu_domain_info = version.is_some_and(|v| v >= (7, 0))
        || file
            .features
            .iter()
            .any(|f| f.id == FeatureId::CPU_DOMAIN_INFO);
    if knows_cpu_domain_info {
        u64::from(HEADER_LAST_FEATURE)
    } else {
        PERF_6_LAST_FEATURE
    }
}

fn build_id_record(entry: BuildIdEntry<'_>) -> RecordItem<'static> {
    use crate::generated::perf_data::HeaderBuildId;
    RecordItem {
        ty: RecordType::HEADER_BUILD_ID,
        misc: RecordMisc(entry.misc.0),
        attr: None,
        data: RecordData::Typed(Box::new(RecordBody::HeaderBuildId(HeaderBuildId {
            pid: entry.pid,
            build_id: entry.build_id.into_owned(),
            build_id_size: entry.build_id_size,
            reserved1: entry.reserved1,
            reserved2: entry.reserved2,
            filename: entry.filename.into_owned(),
            tail: entry.tail.map(|t| t.into_owned()),
        }))),
    }
}

/// Pipe layout → file layout, as `perf inject -o file` does: HEADER_ATTR records become
/// the attrs section, HEADER_FEATURE / HEADER_TRACING_DATA / HEADER_BUILD_ID records
/// become feature sections, everything else is the data section.
pub fn to_file(file: &mut PerfFile<'_>) -> Result<(), Error> {
    if file.layout == Layout::File {
        return Ok(());
    }
    // Before the records move out: NRCPUS travels in one of them.
    let fctx = file.feature_ctx();
    let records = std::mem::take(&mut file.records);
    let mut attrs: Vec<EventAttr<'static>> = vec![];
    let mut features: Vec<FeatureItem<'static>> = vec![];
    let mut build_ids: Vec<BuildIdEntry<'static>> = vec![];
    let mut data: Vec<RecordItem<'static>> = vec![];
    let endian = file.endian;
    // The prologue — what `perf record -o -` sends before the first kernel record or the
    // end-of-features marker — holds the header's content. HEADER_BUILD_ID records after it
    // (`perf inject -b` puts them in the data) stay records.
    let mut in_prologue = true;
    for (i, item) in records.into_iter().enumerate() {
        if item.ty.0 < 64 {
            in_prologue = false;
        }
        let header_content = match item.ty {
            RecordType::HEADER_ATTR | RecordType::HEADER_TRACING_DATA => true,
            RecordType::HEADER_FEATURE | RecordType::HEADER_BUILD_ID => in_prologue,
            _ => false,
        };
        if !header_content {
            data.push(owned(item));
            continue;
        }
        let body = match item.data {
            RecordData::Typed(b) => (*b).into_owned(),
            RecordData::Raw { body, payload } => {
                let mut b = endian_dispatch(
                    endian,
                    || {
                        RecordBody::decode(
                            item.ty,
                            &mut Reader::<LittleEndian>::new(&body, 0),
                            &fctx,
                        )
                    },
                    || RecordBody::decode(item.ty, &mut Reader::<BigEndian>::new(&body, 0), &fctx),
                )
                .map_err(|e| e.with_record(i as u64, item.ty))?
                .into_owned();
                b.set_payload(Bytes::from(payload.to_vec()));
                b
            }
        };
        match body {
            RecordBody::HeaderAttr(a) => attrs.push(EventAttr {
                attr: a.attr,
                ids: a.ids.iter().collect(),
                entry_tail: None,
            }),
            RecordBody::HeaderFeature(f) => {
                if f.data.is_none() {
                    in_prologue = false; // the end-of-features marker
                    file.pipe_end_marker = Some(f.feat_id);
                }
                if let Some(value) = f.data {
                    let value = *value;
                    if value.feature_id().is_some()
                        || !matches!(value, FeatureBody::Unknown(ref b) if b.is_empty())
                    {
                        features.push(FeatureItem {
                            id: FeatureId(f.feat_id as u32),
                            data: FeatureData::Typed(Box::new(value)),
                        });
                    }
                }
            }
            RecordBody::HeaderTracingData(t) => {
                features.push(FeatureItem {
                    id: FeatureId::TRACING_DATA,
                    data: FeatureData::Raw(Bytes::from(t.data.bytes().unwrap_or(&[]).to_vec())),
                });
            }
            RecordBody::HeaderBuildId(b) => build_ids.push(BuildIdEntry {
                type_: 0,
                misc: BuildIdMisc(item.misc.0),
                pid: b.pid,
                build_id: b.build_id,
                build_id_size: b.build_id_size,
                reserved1: b.reserved1,
                reserved2: b.reserved2,
                filename: b.filename,
                tail: b.tail,
            }),
            other => data.push(RecordItem {
                ty: item.ty,
                misc: item.misc,
                attr: item.attr,
                data: RecordData::Typed(Box::new(other)),
            }),
        }
    }
    if !build_ids.is_empty() && !features.iter().any(|f| f.id == FeatureId::BUILD_ID) {
        features.push(FeatureItem {
            id: FeatureId::BUILD_ID,
            data: FeatureData::Typed(Box::new(FeatureBody::BuildId(BuildId {
                entries: build_ids,
                tail: None,
            }))),
        });
    }
    features.sort_by_key(|f| f.id.0);
    features.dedup_by_key(|f| f.id.0);
    file.attrs = attrs;
    file.features = features;
    file.records = data;
    file.layout = Layout::File;
    Ok(())
}
