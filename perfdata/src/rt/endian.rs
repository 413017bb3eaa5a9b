//! Byte order as a type parameter.
//!
//! Generated code is generic over [`Endian`]; the container picks [`LittleEndian`] or
//! [`BigEndian`] once, from the file's magic, and everything below is monomorphised for it.

use core::fmt::Debug;

/// Byte order known at run time (what a file says about itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub enum Endianness {
    #[default]
    Little,
    Big,
}

impl Endianness {
    /// The byte order of the machine running this code.
    pub const NATIVE: Endianness = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };
}

/// A byte order known at compile time.
pub trait Endian: Copy + Default + Debug + Send + Sync + 'static {
    /// The run-time value of this byte order.
    const KIND: Endianness;

    fn read_u16(b: [u8; 2]) -> u16;
    fn read_u32(b: [u8; 4]) -> u32;
    fn read_u64(b: [u8; 8]) -> u64;
    fn write_u16(v: u16) -> [u8; 2];
    fn write_u32(v: u32) -> [u8; 4];
    fn write_u64(v: u64) -> [u8; 8];
}

/// Least significant byte first (x86, arm64, most perf.data files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LittleEndian;

/// Most significant byte first (s390x, ppc64 big-endian).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BigEndian;

/// The byte order of the machine running this code.
#[cfg(target_endian = "little")]
pub type NativeEndian = LittleEndian;
/// The byte order of the machine running this code.
#[cfg(target_endian = "big")]
pub type NativeEndian = BigEndian;

impl Endian for LittleEndian {
    const KIND: Endianness = Endianness::Little;
    #[inline]
    fn read_u16(b: [u8; 2]) -> u16 {
        u16::from_le_bytes(b)
    }
    #[inline]
    fn read_u32(b: [u8; 4]) -> u32 {
        u32::from_le_bytes(b)
    }
    #[inline]
    fn read_u64(b: [u8; 8]) -> u64 {
        u64::from_le_bytes(b)
    }
    #[inline]
    fn write_u16(v: u16) -> [u8; 2] {
        v.to_le_bytes()
    }
    #[inline]
    fn write_u32(v: u32) -> [u8; 4] {
        v.to_le_bytes()
    }
    #[inline]
    fn write_u64(v: u64) -> [u8; 8] {
        v.to_le_bytes()
    }
}

impl Endian for BigEndian {
    const KIND: Endianness = Endianness::Big;
    #[inline]
    fn read_u16(b: [u8; 2]) -> u16 {
        u16::from_be_bytes(b)
    }
    #[inline]
    fn read_u32(b: [u8; 4]) -> u32 {
        u32::from_be_bytes(b)
    }
    #[inline]
    fn read_u64(b: [u8; 8]) -> u64 {
        u64::from_be_bytes(b)
    }
    #[inline]
    fn write_u16(v: u16) -> [u8; 2] {
        v.to_be_bytes()
    }
    #[inline]
    fn write_u32(v: u32) -> [u8; 4] {
        v.to_be_bytes()
    }
    #[inline]
    fn write_u64(v: u64) -> [u8; 8] {
        v.to_be_bytes()
    }
}

/// Reads a `u16` at `at` of `b` in order `E`; 0 when out of range (callers check sizes first).
#[inline]
pub fn get_u16<E: Endian>(b: &[u8], at: usize) -> u16 {
    match b.get(at..at.saturating_add(2)) {
        Some(s) => E::read_u16([s[0], s[1]]),
        None => 0,
    }
}

/// Reads a `u32` at `at` of `b` in order `E`; 0 when out of range (callers check sizes first).
#[inline]
pub fn get_u32<E: Endian>(b: &[u8], at: usize) -> u32 {
    match b.get(at..at.saturating_add(4)) {
        Some(s) => E::read_u32([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Reads a `u64` at `at` of `b` in order `E`; 0 when out of range (callers check sizes first).
#[inline]
pub fn get_u64<E: Endian>(b: &[u8], at: usize) -> u64 {
    match b.get(at..at.saturating_add(8)) {
        Some(s) => E::read_u64([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        None => 0,
    }
}
