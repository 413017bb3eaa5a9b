//! `perfdata script -s SCRIPT.py [ARGS]`: a script written for perf's Python scripting
//! API, run by the host in the `perfdata` Python package (`perfdata.perf_script`).
//!
//! The host lives in the Python package, not in this binary: a script runs in the
//! user's own Python 3 (with the modules they installed), the binary links no
//! libpython of one version, and `python3 -m perfdata.perf_script` runs the same host
//! without the CLI. This command finds the interpreter and replaces itself with it.

use crate::error::{CliError, CliResult};
use crate::symbols::SymbolArgs;
use perfdata_analysis::stack::unwind::CallGraph;
use std::ffi::OsString;
use std::path::Path;

/// Imports the host, or says in one line what to install.
const BOOTSTRAP: &str = "import sys\n\
try:\n    from perfdata.perf_script import main\n\
except ImportError as e:\n    \
sys.stderr.write('perfdata: script -s runs the script with the perfdata Python package, \
which this Python (%s) cannot import (%s): install it (pip install perfdata, or the wheel \
built from perfdata-python with maturin), or name another interpreter in PERFDATA_PYTHON\\n' \
% (sys.executable, e))\n    sys.exit(2)\n\
code = main()\nsys.stdout.flush()\nsys.exit(code)\n";

/// Runs `script` over `input` with `args` as its `sys.argv[1:]`; returns only on error
/// (on success this process becomes the interpreter and ends with the script's status).
pub fn run(script: &Path, input: &Path, args: &[OsString], symbols: &SymbolArgs) -> CliResult {
    let python = std::env::var_os("PERFDATA_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.arg("-c").arg(BOOTSTRAP).arg("-i").arg(input);
    let paths = [
        ("--kallsyms", &symbols.kallsyms),
        ("--vmlinux", &symbols.vmlinux),
        ("--symfs", &symbols.symfs),
    ];
    for (flag, p) in paths {
        if let Some(p) = p {
            cmd.arg(flag).arg(p);
        }
    }
    let lists = [
        ("--symbols-from", &symbols.symbols_from),
        ("--debug-file-directory", &symbols.debug_file_directory),
        ("--jitdump", &symbols.jitdump),
    ];
    for (flag, ps) in lists {
        for p in ps {
            cmd.arg(flag).arg(p);
        }
    }
    if symbols.no_symbols {
        cmd.arg("--no-symbols");
    }
    match symbols.stacks {
        CallGraph::Fp => {
            cmd.arg("--call-graph").arg("fp");
        }
        CallGraph::Dwarf => {
            cmd.arg("--call-graph").arg("dwarf");
        }
        CallGraph::Auto => {}
    }
    cmd.arg("--").arg(script).args(args);
    use std::os::unix::process::CommandExt;
    let e = cmd.exec();
    Err(if e.kind() == std::io::ErrorKind::NotFound {
        CliError::usage(format!(
            "script -s runs the script with Python 3, and {} was not found: install \
             python3 and the perfdata Python package, or name an interpreter in \
             PERFDATA_PYTHON",
            Path::new(&python).display()
        ))
    } else {
        CliError::Io {
            path: Some(python.into()),
            error: e,
        }
    })
}
