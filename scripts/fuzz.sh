#!/usr/bin/env bash
# Builds and runs logsieve's fuzz targets (fuzz/, cargo-fuzz + libFuzzer).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   default: 60 s each, every target
#
# The toolchain here is stable Rust: cargo-fuzz passes nightly-only flags
# (-Zsanitizer), so RUSTC_BOOTSTRAP=1 lets stable accept them. `-s none`
# (no AddressSanitizer) because the crate has no unsafe code of its own to
# check and ASan roughly halves executions; libFuzzer's coverage still
# guides. A finding exits non-zero and leaves fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
SECS=${1:-60}
shift || true
# Adding a target: its file in fuzz/fuzz_targets/, its [[bin]] in
# fuzz/Cargo.toml, its name here.
TARGETS=(query_build literals time_parse differential fields decode logql glushkov api_json
    follow_lines loki_params bitap)
[ $# -gt 0 ] && TARGETS=("$@")
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
cargo fuzz build -O -s none 2>&1 | tail -3 || { echo "fuzz build failed"; exit 1; }
# Targets run FUZZ_JOBS at a time (default 2: libFuzzer is one thread
# each, the CI machine has 2 cores), so 12 targets x 60 s take 6 rounds.
run_one() {
    local t=$1
    # New inputs go to work/$t (ignored by git); corpus/$t holds the small
    # committed seeds (a finding's input is added there by hand, with its
    # REGRESSION test).
    mkdir -p "corpus/$t" "work/$t"
    cargo fuzz run -O -s none "$t" "work/$t" "corpus/$t" -- \
        -max_total_time="$SECS" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 2>&1 | grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss|Done|==|.*(panicked|ERROR|SUMMARY))' | sed "s/^/$t: /" || true
}
JOBS=${FUZZ_JOBS:-2}
running=0
for t in "${TARGETS[@]}"; do
    echo "== $t: ${SECS}s"
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
for t in "${TARGETS[@]}"; do
    [ -z "$(ls -A "artifacts/$t" 2>/dev/null)" ] || { echo "FINDING in $t: fuzz/artifacts/$t"; exit 1; }
done
echo "fuzz: ${#TARGETS[@]} targets, ${SECS}s each, no finding"
