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

pub use array::{elem_at, Array, ArrayIter, FixedElem};
pub use bits::{
    bitfield_from_file, bitfield_to_file, bits_get, bits_set, fmt_bitfield, fmt_flags,
    remap_bitfield, serialize_bitfield, FlagName,
};
pub use display::{
    ser_hex, ser_hex_named, ser_signed, ser_text, serialize_flags, serialize_hex_u64, DisplayValue,
    Hex, HexNamed, NoNames, Signed, Text, TextValue, ValueNames,
};
pub use endian::{
    get_u16, get_u32, get_u64, BigEndian, Endian, Endianness, LittleEndian, NativeEndian,
};
pub use error::{in_field, Error, ErrorKind, PathElem, Result, ResultExt};
pub use expr::{
    align, check_computed, check_len, check_presence, check_variant, div, eval, fit, in_index,
    no_arm, saturate_u32, sub,
};
pub use reader::Reader;
pub use values::{Bytes, IntoOwned, Payload, Str, Tail};
pub use writer::Writer;

/// The serde version generated code derives with (`#[serde(crate = "::perfdata::rt::serde")]`).
pub use serde;
pub use serde::Serialize;

#[cfg(test)]
mod tests;
