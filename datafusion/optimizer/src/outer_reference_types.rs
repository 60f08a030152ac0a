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

//! The types of a subquery's outer references, as type coercion made the
//! outer query's columns.
//!
//! An outer reference carries the field of the column it reads as the SQL
//! planner saw it, before type coercion. Where coercion gives the column
//! another type, the reference keeps the planner's: `cardinality(a) * k`
//! (`UInt64 * Int32`) is typed `Decimal128(20, 0)` by the planner and
//! `Decimal128(38, 0)` once its operands are cast to decimals. Coerced
//! against the stale type, `x2.k >= x1.e` in a subquery became
//! `CAST(x2.k AS Decimal128(20, 0)) >= x1.e`, and once decorrelated, with the
//! reference replaced by the column, the comparison failed at run time
//! (`Invalid comparison operation: Decimal128(38, 0) >= Decimal128(20, 0)`;
//! DataFusion 55.2.0 too, found by the PostgreSQL differential).
//!
//! Type coercion coerces a subquery's nodes before the outer query's (with
//! no outer schema), then meets the subquery again at the outer node that
//! holds it, with the outer query coerced. There, each outer reference of
//! the subquery takes the type of the column it reads, in the nearest
//! enclosing level that has it (a subquery nested in the subquery sees its
//! enclosing node's inputs first), and each node whose references changed
//! type is coerced again (a cast over the stale cast, chosen against the
//! coerced type), as is each node above it, whose expressions may compare
//! a column that now has the new type.
//!
//! A `LATERAL` item is an input of its join, not an expression, so coercion
//! never meets it as a subquery: its outer references are retyped at the
//! join instead, as the join's coerced left side has the columns they read
//! ([`with_lateral_reference_types`]).

use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{DFSchema, Result};
use datafusion_expr::utils::merge_schema;
use datafusion_expr::{Expr, Join, LogicalPlan};

/// Type coercion of one node of a subquery, given the schema of the levels
/// around the subquery (the analyzer's `analyze_internal`).
pub(crate) type CoerceNode =
    fn(&DFSchema, LogicalPlan) -> Result<Transformed<LogicalPlan>>;

/// `subquery` with each outer reference typed as `outer_schema`, the
/// coerced schema of the levels around it (nearest first), has the column
/// it reads, and each node whose references or inputs changed type coerced
/// again by `coerce`.
pub(crate) fn with_outer_reference_types(
    subquery: LogicalPlan,
    outer_schema: &DFSchema,
    coerce: CoerceNode,
) -> Result<Transformed<LogicalPlan>> {
    if outer_schema.fields().is_empty() {
        return Ok(Transformed::no(subquery));
    }
    let node = match subquery {
        LogicalPlan::Join(join) => join_inputs_retyped(join, outer_schema, coerce)?,
        node => node.map_children(|input| {
            with_outer_reference_types(input, outer_schema, coerce)
        })?,
    };
    let inputs_changed = node.transformed;
    // The subqueries in the node's expressions see its inputs first
    let mut nearer = merge_schema(&node.data.inputs());
    nearer.merge(outer_schema);
    let node = node
        .data
        .map_subqueries(|nested| with_outer_reference_types(nested, &nearer, coerce))?;
    let nested_changed = node.transformed;
    let retyped = retyped_references(node.data, outer_schema)?;
    if retyped.transformed || inputs_changed || nested_changed {
        // Coerced again against the new types, of its references or of its
        // inputs' columns (`CAST(x2.w AS Decimal128(20, 0)) = s`, where `s`
        // is a reference below that is now `Decimal128(21, 0)`); coercion
        // recomputes the node's schema too
        Ok(Transformed::yes(coerce(outer_schema, retyped.data)?.data))
    } else {
        Ok(Transformed::no(retyped.data))
    }
}

/// `plan`, where it is a join, with the outer references of each `LATERAL`
/// item on its right side typed as its coerced left side, or else
/// `outer_schema` (the levels around the join), has the columns they read.
/// Left with the planner's types, `x1.c <= 2` in the item, where `x1.c` is
/// `CASE WHEN k > 0 THEN k ELSE 1 END` (`Int32` to the planner, `Int64`
/// coerced), became `x1.c <= Int32(2)` and failed at run time.
pub(crate) fn with_lateral_reference_types(
    plan: LogicalPlan,
    outer_schema: &DFSchema,
    coerce: CoerceNode,
) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Join(mut join) = plan else {
        return Ok(Transformed::no(plan));
    };
    let mut sides = join.left.schema().as_ref().clone();
    sides.merge(outer_schema);
    let right = Arc::unwrap_or_clone(join.right);
    let right = lateral_items_retyped(right, &sides, None, coerce)?;
    join.right = Arc::new(right.data);
    let plan = LogicalPlan::Join(join);
    if right.transformed {
        Ok(Transformed::yes(plan.recompute_schema()?))
    } else {
        Ok(Transformed::no(plan))
    }
}

/// A join's inputs with the outer references below them typed: the left
/// side's as `outer_schema` has their columns, and a `LATERAL` item's on the
/// right as the left side has them, or else `outer_schema`, as
/// [`with_lateral_reference_types`] types them at the join. (Typed as
/// `outer_schema` alone, such a reference took the type of a column of the
/// same name in a level around, the join's coercion took it back, and each
/// undid the other without end.)
fn join_inputs_retyped(
    mut join: Join,
    outer_schema: &DFSchema,
    coerce: CoerceNode,
) -> Result<Transformed<LogicalPlan>> {
    let left = Arc::unwrap_or_clone(join.left);
    let left = with_outer_reference_types(left, outer_schema, coerce)?;
    join.left = Arc::new(left.data);
    let mut sides = join.left.schema().as_ref().clone();
    sides.merge(outer_schema);
    let right = Arc::unwrap_or_clone(join.right);
    let right = lateral_items_retyped(right, &sides, Some(outer_schema), coerce)?;
    join.right = Arc::new(right.data);
    Ok(Transformed::new_transformed(
        LogicalPlan::Join(join),
        left.transformed || right.transformed,
    ))
}

/// A join's right side with the outer references of its `LATERAL` item (a
/// subquery, under its alias) typed as `sides` has their columns; any other
/// right side's typed as `others` has them, where given.
fn lateral_items_retyped(
    plan: LogicalPlan,
    sides: &DFSchema,
    others: Option<&DFSchema>,
    coerce: CoerceNode,
) -> Result<Transformed<LogicalPlan>> {
    match plan {
        LogicalPlan::Subquery(mut subquery) => {
            let inner = Arc::unwrap_or_clone(subquery.subquery);
            let retyped = with_outer_reference_types(inner, sides, coerce)?;
            let transformed = retyped.transformed;
            subquery.subquery = Arc::new(retyped.data);
            Ok(Transformed::new_transformed(
                LogicalPlan::Subquery(subquery),
                transformed,
            ))
        }
        LogicalPlan::SubqueryAlias(_) => {
            let retyped = plan.map_children(|child| {
                lateral_items_retyped(child, sides, others, coerce)
            })?;
            if retyped.transformed {
                retyped.map_data(|plan| plan.recompute_schema())
            } else {
                Ok(retyped)
            }
        }
        plan => match others {
            Some(outer_schema) => with_outer_reference_types(plan, outer_schema, coerce),
            None => Ok(Transformed::no(plan)),
        },
    }
}

/// `node` with the outer references of its expressions typed as
/// `outer_schema` has their columns.
fn retyped_references(
    node: LogicalPlan,
    outer_schema: &DFSchema,
) -> Result<Transformed<LogicalPlan>> {
    node.map_expressions(|expr| {
        expr.transform(|expr| match expr {
            Expr::OuterReferenceColumn(field, column) => {
                match outer_schema.qualified_field_from_column(&column) {
                    Ok((_, outer_field))
                        if outer_field.data_type() != field.data_type() =>
                    {
                        let retyped = field
                            .as_ref()
                            .clone()
                            .with_data_type(outer_field.data_type().clone());
                        Ok(Transformed::yes(Expr::OuterReferenceColumn(
                            retyped.into(),
                            column,
                        )))
                    }
                    _ => Ok(Transformed::no(Expr::OuterReferenceColumn(field, column))),
                }
            }
            expr => Ok(Transformed::no(expr)),
        })
    })
}
