//! The helpers that reproduce C library and perf formatting.

use super::clock::{ctime, LocalTime};
use super::*;

#[test]
fn strtoul_reads_as_c_does() {
    assert_eq!(strtoul(b"12,3"), (12, 2));
    assert_eq!(strtoul(b"0x1f-"), (31, 4));
    assert_eq!(strtoul(b"010"), (8, 3));
    assert_eq!(strtoul(b"0x"), (0, 1));
    assert_eq!(strtoul(b" +7"), (7, 3));
    assert_eq!(strtoul(b"-1"), (u64::MAX, 2));
    assert_eq!(strtoul(b"x"), (0, 0));
    assert_eq!(strtoul(b"99999999999999999999999"), (u64::MAX, 23));
}

#[test]
fn cpu_lists_parse_and_print_as_perf() {
    assert_eq!(cpu_map_new(b"0-3,8"), Some(vec![(0, 3), (8, 8)]));
    assert_eq!(cpu_map_new(b"4,0-1,2"), Some(vec![(0, 2), (4, 4)]));
    assert_eq!(cpu_map_new(b"0x10"), Some(vec![(16, 16)]));
    assert_eq!(cpu_map_new(b""), Some(vec![(-1, -1)]));
    assert_eq!(cpu_map_new(b"0-2147483646"), Some(vec![(0, 2_147_483_646)]));
    // Duplicates, reversed ranges, junk and CPUs from INT_MAX on are errors.
    assert_eq!(cpu_map_new(b"1,1"), None);
    assert_eq!(cpu_map_new(b"0-4,3"), None);
    assert_eq!(cpu_map_new(b"3-1"), None);
    assert_eq!(cpu_map_new(b"a"), None);
    assert_eq!(cpu_map_new(b"1;2"), None);
    assert_eq!(cpu_map_new(b"2147483647"), None);
    assert_eq!(cpu_map_text(&[(0, 3), (8, 8)]), "0-3,8");
    assert_eq!(cpu_map_text(&[(0, 0), (2, 2), (4, 5)]), "0,2,4-5");
    assert_eq!(cpu_map_text(&[(-1, -1)]), "-1");
}

#[test]
fn bitmaps_and_units_print_as_perf() {
    let words = [
        0x00ff_ffffu64 | 0xffff_ff00_0000_0000,
        u64::MAX,
        u64::MAX,
        0xff,
    ];
    // Bits 0-23, 40-199.
    assert_eq!(bitmap_text(&words, 200), "0-23,40-199");
    assert_eq!(bitmap_weight(&words, 200), 24 + 160);
    assert_eq!(bitmap_text(&words, 30), "0-23");
    assert_eq!(bitmap_weight(&words, 30), 24);
    // perf's buffer holds 99 characters.
    let every_other = [0x5555_5555_5555_5555u64; 4];
    assert_eq!(bitmap_text(&every_other, 256).len(), 99);
    assert_eq!(unit_number(24 << 30), "24G");
    assert_eq!(unit_number(2048), "2K");
    // Divided only while more than twice the unit is left.
    assert_eq!(unit_number(1536), "1536B");
    assert_eq!(unit_number(5 << 40), "5120G");
}

#[test]
fn utc_dates_and_ctime_layout() {
    let t = LocalTime::utc(1_795_914_132);
    assert_eq!(
        (t.year, t.month, t.day, t.hour, t.minute, t.second, t.weekday),
        (2026, 11, 29, 1, 2, 12, 0)
    );
    let t = LocalTime::utc(-1);
    assert_eq!((t.year, t.month, t.day, t.weekday), (1969, 12, 31, 3));
    // Whatever the local zone, the layout is asctime's: 24 characters and a newline,
    // the day of the month padded with a space.
    let text = ctime(1_795_914_132);
    assert_eq!(text.len(), 25);
    assert_eq!(text[24], b'\n');
}

#[test]
fn attr_fields_print_as_perf_event_attr_fprintf() {
    let mut a = Attr {
        type_: AttrType::SOFTWARE,
        size: 128,
        sample_period_or_freq: 4000,
        sample_type: SampleType(SampleType::IP.0 | SampleType::TID.0 | SampleType::WEIGHT.0),
        read_format: ReadFormat(ReadFormat::ID.0 | ReadFormat::LOST.0),
        ..Attr::default()
    };
    a.attr_flags.set_disabled(true);
    a.attr_flags.0 |= 3 << 15; // precise_ip
    a.clockid = Some(crate::generated::perf_data::PosixClock(u32::MAX));
    let text = String::from_utf8(AttrText::of(&a)).unwrap();
    assert_eq!(
        text,
        ", type = 1, size = 128, { sample_period, sample_freq } = 4000, \
         sample_type = IP|TID|WEIGHT, read_format = ID|LOST, disabled = 1, \
         precise_ip = 3, clockid = -1"
    );
    // TRANSACTION has no name: perf prints what its buffer held before.
    a.sample_type = SampleType(SampleType::TRANSACTION.0);
    let text = String::from_utf8(AttrText::of(&a)).unwrap();
    assert!(text.contains("sample_type = 4000,"), "{text}");
}
