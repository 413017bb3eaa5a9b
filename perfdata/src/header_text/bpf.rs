//! BPF_PROG_INFO and BPF_BTF as perf prints them: one line per BPF program (or one per
//! sub-program), named as perf names it — `bpf_prog_<tag>_<name>`, the name from the
//! program's BTF function info when perf has its BTF object, else from the program.

use super::{ById, Printer};
use crate::generated::perf_data::{
    BpfBtf, BpfFuncInfo, BpfProgInfo, BtfHeader, BtfType, BtfTypeData, Ctx, KernelBpfProgInfo,
};
use crate::rt::{Endianness, Error, Reader};
use std::io::Write;

/// `sizeof(struct bpf_prog_info)` in perf 6.1.
const PROG_INFO_SIZE: usize = 232;

/// Bits of `perf_bpil.arrays` (`enum perf_bpil_array`) of the arrays perf's printer reads.
const JITED_KSYMS: u32 = 3;
const JITED_FUNC_LENS: u32 = 4;
const FUNC_INFO: u32 = 5;
const PROG_TAGS: u32 = 8;

/// One program as perf keeps it: its `struct bpf_prog_info` and the arrays it points into.
struct Prog {
    /// `info`, zero-filled to perf's size.
    info: Vec<u8>,
    arrays: u64,
    data: Vec<u8>,
}

/// perf's BPF programs and BTF objects (`env->bpf_progs`), by id.
#[derive(Default)]
pub(super) struct BpfEnv {
    /// The producer's byte order; `None` when perf, on this machine, would have to swap
    /// it (then it keeps nothing of either feature).
    endian: Option<Endianness>,
    progs: ById<Prog>,
    btfs: ById<Vec<u8>>,
}

impl BpfEnv {
    pub fn new(endian: Endianness) -> Self {
        BpfEnv {
            endian: (endian == super::native()).then_some(endian),
            ..BpfEnv::default()
        }
    }

    /// perf's `process_bpf_prog_info`: false where perf fails (an `info` larger than its
    /// own `struct bpf_prog_info`; the programs before it stay).
    pub fn process_prog_info(&mut self, b: &BpfProgInfo<'_>) -> bool {
        if self.endian.is_none() {
            return true;
        }
        for p in &b.progs {
            let info = p.info.as_slice();
            if info.len() > PROG_INFO_SIZE {
                return false;
            }
            let mut full = info.to_vec();
            full.resize(PROG_INFO_SIZE, 0);
            let Some(id) = self.decode_info(&full).map(|i| i.id) else {
                continue;
            };
            // The first program of an id stays; perf drops a later one.
            self.progs.entry(id).or_insert(Prog {
                info: full,
                arrays: p.arrays,
                data: p.data.as_slice().to_vec(),
            });
        }
        true
    }

    /// perf's `process_bpf_btf`.
    pub fn process_btf(&mut self, b: &BpfBtf<'_>) -> bool {
        if self.endian.is_none() {
            return true;
        }
        for e in &b.btfs {
            self.btfs
                .entry(e.id)
                .or_insert_with(|| e.data.as_slice().to_vec());
        }
        true
    }

    fn decode_info<'i>(&self, info: &'i [u8]) -> Option<KernelBpfProgInfo<'i>> {
        let e = self.endian?;
        KernelBpfProgInfo::decode(&mut Reader::in_order(info, 0, e), &Ctx::default()).ok()
    }

    /// perf's `print_bpf_prog_info`: the programs in id order.
    pub fn print_prog_info<W: Write>(&self, p: &mut Printer<'_, W>) -> Result<(), Error> {
        for prog in self.progs.values() {
            if let Some(text) = self.prog_text(prog) {
                p.put(&text)?;
            }
        }
        Ok(())
    }

    /// perf's `print_bpf_btf`.
    pub fn print_btf<W: Write>(&self, p: &mut Printer<'_, W>) -> Result<(), Error> {
        for id in self.btfs.keys() {
            p.line(format_args!("# btf info of id {id}"))?;
        }
        Ok(())
    }

    /// `bpf_event__print_bpf_prog_info` of one program; `None` where perf prints nothing
    /// (the counts of its arrays disagree) or would read outside what the file holds.
    fn prog_text(&self, prog: &Prog) -> Option<Vec<u8>> {
        let e = self.endian?;
        let info = self.decode_info(&prog.info)?;
        let count = info.nr_jited_ksyms;
        if count != info.nr_prog_tags || count != info.nr_jited_func_lens {
            return Some(vec![]);
        }
        let array = |bit: u32, offset: u64| -> Option<&[u8]> {
            if prog.arrays >> bit & 1 == 0 {
                return None;
            }
            prog.data.get(usize::try_from(offset).ok()?..)
        };
        let addrs = array(JITED_KSYMS, info.jited_ksyms);
        let lens = array(JITED_FUNC_LENS, info.jited_func_lens);
        let tags = array(PROG_TAGS, info.prog_tags);
        let btf = match info.btf_id {
            0 => None,
            id => self.btfs.get(&id).and_then(|d| Btf::parse(d, e)),
        };
        let name = |i: u32| -> Option<Vec<u8>> {
            let at = i as usize * 8;
            let tag = tags?.get(at..at + 8)?;
            let mut name = b"bpf_prog_".to_vec();
            for b in tag {
                name.extend_from_slice(format!("{b:02x}").as_bytes());
            }
            let short: Option<Vec<u8>> = match &btf {
                Some(btf) => {
                    let rec = array(FUNC_INFO, info.func_info)?;
                    let at = i as usize * info.func_info_rec_size as usize;
                    let f = BpfFuncInfo::decode(
                        &mut Reader::in_order(rec.get(at..)?, 0, e),
                        &Ctx::default(),
                    )
                    .ok()?;
                    Some(btf.type_name(f.type_id)?)
                }
                None if i == 0 && count == 1 => {
                    Some(info.name.text().to_vec()).filter(|n| !n.is_empty())
                }
                None => Some(b"F".to_vec()),
            };
            if let Some(short) = short {
                name.push(b'_');
                name.extend_from_slice(&short);
            }
            Some(name)
        };
        let addr = |i: u32| -> Option<u64> {
            let b = addrs?.get(i as usize * 8..)?;
            Reader::in_order(b, 0, e).u64().ok()
        };
        let len = |i: u32| -> Option<u32> {
            let b = lens?.get(i as usize * 4..)?;
            Reader::in_order(b, 0, e).u32().ok()
        };
        let mut out = vec![];
        if count == 1 {
            out.extend_from_slice(format!("# bpf_prog_info {}: ", info.id).as_bytes());
            out.extend_from_slice(&name(0)?);
            out.extend_from_slice(format!(" addr {:#x} size {}\n", addr(0)?, len(0)?).as_bytes());
            return Some(out);
        }
        out.extend_from_slice(format!("# bpf_prog_info {}:\n", info.id).as_bytes());
        for i in 0..count {
            out.extend_from_slice(format!("# \tsub_prog {i}: ").as_bytes());
            out.extend_from_slice(&name(i)?);
            out.extend_from_slice(format!(" addr {:#x} size {}\n", addr(i)?, len(i)?).as_bytes());
        }
        Some(out)
    }
}

/// A BTF object as libbpf's `btf__new` reads it, for `btf__type_by_id` and
/// `btf__name_by_offset`.
struct Btf<'d> {
    /// Each type's name offset, by type id - 1.
    names: Vec<u32>,
    strings: &'d [u8],
}

impl<'d> Btf<'d> {
    /// `None` where libbpf rejects the object (perf then names the program without it).
    fn parse(data: &'d [u8], e: Endianness) -> Option<Self> {
        const BTF_MAGIC: u16 = 0xeb9f;
        const HEADER_SIZE: usize = 24;
        let h = BtfHeader::decode(&mut Reader::in_order(data, 0, e), &Ctx::default()).ok()?;
        let hdr_len = h.hdr_len as usize;
        if h.magic != BTF_MAGIC || hdr_len < HEADER_SIZE || hdr_len > data.len() {
            return None;
        }
        let body = &data[hdr_len..];
        let section = |off: u32, len: u32| -> Option<&'d [u8]> {
            let start = off as usize;
            body.get(start..start.checked_add(len as usize)?)
        };
        if h.type_off % 4 != 0 {
            return None;
        }
        let types = section(h.type_off, h.type_len)?;
        let strings = section(h.str_off, h.str_len)?;
        // The string section starts with the empty name and ends with a NUL.
        if strings.first() != Some(&0) || strings.last() != Some(&0) {
            return None;
        }
        let mut names = vec![];
        let mut r = Reader::in_order(types, 0, e);
        while !r.is_empty() {
            let t = BtfType::decode(&mut r, &Ctx::default()).ok()?;
            // Kinds libbpf knows: UNKN (0) and kinds past ENUM64 (19) are rejected.
            let kind = t.info >> 24 & 31;
            if matches!(t.data, BtfTypeData::Plain(_))
                && !matches!(kind, 2 | 7 | 8 | 9 | 10 | 11 | 12 | 16 | 18)
            {
                return None;
            }
            names.push(t.name_off);
        }
        Some(Btf { names, strings })
    }

    /// The name of type `id` (`btf__name_by_offset(btf__type_by_id(id)->name_off)`);
    /// type 0 is `void`, whose name is empty.
    fn type_name(&self, id: u32) -> Option<Vec<u8>> {
        let name_off = match id {
            0 => 0,
            id => *self.names.get(id as usize - 1)?,
        };
        let s = self.strings.get(name_off as usize..)?;
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        Some(s[..end].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF object built by hand from include/uapi/linux/btf.h: every kind with data
    /// after its `struct btf_type`, then a FUNC, whose name must be found past them.
    #[test]
    fn btf_types_are_sized_by_kind() {
        let mut strings = b"\0int\0s\0a\0b\0p\0e\0sec\0tag\0main\0".to_vec();
        strings.push(0);
        let off = |name: &str| -> u32 {
            let needle = [b"\0", name.as_bytes(), b"\0"].concat();
            (strings
                .windows(needle.len())
                .position(|w| w == needle)
                .unwrap()
                + 1) as u32
        };
        let mut types: Vec<u32> = vec![];
        let mut ty = |name: u32, kind: u32, vlen: u32, size: u32, extra: &[u32]| {
            types.extend_from_slice(&[name, kind << 24 | vlen, size]);
            types.extend_from_slice(extra);
        };
        ty(off("int"), 1, 0, 4, &[32]); // 1 INT + encoding
        ty(off("s"), 4, 2, 8, &[off("a"), 1, 0, off("b"), 1, 32]); // 2 STRUCT, 2 members
        ty(0, 3, 0, 0, &[1, 1, 4]); // 3 ARRAY
        ty(off("e"), 6, 1, 4, &[off("a"), 7]); // 4 ENUM, 1 value
        ty(0, 13, 1, 1, &[off("p"), 1]); // 5 FUNC_PROTO, 1 parameter
        ty(off("a"), 14, 0, 1, &[1]); // 6 VAR + linkage
        ty(off("sec"), 15, 1, 4, &[6, 0, 4]); // 7 DATASEC, 1 variable
        ty(off("tag"), 17, 0, 2, &[u32::MAX]); // 8 DECL_TAG + component_idx
        ty(off("e"), 19, 1, 8, &[off("b"), 1, 0]); // 9 ENUM64, 1 value
        ty(0, 2, 0, 1, &[]); // 10 PTR
        ty(off("main"), 12, 0, 5, &[]); // 11 FUNC
        let types: Vec<u8> = types.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut data = vec![0x9f, 0xeb, 1, 0];
        for w in [
            24,
            0,
            types.len() as u32,
            types.len() as u32,
            strings.len() as u32,
        ] {
            data.extend_from_slice(&w.to_le_bytes());
        }
        data.extend_from_slice(&types);
        data.extend_from_slice(&strings);
        let btf = Btf::parse(&data, Endianness::Little).expect("a valid BTF object");
        assert_eq!(btf.names.len(), 11);
        assert_eq!(btf.type_name(11).as_deref(), Some(&b"main"[..]));
        assert_eq!(btf.type_name(2).as_deref(), Some(&b"s"[..]));
        assert_eq!(btf.type_name(0).as_deref(), Some(&b""[..]));
        assert_eq!(btf.type_name(12), None);
        // A kind libbpf does not know makes the object unusable, as does a bad magic.
        let mut unknown = data.clone();
        unknown[24 + 7] = 25;
        assert!(Btf::parse(&unknown, Endianness::Little).is_none());
        let mut magic = data.clone();
        magic[0] = 0;
        assert!(Btf::parse(&magic, Endianness::Little).is_none());
    }
}
