#!/usr/bin/env bash
# Records sched-threads.data (the sched_threads workload of conformance/programs/
# sched_workloads.c, per task, every sched tracepoint perf sched reads) and stores perf
# sched's views of it beside it (perf-*.txt), which `cargo test -p perfdata-cli` compares
# with perfdata sched's byte for byte. Run as root with perf 6.1; needs gcc.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -pthread -o "$work/sched_threads" "$here/../../../../conformance/programs/sched_workloads.c"
cd "$here"
perf record -q -o sched-threads.data -c 1 \
    -e sched:sched_switch -e sched:sched_stat_runtime -e sched:sched_process_fork \
    -e sched:sched_wakeup_new -e sched:sched_migrate_task -e sched:sched_waking \
    -e sched:sched_wakeup -- "$work/sched_threads"
chmod a+r sched-threads.data
while read -r name args; do
    # shellcheck disable=SC2086
    perf sched $args -i sched-threads.data > "perf-$name.txt" 2>/dev/null
done < views.txt
