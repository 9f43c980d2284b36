#!/usr/bin/env bash
# The browser half of the test suite, in headless Chromium:
#  1. the engine's unit tests natively (loading, gzip, rows, requests);
#  2. every GPU kernel against the CPU engine on WebGPU (SwiftShader) with
#     wasm-bindgen-test (crates/logsieve-web/tests/browser_kernels.rs);
#  3. the page end to end with playwright-core driving Debian's Chromium
#     (crates/logsieve-web/e2e/e2e.mjs): counts and highlighted lines
#     against the native CLI, with WebGPU and without it (CPU worker);
#  4. the page served by `logsieve serve` (crates/logsieve-web/e2e/serve.mjs):
#     the server's corpus searched from the page without the wasm bundle
#     (counts and lines = the CLI's, histogram and levels = /api/v1/stats),
#     with a token, and beside the wasm engine (8-12 s on the 2-core build
#     machine, 250k lines);
#  5. the page's live mode against `logsieve serve --follow`
#     (crates/logsieve-web/e2e/live.mjs): lines appended to the followed
#     file appear as the CLI selects them; pause, the bounded list, the
#     server's refusals and end. Bounded: a watchdog inside, `timeout`
#     outside.
# Screenshots and timings land in target/web-screenshots/.
#
# Installs what it needs: Debian's chromium and chromium-driver, the
# wasm32 target, wasm-bindgen-cli (pinned), playwright-core (npm ci).
# LOGSIEVE_REQUIRE_GPU=1 makes a missing WebGPU adapter a failure.
# LOGSIEVE_WEB_LINES sets the end-to-end file size (default 250000 lines,
# ~50 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

scripts/build-web.sh target/web
# The CLI as the workspace's tests build it (a no-op after
# `cargo test --workspace --release`): `-p logsieve-cli` alone resolves
# other features and rebuilds DataFusion and everything above it.
cargo test --workspace --release --no-run -q

echo "== web engine unit tests (native)"
cargo test -p logsieve-web --lib

echo "== GPU kernels vs the CPU engine in headless Chromium (WebGPU)"
# webdriver.json (Chrome flags: --enable-unsafe-webgpu) is read from the
# crate's folder.
(
    cd crates/logsieve-web
    WASM_BINDGEN_TEST_TIMEOUT=600 \
    CHROMEDRIVER=$(command -v chromedriver) \
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    CARGO_TARGET_DIR=$ROOT/target/wasm \
        cargo test --release --target wasm32-unknown-unknown -p logsieve-web --test browser_kernels
)

echo "== the page end to end (playwright-core, /usr/bin/chromium)"
(cd crates/logsieve-web/e2e && npm ci --no-audit --no-fund --loglevel=error)
node crates/logsieve-web/e2e/e2e.mjs \
    --bin target/release/logsieve --dist target/web --out target/web-screenshots \
    --lines "${LOGSIEVE_WEB_LINES:-250000}"

echo "== the page against logsieve serve (playwright-core, /usr/bin/chromium)"
node crates/logsieve-web/e2e/serve.mjs \
    --bin target/release/logsieve --dist target/web --out target/web-screenshots \
    --lines "${LOGSIEVE_WEB_LINES:-250000}"

echo "== the page's live mode against logsieve serve --follow (playwright-core)"
timeout 300 node crates/logsieve-web/e2e/live.mjs \
    --bin target/release/logsieve --out target/web-screenshots
