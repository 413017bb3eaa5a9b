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
                tables.eh_frame = section(&map, &obj, ".eh_frame").map(|mut s| {
                    if let Some(fixed) = without_omitted_lsda(&s.bytes) {
                        s.bytes = SectionBytes::Owned(fixed.into());
                    }
                    s
                });
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
    /// after — where the producer's pc-relative pointers expect them (a jitdump's
    /// JIT_CODE_UNWINDING_INFO; `perf inject --jit` places them so in its ELF objects).
    pub fn jitted(
        code_size: u64,
        eh_frame: Arc<[u8]>,
        eh_frame_hdr: Arc<[u8]>,
        is_32: bool,
    ) -> Self {
        let eh_frame_at = code_size.saturating_add(7) & !7;
        let hdr_at = eh_frame_at.saturating_add(eh_frame.len() as u64);
        let section = |bytes: Arc<[u8]>, at: u64| Section {
            svma: at..at.saturating_add(bytes.len() as u64),
            bytes: SectionBytes::Owned(bytes),
        };
        let eh_frame = without_omitted_lsda(&eh_frame).map_or(eh_frame, Arc::from);
        let mut tables = UnwindTables {
            eh_frame: Some(section(eh_frame, eh_frame_at)),
            eh_frame_hdr: (!eh_frame_hdr.is_empty()).then(|| section(eh_frame_hdr, hdr_at)),
            text: Some(0..code_size),
            is_32,
            ..UnwindTables::default()
        };
        tables.signal_trampolines = tables.find_signal_trampolines();
        tables
    }

    /// Whether an FDE of the `.eh_frame` covers `addr` (in the tables' own addresses).
    pub fn eh_frame_covers(&self, addr: u64) -> bool {
        let Some(eh) = &self.eh_frame else {
            return false;
        };
        let mut bases = BaseAddresses::default().set_eh_frame(eh.svma.start);
        if let Some(t) = &self.text {
            bases = bases.set_text(t.start);
        }
        let mut cfi = EhFrame::new(&eh.bytes, LittleEndian);
        cfi.set_address_size(if self.is_32 { 4 } else { 8 });
        let mut entries = cfi.entries(&bases);
        while let Ok(Some(entry)) = entries.next() {
            if let CieOrFde::Fde(partial) = entry {
                if let Ok(fde) = partial.parse(EhFrame::cie_from_offset) {
                    if fde.contains(addr) {
                        return true;
                    }
                }
            }
        }
        false
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

/// `.eh_frame` with every CIE whose LSDA encoding is DW_EH_PE_omit (augmentation
/// `zLR`, `L` = 0xff: V8's tables for its JIT code, and so `perf inject --jit`'s objects)
/// rewritten without its `L`; `None` when there is none. gimli (0.33), and so framehop,
/// refuses the FDEs of such a CIE (`CannotParseOmitPointerEncoding`), where libgcc and
/// libunwind read "no LSDA". The rewrite keeps every offset: the CIE loses the `L` of its
/// augmentation string and the encoding byte of its augmentation data, and gains two
/// DW_CFA_nop at the end of its instructions. Only CIEs whose augmentation is made of
/// `z`, `L`, `R` and `S` are touched (a personality routine's pointer, `P`, may be
/// relative to its place, which the rewrite moves).
pub(crate) fn without_omitted_lsda(eh_frame: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut at = 0usize;
    while at + 8 <= eh_frame.len() {
        let len = u32::from_le_bytes(eh_frame[at..at + 4].try_into().ok()?) as usize;
        // The terminator, or 64-bit DWARF (no JIT writes it): stop looking.
        if len == 0 || len == 0xffff_ffff {
            break;
        }
        let end = at.checked_add(4)?.checked_add(len)?;
        // An entry shorter than its id, or past the end: not tables to rewrite.
        if end < at + 8 || end > eh_frame.len() {
            break;
        }
        let is_cie = eh_frame[at + 4..at + 8] == [0, 0, 0, 0];
        if is_cie {
            let body = &eh_frame[at + 8..end];
            // (A rewrite keeps the length; checked again, as the input is hostile.)
            if let Some(cie) = cie_without_omitted_lsda(body).filter(|c| c.len() == body.len()) {
                let buf = out.get_or_insert_with(|| eh_frame.to_vec());
                buf[at + 8..end].copy_from_slice(&cie);
            }
        }
        at = end;
    }
    out
}

/// One CIE's body after its id (version onwards) rewritten as [`without_omitted_lsda`]
/// says, or `None` when it has no omitted LSDA encoding (or is not understood).
fn cie_without_omitted_lsda(body: &[u8]) -> Option<Vec<u8>> {
    let leb = |at: &mut usize| -> Option<()> {
        while *body.get(*at)? & 0x80 != 0 {
            *at += 1;
        }
        *at += 1;
        Some(())
    };
    let version = *body.first()?;
    let aug_end = 1 + body[1..].iter().position(|&b| b == 0)?;
    let aug = &body[1..aug_end];
    // One `L` exactly (two would be two encodings to drop).
    if aug.first() != Some(&b'z') || aug.iter().filter(|&&c| c == b'L').count() != 1 {
        return None;
    }
    if !aug[1..].iter().all(|c| matches!(c, b'L' | b'R' | b'S')) {
        return None;
    }
    let mut at = aug_end + 1;
    leb(&mut at)?; // code alignment
    leb(&mut at)?; // data alignment
    if version == 1 {
        at += 1;
    } else {
        leb(&mut at)?;
    }
    // The augmentation data's length, in one byte (a few encoding bytes).
    let data_len = usize::from(*body.get(at)?);
    if data_len >= 0x80 {
        return None;
    }
    let data_at = at + 1;
    let data = body.get(data_at..data_at + data_len)?;
    // Each of `L` and `R` has one encoding byte, in the string's order; `S` none.
    let mut byte = 0;
    let mut lsda_byte = None;
    for c in &aug[1..] {
        match c {
            b'L' => {
                lsda_byte = Some(byte);
                byte += 1;
            }
            b'R' => byte += 1,
            _ => {}
        }
    }
    let lsda_byte = lsda_byte?;
    if byte != data_len || data[lsda_byte] != 0xff {
        return None;
    }
    let mut out = Vec::with_capacity(body.len());
    out.push(version);
    out.extend(aug.iter().filter(|&&c| c != b'L'));
    out.extend_from_slice(&body[aug_end..data_at - 1]);
    out.push((data_len - 1) as u8);
    out.extend(
        data.iter()
            .enumerate()
            .filter(|&(i, _)| i != lsda_byte)
            .map(|(_, &b)| b),
    );
    out.extend_from_slice(&body[data_at + data_len..]);
    out.extend([0, 0]); // DW_CFA_nop, twice: the CIE keeps its length.
    debug_assert_eq!(out.len(), body.len());
    Some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses hex digits into bytes.
    fn bytes(hex: &str) -> Arc<[u8]> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    /// V8's `.eh_frame` for an optimized function of 384 bytes: a CIE `zLR` (no LSDA:
    /// 0xff), an FDE, the terminator.
    const V8_EH_FRAME: &str = "1800000000000000037a4c520001781002ff1b0c07089001000000002800000020000000\
                               5cfeffff7e010000004f0e108602430d060304010d07410e08520c061000000000000000\
                               00000000";

    /// The tables Node.js 20 (`--perf-prof --perf-prof-unwinding-info`) wrote before the
    /// load of an optimized function of 384 bytes (`JS:*fib`): placed after the code,
    /// their FDE covers it from its first byte.
    #[test]
    fn v8s_tables_cover_their_code_where_the_format_places_them() {
        let eh_frame = bytes(V8_EH_FRAME);
        let hdr = bytes("011b033bb0ffffff0100000034feffffd0ffffff");
        assert_eq!((eh_frame.len(), hdr.len()), (76, 20));
        let t = UnwindTables::jitted(384, eh_frame, hdr, false);
        // (Its FDE covers 382 bytes: the code's last two are padding.)
        assert!(t.eh_frame_covers(0));
        assert!(t.eh_frame_covers(381));
        assert!(!t.eh_frame_covers(382));
        // As gimli reads V8's own bytes: no FDE at all.
        let v8 = UnwindTables {
            eh_frame: t.eh_frame.as_ref().map(|s| Section {
                bytes: SectionBytes::Owned(bytes(V8_EH_FRAME)),
                ..s.clone()
            }),
            ..t.clone()
        };
        assert!(
            !v8.eh_frame_covers(0),
            "gimli still refuses them: drop the rewrite?"
        );
    }

    #[test]
    fn only_an_omitted_lsda_encoding_is_rewritten() {
        let v8 = bytes(V8_EH_FRAME);
        let fixed = without_omitted_lsda(&v8).expect("V8's CIE is rewritten");
        assert_eq!(fixed.len(), v8.len());
        // "zR", one encoding byte (pcrel|sdata4), the same instructions, two nops.
        assert_eq!(&fixed[8..12], &[3, b'z', b'R', 0]);
        assert_eq!(&fixed[12..17], &[0x01, 0x78, 0x10, 0x01, 0x1b]);
        assert_eq!(
            &fixed[17..28],
            &[0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0, 0, 0, 0]
        );
        // The FDE is untouched.
        assert_eq!(&fixed[28..], &v8[28..]);
        assert_eq!(
            without_omitted_lsda(&fixed),
            None,
            "nothing left to rewrite"
        );
        // An LSDA that is there (absptr) is left alone, and so is `P`.
        let mut with_lsda = v8.to_vec();
        with_lsda[17] = 0x00;
        assert_eq!(without_omitted_lsda(&with_lsda), None);
        let mut personality = v8.to_vec();
        personality[11] = b'P';
        assert_eq!(without_omitted_lsda(&personality), None);
    }

    #[test]
    fn the_rewrite_takes_any_bytes() {
        let v8 = bytes(V8_EH_FRAME);
        // `zLL`, both encodings "omitted": not one `L` to drop, left alone.
        let mut two = v8.to_vec();
        two[11] = b'L';
        two[18] = 0xff;
        assert_eq!(without_omitted_lsda(&two), None);
        // Every cut, and every byte of the CIE set to each value: no panic, and a
        // rewrite keeps the length.
        for cut in 0..=v8.len() {
            let _ = without_omitted_lsda(&v8[..cut]);
        }
        for at in 0..28 {
            for value in 0..=255u8 {
                let mut b = v8.to_vec();
                b[at] = value;
                if let Some(fixed) = without_omitted_lsda(&b) {
                    assert_eq!(fixed.len(), b.len());
                }
            }
        }
    }
}
