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

//! The fork's subqueries against oracles that are not DataFusion.
//!
//! - `queries_agree_with_sqlite`: random queries (see
//!   `fork_oracle::generator`) on the fork and on SQLite, rows compared as
//!   multisets.
//! - `dml_agrees_with_sqlite`: random `DELETE` and `UPDATE` with those
//!   predicates on both, then the tables compared; and on the fork alone,
//!   the count of rows changed is the count of rows the same `WHERE`
//!   selects, and a `DELETE` leaves exactly the others.
//! - `ternary_logic_partitioning`: on the fork alone, `WHERE p`, `WHERE
//!   NOT p` and `WHERE p IS NULL` together return the table once.
//! - `nested_subqueries_answer_or_fail_cleanly`: on the fork alone, queries
//!   with subqueries up to three levels deep in every position (see
//!   `fork_oracle::positions`) return rows or an error a user can read:
//!   no panic, no internal error, no name the planner made up.
//!
//! Each test runs a fixed number of cases from fixed seeds (2,000 queries,
//! 600 statements, 600 partitioned predicates, 1,000 nested queries); `FORK_ORACLE_CASES`
//! multiplies them for a longer run, and `FORK_ORACLE_TRACE` prints each
//! query and its time.
//! The fork's columns must be of the classes the query computes (integers,
//! and a boolean where it selects a predicate), and a query of the `OrderBy`
//! shape must return its rows in order.
//! A query the fork refuses with an error counts as refused, not as wrong,
//! if the error is one of [`KNOWN_REFUSALS`] (none at present) and the
//! refusals stay under [`REFUSALS_PER_MILLE`]; the tests print how many ran,
//! how many were refused and why, and fail on any wrong answer, internal
//! error, panic or other refusal.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use fork_oracle::engines::{
    Class, Row, datafusion_rows, datafusion_typed_rows, multiset, sqlite_rows,
};
use fork_oracle::generator::{Generator, Shape, Sql};
use fork_oracle::positions::{POSITIONS, Position, PositionGenerator};
use fork_oracle::tables::{Database, Options, TABLES};
use futures::FutureExt;
use rand::Rng;

/// The refusals of the fork that the tests accept, each a limit the docs
/// name, by a part of its message. None: every query these generators
/// write runs.
const KNOWN_REFUSALS: &[&str] = &[];

/// Refusals accepted per thousand cases.
const REFUSALS_PER_MILLE: usize = 20;

/// Random databases per test, and queries per database.
const DATABASES: usize = 100;
const QUERIES_PER_DATABASE: usize = 20;
const STATEMENTS_PER_DATABASE: usize = 6;

fn scale() -> usize {
    std::env::var("FORK_ORACLE_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1)
}

/// What the runs found.
#[derive(Default)]
struct Tally {
    ran: usize,
    agreed: usize,
    /// Errors of the fork, by their first line.
    refused: BTreeMap<String, usize>,
    /// Queries SQLite rejected (the generator's fault, if any), by error.
    sqlite_rejected: usize,
    sqlite_errors: BTreeMap<String, usize>,
    /// Refusals whose message the test does not list as known.
    unknown_refusals: Vec<String>,
    failures: Vec<String>,
}

impl Tally {
    fn refuse(&mut self, sql: &str, error: &str) {
        if std::env::var_os("FORK_ORACLE_TRACE").is_some() {
            eprintln!("refused: {sql}\n  {error}");
        }
        // The rule that failed, and why
        let first = error.lines().take(3).collect::<Vec<_>>().join(" / ");
        let first = first.as_str();
        if error.contains("Internal error") || error.contains("panicked") {
            self.failures
                .push(format!("internal error: {error}\n  {sql}"));
        } else if !KNOWN_REFUSALS.iter().any(|known| error.contains(known)) {
            self.unknown_refusals.push(format!("{first}\n  {sql}"));
        }
        *self.refused.entry(shorten(first)).or_default() += 1;
    }

    /// Prints what ran, and fails on a wrong answer, an internal error, a
    /// refusal whose message is not known, or more refusals than
    /// [`REFUSALS_PER_MILLE`].
    fn report(&self, test: &str) {
        let refused: usize = self.refused.values().sum();
        println!(
            "{test}: {} ran, {} agreed, {refused} refused by the fork, {} rejected by \
             SQLite, {} wrong",
            self.ran,
            self.agreed,
            self.sqlite_rejected,
            self.failures.len()
        );
        for (error, count) in &self.refused {
            println!("  refused {count}x: {error}");
        }
        for (error, count) in &self.sqlite_errors {
            println!("  SQLite rejected {count}x: {error}");
        }
        for failure in self.failures.iter().take(5) {
            println!("FAILED: {failure}");
        }
        for refusal in self.unknown_refusals.iter().take(5) {
            println!("UNKNOWN REFUSAL: {refusal}");
        }
        assert!(
            self.failures.is_empty(),
            "{test}: {} wrong",
            self.failures.len()
        );
        assert!(
            self.unknown_refusals.is_empty(),
            "{test}: {} refusals of no known limit",
            self.unknown_refusals.len()
        );
        assert!(
            refused * 1000 <= REFUSALS_PER_MILLE * self.ran.max(1),
            "{test}: {refused} of {} refused",
            self.ran
        );
        // The generator writes SQL both engines accept
        assert!(
            self.sqlite_rejected * 100 <= self.ran.max(1),
            "{test}: SQLite rejected {} of {} statements",
            self.sqlite_rejected,
            self.ran
        );
    }
}

fn shorten(line: &str) -> String {
    line.chars().take(300).collect()
}

/// The fork's rows of `sql`, or its error; a panic is an error too.
async fn fork_rows(
    ctx: &SessionContext,
    sql: &str,
) -> std::result::Result<Vec<Row>, String> {
    let trace = std::env::var_os("FORK_ORACLE_TRACE").is_some();
    let start = std::time::Instant::now();
    if trace {
        eprintln!("running: {sql}");
    }
    let result = AssertUnwindSafe(datafusion_rows(ctx, sql))
        .catch_unwind()
        .await;
    if trace {
        eprintln!("took {:?}", start.elapsed());
    }
    match result {
        Ok(Ok(rows)) => Ok(rows),
        Ok(Err(error)) => Err(error.to_string()),
        Err(panic) => Err(fork_oracle::engines::panic_error(panic.as_ref())),
    }
}

/// The fork's classes and rows of `sql`, or its error; a panic is an
/// error too.
async fn fork_typed_rows(
    ctx: &SessionContext,
    sql: &str,
) -> std::result::Result<(Vec<Class>, Vec<Row>), String> {
    match AssertUnwindSafe(datafusion_typed_rows(ctx, sql))
        .catch_unwind()
        .await
    {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(error)) => Err(error.to_string()),
        Err(panic) => Err(fork_oracle::engines::panic_error(panic.as_ref())),
    }
}

/// The fork's optimized logical plan of `sql`, as text; empty where it
/// fails to plan.
async fn optimized_plan(ctx: &SessionContext, sql: &str) -> String {
    let Ok(frame) = ctx.sql(sql).await else {
        return String::new();
    };
    frame
        .into_optimized_plan()
        .map(|plan| plan.display_indent().to_string())
        .unwrap_or_default()
}

fn describe(database: &Database, options: &Options) -> String {
    let tables: Vec<String> = database
        .tables
        .iter()
        .map(|table| format!("{} = {:?}", table.name, table.rows))
        .collect();
    format!("{options:?}\n  {}", tables.join("\n  "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_agree_with_sqlite() -> Result<()> {
    let mut tally = Tally::default();
    let mut by_shape: BTreeMap<String, usize> = BTreeMap::new();
    let mut windows = 0;
    // Queries whose aggregate RestrictAggregateToJoinKeys restricts to the
    // keys of a join (it names the keys' relation `__join_keys_N`)
    let mut restricted = 0;
    for seed in 0..(DATABASES * scale()) as u64 {
        let mut generator = Generator::new(seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        let sqlite = database.sqlite().expect("SQLite loads the tables");
        let ctx = database.datafusion(options)?;
        for _ in 0..QUERIES_PER_DATABASE {
            let (shape, sql) = generator.query();
            tally.ran += 1;
            *by_shape.entry(format!("{shape:?}")).or_default() += 1;
            let plan = optimized_plan(&ctx, &sql.datafusion).await;
            if shape == Shape::SameRows && plan.contains("WindowAggr") {
                windows += 1;
            }
            if plan.contains("__join_keys") {
                if options.restrict_aggregate_to_join_keys {
                    restricted += 1;
                } else {
                    tally.failures.push(format!(
                        "restricted to join keys with the option off: {}",
                        sql.datafusion
                    ));
                }
            }
            compare(&mut tally, &ctx, &sqlite, &sql, Some(shape), || {
                describe(&database, &options)
            })
            .await;
        }
    }
    println!(
        "shapes: {by_shape:?}; {windows} SameRows queries computed as a window; \
         {restricted} queries aggregated for a join's keys only"
    );
    tally.report("queries_agree_with_sqlite");
    // The rules the oracle exists for ran: SubqueryToWindow on TPC-H q17's
    // shape (about a quarter of them, the others read a column it does not
    // group by), RestrictAggregateToJoinKeys where it was on
    assert!(windows * 10 >= by_shape["SameRows"], "{windows} windows");
    assert!(restricted > 0, "no aggregate restricted to a join's keys");
    Ok(())
}

/// The classes of the columns of a query of `shape`: its values are
/// integers, and the `SELECT` list's predicate a boolean.
fn classes_of(shape: Shape) -> &'static [Class] {
    use Class::{Boolean, Integer};
    match shape {
        Shape::SelectList => &[Integer, Integer, Boolean],
        _ => &[Integer, Integer, Integer],
    }
}

/// Whether `rows` are in the order of their third column, ascending with
/// NULLs last (DataFusion's default for `ORDER BY`).
fn ordered_by_third(rows: &[Row]) -> bool {
    rows.windows(2).all(|pair| match (pair[0][2], pair[1][2]) {
        (Some(a), Some(b)) => a <= b,
        (None, Some(_)) => false,
        (_, None) => true,
    })
}

/// Runs `sql` on both engines and records whether they agree: the same
/// rows, of the classes a query of `shape` computes, in order where it
/// orders.
async fn compare(
    tally: &mut Tally,
    ctx: &SessionContext,
    sqlite: &rusqlite::Connection,
    sql: &Sql,
    shape: Option<Shape>,
    describe: impl Fn() -> String,
) {
    let expected = match sqlite_rows(sqlite, &sql.sqlite) {
        Ok(rows) => multiset(rows),
        Err(error) => {
            tally.sqlite_rejected += 1;
            *tally
                .sqlite_errors
                .entry(shorten(&error.to_string()))
                .or_default() += 1;
            if std::env::var_os("FORK_ORACLE_TRACE").is_some() {
                eprintln!("SQLite rejected: {error}: {}", sql.sqlite);
            }
            return;
        }
    };
    match fork_typed_rows(ctx, &sql.datafusion).await {
        Ok((classes, rows)) => {
            let ordered = shape != Some(Shape::OrderBy) || ordered_by_third(&rows);
            let typed = shape.is_none_or(|shape| classes == classes_of(shape));
            let actual = multiset(rows);
            if actual == expected && ordered && typed {
                tally.agreed += 1;
            } else if !ordered || !typed {
                tally.failures.push(format!(
                    "{}\n  ordered: {ordered}; classes {classes:?} (expected {:?})\n  {}",
                    sql.datafusion,
                    shape.map(classes_of),
                    describe()
                ));
            } else {
                tally.failures.push(format!(
                    "{}\n  SQLite: {}\n  fork rows:   {actual:?}\n  SQLite rows: {expected:?}\n  {}",
                    sql.datafusion,
                    sql.sqlite,
                    describe()
                ));
            }
        }
        Err(error) => tally.refuse(&sql.datafusion, &error),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_agrees_with_sqlite() -> Result<()> {
    let mut tally = Tally::default();
    for seed in 0..(DATABASES * scale()) as u64 {
        let mut generator = Generator::new(1_000_000 + seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        // Each statement on a fresh copy of the tables
        for _ in 0..STATEMENTS_PER_DATABASE {
            let table = TABLES[generator.rng().random_range(0..TABLES.len())];
            let predicate = generator.predicate_over(table, 2);
            let delete = generator.rng().random_bool(0.5);
            let statement = if delete {
                Sql {
                    datafusion: format!(
                        "DELETE FROM {table} WHERE {}",
                        predicate.datafusion
                    ),
                    sqlite: format!("DELETE FROM {table} WHERE {}", predicate.sqlite),
                }
            } else {
                let value = generator.assigned_value(table);
                Sql {
                    datafusion: format!(
                        "UPDATE {table} SET v = {} WHERE {}",
                        value.datafusion, predicate.datafusion
                    ),
                    sqlite: format!(
                        "UPDATE {table} SET v = {} WHERE {}",
                        value.sqlite, predicate.sqlite
                    ),
                }
            };
            tally.ran += 1;
            let sqlite = database.sqlite().expect("SQLite loads the tables");
            let ctx = database.datafusion(options)?;
            let select = format!("SELECT k, v, w FROM {table}");
            let selected_sql = format!("{select} WHERE {}", predicate.datafusion);
            let before = fork_rows(&ctx, &select).await.expect("a scan");
            // What the same WHERE selects, on the fork
            let selected = fork_rows(&ctx, &selected_sql).await;

            let expected_count = match sqlite.execute(&statement.sqlite, []) {
                Ok(count) => count as i64,
                Err(_) => {
                    tally.sqlite_rejected += 1;
                    continue;
                }
            };
            let expected = multiset(sqlite_rows(&sqlite, &select).expect("a scan"));
            let count = match fork_rows(&ctx, &statement.datafusion).await {
                Ok(rows) => rows.first().and_then(|row| row[0]).unwrap_or(-1),
                Err(error) => {
                    // No row may change where the statement fails
                    let after = fork_rows(&ctx, &select).await.expect("a scan");
                    if multiset(after) != multiset(before.clone()) {
                        tally.failures.push(format!(
                            "a failed statement changed rows: {}\n  {error}",
                            statement.datafusion
                        ));
                    }
                    tally.refuse(&statement.datafusion, &error);
                    continue;
                }
            };
            let actual = multiset(fork_rows(&ctx, &select).await.expect("a scan"));
            let mut wrong = vec![];
            if count != expected_count {
                wrong.push(format!("count {count}, SQLite {expected_count}"));
            }
            if actual != expected {
                wrong.push(format!("fork table {actual:?}, SQLite {expected:?}"));
            }
            match &selected {
                Ok(selected) => {
                    if count != selected.len() as i64 {
                        wrong.push(format!(
                            "count {count}, but the WHERE selects {} rows",
                            selected.len()
                        ));
                    }
                    if delete {
                        let mut kept = multiset(before.clone());
                        for row in selected {
                            if let Some(position) =
                                kept.iter().position(|kept| kept == row)
                            {
                                kept.remove(position);
                            }
                        }
                        if kept != actual {
                            wrong.push(format!(
                                "left {actual:?}, the WHERE keeps {kept:?}"
                            ));
                        }
                    }
                }
                Err(error) => wrong.push(format!("the WHERE alone fails: {error}")),
            }
            if wrong.is_empty() {
                tally.agreed += 1;
            } else {
                tally.failures.push(format!(
                    "{}\n  SQLite: {}\n  {}\n  before: {before:?}\n  {}",
                    statement.datafusion,
                    statement.sqlite,
                    wrong.join("\n  "),
                    describe(&database, &options)
                ));
            }
        }
    }
    tally.report("dml_agrees_with_sqlite");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ternary_logic_partitioning() -> Result<()> {
    let mut tally = Tally::default();
    for seed in 0..(DATABASES * scale()) as u64 {
        let mut generator = Generator::new(2_000_000 + seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        let ctx = database.datafusion(options)?;
        for _ in 0..STATEMENTS_PER_DATABASE {
            let table = TABLES[generator.rng().random_range(0..TABLES.len())];
            let predicate = generator.predicate_over(table, 2).datafusion;
            let select = format!("SELECT k, v, w FROM {table}");
            tally.ran += 1;
            let all = fork_rows(&ctx, &select).await.expect("a scan");
            let mut parts = vec![];
            let mut refused = None;
            for partition in [
                format!("({predicate})"),
                format!("NOT ({predicate})"),
                format!("({predicate}) IS NULL"),
            ] {
                let sql = format!("{select} WHERE {partition}");
                match fork_rows(&ctx, &sql).await {
                    Ok(rows) => parts.extend(rows),
                    Err(error) => {
                        refused = Some((sql, error));
                        break;
                    }
                }
            }
            if let Some((sql, error)) = refused {
                tally.refuse(&sql, &error);
                continue;
            }
            if multiset(parts.clone()) == multiset(all.clone()) {
                tally.agreed += 1;
            } else {
                tally.failures.push(format!(
                    "{select} WHERE p, NOT p, p IS NULL with p = {predicate}\n  \
                     partitions {:?}\n  table {:?}\n  {}",
                    multiset(parts),
                    multiset(all),
                    describe(&database, &options)
                ));
            }
        }
    }
    tally.report("ternary_logic_partitioning");
    Ok(())
}

/// Databases for the nested queries, 20 queries each.
const POSITION_DATABASES: usize = 50;
/// A query that takes longer than this counts as hung.
const QUERY_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Why an error of the fork is not one a user can read, if it is not.
fn unreadable(error: &str) -> Option<&'static str> {
    if error.starts_with("panicked") {
        Some("a panic")
    } else if error.contains("Internal error") {
        Some("an internal error")
    } else if error.contains("Physical plan does not support") {
        Some("a logical expression left for the physical planner")
    } else if [
        "__subquery",
        "__domain",
        "__join_condition",
        "__correlated",
        "__scalar_sq",
    ]
    .iter()
    .any(|internal| error.contains(internal))
    {
        Some("a column the planner made up")
    } else {
        None
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_subqueries_answer_or_fail_cleanly() -> Result<()> {
    let mut ran = 0;
    let mut answered = 0;
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_position: BTreeMap<Position, (usize, usize)> = BTreeMap::new();
    let mut failures = vec![];
    for seed in 0..(POSITION_DATABASES * scale()) as u64 {
        let mut generator = PositionGenerator::new(3_000_000 + seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        let ctx = database.datafusion(options)?;
        for _ in 0..QUERIES_PER_DATABASE {
            let (position, sql) = generator.query();
            ran += 1;
            let counts = by_position.entry(position).or_default();
            counts.0 += 1;
            let result = tokio::time::timeout(QUERY_TIME_LIMIT, fork_rows(&ctx, &sql))
                .await
                .unwrap_or_else(|_| Err("panicked: did not finish in time".to_string()));
            match result {
                Ok(_) => {
                    answered += 1;
                    counts.1 += 1;
                }
                Err(error) => {
                    if std::env::var_os("FORK_ORACLE_TRACE").is_some() {
                        eprintln!("refused: {sql}\n  {error}");
                    }
                    if let Some(why) = unreadable(&error) {
                        failures.push(format!(
                            "{why}: {error}\n  {sql}\n  {}",
                            describe(&database, &options)
                        ));
                    }
                    let first = error.lines().next().unwrap_or_default();
                    *refused.entry(shorten(first)).or_default() += 1;
                }
            }
        }
    }
    println!(
        "nested_subqueries_answer_or_fail_cleanly: {ran} ran, {answered} answered, {} \
         refused or failed, {} unreadable",
        ran - answered,
        failures.len()
    );
    println!("  by position (ran, answered): {by_position:?}");
    for (error, count) in &refused {
        println!("  error {count}x: {error}");
    }
    for failure in failures.iter().take(5) {
        println!("FAILED: {failure}");
    }
    assert!(failures.is_empty(), "{} unreadable errors", failures.len());
    // Every position is generated, and most queries answer
    assert_eq!(by_position.len(), POSITIONS.len(), "{by_position:?}");
    assert!(answered * 2 >= ran, "{answered} of {ran} answered");
    Ok(())
}

#[test]
fn shapes_cover_every_family() {
    // Each shape of the outer query is generated
    let mut generator = Generator::new(7);
    for shape in [
        Shape::Where,
        Shape::SelectList,
        Shape::Having,
        Shape::OrderBy,
        Shape::JoinOn,
        Shape::SameRows,
    ] {
        let sql = generator.query_of(shape);
        assert!(sql.datafusion.starts_with("SELECT"), "{sql:?}");
    }
}
