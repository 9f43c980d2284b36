#!/bin/bash
# SQL over a resident corpus against the native API and DuckDB on the GPU
# machine, in one device call (docs/bench/*-sql.md): 1M generated lines
# served with --gpu on, then scripts/bench-sql.py. The binary travels
# xz-compressed (DataFusion makes it larger than one carry), the duckdb
# wheel unpacked beside it.
#
# usage: scripts/bench-sql.sh BIN_XZ WHEEL_DIR OUT_DIR [LINES]
set -u
BIN_XZ=$1
WHEELS=$2
OUT=$3
LINES=${4:-1000000}
mkdir -p "$OUT" /tmp/bench-py
L=/tmp/logsieve-bench
xz -d -c "$BIN_XZ" >"$L" && chmod +x "$L"
for w in "$WHEELS"/*.whl; do python3 -m zipfile -e "$w" /tmp/bench-py; done
echo "cores: $(nproc)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
python3 --version
"$L" gen --lines "$LINES" >/tmp/bench-sql.log
ls -la /tmp/bench-sql.log
"$L" serve /tmp/bench-sql.log --gpu on --listen 127.0.0.1:8799 >"$OUT/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    python3 - <<'PY' 2>/dev/null && break
import json, urllib.request, sys
h = json.load(urllib.request.urlopen("http://127.0.0.1:8799/api/v1/health"))
sys.exit(0 if h.get("status") == "ready" else 1)
PY
    sleep 0.2
done
python3 -c 'import json,urllib.request; h=json.load(urllib.request.urlopen("http://127.0.0.1:8799/api/v1/health")); print({k: h.get(k) for k in ("status","backend","gpu","lines")})'
PYTHONPATH=/tmp/bench-py python3 scripts/bench-sql.py 8799 /tmp/bench-sql.log 30 | tee "$OUT/sql.md"
kill $pid
