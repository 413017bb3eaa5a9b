//! Helpers shared by the integration tests of every crate (each test binary includes
//! this file as its `common` module; each test uses a subset).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod simpleperf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A committed fixture recorded here with perf (`conformance/fixtures/NAME`).
pub fn fixture_path(name: &str) -> PathBuf {
    workspace().join("conformance/fixtures").join(name)
}

/// The committed fixture recordings (`conformance/fixtures/*.data`), sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(workspace().join("conformance/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.sort();
    assert!(v.len() >= 20, "fixtures missing");
    v
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap()
}

/// `../shared/corpus`, or `None` (with a message) when it is absent.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = workspace().parent().unwrap().join("shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIP external corpus: {} is absent", dir.display());
        None
    }
}

/// Every perf.data file to convert: the committed fixtures (the `--threads` directory's
/// `data`), then the external corpus when present (without MANIFEST.md and the gzip file
/// that is not a perf.data file).
pub fn fixture_and_corpus_files() -> Vec<PathBuf> {
    let files_in = |dir: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && !p.extension().is_some_and(|e| e == "md" || e == "gz"))
            .collect();
        v.sort();
        v
    };
    let mut files = files_in(&workspace().join("conformance/fixtures"));
    files.push(workspace().join("conformance/fixtures/threads.data/data"));
    if let Some(corpus) = corpus_dir() {
        files.extend(files_in(&corpus));
    }
    files
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Paths of the non-canonical tails in a decoded value: bytes after the last known field
/// that are not the canonical padding. In a file written by perf there should be none —
/// a tail there means the spec does not know a field (or misplaces one). An empty tail
/// only says the producer did not pad (perf before ~6.14 wrote HEADER_FEATURE records
/// unpadded): no unknown bytes.
pub fn tails(v: &impl serde::Serialize) -> Vec<String> {
    fn walk(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if k == "tail" && x.as_str() != Some("") {
                        out.push(format!("{path}.tail = {x}"));
                    } else if k != "tail" {
                        walk(x, &format!("{path}.{k}"), out);
                    }
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    walk(&serde_json::to_value(v).unwrap(), "", &mut out);
    out
}
