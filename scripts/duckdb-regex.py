#!/usr/bin/env python3
"""DuckDB's regexp_matches over the regex suite (a competitor on the same lines).

Reads the suite from crates/logsieve-bench/src/regex_suite.rs (the list the
`regex` bench runs), loads FILE as one row per line, and counts the lines
each regex matches with `regexp_matches` (RE2), on all cores: a warm-up run,
then the median of ITERS runs. Prints a markdown table; compare its counts
with the `regex` bench's count column (same file: `logsieve gen --lines N
--seed 42` is the bench's corpus).

    python3 scripts/duckdb-regex.py FILE [ITERS]
"""
import os
import re
import statistics
import sys
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite():
    src = open(os.path.join(ROOT, "crates/logsieve-bench/src/regex_suite.rs")).read()
    body = src[src.index("pub const SUITE"):]
    body = body[: body.index("];")]
    # r"..." and r#"..."# literals, in order.
    return [m.group(2) for m in re.finditer(r'r(#?)"(.*?)"\1', body)]


def main():
    path = sys.argv[1]
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    con = duckdb.connect()
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    t = time.perf_counter()
    con.execute("SET enable_progress_bar = false")
    # One VARCHAR column per line: no delimiter, quote or escape in play
    # (`read_text` + `string_split` gave the same rows in 172 s for 1M
    # lines on the H100 machine; this takes seconds).
    con.execute(
        "CREATE TABLE t AS SELECT line FROM read_csv(?, columns = {'line': 'VARCHAR'}, "
        "delim = chr(1), quote = '', escape = '', header = false, auto_detect = false, "
        "new_line = '\\n')",
        [path],
    )
    load = time.perf_counter() - t
    rows = con.execute("SELECT count(*) FROM t").fetchone()[0]
    print(f"duckdb {duckdb.__version__}, threads {threads}, {rows} rows, loaded in {load:.2f} s\n")
    print("| regex | count | median ms | min ms |")
    print("|---|---:|---:|---:|")
    for p in suite():
        if "'" in p:
            raise SystemExit(f"{p}: a quote in the pattern")
        sql = f"SELECT count(*) FROM t WHERE regexp_matches(line, '{p}')"
        count = con.execute(sql).fetchone()[0]
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            con.execute(sql).fetchone()
            times.append((time.perf_counter() - t) * 1e3)
        cell = p.replace("|", "\\|")
        print(f"| `{cell}` | {count} | {statistics.median(times):.2f} | {min(times):.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
