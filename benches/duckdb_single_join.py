#!/usr/bin/env python3
"""The single-join benchmark's lookup shapes, run in DuckDB for comparison.

`cargo xtask bench single_join` writes TPC-H tables to parquet files and
prints their directory; this script loads the same files the two ways the
benchmark does (views over the files, and in-memory tables loaded from them),
with the same number of threads, and prints the median time of each shape in
its single-join form, the result fetched as Arrow as DataFusion returns it.

DuckDB is not a dependency of the project: `pip install duckdb pyarrow` first.

    python3 benches/duckdb_single_join.py /tmp/fork-benches-tpch-sf1 [threads] [runs]
"""

import statistics
import sys
import time

import duckdb

TABLES = ["customer", "orders", "part", "lineitem", "lineitem_sample"]

# The same queries as `SHAPES` in benches/single_join.rs, single-join form.
SHAPES = {
    "projection_orders_customer": "SELECT o_orderkey, (SELECT c_name FROM customer "
    "WHERE c_custkey = o_custkey) FROM orders",
    "projection_lineitem_part": "SELECT l_orderkey, (SELECT p_name FROM part "
    "WHERE p_partkey = l_partkey) FROM lineitem",
    "projection_small_outer": "SELECT l_orderkey, (SELECT o_totalprice FROM orders "
    "WHERE o_orderkey = l_orderkey) FROM lineitem_sample",
    "filter_orders_customer": "SELECT o_orderkey FROM orders WHERE o_totalprice > "
    "(SELECT c_acctbal FROM customer WHERE c_custkey = o_custkey)",
    "filter_looked_up_value": "SELECT o_orderkey FROM orders WHERE (SELECT c_name "
    "FROM customer WHERE c_custkey = o_custkey) = 'Customer#000000043'",
    "filter_non_pushable": "SELECT o_orderkey FROM orders WHERE (SELECT c_acctbal "
    "FROM customer WHERE c_custkey = o_custkey) > 0 OR o_totalprice > 300000",
}


def fetch_arrow(con, sql):
    relation = con.sql(sql)
    # DuckDB 2 names it `to_arrow_table`, earlier versions `arrow`.
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    return fetch()


def median_ms(con, sql, runs):
    fetch_arrow(con, sql)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fetch_arrow(con, sql)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    directory = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    print(f"duckdb {duckdb.__version__}, {threads} threads, median of {runs} runs")
    for storage, kind in [("parquet_external", "VIEW"), ("parquet_in_memory", "TABLE")]:
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        for table in TABLES:
            con.execute(
                f"CREATE {kind} {table} AS "
                f"SELECT * FROM read_parquet('{directory}/{table}.parquet')"
            )
        for name, sql in SHAPES.items():
            print(f"{name}/{storage}: {median_ms(con, sql, runs):.1f} ms")


if __name__ == "__main__":
    main()
