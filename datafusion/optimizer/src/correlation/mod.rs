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

//! What a correlated subquery reads from outside it, and how those reads are
//! rewritten: the vocabulary that upstream's shape-specific decorrelation
//! rules and the dependent join share.
//!
//! A subquery reads an *outer column* through an
//! [`Expr::OuterReferenceColumn`]; its *free* outer columns are those no
//! operator inside it provides (a `LATERAL` join inside a subquery provides
//! its left side's columns to its right side). This module and those below
//! it ask such questions of a plan and make the small rewrites both
//! families of rules need (an outer reference replaced by a column, a
//! subquery's outputs named apart, a `LATERAL` item's filters moved), but
//! never rewrite a subquery into a join, so that both can import them:
//!
//! - [`handoff`]: which subqueries upstream's rules leave to
//!   [`DecorrelateSubqueries`], the one contract between the two;
//! - [`lateral`]: the shape of a `LATERAL` join's right side;
//! - [`naming`]: subquery outputs named apart from the outer columns, where
//!   upstream's joins would confuse the two.
//!
//! [`DecorrelateSubqueries`]: crate::decorrelate_subqueries::DecorrelateSubqueries

pub(crate) mod handoff;
pub(crate) mod lateral;
pub(crate) mod naming;

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{Column, DFSchema, DFSchemaRef, Result, plan_err};
use datafusion_expr::expr_rewriter::NamePreserver;
use datafusion_expr::logical_plan::{Aggregate, JoinType, Subquery};
use datafusion_expr::subquery_exprs::{map_subquery_of, subquery_of};
use datafusion_expr::{BinaryExpr, Expr, LogicalPlan, Operator};

use self::lateral::lateral_side;

/// Stops a tree walk once `found` holds.
/// The sides of a join of `join_type` whose rows make its output whether or
/// not they match, `(left, right)`: the preserved side of a left or right
/// join, both sides of a full join, and the side a semi, anti, mark or
/// single join returns; neither of an inner join. A side that is not one
/// of them may be NULL-padded (or is only read); a filter on it cannot
/// move across the join, and a dependent join must tag it only where it
/// reads outer columns.
pub(crate) fn outer_sides(join_type: JoinType) -> (bool, bool) {
    match join_type {
        JoinType::Inner => (false, false),
        JoinType::Left
        | JoinType::LeftSemi
        | JoinType::LeftAnti
        | JoinType::LeftMark
        | JoinType::LeftSingle => (true, false),
        JoinType::Right
        | JoinType::RightSemi
        | JoinType::RightAnti
        | JoinType::RightMark
        | JoinType::RightSingle => (false, true),
        JoinType::Full => (true, true),
    }
}

/// The two readings of an equality `a = b`, `(a, b)` and `(b, a)`, so that
/// a caller matches its shape (`inner = outer_ref(c)`) either way round;
/// none for any other expression.
pub(crate) fn equality_sides(expr: &Expr) -> impl Iterator<Item = (&Expr, &Expr)> {
    let sides = match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => Some([
            (left.as_ref(), right.as_ref()),
            (right.as_ref(), left.as_ref()),
        ]),
        _ => None,
    };
    sides.into_iter().flatten()
}

pub(crate) fn stop_when(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
}

/// The outer columns `plan` reads from outside it: its own outer
/// references, and those of its subqueries that no operator between
/// provides.
pub(crate) fn free_outer_columns(plan: &LogicalPlan) -> Result<BTreeSet<Column>> {
    let mut free = BTreeSet::new();
    plan.apply(|node| {
        match node {
            // A lateral subquery reads its outer columns from the join above
            // it, which takes them out below
            LogicalPlan::Subquery(_) => return Ok(TreeNodeRecursion::Jump),
            LogicalPlan::Join(join) => {
                if let Some(lateral) = lateral_side(&join.right) {
                    let provided = join.left.schema();
                    for column in free_outer_columns(&lateral.subquery)? {
                        if !provided.has_column(&column) {
                            free.insert(column);
                        }
                    }
                }
            }
            _ => {}
        }
        node.apply_expressions(|expr| {
            expr.apply(|expr| {
                if let Expr::OuterReferenceColumn(_, column) = expr {
                    free.insert(column.clone());
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })?;
        free.extend(read_past_inputs(node)?);
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(free)
}

/// The outer columns the subqueries in `node`'s own expressions read that
/// no input of `node` provides: those they read from beyond `node`.
pub(crate) fn read_past_inputs(node: &LogicalPlan) -> Result<BTreeSet<Column>> {
    let provided: Vec<&DFSchema> = node
        .inputs()
        .iter()
        .map(|input| input.schema().as_ref())
        .collect();
    let mut past = BTreeSet::new();
    node.apply_expressions(|expr| {
        expr.apply(|expr| {
            if let Some(subquery) = subquery_of(expr) {
                for column in free_outer_columns(&subquery.subquery)? {
                    if !provided.iter().any(|schema| schema.has_column(&column)) {
                        past.insert(column);
                    }
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
    })?;
    Ok(past)
}

/// The columns of `input_schemas` that `subquery` reads as outer columns,
/// at any depth.
pub(crate) fn correlated_columns(
    subquery: &Subquery,
    input_schemas: &[&DFSchema],
) -> Result<Vec<Column>> {
    Ok(free_outer_columns(&subquery.subquery)?
        .into_iter()
        .filter(|column| input_schemas.iter().any(|schema| schema.has_column(column)))
        .collect())
}

/// The columns of `input` that `plan` reads as outer columns.
pub(crate) fn correlated_in_plan(
    plan: &LogicalPlan,
    input: &LogicalPlan,
) -> Result<Vec<Column>> {
    let schema = input.schema();
    Ok(free_outer_columns(plan)?
        .into_iter()
        .filter(|column| schema.has_column(column))
        .collect())
}

/// Whether `input` holds an outer reference, other than in a lateral
/// subquery (which a join inside `input` binds).
pub(crate) fn correlated_below(input: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    input.apply(|plan| {
        if matches!(plan, LogicalPlan::Subquery(_)) {
            return Ok(TreeNodeRecursion::Jump);
        }
        found = plan.contains_outer_reference();
        Ok(stop_when(found))
    })?;
    Ok(found)
}

/// Whether `plan`, or a subquery in it, holds an outer reference to one of
/// `columns`.
pub(crate) fn reads_columns(plan: &LogicalPlan, columns: &[Column]) -> Result<bool> {
    plan.exists(|node| {
        let mut found = false;
        node.apply_expressions(|expr| {
            found = expr_reads_columns(expr, columns)?;
            Ok(stop_when(found))
        })?;
        Ok(found)
    })
}

/// Whether `expr`, or a subquery in it, holds an outer reference to one of
/// `columns`.
pub(crate) fn expr_reads_columns(expr: &Expr, columns: &[Column]) -> Result<bool> {
    expr.exists(|expr| match (expr, subquery_of(expr)) {
        (Expr::OuterReferenceColumn(_, column), _) => Ok(columns.contains(column)),
        (_, Some(subquery)) => reads_columns(&subquery.subquery, columns),
        _ => Ok(false),
    })
}

/// `expr` with each outer reference that `replacement` maps replaced by the
/// expression it gives. Inside a subquery in `expr`, where an outer
/// reference stays one, it is replaced by an outer reference to the column
/// `replacement` gives, unless a column of `scope` (the inputs of the
/// operator holding `expr`), or of an operator between, shadows it.
pub(crate) fn replace_outer(
    expr: &Expr,
    replacement: &dyn Fn(&Column) -> Option<Expr>,
    scope: &[DFSchemaRef],
) -> Result<Expr> {
    expr.clone()
        .transform_up(|expr| match expr {
            Expr::OuterReferenceColumn(_, ref column) => match replacement(column) {
                Some(new) => Ok(Transformed::yes(new)),
                None => Ok(Transformed::no(expr)),
            },
            other => map_subquery_of(other, |subquery| {
                replace_in_subquery(subquery, replacement, scope)
            }),
        })
        .data()
}

/// `subquery` with its outer references replaced as [`replace_outer`] says.
pub(crate) fn replace_in_subquery(
    subquery: Subquery,
    replacement: &dyn Fn(&Column) -> Option<Expr>,
    scope: &[DFSchemaRef],
) -> Result<Transformed<Subquery>> {
    let transformed = subquery.subquery.as_ref().clone().transform_up(|node| {
        // A subquery deeper down sees this operator's inputs first
        let mut inner_scope = scope.to_vec();
        inner_scope.extend(node.inputs().iter().map(|input| Arc::clone(input.schema())));
        // An expression keeps its name: the operators above read the
        // aggregate `min(t.v + outer_ref(o.v))` by that name, not by the name
        // it has once it reads a tag
        let names = NamePreserver::new(&node);
        node.map_expressions(|expr| {
            let name = names.save(&expr);
            expr.transform_up(|expr| match expr {
                Expr::OuterReferenceColumn(ref field, ref column)
                    if !scope.iter().any(|schema| schema.has_column(column)) =>
                {
                    match replacement(column) {
                        Some(Expr::Column(new)) => Ok(Transformed::yes(
                            Expr::OuterReferenceColumn(Arc::clone(field), new),
                        )),
                        _ => Ok(Transformed::no(expr)),
                    }
                }
                other => map_subquery_of(other, |subquery| {
                    replace_in_subquery(subquery, replacement, &inner_scope)
                }),
            })
            .map(|expr| expr.update_data(|expr| name.restore(expr)))
        })
    })?;
    if !transformed.transformed {
        return Ok(Transformed::no(subquery));
    }
    let plan = transformed.data;
    let outer_ref_columns = plan.all_out_ref_exprs();
    Ok(Transformed::yes(Subquery {
        subquery: Arc::new(plan),
        outer_ref_columns,
        spans: subquery.spans,
    }))
}

/// The first aggregate of `aggregate`, in a subquery, whose arguments read
/// outer columns only, such as `sum(o.x)` in `(SELECT sum(o.x))`: SQL
/// makes it an aggregate of the outer query. The SQL planner computes those
/// there; one built otherwise is refused ([`refuse_outer_aggregates`]).
pub(crate) fn outer_only_aggregate(aggregate: &Aggregate) -> Result<Option<&Expr>> {
    for expr in &aggregate.aggr_expr {
        let (mut outer, mut inner) = (false, false);
        expr.apply(|expr| {
            match expr {
                Expr::OuterReferenceColumn(..) => outer = true,
                Expr::Column(_) => inner = true,
                // Columns of a nested subquery are its own
                _ if subquery_of(expr).is_some() => return Ok(TreeNodeRecursion::Jump),
                _ => {}
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        if outer && !inner {
            return Ok(Some(expr));
        }
    }
    Ok(None)
}

/// Refuses an aggregate that computes an aggregate of outer columns only
/// ([`outer_only_aggregate`]), which the plan here cannot express.
pub(crate) fn refuse_outer_aggregates(aggregate: &Aggregate) -> Result<()> {
    let Some(expr) = outer_only_aggregate(aggregate)? else {
        return Ok(());
    };
    // Once a dependent join has replaced the outer columns by its own, the
    // aggregate's text is not the user's
    let name = expr.schema_name().to_string();
    let aggregate = if name.contains("__") {
        "An aggregate".to_string()
    } else {
        format!("Aggregate {name}")
    };
    plan_err!(
        "{aggregate} in a subquery reads only outer columns: SQL evaluates it in \
         the outer query, which is not supported"
    )
}
