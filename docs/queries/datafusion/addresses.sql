-- Sampled addresses in hex (kernel addresses have the top bit set).
SELECT DISTINCT s.recording, s.ip, '0x' || lpad(to_hex(s.ip), 16, '0') AS ip_hex
FROM samples s
ORDER BY s.recording, s.ip;
