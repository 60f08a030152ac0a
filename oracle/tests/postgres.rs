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

//! The fork against a real PostgreSQL server, started for each test in a
//! temporary folder on a loopback port (`fork_oracle::postgres`).
//!
//! - `queries_agree_with_postgres`: 2,000 random queries of the relational
//!   core (`fork_oracle::relational_queries`) on both, over random tables
//!   (`fork_oracle::relational_tables`) laid out in random partitions and
//!   batches, with partitioned hash joins and the fork's off-by-default
//!   `restrict_aggregate_to_join_keys` each on for about half the tables.
//!   The results must have the same column classes and the same rows, in
//!   the same order where the query's `ORDER BY` fixes it.
//! - `dml_agrees_with_postgres`: 600 random `DELETE` and `UPDATE`, half of
//!   them with `USING` / `FROM`, each on fresh tables: the counts and the
//!   tables after must agree. Where PostgreSQL's `UPDATE ... FROM` matches
//!   a row twice (and changes it with either match), the fork must refuse
//!   and change nothing.
//!
//! A query PostgreSQL rejects is the generator's fault; at most 1% may be.
//! A query the fork refuses while PostgreSQL answers is counted by its
//! message, and the tests bound them: at most [`REFUSALS_PER_MILLE`] per
//! thousand, and only with the messages in [`KNOWN_REFUSALS`] (limits the
//! docs name) or a parser error for an expression nested deeper than the
//! parser's recursion limit ([`parses_nested_deeper`]); any other refusal,
//! an internal error or a panic fails the test. `FORK_ORACLE_CASES` multiplies the cases for a longer run,
//! `FORK_ORACLE_FAMILY` (a family's name, as `Aggregates`) generates the
//! queries of that family alone, and `FORK_ORACLE_TRACE` prints each query.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::DFParserBuilder;
use fork_oracle::postgres::Server;
use fork_oracle::relational_queries::{FAMILIES, Family, Query, RelationalGenerator};
use fork_oracle::relational_tables::Database;
use fork_oracle::tables::Options;
use fork_oracle::typed_rows::{TypedRows, from_batches, from_postgres};
use futures::FutureExt;
use tokio_postgres::{Client, NoTls};

const DATABASES: usize = 100;
const QUERIES_PER_DATABASE: usize = 20;
const STATEMENTS_PER_DATABASE: usize = 6;

/// The refusals of the fork that the tests accept, each a limit the docs
/// name, by a part of its message.
const KNOWN_REFUSALS: &[&str] = &[
    // docs/subqueries.md: a subquery in an outer join's ON reading both of
    // its sides, or a shape the dependent join cannot decorrelate yet
    "cannot be decorrelated",
    // docs/subqueries.md: a row compared with a subquery, the row holding a
    // subquery of its own
    "A subquery inside a row compared with a subquery",
    // Two output columns of one name (issue 40): the generator names every
    // column of a SELECT list apart, but `SELECT *` over a join whose merged
    // key meets another table's column of that name still has two
    "which would be ambiguous",
    "Projections require unique expression names",
];

/// Whether `sql` fails to parse with the default recursion limit and
/// parses with one 20 times that (on a thread with the stack that needs).
fn parses_nested_deeper(sql: &str) -> bool {
    let sql = sql.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let parses = |limit| {
                DFParserBuilder::new(sql.as_str())
                    .with_recursion_limit(limit)
                    .build()
                    .and_then(|mut parser| parser.parse_statements())
                    .is_ok()
            };
            !parses(50) && parses(1000)
        })
        .expect("a parser thread starts")
        .join()
        .unwrap_or(false)
}

/// Refusals accepted per thousand cases.
const REFUSALS_PER_MILLE: usize = 20;

fn scale() -> usize {
    std::env::var("FORK_ORACLE_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1)
}

/// The one family to generate, where `FORK_ORACLE_FAMILY` names one.
fn only_family() -> Option<Family> {
    let name = std::env::var("FORK_ORACLE_FAMILY").ok()?;
    let family = FAMILIES
        .into_iter()
        .find(|family| format!("{family:?}").eq_ignore_ascii_case(&name));
    assert!(family.is_some(), "FORK_ORACLE_FAMILY: no family {name}");
    family
}

fn trace() -> bool {
    std::env::var_os("FORK_ORACLE_TRACE").is_some()
}

/// A new server and a client of it; the server stops when dropped.
async fn postgres() -> (Server, Client) {
    let server = Server::start().unwrap_or_else(|error| {
        panic!("PostgreSQL is needed for this test and did not start: {error}")
    });
    let (client, connection) = tokio_postgres::connect(&server.url(), NoTls)
        .await
        .expect("a connection to the server just started");
    tokio::spawn(connection);
    (server, client)
}

/// The rows PostgreSQL returns for `sql`, or its error.
async fn postgres_rows(
    client: &Client,
    sql: &str,
) -> std::result::Result<TypedRows, String> {
    let statement = client.prepare(sql).await.map_err(|e| message(&e))?;
    let types: Vec<_> = statement
        .columns()
        .iter()
        .map(|column| column.type_().clone())
        .collect();
    let rows = client
        .query(&statement, &[])
        .await
        .map_err(|e| message(&e))?;
    from_postgres(&types, &rows)
}

/// PostgreSQL's own message of `error`.
fn message(error: &tokio_postgres::Error) -> String {
    error
        .as_db_error()
        .map(|db| db.message().to_string())
        .unwrap_or_else(|| error.to_string())
}

/// A query of these tiny tables that takes longer than this has hung.
const QUERY_TIME_LIMIT: Duration = Duration::from_secs(60);

/// The fork's rows of `sql`, or its error; a panic, and a query that does
/// not finish in [`QUERY_TIME_LIMIT`], are errors too (which fail the test).
async fn fork_rows(
    ctx: &SessionContext,
    sql: &str,
) -> std::result::Result<TypedRows, String> {
    let run = async {
        let frame = ctx.sql(sql).await?;
        let fields = frame.schema().fields().to_vec();
        let batches = frame.collect().await?;
        from_batches(&fields, &batches)
    };
    let run =
        tokio::time::timeout(QUERY_TIME_LIMIT, AssertUnwindSafe(run).catch_unwind());
    match run.await {
        Err(_) => Err(format!("panicked: did not finish in {QUERY_TIME_LIMIT:?}")),
        Ok(Ok(Ok(rows))) => Ok(rows),
        Ok(Ok(Err(error))) => Err(error.to_string()),
        Ok(Err(panic)) => Err(fork_oracle::engines::panic_error(panic.as_ref())),
    }
}

/// What a test found.
#[derive(Default)]
struct Tally {
    ran: usize,
    agreed: usize,
    /// The fork's refusals, by their first line.
    refused: BTreeMap<String, usize>,
    /// Refusals whose message is not among [`KNOWN_REFUSALS`].
    unknown_refusals: Vec<String>,
    postgres_rejected: BTreeMap<String, usize>,
    failures: Vec<String>,
    by_family: BTreeMap<String, (usize, usize)>,
}

impl Tally {
    fn refuse(&mut self, sql: &str, error: &str) {
        if trace() {
            eprintln!("refused: {sql}\n  {error}");
        }
        if error.contains("Internal error") || error.starts_with("panicked") {
            self.failures.push(format!("{error}\n  {sql}"));
            return;
        }
        let first = error.lines().take(3).collect::<Vec<_>>().join(" / ");
        if error.contains("ParserError") && parses_nested_deeper(sql) {
            // docs/sql-semantics.md: an expression nested deeper than the
            // parser's recursion limit, which sqlparser reports as another error
            *self
                .refused
                .entry("nested deeper than datafusion.sql_parser.recursion_limit".into())
                .or_default() += 1;
            return;
        }
        if !KNOWN_REFUSALS.iter().any(|known| error.contains(known)) {
            self.unknown_refusals.push(format!("{first}\n  {sql}"));
        }
        *self
            .refused
            .entry(first.chars().take(240).collect())
            .or_default() += 1;
    }

    fn reject(&mut self, sql: &str, error: &str) {
        if trace() {
            eprintln!("PostgreSQL rejected: {sql}\n  {error}");
        }
        let first: String = error
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect();
        *self.postgres_rejected.entry(first).or_default() += 1;
    }

    fn report(&self, test: &str) {
        let refused: usize = self.refused.values().sum();
        let rejected: usize = self.postgres_rejected.values().sum();
        println!(
            "{test}: {} ran, {} agreed, {refused} refused by the fork, {rejected} rejected \
             by PostgreSQL, {} wrong",
            self.ran,
            self.agreed,
            self.failures.len()
        );
        for (family, (ran, agreed)) in &self.by_family {
            println!("  {family}: {ran} ran, {agreed} agreed");
        }
        for (error, count) in &self.refused {
            println!("  refused {count}x: {error}");
        }
        for (error, count) in &self.postgres_rejected {
            println!("  PostgreSQL rejected {count}x: {error}");
        }
        for failure in self.failures.iter().take(8) {
            println!("FAILED: {failure}");
        }
        for refusal in self.unknown_refusals.iter().take(8) {
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
            refused * 1000 <= self.ran * REFUSALS_PER_MILLE,
            "{test}: {refused} of {} refused",
            self.ran
        );
        assert!(
            rejected * 100 <= self.ran.max(1),
            "{test}: PostgreSQL rejected {rejected} of {}",
            self.ran
        );
    }
}

fn describe(database: &Database, options: &Options) -> String {
    let tables: Vec<String> = database
        .tables
        .iter()
        .map(|table| format!("{} = {:?}", table.name, table.rows))
        .collect();
    format!("{options:?}\n  {}", tables.join("\n  "))
}

/// Whether `actual` is `expected`: the same classes, and the same rows (in
/// the same order, where `ordered`).
fn agree(actual: &TypedRows, expected: &TypedRows, ordered: bool) -> bool {
    if ordered {
        actual == expected
    } else {
        actual.clone().sorted() == expected.clone().sorted()
    }
}

async fn compare(
    tally: &mut Tally,
    ctx: &SessionContext,
    client: &Client,
    query: &Query,
    describe: impl Fn() -> String,
) {
    tally.ran += 1;
    let family = tally
        .by_family
        .entry(format!("{:?}", query.family))
        .or_default();
    family.0 += 1;
    if trace() {
        eprintln!("running: {}", query.sql);
    }
    let expected = match postgres_rows(client, &query.sql).await {
        Ok(rows) => rows,
        Err(error) => {
            tally.reject(&query.sql, &error);
            return;
        }
    };
    match fork_rows(ctx, &query.sql).await {
        Ok(actual) if agree(&actual, &expected, query.ordered) => {
            tally.agreed += 1;
            family.1 += 1;
        }
        Ok(actual) => tally.failures.push(format!(
            "{}\n  ordered: {}\n  fork:       {:?} {:?}\n  PostgreSQL: {:?} {:?}\n  {}",
            query.sql,
            query.ordered,
            actual.classes,
            actual.rows,
            expected.classes,
            expected.rows,
            describe()
        )),
        Err(error) => tally.refuse(&query.sql, &error),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_agree_with_postgres() -> Result<()> {
    let (_server, client) = postgres().await;
    let mut tally = Tally::default();
    for seed in 0..(DATABASES * scale()) as u64 {
        let mut generator = RelationalGenerator::new(10_000_000 + seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        client
            .batch_execute(&database.postgres_script())
            .await
            .expect("PostgreSQL loads the tables");
        let ctx = database.datafusion(options)?;
        for _ in 0..QUERIES_PER_DATABASE {
            let query = match only_family() {
                Some(family) => generator.query_of(family),
                None => generator.query(),
            };
            compare(&mut tally, &ctx, &client, &query, || {
                describe(&database, &options)
            })
            .await;
        }
    }
    tally.report("queries_agree_with_postgres");
    // Every family ran, and most of each agreed
    for family in only_family().map_or(FAMILIES.to_vec(), |family| vec![family]) {
        let (ran, agreed) = tally.by_family[&format!("{family:?}")];
        assert!(
            agreed * 10 >= ran * 8,
            "{family:?}: {agreed} of {ran} agreed"
        );
    }
    Ok(())
}

/// The rows of `table` on both engines, sorted.
async fn tables(
    ctx: &SessionContext,
    client: &Client,
    table: &str,
) -> (TypedRows, TypedRows) {
    let select = format!("SELECT * FROM {table}");
    let fork = fork_rows(ctx, &select).await.expect("a scan").sorted();
    let postgres = postgres_rows(client, &select)
        .await
        .expect("a scan")
        .sorted();
    (fork, postgres)
}

/// The count a `DELETE` or `UPDATE` returned on the fork.
fn count_of(rows: &TypedRows) -> Option<i64> {
    match rows.rows.as_slice() {
        [row] => match row.as_slice() {
            [fork_oracle::typed_rows::Value::Integer(count)] => Some(*count),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_agrees_with_postgres() -> Result<()> {
    let (_server, client) = postgres().await;
    let mut tally = Tally::default();
    let mut refused_repeats = 0;
    for seed in 0..(DATABASES * scale()) as u64 {
        let mut generator = RelationalGenerator::new(20_000_000 + seed);
        let database = Database::random(generator.rng());
        let options = Options::random(generator.rng());
        for _ in 0..STATEMENTS_PER_DATABASE {
            let statement = generator.statement();
            tally.ran += 1;
            let family = if statement.sql.contains(" FROM ")
                && statement.sql.starts_with("UPDATE")
                || statement.sql.contains(" USING ")
            {
                "with FROM or USING"
            } else {
                "on the target alone"
            };
            tally.by_family.entry(family.to_string()).or_default().0 += 1;
            if trace() {
                eprintln!("running: {}", statement.sql);
            }
            // Fresh tables on both
            client
                .batch_execute(&database.postgres_script())
                .await
                .expect("PostgreSQL loads the tables");
            let ctx = database.datafusion(options)?;
            let before = fork_rows(&ctx, &format!("SELECT * FROM {}", statement.target))
                .await
                .expect("a scan")
                .sorted();

            let repeats = match &statement.repeated_matches {
                Some(query) => match postgres_rows(&client, query).await {
                    Ok(rows) => count_of(&rows).unwrap_or(0),
                    Err(error) => {
                        tally.reject(query, &error);
                        continue;
                    }
                },
                None => 0,
            };
            let expected_count = match client.execute(statement.sql.as_str(), &[]).await {
                Ok(count) => count as i64,
                Err(error) => {
                    tally.reject(&statement.sql, &message(&error));
                    continue;
                }
            };
            let result = fork_rows(&ctx, &statement.sql).await;
            let (after, postgres_after) = tables(&ctx, &client, statement.target).await;
            if repeats > 0 {
                // PostgreSQL changed a row with one of its matches; the
                // fork refuses and changes nothing
                match result {
                    Err(error)
                        if error.contains("rows of its FROM")
                            || error.contains("two different new values") =>
                    {
                        if after == before {
                            refused_repeats += 1;
                            tally.agreed += 1;
                            tally.by_family.get_mut(family).expect("counted").1 += 1;
                        } else {
                            tally.failures.push(format!(
                                "a refused UPDATE changed rows: {}\n  {error}",
                                statement.sql
                            ));
                        }
                    }
                    // Refused for another reason first (a shape the fork
                    // does not plan): a refusal like any other, as long as
                    // nothing changed
                    Err(error) if after == before => {
                        tally.refuse(&statement.sql, &error);
                    }
                    other => tally.failures.push(format!(
                        "{}\n  matches a row twice, and the fork gave {other:?}\n  {}",
                        statement.sql,
                        describe(&database, &options)
                    )),
                }
                continue;
            }
            let count = match result {
                Ok(rows) => count_of(&rows),
                Err(error) => {
                    if after != before {
                        tally.failures.push(format!(
                            "a failed statement changed rows: {}\n  {error}",
                            statement.sql
                        ));
                    }
                    tally.refuse(&statement.sql, &error);
                    continue;
                }
            };
            if count == Some(expected_count) && after == postgres_after {
                tally.agreed += 1;
                tally.by_family.get_mut(family).expect("counted").1 += 1;
            } else {
                tally.failures.push(format!(
                    "{}\n  count {count:?}, PostgreSQL {expected_count}\n  fork table       {:?}\n  PostgreSQL table {:?}\n  before {:?}\n  {}",
                    statement.sql,
                    after.rows,
                    postgres_after.rows,
                    before.rows,
                    describe(&database, &options)
                ));
            }
        }
    }
    println!(
        "dml_agrees_with_postgres: {refused_repeats} UPDATE ... FROM matching a row twice, refused as expected"
    );
    tally.report("dml_agrees_with_postgres");
    Ok(())
}

#[test]
fn every_family_is_generated() {
    let mut generator = RelationalGenerator::new(11);
    for family in FAMILIES {
        let query = generator.query_of(family);
        assert!(query.sql.starts_with("SELECT"), "{family:?}: {}", query.sql);
    }
    let _: Family = generator.query().family;
}

#[test]
fn derived_tables_with_a_repeated_name_are_generated() {
    let mut generator = RelationalGenerator::new(12);
    let queries: Vec<String> = (0..500).map(|_| generator.query().sql).collect();
    let derived = queries
        .iter()
        .filter(|sql| sql.contains("(SELECT "))
        .count();
    // Two columns of one name in one derived table's SELECT list
    let repeated = queries
        .iter()
        .filter(|sql| {
            ["k", "v", "w", "s", "c"].iter().any(|name| {
                sql.split(") AS x").any(|part| {
                    let list = part.rsplit("(SELECT ").next().unwrap_or("");
                    let list = list.split(" FROM ").next().unwrap_or("");
                    list.split(", ")
                        .filter(|item| {
                            item.trim_start_matches("DISTINCT ") == *name
                                || item.ends_with(&format!(" AS {name}"))
                        })
                        .count()
                        > 1
                })
            })
        })
        .count();
    assert!(
        derived >= 50,
        "{derived} of 500 queries have a derived table"
    );
    assert!(repeated >= 5, "{repeated} of 500 repeat a name in one");
}
