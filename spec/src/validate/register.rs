//! Pass 1: every item name, global across the files, before anything is checked (an item
//! may use items declared after it or in another file).

use crate::ast;

use super::common::PRIM_NAMES;
use super::{Named, Validator};

impl<'a> Validator<'a> {
    pub(super) fn register(&mut self, items: &[&'a ast::Item]) {
        for item in items {
            let Some(name) = item.name() else { continue };
            let named = match item {
                ast::Item::Const(_) => Named::Const,
                ast::Item::Enum(_) => Named::Enum,
                ast::Item::Flags(_) => Named::Flags,
                ast::Item::Bitfield(_) => Named::Bitfield,
                ast::Item::Struct(s) => Named::Struct(s.as_ref()),
                ast::Item::Context(_) => continue,
            };
            if PRIM_NAMES.contains(&name.name.as_str()) {
                self.error(
                    name.span,
                    format!(
                        "`{}` is a primitive type and cannot be redefined",
                        name.name
                    ),
                    "primitive type name",
                );
                continue;
            }
            if let Some((_, first)) = self.items.get(&name.name) {
                let first = self.where_(*first);
                self.error_help(
                    name.span,
                    format!("the name `{}` is defined more than once", name.name),
                    "redefined here",
                    Some(format!("the first definition is at {first}")),
                );
                continue;
            }
            self.items.insert(name.name.clone(), (named, name.span));
        }
    }

    pub(super) fn type_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .items
            .iter()
            .filter(|(_, (n, _))| !matches!(n, Named::Const))
            .map(|(k, _)| k.as_str())
            .collect();
        names.extend(PRIM_NAMES.iter().filter(|p| **p != "bool"));
        names.sort_unstable();
        names
    }
}
