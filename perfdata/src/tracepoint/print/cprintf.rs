//! One C printf conversion (glibc's rules), as libtraceevent hands the conversions of a
//! `print fmt` to `trace_seq_printf`: integers (`%d %u %x %X %o` with flags, width,
//! precision and length modifiers) and strings (`%s` with width and precision).

/// A parsed conversion: `%[flags][width][.precision][length]conv`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Spec {
    pub minus: bool,
    pub zero: bool,
    pub hash: bool,
    pub plus: bool,
    pub space: bool,
    pub width: Amount,
    pub precision: Option<Amount>,
    /// Bits the conversion reads: 8 (`hh`), 16 (`h`), 32 (none) or 64 (`l`, `ll`, `L`,
    /// `z`…).
    pub bits: u32,
    pub conv: u8,
}

/// A width or precision: absent, written, or taken from the argument list (`*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Amount {
    #[default]
    None,
    Fixed(usize),
    Star,
}

/// Parses `spec` (starting at `%`); `None` for text glibc would not read as one
/// conversion.
pub(crate) fn parse(spec: &[u8]) -> Option<Spec> {
    let mut s = Spec {
        bits: 32,
        ..Spec::default()
    };
    let mut i = 1;
    while let Some(&c) = spec.get(i) {
        match c {
            b'-' => s.minus = true,
            b'0' => s.zero = true,
            b'#' => s.hash = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            _ => break,
        }
        i += 1;
    }
    let digits = |i: &mut usize| {
        let mut n: usize = 0;
        while let Some(d) = spec.get(*i).filter(|c| c.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
            *i += 1;
        }
        n
    };
    if spec.get(i) == Some(&b'*') {
        s.width = Amount::Star;
        i += 1;
    } else if spec.get(i).is_some_and(u8::is_ascii_digit) {
        s.width = Amount::Fixed(digits(&mut i));
    }
    if spec.get(i) == Some(&b'.') {
        i += 1;
        if spec.get(i) == Some(&b'*') {
            s.precision = Some(Amount::Star);
            i += 1;
        } else {
            s.precision = Some(Amount::Fixed(digits(&mut i)));
        }
    }
    match spec.get(i) {
        Some(b'h') if spec.get(i + 1) == Some(&b'h') => {
            s.bits = 8;
            i += 2;
        }
        Some(b'h') => {
            s.bits = 16;
            i += 1;
        }
        Some(b'l') if spec.get(i + 1) == Some(&b'l') => {
            s.bits = 64;
            i += 2;
        }
        Some(b'l' | b'L' | b'q' | b'z' | b'Z' | b'j' | b't') => {
            s.bits = 64;
            i += 1;
        }
        _ => {}
    }
    s.conv = *spec.get(i)?;
    (i + 1 == spec.len()).then_some(s)
}

/// Resolves `*` from `star` (C: a negative width means `-` and its magnitude; a
/// negative precision, none).
fn amounts(s: &Spec, star: Option<i32>) -> (bool, usize, Option<usize>) {
    let mut minus = s.minus;
    let width = match s.width {
        Amount::None => 0,
        Amount::Fixed(w) => w,
        Amount::Star => {
            let w = star.unwrap_or(0);
            minus |= w < 0;
            w.unsigned_abs() as usize
        }
    };
    let precision = match s.precision {
        None => None,
        Some(Amount::Fixed(p)) => Some(p),
        Some(Amount::None) => Some(0),
        Some(Amount::Star) => usize::try_from(star.unwrap_or(0)).ok(),
    };
    (minus, width, precision)
}

fn pad(out: &mut Vec<u8>, n: usize, c: u8) {
    out.extend(std::iter::repeat_n(c, n));
}

/// `%s` of `text` (bytes, up to the caller's NUL).
pub(crate) fn string(out: &mut Vec<u8>, s: &Spec, star: Option<i32>, text: &[u8]) {
    let (minus, width, precision) = amounts(s, star);
    let text = match precision {
        Some(p) if p < text.len() => &text[..p],
        _ => text,
    };
    let fill = width.saturating_sub(text.len());
    if !minus {
        pad(out, fill, b' ');
    }
    out.extend_from_slice(text);
    if minus {
        pad(out, fill, b' ');
    }
}

/// An integer conversion of the argument register `reg` (the 64 bits the callee sees;
/// the conversion reads `s.bits` of them).
pub(crate) fn integer(out: &mut Vec<u8>, s: &Spec, star: Option<i32>, reg: u64) {
    let (minus, width, precision) = amounts(s, star);
    let mask = if s.bits == 64 {
        u64::MAX
    } else {
        (1u64 << s.bits) - 1
    };
    let unsigned = reg & mask;
    let signed = matches!(s.conv, b'd' | b'i');
    let (negative, magnitude) = if signed {
        let shift = 64 - s.bits;
        let v = ((unsigned << shift) as i64) >> shift;
        (v < 0, v.unsigned_abs())
    } else {
        (false, unsigned)
    };
    let mut digits = match s.conv {
        b'x' => format!("{magnitude:x}"),
        b'X' => format!("{magnitude:X}"),
        b'o' => format!("{magnitude:o}"),
        _ => magnitude.to_string(),
    }
    .into_bytes();
    if precision == Some(0) && magnitude == 0 {
        digits.clear();
    }
    if let Some(p) = precision {
        if digits.len() < p {
            let mut z = vec![b'0'; p - digits.len()];
            z.extend_from_slice(&digits);
            digits = z;
        }
    }
    if s.hash && s.conv == b'o' && digits.first() != Some(&b'0') {
        digits.insert(0, b'0');
    }
    let prefix: &[u8] = if negative {
        b"-"
    } else if signed && s.plus {
        b"+"
    } else if signed && s.space {
        b" "
    } else if s.hash && magnitude != 0 && s.conv == b'x' {
        b"0x"
    } else if s.hash && magnitude != 0 && s.conv == b'X' {
        b"0X"
    } else {
        b""
    };
    let len = prefix.len() + digits.len();
    let fill = width.saturating_sub(len);
    if minus {
        out.extend_from_slice(prefix);
        out.extend_from_slice(&digits);
        pad(out, fill, b' ');
    } else if s.zero && precision.is_none() {
        out.extend_from_slice(prefix);
        pad(out, fill, b'0');
        out.extend_from_slice(&digits);
    } else {
        pad(out, fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(&digits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(spec: &str, reg: u64) -> String {
        let mut out = vec![];
        integer(&mut out, &parse(spec.as_bytes()).unwrap(), None, reg);
        String::from_utf8(out).unwrap()
    }

    fn st(spec: &str, star: Option<i32>, text: &str) -> String {
        let mut out = vec![];
        string(
            &mut out,
            &parse(spec.as_bytes()).unwrap(),
            star,
            text.as_bytes(),
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_as_glibc_prints_them() {
        assert_eq!(int("%d", 0xffff_ffff), "-1");
        assert_eq!(int("%u", 0xffff_ffff), "4294967295");
        assert_eq!(int("%lld", u64::MAX), "-1");
        assert_eq!(int("%llu", u64::MAX), "18446744073709551615");
        assert_eq!(int("%hhu", 0x1ff), "255");
        assert_eq!(int("%hd", 0xffff), "-1");
        assert_eq!(int("%08lx", 0xbeef), "0000beef");
        assert_eq!(int("%#x", 0x1f), "0x1f");
        assert_eq!(int("%#x", 0), "0");
        assert_eq!(int("%#o", 8), "010");
        assert_eq!(int("%-5d", 42), "42   ");
        assert_eq!(int("%5d", 0xffff_fffe), "   -2");
        assert_eq!(int("%05d", 0xffff_fffe), "-0002");
        assert_eq!(int("%.3d", 7), "007");
        assert_eq!(int("%.0d", 0), "");
        assert_eq!(int("%03.1d", 5), "  5");
        assert_eq!(int("%X", 0xab), "AB");
        assert_eq!(int("%zu", 7), "7");
    }

    #[test]
    fn strings_with_width_and_precision() {
        assert_eq!(st("%s", None, "abc"), "abc");
        assert_eq!(st("%-5s", None, "ab"), "ab   ");
        assert_eq!(st("%5s", None, "ab"), "   ab");
        assert_eq!(st("%.*s", Some(2), "abcd"), "ab");
        assert_eq!(st("%*s", Some(-4), "a"), "a   ");
        assert_eq!(st("%.*s", Some(-1), "abc"), "abc");
    }

    #[test]
    fn odd_text_is_not_a_conversion() {
        assert!(parse(b"%l5d").is_none());
        assert!(parse(b"%").is_none());
    }
}
