-- Time per process and event, named by its main thread's last name (`threads` has one
-- row per thread, so the join meets one row).
SELECT s.recording, s.event, s.pid, coalesce(t.comm, '') AS comm,
       count(*) AS samples, sum(s.period) AS period
FROM samples s
LEFT JOIN threads t ON t.recording = s.recording AND t.pid = s.pid AND t.tid = s.pid
GROUP BY s.recording, s.event, s.pid, t.comm
ORDER BY s.recording, s.event, period DESC, s.pid;
