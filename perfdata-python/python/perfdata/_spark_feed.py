"""The feeder of the JVM Spark data source (``perfdata.spark.PerfDataSource`` in the jar
:func:`perfdata.spark.jar` builds): ``python -m perfdata._spark_feed MODE JSON``.

* ``plan {"paths": …, "splitBytes": N, "minPartitions": M}``: the partitions, as JSON
  (driver side; :func:`perfdata._spark_plan.plan`);
* ``schema {"paths": …, "event": …}``: the Spark schema (DDL) of a tracepoint event's
  table, ``path`` last (driver side; the samples' is in the jar);
* ``read {"path": …, "stream": …, "range": [a, b], "columns": […], "symbolize": …,
  "unwind": …, "batchSize": N, "event": …}``: one partition's rows on standard output,
  an Arrow IPC stream in Spark's types (executor side).

The JVM starts it and reads its output; a failure is one line on standard error and exit
status 1, which the data source raises with the line. PySpark is not imported here, nor
pyarrow: the stream is written by perfdata's native module.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List


def _plan(args: dict) -> None:
    from ._spark_plan import expand, plan

    min_partitions = args.get("minPartitions")
    parts = plan(
        expand(args["paths"]),
        int(args.get("splitBytes", 256 << 20)),
        None if min_partitions is None else int(min_partitions),
    )
    out = [{"path": p, "stream": s, "range": None if r is None else list(r)} for p, s, r in parts]
    json.dump(out, sys.stdout)


def _schema(args: dict) -> None:
    from ._spark_plan import expand, tracepoint_schema

    paths = expand(args["paths"])
    if not paths:
        raise ValueError("no recording to read the event's format from")
    print(tracepoint_schema(paths[0], args["event"]))


def _read(args: dict) -> None:
    import perfdata

    rec = perfdata.open(args["path"])
    event = args.get("event")
    columns: List[str] = list(args["columns"])
    if not columns:
        # A query that reads no column (a count) still needs the rows: the cheapest
        # column, which the data source does not hand on.
        columns = ["common_tid" if event else "tid"]
    byte_range = args.get("range")
    common = dict(
        columns=columns,
        symbolize=bool(args.get("symbolize", True)),
        unwind=args.get("unwind"),
        batch_size=int(args.get("batchSize", 65536)),
        stream=args.get("stream"),
        byte_range=None if byte_range is None else (int(byte_range[0]), int(byte_range[1])),
        # Spark runs a task per core already.
        workers=1,
    )
    native = rec._native.tracepoints(event, **common) if event else rec._native.samples(**common)
    sys.stdout.flush()
    native.write_spark_ipc(sys.stdout.fileno())


def main(argv: List[str]) -> int:
    modes = {"plan": _plan, "schema": _schema, "read": _read}
    if len(argv) != 3 or argv[1] not in modes:
        print("usage: python -m perfdata._spark_feed plan|schema|read JSON", file=sys.stderr)
        return 2
    try:
        modes[argv[1]](json.loads(argv[2]))
    except BrokenPipeError:
        # The data source stopped reading (a LIMIT was met): not a failure. Python's own
        # flush of stdout at exit must not fail on the closed pipe either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - every failure is reported as one line
        print(f"perfdata: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
