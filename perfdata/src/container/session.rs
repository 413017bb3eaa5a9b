//! Which attr a record belongs to, and the decoding context that follows from it.
//!
//! perf's rules (evlist.c / evsel.c): with one attr, every record is that attr's. Otherwise
//! the sample id is found at a position fixed by the (common) sample_type: for SAMPLE at
//! `id_pos` from the start, for other records at `is_pos` from the end of the sample_id
//! trailer; id 0 or an unknown id means the first attr (perf's synthesized records).

use super::stream::{RawRecord, HEADER_SIZE};
use crate::generated::perf_data::{
    Attr, Ctx, FeatureBody, RecordBody, RecordMisc, RecordType, SampleType,
};
use crate::rt::{Endian, Error, Reader, Tail};
use std::collections::HashMap;

/// One event: its attr and the sample ids that name it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct EventAttr<'a> {
    pub attr: Attr<'a>,
    pub ids: Vec<u64>,
    /// Bytes of the attrs-section entry after the attr and its ids descriptor (none in
    /// perf's files; kept so that a rewrite is byte-exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_tail: Tail<'a>,
}

impl EventAttr<'_> {
    pub fn into_owned(self) -> EventAttr<'static> {
        EventAttr {
            attr: self.attr.into_owned(),
            ids: self.ids,
            entry_tail: self.entry_tail.map(|t| t.into_owned()),
        }
    }
}

/// Attrs seen so far plus the context they give. In pipe mode it grows as HEADER_ATTR
/// and HEADER_FEATURE records pass by.
#[derive(Debug, Clone, Default)]
pub struct Session<'a> {
    pub attrs: Vec<EventAttr<'a>>,
    by_id: HashMap<u64, usize>,
    /// From the NRCPUS feature; feature payloads that loop per CPU need them.
    pub nr_cpus_avail: u32,
    pub nr_cpus_online: u32,
}

impl<'a> Session<'a> {
    pub fn add_attr(&mut self, attr: EventAttr<'a>) {
        let index = self.attrs.len();
        for id in &attr.ids {
            self.by_id.entry(*id).or_insert(index);
        }
        self.attrs.push(attr);
    }

    /// Notes what a feature tells about later decoding (NRCPUS).
    pub fn observe_feature(&mut self, feature: &FeatureBody<'_>) {
        if let FeatureBody::Nrcpus(n) = feature {
            self.nr_cpus_avail = n.nr_cpus_avail;
            self.nr_cpus_online = n.nr_cpus_online;
        }
    }

    /// Learns from a pipe-mode setup record: HEADER_ATTR declares an attr and its ids,
    /// HEADER_FEATURE may carry NRCPUS. Other records are ignored.
    pub fn note_record<E: Endian>(&mut self, rec: &RawRecord<'_>) -> Result<(), Error> {
        let ty = rec.record_type();
        if ty != RecordType::HEADER_ATTR && ty != RecordType::HEADER_FEATURE {
            return Ok(());
        }
        let body = RecordBody::decode(
            ty,
            &mut Reader::<E>::new(rec.body, rec.offset + HEADER_SIZE as u64),
            &self.feature_ctx(),
        )?;
        match body {
            RecordBody::HeaderAttr(a) => self.add_attr(EventAttr {
                attr: a.attr.into_owned(),
                ids: a.ids.iter().collect(),
                entry_tail: None,
            }),
            RecordBody::HeaderFeature(f) => {
                if let Some(feature) = &f.data {
                    self.observe_feature(feature);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The context for decoding features.
    pub fn feature_ctx(&self) -> Ctx {
        Ctx {
            nr_cpus_avail: self.nr_cpus_avail,
            nr_cpus_online: self.nr_cpus_online,
            ..Ctx::default()
        }
    }

    /// Index of the attr that `body` (of a record of type `ty`) belongs to, if any attr.
    pub fn attr_index<E: Endian>(&self, ty: RecordType, body: &[u8]) -> Option<usize> {
        let first = self.attrs.first()?;
        if self.attrs.len() == 1 {
            return Some(0);
        }
        let id = sample_id::<E>(&first.attr, ty, body)?;
        Some(self.by_id.get(&id).copied().unwrap_or(0))
    }

    /// The decoding context for a record: its attr's layout, its misc bits, the CPU counts.
    pub fn record_ctx<E: Endian>(&self, ty: RecordType, misc: RecordMisc, body: &[u8]) -> Ctx {
        let mut ctx = match self.attr_index::<E>(ty, body) {
            Some(i) => attr_ctx(&self.attrs[i].attr),
            None => Ctx::default(),
        };
        ctx.misc = misc;
        ctx.nr_cpus_avail = self.nr_cpus_avail;
        ctx.nr_cpus_online = self.nr_cpus_online;
        ctx
    }
}

/// The part of the context an attr determines.
pub fn attr_ctx(attr: &Attr<'_>) -> Ctx {
    Ctx {
        sample_type: attr.sample_type,
        read_format: attr.read_format,
        branch_sample_type: attr.branch_sample_type.unwrap_or_default(),
        sample_regs_user: attr.sample_regs_user.unwrap_or(0),
        sample_regs_intr: attr.sample_regs_intr.unwrap_or(0),
        sample_id_all: attr.attr_flags.sample_id_all(),
        ..Ctx::default()
    }
}

/// The sample id of a record, read at perf's fixed position for this sample_type.
fn sample_id<E: Endian>(attr: &Attr<'_>, ty: RecordType, body: &[u8]) -> Option<u64> {
    let st = attr.sample_type;
    let words = body.len() / 8;
    let index = if ty == RecordType::SAMPLE {
        if st.contains(SampleType::IDENTIFIER) {
            0
        } else if st.contains(SampleType::ID) {
            [
                SampleType::IP,
                SampleType::TID,
                SampleType::TIME,
                SampleType::ADDR,
            ]
            .iter()
            .filter(|b| st.contains(**b))
            .count()
        } else {
            return None;
        }
    } else {
        if !attr.attr_flags.sample_id_all() {
            return None;
        }
        let from_end = if st.contains(SampleType::IDENTIFIER) {
            1
        } else if st.contains(SampleType::ID) {
            1 + usize::from(st.contains(SampleType::CPU))
                + usize::from(st.contains(SampleType::STREAM_ID))
        } else {
            return None;
        };
        words.checked_sub(from_end)?
    };
    let mut r = Reader::<E>::new(body.get(index * 8..)?, 0);
    r.u64().ok()
}
