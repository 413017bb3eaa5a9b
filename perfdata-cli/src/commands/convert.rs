//! `perfdata convert`: byte order, layout and compression of a recording, and the
//! conversions to and from gperftools CPU profiles.

use crate::error::CliResult;
use crate::gperftools;
use crate::input::Input;
use crate::symbols::SymbolArgs;
use crate::values::{EndianArg, LayoutArg};
use perfdata::write::stages::CompressedKind;
use perfdata::write::{convert_file_reporting, ConvertOptions};
use perfdata::{Endianness, Layout};
use std::path::PathBuf;
use std::process::ExitCode;

/// Rewrite a recording (byte order, layout, compression), or to and from gperftools.
///
/// A perf.data file rewritten: byte order, layout, compression; with no option a
/// byte-exact copy. The output is written to a temporary file, read back and renamed into
/// place, so OUTPUT may be the input. `--unwind` turns a `perf record --call-graph dwarf`
/// recording into one with callchains. Also converts between perf.data and gperftools CPU
/// profiles (`--to`), and rewrites profiles (`--endian`, `--word-size`). Only `--unwind`
/// and `--to gperftools` read symbol files and unwind tables (the symbol and stack options,
/// the environment).
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata convert perf.data -o copy.data\n  \
    perfdata convert --endian big --compress perf.data -o big.data\n  \
    perfdata convert --layout pipe perf.data -o stream.data\n  \
    perfdata convert --unwind dwarf.data -o fp.data\n  \
    perfdata convert --to gperftools --comm prog perf.data -o prog.prof\n  \
    perfdata convert --to perf prog.prof -o prog.data",
    &[],
))]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// The file to write (it may be the input).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        help_heading = "Output"
    )]
    output: PathBuf,
    /// Byte order of the output (default: the input's).
    #[arg(long, value_enum)]
    endian: Option<EndianArg>,
    /// Layout of the output (default: the input's).
    #[arg(long, value_enum)]
    layout: Option<LayoutArg>,
    /// Decompress COMPRESSED/COMPRESSED2 records.
    #[arg(long)]
    decompress: bool,
    /// Compress the kernel records (COMPRESSED2 unless --compressed-v1).
    #[arg(long)]
    compress: bool,
    /// With --compress: write PERF_RECORD_COMPRESSED (81), which perf before 6.16 reads.
    #[arg(long, requires = "compress")]
    compressed_v1: bool,
    /// zstd level for --compress.
    #[arg(long, default_value_t = 3, value_name = "N")]
    level: i32,
    /// Decode every record and feature and encode them again (typed round trip).
    #[arg(long)]
    typed: bool,
    /// A `perf record --call-graph dwarf` recording into a `-g` one: each sample's user
    /// stack unwound into its callchain, its registers and stack copy dropped.
    #[arg(long, conflicts_with_all = ["endian", "layout", "compress", "typed"])]
    unwind: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    gperftools: gperftools::ConvertArgs,
}

pub fn run(args: Args) -> CliResult {
    let input = args.input.path();
    if args.unwind {
        return unwind(input, &args);
    }
    let common = gperftools::Common {
        endian: args.endian,
        typed: args.typed,
        perf_options: args.layout.is_some() || args.decompress || args.compress,
        analysis: args.symbols.options(false),
    };
    if let Some(done) = gperftools::convert(input, &args.output, &args.gperftools, common) {
        return done.map(|()| ExitCode::SUCCESS);
    }
    let opts = ConvertOptions {
        endian: args.endian.map(Endianness::from),
        layout: args.layout.map(|l| match l {
            LayoutArg::File => Layout::File,
            LayoutArg::Pipe => Layout::Pipe,
        }),
        decompress: args.decompress,
        compress: args.compress.then(|| {
            let kind = if args.compressed_v1 {
                CompressedKind::Compressed
            } else {
                CompressedKind::Compressed2
            };
            (kind, args.level)
        }),
        typed: args.typed,
    };
    // Its errors name the file they are about (the input, or the output that was not
    // written).
    let did = convert_file_reporting(input, &args.output, &opts)?;
    if let Some((at, len)) = did.dropped_tail {
        eprintln!(
            "perfdata: {}: left out the last {len} bytes, from byte {at:#x}: they frame no \
             record (text appended to the stream?), so only a copy (`perfdata convert IN -o \
             OUT` with no option) can keep them",
            input.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--unwind`: the rewrite, and what it did.
fn unwind(input: &std::path::Path, args: &Args) -> CliResult {
    use crate::error::At;
    let options = args.symbols.options(false);
    let s = crate::analysis::analyze(input, &options, Some("convert"), |analyzer| {
        let mut summary = None;
        // Written beside the output, read back, then renamed into place.
        perfdata::write::save_checked_as(&args.output, |out| {
            let (s, damaged) =
                perfdata_analysis::rewrite::unwound::unwound(analyzer, out).at(input)?;
            summary = Some(s);
            Ok::<_, crate::error::CliError>(damaged)
        })?;
        Ok(summary.expect("a rewrite that succeeded says what it wrote"))
    })?;
    eprintln!(
        "perfdata: {}: {} samples, {} unwound ({} cut short): {:.1} MB → {:.1} MB ({:.1}% of the input, {:.1}× smaller)",
        args.output.display(),
        s.samples,
        s.unwound,
        s.cut,
        s.input_bytes as f64 / 1e6,
        s.output_bytes as f64 / 1e6,
        s.output_bytes as f64 * 100.0 / (s.input_bytes.max(1)) as f64,
        s.input_bytes as f64 / (s.output_bytes.max(1)) as f64,
    );
    Ok(ExitCode::SUCCESS)
}
