//! Reading back what we wrote: framing and decode of every record (compressed ones
//! expanded) and every feature, streaming over a memory map. A writer calls it before it
//! replaces its target, so a conversion never leaves a file that cannot be read.

use crate::container::{detect, Layout, Origin, PerfData, StreamReader};
use crate::rt::Error;
use crate::stages::decode_body;
use std::io::Read;
use std::path::Path;

/// The bytes of a file: memory-mapped (empty files cannot be mapped, and have no bytes).
pub struct MappedFile {
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    pub fn open(path: &Path) -> Result<Self, Error> {
        let io = |e: std::io::Error| Error::other(format!("{}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() == 0 {
            return Ok(MappedFile { map: None });
        }
        // SAFETY: a private read-only map. If another process truncates or rewrites the
        // file while it is mapped, we may read changed bytes (every byte is untrusted input
        // to the decoders anyway) or fault on pages past a truncated end.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        // We read it front to back once: the kernel may read ahead and drop pages behind.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(MappedFile { map: Some(map) })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Lets the kernel drop the mapped pages before byte `end` from our resident set (a
    /// front-to-back walk does not come back to them; if something does, it reads them
    /// from the file again). Keeps the resident set of a walk over a large file bounded.
    pub fn release_before(&self, end: u64) {
        const PAGE: usize = 4096;
        let Some(map) = &self.map else { return };
        let end = usize::try_from(end).unwrap_or(usize::MAX).min(map.len()) / PAGE * PAGE;
        if end == 0 {
            return;
        }
        // SAFETY: a private, read-only file mapping that this process never writes:
        // MADV_DONTNEED only drops our page-table entries; a later access faults the same
        // bytes in again from the file (the page cache), so every borrowed slice still sees
        // the same contents.
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, end) };
    }
}

/// How far a walk goes between two [`MappedFile::release_before`] calls.
pub const RELEASE_EVERY: u64 = 32 << 20;

/// Checks that the file at `path` reads back entirely.
pub fn check_file(path: &Path) -> Result<(), Error> {
    let file = MappedFile::open(path)?;
    if detect(file.bytes())?.layout == Layout::Pipe {
        // A pipe is opened with a first pass over all of it (PerfData::open): read it as a
        // stream instead, which holds one record at a time.
        drop(file);
        return check_stream(std::io::BufReader::new(std::fs::File::open(path)?));
    }
    check_with(file.bytes(), &mut |walked| file.release_before(walked))
}

/// Checks that a pipe-layout stream reads back entirely.
pub fn check_stream(input: impl Read) -> Result<(), Error> {
    let mut reader = StreamReader::new(input)?;
    let endian = reader.endian();
    let mut index = 0u64;
    while let Some(rec) = reader.next_record()? {
        let ty = rec.raw.record_type();
        decode_body(endian, ty, rec.raw.body, &rec.ctx).map_err(|e| e.with_record(index, ty))?;
        index += 1;
    }
    Ok(())
}

/// Checks that `bytes` read back entirely: header, attrs, every feature, every record.
pub fn check(bytes: &[u8]) -> Result<(), Error> {
    check_with(bytes, &mut |_| {})
}

/// [`check`], telling `walked` every [`RELEASE_EVERY`] bytes how far the walk has come.
fn check_with(bytes: &[u8], walked: &mut dyn FnMut(u64)) -> Result<(), Error> {
    let mut next_release = RELEASE_EVERY;
    let data = PerfData::open(bytes)?;
    for f in &data.features {
        data.feature(f)?;
    }
    let mut index = 0u64;
    data.for_each_record(&mut |origin, rec, ctx| {
        if origin == Origin::Stream && rec.offset >= next_release {
            walked(rec.offset);
            next_release = rec.offset + RELEASE_EVERY;
        }
        data.decode(&rec, ctx)
            .map_err(|e| e.with_record(index, rec.record_type()))?;
        index += 1;
        Ok(true)
    })
}
