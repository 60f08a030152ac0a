//! Correlated scalar subqueries as single joins, against the form a lookup
//! needed before the single join: the same subquery wrapped in an aggregate
//! (`max`) whose only purpose is to prove it returns one row. Both variants of
//! each benchmark run in the same run, so their ratio is the single join's
//! gain or cost.
//!
//! The data is TPC-H, generated in process by `tpchgen-arrow` (scale factor
//! 1 under `cargo bench`, 0.01 in test mode). Each shape runs with and
//! without a declared primary key on the looked-up table: with one, the
//! planner proves the lookup unique and plans a plain left join.
//!
//! Under `cargo bench` the peak memory of each variant is printed first.
//!
//! ```text
//! cargo xtask bench single_join
//! ```

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{Constraint, Constraints};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use tokio::runtime::Runtime;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, OrderGenerator, PartGenerator,
};
use tpchgen_arrow::{CustomerArrow, LineItemArrow, OrderArrow, PartArrow};

/// A lookup shape: `{lookup}` in `sql` is replaced by the subquery, whose
/// looked-up expression is `{value}`.
struct Shape {
    name: &'static str,
    sql: &'static str,
    subquery: &'static str,
}

const SHAPES: [Shape; 5] = [
    Shape {
        name: "projection_orders_customer",
        sql: "SELECT o_orderkey, {lookup} FROM orders",
        subquery: "SELECT {value}(c_name) FROM customer WHERE c_custkey = o_custkey",
    },
    Shape {
        name: "projection_lineitem_part",
        sql: "SELECT l_orderkey, {lookup} FROM lineitem",
        subquery: "SELECT {value}(p_name) FROM part WHERE p_partkey = l_partkey",
    },
    Shape {
        name: "projection_small_outer",
        sql: "SELECT l_orderkey, {lookup} FROM lineitem_sample",
        subquery: "SELECT {value}(o_totalprice) FROM orders WHERE o_orderkey = l_orderkey",
    },
    Shape {
        name: "filter_orders_customer",
        sql: "SELECT o_orderkey FROM orders WHERE o_totalprice > {lookup}",
        subquery: "SELECT {value}(c_acctbal) FROM customer WHERE c_custkey = o_custkey",
    },
    Shape {
        name: "filter_non_pushable",
        sql: "SELECT o_orderkey FROM orders \
              WHERE {lookup} > 0 OR o_totalprice > 300000",
        subquery: "SELECT {value}(c_acctbal) FROM customer WHERE c_custkey = o_custkey",
    },
];

/// `(variant, aggregate wrapping the looked-up value)`
const VARIANTS: [(&str, &str); 2] = [("single_join", ""), ("forced_aggregate", "max")];

/// Rows of the small outer side, sampled from `lineitem`.
const SAMPLE_ROWS: usize = 100_000;

fn sql(shape: &Shape, aggregate: &str) -> String {
    let subquery = shape.subquery.replace("{value}", aggregate);
    shape.sql.replace("{lookup}", &format!("({subquery})"))
}

/// The generated tables, projected to the columns the shapes use.
struct Tpch {
    customer: Vec<RecordBatch>,
    orders: Vec<RecordBatch>,
    part: Vec<RecordBatch>,
    lineitem: Vec<RecordBatch>,
}

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

fn generate(scale: f64) -> Tpch {
    Tpch {
        customer: project(
            CustomerArrow::new(CustomerGenerator::new(scale, 1, 1)),
            &["c_custkey", "c_name", "c_acctbal"],
        ),
        orders: project(
            OrderArrow::new(OrderGenerator::new(scale, 1, 1)),
            &["o_orderkey", "o_custkey", "o_totalprice"],
        ),
        part: project(
            PartArrow::new(PartGenerator::new(scale, 1, 1)),
            &["p_partkey", "p_name"],
        ),
        lineitem: project(
            LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)),
            &["l_orderkey", "l_partkey"],
        ),
    }
}

/// `batches` spread over `partitions` partitions, with the first column a
/// declared primary key when `keyed`.
fn table(batches: &[RecordBatch], partitions: usize, keyed: bool) -> Arc<MemTable> {
    let schema = batches[0].schema();
    let mut spread = vec![vec![]; partitions];
    for (i, batch) in batches.iter().enumerate() {
        spread[i % partitions].push(batch.clone());
    }
    let mut table = MemTable::try_new(schema, spread).unwrap();
    if keyed {
        table = table.with_constraints(Constraints::new_unverified(vec![
            Constraint::PrimaryKey(vec![0]),
        ]));
    }
    Arc::new(table)
}

fn sample(batches: &[RecordBatch], rows: usize) -> Vec<RecordBatch> {
    let mut sampled = vec![];
    let mut left = rows;
    for batch in batches {
        if left == 0 {
            break;
        }
        let take = batch.num_rows().min(left);
        sampled.push(batch.slice(0, take));
        left -= take;
    }
    sampled
}

fn context(tpch: &Tpch, keyed: bool) -> SessionContext {
    let config = SessionConfig::new();
    let partitions = config.target_partitions();
    let ctx = SessionContext::new_with_config(config);
    let register = |name: &str, batches: &[RecordBatch], keyed: bool| {
        ctx.register_table(name, table(batches, partitions, keyed))
            .unwrap();
    };
    register("customer", &tpch.customer, keyed);
    register("orders", &tpch.orders, keyed);
    register("part", &tpch.part, keyed);
    register("lineitem", &tpch.lineitem, false);
    register(
        "lineitem_sample",
        &sample(&tpch.lineitem, SAMPLE_ROWS),
        false,
    );
    ctx
}

/// Runs `sql`, returning its row count.
async fn run(ctx: &SessionContext, sql: &str) -> Result<usize> {
    let mut stream = ctx.sql(sql).await?.execute_stream().await?;
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch?.num_rows();
    }
    Ok(rows)
}

/// The physical plan, checked to use the join the variant is about.
async fn checked_plan(ctx: &SessionContext, sql: &str, single: bool) -> String {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let plan = displayable(plan.as_ref()).indent(false).to_string();
    assert_eq!(
        plan.contains("join_type=LeftSingle") || plan.contains("join_type=RightSingle"),
        single,
        "{sql}\n{plan}"
    );
    plan
}

fn kilobytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Peak resident memory a query adds, in MB: the kernel's high-water mark is
/// reset before the query (`/proc/self/clear_refs`).
fn peak_memory_mb(rt: &Runtime, ctx: &SessionContext, sql: &str) -> Option<f64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    let before = kilobytes("VmRSS:");
    rt.block_on(run(ctx, sql)).unwrap();
    let peak = kilobytes("VmHWM:");
    Some(peak.saturating_sub(before) as f64 / 1024.0)
}

fn benchmarks(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|arg| arg == "--bench");
    let scale = if bench_mode { 1.0 } else { 0.01 };
    let rt = Runtime::new().unwrap();
    let tpch = generate(scale);
    let contexts = [
        ("nokey", context(&tpch, false)),
        ("key", context(&tpch, true)),
    ];

    // Both variants plan as intended and agree
    for (key, ctx) in &contexts {
        for shape in &SHAPES {
            let mut rows = vec![];
            for (variant, aggregate) in VARIANTS {
                let sql = sql(shape, aggregate);
                let single = variant == "single_join" && *key == "nokey";
                rt.block_on(checked_plan(ctx, &sql, single));
                rows.push(rt.block_on(run(ctx, &sql)).unwrap());
            }
            assert_eq!(rows[0], rows[1], "{}/{key}", shape.name);
        }
    }

    if bench_mode {
        for (key, ctx) in &contexts {
            for shape in &SHAPES {
                for (variant, aggregate) in VARIANTS {
                    if let Some(mb) = peak_memory_mb(&rt, ctx, &sql(shape, aggregate)) {
                        println!(
                            "peak memory {}/{key} {variant}: {mb:.0} MB",
                            shape.name
                        );
                    }
                }
            }
        }
    }

    for (key, ctx) in &contexts {
        for shape in &SHAPES {
            let mut group = c.benchmark_group(format!("{}/{key}", shape.name));
            group.sample_size(10);
            for (variant, aggregate) in VARIANTS {
                let sql = sql(shape, aggregate);
                group.bench_function(variant, |b| {
                    b.iter(|| black_box(rt.block_on(run(ctx, &sql)).unwrap()))
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
