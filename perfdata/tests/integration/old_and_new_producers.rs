//! Producers older and newer than the spec's newest knowledge: the 72-byte file header
//! without a feature bitmap, and a perf_event_attr larger than any the spec knows.

use crate::common;
use common::fixture;

use perfdata::rt::{BigEndian, LittleEndian, Reader, Writer};
use perfdata::types::{Attr, Ctx};
use perfdata::write::{Builder, WriteOptions};
use perfdata::PerfData;
use std::io::Cursor;

#[test]
fn a_72_byte_header_without_features_reads_and_writes() {
    let bytes = fixture("plain.data");
    let data = PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    file.short_header = true;
    file.features.clear();
    file.feature_table_slack = Default::default();
    let mut out = Cursor::new(vec![]);
    file.write_to(&mut out, WriteOptions::default()).unwrap();
    let old = out.into_inner();
    assert_eq!(u64::from_le_bytes(old[8..16].try_into().unwrap()), 72);
    let back = PerfData::open(&old).unwrap();
    assert!(back.format.short_header);
    assert!(back.features.is_empty());
    assert!(back.header.as_ref().unwrap().adds_features.is_none());
    let count = |d: &PerfData<'_>| {
        let mut n = 0;
        d.for_each_record(&mut |_, _, _| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        n
    };
    assert_eq!(count(&back), count(&data));
    // And it rewrites to itself.
    let again = Builder::read(&back).unwrap();
    let mut out = Cursor::new(vec![]);
    again.write_to(&mut out, WriteOptions::default()).unwrap();
    assert!(out.into_inner() == old);
}

#[test]
fn an_attr_from_a_newer_producer_keeps_its_unknown_fields() {
    // Take a real VER7 attr (128 bytes) and grow it to 152 bytes: VER8's config3 plus 16
    // bytes of fields no spec knows yet.
    let bytes = fixture("plain.data");
    let data = PerfData::open(&bytes).unwrap();
    let attr = data.session.attrs[0].attr.clone();
    let mut w = Writer::<LittleEndian>::new();
    attr.encode(&mut w, &Ctx::default()).unwrap();
    let mut raw = w.into_vec();
    assert_eq!(raw.len(), 128);
    raw.extend_from_slice(&0x1234u64.to_le_bytes()); // config3
    raw.extend_from_slice(&[0xab; 16]); // the future
    raw[4..8].copy_from_slice(&152u32.to_le_bytes());
    let newer = Attr::decode(&mut Reader::<LittleEndian>::new(&raw, 0), &Ctx::default()).unwrap();
    assert_eq!(newer.config3, Some(0x1234));
    assert_eq!(
        newer.tail.as_ref().map(|t| t.to_vec()),
        Some(vec![0xab; 16])
    );
    let mut w = Writer::<LittleEndian>::new();
    newer.encode(&mut w, &Ctx::default()).unwrap();
    assert_eq!(w.into_vec(), raw, "the unknown fields are written back");
    // Through big-endian too: the unknown tail is kept as bytes.
    let mut w = Writer::<BigEndian>::new();
    newer.encode(&mut w, &Ctx::default()).unwrap();
    let be = w.into_vec();
    let back = Attr::decode(&mut Reader::<BigEndian>::new(&be, 0), &Ctx::default()).unwrap();
    assert_eq!(back, newer);
    // An attr whose size is 0 (pre-VER0 producers) means 64 bytes.
    let mut ver0 = raw[..64].to_vec();
    ver0[4..8].copy_from_slice(&0u32.to_le_bytes());
    let a = Attr::decode(&mut Reader::<LittleEndian>::new(&ver0, 0), &Ctx::default()).unwrap();
    assert_eq!(a.size, 0);
    assert_eq!(a.config2, None);
    let mut w = Writer::<LittleEndian>::new();
    a.encode(&mut w, &Ctx::default()).unwrap();
    assert_eq!(w.into_vec(), ver0);
}
