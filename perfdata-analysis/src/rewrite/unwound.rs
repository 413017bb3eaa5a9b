//! `perfdata convert --unwind`: a `--call-graph dwarf` recording rewritten into a normal
//! `-g` one. Each sample's user stack is unwound ([`crate::stack::unwind`]) and stored in its
//! callchain (after the kernel part, behind `PERF_CONTEXT_USER`), its register dump and
//! stack copy are dropped, and every attr says so (no REGS_USER / STACK_USER, user
//! callchains not excluded). The result is read by `perf report`, hotspot and every other
//! tool without the binaries, and is a fraction of the size.
//!
//! Records are written in the order the analyses replay them (perf's time order, rounds
//! kept); COMPRESSED records come out expanded. The callchain holds the addresses perf's
//! own unwinder reports (callers at their call instruction), so `perf script` prints the
//! same stacks for both files.

use crate::AnalysisError as Error;
use crate::{Analyzer, Stack};
use perfdata::rt::{static_endian, Array, StaticEndian};
use perfdata::types::{
    Attr, Callchain, FeatureBody, FeatureId, RecordBody, RecordType, SampleType,
};
use perfdata::write::{
    Builder, FeatureData, FileSink, PipeSink, RecordData, RecordEncoder, RecordItem, Sink,
};
use perfdata::Layout;
use std::io::{Seek, Write};

const PERF_CONTEXT_USER: u64 = -512i64 as u64;

/// What a rewrite did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnwoundSummary {
    /// Samples written.
    pub samples: u64,
    /// Samples whose user stack was unwound into their callchain.
    pub unwound: u64,
    /// Of those, the ones whose walk stopped short of the outermost frame.
    pub cut: u64,
    /// Size of the input file, in bytes.
    pub input_bytes: u64,
    /// Size of the written file, in bytes.
    pub output_bytes: u64,
}

/// An attr as it is once its samples carry unwound callchains.
fn unwound_attr(attr: &mut Attr<'_>) {
    if !attr.sample_type.contains(SampleType::REGS_USER)
        && !attr.sample_type.contains(SampleType::STACK_USER)
    {
        return;
    }
    attr.sample_type = SampleType(
        (attr.sample_type.0 & !(SampleType::REGS_USER.0 | SampleType::STACK_USER.0))
            | SampleType::CALLCHAIN.0,
    );
    attr.attr_flags.set_exclude_callchain_user(false);
    if let Some(r) = attr.sample_regs_user.as_mut() {
        *r = 0;
    }
    if let Some(s) = attr.sample_stack_user.as_mut() {
        *s = 0;
    }
}

/// Writes the analyzer's recording to `out` with each sample's user stack unwound into
/// its callchain: what was written, and the features carried as damaged as they were
/// (for the read-back check of [`perfdata::write::save_checked_as`], which a caller
/// writing a file goes through). A `--threads` directory is refused (its streams would
/// have to be merged).
pub fn unwound<W: Write + Seek>(
    analyzer: &mut Analyzer<'_>,
    out: &mut W,
) -> Result<(UnwoundSummary, Vec<FeatureId>), Error> {
    let recording = analyzer.recording();
    if recording.is_directory() {
        return Err(crate::AnalysisError::unsupported(
            "a --threads directory: --unwind rewrites a single file (merge the streams first)",
        ));
    }
    let mut summary = UnwoundSummary {
        input_bytes: recording.header_bytes().len() as u64,
        ..UnwoundSummary::default()
    };
    let mut head = Builder::read_head(&analyzer.data)?;
    for a in &mut head.attrs {
        unwound_attr(&mut a.attr);
    }
    let fctx = analyzer.data.session.feature_ctx();
    head.make_features_typed(&fctx)?;
    // The records come out expanded: the file no longer says it is compressed.
    head.features.retain(|f| f.id != FeatureId::COMPRESSED);
    for f in &mut head.features {
        if let FeatureData::Typed(body) = &mut f.data {
            if let FeatureBody::EventDesc(d) = &mut **body {
                for e in &mut d.events {
                    unwound_attr(&mut e.attr);
                }
            }
        }
    }
    head.placement = None;
    let damaged = head.damaged_features();
    static_endian!(head.endian, |e| write_as(
        e,
        analyzer,
        &head,
        &mut *out,
        &mut summary
    ))?;
    summary.output_bytes = out.stream_position()?;
    Ok((summary, damaged))
}

fn write_as<E: StaticEndian, W: Write + Seek>(
    _: E,
    analyzer: &mut Analyzer<'_>,
    head: &Builder<'_>,
    out: &mut W,
    summary: &mut UnwoundSummary,
) -> Result<(), Error> {
    let fctx = analyzer.data.session.feature_ctx();
    let enc = RecordEncoder::<E>::new(head.endian, &head.attrs, fctx);
    match head.layout {
        Layout::File => {
            let sink = FileSink::begin(&mut *out, head, !head.features.is_empty(), enc)?;
            replay_into(analyzer, sink, head, summary)
        }
        Layout::Pipe => {
            let sink = PipeSink::begin(&mut *out, enc)?;
            replay_into(analyzer, sink, head, summary)
        }
    }
}

/// Every record replayed into `sink`: samples with their stacks unwound into callchains,
/// a pipe's HEADER_ATTR records with the new attrs, the rest as they are.
fn replay_into(
    analyzer: &mut Analyzer<'_>,
    mut sink: impl Sink,
    head: &Builder<'_>,
    summary: &mut UnwoundSummary,
) -> Result<(), Error> {
    let e = analyzer.data.format.endian;
    let mut stack = Stack::default();
    let mut ips: Vec<u64> = vec![];
    // One record out for one record in: PERF_SAMPLE_READ samples stay whole.
    analyzer.run(
        crate::RunOptions {
            expand_read: false,
            ..Default::default()
        },
        |machine, item| -> Result<bool, crate::AnalysisError> {
            let rec = item.rec;
            let ty = rec.record_type();
            if ty == RecordType::COMPRESSED || ty == RecordType::COMPRESSED2 {
                return Ok(true);
            }
            let mut typed = None;
            if let Some(s) = &item.sample {
                summary.samples += 1;
                machine.stack(s, &mut stack)?;
                if let Some(end) = stack.unwound {
                    summary.unwound += 1;
                    summary.cut += u64::from(end.is_cut());
                    let RecordBody::Sample(mut sample) = item.decode()? else {
                        return Err(crate::AnalysisError::unsupported(
                            "a SAMPLE record that decodes as another",
                        ));
                    };
                    // The recorded callchain's kernel part, then the unwound user part.
                    ips.clear();
                    if let Some(chain) = &sample.callchain {
                        ips.extend(chain.ips.iter().take_while(|&ip| ip != PERF_CONTEXT_USER));
                    }
                    ips.push(PERF_CONTEXT_USER);
                    ips.extend(stack.addrs[stack.user_from..].iter().map(|&(a, _)| a));
                    sample.callchain = Some(Callchain {
                        ips: Array::from(ips.clone()),
                    });
                    sample.regs_user = None;
                    sample.stack_user = None;
                    typed = Some(RecordBody::Sample(sample.into_owned()));
                }
            } else if ty == RecordType::HEADER_ATTR {
                if let RecordBody::HeaderAttr(mut a) = item.decode()? {
                    unwound_attr(&mut a.attr);
                    typed = Some(RecordBody::HeaderAttr(a.into_owned()));
                }
            }
            let written = match typed {
                Some(body) => RecordItem {
                    ty,
                    misc: rec.header.misc,
                    attr: item.ctx.attr.map(|a| a as usize),
                    data: RecordData::Typed(Box::new(body)),
                },
                None => static_endian!(e, |e| RecordItem::raw(&item.data.session, rec, e)),
            };
            sink.record(&written)
                .map_err(|err| err.with_record(summary.samples, ty.label()))?;
            Ok(true)
        },
    )?;
    Ok(sink.finish(&head.features, &head.feature_table_slack)?)
}
