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

//! The dependent join pushed through a window: every window function is
//! also partitioned by the tags, so that it sees the rows of one outer
//! value only.

use std::sync::Arc;

use datafusion_common::{Result, internal_err};
use datafusion_expr::expr::{Alias, WindowFunction};
use datafusion_expr::logical_plan::Window;
use datafusion_expr::{Expr, LogicalPlan};

use super::{DependentJoin, Tagged};

impl DependentJoin<'_> {
    pub(super) fn push_window(&self, window: &Window) -> Result<Tagged> {
        let input = self.push(&window.input)?;
        let scope = [Arc::clone(window.input.schema())];
        let names = window.schema.columns();
        let first = window.input.schema().fields().len();
        let window_expr = window
            .window_expr
            .iter()
            .zip(&names[first..])
            .map(|(expr, name)| {
                let expr =
                    partition_by_tags(self.on_tags(expr, &input.tags, &scope)?, &input)?;
                // An alias names the column already; a window function's own
                // name changes with its partitioning
                Ok(match expr {
                    Expr::Alias(_) => expr,
                    expr => expr.alias_qualified(name.relation.clone(), &name.name),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let plan =
            LogicalPlan::Window(Window::try_new(window_expr, Arc::new(input.plan))?);
        // Keep the columns in their place: the tags came from the input
        Ok(Tagged {
            plan,
            tags: input.tags,
            unique: input.unique,
            non_null_tags: input.non_null_tags,
        })
    }
}

/// `window_expr` also partitioned by the tags.
fn partition_by_tags(window_expr: Expr, input: &Tagged) -> Result<Expr> {
    let (expr, alias) = match window_expr {
        Expr::Alias(Alias {
            expr,
            relation,
            name,
            metadata,
        }) => (*expr, Some((relation, name, metadata))),
        other => (other, None),
    };
    let Expr::WindowFunction(window) = expr else {
        return internal_err!(
            "A window expression that is not a window function: {expr}"
        );
    };
    let WindowFunction { fun, params } = *window;
    let mut params = params;
    params.partition_by.extend(input.tag_exprs());
    let expr = Expr::WindowFunction(Box::new(WindowFunction { fun, params }));
    Ok(match alias {
        Some((relation, name, metadata)) => Expr::Alias(Alias {
            expr: Box::new(expr),
            relation,
            name,
            metadata,
        }),
        None => expr,
    })
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{ExprFunctionExt, col};
    use datafusion_functions_window::expr_fn::row_number;

    use crate::fork_test_util::{pushed, rows_of_key};

    #[test]
    fn a_window_is_also_partitioned_by_the_tags() -> Result<()> {
        let numbered = row_number()
            .order_by(vec![col("s.v").sort(true, false)])
            .build()?
            .alias("n");
        let subquery = rows_of_key()?.window([numbered])?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            WindowAggr: windowExpr=[[row_number() PARTITION BY [__domain_tag_2_0] ORDER BY [s.v ASC NULLS LAST] ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS n]]
              Projection: s.k, s.v, s.k AS __domain_tag_2_0
                Filter: s.k IS NOT NULL
                  TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }
}
