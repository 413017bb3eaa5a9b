-- System calls per process: how many, and their latency (each raw_syscalls:sys_enter to
-- its thread's next event, when that is the sys_exit of the same call).
-- needs: tracepoints/raw_syscalls__sys_enter tracepoints/raw_syscalls__sys_exit
WITH ev AS (
  SELECT recording, common_tgid AS pid, common_tid AS tid, common_time AS t, id, 0 AS is_exit
  FROM read_parquet('profiles/tracepoints/raw_syscalls__sys_enter/*/*.parquet', hive_partitioning = true)
  UNION ALL
  SELECT recording, common_tgid, common_tid, common_time, id, 1
  FROM read_parquet('profiles/tracepoints/raw_syscalls__sys_exit/*/*.parquet', hive_partitioning = true)),
paired AS (
  SELECT *, lead(is_exit) OVER w AS next_exit, lead(id) OVER w AS next_id, lead(t) OVER w - t AS ns
  FROM ev WINDOW w AS (PARTITION BY recording, tid ORDER BY t, is_exit))
SELECT recording, pid, id AS syscall, count(*) AS calls, sum(ns) AS total_ns,
       quantile_cont(ns, 0.5) AS p50_ns, quantile_cont(ns, 0.99) AS p99_ns, max(ns) AS max_ns
FROM paired WHERE is_exit = 0 AND next_exit = 1 AND next_id = id
GROUP BY recording, pid, id
ORDER BY recording, total_ns DESC, pid, syscall;
