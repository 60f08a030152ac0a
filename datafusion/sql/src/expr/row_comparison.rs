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

//! Two rows compared: `(a, b) = (c, d)`, `<>`, `<`, `<=`, `>`, `>=`.
//!
//! SQL compares rows pair by pair, left to right, in three-valued logic:
//! two rows are equal when every pair is (`a = c AND b = d`), and `(a, b) <
//! (c, d)` is decided by the first pair that is not equal, NULL if that
//! pair holds a NULL. DataFusion planned a row as a struct, and structs
//! compare as values where NULL is a value: `(1, NULL) = (1, 2)` was false
//! and `(1, NULL) < (1, 2)` true, where SQL (and PostgreSQL) says NULL, so
//! `NOT ((k, v) = (1, 2))` kept rows it must not. A comparison of two rows
//! written as rows is planned here as what SQL defines it to be:
//!
//! ```text
//! (a1, ..., an) =  (b1, ..., bn)   a1 = b1 AND ... AND an = bn
//! (a1, ..., an) <> (b1, ..., bn)   a1 <> b1 OR ... OR an <> bn
//! (a1, ..., an) <  (b1, ..., bn)   a1 < b1 OR (a1 = b1 AND (a2 < b2 OR (... an < bn)))
//! ```
//!
//! with `<=` as `<` but for the last pair, and `>`, `>=` alike. A row in a
//! list of rows, `(a, b) IN ((1, 2), (3, 4))`, is the `OR` of its equality
//! with each (and `NOT IN` its negation), which struct semantics also got
//! wrong where a value is NULL. `r BETWEEN low AND high` over rows is
//! `r >= low AND r <= high` (and `NOT BETWEEN` its negation), each an
//! ordering of rows as above. A row may also be written `ROW(a, b)`,
//! which DataFusion otherwise plans as a struct (`row` is an alias of
//! `struct`). A struct value compared with a struct (`struct(a, b) = s`,
//! `ROW(a, b) = s`) keeps its struct semantics.

use std::sync::Arc;

use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{DFSchema, Result, Spans, internal_err, not_impl_err, plan_err};
use datafusion_expr::{
    Expr, LogicalPlanBuilder, Operator, Subquery, and, binary_expr, lit, or,
};
use sqlparser::ast::{
    BinaryOperator, Expr as SQLExpr, FunctionArg, FunctionArgExpr, FunctionArguments,
    Query, SelectItem, SetExpr,
};

use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

/// Whether `left op right` compares two rows written as rows, `(a, b)` or
/// `ROW(a, b)`.
pub(crate) fn is_row_comparison(
    left: &SQLExpr,
    op: &BinaryOperator,
    right: &SQLExpr,
) -> bool {
    // Rows of different lengths are left to the struct comparison, which
    // reports them as upstream does
    matches!((row_of_values(left), row_of_values(right)), (Some(left), Some(right))
        if left.len() == right.len())
        && comparison(op).is_some()
}

/// Whether `left op right` compares a row written as a row (`(a, b)` or
/// `ROW(a, b)`) with a row subquery, either way round.
pub(crate) fn is_row_subquery_comparison(
    left: &SQLExpr,
    op: &BinaryOperator,
    right: &SQLExpr,
) -> bool {
    let row_and_subquery = |row: &SQLExpr, subquery: &SQLExpr| {
        matches!(subquery, SQLExpr::Subquery(subquery)
            if is_row_compared_with_rows(row, subquery))
    };
    comparison(op).is_some()
        && (row_and_subquery(left, right) || row_and_subquery(right, left))
}

/// Whether `row` is a row written as a row that is compared with the rows
/// of `subquery` (by `=`, `IN`, `< ANY`, ...).
///
/// `ROW(a, b)` is also DataFusion's struct constructor (`row` is an alias
/// of `struct`). Compared with a subquery that selects one column, as in
/// `row(a, b) = ANY (SELECT s FROM t)`, it stays the struct value upstream
/// compares with that column (DuckDB's answer; PostgreSQL refuses the query).
pub(crate) fn is_row_compared_with_rows(row: &SQLExpr, subquery: &Query) -> bool {
    row_of_values(row).is_some()
        && !(matches!(row, SQLExpr::Function(_)) && selects_one_column(subquery))
}

/// Whether `query` returns one column, as far as its text says: its first
/// `SELECT` lists one expression, or its `VALUES` rows hold one value.
fn selects_one_column(query: &Query) -> bool {
    let mut body = query.body.as_ref();
    loop {
        match body {
            SetExpr::Select(select) => {
                return matches!(
                    select.projection.as_slice(),
                    [SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }]
                );
            }
            SetExpr::Values(values) => {
                return values.rows.first().is_some_and(|row| row.len() == 1);
            }
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(query) => body = query.body.as_ref(),
            _ => return false,
        }
    }
}

/// The values of a row of two or more written as a row: `(a, b)` or
/// `ROW(a, b)`. (`ROW(a)` is left to upstream, as the one-field struct
/// DataFusion makes of it.)
///
/// The values are borrowed: the planner asks this of every comparison it
/// meets, and cloning a deeply nested value each time needs a stack as
/// deep as the value, outside the planner's stack growth.
fn row_of_values(expr: &SQLExpr) -> Option<Vec<&SQLExpr>> {
    row_values(expr).filter(|values| values.len() > 1)
}

/// The values of a row written as a row: `(a, b)` or `ROW(a, b)`.
fn row_values(expr: &SQLExpr) -> Option<Vec<&SQLExpr>> {
    match expr {
        SQLExpr::Tuple(values) => Some(values.iter().collect()),
        SQLExpr::Function(function)
            if function.name.0.len() == 1
                && function.name.0[0]
                    .as_ident()
                    .is_some_and(|ident| ident.value.eq_ignore_ascii_case("row"))
                && function.over.is_none()
                && function.filter.is_none()
                && function.within_group.is_empty() =>
        {
            let FunctionArguments::List(list) = &function.args else {
                return None;
            };
            if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                return None;
            }
            list.args
                .iter()
                .map(|arg| match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Some(expr),
                    _ => None,
                })
                .collect()
        }
        _ => None,
    }
}

/// The values of `row`, taken out of it, where [`row_values`] finds them.
pub(super) fn into_row_values(row: SQLExpr) -> Option<Vec<SQLExpr>> {
    row_values(&row)?;
    match row {
        SQLExpr::Tuple(values) => Some(values),
        SQLExpr::Function(function) => match function.args {
            FunctionArguments::List(list) => list
                .args
                .into_iter()
                .map(|arg| match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Some(expr),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `expr IN (list)` looks for a row written as a row among rows
/// written as rows.
pub(crate) fn is_row_in_list(expr: &SQLExpr, list: &[SQLExpr]) -> bool {
    let Some(row) = row_of_values(expr) else {
        return false;
    };
    !list.is_empty()
        && list.iter().all(|other| {
            row_of_values(other).is_some_and(|other| other.len() == row.len())
        })
}

/// Whether `expr [NOT] BETWEEN low AND high` orders rows written as rows.
pub(crate) fn is_row_between(expr: &SQLExpr, low: &SQLExpr, high: &SQLExpr) -> bool {
    [expr, low, high]
        .into_iter()
        .all(|row| row_of_values(row).is_some())
}

/// The comparison `op` is, if it is one.
pub(super) fn comparison(op: &BinaryOperator) -> Option<Operator> {
    Some(match op {
        BinaryOperator::Eq => Operator::Eq,
        BinaryOperator::NotEq => Operator::NotEq,
        BinaryOperator::Lt => Operator::Lt,
        BinaryOperator::LtEq => Operator::LtEq,
        BinaryOperator::Gt => Operator::Gt,
        BinaryOperator::GtEq => Operator::GtEq,
        _ => return None,
    })
}

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `left op right`, two rows compared (see [`is_row_comparison`]).
    pub(super) fn plan_row_comparison(
        &self,
        left: SQLExpr,
        op: &BinaryOperator,
        right: SQLExpr,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let (Some(left), Some(right), Some(operator)) = (
            into_row_values(left),
            into_row_values(right),
            comparison(op),
        ) else {
            return plan_err!("{op} does not compare two rows");
        };
        if left.len() != right.len() {
            return plan_err!(
                "{op} compares a row of {} values with a row of {}",
                left.len(),
                right.len()
            );
        }
        let left = self.plan_values(left, schema, planner_context)?;
        let right = self.plan_values(right, schema, planner_context)?;
        if !matches!(operator, Operator::Eq | Operator::NotEq) {
            // Each pair but the last is compared twice
            refuse_volatile(left.iter().chain(&right), "ordered against a row")?;
        }
        compare_rows(left.into_iter().zip(right).collect(), operator)
    }

    /// `row [NOT] BETWEEN low AND high` (see [`is_row_between`]): `row >=
    /// low AND row <= high`, negated for `NOT BETWEEN`.
    pub(super) fn plan_row_between(
        &self,
        row: SQLExpr,
        low: SQLExpr,
        high: SQLExpr,
        negated: bool,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let (Some(row), Some(low), Some(high)) = (
            into_row_values(row),
            into_row_values(low),
            into_row_values(high),
        ) else {
            return plan_err!("BETWEEN does not order rows");
        };
        let row = self.plan_values(row, schema, planner_context)?;
        let low = self.plan_values(low, schema, planner_context)?;
        let high = self.plan_values(high, schema, planner_context)?;
        if low.len() != row.len() || high.len() != row.len() {
            return plan_err!(
                "BETWEEN orders a row of {} values between rows of {} and {}",
                row.len(),
                low.len(),
                high.len()
            );
        }
        // The row is read by both bounds' comparisons
        refuse_volatile(row.iter().chain(&low).chain(&high), "ordered by BETWEEN")?;
        let above_low =
            compare_rows(row.iter().cloned().zip(low).collect(), Operator::GtEq)?;
        let below_high =
            compare_rows(row.into_iter().zip(high).collect(), Operator::LtEq)?;
        let between = and(above_low, below_high);
        Ok(if negated {
            datafusion_expr::not(between)
        } else {
            between
        })
    }

    /// The planned `values` of a row.
    fn plan_values(
        &self,
        values: Vec<SQLExpr>,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Vec<Expr>> {
        values
            .into_iter()
            .map(|value| self.sql_expr_to_logical_expr(value, schema, planner_context))
            .collect()
    }
}

/// Refuses a volatile value (`random()`) in a row that the plan of its
/// comparison reads more than once, where SQL evaluates it once.
pub(super) fn refuse_volatile<'a>(
    values: impl IntoIterator<Item = &'a Expr>,
    form: &str,
) -> Result<()> {
    match values.into_iter().find(|value| value.is_volatile()) {
        Some(value) => not_impl_err!(
            "A volatile value in a row {form}: {value}; compute it in a \
             subquery or a CTE first"
        ),
        None => Ok(()),
    }
}

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `left op right`, a row compared with a row subquery (see
    /// [`is_row_subquery_comparison`]).
    ///
    /// The subquery returns one row, which the row is compared with; no row
    /// compares as a row of NULLs, so the comparison is NULL; a second row is
    /// an error. That is a scalar subquery of the comparison itself, the row's
    /// values read as outer references:
    ///
    /// ```text
    /// (a, b) < (SELECT x, y FROM s)   =>   (SELECT (a, b) < (x, y) FROM s)
    /// ```
    ///
    /// which evaluates the subquery once, unlike one scalar subquery per
    /// column, whose rows could differ where the subquery does not fix them
    /// (a `LIMIT` without an `ORDER BY`).
    pub(super) fn plan_row_subquery_comparison(
        &self,
        left: SQLExpr,
        op: &BinaryOperator,
        right: SQLExpr,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let Some(operator) = comparison(op) else {
            return plan_err!("{op} does not compare two rows");
        };
        let (row, subquery, row_on_left) = match (left, right) {
            (row, SQLExpr::Subquery(subquery)) => (row, subquery, true),
            (SQLExpr::Subquery(subquery), row) => (row, subquery, false),
            _ => return plan_err!("{op} does not compare a row with a subquery"),
        };
        let Some(values) = into_row_values(row) else {
            return plan_err!("{op} does not compare a row with a subquery");
        };
        let values = values
            .into_iter()
            .map(|value| {
                let value =
                    self.sql_expr_to_logical_expr(value, schema, planner_context)?;
                outer_value(value, schema)
            })
            .collect::<Result<Vec<_>>>()?;

        planner_context.append_outer_query_schema(Arc::new(schema.clone()));
        let plan = self.query_to_plan(*subquery, planner_context);
        planner_context.pop_outer_query_schema();
        let plan = plan?;
        let width = plan.schema().fields().len();
        if width != values.len() {
            return plan_err!(
                "{op} compares a row of {} values with a subquery of {width} columns",
                values.len()
            );
        }
        let pairs = values
            .into_iter()
            .zip(plan.schema().columns())
            .map(|(value, column)| {
                let column = Expr::Column(column);
                if row_on_left {
                    (value, column)
                } else {
                    (column, value)
                }
            })
            .collect();
        let compared = compare_rows(pairs, operator)?;
        let plan = LogicalPlanBuilder::from(plan)
            .project([compared])?
            .build()?;
        Ok(Expr::ScalarSubquery(Subquery {
            outer_ref_columns: plan.all_out_ref_exprs(),
            subquery: Arc::new(plan),
            spans: Spans::new(),
        }))
    }

    /// `row [NOT] IN (rows)` (see [`is_row_in_list`]).
    pub(super) fn plan_row_in_list(
        &self,
        row: SQLExpr,
        list: Vec<SQLExpr>,
        negated: bool,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let Some(values) = into_row_values(row) else {
            return plan_err!("IN does not look for a row");
        };
        let values = self.plan_values(values, schema, planner_context)?;
        if list.len() > 1 {
            // The row is compared with each row of the list
            refuse_volatile(&values, "in a list of rows")?;
        }
        let mut equal_to_any = None;
        for other in list {
            let other = into_row_values(other)
                .filter(|other| other.len() == values.len())
                .map_or_else(
                    || plan_err!("IN looks for a row of {} values", values.len()),
                    |other| self.plan_values(other, schema, planner_context),
                )?;
            let equal =
                compare_rows(values.iter().cloned().zip(other).collect(), Operator::Eq)?;
            equal_to_any = Some(match equal_to_any {
                None => equal,
                Some(so_far) => or(so_far, equal),
            });
        }
        let Some(equal_to_any) = equal_to_any else {
            return plan_err!("IN compares a row with an empty list");
        };
        Ok(if negated {
            datafusion_expr::not(equal_to_any)
        } else {
            equal_to_any
        })
    }
}

/// The rows of `pairs` compared by `operator`, as SQL defines it.
pub(super) fn compare_rows(
    mut pairs: Vec<(Expr, Expr)>,
    operator: Operator,
) -> Result<Expr> {
    let compare =
        |(left, right): (Expr, Expr), operator| binary_expr(left, operator, right);
    let Some(last) = pairs.pop() else {
        return internal_err!("a row compared with a row of no values");
    };
    Ok(match operator {
        Operator::Eq => pairs
            .into_iter()
            .chain([last])
            .map(|pair| compare(pair, Operator::Eq))
            .reduce(and)
            .unwrap_or_else(|| lit(true)),
        Operator::NotEq => pairs
            .into_iter()
            .chain([last])
            .map(|pair| compare(pair, Operator::NotEq))
            .reduce(or)
            .unwrap_or_else(|| lit(false)),
        ordering => {
            // The last pair decides with the operator itself (`<=` holds
            // for equal rows); each one before it with its strict form,
            // or by being equal and leaving it to the pairs after it
            let strict = match ordering {
                Operator::LtEq => Operator::Lt,
                Operator::GtEq => Operator::Gt,
                other => other,
            };
            let mut decided = compare(last, ordering);
            while let Some(pair) = pairs.pop() {
                let before = compare(pair.clone(), strict);
                let equal = compare(pair, Operator::Eq);
                decided = or(before, and(equal, decided));
            }
            decided
        }
    })
}

/// `value`, of the query level `schema`, as the subquery it is compared in
/// reads it: its columns as outer references. A value that holds an
/// aggregate, a window function or a subquery is refused: it would be
/// computed inside the subquery.
fn outer_value(value: Expr, schema: &DFSchema) -> Result<Expr> {
    let mut computed_inside = false;
    value.apply(|e| {
        computed_inside |= matches!(
            e,
            Expr::AggregateFunction(_)
                | Expr::WindowFunction(_)
                | Expr::ScalarSubquery(_)
                | Expr::InSubquery(_)
                | Expr::Exists(_)
                | Expr::SetComparison(_)
        );
        Ok(TreeNodeRecursion::Continue)
    })?;
    if computed_inside {
        return not_impl_err!(
            "A row compared with a row subquery whose values hold an aggregate, \
             a window function or a subquery; compare the subquery's columns one \
             by one instead"
        );
    }
    // The subquery reads it in a comparison of rows, and the rows of the
    // plan it is decorrelated into
    refuse_volatile([&value], "compared with a row subquery")?;
    crate::name_scopes::as_outer_reference(value, schema)
}

#[cfg(test)]
mod tests {
    use datafusion_expr::col;

    use super::*;

    fn pairs() -> Vec<(Expr, Expr)> {
        vec![(col("a"), lit(1)), (col("b"), lit(2))]
    }

    #[test]
    fn equal_rows_are_equal_pairs() {
        assert_eq!(
            compare_rows(pairs(), Operator::Eq).unwrap().to_string(),
            "a = Int32(1) AND b = Int32(2)"
        );
        assert_eq!(
            compare_rows(pairs(), Operator::NotEq).unwrap().to_string(),
            "a != Int32(1) OR b != Int32(2)"
        );
    }

    #[test]
    fn ordered_rows_are_decided_by_the_first_unequal_pair() {
        assert_eq!(
            compare_rows(pairs(), Operator::Lt).unwrap().to_string(),
            "a < Int32(1) OR a = Int32(1) AND b < Int32(2)"
        );
        assert_eq!(
            compare_rows(pairs(), Operator::GtEq).unwrap().to_string(),
            "a > Int32(1) OR a = Int32(1) AND b >= Int32(2)"
        );
        assert_eq!(
            compare_rows(vec![(col("a"), lit(1))], Operator::LtEq)
                .unwrap()
                .to_string(),
            "a <= Int32(1)"
        );
    }
}
