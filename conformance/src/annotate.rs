//! Check 19: `perfdata annotate` against `perf annotate --stdio --no-source`, function by
//! function and instruction by instruction: the same addresses, each instruction's
//! percentage to 0.01, and the instruction text (objdump's, which perf reprints) for at
//! least [`TEXT_SHARE`] of them. The lines between instructions (objdump `-l`'s function
//! names and the line numbers perf counts with them) come from two DWARF readers,
//! binutils' and gimli's, and are not compared.

use crate::analyses::{options, os_args, perf_stdout};
use crate::checks::Outcome;
use perfdata::Recording;
use perfdata_analysis::analyses::annotate::{self, listing, AnnotateOptions};
use perfdata_analysis::Analyzer;
use std::collections::BTreeMap;
use std::path::Path;

/// The share of instructions whose text must equal perf's.
pub const TEXT_SHARE: f64 = 0.99;

/// One instruction line of a listing: its percentage and text.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub percent: f64,
    pub text: String,
}

/// A listing parsed: per function (its header line), its instruction lines by address.
pub type Listing = BTreeMap<String, BTreeMap<u64, Line>>;

/// Parses perf annotate --stdio's text (or ours).
pub fn parse(text: &str) -> Listing {
    let mut out = Listing::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with(" Percent |") {
            current = Some(line.to_string());
            out.entry(line.to_string()).or_default();
            continue;
        }
        let Some(f) = &current else { continue };
        // ` PCT : ADDR:TEXT`
        let Some((pct, rest)) = line.split_once(" : ") else {
            continue;
        };
        let Ok(percent) = pct.trim().parse::<f64>() else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((addr, text)) = rest.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if let Some(lines) = out.get_mut(f) {
            lines.insert(
                addr,
                Line {
                    percent,
                    text: text.trim().to_string(),
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
}

impl Comparison {
    /// Every address and percentage equal, and the text share reached.
    pub fn passes(&self) -> bool {
        self.differences.is_empty()
            && self.instructions > 0
            && self.same_text as f64 >= TEXT_SHARE * self.instructions as f64
    }

    /// The check's outcome.
    pub fn outcome(&self) -> Outcome {
        let summary = format!(
            "{} functions, {} instructions: {} at the same address and percentage, {} ({:.2}%) with the same text",
            self.functions,
            self.instructions,
            self.placed,
            self.same_text,
            if self.instructions == 0 {
                0.0
            } else {
                100.0 * self.same_text as f64 / self.instructions as f64
            }
        );
        if self.passes() {
            let mut s = summary;
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
            Outcome::Fail(v)
        }
    }
}

/// Compares our listing with perf's.
pub fn compare(theirs: &Listing, ours: &Listing) -> Comparison {
    let mut c = Comparison::default();
    for (header, lines) in theirs {
        let Some(mine) = ours.get(header) else {
            c.differences
                .push(format!("perf annotates, we do not: {}", header.trim()));
            continue;
        };
        c.functions += 1;
        for (addr, l) in lines {
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
pub fn ours(path: &Path, dir: &Path, opts: &AnnotateOptions) -> Result<String, String> {
    let rec = Recording::open(path).map_err(|e| e.to_string())?;
    let analyzer_opts = perfdata_analysis::AnalyzerOptions {
        lines: true,
        ..options(dir)
    };
    let mut a = Analyzer::open(&rec, &analyzer_opts).map_err(|e| e.to_string())?;
    let result = annotate::annotate(&mut a, opts).map_err(|e| e.to_string())?;
    let mut out = vec![];
    for ev in &result.events {
        listing::write_event(&mut out, ev, &listing::ListingOptions::default())
            .map_err(|e| e.to_string())?;
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// Check 19 on one recording.
pub fn check_annotate(path: &Path, dir: &Path) -> Outcome {
    let theirs = match perf_stdout(
        dir,
        &os_args(&["annotate", "--stdio", "--no-source", "-i"], path),
    ) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(why) => return Outcome::Skip(why),
    };
    let theirs = parse(&theirs);
    if theirs.values().all(|l| l.is_empty()) {
        return Outcome::Skip("no function perf annotates (no user-space samples)".into());
    }
    match ours(path, dir, &AnnotateOptions::default()) {
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

    #[test]
    fn equal_listings_pass_and_a_moved_sample_fails() {
        let t = parse(PERF);
        assert_eq!(t.values().next().unwrap().len(), 3);
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
