//! Where symbols come from and how stacks are put together: the options every analysis
//! command shares.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::ValueHint;
use perfdata_analysis::stack::unwind::CallGraph;
use perfdata_analysis::{AnalyzerOptions, StackOptions};
use std::path::PathBuf;

/// Where symbols come from (shared by every analysis command).
#[derive(clap::Args, Debug, Clone)]
pub struct SymbolArgs {
    /// Kernel symbols from this kallsyms file (default: the build-id cache's copy, or this
    /// machine's /proc/kallsyms when the recording comes from the running kernel).
    #[arg(long, value_name = "FILE", help_heading = SYMBOLS)]
    pub kallsyms: Option<PathBuf>,
    /// Kernel symbols from this vmlinux image.
    #[arg(short = 'k', long, value_name = "FILE", help_heading = SYMBOLS)]
    pub vmlinux: Option<PathBuf>,
    /// Read objects from this `perf archive` tarball (`perf.data.tar.bz2`; also zstd,
    /// gzip or plain tar), in place, by build id; searched after the recording's own
    /// `FILE.debug/` cache and before perf's (`~/.debug`). Repeatable.
    #[arg(long = "symbols-from", value_name = "ARCHIVE", value_parser = existing(false),
          value_hint = ValueHint::FilePath, help_heading = SYMBOLS)]
    pub symbols_from: Vec<PathBuf>,
    /// The recording machine's root file system, copied here (as perf's --symfs):
    /// `/usr/lib/libc.so.6` is looked up as `DIR/usr/lib/libc.so.6`, debug files under
    /// `DIR/usr/lib/debug`.
    #[arg(long, value_name = "DIR", value_parser = existing(true),
          value_hint = ValueHint::DirPath, help_heading = SYMBOLS)]
    pub symfs: Option<PathBuf>,
    /// A directory of separate debug files, searched before `/usr/lib/debug` (as gdb's):
    /// `DIR/.build-id/xx/rest.debug` and `DIR/PATH.debug`. Repeatable.
    #[arg(long = "debug-file-directory", value_name = "DIR", value_parser = existing(true),
          value_hint = ValueHint::DirPath, help_heading = SYMBOLS)]
    pub debug_file_directory: Vec<PathBuf>,
    /// Name JIT code from this jitdump file (`jit-PID.dump`, as `node --perf-prof` or the
    /// JVM's perf agent write it). Those the recording maps are read without it, from
    /// where they were written or from beside the recording. Repeatable.
    #[arg(long = "jitdump", value_name = "FILE", value_parser = existing(false),
          value_hint = ValueHint::FilePath, help_heading = SYMBOLS)]
    pub jitdump: Vec<PathBuf>,
    /// Do not read symbol files: addresses only (and no unwind tables: a recording made
    /// with `perf record --call-graph dwarf` then unwinds by frame pointers only).
    #[arg(long, help_heading = SYMBOLS)]
    pub no_symbols: bool,
    /// Where user stacks come from: `fp` the recorded callchain; `dwarf` unwinding each
    /// sample's registers and stack copy (`perf record --call-graph dwarf`) with the
    /// objects' CFI; `auto` unwinding where a sample carries them and its callchain has no
    /// user part.
    #[arg(
        long = "stacks",
        value_name = "fp|dwarf|auto",
        default_value = "auto",
        value_parser = PossibleValuesParser::new(["fp", "dwarf", "auto"])
            .try_map(|s| s.parse::<CallGraph>()),
        hide_possible_values = true,
        help_heading = STACKS
    )]
    pub stacks: CallGraph,
    /// At most this many frames unwound per sample (perf's --max-stack); a deeper stack
    /// ends with a `[truncated]` frame.
    #[arg(long, value_name = "N", default_value_t = 127, help_heading = STACKS)]
    pub max_stack: usize,
}

/// The help heading of the options that say where symbols come from.
const SYMBOLS: &str = "Symbols";
/// The help heading of the options that say how stacks are put together.
pub const STACKS: &str = "Stacks";

/// The environment variables the symbol search reads (`perfdata_analysis`'s
/// `symbols::sources`), for the help of the commands that take [`SymbolArgs`].
pub(crate) const ENVIRONMENT: &str = "Environment:
  PERF_BUILDID_DIR       perf's build-id cache, searched by build id (default: ~/.debug)
  DEBUGINFOD_URLS        debuginfod servers (space-separated) asked for the objects found
                         nowhere else; unset or empty: none is asked
  DEBUGINFOD_CACHE_PATH  where their files are kept (default:
                         $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client)
  DEBUGINFOD_TIMEOUT     seconds a server may go without sending data (default: 90)
  DEBUGINFOD_MAXTIME     seconds one download may take in all (default: no limit)
  HOME, XDG_CACHE_HOME   the defaults above";

/// The text after the options of a command that takes [`SymbolArgs`]: its `examples`,
/// then the environment variables it reads (the symbol search's, then `more`: lines of
/// the same layout).
pub fn after_help(examples: &str, more: &[&str]) -> String {
    let mut text = format!("{examples}\n\n{ENVIRONMENT}");
    for line in more {
        text.push_str("\n  ");
        text.push_str(line);
    }
    text
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
                call_graph: self.stacks,
                max_unwound: self.max_stack,
            },
        }
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
