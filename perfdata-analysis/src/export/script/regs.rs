//! The `iregs` and `uregs` fields: a sample's register dump as perf prints it.

use std::io::Write;

/// perf's `perf_sample__fprintf_regs`: ` ABI:N ` and each register of `mask` as
/// `%5s:0x%x `.
pub(super) fn write_regs(
    out: &mut impl Write,
    regs: Option<perfdata::types::Regs<'_>>,
    mask: u64,
) -> std::io::Result<()> {
    let Some(regs) = regs else { return Ok(()) };
    let Some(values) = regs.regs else {
        return Ok(());
    };
    write!(out, " ABI:{} ", regs.abi.0)?;
    let mut values = values.iter();
    for bit in (0..64).filter(|b| mask & (1u64 << b) != 0) {
        let Some(v) = values.next() else { break };
        write!(out, "{:>5}:0x{v:x} ", x86_reg_name(bit))?;
    }
    Ok(())
}

/// perf's Python host's `regs_map`: each register of `mask` as `%5s:0x%x ` (no ABI).
pub(super) fn regs_text(regs: Option<perfdata::types::Regs<'_>>, mask: u64) -> String {
    let mut out = String::new();
    let Some(values) = regs.and_then(|r| r.regs) else {
        return out;
    };
    let mut values = values.iter();
    for bit in (0..64).filter(|b| mask & (1u64 << b) != 0) {
        let Some(v) = values.next() else { break };
        out.push_str(&format!("{:>5}:0x{v:x} ", x86_reg_name(bit)));
    }
    out
}

/// perf's names of the x86 registers (`perf_reg_name`).
fn x86_reg_name(bit: u32) -> String {
    const NAMES: [&str; 24] = [
        "AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS", "DS", "ES",
        "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
    ];
    match bit {
        0..=23 => NAMES[bit as usize].to_string(),
        32..=63 => format!("XMM{}", (bit - 32) / 2),
        _ => "unknown".to_string(),
    }
}
