//! glibc's heap tuning for the commands that read whole DWARF sections on a second thread
//! while their walk runs on this one.

/// Grows glibc's heaps in 32 MiB steps (`M_TOP_PAD`). The DWARF read ahead (libc's
/// `.debug_info` inflates to 5.8 MB, and gimli parses every unit's abbreviations) grew its
/// thread's heap a page or two at a time, each step an `mprotect` that interrupts the
/// walking core to flush its TLB: some 4000 of them in `annotate` on the bench's dwarf
/// recording, 400 with the pad. Measured (alternating pairs): `annotate` a tenth faster,
/// its peak anonymous memory 47.5 → 48.9 MiB; `export --to firefox` 3% faster alone, and
/// its DWARF read ahead, slower without the pad, then 3% more. Not for every command: the
/// pad is also what a heap keeps when it is trimmed, and `collapse --inline` then peaks at
/// 66 MiB, over its 64 MiB bound.
pub fn grow_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning (it takes the arenas' locks);
    // no allocation is in flight across the call.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
    }
}
