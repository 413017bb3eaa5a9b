//! Reading back what we wrote: framing and decode of every record (compressed ones
//! expanded) and every feature, streaming over a memory map. A writer calls it before it
//! replaces its target, so a conversion never leaves a file that cannot be read.

use crate::container::PerfData;
use crate::rt::Error;
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
}

/// Checks that the file at `path` reads back entirely.
pub fn check_file(path: &Path) -> Result<(), Error> {
    let file = MappedFile::open(path)?;
    check(file.bytes())
}

/// Checks that `bytes` read back entirely: header, attrs, every feature, every record.
pub fn check(bytes: &[u8]) -> Result<(), Error> {
    let data = PerfData::open(bytes)?;
    for f in &data.features {
        data.feature(f)?;
    }
    let mut index = 0u64;
    data.for_each_record(&mut |_, rec, ctx| {
        data.decode(&rec, ctx)
            .map_err(|e| e.with_record(index, rec.record_type()))?;
        index += 1;
        Ok(true)
    })
}
