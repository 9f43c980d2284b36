#!/usr/bin/env python3
"""SQL over a served corpus against the native API and DuckDB, one run.

Each question is asked as SQL (`POST /api/v1/sql`) and through the native
API (`/api/v1/search` count, `/api/v1/stats`) of one `logsieve serve`, over
one keep-alive connection: a warm-up, then the median and p90 of ITERS
hot runs, and the median of a few runs after 0.5 s idle gaps. Answers are
checked equal. With the duckdb module, the filter questions are asked of
DuckDB (all cores) over the same file, one row per line. Prints markdown.

    python3 scripts/bench-sql.py PORT FILE [ITERS]
"""
import http.client
import json
import os
import statistics
import sys
import time

PORT = int(sys.argv[1])
FILE = sys.argv[2]
ITERS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
conn = http.client.HTTPConnection("127.0.0.1", PORT)


def post(path, body):
    data = json.dumps(body)
    t = time.perf_counter()
    conn.request("POST", path, data, {"Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    dt = (time.perf_counter() - t) * 1000
    if r.status != 200:
        raise SystemExit(f"{path} {body}: {r.status} {out[:300]!r}")
    return json.loads(out), dt


def timed(path, body):
    post(path, body)
    post(path, body)
    hot = [post(path, body)[1] for _ in range(ITERS)]
    idle = []
    for _ in range(4):
        time.sleep(0.5)
        idle.append(post(path, body)[1])
    hot.sort()
    return post(path, body)[0], statistics.median(hot), hot[int(len(hot) * 0.9) - 1], statistics.median(idle)


def sql(q):
    return timed("/api/v1/sql", {"query": q, "max_rows": 100000})


LITS = ["ERROR_503", "192.168.1", "error", "NullPointerException", "x"]
REGEX = r"ERROR_5\d\d"
rows = []
newest = post("/api/v1/sql", {"query": "SELECT max(time) AS t FROM logs"})[0]["rows"][0]["t"]
lines_total = post("/api/v1/sql", {"query": "SELECT count(*) AS n FROM logs"})[0]["rows"][0]["n"]
print(f"{lines_total} lines, newest {newest}\n")

questions = []
for lit in LITS:
    esc = lit.replace("'", "''")
    questions.append((f"literal `{lit}`",
                      f"SELECT count(*) AS n FROM logs WHERE line LIKE '%{esc}%'",
                      ("/api/v1/search", {"patterns": [lit], "syntax": "literal", "output": "count"}),
                      f"SELECT count(*) FROM t WHERE contains(line, '{esc}')"))
questions.append((f"regex `{REGEX}`",
                  f"SELECT count(*) AS n FROM logs WHERE line ~ '{REGEX}'",
                  ("/api/v1/search", {"patterns": [REGEX], "syntax": "regex", "output": "count"}),
                  f"SELECT count(*) FROM t WHERE regexp_matches(line, '{REGEX}')"))
questions.append(("15 min → `192.168.1.` → by host",
                  "SELECT host, count(*) AS n FROM logs WHERE time >= TIMESTAMP '%s' - INTERVAL '15 minutes' "
                  "AND line LIKE '%%192.168.1.%%' GROUP BY host" % newest,
                  ("/api/v1/stats", {"patterns": ["192.168.1."], "syntax": "literal", "since": "15m", "count_by": ["host"]}),
                  None))
HEAVY = os.environ.get("SKIP_HEAVY") != "1"
if HEAVY:
  questions.append(("count by level, 1-minute bins",
                  "SELECT level, date_bin(INTERVAL '1 minute', time) AS m, count(*) AS n FROM logs GROUP BY level, m",
                  ("/api/v1/stats", {"count_by": ["level"], "histogram": "1m"}),
                  None))

duck = None
try:
    if not os.path.exists(FILE):
        raise ImportError("no file")
    import duckdb
    duck = duckdb.connect()
    duck.execute("SET enable_progress_bar = false")
    t = time.perf_counter()
    duck.execute(
        "CREATE TABLE t AS SELECT line FROM read_csv(?, columns = {'line': 'VARCHAR'}, "
        "delim = chr(1), quote = '', escape = '', header = false, auto_detect = false, new_line = '\\n')",
        [FILE])
    threads = duck.execute("SELECT current_setting('threads')").fetchone()[0]
    print(f"duckdb {duckdb.__version__}, {threads} threads, loaded in {time.perf_counter() - t:.2f} s\n")
except ImportError:
    print("duckdb: not installed, its column left empty\n")


def duck_time(q):
    n = duck.execute(q).fetchone()[0]
    ts = []
    for _ in range(10):
        t = time.perf_counter()
        duck.execute(q).fetchone()
        ts.append((time.perf_counter() - t) * 1000)
    return n, statistics.median(ts)


print("| question | SQL hot ms (p90) | native hot ms (p90) | SQL − native ms | SQL idle ms | native idle ms | DuckDB ms | DuckDB / SQL | answers |")
print("|---|---|---|---|---|---|---|---|---|")
for name, q, (path, body), dq in questions:
    a, s_med, s_p90, s_idle = sql(q)
    b, n_med, n_p90, n_idle = timed(path, body)
    if path.endswith("search"):
        ok = a["rows"][0]["n"] == b["total"]
        what = f"{b['total']} lines"
    elif "histogram" in body:
        ok = sum(r["n"] for r in a["rows"]) == b["selected"]
        what = f"{a['row_count']} groups, {b['selected']} lines"
    else:
        got = {r.get("host"): r["n"] for r in a["rows"]}
        want = {g["key"]["host"]: g["count"] for g in b["groups"]}
        ok = got == want
        what = f"{len(got)} hosts, {sum(got.values())} lines"
    dcol, ratio = "", ""
    if duck is not None and dq is not None:
        dn, dms = duck_time(dq)
        ok = ok and dn == a["rows"][0]["n"]
        dcol, ratio = f"{dms:.2f}", f"{dms / s_med:.1f}×"
    print(f"| {name} | {s_med:.3f} ({s_p90:.3f}) | {n_med:.3f} ({n_p90:.3f}) | {s_med - n_med:+.3f} | "
          f"{s_idle:.3f} | {n_idle:.3f} | {dcol} | {ratio} | {what}{'' if ok else ' **DIFFER**'} |")

if not HEAVY:
    raise SystemExit(0)
# A join of the lines with a 10k-pattern watchlist (user ids), through
# matches(): SQL only (the per-pattern count is the native form of a
# different question: lines per pattern, not joined rows).
pats = [f"user=u{10000 + 9 * i}" for i in range(10000)]
conn.request("PUT", "/api/v1/watchlists/users10k", json.dumps({"patterns": pats}), {"Content-Type": "application/json"})
conn.getresponse().read()
q = ("SELECT w.pattern, count(*) AS n FROM (SELECT unnest(matches(line, 'users10k')) AS idx FROM logs) m "
     "JOIN watchlist_users10k w ON m.idx = w.idx GROUP BY w.pattern ORDER BY n DESC LIMIT 5")
a, s_med, s_p90, s_idle = sql(q)
print(f"\njoin with a 10k watchlist (matches + unnest + join + group by): {s_med:.1f} ms hot (p90 {s_p90:.1f}), "
      f"{s_idle:.1f} ms idle; top pattern {a['rows'][0]}")
