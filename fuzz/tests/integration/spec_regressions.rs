//! Replays the `spec_language` fuzz target's body on stable: every committed input
//! (`fuzz/regressions/spec_language/`) and the real spec files (its seeds).

use std::path::{Path, PathBuf};

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut v: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

#[test]
fn spec_language() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let regressions = files_in(&root.join("fuzz/regressions/spec_language"));
    for f in &regressions {
        let bytes = std::fs::read(f).unwrap();
        let caught =
            std::panic::catch_unwind(|| perfdata_fuzz::spec_language::spec_language(&bytes));
        assert!(caught.is_ok(), "{} fails", f.display());
    }
    println!("{} regression input(s) replayed", regressions.len());
    // The seeds: each real spec file alone (mode 0: names unresolved, diagnostics) and
    // after 00_common.pds (mode 1: the real spec's own files parse).
    for f in files_in(&root.join("spec/perf_data")) {
        let text = std::fs::read(&f).unwrap();
        let alone = perfdata_fuzz::spec_language::spec_language(&[&[0u8][..], &text].concat());
        let name = f.file_name().unwrap().to_str().unwrap();
        if name != "00_common.pds" {
            assert!(!alone.is_empty(), "{name} alone resolves?");
        }
    }
}
