# Util.py: the helpers perf's Python scripts import (`from Util import *`), for machines
# without perf's own copy. Written for perfdata from perf-script-python(1)'s description
# of the module; perfdata uses perf's own copy when perf is installed.
# SPDX-License-Identifier: MIT OR Apache-2.0

import errno
import os

NSECS_PER_SEC = 1000000000


def avg(total, n):
    return total / n


def nsecs(secs, nsecs):
    return secs * NSECS_PER_SEC + nsecs


def nsecs_secs(nsecs):
    return nsecs // NSECS_PER_SEC


def nsecs_nsecs(nsecs):
    return nsecs % NSECS_PER_SEC


def nsecs_str(nsecs):
    return "%5u.%09u" % (nsecs_secs(nsecs), nsecs_nsecs(nsecs))


def add_stats(dict, key, value):
    """Keeps (min, max, avg, count) of the values seen under `key`."""
    if key not in dict:
        dict[key] = (value, value, value, 1)
    else:
        lo, hi, mean, count = dict[key]
        dict[key] = (min(lo, value), max(hi, value), (mean + value) / 2, count + 1)


def clear_term():
    print("\x1b[H\x1b[2J")


# System call names from libaudit's Python binding when it is installed (Debian:
# python3-audit), as perf's scripts print them; else the numbers.
try:
    import audit

    _machine = audit.audit_determine_machine(os.uname()[4])

    def syscall_name(id):
        try:
            return audit.audit_syscall_to_name(id, _machine)
        except Exception:
            return str(id)

except Exception:

    def syscall_name(id):
        return str(id)


def strerror(nr):
    """The errno name of a negative or positive error number."""
    try:
        return errno.errorcode[abs(nr)]
    except KeyError:
        return "Unknown %d errno" % nr
