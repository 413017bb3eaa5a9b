//! `perfdata dump`: every part of a recording (or of a gperftools CPU profile or a jitdump), as text
//! or one JSON object per line, through `perfdata::dump`.

use crate::error::{At, CliError, CliResult};
use crate::input::Input;
use crate::output::Output;
use perfdata::dump::{dump_pipe, dump_recording, Damaged, DumpOptions};
use std::path::Path;
use std::process::ExitCode;

/// Print every part of a recording, gperftools profile or jitdump.
///
/// A perf.data file (file or pipe layout, either byte order, simpleperf's too) or a
/// `perf record --threads` directory: its header, attrs, features and every record. A
/// gperftools CPU profile: its header, records and maps. A jitdump (`jit-PID.dump`): its
/// header and records. As text, or one JSON object per line (a perf.data file's lines:
/// docs/dump-json.md).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  perfdata dump perf.data --limit 20\n  \
    perfdata dump perf.data --json | jq .record\n  perf record -o - true | perfdata dump -\n  \
    perfdata dump prog.prof\n  perfdata dump jit-1234.dump --limit 20",
    // What FILE may be here is more than what the other commands read.
    mut_arg("file", |a| a.help(
        "A perf.data file (file or pipe layout), a `perf record --threads` directory, a \
         gperftools CPU profile or a jitdump, told apart by their content; `-` reads a \
         perf.data stream from standard input (`perf record -o - … | perfdata dump -`) \
         [default: perf.data]"
    )),
)]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Print only the header, attrs and features.
    #[arg(long)]
    header_only: bool,
    /// Stop after this many records.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Go on past damaged records where the framing allows (each skip is reported); from
    /// standard input too, looking ahead at most 1 MiB.
    #[arg(long)]
    salvage: bool,
    /// Print COMPRESSED records' zstd data (hex) instead of its size (and a jitdump's
    /// code bytes).
    #[arg(long)]
    payloads: bool,
    /// One JSON object per line instead of text.
    #[arg(long, help_heading = "Output")]
    json: bool,
    #[command(flatten)]
    output: Output,
}

/// Prints everything readable. Damage that does not stop the reading (a damaged feature;
/// with `--salvage`, damaged records) is printed where it is, as a line of its own and on
/// stderr with the path, and the dump goes on; the exit status is then 1.
pub fn run(args: Args) -> CliResult {
    let path = args.input.path();
    let opts = DumpOptions {
        header_only: args.header_only,
        limit: args.limit,
        json: args.json,
        salvage: args.salvage,
        payloads: args.payloads,
    };
    let mut out = args.output.open()?;
    let stdin = Path::new("<stdin>");
    let damaged = if path == Path::new("-") {
        dump_pipe(std::io::stdin().lock(), &opts, &mut out).at(stdin)?
    } else if crate::gperftools::is_profile(path) {
        let bytes = std::fs::read(path).at(path)?;
        let limit = if args.header_only {
            Some(0)
        } else {
            args.limit
        };
        perfdata::dump::dump_gperftools(&bytes, limit, args.json, &mut out).at(path)?
    } else if is_jitdump(path) {
        let bytes = std::fs::read(path).at(path)?;
        perfdata::jitdump::dump_jitdump(&bytes, &opts, &mut out).at(path)?
    } else {
        let recording = crate::input::open(path)?;
        dump_recording(&recording, &opts, &mut out).at(path)?
    };
    out.finish()?;
    report(if path == Path::new("-") { stdin } else { path }, &damaged)
}

/// True when `path` is a file that starts with a jitdump magic.
fn is_jitdump(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| perfdata::jitdump::detect(&head).is_some())
}

/// Each problem on stderr, and status 1 when there was any.
fn report(path: &Path, damaged: &Damaged) -> CliResult {
    for p in &damaged.problems {
        eprintln!("perfdata: {}: {p}", path.display());
    }
    if damaged.problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(CliError::Incomplete(format!(
            "{}: {} problem(s) reported above; everything else was printed",
            path.display(),
            damaged.problems.len()
        )))
    }
}
