//! Check 19: `perfdata annotate -l` against `perf annotate --stdio -l`, function by
//! function and instruction by instruction: the same addresses, each instruction's
//! percentage to 0.01, the instruction text (objdump's, which perf reprints) for at
//! least [`TEXT_SHARE`] of them, the source lines (objdump -S's, numbered as perf
//! numbers them) before each instruction for at least [`SOURCE_SHARE`], and every
//! function's `-l` summary. objdump -l's own lines between instructions (the inlined
//! functions' names, relative paths' positions) come from two DWARF readers, binutils'
//! and gimli's, which name inlined C++ functions differently: they are not compared.

use crate::analyses::{options, os_args, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::analyses::annotate::{self, listing, AnnotateOptions};
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;

/// The share of instructions whose text must equal perf's.
pub const TEXT_SHARE: f64 = 0.99;

/// The share of instructions with source lines before them whose source lines must
/// equal perf's: the rest are where gimli's line table reading and binutils' differ.
pub const SOURCE_SHARE: f64 = 0.99;

/// One instruction line of a listing: its percentage and text, and the source lines
/// printed before it (since the instruction before).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub percent: f64,
    pub text: String,
    /// `LINE_NUMBER TEXT` of each source line before it (objdump -S's), without the
    /// lines of objdump -l (function names, positions) and blank lines.
    pub source: Vec<String>,
}

/// One function of a listing: its `-l` summary and its instruction lines by address.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionListing {
    /// `(percent, file:line)`, as printed.
    pub summary: Vec<(f64, String)>,
    pub lines: BTreeMap<u64, Line>,
}

/// A listing parsed: per function (its header line), its lines.
pub type Listing = BTreeMap<String, FunctionListing>;

/// Whether a line between instructions is objdump -l's: a function's name (`mix():`,
/// `std::swap<Item>(Item&, Item&):`, `f(long) const:`), a position (`./x.c:12`, with a
/// discriminator), or objdump's own (`Disassembly of section`, `<sym>:`). Such lines
/// come from binutils' reading of the DWARF where ours come from gimli's, and are not
/// source lines. A source line ending in `):` (`case f(x):`) is taken for a name too.
fn objdump_line(t: &str) -> bool {
    if t.starts_with("Disassembly of section ") {
        return true;
    }
    let Some(body) = t.strip_suffix(':') else {
        return is_position(t);
    };
    // GCC's clones: `f(int) [clone .part.0]`.
    let body = match body.rsplit_once(" [clone ") {
        Some((name, _)) if body.ends_with(']') => name,
        _ => body,
    };
    if body.ends_with('>') && body.contains(" <") {
        return true;
    }
    let quals = body.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == ' ' || c == '&');
    quals.ends_with(')') && body.contains('(')
}

/// `FILE:LINE` or `FILE:LINE (discriminator N)`.
fn is_position(t: &str) -> bool {
    let t = t.split(" (discriminator ").next().unwrap_or(t);
    match t.rsplit_once(':') {
        Some((file, n)) => {
            !file.is_empty()
                && !file.contains(' ')
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Parses perf annotate --stdio's text (or ours), with or without source and `-l`.
pub fn parse(text: &str) -> Listing {
    let mut out = Listing::new();
    let mut current: Option<String> = None;
    let mut summary: Vec<(f64, String)> = vec![];
    let mut in_summary = false;
    let mut pending: Vec<String> = vec![];
    for line in text.lines() {
        if line.starts_with("Sorted summary for file ") {
            in_summary = true;
            summary.clear();
            continue;
        }
        if line.starts_with(" Percent |") {
            in_summary = false;
            current = Some(line.to_string());
            pending.clear();
            out.entry(line.to_string()).or_default().summary = std::mem::take(&mut summary);
            continue;
        }
        if in_summary {
            // ` PCT file:line`
            if let Some((pct, path)) = line.trim_start().split_once(' ') {
                if let Ok(p) = pct.parse::<f64>() {
                    summary.push((p, path.to_string()));
                }
            }
            continue;
        }
        let Some(f) = &current else { continue };
        // ` PCT : ADDR:TEXT`, or `         : N    TEXT`.
        let Some((pct, rest)) = line.split_once(" :") else {
            continue;
        };
        let Ok(percent) = pct.trim().parse::<f64>() else {
            if pct.trim().is_empty() {
                let rest = rest.trim_start();
                let t = rest
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start();
                if !t.is_empty() && !objdump_line(t) {
                    let n = &rest[..rest.len()
                        - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len()];
                    pending.push(format!("{n} {t}"));
                }
            }
            continue;
        };
        let rest = rest.trim_start();
        let Some((addr, text)) = rest.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        // `-l`'s ` // file:line` after the text.
        let text = text.split(" // ").next().unwrap_or(text);
        if let Some(l) = out.get_mut(f) {
            l.lines.insert(
                addr,
                Line {
                    percent,
                    text: text.trim().to_string(),
                    source: std::mem::take(&mut pending),
                },
            );
        }
    }
    out
}

/// How two listings compare.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Functions in both.
    pub functions: usize,
    /// Instructions of perf's in those functions.
    pub instructions: usize,
    /// With the same address and percentage (to 0.01).
    pub placed: usize,
    /// With the same text too.
    pub same_text: usize,
    /// What differs, one line each.
    pub differences: Vec<String>,
    /// Text differences, one line each (perf's, then ours).
    pub text_differences: Vec<String>,
    /// Instructions with source lines before them, in perf's listing or ours.
    pub with_source: usize,
    /// Of those, with the same source lines.
    pub same_source: usize,
    /// Source differences, one line each.
    pub source_differences: Vec<String>,
    /// Functions with a `-l` summary in either listing, and with equal summaries.
    pub summaries: usize,
    /// Of those, equal (the same lines in the same order, percentages to 0.01).
    pub same_summaries: usize,
    /// Summary differences, one line each.
    pub summary_differences: Vec<String>,
}

impl Comparison {
    /// Every address and percentage equal, and the text share reached.
    pub fn passes(&self) -> bool {
        self.differences.is_empty()
            && self.instructions > 0
            && self.same_text as f64 >= TEXT_SHARE * self.instructions as f64
            && self.same_source as f64 >= SOURCE_SHARE * self.with_source as f64
            && self.same_summaries == self.summaries
    }

    /// The check's outcome.
    pub fn outcome(&self) -> Outcome {
        let share = |a: usize, b: usize| {
            if b == 0 {
                100.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        let mut summary = format!(
            "{} functions, {} instructions: {} at the same address and percentage, {} ({:.2}%) with the same text",
            self.functions,
            self.instructions,
            self.placed,
            self.same_text,
            share(self.same_text, self.instructions)
        );
        if self.with_source > 0 {
            summary.push_str(&format!(
                "; {} of {} ({:.2}%) with the same source lines",
                self.same_source,
                self.with_source,
                share(self.same_source, self.with_source)
            ));
        }
        if self.summaries > 0 {
            summary.push_str(&format!(
                "; -l summaries: {} of {} equal",
                self.same_summaries, self.summaries
            ));
        }
        if self.passes() {
            let mut s = summary;
            if let Some(d) = self.source_differences.first() {
                s.push_str(&format!("; source differs at: {d}"));
            }
            if !self.text_differences.is_empty() {
                s.push_str(&format!(
                    "; text differs at: {}",
                    self.text_differences
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            Outcome::Pass(s)
        } else {
            let mut v = vec![summary];
            v.extend(self.differences.iter().take(10).cloned());
            v.extend(self.text_differences.iter().take(5).cloned());
            v.extend(self.source_differences.iter().take(5).cloned());
            v.extend(self.summary_differences.iter().take(5).cloned());
            Outcome::Fail(v)
        }
    }
}

/// Compares our listing with perf's.
pub fn compare(theirs: &Listing, ours: &Listing) -> Comparison {
    let mut c = Comparison::default();
    for (header, theirs_f) in theirs {
        let lines = &theirs_f.lines;
        let Some(mine_f) = ours.get(header) else {
            c.differences
                .push(format!("perf annotates, we do not: {}", header.trim()));
            continue;
        };
        let mine = &mine_f.lines;
        c.functions += 1;
        // perf inject --jit's objects of a jitdump without debug info carry a line
        // table whose file names are uninitialized bytes (genelf): perf prints them.
        let garbled = theirs_f
            .summary
            .iter()
            .any(|(_, p)| p.chars().any(|c| c.is_control() || c == '\u{fffd}'));
        if !garbled && (!theirs_f.summary.is_empty() || !mine_f.summary.is_empty()) {
            c.summaries += 1;
            let same = theirs_f.summary.len() == mine_f.summary.len()
                && theirs_f
                    .summary
                    .iter()
                    .zip(&mine_f.summary)
                    .all(|(a, b)| a.1 == b.1 && (a.0 - b.0).abs() <= 0.0101);
            if same {
                c.same_summaries += 1;
            } else {
                c.summary_differences.push(format!(
                    "{}: -l summary: perf {:?}, ours {:?}",
                    header.trim(),
                    theirs_f.summary,
                    mine_f.summary
                ));
            }
        }
        for (addr, l) in lines {
            if let Some(m) = mine.get(addr) {
                if !l.source.is_empty() || !m.source.is_empty() {
                    c.with_source += 1;
                    if l.source == m.source {
                        c.same_source += 1;
                    } else {
                        c.source_differences.push(format!(
                            "{addr:x}: perf {:?}, ours {:?}",
                            l.source, m.source
                        ));
                    }
                }
            }
            c.instructions += 1;
            match mine.get(addr) {
                None => c.differences.push(format!(
                    "{}: no instruction at {addr:x} in ours",
                    header.trim()
                )),
                Some(m) if (m.percent - l.percent).abs() > 0.0101 => c.differences.push(format!(
                    "{}: {addr:x}: perf {:.2}%, ours {:.2}%",
                    header.trim(),
                    l.percent,
                    m.percent
                )),
                Some(m) => {
                    c.placed += 1;
                    if m.text == l.text {
                        c.same_text += 1;
                    } else {
                        c.text_differences
                            .push(format!("{addr:x}: perf `{}`, ours `{}`", l.text, m.text));
                    }
                }
            }
        }
        for addr in mine.keys().filter(|a| !lines.contains_key(a)) {
            c.differences.push(format!(
                "{}: ours has an instruction at {addr:x}, perf none",
                header.trim()
            ));
        }
    }
    for header in ours.keys().filter(|h| !theirs.contains_key(*h)) {
        c.differences
            .push(format!("we annotate, perf does not: {}", header.trim()));
    }
    c
}

/// Our `perfdata annotate --stdio` text of `path` (symbols as the live checks find them).
pub fn ours(
    path: &Path,
    dir: &Path,
    opts: &AnnotateOptions,
    listing_opts: &listing::ListingOptions,
) -> Result<String, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let analyzer_opts = perfdata_analysis::AnalyzerOptions {
        lines: true,
        ..options(dir)
    };
    let mut a = Analyzer::open(&rec, &analyzer_opts).map_err(|e| e.to_string())?;
    let result = annotate::annotate(&mut a, opts).map_err(|e| e.to_string())?;
    let mut out = vec![];
    for ev in &result.events {
        listing::write_event(&mut out, ev, listing_opts).map_err(|e| e.to_string())?;
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// Check 19 on one recording: `perf annotate --stdio -l` (source lines interleaved, the
/// `-l` summaries) against ours with the same options.
pub fn check_annotate(path: &Path, dir: &Path) -> Outcome {
    let theirs = match perf_stdout(dir, &os_args(&["annotate", "--stdio", "-l", "-i"], path)) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(why) => return Outcome::Skip(why),
    };
    let theirs = parse(&theirs);
    if theirs.values().all(|l| l.lines.is_empty()) {
        return Outcome::Skip("no function perf annotates (no user-space samples)".into());
    }
    let opts = AnnotateOptions {
        source: true,
        print_line: true,
        ..AnnotateOptions::default()
    };
    let listing_opts = listing::ListingOptions {
        print_line: true,
        ..listing::ListingOptions::default()
    };
    match ours(path, dir, &opts, &listing_opts) {
        Ok(o) => compare(&theirs, &parse(&o)).outcome(),
        Err(e) => Outcome::Fail(vec![format!("ours: {e}")]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERF: &str = " Percent |\tSource code & Disassembly of t for cpu-clock (3 samples, percent: local period)
---------------------------------------------------------------------------------------------
         :
         : 3    Disassembly of section .text:
         : 6    work():
    0.00 :   11b0:   mov    %rdi,%r8
   66.67 :   11b3:   test   %rdi,%rdi
   33.33 :   11b6:   jle    1220 <work+0x70>
";

    const PERF_L: &str = "
Sorted summary for file /t/x
----------------------------------------------

   66.67 x.c:11
   33.33 x.c:17
 Percent |\tSource code & Disassembly of x for cpu-clock (3 samples, percent: local period)
---------------------------------------------------------------------------------------------
         : 5    0000000000001170 <leaf>:
         : 6    leaf():
         : 15   {
         :
         : 17   unsigned long s = seed;
    0.00 :   1170:   mov    %rsi,%rax
         : 23   mix():
         : 11   return s * 31;
   66.67 :   1180:   mov    %rax,%rsi // x.c:11
         : 13   std::swap<Item>(Item&, Item&):
         : 14   ./x/y.c:12 (discriminator 3)
   33.33 :   1194:   add    $0x1,%rdx // x.c:17
";

    #[test]
    fn objdump_s_own_lines_are_told_from_source_lines() {
        for own in [
            "Disassembly of section .text:",
            "0000000000001170 <leaf>:",
            "mix():",
            "std::swap<Item>(Item&, Item&):",
            "f(long) const:",
            "v8::internal::Snapshot::Initialize(v8::internal::Isolate*) [clone .part.0]:",
            "./elf/./elf/dl-find_object.c:426 (discriminator 3)",
        ] {
            assert!(objdump_line(own), "{own}");
        }
        for source in [
            "case 1:",
            "out:",
            "return s;",
            "for (i = 0; i < n; i++)",
            "public:",
        ] {
            assert!(!objdump_line(source), "{source}");
        }
    }

    #[test]
    fn source_lines_and_summaries_are_compared() {
        let t = parse(PERF_L);
        let f = t.values().next().unwrap();
        assert_eq!(
            f.summary,
            [(66.67, "x.c:11".into()), (33.33, "x.c:17".into())]
        );
        assert_eq!(
            f.lines[&0x1170].source,
            ["15 {", "17 unsigned long s = seed;"]
        );
        assert_eq!(f.lines[&0x1180].source, ["11 return s * 31;"]);
        assert_eq!(f.lines[&0x1180].text, "mov    %rax,%rsi");
        assert!(f.lines[&0x1194].source.is_empty());
        assert!(compare(&t, &t).passes());
        let c = compare(
            &t,
            &parse(&PERF_L.replace(": 11   return s", ": 12   return s")),
        );
        assert_eq!((c.with_source, c.same_source), (2, 1));
        assert!(!c.passes());
        let c = compare(&t, &parse(&PERF_L.replace("33.33 x.c:17", "33.33 x.c:18")));
        assert_eq!((c.summaries, c.same_summaries), (1, 0));
        assert!(!c.passes());
        // Another name for an inlined function is not a source difference.
        let c = compare(&t, &parse(&PERF_L.replace("         : 23   mix():\n", "")));
        assert!(c.passes(), "{c:?}");
    }

    #[test]
    fn equal_listings_pass_and_a_moved_sample_fails() {
        let t = parse(PERF);
        assert_eq!(t.values().next().unwrap().lines.len(), 3);
        let c = compare(&t, &t);
        assert!(c.passes(), "{c:?}");
        assert_eq!((c.instructions, c.same_text), (3, 3));
        let moved = PERF
            .replace("   66.67 :   11b3", "   33.33 :   11b3")
            .replace("   33.33 :   11b6", "   66.67 :   11b6");
        let c = compare(&t, &parse(&moved));
        assert!(!c.passes());
        assert_eq!(c.differences.len(), 2, "{:?}", c.differences);
        let texts = PERF.replace("jle    1220", "jle    0x1220");
        let c = compare(&t, &parse(&texts));
        assert_eq!((c.placed, c.same_text), (3, 2));
        assert!(!c.passes(), "2 of 3 texts is under the share");
    }
}
