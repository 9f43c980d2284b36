#!/usr/bin/env python3
"""SQL over a cluster against one `serve` node, one run (docs/bench/*-cluster.md).

    python3 scripts/bench-cluster.py BIN SERVE_PORT ADDRS[;ADDRS...] [ITERS]

The questions are the reference literals' counts, a regex and the
15 min -> `192.168.1.` -> count by host query. Each is asked of the serve
node (`POST /api/v1/sql`, one keep-alive connection) and of each cluster
(`BIN sql --cluster ADDRS --timing`, one coordinator process reading
statements from a pipe; the time is the coordinator's, from its
`--timing` line): the first ask, the median of ITERS hot asks, and the
median of 3 asks after 1.5 s idle gaps (longer than the coordinator
reuses a placement, so each pays the workers' status round trip). Answers are checked equal to the
serve node's. Prints markdown.
"""
import http.client
import json
import re
import statistics
import subprocess
import sys
import time

BIN = sys.argv[1]
PORT = int(sys.argv[2])
CLUSTERS = [c for c in sys.argv[3].split(";") if c]
ITERS = int(sys.argv[4]) if len(sys.argv) > 4 else 30
# Idle gaps longer than the coordinator's placement reuse (1 s): an
# interactive ask pays the workers' status round trip.
IDLE_S = 1.5
IDLE_ASKS = 3
conn = http.client.HTTPConnection("127.0.0.1", PORT)


def post(q):
    t = time.perf_counter()
    conn.request("POST", "/api/v1/sql", json.dumps({"query": q}), {"Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    dt = (time.perf_counter() - t) * 1000
    if r.status != 200:
        raise SystemExit(f"{q}: {r.status} {out[:300]!r}")
    return json.loads(out)["rows"], dt


def serve_times(q):
    first = post(q)
    hot = [post(q)[1] for _ in range(ITERS)]
    idle = []
    for _ in range(IDLE_ASKS):
        time.sleep(IDLE_S)
        idle.append(post(q)[1])
    return first[0], first[1], statistics.median(hot), statistics.median(idle)


class Coordinator:
    """One `sql --cluster` process; statements in, timings out."""

    def __init__(self, addrs):
        self.n = len(addrs.split(","))
        self.p = subprocess.Popen(
            [BIN, "sql", "--cluster", addrs, "--timing", "--format", "ndjson"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def ask(self, q):
        self.p.stdin.write(q + ";\n")
        self.p.stdin.flush()
        line = self.p.stderr.readline()
        while line and " in " not in line:
            sys.stderr.write("coordinator: " + line)
            line = self.p.stderr.readline()
        if not line or line.startswith("failed"):
            raise SystemExit(f"cluster: {q}: {line!r}")
        rows = int(line.split()[0])
        out = [json.loads(self.p.stdout.readline()) for _ in range(rows)]
        return out, float(line.split(" in ")[1].split()[0])

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def same(a, b):
    key = lambda r: json.dumps(r, sort_keys=True)
    return sorted(map(key, a)) == sorted(map(key, b))


newest = post("SELECT max(time) AS t FROM logs")[0][0]["t"]
total = post("SELECT count(*) AS n FROM logs")[0][0]["n"]
print(f"{total} lines, newest {newest}\n")
LITS = ["ERROR_503", "192.168.1", "error", "NullPointerException", "x"]
questions = [(f"literal `{x}`", f"SELECT count(*) AS n FROM logs WHERE line LIKE '%{x}%'") for x in LITS]
questions.append(("regex `ERROR_5\\d\\d`", "SELECT count(*) AS n FROM logs WHERE line ~ 'ERROR_5\\d\\d'"))
# No shard matches: every worker answers without a search, so this is
# the path alone (planning, one round trip per worker, the final merge).
questions.append(("no row (`file = 'none'`): the path alone",
                  "SELECT count(*) AS n FROM logs WHERE file = 'none'"))
questions.append(("15 min → `192.168.1.` → by host",
                  "SELECT host, count(*) AS n FROM logs WHERE time >= TIMESTAMP '%s' - INTERVAL '15 minutes' "
                  "AND line LIKE '%%192.168.1.%%' GROUP BY host" % newest))

ref = {}
for name, q in questions:
    ref[name] = serve_times(q)

head = "| question | serve: first / hot / idle ms |"
sep = "|---|---|"
for c in CLUSTERS:
    n = len(c.split(","))
    head += f" {n} worker(s): first / hot / idle ms | added hot ms |"
    sep += "---|---|"
print(head)
print(sep)
coords = [Coordinator(c) for c in CLUSTERS]
breakdown = []
rows = {name: f"| {name} | {ref[name][1]:.2f} / {ref[name][2]:.3f} / {ref[name][3]:.3f} |" for name, _ in questions}
for co in coords:
    for name, q in questions:
        want = ref[name][0]
        got, first = co.ask(q)
        hot = [co.ask(q)[1] for _ in range(ITERS)]
        idle = []
        for _ in range(IDLE_ASKS):
            time.sleep(IDLE_S)
            idle.append(co.ask(q)[1])
        h = statistics.median(hot)
        ok = "" if same(got, want) else " **DIFFER**"
        rows[name] += f" {first:.2f} / {h:.3f} / {statistics.median(idle):.3f}{ok} | {h - ref[name][2]:+.3f} |"
    # Where a hot query's time goes: the distributed plan's own metrics.
    plan = co.ask("EXPLAIN ANALYZE " + questions[0][1])[0]
    text = " ".join(r.get("plan", "") for r in plan)
    keys = r"plan_send_latency_avg=\{[^}]*\}|plan_executed_at=\{[^}]*\}|plan_finished_at=\{[^}]*\}|network_latency_sum=[^,]+"
    breakdown.append((co.n, re.findall(keys, text)))
    co.close()
for name, _ in questions:
    print(rows[name])
print(f"\nEXPLAIN ANALYZE of {questions[0][0]} (hot), per cluster:\n")
for n, found in breakdown:
    print(f"- {n} worker(s): " + "; ".join(f"`{x}`" for x in found))
