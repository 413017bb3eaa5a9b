//! A bounded, checked cursor over borrowed bytes.

use super::endian::{Endian, StaticEndian};
use super::error::{Error, Result, ResultExt};
use super::values::{Bytes, Str, Tail};

/// A cursor over `&'a [u8]` that knows the absolute file offset of its first byte.
///
/// Every read is checked: reading past the end is an [`Error`] naming the absolute offset,
/// the bytes needed and the bytes available. Nothing here panics or allocates.
#[derive(Clone, Debug)]
pub struct Reader<'a, E: Endian> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    endian: E,
}

impl<'a, E: StaticEndian> Reader<'a, E> {
    /// A reader over `buf`, whose first byte is at absolute offset `base_offset`, in the
    /// compile-time byte order `E`.
    #[inline]
    pub fn new(buf: &'a [u8], base_offset: u64) -> Self {
        Reader::in_order(buf, base_offset, E::default())
    }
}

impl<'a, E: Endian> Reader<'a, E> {
    /// A reader over `buf`, whose first byte is at absolute offset `base_offset`, in byte
    /// order `endian` (a run-time [`Endianness`](super::Endianness) or a compile-time type).
    #[inline]
    pub fn in_order(buf: &'a [u8], base_offset: u64, endian: E) -> Self {
        Reader {
            buf,
            pos: 0,
            base: base_offset,
            endian,
        }
    }

    /// The byte order this reader decodes in.
    #[inline]
    pub fn endian(&self) -> E {
        self.endian
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Bytes left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// True when nothing is left.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
    /// Absolute offset of the reader's first byte.
    #[inline]
    pub fn base_offset(&self) -> u64 {
        self.base
    }
    /// The whole underlying slice (consumed and not).
    #[inline]
    pub fn buf(&self) -> &'a [u8] {
        self.buf
    }

    #[cold]
    fn end_error(&self, needed: u64) -> Error {
        Error::unexpected_end(self.offset(), needed, self.remaining() as u64)
    }

    /// Takes `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.end_error(n as u64));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// Takes `n` bytes, `n` given as a `u64` (a length read from the input).
    #[inline]
    pub fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        if n > self.remaining() as u64 {
            return Err(self.end_error(n));
        }
        self.bytes(n as usize)
    }
    /// Takes a fixed number of bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// Takes everything that is left.
    #[inline]
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }
    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: u64) -> Result<()> {
        self.take(n).map(|_| ())
    }

    /// Takes one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    /// Takes one byte as a signed value.
    #[inline]
    pub fn i8(&mut self) -> Result<i8> {
        Ok(self.u8()? as i8)
    }
    /// Takes 2 bytes as a `u16` in the reader's byte order.
    #[inline]
    pub fn u16(&mut self) -> Result<u16> {
        Ok(self.endian.read_u16(self.array()?))
    }
    /// Takes 2 bytes as a two's complement `i16` in the reader's byte order.
    #[inline]
    pub fn i16(&mut self) -> Result<i16> {
        Ok(self.u16()? as i16)
    }
    /// Takes 4 bytes as a `u32` in the reader's byte order.
    #[inline]
    pub fn u32(&mut self) -> Result<u32> {
        Ok(self.endian.read_u32(self.array()?))
    }
    /// Takes 4 bytes as a two's complement `i32` in the reader's byte order (a build-id
    /// entry's machine pid, -1 for the host kernel).
    #[inline]
    pub fn i32(&mut self) -> Result<i32> {
        Ok(self.u32()? as i32)
    }
    /// Takes 8 bytes as a `u64` in the reader's byte order.
    #[inline]
    pub fn u64(&mut self) -> Result<u64> {
        Ok(self.endian.read_u64(self.array()?))
    }
    /// Takes 8 bytes as a two's complement `i64` in the reader's byte order.
    #[inline]
    pub fn i64(&mut self) -> Result<i64> {
        Ok(self.u64()? as i64)
    }
    /// A `word[size]` of the spec: an unsigned word of `size` (4 or 8) bytes, known only at
    /// run time (the producer's word size).
    #[inline]
    pub fn word(&mut self, size: u64) -> Result<u64> {
        match size {
            4 => self.u32().map(u64::from),
            8 => self.u64(),
            _ => Err(bad_word_size(Some(self.offset()), size)),
        }
    }
    /// Takes a `split[HI, LO]`: an unsigned integer of `hi` bytes, then one of `lo` bytes
    /// (each 1, 2 or 4), the first the most significant part of the value.
    #[inline]
    pub fn split(&mut self, hi: u32, lo: u32) -> Result<u64> {
        let high = self.part(hi)?;
        let low = self.part(lo)?;
        Ok(high << (8 * lo) | low)
    }
    fn part(&mut self, size: u32) -> Result<u64> {
        match size {
            1 => self.u8().map(u64::from),
            2 => self.u16().map(u64::from),
            _ => self.u32().map(u64::from),
        }
    }
    /// Takes 8 bytes as an IEEE 754 double: the bits of a `u64` in the reader's byte
    /// order (EVENT_UPDATE's scale).
    #[inline]
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// A child reader over the next `n` bytes; `self` advances past them.
    #[inline]
    pub fn sub(&mut self, n: u64) -> Result<Reader<'a, E>> {
        let base = self.offset();
        let s = self.take(n)?;
        Ok(Reader::in_order(s, base, self.endian))
    }

    /// Splits off the last `n` bytes as a trailer reader; `self` ends where the trailer starts.
    pub fn split_trailer(&mut self, n: usize) -> Result<Reader<'a, E>> {
        if n > self.remaining() {
            return Err(Error::invalid(
                Some(self.offset()),
                format!("a trailer of {n} bytes at the end"),
                format!("{} bytes left", self.remaining()),
            ));
        }
        let at = self.buf.len() - n;
        let trailer = Reader::in_order(&self.buf[at..], self.base + at as u64, self.endian);
        self.buf = &self.buf[..at];
        Ok(trailer)
    }

    /// `bounded_by`: the structure that started at absolute offset `start` is `n` bytes long.
    /// Returns a reader over the rest of it (from the current position to `start + n`) and
    /// advances `self` to its end.
    pub fn limit_to(&mut self, start: u64, n: u64) -> Result<Reader<'a, E>> {
        let end = start.saturating_add(n);
        if end < self.offset() {
            return Err(Error::invalid(
                Some(start),
                format!("a size of at least {} bytes", self.offset() - start),
                format!("{n}"),
            ));
        }
        self.sub(end - self.offset())
    }

    /// Checks that `count` elements of at least `min_elem_size` bytes (taken as 1 when 0)
    /// can fit in what is left, before anything is allocated; returns the count as `usize`.
    #[inline]
    pub fn check_count(&self, count: u64, min_elem_size: usize) -> Result<usize> {
        let per = min_elem_size.max(1) as u64;
        let limit = self.remaining() as u64 / per;
        if count > limit {
            return Err(Error::too_large(
                Some(self.offset()),
                "element count",
                count,
                limit,
            ));
        }
        Ok(count as usize)
    }

    /// `count` elements decoded by `f` (a `Vec` of non-fixed-size elements). The count is
    /// checked against the input before anything is allocated; errors name the index.
    pub fn read_count<T>(
        &mut self,
        count: u64,
        min_elem_size: usize,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let n = self.check_count(count, min_elem_size)?;
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            v.push(f(self).index(i)?);
        }
        Ok(v)
    }

    /// Elements decoded by `f` until the reader is empty (`[T; ..]`). An element that
    /// consumes nothing is an error, so this cannot loop forever.
    pub fn read_to_end<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        let mut v = Vec::new();
        while !self.is_empty() {
            let before = self.pos;
            let at = self.offset();
            let x = f(self).index(v.len())?;
            if self.pos == before {
                return Err(Error::invalid(
                    Some(at),
                    "an element of at least one byte",
                    "an empty element",
                )
                .in_index(v.len()));
            }
            v.push(x);
        }
        Ok(v)
    }

    /// `big_endian_if`: decodes with `f` in byte order `endian` from where this reader is,
    /// then continues after what `f` consumed (a structure that states its own byte order).
    pub fn with_endian<E2: Endian, T>(
        &mut self,
        endian: E2,
        f: impl FnOnce(&mut Reader<'a, E2>) -> Result<T>,
    ) -> Result<T> {
        let mut other = Reader::<'a, E2> {
            buf: self.buf,
            pos: self.pos,
            base: self.base,
            endian,
        };
        let out = f(&mut other)?;
        self.pos = other.pos;
        Ok(out)
    }

    /// `within n`: decodes with `f` inside exactly the next `n` bytes; bytes left over are an
    /// error.
    pub fn within<T>(&mut self, n: u64, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let mut sub = self.sub(n)?;
        let v = f(&mut sub)?;
        sub.expect_end()?;
        Ok(v)
    }

    /// Fails unless everything was consumed (for `within`).
    pub fn expect_end(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(Error::invalid(
                Some(self.offset()),
                "the end of the field's region",
                format!("{} more bytes", self.remaining()),
            ));
        }
        Ok(())
    }

    /// Raw bytes field of `n` bytes.
    #[inline]
    pub fn bytes_field(&mut self, n: u64) -> Result<Bytes<'a>> {
        self.take(n).map(Bytes::from)
    }
    /// Raw bytes to the end.
    #[inline]
    pub fn rest_bytes(&mut self) -> Bytes<'a> {
        Bytes::from(self.rest())
    }
    /// A text region of `n` bytes (`str[n]`).
    #[inline]
    pub fn str_field(&mut self, n: u64) -> Result<Str<'a>> {
        self.take(n).map(Str::from_raw)
    }
    /// A text region to the end (`str[..]`).
    #[inline]
    pub fn rest_str(&mut self) -> Str<'a> {
        Str::from_raw(self.rest())
    }
    /// NUL-terminated text; the region includes the NUL.
    pub fn cstr(&mut self) -> Result<Str<'a>> {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => self.bytes(i + 1).map(Str::from_raw),
            None => Err(Error::invalid(
                Some(self.offset()),
                "a NUL-terminated string",
                format!("no NUL in the {} bytes left", rest.len()),
            )),
        }
    }

    /// `pad_to` of an unbounded structure: skips the zero padding that brings the structure
    /// (which started at absolute `start`) to a multiple of `align`; non-zero padding is an error.
    pub fn zero_padding(&mut self, start: u64, align: u64) -> Result<()> {
        let len = self.offset() - start;
        let pad = super::expr::align(len, align) - len;
        let at = self.offset();
        let b = self.take(pad)?;
        if b.iter().any(|&x| x != 0) {
            return Err(Error::invalid(
                Some(at),
                "zero padding",
                format!("{b:02x?}"),
            ));
        }
        Ok(())
    }

    /// The tail of a bounded structure that started at absolute `start` and pads to `pad_to`
    /// (1 when none): `None` when what is left is empty or exactly the canonical zero padding,
    /// else `Some(the bytes)` (also `Some(empty)` when the canonical padding is missing).
    pub fn tail(&mut self, start: u64, pad_to: u64) -> Tail<'a> {
        let len = self.offset() - start;
        let pad = (super::expr::align(len, pad_to) - len) as usize;
        let rest = self.rest();
        if rest.len() == pad && rest.iter().all(|&b| b == 0) {
            None
        } else {
            Some(Bytes::from(rest))
        }
    }
}

/// A `word[size]` whose size evaluated to something other than 4 or 8.
#[cold]
pub(crate) fn bad_word_size(offset: Option<u64>, size: u64) -> Error {
    Error::invalid(offset, "a word size of 4 or 8 bytes", size.to_string())
}
