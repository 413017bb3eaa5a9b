//! Where symbols come from: the options every analysis command shares.

use perfdata_analysis::SymbolOptions;
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
    /// Do not read symbol files: addresses only.
    #[arg(long)]
    pub no_symbols: bool,
}

impl SymbolArgs {
    /// The analysis options; `lines`: read DWARF line tables (source lines, inline frames).
    pub fn options(&self, lines: bool) -> SymbolOptions {
        SymbolOptions {
            kallsyms: self.kallsyms.clone(),
            vmlinux: self.vmlinux.clone(),
            lines,
            no_symbols: self.no_symbols,
            build_id_dir: None,
        }
    }
}
