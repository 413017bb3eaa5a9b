//! User stacks of 32-bit x86 tasks: framehop unwinds x86_64 and aarch64 only, so 32-bit
//! code is walked here with gimli's CFI parser — the same rules (CFA from a register
//! and an offset, return address and `ebp` saved relative to it), and frame pointers
//! where no CFI covers an address.

use super::sections::UnwindTables;
use super::StackEnd;
use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EhFrameHdr, EndianSlice, LittleEndian, Register,
    RegisterRule, UnwindContext, UnwindSection,
};
use std::ops::Range;
use std::sync::Arc;

/// DWARF register numbers of i386.
const ESP: Register = Register(4);
const EBP: Register = Register(5);
const EIP: Register = Register(8);

/// One mapped 32-bit object.
#[derive(Clone)]
pub(crate) struct Module32 {
    pub avma: Range<u64>,
    /// Where the object's address 0 landed.
    pub base_avma: u64,
    pub tables: Arc<UnwindTables>,
}

/// The registers a frame is unwound with.
#[derive(Debug, Clone, Copy)]
struct Regs {
    eip: u32,
    esp: u32,
    ebp: u32,
}

type Slice<'a> = EndianSlice<'a, LittleEndian>;

/// How the caller's registers follow from a frame's, at one address.
enum Rule {
    /// CFA = `reg` + `offset`; the return address at CFA + `ra`; `ebp` at CFA + `bp`
    /// (`None`: unchanged).
    Cfi {
        reg: Register,
        offset: i64,
        ra: i64,
        bp: Option<i64>,
    },
    /// The CFI says the return address is undefined: the outermost frame.
    Root,
    /// No CFI: `ebp` chains the frames.
    FramePointer,
}

/// The rule of the CFI row covering `svma` in `tables`, if any.
fn cfi_rule(tables: &UnwindTables, svma: u64) -> Option<Rule> {
    let mut bases = BaseAddresses::default();
    if let Some(t) = &tables.text {
        bases = bases.set_text(t.start);
    }
    if let Some(g) = &tables.got {
        bases = bases.set_got(g.start);
    }
    let mut ctx = UnwindContext::new();
    let row = if let Some(eh) = &tables.eh_frame {
        bases = bases.set_eh_frame(eh.svma.start);
        let mut frame = EhFrame::new(&eh.bytes, LittleEndian);
        frame.set_address_size(4);
        let from_hdr = tables.eh_frame_hdr.as_ref().and_then(|hdr| {
            let b = bases.clone().set_eh_frame_hdr(hdr.svma.start);
            let parsed = EhFrameHdr::new(&hdr.bytes, LittleEndian)
                .parse(&b, 4)
                .ok()?;
            let fde = parsed
                .table()?
                .fde_for_address(&frame, &b, svma, EhFrame::cie_from_offset)
                .ok()?;
            Some((fde, b))
        });
        let (fde, b) = match from_hdr {
            Some(found) => found,
            None => (
                frame
                    .fde_for_address(&bases, svma, EhFrame::cie_from_offset)
                    .ok()?,
                bases.clone(),
            ),
        };
        to_rule(
            fde.unwind_info_for_address(&frame, &b, &mut ctx, svma)
                .ok()?,
        )
    } else {
        let df = tables.debug_frame.as_ref()?;
        let mut frame: DebugFrame<Slice<'_>> = DebugFrame::new(&df.bytes, LittleEndian);
        frame.set_address_size(4);
        let fde = frame
            .fde_for_address(&bases, svma, DebugFrame::cie_from_offset)
            .ok()?;
        to_rule(
            fde.unwind_info_for_address(&frame, &bases, &mut ctx, svma)
                .ok()?,
        )
    };
    row
}

fn to_rule<T: gimli::ReaderOffset>(row: &gimli::UnwindTableRow<T>) -> Option<Rule> {
    let CfaRule::RegisterAndOffset { register, offset } = *row.cfa() else {
        // CFA expressions (PLT stubs, signal frames) are not evaluated here.
        return None;
    };
    if register != ESP && register != EBP {
        return None;
    }
    let ra = match row.register(EIP) {
        Some(RegisterRule::Offset(o)) => o,
        Some(RegisterRule::Undefined) => return Some(Rule::Root),
        _ => return None,
    };
    let bp = match row.register(EBP) {
        Some(RegisterRule::Offset(o)) => Some(o),
        None | Some(RegisterRule::SameValue) => None,
        _ => return None,
    };
    Some(Rule::Cfi {
        reg: register,
        offset,
        ra,
        bp,
    })
}

/// Unwinds a 32-bit task's stack from `start` (pc, sp, fp) through `modules`, reading
/// the stack copy with `read` (a 32-bit word at an address, `None` outside the copy).
/// Pushes the addresses perf reports — the pc, then each return address minus one —
/// up to `max` of them; says how the walk ended.
pub(crate) fn unwind(
    modules: &[Module32],
    start: (u64, u64, u64),
    mut read: impl FnMut(u64) -> Option<u32>,
    max: usize,
    out: &mut Vec<u64>,
) -> StackEnd {
    let mut regs = Regs {
        eip: start.0 as u32,
        esp: start.1 as u32,
        ebp: start.2 as u32,
    };
    let mut first = true;
    loop {
        if out.len() >= max {
            return StackEnd::Limit;
        }
        out.push(if first {
            u64::from(regs.eip)
        } else {
            u64::from(regs.eip).saturating_sub(1)
        });
        // A caller's return address points after its call: look up the call itself.
        let lookup = if first {
            u64::from(regs.eip)
        } else {
            u64::from(regs.eip).saturating_sub(1)
        };
        let module = modules.iter().find(|m| m.avma.contains(&lookup));
        let rule = module
            .and_then(|m| cfi_rule(&m.tables, lookup.wrapping_sub(m.base_avma)))
            .unwrap_or(Rule::FramePointer);
        let (cfa, ra_at, bp_at) = match rule {
            Rule::Root => return StackEnd::Complete,
            Rule::Cfi {
                reg,
                offset,
                ra,
                bp,
            } => {
                let base = if reg == ESP { regs.esp } else { regs.ebp };
                let cfa = i64::from(base) + offset;
                (cfa, cfa + ra, bp.map(|b| cfa + b))
            }
            Rule::FramePointer => {
                if regs.ebp == 0 {
                    return StackEnd::Complete;
                }
                let cfa = i64::from(regs.ebp) + 8;
                (cfa, cfa - 4, Some(cfa - 8))
            }
        };
        let at = |a: i64| u64::try_from(a).ok().filter(|&a| a <= u64::from(u32::MAX));
        let Some(ra) = at(ra_at).and_then(&mut read) else {
            return StackEnd::Truncated;
        };
        let ebp = match bp_at {
            Some(b) => match at(b).and_then(&mut read) {
                Some(v) => v,
                None => return StackEnd::Truncated,
            },
            None => regs.ebp,
        };
        let Some(esp) = at(cfa).map(|c| c as u32) else {
            return StackEnd::Lost;
        };
        if ra == 0 {
            return StackEnd::Complete;
        }
        // The stack grows down: a caller's frame is above its callee's.
        if esp <= regs.esp && !first {
            return StackEnd::Lost;
        }
        regs = Regs { eip: ra, esp, ebp };
        first = false;
    }
}
