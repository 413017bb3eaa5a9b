//! `perfdata export FILE... --to parquet -o DIR`: many recordings into Parquet tables.

use perfdata::analysis::parquet::{export_recording, ExportOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub fn export(
    files: &[PathBuf],
    out: &Path,
    opts: &ExportOptions,
    jobs: usize,
) -> Result<(), String> {
    if files.is_empty() {
        return Err("no input files".into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let total: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            indicatif::ProgressDrawTarget::stderr()
        } else {
            indicatif::ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "export [{bar:40}] {bytes}/{total_bytes} {msg} ({eta} left)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let next = AtomicUsize::new(0);
    let errors: Mutex<Vec<String>> = Mutex::new(vec![]);
    let totals = Mutex::new((0u64, 0u64, 0u64));
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, files.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                bar.set_message(path.display().to_string());
                match export_recording(path, i as u32, out, opts) {
                    Ok(s) => {
                        let mut t = totals.lock().expect("not poisoned");
                        t.0 += s.samples;
                        t.1 += s.input_bytes;
                        t.2 += s.output_bytes;
                        bar.inc(s.input_bytes);
                    }
                    Err(e) => errors
                        .lock()
                        .expect("not poisoned")
                        .push(format!("{}: {e}", path.display())),
                }
            });
        }
    });
    bar.finish_and_clear();
    let (samples, input, output) = *totals.lock().expect("not poisoned");
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "exported {} recording(s), {samples} samples: {:.1} MB in, {:.1} MB of Parquet ({:.0}% of the input) in {}, {:.1} s ({:.0} MB/s)",
        files.len() - errors.lock().expect("not poisoned").len(),
        input as f64 / 1e6,
        output as f64 / 1e6,
        if input == 0 { 0.0 } else { output as f64 * 100.0 / input as f64 },
        out.display(),
        secs,
        input as f64 / 1e6 / secs.max(1e-9),
    );
    let errors = errors.into_inner().expect("not poisoned");
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\nperfdata: "))
    }
}
