//! The runtime every generated decoder and encoder uses: byte order, bounded readers, the
//! writer, errors, and the zero-copy value types. Hand-written, layout-free.

mod array;
mod bits;
mod display;
mod endian;
mod error;
mod expr;
mod reader;
mod values;
mod writer;

pub use crate::static_endian;
pub use array::{Array, ArrayIter, FixedElem};
pub use bits::{remap_bitfield, FlagName};
pub use display::{DisplayValue, Hex, HexNamed, NoNames, Signed, Text, TextValue, ValueNames};
pub use endian::{
    get_u16, get_u32, get_u64, BigEndian, Endian, Endianness, LittleEndian, NativeEndian,
    StaticEndian,
};
pub use error::{Error, ErrorKind, PathElem, Result, ResultExt};

// What only generated code calls: public for it, hidden from the documented surface
// (as prost's `encoding`).
#[doc(hidden)]
pub use array::elem_at;
#[doc(hidden)]
pub use bits::{
    bitfield_from_file, bitfield_to_file, bits_get, bits_set, fmt_bitfield, fmt_flags,
    serialize_bitfield,
};
#[doc(hidden)]
pub use display::{
    ser_hex, ser_hex_named, ser_signed, ser_text, serialize_flags, serialize_hex_u64,
};
#[doc(hidden)]
pub use error::in_field;
#[doc(hidden)]
pub use expr::{
    align, check_computed, check_len, check_presence, check_variant, div, eval, fit, in_index,
    no_arm, saturate_u32, sub,
};
pub use reader::Reader;
pub use values::{Bytes, IntoOwned, Payload, Str, Tail};
pub use writer::Writer;

/// The serde version generated code derives with (`#[serde(crate = "::perfdata::rt::serde")]`).
#[doc(hidden)]
pub use serde;
pub use serde::Serialize;

#[cfg(test)]
mod tests;
