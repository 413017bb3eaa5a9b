//! `cargo test` fails when the committed generated code or docs drift from the spec.

#[test]
fn generated_files_are_fresh() {
    let root = xtask::workspace_root();
    let stale = xtask::stale_files(&root).expect("generation failed");
    assert!(
        stale.is_empty(),
        "stale generated files (run `cargo xtask gen` and commit): {stale:?}"
    );
}
