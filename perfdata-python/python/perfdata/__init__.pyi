# Type stubs of the `perfdata` package (python/perfdata/__init__.py; the Rust half is
# `perfdata._native`, _native.pyi).
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow

from ._native import PerfDataError as PerfDataError
from ._native import SampleStream

PathLike = Union[str, os.PathLike[str]]

SAMPLE_COLUMNS: Tuple[str, ...]
NAME_COLUMNS: Tuple[str, ...]

def open(
    path: PathLike,
    *,
    kallsyms: Optional[PathLike] = ...,
    vmlinux: Optional[PathLike] = ...,
    symfs: Optional[PathLike] = ...,
    symbols_from: Sequence[PathLike] = ...,
    debug_file_dirs: Sequence[PathLike] = ...,
    jitdumps: Sequence[PathLike] = ...,
    no_symbols: bool = ...,
) -> Recording: ...

class Recording:
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> Dict[str, Any]: ...
    @property
    def header(self) -> Optional[Dict[str, Any]]: ...
    @property
    def attrs(self) -> List[Dict[str, Any]]: ...
    @property
    def features(self) -> Dict[str, Any]: ...
    @property
    def damaged_features(self) -> List[Dict[str, Any]]: ...
    @property
    def events(self) -> List[str]: ...
    @property
    def streams(self) -> int: ...
    def byte_ranges(self, split_bytes: int) -> List[Tuple[int, int]]: ...
    def info(self, top: int = ...) -> Dict[str, Any]: ...
    def sample_stream(
        self,
        columns: Optional[Sequence[str]] = ...,
        *,
        symbolize: bool = ...,
        unwind: Optional[str] = ...,
        batch_size: int = ...,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
        workers: Optional[int] = ...,
    ) -> SampleStream: ...
    def samples(
        self,
        columns: Optional[Sequence[str]] = ...,
        *,
        symbolize: bool = ...,
        unwind: Optional[str] = ...,
        batch_size: int = ...,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
        workers: Optional[int] = ...,
    ) -> pyarrow.RecordBatchReader: ...
    def tracepoint_formats(self) -> List[Dict[str, Any]]: ...
    def tracepoints(
        self,
        event: str,
        columns: Optional[Sequence[str]] = ...,
        *,
        symbolize: bool = ...,
        unwind: Optional[str] = ...,
        batch_size: int = ...,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
        workers: Optional[int] = ...,
    ) -> pyarrow.RecordBatchReader: ...
    def records(
        self, *, limit: Optional[int] = ..., salvage: bool = ..., all_lines: bool = ...
    ) -> Iterator[Dict[str, Any]]: ...
    def report(
        self,
        sort: Union[str, Sequence[str]] = ...,
        *,
        children: bool = ...,
        percent_limit: Optional[float] = ...,
        unwind: Optional[str] = ...,
    ) -> pyarrow.Table: ...
    def report_totals(self) -> Dict[str, Dict[str, int]]: ...
    def script(
        self,
        fields: Union[None, str, Sequence[str]] = ...,
        *,
        call_graph: bool = ...,
        inline: bool = ...,
        ns: bool = ...,
        reltime: bool = ...,
        deltatime: bool = ...,
        show: Sequence[str] = ...,
        max_stack: int = ...,
        unwind: Optional[str] = ...,
    ) -> Iterator[str]: ...
    def annotate(
        self,
        symbol: Union[None, str, Sequence[str]] = ...,
        *,
        event: Optional[str] = ...,
        percent_type: str = ...,
        source: bool = ...,
        prefix: Optional[str] = ...,
        prefix_strip: int = ...,
        syntax: str = ...,
    ) -> Dict[str, Any]: ...
    def collapse(
        self,
        *,
        event: Optional[str] = ...,
        include_pid: bool = ...,
        include_tid: bool = ...,
        inline: bool = ...,
        unwind: Optional[str] = ...,
    ) -> pyarrow.Table: ...
    def convert(
        self,
        output: PathLike,
        *,
        endian: Optional[str] = ...,
        layout: Optional[str] = ...,
        compress: bool = ...,
        compressed_v1: bool = ...,
        level: int = ...,
        decompress: bool = ...,
        typed: bool = ...,
        unwind: bool = ...,
    ) -> Recording: ...
    def export(
        self, output: PathLike, *, to: str = ..., symbolize: bool = ..., recording: int = ...
    ) -> None: ...
