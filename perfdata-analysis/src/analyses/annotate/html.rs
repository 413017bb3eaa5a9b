//! A self-contained HTML page of an [`Annotation`]: an index of the
//! functions, hottest first, then each function's listing with its instructions' shares
//! shaded, the source lines and inlined functions between them. No script, no request:
//! the page reads the same offline.

use super::listing::{percent, ListingOptions};
use super::{Annotation, Item};
use std::io::{self, Write};

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #ccc}\
h2 small{font-weight:normal;color:#666}table{border-collapse:collapse;font:13px ui-monospace,monospace}\
td{padding:0 .6em;white-space:pre}td.p{text-align:right}td.a{color:#666}\
tr.src td{color:#05a;font-style:italic}tr.fn td{color:#850;font-weight:bold}tr.pos td{color:#888}\
.index td{white-space:normal}.skipped{color:#a00}";

/// HTML's special characters escaped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A share's shade: white at 0%, red at the function's hottest instruction.
fn shade(p: f64, max: f64) -> String {
    if p <= 0.0 || max <= 0.0 {
        return String::new();
    }
    format!(
        " style=\"background:rgba(230,40,30,{:.3})\"",
        (0.08 + 0.72 * p / max).min(0.8)
    )
}

/// The page of `a`: every event's functions over `opts.percent_limit`, percentages of
/// `opts.percent_type`.
pub fn write_html(out: &mut impl Write, a: &Annotation, opts: &ListingOptions) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>perfdata annotate</title><style>{STYLE}</style></head><body>\n\
         <h1>perfdata annotate</h1>"
    )?;
    let mut n = 0;
    let mut shown = vec![];
    for ev in &a.events {
        let share = |period: u64| {
            if ev.total_period == 0 {
                0.0
            } else {
                100.0 * period as f64 / ev.total_period as f64
            }
        };
        let functions: Vec<_> = ev
            .functions
            .iter()
            .filter(|f| share(f.period) >= opts.percent_limit)
            .collect();
        writeln!(
            out,
            "<p>{}: {} samples. Functions, hottest first:</p>\n<table class=\"index\">",
            esc(&ev.event),
            ev.total_samples
        )?;
        for f in &functions {
            writeln!(
                out,
                "<tr><td class=\"p\">{:.2}%</td><td><a href=\"#f{n}\">{}</a></td><td>{}</td></tr>",
                share(f.period),
                esc(&f.symbol),
                esc(&f.dso_short)
            )?;
            shown.push((ev, *f, n));
            n += 1;
        }
        writeln!(out, "</table>")?;
    }
    for (ev, f, id) in shown {
        writeln!(
            out,
            "<h2 id=\"f{id}\">{} <small>{} — {}, {} samples</small></h2>\n<table>",
            esc(&f.symbol),
            esc(&f.dso),
            esc(&ev.event),
            f.samples
        )?;
        let pcts: Vec<f64> = f
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Insn(i) => Some(percent(ev, f, i.samples, i.period, opts.percent_type)),
                _ => None,
            })
            .collect();
        let max = pcts.iter().copied().fold(0.0, f64::max);
        for item in &f.items {
            match item {
                Item::Insn(i) => {
                    let p = percent(ev, f, i.samples, i.period, opts.percent_type);
                    writeln!(
                        out,
                        "<tr><td class=\"p\"{}>{}</td><td class=\"a\">{:x}:</td><td>{}</td></tr>",
                        shade(p, max),
                        if p > 0.0 {
                            format!("{p:.2}")
                        } else {
                            String::new()
                        },
                        i.addr,
                        esc(&i.text)
                    )?;
                }
                Item::Source(t) => writeln!(
                    out,
                    "<tr class=\"src\"><td></td><td></td><td>{}</td></tr>",
                    esc(t.trim_end())
                )?,
                Item::Function(name) => writeln!(
                    out,
                    "<tr class=\"fn\"><td></td><td></td><td>{}:</td></tr>",
                    esc(name)
                )?,
                Item::Line { file, line } => writeln!(
                    out,
                    "<tr class=\"pos\"><td></td><td></td><td>{}:{line}</td></tr>",
                    esc(file)
                )?,
            }
        }
        writeln!(out, "</table>")?;
    }
    if !a.skipped.is_empty() {
        writeln!(out, "<h2>Not annotated</h2>\n<ul class=\"skipped\">")?;
        for s in &a.skipped {
            writeln!(
                out,
                "<li>{} ({}): {}</li>",
                esc(&s.symbol),
                esc(&s.dso),
                esc(&s.reason)
            )?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "</body></html>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_shades_follow_the_share() {
        assert_eq!(esc("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
        assert_eq!(shade(0.0, 10.0), "");
        assert!(shade(10.0, 10.0).contains("0.800"));
        assert!(shade(5.0, 10.0).contains("0.440"));
    }
}
