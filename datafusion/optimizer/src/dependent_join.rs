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

//! The dependent join: a correlated subquery evaluated for every value of
//! the outer columns it reads, at once.
//!
//! A correlated subquery `Q` reads outer columns `C`. Its *domain* `D` is the
//! set of distinct values of `C` in the outer plan. [`DependentJoin::push`]
//! turns `Q` into a plan `Q'` without outer references whose rows are those
//! of `Q` evaluated for each `d` in `D`, each row *tagged* with its `d`: the
//! tag columns stand for the outer columns. Joining the outer plan to `Q'` on
//! `C` equal (NULL-safe) to the tags then gives each outer row the result of
//! `Q` for its own values.
//!
//! `Q'` is built by pushing the dependent join `D ⋈ Q` down through each
//! operator of `Q` (Neumann and Kemper, "Unnesting Arbitrary Queries", BTW
//! 2015), until the operator below reads no outer column, where it becomes a
//! cross join with `D`:
//!
//! - a filter, projection or join evaluates its outer references on the tags;
//! - an aggregate also groups by the tags; one without `GROUP BY` returns a
//!   row for every tag, the aggregates of an empty input where none matched
//!   (the "count bug");
//! - a window function also partitions by the tags;
//! - a sort with a limit becomes a per-tag `row_number()` filter (under a
//!   projection that reads one column, `LIMIT 1` becomes that column's
//!   `first_value` in the sort's order, grouped by the tags: no sort), and a
//!   sort without a limit is dropped;
//! - a union, distinct, unnest or subquery alias carries the tags through.
//!
//! Where a filter equates every outer column with an expression of its input
//! (`s.k = o.k`, the common case), that expression *is* the tag: the cross
//! join with `D` is dropped and the filter's input is tagged with it. Rows
//! tagged with a value no outer row has are harmless, as every operator above
//! works per tag and the final join drops them; `D` is then never computed.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{
    Column, DFSchemaRef, NullEquality, Result, ScalarValue, TableReference, internal_err,
    not_impl_err, plan_err,
};
use datafusion_expr::expr::{
    AggregateFunction, Alias, Exists, InSubquery, SetComparison, WindowFunction,
};
use datafusion_expr::logical_plan::{
    Aggregate, Distinct, Filter, Join, JoinType, Limit, Projection, Sort, Subquery,
    SubqueryAlias, Union, Unnest, Values, Window,
};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::{conjunction, find_out_reference_exprs, split_conjunction};
use datafusion_expr::{
    BinaryExpr, Expr, ExprFunctionExt, ExprSchemable, FetchType, LogicalPlan,
    LogicalPlanBuilder, Operator, SkipType, SortExpr, binary_expr, lit, when,
};
use datafusion_functions_aggregate::first_last::first_value;
use datafusion_functions_window::expr_fn::row_number;

use crate::grouping_sets_union::grouping_sets_as_union;

/// The outer columns a subquery reads, and the distinct values they take.
#[derive(Debug)]
pub(crate) struct Domain {
    /// The outer columns, as the outer plan names them.
    pub(crate) outer: Vec<Column>,
    /// `SELECT DISTINCT` of the outer columns over the outer plan, each
    /// column renamed to its tag name.
    plan: LogicalPlan,
    /// The name of each outer column's tag.
    tag_names: Vec<String>,
}

impl Domain {
    /// The domain of `outer`, columns of `outer_plan`.
    pub(crate) fn new(
        outer_plan: &LogicalPlan,
        outer: Vec<Column>,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        let prefix = alias_generator.next("__domain");
        let tag_names: Vec<String> =
            (0..outer.len()).map(|i| format!("{prefix}_{i}")).collect();
        // `SELECT DISTINCT` as the aggregate it becomes: a subquery nested
        // in another may be decorrelated after the rule that replaces
        // `Distinct` has run its last pass
        let plan = distinct_rows(
            LogicalPlanBuilder::from(outer_plan.clone())
                .project(
                    outer
                        .iter()
                        .zip(&tag_names)
                        .map(|(column, name)| Expr::Column(column.clone()).alias(name)),
                )?
                .build()?,
        )?;
        Ok(Self {
            outer,
            plan,
            tag_names,
        })
    }

    fn index_of(&self, column: &Column) -> Option<usize> {
        self.outer.iter().position(|outer| outer == column)
    }
}

/// A plan tagged with the domain value each of its rows belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Tagged {
    pub(crate) plan: LogicalPlan,
    /// For each outer column of the domain, the column of `plan` holding it.
    pub(crate) tags: Vec<Column>,
    /// Whether `plan` holds at most one row per tag value.
    pub(crate) unique: bool,
    /// Whether no row of `plan` has a NULL tag: tags bound by an equality
    /// with an outer column, which a NULL never satisfies. Joining such a
    /// plan back on the outer columns needs no NULL-safe equality.
    pub(crate) non_null_tags: bool,
}

impl Tagged {
    fn tag_exprs(&self) -> Vec<Expr> {
        self.tags.iter().cloned().map(Expr::Column).collect()
    }
}

/// Pushes the dependent join of a [`Domain`] into a subquery.
pub(crate) struct DependentJoin<'a> {
    domain: &'a Domain,
    alias_generator: &'a AliasGenerator,
}

impl<'a> DependentJoin<'a> {
    pub(crate) fn new(domain: &'a Domain, alias_generator: &'a AliasGenerator) -> Self {
        Self {
            domain,
            alias_generator,
        }
    }

    /// `plan` evaluated for every value of the domain, tagged with it.
    pub(crate) fn push(&self, plan: &LogicalPlan) -> Result<Tagged> {
        if !self.reads_outer(plan)? {
            return self.cross_join_domain(plan);
        }
        match plan {
            LogicalPlan::Projection(projection) => self.push_projection(projection),
            LogicalPlan::Filter(filter) => self.push_filter(filter),
            LogicalPlan::Aggregate(aggregate) => self.push_aggregate(aggregate),
            LogicalPlan::Window(window) => self.push_window(window),
            LogicalPlan::Sort(sort) => self.push_sort(sort),
            LogicalPlan::Limit(limit) => self.push_limit(limit),
            LogicalPlan::Distinct(Distinct::All(input)) => {
                let input = self.push(input)?;
                Ok(Tagged {
                    plan: distinct_rows(input.plan)?,
                    tags: input.tags,
                    unique: false,
                    non_null_tags: input.non_null_tags,
                })
            }
            LogicalPlan::SubqueryAlias(alias) => self.push_subquery_alias(alias),
            LogicalPlan::Join(join) => self.push_join(join),
            LogicalPlan::Union(union) => self.push_union(union),
            LogicalPlan::Unnest(unnest) => {
                let input = self.push(&unnest.input)?;
                let plan = LogicalPlan::Unnest(Unnest::try_new(
                    Arc::new(input.plan),
                    unnest.exec_columns.clone(),
                    unnest.options.clone(),
                )?);
                Ok(Tagged {
                    plan,
                    tags: input.tags,
                    unique: false,
                    non_null_tags: input.non_null_tags,
                })
            }
            LogicalPlan::Values(values) => self.push_values(values),
            other => not_impl_err!(
                "Correlated subquery with an outer reference below a {} cannot \
                 be decorrelated",
                other.display()
            ),
        }
    }

    /// `plan`, which reads no outer column, for every domain value.
    fn cross_join_domain(&self, plan: &LogicalPlan) -> Result<Tagged> {
        let (domain, tags) = self.domain_instance()?;
        let unique = plan.max_rows().is_some_and(|rows| rows <= 1);
        let plan = LogicalPlanBuilder::from(plan.clone())
            .cross_join(domain)?
            .build()?;
        // The domain holds the NULL of a NULL outer value
        Ok(Tagged {
            plan,
            tags,
            unique,
            non_null_tags: false,
        })
    }

    /// The domain, under an alias of its own (it may appear more than once
    /// in a plan), with its tag columns.
    fn domain_instance(&self) -> Result<(LogicalPlan, Vec<Column>)> {
        let alias = self.alias_generator.next("__domain_instance");
        let plan = LogicalPlanBuilder::from(self.domain.plan.clone())
            .alias(alias.clone())?
            .build()?;
        let tags = self
            .domain
            .tag_names
            .iter()
            .map(|name| Column::new(Some(alias.clone()), name))
            .collect();
        Ok((plan, tags))
    }

    fn push_projection(&self, projection: &Projection) -> Result<Tagged> {
        if let Some(first) = self.push_first_row_value(projection)? {
            return self.project(projection, first);
        }
        let input = self.push(&projection.input)?;
        self.project(projection, input)
    }

    /// `projection` over `input`, the tagged form of its input.
    fn project(&self, projection: &Projection, input: Tagged) -> Result<Tagged> {
        let scope = [Arc::clone(projection.input.schema())];
        let mut exprs = projection
            .expr
            .iter()
            .zip(projection.schema.columns())
            .map(|(expr, name)| self.named_on_tags(expr, &name, &input.tags, &scope))
            .collect::<Result<Vec<_>>>()?;
        exprs.extend(input.tag_exprs());
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(input.plan)
                .project(exprs)?
                .build()?,
            tags: input.tags,
            unique: input.unique,
            non_null_tags: input.non_null_tags,
        })
    }

    /// `SELECT f(c) ... ORDER BY o LIMIT 1`, whose projection reads one
    /// column `c` of the sort: [`Self::first_row_value`] of `c`. With two
    /// columns read, two `first_value`s could take them from different rows
    /// that tie in `o`: not used there.
    fn push_first_row_value(&self, projection: &Projection) -> Result<Option<Tagged>> {
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

    fn push_filter(&self, filter: &Filter) -> Result<Tagged> {
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
        let Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) = conjunct
        else {
            return Ok(None);
        };
        for (outer, inner) in [(left, right), (right, left)] {
            let Expr::OuterReferenceColumn(_, column) = outer.as_ref() else {
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
            return Ok(Some((index, inner.as_ref().clone())));
        }
        Ok(None)
    }

    fn push_aggregate(&self, aggregate: &Aggregate) -> Result<Tagged> {
        if let Some(union) = grouping_sets_as_union(aggregate)? {
            return self.push(&union);
        }
        refuse_outer_aggregates(aggregate)?;
        let input = self.push(&aggregate.input)?;
        let scope = [Arc::clone(aggregate.input.schema())];
        let names = aggregate.schema.columns();
        let group_len = aggregate.group_expr.len();
        let mut group_expr = aggregate
            .group_expr
            .iter()
            .zip(&names)
            .map(|(expr, name)| self.named_on_tags(expr, name, &input.tags, &scope))
            .collect::<Result<Vec<_>>>()?;
        let aggr_expr = aggregate
            .aggr_expr
            .iter()
            .zip(&names[group_len..])
            .map(|(expr, name)| self.named_on_tags(expr, name, &input.tags, &scope))
            .collect::<Result<Vec<_>>>()?;
        let scalar = group_expr.is_empty();
        group_expr.extend(input.tag_exprs());
        if !scalar {
            let plan = aggregate_below_renames(input.plan, group_expr, aggr_expr)?;
            return Ok(Tagged {
                plan,
                tags: input.tags,
                unique: false,
                non_null_tags: input.non_null_tags,
            });
        }

        // Without GROUP BY, every domain value gets a row: the aggregates of
        // the values that have input rows, joined onto the domain, and the
        // aggregates of an empty input for the others.
        let matched = self.alias_generator.next("__matched");
        group_expr.push(lit(true).alias(&matched));
        let grouped = aggregate_below_renames(input.plan, group_expr, aggr_expr)?;
        let grouped_alias = self.alias_generator.next("__grouped");
        let grouped = LogicalPlanBuilder::from(grouped)
            .alias(grouped_alias.clone())?
            .build()?;
        let grouped_tags: Vec<Column> = input
            .tags
            .iter()
            .map(|tag| Column::new(Some(grouped_alias.clone()), &tag.name))
            .collect();
        let (domain, tags) = self.domain_instance()?;
        let joined = LogicalPlanBuilder::from(domain)
            .join_detailed(
                grouped,
                JoinType::Left,
                (tags.clone(), grouped_tags),
                None,
                NullEquality::NullEqualsNull,
            )?
            .build()?;
        let unmatched =
            Expr::Column(Column::new(Some(grouped_alias.clone()), &matched)).is_null();
        let mut exprs = vec![];
        for (expr, name) in aggregate.aggr_expr.iter().zip(&names[group_len..]) {
            let value =
                Expr::Column(Column::new(Some(grouped_alias.clone()), &name.name));
            let empty = empty_input_value(expr, aggregate.input.schema())?;
            let value = if empty.is_null() {
                value
            } else {
                when(unmatched.clone(), lit(empty)).otherwise(value)?
            };
            exprs.push(value.alias_qualified(name.relation.clone(), &name.name));
        }
        exprs.extend(tags.iter().cloned().map(Expr::Column));
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(joined).project(exprs)?.build()?,
            tags,
            unique: true,
            non_null_tags: false,
        })
    }

    fn push_window(&self, window: &Window) -> Result<Tagged> {
        let input = self.push(&window.input)?;
        let scope = [Arc::clone(window.input.schema())];
        let names = window.schema.columns();
        let first = window.input.schema().fields().len();
        let window_expr = window
            .window_expr
            .iter()
            .zip(&names[first..])
            .map(|(expr, name)| {
                let expr = self.on_tags(expr, &input.tags, &scope)?;
                let expr = partition_by_tags(expr, &input)?;
                Ok(expr.alias_qualified(name.relation.clone(), &name.name))
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

    fn push_sort(&self, sort: &Sort) -> Result<Tagged> {
        match sort.fetch {
            // The order of a subquery's rows is not observable without a limit
            None => self.push(&sort.input),
            Some(fetch) => self.per_tag_limit(&sort.input, &sort.expr, 0, Some(fetch)),
        }
    }

    fn push_limit(&self, limit: &Limit) -> Result<Tagged> {
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

    /// `order`, of an operator over inputs `scope`, on the tags.
    fn order_on_tags(
        &self,
        order: &[SortExpr],
        tags: &[Column],
        scope: &[DFSchemaRef],
    ) -> Result<Vec<SortExpr>> {
        order
            .iter()
            .map(|sort| {
                Ok(SortExpr {
                    expr: self.on_tags(&sort.expr, tags, scope)?,
                    ..sort.clone()
                })
            })
            .collect()
    }

    fn push_subquery_alias(&self, alias: &SubqueryAlias) -> Result<Tagged> {
        let input = self.push(&alias.input)?;
        let tags = input
            .tags
            .iter()
            .map(|tag| Column::new(Some(alias.alias.clone()), &tag.name))
            .collect();
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(input.plan)
                .alias(alias.alias.clone())?
                .build()?,
            tags,
            unique: input.unique,
            non_null_tags: input.non_null_tags,
        })
    }

    fn push_join(&self, join: &Join) -> Result<Tagged> {
        if lateral_side(&join.right).is_some()
            && matches!(join.join_type, JoinType::Inner | JoinType::Left)
            && self.reads_outer(&join.right)?
        {
            return self.push_lateral(join);
        }
        let left_reads = self.reads_outer(&join.left)?;
        let right_reads = self.reads_outer(&join.right)?;
        // A side that keeps its unmatched rows needs its own tags, and so
        // does a side that reads outer columns
        let (push_left, push_right) = match join.join_type {
            JoinType::Inner => (left_reads || !right_reads, right_reads),
            JoinType::Left
            | JoinType::LeftSemi
            | JoinType::LeftAnti
            | JoinType::LeftMark
            | JoinType::LeftSingle => (true, right_reads),
            JoinType::Right
            | JoinType::RightSemi
            | JoinType::RightAnti
            | JoinType::RightMark
            | JoinType::RightSingle => (left_reads, true),
            JoinType::Full => (true, true),
        };
        let left = push_left.then(|| self.push(&join.left)).transpose()?;
        let right = push_right.then(|| self.push(&join.right)).transpose()?;
        // The tags of the output come from the side it keeps
        let keeps_right = matches!(
            join.join_type,
            JoinType::Right
                | JoinType::RightSemi
                | JoinType::RightAnti
                | JoinType::RightMark
                | JoinType::RightSingle
        );
        let tagged_side = match (&left, &right) {
            (_, Some(right)) if keeps_right => right,
            (Some(left), _) => left,
            (None, Some(right)) => right,
            (None, None) => unreachable!("one side is pushed"),
        };
        // A side whose tags are kept is never NULL-extended (full joins below)
        let (tags, non_null_tags) = (tagged_side.tags.clone(), tagged_side.non_null_tags);

        // The join condition, on the tags; rows of the two sides meet only
        // within a tag
        let key_equality = |l: Expr, r: Expr| match join.null_equality {
            NullEquality::NullEqualsNothing => l.eq(r),
            NullEquality::NullEqualsNull => not_distinct(l, r),
        };
        let scope = [
            Arc::clone(join.left.schema()),
            Arc::clone(join.right.schema()),
        ];
        let mut condition = vec![];
        for (l, r) in &join.on {
            condition.push(key_equality(
                self.on_tags(l, &tags, &scope)?,
                self.on_tags(r, &tags, &scope)?,
            ));
        }
        if let Some(filter) = &join.filter {
            condition.push(self.on_tags(filter, &tags, &scope)?);
        }
        if let (Some(left), Some(right)) = (&left, &right) {
            for (l, r) in left.tags.iter().zip(&right.tags) {
                condition.push(not_distinct(
                    Expr::Column(l.clone()),
                    Expr::Column(r.clone()),
                ));
            }
        }
        let side = |tagged: &Option<Tagged>, plan: &Arc<LogicalPlan>| {
            tagged
                .as_ref()
                .map_or_else(|| plan.as_ref().clone(), |tagged| tagged.plan.clone())
        };
        let plan = LogicalPlanBuilder::from(side(&left, &join.left))
            .join_on(side(&right, &join.right), join.join_type, condition)?
            .build()?;
        if join.join_type != JoinType::Full {
            return Ok(Tagged {
                plan,
                tags,
                unique: false,
                non_null_tags,
            });
        }
        // Either side may be missing from a row of a full join: its tags are
        // those of the side present
        let (left, right) = (left.expect("pushed"), right.expect("pushed"));
        let tag_alias = self.alias_generator.next("__domain_tag");
        let mut exprs: Vec<Expr> = plan
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let mut tags = vec![];
        for (index, (l, r)) in left.tags.iter().zip(&right.tags).enumerate() {
            let name = format!("{tag_alias}_{index}");
            let present = when(
                Expr::Column(l.clone()).is_not_null(),
                Expr::Column(l.clone()),
            )
            .otherwise(Expr::Column(r.clone()))?;
            exprs.push(present.alias(&name));
            tags.push(Column::new_unqualified(name));
        }
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(plan).project(exprs)?.build()?,
            tags,
            unique: false,
            non_null_tags: left.non_null_tags && right.non_null_tags,
        })
    }

    fn push_union(&self, union: &Union) -> Result<Tagged> {
        let mut inputs = vec![];
        let mut tag_names = vec![];
        let mut non_null_tags = true;
        for input in &union.inputs {
            let tagged = self.push(input)?;
            non_null_tags &= tagged.non_null_tags;
            // Every branch lists its own columns, then the tags, in order
            let mut exprs: Vec<Expr> = input
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect();
            if tag_names.is_empty() {
                let alias = self.alias_generator.next("__domain_tag");
                tag_names = (0..tagged.tags.len())
                    .map(|i| format!("{alias}_{i}"))
                    .collect();
            }
            exprs.extend(
                tagged
                    .tag_exprs()
                    .into_iter()
                    .zip(&tag_names)
                    .map(|(tag, name)| tag.alias(name)),
            );
            inputs.push(Arc::new(
                LogicalPlanBuilder::from(tagged.plan)
                    .project(exprs)?
                    .build()?,
            ));
        }
        let plan = LogicalPlan::Union(Union::try_new_with_loose_types(inputs)?);
        Ok(Tagged {
            plan,
            tags: tag_names.into_iter().map(Column::new_unqualified).collect(),
            unique: false,
            non_null_tags,
        })
    }

    /// `VALUES` whose rows read outer columns, `(VALUES (o.x), (1))`: a row
    /// is its expressions over the domain, one row for each domain value,
    /// and several rows are the `UNION ALL` of each alone.
    fn push_values(&self, values: &Values) -> Result<Tagged> {
        let row_alone = |row: &Vec<Expr>| {
            LogicalPlan::Values(Values {
                schema: Arc::clone(&values.schema),
                values: vec![row.clone()],
            })
        };
        let [row] = values.values.as_slice() else {
            let rows = values.values.iter().map(|row| Arc::new(row_alone(row)));
            let union = Union::try_new_with_loose_types(rows.collect())?;
            return self.push_union(&union);
        };
        let (domain, tags) = self.domain_instance()?;
        let mut exprs = row
            .iter()
            .zip(values.schema.iter())
            .map(|(expr, (qualifier, field))| {
                let expr = self.on_tags(expr, &tags, &[])?;
                Ok(expr
                    .cast_to(field.data_type(), domain.schema())?
                    .alias_qualified(qualifier.cloned(), field.name()))
            })
            .collect::<Result<Vec<_>>>()?;
        exprs.extend(tags.iter().cloned().map(Expr::Column));
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(domain).project(exprs)?.build()?,
            tags,
            unique: true,
            non_null_tags: false,
        })
    }

    /// `expr` of an operator over inputs `scope`, aliased to `name` if
    /// rewriting it on the tags renamed it.
    fn named_on_tags(
        &self,
        expr: &Expr,
        name: &Column,
        tags: &[Column],
        scope: &[DFSchemaRef],
    ) -> Result<Expr> {
        let rewritten = self.on_tags(expr, tags, scope)?;
        if &rewritten == expr {
            Ok(rewritten)
        } else {
            Ok(rewritten
                .unalias()
                .alias_qualified(name.relation.clone(), &name.name))
        }
    }

    /// A `LATERAL` join inside the subquery whose lateral side reads outer
    /// columns of the domain as well as its left side's (`FROM t a2 CROSS
    /// JOIN unnest(make_array(o.k, a2.k))`, `o` outer): the domain is pushed
    /// into the left side, and the lateral side reads the outer columns
    /// from the left side's tags instead, as it reads the left side's own
    /// columns. For a left row tagged `d`, the lateral side then gives the
    /// rows it gives for that row under the outer value `d`, which is what
    /// the join gave for `d`. The join stays a lateral join, now correlated
    /// to its left side only, for the rule to decorrelate as any other.
    fn push_lateral(&self, join: &Join) -> Result<Tagged> {
        let left = self.push(&join.left)?;
        // A column of the left side hides an outer one of the same name
        let left_scope = [Arc::clone(join.left.schema())];
        let to_tag = |column: &Column| {
            self.domain
                .index_of(column)
                .map(|index| Expr::Column(left.tags[index].clone()))
        };
        let right = lateral_on_tags(join.right.as_ref().clone(), &|subquery| {
            Ok(replace_in_subquery(subquery, &to_tag, &left_scope)?.data)
        })?;
        let scope = [
            Arc::clone(join.left.schema()),
            Arc::clone(join.right.schema()),
        ];
        let on = join
            .on
            .iter()
            .map(|(l, r)| {
                Ok((
                    self.on_tags(l, &left.tags, &scope)?,
                    self.on_tags(r, &left.tags, &scope)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let filter = join
            .filter
            .as_ref()
            .map(|filter| self.on_tags(filter, &left.tags, &scope))
            .transpose()?;
        let plan = LogicalPlan::Join(Join::try_new(
            Arc::new(left.plan),
            Arc::new(right),
            on,
            filter,
            join.join_type,
            join.join_constraint,
            join.null_equality,
            join.null_aware,
        )?);
        Ok(Tagged {
            plan,
            tags: left.tags,
            unique: false,
            non_null_tags: left.non_null_tags,
        })
    }

    /// `expr` of an operator over inputs `scope`, with its references to the
    /// domain's outer columns replaced by `tags`, also inside the subqueries
    /// it holds (there they stay outer references, now to the tags).
    pub(crate) fn on_tags(
        &self,
        expr: &Expr,
        tags: &[Column],
        scope: &[DFSchemaRef],
    ) -> Result<Expr> {
        replace_outer(
            expr,
            &|column| {
                self.domain
                    .index_of(column)
                    .map(|index| Expr::Column(tags[index].clone()))
            },
            scope,
        )
    }

    /// Whether `plan`, or a subquery in it, reads an outer column of the
    /// domain.
    pub(crate) fn reads_outer(&self, plan: &LogicalPlan) -> Result<bool> {
        reads_columns(plan, &self.domain.outer)
    }
}

/// Stops a tree walk once `found` holds.
pub(crate) fn stop_when(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
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
    expr.exists(|expr| match expr {
        Expr::OuterReferenceColumn(_, column) => Ok(columns.contains(column)),
        Expr::ScalarSubquery(subquery)
        | Expr::Exists(Exists { subquery, .. })
        | Expr::InSubquery(InSubquery { subquery, .. })
        | Expr::SetComparison(SetComparison { subquery, .. }) => {
            reads_columns(&subquery.subquery, columns)
        }
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
            other => in_subquery_expr(other, replacement, scope),
        })
        .data()
}

/// A subquery expression with the outer references in its plan replaced.
fn in_subquery_expr(
    expr: Expr,
    replacement: &dyn Fn(&Column) -> Option<Expr>,
    scope: &[DFSchemaRef],
) -> Result<Transformed<Expr>> {
    Ok(match expr {
        Expr::ScalarSubquery(subquery) => {
            replace_in_subquery(subquery, replacement, scope)?
                .update_data(Expr::ScalarSubquery)
        }
        Expr::Exists(Exists { subquery, negated }) => {
            replace_in_subquery(subquery, replacement, scope)?
                .update_data(|subquery| Expr::Exists(Exists { subquery, negated }))
        }
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => {
            replace_in_subquery(subquery, replacement, scope)?.update_data(|subquery| {
                Expr::InSubquery(InSubquery {
                    expr,
                    subquery,
                    negated,
                })
            })
        }
        Expr::SetComparison(SetComparison {
            expr,
            subquery,
            op,
            quantifier,
        }) => {
            replace_in_subquery(subquery, replacement, scope)?.update_data(|subquery| {
                Expr::SetComparison(SetComparison {
                    expr,
                    subquery,
                    op,
                    quantifier,
                })
            })
        }
        other => Transformed::no(other),
    })
}

fn replace_in_subquery(
    subquery: Subquery,
    replacement: &dyn Fn(&Column) -> Option<Expr>,
    scope: &[DFSchemaRef],
) -> Result<Transformed<Subquery>> {
    let transformed = subquery.subquery.as_ref().clone().transform_up(|node| {
        // A subquery deeper down sees this operator's inputs first
        let mut inner_scope = scope.to_vec();
        inner_scope.extend(node.inputs().iter().map(|input| Arc::clone(input.schema())));
        node.map_expressions(|expr| {
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
                other => in_subquery_expr(other, replacement, &inner_scope),
            })
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

/// The distinct rows of `plan`, as an aggregate grouped by all its columns
/// (see [`Domain::new`]).
fn distinct_rows(plan: LogicalPlan) -> Result<LogicalPlan> {
    let columns: Vec<Expr> = plan
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    LogicalPlanBuilder::from(plan)
        .aggregate(columns, Vec::<Expr>::new())?
        .build()
}

/// The subquery of a `LATERAL` join's right side, under its alias and the
/// filters the optimizer pushed between the two, if `plan` is one.
pub(crate) fn lateral_side(plan: &LogicalPlan) -> Option<&Subquery> {
    fn below_alias(plan: &LogicalPlan) -> Option<&Subquery> {
        match plan {
            LogicalPlan::Subquery(subquery) => Some(subquery),
            LogicalPlan::Filter(Filter { input, .. }) => below_alias(input),
            _ => None,
        }
    }
    match plan {
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) => below_alias(input),
        plan => below_alias(plan),
    }
}

/// The right side `plan` of a `LATERAL` join (see [`lateral_side`]) with
/// the filters between its alias and its subquery moved into the
/// subquery, which they read alone: the side the SQL planner makes, a
/// subquery under its alias ([`lateral_parts`]).
pub(crate) fn filters_into_subquery(plan: LogicalPlan) -> Result<LogicalPlan> {
    match plan {
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            let input = filters_into_subquery(Arc::unwrap_or_clone(input))?;
            LogicalPlanBuilder::from(input).alias(alias)?.build()
        }
        LogicalPlan::Filter(Filter {
            predicate, input, ..
        }) => match filters_into_subquery(Arc::unwrap_or_clone(input))? {
            LogicalPlan::Subquery(subquery) => {
                let mut outer_ref_columns = subquery.outer_ref_columns;
                for reference in find_out_reference_exprs(&predicate) {
                    if !outer_ref_columns.contains(&reference) {
                        outer_ref_columns.push(reference);
                    }
                }
                let body = Filter::try_new(predicate, subquery.subquery)?;
                Ok(LogicalPlan::Subquery(Subquery {
                    subquery: Arc::new(LogicalPlan::Filter(body)),
                    outer_ref_columns,
                    spans: subquery.spans,
                }))
            }
            input => Ok(LogicalPlan::Filter(Filter::try_new(
                predicate,
                Arc::new(input),
            )?)),
        },
        other => Ok(other),
    }
}

/// The right side `plan` of a `LATERAL` join, its filters moved into its
/// subquery ([`filters_into_subquery`]) and the subquery rewritten by
/// `rewrite`.
fn lateral_on_tags(
    plan: LogicalPlan,
    rewrite: &dyn Fn(Subquery) -> Result<Subquery>,
) -> Result<LogicalPlan> {
    match filters_into_subquery(plan)? {
        LogicalPlan::Subquery(subquery) => Ok(LogicalPlan::Subquery(rewrite(subquery)?)),
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            match Arc::unwrap_or_clone(input) {
                LogicalPlan::Subquery(subquery) => {
                    LogicalPlanBuilder::from(LogicalPlan::Subquery(rewrite(subquery)?))
                        .alias(alias)?
                        .build()
                }
                other => internal_err!(
                    "A LATERAL side under its alias is a subquery, not {}",
                    other.display()
                ),
            }
        }
        other => internal_err!("A LATERAL side is a subquery, not {}", other.display()),
    }
}

/// The subquery of a `LATERAL` join's right side and the alias it is read
/// under, if `plan` is one.
pub(crate) fn lateral_parts(
    plan: &LogicalPlan,
) -> Option<(&Subquery, Option<&TableReference>)> {
    match plan {
        LogicalPlan::Subquery(subquery) => Some((subquery, None)),
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            match input.as_ref() {
                LogicalPlan::Subquery(subquery) => Some((subquery, Some(alias))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `left IS NOT DISTINCT FROM right`.
fn not_distinct(left: Expr, right: Expr) -> Expr {
    binary_expr(left, Operator::IsNotDistinctFrom, right)
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

/// `input` grouped by `group_expr`, computing `aggr_expr`.
///
/// Where `input` only selects and renames columns, as the projection that
/// names the tags bound by equalities does (`o_custkey AS __domain_tag_1_0`),
/// the aggregate reads the columns under their own names and the renames
/// move above it: the aggregate a user writes by hand, over a scan that reads
/// its columns without a projection of its own, and a rename the projections
/// above absorb. The output is the same, under the same names.
pub(crate) fn aggregate_below_renames(
    input: LogicalPlan,
    group_expr: Vec<Expr>,
    aggr_expr: Vec<Expr>,
) -> Result<LogicalPlan> {
    let planned = LogicalPlanBuilder::from(input)
        .aggregate(group_expr, aggr_expr)?
        .build()?;
    let LogicalPlan::Aggregate(aggregate) = &planned else {
        return Ok(planned);
    };
    let (mut group_expr, mut aggr_expr) =
        (aggregate.group_expr.clone(), aggregate.aggr_expr.clone());
    if group_expr.iter().chain(&aggr_expr).any(contains_subquery) {
        return Ok(planned);
    }
    // Through every projection of columns, as a projection on the tags may
    // sit on the one that names them
    let mut below = aggregate.input.as_ref();
    while let LogicalPlan::Projection(renames) = below
        && let Some(sources) = renamed_columns(renames)
    {
        let to_sources = |exprs: &[Expr]| {
            exprs
                .iter()
                .map(|expr| read_renamed(expr, renames, &sources))
                .collect::<Result<Vec<_>>>()
        };
        group_expr = to_sources(&group_expr)?;
        aggr_expr = to_sources(&aggr_expr)?;
        below = renames.input.as_ref();
    }
    if std::ptr::eq(below, aggregate.input.as_ref()) {
        return Ok(planned);
    }
    // Two renames of one column grouped together would group by it twice
    let Ok(below) = LogicalPlanBuilder::from(below.clone())
        .aggregate(group_expr, aggr_expr)
        .and_then(LogicalPlanBuilder::build)
    else {
        return Ok(planned);
    };
    let (names, columns) = (planned.schema().columns(), below.schema().columns());
    if names.len() != columns.len() {
        return Ok(planned);
    }
    let exprs = columns.into_iter().zip(names).map(|(column, name)| {
        if column == name {
            Expr::Column(column)
        } else {
            Expr::Column(column).alias_qualified(name.relation, name.name)
        }
    });
    LogicalPlanBuilder::from(below).project(exprs)?.build()
}

/// The column each expression of `projection` reads, if each is a column,
/// renamed or not.
fn renamed_columns(projection: &Projection) -> Option<Vec<Column>> {
    projection
        .expr
        .iter()
        .map(|expr| match expr.clone().unalias() {
            Expr::Column(column) => Some(column),
            _ => None,
        })
        .collect()
}

/// `expr` over `projection`, reading the columns of its input that
/// `sources` says its columns are.
fn read_renamed(
    expr: &Expr,
    projection: &Projection,
    sources: &[Column],
) -> Result<Expr> {
    expr.clone()
        .transform_up(|expr| match &expr {
            Expr::Column(column) => match projection.schema.maybe_index_of_column(column)
            {
                Some(index) => Ok(Transformed::yes(Expr::Column(sources[index].clone()))),
                None => plan_err!("no column {column} in the projection"),
            },
            _ => Ok(Transformed::no(expr)),
        })
        .data()
}

/// Refuses an aggregate of a subquery whose arguments read outer columns
/// only, such as `(SELECT sum(o.x))`: SQL makes it an aggregate of the outer
/// query, which the plan here cannot express.
pub(crate) fn refuse_outer_aggregates(aggregate: &Aggregate) -> Result<()> {
    for expr in &aggregate.aggr_expr {
        let (mut outer, mut inner) = (false, false);
        expr.apply(|expr| {
            match expr {
                Expr::OuterReferenceColumn(..) => outer = true,
                Expr::Column(_) => inner = true,
                // Columns of a nested subquery are its own
                Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_) => {
                    return Ok(TreeNodeRecursion::Jump);
                }
                _ => {}
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        if outer && !inner {
            // Once a dependent join has replaced the outer columns by its
            // own, the aggregate's text is not the user's
            let name = expr.schema_name().to_string();
            let aggregate = if name.contains("__") {
                "An aggregate".to_string()
            } else {
                format!("Aggregate {name}")
            };
            return plan_err!(
                "{aggregate} in a subquery reads only outer columns: SQL evaluates \
                 it in the outer query, which is not supported"
            );
        }
    }
    Ok(())
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
        return not_impl_err!("window expression {expr} is not a window function");
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

/// The value of aggregate expression `expr` over an empty input.
pub(crate) fn empty_input_value(
    expr: &Expr,
    schema: &DFSchemaRef,
) -> Result<ScalarValue> {
    match expr {
        Expr::Alias(Alias { expr, .. }) => empty_input_value(expr, schema),
        Expr::AggregateFunction(AggregateFunction { func, .. }) => {
            let data_type = expr.get_type(schema)?;
            func.default_value(&data_type)
        }
        _ => Ok(ScalarValue::Null),
    }
}
