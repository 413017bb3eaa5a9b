//! A simpleperf recording, crafted: no simpleperf binary is available here, so the files
//! are made from the layouts of AOSP's sources (`spec/perf_data/50_simpleperf.pds`).
//! The base is `callchain.data` (perf, `-g`: `sh` in dash and libc), whose attrs, maps and
//! samples simpleperf would write the same way; to it are added every simpleperf record
//! kind (a KERNEL_SYMBOL cut into SPLIT records as simpleperf cuts records over 64 KiB,
//! EVENT_ID, DSO, SYMBOL, CALLCHAIN, UNWINDING_RESULT old and new, TRACING_DATA, DEBUG)
//! and feature kind (FILE or FILE2, META_INFO, DEBUG_UNWIND, DEBUG_UNWIND_FILE,
//! ETM_BRANCH_LIST, INIT_MAP). FILE/FILE2 name the files the samples hit with synthetic
//! symbols (`sp_<file>_<vaddr>`), placed through a `min_vaddr` and file offset that
//! differ from the files' real ones, so that a report naming them proves where its
//! symbols came from and that addresses were mapped as simpleperf maps them.

use perfdata::rt::{Bytes, Endianness, Str, Writer};
use perfdata::types::*;
use perfdata::write::{Builder, FeatureData, FeatureItem, RecordData, RecordItem, WriteOptions};
use perfdata::PerfData;
use std::collections::BTreeMap;

/// Which symbol feature the crafted file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbols {
    /// FILE (128), format version 1.
    File,
    /// FILE2 (132), protobuf messages (what simpleperf writes today).
    File2,
    /// Neither.
    None,
}

/// The synthetic symbol table of one file the samples hit.
#[derive(Debug, Clone)]
pub struct FileSymbols {
    pub path: String,
    pub min_vaddr: u64,
    pub file_offset_of_min_vaddr: u64,
    /// (vaddr, len, name), by address.
    pub symbols: Vec<(u64, u32, String)>,
}

/// The crafted symbols' `min_vaddr` and its file offset: not the files' own.
pub const MIN_VADDR: u64 = 0x40_0000;
pub const FILE_OFFSET_OF_MIN_VADDR: u64 = 0x2000;
/// Each synthetic function covers this many bytes.
pub const FUNCTION_SIZE: u64 = 0x40;
/// The kernel's symbols in the FILE features (runtime addresses, as simpleperf records
/// them).
pub fn kernel_symbols() -> Vec<(u64, u32, String)> {
    (0..2)
        .map(|i| {
            (
                0xffff_ffff_8100_0000 + 0x40 * i,
                0x40,
                format!("crafted_kernel_function_{i}"),
            )
        })
        .collect()
}

/// The crafted kernel ip of the first sample, in `crafted_kernel_function_0`; its caller
/// 0x48 bytes on is in `crafted_kernel_function_1` (the kernel's FILE entry).
pub const KERNEL_IP: u64 = 0xffff_ffff_8100_0010;

/// The maps of user files in `data` (start, end, pgoff, path), from MMAP and MMAP2.
pub fn user_maps(data: &PerfData<'_>) -> Vec<(u64, u64, u64, String)> {
    let mut maps = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        let (start, len, pgoff, name) = match data.decode(&rec, ctx)? {
            RecordBody::Mmap(m) => (
                m.addr,
                m.len,
                m.pgoff,
                m.filename.to_str_lossy().into_owned(),
            ),
            RecordBody::Mmap2(m) => (
                m.addr,
                m.len,
                m.pgoff,
                m.filename.to_str_lossy().into_owned(),
            ),
            _ => return Ok(true),
        };
        if name.starts_with('/') {
            maps.push((start, start + len, pgoff, name));
        }
        Ok(true)
    })
    .unwrap();
    maps
}

/// The file and file offset of `addr` in `maps`.
pub fn file_offset(maps: &[(u64, u64, u64, String)], addr: u64) -> Option<(&str, u64)> {
    maps.iter()
        .find(|(s, e, _, _)| (*s..*e).contains(&addr))
        .map(|(s, _, pgoff, p)| (p.as_str(), addr - s + pgoff))
}

/// The address simpleperf's symbols use for a file offset of an ELF file
/// (`Dso::IpToVaddrInFile`).
pub fn vaddr_of_offset(offset: u64) -> u64 {
    offset - FILE_OFFSET_OF_MIN_VADDR + MIN_VADDR
}

/// The synthetic function at `vaddr` of `path`.
pub fn symbol_name(path: &str, vaddr: u64) -> String {
    let base = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .replace(['.', '-'], "_");
    format!("sp_{base}_{:x}", vaddr & !(FUNCTION_SIZE - 1))
}

/// Every address of the samples (ips and user callchain entries).
pub fn sample_addresses(data: &PerfData<'_>) -> Vec<u64> {
    let mut out = vec![];
    data.for_each_record(&mut |_, rec, ctx| {
        if let Some(s) = data.sample(&rec, ctx)? {
            out.extend(s.ip());
            if let Some(c) = s.callchain()? {
                out.extend(c.ips.iter().filter(|&ip| ip < CallchainContext::MAX.0));
            }
        }
        Ok(true)
    })
    .unwrap();
    out
}

/// A synthetic symbol for every function-sized block any sample address falls in.
pub fn synthetic_symbols(data: &PerfData<'_>) -> Vec<FileSymbols> {
    let maps = user_maps(data);
    let mut files: BTreeMap<String, BTreeMap<u64, String>> = BTreeMap::new();
    for a in sample_addresses(data) {
        if let Some((path, off)) = file_offset(&maps, a) {
            let v = vaddr_of_offset(off) & !(FUNCTION_SIZE - 1);
            files
                .entry(path.to_string())
                .or_default()
                .insert(v, symbol_name(path, v));
        }
    }
    files
        .into_iter()
        .map(|(path, syms)| FileSymbols {
            path,
            min_vaddr: MIN_VADDR,
            file_offset_of_min_vaddr: FILE_OFFSET_OF_MIN_VADDR,
            symbols: syms
                .into_iter()
                .map(|(v, n)| (v, FUNCTION_SIZE as u32, n))
                .collect(),
        })
        .collect()
}

/// How to craft.
#[derive(Debug, Clone, Copy)]
pub struct Craft {
    pub symbols: Symbols,
    /// End the SPLIT run with its SPLIT_END (simpleperf always does).
    pub split_end: bool,
    pub endian: Endianness,
    /// Lines of the crafted kallsyms ([`kallsyms_text`]).
    pub kallsyms_lines: usize,
    /// Bytes per SPLIT record (simpleperf: 65527, for records over 65535 bytes; smaller
    /// pieces make small files with SPLIT runs, for fuzzing seeds).
    pub piece: usize,
    /// The samples (indices among the SAMPLE records) `simpleperf debug-unwind` gave
    /// CALLCHAIN records: before each, as debug-unwind writes them, an original chain
    /// ([`DECOY_IP`] alone) then the joined one, with the sample's pid, tid and time
    /// ([`replaced_user_chain`] gives the joined chain's ips).
    pub callchains: &'static [usize],
    /// UNWINDING_RESULT records (newer layout, no registers or stack, as `record
    /// --keep-failed-unwinding-result` writes them) before these samples (indices among
    /// the SAMPLE records), with these libunwindstack error codes.
    pub unwinding_failures: &'static [(usize, u64)],
    /// FILE/FILE2 name the kernel's symbols (a `[kernel.kallsyms]` entry); without it,
    /// only the KERNEL_SYMBOL record's kallsyms name kernel addresses.
    pub kernel_entry: bool,
}

impl Default for Craft {
    fn default() -> Self {
        Craft {
            symbols: Symbols::File,
            split_end: true,
            endian: Endianness::Little,
            kallsyms_lines: KALLSYMS_LINES,
            piece: 65527,
            callchains: &[],
            unwinding_failures: &[],
            kernel_entry: true,
        }
    }
}

/// Lines of the crafted kallsyms by default: over 64 KiB, so that it is split.
pub const KALLSYMS_LINES: usize = 4000;

/// The kallsyms text of the crafted KERNEL_SYMBOL, `lines` lines.
pub fn kallsyms_text(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("ffffffff81{:06x} T crafted_kernel_function_{i}\n", i * 0x40))
        .collect()
}

/// The ips of the original chain written before each joined CALLCHAIN (in no map: a
/// stack that took it would show `[unknown]`).
pub const DECOY_IP: u64 = 0x1234;

/// The user frames of a sample's call chain (after its `PERF_CONTEXT_USER`, or before
/// any marker), context markers dropped.
pub fn user_part(ips: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut user = true;
    let mut out = vec![];
    for ip in ips {
        if ip >= CallchainContext::MAX.0 {
            user = ip == CallchainContext::USER.0;
        } else if user {
            out.push(ip);
        }
    }
    out
}

/// The joined chain the crafted CALLCHAIN gives a sample whose user frames are `user`:
/// the same frames, outermost first — other addresses of the crafted symbols than the
/// sample's own stack, so that a stack built from them is told from the sample's.
pub fn replaced_user_chain(user: &[u64]) -> Vec<u64> {
    user.iter().rev().copied().collect()
}

/// Inserts, before the samples `c` names, the CALLCHAIN and UNWINDING_RESULT records
/// simpleperf writes before a sample (same pid, tid and time).
fn add_unwinding_records(b: &mut Builder<'static>, c: &Craft) {
    let simpleperf = |body: RecordBody<'static>| RecordItem {
        ty: body.record_type().unwrap(),
        misc: RecordMisc(0),
        attr: None,
        data: RecordData::Typed(Box::new(body)),
    };
    let mut out = Vec::with_capacity(b.records.len());
    let mut index = 0;
    for r in std::mem::take(&mut b.records) {
        if r.ty != RecordType::SAMPLE {
            out.push(r);
            continue;
        }
        let s = match &r.data {
            RecordData::Raw { body, .. } => {
                let ctx = b.record_ctx(&r);
                match perfdata::decode_body(b.endian, RecordType::SAMPLE, body, 0, &ctx)
                    .unwrap()
                    .into_owned()
                {
                    RecordBody::Sample(s) => s,
                    _ => unreachable!(),
                }
            }
            RecordData::Typed(body) => match &**body {
                RecordBody::Sample(s) => s.clone(),
                _ => unreachable!(),
            },
        };
        let (pid, tid, time) = (s.pid.unwrap(), s.tid.unwrap(), s.time.unwrap());
        for &(_, error_code) in c.unwinding_failures.iter().filter(|(i, _)| *i == index) {
            out.push(simpleperf(RecordBody::SimpleperfUnwindingResult(
                SimpleperfUnwindingResult {
                    time,
                    used_time: 1000,
                    error_code,
                    error_addr: 0x7ffc_0000_0000,
                    stack_start: 0x7ffc_0000_0000,
                    stack_end: 0x7ffc_0000_2000,
                    details: Some(SimpleperfUnwindingDetails {
                        callchain: Some(SimpleperfUnwoundChain::default()),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )));
        }
        if c.callchains.contains(&index) {
            let user = user_part(s.callchain.as_ref().unwrap().ips.iter());
            for (chain_type, ips) in [(0, vec![DECOY_IP]), (2, replaced_user_chain(&user))] {
                out.push(simpleperf(RecordBody::SimpleperfCallchain(
                    SimpleperfCallchain {
                        pid,
                        tid,
                        chain_type,
                        time,
                        sps: vec![0x7ffc_0000_1000; ips.len()].into(),
                        ips: ips.into(),
                        ..Default::default()
                    },
                )));
            }
        }
        out.push(r);
        index += 1;
    }
    b.records = out;
}

/// The crafted KERNEL_SYMBOL record, header included, in byte order `e`: what the SPLIT
/// records carry.
pub fn kallsyms_record(e: Endianness, lines: usize) -> Vec<u8> {
    let text = kallsyms_text(lines);
    let ks = RecordBody::SimpleperfKernelSymbol(SimpleperfKernelSymbol {
        kallsyms: Bytes::from(text.clone().into_bytes()),
        // simpleperf does not zero its padding.
        padding: Bytes::from(vec![0xa5; text.len().next_multiple_of(8) - text.len()]),
        ..Default::default()
    });
    encode_record(&ks, e)
}

/// The crafted recording's bytes.
pub fn craft(c: Craft) -> Vec<u8> {
    let base = crate::fixture("callchain.data");
    let data = PerfData::open(&base).unwrap();
    let syms = synthetic_symbols(&data);
    let mut b = Builder::read(&data).unwrap().into_owned();
    b.placement = None;
    let simpleperf = |body: RecordBody<'static>| RecordItem {
        ty: body.record_type().unwrap(),
        misc: RecordMisc(0),
        attr: None,
        data: RecordData::Typed(Box::new(body)),
    };
    let mut head: Vec<RecordItem<'static>> = vec![];
    // KERNEL_SYMBOL in SPLIT records (as simpleperf writes records over 64 KiB).
    let whole = kallsyms_record(c.endian, c.kallsyms_lines);
    for piece in whole.chunks(c.piece) {
        head.push(simpleperf(RecordBody::SimpleperfSplit(SimpleperfSplit {
            data: Bytes::from(piece.to_vec()),
            ..Default::default()
        })));
    }
    if c.split_end {
        head.push(simpleperf(RecordBody::SimpleperfSplitEnd(
            Default::default(),
        )));
    }
    head.push(simpleperf(RecordBody::SimpleperfTracingData(
        SimpleperfTracingData {
            data: Bytes::from(b"tracing\0data".to_vec()),
            padding: Bytes::from(vec![0u8; 64 - 12]),
            ..Default::default()
        },
    )));
    head.push(simpleperf(RecordBody::SimpleperfEventId(
        SimpleperfEventId {
            entries: vec![SimpleperfEventIdEntry {
                attr_index: 0,
                event_id: 0x1234,
            }]
            .into(),
            ..Default::default()
        },
    )));
    head.push(simpleperf(RecordBody::SimpleperfDso(SimpleperfDso {
        dso_type: 2,
        dso_id: 7,
        min_vaddr: 0x1000,
        name: Str::padded("/system/lib64/libold.so", 8),
        ..Default::default()
    })));
    head.push(simpleperf(RecordBody::SimpleperfSymbol(SimpleperfSymbol {
        addr: 0x1100,
        len: 0x20,
        dso_id: 7,
        name: Str::padded("old_symbol", 8),
        ..Default::default()
    })));
    head.push(simpleperf(RecordBody::SimpleperfCallchain(
        SimpleperfCallchain {
            pid: 42,
            tid: 43,
            chain_type: 1,
            time: 5,
            ips: vec![0x7000, 0x7100].into(),
            sps: vec![0x7ff0, 0x7ff8].into(),
            ..Default::default()
        },
    )));
    // UNWINDING_RESULT: the old six fields, then the new layout with its details.
    head.push(simpleperf(RecordBody::SimpleperfUnwindingResult(
        SimpleperfUnwindingResult {
            time: 6,
            used_time: 100,
            error_code: 3,
            error_addr: 0xdead,
            stack_start: 0x7f00,
            stack_end: 0x8000,
            ..Default::default()
        },
    )));
    head.push(simpleperf(RecordBody::SimpleperfUnwindingResult(
        SimpleperfUnwindingResult {
            time: 7,
            used_time: 200,
            error_code: 4,
            error_addr: 0xbeef,
            stack_start: 0x7f00,
            stack_end: 0x8000,
            details: Some(SimpleperfUnwindingDetails {
                abi: SampleRegsAbi(2),
                reg_mask: 0b101,
                regs: vec![1, 2].into(),
                stack: Bytes::from(vec![9u8; 16]),
                dyn_size: Some(16),
                callchain: Some(SimpleperfUnwoundChain {
                    ips: vec![0x7000].into(),
                    sps: vec![0x7ff0].into(),
                }),
            }),
            ..Default::default()
        },
    )));
    head.push(simpleperf(RecordBody::SimpleperfDebug(SimpleperfDebug {
        time: 8,
        message: Str::padded("crafted debug message", 8),
        ..Default::default()
    })));
    // The first sample taken in the kernel: its ip and a kernel part before its user
    // call chain, named by the FILE feature's kernel entry.
    let first = b
        .records
        .iter()
        .position(|r| r.ty == RecordType::SAMPLE)
        .unwrap();
    let ctx = b.record_ctx(&b.records[first]);
    let RecordData::Raw { body, .. } = &b.records[first].data else {
        unreachable!("read raw")
    };
    let RecordBody::Sample(mut s) =
        perfdata::decode_body(b.endian, RecordType::SAMPLE, body, 0, &ctx)
            .unwrap()
            .into_owned()
    else {
        unreachable!()
    };
    let mut ips = vec![CallchainContext::KERNEL.0, KERNEL_IP, KERNEL_IP + 0x48];
    ips.extend(s.callchain.as_ref().unwrap().ips.iter());
    s.ip = Some(KERNEL_IP);
    s.callchain = Some(Callchain { ips: ips.into() });
    b.records[first].misc = RecordMisc(1); // PERF_RECORD_MISC_KERNEL
    b.records[first].data = RecordData::Typed(Box::new(RecordBody::Sample(s)));
    add_unwinding_records(&mut b, &c);
    head.append(&mut b.records);
    b.records = head;

    // Features: perf's BUILD_ID goes (simpleperf's symbols come with the file).
    b.features.retain(|f| f.id != FeatureId::BUILD_ID);
    let mut add = |id: FeatureId, body: FeatureBody<'static>| {
        b.features.push(FeatureItem {
            id,
            data: FeatureData::Typed(Box::new(body)),
        })
    };
    match c.symbols {
        Symbols::File => {
            let mut files: Vec<SimpleperfFileEntry<'static>> =
                syms.iter().map(file_entry).collect();
            // The other kinds of entry: a DEX file, a kernel module without the trailing
            // u64 (older writers), the kernel.
            files.push(SimpleperfFileEntry {
                path: Str::cstr("/data/app/base.vdex"),
                file_type: SimpleperfDsoType::DEX_FILE,
                symbols: vec![file_symbol(0x30, 8, "dex_method")],
                dex_file_offsets: Some(SimpleperfDexFileOffsets {
                    offsets: vec![0x28, 0x9000].into(),
                }),
                ..Default::default()
            });
            files.push(SimpleperfFileEntry {
                path: Str::cstr("/lib/modules/crafted.ko"),
                file_type: SimpleperfDsoType::KERNEL_MODULE,
                symbols: vec![file_symbol(0x100, 0x10, "module_function")],
                ..Default::default()
            });
            if c.kernel_entry {
                files.push(SimpleperfFileEntry {
                    path: Str::cstr("[kernel.kallsyms]"),
                    file_type: SimpleperfDsoType::KERNEL,
                    symbols: kernel_symbols()
                        .iter()
                        .map(|(v, l, n)| file_symbol(*v, *l, n))
                        .collect(),
                    ..Default::default()
                });
            }
            add(
                FeatureId::SIMPLEPERF_FILE,
                FeatureBody::SimpleperfFile(SimpleperfFile {
                    files,
                    ..Default::default()
                }),
            );
        }
        Symbols::File2 => add(
            FeatureId::SIMPLEPERF_FILE2,
            FeatureBody::SimpleperfFile2(SimpleperfFile2 {
                files: syms
                    .iter()
                    .map(|f| file_feature_message(f, 2))
                    .chain(c.kernel_entry.then(|| {
                        file_feature_message(
                            &FileSymbols {
                                path: "[kernel.kallsyms]".into(),
                                min_vaddr: 0,
                                file_offset_of_min_vaddr: 0,
                                symbols: kernel_symbols(),
                            },
                            0,
                        )
                    }))
                    .map(|m| SimpleperfFile2Entry {
                        message: Bytes::from(m),
                    })
                    .collect(),
                ..Default::default()
            }),
        ),
        Symbols::None => {}
    }
    let meta = [
        ("simpleperf_version", "1.build.crafted"),
        ("system_wide_collection", "false"),
        ("trace_offcpu", "false"),
        ("clockid", "perf"),
        ("event_type_info", "cpu-clock,1,0"),
    ];
    add(
        FeatureId::SIMPLEPERF_META_INFO,
        FeatureBody::SimpleperfMetaInfo(SimpleperfMetaInfo {
            entries: meta
                .iter()
                .map(|(k, v)| SimpleperfMetaInfoEntry {
                    key: Str::cstr(k),
                    value: Str::cstr(v),
                })
                .collect(),
            ..Default::default()
        }),
    );
    add(
        FeatureId::SIMPLEPERF_DEBUG_UNWIND,
        FeatureBody::SimpleperfDebugUnwind(SimpleperfDebugUnwind {
            message: Bytes::from(vec![0x0a, 0x04, 0x0a, 0x02, b'/', b'x']),
            ..Default::default()
        }),
    );
    add(
        FeatureId::SIMPLEPERF_DEBUG_UNWIND_FILE,
        FeatureBody::SimpleperfDebugUnwindFile(SimpleperfDebugUnwindFile {
            files: Bytes::from(b"\x7fELF".to_vec()),
            ..Default::default()
        }),
    );
    add(
        FeatureId::SIMPLEPERF_ETM_BRANCH_LIST,
        FeatureBody::SimpleperfEtmBranchList(SimpleperfEtmBranchList {
            message: Bytes::from(b"\x0a\x18simpleperf:EtmBranchList".to_vec()),
            ..Default::default()
        }),
    );
    add(
        FeatureId::SIMPLEPERF_INIT_MAP,
        FeatureBody::SimpleperfInitMap(SimpleperfInitMap {
            records: Bytes::from(vec![0u8; 16]),
            ..Default::default()
        }),
    );
    b.features.sort_by_key(|f| f.id.0);
    let mut out = std::io::Cursor::new(Vec::new());
    b.write_to(&mut out, WriteOptions::default().endian(c.endian))
        .unwrap();
    out.into_inner()
}

fn file_symbol(vaddr: u64, len: u32, name: &str) -> SimpleperfFileSymbol<'static> {
    SimpleperfFileSymbol {
        vaddr,
        len,
        name: Str::cstr(name),
    }
}

fn file_entry(f: &FileSymbols) -> SimpleperfFileEntry<'static> {
    SimpleperfFileEntry {
        path: Str::cstr(&f.path),
        file_type: SimpleperfDsoType::ELF_FILE,
        min_vaddr: f.min_vaddr,
        symbols: f
            .symbols
            .iter()
            .map(|(v, l, n)| file_symbol(*v, *l, n))
            .collect(),
        file_offset_of_min_vaddr: Some(f.file_offset_of_min_vaddr),
        ..Default::default()
    }
}

/// A whole record (its simpleperf header and body) in byte order `e`.
pub fn encode_record(body: &RecordBody<'_>, e: Endianness) -> Vec<u8> {
    let mut w = Writer::in_order(e);
    body.encode(&mut w, &Ctx::default()).unwrap();
    let body_bytes = w.into_vec();
    let mut h = Writer::in_order(e);
    SimpleperfEventHeader {
        type_: body.record_type().unwrap().0,
        size: (8 + body_bytes.len()) as u32,
    }
    .encode(&mut h, &Ctx::default())
    .unwrap();
    let mut whole = h.into_vec();
    whole.extend_from_slice(&body_bytes);
    whole
}

/// A protobuf `FileFeature` (simpleperf's record_file.proto) for `f`, encoded by hand —
/// independently of the prost types the library decodes it with.
pub fn file_feature_message(f: &FileSymbols, dso_type: u64) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn key(out: &mut Vec<u8>, tag: u64, wire: u64) {
        varint(out, tag << 3 | wire);
    }
    fn bytes(out: &mut Vec<u8>, tag: u64, b: &[u8]) {
        key(out, tag, 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
    fn uint(out: &mut Vec<u8>, tag: u64, v: u64) {
        key(out, tag, 0);
        varint(out, v);
    }
    let mut m = vec![];
    bytes(&mut m, 1, f.path.as_bytes());
    uint(&mut m, 2, dso_type);
    uint(&mut m, 3, f.min_vaddr);
    for (v, l, n) in &f.symbols {
        let mut s = vec![];
        uint(&mut s, 1, *v);
        uint(&mut s, 2, u64::from(*l));
        bytes(&mut s, 3, n.as_bytes());
        bytes(&mut m, 4, &s);
    }
    if dso_type == 2 {
        // DSO_ELF_FILE: its `elf_file` message.
        let mut elf = vec![];
        uint(&mut elf, 1, f.file_offset_of_min_vaddr);
        bytes(&mut m, 6, &elf);
    }
    m
}
