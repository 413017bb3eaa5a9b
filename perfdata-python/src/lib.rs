//! `perfdata._native`: the Rust half of the Python package `perfdata` (the Python half,
//! `python/perfdata/`, wraps it). Every call is a library call of `perfdata` or
//! `perfdata-analysis`; values that the CLI prints as JSON cross as the same JSON (parsed
//! by Python's `json`), the samples cross as Arrow batches through the Arrow C stream
//! interface (`__arrow_c_stream__`), zero-copy.
//!
//! Walks that produce many values (samples, records) run on a thread of their own and
//! hand their output over through a bounded channel: the Python side pulls, and memory
//! holds a batch or a few hundred records, whatever the size of the recording. Dropping
//! the stream (or iterator) ends the walk.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use perfdata_analysis::export::sample_stream::SampleSelection;
use perfdata_analysis::export::tables::BATCH;
use perfdata_analysis::export::tracepoints::{tracepoint_events, tracepoint_schema};
use perfdata_analysis::stack::unwind::CallGraph;
use perfdata_analysis::AnalysisError as Error;
use perfdata_analysis::{Analyzer, AnalyzerOptions, StackOptions};
use pyo3::create_exception;
use pyo3::exceptions::{PyBrokenPipeError, PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

mod perf_script;
mod spark_ipc;

create_exception!(
    perfdata,
    PerfDataError,
    PyException,
    "A recording could not be read (or written). Its attributes say where: `offset` (byte \
     offset in the file, or None), `record` (index of the record, or None), `record_type` \
     (its type's name), `field` (the field path, `attr.sample_type`…, or None), `feature` \
     (the header feature, or None) and `file`."
);

/// The Python exception of a library error: a bad argument is a `ValueError`; anything
/// else a `PerfDataError` with where it happened as attributes.
fn py_err(e: impl Into<Error>) -> PyErr {
    let e = match e.into() {
        Error::Format(e) => e,
        Error::BadOption(b) => return bad(b.to_string()),
        Error::Io {
            path: Some(path),
            source,
        } => perfdata::Error::from(source).in_file(&path),
        other => perfdata::Error::other(other.to_string()),
    };
    Python::attach(|py| {
        let err = PerfDataError::new_err(e.to_string());
        let value = err.value(py);
        let path = e.path_string();
        let record = e.record();
        let set = || -> PyResult<()> {
            value.setattr("offset", e.offset())?;
            value.setattr("record", record.map(|(i, _)| i))?;
            value.setattr("record_type", record.map(|(_, t)| t.to_string()))?;
            value.setattr("field", (!path.is_empty()).then_some(path))?;
            value.setattr("feature", e.feature().map(str::to_string))?;
            value.setattr("file", e.file().map(|f| f.display().to_string()))?;
            Ok(())
        };
        match set() {
            Ok(()) => err,
            Err(other) => other,
        }
    })
}

/// A value error (a bad argument).
fn bad(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// Where symbols come from and how stacks are put together (the CLI's symbol options).
#[derive(Debug, Clone, Default)]
struct Symbols {
    kallsyms: Option<PathBuf>,
    vmlinux: Option<PathBuf>,
    symfs: Option<PathBuf>,
    symbols_from: Vec<PathBuf>,
    debug_file_dirs: Vec<PathBuf>,
    jitdumps: Vec<PathBuf>,
    no_symbols: bool,
}

impl Symbols {
    fn options(&self, unwind: Option<&str>, lines: bool) -> PyResult<AnalyzerOptions> {
        let call_graph = match unwind {
            None => CallGraph::Auto,
            Some(u) => u.parse::<CallGraph>().map_err(py_err)?,
        };
        Ok(AnalyzerOptions {
            kallsyms: self.kallsyms.clone(),
            vmlinux: self.vmlinux.clone(),
            symfs: self.symfs.clone(),
            symbols_from: self.symbols_from.clone(),
            debug_file_dirs: self.debug_file_dirs.clone(),
            jitdumps: self.jitdumps.clone(),
            no_symbols: self.no_symbols,
            lines,
            stacks: StackOptions {
                call_graph,
                ..StackOptions::default()
            },
            ..AnalyzerOptions::default()
        })
    }
}

/// A recording on disk (a perf.data file, pipe-layout file or `--threads` directory),
/// opened and checked: its header and attrs parse.
#[pyclass(module = "perfdata._native", frozen)]
struct NativeRecording {
    path: PathBuf,
    symbols: Symbols,
}

fn open(path: &Path) -> PyResult<perfdata::Recording> {
    perfdata::Recording::open(path).map_err(|e| py_err(with_file(e, path)))
}

fn with_file(e: impl Into<Error>, path: &Path) -> Error {
    match e.into() {
        Error::Format(e) if e.file().is_none() => Error::Format(e.in_file(path)),
        e => e,
    }
}

#[pymethods]
impl NativeRecording {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (path, *, kallsyms=None, vmlinux=None, symfs=None, symbols_from=vec![], debug_file_dirs=vec![], jitdumps=vec![], no_symbols=false))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        kallsyms: Option<PathBuf>,
        vmlinux: Option<PathBuf>,
        symfs: Option<PathBuf>,
        symbols_from: Vec<PathBuf>,
        debug_file_dirs: Vec<PathBuf>,
        jitdumps: Vec<PathBuf>,
        no_symbols: bool,
    ) -> PyResult<Self> {
        py.detach(|| -> Result<(), Error> {
            let rec = perfdata::Recording::open(&path)?;
            rec.data()?;
            Ok(())
        })
        .map_err(|e| py_err(with_file(e, &path)))?;
        Ok(NativeRecording {
            path,
            symbols: Symbols {
                kallsyms,
                vmlinux,
                symfs,
                symbols_from,
                debug_file_dirs,
                jitdumps,
                no_symbols,
            },
        })
    }

    /// The recording's path.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// `perfdata info --json`: the summary, as JSON text.
    #[pyo3(signature = (top=5))]
    fn info_json(&self, py: Python<'_>, top: usize) -> PyResult<String> {
        let opts = self.symbols.options(None, false)?;
        py.detach(|| -> Result<String, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let mut a = Analyzer::open(&rec, &opts)?;
            let info = perfdata_analysis::analyses::info::info(&mut a, top)?;
            serde_json::to_string(&info).map_err(|e| Error::from(std::io::Error::from(e)))
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata dump --json --header-only`: the format, header, attr and feature lines.
    fn header_json(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.detach(|| -> Result<Vec<String>, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let opts = perfdata::dump::DumpOptions {
                header_only: true,
                json: true,
                ..Default::default()
            };
            let mut out = vec![];
            perfdata::dump::dump_recording(&rec, &opts, &mut out)?;
            Ok(String::from_utf8_lossy(&out)
                .lines()
                .map(str::to_string)
                .collect())
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// How many streams of records the recording has (1; a `--threads` directory: its
    /// main file's and each `data.N` file's).
    fn streams(&self) -> PyResult<usize> {
        Ok(1 + open(&self.path)?.stream_paths().count())
    }

    /// Byte ranges of the file that cover its records, each of about `split_bytes` or
    /// more, cut after FINISHED_ROUND records (`perfdata_analysis::partition`).
    fn byte_ranges(&self, py: Python<'_>, split_bytes: u64) -> PyResult<Vec<(u64, u64)>> {
        py.detach(|| -> Result<Vec<(u64, u64)>, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            perfdata_analysis::partition::byte_ranges(&rec, split_bytes)
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// The event names, by attr index (a pipe's EVENT_UPDATE names applied).
    fn events(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let opts = AnalyzerOptions {
            no_symbols: true,
            ..AnalyzerOptions::default()
        };
        py.detach(|| -> Result<Vec<String>, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let events = Analyzer::open(&rec, &opts)?.events;
            Ok(events)
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata dump --json`, streamed: one JSON line at a time (every line: format,
    /// header, attrs, features, records, the summary).
    #[pyo3(signature = (limit=None, salvage=false))]
    fn dump_lines(&self, limit: Option<u64>, salvage: bool) -> PyResult<DumpLines> {
        let rec = open(&self.path)?;
        let path = self.path.clone();
        // A few hundred lines in flight at most.
        let (tx, rx) = sync_channel::<Result<String, Error>>(256);
        spawn_walk(tx.clone(), path, move || {
            let opts = perfdata::dump::DumpOptions {
                limit,
                json: true,
                salvage,
                ..Default::default()
            };
            let mut out = LineSender { tx, buf: vec![] };
            perfdata::dump::dump_recording(&rec, &opts, &mut out)?;
            out.flush().map_err(Error::from)
        });
        Ok(DumpLines {
            rx: Mutex::new(Some(rx)),
        })
    }

    /// `perfdata script`, streamed: perf script's text one line at a time (see the Python
    /// wrapper).
    #[pyo3(signature = (fields=vec![], hide_call_graph=false, inline=true, ns=false, reltime=false, deltatime=false, show=vec![], max_stack=127, unwind=None))]
    #[allow(clippy::too_many_arguments)]
    fn script_lines(
        &self,
        fields: Vec<String>,
        hide_call_graph: bool,
        inline: bool,
        ns: bool,
        reltime: bool,
        deltatime: bool,
        show: Vec<String>,
        max_stack: usize,
        unwind: Option<&str>,
    ) -> PyResult<DumpLines> {
        use perfdata_analysis::export::script::{self, fields::FieldSpec, ScriptOptions};
        let mut spec = FieldSpec::default();
        for f in &fields {
            spec.apply(f).map_err(|e| bad(e.to_string()))?;
        }
        let mut sopts = ScriptOptions {
            fields: spec,
            hide_call_graph,
            max_stack,
            inline,
            ..ScriptOptions::default()
        };
        sopts.time.ns = ns;
        sopts.time.reltime = reltime;
        sopts.time.deltatime = deltatime;
        for kind in &show {
            let s = &mut sopts.show;
            *match kind.as_str() {
                "task" => &mut s.task,
                "mmap" => &mut s.mmap,
                "switch" => &mut s.switch,
                "namespace" => &mut s.namespace,
                "lost" => &mut s.lost,
                "round" => &mut s.round,
                "bpf" => &mut s.bpf,
                "cgroup" => &mut s.cgroup,
                "text_poke" => &mut s.text_poke,
                other => {
                    return Err(bad(format!(
                        "show: no side-band records named {other:?} (task, mmap, switch, \
                         namespace, lost, round, bpf, cgroup, text_poke)"
                    )))
                }
            } = true;
        }
        let mut opts = self.symbols.options(unwind, inline)?;
        opts.stacks.max_unwound = max_stack;
        let rec = open(&self.path)?;
        let path = self.path.clone();
        let (tx, rx) = sync_channel::<Result<String, Error>>(256);
        spawn_walk(tx.clone(), path, move || {
            let mut a = Analyzer::open(&rec, &opts)?;
            let mut out = LineSender { tx, buf: vec![] };
            script::script(&mut a, &sopts, &mut out)?;
            out.flush().map_err(Error::from)
        });
        Ok(DumpLines {
            rx: Mutex::new(Some(rx)),
        })
    }

    /// The samples as Arrow batches (the Parquet export's `samples` schema, plus the
    /// `dso_name`, `symbol` and `stack` columns), streamed: an object with
    /// `__arrow_c_stream__`.
    #[pyo3(signature = (columns=None, symbolize=true, unwind=None, batch_size=BATCH, stream=None, byte_range=None, workers=None))]
    #[allow(clippy::too_many_arguments)]
    fn samples(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        symbolize: bool,
        unwind: Option<&str>,
        batch_size: usize,
        stream: Option<usize>,
        byte_range: Option<(u64, u64)>,
        workers: Option<usize>,
    ) -> PyResult<SampleStream> {
        let workers = workers_of(workers)?;
        let opts = self.walk_options(unwind, symbolize, stream, byte_range)?;
        let rec = open(&self.path)?;
        // The header and attrs parse: errors there are raised here, not mid-stream.
        let events = py
            .detach(|| Analyzer::open(&rec, &opts).map(|a| a.events))
            .map_err(|e| py_err(with_file(e, &self.path)))?;
        let selection =
            SampleSelection::new(events, symbolize, columns.as_deref()).map_err(py_err)?;
        Ok(start_stream(
            selection, rec, opts, batch_size, workers, &self.path,
        ))
    }

    /// One tracepoint event's table (its payload by field, after the sample's own
    /// columns), as [`Recording::samples`] streams the samples.
    #[pyo3(signature = (event, columns=None, symbolize=false, unwind=None, batch_size=BATCH, stream=None, byte_range=None, workers=None))]
    #[allow(clippy::too_many_arguments)]
    fn tracepoints(
        &self,
        py: Python<'_>,
        event: &str,
        columns: Option<Vec<String>>,
        symbolize: bool,
        unwind: Option<&str>,
        batch_size: usize,
        stream: Option<usize>,
        byte_range: Option<(u64, u64)>,
        workers: Option<usize>,
    ) -> PyResult<SampleStream> {
        let workers = workers_of(workers)?;
        let opts = self.walk_options(unwind, symbolize, stream, byte_range)?;
        let rec = open(&self.path)?;
        let (events, tracepoints) = py
            .detach(|| -> Result<_, Error> {
                let a = Analyzer::open(&rec, &opts)?;
                let tps = tracepoint_events(&a.data, &a.events);
                Ok((a.events, tps))
            })
            .map_err(|e| py_err(with_file(e, &self.path)))?;
        let Some(ev) = tracepoints.iter().find(|t| t.name == event).cloned() else {
            let known: Vec<&str> = tracepoints.iter().map(|t| t.name.as_str()).collect();
            return Err(bad(format!(
                "no tracepoint event `{event}` with a format in this recording (tracepoint events: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        };
        let selection = SampleSelection::tracepoint(events, symbolize, ev, columns.as_deref())
            .map_err(py_err)?;
        Ok(start_stream(
            selection, rec, opts, batch_size, workers, &self.path,
        ))
    }

    /// The tracepoint events and their tables' columns, as JSON: a list of
    /// `{event, system, name, id, callchain, columns: [{name, type}], fields: [{name,
    /// decl, offset, size, signed, common}]}`.
    fn tracepoint_formats_json(&self, py: Python<'_>) -> PyResult<String> {
        let opts = AnalyzerOptions {
            no_symbols: true,
            ..AnalyzerOptions::default()
        };
        py.detach(|| -> Result<String, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let a = Analyzer::open(&rec, &opts)?;
            let list: Vec<serde_json::Value> = tracepoint_events(&a.data, &a.events)
                .iter()
                .map(|ev| {
                    let schema = tracepoint_schema(ev);
                    serde_json::json!({
                        "event": ev.name,
                        "system": ev.format.system,
                        "name": ev.format.name,
                        "id": ev.format.id,
                        "callchain": ev.callchain,
                        "columns": schema.fields().iter().map(|f| serde_json::json!({
                            "name": f.name(),
                            "type": f.data_type().to_string(),
                        })).collect::<Vec<_>>(),
                        "fields": ev.format.fields.iter().map(|f| serde_json::json!({
                            "name": f.name,
                            "decl": f.decl,
                            "offset": f.offset,
                            "size": f.size,
                            "signed": f.signed,
                            "common": f.common,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            Ok(serde_json::to_string(&list).expect("JSON values serialize"))
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata report --json` (the Self table unless `children`; no call graph).
    #[pyo3(signature = (sort="comm,dso,sym", children=false, percent_limit=None, unwind=None))]
    fn report_json(
        &self,
        py: Python<'_>,
        sort: &str,
        children: bool,
        percent_limit: Option<f64>,
        unwind: Option<&str>,
    ) -> PyResult<String> {
        use perfdata_analysis::analyses::report;
        let keys = report::SortKey::parse(sort).map_err(py_err)?;
        let mut ropts = report::ReportOptions::table(keys);
        ropts.children = children;
        ropts.percent_limit = percent_limit;
        let opts = self.symbols.options(unwind, false)?;
        py.detach(|| -> Result<String, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let mut a = Analyzer::open(&rec, &opts)?;
            let reports = report::report(&mut a, &ropts)?;
            serde_json::to_string(&reports).map_err(|e| Error::from(std::io::Error::from(e)))
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata annotate --json`: the functions named (every one with samples when
    /// none), each instruction with its samples, text, source line and inlined chain.
    #[pyo3(signature = (symbols=vec![], event=None, percent_type="local-period", source=true, prefix=None, prefix_strip=0, syntax="att"))]
    #[allow(clippy::too_many_arguments)]
    fn annotate_json(
        &self,
        py: Python<'_>,
        symbols: Vec<String>,
        event: Option<String>,
        percent_type: &str,
        source: bool,
        prefix: Option<String>,
        prefix_strip: usize,
        syntax: &str,
    ) -> PyResult<String> {
        use perfdata_analysis::analyses::annotate::{self, disasm::Syntax, listing};
        let t = listing::PercentType::parse(percent_type).ok_or_else(|| {
            bad(format!(
                "percent_type {percent_type:?}: local-period, global-period, local-hits or global-hits"
            ))
        })?;
        let syntax = match syntax {
            "att" => Syntax::Att,
            "intel" => Syntax::Intel,
            other => return Err(bad(format!("syntax {other:?}: att or intel"))),
        };
        let aopts = annotate::AnnotateOptions {
            event,
            symbols,
            syntax,
            source,
            prefix,
            prefix_strip,
            percent_limit: 0.0,
            by_line: true,
            print_line: false,
        };
        let opts = self.symbols.options(None, true)?;
        py.detach(|| -> Result<String, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let mut a = Analyzer::open(&rec, &opts)?;
            let result = annotate::annotate(&mut a, &aopts)?;
            serde_json::to_string(&annotate::to_json(&result, t))
                .map_err(|e| Error::from(std::io::Error::from(e)))
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata collapse`: the folded stacks and their counts, sorted.
    #[pyo3(signature = (event=None, include_pid=false, include_tid=false, inline=false, unwind=None))]
    fn collapse(
        &self,
        py: Python<'_>,
        event: Option<String>,
        include_pid: bool,
        include_tid: bool,
        inline: bool,
        unwind: Option<&str>,
    ) -> PyResult<Vec<(String, u64)>> {
        use perfdata_analysis::analyses::collapse;
        let opts = self.symbols.options(unwind, inline)?;
        let copts = collapse::CollapseOptions {
            event,
            include_pid,
            include_tid,
            inline,
            off_cpu: None,
        };
        py.detach(|| -> Result<Vec<(String, u64)>, Error> {
            let rec = perfdata::Recording::open(&self.path)?;
            let mut a = Analyzer::open(&rec, &opts)?;
            Ok(collapse::collapse(&mut a, &copts)?.into_iter().collect())
        })
        .map_err(|e| py_err(with_file(e, &self.path)))
    }

    /// `perfdata convert`: the recording rewritten at `output` (see the Python wrapper).
    #[pyo3(signature = (output, endian=None, layout=None, compress=false, compressed_v1=false, level=3, decompress=false, typed=false, unwind=false))]
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &self,
        py: Python<'_>,
        output: PathBuf,
        endian: Option<&str>,
        layout: Option<&str>,
        compress: bool,
        compressed_v1: bool,
        level: i32,
        decompress: bool,
        typed: bool,
        unwind: bool,
    ) -> PyResult<()> {
        use perfdata::write::stages::CompressedKind;
        if unwind {
            if endian.is_some() || layout.is_some() || compress || typed {
                return Err(bad(
                    "unwind=True rewrites the stacks only: no endian, layout, compress or typed",
                ));
            }
            let opts = self.symbols.options(None, false)?;
            return py
                .detach(|| -> Result<(), Error> {
                    let rec = perfdata::Recording::open(&self.path)?;
                    let mut a = Analyzer::open(&rec, &opts)?;
                    perfdata::write::save_checked_as(&output, |out| {
                        perfdata_analysis::rewrite::unwound::unwound(&mut a, out)
                            .map(|(_, damaged)| damaged)
                    })
                })
                .map_err(|e| py_err(with_file(e, &self.path)));
        }
        let endian = match endian {
            None => None,
            Some("little") => Some(perfdata::Endianness::Little),
            Some("big") => Some(perfdata::Endianness::Big),
            Some(o) => return Err(bad(format!("endian={o:?}: 'little' or 'big'"))),
        };
        let layout = match layout {
            None => None,
            Some("file") => Some(perfdata::Layout::File),
            Some("pipe") => Some(perfdata::Layout::Pipe),
            Some(o) => return Err(bad(format!("layout={o:?}: 'file' or 'pipe'"))),
        };
        let kind = if compressed_v1 {
            CompressedKind::Compressed
        } else {
            CompressedKind::Compressed2
        };
        let opts = perfdata::write::ConvertOptions {
            endian,
            layout,
            decompress,
            compress: compress.then_some((kind, level)),
            typed,
        };
        py.detach(|| perfdata::write::convert_file(&self.path, &output, &opts))
            .map_err(py_err)
    }

    /// `perfdata export --to parquet|pprof|speedscope|firefox`.
    #[pyo3(signature = (output, to="parquet", symbolize=false, recording=0))]
    fn export(
        &self,
        py: Python<'_>,
        output: PathBuf,
        to: &str,
        symbolize: bool,
        recording: u32,
    ) -> PyResult<()> {
        use perfdata_analysis::export::{firefox, pprof, sampled, speedscope};
        let name = self
            .path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        match to {
            "parquet" => {
                use perfdata_analysis::export::parquet;
                let opts = parquet::ExportOptions {
                    symbolize,
                    ..Default::default()
                };
                let symbols = opts.analyzer_options(&self.symbols.options(None, symbolize)?);
                py.detach(|| -> Result<_, Error> {
                    std::fs::create_dir_all(&output).map_err(|e| Error::io(&output, e))?;
                    let rec = perfdata::Recording::open(&self.path)?;
                    let mut a = Analyzer::open(&rec, &symbols)?;
                    parquet::export(
                        &mut a,
                        recording,
                        &opts,
                        &mut parquet::Directory::new(&output),
                    )
                })
                .map(|_| ())
                .map_err(|e| py_err(with_file(e, &self.path)))
            }
            "pprof" | "speedscope" | "firefox" => {
                let opts = self.symbols.options(None, true)?;
                let gopts = sampled::GatherOptions {
                    inline: true,
                    each_sample: to != "pprof",
                    cpu: false,
                    markers: to == "firefox",
                };
                // The samples are gathered straight into the format's tables (speedscope's
                // spill past a budget): input errors name the recording, output errors the
                // output.
                enum Gathered {
                    Speedscope(Box<speedscope::Timeline>),
                    Firefox(Box<firefox::FirefoxProfile>),
                    Pprof(Box<pprof::Pprof>),
                }
                let gathered = py
                    .detach(|| -> Result<_, Error> {
                        let rec = perfdata::Recording::open(&self.path)?;
                        let mut a = Analyzer::open(&rec, &opts)?;
                        Ok(match to {
                            "speedscope" => Gathered::Speedscope(Box::new(speedscope::gather(
                                &mut a, &gopts, &name,
                            )?)),
                            "firefox" => {
                                Gathered::Firefox(Box::new(firefox::gather(&mut a, &gopts, &name)?))
                            }
                            _ => Gathered::Pprof(Box::new(pprof::gather(
                                &mut a,
                                &gopts,
                                &pprof::PprofOptions::default(),
                            )?)),
                        })
                    })
                    .map_err(|e| py_err(with_file(e, &self.path)))?;
                py.detach(|| -> Result<(), Error> {
                    write_beside(&output, |out| match &gathered {
                        Gathered::Speedscope(t) => t.write(out),
                        Gathered::Firefox(profile) => profile.write(out),
                        Gathered::Pprof(profiles) => profiles.write(out),
                    })
                })
                .map_err(py_err)
            }
            other => Err(bad(format!(
                "to={other:?}: one of 'parquet', 'pprof', 'speedscope', 'firefox'"
            ))),
        }
    }
}

/// Writes `path` through a temporary file beside it, renamed into place when complete.
fn write_beside(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), Error>,
) -> Result<(), Error> {
    let at = |e: std::io::Error| Error::io(path, e);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(at)?;
    let (file, tmp) = tmp.into_parts();
    let mut out = std::io::BufWriter::new(file);
    write(&mut out).map_err(|e| with_file(e, path))?;
    let file = out.into_inner().map_err(|e| at(e.into_error()))?;
    file.sync_all().map_err(at)?;
    perfdata::write::set_output_permissions(&file, path).map_err(at)?;
    tmp.persist(path).map_err(|e| at(e.error))?;
    Ok(())
}

/// The most walk threads `samples(workers=…)` takes: each holds its own processes, maps,
/// symbols and a chunk of batches.
const MAX_WORKERS: usize = 64;

/// The walk threads asked for, checked (`None`: [`default_workers`]).
fn workers_of(asked: Option<usize>) -> PyResult<usize> {
    match asked {
        Some(n @ 1..=MAX_WORKERS) => Ok(n),
        Some(n) => Err(bad(format!(
            "workers: {n}; from 1 to {MAX_WORKERS} (None: one per core, up to 4)"
        ))),
        None => Ok(default_workers()),
    }
}

/// The samples' walk threads when not told: one per core, up to 4 (each replays the
/// whole recording, so more gain little: `SampleSelection::stream_parallel`).
fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

impl NativeRecording {
    /// The options of a streamed walk: symbols read only when `symbolize`, one stream
    /// or byte range when asked.
    fn walk_options(
        &self,
        unwind: Option<&str>,
        symbolize: bool,
        stream: Option<usize>,
        byte_range: Option<(u64, u64)>,
    ) -> PyResult<AnalyzerOptions> {
        let mut opts = self.symbols.options(unwind, symbolize)?;
        opts.no_symbols |= !symbolize;
        opts.stream = stream;
        opts.byte_range = byte_range;
        Ok(opts)
    }
}

/// Starts `selection`'s walk of `rec` on threads of their own: the stream of its
/// batches. One batch in the channel, one being built (and the one the reader holds):
/// memory is bounded by a few batches.
fn start_stream(
    selection: SampleSelection,
    rec: perfdata::Recording,
    opts: AnalyzerOptions,
    batch_size: usize,
    workers: usize,
    path: &Path,
) -> SampleStream {
    let schema = selection.schema();
    let (tx, rx) = sync_channel::<Result<RecordBatch, Error>>(1);
    spawn_walk(tx.clone(), path.to_path_buf(), move || {
        // A closed channel (the reader was dropped) stops the walk.
        selection.stream_parallel(&rec, &opts, batch_size, workers, &mut |b| {
            tx.send(Ok(b)).is_ok()
        })
    });
    SampleStream {
        reader: Mutex::new(Some(SampleReader { schema, rx })),
    }
}

/// Runs a walk on a thread of its own; its error (or panic: a bug, which must not look
/// like the end of the stream) goes down `tx` as the stream's last item.
fn spawn_walk<T: Send + 'static>(
    tx: SyncSender<Result<T, Error>>,
    path: PathBuf,
    walk: impl FnOnce() -> Result<(), Error> + Send + 'static,
) {
    std::thread::spawn(move || {
        let e = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(walk)) {
            Ok(Ok(())) => return,
            Ok(Err(e)) => with_file(e, &path),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Error::Format(
                    perfdata::Error::other(format!("internal error (a panic in perfdata): {what}"))
                        .in_file(&path),
                )
            }
        };
        // A closed channel (the reader was dropped) is not an error to report.
        let _ = tx.send(Err(e));
    });
}

/// The receiving end of the samples' walk, as an Arrow `RecordBatchReader`.
struct SampleReader {
    schema: SchemaRef,
    rx: Receiver<Result<RecordBatch, Error>>,
}

impl Iterator for SampleReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rx.recv() {
            Ok(Ok(b)) => Some(Ok(b)),
            Ok(Err(e)) => Some(Err(ArrowError::ExternalError(Box::new(e)))),
            // The walk is over.
            Err(_) => None,
        }
    }
}

impl RecordBatchReader for SampleReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// A stream of sample batches, for any reader of the Arrow PyCapsule interface
/// (`pyarrow.RecordBatchReader.from_stream`, DuckDB, polars…). It can be read once.
#[pyclass(module = "perfdata._native", frozen)]
struct SampleStream {
    reader: Mutex<Option<SampleReader>>,
}

#[pymethods]
impl SampleStream {
    /// The Arrow C stream of the batches, in a capsule named `arrow_array_stream`.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is the stream's: a consumer casts it if it wants another.
        let _ = requested_schema;
        let reader = self.take()?;
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Writes the batches to file descriptor `fd` (left open) as an Arrow IPC stream in
    /// the types Spark reads (unsigned columns widened; see `spark_ipc`): what the JVM
    /// Spark data source reads from its feeder process. The number of rows written.
    fn write_spark_ipc(&self, py: Python<'_>, fd: i32) -> PyResult<u64> {
        let reader = self.take()?;
        // SAFETY: `fd` is only borrowed to duplicate it; the caller keeps it open.
        let out = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .map_err(|e| bad(format!("file descriptor {fd}: {e}")))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::from(out));
        py.detach(|| spark_ipc::write_stream(reader, out))
            .map_err(|e| match e {
                ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
                    Ok(e) => py_err(*e),
                    Err(other) => bad(other.to_string()),
                },
                // The reader stopped reading (Spark met a LIMIT): Python's own error for it.
                ArrowError::IoError(msg, e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    PyBrokenPipeError::new_err(msg)
                }
                other => bad(format!("writing the Arrow stream: {other}")),
            })
    }
}

impl SampleStream {
    /// The stream's reader, once.
    fn take(&self) -> PyResult<SampleReader> {
        self.reader
            .lock()
            .map_err(|_| bad("the stream's lock is poisoned"))?
            .take()
            .ok_or_else(|| bad("this sample stream has been read already"))
    }
}

/// A `Write` that sends each complete line down a channel.
struct LineSender {
    tx: SyncSender<Result<String, Error>>,
    buf: Vec<u8>,
}

impl Write for LineSender {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        while let Some(n) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=n).collect();
            let text = String::from_utf8_lossy(&line[..n]).into_owned();
            if self.tx.send(Ok(text)).is_err() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let text = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf.clear();
            if self.tx.send(Ok(text)).is_err() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
        }
        Ok(())
    }
}

/// The lines of a text walk (`perfdata dump --json`, `perfdata script`), as they are
/// printed.
#[pyclass(module = "perfdata._native", frozen)]
struct DumpLines {
    rx: Mutex<Option<Receiver<Result<String, Error>>>>,
}

#[pymethods]
impl DumpLines {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let mut guard = self
            .rx
            .lock()
            .map_err(|_| bad("the iterator's lock is poisoned"))?;
        let Some(rx) = guard.take() else {
            return Ok(None);
        };
        let (rx, next) = py.detach(move || {
            let next = rx.recv();
            (rx, next)
        });
        match next {
            Ok(Ok(line)) => {
                *guard = Some(rx);
                Ok(Some(line))
            }
            Ok(Err(e)) => Err(py_err(e)),
            // The walk is over.
            Err(_) => Ok(None),
        }
    }
}

/// The version of the export's tables (`SCHEMA_VERSION`) and of the dump's JSON lines.
#[pyfunction]
fn schema_versions() -> (u32, u32) {
    (
        perfdata_analysis::export::tables::SCHEMA_VERSION,
        perfdata::dump::SCHEMA_VERSION,
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeRecording>()?;
    m.add_class::<SampleStream>()?;
    m.add_class::<DumpLines>()?;
    m.add_function(wrap_pyfunction!(schema_versions, m)?)?;
    perf_script::register(m)?;
    m.add("PerfDataError", m.py().get_type::<PerfDataError>())?;
    Ok(())
}
