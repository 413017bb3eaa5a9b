//! `perf script`'s text: every sample and the side-band records asked for, one per line
//! (a sample with a call chain: its frames on the lines after it and a blank line), as
//! perf 6.1 prints them, byte for byte. It is what FlameGraph's `stackcollapse-perf.pl`,
//! inferno, speedscope, the Firefox Profiler and countless shell pipelines read.
//!
//! [`Script`] formats one replayed record into any [`Write`] (the Python package and other
//! tools embed it); [`script`] walks a whole recording through it.

pub mod fields;
mod inlines;
mod mem;
mod plan;
mod regs;
mod side_band;
mod stat;
mod text;

use crate::machine::Machine;
use crate::replay::{Analyzer, Replayed};
use crate::symbols::Frame;
use crate::{AnalysisError, BadOption};
use fields::{Field, FieldSpec, Fields};
use perfdata::tracepoint::Formats;
use perfdata::types::{FeatureId, RecordBody, RecordType, SampleType};
use std::io::Write;

pub use side_band::record_name;

/// perf's text of a `data_src` value (`|OP N/A|LVL N/A|…`), as `perf_script__meminfo_scnprintf`
/// makes it (the `data_src` field and perf's Python `datasrc_decode`).
pub fn data_src_text(v: u64) -> String {
    mem::describe(v)
}

/// perf's Python `iregs`/`uregs` text: each register of `mask` as `%5s:0x%x `.
pub fn regs_text(regs: Option<perfdata::types::Regs<'_>>, mask: u64) -> String {
    regs::regs_text(regs, mask)
}

/// Which side-band records are printed (`--show-*-events`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShowEvents {
    /// COMM, FORK and EXIT (`--show-task-events`).
    pub task: bool,
    /// MMAP and MMAP2 (`--show-mmap-events`).
    pub mmap: bool,
    /// SWITCH and SWITCH_CPU_WIDE (`--show-switch-events`).
    pub switch: bool,
    /// NAMESPACES (`--show-namespace-events`).
    pub namespace: bool,
    /// LOST (`--show-lost-events`).
    pub lost: bool,
    /// FINISHED_ROUND (`--show-round-events`).
    pub round: bool,
    /// KSYMBOL and BPF_EVENT (`--show-bpf-events`).
    pub bpf: bool,
    /// CGROUP (`--show-cgroup-events`).
    pub cgroup: bool,
    /// TEXT_POKE (and KSYMBOL) (`--show-text-poke-events`).
    pub text_poke: bool,
}

/// How times are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeFormat {
    /// Nanoseconds (`--ns`); microseconds otherwise.
    pub ns: bool,
    /// From the first printed record (`--reltime`).
    pub reltime: bool,
    /// From the previous printed record (`--deltatime`).
    pub deltatime: bool,
}

/// What `perf script` prints and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOptions {
    /// The fields of each kind of event (`-F`).
    pub fields: FieldSpec,
    /// No call chains (`-G`).
    pub hide_call_graph: bool,
    /// At most this many frames of a call chain (`--max-stack`, 127).
    pub max_stack: usize,
    /// Frames inlined at an unwound address (`--inline`; perf 6.1's default).
    pub inline: bool,
    /// Source file paths in full (`--full-source-path`).
    pub full_source_path: bool,
    /// The time column.
    pub time: TimeFormat,
    /// Side-band records printed.
    pub show: ShowEvents,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            fields: FieldSpec::default(),
            hide_call_graph: false,
            max_stack: 127,
            inline: true,
            full_source_path: false,
            time: TimeFormat::default(),
            show: ShowEvents::default(),
        }
    }
}

/// Formats records as perf script does; keeps what perf keeps between records (the
/// first and previous times for `--reltime`/`--deltatime`).
pub struct Script {
    opts: ScriptOptions,
    plan: Option<plan::Plan>,
    planned_for: usize,
    initial_time: u64,
    previous_time: u64,
    frames: Vec<Frame>,
    stack: crate::stack::Stack,
    formats: Option<Formats>,
    /// The widest `data_src` text so far (perf pads to it).
    data_src_width: usize,
    /// The trace text being made (kept for its allocation).
    trace_text: Vec<u8>,
    /// Helpers of unparsable print formats met (each said once).
    unknown_helpers: perfdata::tracepoint::UnknownHelpers,
    /// Trace errors said so far (each once).
    trace_errors: std::collections::BTreeSet<String>,
    /// The line being made (kept for its allocation).
    line: Vec<u8>,
    /// The text of the `ip` columns by what makes it ([`Script::write_ip`]).
    texts: rustc_hash::FxHashMap<TextKey, Vec<u8>>,
    /// The raw callchain key's buffer (kept for its allocation).
    key_bytes: Vec<u8>,
    /// What `texts` holds, in bytes.
    texts_bytes: usize,
    /// perf's addr2line state, for the names of inlined functions.
    inlines: inlines::InlineNamer,
    /// `perf stat record`'s counts: the THREAD_MAP's pids, the STAT values per event.
    stat: stat::StatCounts,
    /// What the printing met that a user should know, each said once.
    pub warnings: Vec<String>,
}

impl Script {
    /// A printer with `opts`.
    pub fn new(opts: ScriptOptions) -> Script {
        Script {
            opts,
            plan: None,
            planned_for: 0,
            initial_time: 0,
            previous_time: 0,
            frames: vec![],
            stack: Default::default(),
            formats: None,
            inlines: Default::default(),
            texts: Default::default(),
            texts_bytes: 0,
            key_bytes: vec![],
            line: vec![],
            trace_text: vec![],
            unknown_helpers: Default::default(),
            trace_errors: Default::default(),
            data_src_width: 0,
            stat: Default::default(),
            warnings: vec![],
        }
    }

    /// Checks the fields against the recording's events, as perf does before it prints
    /// anything (`perf_session__check_output_opt`): a default field an event cannot give
    /// is dropped, a field asked for that it cannot give is an error.
    fn plan(&mut self, item: &Replayed<'_>, events: &[String]) -> Result<(), BadOption> {
        let attrs = &item.data.session.attrs;
        if self.plan.is_some() && self.planned_for == attrs.len() {
            return Ok(());
        }
        if self.formats.is_none() {
            self.formats = Formats::of_file(item.data);
        }
        let plan = plan::Plan::new(
            &self.opts.fields,
            self.opts.hide_call_graph,
            item.data,
            events,
            self.formats.as_ref(),
        )?;
        self.plan = Some(plan);
        self.planned_for = attrs.len();
        Ok(())
    }

    /// Prints one record as perf script does (nothing for a record it does not print).
    pub fn write(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        item: &Replayed<'_>,
        events: &[String],
    ) -> Result<(), AnalysisError> {
        let ty = item.rec.record_type();
        if ty == RecordType::HEADER_TRACING_DATA {
            self.formats = Formats::of_record(item.rec, item.data.format.endian);
            return Ok(());
        }
        if matches!(ty.0, 73 | 76 | 77) {
            return self.write_stat(out, item, events);
        }
        if item.sample.is_none() && !self.shows(ty) {
            return Ok(());
        }
        self.plan(item, events)?;
        if item.sample.is_some() {
            self.write_sample(out, machine, item)
        } else {
            self.write_side_band(out, machine, item)
        }
    }

    /// `perf stat record`'s counts, printed at each STAT_ROUND (perf's `__process_stat`).
    fn write_stat(
        &mut self,
        out: &mut impl Write,
        item: &Replayed<'_>,
        events: &[String],
    ) -> Result<(), AnalysisError> {
        let body = item.decode()?;
        self.stat
            .record(&body, &item.data.session, events, out)
            .map_err(io)
    }

    fn shows(&self, ty: RecordType) -> bool {
        let s = &self.opts.show;
        match ty.0 {
            3 | 4 | 7 => s.task,
            1 | 10 => s.mmap,
            14 | 15 => s.switch,
            16 => s.namespace,
            2 => s.lost,
            68 => s.round,
            17 => s.bpf || s.text_poke,
            18 => s.bpf,
            19 => s.cgroup,
            20 => s.text_poke,
            _ => false,
        }
    }

    fn write_side_band(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        item: &Replayed<'_>,
    ) -> Result<(), AnalysisError> {
        let body = item.decode()?;
        let ty = item.rec.record_type();
        if ty == RecordType::FINISHED_ROUND {
            writeln!(out, "PERF_RECORD_FINISHED_ROUND").map_err(io)?;
            return Ok(());
        }
        let plan = self.plan.as_ref().expect("planned");
        let attr_index = item.ctx.attr.map_or(0, |a| a as usize);
        let event = plan.events.get(attr_index).or(plan.events.first());
        let Some(event) = event.cloned() else {
            return Ok(());
        };
        let sample_id_all = item
            .data
            .session
            .attrs
            .get(attr_index)
            .is_some_and(|a| a.attr.attr_flags.0 & (1 << 18) != 0);
        let sid = body.sample_id();
        let (mut pid, mut tid, mut time, mut cpu) = (-1i32, -1i32, 0u64, 0u32);
        if sample_id_all {
            if let Some(s) = sid {
                pid = s.pid.map_or(-1, |p| p as i32);
                tid = s.tid.map_or(-1, |t| t as i32);
                time = s.time.unwrap_or(0);
                cpu = s.cpu.unwrap_or(0);
            }
        }
        // Records whose event samples no ids print the record's own thread (perf's
        // `!sample_id_all` branch); a FORK its own time.
        let (own_pid, own_tid) = side_band::own_thread(&body);
        if !sample_id_all {
            pid = own_pid;
            tid = own_tid;
            if let RecordBody::Fork(f) = &body {
                time = f.time;
            }
        }
        // The thread perf names: the record's own for task and map records, the
        // sample's for the others.
        let thread_tid = match &body {
            RecordBody::Comm(_)
            | RecordBody::Fork(_)
            | RecordBody::Exit(_)
            | RecordBody::Mmap(_)
            | RecordBody::Mmap2(_)
            | RecordBody::Namespaces(_) => own_tid,
            _ => tid,
        };
        let comm = machine.comm(thread_tid);
        let fields = plan.fields(event.ty);
        let callchain_comm = fields.has(Field::IP) && event.callchain && plan.use_callchain;
        let mut line = vec![];
        self.start_text(
            &mut line,
            &Start {
                fields,
                callchain_comm,
                comm: &comm,
                pid,
                tid,
                cpu: Some(cpu),
                time: Some(time),
                misc: item.rec.header.misc.0,
                record_type: ty.0,
            },
        );
        out.write_all(&line).map_err(io)?;
        // A TEXT_POKE's address by its kernel symbol.
        let poked = match &body {
            RecordBody::TextPoke(t) => {
                let f = machine.resolve(-1, true, t.addr);
                symbol_offset(machine, &f).map(|(name, off)| format!("{name}+0x{off:x}"))
            }
            _ => None,
        };
        side_band::write_record(out, ty.0, item.rec.header.misc, &body, poked.as_deref())
            .map_err(io)?;
        Ok(())
    }

    /// perf's `perf_sample__fprintf_start`: comm, tid, cpu, misc and time, into a
    /// buffer (the hot path of every sample: no `fmt`).
    fn start_text(&mut self, buf: &mut Vec<u8>, start: &Start<'_>) {
        let Start {
            fields,
            callchain_comm,
            comm,
            pid,
            tid,
            cpu,
            time,
            misc,
            record_type: ty,
        } = *start;
        if fields.has(Field::COMM) {
            if callchain_comm {
                buf.extend_from_slice(comm.as_bytes());
            } else {
                text::pad_left(buf, comm.as_bytes(), 16);
            }
            buf.push(b' ');
        }
        match (fields.has(Field::PID), fields.has(Field::TID)) {
            (true, true) => {
                text::dec(buf, pid, 5);
                buf.push(b'/');
                text::dec_left(buf, tid, 5);
                buf.push(b' ');
            }
            (true, false) => {
                text::dec(buf, pid, 5);
                buf.push(b' ');
            }
            (false, true) => {
                text::dec(buf, tid, 5);
                buf.push(b' ');
            }
            _ => {}
        }
        if fields.has(Field::CPU) {
            buf.push(b'[');
            text::dec_zero(buf, cpu.unwrap_or(0), 3);
            buf.extend_from_slice(b"] ");
        }
        if fields.has(Field::MISC) {
            let at = buf.len();
            match misc & 7 {
                1 => buf.push(b'K'),
                2 => buf.push(b'U'),
                3 => buf.push(b'H'),
                4 => buf.push(b'G'),
                5 => buf.push(b'g'),
                _ => {}
            }
            match ty {
                1 | 10 if misc & (1 << 13) != 0 => buf.push(b'M'),
                3 if misc & (1 << 13) != 0 => buf.push(b'E'),
                14 | 15 if misc & (1 << 13) != 0 => {
                    buf.push(b'S');
                    if misc & (1 << 14) != 0 {
                        buf.push(b'p');
                    }
                }
                _ => {}
            }
            // C's `"%*s", 6 - n, " "`: at least the one space.
            let pad = 6usize.saturating_sub(buf.len() - at).max(1);
            buf.resize(buf.len() + pad, b' ');
        }
        if fields.has(Field::TIME) {
            // perf keeps these as plain numbers, 0 meaning unset: a record at time 0 (a
            // synthesized one) leaves the next to set them.
            let mut t = time.unwrap_or(0);
            if self.opts.time.reltime {
                if self.initial_time == 0 {
                    self.initial_time = t;
                }
                t = t.wrapping_sub(self.initial_time);
            } else if self.opts.time.deltatime {
                let prev = std::mem::replace(&mut self.previous_time, t);
                t = if prev != 0 { t.wrapping_sub(prev) } else { 0 };
            }
            let secs = t / 1_000_000_000;
            let nsecs = t % 1_000_000_000;
            if self.opts.time.ns {
                text::dec(buf, secs, 5);
                buf.push(b'.');
                text::dec_zero(buf, nsecs, 9);
            } else {
                // `%12s` of `secs.usecs`.
                let mut n = itoa::Buffer::new();
                let secs = n.format(secs);
                let pad = 12usize.saturating_sub(secs.len() + 7);
                buf.resize(buf.len() + pad, b' ');
                buf.extend_from_slice(secs.as_bytes());
                buf.push(b'.');
                text::dec_zero(buf, nsecs / 1000, 6);
            }
            buf.extend_from_slice(b": ");
        }
    }

    fn write_sample(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        item: &Replayed<'_>,
    ) -> Result<(), AnalysisError> {
        let s = item.sample.as_ref().expect("a sample");
        let plan = self.plan.as_ref().expect("planned");
        let Some(event) = plan.events.get(s.event) else {
            return Ok(());
        };
        let fields = plan.fields(event.ty);
        if fields.0 == 0 {
            return Ok(());
        }
        let use_callchain = plan.use_callchain;
        let name_width = plan.name_width;
        let event_callchain = event.callchain;
        let callchain_comm = fields.has(Field::IP) && event_callchain && use_callchain;
        // The thread's name is looked up only when printed.
        let comm = if fields.has(Field::COMM) {
            machine.comm(s.tid)
        } else {
            "".into()
        };
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        self.start_text(
            &mut line,
            &Start {
                fields,
                callchain_comm,
                comm: &comm,
                pid: s.pid,
                tid: s.tid,
                cpu: s.cpu,
                time: s.time,
                misc: item.rec.header.misc.0,
                record_type: RecordType::SAMPLE.0,
            },
        );
        if fields.has(Field::PERIOD) {
            text::dec(&mut line, s.period, 10);
            line.push(b' ');
        }
        if fields.has(Field::EVNAME) {
            let plan = self.plan.as_ref().expect("planned");
            let name = plan.events[s.event].name.as_bytes();
            text::pad_left(&mut line, name, name_width);
            line.extend_from_slice(b": ");
        }
        if self.opts.fields.flags {
            // perf's `perf_sample__fprintf_flags` of a sample without branch flags (only
            // an AUX trace's synthesized samples have them): `"  %-21s "` of nothing.
            line.extend_from_slice(&[b' '; 24]);
        }
        let written = out.write_all(&line);
        self.line = line;
        written.map_err(io)?;
        if fields.has(Field::TRACE) {
            if let Some(raw) = s.view.raw()? {
                self.write_trace(out, machine, raw.data.as_slice())?;
            }
        }
        if fields.has(Field::ADDR) {
            self.write_addr(out, machine, item, s, fields)?;
        }
        if fields.has(Field::DATA_SRC) {
            let v = s.view.data_src()?.map_or(0, |d| d.0);
            let mut text = format!("{v:16x} {}", mem::describe(v));
            // perf's 100-byte buffer.
            text.truncate(99);
            self.data_src_width = self.data_src_width.max(text.len());
            let w = self.data_src_width;
            write!(out, "{text:<w$}").map_err(io)?;
        }
        // WEIGHT_STRUCT packs the instruction latency above the weight. Read only when
        // printed: it lies past the stack copy, which finding it decodes again.
        let weight = if fields.has(Field::WEIGHT) || fields.has(Field::INS_LAT) {
            s.view.weight()?.unwrap_or(0)
        } else {
            0
        };
        let structured = item.ctx.sample_type.contains(SampleType::WEIGHT_STRUCT);
        if fields.has(Field::WEIGHT) {
            let w = if structured {
                weight & 0xffff_ffff
            } else {
                weight
            };
            write!(out, "{w:16}").map_err(io)?;
        }
        if fields.has(Field::INS_LAT) {
            let lat = if structured {
                (weight >> 32) & 0xffff
            } else {
                0
            };
            write!(out, "{lat:16}").map_err(io)?;
        }
        if fields.has(Field::IP) {
            self.write_ip(out, machine, s, fields, use_callchain && event_callchain)?;
        }
        if fields.has(Field::IREGS) {
            let mask = item
                .data
                .session
                .attrs
                .get(s.event)
                .and_then(|a| a.attr.sample_regs_intr)
                .unwrap_or(0);
            regs::write_regs(out, s.view.regs_intr()?, mask).map_err(io)?;
        }
        if fields.has(Field::UREGS) {
            regs::write_regs(out, s.view.regs_user()?, s.regs_user_mask).map_err(io)?;
        }
        if fields.has(Field::INSNLEN) || fields.has(Field::INSN) {
            self.write_insn(out, machine, item, s, fields)?;
        }
        if fields.has(Field::PHYS_ADDR) {
            write!(out, "{:16x}", s.view.phys_addr()?.unwrap_or(0)).map_err(io)?;
        }
        if fields.has(Field::DATA_PAGE_SIZE) {
            write!(out, " {}", mem::page_size_name(s.view.data_page_size()?)).map_err(io)?;
        }
        if fields.has(Field::CODE_PAGE_SIZE) {
            write!(out, " {}", mem::page_size_name(s.view.code_page_size()?)).map_err(io)?;
        }
        writeln!(out).map_err(io)?;
        Ok(())
    }

    /// perf's `perf_sample__fprintf_addr`: the sampled data address, with its symbol and
    /// object for the events whose address is one in the program (page faults).
    fn write_addr(
        &self,
        out: &mut impl Write,
        machine: &Machine,
        item: &Replayed<'_>,
        s: &crate::SampleInfo<'_>,
        fields: Fields,
    ) -> Result<(), AnalysisError> {
        let addr = s.view.addr().unwrap_or(0);
        write!(out, "{addr:16x}").map_err(io)?;
        let correlates = item.data.session.attrs.get(s.event).is_some_and(|a| {
            // PERF_COUNT_SW_PAGE_FAULTS, _MIN, _MAJ.
            a.attr.type_.0 == 1 && matches!(a.attr.config, 2 | 5 | 6)
        });
        if !correlates {
            return Ok(());
        }
        let f = machine.resolve(s.pid, s.kernel, addr);
        if fields.has(Field::SYM) {
            write!(out, " ").map_err(io)?;
            let sym_fields = Fields(fields.0 | fields::bit(Field::SYM));
            let mut text = Vec::new();
            self.write_sym(&mut text, machine, &f, sym_fields)?;
            // write_sym leads with the space already written.
            out.write_all(&text[1..]).map_err(io)?;
        }
        if fields.has(Field::DSO) {
            write!(out, " (").map_err(io)?;
            write_dso(out, machine, &f).map_err(io)?;
            write!(out, ")").map_err(io)?;
        }
        Ok(())
    }

    /// perf's `perf_sample__fprintf_insn`: the length of the instruction at the sample's
    /// address (` ilen: N`) and its bytes (` insn: 48 c1 e8 05`), read from the object's
    /// file as perf's `arch_fetch_insn` reads them on the recording's own architecture
    /// (x86: measured by an x86 decoder; `ilen: 0` where the bytes cannot be read).
    fn write_insn(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        item: &Replayed<'_>,
        s: &crate::SampleInfo<'_>,
        fields: Fields,
    ) -> Result<(), AnalysisError> {
        // perf fetches the bytes only when it runs on the recording's architecture: a
        // pipe is taken to be of this machine, a file when its ARCH says so (a 32-bit
        // x86 recording on x86_64 too), not one without ARCH.
        let native = item.data.header.is_none()
            || match item
                .data
                .features
                .iter()
                .find(|f| f.id == FeatureId::ARCH)
                .and_then(|f| item.data.feature(f).ok())
            {
                Some(perfdata::types::FeatureBody::Arch(a)) => {
                    let arch = a.value.text.text();
                    let here = std::env::consts::ARCH.as_bytes();
                    arch == here || (here == b"x86_64" && arch == b"i386")
                }
                _ => false,
            };
        let mut insn: &[u8] = &[];
        let fetched;
        if native && s.ip != 0 && cfg!(target_arch = "x86_64") {
            let f = machine.resolve(s.pid, s.kernel, s.ip);
            if let Some((dso, map_ip)) = f.dso.filter(|_| !s.kernel) {
                if let Some((bytes, is64)) = machine.dsos.file_bytes(dso, map_ip, 16) {
                    let bitness = if is64 { 64 } else { 32 };
                    let mut d = iced_x86::Decoder::with_ip(
                        bitness,
                        &bytes,
                        s.ip,
                        iced_x86::DecoderOptions::NONE,
                    );
                    let i = d.decode();
                    if !i.is_invalid() && i.len() <= bytes.len() {
                        fetched = bytes[..i.len()].to_vec();
                        insn = &fetched;
                    }
                }
            }
        }
        if fields.has(Field::INSNLEN) {
            write!(out, " ilen: {}", insn.len()).map_err(io)?;
        }
        if fields.has(Field::INSN) && !insn.is_empty() {
            write!(out, " insn:").map_err(io)?;
            for b in insn {
                write!(out, " {b:02x}").map_err(io)?;
            }
        }
        Ok(())
    }

    /// The `trace` field: the tracepoint's fields through its format's `print fmt`, as
    /// perf's libtraceevent prints them. A format perf cannot parse prints its fields as
    /// `[FAILED TO PARSE]` (said once per helper on standard error); a payload that does
    /// not hold what its format says prints nothing there (said once per event).
    fn write_trace(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        raw: &[u8],
    ) -> Result<(), AnalysisError> {
        let Some(formats) = &self.formats else {
            return Ok(());
        };
        let mut text = std::mem::take(&mut self.trace_text);
        text.clear();
        match formats.write_trace(raw, &KernelNames(machine), &mut text) {
            Ok(format) => {
                if let Some(helper) = self.unknown_helpers.first_use(format) {
                    self.warnings.push(format!(
                        "tracepoint {}:{}: its print fmt uses `{helper}`, which perf 6.1's \
                         libtraceevent cannot parse: printed as perf prints it, \
                         [FAILED TO PARSE] and the fields",
                        format.system, format.name
                    ));
                }
                out.write_all(&text).map_err(io)?;
            }
            Err(e) => {
                let what = e.to_string();
                if self.trace_errors.insert(what.clone()) {
                    self.warnings.push(format!("tracepoint sample: {what}"));
                }
            }
        }
        self.trace_text = text;
        Ok(())
    }

    /// The `ip`/`sym`/`dso` columns: the sample's address on the line, or its call chain
    /// on the lines below (perf's `sample__fprintf_sym`).
    fn write_ip(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        s: &crate::SampleInfo<'_>,
        fields: Fields,
        callchain: bool,
    ) -> Result<(), AnalysisError> {
        // Most samples repeat a stack: its text is made once per state of the machine
        // (what names it) and copied after.
        let chain = if callchain { s.view.callchain()? } else { None };
        let has_chain = chain.is_some();
        // A recorded callchain that nothing replaces (no stack copy to unwind, no
        // simpleperf frames given) is its own key: no stack is put together for a
        // stack met before.
        let raw = has_chain && s.regs_user_mask == 0 && s.user_callchain.is_none();
        self.stack.addrs.clear();
        let mut bytes = std::mem::take(&mut self.key_bytes);
        bytes.clear();
        match (&chain, raw) {
            // The callchain's bytes as they sit in the record (one copy, no decoding).
            (Some(c), true) => match &c.ips {
                perfdata::rt::Array::Borrowed { bytes: b, .. } => bytes.extend_from_slice(b),
                perfdata::rt::Array::Owned(v) => {
                    bytes.extend(v.iter().flat_map(|ip| ip.to_ne_bytes()))
                }
            },
            (Some(_), false) => machine.stack(s, &mut self.stack)?,
            // The key's one address, in the stack's buffer (no allocation per sample).
            (None, _) => self.stack.addrs.push((s.ip, s.kernel)),
        }
        let key = TextKey {
            pid: s.pid,
            changes: machine.changes(),
            fields: fields.0,
            chain: has_chain,
            raw,
            end: if has_chain && !raw {
                self.stack.unwound
            } else {
                None
            },
            addrs: std::mem::take(&mut self.stack.addrs),
            bytes,
        };
        if let Some(text) = self.texts.get(&key) {
            out.write_all(text).map_err(io)?;
            self.stack.addrs = key.addrs;
            self.key_bytes = key.bytes;
            return Ok(());
        }
        if raw {
            machine.stack(s, &mut self.stack)?;
        } else if has_chain {
            self.stack.addrs.clone_from(&key.addrs);
        }
        let mut text = vec![];
        self.write_ip_text(&mut text, machine, s, fields, has_chain)?;
        out.write_all(&text).map_err(io)?;
        // Bounded memory: forgotten when it holds 16 MiB of text (or keys).
        self.texts_bytes += text.len() + 16 * key.addrs.len() + key.bytes.len();
        if self.texts_bytes > 16 << 20 {
            self.texts.clear();
            self.texts_bytes = 0;
        }
        self.texts.insert(key, text);
        Ok(())
    }

    /// [`Script::write_ip`]'s text, made (the stack is in `self.stack` when `has_chain`).
    fn write_ip_text(
        &mut self,
        out: &mut impl Write,
        machine: &Machine,
        s: &crate::SampleInfo<'_>,
        fields: Fields,
        has_chain: bool,
    ) -> Result<(), AnalysisError> {
        if !has_chain {
            write!(out, " ").map_err(io)?;
            let f = machine.resolve(s.pid, s.kernel, s.ip);
            if fields.has(Field::IP) {
                write!(out, "{:16x}", s.ip).map_err(io)?;
            }
            self.write_sym(out, machine, &f, fields)?;
            if fields.has(Field::DSO) {
                write!(out, " (").map_err(io)?;
                write_dso(out, machine, &f).map_err(io)?;
                write!(out, ")").map_err(io)?;
            }
            if fields.has(Field::SRCLINE) {
                self.write_srcline(out, machine, &f)?;
            }
            return Ok(());
        }
        writeln!(out).map_err(io)?;
        let mut frames = std::mem::take(&mut self.frames);
        machine.resolve_stack(s.pid, &self.stack, &mut frames);
        let unwound_from = self.stack.unwound.map(|_| self.stack.user_from);
        let mut printed = 0;
        for (i, f) in frames.iter().enumerate() {
            if f.truncated {
                // libunwind's last step out of a cut stack copy gives address 0, which perf
                // prints after taking one off it (as every caller's).
                if self.stack.unwound == Some(crate::stack::unwind::StackEnd::Truncated) {
                    self.write_plain(out, u64::MAX, machine, f, fields)?;
                }
                continue;
            }
            if printed >= self.opts.max_stack {
                break;
            }
            printed += 1;
            let addr = match f.dso {
                Some((_, map_ip)) if !f.kernel => map_ip,
                _ => f.ip,
            };
            // Unwound frames carry the functions inlined at their address (perf's
            // `append_inlines` in `unwind_entry`).
            let unwound = unwound_from.is_some_and(|from| i >= from);
            if self.opts.inline && unwound {
                if let (Some((dso, map_ip)), Some(sym)) = (f.dso, f.symbol) {
                    let at = machine.dsos.lookup_address(dso, map_ip);
                    let names = self.inlines.names(&machine.dsos, dso, at);
                    if !names.is_empty() {
                        let base = machine.dsos.symbol_name(sym);
                        let off = at.wrapping_sub(machine.dsos.symbol_start(sym));
                        for entry in names.iter() {
                            let n = &entry.name;
                            write!(out, "\t{addr:16x}").map_err(io)?;
                            let inlined = n != base;
                            if fields.has(Field::SYM) {
                                write!(out, " {n}").map_err(io)?;
                                if fields.has(Field::SYMOFFSET) {
                                    write!(out, "+0x{off:x}").map_err(io)?;
                                }
                            }
                            if fields.has(Field::DSO) && !inlined {
                                write!(out, " (").map_err(io)?;
                                write_dso(out, machine, f).map_err(io)?;
                                write!(out, ")").map_err(io)?;
                            }
                            if fields.has(Field::SRCLINE) {
                                // Each function its own position (perf keeps addr2line's
                                // per function): the call site for a caller.
                                let file = entry.file.as_deref().unwrap_or("");
                                let line = self.file_line(file, entry.line);
                                write!(out, "\n  {line}").map_err(io)?;
                            }
                            if inlined {
                                write!(out, " (inlined)").map_err(io)?;
                            }
                            writeln!(out).map_err(io)?;
                        }
                        continue;
                    }
                }
            }
            self.write_plain(out, addr, machine, f, fields)?;
        }
        self.frames = frames;
        Ok(())
    }

    /// One call chain line of a frame without inlined functions.
    fn write_plain(
        &self,
        out: &mut impl Write,
        addr: u64,
        machine: &Machine,
        f: &Frame,
        fields: Fields,
    ) -> Result<(), AnalysisError> {
        if fields.has(Field::IP) {
            write!(out, "\t{addr:16x}").map_err(io)?;
        }
        self.write_sym(out, machine, f, fields)?;
        if fields.has(Field::DSO) {
            write!(out, " (").map_err(io)?;
            write_dso(out, machine, f).map_err(io)?;
            write!(out, ")").map_err(io)?;
        }
        if fields.has(Field::SRCLINE) {
            self.write_srcline(out, machine, f)?;
        }
        writeln!(out).map_err(io)?;
        Ok(())
    }

    fn write_sym(
        &self,
        out: &mut impl Write,
        machine: &Machine,
        f: &Frame,
        fields: Fields,
    ) -> Result<(), AnalysisError> {
        if !fields.has(Field::SYM) {
            return Ok(());
        }
        match symbol_offset(machine, f) {
            Some((name, off)) => {
                write!(out, " {name}").map_err(io)?;
                if fields.has(Field::SYMOFFSET) {
                    write!(out, "+0x{off:x}").map_err(io)?;
                }
            }
            _ => write!(out, " [unknown]").map_err(io)?,
        }
        Ok(())
    }

    /// `file:line`, the file's base name unless `--full-source-path`.
    fn file_line(&self, file: &str, line: u32) -> String {
        if self.opts.full_source_path {
            format!("{file}:{line}")
        } else {
            format!("{}:{line}", file.rsplit('/').next().unwrap_or(file))
        }
    }

    /// The `srcline` field of a frame: its address's own position (the innermost
    /// function's) as binutils' addr2line gives it to perf; `:0` for a function the debug
    /// info has without a line; nothing for an address no debug info covers (perf reads
    /// binutils' `??:0` as its end-of-answer mark); a kernel object is never asked: its
    /// short name and the address.
    fn write_srcline(
        &self,
        out: &mut impl Write,
        machine: &Machine,
        f: &Frame,
    ) -> Result<(), AnalysisError> {
        let Some((dso, map_ip)) = f.dso else {
            return Ok(());
        };
        let at = machine.dsos.lookup_address(dso, map_ip);
        let d = machine.dsos.get(dso);
        let line = if d.name.starts_with('[') {
            format!("{}[{at:x}]", d.short_name)
        } else {
            match machine.dsos.dwarf_frames(dso, at).first() {
                Some(f) => self.file_line(f.file.as_deref().unwrap_or(""), f.line),
                None => return Ok(()),
            }
        };
        write!(out, "\n  {line}").map_err(io)?;
        Ok(())
    }
}

/// What the common columns of a line print (perf's `perf_sample__fprintf_start`).
#[derive(Clone, Copy)]
struct Start<'a> {
    fields: Fields,
    /// The comm column unpadded: the event prints a call chain.
    callchain_comm: bool,
    comm: &'a str,
    pid: i32,
    tid: i32,
    cpu: Option<u32>,
    time: Option<u64>,
    misc: u16,
    /// The record's type (the misc letters depend on it).
    record_type: u32,
}

/// The kernel's symbols for `%pS`-style conversions of tracepoint fields.
struct KernelNames<'m>(&'m Machine);

impl perfdata::tracepoint::KernelSymbols for KernelNames<'_> {
    fn resolve(&self, addr: u64) -> Option<(std::borrow::Cow<'_, str>, u64)> {
        let f = self.0.resolve(-1, true, addr);
        symbol_offset(self.0, &f).map(|(name, off)| (name.into(), off))
    }
}

/// A frame's symbol and its offset in it (`sym+off`), as perf prints them.
fn symbol_offset<'m>(machine: &'m Machine, f: &Frame) -> Option<(&'m str, u64)> {
    let (sym, (dso, map_ip)) = (f.symbol?, f.dso?);
    let at = machine.dsos.lookup_address(dso, map_ip);
    Some((
        machine.dsos.symbol_name(sym),
        at.wrapping_sub(machine.dsos.symbol_start(sym)),
    ))
}

/// What the text of a sample's `ip` columns follows from: its process and the state of
/// the machine (what names addresses), the fields, and its stack (or address).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TextKey {
    pid: i32,
    changes: u64,
    fields: u64,
    chain: bool,
    /// The key is the recorded callchain as it is (context markers included, `bytes`),
    /// not the stack put together from it.
    raw: bool,
    end: Option<crate::stack::unwind::StackEnd>,
    /// The stack (or the one address) when not `raw`.
    addrs: Vec<(u64, bool)>,
    /// The recorded callchain's bytes when `raw`.
    bytes: Vec<u8>,
}

/// perf's `map__fprintf_dsoname`: the object's name, `[unknown]` outside any map.
fn write_dso(out: &mut impl Write, machine: &Machine, f: &Frame) -> std::io::Result<()> {
    match f.dso {
        Some((d, _)) => write!(out, "{}", machine.dsos.get(d).name),
        None => write!(out, "[unknown]"),
    }
}

fn io(e: std::io::Error) -> AnalysisError {
    AnalysisError::Io {
        path: None,
        source: e,
    }
}

/// Prints a whole recording as `perf script` does, into `out`; what it met that a user
/// should know (a tracepoint format perf cannot parse, a payload shorter than its format).
pub fn script(
    analyzer: &mut Analyzer<'_>,
    opts: &ScriptOptions,
    out: &mut impl Write,
) -> Result<Vec<String>, AnalysisError> {
    let mut printer = Script::new(opts.clone());
    let events = analyzer.events.clone();
    // Inlined functions are named at every unwound frame: the debug info of the files
    // hit is read while the walk starts.
    let unwinds = (analyzer.data.session.attrs.iter())
        .any(|a| a.attr.sample_type.contains(SampleType::STACK_USER));
    analyzer.machine.dsos.read_ahead(opts.inline && unwinds);
    // perf turns its time ordering off to show where the rounds fall.
    let run = crate::RunOptions {
        file_order: opts.show.round,
        merge_streams: true,
        ..Default::default()
    };
    analyzer.run(run, |machine, item| -> Result<bool, AnalysisError> {
        printer.write(out, machine, item, &events)?;
        Ok(true)
    })?;
    Ok(printer.warnings)
}
