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

//! The nullability of a scalar subquery.
//!
//! A scalar subquery that returns no row evaluates to `NULL`, whatever the
//! nullability of the column it selects: `(SELECT v FROM t WHERE false)` is
//! `NULL` even when `v` is `NOT NULL`. Taking the column's nullability as the
//! subquery's let the simplifier drop `IS NULL`, `IS NOT NULL` and
//! `coalesce` around it, and a non-nullable schema then held a `NULL`.
//!
//! The column's nullability holds only when the plan is known to return at
//! least one row, as an aggregate without `GROUP BY` does.

use crate::logical_plan::{LogicalPlan, Subquery};

/// Whether `subquery`, used as a scalar, can evaluate to `NULL`.
pub fn scalar_subquery_nullable(subquery: &Subquery) -> bool {
    let plan = subquery.subquery.as_ref();
    let column_nullable = plan
        .schema()
        .fields()
        .first()
        .is_none_or(|field| field.is_nullable());
    column_nullable || !returns_a_row(plan)
}

/// Whether `plan` returns at least one row, whatever its input holds.
fn returns_a_row(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Aggregate(aggregate) => aggregate.group_expr.is_empty(),
        LogicalPlan::EmptyRelation(empty) => empty.produce_one_row,
        LogicalPlan::Values(values) => !values.values.is_empty(),
        LogicalPlan::Sort(sort) if sort.fetch != Some(0) => returns_a_row(&sort.input),
        LogicalPlan::Projection(_)
        | LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Window(_) => plan.inputs().into_iter().all(returns_a_row),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::{Column, Result};

    use super::*;
    use crate::logical_plan::{LogicalPlanBuilder, table_scan};
    use crate::test::function_stub::count;
    use crate::{col, lit};

    /// `t(v INT NOT NULL)`
    fn scan() -> Result<LogicalPlanBuilder> {
        table_scan(
            Some("t"),
            &Schema::new(vec![Field::new("v", DataType::Int32, false)]),
            None,
        )
    }

    fn subquery(plan: LogicalPlanBuilder) -> Result<Subquery> {
        Ok(Subquery {
            subquery: Arc::new(plan.build()?),
            outer_ref_columns: vec![],
            spans: Default::default(),
        })
    }

    #[test]
    fn not_null_column_of_possibly_empty_plan_is_nullable() -> Result<()> {
        let filtered = scan()?
            .filter(col("v").gt(lit(1)))?
            .project(vec![col("v")])?;
        assert!(scalar_subquery_nullable(&subquery(filtered)?));
        assert!(scalar_subquery_nullable(&subquery(scan()?)?));
        Ok(())
    }

    #[test]
    fn ungrouped_aggregate_keeps_its_nullability() -> Result<()> {
        let aggregate = scan()?
            .filter(col("v").gt(lit(1)))?
            .aggregate(Vec::<crate::Expr>::new(), vec![count(col("v"))])?;
        let count_column =
            crate::Expr::Column(Column::from(aggregate.schema().qualified_field(0)));
        let counted = aggregate.project(vec![count_column])?;
        assert!(!scalar_subquery_nullable(&subquery(counted)?));
        Ok(())
    }

    #[test]
    fn filter_above_aggregate_may_remove_its_row() -> Result<()> {
        let aggregate =
            scan()?.aggregate(Vec::<crate::Expr>::new(), vec![count(col("v"))])?;
        let count_column =
            crate::Expr::Column(Column::from(aggregate.schema().qualified_field(0)));
        let having = aggregate.filter(count_column.gt(lit(1)))?;
        assert!(scalar_subquery_nullable(&subquery(having)?));

        let grouped = scan()?.aggregate(vec![col("v")], vec![count(col("v"))])?;
        assert!(scalar_subquery_nullable(&subquery(grouped)?));
        Ok(())
    }
}
