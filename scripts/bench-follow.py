#!/usr/bin/env python3
"""`logsieve serve --follow` under a writer: sustained append rate, lag from
append to searchable (p50/p99), query latency while ingesting vs idle, and
`rg -c` on the same growing file when rg is installed.

Usage: bench-follow.py BIN_DIR OUT_DIR [--seconds S] [--rate LINES_PER_S]
       [--initial LINES] [--gpu auto|on|off]

The writer appends generated lines (`logsieve gen`) in bursts; every 50 ms
a probe line with a unique marker is appended and the time until a count
of the marker answers 1 is its lag. Results: OUT_DIR/follow.json and a
Markdown table OUT_DIR/follow.md. Loopback only.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request


def post(base, path, body):
    req = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.loads(r.read())


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


QUERIES = [
    {"patterns": ["ERROR_503"], "syntax": "literal", "output": "count"},
    {"patterns": ["192.168.1"], "syntax": "literal", "output": "count"},
    {"patterns": ["error"], "syntax": "literal", "ignore_case": True, "output": "count"},
    {"patterns": [r"status=5\d\d"], "output": "count"},
]


def query_latencies(base, seconds):
    out = {i: [] for i in range(len(QUERIES))}
    end = time.time() + seconds
    while time.time() < end:
        for i, q in enumerate(QUERIES):
            t = time.perf_counter()
            post(base, "/api/v1/search", q)
            out[i].append((time.perf_counter() - t) * 1e3)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rate", type=int, default=200_000, help="lines/s the writer aims at")
    ap.add_argument("--initial", type=int, default=1_000_000)
    ap.add_argument("--gpu", default="auto")
    a = ap.parse_args()
    logsieve = os.path.join(a.bin_dir, "logsieve")
    os.makedirs(a.out_dir, exist_ok=True)
    work = os.path.join(a.out_dir, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    log = os.path.join(work, "app.log")
    # The initial corpus and a pool of lines to append.
    subprocess.run([logsieve, "gen", "--lines", str(a.initial), "-o", log], check=True)
    pool_path = os.path.join(a.out_dir, "pool.log")
    subprocess.run(
        [logsieve, "gen", "--lines", str(max(a.rate, 10_000)), "--seed", "7", "-o", pool_path],
        check=True,
    )
    pool = open(pool_path, "rb").read().splitlines(keepends=True)
    srv = subprocess.Popen(
        [logsieve, "serve", "--follow", "--listen", "127.0.0.1:0", "--gpu", a.gpu, work],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = srv.stdout.readline()
        base = line.strip().split()[-1].rstrip("/")
        while get(base, "/api/v1/health")["status"] != "ready":
            time.sleep(0.1)
        health0 = get(base, "/api/v1/health")
        idle = query_latencies(base, min(5, a.seconds / 4))

        stop = threading.Event()
        written = {"lines": 0, "bytes": 0}
        lags = []

        def writer():
            f = open(log, "ab", buffering=0)
            i = 0
            t0 = time.time()
            burst = max(1, a.rate // 100)
            while not stop.is_set():
                chunk = b"".join(pool[(i + k) % len(pool)] for k in range(burst))
                i += burst
                f.write(chunk)
                written["lines"] += burst
                written["bytes"] += len(chunk)
                ahead = written["lines"] / a.rate - (time.time() - t0)
                if ahead > 0:
                    time.sleep(ahead)

        def prober():
            n = 0
            f = open(log, "ab", buffering=0)
            while not stop.is_set():
                n += 1
                marker = f"FOLLOWPROBE{n:09d}X"
                t = time.perf_counter()
                f.write(f"probe {marker}\n".encode())
                while True:
                    r = post(base, "/api/v1/search", {"patterns": [marker], "syntax": "literal", "output": "count"})
                    if r["total"] >= 1:
                        lags.append((time.perf_counter() - t) * 1e3)
                        break
                    if time.perf_counter() - t > 30:
                        lags.append(float("inf"))
                        break
                    time.sleep(0.002)
                time.sleep(0.05)

        tw = threading.Thread(target=writer)
        tp = threading.Thread(target=prober)
        t_start = time.time()
        tw.start()
        tp.start()
        busy = query_latencies(base, a.seconds)
        stop.set()
        tw.join()
        tp.join()
        elapsed = time.time() - t_start
        # Catch up: every written line searchable.
        t = time.time()
        want = health0["lines"] + written["lines"] + len(lags)
        while get(base, "/api/v1/health")["lines"] < want and time.time() - t < 60:
            time.sleep(0.05)
        catch_up = time.time() - t
        health = get(base, "/api/v1/health")
        rg = None
        if shutil.which("rg"):
            rg = []
            for q in ("ERROR_503", "192.168.1"):
                t = time.perf_counter()
                subprocess.run(["rg", "-c", "-F", q, log], stdout=subprocess.DEVNULL)
                rg.append({"pattern": q, "ms": (time.perf_counter() - t) * 1e3})
    finally:
        srv.terminate()
        srv.wait()
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "gpu_mode": a.gpu,
        "backend": health.get("backend"),
        "gpu": health.get("gpu"),
        "initial_lines": health0["lines"],
        "seconds": elapsed,
        "written_lines": written["lines"],
        "written_bytes": written["bytes"],
        "ingest_lines_per_s": written["lines"] / elapsed,
        "ingest_gb_per_s": written["bytes"] / elapsed / 1e9,
        "catch_up_s": catch_up,
        "lag_ms": {"n": len(lags), "p50": pct(lags, 50), "p99": pct(lags, 99), "max": max(lags) if lags else None},
        "query_ms_idle": {json.dumps(QUERIES[i]["patterns"]): {"p50": pct(v, 50), "p99": pct(v, 99), "n": len(v)} for i, v in idle.items()},
        "query_ms_ingesting": {json.dumps(QUERIES[i]["patterns"]): {"p50": pct(v, 50), "p99": pct(v, 99), "n": len(v)} for i, v in busy.items()},
        "rg_c_on_final_file": rg,
        "follow": health.get("follow"),
    }
    with open(os.path.join(a.out_dir, "follow.json"), "w") as f:
        json.dump(res, f, indent=2)
    md = [
        f"# serve --follow ({res['date']}, {res['host']}, {res['cpus']} CPUs, backend {res['backend']} {res['gpu'] or ''})",
        "",
        f"writer: {res['written_lines']:,} lines / {res['written_bytes'] / 1e6:.1f} MB in {res['seconds']:.1f} s = "
        f"{res['ingest_lines_per_s']:,.0f} lines/s, {res['ingest_gb_per_s']:.4f} GB/s (aimed at {a.rate:,} lines/s); "
        f"caught up {res['catch_up_s']:.2f} s after the writer stopped",
        "",
        f"append-to-searchable lag over {len(lags)} probes: p50 {res['lag_ms']['p50']:.1f} ms, p99 {res['lag_ms']['p99']:.1f} ms",
        "",
        "| query | idle p50 ms | idle p99 ms | ingesting p50 ms | ingesting p99 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for k in res["query_ms_idle"]:
        i, b = res["query_ms_idle"][k], res["query_ms_ingesting"][k]
        md.append(f"| {k} | {i['p50']:.2f} | {i['p99']:.2f} | {b['p50']:.2f} | {b['p99']:.2f} |")
    if rg:
        md.append("")
        md.append("rg -c -F on the final file: " + ", ".join(f"{r['pattern']} {r['ms']:.1f} ms" for r in rg))
    with open(os.path.join(a.out_dir, "follow.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    shutil.rmtree(work, ignore_errors=True)
    os.remove(pool_path)


if __name__ == "__main__":
    sys.exit(main())
