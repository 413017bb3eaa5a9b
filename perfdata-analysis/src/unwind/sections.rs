//! A shared object's unwind tables, as the unwinders read them: `.eh_frame` (indexed by
//! `.eh_frame_hdr` when the object has one), else `.debug_frame` — from the file the
//! program ran, or from its separate debug file. Section bytes stay in the mapped file.

use gimli::{
    BaseAddresses, CieOrFde, DebugFrame, EhFrame, EndianSlice, LittleEndian, UnwindSection,
};
use object::{Object, ObjectSection};
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;

/// The bytes of one section: a range of a mapped file, or bytes decompressed from a
/// compressed section (`SHF_COMPRESSED`, common in debug files).
#[derive(Clone)]
pub(crate) enum SectionBytes {
    Mapped(Arc<memmap2::Mmap>, Range<usize>),
    Owned(Arc<[u8]>),
}

impl Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Mapped(map, range) => &map[range.clone()],
            SectionBytes::Owned(bytes) => bytes,
        }
    }
}

/// One section: where the object places it (its stated address range) and its bytes.
#[derive(Clone)]
pub(crate) struct Section {
    pub svma: Range<u64>,
    pub bytes: SectionBytes,
}

/// The unwind tables of one shared object, and the section addresses that CFI's
/// pc-relative and text-relative encodings are relative to.
#[derive(Clone, Default)]
pub(crate) struct UnwindTables {
    pub eh_frame: Option<Section>,
    pub eh_frame_hdr: Option<Section>,
    pub debug_frame: Option<Section>,
    pub text: Option<Range<u64>>,
    pub got: Option<Range<u64>>,
    /// 32-bit object (i686): framehop does not unwind those; `i686` does.
    pub is_32: bool,
    /// The object's signal trampolines (glibc's `__restore_rt`, the vdso's
    /// `__kernel_rt_sigreturn`), in its own addresses: the code ranges of FDEs whose CIE
    /// has the `S` augmentation. framehop cannot read their CFI (expressions over the
    /// signal frame), so the walk restores the interrupted registers itself.
    pub signal_trampolines: Vec<Range<u64>>,
}

impl std::fmt::Debug for UnwindTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = |s: &Option<Section>| s.as_ref().map(|s| s.bytes.len());
        f.debug_struct("UnwindTables")
            .field("eh_frame", &len(&self.eh_frame))
            .field("eh_frame_hdr", &len(&self.eh_frame_hdr))
            .field("debug_frame", &len(&self.debug_frame))
            .field("text", &self.text)
            .field("is_32", &self.is_32)
            .finish()
    }
}

/// Maps `path` read-only.
fn map(path: &Path) -> Option<Arc<memmap2::Mmap>> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a private read-only map; a file changed under us gives wrong unwind rules
    // (every byte is untrusted input to the CFI parser anyway), not UB in code that only
    // reads bytes.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    Some(Arc::new(map))
}

/// A section of `obj` (whose bytes are `map`) by name.
fn section(map: &Arc<memmap2::Mmap>, obj: &object::File<'_>, name: &str) -> Option<Section> {
    let s = obj.section_by_name(name)?;
    let svma = s.address()..s.address() + s.size();
    let bytes = match s.compressed_file_range().ok()? {
        r if r.format == object::CompressionFormat::None => {
            let start = usize::try_from(r.offset).ok()?;
            let end = start.checked_add(usize::try_from(r.uncompressed_size).ok()?)?;
            // NOBITS sections (a debug file's copy of `.eh_frame`) have no bytes.
            if s.kind() == object::SectionKind::UninitializedData || end > map.len() {
                return None;
            }
            SectionBytes::Mapped(map.clone(), start..end)
        }
        _ => SectionBytes::Owned(s.uncompressed_data().ok()?.into_owned().into()),
    };
    (!bytes.is_empty()).then_some(Section { svma, bytes })
}

impl UnwindTables {
    /// The tables of `runtime` (the file the program ran); when it has no `.eh_frame`,
    /// the `.debug_frame` of `runtime` or of `debug` (its separate debug file). `None`
    /// when neither file can be read as an object.
    pub fn load(runtime: Option<&Path>, debug: Option<&Path>) -> Option<Self> {
        let mut tables = UnwindTables::default();
        let mut read_any = false;
        for path in [runtime, debug].into_iter().flatten() {
            let Some(map) = map(path) else { continue };
            let Ok(obj) = object::File::parse(&**map) else {
                continue;
            };
            read_any = true;
            tables.is_32 |= !obj.is_64();
            if tables.eh_frame.is_none() {
                tables.eh_frame = section(&map, &obj, ".eh_frame");
                // An index without a table indexes nothing (`perf inject --jit` writes
                // one for JIT code V8 gave no tables for): leave the object to the frame
                // pointer fallback, as when it has neither.
                tables.eh_frame_hdr = tables
                    .eh_frame
                    .as_ref()
                    .and_then(|_| section(&map, &obj, ".eh_frame_hdr"));
            }
            if tables.debug_frame.is_none() {
                tables.debug_frame = section(&map, &obj, ".debug_frame");
            }
            let range = |name: &str| {
                obj.section_by_name(name)
                    .map(|s| s.address()..s.address() + s.size())
            };
            tables.text = tables.text.take().or_else(|| range(".text"));
            tables.got = tables.got.take().or_else(|| range(".got"));
        }
        tables.signal_trampolines = tables.find_signal_trampolines();
        read_any.then_some(tables)
    }

    /// The tables of one function's JIT code, in addresses relative to the code's start:
    /// the code at 0, `.eh_frame` at its size rounded up to 8, `.eh_frame_hdr` right
    /// after (where the producer's pc-relative pointers expect them; see
    /// [`crate::jit::JitUnwinding`]).
    pub fn jitted(code_size: u64, jit: &crate::jit::JitUnwinding) -> Self {
        let eh_frame_at = code_size.saturating_add(7) & !7;
        let hdr_at = eh_frame_at.saturating_add(jit.eh_frame.len() as u64);
        let section = |bytes: &std::sync::Arc<[u8]>, at: u64| Section {
            svma: at..at.saturating_add(bytes.len() as u64),
            bytes: SectionBytes::Owned(bytes.clone()),
        };
        let mut tables = UnwindTables {
            eh_frame: Some(section(&jit.eh_frame, eh_frame_at)),
            eh_frame_hdr: (!jit.eh_frame_hdr.is_empty())
                .then(|| section(&jit.eh_frame_hdr, hdr_at)),
            text: Some(0..code_size),
            is_32: jit.is_32,
            ..UnwindTables::default()
        };
        tables.signal_trampolines = tables.find_signal_trampolines();
        tables
    }

    /// The code ranges of the FDEs marked as signal trampolines, in the CFI the
    /// unwinders use (`.eh_frame`, else `.debug_frame`).
    pub fn find_signal_trampolines(&self) -> Vec<Range<u64>> {
        let mut bases = BaseAddresses::default();
        if let Some(t) = &self.text {
            bases = bases.set_text(t.start);
        }
        if let Some(g) = &self.got {
            bases = bases.set_got(g.start);
        }
        let address_size = if self.is_32 { 4 } else { 8 };
        let mut out = vec![];
        if let Some(eh) = &self.eh_frame {
            let bases = bases.set_eh_frame(eh.svma.start);
            let mut cfi = EhFrame::new(&eh.bytes, LittleEndian);
            cfi.set_address_size(address_size);
            signal_fdes(&cfi, &bases, &mut out);
        } else if let Some(df) = &self.debug_frame {
            let mut cfi = DebugFrame::new(&df.bytes, LittleEndian);
            cfi.set_address_size(address_size);
            signal_fdes(&cfi, &bases, &mut out);
        }
        out
    }

    /// What framehop asks a module for.
    pub fn section_info(&self) -> SectionInfo<'_> {
        SectionInfo(self)
    }
}

/// Pushes the code range of every FDE of `cfi` whose CIE says "signal trampoline". An
/// entry that does not parse is skipped; one whose length does not ends the scan.
fn signal_fdes<'a, S: UnwindSection<EndianSlice<'a, LittleEndian>>>(
    cfi: &S,
    bases: &BaseAddresses,
    out: &mut Vec<Range<u64>>,
) {
    let mut entries = cfi.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(S::cie_from_offset) {
                if fde.is_signal_trampoline() {
                    out.push(fde.initial_address()..fde.end_address());
                }
            }
        }
    }
}

/// [`UnwindTables`] as framehop's `ModuleSectionInfo`. Addresses are the object's own
/// (base 0, framehop's convention for ELF): the module's `base_avma` places them.
pub(crate) struct SectionInfo<'t>(&'t UnwindTables);

impl framehop::ModuleSectionInfo<SectionBytes> for SectionInfo<'_> {
    fn base_svma(&self) -> u64 {
        0
    }

    fn section_svma_range(&mut self, name: &[u8]) -> Option<Range<u64>> {
        let t = self.0;
        match name {
            b".eh_frame" => t.eh_frame.as_ref().map(|s| s.svma.clone()),
            b".eh_frame_hdr" => t.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
            b".debug_frame" => t.debug_frame.as_ref().map(|s| s.svma.clone()),
            b".text" => t.text.clone(),
            b".got" => t.got.clone(),
            _ => None,
        }
    }

    fn section_data(&mut self, name: &[u8]) -> Option<SectionBytes> {
        let t = self.0;
        let s = match name {
            b".eh_frame" => t.eh_frame.as_ref(),
            b".eh_frame_hdr" => t.eh_frame_hdr.as_ref(),
            b".debug_frame" => t.debug_frame.as_ref(),
            _ => None,
        }?;
        Some(s.bytes.clone())
    }
}
