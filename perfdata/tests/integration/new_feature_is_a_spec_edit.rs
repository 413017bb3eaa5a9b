//! Adding a HEADER_* feature is a spec edit: the perf.data spec plus one new feature
//! definition, compiled by `perfdata_derive::spec!` (the same generator `cargo xtask gen`
//! runs), decodes and encodes the new feature through the generated feature dispatch —
//! with no hand-written line for it anywhere. A feature that feeds the decoding context
//! (as NRCPUS sizes CPU_TOPOLOGY) is a spec edit too: a `context` value declared `from` it
//! gives the context construction the container calls (`FeatureId::CONTEXT_SOURCES`,
//! `Ctx::take_from_feature`, `Ctx::take_feature_values`).

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

/// HEADER_WIDGETS (41): how many widgets the machine has.
feature Widgets = 41 {
  /// widgets per CPU.
  nr_widgets: u32
}

context {
  /// WIDGETS `nr_widgets`: sizes WIDGET_STATS.
  nr_widgets: u32 from Widgets.nr_widgets
}

/// HEADER_WIDGET_STATS (42): one counter per widget, sized by WIDGETS.
feature WidgetStats = 42 {
  /// one per widget.
  counts: [u64; ctx.nr_widgets]
}
"#,
}

use perf_data::{Ctx, FeatureBody, FeatureId, Foo, Nrcpus, PerfString, WidgetStats, Widgets};
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
    assert_eq!(perfdata::types::FeatureId(40).name(), None);
}

/// The container's rule, written once against the generated API (as `PerfData::open` and
/// `Builder::feature_ctx` do): the context's source features first, then every feature
/// with the values they gave.
fn read_features(sections: &[(FeatureId, Vec<u8>)]) -> (Ctx, Vec<FeatureBody<'_>>) {
    let mut fctx = Ctx::default();
    for (id, bytes) in sections {
        if FeatureId::CONTEXT_SOURCES.contains(id) {
            let body = FeatureBody::decode(*id, &mut Reader::<LittleEndian>::new(bytes, 0), &fctx)
                .unwrap();
            fctx.take_from_feature(&body);
        }
    }
    let all = sections
        .iter()
        .map(|(id, bytes)| {
            FeatureBody::decode(*id, &mut Reader::<LittleEndian>::new(bytes, 0), &fctx).unwrap()
        })
        .collect();
    (fctx, all)
}

#[test]
fn a_feature_that_feeds_the_context_is_a_spec_edit() {
    // Declared `from Widgets.…` in the spec: a context source, read first.
    assert_eq!(
        FeatureId::CONTEXT_SOURCES,
        &[FeatureId::NRCPUS, FeatureId::WIDGETS]
    );
    // WIDGET_STATS comes before WIDGETS in the file, as NRCPUS may come after the
    // features it sizes: 3 widgets, so 3 counters and no tail.
    let stats: Vec<u8> = [10u64, 20, 30]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let sections = vec![
        (FeatureId::WIDGET_STATS, stats.clone()),
        (FeatureId::WIDGETS, 3u32.to_le_bytes().to_vec()),
    ];
    let (fctx, features) = read_features(&sections);
    assert_eq!(fctx.nr_widgets, 3);
    let FeatureBody::WidgetStats(WidgetStats { counts, tail }) = &features[0] else {
        panic!("{:?}", features[0]);
    };
    assert_eq!(counts.to_vec(), [10, 20, 30]);
    assert_eq!(tail, &None);
    // Without the source the counters are not read (they stay in the tail).
    let alone = FeatureBody::decode(
        FeatureId::WIDGET_STATS,
        &mut Reader::<LittleEndian>::new(&stats, 0),
        &Ctx::default(),
    )
    .unwrap();
    assert!(
        matches!(alone, FeatureBody::WidgetStats(WidgetStats { ref counts, .. }) if counts.is_empty())
    );

    // A per-event context gets the features' values, the existing NRCPUS ones included.
    let mut from_features = Ctx::default();
    from_features.take_from_feature(&FeatureBody::Widgets(Widgets {
        nr_widgets: 5,
        tail: None,
    }));
    from_features.take_from_feature(&FeatureBody::Nrcpus(Nrcpus {
        nr_cpus_avail: 8,
        nr_cpus_online: 4,
        tail: None,
    }));
    let mut event = Ctx::default();
    event.take_feature_values(&from_features);
    assert_eq!(
        (event.nr_widgets, event.nr_cpus_avail, event.nr_cpus_online),
        (5, 8, 4)
    );
}

#[test]
fn the_real_context_comes_from_the_spec() {
    // The committed code: NRCPUS is the one feature source; the attr gives the rest.
    use perfdata::types as committed;
    assert_eq!(
        committed::FeatureId::CONTEXT_SOURCES,
        &[committed::FeatureId::NRCPUS]
    );
    let attr = committed::Attr {
        sample_type: committed::SampleType::IP | committed::SampleType::TIME,
        branch_sample_type: None,
        sample_regs_user: Some(0x7),
        ..Default::default()
    };
    let ctx = committed::Ctx::from_attr(&attr);
    assert_eq!(ctx.sample_type, attr.sample_type);
    assert_eq!(ctx.sample_regs_user, 0x7);
    assert_eq!(
        ctx.branch_sample_type,
        committed::BranchSampleType::default()
    );
}
