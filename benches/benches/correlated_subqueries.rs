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
//! - `small_quantity` (TPC-H q17's shape) and `above_customer_average` (the
//!   same pattern over orders and customer): an aggregate of the rows the
//!   outer query joins, which `SubqueryToWindow` computes as a window,
//!   against the window aggregate written by hand. A third variant plans the
//!   subquery without that rule: upstream's join to the aggregate of the
//!   whole table.
//! - `shipped_availability` (TPC-H q20) and `balance_above_recent_spending`
//!   (the same pattern over customer and orders): an aggregate joined to a
//!   filtered few of its keys, which `RestrictAggregateToJoinKeys` computes
//!   for those keys only (`datafusion.optimizer.restrict_aggregate_to_join_keys`,
//!   off by default, is set in these sessions), against the restriction
//!   written by hand. A third variant plans the subquery without that rule,
//!   as the defaults do: the hash join's dynamic filter then restricts the
//!   aggregate at run time (`JoinDynamicFilterBelowAggregates`). A fourth
//!   plans it without either: upstream's aggregate of the whole table.
//!   `unfiltered_balance_above_recent_spending` is the latter with a filter
//!   that keeps every customer: each restriction's cost where it gains
//!   nothing.
//!
//! The data is TPC-H customer, orders, lineitem, part, partsupp, supplier
//! and nation, generated in process by
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
//!
//! (`PAIRED_SCALE` sets the scale factor of the paired rounds.)

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use tokio::runtime::Runtime;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow,
    SupplierArrow,
};

/// A correlated subquery and the query an expert writes by hand for the
/// same rows.
struct Pair {
    name: &'static str,
    subquery: &'static str,
    rewrite: &'static str,
    /// Whether the two are planned to the same operators.
    same_operators: bool,
    /// An operator the subquery's plan has.
    operator: &'static str,
    /// Further variants, each planning the subquery without the rules (of
    /// the logical or the physical optimizer) it lists; the last as
    /// upstream does.
    without: &'static [&'static [&'static str]],
}

const PAIRS: [Pair; 7] = [
    Pair {
        name: "latest_order",
        subquery: "SELECT c_custkey, \
               (SELECT o_totalprice FROM orders WHERE o_custkey = c_custkey \
                ORDER BY o_orderdate DESC, o_orderkey LIMIT 1) AS latest \
             FROM customer",
        rewrite: "SELECT c_custkey, l.o_totalprice AS latest \
             FROM customer LEFT JOIN ( \
               SELECT o_custkey, o_totalprice FROM ( \
                 SELECT o_custkey, o_totalprice, row_number() OVER ( \
                   PARTITION BY o_custkey ORDER BY o_orderdate DESC, o_orderkey) AS rn \
                 FROM orders) WHERE rn = 1) l ON l.o_custkey = c_custkey",
        // first_value grouped by the key, where the rewrite sorts
        same_operators: false,
        operator: "HashJoinExec",
        without: &[],
    },
    Pair {
        name: "outer_column_over_aggregate",
        subquery: "SELECT c_custkey, \
               (SELECT max(o_totalprice) - c_acctbal FROM orders WHERE o_custkey = c_custkey) AS gap \
             FROM customer",
        rewrite: "SELECT c_custkey, m.top - c_acctbal AS gap \
             FROM customer LEFT JOIN ( \
               SELECT o_custkey, max(o_totalprice) AS top FROM orders GROUP BY o_custkey) m \
             ON m.o_custkey = c_custkey",
        same_operators: true,
        operator: "HashJoinExec",
        without: &[],
    },
    Pair {
        name: "small_quantity",
        subquery: "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part \
             WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX' \
               AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)",
        rewrite: "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM ( \
               SELECT l_extendedprice, l_quantity, \
                 0.2 * avg(l_quantity) OVER (PARTITION BY l_partkey) AS bound \
               FROM lineitem, part \
               WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX') \
             WHERE l_quantity < bound",
        same_operators: false,
        operator: "WindowAggExec",
        without: &[&[WINDOW_RULE]],
    },
    Pair {
        name: "above_customer_average",
        subquery: "SELECT o_orderkey, o_totalprice FROM orders, customer \
             WHERE o_custkey = c_custkey AND c_acctbal > 9000 \
               AND o_totalprice > (SELECT avg(o_totalprice) FROM orders WHERE o_custkey = c_custkey)",
        rewrite: "SELECT o_orderkey, o_totalprice FROM ( \
               SELECT o_orderkey, o_totalprice, \
                 avg(o_totalprice) OVER (PARTITION BY o_custkey) AS average \
               FROM orders, customer WHERE o_custkey = c_custkey AND c_acctbal > 9000) \
             WHERE o_totalprice > average",
        same_operators: false,
        operator: "WindowAggExec",
        without: &[&[WINDOW_RULE]],
    },
    Pair {
        name: "shipped_availability",
        // TPC-H q20
        subquery: "SELECT s_name, s_address FROM supplier, nation \
             WHERE s_suppkey IN ( \
               SELECT ps_suppkey FROM partsupp \
               WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%') \
                 AND ps_availqty > ( \
                   SELECT 0.5 * sum(l_quantity) FROM lineitem \
                   WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey \
                     AND l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01')) \
               AND s_nationkey = n_nationkey AND n_name = 'CANADA' \
             ORDER BY s_name",
        // The lineitems of the pairs the filtered partsupp has, aggregated
        // and joined
        rewrite: "WITH ps AS ( \
               SELECT ps_partkey, ps_suppkey, ps_availqty FROM partsupp \
               WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')), \
             shipped AS ( \
               SELECT l_partkey, l_suppkey, 0.5 * sum(l_quantity) AS half FROM lineitem \
               WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' \
                 AND EXISTS (SELECT 1 FROM ps WHERE ps_partkey = l_partkey AND ps_suppkey = l_suppkey) \
               GROUP BY l_partkey, l_suppkey) \
             SELECT s_name, s_address FROM supplier, nation \
             WHERE s_suppkey IN ( \
               SELECT ps_suppkey FROM ps JOIN shipped \
               ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey WHERE ps_availqty > half) \
               AND s_nationkey = n_nationkey AND n_name = 'CANADA' \
             ORDER BY s_name",
        same_operators: false,
        operator: "HashJoinExec",
        without: &[&[KEYS_RULE], &[KEYS_RULE, DYNAMIC_FILTER_RULE]],
    },
    Pair {
        name: "balance_above_recent_spending",
        // q20's pattern on other tables: a filtered customer, an aggregate
        // of all orders
        subquery: "SELECT c_custkey, c_acctbal FROM customer \
             WHERE c_acctbal > 9000 AND c_acctbal * 100 > ( \
               SELECT sum(o_totalprice) FROM orders \
               WHERE o_custkey = c_custkey AND o_orderdate >= date '1996-01-01')",
        rewrite: "SELECT c_custkey, c_acctbal FROM customer JOIN ( \
               SELECT o_custkey, sum(o_totalprice) AS spent FROM orders \
               WHERE o_orderdate >= date '1996-01-01' AND EXISTS ( \
                 SELECT 1 FROM customer WHERE c_custkey = o_custkey AND c_acctbal > 9000) \
               GROUP BY o_custkey) s ON s.o_custkey = c_custkey \
             WHERE c_acctbal > 9000 AND c_acctbal * 100 > spent",
        same_operators: false,
        operator: "HashJoinExec",
        without: &[&[KEYS_RULE], &[KEYS_RULE, DYNAMIC_FILTER_RULE]],
    },
    Pair {
        name: "unfiltered_balance_above_recent_spending",
        // The same with a filter that keeps every customer: the rule's cost
        // where the keys are all of them (its third variant is the plan
        // without that cost)
        subquery: "SELECT c_custkey, c_acctbal FROM customer \
             WHERE c_acctbal > -1000 AND c_acctbal * 100 > ( \
               SELECT sum(o_totalprice) FROM orders \
               WHERE o_custkey = c_custkey AND o_orderdate >= date '1996-01-01')",
        rewrite: "SELECT c_custkey, c_acctbal FROM customer JOIN ( \
               SELECT o_custkey, sum(o_totalprice) AS spent FROM orders \
               WHERE o_orderdate >= date '1996-01-01' AND EXISTS ( \
                 SELECT 1 FROM customer WHERE c_custkey = o_custkey AND c_acctbal > -1000) \
               GROUP BY o_custkey) s ON s.o_custkey = c_custkey \
             WHERE c_acctbal > -1000 AND c_acctbal * 100 > spent",
        same_operators: false,
        operator: "HashJoinExec",
        without: &[&[KEYS_RULE], &[KEYS_RULE, DYNAMIC_FILTER_RULE]],
    },
];

/// The rules whose effect the further variants leave out.
const WINDOW_RULE: &str = "subquery_to_window";
const KEYS_RULE: &str = "restrict_aggregate_to_join_keys";
const DYNAMIC_FILTER_RULE: &str = "JoinDynamicFilterBelowAggregates";

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
    // With the fork's off-by-default magic set on, for the pairs it plans
    let config = SessionConfig::new()
        .set_bool("datafusion.optimizer.restrict_aggregate_to_join_keys", true);
    let ctx = SessionContext::new_with_config(config);
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
    register(
        "lineitem",
        project(
            LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)),
            &[
                "l_partkey",
                "l_suppkey",
                "l_quantity",
                "l_extendedprice",
                "l_shipdate",
            ],
        ),
    );
    register(
        "part",
        project(
            PartArrow::new(PartGenerator::new(scale, 1, 1)),
            &["p_partkey", "p_name", "p_brand", "p_container"],
        ),
    );
    register(
        "partsupp",
        project(
            PartSuppArrow::new(PartSuppGenerator::new(scale, 1, 1)),
            &["ps_partkey", "ps_suppkey", "ps_availqty"],
        ),
    );
    register(
        "supplier",
        project(
            SupplierArrow::new(SupplierGenerator::new(scale, 1, 1)),
            &["s_suppkey", "s_name", "s_address", "s_nationkey"],
        ),
    );
    register(
        "nation",
        project(
            NationArrow::new(NationGenerator::new(scale, 1, 1)),
            &["n_nationkey", "n_name"],
        ),
    );
    ctx
}

/// `ctx`'s tables in a session whose optimizers leave out the rules `names`
/// (the logical and the physical optimizer's rules have distinct names).
fn without_rules(ctx: &SessionContext, names: &[&str]) -> SessionContext {
    let state = ctx.state();
    let rules = state
        .optimizers()
        .iter()
        .filter(|rule| !names.contains(&rule.name()))
        .cloned()
        .collect();
    let physical_rules = state
        .physical_optimizers()
        .iter()
        .filter(|rule| !names.contains(&rule.name()))
        .cloned()
        .collect();
    let state = SessionStateBuilder::new_from_existing(state)
        .with_optimizer_rules(rules)
        .with_physical_optimizer_rules(physical_rules)
        .build();
    SessionContext::new_with_state(state)
}

/// The name of a variant that leaves out the rules `names`.
fn without_name(names: &[&str]) -> String {
    format!("without {}", names.join(" and "))
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

    for pair in &PAIRS {
        let Pair {
            name,
            subquery,
            rewrite,
            ..
        } = *pair;
        // The subquery is decorrelated (into a join, or a window), and
        // gives the rewrite's rows
        let plan = rt.block_on(physical_plan(&ctx, subquery));
        assert!(plan.contains(pair.operator), "{name}\n{plan}");
        if pair.same_operators {
            let hand_written = rt.block_on(physical_plan(&ctx, rewrite));
            assert_eq!(
                operators(&plan),
                operators(&hand_written),
                "{name}\n{plan}\n{hand_written}"
            );
        }
        let without: Vec<_> = pair
            .without
            .iter()
            .map(|rules| (without_name(rules), without_rules(&ctx, rules)))
            .collect();
        // Each variant leaves out a rule that changes the plan of the one
        // before
        let mut previous = plan.clone();
        for (variant, other_plans) in &without {
            let other_plan = rt.block_on(physical_plan(other_plans, subquery));
            assert_ne!(previous, other_plan, "{name} {variant}");
            previous = other_plan;
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
            for (variant, other_plans) in &without {
                let rows = rt.block_on(sorted_rows(other_plans, subquery));
                assert_eq!(rows, expected, "{name} {variant}");
            }
        }

        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        for (variant, sql) in [("subquery", subquery), ("hand_written", rewrite)] {
            group.bench_function(variant, |b| {
                b.iter(|| black_box(rt.block_on(collect(&ctx, sql)).unwrap()))
            });
        }
        for (variant, other_plans) in &without {
            let id = format!("subquery_{}", variant.replace(' ', "_"));
            group.bench_function(id, |b| {
                b.iter(|| black_box(rt.block_on(collect(other_plans, subquery)).unwrap()))
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
///
/// For the pairs a rule of ours plans, further rows compare the subquery
/// planned without it (and without the rules each variant lists). `PAIRED_SCALE` sets another scale factor, and
/// `PAIRED_ONLY` runs only the pairs of those names (comma-separated).
fn paired(rounds: usize) {
    let rt = Runtime::new().unwrap();
    let scale = std::env::var("PAIRED_SCALE").map_or(1.0, |scale| {
        scale.parse().expect("PAIRED_SCALE must be a scale factor")
    });
    let ctx = context(scale);
    let run = |ctx: &SessionContext, sql: &str| {
        let start = Instant::now();
        black_box(rt.block_on(collect(ctx, sql)).unwrap());
        start.elapsed().as_secs_f64()
    };
    println!(
        "| benchmark | rounds | subquery (median) | hand-written (median) \
         | subquery / hand-written, geometric mean (95% CI) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let only = std::env::var("PAIRED_ONLY").ok();
    let only: Option<Vec<&str>> = only.as_deref().map(|only| only.split(',').collect());
    let mut variants = vec![];
    for pair in PAIRS
        .iter()
        .filter(|pair| only.as_ref().is_none_or(|only| only.contains(&pair.name)))
    {
        variants.push((
            pair.name.to_string(),
            ctx.clone(),
            pair.subquery,
            pair.rewrite,
        ));
        for rules in pair.without {
            let name = format!("{} {}", pair.name, without_name(rules));
            variants.push((
                name,
                without_rules(&ctx, rules),
                pair.subquery,
                pair.rewrite,
            ));
        }
    }
    for (name, subquery_ctx, subquery, rewrite) in variants {
        let subquery_ctx = &subquery_ctx;
        for _ in 0..3 {
            run(subquery_ctx, subquery);
            run(&ctx, rewrite);
        }
        let (mut subquery_times, mut rewrite_times) = (vec![], vec![]);
        for round in 0..rounds {
            if round % 2 == 0 {
                subquery_times.push(run(subquery_ctx, subquery));
                rewrite_times.push(run(&ctx, rewrite));
            } else {
                rewrite_times.push(run(&ctx, rewrite));
                subquery_times.push(run(subquery_ctx, subquery));
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
