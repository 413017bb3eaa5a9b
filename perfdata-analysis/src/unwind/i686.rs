//! User stacks of 32-bit x86 tasks: framehop unwinds x86_64 and aarch64 only, so 32-bit
//! code is walked here with gimli's CFI parser — the same rules (CFA from a register
//! and an offset, return address and `ebp` saved relative to it), and frame pointers
//! where no CFI covers an address.

use super::sections::UnwindTables;
use super::StackEnd;
use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EhFrameHdr, EndianSlice, EvaluationResult,
    LittleEndian, Location, Register, RegisterRule, UnwindContext, UnwindSection, Value,
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

/// A step from one frame to its caller.
enum Step {
    /// The caller's registers.
    To(Regs),
    /// The registers of the frame a signal interrupted (the step was through a signal
    /// trampoline): its pc is where it was stopped, not a return address.
    Interrupted(Regs),
    /// The CFI says the return address is undefined: the outermost frame.
    Root,
    /// A stack read fell outside the copy.
    OutsideCopy,
}

/// The step the CFI row covering `svma` in `tables` gives from `regs` (reading the stack
/// copy with `read`); `None` when no row covers it or a rule is beyond this walker.
fn cfi_step(
    tables: &UnwindTables,
    svma: u64,
    regs: Regs,
    read: &mut dyn FnMut(u64) -> Option<u32>,
) -> Option<Step> {
    let mut bases = BaseAddresses::default();
    if let Some(t) = &tables.text {
        bases = bases.set_text(t.start);
    }
    if let Some(g) = &tables.got {
        bases = bases.set_got(g.start);
    }
    let mut ctx = UnwindContext::new();
    if let Some(eh) = &tables.eh_frame {
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
        let row = fde
            .unwind_info_for_address(&frame, &b, &mut ctx, svma)
            .ok()?;
        let step = apply(&frame, fde.cie().encoding(), row, regs, read);
        step.map(|s| interrupted_if(fde.is_signal_trampoline(), s))
    } else {
        let df = tables.debug_frame.as_ref()?;
        let mut frame: DebugFrame<Slice<'_>> = DebugFrame::new(&df.bytes, LittleEndian);
        frame.set_address_size(4);
        let fde = frame
            .fde_for_address(&bases, svma, DebugFrame::cie_from_offset)
            .ok()?;
        let row = fde
            .unwind_info_for_address(&frame, &bases, &mut ctx, svma)
            .ok()?;
        let step = apply(&frame, fde.cie().encoding(), row, regs, read);
        step.map(|s| interrupted_if(fde.is_signal_trampoline(), s))
    }
}

/// A step through a signal trampoline's CFI reaches an interrupted frame.
fn interrupted_if(signal: bool, step: Step) -> Step {
    match step {
        Step::To(regs) if signal => Step::Interrupted(regs),
        step => step,
    }
}

/// The value of a DWARF register of `regs` (those a 32-bit walk tracks).
fn reg(regs: Regs, r: Register) -> Option<u32> {
    match r {
        ESP => Some(regs.esp),
        EBP => Some(regs.ebp),
        EIP => Some(regs.eip),
        _ => None,
    }
}

/// Evaluates a CFI expression (`DW_OP_breg5 -4; DW_OP_deref`: a realigned `main`'s CFA)
/// to the address it computes; `None` for one needing registers not tracked.
fn evaluate<'a, S: UnwindSection<Slice<'a>>>(
    section: &S,
    encoding: gimli::Encoding,
    expr: &gimli::UnwindExpression<usize>,
    regs: Regs,
    push_cfa: Option<u32>,
    read: &mut dyn FnMut(u64) -> Option<u32>,
) -> Option<Result<u32, ()>> {
    let mut eval = expr.get(section).ok()?.evaluation(encoding);
    if let Some(cfa) = push_cfa {
        eval.set_initial_value(u64::from(cfa));
    }
    let mut result = eval.evaluate().ok()?;
    // Bounded: an expression cannot ask for more than it has operations.
    for _ in 0..64 {
        result = match result {
            EvaluationResult::Complete => {
                return match eval.result().first()?.location {
                    Location::Address { address } => Some(Ok(address as u32)),
                    _ => None,
                };
            }
            EvaluationResult::RequiresRegister { register, .. } => {
                let v = reg(regs, register)?;
                eval.resume_with_register(Value::Generic(u64::from(v)))
                    .ok()?
            }
            EvaluationResult::RequiresMemory { address, .. } => match read(address) {
                Some(v) => eval.resume_with_memory(Value::Generic(u64::from(v))).ok()?,
                None => return Some(Err(())),
            },
            _ => return None,
        };
    }
    None
}

/// The caller's registers from `regs` under the CFI row `row`.
fn apply<'a, S: UnwindSection<Slice<'a>>>(
    section: &S,
    encoding: gimli::Encoding,
    row: &gimli::UnwindTableRow<usize>,
    regs: Regs,
    read: &mut dyn FnMut(u64) -> Option<u32>,
) -> Option<Step> {
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            (i64::from(reg(regs, *register)?) + offset) as u32
        }
        CfaRule::Expression(e) => match evaluate(section, encoding, e, regs, None, read)? {
            Ok(a) => a,
            Err(()) => return Some(Step::OutsideCopy),
        },
    };
    // A register's value in the caller: read at an address the rule gives, or kept.
    let mut restore = |r: Register, keep: u32| -> Option<Result<u32, ()>> {
        let at = match row.register(r) {
            None | Some(RegisterRule::SameValue) => return Some(Ok(keep)),
            Some(RegisterRule::Offset(o)) => (i64::from(cfa) + o) as u32,
            Some(RegisterRule::ValOffset(o)) => return Some(Ok((i64::from(cfa) + o) as u32)),
            Some(RegisterRule::Expression(e)) => {
                match evaluate(section, encoding, &e, regs, Some(cfa), read)? {
                    Ok(a) => a,
                    Err(()) => return Some(Err(())),
                }
            }
            _ => return None,
        };
        Some(read(u64::from(at)).ok_or(()))
    };
    if matches!(row.register(EIP), Some(RegisterRule::Undefined)) {
        return Some(Step::Root);
    }
    let eip = match restore(EIP, 0)? {
        Ok(v) => v,
        Err(()) => return Some(Step::OutsideCopy),
    };
    let ebp = match restore(EBP, regs.ebp)? {
        Ok(v) => v,
        Err(()) => return Some(Step::OutsideCopy),
    };
    Some(Step::To(Regs { eip, esp: cfa, ebp }))
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
    // The pc is where the frame was stopped (the sample's, or one a signal interrupted),
    // not a return address.
    let mut exact = true;
    loop {
        if out.len() >= max {
            return StackEnd::Limit;
        }
        // A caller's return address points after its call: look up the call itself.
        let lookup = if exact {
            u64::from(regs.eip)
        } else {
            u64::from(regs.eip).saturating_sub(1)
        };
        out.push(lookup);
        let module = modules.iter().find(|m| m.avma.contains(&lookup));
        let step = module
            .and_then(|m| cfi_step(&m.tables, lookup.wrapping_sub(m.base_avma), regs, &mut read));
        let next = match step {
            Some(Step::Root) => return StackEnd::Complete,
            Some(Step::OutsideCopy) => return StackEnd::Truncated,
            Some(Step::To(next)) => {
                exact = false;
                next
            }
            Some(Step::Interrupted(next)) => {
                exact = true;
                next
            }
            // No CFI: `ebp` chains the frames.
            None => {
                if regs.ebp == 0 {
                    return StackEnd::Complete;
                }
                let (Some(ra), Some(ebp)) =
                    (read(u64::from(regs.ebp) + 4), read(u64::from(regs.ebp)))
                else {
                    return StackEnd::Truncated;
                };
                exact = false;
                Regs {
                    eip: ra,
                    esp: regs.ebp.wrapping_add(8),
                    ebp,
                }
            }
        };
        if next.eip == 0 {
            return StackEnd::Complete;
        }
        // The stack grows down: a caller's frame is above its callee's.
        if next.esp <= regs.esp && !first {
            return StackEnd::Lost;
        }
        regs = next;
        first = false;
    }
}
