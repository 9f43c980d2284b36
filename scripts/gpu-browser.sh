#!/usr/bin/env bash
# Opens one page of scripts/gpu-browser/ (with the wasm bundle beside it,
# when target/web exists) in Debian's headless Chromium with WebGPU on
# Vulkan, on a machine that has a GPU driver but no browser and none of
# its libraries, and writes what the page reports to OUT.
#
#   scripts/gpu-browser.sh PAGE OUT [extra Chromium flags...]
#
#   PAGE  probe.html (adapter info, limits, one dispatch),
#         kernels.html?lines=100000&seed=7 (every kernel vs the engine's
#         CPU path, then timings), worker.html (the page's own worker), or
#         e2e: the page end to end (crates/logsieve-web/e2e/e2e.mjs: counts,
#         rows and highlights against the CLI, screenshots), with node and
#         playwright-core carried (.browser/node.xz,
#         .browser/e2e-modules.tar.xz, .browser/fonts.tar.xz from
#         `gpu-browser-debs.sh node`) and
#         the CLI at LOGSIEVE_BIN or .bin/logsieve.xz; GB_LINES lines
#         (default 1000000)
#   OUT   the page's JSON result (e2e: a folder: screenshots and
#         results.json); OUT.log holds Chromium's stderr
#
# Needs .browser/gc.part-* and .browser/gc.sha256 from
# scripts/gpu-browser-debs.sh (run on the build machine). The parts are
# over what one call carries, so carry them one per call back to back
# (the machine keeps /tmp only while it stays warm):
#
#   scripts/gpu-browser.sh stash          (carry .browser/gc.part-aa, gc.sha256)
#   scripts/gpu-browser.sh PAGE OUT       (carry .browser/gc.part-ab, gc.sha256,
#                                          .gl and target/web)
#
# Everything is unpacked under /tmp/gb, never into /; only the libraries
# that the machine's own ld.so cache lacks are put on LD_LIBRARY_PATH,
# so the GPU driver keeps the system's versions of the rest.
# GB_PACK=gb runs the headless shell (.browser/gb.part-*) instead of the
# full chromium (gc).
# GB_FLAGS replaces the default WebGPU/Vulkan flags; GB_TIMEOUT (s,
# default 120) bounds the page.
set -uo pipefail
cd "$(dirname "$0")/.."
B=/tmp/gb
mkdir -p $B/parts
cp .browser/g?.part-* .browser/g?.sha256 $B/parts/ 2>/dev/null
if [ "${1:-}" = stash ]; then ls -la $B/parts; exit 0; fi
PAGE=${1:?page}; OUT=${2:?out}; shift 2
# gc: the full chromium, run --headless=new (the default: it gives WebGPU
# the GPU); gb: chromium-headless-shell (its WebGPU found no adapter on an
# NVIDIA H200, 2026-12-01)
PACK=${GB_PACK:-gc}
if [ $PACK = gc ]; then BIN=$B/full/chromium; HEADLESS=--headless=new; else BIN=$B/shell/chromium-headless-shell; HEADLESS=; fi
if [ ! -x $BIN ]; then
    (cd $B/parts && sha256sum -c --quiet $PACK.sha256) || { echo "gpu-browser: $PACK parts missing or damaged in $B/parts"; exit 1; }
    rm -rf $B/root $B/lib
    cat $B/parts/$PACK.part-* | tar -xJ -C $B || exit 1
    mkdir -p $B/lib
    ldconfig -p | awk '{print $1}' | sort -u > $B/system-sonames
    n=0
    for f in $(find $B/root -name '*.so*' \( -type f -o -type l \)); do
        s=$(basename "$f")
        if ! grep -qxF "$s" $B/system-sonames; then ln -sf "$f" $B/lib/"$s"; n=$((n+1)); fi
    done
    echo "gpu-browser: $n carried libraries used (the system has the rest)"
fi
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
missing=$(ldd $BIN | grep 'not found')
[ -n "$missing" ] && echo "gpu-browser: still missing: $missing"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export VK_ICD_FILENAMES=$VK_DRIVER_FILES XDG_RUNTIME_DIR=/tmp HOME=$B/home
mkdir -p $B/home $B/www
rm -rf $B/www/*
[ -d target/web ] && cp -r target/web/. $B/www/
cp scripts/gpu-browser/*.html scripts/gpu-browser/*.js $B/www/ 2>/dev/null
# The flags that gave WebGPU the NVIDIA H200 (2026-12-01); without
# --enable-features=Vulkan requestAdapter answered null every time.
FLAGS=${GB_FLAGS:---enable-unsafe-webgpu --ignore-gpu-blocklist --enable-features=Vulkan --use-angle=vulkan --disable-vulkan-surface}
if [ -f .browser/fonts.tar.xz ]; then
    mkdir -p $B/fonts/cache
    tar -C $B/fonts -xJf .browser/fonts.tar.xz
    printf '<?xml version="1.0"?>\n<fontconfig><dir>%s</dir><cachedir>%s</cachedir></fontconfig>\n' \
        $B/fonts $B/fonts/cache > $B/fonts/fonts.conf
    export FONTCONFIG_FILE=$B/fonts/fonts.conf
fi
if [ "$PAGE" = e2e ]; then
    mkdir -p $B/node $B/e2e "$OUT"
    [ -x $B/node/node ] || { xz -dc .browser/node.xz > $B/node/node && chmod +x $B/node/node; } || exit 1
    cp crates/logsieve-web/e2e/*.mjs $B/e2e/
    tar -C $B/e2e -xJf .browser/e2e-modules.tar.xz || exit 1
    CLI=${LOGSIEVE_BIN:-}
    if [ -z "$CLI" ]; then CLI=$B/logsieve; xz -dc .bin/logsieve.xz > $CLI && chmod +x $CLI || exit 1; fi
    echo "gpu-browser: e2e with $FLAGS"
    CHROMIUM=$BIN LOGSIEVE_E2E_WEBGPU_FLAGS="$FLAGS" $B/node/node $B/e2e/e2e.mjs \
        --bin "$CLI" --dist target/web --out "$OUT" --lines "${GB_LINES:-1000000}" "$@"
    exit $?
fi
prof=$(mktemp -d $B/profile.XXXX)
echo "gpu-browser: $PAGE with $FLAGS $*"
python3 scripts/gpu-browser/serve.py --root $B/www --page "$PAGE" --out "$OUT" --timeout "${GB_TIMEOUT:-120}" -- \
    $BIN $HEADLESS --no-sandbox --user-data-dir="$prof" --enable-logging=stderr --v=0 \
    $FLAGS "$@" 2> "$OUT.log"
rc=$?
grep -v 'CONSOLE\|dbus\|Fontconfig' "$OUT.log" | tail -n 25
exit $rc
