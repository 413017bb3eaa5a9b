//! `perf archive` tarballs read in place: the build-id cache layout
//! (`DSO-PATH/BUILD-ID/{elf,debug,vdso,kallsyms}`, `.build-id/xx/rest` links to those
//! directories) in a tar, bzip2- (perf 6.1's `tar cjf`), zstd- or gzip-compressed or
//! plain. One pass over the archive keeps the members of the build ids the recording
//! names, each in an anonymous memory file (`memfd_create`): nothing is extracted to
//! disk, and the path-based ELF, DWARF and CFI readers open `/proc/self/fd/N` as they
//! open any file.

use super::{hex_decode, same_build_id};
use crate::AnalysisError;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

/// The members of one archive whose build ids the recording names.
#[derive(Debug)]
pub(crate) struct ArchiveObjects {
    /// The archive's path (for messages and `perfdata info`).
    pub path: PathBuf,
    members: Vec<Member>,
}

#[derive(Debug)]
struct Member {
    build_id: Vec<u8>,
    /// `elf`, `debug`, `vdso`, `kallsyms`.
    kind: String,
    /// Its name in the archive.
    name: String,
    /// The memory file holding its bytes (kept open: its `/proc/self/fd` path lives as
    /// long as it does).
    file: File,
}

impl ArchiveObjects {
    /// Reads `path`, keeping the members of the build ids in `wanted`.
    pub fn load(path: &Path, wanted: &[Vec<u8>]) -> Result<Self, AnalysisError> {
        let io = |e: std::io::Error| AnalysisError::io(path, e);
        let damaged = |at: &str, e: std::io::Error| {
            AnalysisError::unsupported(format!("{}: damaged archive{at}: {e}", path.display()))
        };
        let file = File::open(path).map_err(io)?;
        let mut input = BufReader::new(file);
        let head = input.fill_buf().map_err(io)?.to_vec();
        let reader: Box<dyn Read> = if head.starts_with(b"BZh") {
            Box::new(bzip2::read::MultiBzDecoder::new(input))
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Box::new(zstd::stream::read::Decoder::with_buffer(input).map_err(io)?)
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Box::new(flate2::bufread::MultiGzDecoder::new(input))
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            return Err(AnalysisError::unsupported(
                "xz-compressed archives are not read: decompress it first \
                 (`xz -d`), the tar inside is read as it is",
            ));
        } else if head.get(257..262) == Some(b"ustar") {
            Box::new(input)
        } else {
            return Err(AnalysisError::unsupported(
                "not a tar archive (plain, bzip2, zstd or gzip)",
            ));
        };
        let mut members = vec![];
        let mut tar = tar::Archive::new(reader);
        let entries = tar.entries().map_err(io)?;
        for entry in entries {
            let mut entry = entry.map_err(|e| damaged("", e))?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let name = entry
                .path()
                .map_err(|e| damaged("", e))?
                .to_string_lossy()
                .into_owned();
            let Some((build_id, kind)) = member_key(&name) else {
                continue;
            };
            if !wanted.iter().any(|w| same_build_id(w, &build_id)) {
                continue;
            }
            let mut file = memory_file().map_err(io)?;
            std::io::copy(&mut entry, &mut file).map_err(|e| damaged(&format!(" at {name}"), e))?;
            members.push(Member {
                build_id,
                kind,
                name,
                file,
            });
        }
        Ok(ArchiveObjects {
            path: path.to_path_buf(),
            members,
        })
    }

    /// The member of a recorded build id and kind (`elf`, `debug`, `vdso`, `kallsyms`):
    /// a path that opens it, and what to call it (`ARCHIVE:MEMBER`).
    pub fn get(&self, build_id: &[u8], kind: &str) -> Option<(PathBuf, String)> {
        let m = self
            .members
            .iter()
            .find(|m| m.kind == kind && same_build_id(build_id, &m.build_id))?;
        Some((
            PathBuf::from(format!("/proc/self/fd/{}", m.file.as_raw_fd())),
            format!("{}:{}", self.path.display(), m.name),
        ))
    }

    /// How many members were kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.members.len()
    }
}

/// The build id and kind of a member: `…/BUILD-ID/KIND` (perf 4.x and later) or, from
/// older perfs, a file named by its build id (`…/BUILD-ID`, an ELF).
fn member_key(name: &str) -> Option<(Vec<u8>, String)> {
    let mut parts = name.trim_end_matches('/').rsplit('/');
    let last = parts.next()?;
    if let Some(id) = hex_decode(last).filter(|id| id.len() >= 4) {
        return Some((id, "elf".into()));
    }
    let dir = parts.next()?;
    let id = hex_decode(dir).filter(|id| id.len() >= 4)?;
    matches!(last, "elf" | "debug" | "vdso" | "kallsyms").then(|| (id, last.to_string()))
}

/// An anonymous file in memory.
fn memory_file() -> std::io::Result<File> {
    // SAFETY: a valid NUL-terminated name and flags; the returned descriptor is owned by
    // the `File` alone.
    let fd = unsafe { libc::memfd_create(c"perfdata-archive".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_named_by_build_id_and_kind() {
        let id = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            member_key(&format!("usr/bin/ls/{id}/elf")),
            Some((hex_decode(id).unwrap(), "elf".into()))
        );
        assert_eq!(
            member_key(&format!("[kernel.kallsyms]/{id}/kallsyms")).map(|k| k.1),
            Some("kallsyms".into())
        );
        assert_eq!(
            member_key(&format!("usr/bin/ls/{id}")).map(|k| k.1),
            Some("elf".into())
        );
        assert_eq!(member_key(&format!("usr/bin/ls/{id}/probes")), None);
        assert_eq!(member_key("usr/bin/ls"), None);
    }

    #[test]
    fn kept_members_read_back_and_others_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tar_path = dir.path().join("a.tar");
        let mut b = tar::Builder::new(File::create(&tar_path).unwrap());
        let add = |b: &mut tar::Builder<File>, name: &str, data: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, data).unwrap();
        };
        add(&mut b, "usr/bin/a/aaaaaaaa/elf", b"first");
        add(&mut b, "usr/bin/b/bbbbbbbb/debug", b"second");
        b.finish().unwrap();
        drop(b);
        let want = vec![hex_decode("aaaaaaaa").unwrap()];
        let a = ArchiveObjects::load(&tar_path, &want).unwrap();
        assert_eq!(a.len(), 1);
        let (p, label) = a.get(&want[0], "elf").unwrap();
        assert_eq!(std::fs::read(p).unwrap(), b"first");
        assert!(label.ends_with(":usr/bin/a/aaaaaaaa/elf"), "{label}");
        assert!(a.get(&want[0], "debug").is_none());
        let bad = dir.path().join("bad");
        std::fs::write(&bad, b"not an archive").unwrap();
        let e = ArchiveObjects::load(&bad, &want).unwrap_err();
        assert!(e.to_string().contains("not a tar archive"), "{e}");
    }
}
