//! Adding a HEADER_* feature is a spec edit: the perf.data spec plus one new feature
//! definition, compiled by `perfdata_derive::spec!` (the same generator `cargo xtask gen`
//! runs), decodes and encodes the new feature through the generated feature dispatch —
//! with no hand-written line for it anywhere.

perfdata_derive::spec! {
    dir: "../spec/perf_data",
    extra: r#"
/// HEADER_FOO (40): a feature that perf does not have (yet).
feature Foo = 40 {
  /// number of foos.
  nr: u32 = count(foos)
  /// the foos.
  foos: [PerfString; nr]
  /// a value only newer producers write.
  level: u64 if remaining >= 8
}
"#,
}

use perf_data::{Ctx, FeatureBody, FeatureId, Foo, PerfString};
use perfdata::rt::{BigEndian, LittleEndian, Reader, Str, Writer};

fn foo_bytes_le() -> Vec<u8> {
    let mut b = vec![];
    b.extend_from_slice(&2u32.to_le_bytes()); // nr
    for text in ["ab", "c"] {
        b.extend_from_slice(&64u32.to_le_bytes()); // perf-string len, padded to 64
        let mut s = text.as_bytes().to_vec();
        s.resize(64, 0);
        b.extend_from_slice(&s);
    }
    b.extend_from_slice(&7u64.to_le_bytes()); // level
    b
}

#[test]
fn the_new_feature_has_an_id_and_a_dispatch_arm() {
    assert_eq!(FeatureId::FOO, FeatureId(40));
    assert_eq!(FeatureId(40).name(), Some("FOO"));
}

#[test]
fn the_new_feature_decodes_from_bytes() {
    let bytes = foo_bytes_le();
    let body = FeatureBody::decode(
        FeatureId(40),
        &mut Reader::<LittleEndian>::new(&bytes, 0),
        &Ctx::default(),
    )
    .unwrap();
    let FeatureBody::Foo(foo) = body else {
        panic!("feature 40 decoded as {body:?}");
    };
    let texts: Vec<_> = foo
        .foos
        .iter()
        .map(|s| s.text.to_str_lossy().into_owned())
        .collect();
    assert_eq!(texts, ["ab", "c"]);
    assert_eq!(foo.level, Some(7));
}

#[test]
fn the_new_feature_encodes_with_computed_count_in_both_byte_orders() {
    let foo = Foo {
        foos: vec![
            PerfString {
                text: Str::padded("ab", 64),
            },
            PerfString {
                text: Str::padded("c", 64),
            },
        ],
        level: Some(7),
        tail: None,
    };
    let mut w = Writer::<LittleEndian>::new();
    FeatureBody::Foo(foo.clone())
        .encode(&mut w, &Ctx::default())
        .unwrap();
    assert_eq!(w.into_vec(), foo_bytes_le());

    let mut w = Writer::<BigEndian>::new();
    foo.encode(&mut w, &Ctx::default()).unwrap();
    let be = w.into_vec();
    assert_eq!(
        &be[..4],
        &2u32.to_be_bytes(),
        "count is computed, in big-endian order"
    );
    let back = Foo::decode(&mut Reader::<BigEndian>::new(&be, 0), &Ctx::default()).unwrap();
    assert_eq!(back, foo);
}

#[test]
fn an_older_producer_without_the_versioned_tail_still_decodes() {
    let mut bytes = foo_bytes_le();
    bytes.truncate(bytes.len() - 8);
    let foo = Foo::decode(&mut Reader::<LittleEndian>::new(&bytes, 0), &Ctx::default()).unwrap();
    assert_eq!(foo.level, None);
    let mut w = Writer::<LittleEndian>::new();
    foo.encode(&mut w, &Ctx::default()).unwrap();
    assert_eq!(w.into_vec(), bytes);
}

#[test]
fn the_committed_generated_code_does_not_have_it() {
    // The feature exists only in the extended spec compiled above.
    assert_eq!(perfdata::generated::perf_data::FeatureId(40).name(), None);
}
