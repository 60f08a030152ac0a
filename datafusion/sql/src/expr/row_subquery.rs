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

//! A row compared with a subquery: `(a, b) IN (SELECT x, y FROM t)`,
//! `(a, b) NOT IN (...)`, `(a, b) < ANY (...)`, `ROW(a, b) >= ALL (...)`.
//!
//! DataFusion's subquery expressions ([`InSubquery`], [`SetComparison`])
//! compare one value with a one-column subquery, so a row on the left is
//! planned as what SQL defines it to be. Two rows compare pair by pair (see
//! [`row_comparison`](super::row_comparison): `(a, b) = (x, y)` is `a = x
//! AND b = y`, `(a, b) < (x, y)` is decided by the first pair that is not
//! equal), and `r op ANY (S)` is the `OR` of `r op s` over the rows `s` of
//! `S`: true when some comparison is true, otherwise NULL when some is NULL,
//! otherwise false (also for an empty `S`). `r op ALL (S)` is the `AND`:
//! false when some comparison is false, otherwise NULL when some is NULL,
//! otherwise true. Each is written with two `EXISTS`:
//!
//! ```text
//! r op ANY (S)   CASE WHEN EXISTS (SELECT 1 FROM S WHERE r op s) THEN true
//!                     WHEN EXISTS (SELECT 1 FROM S WHERE (r op s) IS NULL) THEN NULL
//!                     ELSE false END
//! r op ALL (S)   CASE WHEN EXISTS (SELECT 1 FROM S WHERE NOT (r op s)) THEN false
//!                     WHEN EXISTS (SELECT 1 FROM S WHERE (r op s) IS NULL) THEN NULL
//!                     ELSE true END
//! ```
//!
//! `r IN (S)` is `r = ANY (S)`; `r NOT IN (S)` and `r <> ALL (S)` are its
//! negation (`NOT` of an `OR` over the rows is the `AND` of `r <> s`). The
//! values of `r` become outer references of both `EXISTS`, which the
//! optimizer decorrelates as it does any correlated `EXISTS`, so `S` may be
//! correlated itself.
//!
//! [`InSubquery`]: datafusion_expr::expr::InSubquery
//! [`SetComparison`]: datafusion_expr::expr::SetComparison

use super::row_comparison::{compare_rows, comparison, into_row_values, refuse_volatile};
use crate::planner::{ContextProvider, PlannerContext, SqlToRel};
use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{DFSchema, Result, ScalarValue, Spans, not_impl_err, plan_err};
use datafusion_expr::expr::{Exists, SetQuantifier};
use datafusion_expr::{
    Expr, LogicalPlan, LogicalPlanBuilder, Operator, Subquery, lit, not, when,
};
use sqlparser::ast::{BinaryOperator, Expr as SQLExpr, Query};
use std::sync::Arc;

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `(v1, ..., vn) [NOT] IN (subquery)`.
    pub(super) fn parse_row_in_subquery(
        &self,
        row: SQLExpr,
        subquery: Query,
        negated: bool,
        input_schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let written = if negated { "NOT IN" } else { "IN" };
        let Some(row) = into_row_values(row) else {
            return plan_err!("{written} does not compare a row with a subquery");
        };
        let equal_to_any = self.row_compared_with_each(
            row,
            subquery,
            Operator::Eq,
            SetQuantifier::Any,
            written,
            input_schema,
            planner_context,
        )?;
        Ok(if negated {
            not(equal_to_any)
        } else {
            equal_to_any
        })
    }

    /// `(v1, ..., vn) <op> ANY | ALL (subquery)`.
    pub(super) fn parse_row_set_comparison_subquery(
        &self,
        row: SQLExpr,
        subquery: Query,
        compare_op: &BinaryOperator,
        quantifier: SetQuantifier,
        input_schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let Some(operator) = comparison(compare_op) else {
            return not_impl_err!(
                "A row compared with a subquery by {compare_op} {quantifier}: \
                 a row is compared by =, <>, <, <=, > or >="
            );
        };
        let written = format!("{compare_op} {quantifier}");
        let Some(row) = into_row_values(row) else {
            return plan_err!("{written} does not compare a row with a subquery");
        };
        match (operator, quantifier) {
            // `NOT IN`, as the module doc says
            (Operator::NotEq, SetQuantifier::All) => Ok(not(self
                .row_compared_with_each(
                    row,
                    subquery,
                    Operator::Eq,
                    SetQuantifier::Any,
                    &written,
                    input_schema,
                    planner_context,
                )?)),
            (operator, quantifier) => self.row_compared_with_each(
                row,
                subquery,
                operator,
                quantifier,
                &written,
                input_schema,
                planner_context,
            ),
        }
    }

    /// `row <operator> ANY | ALL (subquery)`, as the module doc writes it;
    /// `written` is the comparison as the SQL wrote it, for errors.
    #[expect(clippy::too_many_arguments)]
    fn row_compared_with_each(
        &self,
        row: Vec<SQLExpr>,
        subquery: Query,
        operator: Operator,
        quantifier: SetQuantifier,
        written: &str,
        input_schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        planner_context.append_outer_query_schema(Arc::new(input_schema.clone()));
        let planned = self.query_to_plan(subquery, planner_context);
        planner_context.pop_outer_query_schema();
        let sub_plan = apart_from(planned?, input_schema)?;

        let columns = sub_plan.schema().columns();
        if columns.len() != row.len() {
            return plan_err!(
                "{written} compares a row of {} values with a subquery of {} column{}",
                row.len(),
                columns.len(),
                if columns.len() == 1 { "" } else { "s" }
            );
        }
        let mut pairs = Vec::with_capacity(row.len());
        for (value, column) in row.into_iter().zip(columns) {
            let value = self.sql_to_expr(value, input_schema, planner_context)?;
            pairs.push((
                as_outer_reference(value, input_schema)?,
                Expr::Column(column),
            ));
        }
        let compared = compare_rows(pairs, operator)?;

        let some_unknown = exists_where(&sub_plan, compared.clone().is_null())?;
        match quantifier {
            SetQuantifier::Any => {
                let some_true = exists_where(&sub_plan, compared)?;
                when(some_true, lit(true))
                    .when(some_unknown, lit(ScalarValue::Boolean(None)))
                    .otherwise(lit(false))
            }
            SetQuantifier::All => {
                let some_false = exists_where(&sub_plan, not(compared))?;
                when(some_false, lit(false))
                    .when(some_unknown, lit(ScalarValue::Boolean(None)))
                    .otherwise(lit(true))
            }
        }
    }
}

/// A value of the outer query, as the subquery sees it: its columns become
/// outer references. A subquery inside the value would be nested one level
/// deeper than the user wrote it, and an aggregate or a window function
/// would be hidden from the outer query that computes it: both are refused.
fn as_outer_reference(value: Expr, outer_schema: &DFSchema) -> Result<Expr> {
    if value.exists(|e| {
        Ok(matches!(
            e,
            Expr::ScalarSubquery(_)
                | Expr::Exists(_)
                | Expr::InSubquery(_)
                | Expr::SetComparison(_)
        ))
    })? {
        return not_impl_err!(
            "A subquery inside a row compared with a subquery: {value}"
        );
    }
    if value.exists(|e| {
        Ok(matches!(
            e,
            Expr::AggregateFunction(_) | Expr::WindowFunction(_)
        ))
    })? {
        return not_impl_err!(
            "An aggregate or window function inside a row compared with a subquery: {value}"
        );
    }
    // Each `EXISTS` reads it, for each row of the subquery
    refuse_volatile([&value], "compared with a subquery")?;
    value
        .transform_up(|e| match e {
            Expr::Column(column) => {
                let (_, field) = outer_schema.qualified_field_from_column(&column)?;
                Ok(Transformed::yes(Expr::OuterReferenceColumn(
                    Arc::clone(field),
                    column,
                )))
            }
            other => Ok(Transformed::no(other)),
        })
        .map(|transformed| transformed.data)
}

/// `sub_plan` with columns whose names no column of the outer query has.
///
/// The row's values become outer references that the `EXISTS` compares
/// with the subquery's columns, and decorrelation turns outer references
/// back into plain columns of a join: in `(f1, f2) IN (SELECT f2, f1 FROM
/// s)` over the same `s`, `s.f1 = s.f2` would then read one side twice.
/// SQL itself never makes such a reference (a subquery's `s` hides the outer
/// one); this planner does, so it renames the subquery's columns where
/// they clash.
fn apart_from(sub_plan: LogicalPlan, outer_schema: &DFSchema) -> Result<LogicalPlan> {
    let clashes = sub_plan
        .schema()
        .columns()
        .iter()
        .any(|column| outer_schema.has_column(column));
    if !clashes {
        return Ok(sub_plan);
    }
    LogicalPlanBuilder::from(sub_plan)
        .alias("__row_subquery")?
        .build()
}

/// `EXISTS (SELECT 1 FROM <sub_plan> WHERE <predicate>)`.
fn exists_where(sub_plan: &LogicalPlan, predicate: Expr) -> Result<Expr> {
    let plan = LogicalPlanBuilder::from(sub_plan.clone())
        .filter(predicate)?
        .project(vec![lit(1)])?
        .build()?;
    let outer_ref_columns = plan.all_out_ref_exprs();
    Ok(Expr::Exists(Exists::new(
        Subquery {
            subquery: Arc::new(plan),
            outer_ref_columns,
            spans: Spans::new(),
        },
        false,
    )))
}
