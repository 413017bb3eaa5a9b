//! Parsers for perf 6.1's text output — the oracle. Each parser turns perf's lines into
//! [`Facts`] (named values) or records; lines a parser does not understand are returned,
//! never dropped silently, so a change in perf's output shows up as a failure.

use crate::facts::{hex, hex_or_text, num, num_or_text, Facts, Val};

// ---------------------------------------------------------------------------------------
// perf report --header-only -I
// ---------------------------------------------------------------------------------------

/// perf's header view.
#[derive(Debug, Default)]
pub struct HeaderText {
    pub facts: Facts,
    /// Lines the parser did not understand.
    pub unparsed: Vec<String>,
}

/// Splits `key : value` (perf pads keys with spaces).
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(" : ").or_else(|| line.split_once(": "))?;
    Some((k.trim(), v))
}

/// Parses `perf report --header-only -I`.
pub fn parse_header(text: &str) -> HeaderText {
    let mut out = HeaderText::default();
    let f = &mut out.facts;
    let mut events = 0usize;
    let mut section = "";
    for line in text.lines() {
        let Some(body) = line.strip_prefix('#') else {
            if !line.trim().is_empty() {
                out.unparsed.push(line.to_string());
            }
            continue;
        };
        let trimmed = body.trim();
        if trimmed.is_empty() || trimmed.chars().all(|c| c == '=') {
            continue;
        }
        // Continuation lines of a section: "#  L1 Data 48K [0]", "#    0 [24G]: 0-23".
        if body.starts_with("  ") && !section.is_empty() {
            if section == "cache" {
                if let Some(c) = parse_cache_line(trimmed) {
                    f.push("cache", c);
                    continue;
                }
            } else if section == "memory" {
                if let Some((node, size, map)) = parse_memory_node(trimmed) {
                    f.push(format!("memory node {node}"), format!("{size} {map}"));
                    continue;
                }
            }
        }
        section = "";
        let body = body.strip_prefix(' ').unwrap_or(body);
        if let Some(rest) = body.strip_prefix("event : ") {
            parse_event_line(rest, events, f);
            events += 1;
            continue;
        }
        if body == "CPU cache info:" {
            section = "cache";
            continue;
        }
        if let Some(rest) = body.strip_prefix("memory nodes (") {
            // "nr 1, block size 0x8000000):"
            let rest = rest.trim_end_matches("):");
            let mut ok = false;
            if let Some((nr, bs)) = rest.split_once(", block size ") {
                if let (Some(nr), Some(bs)) = (nr.strip_prefix("nr ").and_then(num), num(bs)) {
                    f.push("memory nodes nr", Val::Num(nr));
                    f.push("memory block size", Val::Num(bs));
                    ok = true;
                }
            }
            if !ok {
                out.unparsed.push(line.to_string());
            }
            section = "memory";
            continue;
        }
        if let Some(rest) = body.strip_prefix("missing features:") {
            let mut names: Vec<&str> = rest.split_whitespace().collect();
            names.sort_unstable();
            f.push("missing features", names.join(" "));
            continue;
        }
        match body {
            "contains stat data" => {
                f.push("STAT", "present");
                continue;
            }
            "contains samples with branch stack" => {
                f.push("BRANCH_STACK", "present");
                continue;
            }
            "contains AUX area data (e.g. instruction trace)" => {
                f.push("AUXTRACE", "present");
                continue;
            }
            "reference time disabled" => {
                f.push("reference time", "disabled");
                continue;
            }
            "Core ID and Socket ID information is not available"
            | "Core ID, Die ID and Socket ID information is not available" => {
                f.push("cpu ids", "not available");
                continue;
            }
            _ => {}
        }
        if let Some(rest) = body.strip_prefix("CPU ") {
            // "CPU 0: Core ID 0, Die ID 0, Socket ID 0"
            if let Some((cpu, ids)) = rest.split_once(": ") {
                let mut ok = cpu.parse::<u32>().is_ok();
                for part in ids.split(", ") {
                    match part.rsplit_once(' ') {
                        Some((name, v)) if num(v).is_some() => {
                            f.push(format!("CPU {cpu} {name}"), num_or_text(v));
                        }
                        _ => ok = false,
                    }
                }
                if ok {
                    continue;
                }
            }
        }
        if let Some(rest) = body.strip_prefix("group: ") {
            f.push("group", rest);
            continue;
        }
        if let Some(rest) = body.strip_prefix("pmu mappings: ") {
            if rest == "not available" {
                f.push("pmu mappings", "not available");
            } else {
                for m in rest.split(", ") {
                    match m.rsplit_once(" = ") {
                        Some((name, ty)) => f.push(format!("pmu {name}"), num_or_text(ty)),
                        None => out.unparsed.push(line.to_string()),
                    }
                }
            }
            continue;
        }
        if body.starts_with("bpf_prog_info ") || body.starts_with("btf info of id ") {
            f.push("bpf line", body);
            continue;
        }
        let Some((key, value)) = key_value(body) else {
            out.unparsed.push(line.to_string());
            continue;
        };
        match key {
            "captured on" => {} // the file's mtime, not part of the file's contents
            "header version"
            | "data offset"
            | "data size"
            | "feat offset"
            | "nrcpus online"
            | "nrcpus avail"
            | "directory data version" => f.push(key, num_or_text(value)),
            "hostname" | "os release" | "perf version" | "arch" | "cpudesc" | "cpuid"
            | "cmdline" => f.push(key, value),
            "total memory" => f.push(key, num_or_text(value.trim_end_matches(" kB"))),
            "sibling sockets" | "sibling dies" | "sibling threads" => f.push(key, value),
            "time of first sample" | "time of last sample" => f.push(key, value),
            "sample duration" => f.push(key, value.trim()),
            "clockid frequency" => f.push(key, num_or_text(value.trim_end_matches(" MHz"))),
            "compressed" => f.push(key, value),
            "clockid" => f.push(key, value),
            "reference time" => f.push(key, value),
            k if k.starts_with("node") && k.ends_with(" meminfo") => {
                // "total = 3891780 kB, free = 3663824 kB"
                let node = &k[4..k.len() - 8];
                for part in value.split(", ") {
                    match part.split_once(" = ") {
                        Some((name, v)) => f.push(
                            format!("node{node} {name}"),
                            num_or_text(v.trim_end_matches(" kB")),
                        ),
                        None => out.unparsed.push(line.to_string()),
                    }
                }
            }
            k if k.starts_with("node") && k.ends_with(" cpu list") => f.push(k, value),
            k if k.ends_with(" cpu list") => f.push(format!("hybrid {k}"), value),
            k if k.ends_with(" pmu capabilities") => f.push(k, value),
            _ => out.unparsed.push(line.to_string()),
        }
    }
    out
}

/// "L1 Data                 48K [0]" -> "1 Data 48K 0".
fn parse_cache_line(s: &str) -> Option<String> {
    let s = s.strip_prefix('L')?;
    let (rest, map) = s.rsplit_once(" [")?;
    let map = map.strip_suffix(']')?;
    let mut w = rest.split_whitespace();
    let level = w.next()?;
    let ty = w.next()?;
    let size = w.next()?;
    if w.next().is_some() {
        return None;
    }
    Some(format!("L{level} {ty} {size} [{map}]"))
}

/// "0 [24G]: 0-23,32-199" -> (0, "24G", "0-23,32-199").
fn parse_memory_node(s: &str) -> Option<(i128, String, String)> {
    let (node, rest) = s.split_once(" [")?;
    let (size, map) = rest.split_once("]: ")?;
    Some((num(node)?, size.to_string(), map.to_string()))
}

/// Reads one `key = value` item of an `# event :` line at the start of `s`; returns it
/// and the rest after the separator. Keys and values may be `{ ... }` groups.
fn event_item(s: &str) -> Option<(&str, &str, &str)> {
    let s = s.trim_start_matches([',', ' ']);
    if s.is_empty() {
        return None;
    }
    let key_end = if s.starts_with('{') {
        s.find('}')? + 1
    } else {
        s.find(" = ")?
    };
    let key = &s[..key_end];
    let rest = s[key_end..].strip_prefix(" = ")?;
    let val_end = if rest.starts_with('{') {
        rest.find('}')? + 1
    } else {
        rest.find(", ").unwrap_or(rest.len())
    };
    Some((key.trim(), &rest[..val_end], &rest[val_end..]))
}

/// `name = cpu-clock, , id = { 573, 574 }, type = 1, size = 128, ...`
fn parse_event_line(s: &str, index: usize, f: &mut Facts) {
    let mut rest = s;
    while let Some((key, val, after)) = event_item(rest) {
        let k = format!("event {index} {key}");
        match key {
            "name" => f.push(k, val),
            "id" => {
                let ids: Vec<String> = val
                    .trim_matches(['{', '}', ' '])
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                f.push(k, ids.join(","));
            }
            "sample_type" | "read_format" | "branch_sample_type" => {
                let mut names: Vec<&str> = val.split('|').collect();
                names.sort_unstable();
                f.push(k, names.join("|"));
            }
            _ => f.push(k, num_or_text(val)),
        }
        rest = after;
    }
    if !rest.trim().is_empty() {
        f.push(format!("event {index} unparsed"), rest.trim());
    }
}

// ---------------------------------------------------------------------------------------
// perf report -D
// ---------------------------------------------------------------------------------------

/// The cpu / time perf prints in front of a record's offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// `-1 -1`: the first event has no sample_id_all.
    NoSampleIdAll,
    /// The numbers (cpu if the session samples CPU, then time if it samples TIME).
    Values(Vec<u64>),
}

/// One record as `perf report -D` prints it.
#[derive(Debug, Clone)]
pub struct DumpRecord {
    /// Line number (1-based) of the `PERF_RECORD_` line.
    pub line: usize,
    /// The path after `@` in `0x108@path [0x50]: event: 69` (dirs: `x.data/data.1`).
    pub path: Option<String>,
    /// The record type number (`event: N`).
    pub type_num: Option<u32>,
    pub stamp: Stamp,
    pub offset: u64,
    pub size: u64,
    /// The name after `PERF_RECORD_`.
    pub name: String,
    /// The rest of the record line after the name.
    pub rest: String,
    /// Following lines up to the next record.
    pub details: Vec<String>,
    /// The raw bytes of the hex dump (absent in stored outputs, which omit hex dumps).
    pub raw: Option<Vec<u8>>,
}

/// Parses `0x108@path [0x50]: event: 69`.
fn parse_at_line(line: &str) -> Option<(u64, String, u64, u32)> {
    let (off, rest) = line.split_once('@')?;
    let off = num(off)?;
    let (path, rest) = rest.rsplit_once(" [")?;
    let (size, ty) = rest.split_once("]: event: ")?;
    Some((
        u64::try_from(off).ok()?,
        path.to_string(),
        u64::try_from(num(size)?).ok()?,
        ty.trim().parse().ok()?,
    ))
}

/// Parses `<stamp> <offset> [<size>]: PERF_RECORD_<NAME><rest>`.
fn parse_record_line(line: &str) -> Option<(Stamp, u64, u64, String, String)> {
    let (head, tail) = line.split_once("]: PERF_RECORD_")?;
    let (before, size) = head.rsplit_once(" [")?;
    let size = u64::try_from(num(size)?).ok()?;
    let mut toks: Vec<&str> = before.split_whitespace().collect();
    let offset = u64::try_from(num(toks.pop()?)?).ok()?;
    let stamp = if toks == ["-1", "-1"] {
        Stamp::NoSampleIdAll
    } else {
        let mut v = vec![];
        for t in toks {
            v.push(t.parse::<u64>().ok()?);
        }
        Stamp::Values(v)
    };
    let name_end = tail
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(tail.len());
    Some((
        stamp,
        offset,
        size,
        tail[..name_end].to_string(),
        tail[name_end..].to_string(),
    ))
}

/// Parses a hex dump line `.  0000:  45 00 ...  E.....` into its bytes.
fn parse_hex_line(line: &str, out: &mut Vec<u8>) -> bool {
    let Some(rest) = line.strip_prefix(".  ") else {
        return false;
    };
    let Some((addr, rest)) = rest.split_once(':') else {
        return false;
    };
    if addr.len() != 4 || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    // "  " then 16 groups of "xx " (3 chars), blank groups on the last line.
    let rest = rest.strip_prefix("  ").unwrap_or(rest);
    let bytes = rest.as_bytes();
    for g in 0..16 {
        let at = g * 3;
        let Some(pair) = bytes.get(at..at + 2) else {
            break;
        };
        let pair = std::str::from_utf8(pair).unwrap_or("  ");
        if pair.trim().is_empty() {
            break;
        }
        match u8::from_str_radix(pair, 16) {
            Ok(b) => out.push(b),
            Err(_) => return false,
        }
    }
    true
}

/// Parses `perf report -D` into its records, in the order perf printed them.
pub fn parse_dump(text: &str) -> Vec<DumpRecord> {
    let mut out: Vec<DumpRecord> = vec![];
    let mut pending: Option<(u64, String, u64, u32)> = None;
    let mut raw: Option<Vec<u8>> = None;
    let mut in_record = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("Aggregated stats:") {
            break;
        }
        if let Some(at) = parse_at_line(line) {
            pending = Some(at);
            raw = None;
            in_record = false;
            continue;
        }
        if pending.is_some() && !in_record {
            if line == "." {
                continue;
            }
            if line.starts_with(". ... raw event:") {
                raw = Some(vec![]);
                continue;
            }
            if let Some(buf) = raw.as_mut() {
                if parse_hex_line(line, buf) {
                    continue;
                }
            }
        }
        if let Some((stamp, offset, size, name, rest)) = parse_record_line(line) {
            let at = pending.take();
            out.push(DumpRecord {
                line: i + 1,
                path: at.as_ref().map(|a| a.1.clone()),
                type_num: at.as_ref().map(|a| a.3),
                stamp,
                offset,
                size,
                name,
                rest,
                details: vec![],
                raw: raw.take(),
            });
            in_record = true;
            continue;
        }
        if in_record && !line.trim().is_empty() {
            if let Some(r) = out.last_mut() {
                r.details.push(line.to_string());
            }
        }
    }
    out
}

/// What perf prints as values of one record, as facts; also the lines not compared
/// (perf's derived lines such as `... thread:` are dropped here by design).
pub fn dump_record_facts(r: &DumpRecord) -> (Facts, Vec<String>) {
    let mut f = Facts::new();
    let mut unparsed = vec![];
    let rest = r.rest.as_str();
    let mut bad = |what: &str| unparsed.push(format!("{}: {what}", r.name));
    match r.name.as_str() {
        "MMAP" | "MMAP2" => {
            if !parse_mmap(rest, r.name == "MMAP2", &mut f) {
                bad(rest);
            }
        }
        "COMM" => {
            // " exec: sh:3532/3532" or ": perf-exec:3532/3532"
            let (exec, s) = match rest.strip_prefix(" exec: ") {
                Some(s) => (true, s),
                None => (false, rest.strip_prefix(": ").unwrap_or(rest)),
            };
            f.push("exec", exec);
            match s
                .rsplit_once(':')
                .and_then(|(c, ids)| Some((c, ids.split_once('/')?)))
            {
                Some((comm, (pid, tid))) => {
                    f.push("comm", comm);
                    f.push("pid", num_or_text(pid));
                    f.push("tid", num_or_text(tid));
                }
                None => bad(rest),
            }
        }
        "FORK" | "EXIT" => {
            // "(3540:3540):(3538:3538)"
            let nums: Vec<&str> = rest
                .split(['(', ')', ':'])
                .filter(|s| !s.is_empty())
                .collect();
            if nums.len() == 4 {
                for (k, v) in ["pid", "tid", "ppid", "ptid"].iter().zip(nums) {
                    f.push(*k, num_or_text(v));
                }
            } else {
                bad(rest);
            }
        }
        "SAMPLE" => parse_sample(r, &mut f, &mut unparsed),
        "SWITCH" | "SWITCH_CPU_WIDE" => {
            let s = rest.trim_start();
            let (out, preempt) = if s.starts_with("OUT preempt") {
                (true, true)
            } else if s.starts_with("OUT") {
                (true, false)
            } else if s.starts_with("IN") {
                (false, false)
            } else {
                bad(rest);
                (false, false)
            };
            f.push("out", out);
            f.push("preempt", preempt);
            if r.name == "SWITCH_CPU_WIDE" {
                match s
                    .split_once("pid/tid:")
                    .and_then(|(_, ids)| ids.split_once('/'))
                {
                    Some((p, t)) => {
                        f.push("next_prev_pid", num_or_text(p));
                        f.push("next_prev_tid", num_or_text(t));
                    }
                    None => bad(rest),
                }
            }
        }
        "NAMESPACES" => {
            // " 3586/3586 - nr_namespaces: 7" + "[0/net: 4/0xeffffff9, ...]"
            match rest.trim().split_once(" - nr_namespaces: ") {
                Some((ids, nr)) => {
                    if let Some((p, t)) = ids.split_once('/') {
                        f.push("pid", num_or_text(p));
                        f.push("tid", num_or_text(t));
                    }
                    f.push("nr_namespaces", num_or_text(nr));
                }
                None => bad(rest),
            }
            let all: String = r
                .details
                .iter()
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ");
            let all = all.trim_start_matches('[').trim_end_matches(']');
            for item in all.split(", ").filter(|s| !s.trim().is_empty()) {
                // "0/net: 4/0xeffffff9"
                match item
                    .trim()
                    .split_once(": ")
                    .and_then(|(ix, v)| Some((ix.split_once('/')?.0, v.split_once('/')?)))
                {
                    Some((ix, (dev, ino))) => {
                        f.push(format!("ns{ix}.dev"), num_or_text(dev));
                        f.push(format!("ns{ix}.ino"), num_or_text(ino));
                    }
                    None => bad(item),
                }
            }
            return (f, unparsed);
        }
        "CGROUP" => match rest
            .trim()
            .strip_prefix("cgroup: ")
            .and_then(|s| s.split_once(' '))
        {
            Some((id, path)) => {
                f.push("id", num_or_text(id));
                f.push("path", path);
            }
            None => bad(rest),
        },
        "LOST" => {
            // ": id:%lu: lost:%lu"
            match rest
                .split_once("id:")
                .and_then(|(_, s)| s.split_once(": lost:"))
            {
                Some((id, lost)) => {
                    f.push("id", num_or_text(id));
                    f.push("lost", num_or_text(lost));
                }
                None => bad(rest),
            }
        }
        "LOST_SAMPLES" => match rest.split_once("lost samples :") {
            Some((_, lost)) => f.push("lost", num_or_text(lost)),
            None => bad(rest),
        },
        "KSYMBOL" => {
            // " addr ffffffffc0a2b5c4 len 226 type 1 flags 0x0 name bpf_prog_..."
            let s = rest.trim();
            let (head, name) = s.split_once(" name ").unwrap_or((s, ""));
            let t: Vec<&str> = head.split_whitespace().collect();
            if t.len() == 8 {
                f.push("addr", hex(t[1]).map_or(Val::Text(t[1].into()), Val::Num));
                f.push("len", num_or_text(t[3]));
                f.push("type", num_or_text(t[5]));
                f.push("flags", num_or_text(t[7]));
                f.push("name", name);
            } else {
                bad(rest);
            }
        }
        "BPF_EVENT" => {
            // " type 1, flags 0, id 42"
            for part in rest.trim().split(", ") {
                match part.split_once(' ') {
                    Some((k, v)) => f.push(k, num_or_text(v)),
                    None => bad(part),
                }
            }
        }
        "ID_INDEX" => {
            match rest.trim().strip_prefix("nr: ") {
                Some(nr) => f.push("nr", num_or_text(nr)),
                None => bad(rest),
            }
            for (i, l) in r.details.iter().enumerate() {
                let Some(l) = l.trim().strip_prefix("... ") else {
                    bad(l);
                    continue;
                };
                for part in l.split("  ").filter(|p| !p.is_empty()) {
                    match part.split_once(": ") {
                        Some((k, v)) => f.push(format!("{i}.{}", k.trim()), num_or_text(v)),
                        None => bad(part),
                    }
                }
            }
            return (f, unparsed);
        }
        "EVENT_UPDATE" => {
            for l in &r.details {
                match l.strip_prefix("... ").map(|l| l.split_once(':')) {
                    Some(Some((k, v))) => {
                        let v = v.trim_start();
                        let val = if k == "id" {
                            num_or_text(v)
                        } else {
                            Val::Text(v.into())
                        };
                        f.push(k.trim(), val);
                    }
                    // CPUS: "... 0-15" (the CPU list without a label).
                    Some(None) => f.push("cpus", l.trim_start_matches('.').trim()),
                    None => bad(l),
                }
            }
            return (f, unparsed);
        }
        "THREAD_MAP" => {
            // " nr: 1 thread: 3532" / " nr: 2 threads: 1, 2"
            match rest
                .trim()
                .strip_prefix("nr: ")
                .and_then(|s| s.split_once(' '))
                .and_then(|(n, s)| Some((n, s.split_once(": ")?.1)))
            {
                Some((n, pids)) => {
                    f.push("nr", num_or_text(n));
                    for (i, p) in pids.split(", ").enumerate() {
                        f.push(format!("pid{i}"), num_or_text(p));
                    }
                }
                None => bad(rest),
            }
        }
        "CPU_MAP" => f.push("cpus", rest.trim_start_matches(':').trim()),
        "STAT_CONFIG" | "STAT" | "STAT_ROUND" => {
            for l in &r.details {
                let Some(l) = l.strip_prefix("... ") else {
                    if l != ": unhandled!" {
                        bad(l);
                    }
                    continue;
                };
                for part in l.split(", ") {
                    let mut w = part.split_whitespace();
                    match (w.next(), w.next(), w.next()) {
                        (Some(k), Some(v), None) => f.push(k, num_or_text(v)),
                        _ => bad(part),
                    }
                }
            }
            return (f, unparsed);
        }
        "TIME_CONV" => {
            for l in &r.details {
                if is_derived_line(l) {
                    continue;
                }
                match l.strip_prefix("... ").and_then(|l| l.rsplit_once(' ')) {
                    Some((k, v)) => f.push(k.trim(), num_or_text(v)),
                    None => bad(l),
                }
            }
            return (f, unparsed);
        }
        // Records for which perf 6.1 prints no values.
        "ATTR" | "FEATURE" | "TRACING_DATA" | "BUILD_ID" | "FINISHED_ROUND" | "FINISHED_INIT"
        | "THROTTLE" | "UNTHROTTLE" | "EVENT_TYPE" => {
            let extra = rest.trim().trim_start_matches(':').trim();
            if !extra.is_empty() && extra != "unhandled!" {
                bad(rest);
            }
        }
        other => unparsed.push(format!("{other}: values not compared (no parser)")),
    }
    for l in &r.details {
        if !is_derived_line(l) && r.name != "SAMPLE" {
            unparsed.push(format!("{}: {l}", r.name));
        }
    }
    (f, unparsed)
}

/// Lines perf derives from its own state, not from the record (thread / dso lookups).
fn is_derived_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with("... thread:") || t.starts_with("...... dso:") || t == ": unhandled!"
}

/// `PERF_RECORD_MMAP(2)` line after the name.
fn parse_mmap(rest: &str, mmap2: bool, f: &mut Facts) -> bool {
    let Some((ids, rest)) = rest.trim_start().split_once(": [") else {
        return false;
    };
    let Some((p, t)) = ids.split_once('/') else {
        return false;
    };
    f.push("pid", num_or_text(p));
    f.push("tid", num_or_text(t));
    let Some((inside, after)) = rest.split_once("]: ") else {
        return false;
    };
    // "0xffffffff81000000(0x1206448) @ 0xffffffff81000000[ fe:00 247076 0| <buildid>]"
    let Some((addr, rest)) = inside.split_once('(') else {
        return false;
    };
    let Some((len, rest)) = rest.split_once(") @ ") else {
        return false;
    };
    f.push("addr", num_or_text(addr));
    f.push("len", num_or_text(len));
    let mut w = rest.split_whitespace();
    f.push("pgoff", num_or_text(w.next().unwrap_or("")));
    if mmap2 {
        match w.next() {
            Some(b) if b.starts_with('<') => {
                f.push("build_id", b.trim_matches(['<', '>']));
            }
            Some(majmin) => {
                let (maj, min) = majmin.split_once(':').unwrap_or((majmin, ""));
                f.push("maj", hex_or_text(maj));
                f.push("min", hex_or_text(min));
                f.push("ino", num_or_text(w.next().unwrap_or("")));
                f.push("ino_generation", num_or_text(w.next().unwrap_or("")));
            }
            None => return false,
        }
        // "r-xp /usr/bin/dash"
        let Some((prot, file)) = after.split_once(' ') else {
            return false;
        };
        let b = prot.as_bytes();
        if b.len() != 4 {
            return false;
        }
        f.push("prot.read", b[0] == b'r');
        f.push("prot.write", b[1] == b'w');
        f.push("prot.exec", b[2] == b'x');
        f.push("shared", b[3] == b's');
        f.push("filename", file);
    } else {
        // "x [kernel.kallsyms]_text"
        let Some((kind, file)) = after.split_once(' ') else {
            return false;
        };
        f.push("data", kind == "r");
        f.push("filename", file);
    }
    true
}

/// The SAMPLE line and its detail lines.
fn parse_sample(r: &DumpRecord, f: &mut Facts, unparsed: &mut Vec<String>) {
    // "(IP, 0x2): 3538/3538: 0x7fb9c3104158 period: 2004008 addr: 0"
    let rest = r.rest.as_str();
    let parsed = (|| {
        let rest = rest.strip_prefix("(IP, ")?;
        let (misc, rest) = rest.split_once("): ")?;
        let (ids, rest) = rest.split_once(": ")?;
        let (pid, tid) = ids.split_once('/')?;
        let (ip, rest) = rest.split_once(" period: ")?;
        let (period, addr) = rest.split_once(" addr: ")?;
        f.push("misc", num_or_text(misc));
        f.push("pid", num_or_text(pid));
        f.push("tid", num_or_text(tid));
        f.push("ip", num_or_text(ip));
        f.push("period", num_or_text(period));
        f.push("addr", num_or_text(addr));
        Some(())
    })();
    if parsed.is_none() {
        unparsed.push(format!("SAMPLE: {rest}"));
    }
    let mut section = "";
    for l in &r.details {
        if is_derived_line(l) {
            continue;
        }
        let t = l.trim_start();
        let mut ok = true;
        if let Some(nr) = t.strip_prefix("... FP chain: nr:") {
            section = "chain";
            f.push("callchain.nr", num_or_text(nr));
        } else if let Some(nr) = t.strip_prefix("... branch stack: nr:") {
            section = "branch";
            f.push("branch.nr", num_or_text(nr));
        } else if let Some(nr) = t.strip_prefix("... LBR call chain: nr:") {
            section = "lbr";
            f.push("lbr.nr", num_or_text(nr));
        } else if let Some(nr) = t.strip_prefix("... branch callstack: nr:") {
            // Call-stack mode prints nr + 1 addresses: to[0], from[0], from[1], ...
            section = "callstack";
            let n = num(nr).map_or(Val::Text(nr.into()), |n| Val::Num(n - 1));
            f.push("branch.nr", n);
        } else if let Some(s) = t.strip_prefix("... user regs: mask ") {
            section = "uregs";
            ok = regs_head("uregs", s, f);
        } else if let Some(s) = t.strip_prefix("... intr regs: mask ") {
            section = "iregs";
            ok = regs_head("iregs", s, f);
        } else if let Some(s) = t.strip_prefix("..... ") {
            // "  0: fffffffffffffe00" (chain) / " 0: from -> to ..." (branch)
            match s.trim_start().split_once(": ") {
                Some((i, v)) if section == "lbr" => {
                    let v = hex_or_text(v);
                    f.push(format!("lbr.{}", i.trim()), v);
                }
                Some((i, v)) if section == "callstack" => {
                    let v = hex_or_text(v);
                    f.push(format!("branch.cs.{}", i.trim()), v);
                }
                Some((i, v)) if section == "chain" => {
                    f.push(format!("callchain.{}", i.trim()), hex_or_text(v));
                }
                Some((i, v)) if section == "branch" => {
                    let mut w = v.split_whitespace();
                    match (w.next(), w.next(), w.next(), w.next()) {
                        (Some(from), Some("->"), Some(to), Some(cycles)) => {
                            f.push(format!("branch.{i}.from"), hex_or_text(from));
                            f.push(format!("branch.{i}.to"), hex_or_text(to));
                            f.push(format!("branch.{i}.cycles"), num_or_text(cycles));
                        }
                        _ => ok = false,
                    }
                }
                _ => {
                    // read values: "id 000000000000026d, value 000000000003dd02, lost 0"
                    if section == "read" {
                        for part in s.split(", ") {
                            match part.split_once(' ') {
                                Some(("id", v)) => {
                                    let id = hex(v);
                                    f.push("read.id", id.map_or(Val::Text(v.into()), Val::Num));
                                }
                                Some(("value", v)) => f.push("read.value", hex_or_text(v)),
                                Some(("lost", v)) => f.push("read.lost", num_or_text(v)),
                                _ => ok = false,
                            }
                        }
                    } else {
                        ok = false;
                    }
                }
            }
        } else if let Some(s) = t.strip_prefix(".... ") {
            if section == "uregs" || section == "iregs" {
                // "AX    0x000000000000004e"
                match s.split_whitespace().collect::<Vec<_>>().as_slice() {
                    [_name, v] => f.push(format!("{section}.reg"), num_or_text(v)),
                    _ => ok = false,
                }
            } else if let Some(nr) = s.strip_prefix("group nr ") {
                f.push("read.nr", num_or_text(nr));
            } else {
                ok = false;
            }
        } else if t == "... sample_read:" {
            section = "read";
        } else if let Some(v) = t.strip_prefix("...... time enabled ") {
            f.push("read.time_enabled", hex_or_text(v));
        } else if let Some(v) = t.strip_prefix("...... time running ") {
            f.push("read.time_running", hex_or_text(v));
        } else if let Some(s) = t.strip_prefix("... ustack: size ") {
            // "512, offset 0xa8"
            match s.split_once(", offset ") {
                Some((size, _offset)) => f.push("ustack.size", num_or_text(size)),
                None => ok = false,
            }
        } else if let Some(s) = t.strip_prefix("... weight: ") {
            let mut parts = s.split(',');
            f.push("weight", num_or_text(parts.next().unwrap_or("")));
            if let Some(v) = parts.next() {
                f.push("ins_lat", num_or_text(v));
            }
            if let Some(v) = parts.next() {
                f.push("p_stage_cyc", num_or_text(v));
            }
        } else if let Some(v) = t.strip_prefix(". data_src: ") {
            f.push("data_src", num_or_text(v));
        } else if let Some(v) = t.strip_prefix(".. phys_addr: ") {
            f.push("phys_addr", num_or_text(v));
        } else if let Some(v) = t.strip_prefix(".. data page size: ") {
            f.push("data_page_size", v);
        } else if let Some(v) = t.strip_prefix(".. code page size: ") {
            f.push("code_page_size", v);
        } else if let Some(v) = t.strip_prefix("... transaction: ") {
            f.push("transaction", hex_or_text(v));
        } else {
            ok = false;
        }
        if !ok {
            unparsed.push(format!("SAMPLE: {l}"));
        }
    }
}

/// "0x183 ABI 64-bit"
fn regs_head(which: &str, s: &str, f: &mut Facts) -> bool {
    match s.split_once(" ABI ") {
        Some((mask, abi)) => {
            f.push(format!("{which}.mask"), num_or_text(mask));
            f.push(format!("{which}.abi"), abi);
            true
        }
        None => false,
    }
}

// ---------------------------------------------------------------------------------------
// perf script
// ---------------------------------------------------------------------------------------

/// The `perf script -F` fields the suite asks for, in perf's printing order.
pub const SCRIPT_FIELD_ORDER: &[&str] = &[
    "pid",
    "tid",
    "cpu",
    "time",
    "period",
    "event",
    "addr",
    "weight",
    "ip",
    "iregs",
    "uregs",
    "brstack",
    "phys_addr",
    "data_page_size",
    "code_page_size",
];

/// One line of `perf script` output, as facts.
#[derive(Debug, Clone)]
pub struct ScriptLine {
    pub line: usize,
    pub facts: Facts,
}

/// Parses `perf script -F <fields> --ns -G` output. `fields` must be in
/// [`SCRIPT_FIELD_ORDER`] order; unparseable lines are returned as errors.
pub fn parse_script(text: &str, fields: &[&str]) -> (Vec<ScriptLine>, Vec<String>) {
    let mut out = vec![];
    let mut errors = vec![];
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with("#conformance:") {
            continue;
        }
        match parse_script_line(line, fields) {
            Some(facts) => out.push(ScriptLine { line: i + 1, facts }),
            None => errors.push(format!("line {}: {line}", i + 1)),
        }
    }
    (out, errors)
}

fn parse_script_line(line: &str, fields: &[&str]) -> Option<Facts> {
    let mut f = Facts::new();
    let toks: Vec<&str> = line.split_whitespace().collect();
    let mut t = 0usize;
    let has = |name: &str| fields.contains(&name);
    fn take<'a>(toks: &[&'a str], t: &mut usize) -> Option<&'a str> {
        let v = toks.get(*t).copied();
        *t += 1;
        v
    }
    if has("pid") && has("tid") {
        let (p, tid) = take(&toks, &mut t)?.split_once('/')?;
        f.push("pid", num(p)?);
        f.push("tid", num(tid)?);
    } else if has("pid") {
        f.push("pid", num(take(&toks, &mut t)?)?);
    } else if has("tid") {
        f.push("tid", num(take(&toks, &mut t)?)?);
    }
    if has("cpu") {
        let c = take(&toks, &mut t)?;
        f.push("cpu", num(c.strip_prefix('[')?.strip_suffix(']')?)?);
    }
    if has("time") {
        f.push("time", take(&toks, &mut t)?.strip_suffix(':')?);
    }
    if has("period") {
        f.push("period", num(take(&toks, &mut t)?)?);
    }
    if has("event") {
        f.push("event", take(&toks, &mut t)?.strip_suffix(':')?);
    }
    if has("trace") {
        // The rest of the line: "prev_comm=perf prev_pid=3597 ... next_prio=0".
        f.push("trace", toks.get(t..).unwrap_or(&[]).join(" "));
        return Some(f);
    }
    if has("addr") {
        f.push("addr", hex(take(&toks, &mut t)?)?);
    }
    if has("weight") {
        f.push("weight", num(take(&toks, &mut t)?)?);
    }
    if has("ip") {
        f.push("ip", hex(take(&toks, &mut t)?)?);
    }
    for which in ["iregs", "uregs"] {
        if !has(which) {
            continue;
        }
        // " ABI:2    AX:0x4e    SP:0x7ffe84da7b38 ..."; absent when the sample has none.
        if toks.get(t).is_some_and(|s| s.starts_with("ABI:")) {
            let abi = take(&toks, &mut t)?.strip_prefix("ABI:")?;
            f.push(format!("{which}.abi"), num(abi)?);
            while let Some(tok) = toks.get(t) {
                if tok.starts_with("ABI:") {
                    break;
                }
                let Some((_name, v)) = tok.split_once(":0x") else {
                    break;
                };
                f.push(format!("{which}.reg"), hex(v)?);
                t += 1;
            }
        }
    }
    if has("brstack") {
        // " 0x401234/0x401000/P/-/-/0/COND ..."
        let mut i = 0;
        while let Some(tok) = toks.get(t) {
            let mut parts = tok.split('/');
            let (Some(from), Some(to)) = (parts.next(), parts.next()) else {
                break;
            };
            let (Some(from), Some(to)) = (num(from), num(to)) else {
                break;
            };
            f.push(format!("br{i}.from"), from);
            f.push(format!("br{i}.to"), to);
            i += 1;
            t += 1;
        }
    }
    if has("phys_addr") {
        f.push("phys_addr", hex(take(&toks, &mut t)?)?);
    }
    if has("data_page_size") {
        f.push("data_page_size", take(&toks, &mut t)?);
    }
    if has("code_page_size") {
        f.push("code_page_size", take(&toks, &mut t)?);
    }
    if t < toks.len() {
        return None;
    }
    Some(f)
}

/// `perf script` of a `perf stat record` file: "CPU THREAD VAL ENA RUN TIME EVENT" lines.
pub fn parse_stat_script(text: &str) -> (Vec<ScriptLine>, Vec<String>) {
    let mut out = vec![];
    let mut errors = vec![];
    for (i, line) in text.lines().enumerate() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.is_empty() || line.starts_with("#conformance:") || t[0] == "CPU" {
            continue;
        }
        if t.len() != 7 {
            errors.push(format!("line {}: {line}", i + 1));
            continue;
        }
        let mut f = Facts::new();
        for (k, v) in ["cpu", "thread", "val", "ena", "run", "time"]
            .iter()
            .zip(&t)
        {
            f.push(*k, num_or_text(v));
        }
        f.push("event", t[6]);
        out.push(ScriptLine {
            line: i + 1,
            facts: f,
        });
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines() {
        let text = "# ========\n# captured on    : Sun Nov 22 00:29:17 2026\n# data offset    : 264\n\
# hostname : vm\n# cmdline : /usr/bin/perf record -q \n\
# event : name = cpu-clock, , id = { 573, 574 }, type = 1, size = 128, { sample_period, sample_freq } = 499, sample_type = IP|TID|TIME|PERIOD, read_format = ID|LOST, disabled = 1\n\
# CPU 1: Core ID 1, Die ID 0, Socket ID 0\n# node0 meminfo  : total = 3891780 kB, free = 3663824 kB\n\
# pmu mappings: software = 1, power = 9\n# CPU cache info:\n#  L1 Data                 48K [0]\n\
# memory nodes (nr 1, block size 0x8000000):\n#    0 [24G]: 0-23,32-199\n\
# missing features: TRACING_DATA BRANCH_STACK \n# something new : 1\n";
        let h = parse_header(text);
        let get = |k: &str| {
            h.facts
                .list
                .iter()
                .find(|f| f.key == k)
                .map(|f| f.val.clone())
                .unwrap_or_else(|| panic!("no {k} in {:#?}", h.facts.list))
        };
        assert_eq!(get("data offset"), Val::Num(264));
        assert_eq!(get("cmdline"), Val::Text("/usr/bin/perf record -q ".into()));
        assert_eq!(get("event 0 id"), Val::Text("573,574".into()));
        assert_eq!(get("event 0 { sample_period, sample_freq }"), Val::Num(499));
        assert_eq!(
            get("event 0 sample_type"),
            Val::Text("IP|PERIOD|TID|TIME".into())
        );
        assert_eq!(get("event 0 disabled"), Val::Num(1));
        assert_eq!(get("CPU 1 Die ID"), Val::Num(0));
        assert_eq!(get("node0 free"), Val::Num(3663824));
        assert_eq!(get("pmu power"), Val::Num(9));
        assert_eq!(get("cache"), Val::Text("L1 Data 48K [0]".into()));
        assert_eq!(get("memory block size"), Val::Num(0x8000000));
        assert_eq!(get("memory node 0"), Val::Text("24G 0-23,32-199".into()));
        assert_eq!(
            get("missing features"),
            Val::Text("BRANCH_STACK TRACING_DATA".into())
        );
        assert_eq!(h.unparsed, ["# something new : 1"]);
    }

    #[test]
    fn dump_records() {
        let text = "0x158@x.data [0x50]: event: 1\n.\n. ... raw event: size 16 bytes\n\
.  0000:  01 00 00 00 01 00 50 00 ff ff ff ff 00 00 00 00  ......P.........\n\n\
0 0x158 [0x50]: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1206448) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n\n\
0x470@x.data [0x50]: event: 9\n\
623510381650 0x470 [0x50]: PERF_RECORD_SAMPLE(IP, 0x2): 3538/3538: 0x7fb9c3104158 period: 2004008 addr: 0\n\
... FP chain: nr:2\n.....  0: fffffffffffffe00\n.....  1: 00007fb9c3104158\n ... thread: sh:3538\n\
Aggregated stats:\n";
        let d = parse_dump(text);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].raw.as_deref().map(<[u8]>::len), Some(16));
        assert_eq!(d[0].stamp, Stamp::Values(vec![0]));
        let (f, bad) = dump_record_facts(&d[0]);
        assert!(bad.is_empty(), "{bad:?}");
        assert!(f
            .list
            .iter()
            .any(|f| f.key == "pid" && f.val == Val::Num(-1)));
        assert!(f
            .list
            .iter()
            .any(|f| f.key == "data" && f.val == Val::Num(0)));
        let (f, bad) = dump_record_facts(&d[1]);
        assert!(bad.is_empty(), "{bad:?}");
        assert!(f
            .list
            .iter()
            .any(|f| f.key == "callchain.0" && f.val == Val::Num(0xfffffffffffffe00)));
        assert_eq!(d[1].type_num, Some(9));
    }

    #[test]
    fn script_lines() {
        let fields = [
            "pid", "tid", "cpu", "time", "period", "event", "ip", "iregs", "uregs",
        ];
        let (l, e) = parse_script(
            " 3592/3592  [001]   632.329909020:    3344481 cpu-clock:      55bbfd6ed68b ABI:2    AX:0x4e    SP:0x7ffe84da7b38  ABI:2    AX:0x4e \n",
            &fields,
        );
        assert!(e.is_empty(), "{e:?}");
        let keys: Vec<_> = l[0].facts.list.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "pid",
                "tid",
                "cpu",
                "time",
                "period",
                "event",
                "ip",
                "iregs.abi",
                "iregs.reg",
                "iregs.reg#2",
                "uregs.abi",
                "uregs.reg"
            ]
        );
    }
}
