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
    for r in reports {
        let (n, unit) = samples_with_unit(r.samples);
        let _ = writeln!(s, "# Samples: {n}{unit} of event '{}'", r.event);
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
        for (k, w) in opts.sort.iter().zip(&r.widths) {
            let _ = write!(header, "  {:<w$}", k.header());
            let _ = write!(dots, "  {}", ".".repeat(*w));
        }
        let _ = writeln!(s, "{header}");
        let _ = writeln!(s, "{dots}");
        s.push_str("#\n");
        let last = opts.sort.len().saturating_sub(1);
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
            for (i, ((v, w), k)) in row.keys.iter().zip(&r.widths).zip(&opts.sort).enumerate() {
                // perf pads every column but a last `sym`.
                if i == last && *k == SortKey::Sym {
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
