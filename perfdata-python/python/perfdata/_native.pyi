# Type stubs of the extension module (perfdata-python/src/lib.rs).
from typing import Any, Dict, Iterator, List, Optional, Tuple

class PerfDataError(Exception):
    """A recording could not be read (or written); the attributes say where."""

    offset: Optional[int]
    record: Optional[int]
    record_type: Optional[str]
    field: Optional[str]
    feature: Optional[str]
    file: Optional[str]

class SampleStream:
    def __arrow_c_stream__(self, requested_schema: Optional[Any] = ...) -> Any: ...
    def write_spark_ipc(self, fd: int) -> int: ...

class DumpLines:
    def __iter__(self) -> Iterator[str]: ...
    def __next__(self) -> str: ...

class NativeRecording:
    def __init__(
        self,
        path: str,
        *,
        kallsyms: Optional[str] = ...,
        vmlinux: Optional[str] = ...,
        symfs: Optional[str] = ...,
        symbols_from: List[str] = ...,
        debug_file_dirs: List[str] = ...,
        jitdumps: List[str] = ...,
        no_symbols: bool = ...,
    ) -> None: ...
    @property
    def path(self) -> str: ...
    def info_json(self, top: int = ...) -> str: ...
    def header_json(self) -> List[str]: ...
    def events(self) -> List[str]: ...
    def streams(self) -> int: ...
    def byte_ranges(self, split_bytes: int) -> List[Tuple[int, int]]: ...
    def dump_lines(self, limit: Optional[int] = ..., salvage: bool = ...) -> DumpLines: ...
    def script_lines(
        self,
        fields: List[str] = ...,
        hide_call_graph: bool = ...,
        inline: bool = ...,
        ns: bool = ...,
        reltime: bool = ...,
        deltatime: bool = ...,
        show: List[str] = ...,
        max_stack: int = ...,
        unwind: Optional[str] = ...,
    ) -> DumpLines: ...
    def samples(
        self,
        columns: Optional[List[str]] = ...,
        symbolize: bool = ...,
        unwind: Optional[str] = ...,
        batch_size: int = ...,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
        workers: Optional[int] = ...,
    ) -> SampleStream: ...
    def tracepoints(
        self,
        event: str,
        columns: Optional[List[str]] = ...,
        symbolize: bool = ...,
        unwind: Optional[str] = ...,
        batch_size: int = ...,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
        workers: Optional[int] = ...,
    ) -> SampleStream: ...
    def tracepoint_formats_json(self) -> str: ...
    def report_json(
        self,
        sort: str = ...,
        children: bool = ...,
        percent_limit: Optional[float] = ...,
        unwind: Optional[str] = ...,
    ) -> str: ...
    def annotate_json(
        self,
        symbols: List[str] = ...,
        event: Optional[str] = ...,
        percent_type: str = ...,
        source: bool = ...,
        prefix: Optional[str] = ...,
        prefix_strip: int = ...,
        syntax: str = ...,
    ) -> str: ...
    def collapse(
        self,
        event: Optional[str] = ...,
        include_pid: bool = ...,
        include_tid: bool = ...,
        inline: bool = ...,
        unwind: Optional[str] = ...,
    ) -> List[Tuple[str, int]]: ...
    def convert(
        self,
        output: str,
        endian: Optional[str] = ...,
        layout: Optional[str] = ...,
        compress: bool = ...,
        compressed_v1: bool = ...,
        level: int = ...,
        decompress: bool = ...,
        typed: bool = ...,
        unwind: bool = ...,
    ) -> None: ...
    def export(
        self, output: str, to: str = ..., symbolize: bool = ..., recording: int = ...
    ) -> None: ...

def schema_versions() -> Tuple[int, int]: ...

# perf's Python scripting API (perfdata.perf_script).
class ScriptContext:
    """perf's `scripting_context`: what a handler gets as `context`."""

    def __init__(self) -> None: ...

def run_perf_script(
    recording: NativeRecording,
    main: Dict[str, Any],
    module: Any,
    context: ScriptContext,
    unwind: Optional[str] = ...,
) -> None: ...
def common_pc(context: ScriptContext) -> int: ...
def common_flags(context: ScriptContext) -> int: ...
def common_lock_depth(context: ScriptContext) -> int: ...
def perf_sample_insn(context: ScriptContext) -> Optional[bytes]: ...
def perf_sample_srcline(context: ScriptContext) -> Tuple[Optional[str], int]: ...
def perf_sample_srccode(context: ScriptContext) -> Tuple[Optional[str], int, Optional[str]]: ...
def perf_set_itrace_options(context: ScriptContext, options: str) -> int: ...
