//! A progress bar on stderr for an analysis that takes more than a second, drawn from the
//! analysis's progress callback (the library draws nothing itself).

use perfdata_analysis::{Analyzer, Progress};
use std::time::{Duration, Instant};

/// Draws `what`'s progress under [`Analyzer::run`] when stderr is a terminal and the run
/// lasts over a second; the bar is cleared at the end.
pub fn show(analyzer: &mut Analyzer<'_>, what: &str) {
    let bar = indicatif::ProgressBar::hidden();
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{bar:40}] {bytes}/{total_bytes} ({eta} left)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    let started = Instant::now();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut shown = false;
    analyzer.on_progress(move |p: Progress| {
        if p.done >= p.total {
            bar.finish_and_clear();
            return;
        }
        if !shown && terminal && started.elapsed() > Duration::from_secs(1) {
            shown = true;
            bar.set_length(p.total);
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        bar.set_position(p.done);
    });
}
