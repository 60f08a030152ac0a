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

//! The outer columns a `LATERAL` FROM item reads, at any depth.
//!
//! A lateral item becomes a [`Subquery`] node over its plan whose outer
//! reference columns tell the optimizer which outer columns it reads, and
//! only a node with some is decorrelated. Upstream gathers them from the
//! plan's own expressions, so a lateral item that reads the columns to its
//! left only inside a subquery of its own, `LATERAL (SELECT (SELECT max(x)
//! FROM u WHERE u.k < a.k))` or `LATERAL (VALUES ((SELECT ... a.k ...)))`,
//! had none: it was planned as a plain cross join whose subquery read a
//! column no input had, and the query failed in the physical planner. Here
//! the outer references of the subqueries inside are gathered too, those of
//! the columns the lateral item can see.
//!
//! [`Subquery`]: datafusion_expr::logical_plan::Subquery

use datafusion_common::tree_node::TreeNodeRecursion;
use datafusion_common::{DFSchema, Result};
use datafusion_expr::utils::find_out_reference_exprs;
use datafusion_expr::{Expr, LogicalPlan};

/// The outer references of `plan` and of the subqueries in it, at any
/// depth, to columns of `visible` (the schemas the lateral item sees),
/// each once.
pub(super) fn outer_references(
    plan: &LogicalPlan,
    visible: &DFSchema,
) -> Result<Vec<Expr>> {
    let mut references = plan.all_out_ref_exprs();
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            for reference in find_out_reference_exprs(expr) {
                let seen = matches!(&reference, Expr::OuterReferenceColumn(_, column)
                    if visible.has_column(column));
                if seen && !references.contains(&reference) {
                    references.push(reference);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
    })?;
    Ok(references)
}
