//! What perf takes from the machine it runs on when a recording does not say.

/// The facts of the machine perf runs on that it prints for a recording that does not
/// have them (it "assumes local operation"): opening a recording it asks for the CPU id,
/// and on an AMD x86 machine for the PMU mappings, and takes this machine's when the
/// recording gave none — a recording whose CPUID or PMU_MAPPINGS feature perf could not
/// process (one after a damaged feature), or an empty PMU_MAPPINGS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    /// The CPU id as perf writes it (`get_cpuid`; x86: `vendor,family,model,stepping`).
    pub cpuid: Option<String>,
    /// `uname -m`.
    pub arch: Option<String>,
    /// The PMUs, `(type, name)`, in the order perf finds them (sysfs directory order).
    pub pmu_mappings: Vec<(u32, String)>,
}

impl Machine {
    /// This machine's: the CPU id from the `cpuid` instruction (x86 only: perf reads
    /// other sources elsewhere, which this does not), the architecture from `uname`, the
    /// PMUs from `/sys/bus/event_source/devices`.
    pub fn this() -> Machine {
        Machine {
            cpuid: cpuid(),
            arch: arch(),
            pmu_mappings: pmu_mappings(),
        }
    }
}

fn cpuid() -> Option<String> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        #[cfg(target_arch = "x86")]
        use std::arch::x86::__cpuid;
        #[cfg(target_arch = "x86_64")]
        use std::arch::x86_64::__cpuid;
        // SAFETY: `cpuid` exists on every x86-64 CPU and on every x86 CPU Rust targets;
        // leaf 0 says whether leaf 1 exists. (The intrinsic is safe in newer Rust.)
        #[allow(unused_unsafe)]
        let leaf0 = unsafe { __cpuid(0) };
        let mut vendor = Vec::with_capacity(12);
        for r in [leaf0.ebx, leaf0.edx, leaf0.ecx] {
            vendor.extend_from_slice(&r.to_le_bytes());
        }
        // perf copies the vendor with strncpy: it ends at a NUL.
        if let Some(end) = vendor.iter().position(|&b| b == 0) {
            vendor.truncate(end);
        }
        let vendor = String::from_utf8_lossy(&vendor).into_owned();
        if leaf0.eax < 1 {
            // perf prints its -1 defaults as unsigned.
            return Some(format!("{vendor},{m},{m},{m}", m = u32::MAX));
        }
        // SAFETY: as above; leaf 1 exists (leaf 0 said so).
        #[allow(unused_unsafe)]
        let a = unsafe { __cpuid(1) }.eax;
        let mut family = (a >> 8) & 0xf;
        let mut model = (a >> 4) & 0xf;
        let step = a & 0xf;
        if family == 0xf {
            family += (a >> 20) & 0xff;
        }
        if family >= 0x6 {
            model += ((a >> 16) & 0xf) << 4;
        }
        Some(format!("{vendor},{family},{model},{step}"))
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        None
    }
}

#[cfg(unix)]
fn arch() -> Option<String> {
    // SAFETY: `utsname` is plain data that uname fills; the pointer is to a live local.
    let uts = unsafe {
        let mut uts: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut uts) != 0 {
            return None;
        }
        uts
    };
    let machine: Vec<u8> = uts
        .machine
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Some(String::from_utf8_lossy(&machine).into_owned())
}

#[cfg(not(unix))]
fn arch() -> Option<String> {
    None
}

/// perf's `perf_pmu__scan` over sysfs: each PMU directory whose `type` reads as a number.
fn pmu_mappings() -> Vec<(u32, String)> {
    let Ok(dir) = std::fs::read_dir("/sys/bus/event_source/devices") else {
        return vec![];
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let ty = std::fs::read_to_string(e.path().join("type")).ok()?;
        Some((ty.trim().parse().ok()?, e.file_name().into_string().ok()?))
    })
    .collect()
}
