//! The crate's folders are its layers (the crate doc's map), checked from the source's
//! `crate::` and `super::` paths: a layer uses only the layers below it; an analysis or
//! an export uses no other analysis or export, only the shared module of its own layer
//! (`analyses::weights`; `export::sampled`, `export::tables` and the tracepoint tables
//! `export::tables` builds, `export::tracepoints`; `export::gzip`, compression beside
//! the writer).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, lowest first; a layer may use those before it. The last three are peers.
const LAYERS: &[&[&str]] = &[
    &["error", "sample"],
    &["stack"],
    &["symbols"],
    &["machine"],
    &["replay"],
    &["analyses", "export", "rewrite"],
];

/// What each analysis or export may use of its own layer besides itself.
const SHARED: &[(&str, &[&str])] = &[
    ("analyses", &["weights"]),
    ("export", &["sampled", "tables", "tracepoints", "gzip"]),
    ("rewrite", &[]),
];

/// The layer (module folder or file) a name the crate root re-exports comes from.
fn root_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "AnalysisError" | "BadOption" => "error",
        "SampleInfo" => "sample",
        "Stack" | "StackOptions" => "stack",
        "DsoId" | "Dsos" | "Frame" | "SymbolSources" | "TRUNCATED" => "symbols",
        "Machine" | "SideEvent" => "machine",
        "Analyzer" | "AnalyzerOptions" | "Producer" | "Progress" | "Replayed" | "RunOptions"
        | "filter" | "partition" => "replay",
        _ => return None,
    })
}

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&layer))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's module path below the crate root (`analyses/report/keys.rs` →
/// `[analyses, report, keys]`; a `mod.rs` is its folder's module).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments (doc links name other layers freely) and without
/// its `#[cfg(test)]` tests (a test may build what it tests from any layer).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a piece of code names: `crate::a::b`, `super::c`, and each branch
/// of `use crate::{a, b::c}` trees, resolved to paths from the crate root.
fn paths(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let base: Vec<String> = if start == "crate::" {
                vec![]
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            expand(&code[from..], base, &mut out);
        }
    }
    out
}

/// The paths of one use tree or path starting at `rest`, after `base`.
fn expand(rest: &str, mut base: Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    let mut s = rest;
    loop {
        if let Some(inner) = s.strip_prefix('{') {
            // A group: split its top-level items.
            let (mut depth, mut item) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        expand(inner[item..i].trim(), base.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(inner[item..i].trim(), base.clone(), out);
                        item = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        if end == 0 {
            break;
        }
        base.push(s[..end].to_string());
        match s[end..].strip_prefix("::") {
            Some(next) => s = next,
            None => break,
        }
    }
    if !base.is_empty() {
        out.insert(base);
    }
}

#[test]
fn layers_use_only_the_layers_below_them_and_peers_not_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    sources(&src, &mut files);
    files.sort();
    let mut wrong = vec![];
    let mut checked = 0;
    for file in &files {
        let module = module_of(&src, file);
        let Some(from) = rank(&module[0]) else {
            // The crate root: its re-exports are the map itself.
            assert_eq!(
                module,
                ["lib"],
                "a file outside every layer: {}",
                file.display()
            );
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for path in paths(&code(&text), &module) {
            let layer = match rank(&path[0]) {
                Some(_) => path[0].as_str(),
                None => match root_name(&path[0]) {
                    Some(l) => l,
                    // `crate::foo!` macros, `super::*` in a module's own tests.
                    None => continue,
                },
            };
            checked += 1;
            let to = rank(layer).unwrap();
            let peer_layers = to == LAYERS.len() - 1 && from == to;
            let ok = if peer_layers {
                // An analysis or export: itself, or its layer's shared module.
                let shared = SHARED.iter().find(|(l, _)| *l == module[0]).unwrap().1;
                layer == module[0]
                    && (path.len() < 2
                        || module.get(1) == Some(&path[1])
                        || shared.contains(&path[1].as_str()))
            } else {
                to <= from
            };
            if !ok {
                wrong.push(format!(
                    "{} uses {}",
                    file.strip_prefix(&src).unwrap().display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: is the parser broken?"
    );
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_parser_finds_grouped_super_and_inline_paths() {
    let module: Vec<String> = ["analyses", "report", "keys"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let found = paths(
        "use crate::{a::b, c::{d, e}};\nlet x = super::f::g(1);\ncrate::h(2)",
        &module,
    );
    let want: BTreeSet<Vec<String>> = [
        vec!["a", "b"],
        vec!["c", "d"],
        vec!["c", "e"],
        vec!["analyses", "report", "f", "g"],
        vec!["h"],
    ]
    .into_iter()
    .map(|p| p.into_iter().map(String::from).collect())
    .collect();
    assert_eq!(found, want);
    // Comments and a module's tests are not code.
    assert_eq!(
        code("a // crate::x\n#[cfg(test)]\nmod tests {\n crate::y }"),
        "a "
    );
}
