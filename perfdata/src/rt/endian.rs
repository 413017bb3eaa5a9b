//! Byte order as a value.
//!
//! [`Endian`] is implemented by two zero-sized types known at compile time
//! ([`LittleEndian`], [`BigEndian`]) and by the run-time value [`Endianness`], as gimli's
//! `Endianity` and object's `Endian` are. Code that learns the byte order from a file is
//! written once over `Endianness`; a hot path that wants every read monomorphised picks a
//! [`StaticEndian`] type instead, with [`static_endian!`](crate::static_endian). For the zero-sized types
//! every method below folds to a constant, so generic code costs nothing over a
//! hand-written little-endian reader.

use core::fmt::Debug;

/// Byte order known at run time (what a file says about itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub enum Endianness {
    /// Least significant byte first (x86, arm64: most files); the default. A perf.data
    /// in this order starts with `PERFILE2`.
    #[default]
    Little,
    /// Most significant byte first (s390x, big-endian ppc64). A perf.data in this order
    /// starts with `2ELIFREP`.
    Big,
}

impl Endianness {
    /// The byte order of the machine running this code.
    pub const NATIVE: Endianness = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };

    /// The other byte order.
    pub fn swapped(self) -> Endianness {
        match self {
            Endianness::Little => Endianness::Big,
            Endianness::Big => Endianness::Little,
        }
    }
}

/// A byte order: a compile-time type or the run-time [`Endianness`].
pub trait Endian: Copy + Debug + Send + Sync + 'static {
    /// This byte order as a run-time value.
    fn kind(self) -> Endianness;

    /// True for most significant byte first.
    #[inline]
    fn is_big(self) -> bool {
        self.kind() == Endianness::Big
    }
    /// The `u16` that `b` holds in this byte order.
    #[inline]
    fn read_u16(self, b: [u8; 2]) -> u16 {
        if self.is_big() {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }
    /// The `u32` that `b` holds in this byte order.
    #[inline]
    fn read_u32(self, b: [u8; 4]) -> u32 {
        if self.is_big() {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }
    /// The `u64` that `b` holds in this byte order.
    #[inline]
    fn read_u64(self, b: [u8; 8]) -> u64 {
        if self.is_big() {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }
    }
    /// The bytes of `v` in this byte order.
    #[inline]
    fn write_u16(self, v: u16) -> [u8; 2] {
        if self.is_big() {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// The bytes of `v` in this byte order.
    #[inline]
    fn write_u32(self, v: u32) -> [u8; 4] {
        if self.is_big() {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// The bytes of `v` in this byte order.
    #[inline]
    fn write_u64(self, v: u64) -> [u8; 8] {
        if self.is_big() {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
}

/// A byte order fixed at compile time (a zero-sized type): the monomorphised fast path.
pub trait StaticEndian: Endian + Default {
    /// The run-time value of this byte order.
    const KIND: Endianness;
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

impl Endian for Endianness {
    #[inline]
    fn kind(self) -> Endianness {
        self
    }
}

impl Endian for LittleEndian {
    #[inline]
    fn kind(self) -> Endianness {
        Endianness::Little
    }
}
impl StaticEndian for LittleEndian {
    const KIND: Endianness = Endianness::Little;
}

impl Endian for BigEndian {
    #[inline]
    fn kind(self) -> Endianness {
        Endianness::Big
    }
}
impl StaticEndian for BigEndian {
    const KIND: Endianness = Endianness::Big;
}

/// Reads a `u16` at `at` of `b` in order `e`; 0 when out of range (callers check sizes first).
#[inline(always)]
pub fn get_u16<E: Endian>(b: &[u8], at: usize, e: E) -> u16 {
    match b.get(at..at.saturating_add(2)) {
        Some(s) => e.read_u16([s[0], s[1]]),
        None => 0,
    }
}

/// Reads a `u32` at `at` of `b` in order `e`; 0 when out of range (callers check sizes first).
#[inline(always)]
pub fn get_u32<E: Endian>(b: &[u8], at: usize, e: E) -> u32 {
    match b.get(at..at.saturating_add(4)) {
        Some(s) => e.read_u32([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Reads a `u64` at `at` of `b` in order `e`; 0 when out of range (callers check sizes first).
#[inline(always)]
pub fn get_u64<E: Endian>(b: &[u8], at: usize, e: E) -> u64 {
    match b.get(at..at.saturating_add(8)) {
        Some(s) => e.read_u64([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        None => 0,
    }
}

/// `static_endian!(endianness, |e| body)`: evaluates `body` with `e` bound to the
/// compile-time byte order ([`LittleEndian`] or [`BigEndian`]) matching the run-time
/// `endianness`, so `body` is monomorphised for each. For hot paths only (the record walk,
/// the time-ordered walk, `convert --typed`); everything else passes the [`Endianness`]
/// value itself.
#[macro_export]
macro_rules! static_endian {
    ($endian:expr, |$e:ident| $body:expr) => {
        match $endian {
            $crate::rt::Endianness::Little => {
                let $e = $crate::rt::LittleEndian;
                $body
            }
            $crate::rt::Endianness::Big => {
                let $e = $crate::rt::BigEndian;
                $body
            }
        }
    };
}
