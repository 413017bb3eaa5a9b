//! A simpleperf recording (crafted, see `common::simpleperf`) is symbolized from the
//! symbols it carries (FILE or FILE2), with no binaries, its addresses mapped as
//! simpleperf maps them; a run of SPLIT records without its SPLIT_END leaves the report
//! intact and says so. A sample's CALLCHAIN record gives its user frames, UNWINDING_RESULT
//! records are counted in a note, and the KERNEL_SYMBOL record's kallsyms name kernel
//! frames the FILE feature does not.

use crate::common;
use crate::common::simpleperf::{
    craft, file_offset, kallsyms_text, kernel_symbols, symbol_name, user_maps, vaddr_of_offset,
    Craft, Symbols, KALLSYMS_LINES, KERNEL_IP,
};
use perfdata::types::{CallchainContext, RecordBody};
use perfdata::{PerfData, Recording};
use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::analyses::{collapse, info};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn write(c: Craft) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::write(&path, craft(c)).unwrap();
    (dir, path)
}

/// `(dso, sym) -> samples` of the report (`--sort dso,sym`, self).
fn report_rows(path: &PathBuf) -> (BTreeMap<(String, String), u64>, Vec<String>) {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let reports = report::report(
        &mut a,
        &ReportOptions::table(SortKey::parse("dso,sym").unwrap()),
    )
    .unwrap();
    let mut rows = BTreeMap::new();
    for r in &reports[0].rows {
        rows.insert((r.keys[0].clone(), r.keys[1].clone()), r.samples);
    }
    (rows, a.notes())
}

/// The crafted kernel symbol at `addr`.
fn kernel_name(addr: u64) -> Option<String> {
    kernel_symbols()
        .into_iter()
        .find(|(v, l, _)| (*v..v + u64::from(*l)).contains(&addr))
        .map(|(_, _, n)| n)
}

/// The samples of the base recording (ip and call chain, context markers dropped) as the
/// crafted file has them: the first one taken in the kernel.
fn crafted_samples() -> Vec<(u64, Vec<u64>, u64)> {
    let base = common::fixture("callchain.data");
    let data = PerfData::open(&base).unwrap();
    let mut samples = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        if let Some(s) = data.sample(&rec, ctx)? {
            let mut chain: Vec<u64> = s.callchain()?.unwrap().ips.iter().collect();
            let mut ip = s.ip().unwrap();
            if samples.is_empty() {
                ip = KERNEL_IP;
                chain.splice(0..0, [KERNEL_IP, KERNEL_IP + 0x48]);
            }
            chain.retain(|&a| a < perfdata::types::CallchainContext::MAX.0);
            samples.push((ip, chain, s.period().unwrap()));
        }
        Ok(true)
    })
    .unwrap();
    samples
}

/// What the rows must be: each sample of the base recording named by its ip's synthetic
/// symbol, from the maps and the crafted `min_vaddr` and file offset (not through the
/// library's lookup).
fn expected_rows() -> BTreeMap<(String, String), u64> {
    let base = common::fixture("callchain.data");
    let maps = user_maps(&PerfData::open(&base).unwrap());
    let mut rows = BTreeMap::new();
    for (ip, _, _) in crafted_samples() {
        let row = match file_offset(&maps, ip) {
            Some((path, off)) => (
                path.rsplit('/').next().unwrap().to_string(),
                format!("[.] {}", symbol_name(path, vaddr_of_offset(off))),
            ),
            None => (
                "[kernel.kallsyms]".to_string(),
                format!("[k] {}", kernel_name(ip).expect("a crafted kernel ip")),
            ),
        };
        *rows.entry(row).or_insert(0) += 1;
    }
    assert_eq!(rows.values().sum::<u64>(), 13);
    rows
}

/// What collapse must give: each sample's call chain (root first, the context marker
/// dropped), every address in a map named by its synthetic symbol and any other
/// `[unknown]`, weighted by the sample's period.
fn expected_stacks() -> BTreeMap<String, u64> {
    let base = common::fixture("callchain.data");
    let maps = user_maps(&PerfData::open(&base).unwrap());
    let mut stacks = BTreeMap::new();
    for (_, chain, period) in crafted_samples() {
        let names: Vec<String> = chain
            .iter()
            .map(|&ip| match file_offset(&maps, ip) {
                Some((path, off)) => symbol_name(path, vaddr_of_offset(off)),
                None => kernel_name(ip).unwrap_or_else(|| "[unknown]".to_string()),
            })
            .collect();
        let stack: Vec<&str> = names.iter().rev().map(String::as_str).collect();
        *stacks.entry(format!("sh;{}", stack.join(";"))).or_insert(0) += period;
    }
    stacks
}

#[test]
fn a_simpleperf_file_is_symbolized_from_its_file_or_file2_feature() {
    let expected = expected_rows();
    for symbols in [Symbols::File, Symbols::File2] {
        let (_dir, path) = write(Craft {
            symbols,
            ..Craft::default()
        });
        let (rows, notes) = report_rows(&path);
        assert_eq!(rows, expected, "{symbols:?}");
        assert_eq!(notes, expected_notes(&path), "{symbols:?}");
        // Every frame of every stack, callers included, is named by the recorded symbols,
        // but those whose address is in no map (frame-pointer chains of `sh` end in
        // garbage: perf prints them `[unknown]` too).
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
        let stacks = collapse::collapse(&mut a, &collapse::CollapseOptions::default()).unwrap();
        assert_eq!(stacks, expected_stacks(), "{symbols:?}");
        // `info` says where the symbols came from.
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
        let text = info::render(&info::info(&mut a, 10).unwrap());
        assert!(
            text.contains("the recording (simpleperf's FILE feature)"),
            "{text}"
        );
        assert!(
            text.contains("recorded:    simpleperf 1.build.crafted (x86_64, kernel ")
                && text.contains(
                    "device:      system_wide_collection=false, trace_offcpu=false, clockid=perf"
                ),
            "{text}"
        );
    }
    // Without them, other sources name the same samples differently.
    let (_dir, path) = write(Craft {
        symbols: Symbols::None,
        ..Craft::default()
    });
    let (rows, _) = report_rows(&path);
    assert!(rows.keys().all(|(_, s)| !s.contains("sp_")), "{rows:?}");
}

#[test]
fn a_split_run_without_its_end_leaves_the_report_intact_with_a_note() {
    let (_dir, whole) = write(Craft::default());
    let (_dir2, cut) = write(Craft {
        split_end: false,
        ..Craft::default()
    });
    let (rows, notes) = report_rows(&whole);
    let (cut_rows, cut_notes) = report_rows(&cut);
    assert_eq!(notes, expected_notes(&whole));
    assert_eq!(cut_rows, rows);
    let split: Vec<&String> = cut_notes.iter().filter(|n| !notes.contains(n)).collect();
    assert_eq!(split.len(), 1, "{cut_notes:?}");
    assert!(
        split[0].contains("expected a SPLIT_END after the run of SPLIT records")
            && split[0].contains("the record these SPLIT records held is left out"),
        "{}",
        split[0]
    );
}

/// libunwindstack's error names (AOSP libunwindstack `Error.h`, `enum ErrorCode`), for
/// the notes expected here.
const UNWINDSTACK_ERRORS: [&str; 11] = [
    "NONE",
    "MEMORY_INVALID",
    "UNWIND_INFO",
    "UNSUPPORTED",
    "INVALID_MAP",
    "MAX_FRAMES_EXCEEDED",
    "REPEATED_FRAME",
    "INVALID_ELF",
    "THREAD_DOES_NOT_EXIST",
    "THREAD_TIMEOUT",
    "SYSTEM_CALL",
];

/// A simpleperf record or a sample of the crafted file, in file order.
enum Item {
    /// CALLCHAIN: (pid, tid, time), ips.
    Callchain((i32, i32, u64), Vec<u64>),
    /// UNWINDING_RESULT: error code, and whether it has the newer layout.
    Unwinding(u64, bool),
    /// SAMPLE: (pid, tid, time), ip, call chain (markers kept), period.
    Sample((i32, i32, u64), Vec<u64>, u64),
}

/// The crafted file's CALLCHAIN, UNWINDING_RESULT and SAMPLE records, decoded by the
/// format crate (not by the analyses).
fn items(path: &PathBuf) -> Vec<Item> {
    let bytes = std::fs::read(path).unwrap();
    let data = PerfData::open(&bytes).unwrap();
    let mut items = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        if let Some(s) = data.sample(&rec, ctx)? {
            let key = (
                s.pid().unwrap() as i32,
                s.tid().unwrap() as i32,
                s.time().unwrap(),
            );
            let chain = s.callchain()?.unwrap().ips.iter().collect();
            items.push(Item::Sample(key, chain, s.period().unwrap()));
            return Ok(true);
        }
        match data.decode(&rec, ctx)? {
            RecordBody::SimpleperfCallchain(c) => items.push(Item::Callchain(
                (c.pid as i32, c.tid as i32, c.time),
                c.ips.iter().collect(),
            )),
            RecordBody::SimpleperfUnwindingResult(u) => {
                items.push(Item::Unwinding(u.error_code, u.details.is_some()))
            }
            _ => {}
        }
        Ok(true)
    })
    .unwrap();
    items
}

/// The notes the crafted file must give: its UNWINDING_RESULT records counted by error
/// code, and its CALLCHAIN records that precede no sample of their pid, tid and time.
fn expected_notes(path: &PathBuf) -> Vec<String> {
    let items = items(path);
    let mut codes: BTreeMap<(bool, u64), u64> = BTreeMap::new();
    let mut samples = std::collections::HashSet::new();
    for i in &items {
        match i {
            Item::Unwinding(code, newer) => *codes.entry((!newer, *code)).or_insert(0) += 1,
            Item::Sample(key, _, _) => {
                samples.insert(*key);
            }
            Item::Callchain(..) => {}
        }
    }
    let mut notes = vec![];
    let failed: u64 = codes.values().sum();
    if failed > 0 {
        let counts: Vec<String> = codes
            .iter()
            .map(|((old, code), n)| match old {
                false => format!("{n} {}", UNWINDSTACK_ERRORS[*code as usize]),
                true => format!("{n} with stop reason {code} (older simpleperf)"),
            })
            .collect();
        notes.push(format!(
            "simpleperf could not unwind {failed} sample{} when recording (UNWINDING_RESULT records): {}",
            if failed == 1 { "" } else { "s" },
            counts.join(", ")
        ));
    }
    // Keys, not records: a later chain of the same sample replaces an earlier one.
    let orphans: std::collections::HashSet<_> = items
        .iter()
        .filter_map(|i| match i {
            Item::Callchain(key, _) if !samples.contains(key) => Some(*key),
            _ => None,
        })
        .collect();
    match orphans.len() {
        0 => {}
        1 => notes.push("1 simpleperf CALLCHAIN record matched no sample (same pid, tid and time): its call chain is not used".to_string()),
        n => notes.push(format!("{n} simpleperf CALLCHAIN records matched no sample (same pid, tid and time): their call chains are not used")),
    }
    notes
}

/// A folded stack (`sh;` root first) of `chain` (leaf first, no markers), every address
/// named from the crafted symbols: the FILE feature's in user maps, `kernel` for the
/// others.
fn folded(
    maps: &[(u64, u64, u64, String)],
    chain: &[u64],
    kernel: &dyn Fn(u64) -> Option<String>,
) -> String {
    let names: Vec<String> = chain
        .iter()
        .map(|&ip| match file_offset(maps, ip) {
            Some((path, off)) => symbol_name(path, vaddr_of_offset(off)),
            None => kernel(ip).unwrap_or_else(|| "[unknown]".to_string()),
        })
        .collect();
    let stack: Vec<&str> = names.iter().rev().map(String::as_str).collect();
    format!("sh;{}", stack.join(";"))
}

/// What collapse must give for the crafted file at `path`, from its records in file order
/// (as simpleperf's `debug-unwind` wrote them): a sample right after CALLCHAIN records of
/// its pid, tid and time has the kernel part of its own chain (before its
/// `PERF_CONTEXT_USER`) and then the last of those chains' ips; the others their own chain.
fn expected_stacks_from_records(path: &PathBuf) -> (BTreeMap<String, u64>, usize) {
    let base = common::fixture("callchain.data");
    let maps = user_maps(&PerfData::open(&base).unwrap());
    let mut stacks = BTreeMap::new();
    let (mut last, mut replaced) = (None, 0);
    for i in items(path) {
        match i {
            Item::Callchain(key, ips) => last = Some((key, ips)),
            Item::Unwinding(..) => {}
            Item::Sample(key, chain, period) => {
                let frames: Vec<u64> = match last.take() {
                    Some((k, ips)) if k == key => {
                        replaced += 1;
                        let before_user = chain
                            .iter()
                            .position(|&ip| ip == CallchainContext::USER.0)
                            .unwrap_or(chain.len());
                        let mut f: Vec<u64> = chain[..before_user]
                            .iter()
                            .copied()
                            .filter(|&ip| ip < CallchainContext::MAX.0)
                            .collect();
                        f.extend(ips);
                        f
                    }
                    _ => chain
                        .into_iter()
                        .filter(|&ip| ip < CallchainContext::MAX.0)
                        .collect(),
                };
                *stacks
                    .entry(folded(&maps, &frames, &kernel_name))
                    .or_insert(0) += period;
            }
        }
    }
    (stacks, replaced)
}

fn collapsed(path: &PathBuf) -> (BTreeMap<String, u64>, Vec<String>) {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let stacks = collapse::collapse(&mut a, &collapse::CollapseOptions::default()).unwrap();
    (stacks, a.notes())
}

#[test]
fn a_sample_takes_the_user_frames_of_its_callchain_records() {
    // The kernel sample (0) and two user ones; failures before others.
    let craft_with = |symbols| Craft {
        symbols,
        callchains: &[0, 4, 9],
        unwinding_failures: &[(1, 1), (2, 1), (4, 5), (7, 4)],
        ..Craft::default()
    };
    for symbols in [Symbols::File, Symbols::File2] {
        let (_dir, path) = write(craft_with(symbols));
        let (expected, replaced) = expected_stacks_from_records(&path);
        assert_eq!(
            replaced, 3,
            "every crafted CALLCHAIN run precedes its sample"
        );
        // The chains differ from the samples' own: a stack left as it was is told apart.
        assert_ne!(expected, expected_stacks());
        let (stacks, notes) = collapsed(&path);
        assert_eq!(stacks, expected, "{symbols:?}");
        // The default crafted records add a CALLCHAIN of no sample (pid 42) and two
        // UNWINDING_RESULTs (old and new layout).
        let want = expected_notes(&path);
        assert_eq!(notes, want, "{symbols:?}");
        assert!(
            want[0].contains("could not unwind 6 samples")
                && want[0].contains("2 MEMORY_INVALID, 2 INVALID_MAP, 1 MAX_FRAMES_EXCEEDED")
                && want[1].starts_with("1 simpleperf CALLCHAIN record matched no sample"),
            "{want:?}"
        );
    }
}

/// The crafted kallsyms' symbol at `addr`: the last line at or below it (kallsyms gives
/// starts only), read from the text the KERNEL_SYMBOL record carries.
fn kallsyms_name(addr: u64) -> Option<String> {
    kallsyms_text(KALLSYMS_LINES)
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let a = u64::from_str_radix(f.next()?, 16).ok()?;
            Some((a, f.nth(1)?.to_string()))
        })
        .filter(|(a, _)| *a <= addr)
        .max_by_key(|(a, _)| *a)
        .map(|(_, n)| n)
}

#[test]
fn the_kernel_symbol_record_names_kernel_frames_the_file_feature_does_not() {
    let base = common::fixture("callchain.data");
    let maps = user_maps(&PerfData::open(&base).unwrap());
    let mut expected = BTreeMap::new();
    for (_, chain, period) in crafted_samples() {
        *expected
            .entry(folded(&maps, &chain, &kallsyms_name))
            .or_insert(0) += period;
    }
    let kernel_frames = |stacks: &BTreeMap<String, u64>| -> Vec<String> {
        stacks
            .keys()
            .filter(|k| k.contains("kernel_function") || k.ends_with("[unknown]"))
            .cloned()
            .collect()
    };
    assert!(
        !kernel_frames(&expected).is_empty(),
        "the kernel sample is named by the kallsyms"
    );
    for symbols in [Symbols::File, Symbols::File2] {
        let (_dir, path) = write(Craft {
            symbols,
            kernel_entry: false,
            ..Craft::default()
        });
        let (stacks, _) = collapsed(&path);
        assert_eq!(stacks, expected, "{symbols:?}");
        let rec = Recording::open(&path).unwrap();
        let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
        let text = info::render(&info::info(&mut a, 10).unwrap());
        assert!(
            text.contains("kernel symbols: the recording (simpleperf's KERNEL_SYMBOL record)"),
            "{text}"
        );
    }
    // The caller's --kallsyms goes first: a file naming that address otherwise.
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("kallsyms");
    std::fs::write(
        &mine,
        format!("{:x} T given_kernel_function\n", KERNEL_IP & !0xfff),
    )
    .unwrap();
    let (_dir, path) = write(Craft {
        kernel_entry: false,
        ..Craft::default()
    });
    let rec = Recording::open(&path).unwrap();
    let opts = AnalyzerOptions {
        kallsyms: Some(mine),
        ..AnalyzerOptions::default()
    };
    let mut a = Analyzer::open(&rec, &opts).unwrap();
    let stacks = collapse::collapse(&mut a, &collapse::CollapseOptions::default()).unwrap();
    assert!(
        stacks.keys().any(|k| k.contains("given_kernel_function"))
            && !stacks.keys().any(|k| k.contains("crafted_kernel_function")),
        "{stacks:?}"
    );
}
