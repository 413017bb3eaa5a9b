"""Read Linux perf.data recordings from Python.

>>> import perfdata
>>> rec = perfdata.open("perf.data")
>>> rec.info()["events"]                      # what `perfdata info --json` prints
>>> reader = rec.samples()                    # a pyarrow.RecordBatchReader, streamed
>>> df = reader.read_pandas()                 # or .read_all(), or DuckDB on `reader`
>>> rec.report(sort="dso,sym").to_pandas()    # `perfdata report --no-children -g none`
>>> rec.collapse()                            # `perfdata collapse`: folded stacks
>>> for r in rec.records(): ...               # `perfdata dump --json`, one dict per record

Everything is the Rust implementation (`perfdata` and `perfdata-analysis`) called in
process: the samples come as Arrow batches through the Arrow C stream interface
(zero-copy, memory bounded by a batch), the other values as the JSON the CLI prints.
Errors reading a recording raise :class:`PerfDataError`, whose attributes say where
(``offset``, ``record``, ``record_type``, ``field``, ``feature``, ``file``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _native
from ._native import PerfDataError

__all__ = ["open", "Recording", "PerfDataError", "SAMPLE_COLUMNS", "NAME_COLUMNS"]

#: The columns of the Parquet export's ``samples`` table (docs/parquet-export.md).
SAMPLE_COLUMNS = (
    "event", "time", "pid", "tid", "comm", "cpu", "period", "ip", "stack_id",
    "leaf_frame", "addr", "id", "stream_id", "weight", "data_src", "transaction",
    "phys_addr", "cgroup",
)
#: The columns :meth:`Recording.samples` adds: the leaf frame's shared object and symbol
#: (the export's ``frames.dso_name`` and ``frames.symbol``) and the stack's frames as
#: ``perfdata collapse`` names them (``frames.folded_name``), leaf first.
NAME_COLUMNS = ("dso_name", "symbol", "stack")

PathLike = Union[str, "os.PathLike[str]"]


def open(  # noqa: A001 - the package's entry point, as `perfdata.open`
    path: PathLike,
    *,
    kallsyms: Optional[PathLike] = None,
    vmlinux: Optional[PathLike] = None,
    symfs: Optional[PathLike] = None,
    symbols_from: Sequence[PathLike] = (),
    debug_file_dirs: Sequence[PathLike] = (),
    jitdumps: Sequence[PathLike] = (),
    no_symbols: bool = False,
) -> "Recording":
    """Opens a recording: a perf.data file (file or pipe layout, either byte order) or a
    ``perf record --threads`` directory. Its header and attrs are read now (a damaged one
    raises :class:`PerfDataError`); the records when asked for.

    The keyword arguments are the CLI's symbol options: ``kallsyms``/``vmlinux`` for the
    kernel, ``symfs`` (perf's ``--symfs``), ``symbols_from`` (``perf archive`` tarballs),
    ``debug_file_dirs``, ``jitdumps`` (``jit-PID.dump`` files naming JIT code, besides
    those the recording maps), and ``no_symbols`` (addresses only).
    """
    return Recording(
        _native.NativeRecording(
            os.fspath(path),
            kallsyms=_opt_path(kallsyms),
            vmlinux=_opt_path(vmlinux),
            symfs=_opt_path(symfs),
            symbols_from=[os.fspath(p) for p in symbols_from],
            debug_file_dirs=[os.fspath(p) for p in debug_file_dirs],
            jitdumps=[os.fspath(p) for p in jitdumps],
            no_symbols=no_symbols,
        )
    )


def _opt_path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


class Recording:
    """A recording opened by :func:`open`. Each method walks the recording again (the
    file is memory-mapped; nothing is cached but the header)."""

    def __init__(self, native: "_native.NativeRecording") -> None:
        self._native = native
        self._header: Optional[Dict[str, Any]] = None

    def __repr__(self) -> str:
        return f"perfdata.Recording({os.fspath(self.path)!r})"

    @property
    def path(self) -> str:
        """The recording's path."""
        return str(self._native.path)

    # -- the header ---------------------------------------------------------------

    def _head(self) -> Dict[str, Any]:
        if self._header is None:
            head: Dict[str, Any] = {"attrs": [], "features": {}, "damaged_features": []}
            for line in self._native.header_json():
                v = json.loads(line)
                if "perfdata_dump" in v:
                    head["format"] = v["format"]
                elif "header" in v:
                    head["header"] = v["header"]
                elif "attr" in v:
                    head["attrs"].append(v)
                elif "feature" in v and "error" in v:
                    head["damaged_features"].append(v)
                elif "feature" in v:
                    name = v["feature"]
                    key = name.lower()
                    head["features"][name] = v.get(key, {k: x for k, x in v.items() if k not in ("feature", "id")})
            self._header = head
        return self._header

    @property
    def format(self) -> Dict[str, Any]:
        """Layout (``"File"``/``"Pipe"``) and byte order (``"Little"``/``"Big"``)."""
        return self._head()["format"]

    @property
    def header(self) -> Optional[Dict[str, Any]]:
        """The ``perf_file_header`` (None for a pipe)."""
        return self._head().get("header")

    @property
    def attrs(self) -> List[Dict[str, Any]]:
        """One dict per event: ``attr`` (its index), ``event`` (its name), ``ids`` and
        ``value`` (the ``perf_event_attr``), as ``perfdata dump --json`` prints them.
        A pipe recording's attrs come as records: see :meth:`records`."""
        return self._head()["attrs"]

    @property
    def features(self) -> Dict[str, Any]:
        """The header features by name (``"HOSTNAME"``, ``"CMDLINE"``…), their values as
        ``perfdata dump --json`` prints them. Damaged ones are left out (see
        ``damaged_features``)."""
        return self._head()["features"]

    @property
    def damaged_features(self) -> List[Dict[str, Any]]:
        """Features that could not be read: ``feature``, ``id``, ``offset``, ``size``,
        ``error``."""
        return self._head()["damaged_features"]

    @property
    def events(self) -> List[str]:
        """The event names, by attr index (``cpu-clock``, ``sched:sched_switch``…)."""
        return self._native.events()

    @property
    def streams(self) -> int:
        """How many streams of records: 1 for a file; for a ``perf record --threads``
        directory, its main file's (0) and each ``data.N`` file's (1, 2, …)."""
        return self._native.streams()

    def byte_ranges(self, split_bytes: int) -> List[Tuple[int, int]]:
        """Byte ranges ``(start, end)`` of the file that cover its records, each of about
        ``split_bytes`` or more (cut after ``FINISHED_ROUND`` records, where perf's time
        order flushes): ``samples(byte_range=r)`` over each gives every sample once.
        One range for a file no larger than ``split_bytes``. Framing only: fast."""
        return [tuple(r) for r in self._native.byte_ranges(split_bytes)]

    def info(self, top: int = 5) -> Dict[str, Any]:
        """``perfdata info --json``: producer, duration, events (samples and period each),
        losses, top processes and shared objects."""
        return json.loads(self._native.info_json(top))

    # -- the samples --------------------------------------------------------------

    def sample_stream(
        self,
        columns: Optional[Sequence[str]] = None,
        *,
        symbolize: bool = True,
        unwind: Optional[str] = None,
        batch_size: int = 65536,
        stream: Optional[int] = None,
        byte_range: Optional[Tuple[int, int]] = None,
        workers: Optional[int] = None,
    ) -> "_native.SampleStream":
        """The samples as an object of the Arrow PyCapsule interface
        (``__arrow_c_stream__``), for consumers that take one without pyarrow."""
        return self._native.samples(
            columns=None if columns is None else list(columns),
            symbolize=symbolize,
            unwind=unwind,
            batch_size=batch_size,
            stream=stream,
            byte_range=None if byte_range is None else (int(byte_range[0]), int(byte_range[1])),
            workers=workers,
        )

    def samples(
        self,
        columns: Optional[Sequence[str]] = None,
        *,
        symbolize: bool = True,
        unwind: Optional[str] = None,
        batch_size: int = 65536,
        stream: Optional[int] = None,
        byte_range: Optional[Tuple[int, int]] = None,
        workers: Optional[int] = None,
    ):
        """The samples, one row each, as a ``pyarrow.RecordBatchReader``: the columns of
        the Parquet export's ``samples`` table (:data:`SAMPLE_COLUMNS`), then
        :data:`NAME_COLUMNS` (``dso_name``, ``symbol``, ``stack``). ``columns`` picks
        some, in that order.

        The recording is replayed on threads of their own as the reader pulls: batches of
        ``batch_size`` rows, handed over zero-copy through the Arrow C stream interface;
        a few batches per worker are in memory, whatever the recording's size. The
        reader can be read once (``read_all()``, ``read_pandas()``, iteration, or a
        DuckDB query over it).

        ``workers``: the threads that build the rows (``None``: one per core, up to 4;
        ``1``: one; at most 64). Each replays the whole recording and builds every
        ``workers``-th chunk of 4 batches; the batches, their order and the
        ``stack_id`` and ``leaf_frame`` ids are the same whatever their number. Two take
        about 0.8 of one's time; give ``1`` where the cores are busy already (a Spark
        executor's tasks).

        ``symbolize``: functions from the objects' symbols (and DWARF lines); off, frames
        are addresses and shared objects. ``unwind``: where user stacks come from,
        ``"fp"`` (the recorded callchain), ``"dwarf"`` (unwound from registers and stack
        copies) or ``"auto"`` (the default: unwinding where a sample carries them and
        its callchain has no user part).

        ``stream``: the samples of one stream of records only (``0`` … ``streams - 1``,
        see :attr:`streams`), every process and map still known from the others: a
        ``perf record --threads`` directory read in parallel, one stream per worker.

        ``byte_range``: the samples whose records lie in these bytes of the file only
        (``start, end``, from :meth:`byte_ranges`), every process and map still known from
        the whole file: one large file read in parallel, one range per worker.

        A damaged record met while streaming ends the stream with a pyarrow error whose
        message says where (offset, record, field); a damaged header or attr raises
        :class:`PerfDataError` here.
        """
        native = self.sample_stream(
            columns,
            symbolize=symbolize,
            unwind=unwind,
            batch_size=batch_size,
            stream=stream,
            byte_range=byte_range,
            workers=workers,
        )
        # After the walk has started: its first batches are built while pyarrow loads.
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(native)

    # -- tracepoints --------------------------------------------------------------

    def tracepoint_formats(self) -> List[Dict[str, Any]]:
        """The tracepoint events of the recording that its tracing data has a format
        for: a dict each with ``event`` (``"sched:sched_switch"``), ``system``, ``name``,
        ``id``, ``callchain`` (its samples carry call chains), ``columns`` (its table's
        columns: ``name`` and Arrow ``type``) and ``fields`` (the format's fields as the
        kernel declares them: ``name``, ``decl``, ``offset``, ``size``, ``signed``,
        ``common``)."""
        return json.loads(self._native.tracepoint_formats_json())

    def tracepoints(
        self,
        event: str,
        columns: Optional[Sequence[str]] = None,
        *,
        symbolize: bool = False,
        unwind: Optional[str] = None,
        batch_size: int = 65536,
        stream: Optional[int] = None,
        byte_range: Optional[Tuple[int, int]] = None,
        workers: Optional[int] = None,
    ):
        """One tracepoint event's samples (``"sched:sched_switch"``), one row each, as a
        ``pyarrow.RecordBatchReader``: the sample's own columns (``common_time`` in
        nanoseconds, ``common_cpu``, ``common_tgid``, ``common_tid``, ``common_comm``,
        ``common_period``, and ``common_stack_id`` where the event recorded call chains),
        then every field of the event's format, typed as the format declares it
        (integers of their width and sign, pointers unsigned, ``char[]`` and
        ``__data_loc char[]`` as strings, other arrays as lists; ``common_pid`` is the
        format's own field). A field the payload is too short for is null.
        ``columns`` picks some, in the order given; :meth:`tracepoint_formats` lists
        them.

        Streamed as :meth:`samples` is (``batch_size``, ``stream``, ``byte_range``,
        ``workers``: the same batches and ids whatever their number).
        ``common_stack_id`` numbers the distinct stacks of this event's samples in the
        order met. An event the recording has no format for raises ``ValueError``
        naming the ones it has.
        """
        native = self._native.tracepoints(
            event,
            columns=None if columns is None else list(columns),
            symbolize=symbolize,
            unwind=unwind,
            batch_size=batch_size,
            stream=stream,
            byte_range=None if byte_range is None else (int(byte_range[0]), int(byte_range[1])),
            workers=workers,
        )
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(native)

    # -- records ------------------------------------------------------------------

    def records(
        self, *, limit: Optional[int] = None, salvage: bool = False, all_lines: bool = False
    ) -> Iterator[Dict[str, Any]]:
        """Every record, decoded, in file order, as ``perfdata dump --json`` prints it: a
        dict with ``offset`` (``"0x…"``), ``record`` (its type's name), ``type``, ``size``,
        ``misc``, ``event`` (SAMPLE records), and ``body`` (the fields by their spec names;
        addresses as ``"0x…"`` strings; see docs/dump-json.md).

        Decoded on a thread of its own as the iteration pulls (a few hundred records
        ahead). ``limit`` stops after that many records; ``salvage`` goes on past damaged
        records where the framing allows. ``all_lines`` yields every line of the dump
        instead (format, header, attrs, features, records, ``compressed_end`` lines, the
        summary). A damaged record raises :class:`PerfDataError`.
        """
        for line in self._native.dump_lines(limit=limit, salvage=salvage):
            v = json.loads(line)
            if all_lines or "record" in v:
                yield v

    # -- analyses -----------------------------------------------------------------

    def script(
        self,
        fields: Union[None, str, Sequence[str]] = None,
        *,
        call_graph: bool = True,
        inline: bool = True,
        ns: bool = False,
        reltime: bool = False,
        deltatime: bool = False,
        show: Sequence[str] = (),
        max_stack: int = 127,
        unwind: Optional[str] = None,
    ) -> Iterator[str]:
        """``perfdata script``: ``perf script``'s text, one line at a time (without its
        newline; the blank line after a call chain is ``""``), streamed.

        ``fields`` is ``-F`` (``"comm,tid,time,ip,sym"``, ``"+period,-cpu"``,
        ``"trace:comm,trace"``; a list applies several); ``call_graph=False`` is ``-G``;
        ``show`` names side-band records to print: ``task``, ``mmap``, ``switch``,
        ``namespace``, ``lost``, ``round``, ``bpf``, ``cgroup``, ``text_poke``. A field an
        event cannot give raises ``ValueError`` with perf's message.
        """
        if fields is None:
            fields = []
        elif isinstance(fields, str):
            fields = [fields]
        yield from self._native.script_lines(
            fields=list(fields),
            hide_call_graph=not call_graph,
            inline=inline,
            ns=ns,
            reltime=reltime,
            deltatime=deltatime,
            show=list(show),
            max_stack=max_stack,
            unwind=unwind,
        )

    def report(
        self,
        sort: Union[str, Sequence[str]] = "comm,dso,sym",
        *,
        children: bool = False,
        percent_limit: Optional[float] = None,
        unwind: Optional[str] = None,
    ):
        """``perfdata report --no-children -g none -n --sort SORT`` (with ``children``:
        ``--children``) as a ``pyarrow.Table``: one row per entry, per event, largest
        first: ``event``, one column per sort key (as perf prints it: ``[k] func``,
        ``libc.so.6``…), ``samples``, ``period``, ``percent`` (of the event's period),
        and with ``children`` ``children_period`` and ``children_percent``."""
        import pyarrow as pa

        if not isinstance(sort, str):
            sort = ",".join(sort)
        keys = [k.strip() for k in sort.split(",") if k.strip()]
        reports = json.loads(
            self._native.report_json(
                sort=sort, children=children, percent_limit=percent_limit, unwind=unwind
            )
        )
        cols: Dict[str, list] = {"event": []}
        for k in keys:
            cols[k] = []
        for name in ("samples", "period", "percent"):
            cols[name] = []
        if children:
            cols["children_period"] = []
            cols["children_percent"] = []
        for ev in reports:
            for row in ev["rows"]:
                cols["event"].append(ev["event"])
                for k, v in zip(keys, row["keys"]):
                    cols[k].append(v)
                cols["samples"].append(row["samples"])
                cols["period"].append(row["period"])
                cols["percent"].append(row["percent"])
                if children:
                    cols["children_period"].append(row.get("children_period"))
                    cols["children_percent"].append(row.get("children_percent"))
        types = {
            "samples": pa.uint64(),
            "period": pa.uint64(),
            "percent": pa.float64(),
            "children_period": pa.uint64(),
            "children_percent": pa.float64(),
        }
        return pa.table(
            {k: pa.array(v, type=types.get(k, pa.string())) for k, v in cols.items()}
        )

    def report_totals(self) -> Dict[str, Dict[str, int]]:
        """Per event: ``samples`` and ``period`` (perf report's ``# Samples`` and
        ``Event count``)."""
        reports = json.loads(self._native.report_json(sort="comm"))
        return {r["event"]: {"samples": r["samples"], "period": r["period"]} for r in reports}

    def annotate(
        self,
        symbol: Union[None, str, Sequence[str]] = None,
        *,
        event: Optional[str] = None,
        percent_type: str = "local-period",
        source: bool = True,
        prefix: Optional[str] = None,
        prefix_strip: int = 0,
        syntax: str = "att",
    ) -> Dict[str, Any]:
        """``perfdata annotate --json``: the function ``symbol`` (a name as perf gives it,
        or several; every function with samples when ``None``), disassembled, as a dict:
        ``events`` (per event ``event``, ``total_samples``, ``total_period`` and
        ``functions``, hottest first: ``symbol``, ``dso``, ``start``, ``end``,
        ``samples``, ``period``, ``instructions``, each with ``address``, ``bytes``,
        ``text``, ``samples``, ``period``, ``percent`` (of ``percent_type``), ``source``
        (``file:line``), ``function``, ``inlined`` and ``source_lines``, and ``lines``:
        per source line with instructions its ``file``, ``line``, ``text`` (``None``
        when the file is absent), ``samples``, ``period``, ``percent``, ``addresses``
        (runs of consecutive instructions: ``first``, ``last``, ``instructions``) and
        ``inlined``, inlined code counting for its innermost line) and ``skipped``
        (the functions that could not be disassembled, with the reason).
        ``source=False`` leaves the source lines out; ``prefix``/``prefix_strip`` find
        moved sources as ``--prefix``/``--prefix-strip``; ``syntax`` is ``att`` or
        ``intel``."""
        if symbol is None:
            symbols: List[str] = []
        elif isinstance(symbol, str):
            symbols = [symbol]
        else:
            symbols = list(symbol)
        return json.loads(
            self._native.annotate_json(
                symbols=symbols,
                event=event,
                percent_type=percent_type,
                source=source,
                prefix=prefix,
                prefix_strip=prefix_strip,
                syntax=syntax,
            )
        )

    def collapse(
        self,
        *,
        event: Optional[str] = None,
        include_pid: bool = False,
        include_tid: bool = False,
        inline: bool = False,
        unwind: Optional[str] = None,
    ):
        """``perfdata collapse``: the folded stacks (``comm;root;…;leaf``) of one event
        (the first sampled unless ``event`` names one) and their periods summed, as a
        ``pyarrow.Table`` (``stack`` string, ``count`` uint64) in inferno's order."""
        import pyarrow as pa

        rows = self._native.collapse(
            event=event,
            include_pid=include_pid,
            include_tid=include_tid,
            inline=inline,
            unwind=unwind,
        )
        return pa.table(
            {
                "stack": pa.array([s for s, _ in rows], type=pa.string()),
                "count": pa.array([c for _, c in rows], type=pa.uint64()),
            }
        )

    # -- conversions --------------------------------------------------------------

    def convert(
        self,
        output: PathLike,
        *,
        endian: Optional[str] = None,
        layout: Optional[str] = None,
        compress: bool = False,
        compressed_v1: bool = False,
        level: int = 3,
        decompress: bool = False,
        typed: bool = False,
        unwind: bool = False,
    ) -> "Recording":
        """``perfdata convert``: the recording rewritten at ``output`` (byte for byte with
        no option); ``endian`` ``"little"``/``"big"``, ``layout`` ``"file"``/``"pipe"``,
        ``compress`` (``level``, ``compressed_v1``), ``decompress``, ``typed`` (decode and
        encode everything), or ``unwind`` (a ``--call-graph dwarf`` recording into a
        ``-g`` one). Returns the output, opened."""
        self._native.convert(
            os.fspath(output),
            endian=endian,
            layout=layout,
            compress=compress,
            compressed_v1=compressed_v1,
            level=level,
            decompress=decompress,
            typed=typed,
            unwind=unwind,
        )
        return open(output)

    def export(
        self, output: PathLike, *, to: str = "parquet", symbolize: bool = False, recording: int = 0
    ) -> None:
        """``perfdata export --to parquet|pprof|speedscope|firefox``: Parquet tables under
        the directory ``output`` (as partition ``recording=N``), or a profile viewer's
        file."""
        self._native.export(os.fspath(output), to=to, symbolize=symbolize, recording=recording)
