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

//! Whether an expression holds a subquery.
//!
//! The SQL planner (a `VALUES` row with one is planned apart) and the
//! optimizer's decorrelation ask it of the same four expressions; upstream
//! has the question only for scalar subqueries
//! ([`Expr::contains_scalar_subquery`]).

use datafusion_common::tree_node::TreeNode;

use crate::Expr;

/// Whether `expr` holds a subquery: a scalar subquery, `EXISTS`, `IN` or a
/// quantified comparison (`ANY` / `ALL`).
pub fn contains_subquery(expr: &Expr) -> bool {
    expr.exists(|expr| {
        Ok(matches!(
            expr,
            Expr::ScalarSubquery(_)
                | Expr::Exists(_)
                | Expr::InSubquery(_)
                | Expr::SetComparison(_)
        ))
    })
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
