//! perf annotate 6.1's `--stdio` text of an [`Annotation`](super::Annotation): per
//! function a header, a rule, and objdump's lines as perf reprints them — an
//! instruction with its percentage, `  ADDR:` and the text after objdump's address
//! (trimmed, tabs expanded to 8 columns); any other line with its line number as perf
//! counts them (`annotation_line__print`, `symbol__parse_objdump_line`).

use super::{EventAnnotation, Function, Item};
use std::io::{self, Write};

/// What the percentages divide by (`--percent-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PercentType {
    /// The function's period (perf's default).
    #[default]
    LocalPeriod,
    /// The event's period.
    GlobalPeriod,
    /// The function's samples.
    LocalHits,
    /// The event's samples. perf 6.1 never counts them for annotate (its
    /// `nr_non_filtered_samples` stays 0), so it prints 0.00 everywhere: so does this.
    GlobalHits,
}

impl PercentType {
    /// perf's spelling (`local-period`…), and the header's (`local period`).
    pub fn parse(s: &str) -> Option<PercentType> {
        Some(match s {
            "local-period" | "period-local" => PercentType::LocalPeriod,
            "global-period" | "period-global" => PercentType::GlobalPeriod,
            "local-hits" | "hits-local" => PercentType::LocalHits,
            "global-hits" | "hits-global" => PercentType::GlobalHits,
            _ => return None,
        })
    }

    fn header(self) -> &'static str {
        match self {
            PercentType::LocalPeriod => "local period",
            PercentType::GlobalPeriod => "global period",
            PercentType::LocalHits => "local hits",
            PercentType::GlobalHits => "global hits",
        }
    }
}

/// How the listing is printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListingOptions {
    /// What the percentages divide by.
    pub percent_type: PercentType,
    /// Leave out functions under this share of the event's period (`--percent-limit`).
    pub percent_limit: f64,
    /// Show each instruction's bytes (`--asm-raw`), objdump's way: seven a line.
    pub asm_raw: bool,
}

/// One line of a function's listing, before printing: an instruction's address, text
/// after the address, and samples/period of the bytes it covers; or another line.
enum Line {
    Insn {
        addr: u64,
        text: String,
        samples: u64,
        period: u64,
    },
    Text(String),
    Marker(u32),
}

/// perf annotate --stdio's text of every function of `ev`.
pub fn write_event(
    out: &mut impl Write,
    ev: &EventAnnotation,
    opts: &ListingOptions,
) -> io::Result<()> {
    for f in &ev.functions {
        if opts.percent_limit > 0.0 {
            let share = if ev.total_period == 0 {
                0.0
            } else {
                100.0 * f.period as f64 / ev.total_period as f64
            };
            if share < opts.percent_limit {
                continue;
            }
        }
        write_function(out, ev, f, opts)?;
    }
    Ok(())
}

/// The percentage of one line.
pub fn percent(
    ev: &EventAnnotation,
    f: &Function,
    samples: u64,
    period: u64,
    t: PercentType,
) -> f64 {
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    match t {
        PercentType::LocalPeriod => ratio(period, f.period),
        PercentType::GlobalPeriod => ratio(period, ev.total_period),
        PercentType::LocalHits => ratio(samples, f.samples),
        PercentType::GlobalHits => 0.0,
    }
}

/// perf annotate --stdio's text of one function.
pub fn write_function(
    out: &mut impl Write,
    ev: &EventAnnotation,
    f: &Function,
    opts: &ListingOptions,
) -> io::Result<()> {
    let header = format!(
        " {:<8.8}|\tSource code & Disassembly of {} for {} ({} samples, percent: {})\n",
        "Percent",
        f.dso_short,
        ev.event,
        f.samples,
        opts.percent_type.header()
    );
    out.write_all(header.as_bytes())?;
    // perf prints as many dashes as the header had characters (its newline counted),
    // and four more.
    writeln!(out, "{}", "-".repeat(header.chars().count() + 4))?;
    let lines = lines(f, opts.asm_raw);
    let width = lines
        .iter()
        .rev()
        .find_map(|l| match l {
            Line::Insn { addr, .. } => Some(format!("{addr:x}").len()),
            _ => None,
        })
        .unwrap_or(0);
    let mut line_nr: i64 = 0;
    for l in &lines {
        match l {
            Line::Marker(n) => {
                line_nr = i64::from(*n);
                continue;
            }
            Line::Text(t) if t.is_empty() => writeln!(out, " {:8}:", "")?,
            Line::Text(t) => writeln!(out, " {:8}: {:<width$} {}", "", line_nr, t)?,
            Line::Insn {
                addr,
                text,
                samples,
                period,
            } => {
                let p = percent(ev, f, *samples, *period, opts.percent_type);
                writeln!(out, " {p:7.2} :   {addr:>width$x}:{text}")?;
            }
        }
        line_nr += 1;
    }
    Ok(())
}

/// objdump's lines for a function as perf reads them: the preamble, `-l`'s function
/// and position lines, the instructions (with `--asm-raw`, a line per seven bytes, the
/// further ones parsed by perf as instructions of their own).
fn lines(f: &Function, asm_raw: bool) -> Vec<Line> {
    let mut v = vec![
        Line::Text(String::new()),
        Line::Text(String::new()),
        Line::Text(String::new()),
        Line::Text(format!("Disassembly of section {}:", f.section)),
        Line::Text(String::new()),
        Line::Text(format!("{:016x} <{}>:", f.start, f.objdump_name)),
    ];
    // Per line: which instruction's samples, by address range (perf counts a line's
    // bytes up to the next line's address).
    for item in &f.items {
        match item {
            Item::Function(name) => v.push(Line::Text(format!("{name}:"))),
            // perf's regex `^/[^:]+:([0-9]+)` takes an absolute path's line as a
            // line number; any other is a line of text.
            Item::Line { file, line } if file.starts_with('/') => v.push(Line::Marker(*line)),
            Item::Line { file, line } => v.push(Line::Text(format!("{file}:{line}"))),
            Item::Insn(i) => {
                let first = if asm_raw {
                    let n = i.bytes.len().min(7);
                    let mut b: String = i.bytes[..n].iter().map(|x| format!("{x:02x} ")).collect();
                    b.push_str(&"   ".repeat(7 - n));
                    format!("{}\t{}", b, i.text)
                } else {
                    i.text.clone()
                };
                v.push(Line::Insn {
                    addr: i.addr,
                    text: after_address(i.addr, &first),
                    samples: i.samples,
                    period: i.period,
                });
                if asm_raw {
                    for (k, chunk) in i.bytes.chunks(7).enumerate().skip(1) {
                        let addr = i.addr + 7 * k as u64;
                        let b: Vec<String> = chunk.iter().map(|x| format!("{x:02x}")).collect();
                        v.push(Line::Insn {
                            addr,
                            text: after_address(addr, &b.join(" ")),
                            samples: 0,
                            period: 0,
                        });
                    }
                }
            }
        }
    }
    v
}

/// What perf prints after `ADDR:` for objdump's line `ADDR:\tTEXT`: the line trimmed,
/// its tabs expanded to 8 columns from its start, the address and colon taken off.
fn after_address(addr: u64, text: &str) -> String {
    let line = format!("{addr:x}:\t{text}");
    let expanded = expand_tabs(line.trim());
    let cut = format!("{addr:x}:").len();
    expanded[cut..].to_string()
}

/// perf's `expand_tabs`: each tab becomes spaces up to the next multiple of 8.
fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let mut col = 0;
    for c in s.chars() {
        if c == '\t' {
            out.push(' ');
            col += 1;
            while col % 8 != 0 {
                out.push(' ');
                col += 1;
            }
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_expand_from_the_trimmed_line_as_perf_does() {
        assert_eq!(
            after_address(0x1170, "mov    %rsi,%rax"),
            "   mov    %rsi,%rax"
        );
        assert_eq!(after_address(0x401170, "ret"), " ret");
        assert_eq!(
            after_address(0x1237, "movsd  0xdd1(%rip),%xmm2        # 2010 <x>"),
            "   movsd  0xdd1(%rip),%xmm2        # 2010 <x>"
        );
    }
}
