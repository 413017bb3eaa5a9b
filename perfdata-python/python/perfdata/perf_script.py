"""Runs a script written for perf's Python scripting API (``perf script -s SCRIPT.py``)
over a recording: ``python3 -m perfdata.perf_script [-i FILE] SCRIPT.py [ARGS...]``, or
``perfdata script -s SCRIPT.py [ARGS...]``, which starts it.

The script runs as perf runs it: as ``__main__``, with ``sys.argv`` = ``[SCRIPT.py,
ARGS...]``, the script's directory first on ``sys.path``, ``PERF_EXEC_PATH`` naming a
directory whose ``scripts/python/Perf-Trace-Util/lib/Perf/Trace`` holds ``Core.py`` and
``Util.py`` (perf's own when perf is installed, else this package's), and a
``perf_trace_context`` module to import. Then the native host
(``_native.run_perf_script``) calls ``trace_begin()``, the handlers of every sample in
perf's order, and ``trace_end()``.

A script that raises ends with its traceback on standard error and status 255; a
script that calls ``sys.exit(n)`` ends with status ``n``, as under perf.
"""

from __future__ import annotations

import argparse
import builtins
import os
import sys
import traceback
import types

from . import _native

# Where perf installs its scripts (Debian's linux-perf: /usr/lib/perf-core; perf's own
# `make install`: /usr/libexec/perf-core).
PERF_EXEC_PATHS = ("/usr/lib/perf-core", "/usr/libexec/perf-core", "/usr/local/libexec/perf-core")
TRACE_LIB = os.path.join("scripts", "python", "Perf-Trace-Util", "lib", "Perf", "Trace")
# This package's Core.py and Util.py, for a machine without perf.
OWN_EXEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perf_exec")


def exec_path() -> str:
    """``PERF_EXEC_PATH`` for the script: the environment's when it holds perf's
    ``Core.py``, else perf's installed one, else this package's."""
    given = os.environ.get("PERF_EXEC_PATH")
    for d in ((given,) if given else ()) + PERF_EXEC_PATHS:
        if os.path.isfile(os.path.join(d, TRACE_LIB, "Core.py")):
            return d
    return OWN_EXEC_PATH


def context_module() -> types.ModuleType:
    """perf's ``perf_trace_context`` module (its functions take the ``context`` a
    handler is given, or ``perf_script_context``)."""
    m = types.ModuleType("perf_trace_context")
    for name in (
        "common_pc",
        "common_flags",
        "common_lock_depth",
        "perf_sample_insn",
        "perf_sample_srcline",
        "perf_sample_srccode",
        "perf_set_itrace_options",
    ):
        setattr(m, name, getattr(_native, name))
    m.perf_script_context = _native.ScriptContext()
    return m


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m perfdata.perf_script",
        description="Run a perf Python script (perf script -s) over a recording.",
    )
    p.add_argument("-i", "--input", default="perf.data", help="the recording (default: perf.data)")
    p.add_argument("--kallsyms")
    p.add_argument("--vmlinux")
    p.add_argument("--symfs")
    p.add_argument("--symbols-from", action="append", default=[])
    p.add_argument("--debug-file-directory", action="append", default=[])
    p.add_argument("--jitdump", action="append", default=[])
    p.add_argument("--no-symbols", action="store_true")
    p.add_argument("--call-graph", dest="unwind", help="fp, dwarf, lbr or auto")
    p.add_argument("script", help="the script (SCRIPT.py)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    script = a.script
    if a.args[:1] == ["--"]:
        a.args = a.args[1:]
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as e:
        sys.stderr.write(f"Can't open python script \"{script}\": {e.strerror}\n")
        return 255
    from . import PerfDataError

    try:
        rec = _native.NativeRecording(
            a.input,
            kallsyms=a.kallsyms,
            vmlinux=a.vmlinux,
            symfs=a.symfs,
            symbols_from=a.symbols_from,
            debug_file_dirs=a.debug_file_directory,
            jitdumps=a.jitdump,
            no_symbols=a.no_symbols,
        )
    except (PerfDataError, OSError, ValueError) as e:
        sys.stderr.write(f"perfdata: {e}\n")
        return 1
    os.environ["PERF_EXEC_PATH"] = exec_path()
    ctx = context_module()
    sys.modules["perf_trace_context"] = ctx
    sys.argv = [script] + list(a.args)
    # As Python run on a file: its directory first (symbolic links resolved).
    here = os.path.dirname(os.path.realpath(script))
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = here
    else:
        sys.path.insert(0, here)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = script
    main_module.__builtins__ = builtins
    sys.modules["__main__"] = main_module
    g = main_module.__dict__
    try:
        exec(compile(source, script, "exec"), g)
    except SystemExit:
        raise
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        sys.stderr.write(f"Error running python script {script}\n")
        return 255
    try:
        _native.run_perf_script(rec, g, ctx, ctx.perf_script_context, unwind=a.unwind)
    except SystemExit:
        raise
    except PerfDataError as e:
        sys.stderr.write(f"perfdata: {e}\n")
        return 1
    except BaseException as e:
        # The handler's frames only (perf calls it from C: no frame of the host).
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        sys.stderr.write("perfdata: problem in Python trace event handler\n")
        return 255
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.exit(code)
