//! `perfdata`: inspect, convert and analyse perf.data files.
//!
//! `perfdata dump FILE` prints the format, the attrs, every feature and every record,
//! decoded by the code generated from the spec (one JSON object per line with `--json`);
//! `report`, `collapse`, `flamegraph`, `stats` and `info` answer "where did the time go?".

mod analyze;
mod check;
mod convert;
mod dump;
#[cfg(feature = "parquet")]
mod export;
mod gperftools;

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
    #[command(
        after_help = "Examples:\n  perfdata check perf.data\n  perfdata check perf.data --json"
    )]
    Check {
        file: PathBuf,
        /// One JSON object per problem, then a summary object.
        #[arg(long)]
        json: bool,
    },
    /// Print the header, attrs, features and records of a perf.data file (or the header,
    /// records and maps of a gperftools CPU profile).
    #[command(after_help = "Examples:\n  perfdata dump perf.data --limit 20\n  \
        perfdata dump perf.data --json | jq .record\n  perf record -o - true | perfdata dump -\n  \
        perfdata dump prog.prof")]
    Dump {
        /// A perf.data file (file or pipe layout, either byte order) or a gperftools CPU
        /// profile (told apart by content); `-` reads a pipe-mode perf.data stream from
        /// standard input (`perf record -o - … | perfdata dump -`).
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
        /// Print COMPRESSED records' zstd data (hex) instead of its size.
        #[arg(long)]
        payloads: bool,
    },
    /// Rewrite a perf.data file: byte order, layout, compression. With no option it is a
    /// byte-exact copy. The output is written to a temporary file and renamed into place,
    /// so OUTPUT may be INPUT. Also converts between perf.data and gperftools CPU
    /// profiles (`--to`), and rewrites profiles (`--endian`, `--word-size`).
    #[command(after_help = "Examples:\n  perfdata convert perf.data copy.data\n  \
        perfdata convert --endian big --compress perf.data big.data\n  \
        perfdata convert --layout pipe perf.data stream.data\n  \
        perfdata convert --to gperftools --comm prog perf.data prog.prof\n  \
        perfdata convert --to perf prog.prof prog.data")]
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
        #[command(flatten)]
        gperftools: gperftools::ConvertArgs,
    },
    /// Where the time went: per event, the share of samples by command, shared object and
    /// function, as `perf report --stdio -n --no-children` prints it.
    #[command(after_help = "Examples:\n  perfdata report perf.data\n  \
        perfdata report perf.data --sort dso,sym -g\n  perfdata report perf.data --json")]
    Report {
        file: PathBuf,
        /// Columns, among comm, pid, tid, dso, sym.
        #[arg(long, default_value = "comm,dso,sym")]
        sort: String,
        /// Under each row, the call chains that led there (callers, nearest first).
        #[arg(short = 'g', long = "call-graph")]
        call_graph: bool,
        /// Accepted for perf's command line; the report is always text on stdout.
        #[arg(long)]
        stdio: bool,
        /// The report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        symbols: analyze::SymbolArgs,
    },
    /// Folded stacks (`comm;root;…;leaf count`) for flame graphs: the lines
    /// `perf script | inferno-collapse-perf` gives.
    #[command(
        after_help = "Examples:\n  perfdata collapse perf.data > stacks.folded\n  \
        perfdata collapse perf.data --event task-clock --pid"
    )]
    Collapse {
        file: PathBuf,
        /// Only this event (default: the first one sampled).
        #[arg(long)]
        event: Option<String>,
        /// Append the process id to the process name.
        #[arg(long)]
        pid: bool,
        /// Append the process and thread ids to the process name.
        #[arg(long)]
        tid: bool,
        /// Add inlined functions (from DWARF debug info) as frames.
        #[arg(long)]
        inline: bool,
        #[command(flatten)]
        symbols: analyze::SymbolArgs,
    },
    /// A flame graph (SVG, through the inferno crate).
    #[command(after_help = "Example:\n  perfdata flamegraph perf.data -o flame.svg")]
    Flamegraph {
        file: PathBuf,
        /// The SVG file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Only this event (default: the first one sampled).
        #[arg(long)]
        event: Option<String>,
        /// Title of the graph.
        #[arg(long)]
        title: Option<String>,
        /// Add inlined functions (from DWARF debug info) as frames.
        #[arg(long)]
        inline: bool,
        #[command(flatten)]
        symbols: analyze::SymbolArgs,
    },
    /// readperf's statistics for every event: stat.csv (records per type), overview.csv
    /// (every record in time order), processes.csv and results.csv (per function, with
    /// source files).
    #[command(
        after_help = "Examples:\n  perfdata stats perf.data --out-dir stats/\n  \
        perfdata stats perf.data --json > stats.json"
    )]
    Stats {
        file: PathBuf,
        /// Directory for the four CSV files (created if missing).
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// One JSON document on stdout instead of the CSV files.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        symbols: analyze::SymbolArgs,
    },
    /// Many recordings into Parquet tables (samples, stacks, frames, threads, mmaps,
    /// recordings) for DuckDB, DataFusion or Spark; schema and queries in
    /// docs/parquet-export.md.
    #[command(
        after_help = "Examples:\n  perfdata export *.data --to parquet -o profiles/ --symbolize --jobs 4\n  \
        duckdb -c \"SELECT function, sum(period) FROM 'profiles/samples/*/*.parquet' s \
        JOIN 'profiles/frames/*/*.parquet' f ON f.frame_id = s.leaf_frame GROUP BY 1 ORDER BY 2 DESC\""
    )]
    #[cfg(feature = "parquet")]
    Export {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format (only `parquet`).
        #[arg(long, value_enum, default_value = "parquet")]
        to: ExportFormat,
        /// Output directory (`TABLE/recording=N/part-0.parquet` below it).
        #[arg(short, long)]
        output: PathBuf,
        /// Resolve frames to functions, source files and lines.
        #[arg(long)]
        symbolize: bool,
        /// Rows per Parquet row group.
        #[arg(long, default_value_t = 1 << 20)]
        row_group_size: usize,
        /// Recordings exported at once.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        #[command(flatten)]
        symbols: analyze::SymbolArgs,
    },
    /// One screen about a recording: producer, duration, events, losses, top processes
    /// and shared objects, compression and size.
    #[command(
        after_help = "Examples:\n  perfdata info perf.data\n  perfdata info perf.data --json"
    )]
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// How many processes and shared objects to list.
        #[arg(long, default_value_t = 5)]
        top: usize,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum EndianArg {
    Little,
    Big,
}

#[cfg(feature = "parquet")]
#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum ExportFormat {
    Parquet,
}

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum LayoutArg {
    File,
    Pipe,
}

fn main() -> ExitCode {
    // glibc adapts its mmap and trim thresholds upwards as large buffers are freed; in a
    // long streaming run (`export`: Parquet page buffers, batch builders) freed memory
    // then stays in the heap and the resident set grows with the input (400 MB for a
    // 585 MB recording, with under 20 MB live). A fixed threshold turns the adaptation off:
    // 27 MB.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file, json } => return check::check(&file, json),
        Command::Dump {
            file,
            header_only,
            limit,
            json,
            ..
        } if gperftools::is_profile(&file) => {
            gperftools::dump(&file, if header_only { Some(0) } else { limit }, json)
        }
        Command::Dump {
            file,
            header_only,
            limit,
            json,
            salvage,
            payloads,
        } => dump::dump(
            &file,
            &dump::DumpOptions {
                header_only,
                limit,
                json,
                salvage,
                payloads,
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
            gperftools,
        } => {
            let perf_options = layout.is_some() || decompress || compress;
            let gp = gperftools::Common {
                endian,
                typed,
                perf_options,
            };
            gperftools::convert(&input, &output, &gperftools, gp).unwrap_or_else(|| {
                convert::convert(
                    &input,
                    &output,
                    endian,
                    layout,
                    decompress,
                    compress.then_some((compressed_v1, level)),
                    typed,
                )
            })
        }
        Command::Report {
            file,
            sort,
            call_graph,
            stdio: _,
            json,
            symbols,
        } => analyze::report(&file, &sort, call_graph, json, &symbols),
        Command::Collapse {
            file,
            event,
            pid,
            tid,
            inline,
            symbols,
        } => analyze::collapse(&file, event, pid, tid, inline, &symbols),
        Command::Flamegraph {
            file,
            output,
            event,
            title,
            inline,
            symbols,
        } => analyze::flamegraph(&file, &output, event, title, inline, &symbols),
        Command::Stats {
            file,
            out_dir,
            json,
            symbols,
        } => analyze::stats(&file, &out_dir, json, &symbols),
        Command::Info { file, json, top } => analyze::info(&file, json, top),
        #[cfg(feature = "parquet")]
        Command::Export {
            files,
            to: ExportFormat::Parquet,
            output,
            symbolize,
            row_group_size,
            jobs,
            symbols,
        } => export::export(
            &files,
            &output,
            &perfdata::analysis::parquet::ExportOptions {
                symbolize,
                row_group_size,
                symbols: symbols.options(symbolize),
            },
            jobs,
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

/// Opens a file or `--threads` directory; every error starts with the path.
pub(crate) fn open_recording(
    path: &std::path::Path,
) -> Result<perfdata::container::Recording, String> {
    let rec = perfdata::container::Recording::open(path).map_err(|e| {
        let e = e.to_string();
        if e.starts_with(&path.display().to_string()) {
            e
        } else {
            format!("{}: {e}", path.display())
        }
    })?;
    if let Err(e) = rec.data() {
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(rec)
}
