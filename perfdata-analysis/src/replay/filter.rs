//! Which samples an analysis sees: perf's sample filters (`--pid`, `--tid`, `--comms`,
//! `--dsos`, `--symbols`, `--cpu`, `--time`), with perf's syntax and perf's two kinds of
//! "not shown".
//!
//! perf drops a sample outside `--cpu` or `--time` before it counts it anywhere; a sample
//! of another thread, object or symbol it *hides*: `perf report` still counts it in the
//! event's totals (its default `--percentage absolute`), `perf script` prints nothing for
//! it (tools/perf/util/event.c `machine__resolve`, `thread__is_filtered`;
//! builtin-report.c `process_sample_event`). [`Verdict`] says which, and
//! [`crate::Analyzer::run`] applies it: dropped samples never reach an analysis, hidden
//! ones reach only those that ask for them ([`crate::RunOptions::deliver_hidden`]).

use crate::error::BadOption;
use crate::Machine;
use crate::SampleInfo;

/// The filters of an analysis, as given (times are resolved against the recording by
/// [`SampleFilter::resolve`]). The default selects every sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleFilter {
    /// Only these process ids (`--pid 1,2`).
    pub pids: Option<Vec<i32>>,
    /// Only these thread ids (`--tid 1,2`).
    pub tids: Option<Vec<i32>>,
    /// Only threads whose name (at the sample) is one of these (`--comms a,b`).
    pub comms: Option<Vec<String>>,
    /// Only samples in these objects, by short name (`libc.so.6`, `[kernel.kallsyms]`)
    /// or full path (`--dsos a,b`).
    pub dsos: Option<Vec<String>>,
    /// Only samples in these functions, by name or by start address as `0x…`
    /// (`--symbols a,b`).
    pub symbols: Option<Vec<String>>,
    /// Only samples taken on these CPUs (`--cpu 0-2,5`).
    pub cpus: Option<Vec<u32>>,
    /// Only samples in these time ranges (`--time`).
    pub time: Option<TimeSpec>,
}

/// What the filter makes of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Shown.
    Keep,
    /// Of another thread, object or symbol: counted in `report`'s totals, not shown.
    Hidden,
    /// Outside the CPUs or times asked for: not counted anywhere.
    Dropped,
}

/// perf's `--time` argument: absolute `start,stop` ranges in seconds (either end may be
/// empty; several separated by spaces), or percentages of the recording's sample time
/// span (`10%/2`, `0%-10%,30%-40%`, `50%`).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSpec {
    ranges: TimeRanges,
    /// Absolute times count from the first sample (perf script's `--reltime`).
    relative: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum TimeRanges {
    /// Nanoseconds; 0 leaves that end open.
    Absolute(Vec<(u64, u64)>),
    /// Fractions of the span (start, end), already in perf's 0.0..=1.0.
    Percent(Vec<(f64, f64)>),
}

/// A filter ready to apply: times in the recording's nanoseconds.
#[derive(Debug, Clone, Default)]
pub struct ResolvedFilter {
    filter: SampleFilter,
    /// `(start, end)` in ns, 0 = open end, as perf's `perf_time_interval`.
    ranges: Vec<(u64, u64)>,
    /// Resolving a symbol or an object is needed (`--dsos`, `--symbols`).
    needs_frame: bool,
}

impl SampleFilter {
    /// True when it selects every sample (the analyses then skip it entirely).
    pub fn is_empty(&self) -> bool {
        *self == SampleFilter::default()
    }

    /// Resolves `--time` against the recording's first and last sample times (needed by
    /// percentages and relative times only; `None` then is an error, as in perf).
    pub fn resolve(&self, span: Option<(u64, u64)>) -> Result<ResolvedFilter, BadOption> {
        let ranges = match &self.time {
            None => vec![],
            Some(t) => t.resolve(span)?,
        };
        Ok(ResolvedFilter {
            needs_frame: self.dsos.is_some() || self.symbols.is_some(),
            filter: self.clone(),
            ranges,
        })
    }
}

impl ResolvedFilter {
    /// The verdict on one sample, with the machine state at its time.
    pub fn verdict(&self, m: &Machine, s: &SampleInfo<'_>) -> Verdict {
        let f = &self.filter;
        if let Some(cpus) = &f.cpus {
            if !s.cpu.is_some_and(|c| cpus.contains(&c)) {
                return Verdict::Dropped;
            }
        }
        if !self.ranges.is_empty() && skip_time(&self.ranges, s.time.unwrap_or(0)) {
            return Verdict::Dropped;
        }
        if let Some(comms) = &f.comms {
            let comm = m.comm_id(s.tid).map(|c| m.comm_name(c));
            if !comm.is_some_and(|c| comms.iter().any(|x| x == c)) {
                return Verdict::Hidden;
            }
        }
        if f.pids.as_ref().is_some_and(|p| !p.contains(&s.pid))
            || f.tids.as_ref().is_some_and(|t| !t.contains(&s.tid))
        {
            return Verdict::Hidden;
        }
        if self.needs_frame {
            let leaf = m.resolve(s.pid, s.kernel, s.ip);
            if let Some(dsos) = &f.dsos {
                let ok = leaf.dso.is_some_and(|(d, _)| {
                    let d = m.dsos.get(d);
                    dsos.iter().any(|x| *x == d.short_name || *x == d.name)
                });
                if !ok {
                    return Verdict::Hidden;
                }
            }
            if let Some(symbols) = &f.symbols {
                let ok = leaf.symbol.is_some_and(|sym| {
                    let name = m.dsos.symbol_name(sym);
                    symbols.iter().any(|x| x == name) || {
                        // perf also takes the symbol's start as `0x…`, unmapped to the
                        // process's address.
                        let (d, map_ip) = leaf.dso.unwrap_or((sym.dso, leaf.ip));
                        let off = m.dsos.lookup_address(d, map_ip);
                        let start = leaf
                            .ip
                            .wrapping_sub(off)
                            .wrapping_add(m.dsos.symbol_start(sym));
                        let hex = format!("{start:#x}");
                        symbols.contains(&hex)
                    }
                });
                if !ok {
                    return Verdict::Hidden;
                }
            }
        }
        Verdict::Keep
    }
}

/// perf's `perf_time__ranges_skip_sample`: a sample without a time is never skipped.
fn skip_time(ranges: &[(u64, u64)], t: u64) -> bool {
    if t == 0 {
        return false;
    }
    if let [(start, end)] = ranges {
        return (*start != 0 && t < *start) || (*end != 0 && t > *end);
    }
    !ranges
        .iter()
        .any(|&(start, end)| t >= start && (t <= end || end == 0))
}

impl TimeSpec {
    /// Parses perf's `--time` syntax; `relative`: absolute times count from the first
    /// sample.
    pub fn parse(text: &str, relative: bool) -> Result<TimeSpec, BadOption> {
        let bad = |why: &str| BadOption::new("--time", format!("{text:?}: {why}"));
        let ranges = if text.contains('%') {
            let mut v = vec![];
            if text.contains('/') {
                for part in text.split(',') {
                    let (p, n) = part
                        .split_once('/')
                        .ok_or_else(|| bad("expected `P%/N` ranges separated by commas"))?;
                    let p = percent(p).ok_or_else(|| bad("expected a percentage before `/`"))?;
                    let n: i64 = n
                        .parse()
                        .map_err(|_| bad("expected a slice number after `/`"))?;
                    if p <= 0.0 {
                        return Err(bad("the slice size must be above 0%"));
                    }
                    v.push((p * (n - 1) as f64, p * n as f64));
                }
            } else if text.contains('-') {
                for part in text.split(',') {
                    let (a, b) = part
                        .split_once('-')
                        .ok_or_else(|| bad("expected `A%-B%` ranges separated by commas"))?;
                    match (percent(a), percent(b)) {
                        (Some(a), Some(b)) => v.push((a, b)),
                        _ => return Err(bad("expected percentages on both sides of `-`")),
                    }
                }
            } else {
                let p = text
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| *p > 0.0)
                    .ok_or_else(|| bad("expected `P%`, `P%/N` or `A%-B%`"))?;
                v.push((0.0, p / 100.0));
            }
            if v.iter()
                .any(|&(a, b)| !(0.0..=1.0).contains(&a) || !(0.0..=1.0).contains(&b))
            {
                return Err(bad("percentages must lie within 0%..100%"));
            }
            TimeRanges::Percent(v)
        } else {
            // "a,b c,d": ranges separated by blanks (a blank after a comma belongs to it).
            let joined = text.replace(", ", ",");
            let mut v = vec![];
            for part in joined.split_whitespace() {
                let (a, b) = part
                    .split_once(',')
                    .ok_or_else(|| bad("expected `start,stop` (seconds; either may be empty)"))?;
                let a = if a.is_empty() {
                    0
                } else {
                    seconds(a).ok_or_else(|| bad("bad start time"))?
                };
                let b = if b.is_empty() {
                    0
                } else {
                    seconds(b).ok_or_else(|| bad("bad stop time"))?
                };
                if b != 0 && b < a {
                    return Err(bad("the stop time is before the start time"));
                }
                v.push((a, b));
            }
            if v.is_empty() {
                return Err(bad("expected `start,stop`"));
            }
            if v.windows(2).any(|w| w[0].1 >= w[1].0) {
                return Err(bad("ranges must be in order and must not overlap"));
            }
            TimeRanges::Absolute(v)
        };
        Ok(TimeSpec { ranges, relative })
    }

    /// The ranges in nanoseconds of the recording's clock (0: open end).
    fn resolve(&self, span: Option<(u64, u64)>) -> Result<Vec<(u64, u64)>, BadOption> {
        let need_span = self.relative || matches!(self.ranges, TimeRanges::Percent(_));
        let (first, last) = match span {
            Some(s) => s,
            None if need_span => {
                return Err(BadOption::new(
                    "--time",
                    "percentages and relative times need the samples' time span, \
                     and this recording has no sampled times",
                ))
            }
            None => (0, 0),
        };
        Ok(match &self.ranges {
            TimeRanges::Absolute(v) if self.relative => v
                .iter()
                .map(|&(a, b)| (a + first, if b == 0 { 0 } else { b + first }))
                .collect(),
            TimeRanges::Absolute(v) => v.clone(),
            TimeRanges::Percent(v) => {
                // perf's set_percent_time: an end short of the span's is made exclusive.
                let total = last.saturating_sub(first) as f64;
                v.iter()
                    .map(|&(a, b)| {
                        let start = first + (a * total).round() as u64;
                        let mut end = first + (b * total).round() as u64;
                        if end > start && end != last {
                            end -= 1;
                        }
                        (start, end)
                    })
                    .collect()
            }
        })
    }
}

/// `12.5%` → 0.125.
fn percent(s: &str) -> Option<f64> {
    s.strip_suffix('%')?.parse::<f64>().ok().map(|p| p / 100.0)
}

/// perf's `parse_nsec_time`: `seconds[.fraction]`, at most nine fraction digits.
fn seconds(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !sec.bytes().all(|b| b.is_ascii_digit()) || sec.is_empty() {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ns: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    sec.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(ns)
}

/// A comma-separated list of ids (`--pid 1,2`).
pub fn parse_ids(flag: &str, text: &str) -> Result<Vec<i32>, BadOption> {
    text.split(',')
        .map(|x| {
            x.trim().parse::<i32>().map_err(|_| {
                BadOption::new(
                    format!("--{flag}"),
                    format!("{text:?}: {x:?} is not a number"),
                )
            })
        })
        .collect()
}

/// A comma-separated list of names (`--comms a,b`).
pub fn parse_names(text: &str) -> Vec<String> {
    text.split(',').map(|x| x.trim().to_string()).collect()
}

/// perf's CPU list: `0-2,5`.
pub fn parse_cpus(text: &str) -> Result<Vec<u32>, BadOption> {
    let bad = || BadOption::new("--cpu", format!("{text:?}: expected CPUs as `0-2,5`"));
    let mut out = vec![];
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: u32 = a.parse().map_err(|_| bad())?;
        let b: u32 = b.parse().map_err(|_| bad())?;
        if b < a || b - a > 65_536 {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_times_as_perf_parses_them() {
        let t = TimeSpec::parse("1234.5,1235", false).unwrap();
        assert_eq!(
            t.resolve(None).unwrap(),
            vec![(1_234_500_000_000, 1_235_000_000_000)]
        );
        let t = TimeSpec::parse(",1.000000001", false).unwrap();
        assert_eq!(t.resolve(None).unwrap(), vec![(0, 1_000_000_001)]);
        let t = TimeSpec::parse("1,2 3,", false).unwrap();
        assert_eq!(
            t.resolve(None).unwrap(),
            vec![(1_000_000_000, 2_000_000_000), (3_000_000_000, 0)]
        );
        assert!(TimeSpec::parse("2,1", false).is_err());
        assert!(TimeSpec::parse("1,3 2,4", false).is_err());
        assert!(TimeSpec::parse("1.0123456789,", false).is_err());
        assert!(TimeSpec::parse("x,1", false).is_err());
    }

    #[test]
    fn percentages_and_relative_times_need_the_span() {
        let span = Some((1_000, 2_000));
        let t = TimeSpec::parse("10%/2", false).unwrap();
        assert_eq!(t.resolve(span).unwrap(), vec![(1_100, 1_199)]);
        let t = TimeSpec::parse("0%-10%,90%-100%", false).unwrap();
        assert_eq!(
            t.resolve(span).unwrap(),
            vec![(1_000, 1_099), (1_900, 2_000)]
        );
        let t = TimeSpec::parse("50%", false).unwrap();
        assert_eq!(t.resolve(span).unwrap(), vec![(1_000, 1_499)]);
        assert!(t.resolve(None).is_err());
        let t = TimeSpec::parse("0.000000100,", true).unwrap();
        assert_eq!(t.resolve(span).unwrap(), vec![(1_100, 0)]);
        assert!(TimeSpec::parse("0%/1", false).is_err());
        assert!(TimeSpec::parse("10%-120%", false).is_err());
    }

    #[test]
    fn time_ranges_skip_as_perf_skips() {
        assert!(!skip_time(&[(10, 20)], 0), "no time: never skipped");
        assert!(skip_time(&[(10, 20)], 9));
        assert!(!skip_time(&[(10, 20)], 20));
        assert!(!skip_time(&[(10, 0)], 1_000));
        assert!(skip_time(&[(10, 20), (30, 0)], 25));
        assert!(!skip_time(&[(10, 20), (30, 0)], 31));
    }

    #[test]
    fn lists() {
        assert_eq!(parse_cpus("0-2,5,1").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpus("2-1").is_err());
        assert!(parse_cpus("0-4294967295").is_err());
        assert_eq!(parse_ids("pid", "1, 2").unwrap(), vec![1, 2]);
        assert!(parse_ids("pid", "a").is_err());
    }
}
