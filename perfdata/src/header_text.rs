//! perf's header text: what `perf report --header-only` and `perf script --header-only`
//! (perf 6.1, `perf_session__fprintf_info`) print for a recording, byte for byte; with
//! [`HeaderTextOptions::show_full_info`], what they print with `-I`.
//!
//! perf prints its header in two steps, and so does this module. Opening the file, it
//! *processes* each feature section in id order into its environment (`struct perf_env`),
//! stopping at the first one it cannot process; then it *prints* every feature the bitmap
//! lists, each from that environment. So a feature after one perf could not process is
//! printed as perf prints an empty one (`# hostname : (null)`), and the text here follows
//! the same two steps: `Env` is perf's environment, filled by `process`, printed by
//! `print`.
//!
//! A pipe-layout stream has no feature sections: its features come as HEADER_FEATURE
//! records. `perf script --header-only` prints only the header lines then; `perf report
//! --header-only` goes on reading the stream and prints each feature as its record arrives,
//! after the header lines, up to the end-of-features record
//! ([`HeaderTextOptions::pipe_features`]). [`write()`] takes a recording in memory (a file or
//! a saved stream), [`write_stream`] a stream as it comes (standard input).
//!
//! Where the recording does not say, perf takes some facts from its own machine (the CPU
//! id, on an AMD machine the PMU mappings: [`Machine`]), and from the file (its
//! modification time; whether it is a `--threads` directory): [`HeaderTextOptions`].

use crate::container::{FeatureSection, Layout, PerfData, PipeReader, Recording};
use crate::events::default_event_name;
use crate::generated::perf_data::{
    Attr, AttrFlags, AttrType, AuxAction, BranchSampleType, Ctx, EventDesc, FeatureBody, FeatureId,
    FileSection, PosixClock, ReadFormat, RecordBody, RecordType, SampleType,
};
use crate::rt::{Endianness, Error, Reader};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::{SystemTime, UNIX_EPOCH};

mod bpf;
mod clock;
mod machine;

pub use machine::Machine;

use clock::{ctime, LocalTime};

/// What to print, and what perf takes from outside the recording's bytes.
#[derive(Debug, Clone)]
pub struct HeaderTextOptions {
    /// perf's `-I` / `--show-info`: print the topology, NUMA, cache and memory sections
    /// (and HYBRID_TOPOLOGY) instead of `# CPU_TOPOLOGY info available, use -I to display`.
    pub show_full_info: bool,
    /// A pipe-layout stream: also print its HEADER_FEATURE records, after the header lines,
    /// as `perf report --header-only` does (and `perf script --header`, before the samples).
    /// `perf script --header-only` prints the header lines only. No effect on a file.
    pub pipe_features: bool,
    /// perf's `captured on` line: the modification time of the file it reads (`fstat` of
    /// its descriptor: the file, a directory's `data` file, or the pipe), in local time.
    pub captured_on: SystemTime,
    /// The recording is a `perf record --threads` directory: perf processes a DIR_FORMAT
    /// feature only then (elsewhere it stops processing at it).
    pub directory: bool,
    /// The machine perf runs on, for what perf takes from it where the recording does not
    /// say ([`Machine`]); `Machine::default()` when it has nothing to give (perf's
    /// `(null)` then).
    pub machine: Machine,
}

impl HeaderTextOptions {
    /// The options perf would have reading `recording` on this machine: its header file's
    /// modification time, whether it is a directory, [`Machine::this`]; the text without
    /// `-I`, pipe features included.
    pub fn for_recording(recording: &Recording) -> Result<Self, Error> {
        let file = if recording.is_directory() {
            recording.path().join("data")
        } else {
            recording.path().to_path_buf()
        };
        let captured_on = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .map_err(|e| Error::from(e).in_file(&file))?;
        Ok(HeaderTextOptions {
            show_full_info: false,
            pipe_features: true,
            captured_on,
            directory: recording.is_directory(),
            machine: Machine::this(),
        })
    }
}

/// Writes perf's header text for `data` to `out`, framed by perf's `# ========` lines.
///
/// Features perf 6.1 does not know (ids from 32 on) are left out, as perf leaves them out.
/// A feature that does not decode is a feature perf could not process: it, and in a file
/// every feature after it, print as perf prints them unprocessed. The error is for `out`
/// and, in a pipe stream whose features are printed, for a stream that breaks off before
/// its end-of-features record (what came before the break has been written).
pub fn write(
    data: &PerfData<'_>,
    opts: &HeaderTextOptions,
    out: &mut impl Write,
) -> Result<(), Error> {
    let mut p = Printer {
        out,
        full: opts.show_full_info,
    };
    let (offset, size) = data
        .header
        .as_ref()
        .map_or((0, 0), |h| (h.data.offset, h.data.size));
    header_lines(&mut p, opts, data.format.legacy_v1, offset, size)?;
    if data.format.layout == Layout::Pipe {
        p.put(b"# ========\n#\n")?;
        if opts.pipe_features {
            let mut stream = PipeFeatures::new(opts, data.format.endian);
            let mut failed: Option<Error> = None;
            let walk = data.for_each_record(&mut |_, rec, ctx| {
                let body = data.decode(&rec, ctx);
                match stream.record(&mut p, rec.record_type(), body, rec.body.len()) {
                    Ok(go_on) => Ok(go_on),
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            walk?;
        }
        p.out.flush()?;
        return Ok(());
    }
    let bitmap = perf_bitmap(data);
    file_features(data, &bitmap, opts, &mut p)?;
    p.put(b"# missing features: ")?;
    for id in 1..LAST_FEATURE {
        if bitmap[id as usize / 64] >> (id % 64) & 1 == 0 {
            p.put(FEATURES[id as usize].name.as_bytes())?;
            p.put(b" ")?;
        }
    }
    p.put(b"\n# ========\n#\n")?;
    p.out.flush()?;
    Ok(())
}

/// [`write()`] for a pipe-layout stream read as it comes (standard input), in bounded
/// memory: the header lines and, with [`HeaderTextOptions::pipe_features`], the features
/// of the HEADER_FEATURE records, read up to the end-of-features record (where perf
/// stops; to the end of a stream without one). The records after it are left in
/// `input`, for a caller that prints the rest of the stream (`perf script --header`).
pub fn write_stream<R: Read>(
    input: &mut PipeReader<R>,
    opts: &HeaderTextOptions,
    out: &mut impl Write,
) -> Result<(), Error> {
    let mut p = Printer {
        out,
        full: opts.show_full_info,
    };
    let format = input.format();
    header_lines(&mut p, opts, format.legacy_v1, 0, 0)?;
    p.put(b"# ========\n#\n")?;
    if opts.pipe_features {
        let mut stream = PipeFeatures::new(opts, format.endian);
        while let Some(rec) = input.next_record()? {
            let body = rec.decode();
            if !stream.record(&mut p, rec.raw.record_type(), body, rec.raw.body.len())? {
                break;
            }
        }
    }
    p.out.flush()?;
    Ok(())
}

/// The lines perf prints before the features: `captured on`, the header version (0 for
/// the legacy `PERFFILE` magic, 1 otherwise) and the data section (zeros in a pipe).
fn header_lines<W: Write>(
    p: &mut Printer<'_, W>,
    opts: &HeaderTextOptions,
    legacy_v1: bool,
    offset: u64,
    size: u64,
) -> Result<(), Error> {
    p.put(b"# ========\n")?;
    p.put(b"# captured on    : ")?;
    p.put(&ctime(unix_seconds(opts.captured_on)))?;
    p.line(format_args!("# header version : {}", u32::from(!legacy_v1)))?;
    p.line(format_args!("# data offset    : {offset}"))?;
    p.line(format_args!("# data size      : {size}"))?;
    p.line(format_args!(
        "# feat offset    : {}",
        offset.wrapping_add(size)
    ))
}

/// Seconds since the epoch, rounded down (as `st_mtime` is).
fn unix_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => {
            let d = e.duration();
            let s = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            if d.subsec_nanos() > 0 {
                -s - 1
            } else {
                -s
            }
        }
    }
}

/// The feature bitmap as perf reads it. A file of the other byte order holds it as
/// `unsigned long`s of its producer's size, which perf guesses (`perf_file_header__read`):
/// 64-bit words if HOSTNAME (set by every perf since 2012) is then among the features,
/// else 32-bit words if it is then, else no feature but BUILD_ID.
fn perf_bitmap(data: &PerfData<'_>) -> [u64; 4] {
    let Some(bits) = data.header.as_ref().and_then(|h| h.adds_features.as_ref()) else {
        // The 72-byte header of old files has no bitmap: no features.
        return [0; 4];
    };
    // The bitmap's bytes as on file (the spec reads it as 64-bit words in file order).
    let mut raw = [0u8; 32];
    for (i, w) in bits.iter().take(4).enumerate() {
        let b = match data.format.endian {
            Endianness::Little => w.to_le_bytes(),
            Endianness::Big => w.to_be_bytes(),
        };
        raw[i * 8..i * 8 + 8].copy_from_slice(&b);
    }
    // perf reads the bytes as its own words, swapped `chunk` bytes at a time.
    let words = |chunk: usize| -> [u64; 4] {
        let mut b = raw;
        if data.format.endian != native() {
            b.chunks_mut(chunk).for_each(<[u8]>::reverse);
        }
        let mut w = [0u64; 4];
        for (w, c) in w.iter_mut().zip(b.chunks_exact(8)) {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            *w = u64::from_ne_bytes(word);
        }
        w
    };
    let hostname = |w: &[u64; 4]| w[0] >> FeatureId::HOSTNAME.0 & 1 == 1;
    let w64 = words(8);
    if data.format.endian == native() || hostname(&w64) {
        return w64;
    }
    let w32 = words(4);
    if hostname(&w32) {
        return w32;
    }
    [1 << FeatureId::BUILD_ID.0, 0, 0, 0]
}

/// The feature sections as perf reads them: one per bit of its bitmap, from the table at
/// `data.offset + data.size` (where a recorder that never finished left records instead);
/// `None` when the file cuts the table short (perf then reads no feature at all).
fn perf_sections(data: &PerfData<'_>, bitmap: &[u64; 4]) -> Option<Vec<FeatureSection>> {
    let h = data.header.as_ref()?;
    let ids: Vec<u32> = (0..256u32)
        .filter(|&id| bitmap[id as usize / 64] >> (id % 64) & 1 == 1)
        .collect();
    if ids.is_empty() {
        return Some(vec![]);
    }
    let at = h.data.offset.wrapping_add(h.data.size);
    let table = data.bytes.get(usize::try_from(at).ok()?..)?;
    let mut r = Reader::in_order(table, at, data.format.endian);
    ids.into_iter()
        .map(|id| {
            let s = FileSection::decode(&mut r, &Ctx::default()).ok()?;
            Some(FeatureSection {
                id: FeatureId(id),
                offset: s.offset,
                size: s.size,
            })
        })
        .collect()
}

/// The file layout: every feature processed in id order until one fails, then every
/// feature printed.
fn file_features<W: Write>(
    data: &PerfData<'_>,
    bitmap: &[u64; 4],
    opts: &HeaderTextOptions,
    p: &mut Printer<'_, W>,
) -> Result<(), Error> {
    let Some(sections) = perf_sections(data, bitmap) else {
        return Ok(());
    };
    // perf cannot seek to an offset past `off_t`: it skips such a section (neither
    // processed nor printed) and goes on.
    let known: Vec<_> = sections
        .iter()
        .filter(|f| f.id.0 < LAST_FEATURE && i64::try_from(f.offset).is_ok())
        .collect();
    let mut env = Env::new(
        data.session.attrs.iter().map(|a| &a.attr),
        opts.directory,
        data.format.endian,
    );
    for f in known.iter().filter(|f| FEATURES[f.id.0 as usize].process) {
        let body = data.feature(f).ok();
        if !env.process(f.id, body.as_ref(), f.size, false) {
            break;
        }
    }
    env.assume_local(&opts.machine);
    for f in &known {
        let ops = &FEATURES[f.id.0 as usize];
        if !ops.print {
            continue;
        }
        if ops.full_only && !p.full {
            p.line(format_args!(
                "# {} info available, use -I to display",
                ops.name
            ))?;
            continue;
        }
        if f.id == FeatureId::EVENT_DESC {
            // perf reads EVENT_DESC again to print it.
            let desc = match data.feature(f) {
                Ok(FeatureBody::EventDesc(d)) => Some(d),
                _ => None,
            };
            p.event_desc(desc.as_ref(), data.format.endian)?;
        } else {
            env.print(f.id, p)?;
        }
    }
    Ok(())
}

/// The pipe layout: each HEADER_FEATURE record processed and printed as it arrives, up to
/// the end-of-features record (perf 6.1 stops there, and at a record it cannot process).
struct PipeFeatures {
    env: Env,
}

impl PipeFeatures {
    fn new(opts: &HeaderTextOptions, endian: Endianness) -> Self {
        let mut env = Env::new(std::iter::empty(), false, endian);
        // Opening the stream, before any feature.
        env.assume_local(&opts.machine);
        PipeFeatures { env }
    }

    /// One record of the stream (`body_len` bytes after its header): false where perf
    /// stops reading features.
    fn record<W: Write>(
        &mut self,
        p: &mut Printer<'_, W>,
        ty: RecordType,
        body: Result<RecordBody<'_>, Error>,
        body_len: usize,
    ) -> Result<bool, Error> {
        let env = &mut self.env;
        if ty == RecordType::HEADER_ATTR {
            if let Ok(RecordBody::HeaderAttr(a)) = &body {
                env.add_evsel(&a.attr);
            }
            return Ok(true);
        }
        if ty != RecordType::HEADER_FEATURE {
            return Ok(true);
        }
        let Ok(RecordBody::HeaderFeature(f)) = body else {
            return Ok(false);
        };
        // perf does not swap a HEADER_FEATURE record of the other byte order: it sees the
        // id byte-swapped (and stops, as the id is then out of range).
        if env.endian != native() {
            return Ok(false);
        }
        // perf rejects HEADER_RESERVED and ids past its own end marker, and stops at the
        // marker when it only prints the header.
        if f.feat_id == 0 || f.feat_id >= u64::from(LAST_FEATURE) {
            return Ok(false);
        }
        let id = FeatureId(f.feat_id as u32);
        let ops = &FEATURES[id.0 as usize];
        if !ops.process {
            return Ok(true);
        }
        let size = (body_len as u64).saturating_sub(8);
        if !env.process(id, f.data.as_deref(), size, true) {
            return Ok(false);
        }
        if !ops.print {
            return Ok(true);
        }
        if ops.full_only && !p.full {
            p.line(format_args!(
                "# {} info available, use -I to display",
                ops.name
            ))?;
        } else if id == FeatureId::EVENT_DESC {
            let desc = match f.data.as_deref() {
                Some(FeatureBody::EventDesc(d)) => Some(d),
                _ => None,
            };
            p.event_desc(desc, env.endian)?;
        } else {
            env.print(id, p)?;
        }
        Ok(true)
    }
}

/// perf 6.1's `HEADER_LAST_FEATURE`: the features it knows are 1 to 31.
const LAST_FEATURE: u32 = 32;

/// perf 6.1's `feat_ops` table, for what the text needs of it: the name, whether the
/// feature has a printer and a processor, and whether only `-I` prints it in full.
struct FeatOps {
    name: &'static str,
    print: bool,
    process: bool,
    full_only: bool,
}

const fn op(name: &'static str, print: bool, process: bool, full_only: bool) -> FeatOps {
    FeatOps {
        name,
        print,
        process,
        full_only,
    }
}

const FEATURES: [FeatOps; LAST_FEATURE as usize] = [
    op("RESERVED", false, false, false),
    op("TRACING_DATA", false, true, false),
    op("BUILD_ID", false, true, false),
    op("HOSTNAME", true, true, false),
    op("OSRELEASE", true, true, false),
    op("VERSION", true, true, false),
    op("ARCH", true, true, false),
    op("NRCPUS", true, true, false),
    op("CPUDESC", true, true, false),
    op("CPUID", true, true, false),
    op("TOTAL_MEM", true, true, false),
    op("CMDLINE", true, true, false),
    op("EVENT_DESC", true, true, false),
    op("CPU_TOPOLOGY", true, true, true),
    op("NUMA_TOPOLOGY", true, true, true),
    op("BRANCH_STACK", true, false, false),
    op("PMU_MAPPINGS", true, true, false),
    op("GROUP_DESC", true, true, false),
    op("AUXTRACE", true, true, false),
    op("STAT", true, false, false),
    op("CACHE", true, true, true),
    op("SAMPLE_TIME", true, true, false),
    op("MEM_TOPOLOGY", true, true, true),
    op("CLOCKID", true, true, false),
    op("DIR_FORMAT", true, true, false),
    op("BPF_PROG_INFO", true, true, false),
    op("BPF_BTF", true, true, false),
    op("COMPRESSED", true, true, false),
    op("CPU_PMU_CAPS", true, true, false),
    op("CLOCK_DATA", true, true, false),
    op("HYBRID_TOPOLOGY", true, true, true),
    op("PMU_CAPS", true, true, false),
];

/// One event of perf's event list, as far as GROUP_DESC changes and prints it.
struct Evsel {
    /// From EVENT_DESC (by position), else perf's name for the type and config.
    name: Option<Vec<u8>>,
    type_: AttrType,
    config: u64,
    leader: usize,
    nr_members: u32,
    group_name: Option<Vec<u8>>,
}

impl Evsel {
    fn name(&self) -> Vec<u8> {
        match &self.name {
            Some(n) => n.clone(),
            None => default_event_name(self.type_, self.config).into_bytes(),
        }
    }
}

/// One CPU of CPU_TOPOLOGY.
#[derive(Clone, Copy, Default)]
struct CpuIds {
    core_id: u32,
    socket_id: u32,
    die_id: u32,
}

/// One NUMA node: its CPU list as perf parsed it.
struct NumaNode {
    node: u32,
    mem_total: u64,
    mem_free: u64,
    /// Runs of consecutive CPUs.
    cpus: Vec<(i64, i64)>,
}

/// One level of CACHE.
struct CacheLevel {
    level: u32,
    type_: Vec<u8>,
    size: Vec<u8>,
    map: Vec<u8>,
}

/// One node of MEM_TOPOLOGY: its bitmap of memory blocks, `nbits` long.
struct MemoryNode {
    node: u64,
    nbits: u64,
    words: Vec<u64>,
}

/// CLOCK_DATA.
struct ClockData {
    clockid: u32,
    tod_ns: u64,
    clockid_ns: u64,
}

/// perf's `struct perf_env` (and the parts of its session the printers read), as far as
/// the header text needs it: empty until `process` fills a part.
#[derive(Default)]
struct Env {
    directory: bool,
    /// The recording's byte order.
    endian: Endianness,
    hostname: Option<Vec<u8>>,
    os_release: Option<Vec<u8>>,
    version: Option<Vec<u8>>,
    arch: Option<Vec<u8>>,
    cpu_desc: Option<Vec<u8>>,
    cpuid: Option<Vec<u8>>,
    nr_cpus_avail: i32,
    nr_cpus_online: i32,
    total_mem: u64,
    cmdline: Vec<Vec<u8>>,
    sibling_cores: Vec<Vec<u8>>,
    sibling_threads: Vec<Vec<u8>>,
    sibling_dies: Vec<Vec<u8>>,
    /// `None`: perf's `env.cpu` is NULL (no per-CPU ids, or they were dropped).
    cpu: Option<Vec<CpuIds>>,
    numa_nodes: Vec<NumaNode>,
    /// `None`: "not available" (no PMU_MAPPINGS processed, or an empty one).
    pmu_mappings: Option<Vec<(u32, Vec<u8>)>>,
    evsels: Vec<Evsel>,
    caches: Vec<CacheLevel>,
    first_sample_time: u64,
    last_sample_time: u64,
    memory_bsize: u64,
    memory_nodes: Vec<MemoryNode>,
    clockid_res_ns: u64,
    dir_version: u64,
    bpf: bpf::BpfEnv,
    comp_type: u32,
    comp_level: u32,
    comp_ratio: u32,
    cpu_pmu_caps: Vec<Vec<u8>>,
    clock: Option<ClockData>,
    hybrid_nodes: Vec<(Vec<u8>, Vec<u8>)>,
    pmu_caps: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
}

/// The text of a feature string: perf uses it as a C string.
fn text(s: &crate::generated::perf_data::PerfString<'_>) -> Vec<u8> {
    s.text.text().to_vec()
}

/// perf's `string_size`: what it counts a feature string as (its text, a NUL, padding
/// to 64 bytes, the u32 length), whatever its length on file.
fn string_size(s: &crate::generated::perf_data::PerfString<'_>) -> u64 {
    (s.text.text().len() as u64 + 1).div_ceil(64) * 64 + 4
}

impl Env {
    fn new<'a, 'b: 'a>(
        attrs: impl Iterator<Item = &'a Attr<'b>>,
        directory: bool,
        endian: Endianness,
    ) -> Self {
        let mut env = Env {
            directory,
            endian,
            bpf: bpf::BpfEnv::new(endian),
            ..Env::default()
        };
        for a in attrs {
            env.add_evsel(a);
        }
        env
    }

    /// What opening the session takes from the machine perf runs on
    /// (`evlist__init_trace_event_sample_raw`): the CPU id when the recording gave none
    /// (`perf_env__cpuid`), and on x86 with an AMD CPU id the PMU mappings when it gave
    /// none (`evlist__has_amd_ibs`).
    fn assume_local(&mut self, m: &Machine) {
        if self.cpuid.is_none() {
            self.cpuid = m.cpuid.as_ref().map(|c| c.clone().into_bytes());
        }
        let arch = match &self.arch {
            Some(a) => a.as_slice(),
            None => m.arch.as_deref().map_or(&b""[..], str::as_bytes),
        };
        // perf's `normalize_arch` calls x86_64 and i?86 "x86".
        let x86 = arch == b"x86_64"
            || (arch.len() >= 4 && arch[0] == b'i' && arch[2] == b'8' && arch[3] == b'6');
        let amd = self
            .cpuid
            .as_deref()
            .is_some_and(|c| c.starts_with(b"AuthenticAMD"));
        if x86 && amd && self.pmu_mappings.is_none() && !m.pmu_mappings.is_empty() {
            let pmus = m.pmu_mappings.iter();
            self.pmu_mappings = Some(pmus.map(|(t, n)| (*t, n.clone().into_bytes())).collect());
        }
    }

    fn add_evsel(&mut self, attr: &Attr<'_>) {
        let index = self.evsels.len();
        self.evsels.push(Evsel {
            name: None,
            type_: attr.type_,
            config: attr.config,
            leader: index,
            nr_members: 1,
            group_name: None,
        });
    }

    /// perf's `process_*` for feature `id` (`payload` bytes long; `None` when it does not
    /// decode): false where perf's fails (in a file perf then processes no later feature;
    /// in a pipe it stops).
    fn process(
        &mut self,
        id: FeatureId,
        body: Option<&FeatureBody<'_>>,
        payload: u64,
        pipe: bool,
    ) -> bool {
        let Some(body) = body else {
            // perf reads EVENT_DESC without failing: an unreadable one names no event.
            // BUILD_ID's reader, too, only reports its problem.
            return id == FeatureId::EVENT_DESC || id == FeatureId::BUILD_ID;
        };
        match body {
            FeatureBody::Hostname(s) => self.hostname = Some(text(&s.value)),
            FeatureBody::Osrelease(s) => self.os_release = Some(text(&s.value)),
            FeatureBody::Version(s) => self.version = Some(text(&s.value)),
            FeatureBody::Arch(s) => self.arch = Some(text(&s.value)),
            FeatureBody::Cpudesc(s) => self.cpu_desc = Some(text(&s.value)),
            FeatureBody::Cpuid(s) => self.cpuid = Some(text(&s.value)),
            FeatureBody::Nrcpus(n) => {
                self.nr_cpus_avail = n.nr_cpus_avail as i32;
                self.nr_cpus_online = n.nr_cpus_online as i32;
            }
            FeatureBody::TotalMem(m) => self.total_mem = m.total_mem,
            FeatureBody::Cmdline(c) => self.cmdline = c.args.iter().map(text).collect(),
            // The N-th described event names the N-th event of the list.
            FeatureBody::EventDesc(d) if readable(d, self.endian) => {
                for (i, e) in d.events.iter().enumerate() {
                    if e.attr.size == 0 {
                        break;
                    }
                    if let Some(ev) = self.evsels.get_mut(i) {
                        ev.name.get_or_insert_with(|| text(&e.name));
                    }
                }
            }
            FeatureBody::CpuTopology(t) => return self.process_cpu_topology(t, payload),
            FeatureBody::NumaTopology(t) => {
                let mut nodes = vec![];
                for n in &t.nodes {
                    let Some(cpus) = cpu_map_new(n.cpus.text.text()) else {
                        return false;
                    };
                    nodes.push(NumaNode {
                        node: n.node,
                        mem_total: n.mem_total,
                        mem_free: n.mem_free,
                        cpus,
                    });
                }
                self.numa_nodes = nodes;
            }
            // An empty list leaves perf's "not available".
            FeatureBody::PmuMappings(m) if !m.pmus.is_empty() => {
                let pmus = m.pmus.iter().map(|p| (p.type_, text(&p.name))).collect();
                self.pmu_mappings = Some(pmus);
            }
            FeatureBody::GroupDesc(g) => return self.process_group_desc(g),
            FeatureBody::AuxtraceFeature(a) => {
                // perf reads a count first: the index without one is not perf's.
                return a.perf.is_some();
            }
            FeatureBody::Cache(c) => {
                if c.version != 1 {
                    return false;
                }
                self.caches = c
                    .levels
                    .iter()
                    .map(|l| CacheLevel {
                        level: l.level,
                        type_: text(&l.type_),
                        size: text(&l.size),
                        map: text(&l.map),
                    })
                    .collect();
            }
            FeatureBody::SampleTime(t) => {
                self.first_sample_time = t.first_sample_time;
                self.last_sample_time = t.last_sample_time;
            }
            FeatureBody::MemTopology(m) => {
                if m.version != 1 {
                    return false;
                }
                self.memory_bsize = m.block_size;
                self.memory_nodes = m
                    .nodes
                    .iter()
                    .map(|n| MemoryNode {
                        node: n.node,
                        nbits: n.nbits,
                        words: n.words.iter().collect(),
                    })
                    .collect();
            }
            FeatureBody::Clockid(c) => self.clockid_res_ns = c.clockid_res_ns,
            FeatureBody::DirFormat(d) => {
                // perf reads it only into a directory's data.
                if !self.directory || pipe {
                    return false;
                }
                self.dir_version = d.version;
            }
            FeatureBody::BpfProgInfo(b) => return self.bpf.process_prog_info(b),
            FeatureBody::BpfBtf(b) => return self.bpf.process_btf(b),
            FeatureBody::CompressedFeature(c) => {
                self.comp_type = c.comp_type.0;
                self.comp_level = c.comp_level;
                self.comp_ratio = c.comp_ratio;
            }
            FeatureBody::CpuPmuCaps(c) => self.cpu_pmu_caps = caps(&c.caps),
            FeatureBody::ClockData(c) => {
                if c.version != 1 {
                    return false;
                }
                self.clock = Some(ClockData {
                    clockid: c.clockid.0,
                    tod_ns: c.tod_ns,
                    clockid_ns: c.clockid_ns,
                });
            }
            FeatureBody::HybridTopology(h) => {
                self.hybrid_nodes = h
                    .nodes
                    .iter()
                    .map(|n| (text(&n.pmu_name), text(&n.cpus)))
                    .collect();
            }
            FeatureBody::PmuCaps(c) => {
                self.pmu_caps = c
                    .pmus
                    .iter()
                    .map(|p| (text(&p.pmu_name), caps(&p.caps)))
                    .collect();
            }
            _ => {}
        }
        true
    }

    /// perf's `process_cpu_topology`: it decides by its own count of the bytes read so
    /// far (`string_size`) whether the per-CPU ids and the die part follow.
    fn process_cpu_topology(
        &mut self,
        t: &crate::generated::perf_data::CpuTopology<'_>,
        payload: u64,
    ) -> bool {
        let cpu_nr = self.nr_cpus_avail;
        if cpu_nr < 0 {
            // calloc of a negative count fails.
            return false;
        }
        self.sibling_cores = t.package_cpus.iter().map(text).collect();
        self.sibling_threads = t.core_cpus.iter().map(text).collect();
        let mut size = 8 + t
            .package_cpus
            .iter()
            .chain(&t.core_cpus)
            .map(string_size)
            .sum::<u64>();
        if payload <= size {
            // An old perf's: no per-CPU ids.
            self.cpu = None;
            return true;
        }
        let Some(ids) = &t.cpus else {
            self.cpu = None;
            return false;
        };
        // On s390 and arm64 socket ids are not bounded by the CPU count.
        let arch = self.arch.as_deref().unwrap_or(b"");
        let check = !(arch.starts_with(b"s390") || arch.starts_with(b"aarch64"));
        // One entry per CPU (`nr_cpus_avail` of them, as the spec decodes them).
        let mut cpu = Vec::with_capacity(ids.len());
        for id in ids.iter() {
            if check && id.socket_id != u32::MAX && id.socket_id > cpu_nr as u32 {
                self.cpu = None;
                return false;
            }
            cpu.push(CpuIds {
                core_id: id.core_id,
                socket_id: id.socket_id,
                die_id: 0,
            });
        }
        size += 8 * cpu_nr as u64;
        if payload <= size {
            self.cpu = Some(cpu);
            return true;
        }
        let Some(dies) = &t.dies else {
            // perf reads the die count, then fails on what should follow it.
            let has_count = payload - size >= 4;
            self.cpu = (!has_count).then_some(cpu);
            return false;
        };
        self.sibling_dies = dies.die_cpus.iter().map(text).collect();
        for (c, die) in cpu.iter_mut().zip(dies.die_ids.iter()) {
            c.die_id = die;
        }
        self.cpu = Some(cpu);
        true
    }

    /// perf's `process_group_desc`: leaders and members marked on the event list as far
    /// as the description fits it (what it marked stays when it then finds it invalid).
    fn process_group_desc(&mut self, g: &crate::generated::perf_data::GroupDesc<'_>) -> bool {
        let groups = &g.groups;
        if groups.is_empty() {
            return true;
        }
        let (mut i, mut nr, mut leader) = (0usize, 0u32, 0usize);
        for at in 0..self.evsels.len() {
            if let Some(d) = groups.get(i).filter(|d| d.leader_idx as usize == at) {
                let ev = &mut self.evsels[at];
                ev.leader = at;
                let name = text(&d.name);
                if name != b"{anon_group}" {
                    ev.group_name = Some(name);
                }
                ev.nr_members = d.nr_members;
                if nr > 0 {
                    return false;
                }
                leader = at;
                nr = d.nr_members.wrapping_sub(1);
                i += 1;
            } else if nr > 0 {
                self.evsels[at].leader = leader;
                nr -= 1;
            }
        }
        i == groups.len() && nr == 0
    }

    /// perf's `print_*` for feature `id`, from what was processed.
    fn print<W: Write>(&self, id: FeatureId, p: &mut Printer<'_, W>) -> Result<(), Error> {
        match id {
            FeatureId::HOSTNAME => p.str_line(b"# hostname : ", &self.hostname),
            FeatureId::OSRELEASE => p.str_line(b"# os release : ", &self.os_release),
            FeatureId::VERSION => p.str_line(b"# perf version : ", &self.version),
            FeatureId::ARCH => p.str_line(b"# arch : ", &self.arch),
            FeatureId::NRCPUS => {
                p.line(format_args!(
                    "# nrcpus online : {}",
                    self.nr_cpus_online as u32
                ))?;
                p.line(format_args!(
                    "# nrcpus avail : {}",
                    self.nr_cpus_avail as u32
                ))
            }
            FeatureId::CPUDESC => p.str_line(b"# cpudesc : ", &self.cpu_desc),
            FeatureId::CPUID => p.str_line(b"# cpuid : ", &self.cpuid),
            FeatureId::TOTAL_MEM => p.line(format_args!("# total memory : {} kB", self.total_mem)),
            FeatureId::CMDLINE => {
                p.put(b"# cmdline : ")?;
                for arg in &self.cmdline {
                    // Quotes are escaped as `\'`.
                    for (i, part) in arg.split(|&b| b == b'\'').enumerate() {
                        if i > 0 {
                            p.put(b"\\'")?;
                        }
                        p.put(part)?;
                    }
                    p.put(b" ")?;
                }
                p.put(b"\n")
            }
            FeatureId::CPU_TOPOLOGY => self.print_cpu_topology(p),
            FeatureId::NUMA_TOPOLOGY => {
                for n in &self.numa_nodes {
                    p.line(format_args!(
                        "# node{} meminfo  : total = {} kB, free = {} kB",
                        n.node, n.mem_total, n.mem_free
                    ))?;
                    p.line(format_args!(
                        "# node{} cpu list : {}",
                        n.node,
                        cpu_map_text(&n.cpus)
                    ))?;
                }
                Ok(())
            }
            FeatureId::BRANCH_STACK => p.put(b"# contains samples with branch stack\n"),
            FeatureId::PMU_MAPPINGS => match &self.pmu_mappings {
                None => p.put(b"# pmu mappings: not available\n"),
                Some(pmus) => {
                    let mut delimiter: &[u8] = b"# pmu mappings: ";
                    for (ty, name) in pmus {
                        p.put(delimiter)?;
                        p.put(name)?;
                        p.put(format!(" = {ty}").as_bytes())?;
                        delimiter = b", ";
                    }
                    p.put(b"\n")
                }
            },
            FeatureId::GROUP_DESC => self.print_group_desc(p),
            FeatureId::AUXTRACE => p.put(b"# contains AUX area data (e.g. instruction trace)\n"),
            FeatureId::STAT => p.put(b"# contains stat data\n"),
            FeatureId::CACHE => {
                p.put(b"# CPU cache info:\n")?;
                for c in &self.caches {
                    // `L%d %-15s %8s [%s]`
                    p.put(format!("#  L{} ", c.level as i32).as_bytes())?;
                    p.put(&pad_right(&c.type_, 15))?;
                    p.put(b" ")?;
                    p.put(&pad_left(&c.size, 8))?;
                    p.put(b" [")?;
                    p.put(&c.map)?;
                    p.put(b"]\n")?;
                }
                Ok(())
            }
            FeatureId::SAMPLE_TIME => {
                let (first, last) = (self.first_sample_time, self.last_sample_time);
                p.line(format_args!("# time of first sample : {}", usec(first)))?;
                p.line(format_args!("# time of last sample : {}", usec(last)))?;
                let ms = last.wrapping_sub(first) as f64 / 1e6;
                p.line(format_args!("# sample duration : {ms:10.3} ms"))
            }
            FeatureId::MEM_TOPOLOGY => {
                p.line(format_args!(
                    "# memory nodes (nr {}, block size {:#x}):",
                    self.memory_nodes.len() as i32,
                    self.memory_bsize
                ))?;
                for n in &self.memory_nodes {
                    let weight = bitmap_weight(&n.words, n.nbits);
                    let size = unit_number(self.memory_bsize.wrapping_mul(weight));
                    let map = bitmap_text(&n.words, n.nbits);
                    p.line(format_args!("#  {:3} [{size}]: {map}", n.node))?;
                }
                Ok(())
            }
            FeatureId::CLOCKID => p.line(format_args!(
                "# clockid frequency: {} MHz",
                self.clockid_res_ns.wrapping_mul(1000)
            )),
            FeatureId::DIR_FORMAT => p.line(format_args!(
                "# directory data version : {}",
                self.dir_version
            )),
            FeatureId::BPF_PROG_INFO => self.bpf.print_prog_info(p),
            FeatureId::BPF_BTF => self.bpf.print_btf(p),
            FeatureId::COMPRESSED => p.line(format_args!(
                "# compressed : {}, level = {}, ratio = {}",
                if self.comp_type == 1 {
                    "Zstd"
                } else {
                    "Unknown"
                },
                self.comp_level as i32,
                self.comp_ratio as i32
            )),
            FeatureId::CPU_PMU_CAPS => print_pmu_caps(p, b"cpu", &self.cpu_pmu_caps),
            FeatureId::CLOCK_DATA => self.print_clock_data(p),
            FeatureId::HYBRID_TOPOLOGY => {
                p.put(b"# hybrid cpu system:\n")?;
                for (pmu, cpus) in &self.hybrid_nodes {
                    p.put(b"# ")?;
                    p.put(pmu)?;
                    p.put(b" cpu list : ")?;
                    p.put(cpus)?;
                    p.put(b"\n")?;
                }
                Ok(())
            }
            FeatureId::PMU_CAPS => {
                for (pmu, caps) in &self.pmu_caps {
                    print_pmu_caps(p, pmu, caps)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn print_cpu_topology<W: Write>(&self, p: &mut Printer<'_, W>) -> Result<(), Error> {
        for s in &self.sibling_cores {
            p.prefixed(b"# sibling sockets : ", s)?;
        }
        for s in &self.sibling_dies {
            p.prefixed(b"# sibling dies    : ", s)?;
        }
        for s in &self.sibling_threads {
            p.prefixed(b"# sibling threads : ", s)?;
        }
        let dies = !self.sibling_dies.is_empty();
        match &self.cpu {
            Some(cpus) => {
                let shown = self.nr_cpus_avail.max(0) as usize;
                for (i, c) in cpus.iter().enumerate().take(shown) {
                    let (core, socket) = (c.core_id as i32, c.socket_id as i32);
                    if dies {
                        p.line(format_args!(
                            "# CPU {i}: Core ID {core}, Die ID {}, Socket ID {socket}",
                            c.die_id as i32
                        ))?;
                    } else {
                        p.line(format_args!(
                            "# CPU {i}: Core ID {core}, Socket ID {socket}"
                        ))?;
                    }
                }
                Ok(())
            }
            None if dies => {
                p.put(b"# Core ID, Die ID and Socket ID information is not available\n")
            }
            None => p.put(b"# Core ID and Socket ID information is not available\n"),
        }
    }

    fn print_group_desc<W: Write>(&self, p: &mut Printer<'_, W>) -> Result<(), Error> {
        let mut nr = 0u32;
        for (at, ev) in self.evsels.iter().enumerate() {
            if ev.leader == at && ev.nr_members > 1 {
                p.put(b"# group: ")?;
                p.put(ev.group_name.as_deref().unwrap_or(b""))?;
                p.put(b"{")?;
                p.put(&ev.name())?;
                nr = ev.nr_members - 1;
            } else if nr > 0 {
                p.put(b",")?;
                p.put(&ev.name())?;
                nr -= 1;
                if nr == 0 {
                    p.put(b"}\n")?;
                }
            }
        }
        Ok(())
    }

    fn print_clock_data<W: Write>(&self, p: &mut Printer<'_, W>) -> Result<(), Error> {
        let Some(c) = &self.clock else {
            return p.put(b"# reference time disabled\n");
        };
        const NSEC: u64 = 1_000_000_000;
        let (tod_sec, tod_usec) = ((c.tod_ns / NSEC) as i64, (c.tod_ns % NSEC) / 1000);
        let (clk_sec, clk_nsec) = ((c.clockid_ns / NSEC) as i64, c.clockid_ns % NSEC);
        let date = match LocalTime::of(tod_sec) {
            Some(t) => format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{tod_usec:06}",
                t.year, t.month, t.day, t.hour, t.minute, t.second
            ),
            None => "<error>".to_string(),
        };
        let name = clockid_name(c.clockid as i32);
        p.line(format_args!("# clockid: {name} ({})", c.clockid))?;
        p.line(format_args!(
            "# reference time: {date} = {tod_sec}.{tod_usec:06} (TOD) = {clk_sec}.{clk_nsec:09} ({name})"
        ))
    }
}

/// The `name=value` strings of PMU capabilities.
fn caps(caps: &[crate::generated::perf_data::PmuCap<'_>]) -> Vec<Vec<u8>> {
    caps.iter()
        .map(|c| {
            let mut s = text(&c.name);
            s.push(b'=');
            s.extend_from_slice(c.value.text.text());
            s
        })
        .collect()
}

fn print_pmu_caps<W: Write>(
    p: &mut Printer<'_, W>,
    pmu: &[u8],
    caps: &[Vec<u8>],
) -> Result<(), Error> {
    p.put(b"# ")?;
    p.put(pmu)?;
    if caps.is_empty() {
        return p.put(b" pmu capabilities: not available\n");
    }
    p.put(b" pmu capabilities: ")?;
    for (i, c) in caps.iter().enumerate() {
        if i > 0 {
            p.put(b", ")?;
        }
        p.put(c)?;
    }
    p.put(b"\n")
}

/// perf's `clockid_name`: the first name its table gives the clock.
fn clockid_name(id: i32) -> &'static str {
    match id {
        1 => "monotonic",
        0 => "realtime",
        4 => "monotonic_raw",
        7 => "boottime",
        11 => "tai",
        _ => "(not found)",
    }
}

/// perf's `timestamp__scnprintf_usec`: seconds and microseconds.
fn usec(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// perf's `unit_number__scnprintf`: divided by 1024 while more than twice that is left,
/// at most to G.
fn unit_number(mut n: u64) -> String {
    let units = [b'B', b'K', b'M', b'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i] as char)
}

fn bit_set(words: &[u64], bit: u64) -> bool {
    words
        .get((bit / 64) as usize)
        .is_some_and(|w| w >> (bit % 64) & 1 == 1)
}

/// perf's `bitmap_weight` of the first `nbits` bits.
fn bitmap_weight(words: &[u64], nbits: u64) -> u64 {
    let mut n = 0u64;
    for (i, w) in words.iter().enumerate() {
        let start = i as u64 * 64;
        if start >= nbits {
            break;
        }
        let w = if nbits - start < 64 {
            w & ((1u64 << (nbits - start)) - 1)
        } else {
            *w
        };
        n += u64::from(w.count_ones());
    }
    n
}

/// perf's `bitmap_scnprintf` into its 100-byte buffer: ranges of set bits (`0-23,32-199`),
/// cut at 99 bytes.
fn bitmap_text(words: &[u64], nbits: u64) -> String {
    let mut s = String::new();
    let nbits = nbits.min(words.len() as u64 * 64);
    let mut bit = 0u64;
    while bit < nbits {
        if !bit_set(words, bit) {
            bit += 1;
            continue;
        }
        let start = bit;
        while bit + 1 < nbits && bit_set(words, bit + 1) {
            bit += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if start < bit {
            s.push_str(&format!("{start}-{bit}"));
        } else {
            s.push_str(&format!("{start}"));
        }
        bit += 1;
    }
    s.truncate(99);
    s
}

/// C's `strtoul(s, &end, 0)`: the value and the bytes it read (0 when there is no
/// number); a value past `u64` saturates, as `ULONG_MAX`.
fn strtoul(s: &[u8]) -> (u64, usize) {
    let mut i = 0;
    while s.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let (radix, mut at) = match (s.get(i), s.get(i + 1), s.get(i + 2)) {
        (Some(b'0'), Some(b'x' | b'X'), Some(c)) if c.is_ascii_hexdigit() => (16, i + 2),
        (Some(b'0'), _, _) => (8, i),
        _ => (10, i),
    };
    let begin = at;
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(d) = s.get(at).and_then(|&b| (b as char).to_digit(radix)) {
        match v
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
        at += 1;
    }
    if at == begin {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, at);
    }
    (if negative { v.wrapping_neg() } else { v }, at)
}

/// perf's `perf_cpu_map__new` of a cpu list string (`0-3,8`): the CPUs as sorted runs of
/// consecutive CPUs (`(first, last)`), or `None` where perf fails (then it cannot process
/// the NUMA topology): junk, a CPU from INT_MAX on, a range backwards, a CPU twice. An
/// empty list is perf's dummy map, CPU -1. Runs, not CPUs: a range of two billion CPUs
/// costs nothing.
fn cpu_map_new(list: &[u8]) -> Option<Vec<(i64, i64)>> {
    const INT_MAX: u64 = i32::MAX as u64;
    if list.first().is_some_and(|b| !b.is_ascii_digit()) {
        return None;
    }
    let mut ranges: Vec<(i64, i64)> = vec![];
    let mut rest = list;
    while rest.first().is_some_and(|b| b.is_ascii_digit()) {
        let (start, n) = strtoul(rest);
        let mut p = &rest[n..];
        if start >= INT_MAX || !matches!(p.first(), None | Some(b',' | b'-')) {
            return None;
        }
        let end = if p.first() == Some(&b'-') {
            let (end, n) = strtoul(&p[1..]);
            p = &p[1 + n..];
            if end >= INT_MAX || !matches!(p.first(), None | Some(b',')) || end < start {
                return None;
            }
            end
        } else {
            start
        };
        ranges.push((start as i64, end as i64));
        if !p.is_empty() {
            p = &p[1..];
        }
        rest = p;
    }
    if ranges.is_empty() {
        return Some(vec![(-1, -1)]);
    }
    ranges.sort_unstable();
    let mut runs: Vec<(i64, i64)> = vec![];
    for (start, end) in ranges {
        match runs.last_mut() {
            Some(last) if start <= last.1 => return None,
            Some(last) if start == last.1 + 1 => last.1 = end,
            _ => runs.push((start, end)),
        }
    }
    Some(runs)
}

/// perf's `cpu_map__snprint`: runs of consecutive CPUs as ranges, cut at its 1024-byte
/// buffer.
fn cpu_map_text(runs: &[(i64, i64)]) -> String {
    let mut s = String::new();
    for &(start, end) in runs {
        if !s.is_empty() {
            s.push(',');
        }
        if start == end {
            s.push_str(&start.to_string());
        } else {
            s.push_str(&format!("{start}-{end}"));
        }
        if s.len() > 1023 {
            break;
        }
    }
    s.truncate(1023);
    s
}

/// `%-Ns`: padded with spaces on the right to `width` bytes.
fn pad_right(s: &[u8], width: usize) -> Vec<u8> {
    let mut v = s.to_vec();
    v.resize(width.max(s.len()), b' ');
    v
}

/// `%Ns`: padded with spaces on the left to `width` bytes.
fn pad_left(s: &[u8], width: usize) -> Vec<u8> {
    let mut v = vec![b' '; width.saturating_sub(s.len())];
    v.extend_from_slice(s);
    v
}

/// The byte order of the machine this runs on: perf's own.
fn native() -> Endianness {
    if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    }
}

/// An attr as perf sees it after `perf_event__attr_swap`, read from a file of the other
/// byte order: it byte-swaps the fields up to `aux_sample_size` but `clockid` and
/// `sample_regs_intr` (and later ones), which it leaves as they were on file, and it
/// reverses the bits of each byte of the flag word instead of swapping its bytes.
fn as_perf_reads<'a>(a: &Attr<'a>, file: Endianness) -> Attr<'a> {
    let mut seen = a.clone();
    if file == native() {
        return seen;
    }
    let raw = a.attr_flags.to_file(file);
    let bytes = match file {
        Endianness::Big => raw.to_be_bytes(),
        Endianness::Little => raw.to_le_bytes(),
    };
    let flipped = u64::from_ne_bytes(bytes.map(u8::reverse_bits));
    seen.attr_flags = AttrFlags::from_file(flipped, native());
    seen.clockid = a.clockid.map(|c| PosixClock(c.0.swap_bytes()));
    seen.sample_regs_intr = a.sample_regs_intr.map(u64::swap_bytes);
    seen.reserved_2 = a.reserved_2.map(u16::swap_bytes);
    seen.aux_action = a.aux_action.map(|x| AuxAction(x.0.swap_bytes()));
    seen.sig_data = a.sig_data.map(u64::swap_bytes);
    seen
}

/// perf 6.1's `perf_attr_check`: an attr with bits it does not know makes the whole
/// EVENT_DESC unreadable to it.
fn attr_known(a: &Attr<'_>) -> bool {
    // perf 6.1 knows the sample bits up to WEIGHT_STRUCT (24), the read_format bits up to
    // LOST (4), the branch sample bits up to PRIV_SAVE (18), the flag bits up to sigtrap
    // (37); `__reserved_2` and `__reserved_3` (now `aux_action`) must be zero.
    const SAMPLE_MAX: u64 = 1 << 25;
    const FORMAT_MAX: u64 = 1 << 5;
    const BRANCH_MAX: u64 = 1 << 19;
    let reserved = a.attr_flags.0 >> 38 != 0
        || a.reserved_2.unwrap_or(0) != 0
        || a.aux_action.map_or(0, |x| x.0) != 0;
    let branch = a.sample_type.0 & SampleType::BRANCH_STACK.0 != 0
        && a.branch_sample_type.map_or(0, |b| b.0) & !(BRANCH_MAX - 1) != 0;
    !reserved
        && a.sample_type.0 & !(SAMPLE_MAX - 1) == 0
        && a.read_format.0 & !(FORMAT_MAX - 1) == 0
        && !branch
}

/// Whether perf 6.1 reads this EVENT_DESC (of a file in byte order `e`).
fn readable(d: &EventDesc<'_>, e: Endianness) -> bool {
    d.events
        .iter()
        .all(|ev| attr_known(&as_perf_reads(&ev.attr, e)))
}

/// Bit names in perf's order (`perf_event_attr_fprintf.c`, 6.1). Not every bit has one:
/// perf leaves out TRANSACTION.
const SAMPLE_BITS: &[(SampleType, &str)] = &[
    (SampleType::IP, "IP"),
    (SampleType::TID, "TID"),
    (SampleType::TIME, "TIME"),
    (SampleType::ADDR, "ADDR"),
    (SampleType::READ, "READ"),
    (SampleType::CALLCHAIN, "CALLCHAIN"),
    (SampleType::ID, "ID"),
    (SampleType::CPU, "CPU"),
    (SampleType::PERIOD, "PERIOD"),
    (SampleType::STREAM_ID, "STREAM_ID"),
    (SampleType::RAW, "RAW"),
    (SampleType::BRANCH_STACK, "BRANCH_STACK"),
    (SampleType::REGS_USER, "REGS_USER"),
    (SampleType::STACK_USER, "STACK_USER"),
    (SampleType::IDENTIFIER, "IDENTIFIER"),
    (SampleType::REGS_INTR, "REGS_INTR"),
    (SampleType::DATA_SRC, "DATA_SRC"),
    (SampleType::WEIGHT, "WEIGHT"),
    (SampleType::PHYS_ADDR, "PHYS_ADDR"),
    (SampleType::AUX, "AUX"),
    (SampleType::CGROUP, "CGROUP"),
    (SampleType::DATA_PAGE_SIZE, "DATA_PAGE_SIZE"),
    (SampleType::CODE_PAGE_SIZE, "CODE_PAGE_SIZE"),
    (SampleType::WEIGHT_STRUCT, "WEIGHT_STRUCT"),
];

const BRANCH_BITS: &[(BranchSampleType, &str)] = &[
    (BranchSampleType::USER, "USER"),
    (BranchSampleType::KERNEL, "KERNEL"),
    (BranchSampleType::HV, "HV"),
    (BranchSampleType::ANY, "ANY"),
    (BranchSampleType::ANY_CALL, "ANY_CALL"),
    (BranchSampleType::ANY_RETURN, "ANY_RETURN"),
    (BranchSampleType::IND_CALL, "IND_CALL"),
    (BranchSampleType::ABORT_TX, "ABORT_TX"),
    (BranchSampleType::IN_TX, "IN_TX"),
    (BranchSampleType::NO_TX, "NO_TX"),
    (BranchSampleType::COND, "COND"),
    (BranchSampleType::CALL_STACK, "CALL_STACK"),
    (BranchSampleType::IND_JUMP, "IND_JUMP"),
    (BranchSampleType::CALL, "CALL"),
    (BranchSampleType::NO_FLAGS, "NO_FLAGS"),
    (BranchSampleType::NO_CYCLES, "NO_CYCLES"),
    (BranchSampleType::TYPE_SAVE, "TYPE_SAVE"),
    (BranchSampleType::HW_INDEX, "HW_INDEX"),
    (BranchSampleType::PRIV_SAVE, "PRIV_SAVE"),
];

const READ_BITS: &[(ReadFormat, &str)] = &[
    (ReadFormat::TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"),
    (ReadFormat::TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"),
    (ReadFormat::ID, "ID"),
    (ReadFormat::GROUP, "GROUP"),
    (ReadFormat::LOST, "LOST"),
];

/// perf's `perf_event_attr__fprintf` with the `, name = value` printer of EVENT_DESC: the
/// fields that are not zero, in perf's order.
struct AttrText {
    text: Vec<u8>,
    /// perf formats each value into one buffer: a bit set with no named bit leaves the
    /// previous value in it, and that is what perf prints.
    buf: String,
}

impl AttrText {
    fn field(&mut self, name: &str, value: u64, show: impl FnOnce(u64, &mut String)) {
        if value == 0 {
            return;
        }
        show(value, &mut self.buf);
        self.text.extend_from_slice(b", ");
        self.text.extend_from_slice(name.as_bytes());
        self.text.extend_from_slice(b" = ");
        self.text.extend_from_slice(self.buf.as_bytes());
    }

    fn unsigned(&mut self, name: &str, value: u64) {
        self.field(name, value, |v, b| *b = v.to_string());
    }

    fn hex(&mut self, name: &str, value: u64) {
        self.field(name, value, |v, b| *b = format!("{v:#x}"));
    }

    fn bits<T: Copy>(&mut self, name: &str, value: u64, names: &[(T, &str)], bit: fn(T) -> u64) {
        self.field(name, value, |v, b| {
            let mut first = true;
            for (flag, n) in names {
                if v & bit(*flag) != 0 {
                    if first {
                        b.clear();
                    } else {
                        b.push('|');
                    }
                    b.push_str(n);
                    first = false;
                }
            }
        });
    }

    fn of(a: &Attr<'_>) -> Vec<u8> {
        let mut t = AttrText {
            text: vec![],
            buf: String::new(),
        };
        t.unsigned("type", u64::from(a.type_.0));
        t.unsigned("size", u64::from(a.size));
        t.hex("config", a.config);
        t.unsigned("{ sample_period, sample_freq }", a.sample_period_or_freq);
        t.bits("sample_type", a.sample_type.0, SAMPLE_BITS, |f| f.0);
        t.bits("read_format", a.read_format.0, READ_BITS, |f| f.0);
        // The flag word's members in declaration order, as perf 6.1 knows them (to
        // `sigtrap`, bit 37).
        for &(name, pos, width) in crate::generated::perf_data::AttrFlags::FIELDS {
            if pos >= 38 {
                break;
            }
            let v = (a.attr_flags.0 >> pos) & ((1u64 << width) - 1);
            t.unsigned(name, v);
        }
        t.unsigned(
            "{ wakeup_events, wakeup_watermark }",
            u64::from(a.wakeup_events_or_watermark),
        );
        t.unsigned("bp_type", u64::from(a.bp_type));
        t.hex("{ bp_addr, config1 }", a.config1);
        t.hex("{ bp_len, config2 }", a.config2.unwrap_or(0));
        t.bits(
            "branch_sample_type",
            a.branch_sample_type.map_or(0, |b| b.0),
            BRANCH_BITS,
            |f| f.0,
        );
        t.hex("sample_regs_user", a.sample_regs_user.unwrap_or(0));
        t.unsigned(
            "sample_stack_user",
            u64::from(a.sample_stack_user.unwrap_or(0)),
        );
        let clockid = a.clockid.map_or(0, |c| c.0 as i32);
        t.field("clockid", clockid as u64, |_, b| *b = clockid.to_string());
        t.hex("sample_regs_intr", a.sample_regs_intr.unwrap_or(0));
        t.unsigned("aux_watermark", u64::from(a.aux_watermark.unwrap_or(0)));
        t.unsigned(
            "sample_max_stack",
            u64::from(a.sample_max_stack.unwrap_or(0)),
        );
        t.unsigned("aux_sample_size", u64::from(a.aux_sample_size.unwrap_or(0)));
        t.unsigned("sig_data", a.sig_data.unwrap_or(0));
        t.text
    }
}

/// Writes perf's lines.
struct Printer<'w, W: Write> {
    out: &'w mut W,
    full: bool,
}

impl<W: Write> Printer<'_, W> {
    fn put(&mut self, b: &[u8]) -> Result<(), Error> {
        self.out.write_all(b)?;
        Ok(())
    }

    fn line(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), Error> {
        self.out.write_fmt(args)?;
        self.put(b"\n")
    }

    /// `prefix`, then `s` (a string perf prints with `%s`), then a newline.
    fn prefixed(&mut self, prefix: &[u8], s: &[u8]) -> Result<(), Error> {
        self.put(prefix)?;
        self.put(s)?;
        self.put(b"\n")
    }

    /// A string perf prints from its environment: `(null)` when it has none.
    fn str_line(&mut self, prefix: &[u8], s: &Option<Vec<u8>>) -> Result<(), Error> {
        self.prefixed(prefix, s.as_deref().unwrap_or(b"(null)"))
    }

    /// perf's `print_event_desc` (of a file in byte order `e`): one line per event, up to
    /// one whose attr size is 0.
    fn event_desc(&mut self, desc: Option<&EventDesc<'_>>, e: Endianness) -> Result<(), Error> {
        let Some(d) = desc.filter(|d| readable(d, e)) else {
            return self.put(b"# event desc: not available or unable to read\n");
        };
        for ev in &d.events {
            if ev.attr.size == 0 {
                break;
            }
            self.put(b"# event : name = ")?;
            self.put(ev.name.text.text())?;
            self.put(b", ")?;
            if !ev.ids.is_empty() {
                self.put(b", id = {")?;
                for (j, id) in ev.ids.iter().enumerate() {
                    if j > 0 {
                        self.put(b",")?;
                    }
                    self.put(format!(" {id}").as_bytes())?;
                }
                self.put(b" }")?;
            }
            self.put(&AttrText::of(&as_perf_reads(&ev.attr, e)))?;
            self.put(b"\n")?;
        }
        Ok(())
    }
}

/// The BPF program and BTF lists perf keeps by id.
type ById<T> = BTreeMap<u32, T>;

#[cfg(test)]
mod tests;
