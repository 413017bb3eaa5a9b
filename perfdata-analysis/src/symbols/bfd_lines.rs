//! Where binutils' `addr2line` (2.40, which perf 6.1 runs for its `-l` source lines)
//! names another file than the DWARF line table: in a DWARF 5 line program, the rows
//! before the program's first `DW_LNS_set_file` of a sequence (the file register at
//! its initial 1) are named by the file table's entry 0, the compile unit's own file.
//! gcc usually repeats entry 0 as entry 1, so the names agree; they differ where entry 1
//! is a file the unit includes (glibc's `dl-get-cpu-features.c`, whose entry 1 is
//! `dl-cacheinfo.h`). Checked against `addr2line` on every address of a glibc 2.36
//! ld.so's line table: every difference is such a row, and every such row differs.

use gimli::{EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::path::Path;

/// The address ranges whose rows binutils names by entry 0 and that name, by address.
#[derive(Debug, Default)]
pub(crate) struct BfdFiles {
    /// (start, end, index in `names`), sorted by start.
    ranges: Vec<(u64, u64, usize)>,
    names: Vec<String>,
}

impl BfdFiles {
    /// The file binutils names for `addr` (a lookup address), where it differs from the
    /// line table's.
    pub(crate) fn file_at(&self, addr: u64) -> Option<&str> {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        let (_, end, name) = *self.ranges.get(i.checked_sub(1)?)?;
        (addr < end).then(|| self.names[name].as_str())
    }

    /// Reads the line programs of the file with DWARF at `path`; `None` when it cannot.
    pub(crate) fn read(path: &Path) -> Option<BfdFiles> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: read-only mapping; a file changed under us gives wrong names, not UB
        // in code that only reads bytes.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let obj = object::File::parse(&*map).ok()?;
        let endian = if obj.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let sections = gimli::DwarfSections::load(|id| -> Result<Cow<[u8]>, ()> {
            Ok(obj
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or(Cow::Borrowed(&[])))
        })
        .ok()?;
        let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
        let mut out = BfdFiles::default();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            out.add_unit(&dwarf, &unit);
        }
        out.ranges.sort_unstable();
        Some(out)
    }

    fn add_unit(
        &mut self,
        dwarf: &gimli::Dwarf<EndianSlice<RunTimeEndian>>,
        unit: &gimli::Unit<EndianSlice<RunTimeEndian>>,
    ) {
        let Some(program) = unit.line_program.clone() else {
            return;
        };
        let header = program.header();
        if header.version() < 5 {
            return;
        }
        let path = |index: u64| render(dwarf, unit, header, index);
        let (Some(first), Some(second)) = (path(0), path(1)) else {
            return;
        };
        if first == second {
            return;
        }
        let name = self.names.len();
        self.names.push(first);
        let mut program = program.clone();
        let header = program.header().clone();
        let mut instructions = header.instructions();
        let mut row = gimli::LineRow::new(&header);
        // Whether a DW_LNS_set_file came in this sequence; the open range's start.
        let mut set = false;
        let mut open: Option<u64> = None;
        while let Ok(Some(insn)) = instructions.next_instruction(&header) {
            if matches!(insn, gimli::LineInstruction::SetFile(_)) {
                set = true;
            }
            let Ok(new_row) = row.execute(insn, &mut program) else {
                return;
            };
            if !new_row {
                continue;
            }
            let addr = row.address();
            if let Some(start) = open.take() {
                if addr > start {
                    self.ranges.push((start, addr, name));
                }
            }
            if row.end_sequence() {
                set = false;
            } else if !set {
                open = Some(addr);
            }
            row.reset(&header);
        }
    }
}

/// A file entry's path as the `addr2line` crate renders it (as [`super::dso::Dsos::source_line`]
/// gives paths): the compile directory, the entry's directory unless it is entry 0's,
/// the name, an absolute part replacing what came before.
fn render(
    dwarf: &gimli::Dwarf<EndianSlice<RunTimeEndian>>,
    unit: &gimli::Unit<EndianSlice<RunTimeEndian>>,
    header: &gimli::LineProgramHeader<EndianSlice<RunTimeEndian>>,
    index: u64,
) -> Option<String> {
    let file = header.file(index)?;
    let text = |v| -> Option<String> {
        let s = dwarf.attr_string(unit, v).ok()?;
        Some(String::from_utf8_lossy(s.slice()).into_owned())
    };
    let mut path = unit
        .comp_dir
        .map(|d| String::from_utf8_lossy(d.slice()).into_owned())
        .unwrap_or_default();
    let push = |path: &mut String, p: &str| {
        if p.starts_with('/') {
            *path = p.to_string();
        } else {
            if !path.is_empty() && !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(p);
        }
    };
    if file.directory_index() != 0 {
        if let Some(dir) = file.directory(header).and_then(text) {
            push(&mut path, &dir);
        }
    }
    push(&mut path, &text(file.path_name())?);
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The debug file of this machine's ld.so, found by its build id (Debian's
    /// libc6-dbg), and binutils' `addr2line`; `None`, said, without them.
    fn ld_so_debug() -> Option<std::path::PathBuf> {
        let ld = std::fs::read("/lib64/ld-linux-x86-64.so.2").ok()?;
        let obj = object::File::parse(&*ld).ok()?;
        let id = obj.build_id().ok()??;
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let path = std::path::PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &hex[..2],
            &hex[2..]
        ));
        let has_addr2line = std::process::Command::new("addr2line")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        (path.exists() && has_addr2line).then_some(path)
    }

    #[test]
    fn files_as_binutils_addr2line_names_them_on_ld_so() {
        let Some(debug) = ld_so_debug() else {
            eprintln!("SKIP: no ld.so debug file (libc6-dbg) or no binutils addr2line");
            return;
        };
        let bfd = BfdFiles::read(&debug).expect("the debug file's line programs");
        let loader = addr2line::Loader::new(&debug).unwrap();
        // Each range binutils names otherwise (its first and last byte), and every
        // 61st byte of the ranges' span for the rows it names as the DWARF does.
        let mut addrs: Vec<u64> = bfd.ranges.iter().flat_map(|r| [r.0, r.1 - 1]).collect();
        if let (Some(lo), Some(hi)) = (bfd.ranges.first(), bfd.ranges.iter().map(|r| r.1).max()) {
            addrs.extend((lo.0..hi).step_by(61));
        }
        let input: String = addrs.iter().map(|a| format!("{a:x}\n")).collect();
        let mut child = std::process::Command::new("addr2line")
            .arg("-e")
            .arg(&debug)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(input.as_bytes()).unwrap();
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let theirs = String::from_utf8_lossy(&out.stdout);
        let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let (mut compared, mut differ, mut wrong) = (0, 0, vec![]);
        for (addr, line) in addrs.iter().zip(theirs.lines()) {
            let Some((file, _)) = line.rsplit_once(':') else {
                continue;
            };
            if file == "??" {
                continue;
            }
            let Ok(Some(loc)) = loader.find_location(*addr) else {
                continue;
            };
            let Some(dwarf) = loc.file else { continue };
            let ours = bfd.file_at(*addr).unwrap_or(dwarf);
            compared += 1;
            if base(ours) != base(dwarf) {
                differ += 1;
            }
            if base(ours) != base(file) {
                wrong.push(format!("{addr:#x}: ours {ours}, addr2line {file}"));
            }
        }
        eprintln!("{compared} addresses compared, {differ} named otherwise than the DWARF");
        assert!(compared > 0);
        assert!(
            wrong.is_empty(),
            "{} differ: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
    }

    #[test]
    fn a_range_names_its_addresses_only() {
        let bfd = BfdFiles {
            ranges: vec![(0x10, 0x20, 0), (0x30, 0x38, 1)],
            names: vec!["a.c".into(), "b.c".into()],
        };
        assert_eq!(bfd.file_at(0xf), None);
        assert_eq!(bfd.file_at(0x10), Some("a.c"));
        assert_eq!(bfd.file_at(0x1f), Some("a.c"));
        assert_eq!(bfd.file_at(0x20), None);
        assert_eq!(bfd.file_at(0x37), Some("b.c"));
        assert_eq!(bfd.file_at(0x38), None);
    }
}
