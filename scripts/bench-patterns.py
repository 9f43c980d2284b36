#!/usr/bin/env python3
"""Log templates: logsieve's miner against drain3, one run (docs/bench/*-patterns.md).

    python3 scripts/bench-patterns.py BIN LOGFILE [DRAIN3_SECONDS] [LOGHUB_DIR TRUTH_DIR]

- logsieve: `BIN serve LOGFILE --gpu on` (the corpus resident, lines
  grouped by shape on the GPU) and `--gpu off` (grouped on every core),
  each `POST /api/v1/patterns/templates` with 1 m steps: the first ask,
  the median of 10 hot asks, the median of 3 asks after 1.5 s idle (the
  two answers must be identical); and
  `BIN patterns LOGFILE --json` as one process (read, mine, print).
- drain3 (Python, the reference Drain implementation; depth 4,
  similarity 0.4 as logsieve's defaults; no masking) over the same lines,
  in this process, for at most DRAIN3_SECONDS (default 300): the lines it
  got through and their rate. It keeps no counts over time.
- With LOGHUB_DIR and TRUTH_DIR (`*_2k.log_eventids.txt`): drain3's
  grouping accuracy on each Loghub 2k sample, whole lines as logsieve's
  test (`crates/logsieve/tests/patterns_loghub.rs`) feeds its miner, by
  the same measure, without masking and with the masking of drain3's
  example configuration.
Prints markdown.
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig

BIN, LOG = sys.argv[1], sys.argv[2]
DRAIN_S = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
LOGHUB = sys.argv[4] if len(sys.argv) > 5 else None
TRUTH = sys.argv[5] if len(sys.argv) > 5 else None
PORT = 8797


# drain3's example configuration's masking (examples/drain3.ini): IDs,
# IPs, hex sequences, hex and plain numbers, masked before mining.
EXAMPLE_MASKING = [
    (r"((?<=[^A-Za-z0-9])|^)(([0-9a-f]{2,}:){3,}([0-9a-f]{2,}))((?=[^A-Za-z0-9])|$)", "ID"),
    (r"((?<=[^A-Za-z0-9])|^)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})((?=[^A-Za-z0-9])|$)", "IP"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9a-f]{6,} ?){3,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9A-F]{4} ?){4,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)(0x[a-f0-9A-F]+)((?=[^A-Za-z0-9])|$)", "HEX"),
    (r"((?<=[^A-Za-z0-9])|^)([\-\+]?\d+)((?=[^A-Za-z0-9])|$)", "NUM"),
    (r"(?<=executed cmd )(\".+?\")", "CMD"),
]


def miner(masked=False):
    c = TemplateMinerConfig()
    c.drain_depth = 4
    c.drain_sim_th = 0.4
    c.profiling_enabled = False
    if masked:
        from drain3.masking import MaskingInstruction
        c.masking_instructions = [MaskingInstruction(r, m) for r, m in EXAMPLE_MASKING]
    return TemplateMiner(config=c)


def lines_of(path):
    data = open(path, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l.decode("utf-8", "replace") for l in lines]


def accuracy(pred, truth):
    size = {}
    for t in truth:
        size[t] = size.get(t, 0) + 1
    groups = {}
    for i, p in enumerate(pred):
        groups.setdefault(p, []).append(i)
    ok = 0
    for members in groups.values():
        first = truth[members[0]]
        if all(truth[i] == first for i in members) and size[first] == len(members):
            ok += len(members)
    return ok / len(pred)


def post(conn, body):
    t = time.perf_counter()
    conn.request("POST", "/api/v1/patterns/templates", json.dumps(body),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    dt = (time.perf_counter() - t) * 1000
    if r.status != 200:
        raise SystemExit(f"templates: {r.status} {out[:300]!r}")
    return json.loads(out), dt


def serve_and_ask(gpu):
    """`serve LOG --gpu GPU`: ready time, first / hot / idle asks, the answer,
    and the GPU grouping's trace lines (LOGSIEVE_TRACE_QUERIES=1)."""
    env = dict(os.environ, LOGSIEVE_TRACE_QUERIES="1")
    srv = subprocess.Popen([BIN, "serve", LOG, "--gpu", gpu, "--listen", f"127.0.0.1:{PORT}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        t0 = time.perf_counter()
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", PORT)
                c.request("GET", "/api/v1/health")
                h = json.loads(c.getresponse().read())
                if h.get("status") == "ready":
                    break
            except OSError:
                pass
            if time.perf_counter() - t0 > 300:
                raise SystemExit("serve did not get ready")
            time.sleep(0.1)
        print(f"serve --gpu {gpu} ready in {time.perf_counter() - t0:.2f} s: {h.get('lines')} lines, backend {h.get('backend')}\n")
        conn = http.client.HTTPConnection("127.0.0.1", PORT)
        body = {"step": "1m", "limit": 100}
        first, t_first = post(conn, body)
        hot = [post(conn, body)[1] for _ in range(10)]
        idle = []
        for _ in range(3):
            time.sleep(1.5)
            idle.append(post(conn, body)[1])
    finally:
        srv.terminate()
        _, err = srv.communicate()
    trace = [l for l in err.splitlines() if "shape grouping" in l]
    return first, t_first, hot, idle, trace


rows = {}
for gpu in ("on", "off"):
    rows[gpu] = serve_and_ask(gpu)
first = rows["on"][0]
if rows["off"][0] != first:
    raise SystemExit("templates differ between --gpu on and --gpu off")
print("templates: --gpu on and --gpu off answers identical\n")
for l in rows["on"][4][-3:]:
    print(f"    {l}")
print()
ours = first.get("total", len(first.get("templates", [])))

t = time.perf_counter()
cli = subprocess.run([BIN, "patterns", LOG, "--json"], capture_output=True, check=True)
t_cli = (time.perf_counter() - t) * 1000
cli_total = json.loads(cli.stdout).get("total")

lines = lines_of(LOG)
m = miner()
t = time.perf_counter()
done = 0
for l in lines:
    m.add_log_message(l)
    done += 1
    if done % 1000 == 0 and time.perf_counter() - t > DRAIN_S:
        break
t_drain = time.perf_counter() - t

print("| miner | lines | templates | time | lines/s |")
print("|---|---|---|---|---|")
for gpu, what in (("on", "groups on the GPU"), ("off", "`--gpu off`, groups on every core")):
    _, t_first, hot, idle, _ = rows[gpu]
    print(f"| logsieve, `serve` resident, {what}, `POST /api/v1/patterns/templates` (1 m steps): first / hot / idle | {len(lines)} | {ours} | "
          f"{t_first:.1f} / {statistics.median(hot):.1f} / {statistics.median(idle):.1f} ms | "
          f"{len(lines) / statistics.median(hot) * 1000:,.0f} (hot) |")
print(f"| logsieve, `patterns --json` one process (read, mine, print) | {len(lines)} | {cli_total} | {t_cli:.1f} ms | "
      f"{len(lines) / t_cli * 1000:,.0f} |")
cut = "" if done == len(lines) else f" (stopped at {DRAIN_S:.0f} s)"
print(f"| drain3 {getattr(__import__('drain3'), '__version__', '0.9.11')}, one Python thread, templates only{cut} | {done} | "
      f"{len(m.drain.clusters)} | {t_drain:.1f} s | {done / t_drain:,.0f} |")

if LOGHUB and TRUTH:
    print("\n| Loghub 2k sample | drain3 templates | drain3 grouping accuracy | drain3 with the example masking: templates | accuracy |")
    print("|---|---|---|---|---|")
    accs, maccs = [], []
    for name in sorted(f[:-len("_2k.log")] for f in os.listdir(LOGHUB) if f.endswith("_2k.log")):
        truth_path = os.path.join(TRUTH, f"{name}_2k.log_eventids.txt")
        if not os.path.exists(truth_path):
            continue
        ls = lines_of(os.path.join(LOGHUB, f"{name}_2k.log"))
        truth = open(truth_path).read().splitlines()
        row = []
        for masked, out in ((False, accs), (True, maccs)):
            mm = miner(masked)
            pred = [mm.add_log_message(l.rstrip("\r"))["cluster_id"] for l in ls]
            out.append(accuracy(pred, truth))
            row.append(f"{len(mm.drain.clusters)} | {out[-1]:.3f}")
        print(f"| {name} | {' | '.join(row)} |")
    print(f"| mean | | {sum(accs) / len(accs):.3f} | | {sum(maccs) / len(maccs):.3f} |")
