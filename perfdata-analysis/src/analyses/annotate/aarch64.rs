//! AArch64 machine code as GNU objdump prints it (`objdump -d`), decoded in-process with
//! `yaxpeax-arm`: what perf annotate shows on an aarch64 machine.
//!
//! Why `yaxpeax-arm` and not `capstone`'s bindings: both decode ARMv8.x A64 (LSE,
//! crypto, CRC, pointer authentication) and both print LLVM-like text that needs the same
//! few rewrites to read like GNU's; `yaxpeax-arm` is pure Rust (0BSD), a release of
//! 150 KB that builds in seconds, and its instructions come with typed operands, while
//! `capstone` (MIT, actively released) compiles capstone's C engine (a 6.8 MB crate,
//! minutes on a 2-core machine, a C compiler needed) and gives its operands as text.
//!
//! The rewrites, GNU objdump's conventions over the decoder's text: mnemonic and operands
//! separated by a tab; memory offsets, shift amounts, bit positions and bitfield widths
//! in decimal (`[sp, #16]`, `lsl #4`, `tbz w2, #3`), other immediates in hex;
//! `mov`'s immediate padded to 20 columns and its value in a `// #N` comment; a
//! branch's or literal load's target as `4005c8 <main+0x18>`; BTI hints by name;
//! floating-point immediates as `%.18e`; an undecodable word as `.inst 0x... ;
//! undefined`; a word in data its `$d` mapping symbol marks (a literal pool) as
//! `.word 0x...`.

use super::disasm::{Insn, ObjdumpSymbols};
use std::sync::Arc;
use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Opcode, Operand};

/// Decodes `code` (placed at `addr`) into instructions with GNU objdump's text;
/// `section` is the index of the section holding the code (for the names objdump
/// prefers). Instructions are 4-byte little-endian words; bytes after the last whole
/// word are one `(bad)`.
pub fn disassemble(
    code: &[u8],
    addr: u64,
    symbols: &Arc<ObjdumpSymbols>,
    section: Option<usize>,
) -> Vec<Insn> {
    let decoder = InstDecoder::default();
    let mut out = Vec::with_capacity(code.len() / 4 + 1);
    let words = code.chunks_exact(4);
    let rest = words.remainder();
    for (i, bytes) in words.enumerate() {
        let here = addr.wrapping_add(4 * i as u64);
        let word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let text = if symbols.is_data(here) {
            // A literal pool: objdump prints the word as data.
            format!(".word\t0x{word:08x}")
        } else {
            match decoder.decode(&mut U8Reader::new(bytes)) {
                Ok(insn) => gnu_text(&insn, here, symbols, section),
                // binutils' aarch64-dis.c for an undefined encoding.
                Err(_) => format!(".inst\t0x{word:08x} ; undefined"),
            }
        };
        out.push(Insn {
            addr: here,
            bytes: bytes.to_vec(),
            text,
        });
    }
    if !rest.is_empty() {
        out.push(Insn {
            addr: addr.wrapping_add((code.len() - rest.len()) as u64),
            bytes: rest.to_vec(),
            text: "(bad)".to_string(),
        });
    }
    out
}

/// One decoded instruction in GNU's spelling.
fn gnu_text(
    insn: &yaxpeax_arm::armv8::a64::Instruction,
    addr: u64,
    symbols: &ObjdumpSymbols,
    section: Option<usize>,
) -> String {
    // ORR of a bitmask immediate into a register is `mov` only where MOVZ/MOVN cannot
    // make the value (the architecture's MoveWidePreferred, as binutils decides);
    // yaxpeax says `mov` always.
    if let (Opcode::ORR, Operand::Register(size, 31)) = (insn.opcode, insn.operands[1]) {
        let imm = match insn.operands[2] {
            Operand::Imm64(v) => Some(v),
            Operand::Immediate(v) => Some(u64::from(v)),
            _ => None,
        };
        let wide = size == yaxpeax_arm::armv8::a64::SizeCode::X;
        if let Some(v) = imm.filter(|v| move_wide(*v, wide)) {
            return format!("orr\t{}, {}, #0x{v:x}", insn.operands[0], insn.operands[1]);
        }
    }
    let text = insn.to_string();
    let (mnemonic, operands) = match text.split_once(' ') {
        Some((m, o)) => (m.to_string(), o.to_string()),
        None => (text.clone(), String::new()),
    };
    // Branch-target-identification hints, named by binutils (yaxpeax says `hint #0x22`).
    if mnemonic == "hint" {
        let name = match operands.as_str() {
            "#0x20" => Some("bti"),
            "#0x22" => Some("bti\tc"),
            "#0x24" => Some("bti\tj"),
            "#0x26" => Some("bti\tjc"),
            _ => None,
        };
        if let Some(n) = name {
            return n.to_string();
        }
    }
    if operands.is_empty() {
        return mnemonic;
    }
    // The PC-relative operand, as the address it names.
    let target = insn.operands.iter().find_map(|op| match op {
        Operand::PCOffset(off) if insn.opcode == Opcode::ADRP => {
            Some((addr & !0xfff).wrapping_add(*off as u64))
        }
        Operand::PCOffset(off) => Some(addr.wrapping_add(*off as u64)),
        _ => None,
    });
    let decimal_all = decimal_immediates(&mnemonic);
    let mut parts = split_operands(&operands);
    let mut comment = None;
    let mut depth = 0i32;
    let mut after_bracket = false;
    for part in &mut parts {
        let opens = part.matches('[').count() as i32;
        let inside = depth > 0 || opens > 0;
        if part.starts_with('$') {
            if let Some(t) = target {
                *part = symbols.describe(t, section);
            }
        } else if let Some(value) = part.strip_prefix('#') {
            // FMOV's immediate; a compare with zero keeps `#0.0`.
            if mnemonic == "fmov" && value.contains('.') {
                if let Ok(f) = value.parse::<f64>() {
                    *part = format!("#{}", c_exponent(f));
                }
            } else if mnemonic == "mov" && !inside {
                // binutils: `#0x%-20x` and the signed value in a comment.
                if let Some(v) = parse_hex(value) {
                    let wide = parts_is_x(&operands);
                    let signed = if wide {
                        v as i64
                    } else {
                        i64::from(v as u32 as i32)
                    };
                    *part = format!("#0x{:<20}", format!("{v:x}"));
                    comment = Some(format!("#{signed}"));
                }
            } else if decimal_all || after_bracket || inside {
                to_decimal(part);
            }
        } else if inside || is_shift(part) {
            // `[x1, #0x8]`, `[x0], #0x10`, `x17, lsl #3`: decimal.
            to_decimal(part);
        }
        depth += opens - part.matches(']').count() as i32;
        // A post-index offset follows its `[base]`.
        after_bracket = depth == 0 && part.ends_with(']');
    }
    let mut s = format!("{mnemonic}\t{}", parts.join(", "));
    if let Some(c) = comment {
        s.push_str("\t// ");
        s.push_str(&c);
    }
    s
}

/// Whether MOVZ or MOVN makes `v` (a 32-bit value unless `wide`): one 16-bit chunk.
fn move_wide(v: u64, wide: bool) -> bool {
    let (mask, chunks) = if wide {
        (u64::MAX, 4)
    } else {
        (0xffff_ffff, 2)
    };
    let one_chunk = |x: u64| (0..chunks).any(|i| x & !(0xffffu64 << (16 * i)) == 0);
    one_chunk(v & mask) || one_chunk(!v & mask)
}

/// Mnemonics whose immediates binutils prints in decimal: shift amounts, bit
/// positions, bitfield positions and widths, vector indices, compares with zero.
fn decimal_immediates(m: &str) -> bool {
    matches!(
        m,
        "lsl"
            | "lsr"
            | "asr"
            | "ror"
            | "ubfx"
            | "sbfx"
            | "ubfiz"
            | "sbfiz"
            | "bfi"
            | "bfxil"
            | "bfc"
            | "ubfm"
            | "sbfm"
            | "bfm"
            | "extr"
            | "tbz"
            | "tbnz"
            | "ext"
            | "udf"
            | "cmeq"
            | "cmge"
            | "cmgt"
            | "cmle"
            | "cmlt"
            | "shl"
            | "sshr"
            | "ushr"
            | "ssra"
            | "usra"
            | "srshr"
            | "urshr"
            | "srsra"
            | "ursra"
            | "sri"
            | "sli"
            | "sqshl"
            | "uqshl"
            | "sqshlu"
            | "shrn"
            | "shrn2"
            | "rshrn"
            | "rshrn2"
            | "sqshrn"
            | "sqshrn2"
            | "uqshrn"
            | "uqshrn2"
            | "sqrshrn"
            | "sqrshrn2"
            | "uqrshrn"
            | "uqrshrn2"
            | "sqshrun"
            | "sqshrun2"
            | "sqrshrun"
            | "sqrshrun2"
            | "sshll"
            | "sshll2"
            | "ushll"
            | "ushll2"
            | "shll"
            | "shll2"
    )
}

/// `lsl #0x4`, `sxtw #0x3`, `msl #0x8`: a shift or extend with its amount.
fn is_shift(part: &str) -> bool {
    let word = part.split(' ').next().unwrap_or("");
    part.contains('#')
        && matches!(
            word,
            "lsl"
                | "lsr"
                | "asr"
                | "ror"
                | "msl"
                | "uxtb"
                | "uxth"
                | "uxtw"
                | "uxtx"
                | "sxtb"
                | "sxth"
                | "sxtw"
                | "sxtx"
        )
}

/// Whether the first operand is a 64-bit register (`mov x0, #…` against `mov w0, #…`).
fn parts_is_x(operands: &str) -> bool {
    operands.starts_with('x') || operands.starts_with("sp")
}

/// Every `#0x…` (or `#-0x…`) in `part` in decimal.
fn to_decimal(part: &mut String) {
    let mut out = String::with_capacity(part.len());
    let mut rest = part.as_str();
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let (neg, body) = match rest.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, rest),
        };
        let Some(hex) = body.strip_prefix("0x") else {
            continue;
        };
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        match u64::from_str_radix(&hex[..end], 16) {
            Ok(v) => {
                if neg {
                    out.push('-');
                }
                out.push_str(&v.to_string());
                rest = &hex[end..];
            }
            Err(_) => continue,
        }
    }
    out.push_str(rest);
    *part = out;
}

fn parse_hex(v: &str) -> Option<u64> {
    u64::from_str_radix(v.strip_prefix("0x")?, 16).ok()
}

/// C's `%.18e` (binutils prints floating-point immediates so): `1.000000000000000000e+00`.
fn c_exponent(f: f64) -> String {
    let s = format!("{f:.18e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// The operands at the top-level commas (a register list `{v0.16b, v1.16b}` is one).
fn split_operands(ops: &str) -> Vec<String> {
    let mut out = vec![];
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut chars = ops.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                if chars.peek() == Some(&' ') {
                    chars.next();
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(word: u32, addr: u64) -> String {
        let syms = Arc::new(ObjdumpSymbols::single("main", 0x400000, 0x100, None));
        let insns = disassemble(&word.to_le_bytes(), addr, &syms, None);
        assert_eq!(insns.len(), 1);
        insns[0].text.clone()
    }

    #[test]
    fn gnu_spellings() {
        // Decimal memory offsets and shifts, hex arithmetic immediates.
        assert_eq!(one(0xa9be7bfd, 0x400000), "stp\tx29, x30, [sp, #-32]!");
        assert_eq!(one(0xf9000bf3, 0x400000), "str\tx19, [sp, #16]");
        assert_eq!(one(0x7100401f, 0x400000), "cmp\tw0, #0x10");
        assert_eq!(one(0xa8c11be5, 0x400000), "ldp\tx5, x6, [sp], #16");
        assert_eq!(one(0xd37cec20, 0x400000), "lsl\tx0, x1, #4");
        assert_eq!(one(0x36180062, 0x400090), "tbz\tw2, #3, 40009c <main+0x9c>");
        assert_eq!(one(0x540003a1, 0x400014), "b.ne\t400088 <main+0x88>");
        assert_eq!(one(0xd503201f, 0x400000), "nop");
        assert_eq!(one(0xd503245f, 0x400000), "bti\tc");
        assert_eq!(
            one(0x4cdfa000, 0x400000),
            "ld1\t{v0.16b, v1.16b}, [x0], #32"
        );
        assert_eq!(
            one(0x1e2e1008, 0x400000),
            "fmov\ts8, #1.000000000000000000e+00"
        );
        assert_eq!(
            one(0xd2800540, 0x400000),
            "mov\tx0, #0x2a                  \t// #42"
        );
        assert_eq!(
            one(0x9280000b, 0x400000),
            "mov\tx11, #0xffffffffffffffff    \t// #-1"
        );
        assert_eq!(one(0x1e602088, 0x400000), "fcmp\td4, #0.0");
        assert_eq!(one(0xffffffff, 0x400000), ".inst\t0xffffffff ; undefined");
        // ORR's `mov` alias only for values MOVZ/MOVN cannot make.
        assert_eq!(one(0xb2401fec, 0x400000), "orr\tx12, xzr, #0xff");
        assert_eq!(
            one(0xb200c3e0, 0x400000),
            "mov\tx0, #0x101010101010101     \t// #72340172838076673"
        );
        // ADRP names a 4 KiB page.
        assert_eq!(one(0x90000008, 0x400123), "adrp\tx8, 400000 <main>");
    }

    #[test]
    fn a_partial_word_is_bad() {
        let syms = Arc::new(ObjdumpSymbols::default());
        let insns = disassemble(&[0x1f, 0x20, 0x03, 0xd5, 0x00, 0x00], 0x10, &syms, None);
        assert_eq!(insns.len(), 2);
        assert_eq!(insns[1].addr, 0x14);
        assert_eq!(insns[1].text, "(bad)");
    }
}
