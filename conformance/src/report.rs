//! The result table (scenario × check) and the committed known-failures list.

use crate::checks::Outcome;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Column names, in order.
pub const CHECKS: [&str; 21] = [
    "header",
    "records",
    "samples",
    "rewrite",
    "perf-reads",
    "corpus",
    "report",
    "collapse",
    "sql",
    "unwind",
    "call-graph",
    "unwound",
    "filters",
    "diff",
    "off-cpu",
    "pprof",
    "script",
    "sched",
    "annotate",
    "pyscript",
    "tp-tables",
];

/// Column headers of the table.
const TITLES: [&str; 21] = [
    "1 header",
    "2 records",
    "3 samples",
    "4 rewrite",
    "5 perf reads",
    "6 corpus",
    "7 report",
    "8 collapse",
    "9 sql",
    "10 unwind",
    "11 call graph",
    "12 unwound",
    "13 filters",
    "14 diff",
    "15 off-cpu",
    "16 pprof",
    "17 script",
    "18 sched",
    "19 annotate",
    "20 pyscript",
    "21 tp tables",
];

/// One row: a scenario or a corpus file.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub cells: Vec<Outcome>,
    pub notes: Vec<String>,
}

impl Row {
    pub fn new(name: impl Into<String>) -> Self {
        Row {
            name: name.into(),
            cells: vec![Outcome::Skip("n/a".into()); CHECKS.len()],
            notes: vec![],
        }
    }

    pub fn set(&mut self, check: &str, o: Outcome) {
        let i = CHECKS
            .iter()
            .position(|c| *c == check)
            .expect("known check");
        self.cells[i] = o;
    }

    /// The same outcome in every column (a scenario that could not be recorded).
    pub fn all(&mut self, o: &Outcome) {
        for c in &mut self.cells {
            *c = o.clone();
        }
    }
}

/// One entry of `conformance/known-failures.txt`: `row check[/tag] reason...`.
///
/// Without a tag the entry covers the whole cell (row × check). With one it covers only
/// the failure lines of that cell that carry it — a check 5 variant's lines start with
/// the variant's name (`big-endian: …`), and a failure of a known kind says
/// `[tag]` (`[perf61-swapped-pipe]`) — so another variant failing in the same cell is
/// still unexpected. A tagged entry's row may be `*` (every row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFailure {
    pub row: String,
    pub check: String,
    pub tag: Option<String>,
    pub reason: String,
}

impl KnownFailure {
    fn row_matches(&self, row: &str) -> bool {
        self.row == row || (self.row == "*" && self.tag.is_some())
    }

    /// Does this entry cover failure line `line` of `row` × `check`?
    fn covers_line(&self, row: &str, check: &str, line: &str) -> bool {
        if !self.row_matches(row) || self.check != check {
            return false;
        }
        match &self.tag {
            None => true,
            Some(t) => {
                line.strip_prefix(t.as_str())
                    .is_some_and(|r| r.starts_with(':'))
                    || line.contains(&format!("[{t}]"))
            }
        }
    }
}

/// The entries that make a failing cell known: a whole-cell entry, or tagged entries
/// that together cover every failure line. Empty when the cell is not (wholly) known.
pub fn known_for<'k>(
    known: &'k [KnownFailure],
    row: &str,
    check: &str,
    o: &Outcome,
) -> Vec<&'k KnownFailure> {
    let Outcome::Fail(lines) = o else {
        return vec![];
    };
    if let Some(k) = known
        .iter()
        .find(|k| k.tag.is_none() && k.row == row && k.check == check)
    {
        return vec![k];
    }
    let mut used: Vec<&KnownFailure> = vec![];
    for l in lines {
        match known.iter().find(|k| k.covers_line(row, check, l)) {
            Some(k) => {
                if !used.contains(&k) {
                    used.push(k);
                }
            }
            None => return vec![],
        }
    }
    used
}

/// Reads the known-failures file: one entry per line, `#` comments; each entry needs a
/// reason.
pub fn load_known_failures(path: &Path) -> Result<Vec<KnownFailure>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    parse_known_failures(&text).with_context(|| path.display().to_string())
}

pub fn parse_known_failures(text: &str) -> Result<Vec<KnownFailure>> {
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, char::is_whitespace);
        let (Some(row), Some(check), Some(reason)) = (parts.next(), parts.next(), parts.next())
        else {
            bail!("line {}: expected `row check reason`, got {line:?}", i + 1);
        };
        let (check, tag) = match check.split_once('/') {
            Some((c, t)) if !t.is_empty() => (c, Some(t.to_string())),
            Some(_) => bail!("line {}: an empty tag after `/`", i + 1),
            None => (check, None),
        };
        if row == "*" && tag.is_none() {
            bail!("line {}: row `*` needs a tag (`check/tag`)", i + 1);
        }
        if !CHECKS.contains(&check) {
            bail!(
                "line {}: unknown check {check:?} (one of {CHECKS:?})",
                i + 1
            );
        }
        if reason.trim().is_empty() {
            bail!("line {}: a known failure needs a reason", i + 1);
        }
        out.push(KnownFailure {
            row: row.to_string(),
            check: check.to_string(),
            tag,
            reason: reason.trim().to_string(),
        });
    }
    Ok(out)
}

/// The verdict over a set of rows.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Failures not in the known-failures list.
    pub unexpected: Vec<(String, String)>,
    /// Known failures that failed as listed.
    pub known: Vec<(String, String)>,
    /// Known failures that no longer fail.
    pub stale: Vec<KnownFailure>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.unexpected.is_empty()
    }
}

/// The note of a live row that failed on its second recording too.
pub const FAILED_TWICE: &str = "failed on a second recording too (its details are not shown)";

/// A live row is recorded again when it failed where no known failure says it would: a
/// live recording samples a program that runs differently each time.
pub fn needs_second_recording(row: &Row, known: &[KnownFailure]) -> bool {
    !verdict(std::slice::from_ref(row), known).ok()
}

pub fn verdict(rows: &[Row], known: &[KnownFailure]) -> Verdict {
    let mut v = Verdict::default();
    for r in rows {
        for (c, o) in CHECKS.iter().zip(&r.cells) {
            if !o.is_fail() {
                continue;
            }
            if !known_for(known, &r.name, c, o).is_empty() {
                v.known.push((r.name.clone(), c.to_string()));
            } else {
                v.unexpected.push((r.name.clone(), c.to_string()));
            }
        }
    }
    for k in known {
        // Still failing: some failure line it covers (a tagged entry can cover part of
        // a cell that other lines make unexpected).
        let failing = rows.iter().any(|r| {
            CHECKS.iter().zip(&r.cells).any(|(c, o)| match o {
                Outcome::Fail(lines) => lines.iter().any(|l| k.covers_line(&r.name, c, l)),
                _ => false,
            })
        });
        let present = rows.iter().any(|r| k.row_matches(&r.name));
        if present && !failing {
            v.stale.push(k.clone());
        }
    }
    v
}

/// Skip reasons longer than this are shown as `skip[n]` with a legend under the table.
const SHORT_REASON: usize = 26;

fn cell_text(o: &Outcome, known: bool, legend: &mut Vec<String>) -> String {
    match o {
        Outcome::Fail(_) if known => "FAIL(known)".to_string(),
        Outcome::Skip(why) if why == "n/a" => "-".to_string(),
        Outcome::Skip(why) if why.chars().count() > SHORT_REASON => {
            let n = match legend.iter().position(|l| l == why) {
                Some(n) => n,
                None => {
                    legend.push(why.clone());
                    legend.len() - 1
                }
            };
            format!("skip[{}]", n + 1)
        }
        other => other.cell(),
    }
}

/// The table and, below it, the details of every failure and long skip reason.
pub fn render(rows: &[Row], known: &[KnownFailure], verbose: bool) -> String {
    let mut table: Vec<Vec<String>> = vec![];
    let mut head = vec!["scenario / file".to_string()];
    head.extend(TITLES.iter().map(|t| t.to_string()));
    table.push(head);
    let mut legend = vec![];
    for r in rows {
        let mut line = vec![r.name.clone()];
        for (c, o) in CHECKS.iter().zip(&r.cells) {
            let is_known = !known_for(known, &r.name, c, o).is_empty();
            line.push(cell_text(o, is_known, &mut legend));
        }
        table.push(line);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|i| {
            table
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, line) in table.iter().enumerate() {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("-|-"));
            out.push('\n');
        }
    }
    for (n, why) in legend.iter().enumerate() {
        out.push_str(&format!("skip[{}]: {why}\n", n + 1));
    }
    let mut details = String::new();
    for r in rows {
        for (c, o) in CHECKS.iter().zip(&r.cells) {
            match o {
                Outcome::Fail(lines) => {
                    let reasons: Vec<&str> = known_for(known, &r.name, c, o)
                        .iter()
                        .map(|k| k.reason.as_str())
                        .collect();
                    let tag = if reasons.is_empty() {
                        String::new()
                    } else {
                        format!(" (known failure: {})", reasons.join("; "))
                    };
                    details.push_str(&format!("{} / {c}: FAIL{tag}\n", r.name));
                    for l in lines {
                        details.push_str(&format!("    {l}\n"));
                    }
                }
                Outcome::Pass(what) if verbose => {
                    details.push_str(&format!("{} / {c}: pass: {what}\n", r.name));
                }
                _ => {}
            }
        }
        if verbose {
            for n in &r.notes {
                details.push_str(&format!("{}: note: {n}\n", r.name));
            }
        }
    }
    if !details.is_empty() {
        out.push('\n');
        out.push_str(&details);
    }
    out
}

/// What a log's last lines should show: the failures of `flaky` (rows as first
/// recorded, which passed when recorded again) and the unexpected failures of `rows`,
/// each with its first lines. Empty when there are neither.
pub fn render_failures_again(flaky: &[Row], rows: &[Row], known: &[KnownFailure]) -> String {
    let mut text = String::new();
    let mut section = |title: &str, rows: &[Row]| {
        let cells: Vec<String> = rows
            .iter()
            .flat_map(|r| unexpected_cells(r, known))
            .collect();
        if !cells.is_empty() {
            text.push_str(&format!("\n{title}:\n"));
            cells.iter().for_each(|c| text.push_str(c));
        }
    };
    section(
        "failed on the first recording, passed on a second (the first one's failures)",
        flaky,
    );
    section("unexpected failures (as in the details above)", rows);
    text
}

/// A row's failures that no known failure covers, each as a few indented lines.
fn unexpected_cells(r: &Row, known: &[KnownFailure]) -> Vec<String> {
    const LINES: usize = 12;
    CHECKS
        .iter()
        .zip(&r.cells)
        .filter_map(|(c, o)| match o {
            Outcome::Fail(lines) if known_for(known, &r.name, c, o).is_empty() => {
                let mut t = format!("  {} / {c}:\n", r.name);
                for l in lines.iter().take(LINES) {
                    t.push_str(&format!("      {l}\n"));
                }
                if lines.len() > LINES {
                    t.push_str(&format!("      … {} more lines\n", lines.len() - LINES));
                }
                Some(t)
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_failures_need_reasons_and_known_checks() {
        let k = parse_known_failures("# c\nplain header perf prints X\n").unwrap();
        assert_eq!(k[0].reason, "perf prints X");
        assert!(parse_known_failures("plain header\n").is_err());
        assert!(parse_known_failures("plain nonsense because\n").is_err());
    }

    #[test]
    fn verdict_separates_known_and_unexpected() {
        let mut a = Row::new("a");
        a.set("header", Outcome::Fail(vec!["x".into()]));
        a.set("records", Outcome::Fail(vec!["y".into()]));
        let mut b = Row::new("b");
        b.set("header", Outcome::Pass("ok".into()));
        let known = parse_known_failures("a header why\nb header was broken\n").unwrap();
        let v = verdict(&[a, b], &known);
        assert_eq!(v.unexpected, [("a".to_string(), "records".to_string())]);
        assert_eq!(v.known.len(), 1);
        assert_eq!(v.stale.len(), 1);
        assert!(!v.ok());
    }

    #[test]
    fn the_failures_again_list_flaky_rows_then_unexpected_ones_not_known_ones() {
        let known = parse_known_failures("a header why\n").unwrap();
        let mut a = Row::new("a");
        a.set("header", Outcome::Fail(vec!["known".into()]));
        a.set(
            "records",
            Outcome::Fail((0..15).map(|i| format!("r{i}")).collect()),
        );
        let mut first = Row::new("f");
        first.set("collapse", Outcome::Fail(vec!["one sample".into()]));
        let text = render_failures_again(&[first], &[a], &known);
        let flaky = text.find("passed on a second").unwrap();
        let unexpected = text.find("unexpected failures").unwrap();
        assert!(flaky < text.find("f / collapse:\n      one sample").unwrap());
        assert!(unexpected > flaky);
        assert!(text.contains("a / records:\n      r0\n"));
        assert!(text.contains("r11\n      … 3 more lines\n"));
        assert!(!text.contains("known\n") && !text.contains("r12"));
        assert_eq!(render_failures_again(&[], &[Row::new("b")], &known), "");
    }

    /// A tagged entry covers only the lines that carry its tag: another variant failing
    /// in the same cell stays unexpected.
    #[test]
    fn tagged_entries_cover_their_lines_only() {
        let known = parse_known_failures(
            "* perf-reads/perf61-swapped-pipe perf 6.1 cannot\nb perf-reads/big-endian why\n",
        )
        .unwrap();
        assert_eq!(known[0].tag.as_deref(), Some("perf61-swapped-pipe"));
        assert!(parse_known_failures("* perf-reads no tag\n").is_err());
        let mut a = Row::new("a");
        a.set(
            "perf-reads",
            Outcome::Fail(vec![
                "other-byte-order-other-layout: [perf61-swapped-pipe] x".into(),
            ]),
        );
        let mut b = Row::new("b");
        b.set(
            "perf-reads",
            Outcome::Fail(vec![
                "big-endian: a difference".into(),
                "pipe: a difference".into(),
            ]),
        );
        let v = verdict(&[a.clone(), b], &known);
        assert_eq!(v.known, [("a".to_string(), "perf-reads".to_string())]);
        assert_eq!(v.unexpected, [("b".to_string(), "perf-reads".to_string())]);
        assert!(v.stale.is_empty(), "{:?}", v.stale);
        let table = render(&[a], &known, false);
        assert!(table.contains("FAIL(known)"), "{table}");
        assert!(
            table.contains("(known failure: perf 6.1 cannot)"),
            "{table}"
        );
    }
}
