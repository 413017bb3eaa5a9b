"""Shared helpers: the recordings the tests read, and the `perfdata` CLI they compare
with (`PERFDATA_CLI`, else the workspace's target/{debug,release}/perfdata, else built
with cargo)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "conformance" / "fixtures").glob("*.data"))
WORDFREQ = ROOT / "samples" / "wordfreq.data"
# Every committed recording: the conformance fixtures (files, pipes, a --threads
# directory) and the README's sample.
RECORDINGS = FIXTURES + [WORDFREQ]


def _find_cli() -> str:
    env = os.environ.get("PERFDATA_CLI")
    if env:
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("debug", "release"):
        p = target / profile / "perfdata"
        if p.exists():
            return str(p)
    subprocess.run(
        ["cargo", "build", "-q", "-p", "perfdata-cli"], cwd=ROOT, check=True
    )
    return str(target / "debug" / "perfdata")


_CLI = None


def cli(*args: str) -> str:
    """Runs the perfdata CLI; its standard output."""
    global _CLI
    if _CLI is None:
        _CLI = _find_cli()
    r = subprocess.run([_CLI, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"perfdata {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def cli_json(*args: str):
    return json.loads(cli(*args))


def report_rows(path, sort: str):
    """`perfdata report --json --no-children -g none -n --sort SORT`, summed by
    (event, keys), `[k] `/`[.] ` stripped from the symbol (as the export's
    `frames.symbol`): {key: (samples, period)}."""
    keys = sort.split(",")
    out = {}
    for ev in cli_json("report", str(path), "--json", "--no-children", "-g", "none", "-n", "--sort", sort):
        for row in ev["rows"]:
            k = [ev["event"]]
            for name, v in zip(keys, row["keys"]):
                k.append(v[4:] if name == "sym" else v.strip())
            k = tuple(k)
            s, p = out.get(k, (0, 0))
            out[k] = (s + row["samples"], p + row["period"])
    return out


def ids(paths):
    return [p.name for p in paths]


@pytest.fixture(params=RECORDINGS, ids=ids(RECORDINGS))
def recording_path(request):
    return request.param
