//! AArch64 code for the tests, without an aarch64 C toolchain: `llvm-mc` assembles
//! [`FUNCTIONS`], and [`executable`] lays the object's `.text` and function symbols out
//! as a static executable (ET_EXEC, EM_AARCH64, one PT_LOAD), as a linker would for
//! code without relocations, so that a recording can map it and symbols resolve.

use crate::tools::{runs, Tool};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The functions (`main`, `helper`): branches, loads and stores, SIMD, system
/// instructions, atomics, undecodable words.
pub const FUNCTIONS: &str = include_str!("aarch64_functions.s");

/// The extensions the functions use (llvm-mc and llvm-objdump decode only what they are
/// told; GNU objdump decodes every extension by default).
pub const MATTR: &str = "+v8.5a,+lse,+aes,+sha2,+crc";

/// Where the executable's first byte is mapped; its `.text` starts a page later.
pub const BASE: u64 = 0x40_0000;
const TEXT_OFFSET: u64 = 0x1000;

/// LLVM's assembler for AArch64.
pub const LLVM_MC: Tool = Tool {
    name: "llvm-mc (aarch64)",
    provided_by: "Debian: llvm",
    probe: || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        assemble(dir.path(), "nop\n").map(|_| ())
    },
};

/// LLVM's objdump.
pub const LLVM_OBJDUMP: Tool = Tool {
    name: "llvm-objdump",
    provided_by: "Debian: llvm",
    probe: || runs("llvm-objdump", &["--version"]),
};

/// `text` assembled by `llvm-mc` into `dir/code.o`.
pub fn assemble(dir: &Path, text: &str) -> Result<PathBuf, String> {
    let src = dir.join("code.s");
    let obj = dir.join("code.o");
    std::fs::write(&src, text).map_err(|e| e.to_string())?;
    let out = Command::new("llvm-mc")
        .args(["-triple=aarch64-linux-gnu", &format!("-mattr={MATTR}")])
        .arg("-filetype=obj")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(|e| format!("llvm-mc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "llvm-mc: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(obj)
}

/// [`FUNCTIONS`] assembled and laid out as an executable at `dir/aarch64-prog`.
pub fn build(dir: &Path) -> Result<PathBuf, String> {
    let obj = assemble(dir, FUNCTIONS)?;
    let bytes = std::fs::read(&obj).map_err(|e| e.to_string())?;
    let exe = dir.join("aarch64-prog");
    std::fs::write(&exe, executable(&bytes)?).map_err(|e| e.to_string())?;
    Ok(exe)
}

/// An object's `.text` at [`BASE`] + 0x1000 in an ET_EXEC with its symbols of `.text`
/// (functions and mapping symbols, local first as ELF wants).
pub fn executable(object_file: &[u8]) -> Result<Vec<u8>, String> {
    let obj = object::File::parse(object_file).map_err(|e| e.to_string())?;
    let text = obj.section_by_name(".text").ok_or("no .text")?;
    let code = text.data().map_err(|e| e.to_string())?;
    let vaddr = BASE + TEXT_OFFSET;
    // (name, value, size, st_info)
    let mut syms: Vec<(String, u64, u64, u8)> = vec![];
    for s in obj.symbols() {
        if s.section_index() != Some(text.index()) || s.kind() == SymbolKind::Section {
            continue;
        }
        let ty = if s.kind() == SymbolKind::Text { 2 } else { 0 };
        let bind = if s.is_global() { 1 } else { 0 };
        let name = s.name().map_err(|e| e.to_string())?.to_string();
        syms.push((name, vaddr + s.address(), s.size(), bind << 4 | ty));
    }
    syms.sort_by_key(|s| s.3 >> 4);
    let first_global = 1 + syms.iter().filter(|s| s.3 >> 4 == 0).count();

    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24];
    for (name, value, size, info) in &syms {
        symtab.extend((strtab.len() as u32).to_le_bytes());
        strtab.extend(name.as_bytes());
        strtab.push(0);
        symtab.push(*info);
        symtab.push(0);
        symtab.extend(1u16.to_le_bytes()); // .text
        symtab.extend(value.to_le_bytes());
        symtab.extend(size.to_le_bytes());
    }
    let shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0".to_vec();

    let mut out = vec![0u8; TEXT_OFFSET as usize];
    out.extend_from_slice(code);
    let text_end = out.len() as u64;
    let align8 = |out: &mut Vec<u8>| out.resize(out.len().next_multiple_of(8), 0);
    align8(&mut out);
    let symtab_off = out.len() as u64;
    out.extend(&symtab);
    let strtab_off = out.len() as u64;
    out.extend(&strtab);
    let shstrtab_off = out.len() as u64;
    out.extend(&shstrtab);
    align8(&mut out);
    let shoff = out.len() as u64;
    // Section headers: null, .text, .symtab, .strtab, .shstrtab.
    let mut sh = |name: u32,
                  ty: u32,
                  flags: u64,
                  addr: u64,
                  off: u64,
                  size: u64,
                  link: u32,
                  info: u32,
                  align: u64,
                  entsize: u64| {
        out.extend(name.to_le_bytes());
        out.extend(ty.to_le_bytes());
        out.extend(flags.to_le_bytes());
        out.extend(addr.to_le_bytes());
        out.extend(off.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(link.to_le_bytes());
        out.extend(info.to_le_bytes());
        out.extend(align.to_le_bytes());
        out.extend(entsize.to_le_bytes());
    };
    sh(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    sh(1, 1, 6, vaddr, TEXT_OFFSET, code.len() as u64, 0, 0, 4, 0);
    sh(
        7,
        2,
        0,
        0,
        symtab_off,
        symtab.len() as u64,
        3,
        first_global as u32,
        8,
        24,
    );
    sh(15, 3, 0, 0, strtab_off, strtab.len() as u64, 0, 0, 1, 0);
    sh(23, 3, 0, 0, shstrtab_off, shstrtab.len() as u64, 0, 0, 1, 0);

    let mut h = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    h.resize(16, 0);
    h.extend(2u16.to_le_bytes()); // ET_EXEC
    h.extend(183u16.to_le_bytes()); // EM_AARCH64
    h.extend(1u32.to_le_bytes());
    h.extend(vaddr.to_le_bytes()); // entry
    h.extend(64u64.to_le_bytes()); // phoff
    h.extend(shoff.to_le_bytes());
    h.extend(0u32.to_le_bytes());
    for v in [64u16, 56, 1, 64, 5, 4] {
        h.extend(v.to_le_bytes());
    }
    // PT_LOAD, R+X, the file from its start up to the code's end.
    h.extend(1u32.to_le_bytes());
    h.extend(5u32.to_le_bytes());
    h.extend(0u64.to_le_bytes());
    h.extend(BASE.to_le_bytes());
    h.extend(BASE.to_le_bytes());
    h.extend(text_end.to_le_bytes());
    h.extend(text_end.to_le_bytes());
    h.extend(0x10000u64.to_le_bytes());
    out[..h.len()].copy_from_slice(&h);
    Ok(out)
}

/// A recording of the executable `exe` running as pid 4242 on an aarch64 machine
/// (HEADER_ARCH `aarch64`): its COMM and MMAP2 (at [`BASE`]) and one user-space sample
/// per address of `ips`, on `plain.data`'s attr (its sample layout) and features
/// otherwise (build ids dropped: the file is found by its path).
pub fn recording(exe: &Path, ips: &[u64]) -> Vec<u8> {
    use perfdata::rt::Str;
    use perfdata::types::*;
    use perfdata::write::{Builder, FeatureData, RecordData, WriteOptions};
    let base = crate::fixture("plain.data");
    let data = perfdata::PerfData::open(&base).unwrap();
    let mut b = Builder::read(&data).unwrap().into_owned();
    b.placement = None;
    let typed = |b: &Builder<'static>, ty: RecordType| -> (RecordItem, RecordBody<'static>) {
        let r = b.records.iter().find(|r| r.ty == ty).unwrap().clone();
        let body = match &r.data {
            RecordData::Raw { body, .. } => {
                let ctx = b.record_ctx(&r);
                perfdata::decode_body(b.endian, ty, body, 0, &ctx)
                    .unwrap()
                    .into_owned()
            }
            RecordData::Typed(body) => (**body).clone(),
        };
        (r, body)
    };
    use perfdata::write::RecordItem;
    let (comm_item, comm) = typed(&b, RecordType::COMM);
    let (mmap_item, mmap) = typed(&b, RecordType::MMAP2);
    let (sample_item, sample) = typed(&b, RecordType::SAMPLE);
    let (pid, path) = (4242u32, exe.to_str().unwrap().to_string());
    let mut records = vec![];
    let with = |item: &RecordItem<'static>, misc: u16, body: RecordBody<'static>| RecordItem {
        misc: RecordMisc(misc),
        data: RecordData::Typed(Box::new(body)),
        ..item.clone()
    };
    if let RecordBody::Comm(mut c) = comm {
        (c.pid, c.tid) = (pid, pid);
        c.comm = Str::padded("aarch64-prog", 8);
        records.push(with(&comm_item, comm_item.misc.0, RecordBody::Comm(c)));
    }
    if let RecordBody::Mmap2(mut m) = mmap {
        (m.pid, m.tid) = (pid, pid);
        (m.addr, m.len, m.pgoff) = (BASE, 0x10000, 0);
        m.file_id = Mmap2FileId::Inode(Mmap2Inode::default());
        (m.prot, m.map_flags) = (5, 2);
        m.filename = Str::padded(&path, 8);
        // PERF_RECORD_MISC_USER, without MMAP_BUILD_ID.
        records.push(with(&mmap_item, 2, RecordBody::Mmap2(m)));
    }
    if let RecordBody::Sample(s) = sample {
        for (i, &ip) in ips.iter().enumerate() {
            let mut s = s.clone();
            s.ip = Some(ip);
            s.pid = Some(pid);
            s.tid = Some(pid);
            s.time = s.time.map(|t| t + 1000 * (i as u64 + 1));
            s.callchain = s.callchain.as_ref().map(|_| Callchain {
                ips: vec![CallchainContext::USER.0, ip].into(),
            });
            records.push(with(&sample_item, 2, RecordBody::Sample(s)));
        }
    }
    b.records = records;
    b.features.retain(|f| f.id != FeatureId::BUILD_ID);
    for f in &mut b.features {
        if f.id == FeatureId::ARCH {
            f.data = FeatureData::Typed(Box::new(FeatureBody::Arch(Arch {
                value: PerfString {
                    text: Str::padded("aarch64", 64),
                },
                ..Default::default()
            })));
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    b.write_to(&mut out, WriteOptions::default()).unwrap();
    out.into_inner()
}
