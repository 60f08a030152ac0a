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

//! [`UpdateOldValues`] keeps the old values of the rows an `UPDATE` changes
//! beside their new ones.
//!
//! The SQL planner writes `UPDATE t SET v = e WHERE p` as a projection of
//! the new values, one column per column of `t`, over `Filter: p` over the
//! table. A table provider takes the statement as a `WHERE` and a list of
//! assignments over its own columns, so the physical planner can hand it
//! over as written only while the plan stays a filter over the table. Once
//! a subquery in `WHERE` or `SET` is decorrelated into a join, or common
//! subexpressions move below the projection, it can no longer: it runs the
//! plan instead and hands the provider the rows to change by their values
//! (see `datafusion/core/src/physical_planner/dml.rs`).
//!
//! That needs each changed row's old values, to tell it apart from the rows
//! that stay, but the projection reads only the columns its new values
//! need, and the optimizer prunes the rest below it. This rule, which runs
//! first, appends the old value of every column to the projection:
//!
//! ```text
//! Dml: op=[Update] table=[t]
//!   Projection: t.id AS id, e AS v, t.id AS __old_value_0, t.v AS __old_value_1
//!     Filter: p
//!       TableScan: t
//! ```
//!
//! The input of an `UPDATE` on a table of `n` columns then has `2n`
//! columns: the new values in the table's order, then the old ones. No
//! rule prunes them: a DML statement requires every column of its input.
//! Without the optimizer the input keeps its `n` columns, and the physical
//! planner hands it over as written, or refuses it where it cannot.

use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, Result, TableReference, internal_err};
use datafusion_expr::logical_plan::{DmlStatement, Projection, SubqueryAlias, WriteOp};
use datafusion_expr::{Expr, LogicalPlan};

use crate::optimizer::ApplyOrder;
use crate::{OptimizerConfig, OptimizerRule};

/// Appends the old values of the target's columns to the input of every
/// `UPDATE`; see the [module documentation](self).
#[derive(Default, Debug)]
pub struct UpdateOldValues {}

impl UpdateOldValues {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self::default()
    }
}

impl OptimizerRule for UpdateOldValues {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Dml(dml) = plan else {
            return Ok(Transformed::no(plan));
        };
        let width = dml.target.schema().fields().len();
        let keeps_old_values = dml.op == WriteOp::Update
            && dml.input.schema().fields().len() == width
            && matches!(dml.input.as_ref(), LogicalPlan::Projection(_));
        if !keeps_old_values {
            return Ok(Transformed::no(LogicalPlan::Dml(dml)));
        }
        let projection = match Arc::unwrap_or_clone(dml.input) {
            LogicalPlan::Projection(projection) => projection,
            other => {
                return internal_err!(
                    "The input of an UPDATE is a projection, not {}",
                    other.display()
                );
            }
        };
        let Some(old_values) =
            old_values(&projection, &dml.table_name, &dml.target.schema())?
        else {
            let input = Arc::new(LogicalPlan::Projection(projection));
            return Ok(Transformed::no(LogicalPlan::Dml(DmlStatement {
                input,
                ..dml
            })));
        };
        let mut expr = projection.expr;
        expr.extend(old_values);
        let input = Projection::try_new(expr, projection.input)?;
        Ok(Transformed::yes(LogicalPlan::Dml(DmlStatement {
            input: Arc::new(LogicalPlan::Projection(input)),
            ..dml
        })))
    }

    fn name(&self) -> &str {
        "update_old_values"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }
}

/// The old value of each column of `target`, the table `table_name`, read
/// below `projection` (the target's columns under the table's name or its
/// alias), each under a name no column of the target has. `None` where a
/// column is not found.
///
/// Below the projection the target may be joined with the tables of an
/// `UPDATE ... FROM`, which can have columns of the same names: the old
/// values are then the columns of the target's own scan. The SQL planner
/// puts the target first, so where the `FROM` scans the same table again
/// (under another alias) the target's scan is the leftmost.
fn old_values(
    projection: &Projection,
    table_name: &TableReference,
    target: &arrow::datatypes::Schema,
) -> Result<Option<Vec<Expr>>> {
    let below = projection.input.schema();
    let Some(qualifier) = target_qualifier(&projection.input, table_name)? else {
        return Ok(None);
    };
    let prefix = old_value_prefix(target);
    let mut old_values = Vec::with_capacity(target.fields().len());
    for (index, field) in target.fields().iter().enumerate() {
        let column = Column::new(Some(qualifier.clone()), field.name());
        if !below.has_column(&column) {
            return Ok(None);
        }
        old_values.push(Expr::Column(column).alias(format!("{prefix}{index}")));
    }
    Ok(Some(old_values))
}

/// The name the leftmost scan of `table_name` in `plan` goes by: its alias,
/// or the table's name.
fn target_qualifier(
    plan: &LogicalPlan,
    table_name: &TableReference,
) -> Result<Option<TableReference>> {
    let mut qualifier = None;
    plan.apply(|node| {
        qualifier = match node {
            LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. })
                if matches!(input.as_ref(), LogicalPlan::TableScan(scan)
                    if scan.table_name.resolved_eq(table_name)) =>
            {
                Some(alias.clone())
            }
            LogicalPlan::TableScan(scan) if scan.table_name.resolved_eq(table_name) => {
                Some(scan.table_name.clone())
            }
            _ => None,
        };
        Ok(if qualifier.is_some() {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(qualifier)
}

/// `__old_value_`, lengthened until no column of `target` starts with it.
fn old_value_prefix(target: &arrow::datatypes::Schema) -> String {
    let mut prefix = String::from("__old_value_");
    while target
        .fields()
        .iter()
        .any(|field| field.name().starts_with(&prefix))
    {
        prefix.insert(0, '_');
    }
    prefix
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_expr::logical_plan::builder::LogicalTableSource;
    use datafusion_expr::{LogicalPlanBuilder, col, lit, table_scan};

    use super::*;
    use crate::OptimizerContext;
    use crate::assert_optimized_plan_eq_snapshot;

    macro_rules! assert_optimized_plan_equal {
        (
            $plan:expr,
            @ $expected:literal $(,)?
        ) => {{
            let optimizer_ctx = OptimizerContext::new().with_max_passes(2);
            let rules: Vec<Arc<dyn crate::OptimizerRule + Send + Sync>> =
                vec![Arc::new(UpdateOldValues::new())];
            assert_optimized_plan_eq_snapshot!(
                optimizer_ctx,
                rules,
                $plan,
                @ $expected,
            )
        }};
    }

    fn schema(columns: &[&str]) -> Schema {
        Schema::new(
            columns
                .iter()
                .map(|name| Field::new(*name, DataType::Int32, true))
                .collect::<Vec<_>>(),
        )
    }

    /// `op` on `t(id, v)` with `input` over its scan.
    fn dml(
        op: WriteOp,
        columns: &[&str],
        input: impl FnOnce(LogicalPlanBuilder) -> Result<LogicalPlanBuilder>,
    ) -> Result<LogicalPlan> {
        let schema = schema(columns);
        let scan = table_scan(Some("t"), &schema, None)?;
        let source = Arc::new(LogicalTableSource::new(Arc::new(schema)));
        Ok(LogicalPlan::Dml(DmlStatement::new(
            TableReference::bare("t"),
            source,
            op,
            Arc::new(input(scan)?.build()?),
        )))
    }

    #[test]
    fn appends_the_old_values_to_an_update() -> Result<()> {
        let plan = dml(WriteOp::Update, &["id", "v"], |scan| {
            scan.filter(col("t.id").gt(lit(1)))?
                .project([col("t.id").alias("id"), lit(0).alias("v")])
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Update] table=[t]
          Projection: t.id AS id, Int32(0) AS v, t.id AS __old_value_0, t.v AS __old_value_1
            Filter: t.id > Int32(1)
              TableScan: t
        ")
    }

    #[test]
    fn reads_the_old_values_under_the_alias() -> Result<()> {
        let plan = dml(WriteOp::Update, &["id", "v"], |scan| {
            scan.alias("x")?
                .project([col("x.id").alias("id"), col("x.v").alias("v")])
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Update] table=[t]
          Projection: x.id AS id, x.v AS v, x.id AS __old_value_0, x.v AS __old_value_1
            SubqueryAlias: x
              TableScan: t
        ")
    }

    #[test]
    fn reads_the_old_values_of_the_target_not_of_the_from() -> Result<()> {
        // UPDATE t SET v = d.v FROM d WHERE d.id = t.id: d has t's names
        let d = table_scan(Some("d"), &schema(&["id", "v"]), None)?.build()?;
        let plan = dml(WriteOp::Update, &["id", "v"], |scan| {
            scan.cross_join(d)?
                .filter(col("d.id").eq(col("t.id")))?
                .project([col("t.id").alias("id"), col("d.v").alias("v")])
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Update] table=[t]
          Projection: t.id AS id, d.v AS v, t.id AS __old_value_0, t.v AS __old_value_1
            Filter: d.id = t.id
              Cross Join:
                TableScan: t
                TableScan: d
        ")
    }

    #[test]
    fn reads_the_leftmost_scan_where_the_from_scans_the_target_again() -> Result<()> {
        // UPDATE t SET v = t2.v FROM t AS t2 WHERE t2.id = t.id + 1
        let again = table_scan(Some("t"), &schema(&["id", "v"]), None)?
            .alias("t2")?
            .build()?;
        let plan = dml(WriteOp::Update, &["id", "v"], |scan| {
            scan.cross_join(again)?
                .filter(col("t2.id").eq(col("t.id") + lit(1)))?
                .project([col("t.id").alias("id"), col("t2.v").alias("v")])
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Update] table=[t]
          Projection: t.id AS id, t2.v AS v, t.id AS __old_value_0, t.v AS __old_value_1
            Filter: t2.id = t.id + Int32(1)
              Cross Join:
                TableScan: t
                SubqueryAlias: t2
                  TableScan: t
        ")
    }

    #[test]
    fn old_value_names_avoid_the_target_columns() -> Result<()> {
        let plan = dml(WriteOp::Update, &["__old_value_x"], |scan| {
            scan.project([lit(0).alias("__old_value_x")])
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Update] table=[t]
          Projection: Int32(0) AS __old_value_x, t.__old_value_x AS ___old_value_0
            TableScan: t
        ")
    }

    #[test]
    fn leaves_a_delete() -> Result<()> {
        let plan = dml(WriteOp::Delete, &["id", "v"], |scan| {
            scan.filter(col("t.id").gt(lit(1)))
        })?;
        assert_optimized_plan_equal!(plan, @r"
        Dml: op=[Delete] table=[t]
          Filter: t.id > Int32(1)
            TableScan: t
        ")
    }
}
