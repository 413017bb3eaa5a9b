//! The body of the `spec_language` fuzz target, as a library function so that `cargo
//! test` replays the committed inputs on stable (`tests/spec_regressions.rs`).

use spec::load_sources;

/// The spec's shared definitions, so that arbitrary declarations can name real types.
const COMMON: &str = include_str!("../../spec/perf_data/00_common.pds");

/// Arbitrary bytes as spec text — alone (first byte even) or after the real
/// `00_common.pds` (odd) — through the parser and validator: a spec or diagnostics,
/// rendered; never a panic or a hang. Returns the rendered diagnostics.
pub fn spec_language(input: &[u8]) -> String {
    let Some((&mode, text)) = input.split_first() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(text).into_owned();
    let mut sources = vec![];
    if mode % 2 == 1 {
        sources.push(("00_common.pds".to_string(), COMMON.to_string()));
    }
    sources.push(("fuzz.pds".to_string(), text));
    match load_sources("fuzz", &sources) {
        Ok(_) => String::new(),
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty(), "an error without a diagnostic");
            diagnostics.to_string()
        }
    }
}
