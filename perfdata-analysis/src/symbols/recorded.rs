//! Symbols a simpleperf recording carries: its FILE feature (format version 1, laid out in
//! the spec) or FILE2 feature (protobuf `FileFeature` messages), with the symbols of every
//! file samples hit, so that a report needs no binaries — as `simpleperf report` does
//! (`RecordFileReader::LoadBuildIdAndFileFeatures`, `ThreadTree::AddDsoInfo`); and the
//! recording machine's `/proc/kallsyms`, in its KERNEL_SYMBOL record.

use perfdata::types::{FeatureBody, FeatureId, SimpleperfDsoType, SimpleperfFileEntry};
use perfdata::types::{RecordBody, RecordType};
use perfdata::PerfData;

/// The kallsyms text of the recording's KERNEL_SYMBOL record (usually joined from SPLIT
/// records), and a note when it could not be read. simpleperf record writes it first in
/// the data (`CreateAndInitRecordFile` → `DumpKernelSymbol`), and `ThreadTree::Update`
/// hands it to the kernel DSO (`Dso::SetKallsyms`) when met: only the records before the
/// first sample are looked at, so a perf recording costs a look at its prologue.
pub fn recorded_kallsyms(data: &PerfData<'_>) -> (Option<String>, Vec<String>) {
    let (mut text, mut notes) = (None, vec![]);
    // A walk that fails here fails the replay too, which says so: nothing to add.
    let _ = data.for_each_record(&mut |_, rec, ctx| {
        let ty = rec.record_type();
        if ty == RecordType::SAMPLE {
            return Ok(false);
        }
        if ty != RecordType::SIMPLEPERF_KERNEL_SYMBOL {
            return Ok(true);
        }
        match data.decode(&rec, ctx) {
            Ok(RecordBody::SimpleperfKernelSymbol(k)) => {
                text = Some(String::from_utf8_lossy(&k.kallsyms).into_owned());
            }
            Ok(_) => {}
            Err(e) => notes.push(format!(
                "{e}: the recorded kallsyms (KERNEL_SYMBOL) are not used"
            )),
        }
        Ok(false)
    });
    (text, notes)
}

/// The kind of file a FILE entry describes (simpleperf's `DsoType`), as far as address
/// lookup goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedKind {
    /// The kernel: symbols at runtime addresses.
    Kernel,
    /// A kernel module.
    KernelModule,
    /// An ELF file: symbols at its virtual addresses.
    Elf,
    /// A file holding dex files: symbols at file offsets.
    Dex,
    /// Any other kind (symbol map, unknown): symbols at the addresses sampled.
    Other,
}

/// One file's symbols as the recording carries them.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedFile {
    /// The path MMAP records name the file by (`[kernel.kallsyms]` for the kernel).
    pub path: String,
    /// What kind of file.
    pub kind: RecordedKind,
    /// The lowest virtual address of its executable segments.
    pub min_vaddr: u64,
    /// The file offset of `min_vaddr` (ELF files; `None` when the recording is older
    /// than the field or the file is of another kind).
    pub file_offset_of_min_vaddr: Option<u64>,
    /// The symbols samples hit: start, length, name.
    pub symbols: Vec<(u64, u64, String)>,
}

impl RecordedFile {
    /// The address its symbols use for a file offset `offset` (`ip - map start + pgoff`):
    /// simpleperf's `Dso::IpToVaddrInFile`. An ELF file maps through `min_vaddr` and its
    /// file offset; without that offset (older recordings) simpleperf takes `ip - start +
    /// min_vaddr`, which is this for maps at offset 0.
    pub fn address_of_offset(&self, offset: u64) -> u64 {
        match self.kind {
            RecordedKind::Elf => offset
                .wrapping_sub(self.file_offset_of_min_vaddr.unwrap_or(0))
                .wrapping_add(self.min_vaddr),
            _ => offset,
        }
    }
}

/// The files of the recording's FILE feature, else of its FILE2 feature (simpleperf reads
/// FILE first), and a note for each entry that could not be read.
pub fn recorded_files(data: &PerfData<'_>) -> (Vec<RecordedFile>, Vec<String>) {
    let (mut v1, mut v2, mut notes) = (None, None, vec![]);
    for f in &data.features {
        match data.feature(f) {
            Ok(FeatureBody::SimpleperfFile(file)) => {
                v1 = Some(file.files.iter().map(from_v1).collect::<Vec<_>>())
            }
            Ok(FeatureBody::SimpleperfFile2(file)) => {
                let mut files = vec![];
                for (i, entry) in file.files.iter().enumerate() {
                    match <proto::FileFeature as prost::Message>::decode(&entry.message[..]) {
                        Ok(m) => files.push(from_v2(m)),
                        Err(e) => notes.push(format!(
                            "the FILE2 feature's entry #{i} is not a FileFeature message ({e}): its symbols are not used"
                        )),
                    }
                }
                v2 = Some(files);
            }
            Err(e) if f.id == FeatureId::SIMPLEPERF_FILE || f.id == FeatureId::SIMPLEPERF_FILE2 => {
                notes.push(format!("{e}: the recorded symbols are not used"))
            }
            _ => {}
        }
    }
    (v1.or(v2).unwrap_or_default(), notes)
}

fn kind_of(t: u32) -> RecordedKind {
    match SimpleperfDsoType(t) {
        SimpleperfDsoType::KERNEL => RecordedKind::Kernel,
        SimpleperfDsoType::KERNEL_MODULE => RecordedKind::KernelModule,
        SimpleperfDsoType::ELF_FILE => RecordedKind::Elf,
        SimpleperfDsoType::DEX_FILE => RecordedKind::Dex,
        _ => RecordedKind::Other,
    }
}

fn from_v1(e: &SimpleperfFileEntry<'_>) -> RecordedFile {
    let kind = kind_of(e.file_type.0);
    RecordedFile {
        path: e.path.to_str_lossy().into_owned(),
        kind,
        min_vaddr: e.min_vaddr,
        file_offset_of_min_vaddr: e
            .file_offset_of_min_vaddr
            .filter(|_| kind == RecordedKind::Elf),
        symbols: e
            .symbols
            .iter()
            .map(|s| {
                (
                    s.vaddr,
                    u64::from(s.len),
                    s.name.to_str_lossy().into_owned(),
                )
            })
            .collect(),
    }
}

fn from_v2(m: proto::FileFeature) -> RecordedFile {
    let kind = kind_of(m.r#type);
    let file_offset = match m.type_specific_msg {
        Some(proto::file_feature::TypeSpecificMsg::ElfFile(e)) => Some(e.file_offset_of_min_vaddr),
        _ => None,
    };
    RecordedFile {
        path: m.path,
        kind,
        min_vaddr: m.min_vaddr,
        file_offset_of_min_vaddr: file_offset.filter(|_| kind == RecordedKind::Elf),
        symbols: m
            .symbol
            .into_iter()
            .map(|s| (s.vaddr, u64::from(s.len), s.name))
            .collect(),
    }
}

/// simpleperf's `record_file.proto` (package `simpleperf.proto`, proto3): the messages of
/// the FILE2 feature, written with prost's derive as prost-build would generate them
/// (field numbers as in AOSP `system/extras/simpleperf/record_file.proto`).
pub mod proto {
    /// One file's symbols (one FILE2 entry).
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct FileFeature {
        /// The file's path.
        #[prost(string, tag = "1")]
        pub path: ::prost::alloc::string::String,
        /// Its `DsoType`.
        #[prost(uint32, tag = "2")]
        pub r#type: u32,
        /// The lowest virtual address of its executable segments.
        #[prost(uint64, tag = "3")]
        pub min_vaddr: u64,
        /// The symbols samples hit.
        #[prost(message, repeated, tag = "4")]
        pub symbol: ::prost::alloc::vec::Vec<file_feature::Symbol>,
        /// What only one kind of file has.
        #[prost(oneof = "file_feature::TypeSpecificMsg", tags = "5, 6, 7")]
        pub type_specific_msg: ::core::option::Option<file_feature::TypeSpecificMsg>,
    }

    /// The nested messages of [`FileFeature`].
    pub mod file_feature {
        /// A symbol.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub struct Symbol {
            /// Start address.
            #[prost(uint64, tag = "1")]
            pub vaddr: u64,
            /// Length in bytes.
            #[prost(uint32, tag = "2")]
            pub len: u32,
            /// Name.
            #[prost(string, tag = "3")]
            pub name: ::prost::alloc::string::String,
        }
        /// A `DEX_FILE`'s dex file offsets.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub struct DexFile {
            /// File offsets of its dex files.
            #[prost(uint64, repeated, tag = "1")]
            pub dex_file_offset: ::prost::alloc::vec::Vec<u64>,
        }
        /// An `ELF_FILE`'s file offset of `min_vaddr`.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub struct ElfFile {
            /// The file offset.
            #[prost(uint64, tag = "1")]
            pub file_offset_of_min_vaddr: u64,
        }
        /// A `KERNEL_MODULE`'s memory offset of `min_vaddr`.
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub struct KernelModule {
            /// The memory offset.
            #[prost(uint64, tag = "1")]
            pub memory_offset_of_min_vaddr: u64,
        }
        /// The `type_specific_msg` oneof.
        #[derive(Clone, PartialEq, ::prost::Oneof)]
        pub enum TypeSpecificMsg {
            /// Only when type = DSO_DEX_FILE.
            #[prost(message, tag = "5")]
            DexFile(DexFile),
            /// Only when type = DSO_ELF_FILE.
            #[prost(message, tag = "6")]
            ElfFile(ElfFile),
            /// Only when type = DSO_KERNEL_MODULE.
            #[prost(message, tag = "7")]
            KernelModule(KernelModule),
        }
    }
}
