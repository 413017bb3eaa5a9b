//! Appending bytes in a chosen byte order.

use super::endian::{Endian, StaticEndian};
use super::error::{Error, Result};
use super::values::{Str, Tail};

/// Appends to a `Vec<u8>` in byte order `E` (a compile-time type or a run-time
/// [`Endianness`](super::Endianness)).
#[derive(Clone, Debug, Default)]
pub struct Writer<E: Endian> {
    buf: Vec<u8>,
    endian: E,
}

impl<E: StaticEndian> Writer<E> {
    /// An empty writer in the compile-time byte order `E`.
    pub fn new() -> Self {
        Self::in_order(E::default())
    }
    /// An empty writer in byte order `E` with room for `n` bytes (a record's or a
    /// section's known size, so that encoding does not reallocate).
    pub fn with_capacity(n: usize) -> Self {
        Self::from_vec_in(Vec::with_capacity(n), E::default())
    }
    /// Continues writing after the bytes already in `buf`.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self::from_vec_in(buf, E::default())
    }
}

impl<E: Endian> Writer<E> {
    /// An empty writer in byte order `endian`.
    pub fn in_order(endian: E) -> Self {
        Self::from_vec_in(Vec::new(), endian)
    }
    /// Continues writing, in byte order `endian`, after the bytes already in `buf`.
    pub fn from_vec_in(buf: Vec<u8>, endian: E) -> Self {
        Writer { buf, endian }
    }
    /// The byte order this writer encodes in.
    #[inline]
    pub fn endian(&self) -> E {
        self.endian
    }
    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// True when nothing was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// The bytes written so far (including any given to `from_vec`).
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
    #[inline]
    /// `big_endian_if`: encodes with `f` in byte order `endian`, appending to these bytes.
    pub fn with_endian<E2: Endian, T>(
        &mut self,
        endian: E2,
        f: impl FnOnce(&mut Writer<E2>) -> Result<T>,
    ) -> Result<T> {
        let mut other = Writer::from_vec_in(std::mem::take(&mut self.buf), endian);
        let out = f(&mut other);
        self.buf = other.into_vec();
        out
    }

    /// Empties the buffer, keeping its allocation (one buffer reused for every record).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// The bytes written, handing over the buffer.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// Appends `b` as it is (bytes have no byte order).
    #[inline]
    pub fn put_bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    /// Appends `n` zero bytes.
    #[inline]
    pub fn put_zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    /// Appends one byte.
    #[inline]
    pub fn put_u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// Appends one signed byte.
    #[inline]
    pub fn put_i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    /// Appends `v` as 2 bytes in the writer's byte order.
    #[inline]
    pub fn put_u16(&mut self, v: u16) {
        self.put_bytes(&self.endian.write_u16(v));
    }
    /// Appends `v` as 2 bytes of two's complement in the writer's byte order.
    #[inline]
    pub fn put_i16(&mut self, v: i16) {
        self.put_u16(v as u16);
    }
    /// Appends `v` as 4 bytes in the writer's byte order.
    #[inline]
    pub fn put_u32(&mut self, v: u32) {
        self.put_bytes(&self.endian.write_u32(v));
    }
    /// Appends `v` as 4 bytes of two's complement in the writer's byte order.
    #[inline]
    pub fn put_i32(&mut self, v: i32) {
        self.put_u32(v as u32);
    }
    /// Appends `v` as 8 bytes in the writer's byte order.
    #[inline]
    pub fn put_u64(&mut self, v: u64) {
        self.put_bytes(&self.endian.write_u64(v));
    }
    /// Appends `v` as 8 bytes of two's complement in the writer's byte order.
    #[inline]
    pub fn put_i64(&mut self, v: i64) {
        self.put_u64(v as u64);
    }
    /// Appends `v`'s IEEE 754 bits as a `u64` in the writer's byte order (what
    /// [`Reader::f64`](super::Reader::f64) reads back exactly, NaN payloads included).
    #[inline]
    pub fn put_f64(&mut self, v: f64) {
        self.put_u64(v.to_bits());
    }

    /// A `word[size]` of the spec: `v` as a word of `size` (4 or 8) bytes; a value that does
    /// not fit a 4-byte word is an error, not a truncation.
    pub fn put_word(&mut self, size: u64, v: u64) -> Result<()> {
        match size {
            4 => self.put_u32(word32(v)?),
            8 => self.put_u64(v),
            _ => return Err(super::reader::bad_word_size(None, size)),
        }
        Ok(())
    }
    /// Appends a `split[HI, LO]` (see [`super::Reader::split`]): `v`'s high part in `hi`
    /// bytes, then its low part in `lo` bytes. `v` is no wider than both parts (its type is).
    pub fn put_split(&mut self, hi: u32, lo: u32, v: u64) {
        let (high, low) = (v >> (8 * lo), v & ((1u64 << (8 * lo)) - 1));
        for (size, part) in [(hi, high), (lo, low)] {
            match size {
                1 => self.put_u8(part as u8),
                2 => self.put_u16(part as u16),
                _ => self.put_u32(part as u32),
            }
        }
    }
    /// Overwrites a word written earlier with [`Writer::put_word`].
    pub fn patch_word(&mut self, at: usize, size: u64, v: u64) -> Result<()> {
        match size {
            4 => self.patch_u32(at, word32(v)?),
            8 => self.patch_u64(at, v),
            _ => return Err(super::reader::bad_word_size(None, size)),
        }
        Ok(())
    }

    fn patch(&mut self, at: usize, b: &[u8]) {
        if let Some(slot) = self.buf.get_mut(at..at + b.len()) {
            slot.copy_from_slice(b);
        }
    }
    /// Overwrites a byte written earlier (a computed size known only afterwards).
    pub fn patch_u8(&mut self, at: usize, v: u8) {
        self.patch(at, &[v]);
    }
    /// Overwrites the 2 bytes at `at` with `v` in the writer's byte order (a computed
    /// `u16` written before what it counts, such as a record's `size`). Every `patch_*`
    /// writes nothing when its bytes lie past what was written.
    pub fn patch_u16(&mut self, at: usize, v: u16) {
        self.patch(at, &self.endian.write_u16(v));
    }
    /// Overwrites the 4 bytes at `at` with `v` in the writer's byte order.
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        self.patch(at, &self.endian.write_u32(v));
    }
    /// Overwrites the 8 bytes at `at` with `v` in the writer's byte order.
    pub fn patch_u64(&mut self, at: usize, v: u64) {
        self.patch(at, &self.endian.write_u64(v));
    }

    /// Zero bytes that bring what was written since `start` to a multiple of `align`.
    pub fn pad_from(&mut self, start: usize, align: u64) {
        let len = (self.len() - start) as u64;
        let pad = super::expr::align(len, align) - len;
        self.put_zeros(pad as usize);
    }

    /// The tail of a bounded structure that started at `start`: its bytes as they are, or
    /// (`None`) the canonical zero padding to `pad_to` (1 when none).
    pub fn put_tail(&mut self, tail: &Tail<'_>, start: usize, pad_to: u64) {
        match tail {
            Some(b) => self.put_bytes(b),
            None => self.pad_from(start, pad_to),
        }
    }

    /// `cstr`: the text and its NUL. A region without a NUL gets one; a NUL before the last
    /// byte would not read back the same and is an error.
    pub fn put_cstr(&mut self, s: &Str<'_>) -> Result<()> {
        let raw = s.raw();
        match raw.iter().position(|&b| b == 0) {
            None => {
                self.put_bytes(raw);
                self.put_u8(0);
                Ok(())
            }
            Some(i) if i + 1 == raw.len() => {
                self.put_bytes(raw);
                Ok(())
            }
            Some(i) => Err(Error::inconsistent(format!(
                "NUL-terminated string has a NUL at byte {i} of {}",
                raw.len()
            ))),
        }
    }
}

fn word32(v: u64) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::invalid(None, "a value that fits a 4-byte word", format!("{v:#x}")))
}
