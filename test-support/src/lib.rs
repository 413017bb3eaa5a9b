//! What the workspace's tests share, as a dev-dependency of each crate that uses it:
//! * where the test data is: the recordings made here with perf (`conformance/fixtures/`),
//!   the shipped sample (`samples/`) and the external corpus (`../shared/corpus`, absent
//!   on most machines: a test that reads it says so and goes on without it);
//! * [`tools`]: the system tools a test needs (perf, gcc, `gcc -m32`, Chromium, …),
//!   probed on the `PATH`; where one is missing the test prints one `SKIP` line and
//!   passes, or fails under `PERFDATA_TOOLS_REQUIRED=1` (CI);
//! * [`simpleperf`]: simpleperf recordings crafted from a perf fixture;
//! * [`corpus_derived`]: what may not be copied from the external corpus, and fuzz
//!   findings kept as edits of a corpus file;
//! * [`hex`] and [`tails`], for the round-trip tests;
//! * [`XorShift`], the same pseudo-random numbers on every run, for generated inputs.

use std::path::{Path, PathBuf};

pub mod aarch64;
pub mod corpus_derived;
pub mod simpleperf;
pub mod tools;

pub use tools::{require_tools, require_tools_for, skip, Tool};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support/ sits in the workspace root")
        .to_path_buf()
}

/// `conformance/fixtures/`: the recordings made with the system perf, committed.
pub fn fixtures_dir() -> PathBuf {
    workspace().join("conformance/fixtures")
}

/// A committed fixture (`conformance/fixtures/NAME`).
pub fn fixture_path(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// The bytes of a committed fixture.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The committed fixture recordings (`conformance/fixtures/*.data`: files, and the
/// `perf record --threads` directory `threads.data`), sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut v: Vec<PathBuf> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 20,
        "only {} fixtures in {}",
        v.len(),
        fixtures_dir().display()
    );
    v
}

/// A file of the shipped sample (`samples/NAME`: `wordfreq.data` and its build-id cache
/// `wordfreq.data.debug`).
pub fn sample_path(name: &str) -> PathBuf {
    workspace().join("samples").join(name)
}

/// `../shared/corpus` (real recordings from other machines, never committed), or `None`
/// after a `SKIP` line saying that the test goes on without it.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = workspace()
        .parent()
        .expect("the workspace has a parent directory")
        .join("shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!(
            "the external corpus {} is absent (its files are not read)",
            dir.display()
        ));
        None
    }
}

/// A file of the external corpus, or `None` (after a `SKIP` line) when the corpus or the
/// file is absent.
pub fn corpus_file(name: &str) -> Option<PathBuf> {
    let path = corpus_dir()?.join(name);
    if path.is_file() {
        Some(path)
    } else {
        skip(&format!("{} is absent", path.display()));
        None
    }
}

/// The files in `dir`, sorted (not its subdirectories).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut v: Vec<PathBuf> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Every perf.data file to convert: the committed fixtures (the `--threads` directory's
/// `data`), then the external corpus when present (without MANIFEST.md and the gzip file
/// that is not a perf.data file).
pub fn fixture_and_corpus_files() -> Vec<PathBuf> {
    let perf_data = |p: &PathBuf| !p.extension().is_some_and(|e| e == "md" || e == "gz");
    let mut files: Vec<PathBuf> = files_in(&fixtures_dir())
        .into_iter()
        .filter(perf_data)
        .collect();
    files.push(fixture_path("threads.data/data"));
    if let Some(corpus) = corpus_dir() {
        files.extend(files_in(&corpus).into_iter().filter(perf_data));
    }
    files
}

/// Bytes as lowercase hex, for assertions that show where two encodings differ.
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
    walk(
        &serde_json::to_value(v).expect("a decoded value serializes"),
        "",
        &mut out,
    );
    out
}

/// A xorshift generator: the same pseudo-random numbers on every run and machine, for
/// tests that generate their inputs (no dependency, no seed to record).
pub struct XorShift(u64);

impl Default for XorShift {
    fn default() -> Self {
        XorShift(0x9e37_79b9_7f4a_7c15)
    }
}

impl XorShift {
    /// A generator from `seed` (not zero: zero stays zero).
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "a xorshift seed of 0 gives only zeros");
        XorShift(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::XorShift;

    /// Tests generate their inputs from this sequence: it must not change under them.
    #[test]
    fn the_sequence_is_xorshift64_13_7_17() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rng = XorShift::new(x);
        for _ in 0..100 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            assert_eq!(rng.next_u64(), x);
        }
        assert_eq!(
            XorShift::default().next_u64(),
            XorShift::new(0x9e37_79b9_7f4a_7c15).next_u64()
        );
    }
}
