//! Whole formats evaluated against hand-made payloads: the tricky corners of
//! libtraceevent's output, with what perf 6.1 prints for them.

use crate::rt::Endianness;
use crate::tracepoint::{Format, Formats, KernelSymbols, NoKernelSymbols, UnknownHelpers};
use std::borrow::Cow;

/// A format file of event id 1 with the usual common fields, then `fields`
/// (`decl`, offset, size, signed) and the print format.
fn format_text(fields: &[(&str, usize, usize, bool)], print: &str) -> String {
    let mut s = String::from(
        "name: test\nID: 1\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
         \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n",
    );
    for (decl, offset, size, signed) in fields {
        s += &format!(
            "\tfield:{decl};\toffset:{offset};\tsize:{size};\tsigned:{};\n",
            u8::from(*signed)
        );
    }
    s + &format!("\nprint fmt: {print}\n")
}

fn formats(fields: &[(&str, usize, usize, bool)], print: &str) -> Formats {
    let f = Format::parse("test", &format_text(fields, print), 8).expect("an ID");
    Formats::from_formats([f], Endianness::Little, 8)
}

/// A payload of `len` bytes with common_type 1 and `parts` written at their offsets.
fn payload(len: usize, parts: &[(usize, &[u8])]) -> Vec<u8> {
    let mut raw = vec![0u8; len];
    raw[0] = 1;
    for (at, bytes) in parts {
        raw[*at..*at + bytes.len()].copy_from_slice(bytes);
    }
    raw
}

fn text(f: &Formats, raw: &[u8], kernel: &dyn KernelSymbols) -> String {
    let mut out = String::new();
    f.print_trace(raw, kernel, &mut out).expect("prints");
    out
}

struct Syms;

impl KernelSymbols for Syms {
    fn resolve(&self, addr: u64) -> Option<(Cow<'_, str>, u64)> {
        (0xffff_ffff_8100_0000..0xffff_ffff_8100_1000)
            .contains(&addr)
            .then(|| ("do_thing".into(), addr - 0xffff_ffff_8100_0000))
    }
}

/// Linux 6.18's `sched_switch` print format.
const SCHED_SWITCH: &str = r#""prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio"#;

#[test]
fn sched_switch_states() {
    let f = formats(
        &[
            ("char prev_comm[16]", 8, 16, false),
            ("pid_t prev_pid", 24, 4, true),
            ("int prev_prio", 28, 4, true),
            ("long prev_state", 32, 8, true),
            ("char next_comm[16]", 40, 16, false),
            ("pid_t next_pid", 56, 4, true),
            ("int next_prio", 60, 4, true),
        ],
        SCHED_SWITCH,
    );
    let with_state = |state: u64| {
        let raw = payload(
            64,
            &[
                (8, b"perf\0"),
                (24, &7i32.to_le_bytes()),
                (28, &120i32.to_le_bytes()),
                (32, &state.to_le_bytes()),
                (40, b"swapper/0\0"),
                (60, &120i32.to_le_bytes()),
            ],
        );
        text(&f, &raw, &NoKernelSymbols)
    };
    assert_eq!(
        with_state(0),
        "prev_comm=perf prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120"
    );
    assert!(with_state(1).contains("prev_state=S ==>"));
    assert!(with_state(3).contains("prev_state=S|D ==>"));
    assert!(with_state(0x80).contains("prev_state=I ==>"));
    assert!(with_state(0x100).contains("prev_state=R+ ==>"));
    assert!(with_state(0x101).contains("prev_state=S+ ==>"));
}

#[test]
fn flags_symbols_and_unknown_values() {
    let f = formats(
        &[
            ("unsigned long flags", 8, 8, false),
            ("int mode", 16, 4, true),
        ],
        r#""flags=%s mode=%s none=%s", __print_flags(REC->flags, "|", { 0x1, "A" }, { 0x2, "B" }, { (1UL << 4), "C" }), __print_symbolic(REC->mode, { HI_SOFTIRQ, "HI" }, { 3, "THREE" }, { UNKNOWN_ENUM, "ENUM" }), __print_flags(REC->mode, ",", { 0x1, "X" })"#,
    );
    let raw = |flags: u64, mode: i32| {
        payload(20, &[(8, &flags.to_le_bytes()), (16, &mode.to_le_bytes())])
    };
    // Known bits by name, the rest as hex; an unresolved enum name reads as -1 and
    // matches nothing, a known softirq name reads as its number.
    assert_eq!(
        text(&f, &raw(0x1b, 0), &NoKernelSymbols),
        "flags=A|B|C|0x8 mode=HI none="
    );
    assert_eq!(
        text(&f, &raw(0, 3), &NoKernelSymbols),
        "flags= mode=THREE none=X,0x2"
    );
    assert_eq!(
        text(&f, &raw(0x40, 5), &NoKernelSymbols),
        "flags=0x40 mode=0x5 none=X,0x4"
    );
}

#[test]
fn ternaries_casts_and_signs() {
    let f = formats(
        &[("long v", 8, 8, true), ("unsigned int u", 16, 4, false)],
        r#""a=%d b=%ld c=%u d=%s e=%d f=%lx g=%d", (int)REC->v, (int)REC->v, REC->v, REC->u > 5 ? "big" : "small", (u8)REC->u, REC->v >> 60, REC->u - 10 < 0"#,
    );
    let raw = payload(
        20,
        &[(8, &(-1i64).to_le_bytes()), (16, &7u32.to_le_bytes())],
    );
    // `(int)` masks to 32 bits without sign-extending: %ld prints it positive.
    // Comparisons are unsigned: `7 - 10 < 0` is false.
    assert_eq!(
        text(&f, &raw, &NoKernelSymbols),
        "a=-1 b=4294967295 c=4294967295 d=big e=7 f=f g=0"
    );
}

#[test]
fn symbols_pointers_and_c_conversion() {
    let f = formats(
        &[
            ("unsigned long ip", 8, 8, false),
            ("void * p", 16, 8, false),
        ],
        r#""%pS %ps %pS %p %p %c%d", (void *)REC->ip, (void *)REC->ip, (void *)(REC->ip + 0x10000), REC->p, REC->ip, REC->ip"#,
    );
    let raw = payload(24, &[(8, &0xffff_ffff_8100_0042u64.to_le_bytes())]);
    // `%c` prints `>c<` and takes no argument: `%d` prints the argument meant for it.
    assert_eq!(
        text(&f, &raw, &Syms),
        "do_thing+0x42 do_thing 0xffffffff81010042 (nil) 0xffffffff81000042 >c<-2130706366"
    );
}

#[test]
fn strings_arrays_hex_and_bitmasks() {
    let f = formats(
        &[
            ("__data_loc char[] name", 8, 4, false),
            ("__data_loc u8[] buf", 12, 4, false),
            ("__data_loc unsigned long[] mask", 16, 4, false),
            ("u32 vals[3]", 20, 12, false),
            ("const char * str", 32, 8, false),
        ],
        r#""name=%s buf=%s hex=%s arr=%s mask=%s v1=%u str=%s len=%d %-6s|", __get_str(name), __print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), __print_hex_str(__get_dynamic_array(buf), 2), __print_array(REC->vals, 3, 4), __get_bitmask(mask), REC->vals[1], REC->str, __get_dynamic_array_len(buf), __get_str(name)"#,
    );
    let loc = |off: u32, len: u32| (off | len << 16).to_le_bytes();
    let raw = payload(
        56,
        &[
            (8, &loc(40, 4)),
            (12, &loc(44, 3)),
            (16, &loc(48, 8)),
            (20, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]),
            (32, &0xdeadu64.to_le_bytes()),
            (40, b"abc\0"),
            (44, &[0xde, 0xad, 0x01]),
            (48, &[0x01, 0, 0, 0, 0x02, 0, 0, 0]),
        ],
    );
    let printk = Formats::from_formats(f.iter().cloned(), Endianness::Little, 8)
        .with_printk_formats("0xdead : \"from printk\\n\"\n");
    assert_eq!(
        text(&f, &raw, &NoKernelSymbols),
        "name=abc buf=de ad 01 hex=dead arr=1 2 3 mask=00000002,00000001 v1=2 str=dead len=3 abc   |"
    );
    assert!(text(&printk, &raw, &NoKernelSymbols).contains(" str=from printk "));
}

#[test]
fn network_addresses() {
    let f = formats(
        &[
            ("__u8 saddr[4]", 8, 4, false),
            ("__u8 daddr_v6[16]", 12, 16, false),
            ("__u8 mac[6]", 28, 6, false),
            ("__u8 sa[28]", 36, 28, false),
            ("__u8 uuid[16]", 64, 16, false),
        ],
        r#""%pI4 %pI6c %pI6 %pM %pISpc %pU", REC->saddr, REC->daddr_v6, REC->daddr_v6, REC->mac, REC->sa, REC->uuid"#,
    );
    let mut v6 = [0u8; 16];
    v6[0] = 0x20;
    v6[1] = 0x01;
    v6[2] = 0x0d;
    v6[3] = 0xb8;
    v6[15] = 1;
    let mut sa = [0u8; 28];
    sa[0..2].copy_from_slice(&2u16.to_ne_bytes());
    sa[2..4].copy_from_slice(&8080u16.to_be_bytes());
    sa[4..8].copy_from_slice(&[10, 0, 0, 1]);
    let raw = payload(
        80,
        &[
            (8, &[127, 0, 0, 1]),
            (12, &v6),
            (28, &[0, 0x1b, 0x21, 0x3c, 0x4d, 0x5e]),
            (36, &sa),
            (64, &(0u8..16).collect::<Vec<_>>()),
        ],
    );
    assert_eq!(
        text(&f, &raw, &NoKernelSymbols),
        "127.0.0.1 2001:db8::1 2001:0db8:0000:0000:0000:0000:0000:0001 00:1b:21:3c:4d:5e \
         10.0.0.1:8080 00010203-0405-0607-0809-0a0b0c0d0e0f"
    );
}

#[test]
fn unknown_helper_prints_the_fields() {
    let f = formats(
        &[
            ("int a", 8, 4, true),
            ("char name[8]", 12, 8, false),
            ("u8 bin[2]", 20, 2, false),
            ("long l", 24, 8, true),
            ("void * p", 32, 8, false),
        ],
        r#""a=%d n=%d", REC->a, sizeof(int)"#,
    );
    let raw = payload(
        40,
        &[
            (8, &(-3i32).to_le_bytes()),
            (12, b"ab\0"),
            (20, &[1, 2]),
            (24, &(-1i64).to_le_bytes()),
            (32, &0x10u64.to_le_bytes()),
        ],
    );
    assert_eq!(
        text(&f, &raw, &NoKernelSymbols),
        "[FAILED TO PARSE] a=-3 name=ab bin=ARRAY[01, 02] l=-1 p=0x10"
    );
    // As in libtraceevent, a text field once shown as an array stays an array.
    let later = payload(40, &[(12, b"cd\0"), (20, b"ok")]);
    assert_eq!(
        text(&f, &later, &NoKernelSymbols),
        "[FAILED TO PARSE] a=0 name=cd bin=ARRAY[6f, 6b] l=0 p=0x0"
    );
    assert_eq!(f.unparsed().count(), 1);
    let mut helpers = UnknownHelpers::default();
    let format = f.iter().next().unwrap();
    assert_eq!(helpers.first_use(format), Some("sizeof"));
    assert_eq!(helpers.first_use(format), None);
}

#[test]
fn bad_payloads_are_errors_not_panics() {
    let f = formats(
        &[
            ("__data_loc char[] name", 8, 4, false),
            ("u32 n", 12, 4, false),
        ],
        r#""%s %*s %s", __get_str(name), REC->n, "x", __print_hex(REC->n, REC->n)"#,
    );
    let mut out = String::new();
    // Too short for the field; a locator past the end; a huge `*` width; a hex dump
    // longer than the payload.
    assert!(f
        .print_trace(&payload(10, &[]), &NoKernelSymbols, &mut out)
        .is_err());
    let far = payload(16, &[(8, &0xfff0u32.to_le_bytes())]);
    assert!(f.print_trace(&far, &NoKernelSymbols, &mut out).is_err());
    let wide = payload(
        20,
        &[
            (8, &16u32.to_le_bytes()),
            (12, &0x7fff_ffffu32.to_le_bytes()),
        ],
    );
    assert!(f.print_trace(&wide, &NoKernelSymbols, &mut out).is_err());
    let hex = payload(
        20,
        &[(8, &16u32.to_le_bytes()), (12, &1000u32.to_le_bytes())],
    );
    assert!(f.print_trace(&hex, &NoKernelSymbols, &mut out).is_err());
    assert!(out.is_empty());
    assert!(f
        .print_trace(&[2, 0, 0, 0], &NoKernelSymbols, &mut out)
        .is_err());
    assert!(f.print_trace(&[1], &NoKernelSymbols, &mut out).is_err());
}

#[test]
fn bprint_formats_each_record_by_its_printk_format() {
    let text = "name: bprint\nID: 6\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
        \tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;\n\n\
        print fmt: \"%ps: %s\", (void *)REC->ip, REC->fmt\n";
    let f = Format::parse("ftrace", text, 8).unwrap();
    let formats = Formats::from_formats([f], Endianness::Little, 8)
        .with_printk_formats("0xbeef : \"hello %d %lx %s\\n\"\n");
    let mut raw = payload(
        24,
        &[
            (0, &6u16.to_le_bytes()),
            (8, &0xffff_ffff_8100_0010u64.to_le_bytes()),
            (16, &0xbeefu64.to_le_bytes()),
        ],
    );
    // The arguments packed as the kernel's vbin_printf packs them (8-byte values
    // aligned to 4 only).
    raw.extend_from_slice(&(-42i32).to_le_bytes());
    raw.extend_from_slice(&0xabcdu64.to_le_bytes());
    raw.extend_from_slice(b"world\0");
    assert_eq!(text_of(&formats, &raw), "do_thing: hello -42 abcd world");
    // A format address the tracing data does not know.
    raw[16] = 0xee;
    assert_eq!(
        text_of(&formats, &raw),
        "do_thing: (NO FORMAT FOUND at beee)\n"
    );
}

fn text_of(f: &Formats, raw: &[u8]) -> String {
    text(f, raw, &Syms)
}
