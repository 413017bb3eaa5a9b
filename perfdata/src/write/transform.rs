//! Whole-file conversions of a [`Builder`], as its methods: decompressing and
//! compressing the record stream, moving between the file and pipe layouts, changing the
//! byte order, decoding everything. Each keeps every record's content; only framing
//! changes (compressed chunks, HEADER_* records vs. sections). Each is one stage (see
//! `stages`) run over the model's records — the same code `perfdata convert` streams a
//! file through.

use super::encode::encode_body;
use super::model::{Builder, RecordData};
use super::stages::{
    run_on_model, Compress, CompressedKind, Decompress, ToEndian, ToFile, ToPipe, Typed,
};
use crate::container::is_compressed;
use crate::rt::{static_endian, Bytes, Endianness, Error};

impl Builder<'_> {
    /// Replaces every COMPRESSED / COMPRESSED2 record with the records it holds (one
    /// continuous zstd stream, records may straddle chunks) and drops HEADER_COMPRESSED.
    pub fn decompress(&mut self) -> Result<(), Error> {
        run_on_model(self, Decompress::new())
    }

    /// Compresses the kernel records (types below 64: what perf compresses from its ring
    /// buffers) into COMPRESSED2 or COMPRESSED records, keeping perf's own records
    /// uncompressed between them, and records HEADER_COMPRESSED. One zstd stream is used for
    /// the whole file, flushed at the end of each compressed record, as perf does. The
    /// records inside are in the model's byte order: to write another order, call
    /// [`Builder::set_endian`] first.
    pub fn compress(&mut self, kind: CompressedKind, level: i32) -> Result<(), Error> {
        let file = self;
        static_endian!(file.endian, |e| run_on_model(
            file,
            Compress::for_order(e, kind, level)?
        ))?;
        // Kept as bytes in the model's order, like records read from a file: the writer then
        // refuses to write them in another order (their content would stay in this one).
        let fctx = file.feature_ctx();
        for r in &mut file.records {
            if let RecordData::Typed(body) = &r.data {
                if is_compressed(r.ty) {
                    let bytes = encode_body(file.endian, body, &fctx)?;
                    r.data = RecordData::Raw {
                        body: Bytes::from(bytes),
                        payload: Bytes::default(),
                    };
                }
            }
        }
        Ok(())
    }

    /// Re-encodes the model's raw records and features in byte order `endian` and makes it
    /// the model's order. Needed before [`Builder::compress`] when the output is to have another byte
    /// order than the input (compressed records hold records in one order).
    pub fn set_endian(&mut self, endian: Endianness) -> Result<(), Error> {
        static_endian!(endian, |e| run_on_model(self, ToEndian::for_order(e)))
    }

    /// File layout → pipe layout, as `perf record -o -` would have streamed it: HEADER_ATTR
    /// records, then every feature as a HEADER_FEATURE record (TRACING_DATA as
    /// HEADER_TRACING_DATA with its payload, BUILD_ID as HEADER_BUILD_ID records) and the
    /// end-of-features marker, then the data records.
    pub fn to_pipe(&mut self) -> Result<(), Error> {
        run_on_model(self, ToPipe::new())
    }

    /// Pipe layout → file layout, as `perf inject -o file` does: HEADER_ATTR records become
    /// the attrs section, HEADER_FEATURE / HEADER_TRACING_DATA / HEADER_BUILD_ID records
    /// become feature sections, everything else is the data section.
    pub fn to_file(&mut self) -> Result<(), Error> {
        run_on_model(self, ToFile::new())
    }

    /// Decodes every raw feature and record into owned values (the typed model). Records
    /// of types the spec does not know stay raw.
    pub fn make_typed(&mut self) -> Result<(), Error> {
        run_on_model(self, Typed::new())
    }
}
