#!/usr/bin/env bash
# serve --follow under a writer: sustained append rate, lag from
# append to searchable (p50/p99), query latency while ingesting vs idle, rg -c
# on the same file when rg is installed.
#
#   scripts/bench-follow.sh BIN_DIR OUT_DIR [--seconds 20] [--rate 200000] [--initial 1000000] [--gpu auto]
#   scripts/bench-follow.sh BIN_DIR OUT_DIR --rates 100000,250000,430000 [other options]
#
# BIN_DIR holds a release `logsieve` (built here: target/release). Needs
# python3 (standard library only). Loopback only; writes OUT_DIR/follow.json
# and OUT_DIR/follow.md (with --rates: one run per rate in OUT_DIR/rate-N/,
# and their lag lines together in OUT_DIR/rates.md), and removes its work
# files.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
out=$2
shift 2
rates=""
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --rates) rates=$2; shift 2 ;;
        --rates=*) rates=${1#--rates=}; shift ;;
        *) args+=("$1"); shift ;;
    esac
done
if [ -z "$rates" ]; then
    exec python3 "$here/bench-follow.py" "$bin" "$out" ${args[@]+"${args[@]}"}
fi
mkdir -p "$out"
: > "$out/rates.md"
for r in ${rates//,/ }; do
    python3 "$here/bench-follow.py" "$bin" "$out/rate-$r" ${args[@]+"${args[@]}"} --rate "$r"
    {
        echo "## --rate $r"
        echo
        sed -n '3,5p' "$out/rate-$r/follow.md"
        echo
    } >> "$out/rates.md"
done
cat "$out/rates.md"
