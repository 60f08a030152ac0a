#!/usr/bin/env python3
"""The ten TPC-H queries with subqueries, on the fork's CLI, DuckDB and
(optionally) stock DataFusion from PyPI, on the same data and threads.

Each engine loads the parquet files of a TPC-H database (for example from
`tpchgen-cli parquet -s 1 --output-dir DIR`) into in-memory tables, as a CLI
user does (`CREATE TABLE t AS SELECT * FROM 'DIR/t.parquet'`), then runs each
query once to warm up and `runs` times more, and the script prints each
engine's median per query, the fork's ratio to the others, and their
geometric means. The queries come from upstream's TPC-H query files.

The fork runs in one `datafusion-cli` process (its `Elapsed` lines are the
times, printed with `--maxrows 1`); DuckDB and DataFusion's Python bindings
run in this process, the result fetched as Arrow. Each engine also reports
each query's row count: they must agree.

Neither DuckDB nor DataFusion's Python package is a dependency of the
project: `pip install duckdb` (and `pip install datafusion==55.0.0`).

    python3 benches/tpch_subqueries_vs_duckdb.py DIR FORK_CLI [threads] [runs] [--pypi]
"""

import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TABLES = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]
QUERIES = ["q2", "q4", "q11", "q15", "q16", "q17", "q18", "q20", "q21", "q22"]
# Upstream's query files, which `cargo xtask sync` links into the tree
QUERY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "queries")


def statements(query):
    """The statements of a query file, and the index of the one that
    answers (q15 creates a view first and drops it after)."""
    with open(os.path.join(QUERY_DIR, f"{query}.sql")) as f:
        text = f.read()
    parts = [p.strip() for p in text.split(";") if p.strip()]
    answer = next(i for i, p in enumerate(parts) if p.lower().lstrip().startswith("select"))
    return parts, answer


def cli_samples(directory, cli, threads, runs, queries=QUERIES, tables=TABLES, statements=statements):
    """Milliseconds of each query's `runs` timed runs (after one warm-up) and
    its row count, from one `datafusion-cli` process that loads `tables`
    from `DIR/<table>.parquet` into memory tables. `statements(query)` gives
    the statements a query runs and the index of the one timed."""
    lines = [f"SET datafusion.execution.target_partitions = {threads};"]
    for table in tables:
        lines.append(f"CREATE TABLE {table} AS SELECT * FROM '{directory}/{table}.parquet';")
    # Which `Elapsed` line belongs to which query's answer
    plan = []
    for query in queries:
        parts, answer = statements(query)
        for _ in range(runs + 1):
            for i, part in enumerate(parts):
                lines.append(part + ";")
                plan.append(query if i == answer else None)
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("\n".join(lines))
        script = f.name
    done = subprocess.run([cli, "--maxrows", "1", "-f", script], capture_output=True, text=True)
    os.unlink(script)
    out = done.stdout
    # One line per statement that ran: "N row(s) fetched." or a DDL's
    # "0 row(s) fetched.", each followed by "Elapsed X seconds."; a failed
    # statement prints its error on stderr and neither line
    counts = [int(n) for n in re.findall(r"^(\d+) row\(s\) fetched", out, re.M)]
    elapsed = [float(s) for s in re.findall(r"^Elapsed ([0-9.]+) seconds", out, re.M)]
    setup = 1 + len(tables)
    if done.returncode != 0 or len(elapsed) != setup + len(plan):
        sys.exit(
            f"{cli}: exit code {done.returncode}, expected {setup + len(plan)} timed statements, "
            f"got {len(elapsed)}:\n{out[-2000:]}\n{done.stderr[-4000:]}"
        )
    times, rows = {}, {}
    for query, seconds, count in zip(plan, elapsed[setup:], counts[setup:]):
        if query is None:
            continue
        times.setdefault(query, []).append(seconds * 1000)
        rows[query] = count
    return {q: t[1:] for q, t in times.items()}, rows


def paired_rounds(directory, cli_a, cli_b, threads, runs, rounds, queries, tables=TABLES, statements=statements):
    """`rounds` rounds, each one `cli_samples` process of A and then one of
    B: all timed runs of A and of B per query, and each round's ratio of
    their medians. The two must return the same number of rows."""
    a, b = {q: [] for q in queries}, {q: [] for q in queries}
    round_ratios = {q: [] for q in queries}
    for _ in range(rounds):
        a_round, a_rows = cli_samples(directory, cli_a, threads, runs, queries, tables, statements)
        b_round, b_rows = cli_samples(directory, cli_b, threads, runs, queries, tables, statements)
        for q in queries:
            if a_rows[q] != b_rows[q]:
                sys.exit(f"{q}: {cli_a} returned {a_rows[q]} rows, {cli_b} {b_rows[q]}")
            a[q] += a_round[q]
            b[q] += b_round[q]
            round_ratios[q].append(statistics.median(a_round[q]) / statistics.median(b_round[q]))
    return a, b, round_ratios


def fork_medians(directory, cli, threads, runs):
    """Median milliseconds and row count per query, from one CLI process."""
    samples, rows = cli_samples(directory, cli, threads, runs)
    return {q: statistics.median(t) for q, t in samples.items()}, rows


def python_medians(run, runs):
    times, rows = {}, {}
    for query in QUERIES:
        parts, answer = statements(query)
        samples = []
        for _ in range(runs + 1):
            for i, part in enumerate(parts):
                start = time.perf_counter()
                count = run(part)
                if i == answer:
                    samples.append((time.perf_counter() - start) * 1000)
                    rows[query] = count
        times[query] = statistics.median(samples[1:])
    return times, rows


def duckdb_medians(directory, threads, runs):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    for table in TABLES:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{directory}/{table}.parquet')")

    def run(sql):
        relation = con.sql(sql)
        if relation is None:
            return 0
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        return fetch().num_rows

    return python_medians(run, runs), f"DuckDB {duckdb.__version__}"


def pypi_medians(directory, threads, runs):
    import datafusion

    config = datafusion.SessionConfig().with_target_partitions(threads)
    ctx = datafusion.SessionContext(config)
    for table in TABLES:
        ctx.register_parquet(f"{table}_file", f"{directory}/{table}.parquet")
        ctx.sql(f"CREATE TABLE {table} AS SELECT * FROM {table}_file").collect()

    def run(sql):
        return sum(batch.num_rows for batch in ctx.sql(sql).collect())

    return python_medians(run, runs), f"DataFusion {datafusion.__version__} (PyPI)"


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    directory, cli = os.path.abspath(args[0]), args[1]
    threads = int(args[2]) if len(args) > 2 else 2
    runs = int(args[3]) if len(args) > 3 else 5
    fork, fork_rows = fork_medians(directory, cli, threads, runs)
    others = [duckdb_medians(directory, threads, runs)]
    if "--pypi" in sys.argv:
        others.append(pypi_medians(directory, threads, runs))
    header = "| query | fork (ms) |"
    rule = "| --- | --- |"
    for _, name in others:
        header += f" {name} (ms) | fork / {name.split()[0]} |"
        rule += " --- | --- |"
    print(f"threads {threads}, medians of {runs} runs after one warm-up\n")
    print(header)
    print(rule)
    for query in QUERIES:
        line = f"| {query} | {fork[query]:.1f} |"
        for (times, rows), _ in others:
            if rows[query] != fork_rows[query]:
                sys.exit(f"{query}: the fork returned {fork_rows[query]} rows, another engine {rows[query]}")
            line += f" {times[query]:.1f} | {fork[query] / times[query]:.2f} |"
        print(line)
    line = "| geometric mean | |"
    for (times, _), _ in others:
        line += " | {:.2f} |".format(geometric_mean([fork[q] / times[q] for q in QUERIES]))
    print(line)


if __name__ == "__main__":
    main()
