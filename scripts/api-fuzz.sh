#!/usr/bin/env bash
# Fuzzes logsieve serve's HTTP API from its own OpenAPI document with
# schemathesis (PyPI): starts `logsieve serve --demo` on loopback, runs
# every operation, stops the server. Fails on a 5xx or a response that the
# document does not describe. scripts/schemathesis.toml holds the one
# documented relaxation (a schema-valid request may be refused with 400).
#
#   scripts/api-fuzz.sh [MAX_EXAMPLES]   default 50 examples per operation
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50}
BIN=${LOGSIEVE_BIN:-target/release/logsieve}
[ -x "$BIN" ] || cargo build --workspace --release --bin logsieve
# Pinned: a new release may add checks (4.32.5 brought ST105 to light).
command -v schemathesis >/dev/null || python3 -m pip install -q "schemathesis==4.32.5"
LOG=$(mktemp)
"$BIN" serve --demo --lines 20000 --gpu off --listen 127.0.0.1:0 >"$LOG" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 100); do
    ADDR=$(grep -oE '127\.0\.0\.1:[0-9]+' "$LOG" | head -1 || true)
    [ -n "$ADDR" ] && break
    sleep 0.2
done
[ -n "${ADDR:-}" ] || { cat "$LOG"; echo "server did not start"; exit 1; }
# /api/v1/tail is a server-sent-events stream that stays open while the
# client does: every call would wait for the request timeout. Its own
# tests (crates/logsieve-server/tests/tail.rs) check it against the oracle.
schemathesis --config-file scripts/schemathesis.toml run "http://$ADDR/api/v1/openapi.json" \
    --checks all --max-examples "$N" --request-timeout 30 --exclude-path /api/v1/tail
