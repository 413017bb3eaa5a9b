//! The registers a sample's user-space unwinding starts from: perf's register numbers
//! (`arch/*/include/uapi/asm/perf_regs.h`) picked out of PERF_SAMPLE_REGS_USER, whose
//! values come in the order of the bits set in the attr's `sample_regs_user`.

use perfdata::rt::Array;
use perfdata::types::SampleRegsAbi;

/// The architecture a recording was made on (its HEADER_ARCH), which decides what perf's
/// register numbers mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// 64-bit x86 (`x86_64`, `amd64`).
    X86_64,
    /// 64-bit ARM (`aarch64`, `arm64`).
    Aarch64,
    /// 32-bit x86 (i386 to i686).
    X86,
}

impl Arch {
    /// From `uname -m` as HEADER_ARCH records it.
    pub fn from_uname(machine: &str) -> Option<Arch> {
        match machine {
            "x86_64" | "amd64" => Some(Arch::X86_64),
            "aarch64" | "arm64" => Some(Arch::Aarch64),
            "i386" | "i486" | "i586" | "i686" | "x86" => Some(Arch::X86),
            _ => None,
        }
    }

    /// The machine this runs on.
    pub fn host() -> Option<Arch> {
        Arch::from_uname(std::env::consts::ARCH)
    }
}

/// x86 (both widths): perf_event_x86_regs.
const X86_BP: u32 = 6;
const X86_SP: u32 = 7;
const X86_IP: u32 = 8;
/// arm64: perf_event_arm_regs.
const ARM64_X29: u32 = 29;
const ARM64_LR: u32 = 30;
const ARM64_SP: u32 = 31;
const ARM64_PC: u32 = 32;

/// Where unwinding starts: the program counter, the stack pointer, the frame pointer
/// (rbp / ebp / x29) and, on aarch64, the link register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StartRegs {
    pub pc: u64,
    pub sp: u64,
    pub fp: u64,
    pub lr: u64,
    /// The task was 32-bit (ABI_32): 32-bit x86 code, whatever the kernel.
    pub abi32: bool,
}

/// The value of perf register `reg` in a sample's dump, when `mask` selected it.
pub(crate) fn reg(mask: u64, values: &Array<'_, u64>, reg: u32) -> Option<u64> {
    if mask & (1u64 << reg) == 0 {
        return None;
    }
    let index = (mask & ((1u64 << reg) - 1)).count_ones() as usize;
    values.get(index)
}

/// The registers unwinding needs, from a sample's user register dump (`abi`, `values`)
/// taken with `mask` (the attr's `sample_regs_user`). `None` when the task had no user
/// registers (ABI_NONE: a kernel thread) or a needed register was not sampled.
pub(crate) fn start_regs(
    arch: Arch,
    abi: SampleRegsAbi,
    mask: u64,
    values: &Array<'_, u64>,
) -> Option<StartRegs> {
    let abi32 = match abi {
        SampleRegsAbi::ABI_64 => false,
        SampleRegsAbi::ABI_32 => true,
        _ => return None,
    };
    let get = |r| reg(mask, values, r);
    match arch {
        Arch::X86_64 | Arch::X86 => {
            // A 32-bit task's registers are 32-bit values in 64-bit slots.
            let narrow = |v: u64| if abi32 { v & 0xffff_ffff } else { v };
            Some(StartRegs {
                pc: narrow(get(X86_IP)?),
                sp: narrow(get(X86_SP)?),
                fp: narrow(get(X86_BP).unwrap_or(0)),
                lr: 0,
                abi32: abi32 || arch == Arch::X86,
            })
        }
        Arch::Aarch64 => Some(StartRegs {
            pc: get(ARM64_PC)?,
            sp: get(ARM64_SP)?,
            fp: get(ARM64_X29).unwrap_or(0),
            lr: get(ARM64_LR).unwrap_or(0),
            abi32,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_found_by_their_bit_in_the_mask() {
        // x86_64 `--call-graph dwarf`: perf samples every register but the segment ones.
        let mask: u64 = 0xff_0fff;
        let values: Vec<u64> = (0..20).map(|i| 0x1000 + i).collect();
        let r = start_regs(
            Arch::X86_64,
            SampleRegsAbi::ABI_64,
            mask,
            &Array::from(values),
        )
        .unwrap();
        assert_eq!((r.fp, r.sp, r.pc), (0x1006, 0x1007, 0x1008));
        // Only bp, sp, ip sampled: they are the first three values.
        let mask = (1 << X86_BP) | (1 << X86_SP) | (1 << X86_IP);
        let r = start_regs(
            Arch::X86_64,
            SampleRegsAbi::ABI_64,
            mask,
            &Array::from(vec![1, 2, 3]),
        )
        .unwrap();
        assert_eq!((r.fp, r.sp, r.pc), (1, 2, 3));
        // No ip: nothing to start from.
        assert!(start_regs(
            Arch::X86_64,
            SampleRegsAbi::ABI_64,
            1 << X86_SP,
            &Array::from(vec![1])
        )
        .is_none());
        assert!(start_regs(
            Arch::X86_64,
            SampleRegsAbi::ABI_NONE,
            mask,
            &Array::default()
        )
        .is_none());
    }

    #[test]
    fn arm64_and_32_bit_tasks() {
        let mask: u64 = (1 << 33) - 1;
        let values: Vec<u64> = (0..33).collect();
        let r = start_regs(
            Arch::Aarch64,
            SampleRegsAbi::ABI_64,
            mask,
            &Array::from(values),
        )
        .unwrap();
        assert_eq!((r.fp, r.lr, r.sp, r.pc), (29, 30, 31, 32));
        let r = start_regs(
            Arch::X86_64,
            SampleRegsAbi::ABI_32,
            (1 << X86_BP) | (1 << X86_SP) | (1 << X86_IP),
            &Array::from(vec![0xdead_0000_1000, 0xdead_0000_2000, 0xdead_0000_3000]),
        )
        .unwrap();
        assert!(r.abi32);
        assert_eq!((r.fp, r.sp, r.pc), (0x1000, 0x2000, 0x3000));
    }
}
