"""The JVM Spark data source (the jar `perfdata.spark.jar()` builds, `local[2]`, in a
process of its own: spark_jvm_session.py): the same rows as the Python data source hands
Spark, on every committed recording; only the columns a query uses are read; byte ranges,
tracepoint tables, counts, limits and a missing file.

Skipped, with the reason printed, without Java, javac (a JDK) or PySpark 4."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, WORDFREQ, report_rows


def _skip(why: str):
    print(f"SKIP JVM Spark data source tests: {why}", file=sys.stderr)
    pytest.skip(why, allow_module_level=True)


def _javac_found() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("javac") is not None or bool(home and os.path.exists(os.path.join(home, "bin", "javac")))


if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    _skip("no Java runtime (java not on PATH, no JAVA_HOME)")
if not _javac_found():
    _skip("no javac (a JDK 17 or later) to build the data source's jar")
pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed")
if int(pyspark.__version__.split(".")[0]) < 4:
    _skip(f"PySpark {pyspark.__version__}: the data source is built against Spark 4")

import perfdata  # noqa: E402
import perfdata.spark  # noqa: E402
from perfdata.spark import _arrow_schema, _Widening  # noqa: E402
from spark_jvm_session import plain as _plain  # noqa: E402 - the rows' JSON form, both sides

FILES = [p for p in FIXTURES if p.is_file()] + [WORDFREQ]
DIRS = [p for p in FIXTURES if p.is_dir()]
TRACEPOINT = ROOT / "conformance" / "fixtures" / "tracepoint.data"


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    cache = tmp_path_factory.mktemp("jar-cache")
    env = dict(os.environ, PERFDATA_CACHE_DIR=str(cache), PYSPARK_PYTHON=sys.executable)
    os.environ["PERFDATA_CACHE_DIR"] = str(cache)
    try:
        jar = perfdata.spark.jar()
    finally:
        del os.environ["PERFDATA_CACHE_DIR"]
    out = tmp_path_factory.mktemp("jvm") / "seen.json"
    helper = os.path.join(os.path.dirname(__file__), "spark_jvm_session.py")
    r = subprocess.run([sys.executable, helper, jar, str(out)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    with open(out) as f:
        return json.load(f)


def _reference(path, schema_json, read):
    """What the Python data source hands Spark for `path` in the Spark schema
    `schema_json`: the native batches widened (`_Widening`), as plain values, every
    stream of a directory."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(schema_json))
    widen = _Widening(_arrow_schema(schema), os.fspath(path))
    native = [f.name for f in schema.fields if f.name != "path"]
    streams = perfdata.open(path).streams if os.path.isdir(path) else 1
    out = []
    for s in range(streams):
        for batch in read(perfdata.open(path), native, None if streams == 1 else s):
            out.extend({k: _plain(v) for k, v in r.items()} for r in widen(batch).to_pylist())
    return out


def _key(row):
    return json.dumps(row, sort_keys=True)


def test_rows_equal_the_python_data_sources(seen):
    # Every column of every sample of every committed recording, as the Python data
    # source gives them (row order aside: partitions run in parallel).
    by_path = {}
    for r in seen["rows"]:
        by_path.setdefault(r["path"], []).append(r)
    ddl = perfdata.spark.SPARK_SCHEMA
    for path in FILES + DIRS:
        want = _reference(path, seen["schema"], lambda rec, cols, s: rec.samples(columns=cols, stream=s))
        have = by_path.get(str(path), [])
        assert sorted(map(_key, have)) == sorted(map(_key, want)), path
    assert seen["columns"] == [f.split(" ")[0].strip("`") for f in ddl.split(", ")]
    assert seen["dtypes"]["ip"] == "decimal(20,0)" and seen["dtypes"]["stack"] == "array<string>"


def test_one_partition_per_file_or_stream_and_report_totals(seen):
    streams = sum(perfdata.open(p).streams for p in DIRS)
    assert streams > len(DIRS), "the --threads fixture has streams"
    assert seen["partitions"] == len(FILES) + streams
    for path in FILES:
        totals = {}
        for r in seen["rows"]:
            if r["path"] == str(path):
                k = (r["event"], r["dso_name"], r["symbol"])
                n, p = totals.get(k, (0, 0))
                totals[k] = (n + 1, p + int(r["period"]))
        assert totals == report_rows(path, "dso,sym"), path


def test_a_query_reads_only_its_columns(seen):
    plan = seen["plan_grouped"]
    scan = next(line for line in plan.splitlines() if "BatchScan perfdata" in line)
    assert "[event#" in scan and "comm" not in scan and "stack" not in scan, plan
    # a count reads no column and still counts every sample
    assert seen["count"] == perfdata.open(WORDFREQ).info()["events"][0]["samples"]
    assert seen["limit"] == 5


def test_byte_ranges_give_the_whole_files_rows(seen):
    assert seen["split_partitions"] == len(perfdata.open(TRACEPOINT).byte_ranges(1)) > 1
    whole = [r for r in seen["rows"] if r["path"] == str(TRACEPOINT)]
    assert sorted(map(_key, seen["split_rows"])) == sorted(map(_key, whole))


def test_a_tracepoint_events_table(seen):
    ddl = perfdata.spark.tracepoint_schema(str(TRACEPOINT), "sched:sched_switch")
    assert seen["event_columns"] == [c.rsplit(" ", 1)[0].strip("`") for c in ddl.split(", ")]
    assert seen["event_dtypes"]["prev_pid"] == "int" and seen["event_dtypes"]["prev_comm"] == "string"
    want = _reference(
        TRACEPOINT, seen["event_schema"], lambda rec, cols, s: rec.tracepoints("sched:sched_switch", columns=cols, stream=s)
    )
    assert sorted(map(_key, seen["event_rows"])) == sorted(map(_key, want))
    assert seen["event_count"] == len(want) > 0


def test_a_missing_recording_is_a_clear_error(seen):
    said = seen["missing"]
    assert said is not None and "no-such-recording.data" in said and "perfdata" in said, said
