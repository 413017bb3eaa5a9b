-- Samples per 10 ms since each recording's first sample, per event (samples without a
-- time are left out).
WITH first AS (SELECT recording, min(time) AS t0 FROM samples GROUP BY recording)
SELECT s.recording, s.event, (s.time - first.t0) // 10000000 AS bucket,
       count(*) AS samples, sum(s.period) AS period
FROM samples s
JOIN first ON first.recording = s.recording
WHERE s.time IS NOT NULL
GROUP BY s.recording, s.event, (s.time - first.t0) // 10000000
ORDER BY s.recording, s.event, bucket;
