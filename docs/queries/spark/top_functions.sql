-- Top functions of each recording, per event: `perfdata report --sort dso,sym` (samples,
-- period, and the share of the event's period in that recording).
SELECT s.recording, s.event, f.dso_name AS dso, f.symbol,
       count(*) AS samples, sum(s.period) AS period,
       round(100.0 * sum(s.period) / sum(sum(s.period)) OVER (PARTITION BY s.recording, s.event), 2) AS percent
FROM samples s
JOIN frames f ON f.recording = s.recording AND f.frame_id = s.leaf_frame
GROUP BY s.recording, s.event, f.dso_name, f.symbol
ORDER BY s.recording, s.event, period DESC, dso, f.symbol;
