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

//! `VALUES` rows that hold a subquery, `VALUES ((SELECT max(x) FROM t)), (5)`,
//! planned as a `UNION ALL` of one-row `SELECT`s.
//!
//! A [`Values`] node evaluates its expressions when it is planned, before
//! any subquery has run, and no optimizer rule decorrelates a subquery in
//! it: an uncorrelated scalar subquery failed with an internal error and a
//! correlated one (in a `LATERAL (VALUES ...)`) was refused by the
//! analyzer. `SELECT e1 AS column1, ... ` over the one row of an empty
//! relation is the same row, in an operator whose subqueries the optimizer
//! and the physical planner handle like any `SELECT` list's. Each value is
//! cast to the type the `Values` node of the same rows would give its
//! column, so the rows keep `VALUES`' types (`VALUES ((SELECT 10)), ('9')`
//! is a column of integers, as `VALUES (10), ('9')` is).
//!
//! [`Values`]: datafusion_expr::logical_plan::Values

use std::sync::Arc;

use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{DFSchema, DFSchemaRef, Result, ScalarValue};
use datafusion_expr::logical_plan::Union;
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, lit};

/// Whether a row of `values` holds a subquery.
pub(crate) fn values_hold_subquery(values: &[Vec<Expr>]) -> bool {
    values.iter().flatten().any(contains_subquery)
}

/// `values` as a union of one-row projections, its columns named and typed
/// as the `Values` node of the same rows would be: by `schema` (an
/// `INSERT`'s target) where it has fields, else `column1`, `column2`, ...
/// of the types `VALUES` coerces its rows to.
pub(crate) fn values_as_union(
    values: Vec<Vec<Expr>>,
    schema: &DFSchemaRef,
) -> Result<LogicalPlan> {
    let typed = values_of_types(&values, schema)?;
    let fields = typed.schema().fields().clone();
    let empty = DFSchema::empty();
    let mut rows = values
        .into_iter()
        .map(|row| {
            let exprs = row
                .into_iter()
                .zip(fields.iter())
                .map(|(expr, field)| {
                    Ok(expr.cast_to(field.data_type(), &empty)?.alias(field.name()))
                })
                .collect::<Result<Vec<_>>>()?;
            LogicalPlanBuilder::empty(true).project(exprs)?.build()
        })
        .collect::<Result<Vec<_>>>()?;
    if rows.len() == 1 {
        return Ok(rows.remove(0));
    }
    Ok(LogicalPlan::Union(Union::try_new_with_loose_types(
        rows.into_iter().map(Arc::new).collect(),
    )?))
}

/// The `Values` node of `values` with each subquery in them replaced by a
/// `NULL` of its type: it checks the rows' widths and gives the names and
/// types `VALUES` would.
fn values_of_types(values: &[Vec<Expr>], schema: &DFSchemaRef) -> Result<LogicalPlan> {
    let empty = DFSchema::empty();
    let placeholders = values
        .iter()
        .map(|row| {
            row.iter()
                .map(|expr| {
                    expr.clone()
                        .transform_down(|expr| {
                            if !matches!(
                                expr,
                                Expr::ScalarSubquery(_)
                                    | Expr::Exists(_)
                                    | Expr::InSubquery(_)
                                    | Expr::SetComparison(_)
                            ) {
                                return Ok(Transformed::no(expr));
                            }
                            let null = ScalarValue::try_from(expr.get_type(&empty)?)?;
                            Ok(Transformed::new(lit(null), true, TreeNodeRecursion::Jump))
                        })
                        .data()
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    if schema.fields().is_empty() {
        LogicalPlanBuilder::values(placeholders)?.build()
    } else {
        LogicalPlanBuilder::values_with_schema(placeholders, schema)?.build()
    }
}
