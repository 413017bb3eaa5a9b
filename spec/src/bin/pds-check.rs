//! `pds-check DIR [--ir]`: loads a spec directory and prints its diagnostics (exit 1), or a
//! one-line summary of the IR (exit 0). With `--ir`, prints the IR as JSON instead.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut dir = None;
    let mut print_ir = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--ir" => print_ir = true,
            "-h" | "--help" => {
                println!("usage: pds-check DIR [--ir]");
                return ExitCode::SUCCESS;
            }
            _ if dir.is_none() => dir = Some(PathBuf::from(arg)),
            _ => {
                eprintln!("usage: pds-check DIR [--ir]");
                return ExitCode::from(2);
            }
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: pds-check DIR [--ir]");
        return ExitCode::from(2);
    };
    match spec::load_dir(&dir) {
        Err(diagnostics) => {
            eprintln!("{diagnostics}\n");
            let n = diagnostics.len();
            eprintln!(
                "error: could not load `{}` due to {n} error{}",
                dir.display(),
                if n == 1 { "" } else { "s" }
            );
            ExitCode::FAILURE
        }
        Ok(ir) if print_ir => match serde_json::to_string_pretty(&ir) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: cannot serialize the IR: {e}");
                ExitCode::FAILURE
            }
        },
        Ok(ir) => {
            let plain = ir
                .structs
                .iter()
                .filter(|s| matches!(s.kind, spec::ir::StructKind::Plain))
                .count();
            println!(
                "{}: ok: {} structs, {} records, {} features, {} enums, {} flags, {} bitfields, \
                 {} consts, {} context fields",
                ir.name,
                plain,
                ir.records().count(),
                ir.features().count(),
                ir.enums.len(),
                ir.flags.len(),
                ir.bitfields.len(),
                ir.consts.len(),
                ir.context.fields.len()
            );
            ExitCode::SUCCESS
        }
    }
}
