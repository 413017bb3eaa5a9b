"""perf's Python scripting API run by perfdata (`python -m perfdata.perf_script`,
`perfdata script -s`): the handlers' arguments, the order of the calls, exit statuses,
and, where the system perf has Python scripting, the same output as `perf script -s`."""

import atexit
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import perfdata
from conftest import ROOT, _find_cli

HERE = Path(__file__).resolve().parent
TRACEPOINTS = HERE / "data" / "tracepoints.data"
EVERY = HERE / "scripts" / "every_argument.py"
PERF_SCRIPTS = Path("/usr/lib/perf-core/scripts/python")


_KALLSYMS = None


def fixture_kallsyms():
    """A kallsyms for TRACEPOINTS' kernel frames, the same on every machine: the
    recording names no kernel build id and its kernel is not the one running, so each
    tool would otherwise choose its own (perf this machine's /proc/kallsyms, whatever
    kernel that is; perfdata none). A symbol every 64 KiB over the text the recording
    mapped (`[kernel.kallsyms]_text` at 0xffffffff81000000, 19362440 bytes); written
    once per run to a temporary directory."""
    global _KALLSYMS
    if _KALLSYMS is None:
        start, size, step = 0xFFFFFFFF81000000, 19362440, 64 << 10
        lines = [f"{start:016x} T _text", f"{start:016x} T _stext"]
        lines += [f"{a:016x} T ktext_{(a - start) >> 16:03x}" for a in range(start + step, start + size, step)]
        lines.append(f"{start + size:016x} T _etext")
        tmp = tempfile.mkdtemp(prefix="perfdata-kallsyms-")
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        _KALLSYMS = Path(tmp) / "kallsyms"
        _KALLSYMS.write_text("\n".join(lines) + "\n")
    return _KALLSYMS


def host(script, *args, data=TRACEPOINTS, cwd=None, env=None):
    """Runs a script with perfdata's host; the completed process (text)."""
    e = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
    kallsyms = ["--kallsyms", str(fixture_kallsyms())] if data == TRACEPOINTS else []
    return subprocess.run(
        [sys.executable, "-m", "perfdata.perf_script", "-i", str(data), *kallsyms, str(script), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=e,
    )


def events_of(path):
    """{event name: samples} from perf script's text of the recording."""
    counts = collections.Counter()
    for line in perfdata.open(path).script("event", call_graph=False):
        counts[line.strip().rstrip(":")] += 1
    return counts


def test_every_handler_gets_perfs_arguments():
    r = host(EVERY, "one", "-two")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "argv ['one', '-two']"
    assert "perf_script_context" in out[1] and "common_pc" in out[1]
    assert out[2] == "trace_begin True"
    assert out[-3] == "trace_end"
    counts = events_of(TRACEPOINTS)
    calls = collections.Counter()
    for line in out:
        m = re.match(r"(?:unhandled )?(\w+__\w+) pc=", line)
        if m:
            calls[m.group(1).replace("__", ":", 1)] += 1
    tracepoints = {e: n for e, n in counts.items() if ":" in e and "/" not in e}
    assert tracepoints and calls == tracepoints
    # One process_event per sample of the other event.
    others = sum(n for e, n in counts.items() if e not in tracepoints)
    assert others > 0 and sum(1 for l in out if l.startswith("process_event ")) == others
    text = r.stdout
    # A char array is a str, a fixed non-char array a bytearray, integers ints.
    assert re.search(r"unhandled sched__sched_switch .*'prev_comm': str:'\w", text)
    assert re.search(r"'prev_state': int:\d+", text)
    assert re.search(r"unhandled raw_syscalls__sys_enter .*'id': int:\d+, 'args': bytearray:", text)
    # A __data_loc string is a str.
    assert re.search(r"unhandled sched__sched_process_exec .*'filename': str:'/", text)
    # The call chain: dicts of ip, sym {start, end, binding, name}, sym_off, dso.
    assert re.search(
        r"'common_callchain': \[\{'ip': int:\d+, 'sym': \{'start': int:\d+, 'end': int:\d+, "
        r"'binding': int:\d, 'name': str:'[^']+'\}, 'sym_off': int:\d+, 'dso': str:'", text)
    # The sample's dict, keys in perf 6.1's order.
    m = re.search(r"^process_event \{(.*)\}$", text, re.M)
    keys = re.findall(r"(?:^|, )'(\w+)': ", m.group(1))
    first = {}
    for k in keys:
        first.setdefault(k, len(first))
    order = ["ev_name", "attr", "sample", "raw_buf", "comm", "dso", "callchain", "brstack",
             "brstacksym", "iregs", "uregs"]
    assert all(k in first for k in order) and sorted(order, key=first.get) == order
    # Flag and symbol tables are defined before the event's first sample, once.
    first_switch = next(i for i, l in enumerate(out) if "sched__sched_switch pc=" in l)
    defs = [i for i, l in enumerate(out) if l.startswith("define_flag_field sched__sched_switch")]
    assert len(defs) == 1 and defs[0] < first_switch
    assert "define_symbolic_value irq__softirq_entry vec 1 'TIMER'" in text


def test_a_script_that_raises_ends_with_its_traceback_and_status_255(tmp_path):
    s = tmp_path / "raises.py"
    s.write_text(textwrap.dedent("""
        def trace_begin():
            print("begun")
        def raw_syscalls__sys_enter(*args):
            raise ValueError("no thanks")
    """))
    r = host(s)
    assert r.returncode == 255
    assert r.stdout == "begun\n"
    assert "ValueError: no thanks" in r.stderr and 'raises.py", line 5' in r.stderr
    assert "perf_script.py" not in r.stderr
    s.write_text("import sys\nprint('x')\nraise KeyError(3)\n")
    r = host(s)
    assert r.returncode == 255 and "KeyError: 3" in r.stderr
    assert "Error running python script" in r.stderr
    s.write_text("import sys\ndef trace_begin():\n    sys.exit(3)\n")
    assert host(s).returncode == 3


def test_core_and_util_of_our_own_without_perf(tmp_path):
    """Without perf's PERF_EXEC_PATH the package's Core.py and Util.py are found."""
    s = tmp_path / "uses_core.py"
    s.write_text(textwrap.dedent("""
        import os, sys
        sys.path.append(os.environ['PERF_EXEC_PATH'] +
                        '/scripts/python/Perf-Trace-Util/lib/Perf/Trace')
        from Core import *
        from Util import *
        def sched__sched_switch(event_name, context, cpu, s, ns, pid, comm,
                                callchain, prev_comm, prev_pid, prev_prio, prev_state,
                                next_comm, next_pid, next_prio):
            print(flag_str(event_name, "prev_state", prev_state),
                  nsecs_str(nsecs(s, ns)) != "", avg(4, 2), syscall_name(0) != "")
    """))
    import perfdata.perf_script as ps

    own = Path(ps.OWN_EXEC_PATH)
    assert (own / ps.TRACE_LIB / "Core.py").is_file()
    r = subprocess.run(
        [sys.executable, "-c",
         "import perfdata.perf_script as p, sys; p.PERF_EXEC_PATHS = (); "
         "sys.exit(p.main(sys.argv[1:]))", "-i", str(TRACEPOINTS), str(s)],
        capture_output=True, text=True, env=dict(os.environ, PERF_EXEC_PATH=""))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines and all(l.endswith(" True 2.0 True") for l in lines)


def test_cli_says_what_to_install(tmp_path):
    """`perfdata script -s` with a Python that cannot import perfdata: one line."""
    py = tmp_path / "bare-python"
    py.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S \"$@\"\n")
    py.chmod(0o755)
    r = subprocess.run(
        [_find_cli(), "script", "-i", str(TRACEPOINTS), "-s", str(EVERY)],
        capture_output=True, text=True, env=dict(os.environ, PERFDATA_PYTHON=str(py)))
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1 and "perfdata Python package" in r.stderr


def test_cli_runs_the_script_with_its_arguments():
    r = subprocess.run(
        [_find_cli(), "script", "-i", str(TRACEPOINTS), "--kallsyms", str(fixture_kallsyms()),
         "-s", str(EVERY), "a", "--", "-b"],
        capture_output=True, text=True,
        env=dict(os.environ, PERFDATA_PYTHON=sys.executable, PYTHONHASHSEED="0"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == host(EVERY, "a", "-b").stdout


def perf_has_python():
    if shutil.which("perf") is None:
        return "no perf"
    if not (PERF_SCRIPTS / "syscall-counts.py").is_file():
        return f"perf's Python scripts are not at {PERF_SCRIPTS}"
    if os.geteuid() != 0:
        return "perf reads the recording's kernel symbols as root only"
    return None


@pytest.mark.parametrize("script,args", [
    (str(EVERY), ["x", "-y"]),
    ("syscall-counts.py", []),
    ("syscall-counts-by-pid.py", []),
    ("failed-syscalls-by-pid.py", []),
    ("stackcollapse.py", []),
    ("flamegraph.py", ["--", "-f", "json", "-o", "-"]),
])
def test_same_output_as_perf(script, args, tmp_path):
    why = perf_has_python()
    if why:
        if os.environ.get("PERFDATA_TOOLS_REQUIRED") == "1":
            pytest.fail(f"perf is required here: {why}")
        pytest.skip(f"compared with perf script -s only where it runs: {why}")
    path = script if os.path.isabs(script) else str(PERF_SCRIPTS / script)
    e = dict(os.environ, PYTHONHASHSEED="0", PERF_CONFIG="/dev/null")
    # Both tools given the same kernel symbols (see fixture_kallsyms).
    kallsyms = ["--kallsyms", str(fixture_kallsyms())]
    theirs = subprocess.run(["perf", "script", "-i", str(TRACEPOINTS), *kallsyms, "-s", path, *args],
                            capture_output=True, cwd=tmp_path, env=e)
    ours = subprocess.run([sys.executable, "-m", "perfdata.perf_script", "-i", str(TRACEPOINTS),
                           *kallsyms, path, *args], capture_output=True, cwd=tmp_path, env=e)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert theirs.stdout and ours.stdout == theirs.stdout
