#!/usr/bin/env python3
"""TPC-DS queries on two `datafusion-cli` commands, on the same data and
threads: typically the fork's binary with an optimizer option on, and the
same binary with it off through a wrapper that sets the option's
environment variable, for example

    #!/bin/sh
    export DATAFUSION_OPTIMIZER_JOIN_DYNAMIC_FILTER_BELOW_AGGREGATES=false
    exec "${FORK_CLI:-/tmp/bench-target/release/datafusion-cli}" "$@"

The data is a TPC-DS database as one parquet file per table,
`DIR/<table>.parquet`, for example from DuckDB's `tpcds` extension
(`CALL dsdgen(sf = 1)`, then `COPY <table> TO 'DIR/<table>.parquet'
(FORMAT parquet)` for each of the 24 tables). The queries are upstream's
(`datafusion/core/tests/tpc-ds/<n>.sql`, which `cargo xtask sync` links into
the tree; the shared test data's copy otherwise). A file with two
statements (14, 23, 24, 39) is two queries, `q14_1` and `q14_2`; each is
timed on its own.

The script runs `rounds` rounds, each starting one process of A and then one
of B, that load the parquet files into memory tables (as
`tpch_subqueries_vs_duckdb.py` does) and run each query once to warm up and
`runs` times more. A query's time is the median of all its timed runs over
all rounds; the spread is the lowest and highest of the rounds' ratios. The
two must return the same number of rows.

The queries are names like `q1 q6`, or the name of an optimizer rule in
`tpc-plan-changes.txt` for the TPC-DS queries whose plans it changes; by
default, every TPC-DS query that file lists.

    python3 benches/tpcds_option_on_off.py DIR CLI_A CLI_B [threads] [runs] [rounds] [queries...]
"""

import os
import re
import statistics
import sys

from tpch_subqueries_vs_duckdb import geometric_mean, paired_rounds

TABLES = [
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer",
    "customer_address", "customer_demographics", "date_dim", "household_demographics",
    "income_band", "inventory", "item", "promotion", "reason", "ship_mode", "store",
    "store_returns", "store_sales", "time_dim", "warehouse", "web_page", "web_returns",
    "web_sales", "web_site",
]  # fmt: skip
HERE = os.path.dirname(os.path.abspath(__file__))
# Upstream's query files: linked into the tree by `cargo xtask sync`, or
# the shared test data they link to
QUERY_DIRS = [
    os.path.join(HERE, "..", "datafusion", "core", "tests", "tpc-ds"),
    "/work/shared/test-data/datafusion/core/tests/tpc-ds",
]
PLAN_CHANGES = os.path.join(HERE, "tpc-plan-changes.txt")


def query_file(number):
    for directory in QUERY_DIRS:
        path = os.path.join(directory, f"{number}.sql")
        if os.path.exists(path):
            return path
    sys.exit(f"no {number}.sql in any of {QUERY_DIRS}")


def file_statements(number):
    """The statements of query file `<number>.sql`, without comment lines
    (the CLI would read a `;` after a trailing comment as commented out)."""
    with open(query_file(number)) as f:
        text = f.read()
    parts = []
    for part in text.split(";"):
        lines = [line for line in part.splitlines() if not line.strip().startswith("--")]
        if "\n".join(lines).strip():
            parts.append("\n".join(lines).strip())
    return parts


def statements(query):
    """The statements that `query` runs and the index of the one timed, as
    `tpch_subqueries_vs_duckdb.statements` gives them: `q1` is file 1's only
    statement, `q14_2` file 14's second."""
    number, _, part = query[1:].partition("_")
    parts = file_statements(number)
    return [parts[int(part) - 1] if part else parts[0]], 0


def expand(queries):
    """Query names, with a file of several statements split into one name
    per statement (`q14` into `q14_1` and `q14_2`)."""
    names = []
    for query in queries:
        count = len(file_statements(query[1:])) if "_" not in query else 1
        names += [query] if count == 1 else [f"{query}_{i}" for i in range(1, count + 1)]
    return names


def planned_changes(rule=None):
    """The TPC-DS queries `tpc-plan-changes.txt` lists (`tpcds/q1 DIGEST
    RULE` lines), all of them or those `rule` changes."""
    queries = []
    with open(PLAN_CHANGES) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3 and fields[0].startswith("tpcds/") and rule in (None, fields[2]):
                queries.append(fields[0].removeprefix("tpcds/"))
    return queries


def chosen_queries(args):
    """Query names from the command line: names, rule names, or nothing for
    every TPC-DS query the plan-changes file lists."""
    if not args:
        return expand(planned_changes())
    queries = []
    for arg in args:
        queries += planned_changes(arg) if not re.fullmatch(r"q\d+(_\d+)?", arg) else [arg]
    if not queries:
        sys.exit(f"no queries in {args}")
    return expand(queries)


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    directory, cli_a, cli_b = os.path.abspath(args[0]), args[1], args[2]
    threads = int(args[3]) if len(args) > 3 else 2
    runs = int(args[4]) if len(args) > 4 else 5
    rounds = int(args[5]) if len(args) > 5 else 3
    queries = chosen_queries(args[6:])

    a, b, round_ratios = paired_rounds(
        directory, cli_a, cli_b, threads, runs, rounds, queries, TABLES, statements
    )

    print(f"A: {cli_a}\nB: {cli_b}\n")
    print(f"threads {threads}, {rounds} rounds of {runs} runs after one warm-up, medians\n")
    print("| query | A (ms) | B (ms) | A / B | rounds' ratios |")
    print("| --- | --- | --- | --- | --- |")
    ratios = {}
    for q in queries:
        ratios[q] = statistics.median(a[q]) / statistics.median(b[q])
        print(
            f"| {q} | {statistics.median(a[q]):.1f} | {statistics.median(b[q]):.1f} "
            f"| {ratios[q]:.3f} | {min(round_ratios[q]):.3f} to {max(round_ratios[q]):.3f} |"
        )
    print(f"\ngeometric mean of A / B, {len(queries)} queries: {geometric_mean(list(ratios.values())):.3f}")


if __name__ == "__main__":
    main()
