//! The profile viewers' formats read back: the pprof export decoded with prost (its
//! structure, totals, and stacks against `collapse --inline`). `go tool pprof` reads them
//! in `cargo xtask conformance` (check 16).

use perfdata::Recording;
use perfdata_analysis::analyses::collapse::{self, CollapseOptions};
use perfdata_analysis::analyses::report;
use perfdata_analysis::export::pprof::proto as pb;
use perfdata_analysis::export::pprof::{self, PprofOptions};
use perfdata_analysis::export::sampled::{self, GatherOptions, Sampled};
use perfdata_analysis::symbols::naming::tidy_generic;
use perfdata_analysis::{Analyzer, AnalyzerOptions};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The shipped `-g` recording (its build-id cache `wordfreq.data.debug/` beside it).
fn wordfreq() -> PathBuf {
    perfdata_test_support::sample_path("wordfreq.data")
}

fn lines() -> AnalyzerOptions {
    AnalyzerOptions {
        lines: true,
        ..AnalyzerOptions::default()
    }
}

fn gather(path: &Path, opts: &GatherOptions) -> Sampled {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(&rec, &lines()).unwrap();
    sampled::gather(&mut a, opts).unwrap()
}

fn folded_by_collapse(path: &Path) -> BTreeMap<String, u64> {
    let rec = Recording::open(path).unwrap();
    let mut a = Analyzer::open(&rec, &lines()).unwrap();
    let opts = CollapseOptions {
        inline: true,
        ..CollapseOptions::default()
    };
    collapse::collapse(&mut a, &opts).unwrap()
}

/// Our pprof file decoded as a reader would: gunzip, then the protobuf.
fn write_and_decode(profile: &pprof::Pprof) -> pb::Profile {
    let mut gz = vec![];
    profile.write(&mut gz).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
    let mut raw = vec![];
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    <pb::Profile as prost::Message>::decode(&raw[..]).unwrap()
}

#[test]
fn pprof_of_wordfreq_decodes_with_every_reference_resolved_and_collapse_s_stacks() {
    let path = wordfreq();
    let g = gather(
        &path,
        &GatherOptions {
            inline: true,
            ..GatherOptions::default()
        },
    );
    let p = write_and_decode(&pprof::Pprof::from_sampled(
        g.clone(),
        &PprofOptions::default(),
    ));
    let s = |i: i64| p.string_table[i as usize].as_str();
    assert_eq!(s(0), "");
    let types: Vec<(&str, &str)> = p
        .sample_type
        .iter()
        .map(|t| (s(t.r#type), s(t.unit)))
        .collect();
    assert_eq!(
        types,
        [
            ("cpu-clock_u_sample", "count"),
            ("cpu-clock_u_event", "nanoseconds")
        ]
    );
    assert_eq!(s(p.default_sample_type), "cpu-clock_u_event");
    // Totals: perfdata report's.
    let rec = Recording::open(&path).unwrap();
    let mut a = Analyzer::open(&rec, &AnalyzerOptions::default()).unwrap();
    let r = report::report(&mut a, &report::ReportOptions::default()).unwrap();
    let samples: i64 = p.sample.iter().map(|x| x.value[0]).sum();
    let period: i64 = p.sample.iter().map(|x| x.value[1]).sum();
    assert_eq!((samples as u64, period as u64), (r[0].samples, r[0].period));
    // Every id resolves; ids are unique; addresses lie in their mapping.
    let mappings: HashMap<u64, &pb::Mapping> = p.mapping.iter().map(|m| (m.id, m)).collect();
    let functions: HashMap<u64, &pb::Function> = p.function.iter().map(|f| (f.id, f)).collect();
    let locations: HashMap<u64, &pb::Location> = p.location.iter().map(|l| (l.id, l)).collect();
    assert_eq!(mappings.len(), p.mapping.len());
    assert_eq!(functions.len(), p.function.len());
    assert_eq!(locations.len(), p.location.len());
    for l in &p.location {
        if l.mapping_id != 0 {
            let m = mappings[&l.mapping_id];
            assert!((m.memory_start..m.memory_limit).contains(&l.address));
        }
        for line in &l.line {
            assert!(functions.contains_key(&line.function_id));
        }
    }
    // The program is the main binary, with its build id and its functions (the shipped
    // build-id cache has its symbols, no DWARF: no source files there).
    let main = &p.mapping[0];
    assert!(
        s(main.filename).ends_with("wordfreq"),
        "{}",
        s(main.filename)
    );
    assert_eq!(s(main.build_id).len(), 40);
    assert!(main.has_functions);
    assert!(p.function.iter().any(|f| s(f.name) == "count_word"));
    // A mapping says it has file names exactly when all its locations' functions have one.
    for m in &p.mapping {
        let files = p.location.iter().filter(|l| l.mapping_id == m.id).all(|l| {
            !l.line.is_empty()
                && l.line
                    .iter()
                    .all(|x| functions[&x.function_id].filename != 0)
        });
        assert_eq!(m.has_filenames, files, "{}", s(m.filename));
    }
    assert!(p
        .comment
        .iter()
        .any(|&c| s(c).starts_with("perf version 6.")));
    assert!(p.comment.iter().any(|&c| s(c).contains("perf record")));
    // Labels, and the stacks folded as collapse folds them.
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    for x in &p.sample {
        let label = |k: &str| x.label.iter().find(|l| s(l.key) == k).unwrap();
        assert!(label("pid").num > 0 && label("tid").num > 0);
        assert_eq!(s(label("comm").str), "wordfreq");
        let mut names = vec![s(label("thread_comm").str).replace(' ', "_")];
        for id in x.location_id.iter().rev() {
            let l = locations[id];
            if l.line.is_empty() {
                // Unsymbolized: collapse names the object, or `[unknown]` without one.
                names.push(match l.mapping_id {
                    0 => "[unknown]".into(),
                    m => {
                        let f = s(mappings[&m].filename);
                        format!("[{}]", f.rsplit('/').next().unwrap())
                    }
                });
            }
            for line in l.line.iter().rev() {
                names.push(tidy_generic(s(functions[&line.function_id].name).into()));
            }
        }
        *folded.entry(names.join(";")).or_default() += x.value[1] as u64;
    }
    assert_eq!(folded, folded_by_collapse(&path));
}

#[test]
fn pprof_per_process_and_labels() {
    let path = wordfreq();
    let g = gather(
        &path,
        &GatherOptions {
            each_sample: true,
            cpu: true,
            ..GatherOptions::default()
        },
    );
    let procs = pprof::Pprof::from_sampled(g.clone(), &PprofOptions::default()).processes();
    assert_eq!(procs.len(), 1);
    let (pid, name) = &procs[0];
    assert_eq!(name, "wordfreq");
    let opts = PprofOptions {
        pid: Some(*pid),
        cpu_label: true,
        time_label: true,
    };
    let p = write_and_decode(&pprof::Pprof::from_sampled(g.clone(), &opts));
    let s = |i: i64| p.string_table[i as usize].as_str();
    // One pprof sample per perf sample, each with its cpu and time.
    assert_eq!(p.sample.len() as u64, g.events[0].samples);
    for (x, ours) in p.sample.iter().zip(&g.samples) {
        let keys: Vec<&str> = x.label.iter().map(|l| s(l.key)).collect();
        // A cpu label where the samples carry their cpu (wordfreq's do not).
        let cpu: &[&str] = if ours.cpu.is_some() { &["cpu"] } else { &[] };
        let want: Vec<&str> = ["pid", "tid", "comm", "thread_comm"]
            .iter()
            .chain(cpu)
            .chain(&["time_ns"])
            .copied()
            .collect();
        assert_eq!(keys, want);
        let time = x.label.iter().find(|l| s(l.key) == "time_ns").unwrap();
        assert_eq!(s(time.num_unit), "nanoseconds");
        assert_eq!(Some(time.num as u64), ours.time);
    }
    // Another pid: an empty profile (no sample types, no samples).
    let none = pprof::Pprof::from_sampled(
        g.clone(),
        &PprofOptions {
            pid: Some(pid + 1),
            ..opts
        },
    )
    .profile();
    assert!(none.sample.is_empty() && none.sample_type.is_empty());
}

#[test]
fn speedscope_of_wordfreq_reads_back_as_collapse_s_stacks() {
    let path = wordfreq();
    let g = gather(
        &path,
        &GatherOptions {
            inline: true,
            each_sample: true,
            ..GatherOptions::default()
        },
    );
    let mut bytes = vec![];
    perfdata_analysis::export::speedscope::Timeline::from_sampled(g.clone(), "wordfreq.data")
        .unwrap()
        .write(&mut bytes)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["$schema"], perfdata_analysis::export::speedscope::SCHEMA);
    let frames = v["shared"]["frames"].as_array().unwrap();
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1, "one thread, one event");
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0;
    for p in profiles {
        assert_eq!(p["type"], "sampled");
        assert_eq!(p["unit"], "nanoseconds");
        let name = p["name"].as_str().unwrap();
        assert!(name.ends_with(" cpu-clock:u"), "{name}");
        let comm = &name[..name.rfind(" [").unwrap()];
        let samples = p["samples"].as_array().unwrap();
        let weights = p["weights"].as_array().unwrap();
        assert_eq!(samples.len() as u64, g.events[0].samples);
        assert_eq!(samples.len(), weights.len());
        let mut sum = 0;
        for (stack, w) in samples.iter().zip(weights) {
            let w = w.as_u64().unwrap();
            sum += w;
            let names = std::iter::once(comm.replace(' ', "_")).chain(
                stack.as_array().unwrap().iter().map(|i| {
                    let f = &frames[i.as_u64().unwrap() as usize];
                    tidy_generic(f["name"].as_str().unwrap().to_string())
                }),
            );
            *folded
                .entry(names.collect::<Vec<_>>().join(";"))
                .or_default() += w;
        }
        assert_eq!(p["endValue"].as_u64().unwrap(), sum);
        total += sum;
    }
    assert_eq!(total, g.events[0].period);
    assert_eq!(folded, folded_by_collapse(&path));
}

/// The Firefox Profiler file of `path` parsed, and its stacks folded per thread name
/// (`thread;root;…;leaf` → summed weight), its sample count and total weight.
fn firefox_folded(path: &Path) -> (serde_json::Value, BTreeMap<String, u64>, u64, u64) {
    let g = gather(
        path,
        &GatherOptions {
            inline: true,
            each_sample: true,
            markers: true,
            ..GatherOptions::default()
        },
    );
    let profile =
        perfdata_analysis::export::firefox::FirefoxProfile::from_sampled(&g, "test").unwrap();
    let mut bytes = vec![];
    profile.write(&mut bytes).unwrap();
    // `-o x.json.gz`: the same JSON, in a gzip stream.
    let mut gz = vec![];
    profile.write_gz(&mut gz).unwrap();
    let mut unzipped = vec![];
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut unzipped).unwrap();
    assert!(unzipped == bytes, "the gzip stream holds other JSON");
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let (mut samples, mut weight) = (0, 0);
    for t in v["threads"].as_array().unwrap() {
        let strings = t["stringArray"].as_array().unwrap();
        let (stack_prefix, stack_frame) = (&t["stackTable"]["prefix"], &t["stackTable"]["frame"]);
        let frame_func = &t["frameTable"]["func"];
        let func_name = &t["funcTable"]["name"];
        let s = &t["samples"];
        let n = s["length"].as_u64().unwrap() as usize;
        samples += n as u64;
        for i in 0..n {
            let w = s["weight"][i].as_u64().unwrap();
            weight += w;
            let mut names = vec![];
            let mut next = s["stack"][i].as_u64();
            while let Some(st) = next {
                let f = stack_frame[st as usize].as_u64().unwrap() as usize;
                let func = frame_func[f].as_u64().unwrap() as usize;
                let name = strings[func_name[func].as_u64().unwrap() as usize]
                    .as_str()
                    .unwrap();
                names.push(tidy_generic(name.to_string()));
                next = stack_prefix[st as usize].as_u64();
            }
            names.push(t["name"].as_str().unwrap().replace(' ', "_"));
            names.reverse();
            *folded.entry(names.join(";")).or_default() += w;
        }
    }
    (v, folded, samples, weight)
}

#[test]
fn firefox_profile_of_wordfreq_reads_back_as_collapse_s_stacks() {
    let path = wordfreq();
    let (v, folded, samples, weight) = firefox_folded(&path);
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["processName"], "wordfreq");
    assert_eq!(threads[0]["pid"], threads[0]["tid"]);
    let categories: Vec<&str> = v["meta"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(categories, ["Other", "User", "Kernel"]);
    assert_eq!((samples, weight), (1295, 647823750));
    assert_eq!(folded, folded_by_collapse(&path));
}

#[test]
fn firefox_profile_marks_context_switches_and_puts_kernel_frames_in_their_category() {
    // A system-wide recording with SWITCH_CPU_WIDE records and kernel callchains.
    let path = perfdata_test_support::fixture_path("switch-cpu-wide.data");
    let (v, _, samples, _) = firefox_folded(&path);
    assert!(samples > 0);
    let threads = v["threads"].as_array().unwrap();
    let off_cpu: usize = threads
        .iter()
        .map(|t| {
            let strings = t["stringArray"].as_array().unwrap();
            t["markers"]["name"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| strings[n.as_u64().unwrap() as usize] == "Off CPU")
                .count()
        })
        .sum();
    assert!(off_cpu > 0, "no Off CPU marker");
    let kernel_frames: usize = threads
        .iter()
        .map(|t| {
            t["frameTable"]["category"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c.as_u64() == Some(2))
                .count()
        })
        .sum();
    assert!(kernel_frames > 0, "no frame in the Kernel category");
}

/// The streaming exports (samples given to the writer as they are met, speedscope's
/// spilled past a budget) write what the exports of the gathered samples write.
#[test]
fn streamed_exports_equal_the_exports_of_the_gathered_samples() {
    use perfdata_analysis::export::{firefox, speedscope};
    let fixtures = perfdata_test_support::fixtures_dir();
    for path in [wordfreq(), fixtures.join("switch-events.data")] {
        let opts = GatherOptions {
            inline: true,
            each_sample: true,
            cpu: false,
            markers: true,
        };
        let g = gather(&path, &opts);
        assert!(!g.samples.is_empty(), "{}", path.display());
        let rec = Recording::open(&path).unwrap();

        let mut a = Analyzer::open(&rec, &lines()).unwrap();
        let mut streamed = vec![];
        speedscope::gather(&mut a, &opts, "x")
            .unwrap()
            .write(&mut streamed)
            .unwrap();
        let mut held = vec![];
        speedscope::Timeline::from_sampled(g.clone(), "x")
            .unwrap()
            .write(&mut held)
            .unwrap();
        assert!(streamed == held, "speedscope of {}", path.display());

        let mut a = Analyzer::open(&rec, &lines()).unwrap();
        let mut streamed = vec![];
        firefox::gather(&mut a, &opts, "x")
            .unwrap()
            .write(&mut streamed)
            .unwrap();
        let mut held = vec![];
        firefox::FirefoxProfile::from_sampled(&g, "x")
            .unwrap()
            .write(&mut held)
            .unwrap();
        assert!(streamed == held, "firefox profile of {}", path.display());
    }
}
