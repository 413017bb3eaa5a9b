//! The aarch64 decoder against LLVM's: the test functions (branches, loads and stores,
//! SIMD, system instructions, atomics, undecodable words) assembled by `llvm-mc`, laid
//! out as an executable, decoded by `annotate` and by `llvm-objdump -d`, instruction by
//! instruction. LLVM's AArch64 text is close to GNU's; what differs by convention, not
//! by decoding, is normalized before comparing (see [`normalize`]).

use crate::common::aarch64::{self, LLVM_MC, LLVM_OBJDUMP};
use crate::common::tools::require_tools;
use object::{Object, ObjectSection};
use perfdata_analysis::analyses::annotate::{aarch64 as a64, disasm::ObjdumpSymbols};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;

/// The systematic differences between GNU's spelling (ours) and LLVM's:
/// * immediates: GNU writes arithmetic and logical ones in hex, LLVM most in decimal;
///   both become their value (LLVM's 64-bit `movi` mask `#0000000000000000` too);
/// * `mov Xd, #imm`: GNU pads the hex value and puts the signed one in a `// #N`
///   comment; LLVM writes the signed value (`#-1`);
/// * floating-point immediates: `#1.000000000000000000e+00` against `#1.00000000`;
/// * branch and literal targets: `4005c8 <main+0x18>` against `0x4005c8 <main+0x18>`;
/// * `adr`: LLVM shows the PC-relative offset (`#-0x14`), GNU the target; `adrp`: the
///   page, which LLVM names by the instruction's own symbol;
/// * register lists `{v0.16b, v1.16b}` against `{ v0.16b, v1.16b }`; system registers
///   in lower case against upper case;
/// * an undecodable word: `.inst 0x... ; undefined` against `<unknown>`;
/// * a literal load's target in a literal pool: LLVM names it by the pool's mapping
///   symbol (`<$d.1>`), GNU by the function (`<helper+0x14>`).
fn normalize(text: &str, addr: u64) -> String {
    let mut t = text.trim().to_lowercase();
    if t.starts_with(".inst") || t == "<unknown>" {
        return "undecodable".into();
    }
    if let Some((before, comment)) = t.split_once("\t// ") {
        // `mov x0, #0x2a  // #42`: the commented value is the operand.
        let at = before.rfind('#').unwrap_or(before.len());
        t = format!("{}{}", &before[..at], comment.trim());
    }
    let t = t.replace('\t', " ").replace("{ ", "{").replace(" }", "}");
    let mut words: Vec<String> = t.split_whitespace().map(str::to_string).collect();
    let mnemonic = words.first().cloned().unwrap_or_default();
    // A target address followed by its `<sym+off>`: bare hex.
    for i in 0..words.len() {
        if words.get(i + 1).is_some_and(|w| w.starts_with('<')) {
            let w = &words[i];
            let hex = w.trim_start_matches("0x");
            if let Ok(v) = u64::from_str_radix(hex, 16) {
                words[i] = if mnemonic == "adr" {
                    format!("#{}", v.wrapping_sub(addr) as i64)
                } else {
                    format!("{v:x}")
                };
            }
        }
    }
    if mnemonic == "adr" || mnemonic == "adrp" {
        words.retain(|w| !w.starts_with('<'));
    }
    let t = words.join(" ");
    // Every `#immediate` as its value.
    let mut out = String::new();
    let mut rest = t.as_str();
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+'))
            .unwrap_or(rest.len());
        let lit = &rest[..end];
        let (neg, body) = match lit.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, lit),
        };
        let value = if let Some(h) = body.strip_prefix("0x") {
            u64::from_str_radix(h, 16).ok().map(|v| v as i128)
        } else if body.len() == 16 && body.bytes().all(|b| b.is_ascii_hexdigit()) {
            u64::from_str_radix(body, 16).ok().map(|v| v as i128)
        } else {
            body.parse::<i128>().ok()
        };
        match (value, body.parse::<f64>()) {
            (Some(v), _) => out.push_str(&(if neg { -v } else { v }).to_string()),
            (None, Ok(f)) => out.push_str(&format!("{}", if neg { -f } else { f })),
            _ => out.push_str(lit),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn aarch64_text_equals_llvm_objdump_s_for_99_percent() {
    if !require_tools(&[LLVM_MC, LLVM_OBJDUMP]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = aarch64::build(dir.path()).unwrap();
    let bytes = std::fs::read(&exe).unwrap();
    let obj = object::File::parse(&*bytes).unwrap();
    let text = obj.section_by_name(".text").unwrap();
    let symbols = Arc::new(ObjdumpSymbols::of(&obj, None));
    let ours = a64::disassemble(
        text.data().unwrap(),
        text.address(),
        &symbols,
        Some(text.index().0),
    );
    let out = Command::new("llvm-objdump")
        .args([
            "-d",
            "--no-show-raw-insn",
            &format!("--mattr={}", aarch64::MATTR),
        ])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = String::from_utf8(out.stdout).unwrap();
    let mut llvm = BTreeMap::new();
    for line in listing.lines() {
        let Some((a, t)) = line.split_once(':') else {
            continue;
        };
        if let Ok(addr) = u64::from_str_radix(a.trim(), 16) {
            if !line.ends_with(">:") {
                // Data shows its bytes even with --no-show-raw-insn: the directive only.
                let t = t.find(".word").map_or(t, |at| &t[at..]);
                llvm.insert(addr, t.trim().to_string());
            }
        }
    }
    assert!(ours.len() > 100, "{} instructions", ours.len());
    let mut differ = vec![];
    for i in &ours {
        let theirs = llvm
            .get(&i.addr)
            .unwrap_or_else(|| panic!("llvm-objdump has no instruction at {:x}", i.addr));
        let (mut a, mut b) = (normalize(&i.text, i.addr), normalize(theirs, i.addr));
        // LLVM names an address in a literal pool by its mapping symbol (`<$d.1>`),
        // which GNU never does: the address is compared, not the name.
        if b.contains("<$") {
            for t in [&mut a, &mut b] {
                if let Some(at) = t.find(" <") {
                    t.truncate(at);
                }
            }
        }
        if a != b {
            differ.push(format!(
                "{:x}: ours `{}`, llvm `{}`",
                i.addr, i.text, theirs
            ));
        }
    }
    for d in &differ {
        eprintln!("differs: {d}");
    }
    let equal = ours.len() - differ.len();
    assert!(
        equal * 100 >= ours.len() * 99,
        "{equal} of {} instructions equal:\n{}",
        ours.len(),
        differ.join("\n")
    );
    // The mapping symbols name nothing: every target is named by a function.
    assert!(
        !ours.iter().any(|i| i.text.contains("<$")),
        "a mapping symbol named"
    );
}
