//! Where the files of a recorded object are looked for — one search order for its
//! symbols, its source lines and its unwind tables (the DSO registry asks here, then
//! reads symbols, DWARF and CFI from what it gets):
//!
//! 1. the recording's own build-id cache (`FILE.debug/` beside it);
//! 2. `perf archive` tarballs (`--symbols-from`), read in place;
//! 3. perf's build-id cache (`$PERF_BUILDID_DIR`, else `~/.debug`);
//! 4. debug-file directories: `--debug-file-directory` ones, then `/usr/lib/debug`
//!    (under `--symfs` when given): `DIR/PATH.debug`, `DIR/PATH`,
//!    `DIR/.build-id/xx/rest.debug`;
//! 5. the object's own path (under `--symfs` when given);
//! 6. debuginfod (`DEBUGINFOD_URLS`), by build id, when the above gave no symbols.
//!
//! Every file found is checked against the recorded build id by its reader; one whose
//! build id differs is passed over.

pub(crate) mod archive;
pub mod debuginfod;

use std::path::{Path, PathBuf};

/// Where symbols are looked for.
#[derive(Debug, Clone)]
pub struct SymbolSources {
    /// perf's build-id cache (`~/.debug`).
    pub build_id_cache: Option<PathBuf>,
    /// The recording's own build-id cache, `FILE.debug/` beside it (what `perf archive`
    /// packs, extracted there; the shipped samples come with one): looked in first.
    pub recording_cache: Option<PathBuf>,
    /// `perf archive` tarballs (`--symbols-from`), searched after the recording's cache.
    pub archives: Vec<PathBuf>,
    /// The target's root file system copied elsewhere (perf's `--symfs`): object paths
    /// and the system debug directory are looked up under it.
    pub symfs: Option<PathBuf>,
    /// Debug-file directories searched before the system's (`--debug-file-directory`).
    pub debug_dirs: Vec<PathBuf>,
    /// The system's debug-file root (`/usr/lib/debug`; under `symfs` when set).
    pub debug_root: PathBuf,
    /// Kernel symbols: a kallsyms file to use, if any (decided by the caller).
    pub kallsyms: Option<PathBuf>,
    /// A vmlinux ELF image for kernel symbols.
    pub vmlinux: Option<PathBuf>,
    /// Directory of JIT map files (`/tmp`).
    pub perf_map_dir: PathBuf,
    /// Ask debuginfod servers (`DEBUGINFOD_URLS`) for objects found nowhere else.
    pub debuginfod: bool,
    /// Read source lines (slower; needed for source files and `--inline`).
    pub lines: bool,
    /// Read symbol files at all (off: addresses only, whatever the machine has).
    pub read_files: bool,
}

impl Default for SymbolSources {
    fn default() -> Self {
        SymbolSources {
            recording_cache: None,
            build_id_cache: std::env::var_os("PERF_BUILDID_DIR")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".debug"))),
            archives: vec![],
            symfs: None,
            debug_dirs: vec![],
            debug_root: PathBuf::from("/usr/lib/debug"),
            kallsyms: None,
            vmlinux: None,
            perf_map_dir: PathBuf::from("/tmp"),
            debuginfod: true,
            lines: false,
            read_files: true,
        }
    }
}

/// A file that may hold an object's symbols or code, and what to call it.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// A path that opens it.
    pub path: PathBuf,
    /// Where it came from, for `perfdata info` (a path, or `ARCHIVE:MEMBER`).
    pub label: String,
}

impl Candidate {
    fn file(path: PathBuf) -> Self {
        Candidate {
            label: path.display().to_string(),
            path,
        }
    }
}

impl SymbolSources {
    /// A path of the target machine as it is found here: under `--symfs`, or as it is.
    pub(crate) fn target_path(&self, path: &str) -> PathBuf {
        match &self.symfs {
            Some(root) => root.join(path.trim_start_matches('/')),
            None => PathBuf::from(path),
        }
    }

    /// The debug-file directories, in search order.
    fn debug_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let system = match &self.symfs {
            Some(root) => root.join(
                self.debug_root
                    .strip_prefix("/")
                    .unwrap_or(&self.debug_root),
            ),
            None => self.debug_root.clone(),
        };
        self.debug_dirs
            .iter()
            .cloned()
            .chain(std::iter::once(system))
    }

    /// Build-id cache entries of `build_id` (`elf`, `debug`, `vdso`, `kallsyms`): the
    /// recording's cache, the archives, perf's cache, in that order.
    pub(crate) fn cached(
        &self,
        archives: &[archive::ArchiveObjects],
        build_id: &[u8],
        kinds: &[&str],
    ) -> Vec<Candidate> {
        let h = hex(build_id);
        let mut out = vec![];
        if h.len() <= 2 {
            return out;
        }
        let in_cache = |cache: &Path, out: &mut Vec<Candidate>| {
            let dir = cache.join(".build-id").join(&h[..2]).join(&h[2..]);
            for k in kinds {
                out.push(Candidate::file(dir.join(k)));
            }
        };
        if let Some(c) = &self.recording_cache {
            in_cache(c, &mut out);
        }
        for a in archives {
            for k in kinds {
                if let Some((path, label)) = a.get(build_id, k) {
                    out.push(Candidate { path, label });
                }
            }
        }
        if let Some(c) = &self.build_id_cache {
            in_cache(c, &mut out);
        }
        out
    }

    /// Every local file that may hold a user object's symbols or code, in search order
    /// (steps 1–5 of the module's list; existence is not checked).
    pub(crate) fn candidates(
        &self,
        archives: &[archive::ArchiveObjects],
        name: &str,
        build_id: Option<&[u8]>,
    ) -> Vec<Candidate> {
        let mut out = vec![];
        if let Some(id) = build_id {
            // perf record saves the vdso image it found in memory under this name.
            let kinds: &[&str] = if name == "[vdso]" {
                &["elf", "debug", "vdso"]
            } else {
                &["elf", "debug"]
            };
            out.extend(self.cached(archives, id, kinds));
        }
        let id_hex = build_id.map(hex).filter(|h| h.len() > 2);
        for dir in self.debug_dirs() {
            if name.starts_with('/') {
                let rel = name.trim_start_matches('/');
                out.push(Candidate::file(dir.join(format!("{rel}.debug"))));
                out.push(Candidate::file(dir.join(rel)));
            }
            if let Some(h) = &id_hex {
                out.push(Candidate::file(
                    dir.join(".build-id")
                        .join(&h[..2])
                        .join(format!("{}.debug", &h[2..])),
                ));
            }
        }
        if name.starts_with('/') {
            out.push(Candidate::file(self.target_path(name)));
        }
        out
    }

    /// Files that may be the kernel image of `build_id` and release `release`: debug
    /// directories by build id, then the usual places of a vmlinux under `--symfs`
    /// (or on this machine); existence and build id are not checked.
    pub(crate) fn vmlinux_candidates(
        &self,
        build_id: &[u8],
        release: Option<&str>,
    ) -> Vec<Candidate> {
        let h = hex(build_id);
        let mut out = vec![];
        for dir in self.debug_dirs() {
            if h.len() > 2 {
                out.push(Candidate::file(
                    dir.join(".build-id")
                        .join(&h[..2])
                        .join(format!("{}.debug", &h[2..])),
                ));
            }
        }
        if let Some(r) = release {
            for p in [
                format!("/boot/vmlinux-{r}"),
                format!("/usr/lib/debug/boot/vmlinux-{r}"),
                format!("/lib/modules/{r}/build/vmlinux"),
                format!("/usr/lib/debug/lib/modules/{r}/vmlinux"),
            ] {
                out.push(Candidate::file(self.target_path(&p)));
            }
        }
        out
    }
}

/// A recorded build id (20 bytes, zero-padded when shorter) against a file's.
pub fn same_build_id(recorded: &[u8], file: &[u8]) -> bool {
    recorded.len() >= file.len()
        && recorded[..file.len()] == *file
        && recorded[file.len()..].iter().all(|&b| b == 0)
        || recorded == file
}

/// Lowercase hexadecimal, as build-id cache paths spell build ids.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of a lowercase or uppercase hexadecimal string of even length.
pub(crate) fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() || !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}
