#!/usr/bin/env python3
"""Nested correlated subqueries on PostgreSQL's `tenk1`, on the fork's CLI
and on DuckDB, on the same data and threads.

A subquery inside a subquery that reads the outermost query is where a
decorrelation can multiply the levels' rows instead of their distinct
values. The script runs the four shapes of issue 39 and `count` random
ones: two or three levels of `EXISTS`, `NOT EXISTS`, `IN` and scalar
subqueries, each level correlated by equalities (and sometimes an
inequality) to any level above it, over `tenk1` (10,000 rows;
PostgreSQL's regression data file `tenk.data`, in
`../shared/test-data/postgres/`). Each query answers with one `count(*)`
or `sum`: both engines must give the same value. The script prints each
query's medians and the fork's ratio to DuckDB, the geometric mean and
the worst ratio, and the random queries' seed.

The fork runs in one `datafusion-cli` process (the timing is
`tpch_subqueries_vs_duckdb.py`'s); DuckDB runs in this process. DuckDB is
not a dependency of the project: `pip install duckdb`.

    python3 benches/nested_subqueries_vs_duckdb.py TENK_DATA FORK_CLI [threads] [runs] [count] [seed]
"""

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tpch_subqueries_vs_duckdb import cli_samples, geometric_mean  # noqa: E402

COLUMNS = [
    ("unique1", "INT"), ("unique2", "INT"), ("two", "INT"), ("four", "INT"),
    ("ten", "INT"), ("twenty", "INT"), ("hundred", "INT"), ("thousand", "INT"),
    ("twothousand", "INT"), ("fivethous", "INT"), ("tenthous", "INT"),
    ("odd", "INT"), ("even", "INT"), ("stringu1", "VARCHAR"),
    ("stringu2", "VARCHAR"), ("string4", "VARCHAR"),
]

# The four shapes of issue 39, as it measured them
SHAPES = {
    "exists_over_not_exists": """SELECT count(*) FROM tenk1 a, tenk1 b
WHERE a.thousand = b.thousand
  AND EXISTS (SELECT 1 FROM tenk1 c WHERE b.hundred = c.hundred
              AND NOT EXISTS (SELECT 1 FROM tenk1 d WHERE a.thousand = d.thousand))""",
    "in_over_in": """SELECT count(*) FROM tenk1 a WHERE unique2 IN (
  SELECT unique1 FROM tenk1 b WHERE b.four = a.four
  AND b.thousand IN (SELECT thousand FROM tenk1 c WHERE c.twenty = a.twenty))""",
    "exists_over_exists": """SELECT count(*) FROM tenk1 a WHERE EXISTS (
  SELECT 1 FROM tenk1 b WHERE b.hundred = a.hundred
  AND EXISTS (SELECT 1 FROM tenk1 c WHERE c.thousand = a.thousand AND c.ten = b.ten))""",
    "scalar_over_scalar": """SELECT sum((SELECT max(b.unique1)
  + (SELECT min(c.unique2) FROM tenk1 c WHERE c.thousand = a.thousand)
  FROM tenk1 b WHERE b.hundred = a.hundred)) FROM tenk1 a""",
}

# Columns of few to many distinct values, for the correlations
KEYS = ["two", "four", "ten", "twenty", "hundred", "thousand", "unique1"]


def random_query(rng):
    """`SELECT count(*) FROM tenk1 l0 WHERE <predicate>`, the predicate a
    subquery of two or three levels, each correlated to levels above."""
    depth = rng.choice([2, 2, 3])

    def level(k):
        # The subquery of level k, reading levels 0..k-1
        alias = f"l{k}"
        read = sorted(rng.sample(range(k), rng.choice([1, 1, 2]) if k > 1 else 1))
        conditions = []
        for above in read:
            key = rng.choice(KEYS)
            conditions.append(f"{alias}.{key} = l{above}.{key}")
        if rng.random() < 0.3:
            conditions.append(f"{alias}.ten < l{rng.randrange(k)}.twenty")
        if k < depth:
            conditions.append(level(k + 1))
        where = " AND ".join(conditions)
        kind = rng.choice(["exists", "not exists", "in", "scalar"])
        outer = f"l{k - 1}"
        if kind == "exists":
            return f"EXISTS (SELECT 1 FROM tenk1 {alias} WHERE {where})"
        if kind == "not exists":
            return f"NOT EXISTS (SELECT 1 FROM tenk1 {alias} WHERE {where})"
        if kind == "in":
            return f"{outer}.unique2 IN (SELECT {alias}.unique1 FROM tenk1 {alias} WHERE {where})"
        return f"{outer}.hundred < (SELECT count(*) FROM tenk1 {alias} WHERE {where})"

    return f"SELECT count(*) FROM tenk1 l0 WHERE {level(1)}"


def tenk_parquet(tenk_data, directory):
    """`tenk1` as `directory/tenk1.parquet`, written by DuckDB from the
    tab-separated file, for both engines to load the same way."""
    import duckdb

    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in COLUMNS)
    duckdb.sql(
        f"COPY (SELECT * FROM read_csv('{tenk_data}', delim = '\\t', header = false, "
        f"columns = {{{columns}}})) TO '{directory}/tenk1.parquet' (FORMAT parquet)"
    )


def fork_values(directory, cli, queries):
    """Each query's answer on the fork, as text."""
    lines = [f"CREATE TABLE tenk1 AS SELECT * FROM '{directory}/tenk1.parquet';"]
    lines += [sql + ";" for sql in queries.values()]
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("\n".join(lines))
        script = f.name
    done = subprocess.run([cli, "-q", "--format", "csv", "-f", script], capture_output=True, text=True)
    os.unlink(script)
    if done.returncode != 0:
        sys.exit(f"{cli}: {done.stderr[-4000:]}")
    # Each answer is a header line and a value line
    rows = [line for line in done.stdout.splitlines() if line.strip()]
    return dict(zip(queries, rows[1::2]))


def duckdb_runs(directory, threads, runs, queries):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"CREATE TABLE tenk1 AS SELECT * FROM read_parquet('{directory}/tenk1.parquet')")
    times, values = {}, {}
    for name, sql in queries.items():
        samples = []
        for _ in range(runs + 1):
            start = time.perf_counter()
            value = con.sql(sql).fetchall()[0][0]
            samples.append((time.perf_counter() - start) * 1000)
        times[name] = statistics.median(samples[1:])
        values[name] = "" if value is None else str(value)
    return times, values, f"DuckDB {duckdb.__version__}"


def main():
    args = sys.argv[1:]
    tenk_data, cli = os.path.abspath(args[0]), args[1]
    threads = int(args[2]) if len(args) > 2 else 2
    runs = int(args[3]) if len(args) > 3 else 5
    count = int(args[4]) if len(args) > 4 else 20
    seed = int(args[5]) if len(args) > 5 else 39
    rng = random.Random(seed)
    queries = dict(SHAPES)
    for i in range(count):
        queries[f"random_{i}"] = random_query(rng)
    with tempfile.TemporaryDirectory() as directory:
        tenk_parquet(tenk_data, directory)
        values = fork_values(directory, cli, queries)
        fork, _ = cli_samples(
            directory, cli, threads, runs, list(queries), ["tenk1"],
            lambda name: ([queries[name]], 0),
        )
        duck, duck_values, duck_name = duckdb_runs(directory, threads, runs, queries)
    print(f"threads {threads}, medians of {runs} runs after one warm-up, {count} random queries of seed {seed}\n")
    print(f"| query | fork (ms) | {duck_name} (ms) | fork / DuckDB |")
    print("| --- | --- | --- | --- |")
    ratios = {}
    for name in queries:
        if values[name] != duck_values[name]:
            sys.exit(f"{name}: the fork answered {values[name]}, DuckDB {duck_values[name]}\n{queries[name]}")
        fork_ms = statistics.median(fork[name])
        ratios[name] = fork_ms / duck[name]
        print(f"| {name} | {fork_ms:.1f} | {duck[name]:.1f} | {ratios[name]:.2f} |")
    worst = max(ratios, key=ratios.get)
    print(f"\ngeometric mean {geometric_mean(list(ratios.values())):.2f}; worst {worst} {ratios[worst]:.2f}")
    if ratios[worst] > 2:
        print(f"worst query:\n{queries[worst]}")


if __name__ == "__main__":
    main()
