#!/usr/bin/env bash
# Records one small perf.data fixture per scenario with the system perf into
# conformance/fixtures/<scenario>.data (pipe streams: .pipe.data; --threads: a directory).
# The fixtures are committed so that `cargo test` checks real perf output on any machine.
# Re-run as root when the scenario list or perf changes. Needs: perf (linux-perf).
set -u
out=${1:-$(dirname "$0")/fixtures}
mkdir -p "$out"
cd "$out" || exit 1
# A short, deterministic CPU-bound workload in a child shell (forks, execs, maps).
work=(sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls / >/dev/null')
# Bytes through a pipe, a read that fails (EISDIR) and ls: read and write system calls.
io=(sh -c 'head -c 100000 /dev/zero | cat >/dev/null; cat / 2>/dev/null; ls / >/dev/null')
rec() { # name, perf record args...
    local name=$1; shift
    rm -rf "$name.data" "$name.data.old"
    if perf record -q "$@" 2>"$name.err" >/dev/null; then rm -f "$name.err"; echo "recorded $name";
    else echo "SKIP $name: $(tail -1 "$name.err")"; rm -f "$name.err" "$name.data"; fi
}
export PERF_BUILDID_DIR=/tmp/perfdata-buildid-cache
rec plain               -o plain.data -e cpu-clock -F 499 -- "${work[@]}"
rec callchain           -o callchain.data -g -e cpu-clock -F 499 -- "${work[@]}"
rec dwarf               -o dwarf.data --call-graph dwarf,512 -e cpu-clock -F 99 -- "${work[@]}"
rec multi-event         -o multi-event.data -e cpu-clock,task-clock -F 499 -- "${work[@]}"
rec group-read          -o group-read.data -e '{cpu-clock,task-clock}:S' -- "${work[@]}"
rec sample-fields       -o sample-fields.data -T -d --sample-cpu --phys-data --data-page-size --code-page-size -e cpu-clock -F 499 -- "${work[@]}"
rec cgroups             -o cgroups.data --all-cgroups -e cpu-clock -F 499 -- "${work[@]}"
rec switch-events       -o switch-events.data --switch-events -e cpu-clock -F 499 -- "${work[@]}"
rec switch-cpu-wide     -o switch-cpu-wide.data -a --switch-events -e cpu-clock -F 499 -- sleep 0.02
rec namespaces          -o namespaces.data --namespaces -e cpu-clock -F 499 -- "${work[@]}"
rec regs                -o regs.data --user-regs=ax,bx,sp,ip --intr-regs=ax,sp,ip -e cpu-clock -F 299 -- "${work[@]}"
rec tracepoint          -o tracepoint.data -a -e sched:sched_switch -- sleep 0.05
rec syscalls            -o syscalls.data -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat -e sched:sched_wakeup -e sched:sched_switch -- "${work[@]}"
rec wakeups             -o wakeups.data -a -e sched:sched_wakeup -e sched:sched_switch -- sleep 0.02
rec fd-io               -o fd-io.data -e syscalls:sys_enter_read -e syscalls:sys_exit_read -e syscalls:sys_enter_write -e syscalls:sys_exit_write -- "${io[@]}"
rec clock-mono          -o clock-mono.data -k mono -e cpu-clock -F 499 -- "${work[@]}"
rec clock-tai           -o clock-tai.data -k tai -e cpu-clock -F 499 -- "${work[@]}"
rec period              -o period.data -c 100000 -e cpu-clock -- "${work[@]}"
rec compressed          -o compressed.data -z -e cpu-clock -F 499 -- "${work[@]}"
rec no-buildid          -o no-buildid.data --no-buildid -e cpu-clock -F 499 -- "${work[@]}"
rec sample-identifier   -o sample-identifier.data --sample-identifier -e cpu-clock -F 499 -- "${work[@]}"
rec page-faults         -o page-faults.data -e page-faults -c 1 -- "${work[@]}"

rec threads             -o threads.data --threads -e cpu-clock -F 499 -- "${work[@]}"
# pipe mode
if perf record -q -o - -g -e cpu-clock -F 499 -- "${work[@]}" > pipe-callchain.pipe.data 2>/dev/null; then echo "recorded pipe-callchain"; fi
if perf record -q -o - -a -e sched:sched_switch -- sleep 0.05 > pipe-tracepoint.pipe.data 2>/dev/null; then echo "recorded pipe-tracepoint"; fi
# perf inject: build ids, and a pipe turned into a file
if [ -f plain.data ] && perf inject -b -i plain.data -o inject-buildid.data 2>/dev/null; then echo "recorded inject-buildid"; fi
if [ -f pipe-callchain.pipe.data ] && perf inject -i - -o inject-pipe-to-file.data < pipe-callchain.pipe.data 2>/dev/null; then echo "recorded inject-pipe-to-file"; fi
# perf stat record
if perf stat record -o stat.data -e cpu-clock,task-clock -- "${work[@]}" >/dev/null 2>&1; then echo "recorded stat"; fi
chmod -R a+rX .
# perf's view of the fixtures is stored beside them for `cargo test` (checks 1-3 without
# perf): refresh it whenever the fixtures change.
echo "now run: cargo xtask conformance --refresh-oracle"
