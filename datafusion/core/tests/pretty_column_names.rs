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
async fn join_using_is_traced_to_each_side() {
    check(
        "SELECT * FROM (SELECT a, b + 1 FROM t) JOIN (SELECT a, d FROM t2) USING (a)",
        &["a", "t.b + Int64(1)", "d"],
        &["a", "b + 1", "d"],
    )
    .await;
    // The key a FULL join merges is the name typed
    check(
        "SELECT a + 1, d FROM t NATURAL FULL JOIN t2",
        &[
            "CASE WHEN t.a IS NOT NULL THEN t.a ELSE t2.a END + Int64(1)",
            "d",
        ],
        &["a + 1", "d"],
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

// Labels may repeat, as SQL's output names may

#[tokio::test]
async fn equal_labels_are_both_shown() {
    check(
        "SELECT t.a + 1, t2.a + 1 FROM t JOIN t2 ON t.a = t2.a",
        &["t.a + Int64(1)", "t2.a + Int64(1)"],
        &["a + 1", "a + 1"],
    )
    .await;
    check("SELECT 1, '1'", &["Int64(1)", "Utf8(\"1\")"], &["1", "1"]).await;
    check(
        "SELECT a + 1 AS \"b + 1\", b + 1, c + 1 FROM t",
        &["b + 1", "t.b + Int64(1)", "t.c + Int64(1)"],
        &["b + 1", "b + 1", "c + 1"],
    )
    .await;
    // A column typed by its name keeps it.
    check(
        "SELECT a, \"t.a + Int64(1)\" FROM (SELECT a, a + 1 AS a2, a + 1 FROM t)",
        &["a", "t.a + Int64(1)"],
        &["a", "t.a + Int64(1)"],
    )
    .await;
}

// Items of one name (duplicate_output_names.slt has their answers)

#[tokio::test]
async fn items_of_one_name_show_it_twice() {
    check(
        "SELECT a + 1, a + 1 FROM t",
        &["t.a + Int64(1)", "t.a + Int64(1)"],
        &["a + 1", "a + 1"],
    )
    .await;
    check("SELECT a, a FROM t", &["a", "a"], &["a", "a"]).await;
    check("SELECT a AS x, b AS x FROM t", &["x", "x"], &["x", "x"]).await;
    check(
        "SELECT CAST(a AS DOUBLE), a::VARCHAR FROM t",
        &["t.a", "t.a"],
        // a label leaves casts out, as PostgreSQL names them
        &["a", "a"],
    )
    .await;
    check(
        "SELECT * FROM (SELECT a, b, a FROM t) s",
        &["a", "b", "a"],
        &["a", "b", "a"],
    )
    .await;
    // Two lists of one statement, whose repeated names are not alike
    check(
        "SELECT * FROM (SELECT a, a FROM t) s, (SELECT CAST(a AS DOUBLE), a::VARCHAR FROM t) x",
        &["a", "a", "t.a", "t.a"],
        &["a", "a", "a", "a"],
    )
    .await;
    check(
        "SELECT sum(b), sum(b) FROM t",
        &["sum(t.b)", "sum(t.b)"],
        &["sum(b)", "sum(b)"],
    )
    .await;
}

#[tokio::test]
async fn a_shared_name_is_ambiguous_to_a_dataframe_call() -> Result<()> {
    let ctx = context(false).await?;
    let df = ctx.sql("SELECT a AS x, b AS x FROM t").await?;
    let err = df.clone().select(vec![col("x")]).unwrap_err();
    assert!(
        err.to_string()
            .contains("Ambiguous reference to unqualified field x"),
        "{err}"
    );
    // By position, each column is there
    let batches = df.collect().await?;
    assert_snapshot!(pretty_format_batches(&batches)?, @r"
    +---+----+
    | x | x  |
    +---+----+
    | 1 | 10 |
    | 2 | 20 |
    | 3 | 20 |
    +---+----+
    ");
    Ok(())
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

// Every expression form: `(typed, name with the option off, label with it on)`.
// A label never reads as a different expression than the one typed, and never
// worse than the name it replaces (docs/pretty-column-names.md).
const FORMS: &[(&str, &str, &str)] = &[
    // Operators and their precedence
    (r#"-(c + 1)"#, r#"(- t.c + Int64(1))"#, r#"-(c + 1)"#),
    (r#"-c"#, r#"(- t.c)"#, r#"-c"#),
    (
        r#"(c > 1) = b"#,
        r#"t.c > Int64(1) = t.b"#,
        r#"(c > 1) = b"#,
    ),
    (r#"c > 1 = b"#, r#"t.c > Int64(1) = t.b"#, r#"(c > 1) = b"#),
    (r#"NOT b"#, r#"NOT t.b"#, r#"NOT b"#),
    (r#"NOT (c > 1)"#, r#"NOT t.c > Int64(1)"#, r#"NOT (c > 1)"#),
    (
        r#"NOT b IS NULL"#,
        r#"NOT t.b IS NULL"#,
        r#"NOT (b IS NULL)"#,
    ),
    (
        r#"NOT (b IS NULL)"#,
        r#"NOT t.b IS NULL"#,
        r#"NOT (b IS NULL)"#,
    ),
    (
        r#"(c + 1) IS NULL"#,
        r#"t.c + Int64(1) IS NULL"#,
        r#"c + 1 IS NULL"#,
    ),
    (r#"- -c"#, r#"(- (- t.c))"#, r#"-(-c)"#),
    (r#"-(-c)"#, r#"(- (- t.c))"#, r#"-(-c)"#),
    (r#"c - -1"#, r#"t.c - Int64(-1)"#, r#"c - -1"#),
    (r#"abs(-c)"#, r#"abs((- t.c))"#, r#"abs(-c)"#),
    (
        r#"a - (c - 1)"#,
        r#"t.a - t.c - Int64(1)"#,
        r#"a - (c - 1)"#,
    ),
    (r#"(a - c) - 1"#, r#"t.a - t.c - Int64(1)"#, r#"a - c - 1"#),
    (
        r#"a * (c + 1)"#,
        r#"t.a * t.c + Int64(1)"#,
        r#"a * (c + 1)"#,
    ),
    (r#"c % 2"#, r#"t.c % Int64(2)"#, r#"c % 2"#),
    (r#"c & 3"#, r#"t.c & Int64(3)"#, r#"c & 3"#),
    (r#"c << 1"#, r#"t.c << Int64(1)"#, r#"c << 1"#),
    (r#"2 ^ 3"#, r#"Int64(2) BIT_XOR Int64(3)"#, r#"2 ^ 3"#),
    (r#"s || 'y'"#, r#"t.s || Utf8("y")"#, r#"s || y"#),
    (
        r#"s || ' ' || s"#,
        r#"t.s || Utf8(" ") || t.s"#,
        r#"s || ' ' || s"#,
    ),
    // Predicates: IN, BETWEEN, LIKE, IS
    (
        r#"c IN (1, 2)"#,
        r#"t.c IN Int64(1), Int64(2)"#,
        r#"c IN (1, 2)"#,
    ),
    (
        r#"c NOT IN (1, 2)"#,
        r#"t.c NOT IN Int64(1), Int64(2)"#,
        r#"c NOT IN (1, 2)"#,
    ),
    (
        r#"c BETWEEN 1 AND 2"#,
        r#"t.c BETWEEN Int64(1) AND Int64(2)"#,
        r#"c BETWEEN 1 AND 2"#,
    ),
    (
        r#"c NOT BETWEEN 1 AND 2"#,
        r#"t.c NOT BETWEEN Int64(1) AND Int64(2)"#,
        r#"c NOT BETWEEN 1 AND 2"#,
    ),
    (r#"s LIKE 'x%'"#, r#"t.s LIKE Utf8("x%")"#, r#"s LIKE 'x%'"#),
    (
        r#"s NOT LIKE 'x%'"#,
        r#"t.s NOT LIKE Utf8("x%")"#,
        r#"s NOT LIKE 'x%'"#,
    ),
    (
        r#"s ILIKE 'X%'"#,
        r#"t.s ILIKE Utf8("X%")"#,
        r#"s ILIKE 'X%'"#,
    ),
    (
        r#"s NOT ILIKE 'x%'"#,
        r#"t.s NOT ILIKE Utf8("x%")"#,
        r#"s NOT ILIKE 'x%'"#,
    ),
    (
        r#"s SIMILAR TO 'x'"#,
        r#"t.s SIMILAR TO Utf8("x")"#,
        r#"s SIMILAR TO x"#,
    ),
    (r#"s ~ 'x'"#, r#"t.s ~ Utf8("x")"#, r#"s ~ x"#),
    (r#"s ~* 'x'"#, r#"t.s ~* Utf8("x")"#, r#"s ~* x"#),
    (r#"s !~ 'x'"#, r#"t.s !~ Utf8("x")"#, r#"s !~ x"#),
    (r#"b IS NULL"#, r#"t.b IS NULL"#, r#"b IS NULL"#),
    (r#"b IS NOT TRUE"#, r#"t.b IS NOT TRUE"#, r#"b IS NOT TRUE"#),
    (r#"b IS FALSE"#, r#"t.b IS FALSE"#, r#"b IS FALSE"#),
    (r#"b IS UNKNOWN"#, r#"t.b IS UNKNOWN"#, r#"b IS UNKNOWN"#),
    (
        r#"c IS DISTINCT FROM 1"#,
        r#"t.c IS DISTINCT FROM Int64(1)"#,
        r#"c IS DISTINCT FROM 1"#,
    ),
    (
        r#"c IS NOT DISTINCT FROM 1"#,
        r#"t.c IS NOT DISTINCT FROM Int64(1)"#,
        r#"c IS NOT DISTINCT FROM 1"#,
    ),
    // Literals, typed literals and casts
    (r#"c / 2.0"#, r#"t.c / Float64(2)"#, r#"c / 2.0"#),
    (r#"c / 2.50"#, r#"t.c / Float64(2.5)"#, r#"c / 2.5"#),
    (
        r#"c * 1e10"#,
        r#"t.c * Float64(10000000000)"#,
        r#"c * 10000000000.0"#,
    ),
    (r#"1.5"#, r#"Float64(1.5)"#, r#"1.5"#),
    (r#"0.1"#, r#"Float64(0.1)"#, r#"0.1"#),
    (r#"1e-7"#, r#"Float64(0.0000001)"#, r#"1e-7"#),
    (r#"'foo'"#, r#"Utf8("foo")"#, r#"foo"#),
    (r#"'a b'"#, r#"Utf8("a b")"#, r#"'a b'"#),
    (r#"''"#, r#"Utf8("")"#, r#"''"#),
    (r#"NULL"#, r#"NULL"#, r#"NULL"#),
    (r#"true"#, r#"Boolean(true)"#, r#"true"#),
    (r#"X'01AB'"#, r#"Binary("1,171")"#, r#"X'01AB'"#),
    (
        r#"ts + INTERVAL '1 day'"#,
        r#"t.ts + IntervalMonthDayNano("IntervalMonthDayNano { months: 0, days: 1, nanoseconds: 0 }")"#,
        r#"ts + INTERVAL '1 day'"#,
    ),
    (
        r#"ts + INTERVAL '1 month 2 hours'"#,
        r#"t.ts + IntervalMonthDayNano("IntervalMonthDayNano { months: 1, days: 0, nanoseconds: 7200000000000 }")"#,
        r#"ts + INTERVAL '1 month 2 hours'"#,
    ),
    (
        r#"ts - INTERVAL '1.5 seconds'"#,
        r#"t.ts - IntervalMonthDayNano("IntervalMonthDayNano { months: 0, days: 0, nanoseconds: 1500000000 }")"#,
        r#"ts - INTERVAL '1.5 seconds'"#,
    ),
    (
        r#"INTERVAL '1' YEAR"#,
        r#"IntervalMonthDayNano("IntervalMonthDayNano { months: 12, days: 0, nanoseconds: 0 }")"#,
        r#"INTERVAL '1 year'"#,
    ),
    (
        r#"INTERVAL '2 minutes 30 seconds'"#,
        r#"IntervalMonthDayNano("IntervalMonthDayNano { months: 0, days: 0, nanoseconds: 150000000000 }")"#,
        r#"INTERVAL '2 minutes 30 seconds'"#,
    ),
    (
        r#"d > DATE '2020-01-01'"#,
        r#"t.d > Utf8("2020-01-01")"#,
        r#"d > DATE '2020-01-01'"#,
    ),
    (
        r#"TIMESTAMP '2020-01-01 10:00:00'"#,
        r#"Utf8("2020-01-01 10:00:00")"#,
        r#"TIMESTAMP '2020-01-01 10:00:00'"#,
    ),
    (
        r#"TIME '10:00:00'"#,
        r#"Utf8("10:00:00")"#,
        r#"TIME '10:00:00'"#,
    ),
    (r#"CAST(c AS DOUBLE)"#, r#"t.c"#, r#"c"#),
    (r#"c::VARCHAR"#, r#"t.c"#, r#"c"#),
    (r#"TRY_CAST(s AS INT)"#, r#"t.s"#, r#"s"#),
    (
        r#"CAST(1.5 AS DECIMAL(10, 2))"#,
        r#"Float64(1.5)"#,
        r#"1.5"#,
    ),
    // Field and index access, slices, array and struct syntax
    (r#"arr[1]"#, r#"t.arr[Int64(1)]"#, r#"arr[1]"#),
    (
        r#"arr[1] + 1"#,
        r#"t.arr[Int64(1)] + Int64(1)"#,
        r#"arr[1] + 1"#,
    ),
    (
        r#"array_element(arr, 1)"#,
        r#"t.arr[Int64(1)]"#,
        r#"arr[1]"#,
    ),
    (
        r#"arr[1:2]"#,
        r#"t.arr[Int64(1):Int64(2):Int64(1)]"#,
        r#"arr[1:2]"#,
    ),
    (
        r#"arr[1:2:2]"#,
        r#"t.arr[Int64(1):Int64(2):Int64(2)]"#,
        r#"arr[1:2:2]"#,
    ),
    (r#"st['f']"#, r#"t.st[f]"#, r#"st['f']"#),
    (r#"st.f"#, r#"t.st[f]"#, r#"st['f']"#),
    (r#"get_field(st, 'f')"#, r#"t.st[f]"#, r#"st['f']"#),
    (r#"m['k']"#, r#"t.m[k]"#, r#"m['k']"#),
    (r#"[1, 2]"#, r#"make_array(Int64(1),Int64(2))"#, r#"[1, 2]"#),
    (
        r#"make_array(1, 2)"#,
        r#"make_array(Int64(1),Int64(2))"#,
        r#"[1, 2]"#,
    ),
    (
        r#"(arr || arr)[1]"#,
        r#"array_concat(t.arr,t.arr)[Int64(1)]"#,
        r#"array_concat(arr, arr)[1]"#,
    ),
    (
        r#"arr || arr"#,
        r#"array_concat(t.arr,t.arr)"#,
        r#"array_concat(arr, arr)"#,
    ),
    (
        r#"arr @> [1]"#,
        r#"array_has_all(t.arr,make_array(Int64(1)))"#,
        r#"array_has_all(arr, [1])"#,
    ),
    (
        r#"{'a': 1}"#,
        r#"named_struct(Utf8("a"),Int64(1))"#,
        r#"named_struct(a, 1)"#,
    ),
    (
        r#"MAP {'k': 1}"#,
        r#"map(make_array(Utf8("k")),make_array(Int64(1)))"#,
        r#"map([k], [1])"#,
    ),
    // Functions, and syntax the planner makes a function of
    (
        r#"coalesce(c, 0)"#,
        r#"coalesce(t.c,Int64(0))"#,
        r#"coalesce(c, 0)"#,
    ),
    (
        r#"nullif(c, 1)"#,
        r#"nullif(t.c,Int64(1))"#,
        r#"nullif(c, 1)"#,
    ),
    (
        r#"EXTRACT(YEAR FROM d)"#,
        r#"date_part(Utf8("YEAR"),t.d)"#,
        r#"date_part(YEAR, d)"#,
    ),
    (
        r#"date_part('year', d)"#,
        r#"date_part(Utf8("year"),t.d)"#,
        r#"date_part(year, d)"#,
    ),
    (
        r#"POSITION('x' IN s)"#,
        r#"strpos(t.s,Utf8("x"))"#,
        r#"strpos(s, x)"#,
    ),
    (
        r#"SUBSTRING(s FROM 1 FOR 2)"#,
        r#"substr(t.s,Int64(1),Int64(2))"#,
        r#"substr(s, 1, 2)"#,
    ),
    (
        r#"TRIM(BOTH 'x' FROM s)"#,
        r#"btrim(t.s,Utf8("x"))"#,
        r#"btrim(s, x)"#,
    ),
    (
        r#"OVERLAY(s PLACING 'ab' FROM 1 FOR 1)"#,
        r#"overlay(t.s,Utf8("ab"),Int64(1),Int64(1))"#,
        r#"overlay(s, ab, 1, 1)"#,
    ),
    (
        r#"CASE c WHEN 1 THEN 'one' END"#,
        r#"CASE t.c WHEN Int64(1) THEN Utf8("one") END"#,
        r#"CASE c WHEN 1 THEN one END"#,
    ),
    (
        r#"CASE WHEN c > 1 THEN CASE WHEN a > 0 THEN 1 ELSE 2 END END"#,
        r#"CASE WHEN t.c > Int64(1) THEN CASE WHEN t.a > Int64(0) THEN Int64(1) ELSE Int64(2) END END"#,
        r#"CASE WHEN c > 1 THEN CASE WHEN a > 0 THEN 1 ELSE 2 END END"#,
    ),
    // Subqueries of every kind
    (
        r#"(SELECT max(v) FROM sub)"#,
        r#"max(sub.v)"#,
        r#"(SELECT max(sub.v) FROM sub)"#,
    ),
    (
        r#"(SELECT max(v) FROM sub) + 1"#,
        r#"max(sub.v) + Int64(1)"#,
        r#"(SELECT max(sub.v) FROM sub) + 1"#,
    ),
    (
        r#"c + (SELECT max(v) FROM sub) * 2"#,
        r#"t.c + max(sub.v) * Int64(2)"#,
        r#"c + (SELECT max(sub.v) FROM sub) * 2"#,
    ),
    (
        r#"(SELECT v FROM sub WHERE sub.k = t.a)"#,
        r#"v"#,
        r#"(SELECT sub.v FROM sub WHERE sub.k = t.a)"#,
    ),
    (
        r#"(SELECT count(*) FROM sub WHERE sub.k = t.c) > 0"#,
        r#"count(*) > Int64(0)"#,
        r#"(SELECT count(*) FROM sub WHERE sub.k = t.c) > 0"#,
    ),
    (
        r#"EXISTS (SELECT 1 FROM sub WHERE sub.k = t.a)"#,
        r#"EXISTS"#,
        r#"EXISTS (SELECT 1 FROM sub WHERE sub.k = t.a)"#,
    ),
    (
        r#"NOT EXISTS (SELECT 1 FROM sub)"#,
        r#"NOT EXISTS"#,
        r#"NOT EXISTS (SELECT 1 FROM sub)"#,
    ),
    (
        r#"c IN (SELECT k FROM sub)"#,
        r#"IN"#,
        r#"c IN (SELECT sub.k FROM sub)"#,
    ),
    (
        r#"c NOT IN (SELECT k FROM sub)"#,
        r#"NOT IN"#,
        r#"c NOT IN (SELECT sub.k FROM sub)"#,
    ),
    (
        r#"c = ANY (SELECT k FROM sub)"#,
        r#"t.c = ANY"#,
        r#"c = ANY (SELECT sub.k FROM sub)"#,
    ),
    (
        r#"c > ALL (SELECT k FROM sub)"#,
        r#"t.c > ALL"#,
        r#"c > ALL (SELECT sub.k FROM sub)"#,
    ),
    // A subquery's SQL without the parts the unparser writes out: the
    // planner's name of an outer aggregate, the default frame and sort
    // order of a window, and an aggregate's ORDER BY, which it dropped
    (
        r#"(SELECT sum(c))"#,
        r#"sum(t.c) #2"#,
        r#"(SELECT sum(t.c))"#,
    ),
    (
        r#"(SELECT string_agg(CAST(v AS VARCHAR), ',' ORDER BY v DESC) FROM sub)"#,
        r#"string_agg(sub.v,Utf8(",")) ORDER BY [sub.v DESC NULLS FIRST]"#,
        r#"(SELECT string_agg(CAST(sub.v AS VARCHAR), ',' ORDER BY sub.v DESC) FROM sub)"#,
    ),
    (
        r#"(SELECT row_number() OVER (ORDER BY v) FROM sub WHERE sub.k = t.a)"#,
        r#"row_number() ORDER BY [sub.v ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"(SELECT row_number() OVER (ORDER BY sub.v) FROM sub WHERE sub.k = t.a)"#,
    ),
    (
        r#"(SELECT count(*) OVER () FROM sub WHERE sub.k = t.a)"#,
        r#"count(*) ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"#,
        r#"(SELECT count(*) OVER () FROM sub WHERE sub.k = t.a)"#,
    ),
    // Aggregates: FILTER, DISTINCT, ORDER BY, WITHIN GROUP, count(*)
    (r#"sum(c)"#, r#"sum(t.c)"#, r#"sum(c)"#),
    (r#"sum(c) + 1"#, r#"sum(t.c) + Int64(1)"#, r#"sum(c) + 1"#),
    (r#"-sum(c)"#, r#"(- sum(t.c))"#, r#"-sum(c)"#),
    (
        r#"count(DISTINCT c)"#,
        r#"count(DISTINCT t.c)"#,
        r#"count(DISTINCT c)"#,
    ),
    (
        r#"array_agg(DISTINCT c)"#,
        r#"array_agg(DISTINCT t.c)"#,
        r#"array_agg(DISTINCT c)"#,
    ),
    (
        r#"sum(c) FILTER (WHERE c > 1)"#,
        r#"sum(t.c) FILTER (WHERE t.c > Int64(1))"#,
        r#"sum(c) FILTER (WHERE c > 1)"#,
    ),
    (r#"count(*)"#, r#"count(*)"#, r#"count(*)"#),
    (r#"count(1)"#, r#"count(Int64(1))"#, r#"count(1)"#),
    (
        r#"count(*) + 1"#,
        r#"count(*) + Int64(1)"#,
        r#"count(*) + 1"#,
    ),
    (
        r#"count(*) FILTER (WHERE c > 1)"#,
        r#"count(*) FILTER (WHERE t.c > Int64(1))"#,
        r#"count(*) FILTER (WHERE c > 1)"#,
    ),
    (
        r#"array_agg(c ORDER BY a DESC)"#,
        r#"array_agg(t.c) ORDER BY [t.a DESC NULLS FIRST]"#,
        r#"array_agg(c ORDER BY a DESC)"#,
    ),
    (
        r#"string_agg(s, ',' ORDER BY s)"#,
        r#"string_agg(t.s,Utf8(",")) ORDER BY [t.s ASC NULLS LAST]"#,
        r#"string_agg(s, ',' ORDER BY s)"#,
    ),
    (
        r#"first_value(c ORDER BY a)"#,
        r#"first_value(t.c) ORDER BY [t.a ASC NULLS LAST]"#,
        r#"first_value(c ORDER BY a)"#,
    ),
    (
        r#"percentile_cont(0.5) WITHIN GROUP (ORDER BY c)"#,
        r#"percentile_cont(Float64(0.5)) WITHIN GROUP [t.c ASC NULLS LAST]"#,
        r#"percentile_cont(0.5) WITHIN GROUP (ORDER BY c)"#,
    ),
    (
        r#"percentile_cont(0.5) WITHIN GROUP (ORDER BY c DESC)"#,
        r#"percentile_cont(Float64(0.5)) WITHIN GROUP [t.c DESC NULLS FIRST]"#,
        r#"percentile_cont(0.5) WITHIN GROUP (ORDER BY c DESC)"#,
    ),
    (
        r#"percentile_cont(c, 0.5 ORDER BY c)"#,
        r#"percentile_cont(Float64(0.5)) WITHIN GROUP [t.c ASC NULLS LAST]"#,
        r#"percentile_cont(0.5) WITHIN GROUP (ORDER BY c)"#,
    ),
    (
        r#"approx_percentile_cont(0.5) WITHIN GROUP (ORDER BY c)"#,
        r#"approx_percentile_cont(Float64(0.5)) WITHIN GROUP [t.c ASC NULLS LAST]"#,
        r#"approx_percentile_cont(0.5) WITHIN GROUP (ORDER BY c)"#,
    ),
    (
        r#"approx_percentile_cont_with_weight(c, 0.5) WITHIN GROUP (ORDER BY a)"#,
        r#"approx_percentile_cont_with_weight(t.c,Float64(0.5)) WITHIN GROUP [t.a ASC NULLS LAST]"#,
        r#"approx_percentile_cont_with_weight(c, 0.5) WITHIN GROUP (ORDER BY a)"#,
    ),
    (
        r#"array_agg(s)[1]"#,
        r#"nth_value(t.s,Int64(1))"#,
        r#"nth_value(s, 1)"#,
    ),
    // Window functions
    (
        r#"row_number() OVER (ORDER BY a)"#,
        r#"row_number() ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"row_number() OVER (ORDER BY a)"#,
    ),
    (
        r#"sum(c) FILTER (WHERE c > 1) OVER (ORDER BY a)"#,
        r#"sum(t.c) FILTER (WHERE t.c > Int64(1)) ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"sum(c) FILTER (WHERE c > 1) OVER (ORDER BY a)"#,
    ),
    (
        r#"lag(c, 1) OVER (PARTITION BY a ORDER BY c)"#,
        r#"lag(t.c,Int64(1)) PARTITION BY [t.a] ORDER BY [t.c ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"lag(c, 1) OVER (PARTITION BY a ORDER BY c)"#,
    ),
    (
        r#"sum(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"#,
        r#"sum(t.c) ORDER BY [t.a ASC NULLS LAST] ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"#,
        r#"sum(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"#,
    ),
    (
        r#"first_value(c) OVER (PARTITION BY a ORDER BY c RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)"#,
        r#"first_value(t.c) PARTITION BY [t.a] ORDER BY [t.c ASC NULLS LAST] RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING"#,
        r#"first_value(c) OVER (PARTITION BY a ORDER BY c RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)"#,
    ),
    (
        r#"-sum(c) OVER ()"#,
        r#"(- sum(t.c) ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"#,
        r#"-sum(c) OVER ()"#,
    ),
    (
        r#"first_value(c) IGNORE NULLS OVER (ORDER BY a)"#,
        r#"first_value(t.c) IGNORE NULLS ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"first_value(c) IGNORE NULLS OVER (ORDER BY a)"#,
    ),
    (
        r#"count(*) OVER ()"#,
        r#"count(*) ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"#,
        r#"count(*) OVER ()"#,
    ),
    (
        r#"count(*) OVER (ORDER BY a)"#,
        r#"count(*) ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"count(*) OVER (ORDER BY a)"#,
    ),
    (
        r#"count(*) FILTER (WHERE c > 1) OVER (ORDER BY a)"#,
        r#"count(*) FILTER (WHERE t.c > Int64(1)) ORDER BY [t.a ASC NULLS LAST] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"#,
        r#"count(*) FILTER (WHERE c > 1) OVER (ORDER BY a)"#,
    ),
];

/// One row of every column type the forms need, and a table to subquery.
async fn forms_context(pretty: bool) -> Result<SessionContext> {
    let config = SessionConfig::new()
        .with_target_partitions(1)
        .set_bool(OPTION, pretty);
    let ctx = SessionContext::new_with_config(config);
    for sql in [
        "CREATE TABLE t AS SELECT 1 AS a, true AS b, 2 AS c, DATE '2020-01-01' AS d, \
         TIMESTAMP '2020-01-01 00:00:00' AS ts, 'x' AS s, [1, 2, 3] AS arr, \
         named_struct('f', 1, 'g', 'h') AS st, MAP {'k': 1} AS m",
        "CREATE TABLE sub AS SELECT 1 AS k, 10 AS v",
    ] {
        ctx.sql(sql).await?.collect().await?;
    }
    Ok(ctx)
}

#[tokio::test]
async fn every_expression_form() -> Result<()> {
    let mut wrong = Vec::new();
    for pretty in [false, true] {
        let ctx = forms_context(pretty).await?;
        for (typed, off, on) in FORMS {
            let df = ctx.sql(&format!("SELECT {typed} FROM t")).await?;
            let name = df.schema().field(0).name().clone();
            // Every labeled query must also run.
            df.collect().await?;
            let expected = if pretty { on } else { off };
            if name != *expected {
                wrong.push(format!(
                    "{typed} (option {}): `{name}`, expected `{expected}`",
                    if pretty { "on" } else { "off" }
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    Ok(())
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
