#!/usr/bin/env bash
# Builds the browser page's WebAssembly engine (crates/logsieve-web) into
# a folder that `logsieve web` and `logsieve serve` find (or --dir /
# --web-dir name): the engine compiled to wasm32, its JavaScript bindings
# in pkg/, and a copy of the page's own HTML/JS/CSS. No CDN: everything
# ships.
#
#   scripts/build-web.sh [OUT]      (default OUT: target/web)
#
# Needs the wasm32-unknown-unknown target and wasm-bindgen-cli at exactly
# the version the logsieve-web crate pins; both are installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # = the `wasm-bindgen` pin in crates/logsieve-web/Cargo.toml
OUT=${1:-target/web}
# A target folder of its own: building for wasm32 must not invalidate
# the native build of the same crates.
WASM_TARGET_DIR=${WASM_TARGET_DIR:-target/wasm}

if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

CARGO_TARGET_DIR=$WASM_TARGET_DIR cargo build --release --target wasm32-unknown-unknown -p logsieve-web

rm -rf "$OUT"
mkdir -p "$OUT/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$OUT/pkg" \
    "$WASM_TARGET_DIR/wasm32-unknown-unknown/release/logsieve_web.wasm"
# The page's own files: `logsieve web` and `logsieve serve` serve the copies
# compiled into the binary, these are for any other static server.
cp crates/logsieve-web/www/index.html crates/logsieve-web/www/app.js \
   crates/logsieve-web/www/server.js crates/logsieve-web/www/worker.js \
   crates/logsieve-web/www/style.css "$OUT/"
echo "built the page in $OUT ($(du -sh "$OUT" | cut -f1)); serve it with: logsieve web --dir $OUT"
