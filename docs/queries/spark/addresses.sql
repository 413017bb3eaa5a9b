-- Sampled addresses in hex (kernel addresses have the top bit set). Spark reads uint64 as
-- decimal(20,0): conv() on its decimal text, not hex() or a cast to BIGINT, which
-- overflow.
SELECT DISTINCT s.recording, s.ip, '0x' || lpad(lower(conv(CAST(s.ip AS STRING), 10, 16)), 16, '0') AS ip_hex
FROM samples s
ORDER BY s.recording, s.ip;
