"""A Spark data source of perf.data recordings (PySpark 4's Python Data Source API).

>>> from perfdata.spark import register
>>> register(spark)                       # once per session
>>> df = spark.read.format("perfdata").load("recordings/*.data")
>>> df.groupBy("event", "dso_name", "symbol").agg(F.count("*"), F.sum("period"))

``load`` takes a path, a glob or a comma-separated list of them (``paths`` option: the
same). The driver expands them and plans one partition per recording (a
``perf record --threads`` directory: one per stream of records, its main file's and each
``data.N`` file's; a file larger than ``splitBytes``: one per byte range of about that
size, cut after ``FINISHED_ROUND`` records, each executor replaying the whole file's
processes and maps and yielding its range's samples); each executor's
Python worker opens its recording with ``perfdata`` (this package must be installed
there, and the files readable at the same path: a shared file system) and yields the
samples as Arrow batches: the Parquet export's ``samples`` columns, the ``dso_name``,
``symbol`` and ``stack`` columns of :meth:`perfdata.Recording.samples`, and ``path``
(the recording's). Spark has no unsigned types: uint64 columns are ``decimal(20,0)`` and
uint32 ones ``bigint``, as Spark reads them from the Parquet export.

Options: ``symbolize`` (``true``/``false``, default true), ``unwind``
(``fp``/``dwarf``/``auto``), ``batchSize`` (rows per Arrow batch, default 65536),
``splitBytes`` (a file larger than this is read in several partitions, default
268435456, 256 MiB; ``0``: never split).
"""

from __future__ import annotations

import glob
import os
from typing import Iterator, List, Optional, Tuple

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

__all__ = ["PerfDataSource", "register", "SPARK_SCHEMA"]

#: The samples as Spark sees them (see the module's doc).
SPARK_SCHEMA = (
    "event string, time decimal(20,0), pid int, tid int, comm string, cpu bigint, "
    "period decimal(20,0), ip decimal(20,0), stack_id decimal(20,0), "
    "leaf_frame decimal(20,0), addr decimal(20,0), id decimal(20,0), "
    "stream_id decimal(20,0), weight decimal(20,0), data_src decimal(20,0), "
    "`transaction` decimal(20,0), phys_addr decimal(20,0), cgroup decimal(20,0), "
    "dso_name string, symbol string, stack array<string>, path string"
)


def register(spark) -> None:
    """Registers the ``perfdata`` format with a Spark session."""
    spark.dataSource.register(PerfDataSource)


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


class RecordingPartition(InputPartition):
    """One Spark partition: a recording, one stream of records of a
    ``perf record --threads`` directory (``stream``), or one byte range of a large file
    (``byte_range``); ``None`` for both: the whole recording."""

    def __init__(
        self,
        path: str,
        stream: Optional[int] = None,
        byte_range: Optional[Tuple[int, int]] = None,
    ) -> None:
        super().__init__((path, stream, byte_range))
        self.path = path
        self.stream = stream
        self.byte_range = byte_range


class PerfDataSource(DataSource):
    """``spark.read.format("perfdata")``: the samples of perf.data recordings."""

    @classmethod
    def name(cls) -> str:
        return "perfdata"

    def schema(self) -> str:
        return SPARK_SCHEMA

    def reader(self, schema: StructType) -> "PerfDataReader":
        return PerfDataReader(self.options, schema)


class PerfDataReader(DataSourceReader):
    def __init__(self, options, schema: StructType) -> None:
        spec = options.get("paths") or options.get("path")
        if not spec:
            raise ValueError('perfdata: load("recordings/*.data") or option("paths", …)')
        self.paths = expand(spec)
        self.symbolize = str(options.get("symbolize", "true")).lower() in ("true", "1", "yes")
        self.unwind = options.get("unwind")
        self.batch_size = int(options.get("batchSize", 65536))
        self.split_bytes = int(options.get("splitBytes", 256 << 20))
        self.schema = schema

    def partitions(self) -> List[RecordingPartition]:
        # A --threads directory: one partition per stream (its main file's and each
        # data.N file's), read in parallel; each executor still reads every stream's
        # side band (processes and maps), a small part of a recording.
        import perfdata

        out: List[RecordingPartition] = []
        for p in self.paths:
            if os.path.isdir(p):
                streams = perfdata.open(p).streams
                out.extend(RecordingPartition(p, s) for s in range(streams))
            elif 0 < self.split_bytes < os.path.getsize(p):
                # A large file: byte ranges cut after FINISHED_ROUND records (a framing
                # walk on the driver, no decoding).
                ranges = perfdata.open(p).byte_ranges(self.split_bytes)
                out.extend(RecordingPartition(p, byte_range=r) for r in ranges)
            else:
                out.append(RecordingPartition(p))
        return out

    def read(self, partition: RecordingPartition) -> Iterator["pyarrow.RecordBatch"]:  # noqa: F821
        # Imported on the executor.
        import pyarrow as pa

        import perfdata

        rec = perfdata.open(partition.path)
        wanted = [f.name for f in self.schema.fields]
        native = [c for c in wanted if c != "path"]
        arrow_schema = _arrow_schema(self.schema)
        reader = rec.samples(
            columns=native,
            symbolize=self.symbolize,
            unwind=self.unwind,
            batch_size=self.batch_size,
            stream=partition.stream,
            byte_range=partition.byte_range,
            # Spark runs a task per core already: a second walk thread would replay the
            # recording again for little.
            workers=1,
        )
        path = os.fspath(partition.path)
        for batch in reader:
            cols = []
            for field in arrow_schema:
                if field.name == "path":
                    cols.append(pa.array([path] * batch.num_rows, type=pa.string()))
                else:
                    cols.append(batch.column(field.name).cast(field.type))
            yield pa.RecordBatch.from_arrays(cols, schema=arrow_schema)


def _arrow_schema(schema: StructType):
    """The Arrow types Spark expects for `schema` (unsigned columns widened)."""
    import pyarrow as pa
    from pyspark.sql.types import (
        ArrayType,
        DecimalType,
        IntegerType,
        LongType,
        StringType,
    )

    def arrow(t):
        if isinstance(t, DecimalType):
            return pa.decimal128(t.precision, t.scale)
        if isinstance(t, LongType):
            return pa.int64()
        if isinstance(t, IntegerType):
            return pa.int32()
        if isinstance(t, StringType):
            return pa.string()
        if isinstance(t, ArrayType):
            return pa.list_(arrow(t.elementType))
        raise TypeError(f"perfdata: no Arrow type for {t}")

    return pa.schema([pa.field(f.name, arrow(f.dataType), f.nullable) for f in schema.fields])
