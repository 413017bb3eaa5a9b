//! `perfdata::header_text` against perf's own header text (`perf report --header-only`,
//! `perf script --header-only`, with and without `-I`): the stored text of every fixture,
//! fresh recordings of several kinds, and the external corpus.

use perfdata::header_text::{self, HeaderTextOptions, Machine};
use perfdata::Recording;
use perfdata_test_support::{
    corpus_dir, fixture_files, fixtures_dir, require_tools, require_tools_for, skip, tools,
};
use std::path::Path;
use std::process::{Command, Stdio};

/// Our text for the recording at `path`, read on `machine`.
fn ours(path: &Path, full: bool, pipe_features: bool, machine: &Machine) -> String {
    let recording = Recording::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data = recording.data().unwrap();
    let opts = HeaderTextOptions {
        show_full_info: full,
        pipe_features,
        machine: machine.clone(),
        ..HeaderTextOptions::for_recording(&recording).unwrap()
    };
    let mut out = vec![];
    header_text::write(&data, &opts, &mut out).unwrap();
    String::from_utf8(out).unwrap_or_else(|e| panic!("{}: not UTF-8: {e}", path.display()))
}

/// Our text for the pipe stream at `path`, read as a stream (`header_text::write_stream`).
fn streamed(path: &Path, full: bool, pipe_features: bool) -> String {
    let recording = Recording::open(path).unwrap();
    let opts = HeaderTextOptions {
        show_full_info: full,
        pipe_features,
        machine: Machine::this(),
        ..HeaderTextOptions::for_recording(&recording).unwrap()
    };
    let file = std::fs::File::open(path).unwrap();
    let mut input = perfdata::PipeReader::new(std::io::BufReader::new(file)).unwrap();
    let mut out = vec![];
    header_text::write_stream(&mut input, &opts, &mut out).unwrap();
    if pipe_features {
        // What follows the features is left to read.
        let next = input.next_record().unwrap();
        let feature = perfdata::types::RecordType::HEADER_FEATURE;
        assert!(next.is_none_or(|r| r.raw.record_type() != feature));
    }
    String::from_utf8(out).unwrap()
}

/// The first line where two texts differ, both ways, or `None` when they are equal.
fn first_difference(ours: &str, perf: &str) -> Option<String> {
    if ours == perf {
        return None;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.split('\n').collect(), perf.split('\n').collect());
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    Some(format!(
        "line {}:\n  ours: {:?}\n  perf: {:?}",
        at + 1,
        a.get(at).copied().unwrap_or("<end>"),
        b.get(at).copied().unwrap_or("<end>")
    ))
}

/// glibc's own `ctime` of `path`'s modification time: the line perf prints from it.
fn c_ctime(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    extern "C" {
        fn ctime_r(time: *const libc::time_t, buf: *mut libc::c_char) -> *mut libc::c_char;
    }
    let mtime: libc::time_t = std::fs::metadata(path).unwrap().mtime();
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: ctime_r writes at most 26 bytes into the 64-byte buffer and keeps no pointer.
    let p = unsafe { ctime_r(&mtime, buf.as_mut_ptr()) };
    assert!(!p.is_null(), "ctime_r failed");
    // SAFETY: ctime_r wrote a NUL-terminated string into `buf`.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Every fixture against the text `perf report --header-only -I` printed for it
/// (`conformance/fixtures/perf-output/NAME.header.txt`; pipe streams with their
/// HEADER_FEATURE records). The stored text was made when the fixture was recorded; a
/// checkout gives the file a new modification time, so the one line perf computes from
/// it, `captured on`, is taken from glibc's `ctime` of the file's time now, and the whole
/// text is compared byte for byte.
#[test]
fn fixtures_match_perfs_stored_header_text() {
    let mut compared = 0;
    let mut differ = vec![];
    for path in fixture_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.strip_suffix(".data").unwrap();
        let stored = fixtures_dir().join(format!("perf-output/{stem}.header.txt"));
        let stored = std::fs::read_to_string(&stored)
            .unwrap_or_else(|e| panic!("{}: {e}", stored.display()));
        let header_file = if path.is_dir() {
            path.join("data")
        } else {
            path.clone()
        };
        let captured = format!("# captured on    : {}", c_ctime(&header_file));
        let mut lines: Vec<&str> = stored.split_inclusive('\n').collect();
        assert!(
            lines[1].starts_with("# captured on    : "),
            "{name}: stored text without its captured-on line"
        );
        lines[1] = &captured;
        let perf = lines.concat();
        // Every fixture has the features perf would otherwise take from its machine.
        let text = ours(&path, true, true, &Machine::default());
        compared += 1;
        if let Some(d) = first_difference(&text, &perf) {
            differ.push(format!("{name}: {d}"));
        }
    }
    assert!(compared >= 20, "only {compared} fixtures");
    assert!(
        differ.is_empty(),
        "{} of {compared} fixtures differ from perf's header text:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// perf's stdout for `perf SUB --header-only [-I] -i PATH`, or its error.
fn perf_header(path: &Path, sub: &str, full: bool) -> Result<String, String> {
    let mut c = Command::new("perf");
    c.arg(sub).arg("--header-only");
    if full {
        c.arg("-I");
    }
    c.arg("-i").arg(path);
    let o = c
        .env("PERF_CONFIG", "/dev/null")
        .env("PERF_PAGER", "cat")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running perf: {e}"))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(err.lines().last().unwrap_or("").to_string());
    }
    String::from_utf8(o.stdout).map_err(|e| format!("perf printed non-UTF-8: {e}"))
}

/// Our text against `perf script --header-only` and `perf report --header-only`, with and
/// without `-I`, for the recording at `path`; the differences.
fn compare_live(path: &Path, name: &str) -> Vec<String> {
    let pipe = std::fs::read(path).is_ok_and(|b| b.get(8..16) == Some(&16u64.to_le_bytes()[..]));
    let mut differ = vec![];
    for sub in ["script", "report"] {
        for full in [false, true] {
            let perf = match perf_header(path, sub, full) {
                Ok(t) => t,
                Err(e) => {
                    differ.push(format!("{name}: perf {sub} failed: {e}"));
                    continue;
                }
            };
            // Only perf report goes on reading a pipe for its HEADER_FEATURE records.
            let text = ours(path, full, sub == "report", &Machine::this());
            let i = if full { " -I" } else { "" };
            if let Some(d) = first_difference(&text, &perf) {
                differ.push(format!(
                    "{name} (perf {sub} --header-only{i}, pipe {pipe}): {d}"
                ));
            }
            if pipe {
                // The same stream read as it comes.
                let text = streamed(path, full, sub == "report");
                if let Some(d) = first_difference(&text, &perf) {
                    differ.push(format!(
                        "{name} streamed (perf {sub} --header-only{i}): {d}"
                    ));
                }
            }
        }
    }
    differ
}

/// Fresh recordings of several kinds, each against perf's text of it (same machine, same
/// time zone, same file: byte for byte, `captured on` included).
#[test]
fn fresh_recordings_match_perf_header_only() {
    if !require_tools(&[tools::PERF_RECORD]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = [
        "sh",
        "-c",
        "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 0.01",
    ];
    // (name, perf record options); the pipe is written to standard output.
    let kinds: &[(&str, &[&str])] = &[
        ("plain", &[]),
        ("callgraph", &["-g"]),
        ("system-wide", &["-a"]),
        (
            "tracepoint",
            &["-e", "sched:sched_switch,sched:sched_process_exec"],
        ),
        ("dwarf", &["--call-graph", "dwarf,4096"]),
        ("group", &["-e", "{cpu-clock,task-clock}"]),
        ("clock", &["-k", "mono"]),
        ("compressed", &["-z"]),
        ("pipe", &["-o", "-"]),
    ];
    let mut recorded = vec![];
    let mut differ = vec![];
    for (name, opts) in kinds {
        let file = dir.path().join(format!("{name}.data"));
        let mut c = Command::new("perf");
        c.args(["record", "-q", "--no-buildid-cache"]);
        if !opts.contains(&"-o") {
            c.arg("-o").arg(&file);
        }
        c.args(*opts).arg("--").args(work);
        c.env("PERF_CONFIG", "/dev/null").stdin(Stdio::null());
        if opts.contains(&"-o") {
            c.stdout(std::fs::File::create(&file).unwrap());
        } else {
            c.stdout(Stdio::null());
        }
        let o = c.stderr(Stdio::piped()).output().unwrap();
        if !o.status.success() {
            // -a and tracepoints need privileges the plain probe does not.
            let err = String::from_utf8_lossy(&o.stderr);
            skip(&format!(
                "perf record {} failed here: {}",
                opts.join(" "),
                err.lines().last().unwrap_or("")
            ));
            continue;
        }
        recorded.push(*name);
        differ.extend(compare_live(&file, name));
    }
    assert!(
        recorded.contains(&"plain") && recorded.contains(&"pipe"),
        "the plain and pipe recordings failed"
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A copy of `path` with its attrs cut to perf 6.1's 128 bytes (a newer perf's 136-byte
/// attrs add only `config3`, zero here), so that perf 6.1 reads the rest of its header.
fn with_attrs_perf_reads(path: &Path, out: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    let data = perfdata::PerfData::open(&bytes).unwrap();
    let mut file = perfdata::write::Builder::read(&data).unwrap();
    for a in &mut file.attrs {
        if a.attr.size <= 128 || a.attr.config3.unwrap_or(0) != 0 {
            return false;
        }
        a.attr.size = 128;
        a.attr.config3 = None;
    }
    file.placement = None;
    file.save(out, perfdata::write::WriteOptions::default())
        .unwrap();
    true
}

/// The external corpus: files from other machines and perf versions. perf 6.1 reads the
/// header of those whose attrs are not larger than its own; those it refuses for their
/// attrs are compared as copies with perf 6.1's attrs (their features as they are).
#[test]
fn corpus_files_perf_reads_match_perf_header_only() {
    if !require_tools_for("the corpus against perf", &[tools::PERF]) {
        return;
    }
    let Some(corpus) = corpus_dir() else { return };
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.extension().is_some_and(|e| e == "md" || e == "gz"))
        .collect();
    files.sort();
    let dir = tempfile::tempdir().unwrap();
    let (mut compared, mut rewritten) = (0, 0);
    let mut differ = vec![];
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut path = path.clone();
        if let Err(e) = perf_header(&path, "script", false) {
            let copy = dir.path().join(&name);
            if !with_attrs_perf_reads(&path, &copy) {
                skip(&format!(
                    "{name}: perf script --header-only refuses it: {e}"
                ));
                continue;
            }
            rewritten += 1;
            path = copy;
        }
        compared += 1;
        differ.extend(compare_live(&path, &name));
    }
    assert!(
        compared > 0 && rewritten > 0,
        "perf read none of the corpus"
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Every fixture written in the other byte order by this crate's writer: perf reads it
/// swapping as it does (its attr flag bits reversed byte by byte, `clockid` and
/// `sample_regs_intr` left unswapped, a pipe's HEADER_FEATURE records not swapped at all),
/// and the text follows.
#[test]
fn other_byte_order_copies_match_perf() {
    if !require_tools(&[tools::PERF]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut differ = vec![];
    let mut compared = 0;
    for path in fixture_files().into_iter().filter(|p| p.is_file()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let data = perfdata::PerfData::open(&bytes).unwrap();
        let mut file = perfdata::write::Builder::read(&data).unwrap();
        // Compressed records keep their producer's order: decompressed, they change.
        file.decompress().unwrap();
        let copy = dir.path().join(&name);
        let other = match data.format.endian {
            perfdata::Endianness::Little => perfdata::Endianness::Big,
            perfdata::Endianness::Big => perfdata::Endianness::Little,
        };
        file.save(
            &copy,
            perfdata::write::WriteOptions::default().endian(other),
        )
        .unwrap();
        compared += 1;
        differ.extend(compare_live(&copy, &format!("{name} ({other:?}-endian)")));
    }
    assert!(compared >= 20, "only {compared} fixtures");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Features perf cannot process: it stops processing at the first one and prints every
/// later feature as it prints an empty one (`(null)`, zeros, "not available"); an
/// EVENT_DESC with bits it does not know is "not available"; a feature table the file
/// cuts short gives no feature lines at all.
#[test]
fn damaged_features_print_as_perf_prints_them() {
    use perfdata::rt::{Bytes, Str};
    use perfdata::types::{FeatureBody, FeatureId, PerfString};
    use perfdata::write::{Builder, FeatureData, WriteOptions};
    if !require_tools(&[tools::PERF]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    type Edit = fn(&mut FeatureBody<'static>) -> bool;
    // (name, fixture, feature, edit of its decoded value)
    let edits: &[(&str, &str, FeatureId, Edit)] = &[
        ("cache-version", "plain.data", FeatureId::CACHE, |f| {
            let FeatureBody::Cache(c) = f else {
                return false;
            };
            c.version = 2;
            true
        }),
        (
            "mem-topology-version",
            "plain.data",
            FeatureId::MEM_TOPOLOGY,
            |f| {
                let FeatureBody::MemTopology(m) = f else {
                    return false;
                };
                m.version = 3;
                true
            },
        ),
        (
            "numa-cpu-list",
            "plain.data",
            FeatureId::NUMA_TOPOLOGY,
            |f| {
                let FeatureBody::NumaTopology(n) = f else {
                    return false;
                };
                n.nodes[0].cpus = PerfString {
                    text: Str::padded("1-0", 64),
                };
                true
            },
        ),
        ("socket-id", "plain.data", FeatureId::CPU_TOPOLOGY, |f| {
            let FeatureBody::CpuTopology(t) = f else {
                return false;
            };
            let mut ids = t.cpus.take().unwrap().to_vec();
            ids[0].socket_id = 1000;
            t.cpus = Some(perfdata::rt::Array::Owned(ids));
            true
        }),
        (
            "event-desc-bits",
            "multi-event.data",
            FeatureId::EVENT_DESC,
            |f| {
                let FeatureBody::EventDesc(d) = f else {
                    return false;
                };
                d.events[1].attr.sample_type.0 |= 1 << 30;
                true
            },
        ),
        (
            "group-desc",
            "group-read.data",
            FeatureId::GROUP_DESC,
            |f| {
                let FeatureBody::GroupDesc(g) = f else {
                    return false;
                };
                g.groups[0].nr_members = 3;
                true
            },
        ),
        (
            "clock-data-version",
            "clock-mono.data",
            FeatureId::CLOCK_DATA,
            |f| {
                let FeatureBody::ClockData(c) = f else {
                    return false;
                };
                c.version = 2;
                true
            },
        ),
    ];
    let mut differ = vec![];
    for (name, fixture, id, edit) in edits {
        let bytes = std::fs::read(perfdata_test_support::fixture_path(fixture)).unwrap();
        let data = perfdata::PerfData::open(&bytes).unwrap();
        let mut file = Builder::read(&data).unwrap().into_owned();
        let fctx = file.feature_ctx();
        file.make_features_typed(&fctx).unwrap();
        let f = file.features.iter_mut().find(|f| f.id == *id).unwrap();
        let FeatureData::Typed(body) = &mut f.data else {
            panic!("{name}: {id:?} does not decode")
        };
        assert!(edit(body), "{name}: not the feature expected");
        let copy = dir.path().join(format!("{name}.data"));
        file.save(&copy, WriteOptions::default()).unwrap();
        differ.extend(compare_live(&copy, name));
    }
    // A hostname cut to two bytes: perf cannot read it, nor process any feature after it.
    let bytes = std::fs::read(perfdata_test_support::fixture_path("plain.data")).unwrap();
    let data = perfdata::PerfData::open(&bytes).unwrap();
    let mut file = Builder::read(&data).unwrap();
    let f = file
        .features
        .iter_mut()
        .find(|f| f.id == FeatureId::HOSTNAME)
        .unwrap();
    f.data = FeatureData::Raw(Bytes::borrowed(&[8, 0]));
    let copy = dir.path().join("hostname-cut.data");
    file.save(&copy, WriteOptions::default()).unwrap();
    differ.extend(compare_live(&copy, "hostname-cut"));
    // Big-endian without HOSTNAME: perf takes the bitmap for 32-bit words, then for no
    // feature but BUILD_ID.
    let mut file = Builder::read(&data).unwrap();
    file.features.retain(|f| f.id != FeatureId::HOSTNAME);
    let copy = dir.path().join("no-hostname-big-endian.data");
    let big = WriteOptions::default().endian(perfdata::Endianness::Big);
    file.save(&copy, big).unwrap();
    differ.extend(compare_live(&copy, "no-hostname-big-endian"));
    // The feature table cut in its third entry.
    let h = data.header.as_ref().unwrap();
    let table = (h.data.offset + h.data.size) as usize;
    let copy = dir.path().join("table-cut.data");
    std::fs::write(&copy, &bytes[..table + 40]).unwrap();
    differ.extend(compare_live(&copy, "table-cut"));
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
