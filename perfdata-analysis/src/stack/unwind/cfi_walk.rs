//! A DWARF CFI walk with gimli's parser, for what framehop does not cover: 32-bit x86
//! tasks (framehop unwinds x86_64 and aarch64 only), and x86_64 frames whose CFA is not
//! an offset from rsp or rbp — glibc's `_dl_runtime_resolve_xsavec`, the lazy-binding
//! trampoline, keeps it in rbx (`cfi_def_cfa_register(%rbx)` after realigning the
//! stack), so framehop, which tracks rip, rsp and rbp only, loses the stack there. This
//! walk tracks every general register: the sample's dump gives their values, each
//! frame's CFI row restores the callee-saved ones its callee spilled; and where no CFI
//! covers an address, frame pointers chain the frames.

use super::sections::UnwindTables;
use super::StackEnd;
use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EhFrameHdr, EndianSlice, EvaluationResult,
    LittleEndian, Location, Register, RegisterRule, UnwindContext, UnwindSection, Value,
};
use std::ops::Range;
use std::sync::Arc;

/// The registers of a DWARF register set this walk tracks (x86_64: 0–15 and the return
/// address column 16; i386: 0–8).
pub(crate) const TRACKED: usize = 17;

/// What the walk needs to know of an architecture's DWARF registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RegSet {
    /// Bytes of an address and of a stack word.
    pub word: u8,
    pub sp: Register,
    pub fp: Register,
    /// The return-address column (the caller's pc).
    pub ra: Register,
}

/// i386: eax ecx edx ebx esp ebp esi edi eip.
pub(crate) const I386: RegSet = RegSet {
    word: 4,
    sp: Register(4),
    fp: Register(5),
    ra: Register(8),
};

/// x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8–r15, return address 16.
pub(crate) const X86_64: RegSet = RegSet {
    word: 8,
    sp: Register(7),
    fp: Register(6),
    ra: Register(16),
};

/// perf's x86 register numbers (perf_event_x86_regs) of each DWARF register, by DWARF
/// number: x86_64, then i386.
pub(crate) const PERF_OF_DWARF_X86_64: [u32; TRACKED] =
    [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8];
pub(crate) const PERF_OF_DWARF_I386: [u32; 9] = [0, 2, 3, 1, 7, 6, 4, 5, 8];

/// One mapped object.
#[derive(Clone)]
pub(crate) struct MappedCfi {
    pub avma: Range<u64>,
    /// Where the object's address 0 landed.
    pub base_avma: u64,
    pub tables: Arc<UnwindTables>,
}

/// A frame's registers: `None` where unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Regs([Option<u64>; TRACKED]);

impl Regs {
    /// From register values by DWARF number.
    pub fn new(values: [Option<u64>; TRACKED]) -> Regs {
        Regs(values)
    }

    fn get(&self, r: Register) -> Option<u64> {
        self.0.get(usize::from(r.0)).copied().flatten()
    }

    fn set(&mut self, r: Register, v: Option<u64>) {
        if let Some(slot) = self.0.get_mut(usize::from(r.0)) {
            *slot = v;
        }
    }
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

/// The walk's view of one architecture and its stack copy.
struct Ctx<'r> {
    set: RegSet,
    /// A stack word at an address, `None` outside the copy.
    read: &'r mut dyn FnMut(u64) -> Option<u64>,
}

impl Ctx<'_> {
    /// An address-sized value, wrapped to the word.
    fn wrap(&self, v: i128) -> u64 {
        let v = v as u64;
        if self.set.word == 4 {
            v & 0xffff_ffff
        } else {
            v
        }
    }
}

/// The step the CFI row covering `svma` in `tables` gives from `regs` (reading the stack
/// copy with `read`); `None` when no row covers it or a rule is beyond this walker.
fn cfi_step(tables: &UnwindTables, svma: u64, regs: &Regs, cx: &mut Ctx<'_>) -> Option<Step> {
    let word = cx.set.word;
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
        frame.set_address_size(word);
        let from_hdr = tables.eh_frame_hdr.as_ref().and_then(|hdr| {
            let b = bases.clone().set_eh_frame_hdr(hdr.svma.start);
            let parsed = EhFrameHdr::new(&hdr.bytes, LittleEndian)
                .parse(&b, word)
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
        let step = apply(&frame, fde.cie().encoding(), row, regs, cx);
        step.map(|s| interrupted_if(fde.is_signal_trampoline(), s))
    } else {
        let df = tables.debug_frame.as_ref()?;
        let mut frame: DebugFrame<Slice<'_>> = DebugFrame::new(&df.bytes, LittleEndian);
        frame.set_address_size(word);
        let fde = frame
            .fde_for_address(&bases, svma, DebugFrame::cie_from_offset)
            .ok()?;
        let row = fde
            .unwind_info_for_address(&frame, &bases, &mut ctx, svma)
            .ok()?;
        let step = apply(&frame, fde.cie().encoding(), row, regs, cx);
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

/// Evaluates a CFI expression (`DW_OP_breg5 -4; DW_OP_deref`: a realigned `main`'s CFA)
/// to the address it computes; `None` for one needing registers not tracked.
fn evaluate<'a, S: UnwindSection<Slice<'a>>>(
    section: &S,
    encoding: gimli::Encoding,
    expr: &gimli::UnwindExpression<usize>,
    regs: &Regs,
    push_cfa: Option<u64>,
    cx: &mut Ctx<'_>,
) -> Option<Result<u64, ()>> {
    let mut eval = expr.get(section).ok()?.evaluation(encoding);
    // A branch back makes a loop, each turn may push a value: without a bound, hostile
    // CFI hangs the walk and grows its stack without end (fuzzing found one). Real CFI
    // expressions run a dozen operations (a PLT entry's, a signal frame's).
    eval.set_max_iterations(1000);
    if let Some(cfa) = push_cfa {
        eval.set_initial_value(cfa);
    }
    let mut result = eval.evaluate().ok()?;
    // Bounded: an expression cannot ask for more than it has operations.
    for _ in 0..64 {
        result = match result {
            EvaluationResult::Complete => {
                return match eval.result().first()?.location {
                    Location::Address { address } => Some(Ok(cx.wrap(i128::from(address)))),
                    _ => None,
                };
            }
            EvaluationResult::RequiresRegister { register, .. } => {
                let v = regs.get(register)?;
                eval.resume_with_register(Value::Generic(v)).ok()?
            }
            EvaluationResult::RequiresMemory { address, .. } => match (cx.read)(address) {
                Some(v) => eval.resume_with_memory(Value::Generic(v)).ok()?,
                None => return Some(Err(())),
            },
            _ => return None,
        };
    }
    None
}

/// The caller's registers from `regs` under the CFI row `row`: the CFA becomes its stack
/// pointer, each register with a rule is restored (one without keeps its value: what a
/// callee does not touch), the return address becomes its pc.
fn apply<'a, S: UnwindSection<Slice<'a>>>(
    section: &S,
    encoding: gimli::Encoding,
    row: &gimli::UnwindTableRow<usize>,
    regs: &Regs,
    cx: &mut Ctx<'_>,
) -> Option<Step> {
    // An undefined return address (or none stated) marks the outermost frame.
    if matches!(
        row.register(cx.set.ra),
        None | Some(RegisterRule::Undefined)
    ) {
        return Some(Step::Root);
    }
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            cx.wrap(i128::from(regs.get(*register)?) + i128::from(*offset))
        }
        CfaRule::Expression(e) => match evaluate(section, encoding, e, regs, None, cx)? {
            Ok(a) => a,
            Err(()) => return Some(Step::OutsideCopy),
        },
    };
    let mut next = *regs;
    // The return address has a rule in every row that can return; others keep theirs.
    next.set(cx.set.ra, None);
    for (r, rule) in row.registers() {
        let v = match rule {
            RegisterRule::Undefined => None,
            RegisterRule::SameValue => regs.get(*r),
            RegisterRule::Offset(o) => {
                let at = cx.wrap(i128::from(cfa) + i128::from(*o));
                match (cx.read)(at) {
                    Some(v) => Some(v),
                    // A lost return address ends the walk; another register is unknown.
                    None if *r == cx.set.ra => return Some(Step::OutsideCopy),
                    None => None,
                }
            }
            RegisterRule::ValOffset(o) => Some(cx.wrap(i128::from(cfa) + i128::from(*o))),
            RegisterRule::Register(from) => regs.get(*from),
            RegisterRule::Expression(e) => {
                match evaluate(section, encoding, e, regs, Some(cfa), cx)? {
                    Ok(at) => match (cx.read)(at) {
                        Some(v) => Some(v),
                        None if *r == cx.set.ra => return Some(Step::OutsideCopy),
                        None => None,
                    },
                    Err(()) if *r == cx.set.ra => return Some(Step::OutsideCopy),
                    Err(()) => None,
                }
            }
            RegisterRule::ValExpression(e) => {
                evaluate(section, encoding, e, regs, Some(cfa), cx)?.ok()
            }
            _ => None,
        };
        next.set(*r, v);
    }
    next.set(cx.set.sp, Some(cfa));
    next.get(cx.set.ra)?;
    Some(Step::To(next))
}

/// Whether the CFI row covering `lookup` says the return address is undefined: the
/// outermost frame (`_start`, a thread's `clone`), where a walk is complete.
pub(crate) fn is_outermost(set: RegSet, modules: &[MappedCfi], lookup: u64) -> bool {
    let mut no_read = |_: u64| None;
    let mut cx = Ctx {
        set,
        read: &mut no_read,
    };
    let unknown = Regs::new([None; TRACKED]);
    modules
        .iter()
        .find(|m| m.avma.contains(&lookup))
        .and_then(|m| {
            cfi_step(
                &m.tables,
                lookup.wrapping_sub(m.base_avma),
                &unknown,
                &mut cx,
            )
        })
        .is_some_and(|step| matches!(step, Step::Root))
}

/// Unwinds a stack from `start` (register values by DWARF number, for the register set
/// `set`) through `modules`, reading the stack copy with `read` (a word at an address,
/// `None` outside the copy). Pushes the addresses perf reports — the pc, then each
/// return address minus one — up to `max` of them; says how the walk ended.
pub(crate) fn unwind(
    set: RegSet,
    modules: &[MappedCfi],
    start: Regs,
    mut read: impl FnMut(u64) -> Option<u64>,
    max: usize,
    out: &mut Vec<u64>,
) -> StackEnd {
    let mut cx = Ctx {
        set,
        read: &mut read,
    };
    let mut regs = start;
    let mut first = true;
    // The pc is where the frame was stopped (the sample's, or one a signal interrupted),
    // not a return address.
    let mut exact = true;
    loop {
        if out.len() >= max {
            return StackEnd::Limit;
        }
        let Some(pc) = regs.get(set.ra) else {
            return StackEnd::Lost;
        };
        // A caller's return address points after its call: look up the call itself.
        let lookup = if exact { pc } else { pc.saturating_sub(1) };
        out.push(lookup);
        let module = modules.iter().find(|m| m.avma.contains(&lookup));
        let step = module
            .and_then(|m| cfi_step(&m.tables, lookup.wrapping_sub(m.base_avma), &regs, &mut cx));
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
            // No CFI: the frame pointer chains the frames.
            None => {
                let fp = regs.get(set.fp).unwrap_or(0);
                if fp == 0 {
                    return StackEnd::Complete;
                }
                let w = u64::from(set.word);
                let (Some(ra), Some(saved_fp)) = ((cx.read)(fp.wrapping_add(w)), (cx.read)(fp))
                else {
                    return StackEnd::Truncated;
                };
                exact = false;
                let mut next = regs;
                next.set(set.ra, Some(ra));
                next.set(set.sp, Some(fp.wrapping_add(2 * w)));
                next.set(set.fp, Some(saved_fp));
                next
            }
        };
        if next.get(set.ra).unwrap_or(0) == 0 {
            return StackEnd::Complete;
        }
        // The stack grows down: a caller's frame is above its callee's.
        let (Some(sp), Some(old_sp)) = (next.get(set.sp), regs.get(set.sp)) else {
            return StackEnd::Lost;
        };
        if sp <= old_sp && !first {
            return StackEnd::Lost;
        }
        regs = next;
        first = false;
    }
}
