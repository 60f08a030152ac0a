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

//! The column headers a user sees with
//! `datafusion.sql_parser.pretty_column_names` on and off: one test per row
//! of the proposal's tables, and the cases around them (ordering and
//! grouping by current names, set operations, joins, collisions, scope).

use datafusion::arrow::array::StringArray;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;
use datafusion::prelude::*;
use insta::assert_snapshot;

const OPTION: &str = "datafusion.sql_parser.pretty_column_names";

async fn context(pretty: bool) -> Result<SessionContext> {
    let config = SessionConfig::new()
        .with_target_partitions(1)
        .set_bool(OPTION, pretty);
    let ctx = SessionContext::new_with_config(config);
    for sql in [
        "CREATE TABLE t (a INT, b INT, c INT) AS VALUES (1, 10, 4), (2, 20, 6), (3, 20, 8)",
        "CREATE TABLE t2 (a INT, d INT) AS VALUES (1, 100), (3, 300)",
        "CREATE VIEW v AS SELECT a + 1 FROM t",
    ] {
        ctx.sql(sql).await?.collect().await?;
    }
    Ok(ctx)
}

/// The output column names of `sql`, with the option on or off.
async fn headers(pretty: bool, sql: &str) -> Result<Vec<String>> {
    let ctx = context(pretty).await?;
    let df = ctx.sql(sql).await?;
    let names = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // Every labeled query must also run.
    df.collect().await?;
    Ok(names)
}

/// Asserts the headers of `sql` with the option off (today's names) and on.
async fn check(sql: &str, current: &[&str], proposed: &[&str]) {
    let off = headers(false, sql).await.unwrap();
    assert_eq!(off, current, "option off: {sql}");
    let on = headers(true, sql).await.unwrap();
    assert_eq!(on, proposed, "option on: {sql}");
}

async fn show(sql: &str) -> String {
    let ctx = context(true).await.unwrap();
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    pretty_format_batches(&batches).unwrap().to_string()
}

// Expressions

#[tokio::test]
async fn literals_are_plain() {
    check(
        "SELECT 1, 'foo'",
        &["Int64(1)", "Utf8(\"foo\")"],
        &["1", "foo"],
    )
    .await;
}

#[tokio::test]
async fn arithmetic_on_literals() {
    check("SELECT 1 + 2", &["Int64(1) + Int64(2)"], &["1 + 2"]).await;
}

#[tokio::test]
async fn precedence_needs_parentheses() {
    check(
        "SELECT (a + b) * c FROM t",
        &["t.a + t.b * t.c"],
        &["(a + b) * c"],
    )
    .await;
}

#[tokio::test]
async fn parentheses_only_where_precedence_needs_them() {
    // Today both of the first two get the name `t.a - t.b - t.c`.
    check(
        "SELECT a - (b - c) FROM t",
        &["t.a - t.b - t.c"],
        &["a - (b - c)"],
    )
    .await;
    check(
        "SELECT (a - b) - c FROM t",
        &["t.a - t.b - t.c"],
        &["a - b - c"],
    )
    .await;
    check(
        "SELECT a * b + c FROM t",
        &["t.a * t.b + t.c"],
        &["a * b + c"],
    )
    .await;
    check(
        "SELECT a * (b + c) FROM t",
        &["t.a * t.b + t.c"],
        &["a * (b + c)"],
    )
    .await;
}

#[tokio::test]
async fn qualified_column_drops_its_qualifier() {
    check("SELECT t.a + 1 FROM t", &["t.a + Int64(1)"], &["a + 1"]).await;
}

#[tokio::test]
async fn scalar_function_arguments() {
    check(
        "SELECT coalesce(NULL, 1)",
        &["coalesce(NULL,Int64(1))"],
        &["coalesce(NULL, 1)"],
    )
    .await;
}

#[tokio::test]
async fn case_expression() {
    check(
        "SELECT CASE WHEN a > 0 THEN 'pos' ELSE 'neg' END FROM t",
        &["CASE WHEN t.a > Int64(0) THEN Utf8(\"pos\") ELSE Utf8(\"neg\") END"],
        &["CASE WHEN a > 0 THEN pos ELSE neg END"],
    )
    .await;
}

#[tokio::test]
async fn cast_is_left_out() {
    check(
        "SELECT CAST(a AS BIGINT) + 1 FROM t",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
}

// Aggregate functions

#[tokio::test]
async fn aggregates_with_distinct() {
    check(
        "SELECT sum(a), count(DISTINCT b) FROM t",
        &["sum(t.a)", "count(DISTINCT t.b)"],
        &["sum(a)", "count(DISTINCT b)"],
    )
    .await;
}

#[tokio::test]
async fn aggregate_filter() {
    check(
        "SELECT avg(c) FILTER (WHERE c > 5) FROM t",
        &["avg(t.c) FILTER (WHERE t.c > Int64(5))"],
        &["avg(c) FILTER (WHERE c > 5)"],
    )
    .await;
}

#[tokio::test]
async fn count_star_keeps_the_planner_alias() {
    check("SELECT count(*) FROM t", &["count(*)"], &["count(*)"]).await;
}

#[tokio::test]
async fn count_one() {
    check(
        "SELECT count(1) FROM t",
        &["count(Int64(1))"],
        &["count(1)"],
    )
    .await;
}

#[tokio::test]
async fn aggregate_order_by_in_sql_syntax() {
    check(
        "SELECT array_agg(a ORDER BY b DESC) FROM t",
        &["array_agg(t.a) ORDER BY [t.b DESC NULLS FIRST]"],
        &["array_agg(a ORDER BY b DESC)"],
    )
    .await;
}

#[tokio::test]
async fn aggregate_inside_an_expression() {
    check(
        "SELECT sum(a) + 1 FROM t",
        &["sum(t.a) + Int64(1)"],
        &["sum(a) + 1"],
    )
    .await;
}

// Window functions

#[tokio::test]
async fn window_order_by_with_default_frame() {
    check(
        "SELECT row_number() OVER (ORDER BY a) FROM t",
        &[
            "row_number() ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ],
        &["row_number() OVER (ORDER BY a)"],
    )
    .await;
}

#[tokio::test]
async fn window_partition_by() {
    check(
        "SELECT sum(a) OVER (PARTITION BY b) FROM t",
        &[
            "sum(t.a) PARTITION BY [t.b] ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
        ],
        &["sum(a) OVER (PARTITION BY b)"],
    )
    .await;
}

#[tokio::test]
async fn window_desc_nulls_first_is_the_default() {
    check(
        "SELECT sum(a) OVER (ORDER BY a DESC NULLS FIRST) FROM t",
        &[
            "sum(t.a) ORDER BY [t.a DESC NULLS FIRST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ],
        &["sum(a) OVER (ORDER BY a DESC)"],
    )
    .await;
}

#[tokio::test]
async fn window_explicit_rows_frame_on_ties_stays() {
    check(
        "SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
        &[
            "sum(t.a) ORDER BY [t.a ASC NULLS LAST] ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ],
        &["sum(a) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"],
    )
    .await;
}

#[tokio::test]
async fn window_range_frame_without_order_by() {
    check(
        "SELECT sum(b) OVER (RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
        &[
            "sum(t.b) ORDER BY [UInt64(1) ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ],
        &["sum(b) OVER ()"],
    )
    .await;
}

#[tokio::test]
async fn window_non_default_parts_are_shown() {
    check(
        "SELECT sum(a) OVER (PARTITION BY b ORDER BY c NULLS FIRST ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t",
        &[
            "sum(t.a) PARTITION BY [t.b] ORDER BY [t.c ASC NULLS FIRST] ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING",
        ],
        &[
            "sum(a) OVER (PARTITION BY b ORDER BY c NULLS FIRST ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING)",
        ],
    )
    .await;
}

#[tokio::test]
async fn named_window_is_expanded() {
    check(
        "SELECT rank() OVER w FROM t WINDOW w AS (PARTITION BY b ORDER BY a)",
        &[
            "rank() PARTITION BY [t.b] ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ],
        &["rank() OVER (PARTITION BY b ORDER BY a)"],
    )
    .await;
}

#[tokio::test]
async fn window_ordered_by_a_unique_key() {
    // A primary key has no ties: the planner's default frame is `ROWS`, so an
    // explicit `ROWS` frame is the default and is left out.
    let ctx = context(true).await.unwrap();
    ctx.sql("CREATE TABLE u (id INT PRIMARY KEY, v INT) AS VALUES (1, 5), (2, 7)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    for sql in [
        "SELECT sum(v) OVER (ORDER BY id) FROM u",
        "SELECT sum(v) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM u",
    ] {
        let df = ctx.sql(sql).await.unwrap();
        assert_eq!(
            df.schema().field(0).name(),
            "sum(v) OVER (ORDER BY id)",
            "{sql}"
        );
    }
    let df = ctx
        .sql("SELECT sum(v) OVER (ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM u")
        .await
        .unwrap();
    assert_eq!(
        df.schema().field(0).name(),
        "sum(v) OVER (ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    );
}

// Columns from CTEs, derived tables and views

#[tokio::test]
async fn cte_column() {
    check(
        "WITH x AS (SELECT sum(a) FROM t GROUP BY b) SELECT * FROM x",
        &["sum(t.a)"],
        &["sum(a)"],
    )
    .await;
}

#[tokio::test]
async fn derived_table_column() {
    check(
        "SELECT * FROM (SELECT a + 1 FROM t)",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
}

#[tokio::test]
async fn view_column() {
    check("SELECT * FROM v", &["t.a + Int64(1)"], &["a + 1"]).await;
}

#[tokio::test]
async fn explicit_alias_in_a_derived_table() {
    check("SELECT x FROM (SELECT a + 1 AS x FROM t)", &["x"], &["x"]).await;
}

#[tokio::test]
async fn column_named_as_typed_keeps_its_name() {
    check(
        "SELECT \"t.a + Int64(1)\" FROM (SELECT a + 1 FROM t)",
        &["t.a + Int64(1)"],
        &["t.a + Int64(1)"],
    )
    .await;
}

// References by current name and position keep working

#[tokio::test]
async fn order_by_current_name_and_position() {
    check(
        "SELECT a + 1 FROM t ORDER BY \"t.a + Int64(1)\" DESC",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
    check(
        "SELECT a + 1, b FROM t ORDER BY 1 DESC",
        &["t.a + Int64(1)", "b"],
        &["a + 1", "b"],
    )
    .await;
    assert_snapshot!(show("SELECT a + 1, sum(c) FROM t GROUP BY a + 1 ORDER BY 1 DESC LIMIT 2").await, @r"
    +-------+--------+
    | a + 1 | sum(c) |
    +-------+--------+
    | 4     | 8      |
    | 3     | 6      |
    +-------+--------+
    ");
}

#[tokio::test]
async fn having_and_group_by() {
    check(
        "SELECT b, sum(a) FROM t GROUP BY b HAVING sum(a) > 1",
        &["b", "sum(t.a)"],
        &["b", "sum(a)"],
    )
    .await;
    check(
        "SELECT b * 2, count(*) FROM t GROUP BY b * 2",
        &["t.b * Int64(2)", "count(*)"],
        &["b * 2", "count(*)"],
    )
    .await;
}

#[tokio::test]
async fn grouping_sets_skip_the_grouping_id() {
    check(
        "SELECT a, b, sum(c) FROM t GROUP BY CUBE (a, b)",
        &["a", "b", "sum(t.c)"],
        &["a", "b", "sum(c)"],
    )
    .await;
}

#[tokio::test]
async fn distinct_and_distinct_on() {
    check(
        "SELECT DISTINCT a + 1 FROM t",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
    // `DISTINCT ON` is not traced: its columns keep their names.
    check(
        "SELECT DISTINCT ON (b) a + 1 FROM t ORDER BY b, a",
        &["t.a + Int64(1)"],
        &["t.a + Int64(1)"],
    )
    .await;
}

#[tokio::test]
async fn unnest_is_not_traced() {
    check(
        "SELECT unnest([1, 2]) + 1",
        &["UNNEST(make_array(Int64(1),Int64(2))) + Int64(1)"],
        &["UNNEST(make_array(Int64(1),Int64(2))) + Int64(1)"],
    )
    .await;
}

// Joins and set operations

#[tokio::test]
async fn join_with_qualified_columns() {
    check(
        "SELECT * FROM (SELECT a, a * 2 FROM t) x JOIN (SELECT a, d + 1 FROM t2) y ON x.a = y.a",
        &["a", "t.a * Int64(2)", "a", "t2.d + Int64(1)"],
        &["a", "a * 2", "a", "d + 1"],
    )
    .await;
}

#[tokio::test]
async fn join_using_is_not_traced() {
    check(
        "SELECT * FROM (SELECT a, b + 1 FROM t) JOIN (SELECT a, d FROM t2) USING (a)",
        &["a", "t.b + Int64(1)", "d"],
        &["a", "t.b + Int64(1)", "d"],
    )
    .await;
}

#[tokio::test]
async fn union_takes_the_first_branch() {
    check(
        "SELECT a + 1 FROM t UNION ALL SELECT d * 2 FROM t2",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
    check(
        "SELECT a + 1 FROM t EXCEPT SELECT d FROM t2",
        &["t.a + Int64(1)"],
        &["a + 1"],
    )
    .await;
}

#[tokio::test]
async fn recursive_cte_is_not_traced() {
    check(
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n * 10 FROM r",
        &["r.n * Int64(10)"],
        &["r.n * Int64(10)"],
    )
    .await;
    check(
        "WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT \"Int64(1)\" + 1 FROM r WHERE \"Int64(1)\" < 3) SELECT * FROM r",
        &["Int64(1)"],
        &["Int64(1)"],
    )
    .await;
}

// Collisions fall back to current names

#[tokio::test]
async fn colliding_labels_keep_current_names() {
    check(
        "SELECT t.a + 1, t2.a + 1 FROM t JOIN t2 ON t.a = t2.a",
        &["t.a + Int64(1)", "t2.a + Int64(1)"],
        &["t.a + Int64(1)", "t2.a + Int64(1)"],
    )
    .await;
    check(
        "SELECT 1, '1'",
        &["Int64(1)", "Utf8(\"1\")"],
        &["Int64(1)", "Utf8(\"1\")"],
    )
    .await;
    // Only the colliding columns fall back.
    check(
        "SELECT a + 1 AS \"b + 1\", b + 1, c + 1 FROM t",
        &["b + 1", "t.b + Int64(1)", "t.c + Int64(1)"],
        &["b + 1", "t.b + Int64(1)", "c + 1"],
    )
    .await;
    // A label equal to another column's plain name.
    check(
        "SELECT a, \"t.a + Int64(1)\" FROM (SELECT a, a + 1 AS a2, a + 1 FROM t)",
        &["a", "t.a + Int64(1)"],
        &["a", "t.a + Int64(1)"],
    )
    .await;
}

// Scope: only the result of a top-level query

#[tokio::test]
async fn labels_are_computed_before_optimization() {
    let ctx = context(true).await.unwrap();
    let df = ctx.sql("SELECT 1 + 2").await.unwrap();
    // The optimizer folds the expression; the label stays.
    let plan = df.clone().into_optimized_plan().unwrap();
    assert_eq!(plan.schema().field(0).name(), "1 + 2");
    assert_snapshot!(pretty_format_batches(&df.collect().await.unwrap()).unwrap(), @r"
    +-------+
    | 1 + 2 |
    +-------+
    | 3     |
    +-------+
    ");
}

#[tokio::test]
async fn stored_names_do_not_change() {
    let ctx = context(true).await.unwrap();
    for sql in [
        "CREATE VIEW w AS SELECT a + 1, sum(b) OVER () FROM t",
        "CREATE TABLE c AS SELECT a + 1, count(1) FROM t GROUP BY a",
    ] {
        ctx.sql(sql).await.unwrap().collect().await.unwrap();
    }
    let describe = |name: &str| {
        let ctx = ctx.clone();
        let sql = format!("DESCRIBE {name}");
        async move {
            let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            batches[0]
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .iter()
                .map(|n| n.unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        describe("w").await,
        [
            "t.a + Int64(1)",
            "sum(t.b) ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
        ]
    );
    assert_eq!(describe("c").await, ["t.a + Int64(1)", "count(Int64(1))"]);
    // A query over the view is labeled, from the view's own plan.
    let df = ctx.sql("SELECT * FROM w").await.unwrap();
    assert_eq!(df.schema().field(0).name(), "a + 1");
    assert_eq!(df.schema().field(1).name(), "sum(b) OVER ()");

    // INSERT ... SELECT matches columns by position and works as before.
    ctx.sql("INSERT INTO c SELECT a * 10, 1 FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
}

#[tokio::test]
async fn describe_query_and_dataframe_keep_current_names() {
    let ctx = context(true).await.unwrap();
    let batches = ctx
        .sql("DESCRIBE SELECT a + 1 FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_snapshot!(pretty_format_batches(&batches).unwrap(), @r"
    +----------------+-----------+-------------+
    | column_name    | data_type | is_nullable |
    +----------------+-----------+-------------+
    | t.a + Int64(1) | Int64     | YES         |
    +----------------+-----------+-------------+
    ");
    let df = ctx
        .table("t")
        .await
        .unwrap()
        .select(vec![col("a") + lit(1)])
        .unwrap();
    assert_eq!(df.schema().field(0).name(), "t.a + Int32(1)");
}

#[tokio::test]
async fn set_and_reset_through_sql() {
    let ctx = SessionContext::new();
    let name = |ctx: SessionContext| async move {
        let df = ctx.sql("SELECT 1 + 2").await.unwrap();
        df.schema().field(0).name().clone()
    };
    assert_eq!(name(ctx.clone()).await, "Int64(1) + Int64(2)");
    ctx.sql(&format!("SET {OPTION} = true")).await.unwrap();
    assert_eq!(name(ctx.clone()).await, "1 + 2");
    ctx.sql(&format!("RESET {OPTION}")).await.unwrap();
    assert_eq!(name(ctx.clone()).await, "Int64(1) + Int64(2)");
}
