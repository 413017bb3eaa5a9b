//! How dumps show numbers: the serialization behind the spec's display attributes
//! (`@hex`, `@hex(Enum)`, `@signed`) and of flag sets. Serializing allocates nothing.

use std::fmt;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::Serializer;

use super::array::{Array, FixedElem};
use super::bits::FlagName;
use super::values::Bytes;

/// Names of values, for `@hex(Enum)` (implemented by every generated enum).
pub trait ValueNames {
    /// The name of `v`, `None` for a value the enum does not name.
    fn value_name(v: u64) -> Option<&'static str>;
}

/// No names: plain `@hex`.
pub enum NoNames {}
impl ValueNames for NoNames {
    fn value_name(_: u64) -> Option<&'static str> {
        None
    }
}

/// `"0x…"`, lower-case, without padding, formatted on the stack.
struct HexBuf {
    buf: [u8; 18],
    start: usize,
}

/// `HEX_PAIRS[2 * b..2 * b + 2]`: the two hex digits of byte `b`.
static HEX_PAIRS: [u8; 512] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [0u8; 512];
    let mut b = 0;
    while b < 256 {
        t[2 * b] = DIGITS[b >> 4];
        t[2 * b + 1] = DIGITS[b & 0xf];
        b += 1;
    }
    t
};

impl HexBuf {
    #[inline]
    fn new(v: u64) -> Self {
        let mut buf = [0u8; 18];
        // All 16 digits, two per byte, then the `0x` just before the first significant one.
        for (i, byte) in v.to_be_bytes().iter().enumerate() {
            let at = 2 * usize::from(*byte);
            buf[2 + 2 * i] = HEX_PAIRS[at];
            buf[3 + 2 * i] = HEX_PAIRS[at + 1];
        }
        let start = (v.leading_zeros() as usize / 4).min(15);
        buf[start] = b'0';
        buf[start + 1] = b'x';
        HexBuf { buf, start }
    }
    #[inline]
    fn as_str(&self) -> &str {
        let text = &self.buf[self.start..];
        debug_assert!(text.is_ascii());
        // SAFETY: `new` wrote ASCII (`0`, `x`, hex digits) to every byte from `start` on.
        // The checked conversion cost 7% of `dump --json` on callchain-heavy files.
        unsafe { std::str::from_utf8_unchecked(text) }
    }
}

/// `v` as a `"0x…"` string.
pub fn serialize_hex_u64<S: Serializer>(v: u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(HexBuf::new(v).as_str())
}

/// A value a display attribute applies to: an unsigned integer, or an `Option`, array or
/// `Vec` of them.
pub trait DisplayValue {
    /// As `@hex(N)`: a `"0x…"` string, or the name `N` gives the value.
    fn serialize_hex<N: ValueNames, S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
    /// As `@signed`: the two's complement value of the integer's width.
    fn serialize_signed<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

macro_rules! display_int {
    ($t:ty, $s:ty) => {
        impl DisplayValue for $t {
            fn serialize_hex<N: ValueNames, S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let v = u64::from(*self);
                match N::value_name(v) {
                    Some(name) => s.serialize_str(name),
                    None => serialize_hex_u64(v, s),
                }
            }
            fn serialize_signed<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_i64(i64::from(*self as $s))
            }
        }
    };
}
display_int!(u8, i8);
display_int!(u16, i16);
display_int!(u32, i32);
display_int!(u64, i64);

impl<T: DisplayValue> DisplayValue for Option<T> {
    fn serialize_hex<N: ValueNames, S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => v.serialize_hex::<N, S>(s),
            None => s.serialize_none(),
        }
    }
    fn serialize_signed<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => v.serialize_signed(s),
            None => s.serialize_none(),
        }
    }
}

/// One element of a sequence, shown as its display attribute says.
struct Elem<'v, T, N> {
    v: &'v T,
    signed: bool,
    names: std::marker::PhantomData<N>,
}

impl<T: DisplayValue, N: ValueNames> serde::Serialize for Elem<'_, T, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.signed {
            self.v.serialize_signed(s)
        } else {
            self.v.serialize_hex::<N, S>(s)
        }
    }
}

fn seq<'v, T: DisplayValue + 'v, N: ValueNames, S: Serializer>(
    s: S,
    len: usize,
    items: impl Iterator<Item = &'v T>,
    signed: bool,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(len))?;
    for v in items {
        seq.serialize_element(&Elem::<T, N> {
            v,
            signed,
            names: std::marker::PhantomData,
        })?;
    }
    seq.end()
}

impl<T: DisplayValue> DisplayValue for Vec<T> {
    fn serialize_hex<N: ValueNames, S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        seq::<T, N, S>(s, self.len(), self.iter(), false)
    }
    fn serialize_signed<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        seq::<T, NoNames, S>(s, self.len(), self.iter(), true)
    }
}

impl<T: DisplayValue + FixedElem> DisplayValue for Array<'_, T> {
    fn serialize_hex<N: ValueNames, S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for v in self.iter() {
            seq.serialize_element(&Elem::<T, N> {
                v: &v,
                signed: false,
                names: std::marker::PhantomData,
            })?;
        }
        seq.end()
    }
    fn serialize_signed<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for v in self.iter() {
            seq.serialize_element(&Elem::<T, NoNames> {
                v: &v,
                signed: true,
                names: std::marker::PhantomData,
            })?;
        }
        seq.end()
    }
}

/// `#[serde(serialize_with)]` of a `@hex` field.
pub fn ser_hex<T: DisplayValue, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.serialize_hex::<NoNames, S>(s)
}

/// `#[serde(serialize_with)]` of a `@hex(N)` field.
pub fn ser_hex_named<N: ValueNames, T: DisplayValue, S: Serializer>(
    v: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    v.serialize_hex::<N, S>(s)
}

/// `#[serde(serialize_with)]` of a `@signed` field.
pub fn ser_signed<T: DisplayValue, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.serialize_signed(s)
}

/// A flag set: `{"raw": "0x…", "names": [...]}`: the name of each set bit, `NAME=v` for a
/// multi-bit member, `0x…` for set bits the spec does not name.
pub fn serialize_flags<S: Serializer>(
    s: S,
    value: u64,
    table: &'static [FlagName],
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(2))?;
    m.serialize_entry("raw", HexBuf::new(value).as_str())?;
    m.serialize_entry("names", &FlagNames { value, table })?;
    m.end()
}

struct FlagNames {
    value: u64,
    table: &'static [FlagName],
}

struct RangeName(&'static str, u64);
impl fmt::Display for RangeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.0, self.1)
    }
}
impl serde::Serialize for RangeName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // `NAME=v` composed on the stack (this is in every record's `misc`).
        let mut buf = [0u8; 64];
        let name = self.0.as_bytes();
        let mut digits = [0u8; 20];
        let mut n = 0;
        let mut v = self.1;
        loop {
            digits[19 - n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let len = name.len() + 1 + n;
        if len > buf.len() {
            return s.collect_str(self);
        }
        buf[..name.len()].copy_from_slice(name);
        buf[name.len()] = b'=';
        buf[name.len() + 1..len].copy_from_slice(&digits[20 - n..]);
        match std::str::from_utf8(&buf[..len]) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_str(self),
        }
    }
}

impl serde::Serialize for FlagNames {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut known = 0u64;
        for f in self.table {
            let width = u32::from(f.hi - f.lo) + 1;
            let mask = if width >= 64 {
                u64::MAX
            } else {
                ((1u64 << width) - 1) << f.lo
            };
            known |= mask;
            let v = (self.value & mask) >> f.lo;
            if v == 0 {
                continue;
            }
            if f.lo == f.hi {
                seq.serialize_element(f.name)?;
            } else {
                seq.serialize_element(&RangeName(f.name, v))?;
            }
        }
        let rest = self.value & !known;
        if rest != 0 {
            seq.serialize_element(HexBuf::new(rest).as_str())?;
        }
        seq.end()
    }
}

/// A value shown as `@hex` (for generated `Serialize` impls written out).
pub struct Hex<'v, T>(pub &'v T);
impl<T: DisplayValue> serde::Serialize for Hex<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_hex::<NoNames, S>(s)
    }
}

/// A value shown as `@hex(N)`.
pub struct HexNamed<'v, N, T>(pub &'v T, pub std::marker::PhantomData<N>);
impl<N: ValueNames, T: DisplayValue> serde::Serialize for HexNamed<'_, N, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_hex::<N, S>(s)
    }
}

/// A value shown as `@signed`.
pub struct Signed<'v, T>(pub &'v T);
impl<T: DisplayValue> serde::Serialize for Signed<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_signed(s)
    }
}

/// Bytes that hold text (`@text`), or an `Option` of them.
pub trait TextValue {
    /// Serializes the bytes as a string (invalid UTF-8 replaced), `None` as null.
    fn serialize_text<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}
impl TextValue for Bytes<'_> {
    fn serialize_text<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&String::from_utf8_lossy(self))
    }
}
impl<T: TextValue> TextValue for Option<T> {
    fn serialize_text<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => v.serialize_text(s),
            None => s.serialize_none(),
        }
    }
}

/// `#[serde(serialize_with)]` of a `@text` field.
pub fn ser_text<T: TextValue, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.serialize_text(s)
}

/// A value shown as `@text`.
pub struct Text<'v, T>(pub &'v T);
impl<T: TextValue> serde::Serialize for Text<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_text(s)
    }
}
