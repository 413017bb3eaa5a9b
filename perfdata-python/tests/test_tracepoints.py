"""Tracepoint tables: `Recording.tracepoints()` and `tracepoint_formats()` on the
committed tracepoint recordings (a file and a pipe), checked against the `perf script
-F pid,tid,cpu,time,event,trace --ns` text stored beside them, and the Spark source's
`event` option against the same rows."""

import os
import shutil
import sys

import pytest

import perfdata
from conformance_paths import FIXTURES_DIR, ORACLE_DIR

CASES = ["tracepoint.data", "pipe-tracepoint.pipe.data"]


def perf_rows(stem):
    """(tid, cpu, time_ns, {field: text}) of each line of the stored perf text."""
    rows = []
    with open(ORACLE_DIR / f"{stem}.trace.txt") as f:
        next(f)  # the arguments line
        for line in f:
            head, rest = line.split("]", 1)
            pid_tid, cpu = head.strip().split("[")
            tid = int(pid_tid.strip().split("/")[1])
            time, rest = rest.strip().split(": ", 1)
            secs, ns = time.split(".")
            _, trace = rest.split(": ", 1)
            fields = {}
            for part in trace.replace(" ==> ", " ").split(" "):
                if "=" in part:
                    k, v = part.split("=", 1)
                    fields[k] = v
            rows.append((tid, int(cpu), int(secs) * 10**9 + int(ns), fields))
    return rows


@pytest.mark.parametrize("name", CASES)
def test_sched_switch_rows_equal_perf_script_fields(name):
    rec = perfdata.open(FIXTURES_DIR / name)
    t = rec.tracepoints("sched:sched_switch").read_all().to_pylist()
    theirs = perf_rows(name[: -len(".data")])
    assert len(t) == len(theirs) > 0
    for ours, (tid, cpu, time, fields) in zip(t, theirs):
        assert (ours["common_tid"], ours["common_cpu"], ours["common_time"]) == (tid, cpu, time)
        for k in ("prev_comm", "next_comm"):
            assert ours[k] == fields[k]
        for k in ("prev_pid", "prev_prio", "next_pid", "next_prio"):
            assert ours[k] == int(fields[k]), k


def test_formats_list_the_events_and_their_typed_columns():
    fm = perfdata.open(FIXTURES_DIR / "tracepoint.data").tracepoint_formats()
    assert [f["event"] for f in fm] == ["sched:sched_switch"]
    cols = {c["name"]: c["type"] for c in fm[0]["columns"]}
    assert cols["prev_comm"] == "Utf8"
    assert cols["prev_pid"] == "Int32"
    assert cols["prev_state"] == "Int64"
    assert cols["common_time"] == "UInt64"
    assert [f["name"] for f in fm[0]["fields"]][:4] == [
        "common_type",
        "common_flags",
        "common_preempt_count",
        "common_pid",
    ]


def test_columns_workers_and_errors():
    rec = perfdata.open(FIXTURES_DIR / "tracepoint.data")
    one = rec.tracepoints("sched:sched_switch", ["next_pid", "common_comm"], workers=1, batch_size=3).read_all()
    two = rec.tracepoints("sched:sched_switch", ["next_pid", "common_comm"], workers=2, batch_size=3).read_all()
    assert one.column_names == ["next_pid", "common_comm"]
    assert one.equals(two)
    with pytest.raises(ValueError, match="sched:sched_switch"):
        rec.tracepoints("sched:nope")
    with pytest.raises(ValueError, match="no column `nope`"):
        rec.tracepoints("sched:sched_switch", ["nope"])


def test_pandas_reads_the_typed_columns():
    df = perfdata.open(FIXTURES_DIR / "tracepoint.data").tracepoints("sched:sched_switch").read_pandas()
    assert str(df["prev_pid"].dtype) == "int32"
    assert str(df["common_time"].dtype) == "uint64"
    assert df["prev_comm"].map(type).eq(str).all()


@pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="no Java runtime")
def test_spark_reads_a_tracepoint_table():
    pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed")
    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip(f"PySpark {pyspark.__version__}: the Python Data Source API needs 4")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import perfdata.spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        perfdata.spark.register(spark)
        paths = ",".join(str(FIXTURES_DIR / n) for n in CASES)
        df = spark.read.format("perfdata").option("event", "sched:sched_switch").load(paths)
        types = dict(df.dtypes)
        assert types["prev_pid"] == "int"
        assert types["common_time"] == "decimal(20,0)"
        assert types["common_cpu"] == "bigint"
        got = {r["path"]: (r["n"], r["pids"]) for r in df.groupBy("path").agg(F.count("*").alias("n"), F.sum("next_pid").alias("pids")).collect()}
        for n in CASES:
            t = perfdata.open(FIXTURES_DIR / n).tracepoints("sched:sched_switch", ["next_pid"]).read_all()
            assert got[str(FIXTURES_DIR / n)] == (t.num_rows, sum(t["next_pid"].to_pylist()))
    finally:
        spark.stop()
