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

//! The dependent join pushed through `ORDER BY`, `LIMIT` and `OFFSET`: the
//! first rows of the subquery become the first rows of each tag.
//!
//! A sort with a limit becomes a per-tag `row_number()` and a filter on it.
//! `ORDER BY o LIMIT 1` under a projection that reads one column `c` (the
//! common "top 1 per key" lookup) becomes `first_value(c ORDER BY o)`
//! grouped by the tags instead: one pass over the rows, no sort. With two
//! columns read, two `first_value`s could take them from different rows
//! that tie in `o`, so that form is kept to one. A sort without a limit is
//! dropped: the order of a subquery's rows is not observable.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion_common::{Column, Result, not_impl_err};
use datafusion_expr::logical_plan::{Limit, Projection, Sort};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::conjunction;
use datafusion_expr::{
    Expr, ExprFunctionExt, FetchType, LogicalPlan, LogicalPlanBuilder, SkipType,
    SortExpr, lit,
};
use datafusion_functions_aggregate::first_last::first_value;
use datafusion_functions_window::expr_fn::row_number;

use super::{DependentJoin, Tagged, aggregate_below_renames};

impl DependentJoin<'_> {
    pub(super) fn push_sort(&self, sort: &Sort) -> Result<Tagged> {
        match sort.fetch {
            // The order of a subquery's rows is not observable without a limit
            None => self.push(&sort.input),
            Some(fetch) => self.per_tag_limit(&sort.input, &sort.expr, 0, Some(fetch)),
        }
    }

    pub(super) fn push_limit(&self, limit: &Limit) -> Result<Tagged> {
        let (SkipType::Literal(skip), FetchType::Literal(fetch)) =
            (limit.get_skip_type()?, limit.get_fetch_type()?)
        else {
            return not_impl_err!(
                "Correlated subquery with a LIMIT or OFFSET that is not a constant \
                 cannot be decorrelated"
            );
        };
        match limit.input.as_ref() {
            LogicalPlan::Sort(sort) => {
                // A fetch of the sort (pushed down by an earlier pass) bounds
                // the rows the limit reads
                let fetch = match (fetch, sort.fetch) {
                    (None, sort_fetch) => sort_fetch.map(|f| f.saturating_sub(skip)),
                    (Some(fetch), None) => Some(fetch),
                    (Some(fetch), Some(f)) => Some(fetch.min(f.saturating_sub(skip))),
                };
                self.per_tag_limit(&sort.input, &sort.expr, skip, fetch)
            }
            // The SQL planner puts a projection that drops sort keys between
            // the limit and the sort that orders its rows: the limit goes
            // below it, to meet the sort
            LogicalPlan::Projection(projection)
                if matches!(projection.input.as_ref(), LogicalPlan::Sort(_)) =>
            {
                let limited = LogicalPlan::Limit(Limit {
                    skip: limit.skip.clone(),
                    fetch: limit.fetch.clone(),
                    input: Arc::clone(&projection.input),
                });
                self.push(&LogicalPlan::Projection(Projection::try_new_with_schema(
                    projection.expr.clone(),
                    Arc::new(limited),
                    Arc::clone(&projection.schema),
                )?))
            }
            input => self.per_tag_limit(input, &[], skip, fetch),
        }
    }

    /// Rows `skip + 1` to `skip + fetch` of each tag, in `order`: the tagged
    /// form of `ORDER BY order OFFSET skip LIMIT fetch`.
    fn per_tag_limit(
        &self,
        input: &LogicalPlan,
        order: &[SortExpr],
        skip: usize,
        fetch: Option<usize>,
    ) -> Result<Tagged> {
        if fetch.is_some() {
            self.check_no_limit_over_recursion(input)?;
        }
        // The first row of a one-column input is its column's first value
        if let ([column], 0, Some(1), false) = (
            input.schema().columns().as_slice(),
            skip,
            fetch,
            order.is_empty(),
        ) {
            return self.first_row_value(input, order, column);
        }
        let scope = [Arc::clone(input.schema())];
        let input = self.push(input)?;
        let order_by = self.order_on_tags(order, &input.tags, &scope)?;
        let row_number_name = self.alias_generator.next("__row_number");
        let numbered = row_number()
            .partition_by(input.tag_exprs())
            .order_by(order_by)
            .build()?
            .alias(&row_number_name);
        let columns: Vec<Expr> = input
            .plan
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let row = Expr::Column(Column::new_unqualified(&row_number_name));
        let mut bounds = vec![];
        if skip > 0 {
            bounds.push(row.clone().gt(lit(skip as u64)));
        }
        if let Some(fetch) = fetch {
            bounds.push(row.lt_eq(lit((skip + fetch) as u64)));
        }
        let mut builder = LogicalPlanBuilder::from(input.plan).window(vec![numbered])?;
        if let Some(bounds) = conjunction(bounds) {
            builder = builder.filter(bounds)?;
        }
        Ok(Tagged {
            plan: builder.project(columns)?.build()?,
            tags: input.tags,
            unique: fetch.is_some_and(|fetch| fetch <= 1),
            non_null_tags: input.non_null_tags,
        })
    }

    /// `SELECT f(c) ... ORDER BY o LIMIT 1`, whose projection reads one
    /// column `c` of the sort: [`Self::first_row_value`] of `c`. With two
    /// columns read, two `first_value`s could take them from different rows
    /// that tie in `o`: not used there.
    pub(super) fn push_first_row_value(
        &self,
        projection: &Projection,
    ) -> Result<Option<Tagged>> {
        let Some(sort) = first_row_sort(&projection.input)? else {
            return Ok(None);
        };
        if projection.expr.iter().any(contains_subquery) {
            return Ok(None);
        }
        let read: HashSet<&Column> = projection
            .expr
            .iter()
            .flat_map(|expr| expr.column_refs())
            .collect();
        match Vec::from_iter(read).as_slice() {
            [column] => self
                .first_row_value(&sort.input, &sort.expr, column)
                .map(Some),
            _ => Ok(None),
        }
    }

    /// Per tag, `column` of the first row of `input` in `order`, as
    /// `first_value(column ORDER BY order)` grouped by the tags: the tagged
    /// form of `ORDER BY order LIMIT 1` where only `column` is read. One pass
    /// over the rows, where the per-tag `row_number()` of
    /// [`Self::per_tag_limit`] sorts them.
    fn first_row_value(
        &self,
        input: &LogicalPlan,
        order: &[SortExpr],
        column: &Column,
    ) -> Result<Tagged> {
        self.check_no_limit_over_recursion(input)?;
        let scope = [Arc::clone(input.schema())];
        let input = self.push(input)?;
        let order_by = self.order_on_tags(order, &input.tags, &scope)?;
        let value = first_value(Expr::Column(column.clone()), order_by)
            .alias_qualified(column.relation.clone(), &column.name);
        let group_expr = input.tag_exprs();
        let plan = aggregate_below_renames(input.plan, group_expr, vec![value])?;
        Ok(Tagged {
            plan,
            tags: input.tags,
            unique: true,
            non_null_tags: input.non_null_tags,
        })
    }
}

/// The sort of `ORDER BY ... LIMIT 1` without `OFFSET`: under a limit, or
/// holding the fetch itself.
fn first_row_sort(plan: &LogicalPlan) -> Result<Option<&Sort>> {
    Ok(match plan {
        LogicalPlan::Limit(limit) => match (
            limit.get_skip_type()?,
            limit.get_fetch_type()?,
            limit.input.as_ref(),
        ) {
            (
                SkipType::Literal(0),
                FetchType::Literal(Some(1)),
                LogicalPlan::Sort(sort),
            ) if sort.fetch.is_none_or(|fetch| fetch >= 1) => Some(sort),
            _ => None,
        },
        LogicalPlan::Sort(sort) if sort.fetch == Some(1) => Some(sort),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlanBuilder, col};

    use crate::fork_test_util::{pushed, rows_of_key};

    /// `s WHERE s.k = o.k ORDER BY s.v DESC`.
    fn sorted() -> Result<LogicalPlanBuilder> {
        rows_of_key()?.sort([col("s.v").sort(false, true)])
    }

    #[test]
    fn a_limit_is_a_row_number_per_tag() -> Result<()> {
        let subquery = sorted()?.limit(1, Some(2))?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.k, s.v, __domain_tag_2_0
              Filter: __row_number_3 > UInt64(1) AND __row_number_3 <= UInt64(3)
                WindowAggr: windowExpr=[[row_number() PARTITION BY [__domain_tag_2_0] ORDER BY [s.v DESC NULLS FIRST] ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS __row_number_3]]
                  Projection: s.k, s.v, s.k AS __domain_tag_2_0
                    Filter: s.k IS NOT NULL
                      TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn the_first_row_of_one_column_is_its_first_value() -> Result<()> {
        let subquery = sorted()?
            .limit(0, Some(1))?
            .project([col("s.v")])?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.v, __domain_tag_2_0
              Projection: s.k AS __domain_tag_2_0, s.v
                Aggregate: groupBy=[[s.k]], aggr=[[first_value(s.v) ORDER BY [s.v DESC NULLS FIRST] AS v]]
                  Filter: s.k IS NOT NULL
                    TableScan: s
            tags: [__domain_tag_2_0]; unique: true; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn a_sort_without_a_limit_is_dropped() -> Result<()> {
        let subquery = sorted()?.project([col("s.v")])?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.v, __domain_tag_2_0
              Projection: s.k, s.v, s.k AS __domain_tag_2_0
                Filter: s.k IS NOT NULL
                  TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }
}
