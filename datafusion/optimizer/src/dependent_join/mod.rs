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
//!
//! One module per family of operators the dependent join is pushed
//! through; [`count_bug`] holds the value an aggregate without `GROUP BY`
//! has for an outer value without input rows, for this module and for
//! upstream's [`ScalarSubqueryToJoin`] alike.
//!
//! [`ScalarSubqueryToJoin`]: crate::scalar_subquery_to_join::ScalarSubqueryToJoin

mod aggregate;
pub(crate) mod count_bug;
mod filter;
mod grouping_sets;
mod join;
mod projection;
mod recursive;
mod top_n;
mod union;
mod window;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::{Column, DFSchemaRef, Result, not_impl_err};
use datafusion_expr::logical_plan::{Distinct, Join, JoinType, SubqueryAlias, Unnest};
use datafusion_expr::{
    Expr, LogicalPlan, LogicalPlanBuilder, Operator, SortExpr, binary_expr,
};

use crate::correlation::lateral::lateral_side;
use crate::correlation::{correlated_in_plan, reads_columns, replace_outer};

pub(crate) use self::aggregate::aggregate_below_renames;
pub use self::recursive::TaggedWorkTable;
use self::recursive::WorkTable;

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
            LogicalPlanBuilder::from(side_holding(outer_plan, &outer)?.clone())
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

/// The input of the cross joins at the top of `plan` that holds every
/// column of `outer`, or `plan`.
///
/// A cross join returns every value of each side (or no row, where the
/// other side is empty): the distinct values of one side's columns are
/// those of the side alone, without the product, unless the side is a
/// lateral item reading the other. `FROM a, b, LATERAL (... a.x ...)`
/// takes the values of `a.x` from `a`.
fn side_holding<'a>(plan: &'a LogicalPlan, outer: &[Column]) -> Result<&'a LogicalPlan> {
    let LogicalPlan::Join(join) = plan else {
        return Ok(plan);
    };
    if join.join_type != JoinType::Inner || !join.on.is_empty() || join.filter.is_some() {
        return Ok(plan);
    }
    let holds =
        |side: &LogicalPlan| outer.iter().all(|column| side.schema().has_column(column));
    if holds(&join.left) {
        side_holding(&join.left, outer)
    } else if holds(&join.right) && !reads_other_side(join)? {
        side_holding(&join.right, outer)
    } else {
        Ok(plan)
    }
}

/// Whether the right side of `join` reads columns of its left side: a
/// lateral item, or a join holding one.
fn reads_other_side(join: &Join) -> Result<bool> {
    let right = match lateral_side(&join.right) {
        Some(lateral) => lateral.subquery.as_ref(),
        None => join.right.as_ref(),
    };
    Ok(!correlated_in_plan(right, &join.left)?.is_empty())
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
    /// The work tables of the recursive queries whose recursive term is
    /// being pushed through: their rows carry tags already.
    work_tables: Vec<WorkTable>,
    /// Whether a part of the subquery that reads no outer column was
    /// crossed with the domain: its rows repeat for every outer value.
    crossed_domain: Rc<Cell<bool>>,
}

impl<'a> DependentJoin<'a> {
    pub(crate) fn new(domain: &'a Domain, alias_generator: &'a AliasGenerator) -> Self {
        Self {
            domain,
            alias_generator,
            work_tables: vec![],
            crossed_domain: Rc::new(Cell::new(false)),
        }
    }

    /// Whether the plans pushed so far cross a part of the subquery with
    /// the domain, rather than tag its rows by the values they hold: then
    /// each outer value may have as many rows as that part has.
    pub(crate) fn crossed_domain(&self) -> bool {
        self.crossed_domain.get()
    }

    /// This dependent join, pushed into a recursive term that reads
    /// `work_table`.
    fn reading_work_table(&self, work_table: WorkTable) -> Self {
        let mut work_tables = self.work_tables.clone();
        work_tables.push(work_table);
        Self {
            domain: self.domain,
            alias_generator: self.alias_generator,
            work_tables,
            crossed_domain: Rc::clone(&self.crossed_domain),
        }
    }

    /// `plan` evaluated for every value of the domain, tagged with it.
    pub(crate) fn push(&self, plan: &LogicalPlan) -> Result<Tagged> {
        if let Some(work_table) = self.work_table_scan(plan) {
            return Ok(work_table);
        }
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
            LogicalPlan::RecursiveQuery(query) => self.push_recursive_query(query),
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
        self.crossed_domain
            .set(self.crossed_domain.get() || !unique);
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
    /// domain, or `plan` scans a work table whose rows carry tags.
    pub(crate) fn reads_outer(&self, plan: &LogicalPlan) -> Result<bool> {
        Ok(reads_columns(plan, &self.domain.outer)? || self.reads_work_table(plan)?)
    }
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

/// `left IS NOT DISTINCT FROM right`.
fn not_distinct(left: Expr, right: Expr) -> Expr {
    binary_expr(left, Operator::IsNotDistinctFrom, right)
}

#[cfg(test)]
mod tests {
    //! The operators [`DependentJoin::push`] passes through here: the
    //! others have their tests in their modules.

    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::Result;
    use datafusion_expr::col;
    use datafusion_expr::logical_plan::table_scan;

    use crate::fork_test_util::{outer, pushed, rows_of_key};

    #[test]
    fn a_distinct_keeps_the_tags_among_its_columns() -> Result<()> {
        let subquery = rows_of_key()?.project([col("s.v")])?.distinct()?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Aggregate: groupBy=[[s.v, __domain_tag_2_0]], aggr=[[]]
              Projection: s.v, __domain_tag_2_0
                Projection: s.k, s.v, s.k AS __domain_tag_2_0
                  Filter: s.k IS NOT NULL
                    TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn an_alias_requalifies_the_tags() -> Result<()> {
        let subquery = rows_of_key()?.alias("x")?.project([col("x.v")])?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: x.v, x.__domain_tag_2_0
              SubqueryAlias: x
                Projection: s.k, s.v, s.k AS __domain_tag_2_0
                  Filter: s.k IS NOT NULL
                    TableScan: s
            tags: [x.__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn an_unnest_repeats_the_tags_of_each_row() -> Result<()> {
        let list = DataType::List(Arc::new(Field::new_list_field(DataType::Int32, true)));
        let schema = Schema::new(vec![
            Field::new("k", DataType::Int32, true),
            Field::new("l", list, true),
        ]);
        let subquery = table_scan(Some("s"), &schema, None)?
            .filter(col("s.k").eq(outer("k")))?
            .unnest_column("l")?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Unnest: lists[s.l|depth=1] structs[]
              Projection: s.k, s.l, s.k AS __domain_tag_2_0
                Filter: s.k IS NOT NULL
                  TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }
}
