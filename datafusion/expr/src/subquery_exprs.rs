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

//! The four expressions that hold a subquery, taken as one: a scalar
//! subquery, `EXISTS`, `IN` and a quantified comparison (`ANY` / `ALL`).
//!
//! The SQL planner (a `VALUES` row with one is planned apart) and the
//! optimizer's decorrelation ask the same questions of all four; upstream
//! asks them of plans ([`LogicalPlan::apply_subqueries`]) and of scalar
//! subqueries alone ([`Expr::contains_scalar_subquery`]).
//!
//! [`LogicalPlan::apply_subqueries`]: crate::LogicalPlan::apply_subqueries

use datafusion_common::Result;
use datafusion_common::tree_node::{Transformed, TreeNode};

use crate::Expr;
use crate::expr::{Exists, InSubquery, SetComparison};
use crate::logical_plan::Subquery;

/// The subquery of `expr`, if it is one of the four subquery expressions
/// (not one below it).
pub fn subquery_of(expr: &Expr) -> Option<&Subquery> {
    match expr {
        Expr::ScalarSubquery(subquery)
        | Expr::Exists(Exists { subquery, .. })
        | Expr::InSubquery(InSubquery { subquery, .. })
        | Expr::SetComparison(SetComparison { subquery, .. }) => Some(subquery),
        _ => None,
    }
}

/// `expr` with its subquery rewritten by `f`, if it is one of the four
/// subquery expressions; any other expression unchanged.
pub fn map_subquery_of(
    expr: Expr,
    f: impl FnOnce(Subquery) -> Result<Transformed<Subquery>>,
) -> Result<Transformed<Expr>> {
    Ok(match expr {
        Expr::ScalarSubquery(subquery) => f(subquery)?.update_data(Expr::ScalarSubquery),
        Expr::Exists(Exists { subquery, negated }) => f(subquery)?
            .update_data(|subquery| Expr::Exists(Exists { subquery, negated })),
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => f(subquery)?.update_data(|subquery| {
            Expr::InSubquery(InSubquery {
                expr,
                subquery,
                negated,
            })
        }),
        Expr::SetComparison(SetComparison {
            expr,
            subquery,
            op,
            quantifier,
        }) => f(subquery)?.update_data(|subquery| {
            Expr::SetComparison(SetComparison {
                expr,
                subquery,
                op,
                quantifier,
            })
        }),
        other => Transformed::no(other),
    })
}

/// Whether `expr` holds a subquery: a scalar subquery, `EXISTS`, `IN` or a
/// quantified comparison (`ANY` / `ALL`).
pub fn contains_subquery(expr: &Expr) -> bool {
    expr.exists(|expr| Ok(subquery_of(expr).is_some()))
        // The closure never fails
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn finds_a_subquery_under_an_expression() {
        use crate::logical_plan::LogicalPlanBuilder;
        use crate::{col, exists, lit};

        let plan = Arc::new(LogicalPlanBuilder::empty(true).build().unwrap());
        assert!(contains_subquery(&lit(1).and(exists(plan))));
        assert!(!contains_subquery(&col("a").eq(lit(1))));
    }
}
