//! Named values and their comparison: perf's side (parsed from its text) and our side
//! (from the decode) are both turned into [`Fact`]s with the same keys, then compared.

use std::collections::BTreeMap;
use std::fmt;

/// A value, compared numerically when it is a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Num(i128),
    Text(String),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Num(n) if *n > 0xffff || *n < -0xffff => write!(f, "{n} ({n:#x})"),
            Val::Num(n) => write!(f, "{n}"),
            Val::Text(s) => {
                let s: String = s.chars().take(120).collect();
                write!(f, "{s:?}")
            }
        }
    }
}

impl From<i128> for Val {
    fn from(v: i128) -> Self {
        Val::Num(v)
    }
}
impl From<u64> for Val {
    fn from(v: u64) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<u32> for Val {
    fn from(v: u32) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<u16> for Val {
    fn from(v: u16) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<u8> for Val {
    fn from(v: u8) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<i32> for Val {
    fn from(v: i32) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::Num(i128::from(v))
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Val::Text(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::Text(v.to_string())
    }
}

/// A named value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub key: String,
    pub val: Val,
}

/// An ordered list of facts with unique keys (a repeated key gets `#2`, `#3`...).
#[derive(Debug, Default, Clone)]
pub struct Facts {
    pub list: Vec<Fact>,
    seen: BTreeMap<String, usize>,
}

impl Facts {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, key: impl Into<String>, val: impl Into<Val>) {
        let mut key = key.into();
        let n = self.seen.entry(key.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            key = format!("{key}#{n}");
        }
        self.list.push(Fact {
            key,
            val: val.into(),
        });
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn extend(&mut self, other: Facts) {
        for f in other.list {
            self.push(f.key, f.val);
        }
    }
}

/// Parses a number as perf prints it: decimal (possibly negative) or `0x` hex.
pub fn num(s: &str) -> Option<i128> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i128::from_str_radix(h, 16).ok();
    }
    s.parse::<i128>().ok()
}

/// Parses bare hex digits (perf's `%016lx` without `0x`).
pub fn hex(s: &str) -> Option<i128> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    i128::from_str_radix(s, 16).ok()
}

/// A number parsed from perf's text, or the text itself when it is not one (so that the
/// comparison reports it instead of dropping it).
pub fn num_or_text(s: &str) -> Val {
    num(s).map_or_else(|| Val::Text(s.trim().to_string()), Val::Num)
}

/// Bare hex digits parsed from perf's text, or the text itself when they are not.
pub fn hex_or_text(s: &str) -> Val {
    hex(s).map_or_else(|| Val::Text(s.trim().to_string()), Val::Num)
}

/// One difference between perf and us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Where (record offset, feature...).
    pub at: String,
    pub key: String,
    pub perf: Option<Val>,
    pub ours: Option<Val>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Val>| v.as_ref().map_or("(absent)".to_string(), Val::to_string);
        write!(
            f,
            "{}{}{}: perf {} vs ours {}",
            self.at,
            if self.at.is_empty() { "" } else { " " },
            self.key,
            show(&self.perf),
            show(&self.ours)
        )
    }
}

/// Compares perf's facts with ours: every key on either side must be on the other with an
/// equal value. Returns the number of values that agreed.
pub fn compare(at: &str, perf: &Facts, ours: &Facts, out: &mut Vec<Mismatch>) -> usize {
    let mine: BTreeMap<&str, &Val> = ours.list.iter().map(|f| (f.key.as_str(), &f.val)).collect();
    let theirs: BTreeMap<&str, &Val> = perf.list.iter().map(|f| (f.key.as_str(), &f.val)).collect();
    let mut agreed = 0;
    for f in &perf.list {
        match mine.get(f.key.as_str()) {
            Some(v) if **v == f.val => agreed += 1,
            other => out.push(Mismatch {
                at: at.to_string(),
                key: f.key.clone(),
                perf: Some(f.val.clone()),
                ours: other.map(|v| (*v).clone()),
            }),
        }
    }
    for f in &ours.list {
        if !theirs.contains_key(f.key.as_str()) {
            out.push(Mismatch {
                at: at.to_string(),
                key: f.key.clone(),
                perf: None,
                ours: Some(f.val.clone()),
            });
        }
    }
    agreed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_reports_both_directions() {
        let mut p = Facts::new();
        p.push("a", 1u64);
        p.push("b", "x");
        p.push("a", 2u64);
        let mut o = Facts::new();
        o.push("a", 1u64);
        o.push("b", "y");
        o.push("c", 3u64);
        let mut m = vec![];
        assert_eq!(compare("here", &p, &o, &mut m), 1);
        let keys: Vec<_> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["b", "a#2", "c"]);
        assert!(m[0].to_string().contains("perf \"x\" vs ours \"y\""));
    }

    #[test]
    fn numbers() {
        assert_eq!(num("0x1f"), Some(31));
        assert_eq!(num("-1"), Some(-1));
        assert_eq!(num("18446744073709551615"), Some(u64::MAX as i128));
        assert_eq!(hex("fffffffffffffe00"), Some(0xfffffffffffffe00));
        assert_eq!(num("x"), None);
    }
}
