-- Bytes read and written per process and file descriptor: each syscalls:sys_enter_read
-- (sys_enter_write) with its thread's next event, when that is the sys_exit of the same
-- call; the exit's ret is the bytes moved, or an error (< 0: counted in failed).
-- needs: tracepoints/syscalls__sys_enter_read tracepoints/syscalls__sys_exit_read
-- needs: tracepoints/syscalls__sys_enter_write tracepoints/syscalls__sys_exit_write
WITH ev AS (
  SELECT recording, common_tgid AS pid, common_tid AS tid, common_time AS t, 'read' AS op,
         CAST(fd AS BIGINT) AS fd, CAST(NULL AS BIGINT) AS ret, 0 AS is_exit
  FROM syscalls__sys_enter_read
  UNION ALL
  SELECT recording, common_tgid, common_tid, common_time, 'read', NULL, ret, 1
  FROM syscalls__sys_exit_read
  UNION ALL
  SELECT recording, common_tgid, common_tid, common_time, 'write', CAST(fd AS BIGINT), NULL, 0
  FROM syscalls__sys_enter_write
  UNION ALL
  SELECT recording, common_tgid, common_tid, common_time, 'write', NULL, ret, 1
  FROM syscalls__sys_exit_write),
paired AS (
  SELECT *,
         lead(is_exit) OVER (PARTITION BY recording, tid ORDER BY t, is_exit) AS next_exit,
         lead(op) OVER (PARTITION BY recording, tid ORDER BY t, is_exit) AS next_op,
         lead(ret) OVER (PARTITION BY recording, tid ORDER BY t, is_exit) AS got
  FROM ev)
SELECT recording, pid, fd,
       sum(CASE WHEN op = 'read' THEN 1 ELSE 0 END) AS reads,
       sum(CASE WHEN op = 'read' AND got >= 0 THEN got ELSE 0 END) AS bytes_read,
       sum(CASE WHEN op = 'write' THEN 1 ELSE 0 END) AS writes,
       sum(CASE WHEN op = 'write' AND got >= 0 THEN got ELSE 0 END) AS bytes_written,
       sum(CASE WHEN got < 0 THEN 1 ELSE 0 END) AS failed
FROM paired WHERE is_exit = 0 AND next_exit = 1 AND next_op = op
GROUP BY recording, pid, fd
ORDER BY recording, bytes_read + bytes_written DESC, pid, fd
