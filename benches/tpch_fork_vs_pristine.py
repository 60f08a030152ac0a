#!/usr/bin/env python3
"""The 22 TPC-H queries on the fork's `datafusion-cli` and on pristine
DataFusion's, both built the same way, on the same data and threads.

Build the two binaries with the same profile and the same dependency
versions, for example the `bench` profile (`codegen-units = 16`, no LTO, the
settings `cargo install datafusion-cli` builds with):

    cargo build --profile bench -p datafusion-cli          # the fork
    # pristine: the crate's own source from crates.io, with the fork's
    # Cargo.lock, built by `cargo build --profile bench` in a folder of its own

First the script compares the two physical plans of each query
(`EXPLAIN`, with the fork's readable labels off, since they rename the
columns a plan shows): the 5% target of issue 22 holds where the plans are
the same. Then it runs `rounds` rounds, each starting one process of the
fork and one of pristine, in turn, that load the parquet files into memory
tables (as `tpch_subqueries_vs_duckdb.py` does) and run each query once to
warm up and `runs` times more. A query's time is the median of all its
timed runs over all rounds; the spread is the lowest and highest of the
rounds' ratios. The two must return the same number of rows.

    python3 benches/tpch_fork_vs_pristine.py DIR FORK_CLI PRISTINE_CLI [threads] [runs] [rounds]
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile

from tpch_subqueries_vs_duckdb import TABLES, geometric_mean, paired_rounds, statements

QUERIES = [f"q{n}" for n in range(1, 23)]
# The fork's labels rename the columns an `EXPLAIN` shows, not what runs
FORK_PLAN_SETTINGS = ["SET datafusion.sql_parser.pretty_column_names = false"]


def physical_plans(directory, cli, threads, settings=()):
    """Each query's physical plan, as the CLI's `EXPLAIN` prints it."""
    lines = [
        f"SET datafusion.execution.target_partitions = {threads};",
        "SET datafusion.explain.physical_plan_only = true;",
        "SET datafusion.explain.format = 'indent';",
    ]
    lines += [f"{setting};" for setting in settings]
    for table in TABLES:
        lines.append(f"CREATE TABLE {table} AS SELECT * FROM '{directory}/{table}.parquet';")
    for query in QUERIES:
        parts, answer = statements(query)
        for i, part in enumerate(parts):
            if i == answer:
                lines.append(f"SELECT '-- plan of {query}' AS marker;")
                lines.append(f"EXPLAIN {part};")
            else:
                lines.append(part + ";")
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("\n".join(lines))
        script = f.name
    out = subprocess.run(
        [cli, "--format", "tsv", "--maxrows", "inf", "-f", script],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    os.unlink(script)
    plans = {}
    for chunk in re.split(r"^-- plan of ", out, flags=re.M)[1:]:
        query, _, body = chunk.partition("\n")
        # Keep the plan's lines, not the CLI's row counts and timings
        plans[query.strip()] = "\n".join(
            line for line in body.splitlines() if not re.match(r"^(\d+ row\(s\) fetched|Elapsed |$)", line)
        )
    return plans


def comparable(plan):
    """A plan as far as what runs: without what only the printing tells
    apart. The memory tables' `partition_sizes` list their partitions in the
    order the load finished them, and the fork prints an operand in
    parentheses where SQL needs them (`x * (1 - y)`), where pristine prints
    `x * 1 - y` for the same expression."""
    if plan is None:
        return None
    plan = re.sub(
        r"partition_sizes=\[([0-9, ]*)\]",
        lambda m: "partition_sizes=" + str(sorted(int(n) for n in m.group(1).split(",") if n.strip())),
        plan,
    )
    return plan.replace("(", "").replace(")", "")


def main():
    args = sys.argv[1:]
    directory, fork_cli, pristine_cli = os.path.abspath(args[0]), args[1], args[2]
    threads = int(args[3]) if len(args) > 3 else 2
    runs = int(args[4]) if len(args) > 4 else 5
    rounds = int(args[5]) if len(args) > 5 else 3

    fork_plans = physical_plans(directory, fork_cli, threads, FORK_PLAN_SETTINGS)
    pristine_plans = physical_plans(directory, pristine_cli, threads)
    same_plan = {
        q: comparable(fork_plans.get(q)) == comparable(pristine_plans.get(q)) for q in QUERIES
    }

    fork, pristine, round_ratios = paired_rounds(
        directory, fork_cli, pristine_cli, threads, runs, rounds, QUERIES
    )

    print(f"threads {threads}, {rounds} rounds of {runs} runs after one warm-up, medians\n")
    print("| query | same plan | fork (ms) | pristine (ms) | fork / pristine | rounds' ratios |")
    print("| --- | --- | --- | --- | --- | --- |")
    ratios = {}
    for q in QUERIES:
        ratios[q] = statistics.median(fork[q]) / statistics.median(pristine[q])
        print(
            f"| {q} | {'yes' if same_plan[q] else 'no'} | {statistics.median(fork[q]):.1f} "
            f"| {statistics.median(pristine[q]):.1f} | {ratios[q]:.3f} "
            f"| {min(round_ratios[q]):.3f} to {max(round_ratios[q]):.3f} |"
        )

    same = [ratios[q] for q in QUERIES if same_plan[q]]
    print(f"\ngeometric mean, all 22: {geometric_mean(list(ratios.values())):.3f}")
    if same:
        print(f"geometric mean, the {len(same)} with the same plan: {geometric_mean(same):.3f}")
    for q in QUERIES:
        if not same_plan[q]:
            print(f"\n{q}: plans differ\n-- fork:\n{fork_plans.get(q)}\n-- pristine:\n{pristine_plans.get(q)}")


if __name__ == "__main__":
    main()
