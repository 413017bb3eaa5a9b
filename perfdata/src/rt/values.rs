//! Zero-copy value types: raw bytes, text regions, record payloads, tails.

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

/// Raw bytes, borrowed from the input or owned.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bytes<'a>(pub Cow<'a, [u8]>);

impl<'a> Bytes<'a> {
    /// Borrows `b` (usable in `const` items, unlike `From`).
    pub const fn borrowed(b: &'a [u8]) -> Self {
        Bytes(Cow::Borrowed(b))
    }
    /// The bytes, wherever they live.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
    /// Number of bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there are no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// A copy that borrows nothing from the input (no copy when already owned).
    pub fn into_owned(self) -> Bytes<'static> {
        Bytes(Cow::Owned(self.0.into_owned()))
    }
}

impl core::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}
impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
impl<'a> From<&'a [u8]> for Bytes<'a> {
    fn from(b: &'a [u8]) -> Self {
        Bytes(Cow::Borrowed(b))
    }
}
impl<'a, const N: usize> From<&'a [u8; N]> for Bytes<'a> {
    fn from(b: &'a [u8; N]) -> Self {
        Bytes(Cow::Borrowed(b))
    }
}
impl From<Vec<u8>> for Bytes<'_> {
    fn from(b: Vec<u8>) -> Self {
        Bytes(Cow::Owned(b))
    }
}

pub(crate) fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

impl fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PREVIEW: usize = 16;
        let b = self.as_slice();
        write!(f, "Bytes({} bytes", b.len())?;
        if !b.is_empty() {
            write!(f, ": {}", hex(&b[..b.len().min(PREVIEW)]))?;
            if b.len() > PREVIEW {
                f.write_str("…")?;
            }
        }
        f.write_str(")")
    }
}

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex(self))
    }
}

/// A text region: the raw bytes as found (text, NUL, padding), kept as they are.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Str<'a>(Cow<'a, [u8]>);

impl<'a> Str<'a> {
    /// The region exactly as given.
    pub fn from_raw(raw: impl Into<Cow<'a, [u8]>>) -> Self {
        Str(raw.into())
    }
    /// `text`, a NUL and zero padding up to a multiple of `align` (perf's padded strings).
    pub fn padded(text: impl AsRef<[u8]>, align: usize) -> Str<'static> {
        let t = text.as_ref();
        let mut v = t.to_vec();
        v.push(0);
        let align = align.max(1);
        v.resize(v.len().div_ceil(align) * align, 0);
        Str(Cow::Owned(v))
    }
    /// `text` and a NUL (for `cstr` fields).
    pub fn cstr(text: impl AsRef<[u8]>) -> Str<'static> {
        Str::padded(text, 1)
    }
    /// The whole region (text, NUL and padding).
    #[inline]
    pub fn raw(&self) -> &[u8] {
        &self.0
    }
    /// Length of the whole region in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when the region has no bytes at all (not even a NUL).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The text: the bytes before the first NUL (all of them when there is none).
    pub fn text(&self) -> &[u8] {
        let r = self.raw();
        match r.iter().position(|&b| b == 0) {
            Some(i) => &r[..i],
            None => r,
        }
    }
    /// The text as UTF-8, invalid sequences replaced.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.text())
    }
    /// A copy that borrows nothing from the input, padding included.
    pub fn into_owned(self) -> Str<'static> {
        Str(Cow::Owned(self.0.into_owned()))
    }
}

impl<'a> From<&'a str> for Str<'a> {
    /// The text's bytes as the whole region (no NUL added; `cstr` fields add one on writing).
    fn from(s: &'a str) -> Self {
        Str(Cow::Borrowed(s.as_bytes()))
    }
}
impl<'a> From<&'a [u8]> for Str<'a> {
    fn from(s: &'a [u8]) -> Self {
        Str(Cow::Borrowed(s))
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_str_lossy())?;
        let t = self.text().len();
        if self.len() != t {
            write!(f, " (+{} bytes)", self.len() - t)?;
        }
        Ok(())
    }
}

impl Serialize for Str<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_str_lossy())
    }
}

/// Bytes left after the last known field of a bounded body.
///
/// `None` is canonical: the remainder was empty or exactly the zero padding `pad_to` would
/// write, and the writer writes that padding. `Some(b)` is written as `b`, nothing added.
pub type Tail<'a> = Option<Bytes<'a>>;

/// The bytes that follow a record outside its `header.size` (e.g. the AUXTRACE data).
///
/// Decoding a record cannot see them: it leaves the payload `Pending` with the length the
/// record declares; the container reads that many bytes and attaches them
/// (`set_payload`). Encoding computes the record's length fields from [`Payload::len`],
/// which is the same in both states; the container writes the bytes.
#[derive(Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    /// Declared length, bytes not attached (yet).
    Pending(u64),
    /// The bytes themselves: attached by the container after decoding, or given by a
    /// program building a record.
    Data(Bytes<'a>),
}

impl Default for Payload<'_> {
    fn default() -> Self {
        Payload::Data(Bytes::default())
    }
}

impl<'a> Payload<'a> {
    /// The payload's length in bytes (declared, while pending).
    pub fn len(&self) -> usize {
        match self {
            Payload::Pending(n) => usize::try_from(*n).unwrap_or(usize::MAX),
            Payload::Data(b) => b.len(),
        }
    }
    /// True when the payload has (or declares) no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes, once attached.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Payload::Pending(_) => None,
            Payload::Data(b) => Some(b),
        }
    }
    /// A copy that borrows nothing from the input (a pending payload stays pending).
    pub fn into_owned(self) -> Payload<'static> {
        match self {
            Payload::Pending(n) => Payload::Pending(n),
            Payload::Data(b) => Payload::Data(b.into_owned()),
        }
    }
}

impl<'a> From<Bytes<'a>> for Payload<'a> {
    fn from(b: Bytes<'a>) -> Self {
        Payload::Data(b)
    }
}
impl<'a> From<&'a [u8]> for Payload<'a> {
    fn from(b: &'a [u8]) -> Self {
        Payload::Data(Bytes::from(b))
    }
}
impl From<Vec<u8>> for Payload<'_> {
    fn from(b: Vec<u8>) -> Self {
        Payload::Data(Bytes::from(b))
    }
}

impl fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::Pending(n) => write!(f, "Pending({n} bytes)"),
            Payload::Data(b) => b.fmt(f),
        }
    }
}

impl Serialize for Payload<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Pending(n) => s.serialize_str(&format!("<{n} bytes not loaded>")),
            Payload::Data(b) => b.serialize(s),
        }
    }
}

/// Conversion to a value that borrows nothing (`'static`).
///
/// Implemented by the runtime's value types and by every generated type, so that a
/// decoded value can outlive the input it was read from (an editable model, a value
/// kept past the memory map).
pub trait IntoOwned {
    /// The same type with every borrow replaced by owned data (`Bytes<'static>` for
    /// `Bytes<'a>`; itself for plain numbers).
    type Owned: 'static;
    /// Copies whatever is borrowed.
    fn into_owned(self) -> Self::Owned;
}

macro_rules! owned_as_is {
    ($($t:ty),*) => {$(
        impl IntoOwned for $t {
            type Owned = $t;
            #[inline]
            fn into_owned(self) -> $t { self }
        }
    )*};
}
owned_as_is!(u8, u16, u32, u64, i8, i16, i32, i64, f64, bool);

impl IntoOwned for Bytes<'_> {
    type Owned = Bytes<'static>;
    fn into_owned(self) -> Bytes<'static> {
        Bytes::into_owned(self)
    }
}
impl IntoOwned for Str<'_> {
    type Owned = Str<'static>;
    fn into_owned(self) -> Str<'static> {
        Str::into_owned(self)
    }
}
impl IntoOwned for Payload<'_> {
    type Owned = Payload<'static>;
    fn into_owned(self) -> Payload<'static> {
        Payload::into_owned(self)
    }
}
impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(T::into_owned)
    }
}
impl<T: IntoOwned> IntoOwned for Vec<T> {
    type Owned = Vec<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.into_iter().map(T::into_owned).collect()
    }
}
impl<T: IntoOwned> IntoOwned for Box<T> {
    type Owned = Box<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        Box::new((*self).into_owned())
    }
}

/// Arbitrary values of the runtime's types, for the generated types' `Arbitrary` derive
/// (the `structured` fuzz target): bytes borrowed from the fuzzer's input, arrays owned.
#[cfg(feature = "arbitrary")]
mod arbitrary_impls {
    use super::{Bytes, Payload, Str};
    use crate::rt::Array;
    use arbitrary::{Arbitrary, Result, Unstructured};
    use std::borrow::Cow;

    impl<'a> Arbitrary<'a> for Bytes<'a> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Bytes(Cow::Borrowed(<&'a [u8]>::arbitrary(u)?)))
        }
    }

    impl<'a> Arbitrary<'a> for Str<'a> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Str::from_raw(<&'a [u8]>::arbitrary(u)?))
        }
    }

    impl<'a> Arbitrary<'a> for Payload<'a> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Payload::Data(Bytes::arbitrary(u)?))
        }
    }

    impl<'a, T: Arbitrary<'a>> Arbitrary<'a> for Array<'a, T> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Array::Owned(Vec::<T>::arbitrary(u)?))
        }
    }
}
