//! Items without fields — constants, enums, flags, bit-fields — and the integer literals
//! they are made of (also used for ids and switch patterns): in range of their type.

use crate::ast::{self, Ident, IntLit};
use crate::ir::{self, Prim};

use super::common::{is_signed, is_unsigned, prim_named, width_mask};
use super::suggest::did_you_mean;
use super::Validator;

impl<'a> Validator<'a> {
    /// An unsigned integer type for an enum, flags or bitfield.
    fn repr(&mut self, repr: &Ident, what: &str) -> Option<Prim> {
        match prim_named(&repr.name) {
            Some(p) if is_unsigned(p) => Some(p),
            Some(p) => {
                let suggestion = match p {
                    Prim::I8 => Some("u8"),
                    Prim::I16 => Some("u16"),
                    Prim::I32 => Some("u32"),
                    Prim::I64 => Some("u64"),
                    _ => None,
                };
                self.error_help(
                    repr.span,
                    format!(
                        "the representation of {what} must be an unsigned integer type, \
                         not `{}`",
                        repr.name
                    ),
                    "not an unsigned integer",
                    Some(match suggestion {
                        Some(s) => format!(
                            "use `{s}`; negative values can still be written and are stored \
                             as two's complement"
                        ),
                        None => "use one of `u8`, `u16`, `u32`, `u64`".to_string(),
                    }),
                );
                None
            }
            None => {
                self.error_help(
                    repr.span,
                    format!("unknown integer type `{}`", repr.name),
                    "not an unsigned integer type",
                    did_you_mean(&repr.name, ["u8", "u16", "u32", "u64"])
                        .or_else(|| Some("use one of `u8`, `u16`, `u32`, `u64`".to_string())),
                );
                None
            }
        }
    }

    /// The value of `lit` in the width of `prim`, negative values in two's complement.
    /// Unsigned types accept negative literals down to the signed minimum of their width.
    pub(super) fn lit_value(&mut self, lit: &IntLit, prim: Prim) -> Option<u64> {
        // `bool` has no width; it never reaches here, but 64 bits is harmless if it does.
        let bits = match prim.size() {
            0 => 64,
            n => n * 8,
        };
        let mask = width_mask(bits);
        let half = 1u64 << (bits - 1);
        let (ok, range) = if lit.negative {
            let min = half;
            let range = if is_signed(prim) {
                format!("-{half}..={}", half - 1)
            } else {
                format!("-{half}..={mask}")
            };
            (lit.magnitude <= min, range)
        } else if is_signed(prim) {
            (lit.magnitude < half, format!("-{half}..={}", half - 1))
        } else {
            (lit.magnitude <= mask, format!("-{half}..={mask}"))
        };
        if !ok {
            let sign = if lit.negative { "-" } else { "" };
            self.error_help(
                lit.span,
                format!(
                    "`{sign}{}` is out of range for `{}`",
                    lit.magnitude,
                    prim.name()
                ),
                "out of range",
                Some(format!(
                    "`{}` holds {range} (negative values as two's complement)",
                    prim.name()
                )),
            );
            return None;
        }
        Some(if lit.negative {
            lit.magnitude.wrapping_neg() & mask
        } else {
            lit.magnitude
        })
    }

    /// A non-negative literal no larger than `max`.
    pub(super) fn small_lit(&mut self, lit: &IntLit, max: u64, what: &str) -> Option<u64> {
        if lit.negative || lit.magnitude > max {
            let sign = if lit.negative { "-" } else { "" };
            self.error(
                lit.span,
                format!(
                    "{what} must be between 0 and {max}, found `{sign}{}`",
                    lit.magnitude
                ),
                "out of range",
            );
            return None;
        }
        Some(lit.magnitude)
    }

    pub(super) fn const_item(&mut self, c: &ast::ConstItem) -> Option<ir::ConstDef> {
        let ty = match prim_named(&c.ty.name) {
            Some(p) if p != Prim::Bool && p != Prim::F64 => p,
            _ => {
                self.error_help(
                    c.ty.span,
                    format!("a constant must have an integer type, not `{}`", c.ty.name),
                    "not an integer type",
                    Some(
                        "constants are integers: use one of `u8` … `u64`, `i8` … `i64`".to_string(),
                    ),
                );
                return None;
            }
        };
        let value = self.lit_value(&c.value, ty)?;
        Some(ir::ConstDef {
            name: c.name.name.clone(),
            doc: c.doc.clone(),
            ty,
            value,
            span: self.ir_span(c.name.span),
        })
    }

    pub(super) fn enum_item(&mut self, e: &ast::EnumItem) -> Option<ir::EnumDef> {
        self.check_unique(e.variants.iter().map(|v| &v.name), "variant");
        let repr = self.repr(&e.repr, "an enum")?;
        let mut variants = Vec::new();
        for v in &e.variants {
            // Equal values are allowed: they are aliases.
            if let Some(value) = self.lit_value(&v.value, repr) {
                variants.push(ir::EnumVariant {
                    name: v.name.name.clone(),
                    doc: v.doc.clone(),
                    value,
                });
            }
        }
        Some(ir::EnumDef {
            name: e.name.name.clone(),
            doc: e.doc.clone(),
            repr,
            variants,
            span: self.ir_span(e.name.span),
        })
    }

    pub(super) fn flags_item(&mut self, f: &ast::FlagsItem) -> Option<ir::FlagsDef> {
        self.check_unique(f.members.iter().map(|m| &m.name), "flag");
        let repr = self.repr(&f.repr, "flags")?;
        let bits = u64::from(repr.size() * 8);
        let mut members = Vec::new();
        for m in &f.members {
            let what = format!("a bit of `{}`", repr.name());
            let Some(lo) = self.small_lit(&m.lo, bits - 1, &what) else {
                continue;
            };
            let hi = match &m.hi {
                None => lo,
                Some(hi_lit) => {
                    let Some(hi) = self.small_lit(hi_lit, bits - 1, &what) else {
                        continue;
                    };
                    if hi < lo {
                        self.error_help(
                            m.lo.span.to(hi_lit.span),
                            format!("the bit range `{lo}..{hi}` is empty"),
                            "empty range",
                            Some(format!("write the low bit first: `{hi}..{lo}`")),
                        );
                        continue;
                    }
                    hi
                }
            };
            members.push(ir::FlagBit {
                name: m.name.name.clone(),
                doc: m.doc.clone(),
                lo: lo as u8,
                hi: hi as u8,
            });
        }
        Some(ir::FlagsDef {
            name: f.name.name.clone(),
            doc: f.doc.clone(),
            repr,
            bits: members,
            span: self.ir_span(f.name.span),
        })
    }

    pub(super) fn bitfield_item(&mut self, b: &ast::BitfieldItem) -> Option<ir::BitfieldDef> {
        self.check_unique(b.members.iter().map(|m| &m.name), "bitfield member");
        let repr = self.repr(&b.repr, "a bitfield")?;
        let bits = u64::from(repr.size() * 8);
        let mut members = Vec::new();
        let mut pos = 0u64;
        let mut widths_ok = true;
        for m in &b.members {
            let lit = m.width;
            if lit.negative || lit.magnitude == 0 || lit.magnitude > bits {
                let sign = if lit.negative { "-" } else { "" };
                self.error(
                    lit.span,
                    format!(
                        "a member of a `{}` bitfield is 1 to {bits} bits wide, not `{sign}{}`",
                        repr.name(),
                        lit.magnitude
                    ),
                    "invalid width",
                );
                widths_ok = false;
                continue;
            }
            if pos < bits {
                members.push(ir::BitfieldMember {
                    name: m.name.name.clone(),
                    doc: m.doc.clone(),
                    pos: pos as u8,
                    width: lit.magnitude as u8,
                });
            }
            pos += lit.magnitude;
        }
        if widths_ok && pos != bits {
            let help = if pos < bits {
                format!(
                    "add a member for the {} missing bit(s), e.g. `reserved: {}`",
                    bits - pos,
                    bits - pos
                )
            } else {
                format!("remove {} bit(s) from the members", pos - bits)
            };
            self.error_help(
                b.name.span,
                format!(
                    "the members of bitfield `{}` are {pos} bits wide in total, but its \
                     representation `{}` has {bits}",
                    b.name.name,
                    repr.name()
                ),
                format!("{pos} bits instead of {bits}"),
                Some(help),
            );
            return None;
        }
        Some(ir::BitfieldDef {
            name: b.name.name.clone(),
            doc: b.doc.clone(),
            repr,
            members,
            span: self.ir_span(b.name.span),
        })
    }
}
