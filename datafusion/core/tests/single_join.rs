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

//! Randomized test of correlated scalar subqueries run as single joins.
//!
//! Many small random tables (NULL keys, duplicate keys, empty sides, skewed
//! keys) are queried through SQL with random `target_partitions` and
//! `batch_size`, with equality and non-equality correlations, in projections
//! and filters. Each result is compared with a naive evaluation written here;
//! every case where an outer row meets a second matching row must fail with
//! `Scalar subquery returned more than one row`. Seeds are fixed.

use std::sync::Arc;

use datafusion::arrow::array::{Array, Int32Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Number of random cases per seed.
const CASES_PER_SEED: usize = 250;
const SEEDS: [u64; 4] = [1, 7, 42, 2026];

/// How the subquery correlates with the outer row.
#[derive(Debug, Clone, Copy)]
enum Correlation {
    /// `i_k = o_k`: a hash join
    Equal,
    /// `i_k > o_k`: a nested loop join
    Greater,
    /// `i_k >= o_k AND i_k <= o_k + 1`: a nested loop join
    Band,
}

impl Correlation {
    fn sql(self) -> &'static str {
        match self {
            Correlation::Equal => "i_k = o_k",
            Correlation::Greater => "i_k > o_k",
            Correlation::Band => "i_k >= o_k AND i_k <= o_k + 1",
        }
    }

    fn matches(self, inner: Option<i32>, outer: Option<i32>) -> bool {
        let (Some(inner), Some(outer)) = (inner, outer) else {
            return false;
        };
        match self {
            Correlation::Equal => inner == outer,
            Correlation::Greater => inner > outer,
            Correlation::Band => inner >= outer && inner <= outer + 1,
        }
    }
}

/// Where the subquery sits in the outer query.
#[derive(Debug, Clone, Copy)]
enum Placement {
    /// `SELECT o_id, (subquery) FROM o`
    Projection,
    /// `SELECT o_id FROM o WHERE o_v > (subquery)`
    Filter,
}

struct Table {
    keys: Vec<Option<i32>>,
    values: Vec<Option<i32>>,
}

/// A random column of `rows` keys: NULLs, duplicates and skew come from the
/// domain size and the NULL and skew rates.
fn random_table(rng: &mut StdRng, max_rows: usize) -> Table {
    let rows = if rng.random_bool(0.1) {
        0
    } else {
        rng.random_range(1..=max_rows)
    };
    let domain = rng.random_range(1..=12);
    let null_rate = [0.0, 0.1, 0.5][rng.random_range(0..3)];
    let skew = rng.random_bool(0.3);
    let key = |rng: &mut StdRng| {
        if rng.random_bool(null_rate) {
            None
        } else if skew && rng.random_bool(0.6) {
            Some(0)
        } else {
            Some(rng.random_range(0..domain))
        }
    };
    let keys = (0..rows).map(|_| key(rng)).collect();
    let values = (0..rows)
        .map(|_| (!rng.random_bool(0.1)).then(|| rng.random_range(-20..20)))
        .collect();
    Table { keys, values }
}

/// Registers `(<prefix>_k, <prefix>_v[, o_id])` split into random partitions
/// and batches.
fn register(
    ctx: &SessionContext,
    rng: &mut StdRng,
    name: &str,
    prefix: &str,
    table: &Table,
) -> Result<()> {
    let mut fields = vec![
        Field::new(format!("{prefix}_k"), DataType::Int32, true),
        Field::new(format!("{prefix}_v"), DataType::Int32, true),
    ];
    let with_id = prefix == "o";
    if with_id {
        fields.push(Field::new("o_id", DataType::Int32, false));
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let partitions = rng.random_range(1..=3);
    let chunk = rng.random_range(1..=4);
    let mut batches = vec![vec![]; partitions];
    let rows = table.keys.len();
    for (n, start) in (0..rows).step_by(chunk).enumerate() {
        let end = (start + chunk).min(rows);
        let mut columns: Vec<Arc<dyn Array>> = vec![
            Arc::new(Int32Array::from(table.keys[start..end].to_vec())),
            Arc::new(Int32Array::from(table.values[start..end].to_vec())),
        ];
        if with_id {
            columns.push(Arc::new(Int32Array::from_iter_values(
                start as i32..end as i32,
            )));
        }
        batches[n % partitions].push(RecordBatch::try_new(Arc::clone(&schema), columns)?);
    }
    ctx.register_table(name, Arc::new(MemTable::try_new(schema, batches)?))?;
    Ok(())
}

/// The naive result: sorted `o_id,value` lines, or `None` when an outer row
/// meets a second matching row.
fn reference(
    outer: &Table,
    inner: &Table,
    correlation: Correlation,
    placement: Placement,
) -> Option<Vec<String>> {
    let mut lines = vec![];
    for (id, (&key, &value)) in outer.keys.iter().zip(&outer.values).enumerate() {
        let matches: Vec<usize> = (0..inner.keys.len())
            .filter(|&row| correlation.matches(inner.keys[row], key))
            .collect();
        if matches.len() > 1 {
            return None;
        }
        let looked_up = matches.first().and_then(|&row| inner.values[row]);
        match placement {
            Placement::Projection => {
                let shown = looked_up.map(|v| v.to_string()).unwrap_or("NULL".into());
                lines.push(format!("{id},{shown}"));
            }
            Placement::Filter => {
                if let (Some(value), Some(looked_up)) = (value, looked_up)
                    && value > looked_up
                {
                    lines.push(format!("{id}"));
                }
            }
        }
    }
    lines.sort();
    Some(lines)
}

fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut lines = vec![];
    for batch in batches {
        let columns: Vec<&Int32Array> = batch
            .columns()
            .iter()
            .map(|column| column.as_any().downcast_ref::<Int32Array>().unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = columns
                .iter()
                .map(|column| {
                    if column.is_null(row) {
                        "NULL".to_string()
                    } else {
                        column.value(row).to_string()
                    }
                })
                .collect();
            lines.push(cells.join(","));
        }
    }
    lines.sort();
    lines
}

#[tokio::test]
async fn random_lookups_match_naive_evaluation() -> Result<()> {
    let (mut queries, mut errors) = (0, 0);
    for seed in SEEDS {
        let mut rng = StdRng::seed_from_u64(seed);
        for case in 0..CASES_PER_SEED {
            let outer = random_table(&mut rng, 24);
            let inner = random_table(&mut rng, 24);
            let target_partitions = [1, 2, 3, 4, 8][rng.random_range(0..5)];
            let batch_size = [1, 2, 3, 7, 8192][rng.random_range(0..5)];
            let correlation =
                [Correlation::Equal, Correlation::Greater, Correlation::Band]
                    [rng.random_range(0..3)];
            let placement =
                [Placement::Projection, Placement::Filter][rng.random_range(0..2)];

            let config = SessionConfig::new()
                .with_target_partitions(target_partitions)
                .with_batch_size(batch_size);
            let ctx = SessionContext::new_with_config(config);
            register(&ctx, &mut rng, "o", "o", &outer)?;
            register(&ctx, &mut rng, "i", "i", &inner)?;

            let subquery = format!("(SELECT i_v FROM i WHERE {})", correlation.sql());
            let sql = match placement {
                Placement::Projection => format!("SELECT o_id, {subquery} FROM o"),
                Placement::Filter => format!("SELECT o_id FROM o WHERE o_v > {subquery}"),
            };
            let context = format!(
                "seed {seed} case {case}: {sql} (target_partitions {target_partitions}, \
                 batch_size {batch_size})\nouter keys {:?}\ninner keys {:?}",
                outer.keys, inner.keys
            );
            let result = ctx.sql(&sql).await?.collect().await;
            match (reference(&outer, &inner, correlation, placement), result) {
                (Some(expected), Ok(batches)) => {
                    assert_eq!(lines(&batches), expected, "{context}")
                }
                (None, Err(err)) => {
                    assert!(
                        err.to_string()
                            .contains("Scalar subquery returned more than one row"),
                        "{context}\n{err}"
                    );
                    errors += 1;
                }
                (Some(_), Err(err)) => panic!("{context}\nunexpected error: {err}"),
                (None, Ok(batches)) => panic!(
                    "{context}\na second matching row returned rows: {:?}",
                    lines(&batches)
                ),
            }
            queries += 1;
        }
    }
    println!("single join: {queries} random queries, {errors} failed on a second row");
    assert_eq!(queries, SEEDS.len() * CASES_PER_SEED);
    // The generator must exercise both outcomes
    assert!(
        errors > queries / 10 && errors < queries * 9 / 10,
        "{errors}"
    );
    Ok(())
}

/// SQL has no single join: the unparser refuses a plan with one, clearly.
#[tokio::test]
async fn unparser_refuses_single_join() -> Result<()> {
    let ctx = SessionContext::new();
    for sql in [
        "CREATE TABLE c(k INT, n TEXT) AS VALUES (1, 'a'), (1, 'b')",
        "CREATE TABLE o(k INT) AS VALUES (1), (2)",
    ] {
        ctx.sql(sql).await?.collect().await?;
    }
    let plan = ctx
        .sql("SELECT k, (SELECT n FROM c WHERE c.k = o.k) FROM o")
        .await?
        .into_optimized_plan()?;
    assert!(
        plan.display_indent()
            .to_string()
            .contains("LeftSingle Join")
    );
    let err = datafusion::sql::unparser::plan_to_sql(&plan).unwrap_err();
    assert!(
        err.to_string()
            .contains("Unparsing of LeftSingle join: SQL has no join"),
        "{err}"
    );
    Ok(())
}
