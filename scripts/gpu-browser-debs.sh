#!/usr/bin/env bash
# Fetches (on the build machine: Debian 12, apt) what scripts/gpu-browser.sh
# needs on a GPU machine that has no browser: Debian's chromium (or, with
# `shell`, chromium-headless-shell) and the shared libraries it loads,
# packed as one tar.xz split into parts small enough to carry one per
# call beside the tree: .browser/gc.part-aa, -ab (checksums in
# .browser/gc.sha256); `shell` makes .browser/gb.part-* instead.
#
#   scripts/gpu-browser-debs.sh [shell] [PART_SIZE]   (default 58M)
#   scripts/gpu-browser-debs.sh node
#
# Only the files Chromium runs with are packed (the binary, its .pak,
# ICU and V8 snapshot files, its Vulkan loader) and only the .so files
# of the library packages: the debs alone (chromium 81 MB,
# chromium-common 32 MB) are over what two calls carry.
# The library set is the binary's ldd closure on a bare Debian 12,
# except glibc, libgcc and libstdc++ (present everywhere); on the GPU
# machine gpu-browser.sh puts on LD_LIBRARY_PATH only those the
# machine lacks. Seen 2026-12-01: Debian 156.0.8078.114-1~deb12u1,
# gc 116 MB in two parts, gb 75 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
# `node`: the end-to-end page test's runtime instead, this machine's node
# binary (.browser/node.xz, 24 MB for node 20), the test's playwright-core
# (.browser/e2e-modules.tar.xz) and three DejaVu fonts
# (.browser/fonts.tar.xz), for `gpu-browser.sh e2e`.
if [ "${1:-}" = node ]; then
    mkdir -p .browser
    (cd crates/logsieve-web/e2e && npm ci --no-audit --no-fund --loglevel=error)
    xz -T0 -6 -c "$(command -v node)" > .browser/node.xz
    tar -C crates/logsieve-web/e2e -cJf .browser/e2e-modules.tar.xz node_modules package.json
    # Fonts: without any, Chromium's renderer crashed on the page's form
    # controls on the GPU machine (the kernel pages, plain text, did not).
    [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || apt-get install -y -qq fonts-dejavu-core >/dev/null
    tar -C /usr/share/fonts/truetype/dejavu -cJf .browser/fonts.tar.xz DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSansMono.ttf
    ls -la .browser/node.xz .browser/e2e-modules.tar.xz .browser/fonts.tar.xz
    exit 0
fi
KIND=full
if [ "${1:-}" = shell ]; then KIND=shell; shift; fi
PART=${1:-58M}
LIBS="libnss3 libnspr4 libglib2.0-0 libdbus-1-3 libgbm1 libxkbcommon0 libfontconfig1
libfreetype6 libasound2 libatk1.0-0 libatspi2.0-0 libopenh264-7
libdouble-conversion3 libopus0 libharfbuzz-subset0 libharfbuzz0b libgraphite2-3
libxnvctrl0 libpulse0 libflac12 libminizip1 libopenjp2-7 libdav1d6
libjpeg62-turbo liblcms2-2 libpng16-16 libbrotli1 libxcomposite1 libxdamage1
libxfixes3 libxi6 libxrandr2 libxrender1 libwayland-server0 libxau6 libxdmcp6
libbsd0 libmd0 libffi8 libpcre2-8-0 libmount1 libblkid1 libselinux1
libsystemd0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 libzstd1 liblzma5
zlib1g libudev1 libexpat1 libdrm2 libx11-6 libx11-xcb1 libxcb1 libxext6
libogg0 libsndfile1 libasyncns0 libvorbis0a libvorbisenc2 libmpg123-0
libmp3lame0"
# The full browser's own extra needs (GTK is loaded only with a display).
FULL_LIBS="libatk-bridge2.0-0 libcups2 libcairo2 libpango-1.0-0 libgssapi-krb5-2
libavahi-common3 libavahi-client3 libavahi-common-data libgnutls30 libpixman-1-0
libxcb-shm0 libxcb-render0 libfribidi0 libthai0 libkrb5-3 libk5crypto3 libcom-err2
libkrb5support0 libp11-kit0 libidn2-0 libunistring2 libtasn1-6 libnettle8
libhogweed6 libgmp10 libdatrie1 libkeyutils1"
grep -qx '/.browser/' .git/info/exclude 2>/dev/null || echo '/.browser/' >> .git/info/exclude
mkdir -p .browser/debs
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if [ $KIND = full ]; then
    PACK=gc; DIR=full; PKGS="chromium chromium-common $LIBS $FULL_LIBS"
    FILES="chromium icudtl.dat resources.pak chrome_100_percent.pak snapshot_blob.bin
           v8_context_snapshot.bin libvulkan.so.1 libEGL.so libGLESv2.so chrome_crashpad_handler"
else
    PACK=gb; DIR=shell; PKGS="chromium-headless-shell chromium-common $LIBS"
    FILES="chromium-headless-shell icudtl.dat headless_lib_data.pak headless_lib_strings.pak
           headless_command_resources.pak snapshot_blob.bin v8_context_snapshot.bin
           libvulkan.so.1 libEGL.so libGLESv2.so"
fi
(cd .browser/debs && apt-get download $PKGS)
mkdir -p "$W/x" "$W/$DIR/locales" "$W/root"
for p in $PKGS; do dpkg -x .browser/debs/"${p}"_*.deb "$W/x"; done
C=$W/x/usr/lib/chromium
for f in $FILES; do cp "$C/$f" "$W/$DIR/"; done
[ $KIND = full ] && cp "$C"/locales/en-US.pak "$W/$DIR/locales/"
(cd "$W/x" && find usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu \( -type f -o -type l \) -name '*.so*' 2>/dev/null \
    | grep -v '/gconv/\|gio/modules' | tar -cf - -T - | tar -xf - -C "$W/root")
L=$W/root/usr/lib/x86_64-linux-gnu:$W/root/lib/x86_64-linux-gnu:$W/root/usr/lib/x86_64-linux-gnu/pulseaudio
if LD_LIBRARY_PATH=$L ldd "$W/$DIR/${FILES%% *}" | grep 'not found'; then
    echo "gpu-browser-debs: libraries missing from the set above" >&2; exit 1
fi
rm -f .browser/$PACK.part-* .browser/$PACK.sha256
(cd "$W" && tar -cf - $DIR root) | xz -9e -T0 | split -b "$PART" - .browser/$PACK.part-
(cd .browser && sha256sum $PACK.part-* > $PACK.sha256)
ls -la .browser/$PACK.part-*
echo "carry each part in its own call, back to back: scripts/gpu-browser.sh stash, then the run (see that script)"
