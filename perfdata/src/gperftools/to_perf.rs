//! gperftools CPU profile → perf.data: one cpu-clock event (sample_type IP | TID | TIME |
//! PERIOD | CALLCHAIN), a COMM, an MMAP2 per executable mapping of the map text, and one
//! SAMPLE with a user callchain per sample the profile counts — built as the typed model
//! and written by [`crate::write`], for `perf report` and `perf script`.

use super::Profile;
use crate::container::{EventAttr, Layout};
use crate::generated::perf_data::{
    Attr, AttrFlags, AttrType, Callchain, CallchainContext, Comm, CpuMode, Mmap2, Mmap2FileId,
    Mmap2Inode, RecordBody, RecordMisc, RecordType, Sample, SampleId, SampleType,
};
use crate::rt::{Array, Endianness, Error, Str};
use crate::write::{Builder, RecordData, RecordItem};

/// The process the synthesized records belong to (a profile does not say).
#[derive(Debug, Clone)]
pub struct ToPerfOptions {
    /// Pid (and tid) of every synthesized record (default 1).
    pub pid: u32,
    /// The COMM; default: the file name of the first executable mapping.
    pub comm: Option<String>,
    /// Byte order of the perf.data (default: this machine's).
    pub endian: Endianness,
}

impl Default for ToPerfOptions {
    fn default() -> Self {
        ToPerfOptions {
            pid: 1,
            comm: None,
            endian: Endianness::NATIVE,
        }
    }
}

/// `perf_event_attr` size written: PERF_ATTR_SIZE_VER5 (every perf since 4.x reads it).
const ATTR_SIZE: u32 = 112;
const PROT_READ: u32 = 1;
const PROT_WRITE: u32 = 2;
const PROT_EXEC: u32 = 4;
const MAP_SHARED: u32 = 1;
const MAP_PRIVATE: u32 = 2;

/// The perf.data model of `profile` (write it with [`Builder::save`](crate::write::Builder::save)).
pub fn to_perf(profile: &Profile, opts: &ToPerfOptions) -> Result<Builder<'static>, Error> {
    let period_ns = profile.period_us().saturating_mul(1000).max(1);
    let mut flags = AttrFlags::default();
    flags.set_disabled(true);
    flags.set_sample_id_all(true);
    flags.set_exclude_kernel(true);
    flags.set_exclude_hv(true);
    let sample_type = SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::PERIOD
        | SampleType::CALLCHAIN;
    let attr = Attr {
        type_: AttrType::SOFTWARE,
        size: ATTR_SIZE,
        // PERF_COUNT_SW_CPU_CLOCK
        config: 0,
        sample_period_or_freq: period_ns,
        sample_type,
        attr_flags: flags,
        config2: Some(0),
        branch_sample_type: Some(Default::default()),
        sample_regs_user: Some(0),
        sample_stack_user: Some(0),
        clockid: Some(Default::default()),
        sample_regs_intr: Some(0),
        aux_watermark: Some(0),
        sample_max_stack: Some(0),
        reserved_2: Some(0),
        ..Attr::default()
    };
    let (pid, tid) = (opts.pid, opts.pid);
    let maps: Vec<_> = profile
        .mappings()
        .into_iter()
        .filter(|m| m.perms.contains('x'))
        .collect();
    let comm = opts.comm.clone().unwrap_or_else(|| {
        maps.iter()
            .find(|m| m.path.starts_with('/'))
            .and_then(|m| m.path.rsplit('/').next().map(str::to_string))
            .unwrap_or_else(|| "gperftools".to_string())
    });
    let id = |time: u64| {
        Some(SampleId {
            pid: Some(pid),
            tid: Some(tid),
            time: Some(time),
            ..SampleId::default()
        })
    };
    let user = RecordMisc(CpuMode::USER.0);
    let item = |ty: RecordType, misc: RecordMisc, body: RecordBody<'static>| RecordItem {
        ty,
        misc,
        attr: Some(0),
        data: RecordData::Typed(Box::new(body)),
    };
    let mut records = Vec::with_capacity(maps.len() + 1);
    records.push(item(
        RecordType::COMM,
        user,
        RecordBody::Comm(Comm {
            pid,
            tid,
            comm: Str::padded(comm.as_bytes(), 8),
            tail: None,
            sample_id: id(0),
        }),
    ));
    for m in &maps {
        let bit = |c: char, b: u32| if m.perms.contains(c) { b } else { 0 };
        let (maj, min) = m
            .dev
            .split_once(':')
            .map(|(a, b)| {
                (
                    u32::from_str_radix(a, 16).unwrap_or(0),
                    u32::from_str_radix(b, 16).unwrap_or(0),
                )
            })
            .unwrap_or((0, 0));
        records.push(item(
            RecordType::MMAP2,
            user,
            RecordBody::Mmap2(Mmap2 {
                pid,
                tid,
                addr: m.start,
                len: m.end.saturating_sub(m.start),
                pgoff: m.offset,
                file_id: Mmap2FileId::Inode(Mmap2Inode {
                    maj,
                    min,
                    ino: m.inode,
                    ino_generation: 0,
                }),
                prot: bit('r', PROT_READ) | bit('w', PROT_WRITE) | bit('x', PROT_EXEC),
                map_flags: if m.perms.contains('s') {
                    MAP_SHARED
                } else {
                    MAP_PRIVATE
                },
                filename: Str::padded(m.path.as_bytes(), 8),
                tail: None,
                sample_id: id(0),
            }),
        ));
    }
    // One SAMPLE per counted sample, a period apart, in record order.
    let mut time = period_ns;
    for rec in &profile.records {
        let mut ips = Vec::with_capacity(rec.pcs.len() + 1);
        ips.push(CallchainContext::USER.0);
        ips.extend_from_slice(&rec.pcs);
        let chain = Callchain {
            ips: Array::from(ips),
        };
        for _ in 0..rec.count {
            let sample = Sample {
                ip: rec.pcs.first().copied(),
                pid: Some(pid),
                tid: Some(tid),
                time: Some(time),
                period: Some(period_ns),
                callchain: Some(chain.clone()),
                ..Sample::default()
            };
            records.push(item(RecordType::SAMPLE, user, RecordBody::Sample(sample)));
            time = time.saturating_add(period_ns);
        }
    }
    Ok(Builder {
        endian: opts.endian,
        layout: Layout::File,
        legacy_v1: false,
        short_header: false,
        attrs: vec![EventAttr {
            attr,
            ids: vec![],
            entry_tail: None,
        }],
        event_types: None,
        features: vec![],
        feature_table_slack: Default::default(),
        pipe_end_marker: None,
        records,
        // A new file: perf's own layout.
        placement: None,
    })
}
