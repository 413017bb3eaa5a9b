//! Size facts of a validated spec, computed once for the Rust generator and the docs.
//!
//! [`Layout::of`] answers, for every struct and type: its encoded size when that depends on
//! nothing decoded ([`Layout::fixed_size`]), whether it is *flat* — stored as it is read, so
//! that arrays of it are borrowed bytes decoded element by element ([`Layout::is_flat`]) —,
//! whether its decoded value borrows from the input ([`Layout::borrows`]), and a lower bound
//! of its encoded size ([`Layout::min_size`]) for checking counts before allocating.
//! Keeping these in one place is what makes the format reference agree with the code.

use std::collections::{BTreeSet, HashMap};

use crate::ir::{Expr, Field, Len, Prim, ScalarType, Spec, StructDef, StructKind, TypeRef};

/// The size facts of one struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StructLayout {
    /// Encoded size when it depends neither on data, nor on the context, nor on
    /// parameters; padding (`pad_to`) and `within` sizes included.
    pub fixed_size: Option<u64>,
    /// A plain struct of stored scalars and flat structs, without parameters, conditions,
    /// computed values or padding: its bytes are its value (`rt::FixedElem`).
    pub flat: bool,
    /// Its decoded value borrows from the input (the Rust type has a lifetime).
    pub borrows: bool,
    /// A lower bound of its encoded size.
    pub min_size: u64,
    /// A record reads it from the end of its body (a sample_id trailer).
    pub is_trailer: bool,
}

/// Size facts of every struct of a spec; see the module documentation.
#[derive(Debug, Clone)]
pub struct Layout<'s> {
    spec: &'s Spec,
    structs: HashMap<&'s str, StructLayout>,
}

/// Nesting deeper than this gives a minimum size of 0 (a lower bound still), so that a
/// struct reaching itself through an array cannot recurse without end.
const MAX_DEPTH: u32 = 16;

impl<'s> Layout<'s> {
    /// Computes the layout of every struct of `spec` (which must be validated).
    pub fn of(spec: &'s Spec) -> Self {
        let mut layout = Layout {
            spec,
            structs: spec
                .structs
                .iter()
                .map(|s| (s.name.as_str(), StructLayout::default()))
                .collect(),
        };
        let trailers: BTreeSet<&str> = spec
            .structs
            .iter()
            .filter_map(|s| match &s.kind {
                StructKind::Record {
                    trailer: Some(t), ..
                } => Some(t.ty.as_str()),
                _ => None,
            })
            .collect();
        // Structs may be declared in any order and reach each other: every fact below is a
        // fixed point, starting from "no" and only ever turning to "yes" (or to a size), so
        // a struct that contains itself stays unsized. Flatness comes first: an array of
        // flat elements borrows.
        layout.until_stable(|l, s| {
            let flat = l.struct_is_flat(s);
            (flat && !l.structs[s.name.as_str()].flat).then(|| StructLayout {
                flat,
                ..l.structs[s.name.as_str()]
            })
        });
        layout.until_stable(|l, s| {
            let borrows =
                s.is_bounded() || s.payload.is_some() || s.fields.iter().any(|f| l.borrows(&f.ty));
            (borrows && !l.structs[s.name.as_str()].borrows).then(|| StructLayout {
                borrows,
                ..l.structs[s.name.as_str()]
            })
        });
        layout.until_stable(|l, s| {
            let current = l.structs[s.name.as_str()];
            let size = l.struct_fixed_size(s);
            (size.is_some() && current.fixed_size.is_none()).then_some(StructLayout {
                fixed_size: size,
                ..current
            })
        });
        for s in &spec.structs {
            let min_size = layout.struct_min_size(s, 0);
            let entry = layout
                .structs
                .get_mut(s.name.as_str())
                .expect("every struct");
            entry.min_size = min_size;
            entry.is_trailer = trailers.contains(s.name.as_str());
        }
        layout
    }

    /// Applies `update` to every struct until it changes none.
    fn until_stable(&mut self, update: impl Fn(&Self, &StructDef) -> Option<StructLayout>) {
        let mut changed = true;
        while changed {
            changed = false;
            for s in &self.spec.structs {
                if let Some(new) = update(self, s) {
                    self.structs.insert(s.name.as_str(), new);
                    changed = true;
                }
            }
        }
    }

    /// The facts of the struct named `name`. Panics on a name the spec does not declare.
    pub fn of_struct(&self, name: &str) -> &StructLayout {
        match self.structs.get(name) {
            Some(l) => l,
            None => panic!("unknown struct `{name}`"),
        }
    }

    /// True when values of `ty` borrow from the input.
    pub fn borrows(&self, ty: &TypeRef) -> bool {
        match ty {
            TypeRef::Scalar(_) | TypeRef::Word(_) | TypeRef::Split { .. } => false,
            TypeRef::Struct { name, .. } => {
                self.structs.get(name.as_str()).is_some_and(|l| l.borrows)
            }
            // An array of flat elements is the borrowed bytes themselves (`rt::Array`).
            TypeRef::Array { elem, .. } => self.is_flat(elem) || self.borrows(elem),
            TypeRef::Bytes(_) | TypeRef::Str(_) | TypeRef::CStr | TypeRef::FeatureById(_) => true,
            TypeRef::Switch(sw) => sw.arms.iter().any(|a| self.borrows(&a.ty)),
        }
    }

    /// True when `ty` is flat: a non-`bool` scalar or a flat struct without arguments.
    /// Arrays of flat elements are decoded lazily from borrowed bytes.
    pub fn is_flat(&self, ty: &TypeRef) -> bool {
        match ty {
            TypeRef::Scalar(ScalarType::Prim(Prim::Bool)) => false,
            TypeRef::Scalar(_) => true,
            TypeRef::Struct { name, args } => {
                args.is_empty() && self.structs.get(name.as_str()).is_some_and(|l| l.flat)
            }
            _ => false,
        }
    }

    /// The size of a flat type (see [`Layout::is_flat`]); `None` for any other.
    pub fn flat_size(&self, ty: &TypeRef) -> Option<u64> {
        if self.is_flat(ty) {
            self.fixed_size(ty)
        } else {
            None
        }
    }

    fn struct_is_flat(&self, s: &StructDef) -> bool {
        matches!(s.kind, StructKind::Plain)
            && s.params.is_empty()
            && s.bounded_by.is_none()
            && s.pad_to.is_none()
            && !s.fields.is_empty()
            && s.fields.iter().all(|f| {
                f.computed.is_none()
                    && f.cond.is_none()
                    && f.within.is_none()
                    && self.is_flat(&f.ty)
            })
    }

    /// Encoded size of `ty` when it depends on nothing decoded, on no context value and on
    /// no parameter. Words count their literal size (`word[8]`).
    pub fn fixed_size(&self, ty: &TypeRef) -> Option<u64> {
        let literal = |len: &Len| match len {
            Len::Expr(Expr::Int(n)) => Some(*n),
            _ => None,
        };
        match ty {
            TypeRef::Scalar(ScalarType::Prim(Prim::Bool)) => None,
            TypeRef::Scalar(st) => Some(u64::from(self.spec.scalar_repr(st).size())),
            TypeRef::Word(Expr::Int(n)) => Some(*n),
            TypeRef::Split { hi, lo } => Some(u64::from(hi.size() + lo.size())),
            TypeRef::Array { elem, len } => self.fixed_size(elem)?.checked_mul(literal(len)?),
            TypeRef::Bytes(len) | TypeRef::Str(len) => literal(len),
            TypeRef::Struct { name, .. } => self.structs.get(name.as_str())?.fixed_size,
            TypeRef::Word(_) | TypeRef::CStr | TypeRef::Switch(_) | TypeRef::FeatureById(_) => None,
        }
    }

    /// The bytes field `f` takes when that is fixed: its `within` size if it has one, else
    /// its type's; `None` for a conditional field.
    pub fn field_fixed_size(&self, f: &Field) -> Option<u64> {
        if f.cond.is_some() {
            return None;
        }
        match &f.within {
            Some(Expr::Int(n)) => Some(*n),
            Some(_) => None,
            None => self.fixed_size(&f.ty),
        }
    }

    /// Only plain structs have a size of their own: records and features are bounded by
    /// their container, and keep whatever follows their known fields.
    fn struct_fixed_size(&self, s: &StructDef) -> Option<u64> {
        if !matches!(s.kind, StructKind::Plain) || s.bounded_by.is_some() || s.payload.is_some() {
            return None;
        }
        let mut total = 0u64;
        for f in &s.fields {
            total = total.checked_add(self.field_fixed_size(f)?)?;
        }
        match s.pad_to {
            Some(n) if n > 1 => total.checked_next_multiple_of(u64::from(n)),
            _ => Some(total),
        }
    }

    /// A lower bound of the encoded size of `ty` (for count checks before allocating):
    /// absent conditional fields, empty run-time lengths, the smallest switch arm.
    pub fn min_size(&self, ty: &TypeRef) -> u64 {
        self.min_size_at(ty, 0)
    }

    fn min_size_at(&self, ty: &TypeRef, depth: u32) -> u64 {
        if depth > MAX_DEPTH {
            return 0;
        }
        let len_min = |len: &Len, per: u64| match len {
            Len::Expr(Expr::Int(n)) => n.saturating_mul(per),
            _ => 0,
        };
        match ty {
            TypeRef::Scalar(st) => u64::from(self.spec.scalar_repr(st).size()),
            TypeRef::Word(Expr::Int(n)) => *n,
            // The smaller of the two run-time word sizes.
            TypeRef::Word(_) => 4,
            TypeRef::Split { hi, lo } => u64::from(hi.size() + lo.size()),
            TypeRef::Struct { name, .. } => match self.spec.find_struct(name) {
                Some(s) => self.struct_min_size(s, depth),
                None => 0,
            },
            TypeRef::Array { elem, len } => len_min(len, self.min_size_at(elem, depth + 1)),
            TypeRef::Bytes(len) | TypeRef::Str(len) => len_min(len, 1),
            TypeRef::CStr => 1,
            TypeRef::Switch(sw) => sw
                .arms
                .iter()
                .map(|a| self.min_size_at(&a.ty, depth + 1))
                .min()
                .unwrap_or(0),
            TypeRef::FeatureById(_) => 0,
        }
    }

    fn struct_min_size(&self, s: &StructDef, depth: u32) -> u64 {
        s.fields
            .iter()
            .filter(|f| f.cond.is_none())
            .map(|f| self.min_size_at(&f.ty, depth + 1))
            .fold(0u64, u64::saturating_add)
    }
}
