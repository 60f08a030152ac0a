//! TPC-H and TPC-DS tables and queries, for planning benchmarks and plan
//! checks.
//!
//! The query texts are upstream's (`benchmarks/queries/q*.sql`,
//! `datafusion/core/tests/tpc-ds/*.sql`). The TPC-H schema is the standard
//! one. Upstream's TPC-DS schema lives in a crate that is not published, so
//! this one is derived from the 99 query texts: TPC-DS prefixes every column
//! with its table's abbreviation (`ss_` for `store_sales`), which names the
//! table, and types follow from the column's role (`_sk` keys and counts are
//! integers, money is `DECIMAL(7, 2)`, `d_date` is a date, the rest text).
//! Every column the queries use exists with a type that plans; unused
//! columns are left out, which planning does not notice.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::{SessionConfig, SessionContext};

/// The repository root, where the test data is linked.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo xtask sync` with the test data at ../shared/test-data",
            path.display()
        )
    })
}

/// The 22 TPC-H queries as `(name, sql)`. q15 is three statements (a view,
/// the query, a drop); the query is the second.
pub fn tpch_queries() -> Vec<(String, String)> {
    (1..=22)
        .map(|q| {
            let text = read(root().join(format!("benchmarks/queries/q{q}.sql")));
            let statements: Vec<&str> =
                text.split(';').filter(|s| !s.trim().is_empty()).collect();
            let sql = if q == 15 {
                // Inline the view, with its column list, as a CTE so that the
                // query is one statement.
                let (head, body) = statements[0]
                    .trim()
                    .strip_prefix("create view ")
                    .and_then(|view| view.split_once(" as"))
                    .expect("q15 creates a view");
                format!("with {head} as ({}) {}", body.trim(), statements[1].trim())
            } else {
                statements[0].to_string()
            };
            (format!("q{q}"), sql)
        })
        .collect()
}

/// The 99 TPC-DS queries as `(name, sql)`, one entry per statement (a few
/// files hold two).
pub fn tpcds_queries() -> Vec<(String, String)> {
    (1..=99)
        .flat_map(|q| {
            let text = read(root().join(format!("datafusion/core/tests/tpc-ds/{q}.sql")));
            let statements: Vec<String> = text
                .split(';')
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
                .collect();
            let n = statements.len();
            statements.into_iter().enumerate().map(move |(i, sql)| {
                let name = if n == 1 {
                    format!("q{q}")
                } else {
                    format!("q{q}_{}", i + 1)
                };
                (name, sql)
            })
        })
        .collect()
}

fn decimal() -> DataType {
    DataType::Decimal128(15, 2)
}

/// TPC-H tables, as the specification defines them.
pub fn tpch_schemas() -> Vec<(&'static str, Schema)> {
    use DataType::{Date32, Int64, Utf8};
    let table = |cols: &[(&str, DataType)]| {
        Schema::new(
            cols.iter()
                .map(|(n, t)| Field::new(*n, t.clone(), false))
                .collect::<Vec<_>>(),
        )
    };
    vec![
        (
            "part",
            table(&[
                ("p_partkey", Int64),
                ("p_name", Utf8),
                ("p_mfgr", Utf8),
                ("p_brand", Utf8),
                ("p_type", Utf8),
                ("p_size", Int64),
                ("p_container", Utf8),
                ("p_retailprice", decimal()),
                ("p_comment", Utf8),
            ]),
        ),
        (
            "supplier",
            table(&[
                ("s_suppkey", Int64),
                ("s_name", Utf8),
                ("s_address", Utf8),
                ("s_nationkey", Int64),
                ("s_phone", Utf8),
                ("s_acctbal", decimal()),
                ("s_comment", Utf8),
            ]),
        ),
        (
            "partsupp",
            table(&[
                ("ps_partkey", Int64),
                ("ps_suppkey", Int64),
                ("ps_availqty", Int64),
                ("ps_supplycost", decimal()),
                ("ps_comment", Utf8),
            ]),
        ),
        (
            "customer",
            table(&[
                ("c_custkey", Int64),
                ("c_name", Utf8),
                ("c_address", Utf8),
                ("c_nationkey", Int64),
                ("c_phone", Utf8),
                ("c_acctbal", decimal()),
                ("c_mktsegment", Utf8),
                ("c_comment", Utf8),
            ]),
        ),
        (
            "orders",
            table(&[
                ("o_orderkey", Int64),
                ("o_custkey", Int64),
                ("o_orderstatus", Utf8),
                ("o_totalprice", decimal()),
                ("o_orderdate", Date32),
                ("o_orderpriority", Utf8),
                ("o_clerk", Utf8),
                ("o_shippriority", Int64),
                ("o_comment", Utf8),
            ]),
        ),
        (
            "lineitem",
            table(&[
                ("l_orderkey", Int64),
                ("l_partkey", Int64),
                ("l_suppkey", Int64),
                ("l_linenumber", Int64),
                ("l_quantity", decimal()),
                ("l_extendedprice", decimal()),
                ("l_discount", decimal()),
                ("l_tax", decimal()),
                ("l_returnflag", Utf8),
                ("l_linestatus", Utf8),
                ("l_shipdate", Date32),
                ("l_commitdate", Date32),
                ("l_receiptdate", Date32),
                ("l_shipinstruct", Utf8),
                ("l_shipmode", Utf8),
                ("l_comment", Utf8),
            ]),
        ),
        (
            "nation",
            table(&[
                ("n_nationkey", Int64),
                ("n_name", Utf8),
                ("n_regionkey", Int64),
                ("n_comment", Utf8),
            ]),
        ),
        (
            "region",
            table(&[
                ("r_regionkey", Int64),
                ("r_name", Utf8),
                ("r_comment", Utf8),
            ]),
        ),
    ]
}

/// TPC-DS tables by column prefix, longest prefixes first.
const TPCDS_TABLES: &[(&str, &str)] = &[
    ("web_", "web_site"),
    ("ss_", "store_sales"),
    ("sr_", "store_returns"),
    ("cs_", "catalog_sales"),
    ("cr_", "catalog_returns"),
    ("ws_", "web_sales"),
    ("wr_", "web_returns"),
    ("inv_", "inventory"),
    ("cc_", "call_center"),
    ("cp_", "catalog_page"),
    ("wp_", "web_page"),
    ("ca_", "customer_address"),
    ("cd_", "customer_demographics"),
    ("hd_", "household_demographics"),
    ("ib_", "income_band"),
    ("sm_", "ship_mode"),
    ("s_", "store"),
    ("w_", "warehouse"),
    ("c_", "customer"),
    ("d_", "date_dim"),
    ("i_", "item"),
    ("p_", "promotion"),
    ("r_", "reason"),
    ("t_", "time_dim"),
];

/// Integer columns that are neither keys nor counts by their suffix.
const TPCDS_INTEGERS: &[&str] = &[
    "d_year",
    "d_moy",
    "d_dom",
    "d_qoy",
    "d_month_seq",
    "d_week_seq",
    "d_quarter_seq",
    "d_fy_year",
    "d_dow",
    "d_fy_week_seq",
    "d_fy_quarter_seq",
    "i_manufact_id",
    "i_brand_id",
    "i_class_id",
    "i_category_id",
    "i_manager_id",
    "c_birth_year",
    "c_birth_month",
    "c_birth_day",
    "t_hour",
    "t_minute",
    "t_time",
    "s_number_employees",
    "s_floor_space",
    "s_market_id",
    "s_company_id",
    "s_division_id",
    "ib_lower_bound",
    "ib_upper_bound",
    "cc_employees",
    "w_warehouse_sq_ft",
    "cd_purchase_estimate",
];

fn tpcds_type(column: &str) -> DataType {
    const MONEY: &[&str] = &[
        "price",
        "cost",
        "amt",
        "amount",
        "profit",
        "tax",
        "paid",
        "charge",
        "credit",
        "fee",
        "loss",
        "cash",
        "coupon",
        "discount",
        "gmt_offset",
        "tax_percentage",
    ];
    if column == "d_date" {
        DataType::Date32
    } else if column.ends_with("_sk")
        || column.contains("_quantity")
        || column.ends_with("_number")
        || column.ends_with("_count")
        || TPCDS_INTEGERS.contains(&column)
    {
        DataType::Int32
    } else if MONEY.iter().any(|m| column.contains(m)) {
        DataType::Decimal128(7, 2)
    } else {
        DataType::Utf8
    }
}

/// TPC-DS tables with every column the 99 queries use.
pub fn tpcds_schemas() -> Vec<(&'static str, Schema)> {
    let table_names: BTreeSet<&str> = TPCDS_TABLES.iter().map(|(_, t)| *t).collect();
    let mut columns: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for (_, sql) in tpcds_queries() {
        let lower = sql.to_ascii_lowercase();
        for word in lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.is_empty() || table_names.contains(word) {
                continue;
            }
            if let Some((_, table)) = TPCDS_TABLES
                .iter()
                .find(|(prefix, _)| word.starts_with(prefix))
            {
                columns.entry(table).or_default().insert(word.to_string());
            }
        }
    }
    columns
        .into_iter()
        .map(|(table, cols)| {
            let fields: Vec<Field> = cols
                .iter()
                .map(|c| Field::new(c, tpcds_type(c), true))
                .collect();
            (table, Schema::new(fields))
        })
        .collect()
}

/// A context with `tables` registered as empty in-memory tables.
pub fn context_with(
    config: SessionConfig,
    tables: Vec<(&'static str, Schema)>,
) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(config);
    for (name, schema) in tables {
        let table = MemTable::try_new(Arc::new(schema), vec![vec![]])?;
        ctx.register_table(name, Arc::new(table))?;
    }
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn plan_all(
        tables: Vec<(&'static str, Schema)>,
        queries: Vec<(String, String)>,
    ) {
        let ctx = context_with(SessionConfig::new(), tables).unwrap();
        let mut failures = Vec::new();
        for (name, sql) in &queries {
            let planned = async { ctx.sql(sql).await?.create_physical_plan().await };
            if let Err(e) = planned.await {
                failures.push(format!("{name}: {e}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} queries fail to plan:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    #[tokio::test]
    async fn all_tpch_queries_plan() {
        let queries = tpch_queries();
        assert_eq!(queries.len(), 22);
        plan_all(tpch_schemas(), queries).await;
    }

    #[tokio::test]
    async fn all_tpcds_queries_plan() {
        let queries = tpcds_queries();
        assert!(queries.len() >= 99);
        plan_all(tpcds_schemas(), queries).await;
    }
}
