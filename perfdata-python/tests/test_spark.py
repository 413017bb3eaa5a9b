"""The Spark data source (`local[2]`) on the committed recordings: per recording, event and
function, the samples and periods Spark sums equal `perfdata report --sort dso,sym`.

Skipped, with the reason printed, when Java or PySpark 4 is missing."""

import collections
import os
import shutil
import sys
from decimal import Decimal

import pytest

from conftest import FIXTURES, ROOT, WORDFREQ, report_rows

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    print("SKIP Spark data source tests: no Java runtime (java not on PATH, no JAVA_HOME)", file=sys.stderr)
    pytest.skip("no Java runtime: the Spark data source test needs one", allow_module_level=True)
pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed")
if int(pyspark.__version__.split(".")[0]) < 4:
    pytest.skip(f"PySpark {pyspark.__version__}: the Python Data Source API needs 4", allow_module_level=True)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import perfdata.spark  # noqa: E402

# The file recordings (a --threads directory is one too, but a glob of *.data files is
# what the example loads) plus the README's sample.
FILES = [p for p in FIXTURES if p.is_file()] + [WORDFREQ]


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    s = (
        SparkSession.builder.master("local[2]")
        .appName("perfdata-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    perfdata.spark.register(s)
    yield s
    s.stop()


def test_spark_reads_the_fixtures_one_partition_per_file_or_stream(spark):
    glob = str(ROOT / "conformance" / "fixtures" / "*.data")
    df = spark.read.format("perfdata").load(glob + "," + str(WORDFREQ))
    expanded = perfdata.spark.expand(glob + "," + str(WORDFREQ))
    # the glob matches the --threads directory too: one partition per file recording, and
    # one per stream of records of the directory (its main file's and each data.N's)
    streams = [perfdata.open(p).streams if os.path.isdir(p) else 1 for p in expanded]
    assert any(n > 1 for n in streams), "the --threads fixture has streams"
    assert df.rdd.getNumPartitions() == sum(streams)
    rows = (
        df.groupBy("path", "event", "dso_name", "symbol")
        .agg(F.count("*").alias("samples"), F.sum("period").alias("period"))
        .collect()
    )
    ours = collections.defaultdict(dict)
    for r in rows:
        assert isinstance(r["period"], Decimal)
        ours[r["path"]][(r["event"], r["dso_name"], r["symbol"])] = (r["samples"], int(r["period"]))
    for path in expanded:
        theirs = report_rows(path, "dso,sym")
        assert ours.get(path, {}) == theirs, path


def test_spark_reads_a_large_file_in_byte_ranges(spark):
    # splitBytes below the file's size: one partition per range (cut after each round),
    # and the same totals as one partition.
    path = ROOT / "conformance" / "fixtures" / "tracepoint.data"
    ranges = perfdata.open(path).byte_ranges(1)
    assert len(ranges) > 1
    df = spark.read.format("perfdata").option("splitBytes", "1").load(str(path))
    assert df.rdd.getNumPartitions() == len(ranges)
    rows = (
        df.groupBy("event", "dso_name", "symbol")
        .agg(F.count("*").alias("samples"), F.sum("period").alias("period"))
        .collect()
    )
    ours = {(r["event"], r["dso_name"], r["symbol"]): (r["samples"], int(r["period"])) for r in rows}
    assert ours == report_rows(str(path), "dso,sym")
    whole = spark.read.format("perfdata").option("splitBytes", "0").load(str(path))
    assert whole.rdd.getNumPartitions() == 1


def test_spark_schema_and_columns(spark):
    df = spark.read.format("perfdata").load(str(WORDFREQ))
    assert df.columns[:3] == ["event", "time", "pid"]
    assert dict(df.dtypes)["ip"] == "decimal(20,0)"
    assert dict(df.dtypes)["stack"] == "array<string>"
    # kernel-sized addresses survive (no bigint overflow): the maximum ip as text
    top = df.select(F.max("ip").cast("string")).first()[0]
    import perfdata as pd

    t = pd.open(WORDFREQ).samples(columns=["ip"]).read_all()
    assert int(top) == max(t["ip"].to_pylist())
    # a projection reads only what it needs and still sums the same
    total = df.select(F.sum("period")).first()[0]
    assert int(total) == pd.open(WORDFREQ).info()["events"][0]["period"]


def test_on_a_cluster_snippet_runs(spark, monkeypatch, capsys):
    from test_readme import readme_block

    monkeypatch.chdir(ROOT)
    exec(compile(readme_block("On a cluster"), "README.md (On a cluster)", "exec"), {})
    # the table show() prints: its header, and a function of the fixtures
    out = capsys.readouterr().out
    assert "|path" in out and "period" in out, out


def _widened_by_cast(batch, arrow_schema, path):
    """The reference: every column cast by Arrow, the path a list of the batch's length."""
    import pyarrow as pa

    cols = []
    for field in arrow_schema:
        if field.name == "path":
            cols.append(pa.array([path] * batch.num_rows, type=pa.string()))
        else:
            cols.append(batch.column(field.name).cast(field.type))
    return pa.RecordBatch.from_arrays(cols, schema=arrow_schema)


def test_batches_are_widened_as_arrow_casts_them(spark):
    # The fast widening (buffers laid out in numpy, constant columns sliced) gives what
    # Arrow's casts give: on every batch of a recording, and on values past 2**63, nulls
    # and batches of different lengths.
    import pyarrow as pa

    from perfdata.spark import _arrow_schema, _Widening

    schema = spark.read.format("perfdata").load(str(WORDFREQ)).schema
    arrow_schema = _arrow_schema(schema)
    native = [f.name for f in schema.fields if f.name != "path"]
    widen = _Widening(arrow_schema, str(WORDFREQ))
    n = 0
    for batch in perfdata.open(WORDFREQ).samples(columns=native, batch_size=1000):
        got = widen(batch)
        assert got.equals(_widened_by_cast(batch, arrow_schema, str(WORDFREQ)))
        n += batch.num_rows
    assert n > 1000, "several batches"

    big = [0, 1, 2**63 - 1, 2**63, 2**64 - 1, None]
    dec = pa.decimal128(20, 0)
    small = pa.schema(
        [
            pa.field("ip", dec),
            pa.field("cpu", pa.int64()),
            pa.field("addr", dec),
            pa.field("path", pa.string()),
        ]
    )
    widen = _Widening(small, "/x")
    for rows in (len(big), 3, len(big)):
        batch = pa.RecordBatch.from_arrays(
            [
                pa.array(big[:rows], pa.uint64()),
                pa.array(range(rows), pa.uint32()),
                pa.nulls(rows, pa.uint64()),
            ],
            names=["ip", "cpu", "addr"],
        )
        got = widen(batch)
        assert got.equals(_widened_by_cast(batch, small, "/x"))
        assert [int(v) if v is not None else None for v in got.column("ip").to_pylist()] == big[:rows]
