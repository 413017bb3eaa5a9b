//! printf's integer and string padding, into a byte buffer without `fmt` (the columns of
//! every line perf script prints).

/// `%Ns`: `s` right-aligned in `width` bytes (C pads by bytes, not characters).
pub fn pad_left(buf: &mut Vec<u8>, s: &[u8], width: usize) {
    buf.resize(buf.len() + width.saturating_sub(s.len()), b' ');
    buf.extend_from_slice(s);
}

/// `%Nd`: `v` right-aligned in `width`.
pub fn dec(buf: &mut Vec<u8>, v: impl itoa::Integer, width: usize) {
    let mut n = itoa::Buffer::new();
    pad_left(buf, n.format(v).as_bytes(), width);
}

/// `%-Nd`: `v` left-aligned in `width`.
pub fn dec_left(buf: &mut Vec<u8>, v: impl itoa::Integer, width: usize) {
    let mut n = itoa::Buffer::new();
    let s = n.format(v).as_bytes();
    buf.extend_from_slice(s);
    buf.resize(buf.len() + width.saturating_sub(s.len()), b' ');
}

/// `%0Nd` of a non-negative `v`.
pub fn dec_zero(buf: &mut Vec<u8>, v: impl itoa::Integer, width: usize) {
    let mut n = itoa::Buffer::new();
    let s = n.format(v).as_bytes();
    buf.resize(buf.len() + width.saturating_sub(s.len()), b'0');
    buf.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_as_printf_makes_them() {
        let mut b = vec![];
        pad_left(&mut b, b"sleep", 8);
        dec(&mut b, -12, 5);
        dec_left(&mut b, 7, 3);
        dec_zero(&mut b, 5u32, 3);
        dec(&mut b, 123456, 3);
        assert_eq!(String::from_utf8(b).unwrap(), "   sleep  -127  005123456");
    }
}
