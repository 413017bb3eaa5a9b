-- Time per shared object: `perfdata report --sort dso`.
SELECT s.recording, s.event, f.dso_name AS dso, count(*) AS samples, sum(s.period) AS period,
       round(100.0 * sum(s.period) / sum(sum(s.period)) OVER (PARTITION BY s.recording, s.event), 2) AS percent
FROM samples s
JOIN frames f ON f.recording = s.recording AND f.frame_id = s.leaf_frame
GROUP BY s.recording, s.event, f.dso_name
ORDER BY s.recording, s.event, period DESC, dso;
