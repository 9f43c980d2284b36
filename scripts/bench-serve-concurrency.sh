#!/bin/bash
# The `logsieve serve` concurrency bench of
# docs/bench/h200-2026-12-01-serve-concurrency.md, in one device call:
# generated corpora in memory (`serve --demo`), serve-load's clients over
# loopback HTTP, every answer checked against the CPU engine in the same
# run; `LOGSIEVE_NO_FUSE=1` (no fused batches, no coalesced counts) is the
# before (SKIP_NOFUSE=1 leaves it out). PART=1m, 200m or both (default).
#
# usage: scripts/bench-serve-concurrency.sh BIN_DIR OUT_DIR
#   BIN_DIR: logsieve, serve-load, regex
set -u
B=$1
OUT=$2
PART=${PART:-both}
L=$B/logsieve
SL=$B/serve-load
mkdir -p "$OUT"
echo "cores: $(nproc)"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader 2>/dev/null

# 16 literals of the generated logs (4+ bytes, case as written), and 3
# regexes.
LITS="ERROR_503,192.168.1,NullPointerException,deadlock,Failed password,ERROR_502,pool exhausted,TimeoutException,Connection reset,ChargeService,svc-billing,/api/v2/cart,python-requests,health check,queue depth,audit record"
REGEXES='ERROR_5\d\d;user=u9\d{4}\b;rt=1\.\d{3}'

http_get() { # PORT PATH
    exec 3<>/dev/tcp/127.0.0.1/$1 || return 1
    printf 'GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' "$2" >&3
    timeout 5 cat <&3
    exec 3<&-
}

start() { # NAME PORT ARGS...
    local name=$1 port=$2
    shift 2
    local t0=$(date +%s.%N)
    "$L" serve --listen 127.0.0.1:$port "$@" >"$OUT/serve-$name.log" 2>&1 &
    echo $! >/tmp/pid-$port
    for _ in $(seq 1 3000); do
        http_get $port /api/v1/health 2>/dev/null | grep -q '"ready"' && break
        sleep 0.05
    done
    echo "== server $name ($*) ready after $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
    http_get $port /api/v1/health | tail -1
    echo
}

stop() { # NAME PORT
    http_get $2 /metrics >"$OUT/metrics-$1.txt" 2>/dev/null
    grep -E '^logsieve_gpu_(fused|one)|^logsieve_counts_coalesced|^logsieve_errors|^logsieve_routes' "$OUT/metrics-$1.txt"
    kill "$(cat /tmp/pid-$2)"
    wait "$(cat /tmp/pid-$2)" 2>/dev/null
}

load() { # LABEL PORT ARGS...
    local label=$1 port=$2
    shift 2
    printf '%-40s ' "$label"
    "$SL" --addr 127.0.0.1:$port --expect-file "$OUT/expect-$port.tsv" "$@" 2>&1 | tee -a "$OUT/load-raw.txt"
}

stats_twice() { # PORT: the first stats query after the columns' upload, and the next
    python3 - "$1" <<'EOF'
import http.client, json, sys, time
port = int(sys.argv[1])
body = json.dumps({"count_by": ["level"], "histogram": "1h"})
# The first user query has another shape than the one the load ran.
bodies = [json.dumps({"count_by": ["host"], "since": "1h", "histogram": "5m"})] * 2 + [body]
for k, b in zip(("first", "second", "third"), bodies):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    c.request("POST", "/api/v1/stats", b, {"Content-Type": "application/json"})
    r = c.getresponse()
    d = json.loads(r.read())
    ms = (time.perf_counter() - t) * 1e3
    print(f"stats {k}: HTTP {r.status} {ms:.1f} ms, selected {d.get('selected')}, backend {d.get('backend', {}).get('name') if isinstance(d.get('backend'), dict) else d.get('backend')}")
EOF
}

patterns_gpu() { # PORT: the 16 literals' per-pattern counts on the GPU (bloom)
    python3 - "$1" "$LITS" <<'EOF'
import http.client, json, sys, time
port, lits = int(sys.argv[1]), sys.argv[2].split(",")
for k in range(3):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    t = time.perf_counter()
    c.request("POST", "/api/v1/patterns", json.dumps({"patterns": lits, "syntax": "literal", "backend": "gpu"}), {"Content-Type": "application/json"})
    r = c.getresponse()
    d = json.loads(r.read())
    ms = (time.perf_counter() - t) * 1e3
    print(f"patterns x16 on the GPU, run {k}: HTTP {r.status} {ms:.1f} ms; {d.get('backend')}")
EOF
}

wait_stats() { # PORT: until /health says where stats run from
    for _ in $(seq 1 1200); do
        s=$(http_get $1 /api/v1/health 2>/dev/null | tail -1 | grep -o '"stats_columns":"[^"]*"')
        case "$s" in *uploading*|"") sleep 0.1 ;; *) echo "health: $s"; return ;; esac
    done
}

if [ "$PART" != 200m ]; then
    echo "== 1M lines"
    start after 9101 --demo --lines 1000000 --gpu on
    wait_stats 9101
    load "1M literal 1 client" 9101 --clients 1 --seconds 3
    load "1M regex 1 client" 9101 --clients 1 --seconds 3 --syntax regex --patterns 'ERROR_5\d\d'
    load "1M regex 64 clients" 9101 --clients 64 --seconds 4 --syntax regex --patterns 'ERROR_5\d\d'
    load "1M regex 64 clients 3 regexes" 9101 --clients 64 --seconds 4 --syntax regex --patterns "$(echo "$REGEXES" | tr ';' ',')"
    load "1M literal 64 clients" 9101 --clients 64 --seconds 4
    load "1M literal 64 clients 16 distinct" 9101 --clients 64 --seconds 4 --distinct --patterns "$LITS"
    load "1M literal 16 clients 16 distinct" 9101 --clients 16 --seconds 4 --distinct --patterns "$LITS"
    load "1M mix 16 clients" 9101 --clients 16 --seconds 4 --mix --patterns "$LITS" --regexes "$REGEXES"
    load "1M literal 1 client 100ms" 9101 --clients 1 --seconds 5 --pause-ms 100
    stop after 9101
    start keepwarm 9102 --demo --lines 1000000 --gpu on --keep-warm 2ms
    load "1M literal 1 client 100ms keep-warm 2ms" 9102 --clients 1 --seconds 5 --pause-ms 100
    load "1M literal 1 client keep-warm 2ms" 9102 --clients 1 --seconds 3
    stop keepwarm 9102
    if [ -z "${SKIP_NOFUSE:-}" ]; then
    export LOGSIEVE_NO_FUSE=1
    start nofuse 9103 --demo --lines 1000000 --gpu on
    load "1M NO_FUSE regex 64 clients" 9103 --clients 64 --seconds 4 --syntax regex --patterns 'ERROR_5\d\d'
    load "1M NO_FUSE literal 64 clients" 9103 --clients 64 --seconds 4
    load "1M NO_FUSE literal 16 clients 16 distinct" 9103 --clients 16 --seconds 4 --distinct --patterns "$LITS"
    stop nofuse 9103
    unset LOGSIEVE_NO_FUSE
    fi
    echo "== in-process regex (library, auto)"
    "$B/regex" --lines 1000000 --iters 9 --only 'ERROR_5' 2>/dev/null | tail -8
fi

if [ "$PART" != 1m ]; then
    echo "== 200M lines"
    start big 9201 --demo --lines 200000000 --gpu on
    wait_stats 9201
    stats_twice 9201
    nvidia-smi --query-gpu=memory.used --format=csv,noheader
    load "200M literal 1 client" 9201 --clients 1 --seconds 4 --patterns ERROR_503
    load "200M literal 16 clients 16 distinct" 9201 --clients 16 --seconds 8 --distinct --patterns "$LITS"
    load "200M literal 16 clients 16 distinct" 9201 --clients 16 --seconds 8 --distinct --patterns "$LITS"
    patterns_gpu 9201
    load "200M literal 16 clients one literal" 9201 --clients 16 --seconds 4 --patterns ERROR_503
    load "200M literal 1 client again" 9201 --clients 1 --seconds 3 --patterns ERROR_503
    stop big 9201
fi
