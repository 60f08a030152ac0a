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

//! The dependent join pushed through a filter: the correlated predicate is
//! evaluated on the tags, or, where it equates every outer column with an
//! expression of the filter's input, those expressions become the tags.

use std::sync::Arc;

use datafusion_common::{Column, Result};
use datafusion_expr::logical_plan::Filter;
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlanBuilder};

use super::{DependentJoin, Tagged};
use crate::correlation::{equality_sides, replace_outer};

impl DependentJoin<'_> {
    pub(super) fn push_filter(&self, filter: &Filter) -> Result<Tagged> {
        if !self.reads_outer(&filter.input)?
            && let Some(tagged) = self.tag_by_equalities(filter)?
        {
            return Ok(tagged);
        }
        let input = self.push(&filter.input)?;
        let scope = [Arc::clone(filter.input.schema())];
        let predicate = self.on_tags(&filter.predicate, &input.tags, &scope)?;
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(input.plan)
                .filter(predicate)?
                .build()?,
            tags: input.tags,
            unique: input.unique,
            non_null_tags: input.non_null_tags,
        })
    }

    /// A filter over an input that reads no outer column, whose conjuncts
    /// equate every outer column with an expression of the input, tags each
    /// row with those expressions: no domain needed. Rows whose expression is
    /// NULL matched no outer value and are dropped.
    fn tag_by_equalities(&self, filter: &Filter) -> Result<Option<Tagged>> {
        let mut bound: Vec<Option<Expr>> = vec![None; self.domain.outer.len()];
        let mut rest = vec![];
        for conjunct in split_conjunction(&filter.predicate) {
            match self.outer_equality(conjunct)? {
                Some((index, inner)) if bound[index].is_none() => {
                    bound[index] = Some(inner)
                }
                _ => rest.push(conjunct.clone()),
            }
        }
        let Some(bound) = bound.into_iter().collect::<Option<Vec<Expr>>>() else {
            return Ok(None);
        };
        // A subquery in a remaining conjunct would need the outer values as
        // columns in scope: only the domain provides them
        if rest.iter().any(contains_subquery) {
            return Ok(None);
        }
        // The remaining conjuncts see the outer columns as the bound values
        let scope = [Arc::clone(filter.input.schema())];
        let by_index = |column: &Column| {
            self.domain
                .index_of(column)
                .map(|index| bound[index].clone())
        };
        let mut predicates = rest
            .iter()
            .map(|conjunct| replace_outer(conjunct, &by_index, &scope))
            .collect::<Result<Vec<_>>>()?;
        // Where an expression may be NULL, its NULLs match no outer value (a
        // filter the optimizer would drop again, in a pass of its own, where
        // it cannot be NULL)
        for inner in &bound {
            if inner.nullable(filter.input.schema())? {
                predicates.push(inner.clone().is_not_null());
            }
        }
        let filtered = match conjunction(predicates) {
            Some(predicate) => LogicalPlanBuilder::from(filter.input.as_ref().clone())
                .filter(predicate)?
                .build()?,
            None => filter.input.as_ref().clone(),
        };
        let mut exprs: Vec<Expr> = filtered
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let tag_alias = self.alias_generator.next("__domain_tag");
        let mut tags = vec![];
        for (index, inner) in bound.into_iter().enumerate() {
            let name = format!("{tag_alias}_{index}");
            exprs.push(inner.alias(&name));
            tags.push(Column::new_unqualified(name));
        }
        let plan = LogicalPlanBuilder::from(filtered).project(exprs)?.build()?;
        Ok(Some(Tagged {
            plan,
            tags,
            unique: false,
            non_null_tags: true,
        }))
    }

    /// `inner = outer` (either way round) for an outer column of the domain
    /// and an expression that reads only inner columns: the column's index
    /// and the expression.
    fn outer_equality(&self, conjunct: &Expr) -> Result<Option<(usize, Expr)>> {
        for (outer, inner) in equality_sides(conjunct) {
            let Expr::OuterReferenceColumn(_, column) = outer else {
                continue;
            };
            let Some(index) = self.domain.index_of(column) else {
                continue;
            };
            if inner.contains_outer()
                || !inner.any_column_refs()
                || contains_subquery(inner)
            {
                continue;
            }
            return Ok(Some((index, inner.clone())));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{col, lit};

    use crate::fork_test_util::{outer, pushed, rows_of_key, table};

    #[test]
    fn an_equality_with_the_outer_column_is_the_tag() -> Result<()> {
        let subquery = rows_of_key()?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.k, s.v, s.k AS __domain_tag_2_0
              Filter: s.k IS NOT NULL
                TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn other_conjuncts_read_the_value_the_equality_binds() -> Result<()> {
        let subquery = table("s")?
            .filter(col("s.k").eq(outer("k")).and(col("s.v").gt(outer("k"))))?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.k, s.v, s.k AS __domain_tag_2_0
              Filter: s.v > s.k AND s.k IS NOT NULL
                TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn a_predicate_without_equality_reads_the_domain() -> Result<()> {
        let subquery = table("s")?
            .filter(col("s.v").lt(outer("v")).or(col("s.k").eq(lit(1))))?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Filter: s.v < __domain_instance_2.__domain_1_0 OR s.k = Int32(1)
              Cross Join:
                TableScan: s
                SubqueryAlias: __domain_instance_2
                  Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                    Projection: o.v AS __domain_1_0
                      TableScan: o
            tags: [__domain_instance_2.__domain_1_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }
}
