//! The `viewers` target: a recording the reader opens, replayed by the analyses into the
//! profile viewers' formats (pprof, speedscope, the Firefox Profiler). Each says why it
//! cannot, or writes; never a panic, a hang or a huge allocation.

use crate::scratch;
use perfdata::{PerfData, Recording};
use perfdata_analysis::export::pprof::{self, PprofOptions};
use perfdata_analysis::export::sampled::GatherOptions;
use perfdata_analysis::export::{firefox, speedscope};
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Inputs larger than this are cut.
const MAX_INPUT: usize = 1 << 20;

/// Where the input is written: the analyses open recordings by path.
fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| scratch::input_path("viewers"))
}

pub fn viewers(bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    if PerfData::open(bytes).is_err() {
        return;
    }
    let path = input_path();
    std::fs::write(path, bytes).expect("writing the input");
    let Ok(rec) = Recording::open(path) else {
        return;
    };
    // Addresses only: no file of this machine is read for an input's maps.
    let opts = AnalyzerOptions {
        no_symbols: true,
        ..AnalyzerOptions::default()
    };
    let timeline = GatherOptions {
        inline: false,
        each_sample: true,
        cpu: true,
        markers: true,
    };
    if let Ok(mut a) = Analyzer::open(&rec, &opts) {
        if let Ok(t) = speedscope::gather(&mut a, &timeline, "fuzz") {
            t.write(std::io::sink()).expect("writing to a sink");
        }
    }
    if let Ok(mut a) = Analyzer::open(&rec, &opts) {
        if let Ok(p) = firefox::gather(&mut a, &timeline, "fuzz") {
            p.write(std::io::sink()).expect("writing to a sink");
        }
    }
    if let Ok(mut a) = Analyzer::open(&rec, &opts) {
        let aggregated = GatherOptions {
            each_sample: false,
            ..timeline
        };
        let popts = PprofOptions {
            pid: None,
            cpu_label: true,
            time_label: false,
        };
        if let Ok(p) = pprof::gather(&mut a, &aggregated, &popts) {
            p.write(std::io::sink()).expect("writing to a sink");
        }
    };
}
