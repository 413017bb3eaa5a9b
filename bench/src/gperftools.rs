//! The gperftools CPU profile workloads: a synthesized profile shaped like a real one, and
//! reading it with perfdata (what `go tool pprof -raw` is measured against).

use anyhow::Context;
use perfdata::gperftools::types::{Header, Record};
use perfdata::gperftools::{Profile, SlotFormat};
use std::path::Path;

/// Writes a 64-bit little-endian profile of about `bytes` bytes: stacks 4-40 frames deep
/// over 1600 call sites of one mapping, each stack in 1-3 records (evictions),
/// counts 1-8 — the shape libprofiler writes. Deterministic.
pub fn synth(out: &Path, bytes: u64) -> anyhow::Result<(u64, u64)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // xorshift64*: cheap, deterministic, good enough to vary stacks.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let base = 0x5555_5555_0000u64;
    // A PC is one of 4 call sites in one of 400 functions (1600 distinct PCs, as in a real
    // program's profile; random PCs would make every location new to the reader).
    let func = |f: u64, site: u64| base + 0x1000 + f * 0x100 + (site % 4) * 0x30 + 7;
    let mut records = vec![];
    let mut size = 40u64 + 24;
    while size < bytes {
        let depth = 4 + next() % 37;
        let mut pcs = Vec::with_capacity(depth as usize);
        for _ in 0..depth {
            pcs.push(func(next() % 400, next()));
        }
        for _ in 0..1 + next() % 3 {
            size += 16 + 8 * depth;
            records.push(Record {
                count: 1 + next() % 8,
                pcs: pcs.clone(),
            });
        }
    }
    let profile = Profile {
        layout: SlotFormat::B64_LE,
        header: Header {
            period_us: 250,
            ..Header::default()
        },
        records,
        map_text: format!(
            "{:x}-{:x} r-xp 00000000 00:00 0           /nonexistent/synthesized-program\n",
            base,
            base + 0x40000
        )
        .into_bytes(),
    };
    perfdata::gperftools::save(&profile, out, SlotFormat::B64_LE)?;
    Ok((profile.records.len() as u64, profile.total_samples()))
}

/// Reads a profile the way a consumer does: every record decoded, counts summed per stack
/// leaf. Prints the totals so that the run can be checked against the peer's.
pub fn read(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let p = Profile::parse(&bytes)?;
    let mut leaves = std::collections::HashMap::new();
    for r in &p.records {
        *leaves.entry(r.pcs[0]).or_insert(0u64) += r.count;
    }
    Ok(format!(
        "records={} samples={} leaves={}",
        p.records.len(),
        p.total_samples(),
        leaves.len()
    ))
}
