"""Run by test_spark_jvm.py in a process of its own (a Spark session's jars are fixed
when its JVM starts, and test_spark.py's session has none): reads the committed
recordings through the JVM data source and writes what it saw as JSON.

usage: python spark_jvm_session.py JAR OUT.json
"""

import json
import os
import sys
from decimal import Decimal

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from conftest import ROOT, WORDFREQ

import perfdata.spark


def plain(v):
    """A value as JSON holds it (decimals as text), for comparing rows."""
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def rows(df):
    return [{k: plain(v) for k, v in r.asDict().items()} for r in df.collect()]


def main(jar: str, out: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfdata-jvm-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.jars", jar)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    perfdata.spark.register(spark)
    read = spark.read.format("perfdata")
    got = {}

    glob = str(ROOT / "conformance" / "fixtures" / "*.data")
    everything = read.load(glob + "," + str(WORDFREQ))
    got["partitions"] = everything.rdd.getNumPartitions()
    got["rows"] = rows(everything)
    got["columns"] = everything.columns
    got["dtypes"] = dict(everything.dtypes)
    got["schema"] = everything.schema.json()

    # What the scan reads, per query: the columns it uses.
    grouped = read.load(str(WORDFREQ)).groupBy("event").count()
    got["plan_grouped"] = grouped._jdf.queryExecution().executedPlan().toString()
    got["count"] = read.load(str(WORDFREQ)).count()
    got["limit"] = len(read.load(str(ROOT / "conformance" / "fixtures" / "wakeups.data")).limit(5).collect())

    tracepoint = str(ROOT / "conformance" / "fixtures" / "tracepoint.data")
    split = read.option("splitBytes", "1").load(tracepoint)
    got["split_partitions"] = split.rdd.getNumPartitions()
    got["split_rows"] = rows(split)

    event = read.option("event", "sched:sched_switch").load(tracepoint)
    got["event_dtypes"] = dict(event.dtypes)
    got["event_columns"] = event.columns
    got["event_schema"] = event.schema.json()
    got["event_rows"] = rows(event)
    got["event_count"] = event.count()

    try:
        read.load(str(ROOT / "no-such-recording.data")).collect()
        got["missing"] = None
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        got["missing"] = str(e)
    spark.stop()
    with open(out, "w") as f:
        json.dump(got, f)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    main(sys.argv[1], sys.argv[2])
