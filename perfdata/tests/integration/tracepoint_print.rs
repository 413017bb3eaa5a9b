//! Tracepoint `print fmt` evaluation against the running kernel and perf 6.1: every
//! format of the kernel's tracefs parses as libtraceevent parses it, and for every
//! sample of live recordings our `print_trace` text equals `perf script -F trace`'s.

use perfdata::tracepoint::{Format, Formats, KernelSymbols, NoKernelSymbols, PrintFmtError};
use perfdata::types::RecordBody;
use perfdata::Recording;
use perfdata_test_support::{require_tools, tools, Tool};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernel's tracefs (`/sys/kernel/tracing`, or under debugfs), readable.
const TRACEFS: Tool = Tool {
    name: "tracefs",
    provided_by: "root, and `mount -t tracefs nodev /sys/kernel/tracing`",
    probe: || {
        tracefs().map(|_| ()).ok_or_else(|| {
            "no readable events/ under /sys/kernel/tracing or /sys/kernel/debug/tracing".into()
        })
    },
};

fn tracefs() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(PathBuf::from)
        .find(|p| std::fs::read_to_string(p.join("events/header_page")).is_ok())
}

/// Helpers libtraceevent 6.1 does not know: the formats using them do not parse there,
/// and perf 6.1 prints them as `[FAILED TO PARSE]` (as we do).
const UNKNOWN_TO_LIBTRACEEVENT_6_1: &[&str] = &[
    "sizeof",
    "__get_cpumask",
    "__get_rel_cpumask",
    "__get_sockaddr",
    "__get_rel_sockaddr",
    "__print_flags_u64",
    "__print_symbolic_u64",
    "__print_ns_to_secs",
    "__print_ns_without_secs",
    "__print_hex_dump",
    "jiffies_to_msecs",
    "mc_event_error_type",
    "trace_seq_printf",
    "trace_seq_buffer_ptr",
    "__le16_to_cpup",
    "__le32_to_cpup",
];

#[test]
fn every_format_of_the_running_kernel_parses() {
    if !require_tools(&[TRACEFS]) {
        return;
    }
    let root = tracefs().expect("probed");
    let mut parsed = 0;
    let mut unknown: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = vec![];
    for sys in std::fs::read_dir(root.join("events")).unwrap().flatten() {
        let system = sys.file_name().to_string_lossy().into_owned();
        let Ok(events) = std::fs::read_dir(sys.path()) else {
            continue;
        };
        for ev in events.flatten() {
            let Ok(text) = std::fs::read_to_string(ev.path().join("format")) else {
                continue;
            };
            let f = Format::parse(&system, &text, 8)
                .unwrap_or_else(|| panic!("{system}/{:?}: no ID", ev.file_name()));
            match &f.print {
                Ok(p) => {
                    parsed += 1;
                    assert!(!p.format().is_empty() || p.arg_count() == 0);
                }
                Err(PrintFmtError::UnknownHelper(h))
                    if UNKNOWN_TO_LIBTRACEEVENT_6_1.contains(&h.as_str()) =>
                {
                    *unknown.entry(h.clone()).or_default() += 1;
                }
                Err(e) => match rejected_construct(&text) {
                    Some(c) => *unknown.entry(c.to_string()).or_default() += 1,
                    None => failures.push(format!("{system}:{}: {e}", f.name)),
                },
            }
        }
    }
    eprintln!(
        "tracefs formats: {parsed} parse; not parsed by libtraceevent 6.1's rules: {unknown:?}"
    );
    assert!(parsed > 0);
    assert!(
        failures.is_empty(),
        "formats that do not parse:\n{}",
        failures.join("\n")
    );
}

/// Random payloads for every format of the running kernel: printing returns text or an
/// error, and never panics, loops or allocates without bound.
#[test]
fn random_payloads_never_panic() {
    if !require_tools(&[TRACEFS]) {
        return;
    }
    let root = tracefs().expect("probed");
    let mut all = vec![];
    for sys in std::fs::read_dir(root.join("events")).unwrap().flatten() {
        let system = sys.file_name().to_string_lossy().into_owned();
        for ev in std::fs::read_dir(sys.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(text) = std::fs::read_to_string(ev.path().join("format")) {
                all.extend(Format::parse(&system, &text, 8));
            }
        }
    }
    let ids: Vec<(u16, usize)> = all
        .iter()
        .map(|f| {
            (
                f.id,
                f.fields
                    .iter()
                    .map(|x| x.offset + x.size)
                    .max()
                    .unwrap_or(8),
            )
        })
        .collect();
    let formats = Formats::from_formats(all, perfdata::Endianness::Little, 8);
    let mut rng = perfdata_test_support::XorShift::default();
    let mut next = move || rng.next_u64();
    let (mut printed, mut refused) = (0, 0);
    for (id, end) in ids {
        for len in [2, end / 2, end, end + 8, end + 64] {
            for round in 0..4 {
                let mut raw: Vec<u8> = (0..len.max(2)).map(|_| next() as u8).collect();
                if round == 0 {
                    // Small numbers: locators that point inside the payload.
                    raw.iter_mut().for_each(|b| *b %= 24);
                }
                raw[..2].copy_from_slice(&id.to_le_bytes());
                let mut out = vec![];
                match formats.write_trace(&raw, &NoKernelSymbols, &mut out) {
                    Ok(_) => printed += 1,
                    Err(_) => refused += 1,
                }
                assert!(out.len() < 1 << 20, "{id}: {} bytes of text", out.len());
            }
        }
    }
    eprintln!("random payloads: {printed} printed, {refused} refused with an error");
    assert!(printed > 0);
}

/// A construct of `format`'s print line that libtraceevent 6.1's grammar rejects (perf
/// 6.1 then prints the event as `[FAILED TO PARSE]`).
fn rejected_construct(format: &str) -> Option<&'static str> {
    let print = &format[format.find("print fmt:")?..];
    let compact: String = print.split_whitespace().collect();
    if compact.contains("({") {
        Some("a statement expression `({ … })`")
    } else if compact.contains("{}") {
        Some("an empty `{ }` list")
    } else if compact.contains("(REC)->") {
        Some("`(REC)->field`")
    } else if ["__get_dynamic_array_len(", "__get_rel_dynamic_array_len("]
        .iter()
        .any(|h| {
            compact.split(h).skip(1).any(|rest| {
                // An operator after the helper inside another helper's argument list
                // (`__print_array(…, __get_dynamic_array_len(x) / 8, …)`): those
                // arguments take no operators.
                rest.split_once(')')
                    .is_some_and(|(_, after)| after.starts_with(['/', '*', '+', '-']))
            })
        })
    {
        Some("an operator in a `__print_array`/`__print_hex` argument")
    } else {
        None
    }
}

/// The kernel's symbols from `/proc/kallsyms`, chosen and bounded as perf's kallsyms
/// loader does (`symbols__fixup_duplicate`, `symbols__fixup_end`): (start, end, name).
struct Kallsyms {
    syms: Vec<(u64, u64, String)>,
}

/// A kallsyms entry: address, type letter, name, whether a module's.
type Entry = (u64, char, String, bool);

impl Kallsyms {
    fn load() -> Option<Kallsyms> {
        let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
        let mut syms: Vec<Entry> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let addr = u64::from_str_radix(w.next()?, 16).ok()?;
                let ty = w.next()?.chars().next()?;
                let name = w.next()?.to_string();
                let module = w.next().is_some();
                matches!(ty.to_ascii_uppercase(), 'T' | 'W' | 'D' | 'B')
                    .then_some((addr, ty, name, module))
            })
            .collect();
        if syms.iter().all(|s| s.0 == 0) {
            return None; // addresses hidden (kptr_restrict)
        }
        syms.sort_by_key(|s| s.0); // stable: file order among equal addresses
        let mut kept: Vec<Entry> = vec![];
        for s in syms {
            match kept.last_mut() {
                Some(prev) if prev.0 == s.0 => {
                    if better(&s, prev) {
                        *prev = s;
                    }
                }
                _ => kept.push(s),
            }
        }
        let round = |x: u64| x.div_ceil(4096) * 4096;
        let ends: Vec<u64> = (0..kept.len())
            .map(|i| match kept.get(i + 1) {
                // Between the kernel's symbols and the modules', a page.
                Some(next) if next.3 != kept[i].3 => round(kept[i].0 + 4096),
                Some(next) => next.0,
                None => round(kept[i].0) + 4096,
            })
            .collect();
        Some(Kallsyms {
            syms: kept
                .into_iter()
                .zip(ends)
                .map(|((a, _, n, _), e)| (a, e, n))
                .collect(),
        })
    }
}

/// perf's `choose_best_symbol` among kallsyms entries at one address (all of length 0
/// then): not weak, then global, then fewer leading underscores, then the longer name.
fn better(b: &Entry, a: &Entry) -> bool {
    let weak = |s: &Entry| s.1 == 'W' || s.1 == 'w';
    let global = |s: &Entry| s.1.is_ascii_uppercase() && !weak(s);
    let unders = |s: &Entry| s.2.len() - s.2.trim_start_matches('_').len();
    if weak(a) != weak(b) {
        return weak(a);
    }
    if global(a) != global(b) {
        return global(b);
    }
    if unders(a) != unders(b) {
        return unders(b) < unders(a);
    }
    b.2.len() > a.2.len()
}

impl KernelSymbols for Kallsyms {
    fn resolve(&self, addr: u64) -> Option<(Cow<'_, str>, u64)> {
        let i = self.syms.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (start, end, name) = &self.syms[i];
        (addr < *end).then(|| (Cow::Borrowed(name.as_str()), addr - start))
    }
}

/// A probe created for the test and deleted after it.
struct Probe(String);

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = Command::new("perf")
            .args(["probe", "-q", "-d", &self.0])
            .output();
    }
}

fn probe(args: &[&str], name: &str) -> Option<Probe> {
    let o = Command::new("perf")
        .args(["probe", "-q"])
        .args(args)
        .output()
        .ok()?;
    if !o.status.success() {
        eprintln!(
            "perf probe {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        return None;
    }
    Some(Probe(name.to_string()))
}

/// `perf record ARGS` into `out`; `false` (and why, printed) when perf cannot record.
fn record(out: &Path, args: &[&str]) -> bool {
    let o = Command::new("perf")
        .args(["record", "-q", "-N", "-o"])
        .arg(out)
        .args(args)
        .output()
        .expect("perf runs");
    if !o.status.success() || !out.exists() {
        eprintln!(
            "perf record {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        return false;
    }
    true
}

/// Compares every sample's text with perf script's; returns per-event (samples,
/// mismatches) and the first mismatches.
fn compare(
    path: &Path,
    kernel: &dyn KernelSymbols,
) -> (BTreeMap<String, (usize, usize)>, Vec<String>) {
    let recording = Recording::open(path).unwrap();
    let data = recording.data().unwrap();
    let formats = Formats::of_file(&data).expect("tracing data");
    let mut ours: Vec<(u64, String, Result<String, String>)> = vec![];
    recording
        .for_each_record(&mut |_, _, rec, ctx| {
            if let RecordBody::Sample(s) = data.decode(&rec, ctx)? {
                let raw = s.raw.as_ref().expect("RAW data");
                let mut text = vec![];
                let r = formats.write_trace(raw.data.as_slice(), kernel, &mut text);
                let name = r
                    .as_ref()
                    .map_or("?".into(), |f| format!("{}:{}", f.system, f.name));
                let text = r
                    .map(|_| String::from_utf8_lossy(&text).into_owned())
                    .map_err(|e| e.to_string());
                ours.push((s.time.unwrap_or(0), name, text));
            }
            Ok(true)
        })
        .unwrap();
    ours.sort_by_key(|o| o.0);
    let o = Command::new("perf")
        .args(["script", "-F", "trace", "-i"])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let theirs = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = theirs.lines().collect();
    assert_eq!(
        lines.len(),
        ours.len(),
        "perf script printed another number of samples"
    );
    let mut per_event: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut mismatches = vec![];
    for ((_, name, text), line) in ours.iter().zip(&lines) {
        let e = per_event.entry(name.clone()).or_default();
        e.0 += 1;
        let same = text.as_ref().is_ok_and(|t| t == line);
        if !same {
            e.1 += 1;
            if mismatches.len() < 20 {
                mismatches.push(format!("{name}\n  perf: {line}\n  ours: {text:?}"));
            }
        }
    }
    (per_event, mismatches)
}

#[test]
fn trace_text_equals_perf_script() {
    if !require_tools(&[tools::PERF_RECORD, TRACEFS]) {
        return;
    }
    let Some(kernel) = Kallsyms::load() else {
        assert!(
            !perfdata_test_support::tools::required(),
            "/proc/kallsyms hides addresses"
        );
        perfdata_test_support::skip("/proc/kallsyms hides the kernel's addresses");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pid = std::process::id();
    // Probes with arguments: a kprobe on openat's path (string) and flags, and a
    // uprobe on libc's malloc with its size.
    let kname = format!("pdk{pid}");
    let uname = format!("pdu{pid}");
    let kprobe = probe(
        &[
            "-a",
            &format!("{kname}=do_sys_openat2 dfd=%di:s32 path=+0(%si):string"),
        ],
        &kname,
    );
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists());
    let uprobe = libc.and_then(|l| {
        probe(
            &["-x", l, "-a", &format!("{uname}=malloc size=%di:u64")],
            &uname,
        )
    });
    let file = dir.path().join("f");
    let workload = format!(
        "trap : USR1; for i in 1 2 3; do cat /proc/self/stat > /dev/null; done; \
         echo x > {f}; sync; dd if=/dev/zero of={f} bs=4k count=4 oflag=direct 2>/dev/null; \
         kill -USR1 $$; sleep 0.05",
        f = file.display()
    );
    let mut events: Vec<String> = [
        "sched:*",
        "raw_syscalls:*",
        "syscalls:sys_enter_openat",
        "syscalls:sys_exit_openat",
        "irq:*",
        "timer:*",
        "kmem:*",
        "block:*",
        "signal:*",
    ]
    .iter()
    .map(|e| e.to_string())
    .collect();
    if kprobe.is_some() {
        events.push(format!("probe:{kname}"));
    }
    if uprobe.is_some() {
        events.push(format!("probe_libc:{uname}"));
    }
    let mut args: Vec<&str> = vec![];
    for e in &events {
        args.extend(["-e", e]);
    }
    let task = dir.path().join("task.data");
    let mut task_args = args.clone();
    task_args.extend(["--", "sh", "-c", &workload]);
    let system = dir.path().join("system.data");
    let recorded_task = record(&task, &task_args);
    // System-wide for a moment: interrupts and timers of every CPU.
    let recorded_system = record(
        &system,
        &[
            "-a",
            "-e",
            "irq:*",
            "-e",
            "timer:*",
            "-e",
            "sched:sched_switch",
            "--",
            "sleep",
            "0.2",
        ],
    );
    if !(recorded_task && recorded_system) {
        assert!(
            !perfdata_test_support::tools::required(),
            "perf could not record tracepoints"
        );
        perfdata_test_support::skip("perf cannot record tracepoints here");
        return;
    }
    if kprobe.is_none() || uprobe.is_none() {
        eprintln!("note: a probe could not be created; its events are not compared");
    }
    let mut total: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut all_mismatches = vec![];
    // More recordings to check, made elsewhere on this machine (its kallsyms resolve
    // their `%pS`): `PERFDATA_TRACE_RECORDINGS=a.data:b.data`.
    let extra: Vec<PathBuf> = std::env::var_os("PERFDATA_TRACE_RECORDINGS")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    for path in [&task, &system].into_iter().chain(&extra) {
        let (per_event, mismatches) = compare(path, &kernel);
        let n: usize = per_event.values().map(|v| v.0).sum();
        eprintln!(
            "{}: {n} samples",
            path.file_name().unwrap().to_string_lossy()
        );
        for (k, (n, bad)) in per_event {
            let t = total.entry(k).or_default();
            t.0 += n;
            t.1 += bad;
        }
        all_mismatches.extend(mismatches);
    }
    let samples: usize = total.values().map(|v| v.0).sum();
    let bad: usize = total.values().map(|v| v.1).sum();
    eprintln!(
        "trace texts compared with perf script: {samples} samples of {} events, {bad} differ",
        total.len()
    );
    for (k, (n, b)) in &total {
        eprintln!("  {k}: {n} samples, {b} differ");
    }
    assert!(samples > 0);
    assert!(
        all_mismatches.is_empty(),
        "{bad} of {samples} trace texts differ from perf script's:\n{}",
        all_mismatches.join("\n")
    );
}

/// Print formats that exercise libtraceevent's corners, each put in place of
/// `sched_switch`'s in a perf 6.1 recording: perf prints the recording's samples
/// through it, and so do we.
const SYNTHETIC_FORMATS: &[&str] = &[
    // `%c`, `% d`, `%+d` take no argument: the arguments after them shift; an int
    // field printed with `%s` prints its bytes.
    r#""%c|% d|%+d|%s|%d", REC->prev_pid, REC->next_pid, REC->prev_prio"#,
    // An unknown helper: [FAILED TO PARSE] and the fields.
    r#""%d %d", REC->prev_pid, sizeof(int)"#,
    // Flags (delimiter, unknown bits), symbols (unknown value, enum names).
    r#""%s/%s/%s/%s", __print_flags(REC->prev_state, "|", { 1, "S" }, { 2, "D" }, { 0x10, "X" }), __print_flags(REC->next_pid, "", { 1, "a" }, { 2, "b" }), __print_symbolic(REC->prev_prio, { 120, "normal" }, { SOME_ENUM, "enum" }), __print_symbolic(REC->next_prio, { TIMER_SOFTIRQ, "one" }, { 0, "zero" })"#,
    // Priorities as libtraceevent binds them, parentheses and ternaries included.
    r#""%d %d %d %d %d %d", REC->prev_pid & (REC->next_pid | 1), REC->prev_pid ? 1 : 2 + 3, -REC->prev_pid * 2, REC->prev_pid - 1 < 0, !REC->next_pid, REC->prev_pid % 7 + REC->next_pid / 3"#,
    // printf flags, widths, precision, length modifiers, casts that mask.
    r#""%08x|%-6d|%5s|%.2s|%#x|%hhd|%lld|%u|%hu|%zu|%lx|%o|%X", (u8)REC->prev_pid, (int)REC->prev_state, REC->prev_comm, REC->next_comm, REC->next_pid, REC->prev_pid, (long)REC->prev_state, -1, -1, -1, (unsigned int)-1, REC->prev_prio, REC->prev_pid"#,
    // `*` widths and precisions from fields.
    r#""[%*d] [%-*s] [%.*s]", REC->next_prio, REC->next_pid, REC->prev_prio, REC->next_comm, REC->prev_pid, REC->prev_comm"#,
    // Strings through ternaries, atoms, escapes, %%.
    r#""%s %s a\tb\\c \"q\" 100%% %5%", REC->prev_pid > 100 ? REC->prev_comm : "low", REC->next_pid ? "busy" : "idle""#,
    // Arrays of a field, indexing, hex dumps, %p.
    r#""%d %d %s %s %s %p %p", REC->prev_comm[1], REC->next_comm[0] + 1, __print_hex(REC->prev_comm, 4), __print_hex_str(REC->next_comm, 3), __print_array(REC->prev_comm, 2, 4), REC->prev_state, REC->next_prio"#,
    // A MAC and addresses of fields of the wrong size.
    r#""%pM %pI4 %pI6c %pU %pISpc", REC->prev_comm, REC->prev_pid, REC->next_comm, REC->prev_comm, REC->next_comm"#,
    // A flag named by an unknown enum prints for 0; a unary operator on the right of
    // a binary one rotates above it; `__builtin_expect` is its first argument.
    r#""%s %d %d", __print_flags(REC->next_pid, "|", { NOT_A_NUMBER, "none" }, { 1, "a" }), REC->prev_pid * -REC->next_pid, __builtin_expect(!!(REC->prev_pid), 1)"#,
    // Arguments past the conversions are ignored; a conversion without one fails.
    r#""%d", REC->prev_pid, REC->next_pid"#,
    r#""%d %d", REC->prev_pid"#,
];

/// `recording` with `sched_switch`'s print format replaced by `print`.
fn with_print_format(recording: &Path, print: &str, out: &Path) {
    use perfdata::types::FeatureBody;
    use perfdata::write::{Builder, FeatureData, WriteOptions};
    let bytes = std::fs::read(recording).unwrap();
    let data = perfdata::PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    file.make_typed().unwrap();
    let mut replaced = 0;
    for f in &mut file.features {
        let FeatureData::Typed(body) = &mut f.data else {
            continue;
        };
        let FeatureBody::TracingData(t) = &mut **body else {
            continue;
        };
        for s in &mut t.body.systems {
            for file in &mut s.formats {
                let text = String::from_utf8_lossy(file.data.as_slice()).into_owned();
                if !text.starts_with("name: sched_switch\n") {
                    continue;
                }
                let head = &text[..text.find("print fmt:").unwrap()];
                let new = format!("{head}print fmt: {print}\n");
                file.data = perfdata::rt::Bytes(new.into_bytes().into());
                replaced += 1;
            }
        }
    }
    assert_eq!(replaced, 1, "sched_switch's format in the tracing data");
    file.save(out, WriteOptions::default()).unwrap();
}

#[test]
fn corner_cases_print_as_perf_prints_them() {
    if !require_tools(&[tools::PERF]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let recording = perfdata_test_support::workspace().join("perfdata/tests/data/tracepoint.data");
    let mut failures = vec![];
    let mut samples = 0;
    let mut parsed = 0;
    for (i, print) in SYNTHETIC_FORMATS.iter().enumerate() {
        let out = dir.path().join(format!("f{i}.data"));
        with_print_format(&recording, print, &out);
        let bytes = std::fs::read(&out).unwrap();
        let formats = Formats::of_file(&perfdata::PerfData::open(&bytes).unwrap()).unwrap();
        let switch = formats.iter().find(|f| f.name == "sched_switch").unwrap();
        parsed += usize::from(switch.print.is_ok());
        let (per_event, mismatches) = compare(&out, &NoKernelSymbols);
        samples += per_event.values().map(|v| v.0).sum::<usize>();
        if !mismatches.is_empty() {
            failures.push(format!("print fmt: {print}\n{}", mismatches.join("\n")));
        }
    }
    eprintln!(
        "{} synthetic print formats, {samples} samples printed as perf prints them",
        SYNTHETIC_FORMATS.len() - failures.len()
    );
    assert!(samples > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Two of them are meant not to parse (`sizeof`, a missing argument).
    assert_eq!(parsed, SYNTHETIC_FORMATS.len() - 2);
}
