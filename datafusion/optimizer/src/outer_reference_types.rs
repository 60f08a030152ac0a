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
//! the subquery takes the type of the column it reads, and each node whose
//! references changed type is coerced again (a second cast over the stale
//! one, which widens and loses nothing).

use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{DFSchema, Result};
use datafusion_expr::{Expr, LogicalPlan};

/// `subquery` with each outer reference typed as `outer_schema`, the
/// coerced schema of the levels around it, has the column it reads (where
/// it has it once), and each node whose references changed type coerced
/// again by `coerce` (type coercion of one node against `outer_schema`).
pub(crate) fn with_outer_reference_types(
    subquery: LogicalPlan,
    outer_schema: &DFSchema,
    mut coerce: impl FnMut(LogicalPlan) -> Result<Transformed<LogicalPlan>>,
) -> Result<Transformed<LogicalPlan>> {
    if outer_schema.fields().is_empty() {
        return Ok(Transformed::no(subquery));
    }
    subquery.transform_up_with_subqueries(|node| {
        let retyped = retyped_references(node, outer_schema)?;
        if retyped.transformed {
            coerce(retyped.data).map(|coerced| Transformed::yes(coerced.data))
        } else {
            Ok(retyped)
        }
    })
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
