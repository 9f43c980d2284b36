#!/bin/bash
# The `logsieve serve` load bench of docs/bench/h100-2026-11-25-merged.md (§ the server under load),
# in one device call: 1M generated lines served from a file; one client back
# to back and with 100 ms pauses, 64 clients, five literals and a regex;
# the server with fused counts (after), with LOGSIEVE_NO_FUSE=1, the
# binary of main before the change, `--gpu off`; `rg -c -F` and one-shot
# `logsieve search -c -F` as a process per query.
#
# usage: scripts/bench-serve-fused.sh BIN_DIR OUT_DIR
#   BIN_DIR: logsieve (after), logsieve-before, serve-load, rg (optional)
set -u
B=$1
OUT=$2
L=$B/logsieve
SL=$B/serve-load
RG=$(command -v rg || echo "$B/rg")
F=/tmp/app.log
PATS="ERROR_503 192.168.1 error NullPointerException x"
S=${SECONDS_PER_RUN:-4}
mkdir -p "$OUT"
echo "cores: $(nproc)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
"$L" gen --lines 1000000 --seed 42 -o $F
ls -l $F
# The 10k-pattern list: distinct client addresses of the corpus (IOC-shaped),
# defined once as a watchlist by serve-load.
W=/tmp/iocs10k.txt
grep -oE 'client=[0-9.]+' $F | sort -u | head -10000 | sed 's/^client=//' >$W
wc -l <$W | sed 's/^/10k list: patterns /'

http_get() { # PORT PATH
    exec 3<>/dev/tcp/127.0.0.1/$1 || return 1
    printf 'GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' "$2" >&3
    timeout 5 cat <&3
    exec 3<&-
}

start() { # NAME BIN PORT ARGS...
    local name=$1 bin=$2 port=$3
    shift 3
    local t0=$(date +%s.%N)
    "$bin" serve --listen 127.0.0.1:$port "$@" $F >"$OUT/serve-$name.log" 2>&1 &
    echo $! >/tmp/pid-$port
    for _ in $(seq 1 1200); do
        http_get $port /api/v1/health 2>/dev/null | grep -q '"ready"' && break
        sleep 0.05
    done
    echo "== server $name ($*) ready after $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
    http_get $port /api/v1/health | tail -1
    echo
}

stop() { # NAME PORT
    http_get $2 /metrics >"$OUT/metrics-$1.txt" 2>/dev/null
    grep -E '^logsieve_gpu_fused|^logsieve_errors' "$OUT/metrics-$1.txt"
    kill "$(cat /tmp/pid-$2)"
    wait "$(cat /tmp/pid-$2)" 2>/dev/null
}

load() { # LABEL PORT ARGS...
    local label=$1 port=$2
    shift 2
    printf '%-34s ' "$label"
    "$SL" --addr 127.0.0.1:$port "$@" 2>&1 | tee -a "$OUT/load-raw.txt"
}

profile() { # LABEL PORT: the fused-count profile so far
    http_get $2 /metrics | grep -E '^logsieve_gpu_fused' | tr '\n' ' ' | sed "s/^/$1: /"
    echo
}

variants="after nofuse"
[ -x "$B/logsieve-before" ] && variants="$variants before"
for variant in $variants; do
    case $variant in
        after) bin=$L env= ;;
        nofuse) bin=$L env=LOGSIEVE_NO_FUSE=1 ;;
        before) bin=$B/logsieve-before env= ;;
    esac
    port=$((9100 + ${#variant}))
    if [ -n "$env" ]; then export $env; fi
    start $variant $bin $port --gpu on
    load "$variant gpu 1 client" $port --clients 1 --seconds $S
    profile "$variant 1 client" $port
    load "$variant gpu 1 client 100ms" $port --clients 1 --seconds 5 --pause-ms 100 --warmup 3
    load "$variant gpu 64 clients" $port --clients 64 --seconds $S
    load "$variant gpu 64 clients" $port --clients 64 --seconds $S
    profile "$variant after 64 clients" $port
    load "$variant gpu 1 client again" $port --clients 1 --seconds $S
    if [ $variant = after ]; then
        load "after gpu regex 1 client" $port --clients 1 --seconds 3 --syntax regex --patterns 'ERROR_5\d\d'
        load "after gpu 10k list 1 client" $port --clients 1 --seconds 3 --watchlist-file $W
        load "after gpu 10k list 1 client 100ms" $port --clients 1 --seconds 4 --pause-ms 100 --warmup 3 --watchlist-file $W
        load "after gpu 16 clients" $port --clients 16 --seconds $S
        load "after gpu 256 clients" $port --clients 256 --seconds $S
    fi
    stop $variant $port
    unset LOGSIEVE_NO_FUSE
done

start cpu $L 9200 --gpu off
load "cpu 1 client" 9200 --clients 1 --seconds 3
load "cpu 1 client 100ms" 9200 --clients 1 --seconds 3 --pause-ms 100 --warmup 3
load "cpu 64 clients" 9200 --clients 64 --seconds 3
load "cpu regex 1 client" 9200 --clients 1 --seconds 3 --syntax regex --patterns 'ERROR_5\d\d'
load "cpu 10k list 1 client" 9200 --clients 1 --seconds 3 --warmup 2 --watchlist-file $W
stop cpu 9200

if [ -n "${TEN_M:-}" ]; then
    # Start to first answer for 10M lines (1.94 GB) served from a file.
    F10=/tmp/app10m.log
    "$L" gen --lines 10000000 --seed 42 -o $F10
    t0=$(date +%s.%N)
    "$L" serve --listen 127.0.0.1:9300 --gpu on $F10 >"$OUT/serve-10m.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 1200); do
        http_get 9300 /api/v1/health 2>/dev/null | grep -q '"ready"' && break
        sleep 0.05
    done
    echo "== 10M lines: ready after $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
    load "10M gpu 1 client" 9300 --clients 1 --seconds 3
    kill $pid; wait $pid 2>/dev/null
    rm -f $F10
fi

echo "== one process per query, 10 per pattern (page cache warm)"
for p in $PATS; do
    "$L" search -c -F "$p" $F >/dev/null
    t0=$(date +%s.%N)
    for _ in 1 2 3 4 5 6 7 8 9 10; do "$L" search -c -F "$p" $F >/dev/null; done
    t1=$(date +%s.%N)
    n=$("$L" search -c -F "$p" $F)
    echo "logsieve search -c -F $p: $n lines, $(awk "BEGIN{print ($t1 - $t0) * 100}") ms per process"
done
if [ -x "$RG" ]; then
    "$RG" --version | head -1
    for p in $PATS; do
        t0=$(date +%s.%N)
        for _ in 1 2 3 4 5 6 7 8 9 10; do "$RG" -c -F "$p" $F >/dev/null; done
        t1=$(date +%s.%N)
        n=$("$RG" -c -F "$p" $F)
        echo "rg -c -F $p: $n lines, $(awk "BEGIN{print ($t1 - $t0) * 100}") ms per process"
    done
else
    echo "rg: not found"
fi
if [ -x "$RG" ]; then
    t0=$(date +%s.%N)
    n=$("$RG" -c -F -f $W $F)
    t1=$(date +%s.%N)
    echo "rg -c -F -f iocs10k: $n lines, $(awk "BEGIN{print ($t1 - $t0) * 1000}") ms per process"
fi
