//! The cost of `datafusion.sql_parser.pretty_column_names`: each benchmark
//! runs twice in the same run, with the option `off` and `on`, so their ratio
//! is the option's cost.
//!
//! The planning workloads are upstream's (`datafusion/core/benches/
//! sql_planner.rs`), which the proposal names. The query benchmark runs an
//! aggregate with `ORDER BY` and `LIMIT`, after checking that its plan still
//! uses a TopK sort with the option on.
//!
//! ```text
//! cargo xtask bench pretty_column_names
//! ```

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::{Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::{ExecutionPlan, displayable};
use datafusion::prelude::{SessionConfig, SessionContext};
use fork_benches::tpc;
use tokio::runtime::Runtime;

const OPTION: &str = "datafusion.sql_parser.pretty_column_names";
const VARIANTS: [(&str, bool); 2] = [("off", false), ("on", true)];

fn config(pretty: bool) -> SessionConfig {
    SessionConfig::new().set_bool(OPTION, pretty)
}

fn wide_table(prefix: &str, columns: usize) -> Arc<MemTable> {
    let schema = Schema::new(
        (0..columns)
            .map(|i| Field::new(format!("{prefix}{i}"), DataType::Int32, true))
            .collect::<Vec<_>>(),
    );
    Arc::new(MemTable::try_new(Arc::new(schema), vec![vec![]]).unwrap())
}

/// Upstream's planning context: empty tables of 200 and 1000 columns.
fn planning_context(pretty: bool) -> SessionContext {
    let ctx = SessionContext::new_with_config(config(pretty));
    ctx.register_table("t1", wide_table("a", 200)).unwrap();
    ctx.register_table("t1000", wide_table("d", 1000)).unwrap();
    ctx
}

fn logical_plan(ctx: &SessionContext, rt: &Runtime, sql: &str) {
    black_box(rt.block_on(ctx.sql(sql)).unwrap());
}

fn create_physical_plan(
    ctx: &SessionContext,
    rt: &Runtime,
    sql: &str,
) -> Arc<dyn ExecutionPlan> {
    rt.block_on(async {
        ctx.sql(sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap()
    })
}

fn physical_plan(ctx: &SessionContext, rt: &Runtime, sql: &str) {
    black_box(create_physical_plan(ctx, rt, sql));
}

type Planner = fn(&SessionContext, &Runtime, &str);

fn planning(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let aggregates_200 = format!(
        "SELECT {} FROM t1",
        (0..200)
            .map(|i| format!("MAX(a{i})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let wide_aggregate_100 = format!(
        "SELECT {} FROM t1",
        (0..50)
            .map(|i| format!("SUM(a{i}), AVG(a{i})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let single: [(&str, Planner, &str); 4] = [
        (
            "logical_select_all_from_1000",
            logical_plan,
            "SELECT * FROM t1000",
        ),
        (
            "physical_select_all_from_1000",
            physical_plan,
            "SELECT * FROM t1000",
        ),
        (
            "physical_select_aggregates_from_200",
            physical_plan,
            &aggregates_200,
        ),
        (
            "logical_wide_aggregate_100_exprs",
            logical_plan,
            &wide_aggregate_100,
        ),
    ];
    for (name, plan, sql) in single {
        let mut group = c.benchmark_group(name);
        for (variant, pretty) in VARIANTS {
            let ctx = planning_context(pretty);
            group.bench_function(variant, |b| b.iter(|| plan(&ctx, &rt, sql)));
        }
        if name == "physical_select_aggregates_from_200" {
            // The labels written as aliases, with the option off: what the
            // rename itself costs the planner, whoever asks for it.
            let aliased = format!(
                "SELECT {} FROM t1",
                (0..200)
                    .map(|i| format!("MAX(a{i}) AS \"max(a{i})\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let ctx = planning_context(false);
            group.bench_function("off_explicit_aliases", |b| {
                b.iter(|| plan(&ctx, &rt, &aliased))
            });
        }
        group.finish();
    }

    let suites = [
        (
            "physical_plan_tpch_all",
            tpc::tpch_schemas(),
            tpc::tpch_queries(),
        ),
        (
            "physical_plan_tpcds_all",
            tpc::tpcds_schemas(),
            tpc::tpcds_queries(),
        ),
    ];
    for (name, tables, queries) in suites {
        let mut group = c.benchmark_group(name);
        for (variant, pretty) in VARIANTS {
            let ctx = tpc::context_with(config(pretty), tables.clone()).unwrap();
            group.bench_function(variant, |b| {
                b.iter(|| {
                    for (_, sql) in &queries {
                        physical_plan(&ctx, &rt, sql)
                    }
                })
            });
        }
        group.finish();
    }
}

/// `SELECT b, sum(a) ... ORDER BY sum(a) DESC LIMIT 10` over 4M rows.
fn topk_query(c: &mut Criterion) {
    const ROWS: i64 = 4_000_000;
    const BATCH: i64 = 8192;
    let rt = Runtime::new().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Int64, false),
    ]));
    let batches: Vec<RecordBatch> = (0..ROWS)
        .step_by(BATCH as usize)
        .map(|start| {
            let a =
                Int64Array::from_iter_values((start..start + BATCH).map(|i| i % 1000));
            let b = Int64Array::from_iter_values(
                (start..start + BATCH).map(|i| (i * 7919) % 50_000),
            );
            RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(a), Arc::new(b)])
                .unwrap()
        })
        .collect();
    let partitions: Vec<Vec<RecordBatch>> = batches
        .chunks(batches.len().div_ceil(4))
        .map(<[_]>::to_vec)
        .collect();
    let sql = "SELECT b, sum(a) FROM t GROUP BY b ORDER BY sum(a) DESC LIMIT 10";

    let mut group = c.benchmark_group("query_aggregate_order_by_limit");
    group.sample_size(20);
    for (variant, pretty) in VARIANTS {
        let ctx = SessionContext::new_with_config(config(pretty));
        let table = MemTable::try_new(Arc::clone(&schema), partitions.clone()).unwrap();
        ctx.register_table("t", Arc::new(table)).unwrap();

        // The labeling projection must not cost the query its TopK.
        let plan = create_physical_plan(&ctx, &rt, sql);
        let text = displayable(plan.as_ref()).indent(true).to_string();
        assert!(
            text.contains("TopK(fetch=10)"),
            "{variant}: no TopK in\n{text}"
        );
        assert_eq!(
            plan.schema().field(1).name(),
            if pretty { "sum(a)" } else { "sum(t.a)" }
        );

        group.bench_function(variant, |b| {
            b.iter(|| {
                rt.block_on(async {
                    black_box(ctx.sql(sql).await.unwrap().collect().await.unwrap())
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, planning, topk_query);
criterion_main!(benches);
