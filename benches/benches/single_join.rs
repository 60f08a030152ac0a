//! Correlated scalar subqueries as single joins, against the form a lookup
//! needed before the single join: the same subquery wrapped in an aggregate
//! (`max`) whose only purpose is to prove it returns one row. Both variants of
//! each benchmark run in the same run, so their ratio is the single join's
//! gain or cost.
//!
//! The data is TPC-H, generated in process by `tpchgen-arrow` (scale factor
//! 1 under `cargo bench`, 0.01 in test mode). Each shape runs on four
//! sessions:
//!
//! - `nokey` and `key`: the generated batches as in-memory tables, without
//!   and with a declared primary key on the looked-up table (with one, the
//!   planner proves the lookup unique and plans a plain left join);
//! - `parquet_external` and `parquet_in_memory`: the same tables written to
//!   parquet files and loaded the way `datafusion-cli` users load them,
//!   `CREATE EXTERNAL TABLE ... STORED AS PARQUET` and `CREATE TABLE ... AS
//!   SELECT * FROM 'file.parquet'` (in memory, strings as `Utf8View`). The
//!   files are kept in the system's temporary directory, where
//!   `benches/duckdb_single_join.py` runs the same queries in DuckDB.
//!
//! The three projections also run as a plain `LEFT JOIN` (`left_join`),
//! which checks no duplicate (and has the same rows here, the keys being
//! unique): the least work any plan of the lookup does.
//!
//! Under `cargo bench` the row counts and each variant's peak memory are
//! printed first: the most memory DataFusion's operators reserved at once,
//! and the growth of the process's resident high-water mark.
//!
//! ```text
//! cargo xtask bench single_join
//! ```

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{Constraint, Constraints};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::execution::memory_pool::{
    MemoryPool, MemoryReservation, UnboundedMemoryPool,
};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
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
    /// The same rows as a plain left join, for the projections: a join that
    /// checks no duplicate, the least any plan of the lookup does.
    left_join: Option<&'static str>,
}

const SHAPES: [Shape; 6] = [
    Shape {
        name: "projection_orders_customer",
        sql: "SELECT o_orderkey, {lookup} FROM orders",
        subquery: "SELECT {value}(c_name) FROM customer WHERE c_custkey = o_custkey",
        left_join: Some(
            "SELECT o_orderkey, c_name FROM orders \
             LEFT JOIN customer ON c_custkey = o_custkey",
        ),
    },
    Shape {
        name: "projection_lineitem_part",
        sql: "SELECT l_orderkey, {lookup} FROM lineitem",
        subquery: "SELECT {value}(p_name) FROM part WHERE p_partkey = l_partkey",
        left_join: Some(
            "SELECT l_orderkey, p_name FROM lineitem \
             LEFT JOIN part ON p_partkey = l_partkey",
        ),
    },
    Shape {
        name: "projection_small_outer",
        sql: "SELECT l_orderkey, {lookup} FROM lineitem_sample",
        subquery: "SELECT {value}(o_totalprice) FROM orders WHERE o_orderkey = l_orderkey",
        left_join: Some(
            "SELECT l_orderkey, o_totalprice FROM lineitem_sample \
             LEFT JOIN orders ON o_orderkey = l_orderkey",
        ),
    },
    Shape {
        name: "filter_orders_customer",
        sql: "SELECT o_orderkey FROM orders WHERE o_totalprice > {lookup}",
        subquery: "SELECT {value}(c_acctbal) FROM customer WHERE c_custkey = o_custkey",
        left_join: None,
    },
    Shape {
        name: "filter_looked_up_value",
        sql: "SELECT o_orderkey FROM orders WHERE {lookup} = 'Customer#000000043'",
        subquery: "SELECT {value}(c_name) FROM customer WHERE c_custkey = o_custkey",
        left_join: None,
    },
    Shape {
        name: "filter_non_pushable",
        sql: "SELECT o_orderkey FROM orders \
              WHERE {lookup} > 0 OR o_totalprice > 300000",
        subquery: "SELECT {value}(c_acctbal) FROM customer WHERE c_custkey = o_custkey",
        left_join: None,
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

/// An unbounded memory pool that records the most memory the operators held
/// at once (hash tables, aggregation state, buffered batches).
#[derive(Debug, Default)]
struct PeakMemoryPool {
    pool: UnboundedMemoryPool,
    peak: AtomicUsize,
}

impl PeakMemoryPool {
    fn reset(&self) {
        self.peak.store(self.pool.reserved(), Ordering::Relaxed);
    }

    fn peak_mb(&self) -> f64 {
        self.peak.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0)
    }

    fn record(&self) {
        self.peak.fetch_max(self.pool.reserved(), Ordering::Relaxed);
    }
}

impl std::fmt::Display for PeakMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PeakMemoryPool(peak: {} bytes)",
            self.peak.load(Ordering::Relaxed)
        )
    }
}

impl MemoryPool for PeakMemoryPool {
    fn name(&self) -> &str {
        "peak"
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.pool.grow(reservation, additional);
        self.record();
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.pool.shrink(reservation, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        self.pool.try_grow(reservation, additional)?;
        self.record();
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.pool.reserved()
    }
}

/// The tables the shapes read, as the parquet files are named.
const TABLES: [&str; 5] = ["customer", "orders", "part", "lineitem", "lineitem_sample"];

/// Writes the generated tables to `<table>.parquet` files in a directory of
/// the system's temporary directory, once per scale factor, and returns it.
fn parquet_files(rt: &Runtime, tpch: &Tpch, scale: f64) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fork-benches-tpch-sf{scale}"));
    if dir.exists() {
        return dir;
    }
    // Written aside and renamed into place, so that a run never reads the
    // files of another run that is still writing them.
    let staging = std::path::PathBuf::from(format!(
        "{}.partial-{}",
        dir.display(),
        std::process::id()
    ));
    std::fs::create_dir_all(&staging).unwrap();
    let ctx = context(tpch, false, Arc::new(PeakMemoryPool::default()));
    for table in TABLES {
        let path = staging.join(format!("{table}.parquet"));
        let copy = format!("COPY (SELECT * FROM {table}) TO '{}'", path.display());
        rt.block_on(run(&ctx, &copy)).unwrap();
    }
    if std::fs::rename(&staging, &dir).is_err() {
        // Another run finished first.
        assert!(dir.exists(), "cannot move {} into place", staging.display());
        std::fs::remove_dir_all(&staging).unwrap();
    }
    dir
}

/// A session over the parquet files in `dir`: external tables, or in-memory
/// tables loaded from them.
fn parquet_context(
    rt: &Runtime,
    dir: &std::path::Path,
    in_memory: bool,
) -> SessionContext {
    let ctx = SessionContext::new().enable_url_table();
    for table in TABLES {
        let path = dir.join(format!("{table}.parquet"));
        let create = if in_memory {
            format!("CREATE TABLE {table} AS SELECT * FROM '{}'", path.display())
        } else {
            format!(
                "CREATE EXTERNAL TABLE {table} STORED AS PARQUET LOCATION '{}'",
                path.display()
            )
        };
        rt.block_on(run(&ctx, &create)).unwrap();
    }
    ctx
}

/// `ctx` with the same tables, without the optimizer rule named `rule`.
fn without_rule(ctx: &SessionContext, rule: &str) -> SessionContext {
    let state = ctx.state();
    let rules = state
        .optimizers()
        .iter()
        .filter(|r| r.name() != rule)
        .cloned()
        .collect();
    let state = SessionStateBuilder::new_from_existing(state)
        .with_optimizer_rules(rules)
        .build();
    SessionContext::new_with_state(state)
}

fn context(tpch: &Tpch, keyed: bool, pool: Arc<PeakMemoryPool>) -> SessionContext {
    let config = SessionConfig::new();
    let partitions = config.target_partitions();
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(pool)
        .build_arc()
        .unwrap();
    let ctx = SessionContext::new_with_config_rt(config, runtime);
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

/// Runs `sql` once and returns the operators' peak tracked memory and the
/// growth of the process's resident high-water mark (reset first through
/// `/proc/self/clear_refs`), both in MB.
fn peak_memory_mb(
    rt: &Runtime,
    ctx: &SessionContext,
    pool: &PeakMemoryPool,
    sql: &str,
) -> (f64, f64) {
    let reset_rss = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = kilobytes("VmRSS:");
    pool.reset();
    rt.block_on(run(ctx, sql)).unwrap();
    let rss = if reset_rss {
        kilobytes("VmHWM:").saturating_sub(before) as f64 / 1024.0
    } else {
        f64::NAN
    };
    (pool.peak_mb(), rss)
}

fn benchmarks(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|arg| arg == "--bench");
    let scale = if bench_mode { 1.0 } else { 0.01 };
    let rt = Runtime::new().unwrap();
    let tpch = generate(scale);
    let pool = Arc::new(PeakMemoryPool::default());
    let files = parquet_files(&rt, &tpch, scale);
    // (name, session, whether the looked-up table has a declared key)
    let contexts = [
        ("nokey", context(&tpch, false, Arc::clone(&pool)), false),
        ("key", context(&tpch, true, Arc::clone(&pool)), true),
        (
            "parquet_external",
            parquet_context(&rt, &files, false),
            false,
        ),
        (
            "parquet_in_memory",
            parquet_context(&rt, &files, true),
            false,
        ),
    ];
    if bench_mode {
        let rows = |batches: &[RecordBatch]| -> usize {
            batches.iter().map(|b| b.num_rows()).sum()
        };
        println!(
            "rows: customer {}, orders {}, part {}, lineitem {}; parquet files in {}",
            rows(&tpch.customer),
            rows(&tpch.orders),
            rows(&tpch.part),
            rows(&tpch.lineitem),
            files.display()
        );
    }

    // Both variants plan as intended and agree
    for (key, ctx, keyed) in &contexts {
        for shape in &SHAPES {
            let mut rows = vec![];
            for (variant, aggregate) in VARIANTS {
                let sql = sql(shape, aggregate);
                let single = variant == "single_join" && !keyed;
                rt.block_on(checked_plan(ctx, &sql, single));
                rows.push(rt.block_on(run(ctx, &sql)).unwrap());
            }
            if let Some(left_join) = shape.left_join {
                rt.block_on(checked_plan(ctx, left_join, false));
                rows.push(rt.block_on(run(ctx, left_join)).unwrap());
            }
            assert!(rows.iter().all(|&r| r == rows[0]), "{}/{key}", shape.name);
        }
    }

    // The narrowing of the lookup side under a filter on the looked-up
    // value, on and off, on tables loaded from parquet.
    let narrowing_shape = &SHAPES[4];
    assert_eq!(narrowing_shape.name, "filter_looked_up_value");
    let narrowing_sql = sql(narrowing_shape, "");
    let in_memory = &contexts[3].1;
    let narrowing = [
        ("on", in_memory.clone()),
        ("off", without_rule(in_memory, "narrow_single_join")),
    ];
    let mut rows = vec![];
    for (variant, ctx) in &narrowing {
        let plan = rt.block_on(checked_plan(ctx, &narrowing_sql, true));
        assert_eq!(plan.contains("__duplicated"), *variant == "on", "{plan}");
        rows.push(rt.block_on(run(ctx, &narrowing_sql)).unwrap());
    }
    assert_eq!(rows[0], rows[1]);

    if bench_mode {
        // The operators of the parquet sessions report to their own pools.
        for (key, ctx, _) in &contexts[..2] {
            for shape in &SHAPES {
                for (variant, aggregate) in VARIANTS {
                    let sql = sql(shape, aggregate);
                    let (tracked, rss) = peak_memory_mb(&rt, ctx, &pool, &sql);
                    println!(
                        "peak memory {}/{key} {variant}: tracked {tracked:.1} MB, \
                         resident growth {rss:.0} MB",
                        shape.name
                    );
                }
            }
        }
    }

    for (key, ctx, _) in &contexts {
        for shape in &SHAPES {
            let mut group = c.benchmark_group(format!("{}/{key}", shape.name));
            group.sample_size(10);
            for (variant, aggregate) in VARIANTS {
                let sql = sql(shape, aggregate);
                group.bench_function(variant, |b| {
                    b.iter(|| black_box(rt.block_on(run(ctx, &sql)).unwrap()))
                });
            }
            if let Some(left_join) = shape.left_join {
                group.bench_function("left_join", |b| {
                    b.iter(|| black_box(rt.block_on(run(ctx, left_join)).unwrap()))
                });
            }
            group.finish();
        }
    }
    let mut group = c.benchmark_group("narrow_single_join/parquet_in_memory");
    group.sample_size(10);
    for (variant, ctx) in &narrowing {
        group.bench_function(*variant, |b| {
            b.iter(|| black_box(rt.block_on(run(ctx, &narrowing_sql)).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
