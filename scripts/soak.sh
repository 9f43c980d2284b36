#!/usr/bin/env bash
# The load soak of `logsieve serve`: N clients of mixed queries
# for S seconds against `logsieve serve --demo` on 127.0.0.1 (started and
# stopped by serve-soak), every answer checked against a CPU session over
# the same generated logs, the server's RSS sampled, latency percentiles
# per query kind. Prints a Markdown table; exits 1 on any wrong answer.
#
#   scripts/soak.sh [CLIENTS] [SECONDS] [LINES] [GPU]   default: 64 600 1000000 auto
#
# Output also goes to target/soak-<date>.md. On the build machine run it
# under `nice -n 19`. On the H100 machine (16 cores, no network): build
# here first (`cargo build --workspace --release --bin logsieve --bin
# serve-soak`), carry target/release/logsieve and target/release/serve-soak
# (and the Vulkan loader, for --gpu auto/on), then on that machine:
#   SOAK_BIN_DIR=target/release scripts/soak.sh 64 600 1000000 on
# SOAK_BIN_DIR set: nothing is built, the binaries are taken from there.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${1:-64}
SECS=${2:-600}
LINES=${3:-1000000}
GPU=${4:-auto}
DIR=${SOAK_BIN_DIR:-target/release}
if [ -z "${SOAK_BIN_DIR:-}" ]; then
    cargo build --workspace --release --bin logsieve --bin serve-soak
fi
OUT="target/soak-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# serve-soak $(date -u +%FT%TZ) on $(hostname): $CLIENTS clients, $SECS s, $LINES lines, --gpu $GPU"
    echo "nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    echo
} | tee "$OUT"
"$DIR/serve-soak" --clients "$CLIENTS" --seconds "$SECS" --lines "$LINES" --gpu "$GPU" \
    --logsieve "$DIR/logsieve" | tee -a "$OUT"
