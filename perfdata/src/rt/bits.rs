//! Mechanics of flags and C bit-fields; the layouts come from generated tables.

use std::fmt;

use super::endian::Endian;

#[inline]
fn ones(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Moves bit-field members between the canonical layout (little-endian positions: member
/// `(pos, width)` at bits `pos ..= pos+width-1`) and the big-endian layout (same member at
/// bits `W-pos-width ..= W-pos-1`, value order unchanged), in a word of `word_bits` bits.
/// `members` are `(name, pos, width)` as the generated `FIELDS` tables list them.
/// `to_canonical`: big-endian layout → canonical; else canonical → big-endian.
pub fn remap_bitfield(
    value: u64,
    word_bits: u32,
    members: &[(&str, u8, u8)],
    to_canonical: bool,
) -> u64 {
    let mut out = 0u64;
    for &(_, pos, width) in members {
        let (pos, width) = (u32::from(pos), u32::from(width));
        if width == 0 || pos + width > word_bits {
            continue;
        }
        let be_pos = word_bits - pos - width;
        let (from, to) = if to_canonical {
            (be_pos, pos)
        } else {
            (pos, be_pos)
        };
        out |= ((value >> from) & ones(width)) << to;
    }
    out
}

/// A bit-field word as read in file order `e` → canonical value.
#[inline]
pub fn bitfield_from_file<E: Endian>(
    raw: u64,
    word_bits: u32,
    members: &[(&str, u8, u8)],
    e: E,
) -> u64 {
    if e.is_big() {
        remap_bitfield(raw, word_bits, members, true)
    } else {
        raw
    }
}

/// A canonical bit-field value → the word to write in order `e`.
#[inline]
pub fn bitfield_to_file<E: Endian>(
    value: u64,
    word_bits: u32,
    members: &[(&str, u8, u8)],
    e: E,
) -> u64 {
    if e.is_big() {
        remap_bitfield(value, word_bits, members, false)
    } else {
        value
    }
}

/// Reads member `(pos, width)` of a canonical value.
#[inline]
pub fn bits_get(value: u64, pos: u8, width: u8) -> u64 {
    (value >> pos) & ones(u32::from(width))
}

/// Replaces member `(pos, width)` of a canonical value (extra high bits of `v` are dropped).
#[inline]
pub fn bits_set(value: u64, pos: u8, width: u8, v: u64) -> u64 {
    let m = ones(u32::from(width)) << pos;
    (value & !m) | ((v << pos) & m)
}

/// One named member of a flags type, for [`fmt_flags`].
pub struct FlagName {
    /// The member's name in the spec (`IP`, `CPUMODE`).
    pub name: &'static str,
    /// Its lowest bit.
    pub lo: u8,
    /// Its highest bit (`lo` for a single-bit flag; a wider member is shown with its
    /// value, `CPUMODE=2`).
    pub hi: u8,
}

/// Debug form of a flags value: `IP | TID | CPUMODE=2 | 0x40000000`, `0` when empty.
pub fn fmt_flags(f: &mut fmt::Formatter<'_>, value: u64, names: &[FlagName]) -> fmt::Result {
    let mut left = value;
    let mut first = true;
    let sep = |f: &mut fmt::Formatter<'_>, first: &mut bool| -> fmt::Result {
        if !*first {
            f.write_str(" | ")?;
        }
        *first = false;
        Ok(())
    };
    for n in names {
        let width = u32::from(n.hi - n.lo) + 1;
        let mask = ones(width) << n.lo;
        if value & mask == 0 {
            continue;
        }
        if left & mask == 0 {
            // Already shown (an alias).
            continue;
        }
        left &= !mask;
        sep(f, &mut first)?;
        if n.lo == n.hi {
            f.write_str(n.name)?;
        } else {
            write!(f, "{}={}", n.name, (value & mask) >> n.lo)?;
        }
    }
    if left != 0 || first {
        sep(f, &mut first)?;
        write!(f, "{left:#x}")?;
    }
    Ok(())
}

/// Debug form of a bit-field value: the non-zero members, `{}` when all are zero.
pub fn fmt_bitfield(
    f: &mut fmt::Formatter<'_>,
    type_name: &str,
    value: u64,
    members: &[(&str, u8, u8)],
) -> fmt::Result {
    f.write_str(type_name)?;
    f.write_str(" { ")?;
    let mut first = true;
    for &(name, pos, width) in members {
        let v = bits_get(value, pos, width);
        if v == 0 {
            continue;
        }
        if !first {
            f.write_str(", ")?;
        }
        first = false;
        if width == 1 {
            f.write_str(name)?;
        } else {
            write!(f, "{name}: {v}")?;
        }
    }
    f.write_str(if first { "}" } else { " }" })
}

/// Serializes a bit-field value as a map of its non-zero members.
pub fn serialize_bitfield<S: serde::Serializer>(
    s: S,
    value: u64,
    members: &[(&str, u8, u8)],
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let n = members
        .iter()
        .filter(|&&(_, p, w)| bits_get(value, p, w) != 0)
        .count();
    let mut m = s.serialize_map(Some(n))?;
    for &(name, pos, width) in members {
        let v = bits_get(value, pos, width);
        if v != 0 {
            m.serialize_entry(name, &v)?;
        }
    }
    m.end()
}
