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
//! and filters (on the outer side, on the looked-up value alone, which
//! narrows the lookup side, and on both). Each result is compared with a naive evaluation written here;
//! every case where an outer row meets a second matching row must fail with
//! `Scalar subquery returned more than one row`. Seeds are fixed.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, Int32Array, Int32Builder, Int64Array, ListBuilder, RecordBatch,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::common::{Constraint, Constraints};
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
    /// `SELECT o_id FROM o WHERE (subquery) = c`: rejects NULL, so it narrows
    /// the lookup side
    ValueEquals(i32),
    /// `SELECT o_id FROM o WHERE (subquery) >= c AND o_v IS NOT NULL`
    ValueAtLeast(i32),
    /// `SELECT o_id FROM o WHERE (subquery) IS NULL`: keeps NULL
    ValueIsNull,
    /// `SELECT o_id FROM o WHERE (subquery) = c OR o_v = c`: reads the outer
    /// side
    ValueEqualsOrOuter(i32),
}

impl Placement {
    fn random(rng: &mut StdRng) -> Self {
        let constant = rng.random_range(-20..20);
        match rng.random_range(0..6) {
            0 => Placement::Projection,
            1 => Placement::Filter,
            2 => Placement::ValueEquals(constant),
            3 => Placement::ValueAtLeast(constant),
            4 => Placement::ValueIsNull,
            _ => Placement::ValueEqualsOrOuter(constant),
        }
    }

    fn sql(self, subquery: &str) -> String {
        let condition = match self {
            Placement::Projection => return format!("SELECT o_id, {subquery} FROM o"),
            Placement::Filter => format!("o_v > {subquery}"),
            Placement::ValueEquals(c) => format!("{subquery} = {c}"),
            Placement::ValueAtLeast(c) => {
                format!("{subquery} >= {c} AND o_v IS NOT NULL")
            }
            Placement::ValueIsNull => format!("{subquery} IS NULL"),
            Placement::ValueEqualsOrOuter(c) => format!("{subquery} = {c} OR o_v = {c}"),
        };
        format!("SELECT o_id FROM o WHERE {condition}")
    }

    /// Whether the outer row with `value` reaches the join: a filter on the
    /// outer side alone runs first.
    fn reaches_join(self, value: Option<i32>) -> bool {
        !matches!(self, Placement::ValueAtLeast(_)) || value.is_some()
    }

    /// Whether the outer row with `value` and `looked_up` passes the filter.
    fn keeps(self, value: Option<i32>, looked_up: Option<i32>) -> bool {
        match self {
            Placement::Projection => true,
            Placement::Filter => {
                matches!((value, looked_up), (Some(v), Some(l)) if v > l)
            }
            Placement::ValueEquals(c) => looked_up == Some(c),
            Placement::ValueAtLeast(c) => {
                looked_up.is_some_and(|l| l >= c) && value.is_some()
            }
            Placement::ValueIsNull => looked_up.is_none(),
            Placement::ValueEqualsOrOuter(c) => looked_up == Some(c) || value == Some(c),
        }
    }
}

struct Table {
    keys: Vec<Option<i32>>,
    values: Vec<Option<i32>>,
}

/// A random column of `rows` keys: NULLs, duplicates and skew come from the
/// domain size and the NULL and skew rates.
fn random_table(rng: &mut StdRng, max_rows: usize) -> Table {
    let rows = random_row_count(rng, max_rows);
    let keys = random_keys(rng, rows);
    let values = (0..rows)
        .map(|_| (!rng.random_bool(0.1)).then(|| rng.random_range(-20..20)))
        .collect();
    Table { keys, values }
}

/// Zero rows one time in ten, else up to `max_rows`.
fn random_row_count(rng: &mut StdRng, max_rows: usize) -> usize {
    if rng.random_bool(0.1) {
        0
    } else {
        rng.random_range(1..=max_rows)
    }
}

/// `rows` keys from a small domain, with random NULL rate and skew.
fn random_keys(rng: &mut StdRng, rows: usize) -> Vec<Option<i32>> {
    let domain = rng.random_range(1..=12);
    let null_rate = [0.0, 0.1, 0.5][rng.random_range(0..3)];
    let skew = rng.random_bool(0.3);
    (0..rows)
        .map(|_| {
            if rng.random_bool(null_rate) {
                None
            } else if skew && rng.random_bool(0.6) {
                Some(0)
            } else {
                Some(rng.random_range(0..domain))
            }
        })
        .collect()
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
        if !placement.reaches_join(value) {
            continue;
        }
        let matches: Vec<usize> = (0..inner.keys.len())
            .filter(|&row| correlation.matches(inner.keys[row], key))
            .collect();
        if matches.len() > 1 {
            return None;
        }
        let looked_up = matches.first().and_then(|&row| inner.values[row]);
        if let Placement::Projection = placement {
            let shown = looked_up.map_or_else(|| "NULL".into(), |v| v.to_string());
            lines.push(format!("{id},{shown}"));
        } else if placement.keeps(value, looked_up) {
            lines.push(format!("{id}"));
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
            let placement = Placement::random(&mut rng);

            let config = SessionConfig::new()
                .with_target_partitions(target_partitions)
                .with_batch_size(batch_size);
            let ctx = SessionContext::new_with_config(config);
            register(&ctx, &mut rng, "o", "o", &outer)?;
            register(&ctx, &mut rng, "i", "i", &inner)?;

            let subquery = format!("(SELECT i_v FROM i WHERE {})", correlation.sql());
            let sql = placement.sql(&subquery);
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

/// A random table for [`random_shapes_match_substitution`]: named columns of
/// random integers (with NULLs, duplicates and skew unless `unique` names a
/// column that must hold distinct non-NULL values), optionally an `INT[]`
/// column, and a declared primary key on the unique column.
struct RandomTable {
    name: &'static str,
    columns: Vec<(&'static str, Vec<Option<i32>>)>,
    arrays: Option<(&'static str, Vec<Vec<i32>>)>,
    primary_key: Option<usize>,
    not_null: Vec<usize>,
}

impl RandomTable {
    /// `rows` rows of random keys in each of `columns`.
    fn new(
        rng: &mut StdRng,
        name: &'static str,
        columns: &[&'static str],
        rows: usize,
    ) -> Self {
        Self {
            name,
            columns: columns
                .iter()
                .map(|column| (*column, random_keys(rng, rows)))
                .collect(),
            arrays: None,
            primary_key: None,
            not_null: vec![],
        }
    }

    /// Makes column `index` a declared key holding distinct values (at most
    /// 12 rows).
    fn keyed(mut self, rng: &mut StdRng, index: usize) -> Self {
        let mut keys: Vec<i32> = (0..12).collect();
        for i in (1..keys.len()).rev() {
            keys.swap(i, rng.random_range(0..=i));
        }
        let rows = self.rows().min(keys.len());
        self.columns[index].1 = keys.into_iter().take(rows).map(Some).collect();
        for (_, values) in &mut self.columns {
            values.truncate(rows);
        }
        self.primary_key = Some(index);
        self
    }

    /// Makes column `index` NOT NULL.
    fn not_null(mut self, rng: &mut StdRng, index: usize) -> Self {
        for value in &mut self.columns[index].1 {
            value.get_or_insert_with(|| rng.random_range(-20..20));
        }
        self.not_null.push(index);
        self
    }

    /// Adds an `INT[]` column of 0 to 3 elements per row.
    fn with_arrays(mut self, rng: &mut StdRng, name: &'static str) -> Self {
        let arrays = (0..self.rows())
            .map(|_| {
                (0..rng.random_range(0..=3))
                    .map(|_| rng.random_range(-20..20))
                    .collect()
            })
            .collect();
        self.arrays = Some((name, arrays));
        self
    }

    fn rows(&self) -> usize {
        self.columns[0].1.len()
    }

    /// Registers the table split into random partitions and batches.
    fn register(&self, ctx: &SessionContext, rng: &mut StdRng) -> Result<()> {
        let mut fields: Vec<Field> = self
            .columns
            .iter()
            .enumerate()
            .map(|(index, (name, _))| {
                let nullable =
                    !self.not_null.contains(&index) && self.primary_key != Some(index);
                Field::new(*name, DataType::Int32, nullable)
            })
            .collect();
        if let Some((name, _)) = &self.arrays {
            fields.push(Field::new_list(
                *name,
                Field::new_list_field(DataType::Int32, true),
                true,
            ));
        }
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let partitions = rng.random_range(1..=3);
        let chunk = rng.random_range(1..=4);
        let mut batches = vec![vec![]; partitions];
        let rows = self.rows();
        for (n, start) in (0..rows).step_by(chunk).enumerate() {
            let end = (start + chunk).min(rows);
            let mut columns: Vec<Arc<dyn Array>> = self
                .columns
                .iter()
                .map(|(_, values)| {
                    Arc::new(Int32Array::from(values[start..end].to_vec())) as _
                })
                .collect();
            if let Some((_, arrays)) = &self.arrays {
                let mut builder = ListBuilder::new(Int32Builder::new());
                for array in &arrays[start..end] {
                    builder.values().append_slice(array);
                    builder.append(true);
                }
                columns.push(Arc::new(builder.finish()));
            }
            batches[n % partitions]
                .push(RecordBatch::try_new(Arc::clone(&schema), columns)?);
        }
        let mut table = MemTable::try_new(schema, batches)?;
        if let Some(key) = self.primary_key {
            table = table.with_constraints(Constraints::new_unverified(vec![
                Constraint::PrimaryKey(vec![key]),
            ]));
        }
        ctx.register_table(self.name, Arc::new(table))?;
        Ok(())
    }
}

/// Subquery shapes for [`random_shapes_match_substitution`]: `{k}` and `{v}`
/// stand for the outer row's `o_k` and `o_v`.
const SUBQUERY_SHAPES: &[(&str, &str)] = &[
    ("lookup", "SELECT i_v FROM i WHERE i_k = {k}"),
    (
        "residual condition",
        "SELECT i_v FROM i WHERE i_k = {k} AND i_w > {v}",
    ),
    (
        "inequality",
        "SELECT i_v FROM i WHERE i_k > {k} AND i_k < {k} + 3",
    ),
    (
        "unnest of a keyed table",
        "SELECT u FROM (SELECT a_k, unnest(a_arr) AS u FROM a) x WHERE x.a_k = {k}",
    ),
    ("DISTINCT", "SELECT DISTINCT i_v FROM i WHERE i_k = {k}"),
    (
        "UNION ALL",
        "SELECT x_v FROM (SELECT i_k AS x_k, i_v AS x_v FROM i \
         UNION ALL SELECT j_k, j_v FROM j) x WHERE x.x_k = {k}",
    ),
    (
        "GROUP BY more columns than fixed",
        "SELECT max(i_v) FROM i WHERE i_k = {k} GROUP BY i_w",
    ),
    (
        "GROUP BY the fixed column",
        "SELECT i_k FROM i WHERE i_k = {k} GROUP BY i_k",
    ),
    (
        "join",
        "SELECT j_v FROM i JOIN j ON i.i_w = j.j_k WHERE i.i_k = {k}",
    ),
    ("declared key", "SELECT p_v FROM p WHERE p_k = {k}"),
    (
        "declared keys joined",
        "SELECT q_v FROM p JOIN q ON p.p_v = q.q_k WHERE p.p_k = {k}",
    ),
    (
        "declared key joined to a non-key",
        "SELECT j_v FROM p JOIN j ON p.p_v = j.j_k WHERE p.p_k = {k}",
    ),
    ("count", "SELECT count(*) FROM i WHERE i_k = {k}"),
    (
        "count with a correlated HAVING",
        "SELECT count(*) FROM i WHERE i_k = {k} HAVING count(*) > {v}",
    ),
    (
        "count with an uncorrelated HAVING",
        "SELECT count(*) + 1 FROM i WHERE i_k = {k} HAVING count(*) < 2",
    ),
    (
        "max with a correlated HAVING on a count",
        "SELECT max(i_v) FROM i WHERE i_k = {k} HAVING count(*) <= {v}",
    ),
    ("a NOT NULL column", "SELECT n_v FROM n WHERE n_k = {k}"),
];

/// Where the subquery sits in the outer query, `{s}` standing for it.
const PLACEMENTS: &[&str] = &[
    "SELECT o_id, ({s}) FROM o",
    "SELECT o_id FROM o WHERE o_v > ({s})",
    // An INT literal: a cast of the subquery's value to the literal's type
    // cannot yet be decorrelated when the value is also the correlated column
    "SELECT o_id, coalesce(({s}), CAST(-99 AS INT)) FROM o",
    "SELECT o_id FROM o WHERE ({s}) IS NOT NULL",
];

/// The value of a subquery for one outer row, as the oracle computed it.
type Evaluated = std::result::Result<Option<i64>, ()>;

/// The subquery run once, with the outer row's values in place of the outer
/// references: no decorrelation involved.
async fn substituted(
    ctx: &SessionContext,
    shape: &str,
    k: Option<i32>,
    v: Option<i32>,
) -> Result<Evaluated> {
    let literal = |value: Option<i32>| match value {
        Some(value) => format!("({value})"),
        None => "CAST(NULL AS INT)".to_string(),
    };
    let sql = shape
        .replace("{k}", &literal(k))
        .replace("{v}", &literal(v));
    let rows = subquery_rows(ctx, &sql).await?;
    Ok(match rows.as_slice() {
        [] => Ok(None),
        [value] => Ok(*value),
        _ => Err(()),
    })
}

/// The rows of an uncorrelated subquery's one column.
async fn subquery_rows(ctx: &SessionContext, sql: &str) -> Result<Vec<Option<i64>>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let rows: Vec<Option<i64>> = batches
        .iter()
        .flat_map(|batch| {
            let column = cast(batch.column(0), &DataType::Int64).unwrap();
            let column = column
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone();
            (0..column.len())
                .map(move |row| (!column.is_null(row)).then(|| column.value(row)))
                .collect::<Vec<_>>()
        })
        .collect();
    Ok(rows)
}

/// Every row of `batches` as text, columns joined by commas.
fn text_lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut lines = vec![];
    for batch in batches {
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = batch
                .columns()
                .iter()
                .map(|column| {
                    if column.is_null(row) {
                        "NULL".to_string()
                    } else {
                        array_value_to_string(column, row).unwrap()
                    }
                })
                .collect();
            lines.push(cells.join(","));
        }
    }
    lines
}

/// Random correlated scalar subqueries, each checked against the oracle
/// that evaluates the subquery once per outer row with the outer values
/// substituted: the shapes of [`SUBQUERY_SHAPES`] in each of
/// [`PLACEMENTS`], under no `LIMIT`, a `LIMIT` at least the outer row count,
/// a top-k, and `LIMIT 1` on a one-row outer side. A query whose evaluated
/// outer rows include one with two subquery rows must fail; a top-k in the
/// projection may also return the top rows when only other rows failed.
#[tokio::test]
async fn random_shapes_match_substitution() -> Result<()> {
    const CASES: usize = 1000;
    let mut rng = StdRng::seed_from_u64(8);
    let (mut queries, mut errors, mut oracle_queries) = (0, 0, 0);
    let mut per_shape = vec![0; SUBQUERY_SHAPES.len()];
    for case in 0..CASES {
        let target_partitions = rng.random_range(1..=4);
        let batch_size = [1, 2, 3, 8192][rng.random_range(0..4)];
        let config = SessionConfig::new()
            .with_target_partitions(target_partitions)
            .with_batch_size(batch_size);
        let ctx = SessionContext::new_with_config(config);

        // 0: no LIMIT, 1: a LIMIT at least the row count, 2: a top-k,
        // 3: LIMIT 1 on a one-row outer side
        let limit = rng.random_range(0..4);
        let outer_rows = match limit {
            3 => 1,
            _ => random_row_count(&mut rng, 10),
        };
        let mut outer = RandomTable::new(&mut rng, "o", &["o_k", "o_v"], outer_rows);
        outer
            .columns
            .push(("o_id", (0..outer_rows as i32).map(Some).collect()));
        outer.not_null.push(2);
        let (i_rows, j_rows, p_rows, q_rows, a_rows, n_rows) = (
            random_row_count(&mut rng, 12),
            random_row_count(&mut rng, 8),
            random_row_count(&mut rng, 8),
            random_row_count(&mut rng, 8),
            random_row_count(&mut rng, 6),
            random_row_count(&mut rng, 8),
        );
        let tables = [
            outer,
            RandomTable::new(&mut rng, "i", &["i_k", "i_w", "i_v"], i_rows),
            RandomTable::new(&mut rng, "j", &["j_k", "j_v"], j_rows),
            RandomTable::new(&mut rng, "p", &["p_k", "p_v"], p_rows).keyed(&mut rng, 0),
            RandomTable::new(&mut rng, "q", &["q_k", "q_v"], q_rows).keyed(&mut rng, 0),
            RandomTable::new(&mut rng, "a", &["a_k"], a_rows)
                .keyed(&mut rng, 0)
                .with_arrays(&mut rng, "a_arr"),
            RandomTable::new(&mut rng, "n", &["n_k", "n_v"], n_rows)
                .not_null(&mut rng, 1),
        ];
        for table in &tables {
            table.register(&ctx, &mut rng)?;
        }

        let shape_index = rng.random_range(0..SUBQUERY_SHAPES.len());
        let (shape_name, shape) = SUBQUERY_SHAPES[shape_index];
        let placement = rng.random_range(0..PLACEMENTS.len());
        let correlated = shape.replace("{k}", "o_k").replace("{v}", "o_v");
        let mut sql = PLACEMENTS[placement].replace("{s}", &correlated);
        let outer = &tables[0];
        let rows = outer.rows();
        let top_k = rng.random_range(1..=rows.max(1));
        // How many rows of the outer query's result the LIMIT keeps
        let kept = match limit {
            1 => {
                sql += &format!(" ORDER BY o_id LIMIT {}", rows + 1);
                rows
            }
            2 => {
                sql += &format!(" ORDER BY o_id LIMIT {top_k}");
                top_k
            }
            3 => {
                sql += " LIMIT 1";
                1
            }
            _ => rows,
        };

        // The oracle, per outer row
        let mut evaluated = vec![];
        for row in 0..rows {
            let (k, v) = (outer.columns[0].1[row], outer.columns[1].1[row]);
            evaluated.push(substituted(&ctx, shape, k, v).await?);
            oracle_queries += 1;
        }
        // The result line of an outer row whose subquery returned `value`
        let line = |row: usize, value: Option<i64>| -> Option<String> {
            let shown =
                value.map_or_else(|| "NULL".to_string(), |value| value.to_string());
            match placement {
                0 => Some(format!("{row},{shown}")),
                1 => {
                    let o_v = outer.columns[1].1[row]?;
                    (i64::from(o_v) > value?).then(|| row.to_string())
                }
                2 => Some(format!("{row},{}", value.unwrap_or(-99))),
                _ => value.map(|_| row.to_string()),
            }
        };
        let fails = evaluated.iter().any(Result::is_err);
        // A top-k of a projection need not evaluate the rows it drops; a
        // filter evaluates every row
        let is_projection = placement == 0 || placement == 2;
        let must_fail = if limit == 2 && is_projection {
            evaluated.iter().take(top_k).any(Result::is_err)
        } else {
            fails
        };

        let context = format!(
            "case {case}, shape `{shape_name}`: {sql}\n(target_partitions \
             {target_partitions}, batch_size {batch_size})\nouter rows {:?}\n\
             oracle {evaluated:?}",
            outer.columns
        );
        match ctx.sql(&sql).await?.collect().await {
            Ok(batches) => {
                assert!(!must_fail, "{context}\nexpected an error, got {batches:?}");
                let mut expected: Vec<String> = (0..rows)
                    .filter_map(|row| line(row, evaluated[row].unwrap_or(None)))
                    .take(kept)
                    .collect();
                let mut got = text_lines(&batches);
                got.sort();
                expected.sort();
                assert_eq!(got, expected, "{context}");
            }
            Err(err) => {
                assert!(fails, "{context}\nunexpected error: {err}");
                assert!(
                    err.to_string()
                        .contains("Scalar subquery returned more than one row"),
                    "{context}\n{err}"
                );
                errors += 1;
            }
        }
        queries += 1;
        per_shape[shape_index] += 1;
    }
    println!(
        "correlated subquery shapes: {queries} random queries against \
         {oracle_queries} substituted ones, {errors} failed on a second row"
    );
    assert_eq!(queries, CASES);
    assert!(per_shape.iter().all(|&count| count > 0), "{per_shape:?}");
    assert!(errors > queries / 20 && errors < queries / 2, "{errors}");
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

/// Subquery shapes that only the dependent join decorrelates, for
/// [`random_decorrelated_shapes_match_substitution`]: `{k}` and `{v}` stand
/// for the outer row's `o_k` and `o_v`. Each returns one column, and the
/// same rows whichever plan runs it (ties in an order give equal values).
const DEPENDENT_JOIN_SHAPES: &[(&str, &str)] = &[
    ("lookup", "SELECT i_v FROM i WHERE i_k = {k}"),
    (
        "top-1",
        "SELECT i_v FROM i WHERE i_k = {k} ORDER BY i_v DESC LIMIT 1",
    ),
    (
        "top-1 of another column",
        "SELECT i_w * 2 FROM i WHERE i_k = {k} ORDER BY i_v DESC NULLS LAST, i_w LIMIT 1",
    ),
    (
        "top-1 nearest the outer value",
        "SELECT i_v FROM i WHERE i_k = {k} ORDER BY abs(i_v - {v}), i_v LIMIT 1",
    ),
    (
        "offset",
        "SELECT i_v FROM i WHERE i_k = {k} ORDER BY i_v NULLS FIRST LIMIT 1 OFFSET 1",
    ),
    (
        "top-2",
        "SELECT i_w FROM i WHERE i_k = {k} ORDER BY i_v, i_w LIMIT 2",
    ),
    (
        "LIMIT 1 without ORDER BY",
        "SELECT i_k FROM i WHERE i_k = {k} LIMIT 1",
    ),
    (
        "outer column in SELECT",
        "SELECT i_v + {v} FROM i WHERE i_k = {k} AND i_w > 0",
    ),
    (
        "only an outer column in SELECT",
        "SELECT {v} FROM i WHERE i_k = {k} AND i_w > 0",
    ),
    (
        "outer column over an aggregate",
        "SELECT max(i_v) + {v} FROM i WHERE i_k = {k}",
    ),
    (
        "outer column over a count",
        "SELECT count(*) * 10 + {v} FROM i WHERE i_k = {k}",
    ),
    (
        "outer column over an aggregate of the correlated column",
        "SELECT sum(i_k) - count(i_k) + {v} FROM i WHERE i_k = {k}",
    ),
    (
        "outer column over groups of the correlated column",
        "SELECT max(i_v) + {v} FROM i WHERE i_k = {k} GROUP BY i_k",
    ),
    (
        "outer column in HAVING",
        "SELECT max(i_v) FROM i WHERE i_k = {k} HAVING max(i_v) > {v}",
    ),
    (
        "outer column in JOIN ON",
        "SELECT max(j_v) FROM i JOIN j ON i.i_w = j.j_k AND j.j_v > {v} WHERE i.i_k = {k}",
    ),
    (
        "two levels deep",
        "SELECT (SELECT max(j_v) FROM j WHERE j_k = {k} AND j_v >= i.i_v) \
         FROM i WHERE i_k = {k} AND i_w > {v}",
    ),
    (
        "EXISTS two levels deep",
        "SELECT count(*) FROM i WHERE i_k = {k} \
         AND EXISTS (SELECT 1 FROM j WHERE j_k = i.i_w AND j_v > {v})",
    ),
    ("OR", "SELECT count(*) FROM i WHERE i_k = {k} OR i_w = {v}"),
    ("non-equality", "SELECT max(i_v) FROM i WHERE i_k < {k}"),
    (
        "derived table",
        "SELECT max(x.i_v) FROM (SELECT i_v FROM i WHERE i_k = {k}) x",
    ),
    (
        "UNION of two correlations",
        "SELECT max(u.x) FROM (SELECT i_v AS x FROM i WHERE i_k = {k} \
         UNION ALL SELECT j_v FROM j WHERE j_k = {v}) u",
    ),
    (
        "window",
        "SELECT count(*) OVER () FROM i WHERE i_k = {k} LIMIT 1",
    ),
    (
        "top-1 of groups",
        "SELECT max(i_v) FROM i WHERE i_k = {k} GROUP BY i_w ORDER BY 1 DESC NULLS LAST LIMIT 1",
    ),
];

/// How the outer query of [`random_decorrelated_shapes_match_substitution`]
/// uses the subquery `{s}`.
const USES: &[&str] = &[
    "SELECT o_id, ({s}) FROM o",
    "SELECT o_id FROM o WHERE o_v > ({s})",
    "SELECT o_id, coalesce(({s}), CAST(-99 AS INT)) FROM o",
    "SELECT o_id FROM o WHERE ({s}) IS NOT NULL",
    "SELECT o_id, EXISTS ({s}) FROM o",
    "SELECT o_id FROM o WHERE NOT EXISTS ({s}) OR o_v > 5",
    "SELECT o_id, o_v IN ({s}) FROM o",
    "SELECT o_id, o_v NOT IN ({s}) FROM o",
    "SELECT sum(({s})) FROM o",
    "SELECT o_id FROM o ORDER BY ({s}) NULLS FIRST, o_id",
    "SELECT ({s}) AS g, count(*) AS n FROM o GROUP BY 1",
    // A literal of another type than the subquery's value
    "SELECT o_id, coalesce(({s}), -99) FROM o",
];

/// SQL's `value IN (rows)`.
fn in_list(value: Option<i64>, rows: &[Option<i64>]) -> Option<bool> {
    if rows.is_empty() {
        return Some(false);
    }
    let value = value?;
    if rows.contains(&Some(value)) {
        Some(true)
    } else if rows.contains(&None) {
        None
    } else {
        Some(false)
    }
}

fn shown<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "NULL".to_string(), |value| value.to_string())
}

/// The result lines of `USES[usage]` over the outer rows `(o_v, subquery
/// rows)`, in order where the query orders them, or `None` where a scalar
/// subquery met a second row and the query must fail.
fn expected_lines(
    usage: usize,
    outer: &[(Option<i32>, Vec<Option<i64>>)],
) -> Option<Vec<String>> {
    let scalar = |rows: &Vec<Option<i64>>| match rows.as_slice() {
        [] => Some(None),
        [value] => Some(*value),
        _ => None,
    };
    let rows = outer.iter().enumerate();
    Some(match usage {
        0..=3 | 8..=11 => {
            let values = outer
                .iter()
                .map(|(_, rows)| scalar(rows))
                .collect::<Option<Vec<_>>>()?;
            let with_v = values.iter().zip(outer).enumerate();
            match usage {
                0 => with_v.map(|(id, (value, _))| format!("{id},{}", shown(*value))).collect(),
                1 => with_v
                    .filter(|(_, (value, (o_v, _)))| {
                        matches!((o_v, value), (Some(o_v), Some(value)) if i64::from(*o_v) > *value)
                    })
                    .map(|(id, _)| id.to_string())
                    .collect(),
                2 | 11 => with_v
                    .map(|(id, (value, _))| format!("{id},{}", value.unwrap_or(-99)))
                    .collect(),
                3 => with_v
                    .filter(|(_, (value, _))| value.is_some())
                    .map(|(id, _)| id.to_string())
                    .collect(),
                8 => {
                    let present: Vec<i64> = values.iter().flatten().copied().collect();
                    let sum = (!present.is_empty()).then(|| present.iter().sum::<i64>());
                    vec![shown(sum)]
                }
                9 => {
                    let mut ids: Vec<usize> = (0..values.len()).collect();
                    ids.sort_by_key(|&id| (values[id].is_some(), values[id], id));
                    ids.iter().map(usize::to_string).collect()
                }
                10 => {
                    let mut groups: Vec<(Option<i64>, usize)> = vec![];
                    for value in &values {
                        match groups.iter_mut().find(|(group, _)| group == value) {
                            Some((_, count)) => *count += 1,
                            None => groups.push((*value, 1)),
                        }
                    }
                    groups
                        .iter()
                        .map(|(value, count)| format!("{},{count}", shown(*value)))
                        .collect()
                }
                _ => unreachable!("a use of the subquery's value"),
            }
        }
        4 => rows
            .map(|(id, (_, rows))| format!("{id},{}", !rows.is_empty()))
            .collect(),
        5 => rows
            .filter(|(_, (o_v, rows))| rows.is_empty() || o_v.is_some_and(|o_v| o_v > 5))
            .map(|(id, _)| id.to_string())
            .collect(),
        6 => rows
            .map(|(id, (o_v, rows))| {
                format!("{id},{}", shown(in_list(o_v.map(i64::from), rows)))
            })
            .collect(),
        _ => rows
            .map(|(id, (o_v, rows))| {
                format!(
                    "{id},{}",
                    shown(in_list(o_v.map(i64::from), rows).map(|b| !b))
                )
            })
            .collect(),
    })
}

/// Random correlated subqueries of the shapes only the dependent join
/// decorrelates, in every use: as a value in each position, under `EXISTS`
/// and `IN`, in an aggregate's argument, `ORDER BY` and `GROUP BY`. Each is
/// checked against the oracle that runs the subquery once per outer row with
/// the outer values substituted.
#[tokio::test]
async fn random_decorrelated_shapes_match_substitution() -> Result<()> {
    const CASES: usize = 1000;
    let mut rng = StdRng::seed_from_u64(10);
    let (mut queries, mut errors, mut oracle_queries) = (0, 0, 0);
    let mut per_shape = vec![0; DEPENDENT_JOIN_SHAPES.len()];
    let mut per_use = vec![0; USES.len()];
    for case in 0..CASES {
        let target_partitions = rng.random_range(1..=4);
        let batch_size = [1, 2, 3, 8192][rng.random_range(0..4)];
        let config = SessionConfig::new()
            .with_target_partitions(target_partitions)
            .with_batch_size(batch_size);
        let ctx = SessionContext::new_with_config(config);
        let outer_rows = random_row_count(&mut rng, 10);
        let mut outer = RandomTable::new(&mut rng, "o", &["o_k", "o_v"], outer_rows);
        outer
            .columns
            .push(("o_id", (0..outer_rows as i32).map(Some).collect()));
        outer.not_null.push(2);
        let (i_rows, j_rows) = (
            random_row_count(&mut rng, 12),
            random_row_count(&mut rng, 8),
        );
        let tables = [
            outer,
            RandomTable::new(&mut rng, "i", &["i_k", "i_w", "i_v"], i_rows),
            RandomTable::new(&mut rng, "j", &["j_k", "j_v"], j_rows),
        ];
        for table in &tables {
            table.register(&ctx, &mut rng)?;
        }

        let shape_index = rng.random_range(0..DEPENDENT_JOIN_SHAPES.len());
        let (shape_name, shape) = DEPENDENT_JOIN_SHAPES[shape_index];
        let usage = rng.random_range(0..USES.len());
        let correlated = shape.replace("{k}", "o_k").replace("{v}", "o_v");
        let sql = USES[usage].replace("{s}", &correlated);

        // The oracle: the subquery's rows for each outer row
        let outer = &tables[0];
        let mut evaluated = vec![];
        for row in 0..outer.rows() {
            let (k, v) = (outer.columns[0].1[row], outer.columns[1].1[row]);
            let literal = |value: Option<i32>| {
                value
                    .map_or_else(|| "CAST(NULL AS INT)".to_string(), |v| format!("({v})"))
            };
            let substituted = shape
                .replace("{k}", &literal(k))
                .replace("{v}", &literal(v));
            oracle_queries += 1;
            match subquery_rows(&ctx, &substituted).await {
                Ok(rows) => evaluated.push((v, rows)),
                // A scalar subquery inside the shape met a second row
                Err(err) => {
                    assert!(
                        err.to_string()
                            .contains("Scalar subquery returned more than one row"),
                        "{substituted}: {err}"
                    );
                    evaluated.clear();
                    break;
                }
            }
        }
        let inner_fails = evaluated.len() < outer.rows();
        let expected = if inner_fails {
            None
        } else {
            expected_lines(usage, &evaluated)
        };

        let context = format!(
            "case {case}, shape `{shape_name}`: {sql}\n(target_partitions \
             {target_partitions}, batch_size {batch_size})\nouter rows {:?}\n\
             oracle {evaluated:?}",
            outer.columns
        );
        match (ctx.sql(&sql).await?.collect().await, expected) {
            (Ok(batches), Some(mut expected)) => {
                let mut got = text_lines(&batches);
                // Only ORDER BY fixes the order of the rows
                if usage != 9 {
                    got.sort();
                    expected.sort();
                }
                assert_eq!(got, expected, "{context}");
            }
            (Ok(batches), None) => {
                panic!("{context}\nexpected an error, got {batches:?}")
            }
            (Err(err), expected) => {
                assert!(expected.is_none(), "{context}\nunexpected error: {err}");
                assert!(
                    err.to_string()
                        .contains("Scalar subquery returned more than one row"),
                    "{context}\n{err}"
                );
                errors += 1;
            }
        }
        queries += 1;
        per_shape[shape_index] += 1;
        per_use[usage] += 1;
    }
    println!(
        "dependent join shapes: {queries} random queries against \
         {oracle_queries} substituted ones, {errors} failed on a second row"
    );
    assert_eq!(queries, CASES);
    assert!(per_shape.iter().all(|&count| count > 0), "{per_shape:?}");
    assert!(per_use.iter().all(|&count| count > 0), "{per_use:?}");
    Ok(())
}

/// The physical plan of `sql`, as `EXPLAIN` prints it.
async fn physical_plan_text(ctx: &SessionContext, sql: &str) -> Result<String> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    Ok(datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string())
}

/// Tables loaded the way `datafusion-cli` users load them, `CREATE TABLE ...
/// AS SELECT` over parquet files, hold string views whose data buffers many
/// batches share. Their byte statistics once counted a shared buffer per
/// batch, so the small table looked larger than the big one and the hash
/// join built on the big side (issue 13). Each buffer now counts once.
#[tokio::test]
async fn tables_loaded_from_parquet_build_on_the_small_side() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let customer = dir.path().join("customer.parquet");
    let orders = dir.path().join("orders.parquet");
    let config = SessionConfig::new()
        .with_target_partitions(2)
        .with_batch_size(1024);
    // As in datafusion-cli, files can be queried by name.
    let ctx = SessionContext::new_with_config(config).enable_url_table();
    for sql in [
        format!(
            "COPY (SELECT CAST(value AS INT) AS c_custkey, \
             'Customer#' || lpad(CAST(value AS VARCHAR), 9, '0') AS c_name \
             FROM range(1, 10001)) TO '{}'",
            customer.display()
        ),
        format!(
            "COPY (SELECT CAST(value AS INT) AS o_orderkey, \
             CAST(value * 7 % 10000 + 1 AS INT) AS o_custkey \
             FROM range(1, 100001)) TO '{}'",
            orders.display()
        ),
        format!(
            "CREATE TABLE customer AS SELECT * FROM '{}'",
            customer.display()
        ),
        format!(
            "CREATE TABLE orders AS SELECT * FROM '{}'",
            orders.display()
        ),
    ] {
        ctx.sql(&sql).await?.collect().await?;
    }

    // The trap is set: counted batch by batch, as before, the 10K customers
    // hold more bytes than the 100K orders.
    let bytes_per_batch = |batches: Vec<RecordBatch>| -> usize {
        batches.iter().map(|b| b.get_array_memory_size()).sum()
    };
    let customer_batches = ctx.table("customer").await?.collect().await?;
    let orders_batches = ctx.table("orders").await?.collect().await?;
    assert!(customer_batches[0].column(1).data_type() == &DataType::Utf8View);
    assert!(
        bytes_per_batch(customer_batches) > bytes_per_batch(orders_batches),
        "the test no longer shows the over-count"
    );

    // Both the lookup and a plain join build their hash table on customer.
    let lookup = physical_plan_text(
        &ctx,
        "SELECT o_orderkey, (SELECT c_name FROM customer WHERE c_custkey = o_custkey) \
         FROM orders",
    )
    .await?;
    assert!(lookup.contains("join_type=RightSingle"), "{lookup}");
    let join = physical_plan_text(
        &ctx,
        "SELECT o_orderkey, c_name FROM orders JOIN customer ON c_custkey = o_custkey",
    )
    .await?;
    // The left key of `on` is the build side's.
    assert!(join.contains("on=[(c_custkey@"), "{join}");
    Ok(())
}

/// The join that brings a decorrelated subquery back to its outer rows is
/// NULL-safe only where a NULL can meet a NULL. A correlation by equality
/// drops the subquery rows whose key is NULL, so there it is the plain
/// equality of the join a user would write by hand; a correlation that needs
/// the outer values themselves (here `<`) keeps them, NULL included, and
/// joins NULL-safe. The answers of both are checked by the randomized tests
/// above, NULL keys included.
#[tokio::test]
async fn equality_correlations_join_back_with_plain_equality() -> Result<()> {
    let ctx = SessionContext::new();
    for sql in [
        "CREATE TABLE o(id INT, k INT, k2 INT) AS VALUES (1, 1, 10), (2, NULL, 20)",
        "CREATE TABLE s(k INT, v INT) AS VALUES (1, 5), (NULL, 6), (1, 7)",
    ] {
        ctx.sql(sql).await?.collect().await?;
    }
    let null_safe_joins = |plan: &str| {
        plan.lines()
            .filter(|line| line.contains("HashJoinExec") && line.contains("NullsEqual"))
            .count()
    };

    for equality in [
        "SELECT id, (SELECT max(s.v) + o.k2 FROM s WHERE s.k = o.k) FROM o",
        "SELECT id, (SELECT s.v FROM s WHERE s.k = o.k ORDER BY s.v LIMIT 1) FROM o",
        "SELECT id, EXISTS (SELECT 1 FROM s WHERE s.k = o.k AND s.v > 5) FROM o",
    ] {
        let plan = physical_plan_text(&ctx, equality).await?;
        assert!(plan.contains("HashJoinExec"), "{plan}");
        assert_eq!(null_safe_joins(&plan), 0, "{plan}");
    }

    let non_equality = "SELECT id, (SELECT max(s.v) FROM s WHERE s.k < o.k) FROM o";
    let plan = physical_plan_text(&ctx, non_equality).await?;
    assert!(null_safe_joins(&plan) > 0, "{plan}");
    Ok(())
}
