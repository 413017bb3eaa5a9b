//! A file's bytes as one memory map, shared by every reader and conversion.

use crate::rt::Error;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The bytes of a file: memory-mapped (empty files cannot be mapped, and have no bytes).
pub struct MappedFile {
    map: Option<Arc<memmap2::Mmap>>,
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
        Ok(MappedFile {
            map: Some(Arc::new(map)),
        })
    }

    /// Maps the pages ahead of a front-to-back walk on another thread (see
    /// [`PopulateAhead`]); nothing for a file too small to gain from it.
    pub fn populate_ahead(&self) -> PopulateAhead {
        match &self.map {
            Some(map)
                if cfg!(target_os = "linux") && map.len() as u64 > 2 * PopulateAhead::AHEAD =>
            {
                PopulateAhead::start(map)
            }
            _ => PopulateAhead::none(),
        }
    }

    /// Runs `walk` (a walk that reads the whole file and unmaps nothing: every page it
    /// reads stays mapped) while another thread maps the file's pages in order, so that
    /// the walk finds most of them mapped: the page faults are taken on the second core.
    /// The thread stops when `walk` returns. The pages mapped are those the walk maps
    /// anyway; nothing is done for a file too small to gain from it.
    pub fn walk_with_pages_mapped_alongside<T>(&self, walk: impl FnOnce() -> T) -> T {
        let Some(map) = self.map.as_deref() else {
            return walk();
        };
        if !cfg!(target_os = "linux") || map.len() as u64 <= 2 * PopulateAhead::AHEAD {
            return walk();
        }
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let bytes = &map[..];
            let done = &done;
            // A thread that cannot start leaves the faults to the walk.
            let _ = std::thread::Builder::new()
                .name("perfdata-populate".into())
                .spawn_scoped(scope, move || {
                    for chunk in bytes.chunks(FAULT_AROUND * 64) {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        map_pages(chunk);
                    }
                });
            let result = walk();
            done.store(true, Ordering::Relaxed);
            result
        })
    }

    /// The file's bytes (empty for an empty file), valid as long as the map.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().map_or(&[], |m| &m[..])
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

    /// [`MappedFile::release_before`] the whole file, on another thread: for a caller
    /// done walking a large file with other work before it exits, that would otherwise
    /// pay for unmapping every page the walk mapped on its own thread (a tenth of a
    /// walk's time), when the map is dropped. The bytes stay readable as ever.
    pub fn release_in_background(&self) {
        let Some(map) = &self.map else { return };
        if map.len() as u64 <= 2 * PopulateAhead::AHEAD {
            return;
        }
        let map = Arc::clone(map);
        // Not started: the pages are unmapped with the map, as without this.
        let _ = std::thread::Builder::new()
            .name("perfdata-release".into())
            .spawn(move || {
                // SAFETY: as in `release_before`: a private, read-only file mapping
                // never written; a later access faults the same bytes in again.
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, map.len())
                };
            });
    }
}

/// The kernel's default fault-around (`fault_around_bytes`): what a read fault maps of
/// the pages around it that are in the page cache.
const FAULT_AROUND: usize = 64 << 10;

/// Maps `bytes`' pages into the page tables: one read per fault-around window, whose
/// fault maps the window's pages that are in the page cache (reading the others first),
/// as a walk's own fault would. (MADV_POPULATE_READ marks every page accessed one by
/// one, under the LRU's lock: twice the cost.) A page left unmapped is faulted in by the
/// walk.
fn map_pages(bytes: &[u8]) {
    for at in (0..bytes.len()).step_by(FAULT_AROUND) {
        std::hint::black_box(bytes[at]);
    }
}

/// A front-to-back walk's page faults, taken on another thread: told where the walk is,
/// a thread maps the next [`PopulateAhead::AHEAD`] bytes into the page tables (a read
/// per fault-around window), so that the walk finds them mapped, and unmaps the pages
/// more than [`PopulateAhead::BEHIND`] bytes behind it (`MADV_DONTNEED`). A walk over a
/// file in the page cache spends a tenth of its time faulting pages in one by one, and
/// unmapping a whole file's pages at its end costs as much again; this moves both to the
/// second core (and keeps the resident set of the walk bounded). It only maps and unmaps
/// pages (reading the file where they are not cached yet; a page read again after it was
/// unmapped is mapped again from the file): the bytes, and what the walk reads, are the
/// same with it or without it.
pub struct PopulateAhead {
    shared: Option<Arc<Populating>>,
    thread: Option<std::thread::Thread>,
    next: u64,
}

struct Populating {
    /// Where the walk is (`u64::MAX`: it is over).
    reached: AtomicU64,
}

impl PopulateAhead {
    /// How far ahead of the walk pages are mapped: more than a round of records (the
    /// time-ordered walk reads one round ahead of what it delivers).
    pub const AHEAD: u64 = 64 << 20;
    /// How far behind the walk pages stay mapped: more than the rounds the time-ordered
    /// walk may still deliver records from.
    pub const BEHIND: u64 = 64 << 20;
    /// How far the walk goes between two wake-ups of the thread.
    const STEP: u64 = 16 << 20;

    fn start(map: &Arc<memmap2::Mmap>) -> Self {
        let shared = Arc::new(Populating {
            reached: AtomicU64::new(0),
        });
        let (map, theirs) = (Arc::clone(map), Arc::clone(&shared));
        let spawned = std::thread::Builder::new()
            .name("perfdata-populate".into())
            .spawn(move || populate(&map, &theirs));
        match spawned {
            Ok(handle) => PopulateAhead {
                shared: Some(shared),
                thread: Some(handle.thread().clone()),
                next: Self::STEP,
            },
            Err(_) => Self::none(),
        }
    }

    /// Maps nothing (a small file, or bytes not mapped from a file).
    pub fn none() -> Self {
        PopulateAhead {
            shared: None,
            thread: None,
            next: u64::MAX,
        }
    }

    /// The walk has reached byte `offset` of the file.
    #[inline]
    pub fn reached(&mut self, offset: u64) {
        if offset >= self.next {
            self.wake(offset);
        }
    }

    #[cold]
    fn wake(&mut self, offset: u64) {
        self.next = offset.saturating_add(Self::STEP);
        if let (Some(shared), Some(thread)) = (&self.shared, &self.thread) {
            shared.reached.store(offset, Ordering::Release);
            thread.unpark();
        }
    }
}

impl Drop for PopulateAhead {
    fn drop(&mut self) {
        if let (Some(shared), Some(thread)) = (&self.shared, &self.thread) {
            shared.reached.store(u64::MAX, Ordering::Release);
            thread.unpark();
        }
    }
}

/// The populating thread: keeps the pages up to `AHEAD` past the walk mapped and those
/// `BEHIND` before it unmapped, until the walk is over. It holds the map, so the pages it
/// names are always this file's.
fn populate(map: &memmap2::Mmap, shared: &Populating) {
    const CHUNK: usize = 4 << 20;
    const PAGE: usize = 4096;
    let mut done = 0usize;
    let mut released = 0usize;
    loop {
        let reached = shared.reached.load(Ordering::Acquire);
        if reached == u64::MAX {
            return;
        }
        let until = usize::try_from(reached.saturating_add(PopulateAhead::AHEAD))
            .unwrap_or(usize::MAX)
            .min(map.len());
        // Pages behind the walk are not worth mapping any more.
        done = done.max(usize::try_from(reached).unwrap_or(usize::MAX) / PAGE * PAGE);
        while done < until {
            let len = CHUNK.min(until - done);
            map_pages(&map[done..done + len]);
            done += len;
            if shared.reached.load(Ordering::Acquire) == u64::MAX {
                return;
            }
        }
        let behind = usize::try_from(reached.saturating_sub(PopulateAhead::BEHIND))
            .unwrap_or(usize::MAX)
            .min(map.len())
            / PAGE
            * PAGE;
        if behind > released {
            // SAFETY: a private, read-only file mapping that this process never writes:
            // MADV_DONTNEED only drops page-table entries; a later access faults the same
            // bytes in again from the file (the page cache), so every borrowed slice still
            // sees the same contents. An error only leaves the pages mapped.
            #[cfg(target_os = "linux")]
            let _ = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    released,
                    behind - released,
                )
            };
            released = behind;
        }
        std::thread::park();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_is_walked_without_a_thread() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), b"0123456789").unwrap();
        let map = MappedFile::open(f.path()).unwrap();
        let mut ahead = map.populate_ahead();
        assert!(ahead.thread.is_none());
        ahead.reached(5);
        assert_eq!(map.bytes(), b"0123456789");
    }

    /// A sparse file (no disk used) of `len` bytes with its own offset, as 8 bytes,
    /// every `step` bytes; and those offsets.
    #[cfg(unix)]
    fn sparse_file_with_marks(len: u64, step: u64) -> (tempfile::NamedTempFile, Vec<u64>) {
        use std::os::unix::fs::FileExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(len).unwrap();
        let marks: Vec<u64> = (0..len).step_by(step as usize).collect();
        for &m in &marks {
            f.as_file().write_at(&m.to_le_bytes(), m).unwrap();
        }
        (f, marks)
    }

    #[cfg(unix)]
    #[test]
    fn a_walk_with_pages_mapped_alongside_reads_the_same_bytes() {
        // Larger than two windows, a mark every 16 MiB; the walk reads them all while
        // the other thread maps the pages, then once more after.
        let (f, marks) = sparse_file_with_marks(2 * PopulateAhead::AHEAD + 4096, 16 << 20);
        let map = MappedFile::open(f.path()).unwrap();
        let read = |map: &MappedFile| -> Vec<u64> {
            let b = map.bytes();
            (marks.iter())
                .map(|&m| u64::from_le_bytes(b[m as usize..m as usize + 8].try_into().unwrap()))
                .collect()
        };
        assert_eq!(map.walk_with_pages_mapped_alongside(|| read(&map)), marks);
        assert_eq!(read(&map), marks);
    }

    #[cfg(unix)]
    #[test]
    fn pages_mapped_ahead_read_the_same_bytes() {
        // Larger than two windows, with a mark per window.
        let len = 3 * PopulateAhead::AHEAD + 4096;
        let (f, marks) = sparse_file_with_marks(len, PopulateAhead::STEP);
        let map = MappedFile::open(f.path()).unwrap();
        let mut ahead = map.populate_ahead();
        assert!(ahead.thread.is_some(), "a thread for a large file");
        for &m in &marks {
            ahead.reached(m);
            let at = m as usize;
            assert_eq!(map.bytes()[at..at + 8], m.to_le_bytes());
        }
        drop(ahead);
        assert_eq!(map.bytes().len() as u64, len);
        // The pages left behind (unmapped, or not yet) read the same bytes again.
        for &m in &marks {
            let at = m as usize;
            assert_eq!(map.bytes()[at..at + 8], m.to_le_bytes());
        }
    }
}
