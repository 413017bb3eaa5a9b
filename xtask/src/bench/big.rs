//! The big-input table (issue 25; `--big-gb N`, never in CI): a recording of N GB —
//! synthesized by `perfdata-bench synth` (perf record -g's record mix) and laid out as a
//! file, so that the data section and every offset past 4 GiB are 64-bit — goes through
//! the commands a user runs on it, each watched for peak anonymous memory. The figures
//! are checked before they are printed: the folded stacks count every sample the
//! reference walk counts, and the copy-through is the input byte for byte.

use super::runner::{check_status, field, measure_workload, Env, Measured, Workload};
use super::table::{render, Row};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The table, and what it was measured on.
pub(super) struct BigTable {
    pub(super) markdown: String,
    pub(super) input: String,
}

/// Synthesizes (or reuses) the N GB file and measures its rows, one run each.
pub(super) fn measure(env: &Env, gb: u64) -> Result<BigTable> {
    let input = env.scratch.join(format!("synth-{gb}gb.data"));
    if !input.exists() {
        super::synthesize(env, gb * 1000, &input)?;
    }
    let file = input.to_str().context("input path is not UTF-8")?;
    let scratch = |name: &str| env.scratch.join(name).to_string_lossy().into_owned();
    let (out, parquet) = (scratch("big-out.data"), scratch("big-parquet"));
    let perfdata = |args: &[&str]| Workload::new(&env.perfdata_bin, args);
    let mut reference = Workload::new(&env.bench_bin, &["ours", file]);
    reference.keep_stdout = true;
    let mut report = perfdata(&["report", file]);
    report.keep_stdout = true;
    let mut collapse = perfdata(&["collapse", file]);
    collapse.keep_stdout = true;
    println!("measuring the big-input table on {file} (one run each)");
    let mut results: HashMap<&str, Measured> = HashMap::new();
    results.insert("reference", measure_workload(env, &reference, 1)?);
    results.insert("report", measure_workload(env, &report, 1)?);
    results.insert("collapse", measure_workload(env, &collapse, 1)?);
    results.insert(
        "convert",
        measure_workload(
            env,
            &perfdata(&["convert", file, "-o", &out]).writing(&out),
            1,
        )?,
    );
    // A clean file's copy-through is the file: over 4 GiB, every offset and size field
    // was read and written back whole.
    check_status(
        Command::new("cmp").arg(file).arg(&out),
        "cmp (the copy-through against its input)",
    )?;
    results.insert(
        "convert-typed",
        measure_workload(
            env,
            &perfdata(&["convert", "--typed", file, "-o", &out]).writing(&out),
            1,
        )?,
    );
    std::fs::remove_file(&out)?;
    let _ = std::fs::remove_dir_all(&parquet);
    results.insert(
        "export",
        measure_workload(env, &perfdata(&["export", file, "-o", &parquet]), 1)?,
    );
    let parquet_bytes = super::dir_size(Path::new(&parquet));
    std::fs::remove_dir_all(&parquet)?;

    let samples = field::<u64>(&results["reference"].stdout, "samples")?;
    let folded: u64 = results["collapse"]
        .stdout
        .lines()
        .map(|l| {
            l.rsplit_once(' ')
                .and_then(|(_, n)| n.parse::<u64>().ok())
                .with_context(|| format!("a folded line without a count: {l:?}"))
        })
        .sum::<Result<u64>>()?;
    // The folded stacks weigh by period, as `report`'s event count does.
    let period = results["report"]
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("# Event count (approx.): "))
        .context("no event count in the report")?
        .trim()
        .parse::<u64>()?;
    if folded != period {
        bail!("collapse's stacks weigh {folded}, the report's event count is {period}");
    }
    let input_bytes = std::fs::metadata(&input)?.len();
    let rows = [
        Row::new("`perfdata report` (Children, call graph)", "report")
            .rss_bounded()
            .decode(),
        Row::new("`perfdata collapse`", "collapse")
            .rss_bounded()
            .decode(),
        Row::new("`perfdata convert IN OUT` (copy-through)", "convert")
            .rss_bounded()
            .decode(),
        Row::new("`perfdata convert --typed`", "convert-typed")
            .rss_bounded()
            .decode(),
        Row::new("`perfdata export --to parquet`", "export")
            .rss_bounded()
            .decode(),
    ];
    let mut md = render(&rows, &results, input_bytes, samples)?;
    writeln!(
        md,
        "\nChecked: `collapse`'s stacks weigh the {period} the report counts, over the \
         {samples} samples of the reference walk (`perfdata-bench ours`); the copy-through \
         equals the input byte for byte (`cmp`). The Parquet export is {:.1} MB.",
        parquet_bytes as f64 / 1e6
    )?;
    Ok(BigTable {
        markdown: md,
        input: format!(
            "{:.2} GB ({:.2} GiB), {samples} samples; synthesized by `perfdata-bench synth` \
             and converted to the file layout",
            input_bytes as f64 / 1e9,
            input_bytes as f64 / f64::from(1u32 << 30)
        ),
    })
}
