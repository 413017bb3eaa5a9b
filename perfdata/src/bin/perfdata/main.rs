//! `perfdata`: inspect perf.data files.
//!
//! `perfdata dump FILE` prints the format, the attrs, every feature and every record,
//! decoded by the code generated from the spec (one JSON object per line with `--json`).

mod check;
mod convert;
mod dump;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "perfdata",
    version,
    about = "Read perf.data files (every variant)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a perf.data file and list every problem (offset, record or feature,
    /// field, expected/found). Exit status: 0 clean, 1 damaged but readable, 2 unreadable.
    Check {
        file: PathBuf,
        /// One JSON object per problem, then a summary object.
        #[arg(long)]
        json: bool,
    },
    /// Print the header, attrs, features and records of a perf.data file.
    Dump {
        /// A perf.data file (file or pipe layout, either byte order); `-` reads a
        /// pipe-mode stream from standard input (`perf record -o - … | perfdata dump -`).
        file: PathBuf,
        /// Print only the header, attrs and features.
        #[arg(long)]
        header_only: bool,
        /// Stop after this many records.
        #[arg(long)]
        limit: Option<u64>,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
        /// Go on past damaged records where the framing allows (each skip is reported).
        #[arg(long)]
        salvage: bool,
    },
    /// Rewrite a perf.data file: byte order, layout, compression. With no option it is a
    /// byte-exact copy. The output is written to a temporary file and renamed into place,
    /// so OUTPUT may be INPUT.
    Convert {
        input: PathBuf,
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
        #[arg(long)]
        compressed_v1: bool,
        /// zstd level for --compress.
        #[arg(long, default_value_t = 3)]
        level: i32,
        /// Decode every record and feature and encode them again (typed round trip).
        #[arg(long)]
        typed: bool,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum EndianArg {
    Little,
    Big,
}

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum LayoutArg {
    File,
    Pipe,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file, json } => return check::check(&file, json),
        Command::Dump {
            file,
            header_only,
            limit,
            json,
            salvage,
        } => dump::dump(
            &file,
            &dump::DumpOptions {
                header_only,
                limit,
                json,
                salvage,
            },
        ),
        Command::Convert {
            input,
            output,
            endian,
            layout,
            decompress,
            compress,
            compressed_v1,
            level,
            typed,
        } => convert::convert(
            &input,
            &output,
            endian,
            layout,
            decompress,
            compress.then_some((compressed_v1, level)),
            typed,
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfdata: {e}");
            ExitCode::FAILURE
        }
    }
}
