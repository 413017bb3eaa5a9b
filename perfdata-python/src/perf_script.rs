//! The host of perf's Python scripting API (`perf script -s SCRIPT.py`): a recording
//! walked in perf's order, each sample handed to the script's handlers with the
//! arguments perf 6.1's `scripting-engines/trace-event-python.c` builds, the calls made
//! here, natively (no Python code runs between two handlers).
//!
//! * a tracepoint sample: before the event's first, the `define_flag_*`/
//!   `define_symbolic_*` calls of its format; then
//!   `SYSTEM__EVENT(event_name, context, common_cpu, common_secs, common_nsecs,
//!   common_pid, common_comm, common_callchain, FIELD…)` or, without such a handler,
//!   `trace_unhandled(event_name, context, fields_dict)`; a handler taking one more
//!   argument also gets the sample's dict (`perf_sample_dict`);
//! * any other sample: `process_event(dict)`.
//!
//! Field values are as perf makes them: integers read at the field's size (sign only
//! for 8-byte signed fields: perf does not sign-extend smaller ones), a `char` array
//! holding printable text as `str` (else, and from then on for that field, a
//! `bytearray`), any other array as a `bytearray` of its bytes.
//!
//! The script itself is run by the Python half (`perfdata/perf_script.py`), which sets
//! up `sys.argv`, `PERF_EXEC_PATH` and the `perf_trace_context` module first.

use crate::{open, py_err, with_file, NativeRecording};
use perfdata::tracepoint::{FlagDefinition, Format, Formats};
use perfdata::types::RecordType;
use perfdata_analysis::export::script::{data_src_text, regs_text};
use perfdata_analysis::Frame;
use perfdata_analysis::Machine;
use perfdata_analysis::{AnalysisError, Analyzer, RunOptions, SampleInfo};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::Mutex;

/// perf's `scripting_context`, as the capsule handlers get as `context`: the sample
/// being handed over, for the `perf_trace_context` functions.
#[pyclass(module = "perfdata._native", frozen)]
pub(crate) struct ScriptContext {
    now: Mutex<Now>,
}

/// The common fields of the tracepoint sample being handed over (`None`: not a
/// tracepoint sample, or no such field).
#[derive(Default, Clone, Copy)]
struct Now {
    preempt_count: Option<u64>,
    flags: Option<u64>,
    lock_depth: Option<u64>,
}

#[pymethods]
impl ScriptContext {
    /// A context with no sample yet (the host updates it before each handler).
    #[new]
    fn py_new() -> Self {
        ScriptContext {
            now: Mutex::new(Now::default()),
        }
    }
}

impl ScriptContext {
    fn now(&self) -> Now {
        self.now.lock().map(|n| *n).unwrap_or_default()
    }
}

fn context_of(context: &Bound<'_, PyAny>) -> PyResult<Now> {
    let c = context
        .cast::<ScriptContext>()
        .map_err(|_| PyValueError::new_err("expected the script context (`context`)"))?;
    Ok(c.get().now())
}

/// `common_pc(context)`: the sample's `common_preempt_count`.
#[pyfunction]
fn common_pc(context: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(context_of(context)?.preempt_count.unwrap_or(0))
}

/// `common_flags(context)`: the sample's `common_flags` (irqs off, softirq…).
#[pyfunction]
fn common_flags(context: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(context_of(context)?.flags.unwrap_or(0))
}

/// `common_lock_depth(context)`: the sample's `common_lock_depth` (kernels have not
/// had it for years: 0, as perf 6.1 answers).
#[pyfunction]
fn common_lock_depth(context: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(context_of(context)?.lock_depth.unwrap_or(0))
}

/// `perf_sample_insn(context)`: the sampled instruction's bytes, which only an
/// instruction trace (Intel PT) records: None.
#[pyfunction]
fn perf_sample_insn(context: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyBytes>>> {
    context_of(context)?;
    Ok(None)
}

/// `perf_sample_srcline(context)`: `(file, line)` of the sample's address; not looked
/// up here: `(None, 0)`.
#[pyfunction]
fn perf_sample_srcline(context: &Bound<'_, PyAny>) -> PyResult<(Option<String>, u32)> {
    context_of(context)?;
    Ok((None, 0))
}

/// `perf_sample_srccode(context)`: `(file, line, source text)`; not looked up here:
/// `(None, 0, None)`.
#[pyfunction]
fn perf_sample_srccode(
    context: &Bound<'_, PyAny>,
) -> PyResult<(Option<String>, u32, Option<String>)> {
    context_of(context)?;
    Ok((None, 0, None))
}

/// `perf_set_itrace_options(context, options)`: instruction trace decoding options;
/// no instruction trace is decoded here, so they change nothing (0, as perf answers
/// for a recording without one).
#[pyfunction]
fn perf_set_itrace_options(context: &Bound<'_, PyAny>, options: &str) -> PyResult<i32> {
    context_of(context)?;
    let _ = options;
    Ok(0)
}

/// What is known of a tracepoint format, once per format.
struct Event {
    /// The format (a copy: found once, not by id at every sample).
    format: Format,
    /// `system__name`: the handler's name and the events' name in the calls.
    handler: Py<PyString>,
    /// The definitions to make before its first sample (then emptied).
    defines: Vec<FlagDefinition>,
    /// Per non-common field: a char array that held text perf could not print, now
    /// handed over as bytes (perf clears the field's string flag for good).
    as_bytes: Vec<bool>,
    /// Offsets and sizes of `common_preempt_count`, `common_flags`, `common_lock_depth`,
    /// `common_pid`.
    commons: [Option<(usize, usize)>; 4],
    /// The handler last called and its argument count (perf asks the handler for it at
    /// every sample; a function's count does not change).
    argc: Option<(Py<PyAny>, usize)>,
}

/// The walk's state.
struct Host<'py> {
    py: Python<'py>,
    main: Bound<'py, PyDict>,
    context: Bound<'py, ScriptContext>,
    events: Vec<String>,
    formats: Option<Formats>,
    formats_read: bool,
    /// The events met, one per format id (`by_id` indexes them).
    known: Vec<Event>,
    by_id: HashMap<u16, usize>,
    /// Per attr index: `None` not met yet, `Some(None)` no format, else its event.
    by_attr: Vec<Option<Option<usize>>>,
    /// perf's `cur_field_name`, kept across events as perf keeps it.
    current_field: String,
    /// `attr` bytes per event (perf's in-memory `perf_event_attr`: 128 bytes in 6.1).
    attrs: Vec<Py<PyBytes>>,
    frames: Vec<Frame>,
    /// `"trace_unhandled"`, made once: a `str` key hashes once, not at every sample.
    unhandled: Py<PyString>,
    /// Threads' names handed over, by the machine's interned name's id: made once each.
    comms: Vec<Option<(String, Py<PyString>)>>,
}

/// `size of struct perf_event_attr` in perf 6.1.
const ATTR_SIZE: usize = 128;
/// `PERF_MEM_DATA_SRC_NONE`: perf's data source of a sample that records none.
const DATA_SRC_NONE: u64 = 0x0508_0021;

/// Runs the handlers of the script whose globals are `main` over the recording:
/// `trace_begin()`, every sample, `trace_end()`. `module` is the `perf_trace_context`
/// module; `context` (`module.perf_script_context`) is also given to `main` before
/// `trace_begin`, as perf does, and is what handlers get as `context`.
#[pyfunction]
#[pyo3(signature = (recording, main, module, context, unwind=None))]
pub(crate) fn run_perf_script<'py>(
    py: Python<'py>,
    recording: &NativeRecording,
    main: Bound<'py, PyDict>,
    module: Bound<'py, PyAny>,
    context: Bound<'py, ScriptContext>,
    unwind: Option<&str>,
) -> PyResult<()> {
    let opts = recording.symbols.options(unwind, false)?;
    let rec = open(&recording.path)?;
    let mut analyzer =
        Analyzer::open(&rec, &opts).map_err(|e| py_err(with_file(e, &recording.path)))?;
    module.setattr("perf_script_context", &context)?;
    main.set_item("perf_script_context", &context)?;
    if let Some(begin) = handler(&main, "trace_begin")? {
        begin.call0()?;
    }
    let attrs = analyzer
        .data
        .session
        .attrs
        .iter()
        .map(|a| attr_bytes(py, &a.attr))
        .collect();
    let mut host = Host {
        py,
        main: main.clone(),
        context,
        events: analyzer.events.clone(),
        formats: None,
        formats_read: false,
        known: vec![],
        by_id: HashMap::new(),
        by_attr: vec![],
        current_field: String::new(),
        attrs,
        frames: vec![],
        unhandled: PyString::intern(py, "trace_unhandled").unbind(),
        comms: vec![],
    };
    let mut failed: Option<PyErr> = None;
    // The handlers cost about what the walk does: the time order is kept on the other
    // core.
    let run = RunOptions {
        merge_streams: true,
        ordering_thread: true,
        ..Default::default()
    };
    analyzer
        .run(run, |machine, item| -> Result<bool, AnalysisError> {
            if item.rec.record_type() == RecordType::HEADER_TRACING_DATA {
                host.formats = Formats::of_record(item.rec, item.data.format.endian);
                host.formats_read = true;
                // Events are found again in the new formats.
                host.by_attr.clear();
                return Ok(true);
            }
            let Some(s) = &item.sample else {
                return Ok(true);
            };
            if !host.formats_read {
                host.formats = Formats::of_file(item.data);
                host.formats_read = true;
            }
            let attr = item.data.session.attrs.get(s.event).map(|a| &a.attr);
            let tracepoint = attr.is_some_and(|a| a.type_.0 == 2);
            let done = if tracepoint {
                host.tracepoint(machine, item, s)
            } else {
                host.general(machine, item, s)
            };
            match done {
                Ok(()) => Ok(true),
                Err(HostError::Python(e)) => {
                    failed = Some(e);
                    Ok(false)
                }
                Err(HostError::Analysis(e)) => Err(e),
            }
        })
        .map_err(|e| py_err(with_file(e, &recording.path)))?;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(end) = handler(&main, "trace_end")? {
        end.call0()?;
    }
    Ok(())
}

/// A handler's failure, or the recording's.
enum HostError {
    Python(PyErr),
    Analysis(AnalysisError),
}

impl From<PyErr> for HostError {
    fn from(e: PyErr) -> Self {
        HostError::Python(e)
    }
}

impl From<AnalysisError> for HostError {
    fn from(e: AnalysisError) -> Self {
        HostError::Analysis(e)
    }
}

impl From<perfdata::Error> for HostError {
    fn from(e: perfdata::Error) -> Self {
        HostError::Analysis(e.into())
    }
}

/// perf's `get_handler`: a callable of that name among the script's globals.
fn handler<'py>(main: &Bound<'py, PyDict>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(main.get_item(name)?.filter(|h| h.is_callable()))
}

/// [`handler`] by a `str` key made once (its hash is kept in it).
fn handler_by<'py>(
    main: &Bound<'py, PyDict>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(main.get_item(name)?.filter(|h| h.is_callable()))
}

/// perf's `get_argument_count`: the handler's `__code__.co_argcount` (0 when it has
/// none: a builtin, a class).
fn argument_count(h: &Bound<'_, PyAny>) -> usize {
    h.getattr("__code__")
        .and_then(|c| c.getattr("co_argcount"))
        .and_then(|n| n.extract::<usize>())
        .unwrap_or(0)
}

/// The attr as perf holds it: its bytes as recorded, in the host's byte order, cut or
/// zero-padded to perf 6.1's `sizeof(struct perf_event_attr)`.
fn attr_bytes(py: Python<'_>, attr: &perfdata::types::Attr<'_>) -> Py<PyBytes> {
    let mut w = perfdata::rt::Writer::<perfdata::rt::NativeEndian>::new();
    let mut bytes = match attr.encode(&mut w, &perfdata::types::Ctx::default()) {
        Ok(()) => w.as_slice().to_vec(),
        Err(_) => vec![],
    };
    bytes.resize(ATTR_SIZE, 0);
    PyBytes::new(py, &bytes).unbind()
}

impl<'py> Host<'py> {
    /// The event of a format, made the first time the format's id is met; met again
    /// (new tracing data), the event keeps its state and takes the newer format.
    fn event_of(&mut self, format: Format) -> usize {
        if let Some(&i) = self.by_id.get(&format.id) {
            self.known[i].format = format;
            return i;
        }
        let defines = match &format.print {
            Ok(p) => p.flag_definitions(&mut self.current_field),
            Err(_) => vec![],
        };
        let common = |name: &str| {
            format
                .fields
                .iter()
                .find(|f| f.common && f.name == name)
                .map(|f| (f.offset, f.size))
        };
        let name = format!("{}__{}", format.system, format.name);
        let (commons, as_bytes, id) = (
            [
                common("common_preempt_count"),
                common("common_flags"),
                common("common_lock_depth"),
                common("common_pid"),
            ],
            vec![false; format.fields.len()],
            format.id,
        );
        self.known.push(Event {
            format,
            handler: PyString::new(self.py, &name).unbind(),
            defines,
            as_bytes,
            commons,
            argc: None,
        });
        self.by_id.insert(id, self.known.len() - 1);
        self.known.len() - 1
    }

    /// The event of attr `event`'s samples (`None`: no format), found at its first sample.
    fn event_of_attr(
        &mut self,
        item: &perfdata_analysis::Replayed<'_>,
        event: usize,
    ) -> Option<usize> {
        if let Some(Some(known)) = self.by_attr.get(event) {
            return *known;
        }
        // perf finds the format by the event's config, not the payload.
        let config = item
            .data
            .session
            .attrs
            .get(event)
            .map_or(0, |a| a.attr.config);
        let format = u16::try_from(config)
            .ok()
            .and_then(|id| self.formats.as_ref()?.get(id))
            .cloned();
        let found = format.map(|f| self.event_of(f));
        if self.by_attr.len() <= event {
            self.by_attr.resize(event + 1, None);
        }
        self.by_attr[event] = Some(found);
        found
    }

    /// perf's `python_process_tracepoint`.
    fn tracepoint(
        &mut self,
        machine: &Machine,
        item: &perfdata_analysis::Replayed<'_>,
        s: &SampleInfo<'_>,
    ) -> Result<(), HostError> {
        let py = self.py;
        let Some(ev) = self.event_of_attr(item, s.event) else {
            return Ok(());
        };
        let main = self.main.clone();
        let event = &mut self.known[ev];
        let name = event.handler.bind(py).clone();
        // The definitions, before the event's first sample (perf 6.1 marks the event
        // defined then).
        for d in std::mem::take(&mut event.defines) {
            match d {
                FlagDefinition::Field {
                    symbolic,
                    field,
                    delim,
                } => {
                    if symbolic {
                        if let Some(h) = handler(&main, "define_symbolic_field")? {
                            h.call1((&name, field))?;
                        }
                    } else if let Some(h) = handler(&main, "define_flag_field")? {
                        h.call1((&name, field, delim))?;
                    }
                }
                FlagDefinition::Value {
                    symbolic,
                    field,
                    value,
                    name: text,
                } => {
                    let h = if symbolic {
                        "define_symbolic_value"
                    } else {
                        "define_flag_value"
                    };
                    if let Some(h) = handler(&main, h)? {
                        h.call1((&name, field, value, text))?;
                    }
                }
            }
        }
        let raw = s.view.raw()?;
        let raw: &[u8] = raw.as_ref().map_or(&[], |r| r.data.as_slice());
        let endian = match &self.formats {
            Some(f) => f.endian,
            None => return Ok(()),
        };
        let read = |at: Option<(usize, usize)>| {
            at.and_then(|(off, size)| perfdata::tracepoint::read_uint(raw, off, size, endian))
        };
        let commons = self.known[ev].commons;
        if let Ok(mut now) = self.context.get().now.lock() {
            *now = Now {
                preempt_count: read(commons[0]),
                flags: read(commons[1]),
                lock_depth: read(commons[2]),
            };
        }
        let (h, unhandled) = match handler_by(&main, &name)? {
            Some(h) => (h, false),
            None => match handler_by(&main, self.unhandled.bind(py))? {
                Some(h) => (h, true),
                None => return Ok(()),
            },
        };
        // `common_pid` from the payload, as an `int`.
        let pid = read(commons[3]).map_or(0, |v| v as u32 as i32);
        let time = s.time.unwrap_or(0);
        let (secs, nsecs) = (time / 1_000_000_000, time % 1_000_000_000);
        let cpu = s.cpu.map_or(-1, |c| c as i32);
        let comm = self.comm(machine, s.tid);
        let callchain = self.callchain(machine, s)?;
        let event = &mut self.known[ev];
        let format = &event.format;
        let mut args: Vec<Bound<'py, PyAny>> = Vec::with_capacity(9 + format.fields.len());
        args.push(name.clone().into_any());
        args.push(self.context.clone().into_any());
        let dict = if unhandled {
            let d = PyDict::new(py);
            d.set_item("common_cpu", cpu)?;
            d.set_item("common_s", secs)?;
            d.set_item("common_ns", nsecs)?;
            d.set_item("common_pid", pid)?;
            d.set_item("common_comm", &comm)?;
            d.set_item("common_callchain", &callchain)?;
            Some(d)
        } else {
            args.push(int(py, cpu));
            args.push(int(py, secs));
            args.push(int(py, nsecs));
            args.push(int(py, pid));
            args.push(comm.into_any());
            args.push(callchain.clone().into_any());
            None
        };
        for (i, f) in format.fields.iter().enumerate() {
            if f.common {
                continue;
            }
            let v = field_object(py, raw, f, endian, &mut event.as_bytes[i])?;
            match &dict {
                Some(d) => d.set_item(&f.name, v)?,
                None => args.push(v),
            }
        }
        if let Some(d) = dict {
            args.push(d.into_any());
        }
        let argc = match &event.argc {
            Some((cached, n)) if cached.bind(py).is(&h) => *n,
            _ => {
                let n = argument_count(&h);
                event.argc = Some((h.clone().unbind(), n));
                n
            }
        };
        if argc == args.len() + 1 {
            args.push(
                self.sample_dict(machine, item, s, raw, callchain)?
                    .into_any(),
            );
        }
        h.call1(PyTuple::new(py, args)?)?;
        Ok(())
    }

    /// The thread's name as a `str`, made once per name the machine interned.
    fn comm(&mut self, machine: &Machine, tid: i32) -> Bound<'py, PyString> {
        let py = self.py;
        let Some(id) = machine.comm_id(tid) else {
            return PyString::new(py, &machine.comm(tid));
        };
        let text = machine.comm_name(id);
        let at = id.0 as usize;
        match self.comms.get(at) {
            // The same text checked: the cache must not outlive a machine's interning.
            Some(Some((t, s))) if t == text => s.bind(py).clone(),
            _ => {
                let s = PyString::new(py, text);
                if self.comms.len() <= at {
                    self.comms.resize_with(at + 1, || None);
                }
                self.comms[at] = Some((text.to_string(), s.clone().unbind()));
                s
            }
        }
    }

    /// perf's `python_process_general_event`: `process_event(dict)`.
    fn general(
        &mut self,
        machine: &Machine,
        item: &perfdata_analysis::Replayed<'_>,
        s: &SampleInfo<'_>,
    ) -> Result<(), HostError> {
        if let Ok(mut now) = self.context.get().now.lock() {
            *now = Now::default();
        }
        let Some(h) = handler(&self.main, "process_event")? else {
            return Ok(());
        };
        let raw = s.view.raw()?;
        let raw: &[u8] = raw.as_ref().map_or(&[], |r| r.data.as_slice());
        let callchain = self.callchain(machine, s)?;
        let d = self.sample_dict(machine, item, s, raw, callchain)?;
        h.call1((d,))?;
        Ok(())
    }

    /// perf's `python_process_callchain`: the sample's call chain as a list of dicts
    /// (`ip`; with a symbol: `sym` {start, end, binding, name} and `sym_off`; with a
    /// map: `dso`), leaf first; empty when the sample records none.
    fn callchain(
        &mut self,
        machine: &Machine,
        s: &SampleInfo<'_>,
    ) -> Result<Bound<'py, PyList>, HostError> {
        let py = self.py;
        let list = PyList::empty(py);
        if s.view.callchain()?.is_none() {
            return Ok(list);
        }
        let mut frames = std::mem::take(&mut self.frames);
        frames.clear();
        machine.frames(s, &mut frames)?;
        let dsos = &machine.dsos;
        for f in frames.iter().filter(|f| !f.truncated).take(MAX_STACK) {
            let node = PyDict::new(py);
            node.set_item("ip", f.ip)?;
            if let (Some(sym), Some((dso, map_ip))) = (f.symbol, f.dso) {
                let d = PyDict::new(py);
                let start = dsos.symbol_start(sym);
                d.set_item("start", start)?;
                d.set_item("end", dsos.symbol_end(sym))?;
                d.set_item("binding", dsos.symbol_binding(sym))?;
                d.set_item("name", dsos.symbol_name(sym))?;
                node.set_item("sym", d)?;
                let at = dsos.lookup_address(dso, map_ip);
                node.set_item("sym_off", at.wrapping_sub(start))?;
            }
            if let Some((dso, _)) = f.dso {
                node.set_item("dso", &dsos.get(dso).name)?;
            }
            list.append(node)?;
        }
        self.frames = frames;
        Ok(list)
    }

    /// perf's `get_perf_sample_dict`: the sample's dict, keys in perf 6.1's order.
    fn sample_dict(
        &self,
        machine: &Machine,
        item: &perfdata_analysis::Replayed<'_>,
        s: &SampleInfo<'_>,
        raw: &[u8],
        callchain: Bound<'py, PyList>,
    ) -> Result<Bound<'py, PyDict>, HostError> {
        let py = self.py;
        let d = PyDict::new(py);
        let attr = item.data.session.attrs.get(s.event).map(|a| &a.attr);
        let name = self.events.get(s.event).map_or("", String::as_str);
        d.set_item("ev_name", name)?;
        match self.attrs.get(s.event) {
            Some(a) => d.set_item("attr", a.bind(py))?,
            None => d.set_item("attr", PyBytes::new(py, &[0; ATTR_SIZE]))?,
        }
        let sample = PyDict::new(py);
        sample.set_item("pid", s.pid as u32)?;
        sample.set_item("tid", s.tid as u32)?;
        sample.set_item("cpu", s.cpu.unwrap_or(u32::MAX))?;
        sample.set_item("ip", s.ip)?;
        sample.set_item("time", s.time.unwrap_or(0))?;
        sample.set_item("period", s.period)?;
        sample.set_item("phys_addr", s.view.phys_addr()?.unwrap_or(0))?;
        sample.set_item("addr", s.view.addr().unwrap_or(0))?;
        let read_format = attr.map_or(0, |a| a.read_format.0);
        read_values(py, &sample, s, read_format)?;
        let weight = s.view.weight()?.unwrap_or(0);
        let structured = item
            .ctx
            .sample_type
            .contains(perfdata::types::SampleType::WEIGHT_STRUCT);
        sample.set_item(
            "weight",
            if structured {
                weight & 0xffff_ffff
            } else {
                weight
            },
        )?;
        sample.set_item("transaction", s.view.transaction()?.map_or(0, |t| t.0))?;
        let data_src = s.view.data_src()?.map_or(DATA_SRC_NONE, |v| v.0);
        sample.set_item("datasrc", data_src)?;
        let mut decode = data_src_text(data_src);
        // perf's 100-byte buffer.
        decode.truncate(99);
        sample.set_item("datasrc_decode", decode)?;
        sample.set_item("cpumode", item.rec.header.misc.0 & 7)?;
        d.set_item("sample", sample)?;
        d.set_item("raw_buf", PyBytes::new(py, raw))?;
        d.set_item("comm", machine.comm(s.tid).as_ref())?;
        let f = machine.resolve(s.pid, s.kernel, s.ip);
        let dsos = &machine.dsos;
        if let Some((dso, map_ip)) = f.dso {
            let o = dsos.get(dso);
            d.set_item("dso", &o.name)?;
            let bid = dsos.build_id(dso).map_or(String::new(), hex);
            d.set_item("dso_bid", bid)?;
            let map = machine.map_at(s.pid, s.kernel, s.ip);
            d.set_item("dso_map_start", map.map_or(0, |m| m.start))?;
            d.set_item("dso_map_end", map.map_or(0, |m| m.end))?;
            if let Some(sym) = f.symbol {
                d.set_item("symbol", dsos.symbol_name(sym))?;
                let at = dsos.lookup_address(dso, map_ip);
                d.set_item("symoff", at.wrapping_sub(dsos.symbol_start(sym)))?;
            }
        }
        d.set_item("callchain", callchain)?;
        // Branch stacks are not handed over (see the docs): empty, as perf's for a
        // sample without one.
        d.set_item("brstack", PyList::empty(py))?;
        d.set_item("brstacksym", PyList::empty(py))?;
        let intr_mask = attr.and_then(|a| a.sample_regs_intr).unwrap_or(0);
        d.set_item("iregs", regs_text(s.view.regs_intr()?, intr_mask))?;
        d.set_item("uregs", regs_text(s.view.regs_user()?, s.regs_user_mask))?;
        Ok(d)
    }
}

/// A Python `int` of any integer.
fn int<'py, T: IntoPyObject<'py, Error = std::convert::Infallible>>(
    py: Python<'py>,
    v: T,
) -> Bound<'py, PyAny> {
    match v.into_pyobject(py) {
        Ok(o) => pyo3::BoundObject::into_bound(pyo3::BoundObject::into_any(o)),
        Err(never) => match never {},
    }
}

/// perf's `scripting_max_stack` (`--max-stack`'s default).
const MAX_STACK: usize = 127;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// perf's `set_sample_read_in_dict`: `time_enabled`/`time_running` when the event reads
/// them, and `values`, a list of `(id, value, lost)`.
fn read_values(
    py: Python<'_>,
    sample: &Bound<'_, PyDict>,
    s: &SampleInfo<'_>,
    read_format: u64,
) -> Result<(), HostError> {
    use perfdata::types::ReadValues;
    let read = s.view.read()?;
    let (mut enabled, mut running, mut values) = (0, 0, vec![]);
    match read.map(|r| r.values) {
        Some(ReadValues::Single(v)) => {
            enabled = v.time_enabled.unwrap_or(0);
            running = v.time_running.unwrap_or(0);
            values.push((v.id.unwrap_or(0), v.value, v.lost.unwrap_or(0)));
        }
        Some(ReadValues::Group(g)) => {
            enabled = g.time_enabled.unwrap_or(0);
            running = g.time_running.unwrap_or(0);
            values.extend(
                g.values
                    .iter()
                    .map(|v| (v.id.unwrap_or(0), v.value, v.lost.unwrap_or(0))),
            );
        }
        None => values.push((0, 0, 0)),
    }
    // PERF_FORMAT_TOTAL_TIME_ENABLED, _RUNNING.
    if read_format & 1 != 0 {
        sample.set_item("time_enabled", enabled)?;
    }
    if read_format & 2 != 0 {
        sample.set_item("time_running", running)?;
    }
    sample.set_item("values", PyList::new(py, values)?)?;
    Ok(())
}

/// One field's value as perf hands it over. `as_bytes`: the field's string flag is
/// gone (perf clears it the first time a char array holds text it cannot print).
fn field_object<'py>(
    py: Python<'py>,
    raw: &[u8],
    f: &perfdata::tracepoint::Field,
    endian: perfdata::Endianness,
    as_bytes: &mut bool,
) -> PyResult<Bound<'py, PyAny>> {
    if f.traits.array {
        let (mut off, mut len) = (f.offset, f.size);
        if f.traits.dynamic {
            let loc =
                perfdata::tracepoint::read_uint(raw, f.offset, f.size.min(4), endian).unwrap_or(0);
            off = (loc & 0xffff) as usize;
            len = (loc >> 16 & 0xffff) as usize;
            if f.traits.relative {
                off += f.offset + f.size;
            }
        }
        let data = raw.get(off..off.saturating_add(len)).unwrap_or(&[]);
        if f.traits.string && !*as_bytes && printable_array(data) {
            let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
            return Ok(PyString::new(py, &String::from_utf8_lossy(&data[..end])).into_any());
        }
        *as_bytes |= f.traits.string;
        return Ok(PyByteArray::new(py, data).into_any());
    }
    let v = match f.size {
        1 | 2 | 4 | 8 => {
            perfdata::tracepoint::read_uint(raw, f.offset, f.size, endian).unwrap_or(0)
        }
        _ => 0,
    };
    // perf reads the field's bytes unsigned: only an 8-byte signed field is negative.
    Ok(if f.signed {
        (v as i64).into_pyobject(py)?.into_any()
    } else {
        v.into_pyobject(py)?.into_any()
    })
}

/// perf's `is_printable_array`: ends with a NUL, and every byte before the first NUL is
/// printable or space in the C locale.
fn printable_array(p: &[u8]) -> bool {
    let Some((&0, rest)) = p.split_last() else {
        return false;
    };
    rest.iter()
        .take_while(|&&c| c != 0)
        .all(|&c| (0x20..0x7f).contains(&c) || matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
}

/// Adds the host's class and functions to `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScriptContext>()?;
    m.add_function(wrap_pyfunction!(run_perf_script, m)?)?;
    m.add_function(wrap_pyfunction!(common_pc, m)?)?;
    m.add_function(wrap_pyfunction!(common_flags, m)?)?;
    m.add_function(wrap_pyfunction!(common_lock_depth, m)?)?;
    m.add_function(wrap_pyfunction!(perf_sample_insn, m)?)?;
    m.add_function(wrap_pyfunction!(perf_sample_srcline, m)?)?;
    m.add_function(wrap_pyfunction!(perf_sample_srccode, m)?)?;
    m.add_function(wrap_pyfunction!(perf_set_itrace_options, m)?)?;
    Ok(())
}
