//! PERF_RECORD_COMPRESSED (81) / COMPRESSED2 (83): all compressed records of a stream form
//! ONE zstd stream, decoded with a persistent context; its output is a record stream in
//! which a record may straddle two compressed records, so the undecoded tail is carried.

use crate::generated::perf_data::{Ctx, RecordBody, RecordType};
use crate::rt::{Bytes, Endian, Error, Reader};
use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

/// Upper bound on what one compressed record may expand to. perf sizes its buffer from
/// HEADER_COMPRESSED.comp_mmap_len (the ring-buffer size, typically ≤ a few MiB); a bound
/// keeps a hostile stream from making us allocate without limit.
pub const MAX_EXPANSION_PER_RECORD: usize = 256 << 20;

pub struct Decompressor {
    decoder: Decoder<'static>,
    pending: Vec<u8>,
    /// zstd's output buffer, reused for every record (allocated and zeroed once).
    chunk: Vec<u8>,
}

impl Decompressor {
    pub fn new() -> Result<Self, Error> {
        let decoder =
            Decoder::new().map_err(|e| Error::invalid(Some(0), "a zstd decoder", e.to_string()))?;
        Ok(Decompressor {
            decoder,
            pending: Vec::new(),
            chunk: vec![0u8; 64 << 10],
        })
    }

    /// Decompresses one record's zstd data (at absolute offset `at`) onto the pending bytes.
    pub fn feed(&mut self, data: &[u8], at: u64) -> Result<(), Error> {
        self.feed_with(data, at, &mut |_| (0, true)).map(drop)
    }

    /// [`Decompressor::feed`], handing the pending bytes to `take` after every 64 KiB of
    /// output: it returns how many it took (dropped from the front) and whether to go
    /// on. So the pending bytes stay within a record plus a chunk however far the data
    /// expands. Returns `false` when `take` stopped it.
    pub fn feed_with(
        &mut self,
        data: &[u8],
        at: u64,
        take: &mut dyn FnMut(&[u8]) -> (usize, bool),
    ) -> Result<bool, Error> {
        let mut input = InBuffer::around(data);
        let mut chunk = std::mem::take(&mut self.chunk);
        let result = self.feed_chunks(&mut input, &mut chunk, at, take);
        self.chunk = chunk;
        result
    }

    fn feed_chunks(
        &mut self,
        input: &mut InBuffer<'_>,
        chunk: &mut [u8],
        at: u64,
        take: &mut dyn FnMut(&[u8]) -> (usize, bool),
    ) -> Result<bool, Error> {
        let len = input.src.len();
        let mut produced_total = 0usize;
        loop {
            let mut output = OutBuffer::around(&mut chunk[..]);
            self.decoder.run(input, &mut output).map_err(|e| {
                Error::invalid(
                    Some(at + input.pos() as u64),
                    "valid zstd data",
                    e.to_string(),
                )
            })?;
            let produced = output.pos();
            produced_total += produced;
            self.pending.extend_from_slice(&chunk[..produced]);
            if produced_total > MAX_EXPANSION_PER_RECORD {
                return Err(Error::invalid(
                    Some(at),
                    "a compressed record expanding to at most 256 MiB",
                    format!("more than {produced_total} bytes"),
                ));
            }
            if produced > 0 {
                let (taken, go_on) = take(&self.pending);
                self.consume(taken);
                if !go_on {
                    return Ok(false);
                }
            }
            if input.pos() == len && produced < chunk.len() {
                return Ok(true);
            }
        }
    }

    /// Decompressed bytes not yet taken.
    pub fn pending(&self) -> &[u8] {
        &self.pending
    }

    /// Drops the first `n` pending bytes (records that were taken).
    pub fn consume(&mut self, n: usize) {
        self.pending.drain(..n.min(self.pending.len()));
    }
}

/// The zstd bytes of a COMPRESSED or COMPRESSED2 record body (`None` for other types);
/// they borrow `body`. `at` is the body's offset, for errors.
pub fn zstd_data<E: Endian>(
    ty: RecordType,
    body: &[u8],
    at: u64,
    e: E,
) -> Result<Option<Bytes<'_>>, Error> {
    if ty != RecordType::COMPRESSED && ty != RecordType::COMPRESSED2 {
        return Ok(None);
    }
    Ok(
        match RecordBody::decode(ty, &mut Reader::in_order(body, at, e), &Ctx::default())? {
            RecordBody::Compressed(c) => Some(c.data),
            RecordBody::Compressed2(c) => Some(c.data),
            _ => None,
        },
    )
}
