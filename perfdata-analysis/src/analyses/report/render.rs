//! The report as `perf report --stdio` prints it, from `# Samples:` on (the lines before,
//! about the file and lost samples, and the closing tip are left out).

use super::callgraph::{self, Print};
use super::{EventReport, ReportOptions, SortKey};
use std::fmt::Write as _;

/// perf's `convert_unit`: 1234 samples are `1K`.
fn samples_with_unit(mut n: u64) -> (u64, char) {
    let mut unit = ' ';
    for u in ['K', 'M', 'G'] {
        if n > 1000 {
            n /= 1000;
            unit = u;
        }
    }
    (n, unit)
}

/// The report as text, byte for byte as perf prints it.
pub fn render(reports: &[EventReport], opts: &ReportOptions) -> String {
    let mut s = String::new();
    let shown = opts.shown();
    if !opts.elide.is_empty() {
        for (k, v) in &opts.elide {
            let _ = writeln!(s, "# {}: {v}", k.elide_name());
        }
        s.push_str("#\n");
    }
    for r in reports {
        let (n, unit) = samples_with_unit(r.samples);
        let _ = write!(s, "# Samples: {n}{unit} of event '{}'", r.event);
        if let Some(t) = &opts.time {
            let _ = write!(s, " (time slices: {t})");
        }
        s.push('\n');
        let _ = writeln!(s, "# Event count (approx.): {}", r.period);
        s.push_str("#\n");
        let mut header = String::from("# ");
        let mut dots = String::from("# ");
        if r.children {
            header.push_str("Children      Self");
            dots.push_str("........  ........");
        } else {
            header.push_str("Overhead");
            dots.push_str("........");
        }
        if opts.show_samples {
            header.push_str("       Samples");
            dots.push_str("  ............");
        }
        for &i in &shown {
            let w = r.widths[i];
            let _ = write!(header, "  {:<w$}", opts.sort[i].header());
            let _ = write!(dots, "  {}", ".".repeat(w));
        }
        let _ = writeln!(s, "{header}");
        let _ = writeln!(s, "{dots}");
        s.push_str("#\n");
        let last = shown.last().copied().unwrap_or(0);
        for row in &r.rows {
            match row.children_percent {
                Some(c) if r.children => {
                    let _ = write!(s, "{c:>9.2}%  {:>7.2}%", row.percent);
                }
                _ => {
                    let _ = write!(s, "{:>9.2}%", row.percent);
                }
            }
            if opts.show_samples {
                let _ = write!(s, "  {:>12}", row.samples);
            }
            for &i in &shown {
                let (v, w, k) = (&row.keys[i], r.widths[i], opts.sort[i]);
                // perf prints a source position within the column's width (`%-.*s`),
                // which the positions it had looked up gave (see `before_srcline`).
                let cut: String;
                let v = if k == SortKey::Srcline && v.chars().count() > w {
                    cut = v.chars().take(w).collect();
                    &cut
                } else {
                    v
                };
                // perf pads every column but a last `sym` or `srcline`.
                if i == last && matches!(k, SortKey::Sym | SortKey::Srcline) {
                    let _ = write!(s, "  {v}");
                } else {
                    let _ = write!(s, "  {v:<w$}");
                }
            }
            s.push('\n');
            if let Some(g) = &r.call_graph {
                let p = Print {
                    opts: g,
                    total: r.period,
                    entry: row.children_period.unwrap_or(row.period),
                    skip_first: opts.sort.first() == Some(&SortKey::Sym),
                };
                callgraph::print(&mut s, &row.call_graph, &p);
            }
        }
        s.push_str("\n\n");
    }
    s
}
