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
    /// perf's `-l/--print-line`: before each function the sorted summary of its source
    /// lines, and after an instruction over 0.5% its `file:line` when it changes.
    pub print_line: bool,
    /// perf's `-P/--full-paths`: those source paths whole, not their file names.
    pub full_path: bool,
}

/// One line of a function's listing, before printing: an instruction's address, text
/// after the address, and samples/period of the bytes it covers; or another line.
enum Line {
    Insn {
        addr: u64,
        text: String,
        samples: u64,
        period: u64,
        /// Its `-l` source position.
        path: Option<String>,
    },
    Text(String),
    Marker(u32),
}

/// What perf 6.1 keeps from one function's listing to the next (its statics).
#[derive(Debug, Default)]
pub struct ListingState {
    /// The `file:line` printed last after an instruction (`-l`): the next one is
    /// printed only when it differs, in this function or the next.
    prev_path: Option<String>,
}

/// perf annotate --stdio's text of every function of `ev`.
pub fn write_event(
    out: &mut impl Write,
    ev: &EventAnnotation,
    opts: &ListingOptions,
) -> io::Result<()> {
    let mut state = ListingState::default();
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
        write_function(out, ev, f, opts, &mut state)?;
    }
    Ok(())
}

/// perf's source position of an instruction for `-l` (`get_srcline`): the file's name
/// (or path, `full_path`) and line; without one, `??:0` as binutils' `addr2line` (which
/// perf asks) answers for an address in a function of the object's symbol table, and
/// perf's `OBJECT[ADDRESS]` where it names no function (a PLT entry) or has no file to
/// ask about (`[vdso]`).
pub fn srcline(f: &Function, i: &super::Insn, full_path: bool) -> String {
    match &i.line {
        Some((file, line)) if *line > 0 => {
            let file = i.binutils_file.as_ref().unwrap_or(file);
            let file = if full_path {
                file.as_str()
            } else {
                file.rsplit('/').next().unwrap_or(file)
            };
            format!("{file}:{line}")
        }
        _ if f.symbol.ends_with("@plt") || f.dso.starts_with('[') => {
            format!("{}[{:x}]", f.dso_short, i.addr)
        }
        _ => "??:0".to_string(),
    }
}

/// perf's `-l` summary of a function: per source line, the sum of the percentages of
/// its instructions over 0.5%, highest first (equal sums by `file:line` from the last,
/// as perf's tree orders them).
pub fn line_summary(
    ev: &EventAnnotation,
    f: &Function,
    opts: &ListingOptions,
) -> Vec<(String, f64)> {
    let mut by_path: std::collections::BTreeMap<String, f64> = Default::default();
    for item in &f.items {
        let Item::Insn(i) = item else { continue };
        let p = percent(ev, f, i.samples, i.period, opts.percent_type);
        if p <= 0.5 {
            continue;
        }
        *by_path.entry(srcline(f, i, opts.full_path)).or_default() += p;
    }
    let mut v: Vec<(String, f64)> = by_path.into_iter().collect();
    v.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| b.0.cmp(&a.0))
    });
    v
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
    state: &mut ListingState,
) -> io::Result<()> {
    if opts.print_line {
        writeln!(out, "\nSorted summary for file {}", f.dso)?;
        writeln!(out, "{}\n", "-".repeat(46))?;
        let summary = line_summary(ev, f, opts);
        if summary.is_empty() {
            writeln!(out, " Nothing higher than 0.5%")?;
        }
        for (path, p) in summary {
            writeln!(out, " {p:7.2} {path}")?;
        }
    }
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
    let lines = lines(f, opts);
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
                path,
            } => {
                let p = percent(ev, f, *samples, *period, opts.percent_type);
                write!(out, " {p:7.2} :   {addr:>width$x}:{text}")?;
                if let Some(path) = path.as_ref().filter(|_| opts.print_line && p > 0.5) {
                    if state.prev_path.as_ref() != Some(path) {
                        write!(out, " // {path}")?;
                        state.prev_path = Some(path.clone());
                    }
                }
                writeln!(out)?;
            }
        }
        line_nr += 1;
    }
    Ok(())
}

/// The per-source-line view of one function (`perfdata annotate --by-line`; perf has
/// none, pprof's `-list` is the nearest): a header, then per file its lines with
/// instructions, each with its share, line number, its instructions' addresses (runs
/// of consecutive instructions as `FIRST-LAST`) and the line's text when the file was
/// read. Needs [`Function::lines`](super::Function::lines) gathered.
pub fn write_by_line(
    out: &mut impl Write,
    ev: &EventAnnotation,
    f: &Function,
    opts: &ListingOptions,
) -> io::Result<()> {
    writeln!(
        out,
        "Source lines of {} in {} for {} ({} samples, percent: {})",
        f.symbol,
        f.dso_short,
        ev.event,
        f.samples,
        opts.percent_type.header()
    )?;
    let addresses: Vec<String> = f
        .lines
        .iter()
        .map(|l| {
            l.runs
                .iter()
                .map(|r| match r.instructions {
                    1 => format!("{:x}", r.first),
                    _ => format!("{:x}-{:x}", r.first, r.last),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let width = addresses.iter().map(String::len).max().unwrap_or(0).max(9);
    writeln!(
        out,
        " {:>7}  {:>6}  {:<width$}  Source",
        "Percent", "Line", "Addresses"
    )?;
    let mut file: Option<Option<&str>> = None;
    for (l, addrs) in f.lines.iter().zip(&addresses) {
        let this = l.position.as_ref().map(|(f, _)| f.as_str());
        if file != Some(this) {
            let read = f
                .lines
                .iter()
                .any(|m| m.text.is_some() && m.position.as_ref().map(|(f, _)| f.as_str()) == this);
            match this {
                Some(name) if read => writeln!(out, "{name}")?,
                // Not read: the lines of this file have their numbers only.
                Some(name) => writeln!(out, "{name} (not found: line numbers only)")?,
                None => writeln!(out, "(no source line)")?,
            }
            file = Some(this);
        }
        let p = percent(ev, f, l.samples, l.period, opts.percent_type);
        let n = l
            .position
            .as_ref()
            .map(|(_, n)| n.to_string())
            .unwrap_or_else(|| "?".into());
        let mut text = l.text.as_deref().map(expand_tabs).unwrap_or_default();
        if !l.inlined.is_empty() {
            text.push_str(&format!("   [inlined: {}]", l.inlined.join(", ")));
        }
        let row = format!(" {p:7.2}  {n:>6}  {addrs:<width$}  {text}");
        writeln!(out, "{}", row.trim_end())?;
    }
    writeln!(out)
}

/// objdump's lines for a function as perf reads them: the preamble, `-l`'s function
/// and position lines, the instructions (with `--asm-raw`, a line per seven bytes, the
/// further ones parsed by perf as instructions of their own).
fn lines(f: &Function, opts: &ListingOptions) -> Vec<Line> {
    let asm_raw = opts.asm_raw;
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
            // perf reads a source line as any other: trimmed, tabs expanded, a
            // `/path:N` taken as a position.
            Item::Source(text) => {
                let t = expand_tabs(text.trim());
                match position(&t) {
                    Some(n) => v.push(Line::Marker(n)),
                    None => v.push(Line::Text(t)),
                }
            }
            Item::Insn(i) => {
                // objdump shows an aarch64 instruction as its 32-bit word (four bytes a
                // line, one chunk: `d503201f \tnop`).
                let word = (f.arch == super::disasm::Arch::Aarch64)
                    .then(|| <[u8; 4]>::try_from(&i.bytes[..]).ok())
                    .flatten();
                let first = if let (true, Some(w)) = (asm_raw, word) {
                    format!("{:08x} \t{}", u32::from_le_bytes(w), i.text)
                } else if asm_raw {
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
                    path: opts.print_line.then(|| srcline(f, i, opts.full_path)),
                });
                if asm_raw && word.is_none() {
                    for (k, chunk) in i.bytes.chunks(7).enumerate().skip(1) {
                        let addr = i.addr.wrapping_add(7 * k as u64);
                        let b: Vec<String> = chunk.iter().map(|x| format!("{x:02x}")).collect();
                        v.push(Line::Insn {
                            addr,
                            text: after_address(addr, &b.join(" ")),
                            samples: 0,
                            period: 0,
                            path: None,
                        });
                    }
                }
            }
        }
    }
    v
}

/// perf's regex `^/[^:]+:([0-9]+)` on a line: the line number of a position line.
fn position(line: &str) -> Option<u32> {
    let rest = line.strip_prefix('/')?;
    let colon = rest.find(':')?;
    if colon == 0 {
        return None;
    }
    let digits: &str = &rest[colon + 1..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    // perf's atoi: digits past an int's range wrap; a line number that large is no
    // line of a source file.
    digits[..end].parse().ok()
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
    fn positions_as_perfs_regex_reads_them() {
        assert_eq!(position("/t/a.c:17"), Some(17));
        assert_eq!(position("/t/a.c:17 (discriminator 3)"), Some(17));
        assert_eq!(position("/* a: 1 */"), None);
        assert_eq!(position("/:12"), None);
        assert_eq!(position("./a.c:12"), None);
        assert_eq!(position("/a.c:x"), None);
    }

    #[test]
    fn the_line_summary_sums_instructions_over_half_a_percent() {
        use super::super::Insn;
        let insn = |addr: u64, period: u64, line: u32| {
            Item::Insn(Insn {
                addr,
                bytes: vec![0x90],
                text: "nop".into(),
                samples: period,
                period,
                line: Some(("/src/x.c".into(), line)),
                // binutils names line 7's file by the unit's.
                binutils_file: (line == 7).then(|| "/src/unit.c".into()),
                inlined: vec![],
            })
        };
        let f = Function {
            dso_short: "x".into(),
            symbol: "f".into(),
            samples: 1000,
            period: 1000,
            // Line 3: 40% + 20%; line 5: 20% and 0.4% (left out); lines 7 and 9 tie.
            items: vec![
                insn(0, 400, 3),
                insn(1, 200, 5),
                insn(2, 4, 5),
                insn(3, 200, 3),
                insn(4, 98, 7),
                insn(5, 98, 9),
            ],
            ..Function::default()
        };
        let ev = EventAnnotation::default();
        let s = line_summary(&ev, &f, &ListingOptions::default());
        let s: Vec<String> = s.iter().map(|(p, v)| format!("{v:.2} {p}")).collect();
        assert_eq!(
            s,
            ["60.00 x.c:3", "20.00 x.c:5", "9.80 x.c:9", "9.80 unit.c:7"]
        );
    }

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
