//! Display attributes of fields (`@hex`, `@hex(Enum)`, `@signed`, `@text`, `@name_by`):
//! which fields they apply to; `@name_by` paths are checked once a structure's fields are
//! all known.

use crate::ast::{self, Ident};
use crate::ir::{self, Prim, ScalarType, TypeRef};

use super::common::describe_type;
use super::{Named, Validator};

impl<'a> Validator<'a> {
    /// Checks a field's display attribute: `@hex` / `@hex(Enum)` / `@signed` on an
    /// unsigned integer field (a primitive or a word) or an array of those;
    /// `@name_by(field.member, set, clear)` on any field.
    pub(super) fn display(
        &mut self,
        d: &ast::DisplayDecl,
        field: &str,
        ty: &TypeRef,
    ) -> Option<ir::Display> {
        let mut elem = ty;
        while let TypeRef::Array { elem: e, .. } = elem {
            elem = e;
        }
        let unsigned = matches!(
            elem,
            TypeRef::Scalar(ScalarType::Prim(
                Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64
            )) | TypeRef::Word(_)
        );
        let display = match (d.name.name.as_str(), d.args.as_slice()) {
            ("hex", []) => ir::Display::Hex {
                names: None,
                prefix: None,
            },
            ("hex", [arg] | [arg, _]) => match self.items.get(&arg.name).map(|x| &x.0) {
                Some(Named::Enum) => ir::Display::Hex {
                    names: Some(arg.name.clone()),
                    prefix: d.args.get(1).map(|p| p.name.clone()),
                },
                _ => {
                    self.error_help(
                        arg.span,
                        format!("`@hex({})`: `{}` is not an enum", arg.name, arg.name),
                        "not an enum",
                        Some("the argument of `@hex` names an enum whose values are printed by name (e.g. `@hex(CallchainContext)`)".to_string()),
                    );
                    return None;
                }
            },
            ("signed", []) => ir::Display::Signed,
            ("text", []) => {
                if !matches!(ty, TypeRef::Bytes(_)) {
                    self.error_help(
                        d.span,
                        format!("`@text` on field `{field}`, which is {}", describe_type(ty)),
                        "display attribute here",
                        Some("`@text` applies to `bytes[…]` fields that hold text; `str` and `cstr` are text already".to_string()),
                    );
                    return None;
                }
                return Some(ir::Display::Text);
            }
            ("name_by", [by, set, clear]) => {
                let display = self.name_by(by, set, clear)?;
                return Some(display);
            }
            (name @ ("hex" | "signed" | "text" | "name_by"), args) => {
                let span = args.first().map_or(d.name.span, |a| a.span);
                self.error_help(
                    span,
                    format!(
                        "`@{name}` takes {}",
                        match name {
                            "hex" => "no argument, an enum name, or an enum name and a prefix",
                            "signed" | "text" => "no argument",
                            _ => "three arguments: `field.member, name_if_set, name_if_clear`",
                        }
                    ),
                    "wrong arguments",
                    None,
                );
                return None;
            }
            (other, _) => {
                self.error_help(
                    d.name.span,
                    format!("unknown display attribute `@{other}`"),
                    "unknown attribute",
                    Some("display attributes are `@hex`, `@hex(Enum)`, `@signed`, `@text` and `@name_by(field.member, if_set, if_clear)`".to_string()),
                );
                return None;
            }
        };
        if !unsigned {
            self.error_help(
                d.span,
                format!(
                    "`@{}` on field `{field}`, which is {}",
                    d.name.name,
                    describe_type(ty)
                ),
                "display attribute here",
                Some("display attributes apply to unsigned integer fields (`u8`…`u64`, `word[…]`) and arrays of them".to_string()),
            );
            return None;
        }
        Some(display)
    }

    /// `@name_by(field.member, set, clear)`; that `field` is a bit-field field of the
    /// structure with a one-bit `member` is checked once all its fields are known.
    fn name_by(&mut self, by: &Ident, set: &Ident, clear: &Ident) -> Option<ir::Display> {
        let Some((field, member)) = by.name.split_once('.') else {
            self.error_help(
                by.span,
                format!("`@name_by({})`: expected `field.member`", by.name),
                "not a `field.member` path",
                Some("the first argument names a one-bit member of a bit-field field of the structure (`attr_flags.freq`)".to_string()),
            );
            return None;
        };
        self.pending_name_by
            .push((by.span, field.to_string(), member.to_string()));
        Some(ir::Display::NameBy {
            field: field.to_string(),
            member: member.to_string(),
            set: set.name.clone(),
            clear: clear.name.clone(),
        })
    }

    /// Checks the `@name_by` paths of a structure against its fields.
    pub(super) fn check_name_by(&mut self, fields: &[ir::Field]) {
        for (span, field, member) in std::mem::take(&mut self.pending_name_by) {
            let one_bit = fields
                .iter()
                .find(|f| f.name == field && f.cond.is_none())
                .and_then(|f| match &f.ty {
                    TypeRef::Scalar(ScalarType::Bitfield(b)) => self.bitfield_members.get(b),
                    _ => None,
                })
                .is_some_and(|members| members.iter().any(|(m, w)| *m == member && *w == 1));
            if !one_bit {
                self.error_help(
                    span,
                    format!("`@name_by({field}.{member})`: `{field}` is not an unconditional bit-field field of this structure with a one-bit member `{member}`"),
                    "not a one-bit bit-field member",
                    None,
                );
            }
        }
    }
}
