// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Deeply nested expressions are planned and run on a thread with a small
//! stack, as a tokio worker's (2 MiB) or a test thread's is.
//!
//! The SQL planner and the optimizer grow their stack as they recurse
//! (upstream's `recursive_protection`), but two recursions over an
//! expression did not: whether it is nullable (a `CASE` asks whether each
//! of its predicates can be NULL, which asks whether each operand is
//! nullable, and so on down the tree) and its name (`SchemaDisplay`). A
//! debug build overflowed its stack, an abort and not an error, on a
//! randomized `UPDATE` whose `ON` nested casts and `CASE`s about twelve
//! deep. Both now grow the stack as `get_type` does.

use std::thread;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;
use datafusion::prelude::*;

/// Half the stack of a thread Rust spawns and of a tokio worker (2 MiB):
/// the caller's frames take the rest (the randomized test's future took
/// most of it). Where nullability and expression names did not grow the
/// stack, the first test overflowed 1.5 MiB in a debug build.
const SMALL_STACK: usize = 1024 * 1024;

/// Runs `statements` in a new session on a thread of [`SMALL_STACK`] bytes,
/// and returns the last one's result as a table.
fn run_on_small_stack(statements: Vec<String>) -> Result<String> {
    run_on_stack(SMALL_STACK, statements)
}

/// Runs `statements` as [`run_on_small_stack`] does, on a thread of
/// `stack_size` bytes.
fn run_on_stack(stack_size: usize, statements: Vec<String>) -> Result<String> {
    thread::Builder::new()
        .stack_size(stack_size)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let ctx = SessionContext::new();
                let mut last = String::new();
                for sql in statements {
                    let batches = ctx.sql(&sql).await?.collect().await?;
                    last = pretty_format_batches(&batches)?.to_string();
                }
                Ok(last)
            })
        })
        .expect("a thread")
        .join()
        .expect("the thread finishes")
}

const TABLE: &str =
    "CREATE TABLE t (k INT, v INT) AS VALUES (1, 2), (NULL, 3), (4, NULL)";

/// Each level wraps the one below in `wrap`, which reads it as `{}`.
fn nested(depth: usize, wrap: &str) -> String {
    (0..depth).fold("k".to_string(), |inner, level| {
        wrap.replace("{}", &inner)
            .replace("{level}", &level.to_string())
    })
}

/// Nearly as deep as the SQL parser's recursion limit lets each shape be.
/// The answers are PostgreSQL 15's.
#[test]
fn nested_expressions_at_the_parser_limit() -> Result<()> {
    let shapes = [
        (40, "CASE WHEN k > {level} THEN {} ELSE NULLIF(v, k) END"),
        (40, "({} + {level})"),
        (20, "NULLIF(CAST({} AS INT), {level} + 5)"),
        // A `CASE` in the predicate of the next: planning asked for the
        // nullability of each level twice per level above it, and 14 levels
        // took 20 seconds
        (24, "CASE WHEN {} > {level} THEN k ELSE NULLIF(v, k) END"),
        (
            14,
            "CASE WHEN NOT ({} > {level} AND v IS NOT NULL) THEN k ELSE NULLIF(v, k) END",
        ),
    ];
    let mut results = vec![];
    for (depth, wrap) in shapes {
        let sql = format!(
            "SELECT count({}) AS c, sum({}) AS s FROM t",
            nested(depth, wrap),
            nested(depth, wrap)
        );
        let result = run_on_small_stack(vec![TABLE.into(), sql])?;
        results.push(format!("{depth} x {wrap}\n{result}"));
    }
    insta::assert_snapshot!(results.join("\n"), @r"
        40 x CASE WHEN k > {level} THEN {} ELSE NULLIF(v, k) END
        +---+---+
        | c | s |
        +---+---+
        | 2 | 5 |
        +---+---+
        40 x ({} + {level})
        +---+------+
        | c | s    |
        +---+------+
        | 2 | 1565 |
        +---+------+
        20 x NULLIF(CAST({} AS INT), {level} + 5)
        +---+---+
        | c | s |
        +---+---+
        | 2 | 5 |
        +---+---+
        24 x CASE WHEN {} > {level} THEN k ELSE NULLIF(v, k) END
        +---+---+
        | c | s |
        +---+---+
        | 2 | 5 |
        +---+---+
        14 x CASE WHEN NOT ({} > {level} AND v IS NOT NULL) THEN k ELSE NULLIF(v, k) END
        +---+---+
        | c | s |
        +---+---+
        | 2 | 5 |
        +---+---+
        ");
    Ok(())
}

/// The statement the randomized PostgreSQL differential test overflowed
/// on (with other rows and new values): a correlated scalar subquery in
/// `UPDATE ... FROM` whose `LEFT JOIN` condition nests casts, `NULLIF` and
/// `CASE`s. The rows after are PostgreSQL 15's.
#[test]
fn nested_casts_in_update_from() -> Result<()> {
    let result = run_on_small_stack(vec![
        "CREATE TABLE t1 (k INT, v INT, s VARCHAR) AS VALUES (0, 2, 'b'), (2, 1, 'a')"
            .into(),
        "CREATE TABLE t3 (k INT, w INT, a INT[]) AS VALUES (3, -1, [2, 1, -1]), \
         (1, 0, NULL), (NULL, NULL, [NULL, NULL]), (1, 1, [1, 2]), (2, 2, [1]), \
         (-1, -1, [3, 0])"
            .into(),
        "UPDATE t3 SET w = t3.k * 10 FROM (SELECT max(w) AS w FROM t3) AS x1 \
         WHERE ((t3.w * k) >= (SELECT count(x2.k) FROM t1 AS x2 LEFT JOIN t3 ON \
         NULLIF(CAST((v / NULLIF(CAST(CASE CAST(CASE CAST((0 % NULLIF(CAST(NULLIF(a[3], \
         CAST(CASE CAST(NULLIF(v, CAST((CASE WHEN NOT ((x2.s > upper(x2.s) AND CASE WHEN \
         (x2.k % NULLIF(GREATEST(w, v), 0)) BETWEEN CASE WHEN x2.v > NULLIF(t3.k, \
         CAST(cardinality(t3.a) AS INT)) THEN t3.k ELSE w END AND x1.w THEN v ELSE t3.w \
         END = x1.w)) THEN t3.k ELSE t3.w END * x2.v) AS INT)) AS INT) WHEN 2 THEN x2.k \
         END AS INT)) AS INT), 0)) AS INT) WHEN -1 THEN w ELSE w END AS INT) WHEN 0 THEN \
         x1.w WHEN -1 THEN x2.v ELSE v END AS INT), 0)) AS INT), t3.k) = x1.w LEFT JOIN \
         t1 ON t3.k = x2.k WHERE t1.v = x2.v) AND t3.w = t3.k)"
            .into(),
        "SELECT * FROM t3 ORDER BY k, w".into(),
    ])?;
    insta::assert_snapshot!(result, @r"
        +----+-----+------------+
        | k  | w   | a          |
        +----+-----+------------+
        | -1 | -10 | [3, 0]     |
        | 1  | 0   |            |
        | 1  | 10  | [1, 2]     |
        | 2  | 20  | [1]        |
        | 3  | -1  | [2, 1, -1] |
        |    |     | [, ]       |
        +----+-----+------------+
        ");
    Ok(())
}

/// A query of the randomized PostgreSQL differential test that overflowed a
/// tokio worker's stack in a debug build: a row of deeply nested values
/// compared with a row subquery. Each comparison the SQL planner met was
/// asked whether it compared rows, and the answer cloned the row's values,
/// a recursion as deep as the values outside the planner's stack growth.
/// The rows after are PostgreSQL 15's.
#[test]
fn nested_values_in_a_row_compared_with_a_subquery() -> Result<()> {
    let statements: Vec<String> = vec![
        "CREATE TABLE t1 (k INT, v INT, s VARCHAR) AS VALUES (1, 2, 'a'), (NULL, 3, 'b'), \
         (2, 2, 'c')"
            .into(),
        "CREATE TABLE t3 (k INT, w INT, a INT[]) AS VALUES (1, 2, [1, 2]), (2, NULL, NULL), \
         (3, 1, [3])"
            .into(),
        "SELECT t3.w AS c1 FROM t3 CROSS JOIN t1 CROSS JOIN t3 AS x1 WHERE ((NULLIF(v, \
         CAST(NULLIF(COALESCE(x1.k, 2), CAST(CASE WHEN CASE t1.v WHEN 3 THEN \
         CAST((CAST(GREATEST(CAST(CASE t3.k WHEN 3 THEN t1.k WHEN 1 THEN (3 / \
         NULLIF(t1.v, 0)) ELSE CAST(CASE WHEN CASE WHEN x1.w = LEAST(CAST((t3.k / \
         NULLIF(CAST(CASE WHEN (CASE WHEN t1.v <= t1.v THEN (x1.k + NULLIF(t1.v, \
         CAST(NULLIF(CAST(LEAST(1, CAST(cardinality(t3.a) AS INT)) AS INT), (x1.k - \
         t1.v)) AS INT))) ELSE t3.w END, v) = (t3.w, x1.k) THEN t3.w ELSE t3.w END AS \
         INT), 0)) AS INT), x1.k) THEN t3.k ELSE t3.w END = t1.k THEN t3.w ELSE t1.v \
         END AS INT) END AS INT), x1.k) AS INT) / NULLIF(v, 0)) AS INT) WHEN 1 THEN \
         x1.k END BETWEEN t1.v AND t1.v THEN v ELSE t3.w END AS INT)) AS INT)), v) IN \
         (SELECT t1.v AS c1, t1.k AS c2 FROM t3 WHERE v = t1.k)) ORDER BY 1"
            .into(),
    ];
    let result = run_on_small_stack(statements.clone())?;
    // Where the clone overflowed depends on where the planner last grew
    // its stack: try stacks of many sizes
    for kib in (512..=2048).step_by(32) {
        assert_eq!(
            run_on_stack(kib * 1024, statements.clone())?,
            result,
            "{kib} KiB"
        );
    }
    insta::assert_snapshot!(result, @r"
        +----+
        | c1 |
        +----+
        | 1  |
        | 1  |
        | 2  |
        | 2  |
        | 2  |
        |    |
        |    |
        +----+
        ");
    Ok(())
}
