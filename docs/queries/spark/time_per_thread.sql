-- Time per thread and event, with the thread's last name and every name it had.
SELECT s.recording, s.event, s.pid, s.tid, t.comm, array_join(t.comms, ',') AS names,
       count(*) AS samples, sum(s.period) AS period
FROM samples s
JOIN threads t ON t.recording = s.recording AND t.pid = s.pid AND t.tid = s.tid
GROUP BY s.recording, s.event, s.pid, s.tid, t.comm, t.comms
ORDER BY s.recording, s.event, period DESC, s.tid;
