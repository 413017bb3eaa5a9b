# Core.py: the helpers perf's Python scripts import (`from Core import *`), for machines
# without perf's own copy. Written for perfdata from perf-script-python(1)'s description
# of the module; perfdata uses perf's own copy when perf is installed.
# SPDX-License-Identifier: MIT OR Apache-2.0

from collections import defaultdict


def autodict():
    """A dict whose missing keys hold new autodicts (nested counters)."""
    return defaultdict(autodict)


# event name -> field name -> {'delim': str, 'values': {value: name}}
flag_fields = autodict()
# event name -> field name -> {'values': {value: name}}
symbolic_fields = autodict()


def define_flag_field(event_name, field_name, delim):
    flag_fields[event_name][field_name]['delim'] = delim


def define_flag_value(event_name, field_name, value, field_str):
    flag_fields[event_name][field_name]['values'][value] = field_str


def define_symbolic_field(event_name, field_name):
    # Nothing to keep: the values come with define_symbolic_value.
    pass


def define_symbolic_value(event_name, field_name, value, field_str):
    symbolic_fields[event_name][field_name]['values'][value] = field_str


def flag_str(event_name, field_name, value):
    """The names of the flags set in `value`, joined by the field's delimiter, as the
    event's __print_flags prints them (a 0 value: the name defined for 0)."""
    field = flag_fields[event_name][field_name]
    names = field['values']
    delim = field['delim']
    if not names:
        return ""
    out = []
    for v in sorted(names):
        if not value and not v:
            out.append(names[v])
            break
        if v and value & v == v:
            if out and delim:
                out.append(" " + delim + " ")
            out.append(names[v])
            value &= ~v
    return "".join(out)


def symbol_str(event_name, field_name, value):
    """The name __print_symbolic prints for `value` ('' when it has none)."""
    names = symbolic_fields[event_name][field_name]['values']
    if not names:
        return ""
    for v in sorted(names):
        if not value and not v:
            return names[v]
        if value == v:
            return names[v]
    return ""


# The trace entry flags (`common_flags`).
_trace_flags = ((0x00, "NONE"), (0x01, "IRQS_OFF"), (0x02, "IRQS_NOSUPPORT"),
                (0x04, "NEED_RESCHED"), (0x08, "HARDIRQ"), (0x10, "SOFTIRQ"))


def trace_flag_str(value):
    out = []
    for v, name in _trace_flags:
        if not value and not v:
            out.append(name)
            break
        if v and value & v == v:
            if out:
                out.append(" | ")
            out.append(name)
            value &= ~v
    return "".join(out)


def taskState(state):
    """A task state letter (R, S, D, T, Z, X) for sched_switch's prev_state."""
    return {0: "R", 1: "S", 2: "D", 64: "DEAD"}.get(state, "Unknown")


class EventHeaders:
    """A handler's common arguments, kept together."""

    def __init__(self, common_cpu, common_secs, common_nsecs, common_pid, common_comm,
                 common_callchain):
        self.cpu = common_cpu
        self.secs = common_secs
        self.nsecs = common_nsecs
        self.pid = common_pid
        self.comm = common_comm
        self.callchain = common_callchain

    def ts(self):
        return self.secs * 1000000000 + self.nsecs

    def ts_format(self):
        return "%d.%d" % (self.secs, int(self.nsecs / 1000))
