//! `perfdata script`: every sample as perf script prints it.

use crate::analysis::analyze_then_exit;
use crate::error::{At, CliError, CliResult};
use crate::filter::FilterArgs;
use crate::output::Output;
use crate::symbols::SymbolArgs;
use perfdata_analysis::export::script::{
    self, fields::FieldSpec, ScriptOptions, ShowEvents, TimeFormat,
};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

#[path = "script_python.rs"]
mod python;
use std::process::ExitCode;

/// Every sample as `perf script` prints it, byte for byte.
///
/// One line per sample (comm, tid, cpu, time, period, event, then the sampled address as
/// `ip sym+off (dso)`, or its call chain on the lines below and a blank line): the text
/// FlameGraph's stackcollapse-perf.pl, inferno, speedscope, the Firefox Profiler and shell
/// pipelines read. `-F` chooses the fields with perf's grammar; `--show-*-events` adds
/// side-band records. FILE `-` reads a pipe stream (`perf record -o - | perfdata script -`).
///
/// `-s SCRIPT.py [ARGS]` runs a script written for perf's Python scripting API (`perf
/// script -s`: `trace_begin`, `SYSTEM__EVENT` handlers, `process_event`, `trace_end`)
/// with the host in the perfdata Python package, in `python3` (or `$PERFDATA_PYTHON`);
/// the recording is then `-i FILE` (default perf.data) and ARGS are the script's.
#[derive(clap::Args, Debug)]
#[command(after_help = crate::symbols::after_help(
    "Examples:\n  perfdata script perf.data > out.perf\n  \
    perfdata script perf.data | inferno-collapse-perf | inferno-flamegraph > flame.svg\n  \
    perfdata script -F comm,tid,time,ip,sym perf.data\n  \
    perfdata script -F +period,-cpu --ns perf.data\n  \
    perfdata script --show-task-events --show-mmap-events -G perf.data\n  \
    perf record -g -o - -- ./prog | perfdata script -\n  \
    perfdata script -i perf.data -s syscall-counts.py\n  \
    perfdata script -s flamegraph.py -- -f json",
    &[],
))]
pub struct Args {
    /// The recording: a perf.data file (either layout) or a `perf record --threads`
    /// directory [default: perf.data]. With `-s`: the script's first argument.
    #[arg(value_name = "FILE", help_heading = "Input")]
    file: Option<PathBuf>,
    /// The same as FILE, as perf spells it (the only way with `-s`).
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        help_heading = "Input"
    )]
    input: Option<PathBuf>,
    /// Run SCRIPT.py, a script for perf's Python scripting API, over the recording
    /// (needs Python 3 and the perfdata Python package).
    #[arg(
        short = 's',
        long = "script",
        value_name = "SCRIPT.py",
        help_heading = "Python scripts"
    )]
    script: Option<PathBuf>,
    /// With `-s`: the script's arguments (its `sys.argv[1:]`); after `--` when one
    /// starts with `-` (`-s flamegraph.py -- -f json`).
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        help_heading = "Python scripts"
    )]
    script_args: Vec<OsString>,
    /// The fields to print, as perf: `comm,tid,time,ip,sym` (every kind of event),
    /// `+period,-cpu` (added to or taken from the defaults), `trace:comm,trace` (one kind:
    /// hw, sw, trace, raw, break, synth). Fields: comm, tid, pid, time, cpu, event, trace,
    /// ip, sym, dso, addr, symoff, srcline, period, iregs, uregs, data_src, weight,
    /// ins_lat, insn, insnlen, phys_addr, data_page_size, code_page_size, misc, flags.
    /// Repeatable.
    #[arg(short = 'F', long = "fields", value_name = "FIELDS")]
    fields: Vec<String>,
    /// Print no call chains: each sample on one line.
    #[arg(short = 'G', long = "hide-call-graph")]
    hide_call_graph: bool,
    /// Show the functions inlined at unwound addresses (perf 6.1's default).
    #[arg(long, overrides_with = "no_inline")]
    inline: bool,
    /// Do not show inlined functions.
    #[arg(long)]
    no_inline: bool,
    /// Print source files with their whole path (srcline).
    #[arg(long)]
    full_source_path: bool,
    /// Times in nanoseconds.
    #[arg(long)]
    ns: bool,
    /// Print the recording's header first (perf's `# ========` block).
    #[arg(long)]
    header: bool,
    /// Print only the recording's header.
    #[arg(long, conflicts_with = "header")]
    header_only: bool,
    /// With --header/--header-only: every feature in full (topology, caches, memory…).
    #[arg(short = 'I', long = "show-info")]
    show_info: bool,
    /// Times from the previous record printed.
    #[arg(long)]
    deltatime: bool,
    /// Also print COMM, FORK and EXIT records.
    #[arg(long, help_heading = "Side-band records")]
    show_task_events: bool,
    /// Also print MMAP and MMAP2 records.
    #[arg(long, help_heading = "Side-band records")]
    show_mmap_events: bool,
    /// Also print context switch records.
    #[arg(long, help_heading = "Side-band records")]
    show_switch_events: bool,
    /// Also print NAMESPACES records.
    #[arg(long, help_heading = "Side-band records")]
    show_namespace_events: bool,
    /// Also print LOST records.
    #[arg(long, help_heading = "Side-band records")]
    show_lost_events: bool,
    /// Also print FINISHED_ROUND records.
    #[arg(long, help_heading = "Side-band records")]
    show_round_events: bool,
    /// Also print KSYMBOL and BPF_EVENT records.
    #[arg(long, help_heading = "Side-band records")]
    show_bpf_events: bool,
    /// Also print CGROUP records.
    #[arg(long, help_heading = "Side-band records")]
    show_cgroup_events: bool,
    /// Also print TEXT_POKE records.
    #[arg(long, help_heading = "Side-band records")]
    show_text_poke_events: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    output: Output,
}

pub fn run(args: Args) -> CliResult {
    if let Some(script) = &args.script {
        // perf's form: the positional arguments are the script's.
        let input = args.input.as_deref().unwrap_or(Path::new("perf.data"));
        let script_args: Vec<OsString> = (args.file.iter().map(|f| f.clone().into_os_string()))
            .chain(args.script_args.iter().cloned())
            .collect();
        return python::run(script, input, &script_args, &args.symbols);
    }
    if let Some(extra) = args.script_args.first() {
        return Err(CliError::usage(format!(
            "unexpected argument {:?}: arguments after FILE are a script's (-s SCRIPT.py)",
            extra
        )));
    }
    if args.file.is_some() && args.input.is_some() {
        return Err(CliError::usage(
            "FILE and -i FILE both given: one recording at a time",
        ));
    }
    let mut fields = FieldSpec::default();
    for f in &args.fields {
        fields.apply(f)?;
    }
    let opts = ScriptOptions {
        fields,
        hide_call_graph: args.hide_call_graph,
        max_stack: args.symbols.max_stack,
        inline: !args.no_inline,
        full_source_path: args.full_source_path,
        time: TimeFormat {
            ns: args.ns,
            reltime: args.filter.reltime,
            deltatime: args.deltatime,
        },
        show: ShowEvents {
            task: args.show_task_events,
            mmap: args.show_mmap_events,
            switch: args.show_switch_events,
            namespace: args.show_namespace_events,
            lost: args.show_lost_events,
            round: args.show_round_events,
            bpf: args.show_bpf_events,
            cgroup: args.show_cgroup_events,
            text_poke: args.show_text_poke_events,
        },
    };
    for w in &opts.fields.warnings {
        eprintln!("{w}");
    }
    let given = args
        .file
        .as_deref()
        .or(args.input.as_deref())
        .unwrap_or(Path::new("perf.data"));
    // A pipe stream is kept in a temporary file while it is read (the replay maps its
    // input).
    let spooled;
    let path = if given == Path::new("-") {
        spooled = spool_stdin()?;
        spooled.path()
    } else {
        given
    };
    // DWARF is read only where a frame's inlined functions or source line are printed.
    let mut options = args.symbols.options(true);
    options.filter = args.filter.filter()?;
    let mut out = args.output.open()?;
    if args.header || args.header_only {
        write_header(&mut out, path, args.show_info, !args.header_only)
            .map_err(|e| rename_stdin(e, given, path))?;
        if args.header_only {
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let notes = analyze_then_exit(path, &options, None, |analyzer| {
        script::script(analyzer, &opts, &mut out).at(path)
    })
    .map_err(|e| rename_stdin(e, given, path))?;
    out.finish()?;
    for n in notes {
        eprintln!("perfdata: {}: note: {n}", given.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// perf's header block (`# ========` … `#`); `pipe_features`: a pipe's HEADER_FEATURE
/// records after it, as `--header` prints them (`--header-only` does not).
fn write_header(
    out: &mut impl Write,
    path: &Path,
    show_full_info: bool,
    pipe_features: bool,
) -> Result<(), CliError> {
    let recording = crate::input::open(path)?;
    let data = recording.data().at(path)?;
    let mut opts = perfdata::header_text::HeaderTextOptions::for_recording(&recording).at(path)?;
    opts.show_full_info = show_full_info;
    opts.pipe_features = pipe_features;
    perfdata::header_text::write(&data, &opts, out).at(path)?;
    Ok(())
}

/// Standard input copied into an unnamed temporary file.
fn spool_stdin() -> Result<tempfile::NamedTempFile, CliError> {
    let stdin = Path::new("<stdin>");
    let mut tmp = tempfile::NamedTempFile::new().at(stdin)?;
    std::io::copy(&mut std::io::stdin().lock(), tmp.as_file_mut()).at(stdin)?;
    Ok(tmp)
}

/// Errors about a spooled pipe name standard input, not the temporary file.
fn rename_stdin(e: CliError, given: &Path, path: &Path) -> CliError {
    if given == path {
        return e;
    }
    match e {
        CliError::Analysis {
            path: Some(_),
            error,
        } => CliError::Analysis {
            path: Some(PathBuf::from("<stdin>")),
            error,
        },
        e => e,
    }
}
