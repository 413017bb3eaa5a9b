//! A simpleperf recording (crafted, see `common::simpleperf`) is symbolized from the
//! symbols it carries (FILE or FILE2), with no binaries, its addresses mapped as
//! simpleperf maps them; a run of SPLIT records without its SPLIT_END leaves the report
//! intact and says so.

use crate::common;
use crate::common::simpleperf::{
    craft, file_offset, kernel_symbols, symbol_name, user_maps, vaddr_of_offset, Craft, Symbols,
    KERNEL_IP,
};
use perfdata::{PerfData, Recording};
use perfdata_analysis::report::{self, ReportOptions, SortKey};
use perfdata_analysis::{collapse, info, Analyzer, AnalyzerOptions};
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
        assert!(notes.is_empty(), "{notes:?}");
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
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(cut_rows, rows);
    assert_eq!(cut_notes.len(), 1, "{cut_notes:?}");
    assert!(
        cut_notes[0].contains("expected a SPLIT_END after the run of SPLIT records")
            && cut_notes[0].contains("the record these SPLIT records held is left out"),
        "{}",
        cut_notes[0]
    );
}
