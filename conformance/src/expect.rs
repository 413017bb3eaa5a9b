//! What perf shows for a file, computed from OUR decode: the same keys as the parsers in
//! `perf_text.rs` produce from perf's text. Values are the decoded fields; where perf
//! prints a derived form (a CPU list, a page-size name, a time in seconds), the form is
//! computed from the decoded fields with perf's rule, cited at the function.

use crate::facts::{Facts, Val};
use crate::ours::{Decoded, OurRecord};
use crate::perf_text::Stamp;
use perfdata::types::{
    Attr, AttrFlags, BranchFlags, BranchSampleType, CallchainContext, CommMisc, CpuMapData,
    CpuMapEncoding, CpuMapMaskWords, EventUpdateData, FeatureBody, FeatureId, Mmap2FileId,
    PosixClock, ReadFormat, ReadValues, RecordBody, RecordMisc, RecordType, Regs, Sample,
    SampleType, SwitchMisc,
};
use perfdata::Layout;

/// Feature ids perf 6.1 knows (`HEADER_LAST_FEATURE` = 32: up to PMU_CAPS).
pub const PERF_LAST_FEATURE: u32 = 32;

/// Attr flag-word members perf 6.1's `perf_event_attr__fprintf` prints (it stops at
/// `sigtrap`).
const PERF_ATTR_FLAGS_LAST: &str = "sigtrap";

// ---------------------------------------------------------------------------------------
// Formatting rules of perf (util/*.c), applied to decoded values.
// ---------------------------------------------------------------------------------------

/// `unit_number__scnprintf`: divide by 1024 while the quotient is > 1, units B K M G.
pub fn unit_number(mut n: u64) -> String {
    let units = ['B', 'K', 'M', 'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

/// `get_page_size_name`: `N/A` for 0.
pub fn page_size_name(n: u64) -> String {
    if n == 0 {
        "N/A".into()
    } else {
        unit_number(n)
    }
}

/// `cpu_map__snprint`: sorted, de-duplicated CPUs as ranges `0-3,5`.
pub fn cpu_list(cpus: &[i64]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = vec![];
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// `bitmap_scnprintf` into perf's 100-byte buffer (99 characters at most).
pub fn bitmap_list(words: &[u64], nbits: u64) -> String {
    let set = |b: u64| {
        words
            .get(usize::try_from(b / 64).unwrap_or(usize::MAX))
            .is_some_and(|w| w >> (b % 64) & 1 == 1)
    };
    let mut parts = vec![];
    let mut b = 0;
    while b < nbits {
        if !set(b) {
            b += 1;
            continue;
        }
        let start = b;
        while b + 1 < nbits && set(b + 1) {
            b += 1;
        }
        parts.push(if start == b {
            start.to_string()
        } else {
            format!("{start}-{b}")
        });
        b += 1;
    }
    parts.join(",").chars().take(99).collect()
}

/// The CPUs of a `cpu_map_data` (65535 in a CPU list is -1, "any").
pub fn cpu_map_cpus(m: &CpuMapData<'_>) -> Vec<i64> {
    match &m.data {
        CpuMapEncoding::Cpus(c) => c
            .cpus
            .iter()
            .map(|c| if c == u16::MAX { -1 } else { i64::from(c) })
            .collect(),
        CpuMapEncoding::Mask(m) => {
            let (bits, words): (u64, Vec<u64>) = match &m.words {
                CpuMapMaskWords::Mask32(w) => (32, w.mask.iter().map(u64::from).collect()),
                CpuMapMaskWords::Mask64(w) => (64, w.mask.iter().collect()),
                CpuMapMaskWords::Unknown(_) => (64, vec![]),
            };
            let mut out = vec![];
            for (i, w) in words.iter().enumerate() {
                for b in 0..bits {
                    if w >> b & 1 == 1 {
                        out.push(i as i64 * bits as i64 + b as i64);
                    }
                }
            }
            out
        }
        CpuMapEncoding::Range(r) => {
            let mut out: Vec<i64> = if r.any_cpu != 0 { vec![-1] } else { vec![] };
            out.extend(i64::from(r.start_cpu)..=i64::from(r.end_cpu));
            out
        }
        CpuMapEncoding::Unknown(_) => vec![],
    }
}

/// `timestamp__scnprintf_usec`: `sec.usec`.
pub fn time_usec(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// `timestamp__scnprintf_nsec` (perf script --ns): `sec.nsec`.
pub fn time_nsec(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// `strftime("%F %T")` in UTC (perf runs with TZ=UTC).
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// perf's clockid names (util/clockid.c; the first name of each id).
pub fn clockid_name(c: PosixClock) -> &'static str {
    match c {
        PosixClock::MONOTONIC => "monotonic",
        PosixClock::REALTIME => "realtime",
        PosixClock::MONOTONIC_RAW => "monotonic_raw",
        PosixClock::BOOTTIME => "boottime",
        PosixClock::TAI => "tai",
        _ => "unknown",
    }
}

/// Flag names of a value, sorted, `|`-joined (perf prints them in bit order; the parser
/// sorts both). The names are the spec's (`Debug` of the generated flags type).
fn flag_names(value: u64, name_of: impl Fn(u64) -> String) -> String {
    let mut names: Vec<String> = (0..64)
        .filter(|b| value >> b & 1 == 1)
        .map(|b| name_of(1u64 << b))
        .collect();
    names.sort_unstable();
    names.join("|")
}

// ---------------------------------------------------------------------------------------
// Check 1: perf report --header-only -I
// ---------------------------------------------------------------------------------------

/// `perf_event_attr__fprintf`: the non-zero fields perf 6.1 prints.
fn attr_facts(prefix: &str, a: &Attr<'_>, f: &mut Facts) {
    let mut put = |k: &str, v: u64| {
        if v != 0 {
            f.push(format!("{prefix} {k}"), v);
        }
    };
    put("type", u64::from(a.type_.0));
    put("size", u64::from(a.size));
    put("config", a.config);
    put("{ sample_period, sample_freq }", a.sample_period_or_freq);
    let mut names = vec![];
    if a.sample_type.0 != 0 {
        names.push((
            "sample_type",
            flag_names(a.sample_type.0, |b| format!("{:?}", SampleType(b))),
        ));
    }
    if a.read_format.0 != 0 {
        names.push((
            "read_format",
            flag_names(a.read_format.0, |b| format!("{:?}", ReadFormat(b))),
        ));
    }
    for (k, v) in names {
        f.push(format!("{prefix} {k}"), v);
    }
    for &(name, pos, width) in AttrFlags::FIELDS {
        let v = perfdata::rt::bits_get(a.attr_flags.0, pos, width);
        if v != 0 {
            f.push(format!("{prefix} {name}"), v);
        }
        if name == PERF_ATTR_FLAGS_LAST {
            break;
        }
    }
    let mut put = |k: &str, v: u64| {
        if v != 0 {
            f.push(format!("{prefix} {k}"), v);
        }
    };
    put(
        "{ wakeup_events, wakeup_watermark }",
        u64::from(a.wakeup_events_or_watermark),
    );
    put("bp_type", u64::from(a.bp_type));
    put("{ bp_addr, config1 }", a.config1);
    put("{ bp_len, config2 }", a.config2.unwrap_or(0));
    let bst = a.branch_sample_type.unwrap_or_default().0;
    if bst != 0 {
        f.push(
            format!("{prefix} branch_sample_type"),
            flag_names(bst, |b| format!("{:?}", BranchSampleType(b))),
        );
    }
    let mut put = |k: &str, v: u64| {
        if v != 0 {
            f.push(format!("{prefix} {k}"), v);
        }
    };
    put("sample_regs_user", a.sample_regs_user.unwrap_or(0));
    put(
        "sample_stack_user",
        u64::from(a.sample_stack_user.unwrap_or(0)),
    );
    let clockid = a.clockid.map_or(0, |c| c.0);
    if clockid != 0 {
        f.push(format!("{prefix} clockid"), i64::from(clockid as i32));
    }
    let mut put = |k: &str, v: u64| {
        if v != 0 {
            f.push(format!("{prefix} {k}"), v);
        }
    };
    put("sample_regs_intr", a.sample_regs_intr.unwrap_or(0));
    put("aux_watermark", u64::from(a.aux_watermark.unwrap_or(0)));
    put(
        "sample_max_stack",
        u64::from(a.sample_max_stack.unwrap_or(0)),
    );
    put("aux_sample_size", u64::from(a.aux_sample_size.unwrap_or(0)));
    put("sig_data", a.sig_data.unwrap_or(0));
}

/// `print_cmdline`: every argument followed by a space, `'` printed as `\'`.
fn cmdline(args: &[String]) -> String {
    args.iter()
        .map(|a| format!("{} ", a.replace('\'', "\\'")))
        .collect()
}

fn text(s: &perfdata::types::PerfString<'_>) -> String {
    s.text.to_str_lossy().into_owned()
}

/// What `perf report --header-only -I` shows for our decode; `notes` lists what is not
/// compared.
pub fn header_facts(d: &Decoded, notes: &mut Vec<String>) -> Facts {
    let mut f = Facts::new();
    let pipe = d.layout == Layout::Pipe;
    f.push("header version", u64::from(!d.legacy_v1));
    f.push("data offset", d.data_offset);
    f.push("data size", d.data_size);
    f.push(
        "feat offset",
        if pipe { 0 } else { d.data_offset + d.data_size },
    );
    let names = d.event_names();
    let nr_cpus_avail = match d.feature(FeatureId::NRCPUS) {
        Some(FeatureBody::Nrcpus(n)) => n.nr_cpus_avail,
        _ => 0,
    };
    for feat in &d.features {
        if feat.id.0 >= PERF_LAST_FEATURE {
            notes.push(format!(
                "feature {} is newer than perf 6.1 (not printed by it)",
                feat.id.0
            ));
            continue;
        }
        let body = match &feat.body {
            Ok(b) => b,
            Err(e) => {
                f.push(
                    format!("feature {} decode", feat.id.0),
                    format!("error: {e}"),
                );
                continue;
            }
        };
        match body {
            FeatureBody::TracingData(_) | FeatureBody::BuildId(_) => {} // not printed
            FeatureBody::AuxtraceFeature(_) => f.push("AUXTRACE", "present"),
            FeatureBody::Hostname(x) => f.push("hostname", text(&x.value)),
            FeatureBody::Osrelease(x) => f.push("os release", text(&x.value)),
            FeatureBody::Version(x) => f.push("perf version", text(&x.value)),
            FeatureBody::Arch(x) => f.push("arch", text(&x.value)),
            FeatureBody::Nrcpus(x) => {
                f.push("nrcpus online", x.nr_cpus_online);
                f.push("nrcpus avail", x.nr_cpus_avail);
            }
            FeatureBody::Cpudesc(x) => f.push("cpudesc", text(&x.value)),
            FeatureBody::Cpuid(x) => f.push("cpuid", text(&x.value)),
            FeatureBody::TotalMem(x) => f.push("total memory", x.total_mem),
            FeatureBody::Cmdline(x) => {
                let args: Vec<String> = x.args.iter().map(text).collect();
                f.push("cmdline", cmdline(&args));
            }
            FeatureBody::EventDesc(x) => {
                for (i, e) in x.events.iter().enumerate() {
                    let p = format!("event {i}");
                    f.push(format!("{p} name"), text(&e.name));
                    if !e.ids.is_empty() {
                        let ids: Vec<String> = e.ids.iter().map(|i| i.to_string()).collect();
                        f.push(format!("{p} id"), ids.join(","));
                    }
                    attr_facts(&p, &e.attr, &mut f);
                }
            }
            FeatureBody::CpuTopology(x) => {
                for s in &x.package_cpus {
                    f.push("sibling sockets", text(s));
                }
                if let Some(dies) = &x.dies {
                    for s in &dies.die_cpus {
                        f.push("sibling dies", text(s));
                    }
                }
                for s in &x.core_cpus {
                    f.push("sibling threads", text(s));
                }
                match &x.cpus {
                    Some(ids) => {
                        for (i, c) in ids.iter().enumerate().take(nr_cpus_avail as usize) {
                            f.push(format!("CPU {i} Core ID"), i64::from(c.core_id as i32));
                            if let Some(dies) = &x.dies {
                                let die = dies.die_ids.get(i).unwrap_or(0);
                                f.push(format!("CPU {i} Die ID"), i64::from(die as i32));
                            }
                            f.push(format!("CPU {i} Socket ID"), i64::from(c.socket_id as i32));
                        }
                    }
                    None => f.push("cpu ids", "not available"),
                }
            }
            FeatureBody::NumaTopology(x) => {
                for n in &x.nodes {
                    f.push(format!("node{} total", n.node), n.mem_total);
                    f.push(format!("node{} free", n.node), n.mem_free);
                    f.push(format!("node{} cpu list", n.node), text(&n.cpus));
                }
            }
            FeatureBody::BranchStack(_) => f.push("BRANCH_STACK", "present"),
            FeatureBody::PmuMappings(x) => {
                if x.pmus.is_empty() {
                    f.push("pmu mappings", "not available");
                }
                for p in &x.pmus {
                    f.push(format!("pmu {}", text(&p.name)), p.type_);
                }
            }
            FeatureBody::GroupDesc(x) => {
                for g in x.groups.iter().filter(|g| g.nr_members > 1) {
                    let name = text(&g.name);
                    let name = if name == "{anon_group}" { "" } else { &name };
                    let members: Vec<String> = (g.leader_idx..g.leader_idx + g.nr_members)
                        .map(|i| {
                            names
                                .get(i as usize)
                                .cloned()
                                .flatten()
                                .unwrap_or_else(|| format!("<event {i}>"))
                        })
                        .collect();
                    f.push("group", format!("{name}{{{}}}", members.join(",")));
                }
            }
            FeatureBody::StatFeature(_) => f.push("STAT", "present"),
            FeatureBody::Cache(x) => {
                for c in &x.levels {
                    f.push(
                        "cache",
                        format!(
                            "L{} {} {} [{}]",
                            c.level,
                            text(&c.type_),
                            text(&c.size),
                            text(&c.map)
                        ),
                    );
                }
            }
            FeatureBody::SampleTime(x) => {
                f.push("time of first sample", time_usec(x.first_sample_time));
                f.push("time of last sample", time_usec(x.last_sample_time));
                let d = x.last_sample_time.wrapping_sub(x.first_sample_time) as f64 / 1e6;
                f.push("sample duration", format!("{d:.3} ms"));
            }
            FeatureBody::MemTopology(x) => {
                f.push("memory nodes nr", x.nodes.len() as u64);
                f.push("memory block size", x.block_size);
                for n in &x.nodes {
                    let words = n.words.to_vec();
                    let weight: u64 = (0..n.nbits)
                        .filter(|b| {
                            words
                                .get((b / 64) as usize)
                                .is_some_and(|w| w >> (b % 64) & 1 == 1)
                        })
                        .count() as u64;
                    f.push(
                        format!("memory node {}", n.node),
                        format!(
                            "{} {}",
                            unit_number(x.block_size.wrapping_mul(weight)),
                            bitmap_list(&words, n.nbits)
                        ),
                    );
                }
            }
            FeatureBody::Clockid(x) => {
                f.push("clockid frequency", x.clockid_res_ns.wrapping_mul(1000))
            }
            FeatureBody::DirFormat(x) => f.push("directory data version", x.version),
            FeatureBody::BpfProgInfo(x) => {
                if !x.progs.is_empty() {
                    notes.push(format!(
                        "BPF_PROG_INFO: {} programs, perf's lines not compared",
                        x.progs.len()
                    ));
                }
            }
            FeatureBody::BpfBtf(x) => {
                if !x.btfs.is_empty() {
                    notes.push(format!(
                        "BPF_BTF: {} entries, perf's lines not compared",
                        x.btfs.len()
                    ));
                }
            }
            FeatureBody::CompressedFeature(x) => {
                let ty = if x.comp_type.name() == Some("ZSTD") {
                    "Zstd"
                } else {
                    "Unknown"
                };
                f.push(
                    "compressed",
                    format!(
                        "{ty}, level = {}, ratio = {}",
                        x.comp_level as i32, x.comp_ratio as i32
                    ),
                );
            }
            FeatureBody::CpuPmuCaps(x) => {
                f.push("cpu pmu capabilities", pmu_caps(&x.caps));
            }
            FeatureBody::ClockData(x) => {
                let name = clockid_name(x.clockid);
                f.push("clockid", format!("{name} ({})", x.clockid.0));
                let tod_s = x.tod_ns / 1_000_000_000;
                let tod_us = x.tod_ns % 1_000_000_000 / 1000;
                f.push(
                    "reference time",
                    format!(
                        "{}.{tod_us:06} = {tod_s}.{tod_us:06} (TOD) = {}.{:09} ({name})",
                        utc_date(tod_s),
                        x.clockid_ns / 1_000_000_000,
                        x.clockid_ns % 1_000_000_000
                    ),
                );
            }
            FeatureBody::HybridTopology(x) => {
                for n in &x.nodes {
                    f.push(
                        format!("hybrid {} cpu list", text(&n.pmu_name)),
                        text(&n.cpus),
                    );
                }
            }
            FeatureBody::PmuCaps(x) => {
                for p in &x.pmus {
                    f.push(
                        format!("{} pmu capabilities", text(&p.pmu_name)),
                        pmu_caps(&p.caps),
                    );
                }
            }
            _ => notes.push(format!("feature {:?}: no expectation", feat.id)),
        }
    }
    if !pipe {
        let mut missing: Vec<String> = (1..PERF_LAST_FEATURE)
            .filter(|id| !d.feature_bits.contains(id))
            .map(|id| {
                FeatureId(id)
                    .name()
                    .map_or_else(|| id.to_string(), str::to_string)
            })
            .collect();
        missing.sort_unstable();
        f.push("missing features", missing.join(" "));
    }
    f
}

fn pmu_caps(caps: &[perfdata::types::PmuCap<'_>]) -> String {
    if caps.is_empty() {
        return "not available".into();
    }
    caps.iter()
        .map(|c| format!("{}={}", text(&c.name), text(&c.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------
// Check 2: perf report -D
// ---------------------------------------------------------------------------------------

/// The cpu / time perf prints before a record (`evlist__print_tstamp`).
pub fn expected_stamp(d: &Decoded, r: &OurRecord) -> Stamp {
    let n = if d.layout == Layout::Pipe {
        r.attrs_before
    } else {
        d.attrs.len()
    };
    let Some(first) = d.attrs.first().filter(|_| n > 0) else {
        return Stamp::NoSampleIdAll;
    };
    if r.type_ != RecordType::SAMPLE && !first.attr.attr_flags.sample_id_all() {
        return Stamp::NoSampleIdAll;
    }
    let combined = d.combined_sample_type(n);
    let (cpu, time) = if r.type_.0 >= 64 {
        (0, 0)
    } else if let Ok(RecordBody::Sample(s)) = &r.body {
        (s.cpu.unwrap_or(u32::MAX), s.time.unwrap_or(u64::MAX))
    } else {
        let own = d.attr_of(r).is_some_and(|a| a.attr_flags.sample_id_all());
        match r.sample_id().filter(|_| own) {
            Some(s) => (s.cpu.unwrap_or(u32::MAX), s.time.unwrap_or(u64::MAX)),
            None => (u32::MAX, u64::MAX),
        }
    };
    let mut v = vec![];
    if combined.contains(SampleType::CPU) {
        v.push(u64::from(cpu));
    }
    if combined.contains(SampleType::TIME) {
        v.push(time);
    }
    Stamp::Values(v)
}

fn misc_has(r: &OurRecord, bit: u16) -> bool {
    r.misc & bit == bit
}

fn i32v(v: u32) -> Val {
    Val::from(v as i32)
}

/// The values perf prints for one record, from our decode. `None` when the body did not
/// decode (the caller reports the error).
pub fn record_facts(d: &Decoded, r: &OurRecord) -> Option<Facts> {
    let body = r.body.as_ref().ok()?;
    let mut f = Facts::new();
    match body {
        RecordBody::Mmap(x) => {
            f.push("pid", i32v(x.pid));
            f.push("tid", i32v(x.tid));
            f.push("addr", x.addr);
            f.push("len", x.len);
            f.push("pgoff", x.pgoff);
            f.push("data", misc_has(r, RecordMisc::MMAP_DATA.0));
            f.push("filename", x.filename.to_str_lossy().into_owned());
        }
        RecordBody::Mmap2(x) => {
            f.push("pid", i32v(x.pid));
            f.push("tid", i32v(x.tid));
            f.push("addr", x.addr);
            f.push("len", x.len);
            f.push("pgoff", x.pgoff);
            match &x.file_id {
                Mmap2FileId::Inode(i) => {
                    f.push("maj", i.maj);
                    f.push("min", i.min);
                    f.push("ino", i.ino);
                    f.push("ino_generation", i.ino_generation);
                }
                Mmap2FileId::BuildId(b) => {
                    let n = usize::from(b.build_id_size).min(b.build_id.len());
                    let hex: String = b.build_id.as_slice()[..n]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    f.push("build_id", hex);
                }
            }
            // PROT_READ 1, PROT_WRITE 2, PROT_EXEC 4; MAP_SHARED 1 (as perf prints them).
            f.push("prot.read", x.prot & 1 != 0);
            f.push("prot.write", x.prot & 2 != 0);
            f.push("prot.exec", x.prot & 4 != 0);
            f.push("shared", x.map_flags & 1 != 0);
            f.push("filename", x.filename.to_str_lossy().into_owned());
        }
        RecordBody::Comm(x) => {
            f.push("exec", misc_has(r, CommMisc::COMM_EXEC.0));
            f.push("comm", x.comm.to_str_lossy().into_owned());
            f.push("pid", i32v(x.pid));
            f.push("tid", i32v(x.tid));
        }
        RecordBody::Fork(x) => {
            for (k, v) in [
                ("pid", x.pid),
                ("tid", x.tid),
                ("ppid", x.ppid),
                ("ptid", x.ptid),
            ] {
                f.push(k, i32v(v));
            }
        }
        RecordBody::Exit(x) => {
            for (k, v) in [
                ("pid", x.pid),
                ("tid", x.tid),
                ("ppid", x.ppid),
                ("ptid", x.ptid),
            ] {
                f.push(k, i32v(v));
            }
        }
        RecordBody::Switch(_) | RecordBody::SwitchCpuWide(_) => {
            let out = misc_has(r, SwitchMisc::SWITCH_OUT.0);
            f.push("out", out);
            f.push(
                "preempt",
                out && misc_has(r, SwitchMisc::SWITCH_OUT_PREEMPT.0),
            );
            if let RecordBody::SwitchCpuWide(x) = body {
                f.push("next_prev_pid", i32v(x.next_prev_pid));
                f.push("next_prev_tid", i32v(x.next_prev_tid));
            }
        }
        RecordBody::Namespaces(x) => {
            f.push("pid", i32v(x.pid));
            f.push("tid", i32v(x.tid));
            f.push("nr_namespaces", x.link_info.len() as u64);
            for (i, l) in x.link_info.iter().enumerate() {
                f.push(format!("ns{i}.dev"), l.dev);
                f.push(format!("ns{i}.ino"), l.ino);
            }
        }
        RecordBody::Cgroup(x) => {
            f.push("id", x.id);
            f.push("path", x.path.to_str_lossy().into_owned());
        }
        RecordBody::Lost(x) => {
            f.push("id", x.id);
            f.push("lost", x.lost);
        }
        RecordBody::LostSamples(x) => f.push("lost", x.lost),
        RecordBody::Ksymbol(x) => {
            f.push("addr", x.addr);
            f.push("len", x.len);
            f.push("type", x.ksym_type.0);
            f.push("flags", x.ksym_flags.0);
            f.push("name", x.name.to_str_lossy().into_owned());
        }
        RecordBody::BpfEvent(x) => {
            f.push("type", x.type_.0);
            f.push("flags", x.bpf_flags);
            f.push("id", x.id);
        }
        RecordBody::Sample(s) => sample_facts(d, r, s, &mut f),
        RecordBody::IdIndex(x) => {
            f.push("nr", x.entries.len() as u64);
            let second: Vec<_> = x.entries2.as_ref().map(|e| e.to_vec()).unwrap_or_default();
            for (i, e) in x.entries.iter().enumerate() {
                f.push(format!("{i}.id"), e.id);
                f.push(format!("{i}.idx"), e.idx);
                f.push(format!("{i}.cpu"), e.cpu as i64);
                f.push(format!("{i}.tid"), e.tid as i64);
                if let Some(e2) = second.get(i) {
                    f.push(format!("{i}.machine_pid"), e2.machine_pid as i64);
                    f.push(format!("{i}.vcpu"), e2.vcpu);
                }
            }
        }
        RecordBody::EventUpdate(x) => {
            f.push("id", x.id);
            match &x.data {
                EventUpdateData::Unit(s) => f.push("unit", s.to_str_lossy().into_owned()),
                EventUpdateData::Scale(s) => f.push("scale", format!("{:.6}", s.scale)),
                EventUpdateData::Name(s) => f.push("name", s.to_str_lossy().into_owned()),
                EventUpdateData::Cpus(m) => f.push("cpus", cpu_list(&cpu_map_cpus(m))),
                EventUpdateData::Unknown(_) => {}
            }
        }
        RecordBody::ThreadMap(x) => {
            f.push("nr", x.entries.len() as u64);
            for (i, e) in x.entries.iter().enumerate() {
                f.push(format!("pid{i}"), e.pid as i32);
            }
        }
        RecordBody::CpuMap(x) => f.push("cpus", cpu_list(&cpu_map_cpus(&x.data))),
        RecordBody::StatConfig(x) => {
            // perf prints these three terms (0 when absent), as ints.
            for name in ["AGGR_MODE", "SCALE", "INTERVAL"] {
                let v = x
                    .data
                    .iter()
                    .find(|e| e.tag.name() == Some(name))
                    .map_or(0, |e| e.val);
                let v = if name == "INTERVAL" {
                    Val::from(v as u32)
                } else {
                    Val::from(v as i32)
                };
                f.push(name.to_ascii_lowercase(), v);
            }
        }
        RecordBody::Stat(x) => {
            f.push("id", x.id);
            f.push("cpu", i32v(x.cpu));
            f.push("thread", i32v(x.thread));
            f.push("value", x.val);
            f.push("enabled", x.ena);
            f.push("running", x.run);
        }
        RecordBody::StatRound(x) => {
            f.push("time", x.time);
            let final_ = x.type_.name() == Some("FINAL");
            f.push("type", if final_ { "FINAL" } else { "INTERVAL" });
        }
        RecordBody::TimeConv(x) => {
            f.push("Time Shift", x.time_shift);
            f.push("Time Muliplier", x.time_mult);
            f.push("Time Zero", x.time_zero);
            if let Some(c) = x.time_cycles {
                f.push("Time Cycles", c);
                f.push("Time Mask", x.time_mask.unwrap_or(0));
                f.push("Cap Time Zero", x.cap_user_time_zero.unwrap_or(0));
                f.push("Cap Time Short", x.cap_user_time_short.unwrap_or(0));
            }
        }
        _ => {}
    }
    Some(f)
}

fn regs_facts(which: &str, regs: &Option<Regs<'_>>, mask: u64, f: &mut Facts) {
    let Some(regs) = regs else { return };
    let Some(values) = regs.regs.as_ref().filter(|_| regs.abi.0 != 0) else {
        return;
    };
    f.push(format!("{which}.mask"), mask);
    let abi = match regs.abi.0 {
        1 => "32-bit",
        2 => "64-bit",
        _ => "unknown",
    };
    f.push(format!("{which}.abi"), abi);
    for v in values.iter() {
        f.push(format!("{which}.reg"), v);
    }
}

fn sample_facts(d: &Decoded, r: &OurRecord, s: &Sample<'_>, f: &mut Facts) {
    let attr = d.attr_of(r);
    f.push("misc", r.misc);
    f.push("pid", s.pid.map_or(Val::from(-1), i32v));
    f.push("tid", s.tid.map_or(Val::from(-1), i32v));
    f.push("ip", s.ip.unwrap_or(0));
    f.push(
        "period",
        s.period
            .unwrap_or_else(|| attr.map_or(0, |a| a.sample_period_or_freq)),
    );
    f.push("addr", s.addr.unwrap_or(0));
    if let Some(c) = &s.callchain {
        f.push("callchain.nr", c.ips.len() as u64);
        for (i, ip) in c.ips.iter().enumerate() {
            f.push(format!("callchain.{i}"), ip);
        }
    }
    let call_stack = attr
        .and_then(|a| a.branch_sample_type)
        .is_some_and(|b| b.contains(BranchSampleType::CALL_STACK));
    if let (Some(b), Some(c), true) = (&s.branch_stack, &s.callchain, call_stack) {
        // `callchain__lbr_callstack_printf`: the kernel part of the callchain up to
        // PERF_CONTEXT_USER, then the first `to` and every `from` of the branch stack.
        let ips = c.ips.to_vec();
        let user = ips.iter().position(|&ip| ip == CallchainContext::USER.0);
        if let (Some(u), Some(first)) = (user, b.entries.get(0)) {
            let n = b.entries.len();
            f.push("lbr.nr", (u + 1 + n + 1) as u64);
            for (i, ip) in ips.iter().take(u + 1).enumerate() {
                f.push(format!("lbr.{i}"), *ip);
            }
            f.push(format!("lbr.{}", u + 1), first.to);
            for (i, e) in b.entries.iter().enumerate() {
                f.push(format!("lbr.{}", u + 2 + i), e.from);
            }
        }
    }
    if let (Some(b), true) = (&s.branch_stack, call_stack) {
        // perf's call-stack form: to[0], from[0], from[1], ...
        f.push("branch.nr", b.entries.len() as u64);
        for (i, e) in b.entries.iter().enumerate() {
            if i == 0 {
                f.push("branch.cs.0", e.to);
            }
            f.push(format!("branch.cs.{}", i + 1), e.from);
        }
    } else if let Some(b) = &s.branch_stack {
        f.push("branch.nr", b.entries.len() as u64);
        for (i, e) in b.entries.iter().enumerate() {
            f.push(format!("branch.{i}.from"), e.from);
            f.push(format!("branch.{i}.to"), e.to);
            let cycles = BranchFlags::FIELDS
                .iter()
                .find(|m| m.0 == "cycles")
                .map_or(0, |&(_, p, w)| {
                    perfdata::rt::bits_get(e.branch_flags.0, p, w)
                });
            f.push(format!("branch.{i}.cycles"), cycles);
        }
    }
    regs_facts(
        "uregs",
        &s.regs_user,
        attr.and_then(|a| a.sample_regs_user).unwrap_or(0),
        f,
    );
    regs_facts(
        "iregs",
        &s.regs_intr,
        attr.and_then(|a| a.sample_regs_intr).unwrap_or(0),
        f,
    );
    if let Some(st) = &s.stack_user {
        let size = if st.data.is_empty() {
            0
        } else {
            st.dyn_size.unwrap_or(0)
        };
        f.push("ustack.size", size);
    }
    if let Some(w) = s.weight {
        let st = attr.map_or(SampleType(0), |a| a.sample_type);
        if st.contains(SampleType::WEIGHT) {
            f.push("weight", w);
        } else {
            f.push("weight", w & 0xffff_ffff);
            f.push("ins_lat", (w >> 32) & 0xffff);
            f.push("p_stage_cyc", w >> 48);
        }
    }
    if let Some(v) = s.data_src {
        f.push("data_src", v.0);
    }
    if let Some(v) = s.phys_addr {
        f.push("phys_addr", v);
    }
    if let Some(v) = s.data_page_size {
        f.push("data_page_size", page_size_name(v));
    }
    if let Some(v) = s.code_page_size {
        f.push("code_page_size", page_size_name(v));
    }
    if let Some(v) = s.transaction {
        f.push("transaction", v.0);
    }
    if let Some(read) = &s.read {
        match &read.values {
            ReadValues::Group(g) => {
                if let Some(v) = g.time_enabled {
                    f.push("read.time_enabled", v);
                }
                if let Some(v) = g.time_running {
                    f.push("read.time_running", v);
                }
                f.push("read.nr", g.values.len() as u64);
                for v in &g.values {
                    f.push("read.id", v.id.unwrap_or(0));
                    f.push("read.value", v.value);
                    if let Some(l) = v.lost {
                        f.push("read.lost", l);
                    }
                }
            }
            ReadValues::Single(one) => {
                if let Some(v) = one.time_enabled {
                    f.push("read.time_enabled", v);
                }
                if let Some(v) = one.time_running {
                    f.push("read.time_running", v);
                }
                f.push("read.id", one.id.unwrap_or(0));
                f.push("read.value", one.value);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Check 3: perf script
// ---------------------------------------------------------------------------------------

/// The `perf script -F` fields that apply to every sampling event of the file (perf
/// refuses a field an event lacks), in perf's printing order.
pub fn script_fields(d: &Decoded) -> Vec<&'static str> {
    let mut common = u64::MAX;
    let mut any = false;
    for (i, a) in d.attrs.iter().enumerate() {
        if d.is_dummy(i) {
            continue;
        }
        common &= a.attr.sample_type.0;
        any = true;
    }
    if !any {
        return vec![];
    }
    let st = SampleType(common);
    let mut fields = vec![];
    for name in crate::perf_text::SCRIPT_FIELD_ORDER {
        let need = match *name {
            "pid" | "tid" => Some(SampleType::TID),
            "cpu" => Some(SampleType::CPU),
            "time" => Some(SampleType::TIME),
            "period" => Some(SampleType::PERIOD),
            "event" => None,
            "addr" => Some(SampleType::ADDR),
            "weight" => Some(SampleType::WEIGHT),
            "ip" => Some(SampleType::IP),
            "iregs" => Some(SampleType::REGS_INTR),
            "uregs" => Some(SampleType::REGS_USER),
            "brstack" => Some(SampleType::BRANCH_STACK),
            "phys_addr" => Some(SampleType::PHYS_ADDR),
            "data_page_size" => Some(SampleType::DATA_PAGE_SIZE),
            "code_page_size" => Some(SampleType::CODE_PAGE_SIZE),
            _ => continue,
        };
        if need.is_none_or(|b| st.contains(b)) {
            fields.push(*name);
        }
    }
    fields
}

/// One sample as perf script delivers it (a group read gives one per member).
#[derive(Debug, Clone)]
pub struct ScriptSample<'d> {
    pub record: &'d OurRecord,
    pub time: Option<u64>,
    pub attr: Option<usize>,
    /// perf's period for this line (the read-value delta for PERF_SAMPLE_READ events).
    pub period: u64,
}

/// Our samples in perf's delivery order (by time, stable), expanded like perf's
/// `deliver_sample_group` / `deliver_sample_value` (period = read value - previous value
/// of the same id).
pub fn script_samples(d: &Decoded) -> Vec<ScriptSample<'_>> {
    let mut samples: Vec<(&OurRecord, &Sample<'static>)> = d
        .records
        .iter()
        .filter_map(|r| match &r.body {
            Ok(RecordBody::Sample(s)) => Some((r, s)),
            _ => None,
        })
        .collect();
    samples.sort_by_key(|(_, s)| s.time.unwrap_or(0));
    let mut prev: std::collections::HashMap<u64, u64> = Default::default();
    let mut out = vec![];
    let attr_of_id = |id: u64| d.attrs.iter().position(|a| a.ids.contains(&id));
    for (r, s) in samples {
        let attr = d.attr_of(r);
        let has_read = attr.is_some_and(|a| a.sample_type.contains(SampleType::READ));
        match (&s.read, has_read) {
            (Some(read), true) => {
                let values: Vec<(u64, u64)> = match &read.values {
                    ReadValues::Group(g) => g
                        .values
                        .iter()
                        .map(|v| (v.id.unwrap_or(0), v.value))
                        .collect(),
                    ReadValues::Single(one) => vec![(one.id.unwrap_or(0), one.value)],
                };
                for (id, value) in values {
                    let Some(at) = attr_of_id(id) else { continue };
                    let last = prev.insert(id, value).unwrap_or(0);
                    out.push(ScriptSample {
                        record: r,
                        time: s.time,
                        attr: Some(at),
                        period: value.wrapping_sub(last),
                    });
                }
            }
            _ => out.push(ScriptSample {
                record: r,
                time: s.time,
                attr: r.attr,
                period: s
                    .period
                    .unwrap_or_else(|| attr.map_or(0, |a| a.sample_period_or_freq)),
            }),
        }
    }
    out
}

/// The facts of one `perf script` line for `fields`.
pub fn script_facts(names: &[Option<String>], x: &ScriptSample<'_>, fields: &[&str]) -> Facts {
    let mut f = Facts::new();
    let Ok(RecordBody::Sample(s)) = &x.record.body else {
        return f;
    };
    let has = |n: &str| fields.contains(&n);
    if has("pid") {
        f.push("pid", s.pid.map_or(Val::from(-1), i32v));
    }
    if has("tid") {
        f.push("tid", s.tid.map_or(Val::from(-1), i32v));
    }
    if has("cpu") {
        f.push("cpu", s.cpu.map_or(Val::from(-1), i32v));
    }
    if has("time") {
        f.push("time", time_nsec(s.time.unwrap_or(0)));
    }
    if has("period") {
        f.push("period", x.period);
    }
    if has("event") {
        // Without a name in the file (EVENT_DESC, EVENT_UPDATE) perf derives one from
        // the attr's type and config; that is perf's naming, not file data: no fact.
        if let Some(name) = x.attr.and_then(|i| names.get(i).cloned().flatten()) {
            f.push("event", name);
        }
    }
    if has("trace") {
        return f;
    }
    if has("addr") {
        f.push("addr", s.addr.unwrap_or(0));
    }
    if has("weight") {
        f.push("weight", s.weight.unwrap_or(0));
    }
    if has("ip") {
        f.push("ip", s.ip.unwrap_or(0));
    }
    for (which, regs) in [("iregs", &s.regs_intr), ("uregs", &s.regs_user)] {
        if !has(which) {
            continue;
        }
        if let Some(r) = regs {
            if let Some(values) = r.regs.as_ref().filter(|_| r.abi.0 != 0) {
                f.push(format!("{which}.abi"), r.abi.0);
                for v in values.iter() {
                    f.push(format!("{which}.reg"), v);
                }
            }
        }
    }
    if has("brstack") {
        if let Some(b) = &s.branch_stack {
            for (i, e) in b.entries.iter().enumerate() {
                f.push(format!("br{i}.from"), e.from);
                f.push(format!("br{i}.to"), e.to);
            }
        }
    }
    if has("phys_addr") {
        f.push("phys_addr", s.phys_addr.unwrap_or(0));
    }
    if has("data_page_size") {
        f.push(
            "data_page_size",
            page_size_name(s.data_page_size.unwrap_or(0)),
        );
    }
    if has("code_page_size") {
        f.push(
            "code_page_size",
            page_size_name(s.code_page_size.unwrap_or(0)),
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_formats() {
        assert_eq!(unit_number(4096), "4K");
        assert_eq!(unit_number(1024), "1024B");
        assert_eq!(unit_number(24 << 30), "24G");
        assert_eq!(page_size_name(0), "N/A");
        assert_eq!(cpu_list(&[1, 0, 3, 4, 5]), "0-1,3-5");
        assert_eq!(cpu_list(&[-1]), "-1");
        assert_eq!(bitmap_list(&[0b1110_0101], 8), "0,2,5-7");
        assert_eq!(time_usec(622_435_055_719), "622.435055");
        assert_eq!(time_nsec(5_000_000_001), "5.000000001");
        assert_eq!(utc_date(1_795_307_369), "2026-11-22 00:29:29");
        assert_eq!(utc_date(0), "1970-01-01 00:00:00");
        assert_eq!(cmdline(&["a".into(), "it's".into()]), "a it\\'s ");
    }
}
