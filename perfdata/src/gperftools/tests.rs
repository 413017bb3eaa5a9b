//! Crafted profiles in every word size and byte order.

use super::*;

/// A profile's bytes slot by slot in `layout` (slots given as u64).
fn craft(layout: SlotFormat, slots: &[u64], text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &v in slots {
        let b = match (layout.word_size, layout.endian) {
            (4, Endianness::Little) => (v as u32).to_le_bytes().to_vec(),
            (4, Endianness::Big) => (v as u32).to_be_bytes().to_vec(),
            (_, Endianness::Little) => v.to_le_bytes().to_vec(),
            (_, Endianness::Big) => v.to_be_bytes().to_vec(),
        };
        out.extend(b);
    }
    out.extend_from_slice(text);
    out
}

const TEXT: &[u8] = b"build=/src/out\n\
00400000-00452000 r-xp 00000000 00:00 1234        $build/prog\n\
7f0000000000-7f0000021000 rw-p 00001000 08:01 0           \n\
something gperftools did not write\n\
7f1000000000-7f1000100000 r-xp 00000000 00:00 99          /lib/with space.so\n";

/// Header (period 250), two records (one stack twice), trailer, text.
fn sample_slots() -> Vec<u64> {
    vec![
        0, 3, 0, 250, 0, // header
        5, 3, 0x401000, 0x401100, 0x401200, // record 0
        2, 1, 0x402000, // record 1
        1, 3, 0x401000, 0x401100, 0x401200, // record 2: record 0's stack again
        0, 1, 0, // trailer
    ]
}

#[test]
fn every_layout_is_detected_read_and_written_back_byte_exact() {
    for layout in SlotFormat::ALL {
        let bytes = craft(layout, &sample_slots(), TEXT);
        assert_eq!(detect(&bytes), Some(layout), "{}", layout.describe());
        let p = Profile::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", layout.describe()));
        assert_eq!(p.layout, layout);
        assert_eq!(p.period_us(), 250);
        assert_eq!(p.records.len(), 3);
        assert_eq!(p.records[0].pcs, [0x401000, 0x401100, 0x401200]);
        assert_eq!(p.records[1].count, 2);
        assert_eq!(p.total_samples(), 8);
        assert_eq!(p.map_text, TEXT);
        assert_eq!(p.encode(layout).unwrap(), bytes, "{}", layout.describe());
        // Any layout to any other: the same profile, the other's bytes.
        for to in SlotFormat::ALL {
            let other = p.encode(to).unwrap();
            assert_eq!(other, craft(to, &sample_slots(), TEXT));
            let back = Profile::parse(&other).unwrap();
            assert_eq!(back.records, p.records);
            assert_eq!(back.layout, to);
        }
    }
}

#[test]
fn more_header_words_are_kept() {
    for layout in SlotFormat::ALL {
        let slots = [0, 5, 0, 100, 0, 7, 8, 1, 1, 0x1234, 0, 1, 0];
        let bytes = craft(layout, &slots, b"");
        assert_eq!(detect(&bytes), Some(layout));
        let p = Profile::parse(&bytes).unwrap();
        assert_eq!(p.header.extra, [7, 8]);
        assert_eq!(p.records.len(), 1);
        assert_eq!(p.encode(layout).unwrap(), bytes);
    }
}

#[test]
fn not_a_profile_is_an_error_at_byte_0() {
    for bad in [
        &b""[..],
        b"PERFILE2",
        &craft(SlotFormat::B64_LE, &[0, 3, 0, 0, 0, 0, 1, 0], b""), // period 0
        &craft(SlotFormat::B64_LE, &[0, 3, 1, 10, 0, 0, 1, 0], b""), // version 1 (Java)
        &craft(SlotFormat::B64_LE, &[0, 2, 0, 10, 0, 0, 1, 0], b""), // 2 header words
        &craft(SlotFormat::B64_LE, &[0, 9, 0, 10, 0], b""),         // more header words than bytes
    ] {
        assert_eq!(detect(bad), None);
        let e = Profile::parse(bad).unwrap_err();
        assert_eq!(e.offset(), Some(0));
        assert!(
            e.to_string().contains("gperftools CPU profile header"),
            "{e}"
        );
    }
}

#[test]
fn a_profile_cut_short_keeps_the_records_before_the_cut() {
    for layout in SlotFormat::ALL {
        let full = craft(layout, &sample_slots(), TEXT);
        let ws = usize::from(layout.word_size);
        // Cut inside record 2 (after its count and npcs and one PC).
        let cut = (5 + 5 + 3 + 3) * ws;
        let (p, err) = Profile::parse_partial(&full[..cut]).unwrap();
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.total_samples(), 7);
        let e = err.expect("an error");
        assert_eq!(e.record().map(|(i, _)| i), Some(2), "{e}");
        // The PC count is checked against what is left before anything is allocated.
        assert_eq!(e.path_string(), "pcs", "{e}");
        assert_eq!(e.offset(), Some((cut - ws) as u64), "{e}");
        assert!(
            matches!(
                e.kind(),
                rt::ErrorKind::TooLarge {
                    value: 3,
                    limit: 1,
                    ..
                }
            ),
            "{e}"
        );
        // Cut inside record 2's count slot.
        let cut2 = (5 + 5 + 3) * ws + 1;
        let (p, err) = Profile::parse_partial(&full[..cut2]).unwrap();
        assert_eq!(p.records.len(), 2);
        let e = err.expect("an error");
        assert_eq!(e.path_string(), "count", "{e}");
        assert_eq!(e.offset(), Some((cut2 - 1) as u64), "{e}");
        assert!(
            matches!(e.kind(), rt::ErrorKind::UnexpectedEnd { .. }),
            "{e}"
        );
        assert!(Profile::parse(&full[..cut]).is_err());
        // Cut exactly before the trailer: no record is broken, the trailer is missing.
        let cut = (5 + 5 + 3 + 5) * ws;
        let (p, err) = Profile::parse_partial(&full[..cut]).unwrap();
        assert_eq!(p.records.len(), 3);
        let e = err.expect("an error");
        assert_eq!(e.offset(), Some(cut as u64));
        assert!(e.to_string().contains("trailer"), "{e}");
        // Every cut after the header: records before it, an error, never a panic.
        for cut in 5 * ws..full.len() {
            let r = Profile::parse_partial(&full[..cut]);
            let (p, e) = r.unwrap();
            if cut < 21 * ws {
                assert!(e.is_some(), "cut at {cut}");
                assert!(p.records.len() <= 3);
            } else {
                // Inside the text: a complete binary part and a shorter text.
                assert!(e.is_none(), "cut at {cut}");
                assert_eq!(p.map_text, &TEXT[..cut - 21 * ws]);
            }
        }
    }
}

#[test]
fn a_hostile_pc_count_is_an_error_not_an_allocation() {
    let bytes = craft(
        SlotFormat::B64_LE,
        &[0, 3, 0, 10, 0, 1, u64::MAX, 1, 2],
        b"",
    );
    let (p, e) = Profile::parse_partial(&bytes).unwrap();
    assert!(p.records.is_empty());
    let e = e.unwrap();
    assert!(matches!(e.kind(), rt::ErrorKind::TooLarge { .. }), "{e}");
    assert_eq!(e.record().map(|(i, _)| i), Some(0));
}

#[test]
fn values_too_large_for_32_bits_refuse_to_narrow() {
    let p = Profile::parse(&craft(
        SlotFormat::B64_LE,
        &[0, 3, 0, 10, 0, 1, 1, 0x7f00_0000_1000, 0, 1, 0],
        b"",
    ))
    .unwrap();
    let e = p.encode(SlotFormat::B32_LE).unwrap_err();
    assert_eq!(e.record().map(|(i, _)| i), Some(0));
    assert_eq!(e.path_string(), "pcs[0]");
}

#[test]
fn map_text_is_parsed_with_build_substitution_and_unknown_lines_kept() {
    let lines = parse_map_text(TEXT);
    assert_eq!(lines.len(), 5);
    assert_eq!(
        lines[0],
        MapLine::Var {
            name: "build".into(),
            value: "/src/out".into()
        }
    );
    assert_eq!(
        lines[3],
        MapLine::Other("something gperftools did not write".into())
    );
    let maps = resolve_mappings(&lines);
    assert_eq!(maps.len(), 3);
    assert_eq!(
        maps[0],
        Mapping {
            start: 0x400000,
            end: 0x452000,
            perms: "r-xp".into(),
            offset: 0,
            dev: "00:00".into(),
            inode: 1234,
            path: "/src/out/prog".into(),
        }
    );
    assert_eq!(maps[1].path, "");
    assert_eq!(maps[1].dev, "08:01");
    assert_eq!(maps[1].offset, 0x1000);
    assert_eq!(maps[2].path, "/lib/with space.so");
    // The last build= wins for later lines.
    let text = b"build=/a\n1000-2000 r-xp 0 00:00 0 $build/x\nbuild=/b\n3000-4000 r-xp 0 00:00 0 $build/y\n";
    let maps = resolve_mappings(&parse_map_text(text));
    assert_eq!(maps[0].path, "/a/x");
    assert_eq!(maps[1].path, "/b/y");
}

#[test]
fn formatted_mappings_parse_back() {
    let m = Mapping {
        start: 0x55d0_c8a0_0000,
        end: 0x55d0_c8a0_1000,
        perms: "r-xp".into(),
        offset: 0x1000,
        dev: "00:00".into(),
        inode: 325843,
        path: "/usr/bin/prog".into(),
    };
    let line = format_mapping(&m);
    assert_eq!(
        line,
        "55d0c8a00000-55d0c8a01000 r-xp 00001000 00:00 325843      /usr/bin/prog\n"
    );
    assert_eq!(parse_map_text(line.as_bytes()), [MapLine::Mapping(m)]);
}

#[test]
fn save_is_atomic_and_refuses_incomplete_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.prof");
    let bytes = craft(SlotFormat::B32_BE, &sample_slots(), TEXT);
    save_bytes(&path, &bytes).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644, "a new file is not left private");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        save_bytes(&path, &bytes).unwrap();
        assert_eq!(mode(&path), 0o640, "a replaced file keeps its permissions");
    }
    // A cut-short profile is not written over the good one.
    let e = save_bytes(&path, &bytes[..bytes.len() - TEXT.len() - 4]).unwrap_err();
    assert!(e.to_string().contains("was not written"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let p = Profile::parse(&bytes).unwrap();
    save(&p, &path, SlotFormat::B64_LE).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        craft(SlotFormat::B64_LE, &sample_slots(), TEXT)
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left"
    );
}

#[test]
fn damaged_profiles_never_panic_and_errors_say_where() {
    for layout in SlotFormat::ALL {
        let good = craft(layout, &sample_slots(), TEXT);
        let binary_end = 21 * usize::from(layout.word_size);
        for at in 0..binary_end {
            for v in [0x00u8, 0x01, 0x7f, 0xff] {
                let mut bad = good.clone();
                bad[at] = v;
                match Profile::parse_partial(&bad) {
                    Err(e) => assert_eq!(e.offset(), Some(0), "{e}"),
                    Ok((p, err)) => {
                        if let Some(e) = err {
                            assert!(e.offset().is_some(), "{e}");
                            assert!(e.record().is_some(), "{e}");
                        }
                        // Whatever was read encodes (or refuses to narrow) without panic.
                        let _ = p.encode(layout);
                    }
                }
            }
        }
    }
}
