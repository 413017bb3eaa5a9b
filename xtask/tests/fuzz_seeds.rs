//! The committed minimised fuzz corpora (`fuzz/seeds/T.tar.gz`, written by `cargo xtask
//! fuzz --minimize`): one per target, within their stated budget, and readable archives.

use perfdata_test_support::{require_tools_for, tools};
use std::process::Command;
use xtask::fuzz::{SEEDS_BUDGET, TARGETS};

#[test]
fn every_target_has_its_minimised_corpus_within_the_budget() {
    let seeds = xtask::workspace_root().join("fuzz/seeds");
    let list = require_tools_for("listing the archives", &[tools::TAR]);
    let mut total = 0;
    for t in TARGETS {
        let archive = seeds.join(format!("{t}.tar.gz"));
        let len = std::fs::metadata(&archive)
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run `cargo xtask fuzz --minimize`)",
                    archive.display()
                )
            })
            .len();
        total += len;
        if !list {
            continue;
        }
        let listed = Command::new("tar")
            .arg("-tzf")
            .arg(&archive)
            .output()
            .unwrap();
        assert!(
            listed.status.success(),
            "{} does not list",
            archive.display()
        );
        let inputs = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter(|l| !l.ends_with('/'))
            .count();
        assert!(inputs > 0, "{}: no inputs", archive.display());
    }
    assert!(
        total <= SEEDS_BUDGET,
        "fuzz/seeds/ is {total} bytes, over its budget of {SEEDS_BUDGET}"
    );
}

/// Nothing under `fuzz/` holds a run of the external corpus's bytes: the corpus is never
/// copied into the repository (a finding mutated from a corpus file is kept as a
/// `.recipe`; `cargo xtask fuzz --minimize` and `--scrub` leave such inputs out of the
/// archives).
#[test]
fn no_seed_or_finding_holds_the_external_corpus() {
    let root = xtask::workspace_root();
    let Some(runs) = xtask::fuzz::corpus_runs(&root).unwrap() else {
        perfdata_test_support::skip("../shared/corpus is absent: nothing to compare with");
        return;
    };
    if !require_tools_for("unpacking the archives", &[tools::TAR]) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for t in TARGETS {
        let dir = scratch.path().join(t);
        std::fs::create_dir_all(&dir).unwrap();
        let archive = root.join("fuzz/seeds").join(format!("{t}.tar.gz"));
        let unpacked = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&dir)
            .status()
            .unwrap();
        assert!(unpacked.success(), "{} does not unpack", archive.display());
        let findings = root.join("fuzz/regressions").join(t);
        for dir in [dir, findings] {
            for f in std::fs::read_dir(&dir).into_iter().flatten() {
                let f = f.unwrap().path();
                if !f.is_file() {
                    continue;
                }
                let bytes = std::fs::read(&f).unwrap();
                if let Some(at) = runs.shared_run(&bytes) {
                    panic!(
                        "{}: bytes of ../shared/corpus at {at} (`cargo xtask fuzz --scrub`, or --as-recipe for a finding)",
                        f.display()
                    );
                }
                checked += 1;
            }
        }
    }
    println!("{checked} seeds and findings hold no run of the external corpus");
}
