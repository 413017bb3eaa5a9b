//! The gperftools CPU profile in the CLI: telling a profile from a perf.data file (by
//! content, not by name), and `convert` between profiles (byte-exact, typed, other word
//! size / byte order) and to and from perf.data.

use crate::error::{At, CliError};
use crate::values::EndianArg;
use perfdata::gperftools::{self, Profile, SlotFormat, ToPerfOptions};
use perfdata::write::WriteOptions;
use perfdata::Endianness;
use perfdata_analysis::export::gperftools::{from_perf, FromPerfOptions};
use perfdata_analysis::AnalyzerOptions;
use std::path::Path;

/// `convert` options for the gperftools conversions (flattened into `convert`).
#[derive(clap::Args, Debug, Default)]
pub struct ConvertArgs {
    /// Output format: `gperftools` (a CPU profile) or `perf` (perf.data). Default: the
    /// input's format.
    #[arg(long, value_enum, help_heading = "Output")]
    pub to: Option<Format>,
    /// perf.data → gperftools: only the samples (and mappings) of this process.
    #[arg(long, conflicts_with = "comm", help_heading = GPERFTOOLS)]
    pub pid: Option<u32>,
    /// perf.data → gperftools: only the processes with this command name.
    #[arg(long, help_heading = GPERFTOOLS)]
    pub comm: Option<String>,
    /// perf.data → gperftools: only the samples of this event (its name in the file's
    /// event list, e.g. `cycles:u`); default: the first event.
    #[arg(long, help_heading = GPERFTOOLS)]
    pub event: Option<String>,
    /// gperftools output: word size in bytes (4 or 8). Default: the input profile's, or 8.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["4", "8"]),
          help_heading = GPERFTOOLS)]
    pub word_size: Option<String>,
}

/// The help heading of the gperftools conversions' options.
const GPERFTOOLS: &str = "gperftools";

#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum Format {
    Gperftools,
    Perf,
}

/// True when `path` is a gperftools CPU profile (by its first bytes).
pub fn is_profile(path: &Path) -> bool {
    let mut head = [0u8; 40];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let n = read_up_to(&mut f, &mut head);
    gperftools::detect_header(&head[..n], len).is_some()
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> usize {
    use std::io::Read;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// The `convert` options shared with the perf.data conversions.
pub struct Common {
    pub endian: Option<EndianArg>,
    /// Profile → profile: encode the decoded records rather than copy the bytes.
    pub typed: bool,
    /// --layout, --compress or --decompress: perf.data-only options.
    pub perf_options: bool,
    /// Where symbols and unwind tables come from (perf.data → profile: its stacks).
    pub analysis: AnalyzerOptions,
}

/// `perfdata convert` when a profile is involved: `None` when neither side is one (the
/// perf.data conversions handle it).
pub fn convert(
    input: &Path,
    output: &Path,
    args: &ConvertArgs,
    common: Common,
) -> Option<Result<(), CliError>> {
    let from_profile = is_profile(input);
    let endian = common.endian;
    let to = args.to.unwrap_or(if from_profile {
        Format::Gperftools
    } else {
        Format::Perf
    });
    let perf_only = args.pid.is_some() || args.comm.is_some() || args.event.is_some();
    let endian = endian.map(|e| match e {
        EndianArg::Little => Endianness::Little,
        EndianArg::Big => Endianness::Big,
    });
    let word_size = args
        .word_size
        .as_deref()
        .map(|w| if w == "4" { 4 } else { 8 });
    match (from_profile, to) {
        (false, Format::Perf) => {
            if perf_only || word_size.is_some() {
                return Some(Err(CliError::usage(
                    "--pid, --comm, --event and --word-size need --to gperftools",
                )));
            }
            None
        }
        (true, _) | (false, Format::Gperftools) if common.perf_options => Some(Err(
            CliError::usage("--layout, --compress and --decompress apply to perf.data output only"),
        )),
        (true, _) if perf_only => Some(Err(CliError::usage(
            "--pid, --comm and --event select perf.data samples; the input is a gperftools profile",
        ))),
        (true, Format::Gperftools) => Some(profile_to_profile(
            input,
            output,
            endian,
            word_size,
            common.typed,
        )),
        (true, Format::Perf) => {
            if word_size.is_some() {
                return Some(Err(CliError::usage(
                    "--word-size applies to a gperftools output",
                )));
            }
            Some(profile_to_perf(input, output, endian))
        }
        (false, Format::Gperftools) => Some(perf_to_profile(
            input,
            output,
            args,
            endian,
            word_size,
            &common.analysis,
        )),
    }
}

fn read_profile(input: &Path) -> Result<(Vec<u8>, Profile), CliError> {
    let bytes = std::fs::read(input).at(input)?;
    let p = Profile::parse(&bytes).at(input)?;
    Ok((bytes, p))
}

fn profile_to_profile(
    input: &Path,
    output: &Path,
    endian: Option<Endianness>,
    word_size: Option<u8>,
    typed: bool,
) -> Result<(), CliError> {
    let (bytes, p) = read_profile(input)?;
    let layout = SlotFormat::new(
        word_size.unwrap_or(p.layout.word_size),
        endian.unwrap_or(p.layout.endian),
    );
    let result = if layout == p.layout && !typed {
        // Unchanged: the input's bytes, copied through.
        gperftools::save_bytes(output, &bytes)
    } else {
        gperftools::save(&p, output, layout)
    };
    result.at(output)
}

fn profile_to_perf(
    input: &Path,
    output: &Path,
    endian: Option<Endianness>,
) -> Result<(), CliError> {
    let (_, p) = read_profile(input)?;
    let opts = ToPerfOptions {
        endian: endian.unwrap_or(Endianness::NATIVE),
        ..ToPerfOptions::default()
    };
    let file = gperftools::to_perf(&p, &opts).at(input)?;
    file.save(output, WriteOptions::default()).at(output)
}

fn perf_to_profile(
    input: &Path,
    output: &Path,
    args: &ConvertArgs,
    endian: Option<Endianness>,
    word_size: Option<u8>,
    analysis: &AnalyzerOptions,
) -> Result<(), CliError> {
    let opts = FromPerfOptions {
        pid: args.pid,
        comm: args.comm.clone(),
        event: args.event.clone(),
        layout: Some(SlotFormat::new(
            word_size.unwrap_or(8),
            endian.unwrap_or(Endianness::Little),
        )),
    };
    let (profile, summary) = crate::analysis::analyze(input, analysis, None, |analyzer| {
        from_perf(analyzer, &opts).at(input)
    })?;
    let layout = profile.layout;
    gperftools::save(&profile, output, layout).at(output)?;
    eprintln!(
        "perfdata: {}: {} samples of {} → {} stacks ({} samples without user-space frames left out), {} mappings",
        output.display(),
        summary.samples,
        summary.event,
        summary.stacks,
        summary.without_user_frames,
        summary.mappings
    );
    if summary.pids.len() > 1 {
        eprintln!(
            "perfdata: note: the samples come from {} processes (address spaces); select one with --pid or --comm",
            summary.pids.len()
        );
    }
    Ok(())
}
