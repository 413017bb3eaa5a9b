//! A synthesized recording for machines without a working `perf`: the record mix of
//! `perf record -g` (COMM, MMAP2, SAMPLE with IP|TID|TIME|CALLCHAIN|PERIOD and
//! sample_id_all, FINISHED_ROUND every ~10k records; the samples' stacks drawn from a
//! program's bounded set of stacks), written as a pipe-layout stream with
//! the generated encoders, record by record, so memory stays flat whatever the size.
//! `cargo xtask bench` converts it to the file layout with `perfdata convert`.

use perfdata::rt::{Array, LittleEndian, Str, Writer};
use perfdata::types::{
    Attr, AttrFlags, AttrType, Callchain, CallchainContext, Comm, Ctx, EventHeader, FeatureBody,
    FeatureId, FinishedRound, HeaderAttr, HeaderFeature, Mmap2, Mmap2FileId, Nrcpus, PipeHeader,
    RecordBody, RecordMisc, Sample, SampleId, SampleType, PERF_MAGIC, PERF_PIPE_HEADER_SIZE,
};
use std::io::Write;

/// perf_event_attr size up to `sample_max_stack` (PERF_ATTR_SIZE_VER5).
const ATTR_SIZE: u32 = 112;
const RECORDS_PER_ROUND: u64 = 10_000;
const PID: u32 = 4242;
const TEXT_START: u64 = 0x5555_5555_0000;
const TEXT_LEN: u64 = 0x10_0000;

/// Writes about `target_bytes` of pipe-layout stream to `out`; returns the samples written.
pub fn write_pipe_stream(out: &mut impl Write, target_bytes: u64) -> anyhow::Result<u64> {
    let sample_type = SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::CALLCHAIN
        | SampleType::PERIOD;
    let mut flags = AttrFlags::default();
    flags.set_sample_id_all(true);
    let attr = Attr {
        type_: AttrType::SOFTWARE,
        size: ATTR_SIZE,
        sample_period_or_freq: 10_000,
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
        ..Default::default()
    };
    let mut w = Writer::<LittleEndian>::new();
    PipeHeader {
        magic: PERF_MAGIC,
        size: PERF_PIPE_HEADER_SIZE,
    }
    .encode(&mut w, &Ctx::default())?;
    out.write_all(w.as_slice())?;

    let user = {
        let mut m = RecordMisc::default();
        m.set_cpumode(2); // PERF_RECORD_MISC_USER
        m
    };
    let ctx = Ctx {
        sample_type,
        sample_id_all: true,
        misc: user,
        ..Default::default()
    };
    let mut enc = RecordEncoder {
        out,
        body: Writer::new(),
        header: Writer::new(),
        written: PERF_PIPE_HEADER_SIZE,
    };
    let attr_record = RecordBody::HeaderAttr(HeaderAttr {
        attr,
        ids: Array::from(vec![]),
        tail: None,
    });
    enc.put(&attr_record, RecordMisc::default(), &Ctx::default())?;
    // perf's pipe streams carry NRCPUS; without it `Builder` searches the whole record
    // list for it once per record, which makes `convert` quadratic.
    let nrcpus = RecordBody::HeaderFeature(HeaderFeature {
        feat_id: u64::from(FeatureId::NRCPUS.0),
        data: Some(Box::new(FeatureBody::Nrcpus(Nrcpus {
            nr_cpus_avail: 2,
            nr_cpus_online: 2,
            tail: None,
        }))),
        tail: None,
    });
    enc.put(&nrcpus, RecordMisc::default(), &Ctx::default())?;

    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let threads = [PID, PID + 1];
    let mut time = 1_000_000_000u64;
    for &tid in &threads {
        let sample_id = Some(sample_id(tid, time));
        let comm = RecordBody::Comm(Comm {
            pid: PID,
            tid,
            comm: Str::padded("bench-load", 8),
            tail: None,
            sample_id: sample_id.clone(),
        });
        enc.put(&comm, user, &ctx)?;
        let mmap = RecordBody::Mmap2(Mmap2 {
            pid: PID,
            tid,
            addr: TEXT_START,
            len: TEXT_LEN,
            pgoff: 0,
            file_id: Mmap2FileId::Inode(Default::default()),
            prot: 5,      // PROT_READ | PROT_EXEC
            map_flags: 2, // MAP_PRIVATE
            filename: Str::padded("/usr/local/bin/bench-load", 8),
            tail: None,
            sample_id,
        });
        enc.put(&mmap, user, &ctx)?;
    }

    let stacks = call_stacks(&mut rng);
    let (mut samples, mut records) = (0u64, 0u64);
    let mut ips = Vec::with_capacity(MAX_DEPTH + 1);
    while enc.written < target_bytes {
        let tid = threads[(samples % 2) as usize];
        time += 5_000;
        // Two CPUs' buffers interleave: times go back a little inside a round, never
        // across one (what FINISHED_ROUND promises).
        let jitter = rng.next() % 40_000;
        // A program's stacks: a bounded set, some far more often than others (the
        // smaller of two draws favours the first stacks).
        let pick = (rng.next() % STACKS as u64).min(rng.next() % STACKS as u64);
        ips.clear();
        ips.push(CallchainContext::USER.0);
        ips.extend(stacks[pick as usize].iter().rev());
        let sample = RecordBody::Sample(Sample {
            ip: Some(ips[1]),
            pid: Some(PID),
            tid: Some(tid),
            time: Some(time + jitter),
            period: Some(10_000),
            callchain: Some(Callchain {
                ips: Array::from(ips.clone()),
            }),
            ..Default::default()
        });
        enc.put(&sample, user, &ctx)?;
        samples += 1;
        records += 1;
        if records % RECORDS_PER_ROUND == 0 {
            let round = RecordBody::FinishedRound(FinishedRound { tail: None });
            enc.put(&round, RecordMisc::default(), &Ctx::default())?;
        }
    }
    let round = RecordBody::FinishedRound(FinishedRound { tail: None });
    enc.put(&round, RecordMisc::default(), &Ctx::default())?;
    out.flush()?;
    Ok(samples)
}

/// Distinct call stacks of the synthesized program.
const STACKS: usize = 4096;
const MAX_DEPTH: usize = 16;

/// The program's call stacks, root first: each extends a prefix of an earlier one by a
/// few calls (so that stacks share callers, as a program's do), at addresses in its text.
fn call_stacks(rng: &mut XorShift) -> Vec<Vec<u64>> {
    let addr = |rng: &mut XorShift| TEXT_START + rng.next() % TEXT_LEN;
    let mut stacks: Vec<Vec<u64>> = vec![vec![addr(rng)]];
    while stacks.len() < STACKS {
        let parent = &stacks[(rng.next() % stacks.len() as u64) as usize];
        let keep = 1 + (rng.next() % parent.len() as u64) as usize;
        let mut stack = parent[..keep].to_vec();
        let more = 1 + (rng.next() % 4) as usize;
        while stack.len() < (keep + more).min(MAX_DEPTH) {
            stack.push(addr(rng));
        }
        stacks.push(stack);
    }
    stacks
}

fn sample_id(tid: u32, time: u64) -> SampleId {
    SampleId {
        pid: Some(PID),
        tid: Some(tid),
        time: Some(time),
        ..Default::default()
    }
}

/// Encodes records one at a time: body first, then the header that states its size.
struct RecordEncoder<'o, W: Write> {
    out: &'o mut W,
    body: Writer<LittleEndian>,
    header: Writer<LittleEndian>,
    written: u64,
}

impl<W: Write> RecordEncoder<'_, W> {
    fn put(&mut self, record: &RecordBody<'_>, misc: RecordMisc, ctx: &Ctx) -> anyhow::Result<()> {
        self.body.clear();
        self.header.clear();
        record.encode(&mut self.body, &Ctx { misc, ..*ctx })?;
        let size = u16::try_from(8 + self.body.len())?;
        let ty = record
            .record_type()
            .ok_or_else(|| anyhow::anyhow!("record without a type"))?;
        EventHeader {
            type_: ty.0,
            misc,
            size,
        }
        .encode(&mut self.header, &Ctx::default())?;
        self.out.write_all(self.header.as_slice())?;
        self.out.write_all(self.body.as_slice())?;
        self.written += u64::from(size);
        Ok(())
    }
}

/// A small deterministic generator: the same file on every machine.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
