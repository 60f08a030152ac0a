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

//! `HAVING` in a query without `GROUP BY` or aggregates whose items read
//! no column of its rows: `SELECT 1 FROM t HAVING o.k > 5`, inside a
//! subquery that reads the outer `o`.
//!
//! SQL makes such a query grouped: its rows form one group, which exists
//! even where there are no rows, so the query returns one row where the
//! `HAVING` holds and none where it does not, whatever `FROM` and `WHERE`
//! give. DataFusion refused every `HAVING` without an aggregate. A query
//! whose `SELECT` list, `HAVING`, `ORDER BY` or `DISTINCT ON` reads a
//! column of its rows (`SELECT k FROM t HAVING true`) is still refused, as
//! PostgreSQL refuses it: the column is neither grouped nor aggregated.
//! One that does not is planned as an aggregation of its rows without
//! groups, which gives one row however many rows it reads (its `count(*)`
//! is what such an aggregation needs, and is not read). An aggregate of an
//! enclosing query, as in DuckDB's `SELECT 1 FROM t HAVING min(o.v) IS
//! NULL`, is an outer reference here (see [`crate::outer_aggregates`]).

use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{DFSchema, HashMap, Result};
use datafusion_expr::expr::AggregateFunction;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit};

use crate::planner::{ContextProvider, SqlToRel};

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// The one group of a query grouped by its `HAVING` alone, where none
    /// of `exprs` (its `SELECT` list, `HAVING` and `DISTINCT ON`) and
    /// `order_by` reads a column of `input`, its `FROM` and `WHERE`; `None`
    /// where one does. An `ORDER BY` key that is a bare output name, one
    /// of `aliases`, reads the item (`SELECT 1 AS k FROM t HAVING true
    /// ORDER BY k` reads `1`, not `t.k`).
    pub(crate) fn having_one_group<'a>(
        &self,
        input: &LogicalPlan,
        exprs: impl Iterator<Item = &'a Expr>,
        order_by: impl Iterator<Item = &'a Expr>,
        aliases: &'a HashMap<String, Expr>,
    ) -> Result<Option<LogicalPlan>> {
        let order_by = order_by.map(|key| match key {
            Expr::Column(column) if column.relation.is_none() => {
                aliases.get(&column.name).unwrap_or(key)
            }
            _ => key,
        });
        if exprs
            .chain(order_by)
            .any(|expr| reads_columns_of(expr, input.schema()))
        {
            return Ok(None);
        }
        let Some(count) = self.context_provider.get_aggregate_meta("count") else {
            return Ok(None);
        };
        let count_rows = Expr::AggregateFunction(AggregateFunction::new_udf(
            count,
            vec![lit(1_i64)],
            false,
            None,
            vec![],
            None,
        ));
        LogicalPlanBuilder::from(input.clone())
            .aggregate(Vec::<Expr>::new(), [count_rows])?
            .build()
            .map(Some)
    }
}

/// Whether `expr` reads a column of `schema`, itself or through a subquery
/// at any depth. (A subquery lists only its own outer references; one of
/// an inner subquery's, `(SELECT (SELECT t.k))`, is found in the plan.)
fn reads_columns_of(expr: &Expr, schema: &DFSchema) -> bool {
    let outer_reference_to_schema = |expr: &Expr| {
        matches!(expr, Expr::OuterReferenceColumn(_, column)
            if schema.has_column(column))
    };
    let read_by_subquery = |plan: &LogicalPlan| {
        let mut found = false;
        plan.apply_with_subqueries(|node| {
            node.apply_expressions(|expr| {
                found = expr.exists(|expr| Ok(outer_reference_to_schema(expr)))?;
                Ok(stop_if(found))
            })?;
            Ok(stop_if(found))
        })?;
        Ok(found)
    };
    expr.exists(|expr| match expr {
        Expr::Column(column) => Ok(schema.has_column(column)),
        Expr::ScalarSubquery(subquery) => read_by_subquery(&subquery.subquery),
        Expr::Exists(exists) => read_by_subquery(&exists.subquery.subquery),
        Expr::InSubquery(in_subquery) => read_by_subquery(&in_subquery.subquery.subquery),
        Expr::SetComparison(comparison) => {
            read_by_subquery(&comparison.subquery.subquery)
        }
        _ => Ok(false),
    })
    // Nothing above fails
    .unwrap_or(true)
}

fn stop_if(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
}
