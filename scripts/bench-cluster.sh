#!/bin/bash
# A cluster on one GPU machine against one `serve` node, in one device
# call (docs/bench/*-cluster.md): FILES generated files of LINES lines;
# `serve --gpu on` over all of them, then clusters of 1, 2 and 3 workers
# (`cluster worker --gpu on --shard-of I/N`, every worker on the same
# GPU) splitting the same files; scripts/bench-cluster.py asks each the
# same questions. The binary travels xz-compressed.
#
# usage: scripts/bench-cluster.sh BIN_XZ OUT_DIR [LINES] [FILES] [ITERS]
set -u
BIN_XZ=$1
OUT=$2
LINES=${3:-1000000}
FILES=${4:-6}
ITERS=${5:-30}
mkdir -p "$OUT" /tmp/cluster-logs
L=/tmp/logsieve-bench
xz -d -c "$BIN_XZ" >"$L" && chmod +x "$L"
echo "cores: $(nproc)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
cd /tmp/cluster-logs || exit 1
names=()
for k in $(seq 1 "$FILES"); do
    "$L" gen --lines "$LINES" --seed "$k" >"part$k.log"
    names+=("part$k.log")
done
du -sh /tmp/cluster-logs
"$L" serve "${names[@]}" --gpu on --listen 127.0.0.1:8799 >"$OUT/serve.log" 2>&1 &
serve=$!
t0=$(date +%s.%N)
for _ in $(seq 1 900); do
    python3 - <<'PY' 2>/dev/null && break
import json, urllib.request, sys
h = json.load(urllib.request.urlopen("http://127.0.0.1:8799/api/v1/health"))
sys.exit(0 if h.get("status") == "ready" else 1)
PY
    sleep 0.2
done
echo "serve ready in $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s"
clusters=""
pids=()
port=7900
for n in 1 2 3; do
    addrs=""
    t0=$(date +%s.%N)
    for i in $(seq 0 $((n - 1))); do
        port=$((port + 1))
        "$L" cluster worker --gpu on --listen "127.0.0.1:$port" --shard-of "$i/$n" "${names[@]}" \
            >"$OUT/worker-$n-$i.out" 2>"$OUT/worker-$n-$i.err" &
        pids+=($!)
        addrs="$addrs${addrs:+,}127.0.0.1:$port"
    done
    for i in $(seq 0 $((n - 1))); do
        for _ in $(seq 1 900); do
            grep -q "listening on" "$OUT/worker-$n-$i.out" 2>/dev/null && break
            sleep 0.2
        done
    done
    echo "$n worker(s) ready in $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s: $(cat "$OUT"/worker-$n-*.err | tr '\n' ' ')"
    clusters="$clusters${clusters:+;}$addrs"
done
"$L" cluster status "${clusters//;/,}" | grep -v '^  ' | tee "$OUT/status.txt"
cd - >/dev/null || exit 1
python3 scripts/bench-cluster.py "$L" 8799 "$clusters" "$ITERS" | tee "$OUT/cluster.md"
kill "$serve" "${pids[@]}" 2>/dev/null
wait 2>/dev/null
