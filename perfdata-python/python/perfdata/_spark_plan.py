"""What the Spark data sources of perfdata share, without PySpark: the samples' Spark
schema, the expansion of ``load``'s paths, the partition plan, and a tracepoint table's
schema. The Python data source (:mod:`perfdata.spark`) and the JVM one's feeder
(:mod:`perfdata._spark_feed`, which runs where PySpark need not be importable) both use
it."""

from __future__ import annotations

import glob
import os
from typing import List, Optional, Tuple

#: The samples as Spark sees them (see the module's doc).
SPARK_SCHEMA = (
    "event string, time decimal(20,0), pid int, tid int, comm string, cpu bigint, "
    "period decimal(20,0), ip decimal(20,0), stack_id decimal(20,0), "
    "leaf_frame decimal(20,0), addr decimal(20,0), id decimal(20,0), "
    "stream_id decimal(20,0), weight decimal(20,0), data_src decimal(20,0), "
    "`transaction` decimal(20,0), phys_addr decimal(20,0), cgroup decimal(20,0), "
    "dso_name string, symbol string, stack array<string>, path string"
)


def expand(spec: str) -> List[str]:
    """A path, glob, or comma-separated list of them: the recordings, sorted. A
    ``perf record --threads`` directory is one recording."""
    out: List[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        matches = sorted(glob.glob(part)) if glob.has_magic(part) else [part]
        if not matches:
            raise FileNotFoundError(f"perfdata: no recording matches {part!r}")
        out.extend(matches)
    return out


#: One partition: the recording, its stream (a ``perf record --threads`` directory's) and
#: its byte range (a large file's); ``None`` for both: the whole recording.
Partition = Tuple[str, Optional[int], Optional[Tuple[int, int]]]


def plan(paths: List[str], split_bytes: int, min_partitions: Optional[int] = None) -> List[Partition]:
    """The partitions of `paths`: one per recording, one per stream of records of a
    ``perf record --threads`` directory (its main file's and each ``data.N`` file's), and
    one per byte range of about `split_bytes` of a larger file (cut after
    ``FINISHED_ROUND`` records: a framing walk, no decoding). Each executor still reads
    every stream's side band (processes and maps), a small part of a recording.

    A byte range still walks its whole file in time order (only its samples are
    delivered), so a split adds work; with `min_partitions` (the cluster's task slots),
    files are split only when the recordings and streams alone are fewer."""
    import perfdata

    # A directory's streams (opened once), a file's None.
    streams = [perfdata.open(p).streams if os.path.isdir(p) else None for p in paths]
    whole = sum(n or 1 for n in streams)
    if min_partitions is not None and whole >= min_partitions:
        split_bytes = 0
    out: List[Partition] = []
    for p, n in zip(paths, streams):
        if n is not None:
            out.extend((p, s, None) for s in range(n))
        elif 0 < split_bytes < os.path.getsize(p):
            ranges = perfdata.open(p).byte_ranges(split_bytes)
            out.extend((p, None, (int(a), int(b))) for a, b in ranges)
        else:
            out.append((p, None, None))
    return out


#: Spark's type of each Arrow type of a tracepoint table (as Spark reads Parquet's).
_SPARK_TYPES = {
    "Int8": "tinyint",
    "Int16": "smallint",
    "Int32": "int",
    "Int64": "bigint",
    "UInt8": "smallint",
    "UInt16": "int",
    "UInt32": "bigint",
    "UInt64": "decimal(20,0)",
    "Utf8": "string",
    "Binary": "binary",
}


def tracepoint_schema(path: str, event: str) -> str:
    """The Spark schema (DDL) of tracepoint `event`'s table in the recording at `path`,
    and ``path``."""
    import perfdata

    formats = perfdata.open(path).tracepoint_formats()
    found = [f for f in formats if f["event"] == event]
    if not found:
        known = ", ".join(f["event"] for f in formats) or "none"
        raise ValueError(f"perfdata: no tracepoint event {event!r} in {path} (tracepoint events: {known})")

    def spark(t: str) -> str:
        if t.startswith("List("):
            inner = t[len("List(") : -1].split(",")[0].strip()
            return f"array<{spark(inner)}>"
        return _SPARK_TYPES[t]

    cols = [f"`{c['name']}` {spark(c['type'])}" for c in found[0]["columns"]]
    return ", ".join(cols + ["path string"])
