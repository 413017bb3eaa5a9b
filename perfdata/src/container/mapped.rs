//! A file's bytes as one memory map, shared by every reader and conversion.

use crate::rt::Error;
use std::path::Path;

/// The bytes of a file: memory-mapped (empty files cannot be mapped, and have no bytes).
pub struct MappedFile {
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    /// Maps the file at `path` read-only; errors name the path. The map is advised for
    /// sequential reading: every walk goes front to back.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let io = |e: std::io::Error| Error::from(e).in_file(path);
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() == 0 {
            return Ok(MappedFile { map: None });
        }
        // SAFETY: a private read-only map. If another process truncates or rewrites the
        // file while it is mapped, we may read changed bytes (every byte is untrusted input
        // to the decoders anyway) or fault on pages past a truncated end.
        // perf.data files are not modified in place by perf once written.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        // Readers go front to back (time order too, a round behind): the kernel may read
        // ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(MappedFile { map: Some(map) })
    }

    /// The file's bytes (empty for an empty file), valid as long as the map.
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

/// A front-to-back walk's release of the mapped pages behind it (see
/// [`MappedFile::release_before`]): told where the walk is, it releases every
/// [`ReleaseBehind::EVERY`] bytes. Over an input that is not mapped it does nothing.
pub struct ReleaseBehind<'m> {
    map: Option<&'m MappedFile>,
    next: u64,
}

impl<'m> ReleaseBehind<'m> {
    /// How far a walk goes between two releases.
    pub const EVERY: u64 = 32 << 20;

    /// Releases pages of `map` behind the walk.
    pub fn new(map: &'m MappedFile) -> Self {
        ReleaseBehind {
            map: Some(map),
            next: Self::EVERY,
        }
    }

    /// Releases nothing (an input in memory).
    pub fn none() -> Self {
        ReleaseBehind {
            map: None,
            next: u64::MAX,
        }
    }

    /// The walk has reached byte `offset` of the input: what lies before it is done with.
    #[inline]
    pub fn reached(&mut self, offset: u64) {
        if offset >= self.next {
            if let Some(map) = self.map {
                map.release_before(offset);
            }
            self.next = offset.saturating_add(Self::EVERY);
        }
    }
}
