//! The `disasm` target: bytes given to `annotate`'s disassemblers as one function's code
//! (x86-64, i386 and AArch64; AT&T and Intel syntax), placed at an address the input
//! chooses, the top of the address space included (a jitdump's code address is any
//! 64-bit value). The listing covers every byte once, in order, each line an
//! instruction or an undecodable byte (`(bad)`) at its address; never a panic.

use perfdata_analysis::analyses::annotate::disasm::{decode, Arch, ObjdumpSymbols, Syntax};
use std::sync::Arc;

/// The first byte chooses the architecture (bits 0–1), the syntax (bit 2) and whether
/// the next 8 bytes are the code's address (bit 3; else a usual one); the rest is the
/// code.
pub fn disasm(bytes: &[u8]) {
    let Some((&control, rest)) = bytes.split_first() else {
        return;
    };
    let (addr, code) = match rest.split_first_chunk::<8>() {
        Some((a, code)) if control & 8 != 0 => (u64::from_le_bytes(*a), code),
        _ => (0x40_1000, rest),
    };
    let arch = match control & 3 {
        1 => Arch::I386,
        2 => Arch::Aarch64,
        _ => Arch::X86_64,
    };
    let syntax = if control & 4 != 0 {
        Syntax::Intel
    } else {
        Syntax::Att
    };
    // The function itself names the branch targets inside it, as perf inject --jit's
    // object of a JIT function does.
    let symbols = Arc::new(ObjdumpSymbols::single("f", addr, code.len() as u64, None));
    let listing = decode(code, addr, arch, syntax, &symbols, None);
    let mut at = 0usize;
    for insn in &listing {
        assert_eq!(
            insn.addr,
            addr.wrapping_add(at as u64),
            "an instruction's address is where the one before it ended"
        );
        assert!(
            !insn.bytes.is_empty() && code[at..].starts_with(&insn.bytes),
            "an instruction's bytes are the code's next ones"
        );
        assert!(!insn.text.is_empty(), "every line has a text");
        at += insn.bytes.len();
    }
    assert_eq!(at, code.len(), "the listing covers the code");
}
