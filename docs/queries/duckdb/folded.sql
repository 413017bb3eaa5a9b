-- Folded stacks, root first, per recording and event: the lines of
-- `perfdata collapse --event E` (`stack period`, ready for inferno-flamegraph).
WITH names AS (
    SELECT sf.recording, sf.stack_id,
           string_agg(f.folded_name, ';' ORDER BY sf.depth DESC) AS stack
    FROM stack_frames sf
    JOIN frames f ON f.recording = sf.recording AND f.frame_id = sf.frame_id
    GROUP BY sf.recording, sf.stack_id
)
SELECT s.recording, s.event,
       replace(s.comm, ' ', '_') || coalesce(';' || n.stack, '') AS stack,
       sum(s.period) AS period
FROM samples s
LEFT JOIN names n ON n.recording = s.recording AND n.stack_id = s.stack_id
GROUP BY s.recording, s.event, replace(s.comm, ' ', '_') || coalesce(';' || n.stack, '')
ORDER BY s.recording, s.event, stack;
