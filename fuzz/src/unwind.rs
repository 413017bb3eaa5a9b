//! The body of the `unwind` fuzz target: the stack unwinders (framehop for x86_64 and
//! aarch64, the i386 CFI walk) over hostile registers, stack bytes and CFI.

use arbitrary::{Arbitrary, Unstructured};
use perfdata::types::SampleRegsAbi;
use perfdata_analysis::stack::unwind::{unwind_stack, Arch, ObjectCfi};

/// At most this many frames: what the analyses ask for.
const MAX_FRAMES: usize = 127;

#[derive(Debug, Arbitrary)]
struct Input {
    arch: u8,
    abi: u8,
    mask: u64,
    regs: Vec<u64>,
    /// CFI bytes, as `.eh_frame` or (`debug_frame`) `.debug_frame`.
    cfi: Vec<u8>,
    debug_frame: bool,
    eh_frame_hdr: Option<Vec<u8>>,
    /// Where the object is mapped, as page numbers.
    start_page: u16,
    pages: u8,
    is_32: bool,
    stack: Vec<u8>,
}

/// Unwinds an arbitrary register dump and stack copy through an object with arbitrary
/// CFI: never a panic or a hang, and never more frames than asked for.
pub fn unwind(bytes: &[u8]) {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(bytes)) else {
        return;
    };
    let arch = match input.arch % 3 {
        0 => Arch::X86_64,
        1 => Arch::Aarch64,
        _ => Arch::X86,
    };
    let start = u64::from(input.start_page) << 12;
    let end = start + (u64::from(input.pages) + 1) * 4096;
    let cfi = input.cfi.clone();
    let object = ObjectCfi {
        avma: start..end,
        base_avma: start,
        eh_frame: (!input.debug_frame).then(|| (cfi.clone(), 0x200)),
        eh_frame_hdr: input.eh_frame_hdr.map(|h| (h, 0x100)),
        debug_frame: input.debug_frame.then_some(cfi),
        text: Some(0x1000..end - start),
        is_32: input.is_32,
    };
    let mut out = vec![];
    unwind_stack(
        arch,
        &[object],
        SampleRegsAbi(u64::from(input.abi % 4)),
        input.mask,
        &input.regs,
        &input.stack,
        MAX_FRAMES,
        &mut out,
    );
    assert!(out.len() <= MAX_FRAMES, "{} frames", out.len());
}
