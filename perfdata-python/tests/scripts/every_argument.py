# Prints every argument perf's Python scripting API hands a script, for every event of a
# recording: run by `perf script -s` and by `perfdata script -s`, the two outputs must be
# equal byte for byte (conformance check 20, perfdata-python/tests/test_perf_script.py).
#
# Each tracepoint event's first sample goes to trace_unhandled (fields as a dict, and the
# sample's dict), which then defines the event's own handler: its later samples come as
# positional arguments. Non-tracepoint samples come to process_event. The context is
# printed through the perf_trace_context functions (its type differs: perf's is a
# capsule). Known difference: the kernel map's end (`dso_map_end` of a kernel address),
# where perf extends the kernel map to the next one: printed for user objects only.
import os
import sys

sys.path.append(os.environ['PERF_EXEC_PATH'] +
                '/scripts/python/Perf-Trace-Util/lib/Perf/Trace')

from perf_trace_context import *  # noqa: E402,F401,F403
from Core import *  # noqa: E402,F401,F403

import perf_trace_context  # noqa: E402

print("argv", sys.argv[1:])
print("module", sorted(n for n in dir(perf_trace_context) if not n.startswith("__")))


def trace_begin():
    print("trace_begin", "perf_script_context" in globals())


def trace_end():
    print("trace_end")
    print("flag_fields", sorted((e, f, sorted(v["values"].items()), v.get("delim"))
                                for e, fs in flag_fields.items() for f, v in fs.items()))
    print("symbolic_fields", sorted((e, f, sorted(v["values"].items()))
                                    for e, fs in symbolic_fields.items()
                                    for f, v in fs.items()))


def define_flag_field(event_name, field_name, delim):
    print("define_flag_field", event_name, field_name, repr(delim))
    flag_fields[event_name][field_name]["delim"] = delim


def define_flag_value(event_name, field_name, value, field_str):
    print("define_flag_value", event_name, field_name, value, repr(field_str))
    flag_fields[event_name][field_name]["values"][value] = field_str


def define_symbolic_field(event_name, field_name):
    print("define_symbolic_field", event_name, field_name)


def define_symbolic_value(event_name, field_name, value, field_str):
    print("define_symbolic_value", event_name, field_name, value, repr(field_str))
    symbolic_fields[event_name][field_name]["values"][value] = field_str


def show(v):
    """repr, with the types spelled out (a str and a bytearray must not look alike)."""
    if isinstance(v, dict):
        return "{" + ", ".join("%r: %s" % (k, show(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return "%s:%r" % (type(v).__name__, v)


def sample_dict(d):
    d = dict(d)
    if d.get("dso", "").startswith("["):
        d.pop("dso_map_start", None)
        d.pop("dso_map_end", None)
    return show(d)


def context_text(context):
    # (perf_sample_srcline and perf_sample_insn are not compared: perfdata answers
    # (None, 0) and None where perf reads the line and the instruction.)
    return "pc=%d flags=%d lock_depth=%d" % (
        common_pc(context), common_flags(context), common_lock_depth(context))


def handler(event_name, context, *args):
    *args, perf_sample_dict = args
    print(event_name, context_text(context), " ".join(show(a) for a in args))
    print("  sample", sample_dict(perf_sample_dict))


def trace_unhandled(event_name, context, event_fields_dict, perf_sample_dict):
    print("unhandled", event_name, context_text(context), show(event_fields_dict))
    print("  sample", sample_dict(perf_sample_dict))
    # From now on the event has a handler of its own, taking every argument (perf
    # passes the sample's dict to a handler with one argument more than the fields).
    n = len(event_fields_dict) - 6 + 8
    names = ["a%d" % i for i in range(n)]
    src = "def h(%s, perf_sample_dict):\n    handler(%s, perf_sample_dict)\n" % (
        ", ".join(names), ", ".join(names))
    ns = {"handler": handler}
    exec(src, ns)
    globals()[event_name] = ns["h"]


def process_event(param_dict):
    print("process_event", sample_dict(param_dict))
