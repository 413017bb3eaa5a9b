//! The text after a profile's binary part: `/proc/self/maps` lines as gperftools writes
//! them, `NAME=value` lines (`build=PATH`) whose `$NAME` later paths use, anything else.

use serde::Serialize;

/// One memory mapping: `start-end perms offset dev inode path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mapping {
    /// First address of the mapping (hex in the text).
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// `r-xp` and the like.
    pub perms: String,
    /// File offset of `start`.
    pub offset: u64,
    /// `major:minor` (gperftools always writes `00:00`).
    pub dev: String,
    /// Inode of the mapped file (decimal in the text; gperftools always writes 0).
    pub inode: u64,
    /// The mapped file; empty for anonymous mappings. May contain spaces.
    pub path: String,
}

/// One line of the map text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum MapLine {
    /// A `/proc/self/maps` line: one mapping of the profiled process.
    Mapping(Mapping),
    /// `NAME=value`: `$NAME` in later paths stands for `value` (gperftools: `build=`).
    Var {
        /// The name before `=` (ASCII letters, digits and `_`), without the `$`.
        name: String,
        /// The text after `=`, trimmed.
        value: String,
    },
    /// Anything else, kept as it was (readers ignore it).
    Other(String),
}

/// Splits the map text into lines and recognises each (invalid UTF-8 is replaced).
pub fn parse_map_text(text: &[u8]) -> Vec<MapLine> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> MapLine {
    if let Some(m) = parse_mapping(line) {
        return MapLine::Mapping(m);
    }
    if let Some((name, value)) = line.split_once('=') {
        let name = name.trim();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return MapLine::Var {
                name: name.to_string(),
                value: value.trim().to_string(),
            };
        }
    }
    MapLine::Other(line.to_string())
}

/// `start-end perms offset maj:min inode [path]`; `None` when the line is not one.
fn parse_mapping(line: &str) -> Option<Mapping> {
    let mut rest = line.trim_start();
    let mut next = || -> Option<&str> {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (tok, after) = rest.split_at(end);
        rest = after.trim_start();
        (!tok.is_empty()).then_some(tok)
    };
    let (start, end) = next()?.split_once('-')?;
    let perms = next()?;
    let offset = next()?;
    let dev = next()?;
    let inode = next()?;
    let (maj, min) = dev.split_once(':')?;
    let hex = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(s, 16).ok()
    };
    let ok_perms = !perms.is_empty() && perms.bytes().all(|b| b"rwxps-".contains(&b));
    if !ok_perms || hex(maj).is_none() || hex(min).is_none() {
        return None;
    }
    if !inode.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Mapping {
        start: hex(start)?,
        end: hex(end)?,
        perms: perms.to_string(),
        offset: hex(offset)?,
        dev: dev.to_string(),
        inode: inode.parse().ok()?,
        path: rest.trim_end().to_string(),
    })
}

/// The mappings of `lines`, with `$NAME` in each path replaced by the value of the last
/// `NAME=value` line before it (as the perl `pprof` does for `$build`).
pub fn resolve_mappings(lines: &[MapLine]) -> Vec<Mapping> {
    let mut vars: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for line in lines {
        match line {
            MapLine::Var { name, value } => {
                vars.retain(|(n, _)| n != name);
                vars.push((name, value));
            }
            MapLine::Mapping(m) => {
                let mut m = m.clone();
                if m.path.contains('$') {
                    // Longer names first, so that `$build` does not eat `$builder`.
                    let mut sorted = vars.clone();
                    sorted.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
                    for (name, value) in sorted {
                        m.path = m.path.replace(&format!("${name}"), value);
                    }
                }
                out.push(m);
            }
            MapLine::Other(_) => {}
        }
    }
    out
}

/// A mapping as gperftools writes it (`ProcMapsIterator::FormatLine`), with its newline.
pub fn format_mapping(m: &Mapping) -> String {
    format!(
        "{:08x}-{:08x} {} {:08x} {} {:<11} {}\n",
        m.start, m.end, m.perms, m.offset, m.dev, m.inode, m.path
    )
}
