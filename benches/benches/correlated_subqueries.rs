//! Correlated subqueries that only the dependent join decorrelates, against
//! the query an expert writes by hand for the same answer. Both variants of
//! each benchmark run in the same run, so their ratio is the cost or gain of
//! writing the subquery instead of the rewrite.
//!
//! - `latest_order`: the total price of each customer's latest order, a
//!   top-1 per key (`ORDER BY ... LIMIT 1` in the subquery), against
//!   `row_number() OVER (PARTITION BY ...)` and a left join.
//! - `outer_column_over_aggregate`: an outer column in the subquery's
//!   `SELECT` list over an aggregate, against a grouped aggregate and a left
//!   join.
//!
//! The data is TPC-H customer and orders, generated in process by
//! `tpchgen-arrow` (scale factor 1 under `cargo bench`, 0.01 in test mode,
//! where each pair is also checked to return the same rows, and
//! `outer_column_over_aggregate` to be planned to the same operators as its
//! rewrite).
//!
//! ```text
//! cargo xtask bench correlated_subqueries
//! ```
//!
//! With `PAIRED_ROUNDS=N`, each pair instead runs `N` rounds of the subquery
//! and its rewrite back to back, and the geometric mean of the rounds'
//! ratios is reported with its 95% confidence interval: a comparison that
//! the host's drift between runs does not move.
//!
//! ```text
//! PAIRED_ROUNDS=100 cargo bench -p fork-benches --bench correlated_subqueries
//! ```

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use tokio::runtime::Runtime;
use tpchgen::generators::{CustomerGenerator, OrderGenerator};
use tpchgen_arrow::{CustomerArrow, OrderArrow};

/// `(benchmark, the correlated subquery, the hand-written rewrite, whether
/// the two are planned to the same operators)`
const PAIRS: [(&str, &str, &str, bool); 2] = [
    (
        "latest_order",
        "SELECT c_custkey, \
           (SELECT o_totalprice FROM orders WHERE o_custkey = c_custkey \
            ORDER BY o_orderdate DESC, o_orderkey LIMIT 1) AS latest \
         FROM customer",
        "SELECT c_custkey, l.o_totalprice AS latest \
         FROM customer LEFT JOIN ( \
           SELECT o_custkey, o_totalprice FROM ( \
             SELECT o_custkey, o_totalprice, row_number() OVER ( \
               PARTITION BY o_custkey ORDER BY o_orderdate DESC, o_orderkey) AS rn \
             FROM orders) WHERE rn = 1) l ON l.o_custkey = c_custkey",
        // first_value grouped by the key, where the rewrite sorts
        false,
    ),
    (
        "outer_column_over_aggregate",
        "SELECT c_custkey, \
           (SELECT max(o_totalprice) - c_acctbal FROM orders WHERE o_custkey = c_custkey) AS gap \
         FROM customer",
        "SELECT c_custkey, m.top - c_acctbal AS gap \
         FROM customer LEFT JOIN ( \
           SELECT o_custkey, max(o_totalprice) AS top FROM orders GROUP BY o_custkey) m \
         ON m.o_custkey = c_custkey",
        true,
    ),
];

fn project<E: std::fmt::Debug>(
    batches: impl Iterator<Item = std::result::Result<RecordBatch, E>>,
    columns: &[&str],
) -> Vec<RecordBatch> {
    batches
        .map(|batch| {
            let batch = batch.unwrap();
            let indices: Vec<usize> = columns
                .iter()
                .map(|c| batch.schema().index_of(c).unwrap())
                .collect();
            batch.project(&indices).unwrap()
        })
        .collect()
}

fn context(scale: f64) -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new());
    let partitions = ctx.copied_config().target_partitions();
    let register = |name: &str, batches: Vec<RecordBatch>| {
        let schema = batches[0].schema();
        let mut spread = vec![vec![]; partitions];
        for (i, batch) in batches.into_iter().enumerate() {
            spread[i % partitions].push(batch);
        }
        let table = MemTable::try_new(schema, spread).unwrap();
        ctx.register_table(name, Arc::new(table)).unwrap();
    };
    register(
        "customer",
        project(
            CustomerArrow::new(CustomerGenerator::new(scale, 1, 1)),
            &["c_custkey", "c_acctbal"],
        ),
    );
    register(
        "orders",
        project(
            OrderArrow::new(OrderGenerator::new(scale, 1, 1)),
            &["o_orderkey", "o_custkey", "o_totalprice", "o_orderdate"],
        ),
    );
    ctx
}

async fn physical_plan(ctx: &SessionContext, sql: &str) -> String {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    displayable(plan.as_ref()).indent(false).to_string()
}

/// Each operator of an indented physical plan, at its depth, with its mode
/// and join type: the plan without the names of its columns.
fn operators(plan: &str) -> Vec<String> {
    plan.lines()
        .map(|line| {
            let (operator, details) = line.split_once(':').unwrap_or((line, ""));
            let kinds = details
                .split(", ")
                .map(str::trim)
                .filter(|detail| {
                    detail.starts_with("mode=") || detail.starts_with("join_type=")
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!("{operator} {kinds}")
        })
        .collect()
}

async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

/// The rows of `sql`, sorted, as text.
async fn sorted_rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = collect(ctx, sql).await.unwrap();
    let text = pretty_format_batches(&batches).unwrap().to_string();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("| "))
        .skip(1)
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn benchmarks(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|arg| arg == "--bench");
    let scale = if bench_mode { 1.0 } else { 0.01 };
    let rt = Runtime::new().unwrap();
    let ctx = context(scale);

    for (name, subquery, rewrite, same_operators) in PAIRS {
        // The subquery is decorrelated into a hash join, and gives the
        // rewrite's rows
        let plan = rt.block_on(physical_plan(&ctx, subquery));
        assert!(plan.contains("HashJoinExec"), "{name}\n{plan}");
        if same_operators {
            let hand_written = rt.block_on(physical_plan(&ctx, rewrite));
            assert_eq!(
                operators(&plan),
                operators(&hand_written),
                "{name}\n{plan}\n{hand_written}"
            );
        }
        if !bench_mode {
            let (got, expected) = rt.block_on(async {
                (
                    sorted_rows(&ctx, subquery).await,
                    sorted_rows(&ctx, rewrite).await,
                )
            });
            assert!(!expected.is_empty(), "{name}");
            assert_eq!(got, expected, "{name}");
        }

        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        for (variant, sql) in [("subquery", subquery), ("hand_written", rewrite)] {
            group.bench_function(variant, |b| {
                b.iter(|| black_box(rt.block_on(collect(&ctx, sql)).unwrap()))
            });
        }
        group.finish();

        // Planning alone: the decorrelation's share of the time above
        let mut group = c.benchmark_group(format!("{name}_planning"));
        for (variant, sql) in [("subquery", subquery), ("hand_written", rewrite)] {
            group.bench_function(variant, |b| {
                b.iter(|| black_box(rt.block_on(physical_plan(&ctx, sql))))
            });
        }
        group.finish();
    }
}

/// With `PAIRED_ROUNDS` set, the number of paired rounds to run instead of
/// the criterion benchmarks.
fn paired_rounds() -> Option<usize> {
    let rounds = std::env::var("PAIRED_ROUNDS").ok()?;
    match rounds.parse() {
        Ok(rounds) if rounds >= 2 => Some(rounds),
        _ => panic!("PAIRED_ROUNDS must be a number of rounds, at least 2: {rounds}"),
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Runs each pair `rounds` times at scale factor 1, the subquery and its
/// rewrite back to back in alternating order, and prints the geometric mean
/// of the rounds' ratios with its 95% confidence interval. Where the host's
/// speed drifts between runs (as it does on a shared machine), both halves
/// of a round see the same host, so the ratio holds still where the times
/// of separate runs do not.
fn paired(rounds: usize) {
    let rt = Runtime::new().unwrap();
    let ctx = context(1.0);
    let run = |sql: &str| {
        let start = Instant::now();
        black_box(rt.block_on(collect(&ctx, sql)).unwrap());
        start.elapsed().as_secs_f64()
    };
    println!(
        "| benchmark | rounds | subquery (median) | hand-written (median) \
         | subquery / hand-written, geometric mean (95% CI) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (name, subquery, rewrite, _) in PAIRS {
        for _ in 0..3 {
            run(subquery);
            run(rewrite);
        }
        let (mut subquery_times, mut rewrite_times) = (vec![], vec![]);
        for round in 0..rounds {
            if round % 2 == 0 {
                subquery_times.push(run(subquery));
                rewrite_times.push(run(rewrite));
            } else {
                rewrite_times.push(run(rewrite));
                subquery_times.push(run(subquery));
            }
        }
        let log_ratios: Vec<f64> = subquery_times
            .iter()
            .zip(&rewrite_times)
            .map(|(subquery, rewrite)| (subquery / rewrite).ln())
            .collect();
        let n = rounds as f64;
        let mean = log_ratios.iter().sum::<f64>() / n;
        let variance =
            log_ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half_width = 1.96 * (variance / n).sqrt();
        println!(
            "| {name} | {rounds} | {:.2} ms | {:.2} ms | {:.3} ({:.3} to {:.3}) |",
            median(subquery_times) * 1e3,
            median(rewrite_times) * 1e3,
            mean.exp(),
            (mean - half_width).exp(),
            (mean + half_width).exp(),
        );
    }
}

criterion_group!(benches, benchmarks);

fn main() {
    match paired_rounds() {
        Some(rounds) => paired(rounds),
        None => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
