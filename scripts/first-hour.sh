#!/usr/bin/env bash
# The first hour with logsieve: what a new user does first (serve the demo,
# follow a real log, count by level, read the man page, ...), each checked
# against the built binary.
#
#   scripts/first-hour.sh                 # target/release/logsieve (built if missing)
#   LOGSIEVE=path/to/logsieve scripts/first-hour.sh
#
# One line per check: `ok   N  what`, `FAIL N  what: what was seen` or
# `skip N  what: why`, then `P passed, F failed, S skipped`; the exit code
# is 1 when a check failed. Real logs come from ../shared/data/loghub/
# (relative to the repository root; LOGHUB overrides): the checks that need
# them are skipped when they are absent. Every server binds 127.0.0.1 on a
# free port and is stopped on exit; every wait is bounded.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n "${LOGSIEVE:-}" ]]; then
    case $LOGSIEVE in
        /*) BIN=$LOGSIEVE ;;
        *) BIN=$PWD/$LOGSIEVE ;;
    esac
else
    BIN=$ROOT/target/release/logsieve
fi
LOGHUB=${LOGHUB:-$ROOT/../shared/data/loghub}
cd "$ROOT"

if [[ ! -x $BIN ]]; then
    if [[ -n "${LOGSIEVE:-}" ]]; then
        echo "first-hour: $BIN is not an executable" >&2
        exit 2
    fi
    echo "first-hour: $BIN missing: cargo build --release -q" >&2
    cargo build --release -q
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/logsieve-first-hour.XXXXXX")
: >"$TMP/pids"

# Stops every server started (their ids are in $TMP/pids) and removes the
# temporary directory.
cleanup() {
    local pid
    while read -r pid; do
        [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
    done <"$TMP/pids"
    while read -r pid; do
        [[ -n $pid ]] && wait "$pid" 2>/dev/null || true
    done <"$TMP/pids"
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PASSED=0
FAILED=0
SKIPPED=0

# ---- shared functions (used inside the checks) -----------------------------------

# Prints a JSON value: `pyj EXPR` evaluates EXPR with `d` the JSON on stdin.
pyj() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$1"
}

# logsieve ARGS, bounded in time (a hung command fails its check).
lsv() { timeout -k 5 120 "$BIN" "$@"; }

# The year of an RFC 3339 time (its first four characters).
year_of() { printf '%s\n' "${1:0:4}"; }

# Servers started by the check running now (stopped when it ends).
CHECK_PIDS=()
stop_check_servers() {
    local pid
    for pid in "${CHECK_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${CHECK_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    CHECK_PIDS=()
}

# The last line of a file, colour codes removed.
plain_tail() {
    sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -v '^[[:space:]]*$' | tail -n1 | head -c 200
}

# start_server NAME ARGS...: runs `logsieve serve --listen 127.0.0.1:0 ARGS`,
# waits (bounded) for its `listening on http://ADDR:PORT/` line and for
# /api/v1/health to say `ready`; sets URL. On failure prints why and
# returns 1.
URL=
start_server() {
    local name=$1
    shift
    local out=$TMP/$name.out err=$TMP/$name.err pid i status
    "$BIN" serve --listen 127.0.0.1:0 "$@" >"$out" 2>"$err" </dev/null &
    pid=$!
    echo "$pid" >>"$TMP/pids"
    CHECK_PIDS+=("$pid")
    URL=
    for ((i = 0; i < 300; i++)); do
        URL=$(grep -ho 'http://[0-9.]*:[0-9]*' "$out" "$err" 2>/dev/null | head -n1) || true
        [[ -n $URL ]] && break
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "serve $* exited before listening: $(plain_tail "$err")"
            return 1
        fi
        sleep 0.1
    done
    if [[ -z $URL ]]; then
        echo "serve $* printed no listening address in 30 s"
        return 1
    fi
    for ((i = 0; i < 600; i++)); do
        status=$(curl -s --max-time 2 "$URL/api/v1/health" | pyj 'd.get("status")' 2>/dev/null) || true
        [[ $status == ready ]] && return 0
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "serve $* exited while loading: $(plain_tail "$err")"
            return 1
        fi
        sleep 0.1
    done
    echo "serve $* not ready after 60 s (health: ${status:-no answer})"
    return 1
}

# post PATH JSON: POSTs JSON to the server at $URL; the body goes to
# $TMP/body, the status code to stdout.
post() {
    curl -s --max-time 30 -o "$TMP/body" -w '%{http_code}' \
        -H 'content-type: application/json' -d "$2" "$URL$1" || echo 000
}

# count_api JSON-FIELDS: the `total` of a count search (fields added to
# `"syntax":"literal","output":"count"`), or `error CODE BODY`.
count_api() {
    local code
    code=$(post /api/v1/search "{\"syntax\":\"literal\",\"output\":\"count\",$1}")
    if [[ $code == 200 ]]; then
        pyj 'd["total"]' <"$TMP/body"
    else
        echo "error $code $(head -c 200 "$TMP/body")"
    fi
}

# wait_count JSON-FIELDS WANT: polls count_api until it answers WANT (15 s).
wait_count() {
    local i got
    for ((i = 0; i < 150; i++)); do
        got=$(count_api "$1")
        [[ $got == "$2" ]] && return 0
        sleep 0.1
    done
    echo "$got"
    return 1
}

# The `selected` count of `logsieve search -c` with a time window (the
# stats report: `selected N lines ...`) or a plain count.
cli_count() {
    python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"^selected (\d+) lines", t, re.M) or re.search(r"^(?:.*:)?(\d+)\s*$", t, re.M)
print(m.group(1) if m else "unparsed: " + t.strip()[:120].replace("\n", " | "))'
}

# `N:text` of each line of `search -n` output, a leading `path:` removed.
numbered() {
    python3 -c '
import re, sys
for l in sys.stdin.read().splitlines():
    m = re.match(r"^(?:[^:]*:)?(\d+):(.*)$", l)
    print(f"{m.group(1)}:{m.group(2)}" if m else "?" + l)'
}

need_loghub() {
    local f
    for f in "$@"; do
        if [[ ! -r $LOGHUB/$f ]]; then
            echo "skip: $LOGHUB/$f absent"
            return 1
        fi
    done
}

# A copy of a loghub file in the temp directory, writable, its
# modification time fixed (the year of year-less stamps follows it).
copy_fixed() {
    cp "$LOGHUB/$1" "$TMP/$2"
    chmod u+w "$TMP/$2"
    touch -d '2026-11-24 12:00:00 UTC' "$TMP/$2"
}

# Generated logs, made once (the demo's generator with its default seed).
gen_file() {
    local lines=$1 f=$TMP/gen-$1.log
    [[ -s $f ]] || lsv gen --lines "$lines" -o "$f"
    printf '%s\n' "$f"
}

# ---- the checks ------------------------------------------------------------------
# Each prints one verdict line: `ok`, `ok: DETAIL`, `FAIL: SEEN` or
# `skip: WHY`.

check_1() {
    local code oldest y file bytes lines api cli
    file=$(gen_file 200000)
    # The demo has no file behind it: a file named like it in the working
    # directory (here an old one) must not date its year-less lines.
    mkdir -p "$TMP/cwd1"
    cp "$file" "$TMP/cwd1/demo.log"
    touch -d '2003-01-01 00:00:00 UTC' "$TMP/cwd1/demo.log"
    cd "$TMP/cwd1"
    start_server demo1 --demo --lines 200000 || return 0
    cd "$ROOT"
    code=$(post /api/v1/stats '{}')
    [[ $code == 200 ]] || { echo "FAIL: /api/v1/stats answered $code $(head -c 200 "$TMP/body")"; return 0; }
    oldest=$(pyj '(d.get("oldest") or {}).get("utc")' <"$TMP/body")
    y=$(year_of "$oldest")
    [[ $y =~ ^[0-9]{4}$ ]] && ((y >= 2020)) || { echo "FAIL: stats oldest is $oldest"; return 0; }
    # `gen` and `serve --demo` share the generator and its default seed:
    # the served corpus is the file's bytes.
    bytes=$(curl -s --max-time 5 "$URL/api/v1/health" | pyj 'd["bytes"], d["lines"]' 2>/dev/null) || true
    if [[ $bytes != "($(stat -c %s "$file"), $(wc -l <"$file"))" ]]; then
        echo "FAIL: the demo holds (bytes, lines) $bytes, gen wrote ($(stat -c %s "$file"), $(wc -l <"$file"))"
        return 0
    fi
    api=$(count_api '"patterns":["sshd["],"since":"1h"')
    cli=$(lsv search -c -F 'sshd[' --since 1h "$file" 2>&1 | cli_count) || true
    if [[ $api == "$cli" && $api =~ ^[0-9]+$ ]]; then
        echo "ok: oldest $oldest, sshd[ in the last hour: $api"
    else
        echo "FAIL: oldest $oldest; server counts $api, search -c --since 1h counts $cli"
    fi
}

check_2() {
    need_loghub OpenSSH_2k.log || return 0
    copy_fixed OpenSSH_2k.log openssh.log
    local f=$TMP/openssh.log code y0 oldest newest got win
    start_server follow2 --follow --follow-idle 0.2 "$f" || return 0
    post /api/v1/stats '{}' >/dev/null
    oldest=$(pyj '(d.get("oldest") or {}).get("utc")' <"$TMP/body")
    y0=$(year_of "$oldest")
    # The file ends without a newline: the appended line starts a line.
    if [[ -n $(tail -c1 "$f") ]]; then printf '\n' >>"$f"; fi
    printf 'Dec 10 11:00:00 LabSZ sshd[999]: first-hour check\n' >>"$f"
    got=$(wait_count '"patterns":["first-hour check"]' 1) ||
        { echo "FAIL: the appended line not searchable after 15 s (count $got)"; return 0; }
    code=$(post /api/v1/stats '{}')
    [[ $code == 200 ]] || { echo "FAIL: /api/v1/stats answered $code"; return 0; }
    newest=$(pyj '(d.get("newest") or {}).get("utc")' <"$TMP/body")
    win=$(count_api "\"patterns\":[\"first-hour check\"],\"since\":\"$y0-12-10T11:00:00Z\",\"until\":\"$y0-12-10T11:00:01Z\"")
    if [[ $y0 == 2025 && $(year_of "$newest") == 2025 && ! $newest > 2026-11-25 && $win == 1 ]]; then
        echo "ok: loaded from $oldest, newest $newest, the appended line at $y0-12-10T11:00:00Z"
    else
        echo "FAIL: loaded lines from $oldest (want 2025), newest after the append $newest (want <= 2026-11-25, 2025), the appended line in [$y0-12-10T11:00:00Z, +1s): $win (want 1)"
    fi
}

check_3() {
    need_loghub Linux_2k.log || return 0
    command -v rg >/dev/null || { echo "skip: rg not installed"; return 0; }
    copy_fixed Linux_2k.log linux.log
    local f=$TMP/linux.log got pat want seen bad=
    if [[ -z $(tail -c1 "$f") ]]; then
        echo "FAIL: Linux_2k.log ends with a newline here: nothing to extend"
        return 0
    fi
    start_server follow3 --follow --follow-idle 0.2 "$f" || return 0
    # Past --follow-idle: the unterminated last line has been taken as it is.
    sleep 0.6
    printf ' extended\nnew line X\n' >>"$f"
    got=$(wait_count '"patterns":["new line X"]' 1) ||
        { echo "FAIL: the appended line not searchable after 15 s (count $got)"; return 0; }
    for pat in 'new line X' 'extended'; do
        want=$(rg -n -F "$pat" "$f" | numbered) || true
        seen=$(lsv search --server "$URL" -n -F "$pat" 2>&1 | numbered) || true
        if [[ $want != "$seen" ]]; then
            bad+="${bad:+; }'$pat': rg ${want:0:60} | logsieve --server ${seen//$'\n'/ / }"
            bad=${bad:0:400}
        fi
    done
    if [[ -z $bad ]]; then
        echo "ok: line ${want%%:*} for 'extended', as rg"
    else
        echo "FAIL: $bad"
    fi
}

check_4() {
    local missing=/nonexistent/first-hour-path rc=0 t0 t1 err f
    t0=$(date +%s.%N)
    timeout -k 2 10 "$BIN" serve --listen 127.0.0.1:0 "$missing" >/dev/null 2>"$TMP/serve4.err" </dev/null || rc=$?
    t1=$(date +%s.%N)
    err=$(plain_tail "$TMP/serve4.err")
    if ((rc != 2)) || ! grep -qF "$missing" "$TMP/serve4.err"; then
        if ((rc == 124 || rc == 137)); then
            echo "FAIL: serve $missing still running after 10 s (stderr: $err)"
        else
            echo "FAIL: serve $missing exited $rc (stderr: $err)"
        fi
        return 0
    fi
    local secs
    secs=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
    if python3 -c "import sys; sys.exit(0 if $t1 - $t0 > 5 else 1)"; then
        echo "FAIL: serve $missing exited 2, but after $secs s"
        return 0
    fi
    f=$(gen_file 2000)
    start_server missing4 "$f" "$missing" || return 0
    # The failed path is listed in the health answer (its `failed` field).
    if curl -s --max-time 5 "$URL/api/v1/health" | grep -qF "$missing"; then
        echo "ok: exit 2 in $secs s; health names the failed path"
    else
        echo "FAIL: exit 2, but health does not name $missing: $(curl -s --max-time 5 "$URL/api/v1/health" | head -c 300)"
    fi
}

check_5() {
    need_loghub Proxifier_2k.log || return 0
    copy_fixed Proxifier_2k.log proxifier.log
    local f=$TMP/proxifier.log first last
    first=$(head -n1 "$f" | sed -n 's/^\[\([0-9][0-9]\)\.\([0-9][0-9]\) .*/\1-\2/p')
    last=$(tail -n1 "$f" | sed -n 's/^\[\([0-9][0-9]\)\.\([0-9][0-9]\) .*/\1-\2/p')
    lsv stats --histogram 1d --json "$f" >"$TMP/stats5.json" 2>"$TMP/stats5.err" || true
    python3 - "$TMP/stats5.json" "$first" "$last" "$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().splitlines()))' "$f")" <<'EOF' || true
import json, sys
path, first, last, lines = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
try:
    d = json.load(open(path))
except Exception as e:
    print(f"FAIL: stats --json printed no JSON ({e})")
    sys.exit()
DAY = 86_400_000
o, n = d.get("oldest") or {}, d.get("newest") or {}
b = (d.get("histogram") or {}).get("buckets") or []
problems = []
if not b:
    problems.append("no histogram buckets")
else:
    starts = [x["start_ms"] for x in b]
    if any(a >= c for a, c in zip(starts, starts[1:])):
        problems.append("buckets out of order")
    if o.get("ms") is None or not (o["ms"] - DAY < starts[0] <= o["ms"]):
        problems.append(f"first bucket {b[0]['start']} is not the first line's day ({o.get('utc')})")
    span = starts[-1] - starts[0]
    if span >= 366 * DAY or span < 0:
        problems.append(f"buckets span {span / DAY:.0f} days")
    if sum(x["count"] for x in b) != lines:
        problems.append(f"buckets hold {sum(x['count'] for x in b)} lines of {lines}")
if not (o.get("utc") or "")[5:10] == first:
    problems.append(f"oldest {o.get('utc')} is not the first line's date ({first})")
if not (n.get("utc") or "")[5:10] == last:
    problems.append(f"newest {n.get('utc')} is not the last line's date ({last})")
if o.get("ms") is not None and n.get("ms") is not None and not (o["ms"] < n["ms"] < o["ms"] + 366 * DAY):
    problems.append(f"oldest {o.get('utc')}, newest {n.get('utc')}")
# The year rule: the last stamp not after the file's time (+1 day).
if (n.get("utc") or "9999") > "2026-11-25":
    problems.append(f"newest {n.get('utc')} after the file's time 2026-11-24")
if problems:
    print("FAIL: " + "; ".join(problems))
else:
    print(f"ok: {o['utc'][:10]} .. {n['utc'][:10]} in {len(b)} daily buckets")
EOF
}

check_6() {
    need_loghub BGL_2k.log || return 0
    local levels
    levels=$(lsv stats --count-by level --json "$LOGHUB/BGL_2k.log" 2>&1 |
        pyj '" ".join(str(g["key"]["level"]) for g in d["groups"])' 2>&1) || true
    if [[ " $levels " == *" SEVERE "* && " $levels " == *" FATAL "* ]]; then
        echo "ok: levels $levels"
    else
        echo "FAIL: levels seen: ${levels:0:200}"
    fi
}

check_7() {
    echo "skip: checked by the test suite CI runs, not here"
}

check_8() {
    local f rc=0 seen
    f=$(gen_file 20000)
    env -u XDG_RUNTIME_DIR timeout 300 "$BIN" search --backend gpu -c -F sshd "$f" >/dev/null 2>"$TMP/xdg.err" || rc=$?
    env -u XDG_RUNTIME_DIR timeout 120 "$BIN" gpu-info >/dev/null 2>>"$TMP/xdg.err" || true
    seen=$(grep -m1 XDG_RUNTIME_DIR "$TMP/xdg.err") || true
    if [[ -n $seen ]]; then
        echo "FAIL: stderr has: $seen ($(grep -c XDG_RUNTIME_DIR "$TMP/xdg.err") lines)"
    elif ((rc != 0)); then
        echo "ok: no XDG_RUNTIME_DIR line (search --backend gpu exited $rc: $(head -c 120 "$TMP/xdg.err" | tr '\n' ' '))"
    else
        echo "ok: search --backend gpu and gpu-info"
    fi
}

check_9() {
    start_server demo9 --demo --lines 200000 || return 0
    local code t a b pa pb
    t=$(curl -s --max-time 30 -o "$TMP/body" -w '%{http_code} %{time_total}' -H 'content-type: application/json' \
        -d '{"patterns":["sshd[","ERROR_503"],"syntax":"literal"}' "$URL/api/v1/patterns") || t="000 0"
    code=${t%% *}
    t=${t#* }
    [[ $code == 200 ]] || { echo "FAIL: /api/v1/patterns answered $code $(head -c 200 "$TMP/body")"; return 0; }
    pa=$(pyj '[r["lines"] for r in d["patterns"] if r["index"] == 0][0]' <"$TMP/body")
    pb=$(pyj '[r["lines"] for r in d["patterns"] if r["index"] == 1][0]' <"$TMP/body")
    a=$(count_api '"patterns":["sshd["]')
    b=$(count_api '"patterns":["ERROR_503"]')
    local ms
    ms=$(python3 -c "print(f'{float(\"$t\") * 1000:.1f}')")
    if [[ $pa != "$a" || $pb != "$b" ]]; then
        echo "FAIL: patterns counts ($pa, $pb), count searches ($a, $b), in $ms ms"
    elif python3 -c "import sys; sys.exit(0 if float('$t') > 2 else 1)"; then
        echo "FAIL: counts agree ($a, $b) but took $ms ms"
    else
        echo "ok: $a and $b lines in $ms ms"
    fi
}

check_10() {
    local a b names na code sel total want
    a=$TMP/ten-a.log
    b=$TMP/ten-b.log
    lsv gen --lines 3000 --seed 1 -o "$a"
    lsv gen --lines 5000 --seed 2 -o "$b"
    start_server two10 "$a" "$b" || return 0
    # The served files' names, as the server gives them.
    names=$(count_api '"patterns":[""]' >/dev/null; pyj '" ".join(f["path"] for f in d["files"])' <"$TMP/body") || true
    na=$(pyj '[f["path"] for f in d["files"] if f["path"].endswith("ten-a.log")][0]' <"$TMP/body" 2>/dev/null) || true
    [[ -n $na ]] || { echo "FAIL: the served files are named: $names"; return 0; }
    want=$(wc -l <"$a" | tr -d ' ')
    total=$(curl -s --max-time 5 "$URL/api/v1/health" | pyj 'd["lines"]') || true
    code=$(post /api/v1/stats "{\"files\":[\"$na\"]}")
    if [[ $code != 2?? ]]; then
        echo "FAIL: stats with files answered $code $(head -c 200 "$TMP/body")"
        return 0
    fi
    sel=$(pyj 'd["selected"]' <"$TMP/body")
    if [[ $sel == "$want" ]]; then
        echo "ok: $sel of $total lines"
    else
        echo "FAIL: selected $sel, want $want (of $total)"
    fi
}

check_11() {
    local f problems=
    f=$(gen_file 2000)
    start_server page11 "$f" || return 0
    curl -s --max-time 10 "$URL/" >"$TMP/page.html" || true
    curl -s --max-time 10 "$URL/app.js" >"$TMP/app.js" || true
    [[ -s $TMP/page.html ]] || { echo "FAIL: / answered nothing"; return 0; }
    if grep -qi 'nothing is uploaded anywhere' "$TMP/page.html"; then
        problems+="the page says \"nothing is uploaded anywhere\"; "
    fi
    # The missing in-browser engine as a banner: in the page itself, or a
    # notice the page's script puts up with that text in the call (read
    # from the script, not run: a notice whose text is built elsewhere is
    # not seen).
    if grep -Eqi '(webassembly|in-browser) engine is not built|webassembly is not built' "$TMP/page.html" ||
        grep -Eqi "addNotice\\(\\s*['\"\`][^'\"\`]*(engine|webassembly)[^'\"\`]* not built" "$TMP/app.js"; then
        problems+="a banner says the WebAssembly engine is not built; "
    fi
    if [[ -z $problems ]]; then
        echo "ok"
    else
        echo "FAIL: ${problems%; }"
    fi
}

check_12() {
    local d=$TMP/man n short long
    if ! lsv man search 2>/dev/null | grep -q search; then
        echo "FAIL: man search printed no page naming search"
        return 0
    fi
    mkdir -p "$d"
    lsv man --dir "$d" >/dev/null 2>&1 || true
    n=$(find "$d" -type f | wc -l)
    short=$(lsv search -h 2>/dev/null | wc -l)
    long=$(lsv search --help 2>/dev/null | wc -l)
    if ((n > 1 && short > 0 && 2 * short <= long)); then
        echo "ok: $n pages; search -h $short lines, --help $long"
    else
        echo "FAIL: man --dir wrote $n files; search -h $short lines, --help $long"
    fi
}

check_13() {
    local f=$TMP/span.log zeros rows json
    printf '2026-11-20T10:00:00Z first line\n2026-11-21T10:00:00Z a day later\n' >"$f"
    lsv stats --histogram 1m "$f" >"$TMP/hist.txt" 2>&1 || true
    rows=$(grep -cE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$TMP/hist.txt") || true
    zeros=$(grep -cE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]*[[:space:]]+0([[:space:]]|$)' "$TMP/hist.txt") || true
    json=$(lsv stats --histogram 1m --json "$f" 2>&1 |
        pyj '"%d %d" % (len(d["histogram"]["buckets"]), sum(1 for b in d["histogram"]["buckets"] if b["count"] == 0))' 2>&1) || true
    if [[ $rows == 2 && $zeros == 0 && $json == "1441 1439" ]]; then
        echo "ok: 2 text rows; --json 1441 buckets, 1439 empty"
    else
        echo "FAIL: text rows $rows ($zeros with count 0); --json buckets, empty: $json (want 1441 1439)"
    fi
}

check_14() {
    local debug size=
    debug=$(awk '
        /^[[:space:]]*\[/ { sect = $0; gsub(/[[:space:]]/, "", sect) }
        sect == "[profile.release]" && /^[[:space:]]*debug[[:space:]]*=/ { print }
    ' Cargo.toml)
    if [[ -x $BIN ]]; then
        size=$(stat -L -c %s "$BIN")
    fi
    local mb=
    [[ -n $size ]] && mb=$(python3 -c "print(f'{$size / 1e6:.1f} MB')")
    if [[ -n $debug && ! $debug =~ =[[:space:]]*(0|false|\"none\")[[:space:]]*(#.*)?$ ]]; then
        echo "FAIL: [profile.release] has '$debug'${mb:+; the binary is $mb}"
    # DataFusion (logsieve sql) is ~80 MB of the stripped binary's 110.
    elif [[ -n $size ]] && ((size >= 128000000)); then
        echo "FAIL: the binary is $mb"
    else
        echo "ok: no debug info in [profile.release]${mb:+; the binary is $mb}"
    fi
}

check_15() {
    command -v rg >/dev/null || { echo "skip: rg not installed"; return 0; }
    local f out rc=0 rgout rgrc=0
    f=$(gen_file 2000)
    out=$(lsv search -c -F nomatchxyz "$f" 2>&1) || rc=$?
    rgout=$(rg -c -F nomatchxyz "$f" 2>&1) || rgrc=$?
    if [[ $out == "$rgout" && $rc == "$rgrc" && -z $out && $rc == 1 ]]; then
        echo "ok: nothing printed, exit 1"
    else
        echo "FAIL: printed '${out:0:80}' exit $rc; rg printed '${rgout:0:80}' exit $rgrc"
    fi
}

check_16() {
    python3 - README.md <<'EOF' || true
import re, sys
text = re.sub(r"\s+", " ", open(sys.argv[1], encoding="utf-8").read())
hits = [m.start() for m in re.finditer(r"query_range", text)]
for at in hits:
    near = text[max(0, at - 400): at + 400]
    if re.search(r"\bstart\b", near) and re.search(r"(last|past|one|an|1) hour|\b1h\b", near, re.I):
        print("ok")
        break
else:
    print(f"FAIL: README names query_range {len(hits)} time(s), none beside a default of the last hour without start")
EOF
}

# ---- run -------------------------------------------------------------------------

DESCRIPTIONS=(
    ""
    "serve --demo: stats oldest after 2020; sshd[ since 1h as search -c --since 1h"
    "serve --follow: an appended year-less line keeps the loaded lines' year"
    "serve --follow: an unterminated last line extended keeps rg's line numbers"
    "serve of a missing path exits 2 naming it; beside a file, health names it"
    "stats over Proxifier: the MM.DD wrap gives an ordered histogram within a year"
    "stats --count-by level over BGL: SEVERE and FATAL"
    "(covered by the test suite)"
    "no XDG_RUNTIME_DIR line on stderr when the GPU is opened without it"
    "POST /api/v1/patterns: per-pattern counts as count searches, under 2 s"
    "POST /api/v1/stats with files: only that file"
    "the page at /: no \"nothing is uploaded anywhere\", no missing-engine banner"
    "man pages: man search, man --dir; search -h much shorter than --help"
    "stats --histogram 1m: text without empty rows, --json with them"
    "release profile without debug info; binary under 128 MB"
    "search -c with no match on one file: nothing printed, exit 1, as rg -c"
    "README: a Loki query_range without start looks at the last hour"
)

# Each check runs in a subshell of its own (a command substitution: no
# errexit there, so a failing command is seen by the check, which prints
# its verdict), and its servers are stopped when it ends.
for n in $(seq 1 16); do
    desc=${DESCRIPTIONS[$n]}
    verdict=$(
        trap stop_check_servers EXIT
        "check_$n" 2>>"$TMP/stderr.log"
    ) || true
    verdict=$(printf '%s\n' "$verdict" | grep -E '^(ok|FAIL|skip)' | tail -n1) || true
    if [[ -z $verdict ]]; then
        verdict="FAIL: the check gave no verdict ($(tail -n1 "$TMP/stderr.log" 2>/dev/null))"
    fi
    case $verdict in
        ok*)
            PASSED=$((PASSED + 1))
            detail=${verdict#ok}
            detail=${detail#: }
            printf 'ok   %s  %s%s\n' "$n" "$desc" "${detail:+ ($detail)}"
            ;;
        skip*)
            SKIPPED=$((SKIPPED + 1))
            printf 'skip %s  %s: %s\n' "$n" "$desc" "${verdict#skip: }"
            ;;
        *)
            FAILED=$((FAILED + 1))
            printf 'FAIL %s  %s: %s\n' "$n" "$desc" "${verdict#FAIL: }"
            ;;
    esac
done

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))
