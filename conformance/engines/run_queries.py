#!/usr/bin/env python3
"""Runs the documented queries of one SQL engine on a Parquet export, as written.

usage: run_queries.py duckdb|spark|datafusion PROFILES_DIR QUERIES_DIR

QUERIES_DIR/ENGINE/ holds the engine's setup (views.sql for DuckDB, views.py for Spark and
DataFusion: the code the documentation shows) and one NAME.sql per query. The only edit
made to the text is the export's path: `profiles/` (the documentation's directory) becomes
PROFILES_DIR. Prints one JSON object: NAME -> {"columns": [...], "rows": [[...]...]},
{"error": "..."} or {"skipped": "..."} (a query whose `-- needs:` tables the export does
not have); exit status 0 when every query that could run ran.
"""

import decimal
import json
import pathlib
import sys


def plain(v):
    # Spark reads uint64 as decimal(20,0); every engine's numbers become JSON numbers.
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def main():
    engine, profiles, queries = sys.argv[1], sys.argv[2].rstrip("/"), pathlib.Path(sys.argv[3])
    here = queries / engine
    names = sorted(p.stem for p in here.glob("*.sql") if p.stem != "views")

    def text(name):
        return (here / f"{name}.sql").read_text().replace("profiles/", profiles + "/")

    out = {}
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(text("views"))

        def run(sql):
            rel = con.sql(sql)
            return list(rel.columns), rel.fetchall()

    elif engine in ("spark", "datafusion"):
        setup = (here / "views.py").read_text().replace("profiles/", profiles + "/")
        scope = {}
        exec(compile(setup, str(here / "views.py"), "exec"), scope)
        if engine == "spark":
            spark = scope["spark"]

            def run(sql):
                df = spark.sql(sql)
                return df.columns, [tuple(r) for r in df.collect()]

        else:
            ctx = scope["ctx"]

            def run(sql):
                t = ctx.sql(sql).to_arrow_table()
                return t.column_names, [tuple(r.values()) for r in t.to_pylist()]

    else:
        sys.exit(f"unknown engine {engine}")

    ok = True
    for name in names:
        # `-- needs: DIR…`: tables an export has only for some recordings (tracepoints).
        needs = [
            d
            for line in (here / f"{name}.sql").read_text().splitlines()
            if line.startswith("-- needs:")
            for d in line[len("-- needs:") :].split()
        ]
        missing = [d for d in needs if not pathlib.Path(profiles, d).is_dir()]
        if missing:
            out[name] = {"skipped": "the export has no " + ", ".join(missing)}
            continue
        try:
            cols, rows = run(text(name))
            out[name] = {"columns": list(cols), "rows": [plain(list(r)) for r in rows]}
        except Exception as e:  # a query that fails as written is the finding
            ok = False
            out[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    if engine == "spark":
        scope["spark"].stop()
    json.dump(out, sys.stdout)
    sys.exit(0 if ok else 1)


main()
