//! A file for the input of the targets whose code under test opens recordings by path.

use std::path::{Path, PathBuf};

/// Where `target`'s input is written: memory-backed `/dev/shm` when there is one, one
/// file per process (libFuzzer's `-jobs` run several).
pub fn input_path(target: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!(
        "perfdata-fuzz-{target}-{}.data",
        std::process::id()
    ))
}
