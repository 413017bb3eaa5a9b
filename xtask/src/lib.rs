//! Project automation: code generation from the spec and the man pages from the CLI's
//! definition (`cargo xtask gen [--check]`), and the benchmark suite (`cargo xtask
//! bench`, in [`mod@bench`]).
//!
//! Modelled on rust-analyzer's `xtask codegen`: generated files are committed, carry a
//! "do not edit" header, and `--check` (plus the `generated_files_are_fresh` test) fails
//! when they are stale.

pub mod bench;
#[cfg(feature = "fuzz")]
pub mod fuzz;
#[cfg(feature = "man")]
pub mod man;
#[cfg(feature = "proto")]
pub mod proto;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// One file that `gen` owns: where it goes and what it must contain.
pub struct Generated {
    pub path: PathBuf,
    pub contents: String,
}

/// The spec directories: every directory under `spec/` holding `.pds` files.
pub fn spec_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = vec![];
    for entry in std::fs::read_dir(root.join("spec")).context("reading spec/")? {
        let path = entry?.path();
        if path.is_dir() && has_pds(&path)? {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn has_pds(dir: &Path) -> Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        if entry?.path().extension().is_some_and(|e| e == "pds") {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The spec of constructs the real specs do not use, for the generator's behaviour tests.
const TEST_SPEC: &str = "codegen/tests/test_spec.pds";

/// Everything `cargo xtask gen` writes, computed in memory.
pub fn generate_all(root: &Path) -> Result<Vec<Generated>> {
    let mut out = vec![];
    let mut modules = vec![];
    for dir in spec_dirs(root)? {
        let spec = spec::load_dir(&dir).map_err(|d| anyhow::anyhow!("{d}"))?;
        let origin = format!("spec/{}/", spec.name);
        let rust = codegen::generate_rust(&spec, &origin).map_err(anyhow::Error::msg)?;
        out.push(Generated {
            path: root
                .join("perfdata/src/generated")
                .join(format!("{}.rs", spec.name)),
            contents: rust,
        });
        out.push(Generated {
            path: root.join("docs").join(docs_file_name(&spec.name)),
            contents: codegen::docs::generate_markdown(&spec),
        });
        modules.push(spec.name.clone());
    }
    let mut module_file = codegen::generated_header("spec/");
    module_file.push_str("//! Code generated from the specs in `spec/`.\n\n");
    for m in &modules {
        // perf.data is the crate itself; every other format is behind a feature of its
        // name (as `object` gates its formats).
        if m != "perf_data" {
            module_file.push_str(&format!("#[cfg(feature = \"{m}\")]\n"));
        }
        module_file.push_str(&format!("pub mod {m};\n"));
    }
    out.push(Generated {
        path: root.join("perfdata/src/generated/mod.rs"),
        contents: codegen::rustfmt(&module_file).map_err(anyhow::Error::msg)?,
    });
    // The codegen test spec, compiled and exercised by perfdata/tests/codegen_behaviour.rs:
    // generated like the others, so one freshness check covers it too.
    let fixture = root.join(TEST_SPEC);
    let spec = spec::load_sources(
        "test_spec",
        &[(TEST_SPEC.to_string(), std::fs::read_to_string(&fixture)?)],
    )
    .map_err(|d| anyhow::anyhow!("{d}"))?;
    out.push(Generated {
        path: root.join("perfdata/tests/fixtures_gen/test_spec.rs"),
        contents: codegen::generate_rust(&spec, TEST_SPEC).map_err(anyhow::Error::msg)?,
    });
    #[cfg(feature = "man")]
    for (name, contents) in man::pages()? {
        out.push(Generated {
            path: root.join(MAN_DIR).join(name),
            contents,
        });
    }
    Ok(out)
}

/// Where the man pages go; `gen` owns the directory (a page it does not write is stale:
/// a command that is gone).
const MAN_DIR: &str = "docs/man";

/// The files in the directories `gen` owns that it does not write (none when it writes
/// no man pages: a build without the `man` feature leaves them alone).
fn strays(root: &Path, generated: &[Generated]) -> Result<Vec<PathBuf>> {
    if !cfg!(feature = "man") {
        return Ok(vec![]);
    }
    let dir = root.join(MAN_DIR);
    let mut strays = vec![];
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    for entry in entries {
        let path = entry?.path();
        if !generated.iter().any(|g| g.path == path) {
            strays.push(path);
        }
    }
    strays.sort();
    Ok(strays)
}

/// The format reference of a spec: `docs/<name>-format.md`, except where the format has
/// an established name of its own.
fn docs_file_name(spec_name: &str) -> String {
    match spec_name {
        // "CPU profile" is what gperftools calls the format (its heap profiles differ).
        "gperftools" => "gperftools-cpu-profile.md".to_string(),
        _ => format!("{}-format.md", spec_name.replace('_', "-")),
    }
}

/// The generated files whose committed contents differ from what their source gives,
/// and the files `gen` would remove.
pub fn stale_files(root: &Path) -> Result<Vec<PathBuf>> {
    let generated = generate_all(root)?;
    let mut stale = vec![];
    for g in &generated {
        let current = std::fs::read_to_string(&g.path).unwrap_or_default();
        if current != g.contents {
            stale.push(g.path.clone());
        }
    }
    stale.extend(strays(root, &generated)?);
    Ok(stale)
}

/// Writes every generated file whose contents changed and removes the strays; returns
/// the paths written or removed.
pub fn write_all(root: &Path) -> Result<Vec<PathBuf>> {
    let generated = generate_all(root)?;
    let mut written = vec![];
    for path in strays(root, &generated)? {
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        written.push(path);
    }
    for g in generated {
        let current = std::fs::read_to_string(&g.path).ok();
        if current.as_deref() != Some(g.contents.as_str()) {
            if let Some(parent) = g.path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&g.path, &g.contents)
                .with_context(|| format!("writing {}", g.path.display()))?;
            written.push(g.path);
        }
    }
    Ok(written)
}
