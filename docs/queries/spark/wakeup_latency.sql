-- Wakeup to run, per thread: from each sched:sched_wakeup of a thread to its next event,
-- when that is the sched_switch that runs it (next_pid). A thread is switched in by the
-- task it replaces, so the recording must be system-wide (`perf record -a`).
-- needs: tracepoints/sched__sched_wakeup tracepoints/sched__sched_switch
WITH ev AS (
  SELECT recording, pid AS tid, comm, common_time AS t, 0 AS is_run
  FROM sched__sched_wakeup
  UNION ALL
  SELECT recording, next_pid, next_comm, common_time, 1
  FROM sched__sched_switch),
paired AS (
  SELECT *, lead(is_run) OVER w AS next_run, (lead(t) OVER w) - t AS ns
  FROM ev WINDOW w AS (PARTITION BY recording, tid ORDER BY t, is_run))
SELECT recording, tid, comm, count(*) AS wakeups, sum(ns) AS total_ns,
       percentile(ns, 0.5) AS p50_ns, percentile(ns, 0.99) AS p99_ns, max(ns) AS max_ns
FROM paired WHERE is_run = 0 AND next_run = 1
GROUP BY recording, tid, comm
ORDER BY recording, max_ns DESC, tid, comm
