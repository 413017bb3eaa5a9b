//! `perfdata annotate`: each instruction of the hot functions with its share of the
//! samples, as `perf annotate --stdio` prints it.

use crate::analysis::analyze_then_exit;
use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::analyses::annotate::{self, disasm::Syntax, listing};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Each instruction of a function with its share of the samples (perf annotate).
///
/// The functions samples fell in (hottest first, or those named), disassembled
/// in-process as `objdump -d -l -S -C` prints them (source lines interleaved), each
/// instruction with its share of the function's samples: the text of `perf annotate
/// --stdio`. The code is read from the object's file the program ran from, found as symbols are (build-id
/// caches, `--symfs`, debug directories...) and checked against the recorded build id;
/// JIT code from its jitdump's bytes (no `perf inject --jit` needed).
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata annotate perf.data\n  \
    perfdata annotate perf.data leaf\n  \
    perfdata annotate -i perf.data --percent-type global-period -M intel\n  \
    perfdata annotate perf.data --asm-raw --percent-limit 5\n  \
    perfdata annotate perf.data leaf --json\n  \
    perfdata annotate perf.data leaf --by-line --prefix /src --prefix-strip 2",
    &[],
))]
pub struct Args {
    /// The recording, then the functions to annotate (as perf names them; default:
    /// every function with samples). Without `-i`, a first word that is no file is a
    /// function, and the recording is perf.data.
    #[arg(value_name = "FILE|SYMBOL", help_heading = "Input")]
    words: Vec<String>,
    /// The recording (every word is then a function), as perf spells it.
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        help_heading = "Input"
    )]
    input: Option<PathBuf>,
    /// Only this event (default: every event, one after the other).
    #[arg(short = 'e', long, value_name = "EVENT")]
    event: Option<String>,
    /// What the percentages divide by: local-period (the function's period, perf's
    /// default), global-period (the event's), local-hits, global-hits (as perf 6.1,
    /// 0.00 throughout).
    #[arg(long, value_name = "TYPE", default_value = "local-period",
          value_parser = ["local-period", "global-period", "local-hits", "global-hits",
                          "period-local", "period-global", "hits-local", "hits-global"],
          hide_possible_values = true)]
    percent_type: String,
    /// Leave out functions under this share of the event's period (percent).
    #[arg(long, value_name = "PERCENT")]
    percent_limit: Option<f64>,
    /// Each instruction's bytes, as objdump shows them (seven a line).
    #[arg(long)]
    asm_raw: bool,
    /// The assembler syntax: att (objdump's default) or intel.
    #[arg(short = 'M', long = "disassembler-style", value_name = "STYLE",
          value_parser = ["att", "intel"], default_value = "att")]
    disassembler_style: String,
    /// Interleave the source lines (objdump -S's way, with the inlined functions'
    /// names): the default, as perf's.
    #[arg(long, overrides_with = "no_source", help_heading = "Source")]
    source: bool,
    /// No source lines between the instructions (the positions objdump -l prints are
    /// still counted as perf counts them).
    #[arg(long, overrides_with = "source", help_heading = "Source")]
    no_source: bool,
    /// Put this before each absolute source path to find the file (objdump's and perf's
    /// --prefix, with --prefix-strip).
    #[arg(long, value_name = "PREFIX", help_heading = "Source")]
    prefix: Option<String>,
    /// Take the first N directories off a source path before --prefix.
    #[arg(long, value_name = "N", requires = "prefix", help_heading = "Source")]
    prefix_strip: Option<usize>,
    /// Before each function the sorted summary of its source lines (the instructions
    /// over 0.5%), and after such an instruction its file:line (perf's -l).
    #[arg(short = 'l', long, help_heading = "Source")]
    print_line: bool,
    /// Instead of the listing, per function each source line with instructions: its
    /// share, its instructions' addresses (runs of consecutive ones as FIRST-LAST) and
    /// its text, the file read as for the interleaved source (--prefix applies; the
    /// line number alone when the file is absent). Inlined code counts for its
    /// innermost line, as the listing's positions. perf has no such view (pprof's -list
    /// is the nearest); --json always has it, as each function's `lines`.
    #[arg(long, help_heading = "Source", conflicts_with = "html")]
    by_line: bool,
    /// Source paths whole in -l's lines, not their file names.
    #[arg(short = 'P', long, help_heading = "Source")]
    full_paths: bool,
    /// Accepted for perf's command line: the listing is text unless --json.
    #[arg(long, help_heading = "Output")]
    stdio: bool,
    /// The annotation as JSON: per function its instructions with address, bytes, text,
    /// samples and period, and source file:line where the debug info says.
    #[arg(long, help_heading = "Output", conflicts_with = "html")]
    json: bool,
    /// A self-contained HTML page (no script, no network): the functions hottest first,
    /// each instruction's share shaded, source lines between them.
    #[arg(long, help_heading = "Output")]
    html: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
}

pub fn run(args: Args) -> CliResult {
    crate::heap::grow_in_large_steps();
    let percent_type = listing::PercentType::parse(&args.percent_type)
        .ok_or_else(|| CliError::usage(format!("--percent-type {}", args.percent_type)))?;
    if let Some(p) = args.percent_limit {
        if !(p.is_finite() && p >= 0.0) {
            return Err(CliError::usage(format!(
                "--percent-limit {p}: not a percentage"
            )));
        }
    }
    let (path, names) = match &args.input {
        Some(p) => (p.clone(), args.words.clone()),
        None => match args.words.split_first() {
            Some((first, rest)) if std::path::Path::new(first).exists() => {
                (PathBuf::from(first), rest.to_vec())
            }
            _ => (PathBuf::from("perf.data"), args.words.clone()),
        },
    };
    let opts = annotate::AnnotateOptions {
        event: args.event.clone(),
        symbols: names,
        syntax: match args.disassembler_style.as_str() {
            "intel" => Syntax::Intel,
            _ => Syntax::Att,
        },
        source: !args.no_source,
        prefix: args.prefix.clone(),
        prefix_strip: args.prefix_strip.unwrap_or(0),
        percent_limit: args.percent_limit.unwrap_or(0.0),
        by_line: args.by_line || args.json,
        print_line: args.print_line,
    };
    // objdump -l's positions need the DWARF lines.
    let mut options = args.symbols.options(true);
    options.filter = args.filter.filter()?;
    let result = analyze_then_exit(&path, &options, Some("annotate"), |analyzer| {
        annotate::annotate(analyzer, &opts).at(&path)
    })?;
    for s in &result.skipped {
        eprintln!(
            "perfdata: {}: cannot annotate {} ({}, {}): {}",
            path.display(),
            s.symbol,
            s.dso,
            s.event,
            s.reason
        );
    }
    let mut out = args.output.open()?;
    if args.json {
        let v = annotate::to_json(&result, percent_type);
        serde_json::to_writer_pretty(&mut out, &v).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else if args.html {
        let lopts = listing::ListingOptions {
            percent_type,
            percent_limit: args.percent_limit.unwrap_or(0.0),
            ..Default::default()
        };
        annotate::html::write_html(&mut out, &result, &lopts)?;
    } else if args.by_line {
        let lopts = listing::ListingOptions {
            percent_type,
            ..Default::default()
        };
        for ev in &result.events {
            for f in &ev.functions {
                listing::write_by_line(&mut out, ev, f, &lopts)?;
            }
        }
    } else {
        let lopts = listing::ListingOptions {
            percent_type,
            percent_limit: args.percent_limit.unwrap_or(0.0),
            asm_raw: args.asm_raw,
            print_line: args.print_line,
            full_path: args.full_paths,
        };
        for ev in &result.events {
            listing::write_event(&mut out, ev, &lopts)?;
        }
    }
    out.finish()?;
    if !opts.symbols.is_empty() && result.events.iter().all(|e| e.functions.is_empty()) {
        return Err(CliError::usage(format!(
            "no samples in {} ({})",
            opts.symbols.join(", "),
            path.display()
        )));
    }
    Ok(ExitCode::SUCCESS)
}
