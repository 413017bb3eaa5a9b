//! The perfdata spec language: `.pds` files declaring the byte layouts of perf.data.
//!
//! [`load_dir`] / [`load_sources`] parse ([`parse`]) and validate ([`validate`]) a spec into
//! the typed [`ir`], or return [`Diagnostics`] that render like rustc errors. The language
//! is described in `spec/SYNTAX.md`.

pub mod ast;
pub mod diag;
pub mod ir;
pub mod layout;
pub mod names;
pub mod parse;
pub mod validate;

use std::path::Path;

pub use diag::{Diagnostic, Diagnostics};

use diag::SourceMap;

/// Loads every `*.pds` file of `dir`, in file-name order, as one spec named after the
/// directory (e.g. `spec/perf_data/` gives `perf_data`).
pub fn load_dir(dir: &Path) -> Result<ir::Spec, Diagnostics> {
    load_dir_with(dir, &[])
}

/// The `.pds` files of a spec directory, sorted by name (the order they are loaded in).
pub fn spec_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Diagnostics> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Diagnostics::io(&shown, format!("cannot read directory `{shown}`: {e}")))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Diagnostics::io(&shown, format!("cannot read `{shown}`: {e}")))?;
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "pds") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Diagnostics::io(
            &shown,
            format!("no `.pds` files in `{shown}`"),
        ));
    }
    Ok(files)
}

/// [`load_dir`] plus in-memory `(file name, text)` sources after the directory's files
/// (what `spec!(dir = "…", extra = "…")` compiles).
pub fn load_dir_with(dir: &Path, extra: &[(String, String)]) -> Result<ir::Spec, Diagnostics> {
    let mut sources = Vec::new();
    for path in spec_files(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            let shown = path.display().to_string();
            Diagnostics::io(&shown, format!("cannot read `{shown}`: {e}"))
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        sources.push((path.display().to_string(), name, text));
    }
    sources.extend(
        extra
            .iter()
            .map(|(file, text)| (file.clone(), file.clone(), text.clone())),
    );
    let spec_name = match dir.file_name() {
        Some(n) => n.to_string_lossy().into_owned(),
        None => std::fs::canonicalize(dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "spec".to_string()),
    };
    load(&spec_name, &sources)
}

/// Loads a spec from in-memory `(file name, text)` pairs, in the order given.
pub fn load_sources(name: &str, sources: &[(String, String)]) -> Result<ir::Spec, Diagnostics> {
    let sources: Vec<(String, String, String)> = sources
        .iter()
        .map(|(file, text)| (file.clone(), file.clone(), text.clone()))
        .collect();
    load(name, &sources)
}

/// `sources`: (name shown in diagnostics, name recorded in IR spans, text).
fn load(name: &str, sources: &[(String, String, String)]) -> Result<ir::Spec, Diagnostics> {
    let map = SourceMap::new(
        sources
            .iter()
            .map(|(shown, _, text)| (shown.as_str(), text.as_str()))
            .collect(),
    );
    let mut files = Vec::new();
    let mut reports = Vec::new();
    for (index, (_, _, text)) in sources.iter().enumerate() {
        match parse::parse_file(index, text) {
            Ok(file) => files.push(file),
            Err(report) => reports.push(report),
        }
    }
    if !reports.is_empty() {
        return Err(map.diagnostics(reports));
    }
    let ir_names: Vec<String> = sources.iter().map(|(_, n, _)| n.clone()).collect();
    validate::validate(name, &files, &map, &ir_names).map_err(|reports| map.diagnostics(reports))
}
