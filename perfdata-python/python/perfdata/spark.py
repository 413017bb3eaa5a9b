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

``event`` (``"sched:sched_switch"``) reads that tracepoint event's table instead of the
samples (:meth:`perfdata.Recording.tracepoints`: the sample's ``common_*`` columns, then
the event's fields), and ``path``; its schema comes from the first recording's format of
the event (every recording must have the event). Its types as Spark reads the Parquet
export's: uint8 ``smallint``, uint16 ``int``, uint32 ``bigint``, uint64
``decimal(20,0)``; signed integers as they are; arrays ``array<…>``; ``symbolize``
defaults to false there.

The JVM data source answers to the same name with the same options, schema and rows,
and reads only the columns a query uses: start the session with
``.config("spark.jars", perfdata.spark.jar())`` (:func:`jar` builds the jar with javac
once); :func:`register` then leaves it in place. It plans byte ranges only when the
recordings are fewer than the cluster's task slots, unless ``splitBytes`` is given
(a byte range still walks its whole file). ``python``: the interpreter with perfdata
that its tasks run (default ``PYSPARK_PYTHON``, else ``python3``).
"""

from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from ._spark_jvm import jar
from ._spark_plan import SPARK_SCHEMA, expand, plan, tracepoint_schema

__all__ = ["PerfDataSource", "register", "jar", "expand", "SPARK_SCHEMA", "tracepoint_schema"]


def register(spark) -> None:
    """Registers the ``perfdata`` format with a Spark session: the Python data source,
    unless the session's JVM has the JVM one (:func:`jar` in ``spark.jars``), which
    answers to the same name."""
    if _jvm_source_loaded(spark):
        return
    spark.dataSource.register(PerfDataSource)


def _jvm_source_loaded(spark) -> bool:
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:  # Spark Connect: no JVM at hand, the Python data source
        return False
    try:
        return bool(jvm.org.apache.spark.util.Utils.classIsLoadable("perfdata.spark.PerfDataSource"))
    except Exception:  # noqa: BLE001 - a JVM that cannot say has no jar of ours
        return False


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
        event = self.options.get("event")
        if event is None:
            return SPARK_SCHEMA
        spec = self.options.get("paths") or self.options.get("path")
        if not spec:
            raise ValueError('perfdata: load("recordings/*.data") or option("paths", …)')
        return tracepoint_schema(expand(spec)[0], event)

    def reader(self, schema: StructType) -> "PerfDataReader":
        return PerfDataReader(self.options, schema)


class PerfDataReader(DataSourceReader):
    def __init__(self, options, schema: StructType) -> None:
        spec = options.get("paths") or options.get("path")
        if not spec:
            raise ValueError('perfdata: load("recordings/*.data") or option("paths", …)')
        self.paths = expand(spec)
        self.unwind = options.get("unwind")
        self.batch_size = int(options.get("batchSize", 65536))
        self.split_bytes = int(options.get("splitBytes", 256 << 20))
        self.event = options.get("event")
        default = "false" if self.event else "true"
        self.symbolize = str(options.get("symbolize", default)).lower() in ("true", "1", "yes")
        self.schema = schema

    def partitions(self) -> List[RecordingPartition]:
        return [RecordingPartition(p, s, r) for p, s, r in plan(self.paths, self.split_bytes)]

    def read(self, partition: RecordingPartition) -> Iterator["pyarrow.RecordBatch"]:  # noqa: F821
        # Imported on the executor.
        import perfdata

        rec = perfdata.open(partition.path)
        wanted = [f.name for f in self.schema.fields]
        native = [c for c in wanted if c != "path"]
        arrow_schema = _arrow_schema(self.schema)
        # Spark runs a task per core already: a second walk thread would replay the
        # recording again for little.
        common = dict(
            symbolize=self.symbolize,
            unwind=self.unwind,
            batch_size=self.batch_size,
            stream=partition.stream,
            byte_range=partition.byte_range,
            workers=1,
        )
        if self.event:
            reader = rec.tracepoints(self.event, columns=native, **common)
        else:
            reader = rec.samples(columns=native, **common)
        widen = _Widening(arrow_schema, os.fspath(partition.path))
        for batch in reader:
            yield widen(batch)


class _Widening:
    """A batch of the native stream as Spark expects it (`arrow_schema`): unsigned columns
    widened, and the constant ``path`` column. Done in Arrow buffers, not per value in
    Python: the ``path`` column is a slice of one array of the path repeated, reused by
    every batch; a uint64 column becomes ``decimal(20,0)`` by laying each value in the
    low half of a 128-bit integer (numpy), ten times faster than Arrow's cast; all-null
    columns (the sample fields the recording lacks) are slices of one null array."""

    def __init__(self, arrow_schema, path: str) -> None:
        import pyarrow as pa

        self.schema = arrow_schema
        self.path = path
        self.dec = pa.decimal128(20, 0)
        # (type -> array) of the longest batch met so far, sliced for every batch.
        self._const: dict = {}
        try:
            import numpy

            self.np = numpy
        except ImportError:  # pyarrow does not need numpy: the cast is the way then
            self.np = None

    def __call__(self, batch):
        import pyarrow as pa

        n = batch.num_rows
        cols = []
        for field in self.schema:
            if field.name == "path":
                cols.append(self._repeated(self.path, field.type, n))
                continue
            col = batch.column(field.name)
            if col.type == field.type:
                cols.append(col)
            elif col.null_count == n:
                cols.append(self._repeated(None, field.type, n))
            elif field.type == self.dec and col.type == pa.uint64():
                cols.append(self._u64_decimal(col))
            else:
                cols.append(col.cast(field.type))
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def _repeated(self, value, type_, n: int):
        """`n` copies of `value` (None: nulls), a slice of one array kept for them."""
        import pyarrow as pa

        key = (value, type_)
        have = self._const.get(key)
        if have is None or len(have) < n:
            have = pa.nulls(n, type_) if value is None else pa.repeat(pa.scalar(value, type_), n)
            self._const[key] = have
        return have.slice(0, n)

    def _u64_decimal(self, col):
        """A uint64 array as decimal(20,0): the same values (a u64 always fits)."""
        import pyarrow as pa

        np = self.np
        if np is None or col.offset != 0:
            return col.cast(self.dec)
        n = len(col)
        validity, data = col.buffers()
        # decimal128: 16-byte little-endian two's complement; a u64's high half is 0.
        wide = np.zeros((n, 2), dtype=np.uint64)
        wide[:, 0] = np.frombuffer(data, dtype=np.uint64, count=n)
        if np.little_endian:
            return pa.Array.from_buffers(self.dec, n, [validity, pa.py_buffer(wide)], col.null_count)
        return col.cast(self.dec)


def _arrow_schema(schema: StructType):
    """The Arrow types Spark expects for `schema` (unsigned columns widened)."""
    import pyarrow as pa
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        ByteType,
        DecimalType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
    )

    def arrow(t):
        if isinstance(t, DecimalType):
            return pa.decimal128(t.precision, t.scale)
        if isinstance(t, LongType):
            return pa.int64()
        if isinstance(t, IntegerType):
            return pa.int32()
        if isinstance(t, ShortType):
            return pa.int16()
        if isinstance(t, ByteType):
            return pa.int8()
        if isinstance(t, BinaryType):
            return pa.binary()
        if isinstance(t, StringType):
            return pa.string()
        if isinstance(t, ArrayType):
            return pa.list_(arrow(t.elementType))
        raise TypeError(f"perfdata: no Arrow type for {t}")

    return pa.schema([pa.field(f.name, arrow(f.dataType), f.nullable) for f in schema.fields])
