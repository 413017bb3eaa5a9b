-- Sampled addresses in hex (kernel addresses have the top bit set).
SELECT DISTINCT s.recording, s.ip, printf('0x%016x', s.ip) AS ip_hex
FROM samples s
ORDER BY s.recording, s.ip;
