//! `perfdata report|collapse|flamegraph|stats|info`: the analyses, on top of
//! `perfdata::analysis`.

use perfdata::analysis::{report, Analyzer, SymbolOptions};
use perfdata::container::Recording;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where symbols come from (shared by every analysis command).
#[derive(clap::Args, Debug, Clone)]
pub struct SymbolArgs {
    /// Kernel symbols from this kallsyms file (default: the build-id cache's copy, or this
    /// machine's /proc/kallsyms when the recording comes from the running kernel).
    #[arg(long, value_name = "FILE")]
    pub kallsyms: Option<PathBuf>,
    /// Kernel symbols from this vmlinux image.
    #[arg(long, value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    /// Do not read symbol files: addresses only.
    #[arg(long)]
    pub no_symbols: bool,
}

impl SymbolArgs {
    pub fn options(&self, lines: bool) -> SymbolOptions {
        SymbolOptions {
            kallsyms: self.kallsyms.clone(),
            vmlinux: self.vmlinux.clone(),
            lines,
            no_symbols: self.no_symbols,
            build_id_dir: None,
        }
    }
}

/// Opens a recording for analysis; errors name the path.
pub fn open(path: &Path) -> Result<Recording, String> {
    crate::open_recording(path)
}

fn analyzer<'r>(rec: &'r Recording, opts: &SymbolOptions) -> Result<Analyzer<'r>, String> {
    Analyzer::open(rec, opts).map_err(|e| format!("{}: {e}", rec.path().display()))
}

pub fn report(
    path: &Path,
    sort: &str,
    callers: bool,
    json: bool,
    symbols: &SymbolArgs,
) -> Result<(), String> {
    let sort = report::SortKey::parse(sort)?;
    let rec = open(path)?;
    let mut a = analyzer(&rec, &symbols.options(false))?;
    let opts = report::ReportOptions { sort, callers };
    a.show_progress("report");
    let reports = report::report(&mut a, &opts).map_err(|e| format!("{}: {e}", path.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io = |e: std::io::Error| e.to_string();
    if json {
        serde_json::to_writer_pretty(&mut out, &reports).map_err(|e| e.to_string())?;
        writeln!(out).map_err(io)?;
    } else {
        out.write_all(report::render(&reports, &opts).as_bytes())
            .map_err(io)?;
    }
    out.flush().map_err(io)
}

pub fn collapse(
    path: &Path,
    event: Option<String>,
    pid: bool,
    tid: bool,
    inline: bool,
    symbols: &SymbolArgs,
) -> Result<(), String> {
    let folded = folded(path, event, pid, tid, inline, symbols)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    perfdata::analysis::collapse::write_folded(&mut out, &folded).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

fn folded(
    path: &Path,
    event: Option<String>,
    include_pid: bool,
    include_tid: bool,
    inline: bool,
    symbols: &SymbolArgs,
) -> Result<std::collections::BTreeMap<String, u64>, String> {
    use perfdata::analysis::collapse;
    let rec = open(path)?;
    let mut a = analyzer(&rec, &symbols.options(inline))?;
    a.show_progress("collapse");
    let opts = collapse::CollapseOptions {
        event,
        include_pid,
        include_tid,
        inline,
    };
    collapse::collapse(&mut a, &opts).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn flamegraph(
    path: &Path,
    output: &Path,
    event: Option<String>,
    title: Option<String>,
    inline: bool,
    symbols: &SymbolArgs,
) -> Result<(), String> {
    let folded = folded(path, event, false, false, inline, symbols)?;
    if folded.is_empty() {
        return Err(format!("{}: no samples to draw", path.display()));
    }
    let lines: Vec<String> = folded.iter().map(|(s, c)| format!("{s} {c}")).collect();
    let mut opts = inferno::flamegraph::Options::default();
    if let Some(t) = title {
        opts.title = t;
    }
    // Written next to the output and renamed: never a half-written SVG in its place.
    let dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", output.display()))?;
    inferno::flamegraph::from_lines(
        &mut opts,
        lines.iter().map(String::as_str),
        tmp.as_file_mut(),
    )
    .map_err(|e| format!("{}: {e}", output.display()))?;
    perfdata::write::set_output_permissions(tmp.as_file(), output)
        .map_err(|e| format!("{}: {e}", output.display()))?;
    tmp.persist(output)
        .map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(())
}

pub fn stats(path: &Path, out_dir: &Path, json: bool, symbols: &SymbolArgs) -> Result<(), String> {
    use perfdata::analysis::stats;
    let rec = open(path)?;
    let mut a = analyzer(&rec, &symbols.options(true))?;
    a.show_progress("stats");
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    if json {
        let mut overview = vec![];
        let mut s = stats::stats(&mut a, &mut |row| {
            overview.push(row.clone());
            Ok(())
        })
        .map_err(|e| at(&e))?;
        s.overview = overview;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        serde_json::to_writer(&mut out, &s).map_err(|e| e.to_string())?;
        writeln!(out).map_err(|e| e.to_string())?;
        return out.flush().map_err(|e| e.to_string());
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let csv_at = |name: &str| -> Result<(csv::Writer<std::fs::File>, PathBuf), String> {
        let p = out_dir.join(name);
        let w = csv::Writer::from_path(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok((w, p))
    };
    let (mut ov, ov_path) = csv_at("overview.csv")?;
    let mut overview_rows = 0u64;
    let s = stats::stats(&mut a, &mut |row| {
        overview_rows += 1;
        ov.serialize(row)
            .map_err(|e| perfdata::rt::Error::other(format!("{}: {e}", ov_path.display())))
    })
    .map_err(|e| at(&e))?;
    if overview_rows == 0 {
        ov.write_record(stats::OVERVIEW_COLUMNS)
            .map_err(|e| format!("{}: {e}", ov_path.display()))?;
    }
    ov.flush()
        .map_err(|e| format!("{}: {e}", ov_path.display()))?;
    fn write_all<T: serde::Serialize>(
        (mut w, p): (csv::Writer<std::fs::File>, PathBuf),
        header: &[&str],
        rows: &[T],
    ) -> Result<(), String> {
        let err = |e: csv::Error| format!("{}: {e}", p.display());
        if rows.is_empty() {
            // serde writes the header with the first row; a table without rows keeps it.
            w.write_record(header).map_err(err)?;
        }
        for r in rows {
            w.serialize(r).map_err(err)?;
        }
        w.flush().map_err(|e| format!("{}: {e}", p.display()))
    }
    write_all(csv_at("stat.csv")?, stats::STAT_COLUMNS, &s.stat)?;
    write_all(
        csv_at("processes.csv")?,
        stats::PROCESS_COLUMNS,
        &s.processes,
    )?;
    write_all(csv_at("results.csv")?, stats::RESULT_COLUMNS, &s.results)?;
    eprintln!(
        "wrote stat.csv, overview.csv, processes.csv, results.csv in {}",
        out_dir.display()
    );
    Ok(())
}

pub fn info(path: &Path, json: bool, top: usize) -> Result<(), String> {
    use perfdata::analysis::info;
    let rec = open(path)?;
    let mut a = analyzer(&rec, &SymbolOptions::default())?;
    a.show_progress("info");
    let i = info::info(&mut a, top).map_err(|e| format!("{}: {e}", path.display()))?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&i).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", info::render(&i));
    }
    Ok(())
}
