//! The unwinders on crafted objects: CFI written with gimli for three functions
//! (`root` → `caller` → `leaf`), a stack laid out as those rules say, and the registers
//! of a sample in `leaf` — for x86_64, aarch64 and 32-bit x86. Also what a walk does
//! when the stack copy ends, when no rule applies, and at the frame limit.

use super::sections::{Section, SectionBytes, UnwindTables};
use super::*;
use gimli::write::{
    Address, CallFrameInstruction as I, CommonInformationEntry, EhFrame, EndianVec, Expression,
    FrameDescriptionEntry, FrameTable,
};
use gimli::{Encoding, Format, LittleEndian, Register};

/// Where the crafted object is mapped, and its functions (object addresses).
const BASE: u64 = 0x5555_0000;
const LEAF: u64 = 0x1000;
const CALLER: u64 = 0x2000;
const ROOT: u64 = 0x3000;

/// An object whose `.eh_frame` holds `fdes`: (start, rules at start).
fn object(
    address_size: u8,
    cie_rules: Vec<I>,
    ra: Register,
    data_align: i8,
    fdes: Vec<(u64, Vec<I>)>,
) -> Arc<UnwindTables> {
    object_with_trampoline(address_size, cie_rules, ra, data_align, fdes, None)
}

/// The same, plus a signal trampoline: an FDE (start, rules) under a CIE with the `S`
/// augmentation.
fn object_with_trampoline(
    address_size: u8,
    cie_rules: Vec<I>,
    ra: Register,
    data_align: i8,
    fdes: Vec<(u64, Vec<I>)>,
    trampoline: Option<(u64, Vec<I>)>,
) -> Arc<UnwindTables> {
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 1,
        address_size,
    };
    let new_cie = |signal: bool| {
        let mut cie = CommonInformationEntry::new(encoding, 1, data_align, ra);
        cie.signal_trampoline = signal;
        for r in cie_rules.clone() {
            cie.add_instruction(r);
        }
        cie
    };
    let mut table = FrameTable::default();
    let plain = table.add_cie(new_cie(false));
    let signal = table.add_cie(new_cie(true));
    let fdes = fdes.into_iter().map(|f| (plain, f));
    for (cie, (start, rules)) in fdes.chain(trampoline.map(|t| (signal, t))) {
        let mut fde = FrameDescriptionEntry::new(Address::Constant(start), 0x100);
        for r in rules {
            fde.add_instruction(0, r);
        }
        table.add_fde(cie, fde);
    }
    let mut eh = EhFrame(EndianVec::new(LittleEndian));
    table.write_eh_frame(&mut eh).unwrap();
    let bytes = eh.0.into_vec();
    let mut tables = UnwindTables {
        eh_frame: Some(Section {
            svma: 0x4000..0x4000 + bytes.len() as u64,
            bytes: SectionBytes::Owned(bytes.into()),
        }),
        text: Some(0x1000..0x4000),
        is_32: address_size == 4,
        ..UnwindTables::default()
    };
    tables.signal_trampolines = tables.find_signal_trampolines();
    Arc::new(tables)
}

/// A signal trampoline's code; its FDE starts a byte before it (as glibc's and the
/// vdso's do: a caller's lookup address is its return address minus one).
const TRAMPOLINE: u64 = 0x2800;

fn mapped(tables: Arc<UnwindTables>) -> Vec<MappedObject> {
    vec![MappedObject {
        avma: BASE + 0x1000..BASE + 0x4000,
        base_avma: BASE,
        name: "crafted".into(),
        tables,
    }]
}

/// Stack words (64- or 32-bit) from `sp` up, as bytes.
fn stack(words: &[u64], word: usize) -> Vec<u8> {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes()[..word].to_vec())
        .collect()
}

/// Unwinds with x86 registers (`ip`, `sp`, `bp` in perf's numbering) or aarch64 ones.
fn run(
    arch: Arch,
    objects: Vec<MappedObject>,
    abi: SampleRegsAbi,
    mask: u64,
    values: Vec<u64>,
    stack: &[u8],
    max: usize,
) -> (Vec<u64>, StackEnd) {
    let mut u = Unwinding::new(Some(arch));
    let mut objects = Some(objects);
    let mut out = vec![];
    let end = u
        .unwind(
            1,
            1,
            &mut || objects.take().unwrap_or_default(),
            abi,
            mask,
            &Array::from(values),
            stack,
            Endianness::Little,
            max,
            &mut out,
        )
        .expect("registers to start from");
    (out, end)
}

const X86_MASK: u64 = (1 << 6) | (1 << 7) | (1 << 8); // bp, sp, ip

fn x86_64_object() -> Vec<MappedObject> {
    let (rsp, ra) = (Register(7), Register(16));
    mapped(object(
        8,
        vec![I::Cfa(rsp, 8), I::Offset(ra, -8)],
        ra,
        -8,
        vec![
            // leaf: one push (CFA = rsp + 16).
            (LEAF, vec![I::CfaOffset(16)]),
            // caller: a 24-byte frame (CFA = rsp + 32).
            (CALLER, vec![I::CfaOffset(32)]),
            // root: the outermost frame.
            (ROOT, vec![I::Undefined(ra)]),
        ],
    ))
}

#[test]
fn x86_64_follows_the_cfi_to_the_root() {
    let sp = 0x7ffd_0000;
    // leaf's frame: [pushed], [return into caller]; caller's: 3 words, [return into root].
    let words = [0, BASE + CALLER + 0x20, 0, 0, 0, BASE + ROOT + 0x10, 0];
    let (addrs, end) = run(
        Arch::X86_64,
        x86_64_object(),
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![0, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert_eq!(end, StackEnd::Complete);
    // The pc, then each return address minus one (the call), as perf reports them.
    assert_eq!(
        addrs,
        vec![BASE + LEAF + 0x30, BASE + CALLER + 0x1f, BASE + ROOT + 0xf]
    );
}

#[test]
fn a_stack_copy_that_ends_truncates_and_the_frame_limit_holds() {
    let sp = 0x7ffd_0000;
    let words = [0, BASE + CALLER + 0x20, 0, 0, 0, BASE + ROOT + 0x10, 0];
    // The copy stops inside caller's frame: its return address is not there.
    let (addrs, end) = run(
        Arch::X86_64,
        x86_64_object(),
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![0, sp, BASE + LEAF + 0x30],
        &stack(&words[..4], 8),
        127,
    );
    assert_eq!(end, StackEnd::Truncated);
    assert_eq!(addrs, vec![BASE + LEAF + 0x30, BASE + CALLER + 0x1f]);
    let (addrs, end) = run(
        Arch::X86_64,
        x86_64_object(),
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![0, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        2,
    );
    assert_eq!((addrs.len(), end), (2, StackEnd::Limit));
}

#[test]
fn hostile_stacks_end_without_garbage_or_loops() {
    // A return address pointing back into the same frame's function, a frame pointer
    // that points at itself: the walk stops, within the limit.
    let sp = 0x7ffd_0000;
    let words = [0, BASE + LEAF + 0x31, 0, 0];
    let (addrs, _) = run(
        Arch::X86_64,
        x86_64_object(),
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![sp, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert!(addrs.len() < 127, "{addrs:x?}");
    // No CFI and a frame pointer chain into itself.
    let (addrs, end) = run(
        Arch::X86_64,
        vec![],
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![sp, sp, 0x1234],
        &stack(&[sp, 0x1300, sp, 0x1400], 8),
        127,
    );
    assert!(
        addrs.len() < 127 && end != StackEnd::Complete,
        "{addrs:x?} {end:?}"
    );
}

#[test]
fn aarch64_takes_the_leaf_return_address_from_lr_and_strips_authentication_bits() {
    let (sp_reg, x29, x30) = (Register(31), Register(29), Register(30));
    let objects = mapped(object(
        8,
        vec![I::Cfa(sp_reg, 0)],
        x30,
        -8,
        vec![
            // leaf: a leaf function, lr not saved.
            (LEAF, vec![]),
            // caller: saved x29 and x30 at the bottom of a 32-byte frame.
            (
                CALLER,
                vec![I::CfaOffset(32), I::Offset(x29, -32), I::Offset(x30, -24)],
            ),
            (ROOT, vec![I::Undefined(x30)]),
        ],
    ));
    let sp = 0xffff_f000;
    // caller's frame: [x29, x30 → root (with PAC bits), 0, 0].
    let words = [0, BASE + ROOT + 0x10 + (0x2d << 48), 0, 0];
    let mask: u64 = (1 << 29) | (1 << 30) | (1 << 31) | (1 << 32);
    let (addrs, end) = run(
        Arch::Aarch64,
        objects,
        SampleRegsAbi::ABI_64,
        mask,
        // x29, lr (into caller), sp, pc
        vec![0, BASE + CALLER + 0x20, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert_eq!(end, StackEnd::Complete);
    assert_eq!(
        addrs,
        vec![BASE + LEAF + 0x30, BASE + CALLER + 0x1f, BASE + ROOT + 0xf]
    );
}

#[test]
fn i686_follows_the_cfi_and_a_realigned_main() {
    let (esp, ebp, eip) = (Register(4), Register(5), Register(8));
    // caller is a realigned `main`: CFA = [ebp - 4], ebp saved at [ebp].
    let mut cfa = Expression::new();
    cfa.op_breg(ebp, -4);
    cfa.op_deref();
    let mut saved_bp = Expression::new();
    saved_bp.op_breg(ebp, 0);
    let objects = mapped(object(
        4,
        vec![I::Cfa(esp, 4), I::Offset(eip, -4)],
        eip,
        -4,
        vec![
            (LEAF, vec![I::CfaOffset(8)]),
            (
                CALLER,
                vec![I::CfaExpression(cfa), I::Expression(ebp, saved_bp)],
            ),
            (ROOT, vec![I::Undefined(eip)]),
        ],
    ));
    let sp: u64 = 0xffa0_0000;
    // leaf: [pushed], [ra → caller]; caller (ebp = sp + 8): [saved ebp], [CFA = sp + 24]
    // then the word below CFA is the return address into root.
    let words = [
        0,
        BASE + CALLER + 0x20,
        0,       // sp + 8: saved ebp (0: the root's)
        sp + 24, // sp + 12: [ebp + 4]... the saved CFA is at ebp - 4
        0,
        BASE + ROOT + 0x10, // sp + 20 = CFA - 4: return into root
        0,
    ];
    // ebp - 4 = sp + 12 holds the CFA.
    let ebp_value = sp + 16;
    let mut words = words.to_vec();
    words[3] = sp + 24;
    words[4] = 0;
    let (addrs, end) = run(
        Arch::X86,
        objects,
        SampleRegsAbi::ABI_32,
        X86_MASK,
        vec![ebp_value, sp, BASE + LEAF + 0x30],
        &stack(&words, 4),
        127,
    );
    assert_eq!(end, StackEnd::Complete);
    assert_eq!(
        addrs,
        vec![BASE + LEAF + 0x30, BASE + CALLER + 0x1f, BASE + ROOT + 0xf]
    );
}

#[test]
fn x86_64_continues_through_a_signal_frame_to_the_interrupted_code() {
    let (rsp, ra) = (Register(7), Register(16));
    let objects = mapped(object_with_trampoline(
        8,
        vec![I::Cfa(rsp, 8), I::Offset(ra, -8)],
        ra,
        -8,
        vec![
            (LEAF, vec![I::CfaOffset(16)]),
            (CALLER, vec![I::CfaOffset(32)]),
            (ROOT, vec![I::Undefined(ra)]),
        ],
        // glibc's CFI for `__restore_rt` is expressions framehop cannot run.
        Some((TRAMPOLINE - 1, vec![])),
    ));
    assert_eq!(
        objects[0].tables.signal_trampolines,
        vec![TRAMPOLINE - 1..TRAMPOLINE - 1 + 0x100]
    );
    let sp = 0x7ffd_0000u64;
    // The handler (leaf): [pushed], [return into the trampoline]; then the ucontext:
    // 5 words, then uc_mcontext with rbp at word 10, rsp at 15, rip at 16; the
    // interrupted caller's frame above it: 3 words, [return into root].
    let mut words = vec![0u64, BASE + TRAMPOLINE];
    let mcontext = words.len() + 5;
    words.resize(mcontext + 32, 0);
    let caller_sp = sp + 8 * words.len() as u64;
    words[mcontext + 10] = 0x1234;
    words[mcontext + 15] = caller_sp;
    words[mcontext + 16] = BASE + CALLER + 0x40;
    words.extend([0, 0, 0, BASE + ROOT + 0x10, 0]);
    let (addrs, end) = run(
        Arch::X86_64,
        objects,
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![0, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert_eq!(end, StackEnd::Complete, "{addrs:x?}");
    // The trampoline as a caller (minus one), the interrupted pc as it was.
    assert_eq!(
        addrs,
        vec![
            BASE + LEAF + 0x30,
            BASE + TRAMPOLINE - 1,
            BASE + CALLER + 0x40,
            BASE + ROOT + 0xf
        ]
    );
}

#[test]
fn x86_64_sampled_in_sigreturn_goes_on_from_the_ucontext() {
    let (rsp, ra) = (Register(7), Register(16));
    let objects = mapped(object_with_trampoline(
        8,
        vec![I::Cfa(rsp, 8), I::Offset(ra, -8)],
        ra,
        -8,
        vec![
            (CALLER, vec![I::CfaOffset(32)]),
            (ROOT, vec![I::Undefined(ra)]),
        ],
        Some((TRAMPOLINE - 1, vec![])),
    ));
    let end_of_fde = objects[0].tables.signal_trampolines[0].end;
    // In the kernel during rt_sigreturn: pc after the trampoline's `syscall` (where its
    // FDE ends), sp at the ucontext (the handler's `ret` popped the return address).
    let sp = 0x7ffd_0000u64;
    let mut words = vec![7u64]; // uc_flags: not a return address
    let mcontext = 5;
    words.resize(mcontext + 32, 0);
    let caller_sp = sp + 8 * words.len() as u64;
    words[mcontext + 15] = caller_sp;
    words[mcontext + 16] = BASE + CALLER + 0x40;
    words.extend([0, 0, 0, BASE + ROOT + 0x10, 0]);
    let (addrs, end) = run(
        Arch::X86_64,
        objects,
        SampleRegsAbi::ABI_64,
        X86_MASK,
        vec![0, sp, BASE + end_of_fde],
        &stack(&words, 8),
        127,
    );
    assert_eq!(end, StackEnd::Complete, "{addrs:x?}");
    assert_eq!(
        addrs,
        vec![BASE + end_of_fde, BASE + CALLER + 0x40, BASE + ROOT + 0xf]
    );
}

#[test]
fn aarch64_continues_through_a_signal_frame_to_the_interrupted_code() {
    let (sp_reg, x29, x30) = (Register(31), Register(29), Register(30));
    let objects = mapped(object_with_trampoline(
        8,
        vec![I::Cfa(sp_reg, 0)],
        x30,
        -8,
        vec![
            (LEAF, vec![]),
            (
                CALLER,
                vec![I::CfaOffset(32), I::Offset(x29, -32), I::Offset(x30, -24)],
            ),
            (ROOT, vec![I::Undefined(x30)]),
        ],
        Some((TRAMPOLINE - 1, vec![])),
    ));
    let sp = 0xffff_0000u64;
    // At the trampoline sp is at the rt_sigframe: siginfo (16 words), 22 words of
    // ucontext, then uc_mcontext: fault_address, x0..x30, sp, pc.
    let regs = 16 + 22 + 1;
    let mut words = vec![0u64; regs + 34];
    let caller_sp = sp + 8 * words.len() as u64;
    words[regs + 29] = 0;
    words[regs + 30] = BASE + ROOT + 0x10; // lr: caller saves it, unused here
    words[regs + 31] = caller_sp;
    words[regs + 32] = BASE + CALLER + 0x40;
    // The interrupted caller's frame: [x29, x30 → root], 2 more words.
    words.extend([0, BASE + ROOT + 0x10, 0, 0]);
    let mask: u64 = (1 << 29) | (1 << 30) | (1 << 31) | (1 << 32);
    let (addrs, end) = run(
        Arch::Aarch64,
        objects,
        SampleRegsAbi::ABI_64,
        mask,
        // The handler is a leaf: lr returns into the trampoline.
        vec![0, BASE + TRAMPOLINE, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert_eq!(end, StackEnd::Complete, "{addrs:x?}");
    assert_eq!(
        addrs,
        vec![
            BASE + LEAF + 0x30,
            BASE + TRAMPOLINE - 1,
            BASE + CALLER + 0x40,
            BASE + ROOT + 0xf
        ]
    );
}

#[test]
fn i686_runs_a_signal_trampolines_cfi_and_gives_the_interrupted_pc_as_it_was() {
    let (esp, ebp, eip) = (Register(4), Register(5), Register(8));
    // As glibc's i386 `__restore_rt`: the CFA and the registers are read from the
    // signal frame by expressions over esp.
    let mut cfa = Expression::new();
    cfa.op_breg(esp, 8);
    cfa.op_deref();
    let at = |off: i64| {
        let mut e = Expression::new();
        e.op_breg(esp, off);
        e
    };
    let objects = mapped(object_with_trampoline(
        4,
        vec![I::Cfa(esp, 4), I::Offset(eip, -4)],
        eip,
        -4,
        vec![
            (LEAF, vec![I::CfaOffset(8)]),
            (CALLER, vec![I::CfaOffset(8)]),
            (ROOT, vec![I::Undefined(eip)]),
        ],
        Some((
            TRAMPOLINE - 1,
            vec![
                I::CfaExpression(cfa),
                I::Expression(ebp, at(4)),
                I::Expression(eip, at(12)),
            ],
        )),
    ));
    let sp: u64 = 0xffa0_0000;
    // leaf: [pushed], [ra → trampoline]; at the trampoline (sp + 8): [_], [ebp],
    // [esp of the interrupted frame], [its eip]; then the interrupted frame: [_],
    // [ra → root].
    let words = [
        0,
        BASE + TRAMPOLINE,
        0,
        0,
        sp + 24,
        BASE + CALLER + 0x40,
        0,
        BASE + ROOT + 0x10,
        0,
    ];
    let (addrs, end) = run(
        Arch::X86,
        objects,
        SampleRegsAbi::ABI_32,
        X86_MASK,
        vec![0, sp, BASE + LEAF + 0x30],
        &stack(&words, 4),
        127,
    );
    assert_eq!(end, StackEnd::Complete, "{addrs:x?}");
    assert_eq!(
        addrs,
        vec![
            BASE + LEAF + 0x30,
            BASE + TRAMPOLINE - 1,
            BASE + CALLER + 0x40,
            BASE + ROOT + 0xf
        ]
    );
}

#[test]
fn x86_64_follows_a_cfa_kept_in_rbx_by_tracking_every_register() {
    // glibc's lazy-binding trampoline keeps its CFA in rbx (after realigning rsp):
    // framehop tracks rip, rsp and rbp only and loses the stack there, so the walk is
    // redone tracking every register — rbx as the leaf spilled it.
    let (rsp, rbx, ra) = (Register(7), Register(3), Register(16));
    let objects = mapped(object(
        8,
        vec![I::Cfa(rsp, 8), I::Offset(ra, -8)],
        ra,
        -8,
        vec![
            // leaf: pushed rbx (CFA = rsp + 16, the caller's rbx at CFA - 16).
            (LEAF, vec![I::CfaOffset(16), I::Offset(rbx, -16)]),
            // caller: CFA = rbx + 24.
            (CALLER, vec![I::Cfa(rbx, 24)]),
            (ROOT, vec![I::Undefined(ra)]),
        ],
    ));
    let sp = 0x7ffd_0000;
    let caller_rbx = sp + 16;
    let words = [
        caller_rbx,
        BASE + CALLER + 0x20,
        0,
        0,
        BASE + ROOT + 0x10,
        0,
    ];
    // perf's numbering: bx (1), bp (6), sp (7), ip (8); the leaf has clobbered rbx.
    let mask = (1 << 1) | X86_MASK;
    let (addrs, end) = run(
        Arch::X86_64,
        objects,
        SampleRegsAbi::ABI_64,
        mask,
        vec![0xdead, 0, sp, BASE + LEAF + 0x30],
        &stack(&words, 8),
        127,
    );
    assert_eq!(
        addrs,
        vec![BASE + LEAF + 0x30, BASE + CALLER + 0x1f, BASE + ROOT + 0xf]
    );
    assert_eq!(end, StackEnd::Complete);
}
