//! Writing a profile atomically: a temporary file beside the target, read back, then
//! renamed into place (as [`crate::write::save_with`] does for perf.data), so the target
//! is never left half-written, even when it is the input.

use std::io::Write;
use std::path::Path;

use super::{Profile, SlotFormat};
use crate::rt::{self, Error};

/// Writes `profile` in `layout` to `path`, atomically.
pub fn save(profile: &Profile, path: &Path, layout: SlotFormat) -> rt::Result<()> {
    save_bytes(path, &profile.encode(layout)?)
}

/// Writes `bytes` (a complete profile, e.g. an unmodified input copied through) to `path`,
/// atomically. The bytes must read back as a complete profile, or nothing is written.
pub fn save_bytes(path: &Path, bytes: &[u8]) -> rt::Result<()> {
    if let Err(e) = Profile::parse(bytes) {
        return Err(Error::other(format!(
            "the output is not a complete profile, so {} was not written: {e}",
            path.display()
        )));
    }
    let mut tmp = crate::write::temp_file_beside(path)?;
    tmp.as_file_mut().write_all(bytes)?;
    // The temporary file is private (0600); the output gets the permissions of the file it
    // replaces, or those of a new file.
    crate::write::set_output_permissions(tmp.as_file(), path)?;
    if path.exists() {
        // Replacing a good file: the new bytes reach the disk before the rename.
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| Error::from(e.error))?;
    crate::write::remove_stale_temp_files(path);
    Ok(())
}
