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
//! and the physical planner handle like any `SELECT` list's; the analyzer
//! coerces the rows of the union to common types as `VALUES` does.
//!
//! [`Values`]: datafusion_expr::logical_plan::Values

use std::sync::Arc;

use datafusion_common::{DFSchema, Result, plan_err};
use datafusion_expr::logical_plan::Union;
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder};

/// Whether a row of `values` holds a subquery.
pub(crate) fn values_hold_subquery(values: &[Vec<Expr>]) -> bool {
    values.iter().flatten().any(contains_subquery)
}

/// `values` as a union of one-row projections; its columns named and typed
/// as `schema` says (an `INSERT`'s target), or `column1`, `column2`, ... as
/// `VALUES` names them where `schema` has no field.
pub(crate) fn values_as_union(
    values: Vec<Vec<Expr>>,
    schema: &DFSchema,
) -> Result<LogicalPlan> {
    let width = values.first().map_or(0, Vec::len);
    if values.iter().any(|row| row.len() != width) {
        return plan_err!("Inconsistent data length across values list");
    }
    if !schema.fields().is_empty() && schema.fields().len() != width {
        return plan_err!(
            "Inconsistent data length across values list: got {width} values in a row \
             but expected {}",
            schema.fields().len()
        );
    }
    let empty = DFSchema::empty();
    let mut rows = values
        .into_iter()
        .map(|row| {
            let exprs = row
                .into_iter()
                .enumerate()
                .map(|(index, expr)| {
                    if schema.fields().is_empty() {
                        Ok(expr.alias(format!("column{}", index + 1)))
                    } else {
                        let field = schema.field(index);
                        Ok(expr.cast_to(field.data_type(), &empty)?.alias(field.name()))
                    }
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
