//! The test spec's generated code is committed as perfdata/tests/fixtures_gen/test_spec.rs
//! (compiled and exercised by perfdata/tests/codegen_behaviour.rs). This test fails when
//! that file is stale; `UPDATE_GEN=1 cargo test -p codegen --test test_spec_fixture`
//! rewrites it.

use std::path::Path;

pub fn test_spec() -> spec::ir::Spec {
    let text = include_str!("test_spec.pds");
    match spec::load_sources(
        "test_spec",
        &[("test_spec.pds".to_string(), text.to_string())],
    ) {
        Ok(s) => s,
        Err(d) => panic!("the test spec does not load:\n{d}"),
    }
}

#[test]
fn generated_test_spec_is_fresh() {
    let generated = codegen::generate_rust(&test_spec());
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perfdata/tests/fixtures_gen/test_spec.rs");
    if std::env::var_os("UPDATE_GEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: rerun with UPDATE_GEN=1 cargo test -p codegen --test test_spec_fixture",
        path.display()
    );
}
