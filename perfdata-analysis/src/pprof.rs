//! The pprof format (`profile.proto`, gzip-compressed), read by `go tool pprof` and the
//! services that ingest it: two sample types per event as perf_data_converter writes them
//! (`<event>_sample/count`, `<event>_event/<unit>` weighted by period), locations with
//! their mapping and address and, from our symbolization, their functions and lines (an
//! inline chain as several lines of one location), so that pprof needs no binaries;
//! mappings keep path, file offset and build id, so it can still re-symbolize.

use crate::pprof_proto as pb;
use crate::sampled::Sampled;
use rustc_hash::FxHashMap as HashMap;
use std::io::Write;

/// Options of [`profile`].
#[derive(Debug, Clone, Default)]
pub struct PprofOptions {
    /// Only the samples of this process.
    pub pid: Option<i32>,
    /// A `cpu` label on each sample (gather with [`crate::sampled::GatherOptions::cpu`]).
    pub cpu_label: bool,
    /// A `time_ns` label on each sample (gather with
    /// [`crate::sampled::GatherOptions::each_sample`]).
    pub time_label: bool,
}

/// Builds a string table (index 0 is "").
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: vec![],
            index: HashMap::default(),
        };
        s.get("");
        s
    }

    fn get(&mut self, text: &str) -> i64 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_string());
        self.index.insert(text.to_string(), i);
        i
    }
}

/// The processes with samples, by pid, with their name (for `--per-process`).
pub fn processes(sampled: &Sampled) -> Vec<(i32, String)> {
    let mut seen: Vec<(i32, String)> = vec![];
    for t in &sampled.threads {
        if !seen.iter().any(|(p, _)| *p == t.pid) {
            seen.push((t.pid, t.process_name.clone()));
        }
    }
    seen.sort_by_key(|(p, _)| *p);
    seen
}

/// The pprof profile of the gathered samples (of one process with [`PprofOptions::pid`]):
/// only events with samples get sample types; ids are 1-based, in first-use order.
pub fn profile(sampled: &Sampled, opts: &PprofOptions) -> pb::Profile {
    let mut strings = Strings::new();
    let mut p = pb::Profile::default();
    // Events with samples in this profile, and their columns.
    let in_scope = |thread: u32| {
        opts.pid
            .is_none_or(|pid| sampled.threads[thread as usize].pid == pid)
    };
    let mut column: Vec<Option<usize>> = vec![None; sampled.events.len()];
    for s in sampled.samples.iter().filter(|s| in_scope(s.thread)) {
        column[s.event as usize] = Some(0);
    }
    let mut n = 0;
    for (ev, col) in sampled.events.iter().zip(column.iter_mut()) {
        if col.is_none() {
            continue;
        }
        *col = Some(n);
        n += 2;
        let name = ev.name.replace([':', ' '], "_");
        p.sample_type.push(pb::ValueType {
            r#type: strings.get(&format!("{name}_sample")),
            unit: strings.get("count"),
        });
        p.sample_type.push(pb::ValueType {
            r#type: strings.get(&format!("{name}_event")),
            unit: strings.get(ev.unit()),
        });
    }
    if let Some(first) = p.sample_type.get(1) {
        p.default_sample_type = first.r#type;
        p.period_type = Some(*first);
    }
    let mut mapping_ids: HashMap<u32, u64> = HashMap::default();
    let mut location_ids: HashMap<u32, u64> = HashMap::default();
    let mut function_ids: HashMap<u32, u64> = HashMap::default();
    // Per mapping: whether every one of its locations has functions and file names.
    let mut resolved: HashMap<u64, (bool, bool)> = HashMap::default();
    let keys = [
        strings.get("pid"),
        strings.get("tid"),
        strings.get("comm"),
        strings.get("thread_comm"),
        strings.get("cpu"),
        strings.get("time_ns"),
        strings.get("nanoseconds"),
    ];
    for s in sampled.samples.iter().filter(|s| in_scope(s.thread)) {
        let mut sample = pb::Sample::default();
        for frame in sampled.frames_of(s.stack) {
            let next = location_ids.len() as u64 + 1;
            let id = *location_ids.entry(frame).or_insert(next);
            if id == next {
                let f = &sampled.frames[frame as usize];
                let mapping_id = f.mapping.map_or(0, |m| {
                    let next = mapping_ids.len() as u64 + 1;
                    let id = *mapping_ids.entry(m).or_insert(next);
                    if id == next {
                        let m = &sampled.mappings[m as usize];
                        p.mapping.push(pb::Mapping {
                            id,
                            memory_start: m.start,
                            memory_limit: m.end,
                            file_offset: m.file_offset,
                            filename: strings.get(&m.path),
                            build_id: m.build_id.as_deref().map_or(0, |b| strings.get(b)),
                            ..Default::default()
                        });
                    }
                    id
                });
                let mut line = vec![];
                for l in &f.lines {
                    let next = function_ids.len() as u64 + 1;
                    let fid = *function_ids.entry(l.function).or_insert(next);
                    if fid == next {
                        let func = &sampled.functions[l.function as usize];
                        let name = strings.get(&func.name);
                        p.function.push(pb::Function {
                            id: fid,
                            name,
                            system_name: name,
                            filename: func.file.as_deref().map_or(0, |f| strings.get(f)),
                            start_line: 0,
                        });
                    }
                    line.push(pb::Line {
                        function_id: fid,
                        line: i64::from(l.line),
                        column: 0,
                    });
                }
                if mapping_id != 0 {
                    let r = resolved.entry(mapping_id).or_insert((true, true));
                    r.0 &= !f.lines.is_empty();
                    r.1 &= !f.lines.is_empty()
                        && f.lines
                            .iter()
                            .all(|l| sampled.functions[l.function as usize].file.is_some());
                }
                p.location.push(pb::Location {
                    id,
                    mapping_id,
                    address: f.address,
                    line,
                    is_folded: false,
                });
            }
            sample.location_id.push(id);
        }
        let col = column[s.event as usize].expect("the sample's event has columns");
        sample.value = vec![0; n];
        sample.value[col] = s.count as i64;
        sample.value[col + 1] = s.period as i64;
        let t = &sampled.threads[s.thread as usize];
        let num = |key, num| pb::Label {
            key,
            num,
            ..Default::default()
        };
        let text = |key, str| pb::Label {
            key,
            str,
            ..Default::default()
        };
        sample.label = vec![
            num(keys[0], i64::from(t.pid)),
            num(keys[1], i64::from(t.tid)),
            text(keys[2], strings.get(&t.process_name)),
            text(keys[3], strings.get(&t.name)),
        ];
        if let (true, Some(cpu)) = (opts.cpu_label, s.cpu) {
            sample.label.push(num(keys[4], i64::from(cpu)));
        }
        if let (true, Some(time)) = (opts.time_label, s.time) {
            sample.label.push(pb::Label {
                num_unit: keys[6],
                ..num(keys[5], time as i64)
            });
        }
        p.sample.push(sample);
    }
    // pprof takes the first mapping for the main binary (its `File:` line): the
    // program's executable, named by the process (comm is the executable's name, cut to
    // 15 bytes), goes first.
    let main = p.mapping.iter().position(|m| {
        let path = &strings.table[m.filename as usize];
        let base = path.rsplit('/').next().unwrap_or(path);
        !path.starts_with('[')
            && sampled
                .threads
                .iter()
                .any(|t| !t.process_name.is_empty() && base.starts_with(&t.process_name))
    });
    if let Some(i) = main {
        let m = p.mapping.remove(i);
        p.mapping.insert(0, m);
    }
    for m in &mut p.mapping {
        let (functions, files) = resolved.get(&m.id).copied().unwrap_or_default();
        m.has_functions = functions;
        m.has_filenames = files;
        m.has_line_numbers = files;
        m.has_inline_frames = files;
    }
    if let Some(v) = &sampled.perf_version {
        p.comment.push(strings.get(&format!("perf version {v}")));
    }
    if let Some(c) = &sampled.command_line {
        p.comment.push(strings.get(&format!("perf record: {c}")));
    }
    if let Some((first, last)) = sampled.time_range {
        p.duration_nanos = (last - first) as i64;
    }
    p.string_table = strings.table;
    p
}

/// Writes a profile as pprof files are: the protobuf encoding, gzip-compressed.
pub fn write(profile: &pb::Profile, out: impl Write) -> std::io::Result<()> {
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&prost::Message::encode_to_vec(profile))?;
    gz.finish()?;
    Ok(())
}
