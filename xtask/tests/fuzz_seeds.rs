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
