//! C's `strtoull`/`strtoll` with base 0, as libtraceevent reads the numbers of a format:
//! `0x` hex, a leading `0` octal, else decimal; the text after the digits (`1UL`'s `UL`)
//! ignored; out-of-range values saturated; a name (`HRTIMER_MODE_ABS`) reads as 0.

/// The magnitude of the number `s` starts with, whether it overflowed, and its sign.
fn parse(s: &str) -> (u64, bool, bool) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        negative = b[i] == b'-';
        i += 1;
    }
    let mut base = 10;
    if b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            base = 16;
            i += 2;
        } else {
            base = 8;
        }
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(base)) {
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    (v, overflow, negative)
}

/// `strtoull(s, NULL, 0)`: a `-` negates modulo 2^64; overflow gives `u64::MAX`.
pub(crate) fn strtoull(s: &str) -> u64 {
    let (v, overflow, negative) = parse(s);
    if overflow {
        u64::MAX
    } else if negative {
        v.wrapping_neg()
    } else {
        v
    }
}

/// `strtoll(s, NULL, 0)`: saturates at `i64::MIN`/`i64::MAX`.
pub(crate) fn strtoll(s: &str) -> i64 {
    let (v, overflow, negative) = parse(s);
    if negative {
        if overflow || v > 1 << 63 {
            i64::MIN
        } else {
            (v as i64).wrapping_neg()
        }
    } else if overflow || v > i64::MAX as u64 {
        i64::MAX
    } else {
        v as i64
    }
}

/// A `__print_flags`/`__print_symbolic` value as both libtraceevent's `eval_flag` and
/// perf's read it: a number when the text starts with a digit, one of the softirq and
/// hrtimer names they know, else `None` (each has its own default for that).
pub(crate) fn flag_value(value: &str) -> Option<i64> {
    if value.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return Some(strtoull(value) as i64);
    }
    const KNOWN: &[(&str, i64)] = &[
        ("HI_SOFTIRQ", 0),
        ("TIMER_SOFTIRQ", 1),
        ("NET_TX_SOFTIRQ", 2),
        ("NET_RX_SOFTIRQ", 3),
        ("BLOCK_SOFTIRQ", 4),
        ("IRQ_POLL_SOFTIRQ", 5),
        ("TASKLET_SOFTIRQ", 6),
        ("SCHED_SOFTIRQ", 7),
        ("HRTIMER_SOFTIRQ", 8),
        ("RCU_SOFTIRQ", 9),
        ("HRTIMER_NORESTART", 0),
        ("HRTIMER_RESTART", 1),
    ];
    KNOWN.iter().find(|(n, _)| *n == value).map(|&(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_c() {
        assert_eq!(strtoull("0x1f"), 31);
        assert_eq!(strtoull("010"), 8);
        assert_eq!(strtoull("1UL"), 1);
        assert_eq!(strtoull("HRTIMER_MODE_ABS"), 0);
        assert_eq!(strtoull("-1"), u64::MAX);
        assert_eq!(strtoull("0xffffffffffffffffff"), u64::MAX);
        assert_eq!(strtoull("0x"), 0);
        assert_eq!(strtoll("0xffffffffffffffff"), i64::MAX);
        assert_eq!(strtoll("-9223372036854775808"), i64::MIN);
        assert_eq!(strtoll("-5"), -5);
    }
}
