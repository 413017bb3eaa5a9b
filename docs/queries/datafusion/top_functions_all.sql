-- Top functions over all recordings, per event.
SELECT s.event, f.dso_name AS dso, f.symbol,
       count(*) AS samples, sum(s.period) AS period,
       round(100.0 * sum(s.period) / sum(sum(s.period)) OVER (PARTITION BY s.event), 2) AS percent
FROM samples s
JOIN frames f ON f.recording = s.recording AND f.frame_id = s.leaf_frame
GROUP BY s.event, f.dso_name, f.symbol
ORDER BY s.event, period DESC, dso, f.symbol;
