//! Where symbols come from and how stacks are put together: the options every analysis
//! command shares.

use perfdata_analysis::stack::unwind::CallGraph;
use perfdata_analysis::{AnalyzerOptions, StackOptions};
use std::path::PathBuf;

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
    /// Read objects from this `perf archive` tarball (`perf.data.tar.bz2`; also zstd,
    /// gzip or plain tar), in place, by build id; searched after the recording's own
    /// `FILE.debug/` cache and before perf's (`~/.debug`). Repeatable.
    #[arg(long = "symbols-from", value_name = "ARCHIVE", value_parser = existing(false))]
    pub symbols_from: Vec<PathBuf>,
    /// The recording machine's root file system, copied here (as perf's --symfs):
    /// `/usr/lib/libc.so.6` is looked up as `DIR/usr/lib/libc.so.6`, debug files under
    /// `DIR/usr/lib/debug`.
    #[arg(long, value_name = "DIR", value_parser = existing(true))]
    pub symfs: Option<PathBuf>,
    /// A directory of separate debug files, searched before `/usr/lib/debug` (as gdb's):
    /// `DIR/.build-id/xx/rest.debug` and `DIR/PATH.debug`. Repeatable.
    #[arg(long = "debug-file-directory", value_name = "DIR", value_parser = existing(true))]
    pub debug_file_directory: Vec<PathBuf>,
    /// Name JIT code from this jitdump file (`jit-PID.dump`, as `node --perf-prof` or the
    /// JVM's perf agent write it). Those the recording maps are read without it, from
    /// where they were written or from beside the recording. Repeatable.
    #[arg(long = "jitdump", value_name = "FILE", value_parser = existing(false))]
    pub jitdump: Vec<PathBuf>,
    /// Do not read symbol files: addresses only (and no unwind tables: a
    /// `--call-graph dwarf` recording then unwinds by frame pointers only).
    #[arg(long)]
    pub no_symbols: bool,
    /// Where user stacks come from: `fp` the recorded callchain; `dwarf` unwinding each
    /// sample's registers and stack copy (`perf record --call-graph dwarf`) with the
    /// objects' CFI; `auto` unwinding where a sample carries them and its callchain has no
    /// user part.
    #[arg(
        long = "call-graph",
        value_name = "fp|dwarf|auto",
        default_value = "auto"
    )]
    pub call_graph: CallGraph,
    /// At most this many frames unwound per sample (perf's --max-stack); a deeper stack
    /// ends with a `[truncated]` frame.
    #[arg(long, value_name = "N", default_value_t = 127)]
    pub max_stack: usize,
}

impl SymbolArgs {
    /// The analysis options; `lines`: read DWARF line tables (source lines, inline frames).
    pub fn options(&self, lines: bool) -> AnalyzerOptions {
        AnalyzerOptions {
            kallsyms: self.kallsyms.clone(),
            vmlinux: self.vmlinux.clone(),
            lines,
            no_symbols: self.no_symbols,
            build_id_dir: None,
            symbols_from: self.symbols_from.clone(),
            symfs: self.symfs.clone(),
            debug_file_dirs: self.debug_file_directory.clone(),
            filter: Default::default(),
            jitdumps: self.jitdump.clone(),
            stream: None,
            byte_range: None,
            stacks: StackOptions {
                call_graph: self.call_graph,
                max_unwound: self.max_stack,
            },
        }
    }
}

/// Prints the analyzer's notes (a jitdump not found or not used) on stderr.
pub fn print_notes(path: &std::path::Path, analyzer: &perfdata_analysis::Analyzer<'_>) {
    for n in analyzer.notes() {
        eprintln!("perfdata: {}: note: {n}", path.display());
    }
}

/// A path argument that must name an existing directory (`dir`) or file, so that a
/// misspelt symbol source is an error rather than a report without symbols.
fn existing(dir: bool) -> impl Fn(&str) -> Result<PathBuf, String> + Clone {
    move |s: &str| {
        let p = PathBuf::from(s);
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() == dir => Ok(p),
            Ok(_) if dir => Err(format!("{s} is not a directory")),
            Ok(_) => Err(format!("{s} is a directory, not a file")),
            Err(e) => Err(format!("{s}: {e}")),
        }
    }
}
