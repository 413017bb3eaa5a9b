//! Compressing the kernel records (types below 64: what perf compresses from its ring
//! buffers) into COMPRESSED2 or COMPRESSED records; perf's own records stay uncompressed
//! between them. One zstd stream for the whole output, flushed at the end of each chunk,
//! as perf does. The records inside are encoded in the output's byte order `E`.

use super::feature_records::is_end_marker;
use super::pipeline::{Emit, Stage};
use super::relayout::feature_record;
use crate::container::is_compressed;
use crate::container::Layout;
use crate::generated::perf_data::{
    Compressed, Compressed2, CompressedFeature, CompressionType, Ctx, FeatureBody, FeatureId,
    RecordBody, RecordMisc, RecordType,
};
use crate::rt::{Bytes, Endianness, Error, StaticEndian};
use crate::write::encode::RecordEncoder;
use crate::write::model::{Builder, FeatureData, FeatureItem, RecordData, RecordItem};
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

/// Compresses the kernel records into COMPRESSED2 or COMPRESSED records: consecutive
/// kernel records are compressed about 256 KiB at a time, and each chunk's zstd output is
/// cut into records that fit `header.size`. Records HEADER_COMPRESSED: the feature
/// section at `finish` in file layout, a HEADER_FEATURE record before the end-of-features
/// marker in a pipe. A stream that is already compressed is refused: decompress it first.
pub struct Compress<E: StaticEndian> {
    kind: CompressedKind,
    level: i32,
    zstd: Encoder<'static>,
    /// Encodes the records that go into a chunk (set by `begin`).
    enc: Option<RecordEncoder<E>>,
    layout: Layout,
    src: Endianness,
    chunk: Vec<u8>,
    /// zstd output of one chunk, cut into record-sized pieces.
    pieces: Vec<Vec<u8>>,
    raw_total: u64,
    zstd_total: u64,
    /// Pipe layout: the HEADER_FEATURE record for COMPRESSED has been sent.
    announced: bool,
}

impl<E: StaticEndian> Compress<E> {
    /// [`Compress::new`] with the output order given as a value (for
    /// [`static_endian!`](crate::rt::static_endian)).
    pub fn for_order(_: E, kind: CompressedKind, level: i32) -> Result<Self, Error> {
        Self::new(kind, level)
    }

    /// Compresses into records of `kind` at zstd `level` (stated in HEADER_COMPRESSED).
    /// Fails when the zstd encoder cannot be created.
    pub fn new(kind: CompressedKind, level: i32) -> Result<Self, Error> {
        Ok(Compress {
            kind,
            level,
            zstd: Encoder::new(level)?,
            enc: None,
            layout: Layout::File,
            src: E::KIND,
            chunk: Vec::with_capacity(CHUNK),
            pieces: vec![],
            raw_total: 0,
            zstd_total: 0,
            announced: false,
        })
    }

    fn feature(&self) -> CompressedFeature<'static> {
        CompressedFeature {
            comp_ver: 1,
            comp_type: CompressionType::ZSTD,
            comp_level: self.level.max(0) as u32,
            // A pipe announces it before the data: unknown then (perf writes 0 too).
            comp_ratio: match self.layout {
                Layout::File => (self.raw_total / self.zstd_total.max(1)) as u32,
                Layout::Pipe => 0,
            },
            comp_mmap_len: CHUNK as u32,
            tail: None,
        }
    }

    fn announce(&mut self, out: &mut Emit<'_>) -> Result<(), Error> {
        if self.layout == Layout::Pipe && !self.announced {
            self.announced = true;
            let body = FeatureBody::CompressedFeature(self.feature());
            out(feature_record(FeatureId::COMPRESSED, body))?;
        }
        Ok(())
    }

    /// Compresses the pending chunk and emits it as compressed records.
    fn flush(&mut self, out: &mut Emit<'_>) -> Result<(), Error> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        self.raw_total += self.chunk.len() as u64;
        compress_chunk(&mut self.zstd, &self.chunk, &mut self.pieces)?;
        self.chunk.clear();
        for piece in self.pieces.drain(..) {
            self.zstd_total += piece.len() as u64;
            let data = Bytes::from(&piece[..]);
            let (ty, body) = match self.kind {
                CompressedKind::Compressed2 => (
                    RecordType::COMPRESSED2,
                    RecordBody::Compressed2(Compressed2 {
                        data,
                        ..Default::default()
                    }),
                ),
                CompressedKind::Compressed => (
                    RecordType::COMPRESSED,
                    RecordBody::Compressed(Compressed {
                        data,
                        ..Default::default()
                    }),
                ),
            };
            out(RecordItem {
                ty,
                misc: RecordMisc::default(),
                attr: None,
                data: RecordData::Typed(Box::new(body)),
            })?;
        }
        Ok(())
    }
}

impl<E: StaticEndian> Stage for Compress<E> {
    fn begin(&mut self, head: &mut Builder<'_>, fctx: Ctx) -> Result<(), Error> {
        self.layout = head.layout;
        self.src = head.endian;
        self.enc = Some(RecordEncoder::new(head.endian, &head.attrs, fctx));
        Ok(())
    }

    fn push(&mut self, item: RecordItem<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        if is_compressed(item.ty) {
            return Err(Error::other("the stream is already compressed"));
        }
        if item.ty.0 >= 64 {
            self.flush(out)?;
            // Announced with the other features, before the end-of-features marker.
            if is_end_marker(self.src, &item) {
                self.announce(out)?;
            }
            return out(item);
        }
        self.announce(out)?;
        let start = self.chunk.len();
        let enc = self.enc.as_mut().expect("begin sets the encoder");
        // The compressed stream holds records exactly as the data section would.
        enc.write(&item, &mut self.chunk)?;
        if start > 0 && self.chunk.len() > CHUNK {
            // This record starts the next chunk.
            let record = self.chunk.split_off(start);
            self.flush(out)?;
            self.chunk = record;
        }
        Ok(())
    }

    fn finish(&mut self, head: &mut Builder<'_>, out: &mut Emit<'_>) -> Result<(), Error> {
        self.flush(out)?;
        match self.layout {
            Layout::File => {
                head.features.retain(|f| f.id != FeatureId::COMPRESSED);
                head.features.push(FeatureItem {
                    id: FeatureId::COMPRESSED,
                    data: FeatureData::Typed(Box::new(FeatureBody::CompressedFeature(
                        self.feature(),
                    ))),
                });
                head.features.sort_by_key(|f| f.id.0);
            }
            Layout::Pipe => self.announce(out)?,
        }
        Ok(())
    }
}

/// Compresses `input` and flushes; appends the zstd bytes, cut into record-sized pieces,
/// to `pieces`.
fn compress_chunk(
    encoder: &mut Encoder<'static>,
    input: &[u8],
    pieces: &mut Vec<Vec<u8>>,
) -> Result<(), Error> {
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
    Ok(())
}
