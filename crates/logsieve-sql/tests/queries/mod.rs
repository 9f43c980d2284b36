//! The SQL queries every front end is checked on (the library's oracle
//! test, the CLI, the API and `--server`), and the edge lines they run
//! over besides generated logs.

#![allow(dead_code)]

/// Lines no generator writes: a preamble before the first stamp, no
/// level, invalid UTF-8, an empty line, CRLF, `%` and `_` in the text.
pub const EDGE: &[u8] = b"preamble line without time\n\
second preamble ERROR before any stamp\n\
2026-11-20T10:00:00Z web-01 INFO ok from 192.168.1.7\n\
2026-11-20T10:00:00.500Z web-01 INFO half a second later\n\
\n\
2026-11-20T10:05:00Z web-02 ERROR failed from 192.168.1.9 user_id=42 100% done\n\
continuation of the error, no stamp\n\
2026-11-20T10:10:00Z web-03 bad \xff\xfe bytes ERROR\n\
2026-11-20T10:15:00Z web-01 WARN retry 50%_x\r\n\
2026-11-20T10:20:00Z web-01 INFO ok from 192.168.1.4\n";

/// The table of queries: pushable filters alone, combined, negated,
/// mixed with predicates DataFusion keeps.
pub const QUERIES: &[&str] = &[
    "SELECT count(*) FROM logs",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%'",
    "SELECT count(*) FROM logs WHERE line ILIKE '%error%'",
    "SELECT count(*) FROM logs WHERE line NOT LIKE '%ERROR%'",
    "SELECT count(*) FROM logs WHERE line NOT ILIKE '%error%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '2026-11-20T10%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%ssh2'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%user_id=4_%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%100\\% done%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%50\\%\\_x%' ESCAPE '\\'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%a%b%c%'",
    "SELECT count(*) FROM logs WHERE line LIKE '%'",
    "SELECT count(*) FROM logs WHERE line LIKE ''",
    "SELECT count(*) FROM logs WHERE line = ''",
    "SELECT count(*) FROM logs WHERE line <> ''",
    "SELECT file, line_number FROM logs WHERE line = 'continuation of the error, no stamp'",
    "SELECT file, line_number FROM logs WHERE line IN ('continuation of the error, no stamp', 'preamble line without time')",
    "SELECT count(*) FROM logs WHERE line NOT IN ('continuation of the error, no stamp', '')",
    "SELECT count(*) FROM logs WHERE contains(line, 'timeout')",
    "SELECT count(*) FROM logs WHERE strpos(line, 'timeout') > 0",
    "SELECT count(*) FROM logs WHERE strpos(line, 'timeout') = 0",
    "SELECT count(*) FROM logs WHERE starts_with(line, 'Nov 20')",
    "SELECT count(*) FROM logs WHERE ends_with(line, 'ssh2')",
    "SELECT count(*) FROM logs WHERE regexp_like(line, 'status=5[0-9]{2}|HTTP/1.1\" 5')",
    "SELECT count(*) FROM logs WHERE regexp_like(line, 'failed PASSWORD', 'i')",
    "SELECT count(*) FROM logs WHERE line ~ 'latency_ms=[0-9]{4}'",
    "SELECT count(*) FROM logs WHERE grep(line, 'latency_ms=[0-9]{4}')",
    "SELECT count(*) FROM logs WHERE grep(line, 'error', 'iw')",
    "SELECT count(*) FROM logs WHERE grep(line, 'ok', 'Fw')",
    "SELECT count(*) FROM logs WHERE grep(line, '', 'Fx')",
    "SELECT count(*) FROM logs WHERE grep(line, 'preamble.*', 'x')",
    "SELECT file, count(*) FROM logs WHERE grep(line, 'failed', 'Fw') OR grep(line, 'timeout', 'Fw') GROUP BY file",
    "SELECT count(*) FROM logs WHERE NOT grep(line, 'INFO', 'F')",
    "SELECT count(*) FROM logs WHERE grep(line, 'ERROR', 'F') OR length(line) > 120",
    "SELECT line_number, grep(line, 'u7', 'Fw') AS hit FROM logs WHERE file = 'edge.log'",
    "SELECT count(*) FROM logs WHERE line ~* 'WARN.*threshold'",
    "SELECT count(*) FROM logs WHERE line !~ 'INFO'",
    "SELECT count(*) FROM logs WHERE line !~* 'info'",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' AND line LIKE '%upstream%'",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' OR line LIKE '%WARN%'",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' OR line ILIKE '%warn%' OR line ~ 'sshd\\[[0-9]+\\]'",
    "SELECT count(*) FROM logs WHERE NOT (line LIKE '%ERROR%' OR line LIKE '%WARN%')",
    "SELECT count(*) FROM logs WHERE NOT (line LIKE '%ERROR%' AND level = 'ERROR')",
    "SELECT count(*) FROM logs WHERE level = 'ERROR'",
    "SELECT count(*) FROM logs WHERE level <> 'INFO'",
    "SELECT count(*) FROM logs WHERE NOT level = 'INFO'",
    "SELECT count(*) FROM logs WHERE level IN ('ERROR', 'WARN')",
    "SELECT count(*) FROM logs WHERE level NOT IN ('ERROR', 'WARN')",
    "SELECT count(*) FROM logs WHERE level IS NULL",
    "SELECT count(*) FROM logs WHERE level IS NOT NULL",
    "SELECT count(*) FROM logs WHERE host = 'web-01' AND level = 'INFO'",
    "SELECT count(*) FROM logs WHERE host = 'web-01' OR line LIKE '%sshd%'",
    "SELECT count(*) FROM logs WHERE user = 'u76778' OR user IS NULL",
    "SELECT count(*) FROM logs WHERE file = 'edge.log'",
    "SELECT count(*) FROM logs WHERE file <> 'edge.log' AND line LIKE '%GET%'",
    "SELECT count(*) FROM logs WHERE file IN ('edge.log', 'nope.log')",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' AND file IN ('edge.log', 'nope.log')",
    "SELECT count(*) FROM logs WHERE file = 'nope.log' AND line LIKE '%GET%'",
    "SELECT count(*) FROM logs WHERE file NOT IN ('edge.log') AND level = 'ERROR'",
    "SELECT file, count(*) FROM logs WHERE file <> 'edge.log' AND line LIKE '%ERROR%' GROUP BY file ORDER BY file",
    "SELECT file, line_number FROM logs WHERE file = 'edge.log' AND line NOT LIKE '%ok%'",
    "SELECT count(*) FROM logs WHERE time IS NULL",
    "SELECT count(*) FROM logs WHERE time IS NOT NULL",
    "SELECT count(*) FROM logs WHERE time >= TIMESTAMP '2026-11-20T10:05:00Z'",
    "SELECT count(*) FROM logs WHERE time > TIMESTAMP '2026-11-20T10:05:00Z'",
    "SELECT count(*) FROM logs WHERE time < TIMESTAMP '2026-11-20T10:00:00.5Z'",
    "SELECT count(*) FROM logs WHERE time <= '2026-11-20T10:00:00.5Z'",
    "SELECT count(*) FROM logs WHERE time = TIMESTAMP '2026-11-20T10:00:00Z'",
    "SELECT count(*) FROM logs WHERE time BETWEEN TIMESTAMP '2026-11-20T10:00:00Z' AND TIMESTAMP '2026-11-20T10:15:00Z'",
    "SELECT count(*) FROM logs WHERE time NOT BETWEEN TIMESTAMP '2026-11-20T10:00:00Z' AND TIMESTAMP '2026-11-20T10:15:00Z'",
    "SELECT count(*) FROM logs WHERE NOT time > TIMESTAMP '2026-11-20T06:00:00Z'",
    "SELECT count(*) FROM logs WHERE time > TIMESTAMP '2026-11-20T10:00:00Z' - INTERVAL '15 minutes' AND line LIKE '%192.168.1.%'",
    "SELECT host, count(*) AS n FROM logs WHERE time >= TIMESTAMP '2026-11-20T09:45:00Z' AND line LIKE '%192.168.1.%' GROUP BY host ORDER BY n DESC, host",
    "SELECT level, count(*) AS n FROM logs GROUP BY level ORDER BY level NULLS LAST",
    "SELECT level, date_bin(INTERVAL '1 hour', time) AS t, count(*) AS n FROM logs GROUP BY level, t ORDER BY t NULLS FIRST, level NULLS FIRST",
    "SELECT user, count(*) AS n FROM logs WHERE line LIKE '%ERROR%' GROUP BY user ORDER BY n DESC, user NULLS LAST LIMIT 5",
    "SELECT file, line_number, line FROM logs WHERE line LIKE '%ERROR%' ORDER BY line_number DESC LIMIT 7",
    "SELECT file, line_number FROM logs WHERE line LIKE '%ERROR%' LIMIT 3",
    "SELECT file, line_number, byte_offset FROM logs LIMIT 4",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' AND length(line) > 150",
    "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' AND (length(line) > 150 OR level = 'WARN')",
    "SELECT count(*) FROM logs WHERE line_number % 7 = 0 AND line ILIKE '%get%'",
    "SELECT count(DISTINCT user) FROM logs WHERE line ~ 'Failed|failed'",
    "SELECT file, line_number, line_bytes FROM logs WHERE line LIKE '%bad%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%bytes ERROR'",
    "SELECT count(*) FROM logs WHERE line LIKE '%\u{FFFD}%'",
    "SELECT file, line_number FROM logs WHERE line LIKE '%50\\%\\_x\r'",
    "SELECT w.pattern, count(*) AS n FROM (SELECT unnest(matches(line, 'iocs')) AS idx FROM logs) m JOIN watchlist_iocs w ON m.idx = w.idx GROUP BY w.pattern ORDER BY n DESC, w.pattern",
    "SELECT count(*) FROM logs WHERE cardinality(matches(line, 'iocs')) > 1",
    "SELECT l.host, count(*) FROM logs l JOIN watchlist_iocs w ON contains(l.line, w.pattern) WHERE l.file = 'edge.log' GROUP BY l.host ORDER BY l.host",
];
