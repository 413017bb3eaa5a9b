//! Profiles made by the real gperftools (`libprofiler`) on this machine: read, mapped, and
//! written back byte for byte. Skipped, saying why, when gcc or libprofiler is missing
//! (a failure under `PERFDATA_TOOLS_REQUIRED`).

use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata::gperftools::{Profile, SlotFormat};
use perfdata_test_support::{require_tools, tools};

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long leaf_a(unsigned long n) {
  unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i * i ^ (s >> 3); return s; }
__attribute__((noinline)) static unsigned long leaf_b(unsigned long n) {
  unsigned long s = 1; for (unsigned long i = 0; i < n; i++) s = s * 31 + i; return s; }
__attribute__((noinline)) static void mid_a(int k) { sink += leaf_a(20000 + k); }
__attribute__((noinline)) static void mid_b(int k) { sink += leaf_b(30000 + k); }
int main(void) {
  for (long i = 0; i < 12000; i++) { if (i % 3) mid_a(i & 7); else mid_b(i & 7); }
  printf("%lu\n", sink);
  return 0;
}
"#;

/// Builds and runs the program under the profiler; `None` (said why) where gcc or
/// libprofiler is missing.
fn real_profile(dir: &Path) -> Option<(PathBuf, Vec<u8>)> {
    if !require_tools(&[tools::LIBPROFILER]) {
        return None;
    }
    let src = dir.join("prog.c");
    let bin = dir.join("prog");
    std::fs::write(&src, PROGRAM).unwrap();
    let built = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(["-Wl,--no-as-needed", "-lprofiler"])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let prof = dir.join("prog.prof");
    let run = Command::new(&bin)
        .env("CPUPROFILE", &prof)
        .env("CPUPROFILE_FREQUENCY", "4000")
        .output()
        .expect("running the profiled program");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let bytes = std::fs::read(&prof).expect("the profiler wrote a profile");
    Some((bin, bytes))
}

#[test]
fn a_real_profile_reads_maps_and_rewrites_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let Some((bin, bytes)) = real_profile(dir.path()) else {
        return;
    };
    let p = Profile::parse(&bytes).unwrap_or_else(|e| panic!("reading the real profile: {e}"));
    assert_eq!(p.layout.word_size as usize, std::mem::size_of::<usize>());
    assert_eq!(p.layout.endian, perfdata::rt::Endianness::NATIVE);
    assert_eq!(p.period_us(), 250, "1e6 / 4000 Hz");
    assert!(
        p.total_samples() > 0,
        "the program ran long enough to be sampled"
    );
    assert!(p.records.iter().all(|r| r.count >= 1 && !r.pcs.is_empty()));
    // The program's own text mapping is there, and its PCs fall in the mappings.
    let maps = p.mappings();
    let bin = std::fs::canonicalize(&bin).unwrap();
    let own = maps
        .iter()
        .find(|m| Path::new(&m.path) == bin && m.perms.contains('x'))
        .unwrap_or_else(|| panic!("no executable mapping of {} in {maps:#?}", bin.display()));
    let leaf_in_binary = p
        .records
        .iter()
        .filter(|r| (own.start..own.end).contains(&r.pcs[0]))
        .map(|r| r.count)
        .sum::<u64>();
    assert!(leaf_in_binary > 0, "samples land in the program's own code");
    // Typed rewrite: the same bytes.
    assert_eq!(p.encode(p.layout).unwrap(), bytes);
    // Through the other byte order and back: the same bytes again. A 64-bit process's
    // addresses do not fit 32-bit words: refused, naming the record and PC.
    for to in SlotFormat::ALL {
        match p.encode(to) {
            Ok(other) => {
                let back = Profile::parse(&other).unwrap();
                assert_eq!(back.layout, to);
                assert_eq!(back.total_samples(), p.total_samples());
                assert_eq!(back.encode(p.layout).unwrap(), bytes, "{}", to.describe());
            }
            Err(e) => {
                assert_eq!(to.word_size, 4, "{}: {e}", to.describe());
                assert!(
                    e.record().is_some() && e.path_string().starts_with("pcs["),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn a_real_profile_cut_anywhere_keeps_the_records_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, bytes)) = real_profile(dir.path()) else {
        return;
    };
    let full = Profile::parse(&bytes).unwrap();
    let ws = usize::from(full.layout.word_size);
    let binary_end = bytes.len() - full.map_text.len();
    // Every slot boundary and a byte inside every slot of the binary part.
    for cut in (5 * ws..binary_end).step_by(ws / 2) {
        let (p, err) = Profile::parse_partial(&bytes[..cut])
            .unwrap_or_else(|e| panic!("cut at {cut}: the header was complete: {e}"));
        let e = err.unwrap_or_else(|| panic!("cut at {cut} inside the binary part: no error"));
        let n = p.records.len();
        assert_eq!(p.records[..], full.records[..n], "cut at {cut}");
        assert_eq!(
            e.record().map(|(i, _)| i),
            Some(n as u64),
            "cut at {cut}: {e}"
        );
        assert!(
            e.offset().is_some_and(|o| o <= cut as u64),
            "cut at {cut}: {e}"
        );
    }
}
