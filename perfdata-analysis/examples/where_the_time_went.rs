//! The library overview's example (docs/library.md): a walk of your own, an analysis and
//! an export of the shipped sample.

use perfdata_analysis::analyses::report::{self, ReportOptions, SortKey};
use perfdata_analysis::export::pprof::{self, PprofOptions};
use perfdata_analysis::export::sampled::GatherOptions;
use perfdata_analysis::{AnalysisError, Analyzer, AnalyzerOptions, RunOptions};

fn main() -> Result<(), AnalysisError> {
    let recording = perfdata::Recording::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/wordfreq.data"
    ))?;
    let mut analyzer = Analyzer::open(&recording, &AnalyzerOptions::default())?;

    // A walk of your own: every record in time order, the machine as it stands then.
    // The callback's error type is yours (anything an AnalysisError converts into).
    let mut frames = vec![];
    let mut deepest = 0;
    analyzer.run(RunOptions::default(), |machine, item| {
        if let Some(s) = &item.sample {
            machine.frames(s, &mut frames)?; // leaf first, symbolized
            deepest = deepest.max(frames.len());
        }
        Ok::<_, AnalysisError>(true) // go on
    })?;
    println!("deepest stack: {deepest} frames");

    // An analysis: perf report's table.
    let opts = ReportOptions::table(SortKey::parse("comm,dso,sym")?);
    let reports = report::report(&mut analyzer, &opts)?;
    print!("{}", report::render(&reports, &opts));

    // An export: gather from the analyzer, then write to any `Write`.
    let profile = pprof::gather(
        &mut analyzer,
        &GatherOptions::default(),
        &PprofOptions::default(),
    )?;
    profile.write(std::io::sink())?;
    for note in analyzer.notes() {
        eprintln!("note: {note}"); // a jitdump not used, symbols that could not be read…
    }
    Ok(())
}
