//! `perfdata annotate` against the `perf annotate --stdio --no-source` text stored for a
//! committed fixture (`conformance/fixtures/perf-output/plain.annotate.txt`): every
//! instruction's address and percentage, and its text, on a machine without perf. The
//! code is read from the recorded programs' files (`sh`, `ls`, libc): where this machine
//! has other builds of them (other build ids), the test says so and skips.

use conformance::annotate::{compare, ours, parse};
use perfdata_analysis::analyses::annotate::AnnotateOptions;
use perfdata_test_support::workspace;

#[test]
fn plain_annotates_as_perf_did() {
    let root = workspace();
    let fixture = root.join("conformance/fixtures/plain.data");
    let stored = std::fs::read_to_string(conformance::oracle_dir(&root).join("plain.annotate.txt"))
        .expect("the stored perf annotate text");
    let (mark, theirs) = stored.split_once('\n').unwrap();
    assert_eq!(mark, "#conformance: perf annotate --stdio --no-source");
    let theirs = parse(theirs);
    let dir = tempfile::tempdir().unwrap();
    let ours = parse(
        &ours(
            &fixture,
            dir.path(),
            &AnnotateOptions::default(),
            &Default::default(),
        )
        .unwrap(),
    );
    let c = compare(&theirs, &ours);
    if ours.is_empty() || (c.functions == 0 && !theirs.is_empty()) {
        eprintln!(
            "SKIP: the programs recorded in plain.data are not on this machine with their \
             recorded build ids (no code to disassemble)"
        );
        return;
    }
    assert!(c.passes(), "{}", c.outcome());
    eprintln!("{}", c.outcome());
}
