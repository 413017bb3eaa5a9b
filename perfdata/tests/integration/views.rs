//! The zero-copy views and per-event layout plans (generated from the spec) agree with the
//! full decoders on every sample of every fixture and corpus file, in both byte orders.

use crate::common;

use perfdata::rt::{Endian, Endianness, Error};
use perfdata::types::{Comm, Mmap2, RecordBody, RecordType, Sample, SampleView};
use perfdata::write::{Builder, WriteOptions};
use perfdata::{PerfData, Recording};

/// Checks every SAMPLE, COMM and MMAP2 of `data`; returns how many samples it compared.
fn compare(data: &PerfData<'_>, what: &str) -> Result<u64, Error> {
    let mut samples = 0u64;
    data.for_each_record(&mut |_, rec, ctx| {
        let ty = rec.record_type();
        let at = format!("{what}: record at {:#x}", rec.offset);
        match data.decode(&rec, ctx) {
            Ok(RecordBody::Sample(s)) => {
                let v = data.sample(&rec, ctx)?.expect("a SAMPLE has a view");
                check_sample(&v, &s, &at)?;
                // The same view in the compile-time byte order of the hot walks.
                perfdata::rt::static_endian!(data.format.endian, |e| {
                    let v = data.sample_as(e, &rec, ctx)?.expect("a SAMPLE has a view");
                    check_sample(&v, &s, &at)?;
                    check_sample(&v.in_runtime_order(), &s, &at)
                })?;
                assert_eq!(data.time(&rec, ctx), s.time, "{at}");
                samples += 1;
            }
            Ok(RecordBody::Comm(c)) => {
                let layout = perfdata::types::CommLayout::new(ctx);
                let v = perfdata::types::CommView::new(
                    rec.body,
                    rec.offset + 8,
                    data.format.endian,
                    ctx,
                    &layout,
                )?;
                let Comm { pid, tid, comm, .. } = c;
                assert_eq!((v.pid(), v.tid()), (pid, tid), "{at}");
                assert_eq!(v.comm()?, comm, "{at}");
            }
            Ok(RecordBody::Mmap2(m)) => {
                let layout = perfdata::types::Mmap2Layout::new(ctx);
                let v = perfdata::types::Mmap2View::new(
                    rec.body,
                    rec.offset + 8,
                    data.format.endian,
                    ctx,
                    &layout,
                )?;
                let Mmap2 {
                    pid,
                    tid,
                    addr,
                    len,
                    pgoff,
                    ..
                } = m;
                assert_eq!(
                    (v.pid(), v.tid(), v.addr(), v.len(), v.pgoff()),
                    (pid, tid, addr, len, pgoff),
                    "{at}"
                );
            }
            // Damaged or unknown records: the views are not asked about them.
            _ => assert!(ty != RecordType::SAMPLE || data.sample(&rec, ctx).is_ok()),
        }
        Ok(true)
    })?;
    Ok(samples)
}

/// Every field of the view `v` is the decoded sample's.
fn check_sample<E: Endian>(v: &SampleView<'_, E>, s: &Sample<'_>, at: &str) -> Result<(), Error> {
    let Sample {
        identifier,
        ip,
        pid,
        tid,
        time,
        addr,
        id,
        stream_id,
        cpu,
        cpu_res,
        period,
        read,
        callchain,
        raw,
        branch_stack,
        regs_user,
        stack_user,
        weight,
        data_src,
        transaction,
        regs_intr,
        phys_addr,
        cgroup,
        data_page_size,
        code_page_size,
        aux,
        tail: _,
    } = s;
    assert_eq!(v.identifier(), *identifier, "{at}");
    assert_eq!(v.ip(), *ip, "{at}");
    assert_eq!(v.pid(), *pid, "{at}");
    assert_eq!(v.tid(), *tid, "{at}");
    assert_eq!(v.time(), *time, "{at}");
    assert_eq!(v.addr(), *addr, "{at}");
    assert_eq!(v.id(), *id, "{at}");
    assert_eq!(v.stream_id(), *stream_id, "{at}");
    assert_eq!(v.cpu(), *cpu, "{at}");
    assert_eq!(v.cpu_res(), *cpu_res, "{at}");
    assert_eq!(v.period(), *period, "{at}");
    assert_eq!(&v.read()?, read, "{at}");
    assert_eq!(&v.callchain()?, callchain, "{at}");
    assert_eq!(&v.raw()?, raw, "{at}");
    assert_eq!(&v.branch_stack()?, branch_stack, "{at}");
    assert_eq!(&v.regs_user()?, regs_user, "{at}");
    assert_eq!(&v.stack_user()?, stack_user, "{at}");
    assert_eq!(&v.weight()?, weight, "{at}");
    assert_eq!(&v.data_src()?, data_src, "{at}");
    assert_eq!(&v.transaction()?, transaction, "{at}");
    assert_eq!(&v.regs_intr()?, regs_intr, "{at}");
    assert_eq!(&v.phys_addr()?, phys_addr, "{at}");
    assert_eq!(&v.cgroup()?, cgroup, "{at}");
    assert_eq!(&v.data_page_size()?, data_page_size, "{at}");
    assert_eq!(&v.code_page_size()?, code_page_size, "{at}");
    assert_eq!(&v.aux()?, aux, "{at}");
    Ok(())
}

#[test]
fn views_agree_with_decoders_on_every_fixture() {
    let dir = common::fixtures_dir();
    let mut total = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".data") {
            continue;
        }
        let recording = Recording::open(&path).unwrap();
        let data = recording.data().unwrap();
        total += compare(&data, &path.display().to_string()).unwrap();
    }
    assert!(total > 500, "only {total} samples compared");
}

#[test]
fn views_agree_with_decoders_on_big_endian_rewrites() {
    for name in [
        "callchain.data",
        "sample-fields.data",
        "group-read.data",
        "regs.data",
    ] {
        let bytes = common::fixture(name);
        let data = PerfData::open(&bytes).unwrap();
        let file = Builder::read(&data).unwrap();
        let mut out = std::io::Cursor::new(vec![]);
        file.write_to(&mut out, WriteOptions::default().endian(Endianness::Big))
            .unwrap();
        let big = out.into_inner();
        let data = PerfData::open(&big).unwrap();
        assert_eq!(data.format.endian, Endianness::Big);
        let n = compare(&data, &format!("{name} (big-endian)")).unwrap();
        assert!(n > 0, "{name}: no samples");
    }
}

#[test]
fn views_agree_with_decoders_on_the_corpus() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Ok(recording) = Recording::open(&path) else {
            continue;
        };
        let Ok(data) = recording.data() else {
            eprintln!("{}: not a readable perf.data, not compared", path.display());
            continue;
        };
        // Files damaged on purpose stop the walk: what was compared before it counts.
        if let Err(e) = compare(&data, &path.display().to_string()) {
            eprintln!("{}: walk ended early: {e}", path.display());
        }
    }
}

#[test]
fn a_view_refuses_a_body_shorter_than_its_fixed_fields() {
    let bytes = common::fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut checked = false;
    data.for_each_record(&mut |_, rec, ctx| {
        if rec.record_type() != RecordType::SAMPLE {
            return Ok(true);
        }
        let plan = data.session.plan(ctx.attr.unwrap()).unwrap();
        let cut = &rec.body[..usize::from(plan.sample.fixed_len) - 1];
        let err = perfdata::types::SampleView::new(
            cut,
            rec.offset + 8,
            data.format.endian,
            ctx,
            &plan.sample,
        )
        .unwrap_err();
        assert!(err.to_string().contains("Sample"), "{err}");
        checked = true;
        Ok(false)
    })
    .unwrap();
    assert!(checked);
}

/// `validate` (what the read-back check of every conversion uses for samples) accepts
/// exactly what the decoder accepts: intact samples, and not one whose callchain claims
/// more entries than the body holds or whose body is cut.
#[test]
fn validate_accepts_what_decode_accepts() {
    let bytes = common::fixture("callchain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut checked = 0;
    data.for_each_record(&mut |_, rec, ctx| {
        let Some(plan) = ctx.attr.and_then(|i| data.session.plan(i)) else {
            return Ok(true);
        };
        if rec.record_type() != RecordType::SAMPLE {
            return Ok(true);
        }
        let fixed = usize::from(plan.sample.fixed_len);
        let mut lying = rec.body.to_vec();
        lying[fixed..fixed + 8].copy_from_slice(&u64::MAX.to_le_bytes()); // callchain nr
        let cut = &rec.body[..rec.body.len() - 8];
        for (body, ok) in [(rec.body, true), (&lying[..], false), (cut, false)] {
            let r = perfdata::RawRecord { body, ..rec };
            let decoded = data.decode(&r, ctx).is_ok();
            let validated = data
                .sample(&r, ctx)
                .and_then(|s| s.unwrap().validate())
                .is_ok();
            assert_eq!(
                (decoded, validated),
                (ok, ok),
                "record at {:#x}",
                rec.offset
            );
        }
        checked += 1;
        Ok(true)
    })
    .unwrap();
    assert!(checked >= 10, "only {checked} samples");
}
