//! The one error type of the library: where (byte offset, record, feature, field path) and what.

use std::borrow::Cow;
use std::fmt;

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended: `needed` bytes were wanted, `available` were left.
    UnexpectedEnd {
        /// Bytes the field (or record) needed from the error's offset on.
        needed: u64,
        /// Bytes the input had left there.
        available: u64,
    },
    /// The input holds something other than what the format allows.
    Invalid {
        /// What the format allows, in words (`a record size of at least 8`).
        expected: String,
        /// What the input holds (`3`, `bytes [00, 01]`).
        found: String,
    },
    /// A count or length is larger than the input could hold (or than `limit`).
    TooLarge {
        /// What was counted (`element count`).
        what: Cow<'static, str>,
        /// The count or length the input states.
        value: u64,
        /// The largest value that could be right (for a count: how many of the
        /// smallest element the bytes left can hold).
        limit: u64,
    },
    /// Encoding: the value contradicts itself (a count, a condition, a switch, a size).
    Inconsistent(String),
    /// An I/O error of the underlying reader or writer.
    Io(std::io::Error),
    /// Anything else (used by hand-written container code).
    Other(String),
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathElem {
    /// A field, by its name in the spec (`build_id`, `nodes`).
    Field(Cow<'static, str>),
    /// An element of an array, by index (shown `[3]`).
    Index(u64),
}

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    offset: Option<u64>,
    /// Innermost first (pushed while the error travels outwards); displayed reversed.
    path: Vec<PathElem>,
    record: Option<(u64, String)>,
    feature: Option<String>,
    /// The file the error is in, when it is not the one the caller opened (a `data.N`
    /// stream of a directory) or when the error is about the file itself (I/O).
    file: Option<std::path::PathBuf>,
}

/// An error with its location. Boxed, so that `Result<T, Error>` stays one word plus `T`.
///
/// Location is added on the error path only: generated code calls
/// [`ResultExt::field`] / [`Error::in_field`] as the error travels outwards, the container
/// adds the record ([`Error::with_record`]) or feature ([`Error::with_feature`]).
pub struct Error(Box<Inner>);

impl Error {
    /// An error of `kind` at absolute byte `offset` (if known).
    #[cold]
    pub fn new(kind: ErrorKind, offset: Option<u64>) -> Error {
        Error(Box::new(Inner {
            kind,
            offset,
            path: Vec::new(),
            record: None,
            feature: None,
            file: None,
        }))
    }
    /// The input ended at `offset`: `needed` bytes were wanted, `available` were left
    /// ([`ErrorKind::UnexpectedEnd`]).
    #[cold]
    pub fn unexpected_end(offset: u64, needed: u64, available: u64) -> Error {
        Error::new(ErrorKind::UnexpectedEnd { needed, available }, Some(offset))
    }
    /// The input holds `found` where the format allows `expected`, at `offset` if known
    /// ([`ErrorKind::Invalid`]).
    #[cold]
    pub fn invalid(
        offset: Option<u64>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Error {
        Error::new(
            ErrorKind::Invalid {
                expected: expected.into(),
                found: found.into(),
            },
            offset,
        )
    }
    /// A count or length `value` (of `what`) above `limit`, checked before anything is
    /// allocated for it ([`ErrorKind::TooLarge`]).
    #[cold]
    pub fn too_large(
        offset: Option<u64>,
        what: impl Into<Cow<'static, str>>,
        value: u64,
        limit: u64,
    ) -> Error {
        Error::new(
            ErrorKind::TooLarge {
                what: what.into(),
                value,
                limit,
            },
            offset,
        )
    }
    /// An encoding-time contradiction, e.g. "3 elements but popcount(mask) = 4".
    #[cold]
    pub fn inconsistent(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Inconsistent(msg.into()), None)
    }
    /// Any other failure, as a message ([`ErrorKind::Other`]): refusals of the container
    /// and the writer (a conversion that would lose data, an input that is not a
    /// recording), without an offset.
    #[cold]
    pub fn other(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Other(msg.into()), None)
    }

    /// What went wrong, apart from where.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
    /// Absolute byte offset in the input (decoding) or in the output (encoding), if known.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }
    /// The field path, outermost first, e.g. `["file", "build_id"]`; indices as `[3]`.
    pub fn path(&self) -> Vec<PathElem> {
        self.0.path.iter().rev().cloned().collect()
    }
    /// The field path as text: `nodes[3].cpus`.
    pub fn path_string(&self) -> String {
        let mut s = String::new();
        for e in self.0.path.iter().rev() {
            match e {
                PathElem::Field(name) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(name);
                }
                PathElem::Index(i) => {
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }
    /// `(index, type)` of the record the error is in, if the container said so.
    pub fn record(&self) -> Option<(u64, &str)> {
        self.0.record.as_ref().map(|(i, t)| (*i, t.as_str()))
    }
    /// The feature the error is in, if the container said so.
    pub fn feature(&self) -> Option<&str> {
        self.0.feature.as_deref()
    }

    /// Prepends a field name to the path (called as the error leaves that field).
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Error {
        self.0.path.push(PathElem::Field(Cow::Borrowed(name)));
        self
    }
    /// Prepends an array index to the path.
    #[cold]
    pub fn in_index(mut self, index: usize) -> Error {
        self.0.path.push(PathElem::Index(index as u64));
        self
    }
    /// Names the record (its index in the stream and its type, by name or number).
    #[cold]
    pub fn with_record(mut self, index: u64, ty: impl fmt::Display) -> Error {
        self.0.record = Some((index, ty.to_string()));
        self
    }
    /// Names the header feature (by name or number).
    #[cold]
    pub fn with_feature(mut self, id: impl fmt::Display) -> Error {
        self.0.feature = Some(id.to_string());
        self
    }
    /// Names the file the error is in (printed first, as `path: …`); the kind is kept, so
    /// an I/O error stays [`ErrorKind::Io`].
    #[cold]
    pub fn in_file(mut self, path: impl Into<std::path::PathBuf>) -> Error {
        self.0.file = Some(path.into());
        self
    }
    /// The file named with [`Error::in_file`].
    pub fn file(&self) -> Option<&std::path::Path> {
        self.0.file.as_deref()
    }
    /// Sets the byte offset when the error has none yet.
    #[cold]
    pub fn or_offset(mut self, offset: u64) -> Error {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
        }
        self
    }
    /// Shifts the byte offset (for errors found in a buffer that starts at `base`).
    #[cold]
    pub fn shift_offset(mut self, base: u64) -> Error {
        if let Some(o) = self.0.offset.as_mut() {
            *o = o.saturating_add(base);
        }
        self
    }
}

/// Adds location to errors on the error path only.
pub trait ResultExt {
    /// Pushes a field name onto the error's path.
    fn field(self, name: &'static str) -> Self;
    /// Pushes an array index onto the error's path.
    fn index(self, i: usize) -> Self;
}

impl<T> ResultExt for Result<T> {
    #[inline]
    fn field(self, name: &'static str) -> Self {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(e.in_field(name)),
        }
    }
    #[inline]
    fn index(self, i: usize) -> Self {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(e.in_index(i)),
        }
    }
}

/// Runs `f` and pushes `name` onto the path of its error: `in_field("data", || { … })`.
#[inline]
pub fn in_field<T>(name: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    f().field(name)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &*self.0;
        if let Some(p) = &i.file {
            write!(f, "{}: ", p.display())?;
        }
        let mut sep = "";
        if let Some(o) = i.offset {
            write!(f, "at byte {o:#x}")?;
            sep = " ";
        }
        match (&i.record, &i.feature) {
            (Some((n, t)), _) => {
                write!(f, "{sep}(record #{n}, {t})")?;
                sep = " ";
            }
            (None, Some(feat)) => {
                write!(f, "{sep}(feature {feat})")?;
                sep = " ";
            }
            (None, None) => {}
        }
        if !i.path.is_empty() {
            write!(
                f,
                "{}field {}",
                if sep.is_empty() { "" } else { ", " },
                self.path_string()
            )?;
            sep = ": ";
        } else if !sep.is_empty() {
            sep = ": ";
        }
        f.write_str(sep)?;
        match &i.kind {
            ErrorKind::UnexpectedEnd { needed, available } => {
                write!(
                    f,
                    "unexpected end of input: needed {needed} bytes, {available} available"
                )
            }
            ErrorKind::Invalid { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            ErrorKind::TooLarge { what, value, limit } => {
                write!(f, "{what} {value} is too large (at most {limit})")
            }
            ErrorKind::Inconsistent(m) => write!(f, "inconsistent value: {m}"),
            ErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            ErrorKind::Other(m) => f.write_str(m),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({self})")
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io(e), None)
    }
}
