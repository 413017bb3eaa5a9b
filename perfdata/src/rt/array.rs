//! Arrays of fixed-size elements, decoded lazily from borrowed bytes.

use std::fmt;

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use super::endian::{get_u16, get_u32, get_u64, BigEndian, Endian, Endianness, LittleEndian};
use super::error::Result;
use super::reader::Reader;
use super::values::IntoOwned;
use super::writer::Writer;

/// A fixed-size element that needs no context to decode: integers, enums, flags, bitfields
/// and the generated structs made only of those.
pub trait FixedElem: Copy {
    /// Encoded size in bytes (at least 1).
    const SIZE: usize;
    /// Decodes from exactly `SIZE` bytes in order `e`.
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self;
    /// Appends exactly `SIZE` bytes to `w`, in `w`'s byte order.
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>);
}

/// Decodes one fixed element at `at` of `b` (used by generated `FixedElem` impls).
#[inline]
pub fn elem_at<T: FixedElem, E: Endian>(b: &[u8], at: usize, e: E) -> T {
    T::decode_elem(b.get(at..).unwrap_or(&[]), e)
}

macro_rules! fixed_int {
    ($t:ty, $size:expr, $get:expr, $put:ident) => {
        impl FixedElem for $t {
            const SIZE: usize = $size;
            #[inline]
            fn decode_elem<E: Endian>(b: &[u8], _: E) -> Self {
                let get: fn(&[u8]) -> $t = $get;
                get(b)
            }
            #[inline]
            fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
                w.$put(*self);
            }
        }
    };
}
fixed_int!(u8, 1, |b| b.first().copied().unwrap_or(0), put_u8);
fixed_int!(i8, 1, |b| b.first().copied().unwrap_or(0) as i8, put_i8);

impl FixedElem for u16 {
    const SIZE: usize = 2;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u16(b, 0, e)
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_u16(*self);
    }
}
impl FixedElem for i16 {
    const SIZE: usize = 2;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u16(b, 0, e) as i16
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_i16(*self);
    }
}
impl FixedElem for u32 {
    const SIZE: usize = 4;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u32(b, 0, e)
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_u32(*self);
    }
}
impl FixedElem for i32 {
    const SIZE: usize = 4;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u32(b, 0, e) as i32
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_i32(*self);
    }
}
impl FixedElem for u64 {
    const SIZE: usize = 8;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u64(b, 0, e)
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_u64(*self);
    }
}
impl FixedElem for i64 {
    const SIZE: usize = 8;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        get_u64(b, 0, e) as i64
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_i64(*self);
    }
}
impl FixedElem for f64 {
    const SIZE: usize = 8;
    #[inline]
    fn decode_elem<E: Endian>(b: &[u8], e: E) -> Self {
        f64::from_bits(get_u64(b, 0, e))
    }
    #[inline]
    fn encode_elem<E: Endian>(&self, w: &mut Writer<E>) {
        w.put_f64(*self);
    }
}

/// An array of fixed-size elements: borrowed bytes decoded on access (no allocation while
/// reading), or owned values.
#[derive(Clone)]
pub enum Array<'a, T> {
    /// `len` elements stored in `bytes` (exactly `len * T::SIZE` bytes) in order `endian`.
    Borrowed {
        /// The elements' bytes, as they sit in the input.
        bytes: &'a [u8],
        /// The byte order they are in (the input's).
        endian: Endianness,
        /// Number of elements.
        len: usize,
    },
    /// Values built by a program or decoded from another array
    /// ([`Array::into_owned`]); encoded element by element.
    Owned(Vec<T>),
}

impl<T> Default for Array<'_, T> {
    fn default() -> Self {
        Array::Owned(Vec::new())
    }
}

impl<'a, T: FixedElem> Array<'a, T> {
    /// Borrows `count` elements from `r` (the count is checked against the input first).
    #[inline]
    pub fn decode<E: Endian>(r: &mut Reader<'a, E>, count: u64) -> Result<Self> {
        let len = r.check_count(count, T::SIZE)?;
        let bytes = r.bytes(len * T::SIZE)?;
        Ok(Array::Borrowed {
            bytes,
            endian: r.endian().kind(),
            len,
        })
    }
    /// Borrows as many whole elements as are left in `r` (`[T; ..]`); a partial element at
    /// the end is left in `r`.
    #[inline]
    pub fn decode_rest<E: Endian>(r: &mut Reader<'a, E>) -> Result<Self> {
        let count = r.remaining() / T::SIZE;
        Self::decode(r, count as u64)
    }
    /// Writes the elements; borrowed bytes in the writer's byte order are copied as they are.
    pub fn encode<E: Endian>(&self, w: &mut Writer<E>) {
        match self {
            Array::Borrowed { bytes, endian, .. } if *endian == w.endian().kind() => {
                w.put_bytes(bytes)
            }
            _ => {
                for x in self.iter() {
                    x.encode_elem(w);
                }
            }
        }
    }
    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Array::Borrowed { len, .. } => *len,
            Array::Owned(v) => v.len(),
        }
    }
    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Encoded size in bytes.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.len() * T::SIZE
    }
    /// The element at `i`, decoded.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Array::Borrowed { bytes, endian, len } => {
                if i >= *len {
                    return None;
                }
                let at = i * T::SIZE;
                Some(T::decode_elem(&bytes[at..at + T::SIZE], *endian))
            }
            Array::Owned(v) => v.get(i).copied(),
        }
    }
    /// The elements in order, each decoded as it is reached (nothing is allocated).
    #[inline]
    pub fn iter(&self) -> ArrayIter<'_, 'a, T> {
        match self {
            Array::Borrowed { bytes, endian, .. } => {
                let chunks = bytes.chunks_exact(T::SIZE);
                match endian {
                    Endianness::Little => ArrayIter::Little(chunks),
                    Endianness::Big => ArrayIter::Big(chunks),
                }
            }
            Array::Owned(v) => ArrayIter::Owned(v.iter()),
        }
    }
    /// The elements decoded into a `Vec` (the array itself is left as it is).
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
    /// Owned elements (decodes borrowed ones).
    pub fn into_owned(self) -> Array<'static, T> {
        match self {
            Array::Owned(v) => Array::Owned(v),
            b => Array::Owned(b.to_vec()),
        }
    }
}

/// Iterator over an [`Array`]: borrowed elements are decoded as they are reached (one
/// variant per byte order, so the order is not tested per element).
pub enum ArrayIter<'r, 'a, T> {
    /// Borrowed little-endian elements, one chunk of `T::SIZE` bytes each.
    Little(core::slice::ChunksExact<'a, u8>),
    /// Borrowed big-endian elements, one chunk of `T::SIZE` bytes each.
    Big(core::slice::ChunksExact<'a, u8>),
    /// Owned elements, copied out.
    Owned(core::slice::Iter<'r, T>),
}

impl<T: FixedElem> Iterator for ArrayIter<'_, '_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            ArrayIter::Little(c) => c.next().map(|b| T::decode_elem(b, LittleEndian)),
            ArrayIter::Big(c) => c.next().map(|b| T::decode_elem(b, BigEndian)),
            ArrayIter::Owned(it) => it.next().copied(),
        }
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            ArrayIter::Little(c) | ArrayIter::Big(c) => c.size_hint(),
            ArrayIter::Owned(it) => it.size_hint(),
        }
    }
    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, mut f: F) -> B {
        match self {
            ArrayIter::Little(c) => c.fold(init, |acc, b| f(acc, T::decode_elem(b, LittleEndian))),
            ArrayIter::Big(c) => c.fold(init, |acc, b| f(acc, T::decode_elem(b, BigEndian))),
            ArrayIter::Owned(it) => it.fold(init, |acc, x| f(acc, *x)),
        }
    }
}
impl<T: FixedElem> ExactSizeIterator for ArrayIter<'_, '_, T> {}

impl<'r, 'a, T: FixedElem> IntoIterator for &'r Array<'a, T> {
    type Item = T;
    type IntoIter = ArrayIter<'r, 'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> From<Vec<T>> for Array<'_, T> {
    fn from(v: Vec<T>) -> Self {
        Array::Owned(v)
    }
}

impl<T: FixedElem + PartialEq> PartialEq for Array<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: FixedElem + fmt::Debug> fmt::Debug for Array<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: FixedElem + Serialize> Serialize for Array<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for x in self.iter() {
            seq.serialize_element(&x)?;
        }
        seq.end()
    }
}

impl<T: FixedElem + 'static> IntoOwned for Array<'_, T> {
    type Owned = Array<'static, T>;
    fn into_owned(self) -> Array<'static, T> {
        Array::into_owned(self)
    }
}
