#!/usr/bin/env bash
# serve --follow under a writer (issue 17): sustained append rate, lag from
# append to searchable (p50/p99), query latency while ingesting vs idle, rg -c
# on the same file when rg is installed.
#
#   scripts/bench-follow.sh BIN_DIR OUT_DIR [--seconds 20] [--rate 200000] [--initial 1000000] [--gpu auto]
#
# BIN_DIR holds a release `logsieve` (built here: target/release). Needs
# python3 (standard library only). Loopback only; writes OUT_DIR/follow.json
# and OUT_DIR/follow.md, and removes its work files.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/bench-follow.py" "$@"
