"""The Python package against the CLI (`perfdata report`, `collapse`, `dump`, `info`) on
every committed recording: the samples' counts, periods, functions and stacks from
`samples()` must be the ones the Rust walk reports."""

import collections
import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import perfdata
from conftest import RECORDINGS, ROOT, WORDFREQ, cli, cli_json, report_rows


def sample_table(path, **kw):
    return perfdata.open(path).samples(**kw).read_all()


def test_sample_counts_and_periods_per_event_equal_the_report(recording_path):
    t = sample_table(recording_path, columns=["event", "period"])
    ours = collections.defaultdict(lambda: [0, 0])
    for ev, period in zip(t["event"].to_pylist(), t["period"].to_pylist()):
        ours[ev][0] += 1
        ours[ev][1] += period
    theirs = {
        ev["event"]: [ev["samples"], ev["period"]]
        for ev in cli_json("report", str(recording_path), "--json", "--no-children", "-g", "none")
    }
    assert dict(ours) == theirs
    # and info() counts the same (events without samples: zero)
    info = perfdata.open(recording_path).info()
    counted = {e["name"]: [e["samples"], e["period"]] for e in info["events"] if e["samples"]}
    assert counted == theirs


def test_per_function_totals_equal_report_sort_dso_sym(recording_path):
    t = sample_table(recording_path, columns=["event", "dso_name", "symbol", "period"])
    ours = collections.defaultdict(lambda: (0, 0))
    for ev, dso, sym, period in zip(*(t[c].to_pylist() for c in t.column_names)):
        s, p = ours[(ev, dso, sym)]
        ours[(ev, dso, sym)] = (s + 1, p + period)
    assert dict(ours) == report_rows(recording_path, "dso,sym")


@pytest.mark.parametrize("sort", ["tid", "comm", "pid"])
def test_per_thread_and_command_totals_equal_the_report(recording_path, sort):
    t = sample_table(recording_path, columns=["event", "pid", "tid", "comm", "period"], symbolize=False)
    rows = list(zip(*(t[c].to_pylist() for c in t.column_names)))
    # perf's `pid` key is the thread alone (its tid), shown with the thread's last name
    # (a thread that exec'd is one entry): here, the name of its last sample.
    last_name = {tid: comm for _, _, tid, comm, _ in rows}
    ours = collections.defaultdict(lambda: (0, 0))
    for ev, pid, tid, comm, period in rows:
        key = (ev, {"tid": str(tid), "comm": comm, "pid": f"{tid}:{last_name[tid]}"}[sort])
        s, p = ours[key]
        ours[key] = (s + 1, p + period)
    theirs = report_rows(recording_path, sort)
    assert dict(ours) == theirs


def folded_from_samples(t, event):
    out = collections.Counter()
    for ev, comm, stack, period in zip(*(t[c].to_pylist() for c in ("event", "comm", "stack", "period"))):
        if ev != event:
            continue
        out[";".join([comm.replace(" ", "_")] + stack[::-1])] += period
    return dict(out)


def test_stacks_equal_perfdata_collapse(recording_path):
    rec = perfdata.open(recording_path)
    t = rec.samples(columns=["event", "comm", "stack", "period"]).read_all()
    events = [e for e in dict.fromkeys(t["event"].to_pylist())]
    if not events:
        pytest.skip(f"{recording_path.name} has no samples")
    for event in events:
        theirs = {}
        for line in cli("collapse", str(recording_path), "--event", event).splitlines():
            stack, count = line.rsplit(" ", 1)
            theirs[stack] = int(count)
        assert folded_from_samples(t, event) == theirs, event
        # collapse() is the same table as the CLI's lines
        ours = rec.collapse(event=event)
        assert dict(zip(ours["stack"].to_pylist(), ours["count"].to_pylist())) == theirs


@pytest.mark.parametrize("sort", ["comm,dso,sym", "dso,sym", "pid", "cpu"])
def test_report_equals_perfdata_report(recording_path, sort):
    ours = perfdata.open(recording_path).report(sort=sort)
    theirs = cli_json("report", str(recording_path), "--json", "--no-children", "-g", "none", "-n", "--sort", sort)
    rows = []
    for ev in theirs:
        for row in ev["rows"]:
            rows.append([ev["event"], *row["keys"], row["samples"], row["period"], row["percent"]])
    assert ours.column_names == ["event", *sort.split(","), "samples", "period", "percent"]
    assert [list(r.values()) for r in ours.to_pylist()] == rows


def test_report_with_children_equals_perfdata_report():
    path = [p for p in RECORDINGS if p.name == "callchain.data"][0]
    ours = perfdata.open(path).report(sort="comm,dso,sym", children=True)
    theirs = cli_json("report", str(path), "--json", "--children", "-g", "none", "-n")
    expect = [
        (ev["event"], *row["keys"], row["samples"], row["period"], row["children_period"])
        for ev in theirs
        for row in ev["rows"]
    ]
    got = [
        (r["event"], r["comm"], r["dso"], r["sym"], r["samples"], r["period"], r["children_period"])
        for r in ours.to_pylist()
    ]
    assert got == expect
    assert any(r[-1] > r[-2] for r in got), "Children adds the callees' periods"


def test_records_equal_perfdata_dump_json(recording_path):
    if recording_path.is_dir():
        # dump's offsets of a directory's streams carry their paths: compare the rest
        pass
    lines = [json.loads(l) for l in cli("dump", str(recording_path), "--json").splitlines()]
    theirs = [v for v in lines if "record" in v]
    ours = list(perfdata.open(recording_path).records())
    assert ours == theirs
    summary = [v for v in lines if "summary" in v][0]["summary"]
    assert len(ours) == summary["records"]
    # every line, when asked for
    assert list(perfdata.open(recording_path).records(all_lines=True)) == lines


def test_header_attrs_features_and_events():
    rec = perfdata.open(WORDFREQ)
    lines = [json.loads(l) for l in cli("dump", str(WORDFREQ), "--json", "--header-only").splitlines()]
    attrs = [v for v in lines if "attr" in v]
    assert rec.attrs == attrs
    assert rec.events == [a["event"] for a in attrs] == ["cpu-clock:u"]
    assert rec.features["HOSTNAME"] == [v for v in lines if v.get("feature") == "HOSTNAME"][0]["hostname"]
    assert "wordfreq" in " ".join(rec.features["CMDLINE"]["value"] if isinstance(rec.features["CMDLINE"], dict) else map(str, rec.features["CMDLINE"]))
    assert rec.format == {"endian": "Little", "layout": "File", "legacy_v1": False, "short_header": False}
    assert rec.header["magic"].startswith("0x")
    assert rec.attrs[0]["value"]["sample_type"]["names"]
    info = rec.info()
    assert info == cli_json("info", str(WORDFREQ), "--json")


def test_samples_stream_in_batches_of_the_size_asked():
    rec = perfdata.open(WORDFREQ)
    reader = rec.samples(batch_size=100, columns=["time", "period"])
    assert reader.schema == pa.schema([pa.field("time", pa.uint64()), pa.field("period", pa.uint64(), False)])
    sizes = [b.num_rows for b in reader]
    total = rec.info()["events"][0]["samples"]
    assert sum(sizes) == total
    assert all(n == 100 for n in sizes[:-1]) and 0 < sizes[-1] <= 100
    assert len(sizes) == (total + 99) // 100
    # A reader dropped after its first batch stops the walk (no hang, no error).
    r2 = rec.samples(batch_size=10)
    first = r2.read_next_batch()
    assert first.num_rows == 10
    del r2


def test_samples_schema_is_the_export_schema_and_parquet_export_agrees(tmp_path):
    rec = perfdata.open(WORDFREQ)
    reader = rec.samples(symbolize=False)
    assert tuple(reader.schema.names) == perfdata.SAMPLE_COLUMNS + perfdata.NAME_COLUMNS
    ours = reader.read_all().select(list(perfdata.SAMPLE_COLUMNS))
    rec.export(tmp_path / "profiles", to="parquet")
    exported = pq.read_table(tmp_path / "profiles" / "samples" / "recording=0" / "part-0.parquet")
    assert exported.schema.remove_metadata() == ours.schema
    assert exported.equals(ours)
    # the export's frames and stacks give the stack column
    frames = pq.read_table(tmp_path / "profiles" / "frames" / "recording=0" / "part-0.parquet")
    stacks = pq.read_table(tmp_path / "profiles" / "stacks" / "recording=0" / "part-0.parquet")
    name = dict(zip(frames["frame_id"].to_pylist(), frames["folded_name"].to_pylist()))
    by_id = {s: [name[f] for f in fs] for s, fs in zip(stacks["stack_id"].to_pylist(), stacks["frames"].to_pylist())}
    t = rec.samples(symbolize=False, columns=["stack_id", "stack"]).read_all()
    for sid, stack in zip(t["stack_id"].to_pylist(), t["stack"].to_pylist()):
        assert by_id[sid] == stack


def test_to_pandas_and_duckdb_read_the_stream():
    duckdb = pytest.importorskip("duckdb")
    rec = perfdata.open(WORDFREQ)
    df = rec.samples(columns=["symbol", "period"]).read_pandas()
    top = df.groupby("symbol")["period"].sum().sort_values(ascending=False)
    report = rec.report(sort="sym").to_pylist()
    assert top.index[0] == report[0]["sym"][4:]
    assert int(top.iloc[0]) == report[0]["period"]
    samples = rec.samples()
    got = duckdb.sql(
        "SELECT symbol, count(*) AS n, sum(period) AS p FROM samples GROUP BY symbol ORDER BY p DESC, symbol"
    ).fetchall()
    assert [(s, n, int(p)) for s, n, p in got][0] == (report[0]["sym"][4:], report[0]["samples"], report[0]["period"])
    assert sum(n for _, n, _ in got) == len(df)


def test_polars_reads_the_stream_with_and_without_pyarrow():
    """polars takes the reader (``from_arrow``) and the native stream object alone (the
    Arrow PyCapsule interface): the same rows, and the top function's period is the
    report's."""
    pl = pytest.importorskip("polars")
    rec = perfdata.open(WORDFREQ)
    columns = ["time", "tid", "symbol", "period", "stack_id"]
    via_pyarrow = pl.from_arrow(rec.samples(columns=columns))
    direct = pl.DataFrame(rec.sample_stream(columns))
    assert via_pyarrow.columns == direct.columns == columns
    assert via_pyarrow.equals(direct) and via_pyarrow.height == 1295
    top = via_pyarrow.group_by("symbol").agg(pl.col("period").sum()).sort("period", descending=True)
    report = rec.report(sort="sym").to_pylist()
    assert (top["symbol"][0], top["period"][0]) == (report[0]["sym"][4:], report[0]["period"])


def test_convert_round_trips(tmp_path):
    rec = perfdata.open(WORDFREQ)
    big = rec.convert(tmp_path / "big.data", endian="big")
    assert big.format["endian"] == "Big"
    assert big.report_totals() == rec.report_totals()
    back = big.convert(tmp_path / "back.data", endian="little")
    assert (tmp_path / "back.data").read_bytes() == WORDFREQ.read_bytes()
    pipe = rec.convert(tmp_path / "pipe.data", layout="pipe", compress=True)
    assert pipe.format["layout"] == "Pipe"
    # (the pipe's event is named `cpu-clock`, perf names it `cpu-clock:u`: a perfdata
    # naming difference of pipes without EVENT_UPDATE names, left to the format crate)
    assert list(pipe.report_totals().values()) == list(rec.report_totals().values())
    assert back.report_totals() == rec.report_totals()
    with pytest.raises(ValueError):
        rec.convert(tmp_path / "x.data", endian="middle")


def test_export_to_profile_viewers(tmp_path):
    rec = perfdata.open(WORDFREQ)
    rec.export(tmp_path / "p.json", to="speedscope")
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["$schema"].startswith("https://www.speedscope.app")
    rec.export(tmp_path / "p.pb.gz", to="pprof")
    assert (tmp_path / "p.pb.gz").read_bytes()[:2] == b"\x1f\x8b"
    with pytest.raises(ValueError):
        rec.export(tmp_path / "x", to="svg")


# -- damaged input -----------------------------------------------------------------


def damaged_copy(tmp_path, record_index=40, size=3):
    """wordfreq.data with the size of its record `record_index` set to `size` (less than
    a record header): the framing breaks there. The record's offset."""
    recs = list(perfdata.open(WORDFREQ).records(limit=record_index + 1))
    off = int(recs[record_index]["offset"], 16)
    data = bytearray(WORDFREQ.read_bytes())
    data[off + 6 : off + 8] = size.to_bytes(2, "little")
    p = tmp_path / "damaged.data"
    p.write_bytes(bytes(data))
    return p, off


def test_a_broken_record_frame_raises_an_exception_naming_its_offset(tmp_path):
    path, off = damaged_copy(tmp_path, size=3)
    rec = perfdata.open(path)  # the header is fine
    with pytest.raises(perfdata.PerfDataError) as e:
        for _ in rec.records():
            pass
    err = e.value
    # the record's size field: 6 bytes into its header
    assert err.offset == off + 6, (str(err), err.offset, off)
    assert err.record == 40 and err.record_type == "SAMPLE"
    assert "perf_event_header.size" in str(err) and hex(off + 6) in str(err)
    assert err.file == str(path)
    # the samples' stream ends with an Arrow error that says where
    with pytest.raises(pa.ArrowException) as e:
        rec.samples().read_all()
    assert hex(off + 6) in str(e.value)
    # and so do the analyses
    with pytest.raises(perfdata.PerfDataError) as e:
        rec.report()
    assert e.value.offset == off + 6
    # salvage goes on past it
    assert sum(1 for _ in rec.records(salvage=True)) > 40


def test_a_short_sample_raises_an_exception_naming_offset_record_and_field(tmp_path):
    # record 40 (a SAMPLE of 88 bytes) cut to 16: its body ends after `ip`
    path, off = damaged_copy(tmp_path, size=16)
    rec = perfdata.open(path)
    with pytest.raises(perfdata.PerfDataError) as e:
        for _ in rec.records():
            pass
    err = e.value
    assert (err.offset, err.record, err.record_type, err.field) == (off + 16, 40, "SAMPLE", "SAMPLE.pid")
    with pytest.raises(perfdata.PerfDataError) as e:
        rec.collapse()
    assert e.value.offset == off + 8 and e.value.field == "Sample"
    with pytest.raises(pa.ArrowException, match=hex(off + 8)):
        for _ in rec.samples(batch_size=10):
            pass


def test_a_damaged_attr_raises_on_open_with_offset_and_field(tmp_path):
    data = bytearray(WORDFREQ.read_bytes())
    # the header's attrs section: {offset, size} at bytes 24..40; attr_size at 16..24
    attrs_off = int.from_bytes(data[24:32], "little")
    # the first attr's `size` field (u32 at +4) made larger than the attr section's step
    data[attrs_off + 4 : attrs_off + 8] = (4096).to_bytes(4, "little")
    p = tmp_path / "bad-attr.data"
    p.write_bytes(bytes(data))
    with pytest.raises(perfdata.PerfDataError) as e:
        perfdata.open(p)
    assert e.value.offset is not None
    assert hex(e.value.offset) in str(e.value) or str(e.value.offset) in str(e.value)


def test_a_truncated_file_raises_not_panics(tmp_path):
    p = tmp_path / "short.data"
    p.write_bytes(WORDFREQ.read_bytes()[:50])
    with pytest.raises(perfdata.PerfDataError) as e:
        perfdata.open(p)
    assert e.value.offset is not None
    with pytest.raises(perfdata.PerfDataError):
        perfdata.open(tmp_path / "missing.data")


def test_bad_arguments_raise_value_errors():
    rec = perfdata.open(WORDFREQ)
    with pytest.raises(ValueError, match="no column"):
        rec.samples(columns=["nope"])
    with pytest.raises(ValueError, match="no column asked for"):
        rec.samples(columns=[])
    with pytest.raises(ValueError):
        rec.samples(unwind="sideways")
    with pytest.raises(ValueError):
        rec.report(sort="nonsense")
    # An event the recording does not have is a bad argument too (BadOption).
    with pytest.raises(ValueError, match="no event named `nope`"):
        rec.collapse(event="nope")


# -- memory ------------------------------------------------------------------------

MEASURE = r"""
import sys, perfdata
def anon():
    for l in open('/proc/self/status'):
        if l.startswith('RssAnon'):
            return int(l.split()[1]) * 1024
path, mode = sys.argv[1], sys.argv[2]
rec = perfdata.open(path)
cols = list(perfdata.SAMPLE_COLUMNS)
a0 = anon()
peak, rows, nbytes = a0, 0, 0
if mode == "stream":
    for b in rec.samples(symbolize=False, columns=cols, batch_size=8192):
        rows += b.num_rows
        nbytes += b.nbytes
        peak = max(peak, anon())
else:
    t = rec.samples(symbolize=False, columns=cols).read_all()
    rows, nbytes, peak = t.num_rows, t.nbytes, anon()
print(rows, nbytes, peak - a0)
"""


def test_streaming_the_samples_holds_a_few_batches_not_the_file(tmp_path):
    """A recording of ~780k samples (wordfreq's samples 600 times over, in a pipe-layout
    file): reading its samples batch by batch grows the process's anonymous memory by a
    few batches, a fraction of what the whole table takes."""
    import struct
    import subprocess
    import sys

    pipe = tmp_path / "wordfreq.pipe.data"
    perfdata.open(WORDFREQ).convert(pipe, layout="pipe")
    data = pipe.read_bytes()
    recs = list(perfdata.open(pipe).records())
    body = b"".join(
        data[int(r["offset"], 16) : int(r["offset"], 16) + r["size"]] for r in recs if r["record"] == "SAMPLE"
    )
    finished_round = struct.pack("<IHH", 68, 0, 8)

    def recording(copies):
        big = tmp_path / f"big{copies}.pipe.data"
        with big.open("wb") as f:
            f.write(data)
            for _ in range(copies):
                f.write(body + finished_round)
        return big

    def measure(path, mode):
        out = subprocess.run(
            [sys.executable, "-c", MEASURE, str(path), mode], capture_output=True, text=True, check=True
        ).stdout.split()
        return [int(x) for x in out]

    small, big = recording(150), recording(600)
    runs = {
        "stream 150": measure(small, "stream"),
        "stream 600": measure(big, "stream"),
        "whole 600": measure(big, "whole"),
    }
    print(f"rows, bytes, anonymous memory growth: {runs}")
    (rows_s, _, streamed_small), (rows, nbytes, streamed), (rows2, whole_bytes, whole) = runs.values()
    assert rows_s == 1295 * 151 and rows == rows2 == 1295 * 601
    assert whole_bytes > 100_000_000 and whole > 100_000_000, runs  # the table the stream never holds
    # a few batches (and the builders' preallocated ones), whatever the number of samples
    assert streamed < 48_000_000, runs
    assert streamed < whole / 2, runs
    assert streamed < streamed_small + 12_000_000, runs


def test_a_stream_dropped_early_ends_its_walk_thread():
    """The walks run on threads of their own: one whose reader is dropped after a first
    batch or record stops (no thread left behind)."""
    import gc
    import time

    def threads():
        import os

        return len(os.listdir("/proc/self/task"))

    rec = perfdata.open(WORDFREQ)
    # pyarrow's and pandas' own thread pools started; our walks over
    rec.samples().read_pandas()
    list(rec.records(limit=1))
    time.sleep(0.5)
    before = threads()
    for _ in range(5):
        reader = rec.samples(batch_size=10)
        assert reader.read_next_batch().num_rows == 10
        it = rec.records()
        next(it)
        assert threads() > before
        del reader, it
    gc.collect()
    deadline = time.time() + 10
    while threads() > before and time.time() < deadline:
        time.sleep(0.05)
    assert threads() == before


def test_jit_code_is_named_from_a_jitdump_given_by_path(tmp_path):
    # The clock-mono fixture (recorded with `perf record -k mono`, the JIT's clock) and a
    # jitdump that loads code over one user sample's address at its time.
    import struct

    path = ROOT / "conformance" / "fixtures" / "clock-mono.data"
    table = pa.RecordBatchReader.from_stream(
        perfdata.open(path).samples(columns=["time", "pid", "ip"], symbolize=False)
    ).read_all()
    user = [r for r in table.to_pylist() if r["ip"] < 0x8000_0000_0000_0000]
    sample = user[len(user) // 2]
    time, pid, ip = sample["time"], sample["pid"], sample["ip"]
    name = b"JS:*from_python app.js:1:1\0"
    body = struct.pack("<IIQQQQ", pid, pid, ip, ip, 1, 7) + name + b"\x90"
    dump = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, pid, 0, 0)
    dump += struct.pack("<IIQ", 0, 16 + len(body), time) + body
    jitdump = tmp_path / f"jit-{pid}.dump"
    jitdump.write_bytes(dump)

    without = perfdata.open(path).collapse().to_pylist()
    assert not any("JS:*from_python" in r["stack"] for r in without)
    named = perfdata.open(path, jitdumps=[jitdump]).collapse().to_pylist()
    hits = [r for r in named if r["stack"].endswith("JS:*from_python app.js:1:1")]
    assert hits, named


def test_the_streams_of_a_threads_directory_are_its_samples_in_parts():
    path = ROOT / "conformance" / "fixtures" / "threads.data"
    rec = perfdata.open(path)
    assert path.is_dir() and rec.streams == 1 + len(list(path.glob("data.*")))
    columns = ["time", "tid", "ip", "period", "stack_id", "symbol"]
    whole = rec.samples(columns=columns).read_all()
    parts = [rec.samples(columns=columns, stream=s).read_all() for s in range(rec.streams)]
    assert sum(p.num_rows for p in parts) == whole.num_rows > 0
    assert pa.concat_tables(parts).to_pylist() == whole.to_pylist()
    assert perfdata.open(WORDFREQ).streams == 1
    with pytest.raises(Exception, match="stream 9"):
        rec.samples(stream=9).read_all()


@pytest.mark.parametrize(
    "path",
    [WORDFREQ] + [ROOT / "conformance" / "fixtures" / n for n in ("dwarf.data", "threads.data", "group-read.data")],
    ids=lambda p: p.name,
)
def test_workers_give_the_same_batches_as_one_walk(path):
    """The samples built on several threads are the single walk's: the same rows in the
    same order, cut into the same batches, with the same stack and frame ids."""
    rec = perfdata.open(path)

    def batches(workers, batch_size):
        return [b for b in rec.samples(workers=workers, batch_size=batch_size)]

    for batch_size in (3, 65536):
        one = batches(1, batch_size)
        assert sum(b.num_rows for b in one) > 0
        for workers in (2, 3):
            many = batches(workers, batch_size)
            assert [b.num_rows for b in many] == [b.num_rows for b in one]
            assert all(a.equals(b) for a, b in zip(one, many)), (workers, batch_size)
    for bad in (0, 65):
        with pytest.raises(ValueError, match="workers: .*from 1 to 64"):
            rec.samples(workers=bad)


def test_byte_ranges_cut_a_file_into_parts_whose_samples_are_its_samples():
    path = ROOT / "conformance" / "fixtures" / "tracepoint.data"
    rec = perfdata.open(path)
    ranges = rec.byte_ranges(1)
    # tracepoint.data has three rounds: a range per round.
    assert len(ranges) == 3, ranges
    assert all(a < b for a, b in ranges)
    assert all(x[1] == y[0] for x, y in zip(ranges, ranges[1:]))
    assert rec.byte_ranges(1 << 30) == [(ranges[0][0], ranges[-1][1])]
    columns = ["time", "tid", "ip", "period", "stack_id", "symbol"]
    whole = rec.samples(columns=columns).read_all()
    parts = [rec.samples(columns=columns, byte_range=r).read_all() for r in ranges]
    assert all(p.num_rows > 0 for p in parts)
    assert sum(p.num_rows for p in parts) == whole.num_rows

    def rows(t):
        return sorted(tuple(r.values()) for r in t.to_pylist())

    assert rows(pa.concat_tables(parts)) == rows(whole)
    with pytest.raises(Exception, match="by stream"):
        perfdata.open(ROOT / "conformance" / "fixtures" / "threads.data").byte_ranges(1)


@pytest.mark.parametrize("recording_path", RECORDINGS, ids=lambda p: p.name)
def test_script_lines_equal_perfdata_script(recording_path):
    """`rec.script()` gives `perfdata script`'s text, line by line."""
    want = cli("script", str(recording_path))
    got = list(perfdata.open(recording_path).script())
    assert "\n".join(got) + ("\n" if got else "") == want


def test_script_takes_perf_s_options():
    rec = perfdata.open(WORDFREQ)
    lines = list(rec.script("comm,tid,time,ip,sym", call_graph=False, ns=True))
    assert "\n".join(lines) + "\n" == cli(
        "script", str(WORDFREQ), "-F", "comm,tid,time,ip,sym", "-G", "--ns"
    )
    shown = list(rec.script(call_graph=False, show=["task", "mmap"]))
    assert any("PERF_RECORD_MMAP" in l for l in shown)
    with pytest.raises(ValueError, match="Cannot print 'weight' field"):
        list(rec.script("+weight"))
    with pytest.raises(ValueError, match="show"):
        list(rec.script(show=["nope"]))


def test_annotate_equals_the_cli_json():
    path = ROOT / "conformance" / "fixtures" / "plain.data"
    theirs = cli_json("annotate", str(path), "--json")
    rec = perfdata.open(path)
    ours = rec.annotate()
    assert ours == theirs
    functions = ours["events"][0]["functions"] if ours["events"] else []
    if not functions:
        pytest.skip(
            "the programs recorded in plain.data are not on this machine with their "
            f"recorded build ids: {[s['reason'] for s in ours['skipped']][:1]}"
        )
    hottest = functions[0]["symbol"]
    one = rec.annotate(hottest, source=False, percent_type="global-period", syntax="intel")
    assert one == cli_json(
        "annotate", str(path), hottest, "--json", "--no-source",
        "--percent-type", "global-period", "-M", "intel",
    )
    [f] = one["events"][0]["functions"]
    assert f["symbol"] == hottest
    assert sum(i["samples"] for i in f["instructions"]) == f["samples"]
    assert all(not i["source_lines"] for i in f["instructions"])
    with pytest.raises(ValueError):
        rec.annotate(percent_type="most")
