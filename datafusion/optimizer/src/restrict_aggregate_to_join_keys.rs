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

//! [`RestrictAggregateToJoinKeys`] aggregates only the rows whose group keys
//! the other side of a join has, where that side is a small filtered query
//! cheap enough to compute a second time (a magic set). It runs where
//! `datafusion.optimizer.restrict_aggregate_to_join_keys` is set (off by
//! default).
//!
//! TPC-H q20 compares each filtered `partsupp` row with the quantity shipped
//! of its part and supplier. Decorrelated, the subquery is an aggregate of
//! all of `lineitem` grouped by `(l_partkey, l_suppkey)`, joined to the few
//! `partsupp` rows the query keeps:
//!
//! ```text
//! LeftSemi Join: ps_partkey = l_partkey, ps_suppkey = l_suppkey Filter: ...
//!   LeftSemi Join: ps_partkey = p_partkey          (partsupp of 'forest%' parts)
//!   Aggregate: groupBy=[[l_partkey, l_suppkey]], aggr=[[sum(l_quantity)]]
//!     TableScan: lineitem
//! ```
//!
//! Every group whose key no `partsupp` row has is computed and then dropped
//! by the join. With the keys of the other side as a semi join below the
//! aggregate, only the groups the join can use are computed:
//!
//! ```text
//!   Aggregate: groupBy=[[l_partkey, l_suppkey]], aggr=[[sum(l_quantity)]]
//!     LeftSemi Join: l_partkey = __join_keys_1.ps_partkey, l_suppkey = __join_keys_1.ps_suppkey
//!       TableScan: lineitem
//!       SubqueryAlias: __join_keys_1
//!         Projection: ps_partkey, ps_suppkey
//!           LeftSemi Join: ps_partkey = p_partkey   (the other side, again)
//! ```
//!
//! # When the rows stay the same
//!
//! Let `A` be an aggregate with plain `GROUP BY` keys `g` over input `I`,
//! reached from one input of a join through projections, aliases and
//! filters (`HAVING`) that pass the key columns through unchanged, and `O`
//! the join's other input, with equi-join pairs `g_i = o_i`.
//!
//! 1. The semi join keeps or drops each row of `I` by its values of `g`
//!    alone, so it keeps or drops whole groups: every group it keeps has the
//!    same rows, and the same aggregate values, as before.
//! 2. A group it drops has key values that no row of `O` has under the
//!    join's own equality (the semi join uses the join's null equality), so
//!    no row of that group satisfies the join's `g_i = o_i`, and the join's
//!    output has no row from it. This needs the join to drop the rows of
//!    `A`'s side that match nothing: an inner join, a semi or single join
//!    from `O`'s side, or an outer join preserving `O`'s side. An anti, mark
//!    or full join would output or mark those unmatched rows, and is left
//!    alone, as is a null-aware anti join (`NOT IN`), which a NULL key of a
//!    dropped group changes.
//! 3. `O` is computed twice, once for the keys and once for the join, so
//!    both computations must give the same rows: `O` holds no volatile
//!    expression, no subquery, and no operator whose rows may differ between
//!    two runs (a `LIMIT` without a total order, a window, a user-defined
//!    node). It is built only of scans of base tables (not a recursive
//!    query's work table, which its recursive term may read only once),
//!    filters, projections, aliases and joins. The join keys `o_i` it
//!    computes for the semi join, and the group keys `g` the semi join
//!    computes before the aggregate does, are not volatile either: each
//!    would be drawn twice. A source that gives other rows each time it is
//!    read, such as an unbounded stream registered as a base table, cannot
//!    be told apart in the logical plan: for such sources the rule must stay
//!    off (it is off by default).
//! 4. A grouping set outputs rows whose key column is NULL for groups that
//!    are not keyed by it: only a plain `GROUP BY` is restricted.
//!
//! Filtering `I` below `A` never changes how `I` itself is computed, so `I`
//! may hold anything.
//!
//! # When it pays
//!
//! The logical plan carries no statistics, so the rule decides by the shape
//! of `O`: it restricts where `O` is filtered (a filter, a scan with pushed
//! filters, or a semi or anti join), so that its keys are a subset the query
//! chose, and reads at most [`MAX_TABLES_OF_KEYS`] tables, so that computing
//! it again costs little beside the aggregate it shrinks. An aggregate whose
//! input is already an inner or semi join on its group keys (a dependent
//! join's domain, a restriction written by hand, or this rule's own) is left
//! as it is. None of this is needed for the answer, only for the speed;
//! `docs/benchmarks.md` has the measured gain, and the cost where the filter
//! keeps every row.

use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, JoinType, NullEquality, Result, TableReference};
use datafusion_expr::logical_plan::{
    Aggregate, Filter, Join, JoinConstraint, Projection, SubqueryAlias,
};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, TableType};

use crate::optimizer::ApplyOrder;
use crate::subquery_uniqueness::column_of;
use crate::{OptimizerConfig, OptimizerRule};

/// The most tables the other side of the join may read to be computed a
/// second time for its keys.
pub const MAX_TABLES_OF_KEYS: usize = 2;

/// Restricts an aggregate joined on its group keys to the keys the other
/// side of the join has. See the [module documentation](self).
#[derive(Default, Debug)]
pub struct RestrictAggregateToJoinKeys {}

impl RestrictAggregateToJoinKeys {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self::default()
    }
}

impl OptimizerRule for RestrictAggregateToJoinKeys {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        if !config.options().optimizer.restrict_aggregate_to_join_keys {
            return Ok(Transformed::no(plan));
        }
        let LogicalPlan::Join(join) = plan else {
            return Ok(Transformed::no(plan));
        };
        match restricted_join(&join, config)? {
            Some(join) => Ok(Transformed::yes(LogicalPlan::Join(join))),
            None => Ok(Transformed::no(LogicalPlan::Join(join))),
        }
    }

    fn name(&self) -> &str {
        "restrict_aggregate_to_join_keys"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }
}

/// `join` with the aggregate under one of its inputs restricted to the keys
/// of the other input, or `None` where no input qualifies.
fn restricted_join(join: &Join, config: &dyn OptimizerConfig) -> Result<Option<Join>> {
    if join.null_aware {
        return Ok(None);
    }
    for aggregate_on_left in [false, true] {
        if !drops_unmatched_rows_of(join.join_type, aggregate_on_left) {
            continue;
        }
        let (aggregated, other) = if aggregate_on_left {
            (&join.left, &join.right)
        } else {
            (&join.right, &join.left)
        };
        if !is_worth_computing_again(other) {
            continue;
        }
        // Each equi-join pair whose side of the aggregate is a column, as
        // that column's index and the other side's expression
        let keys = join
            .on
            .iter()
            .filter_map(|(left, right)| {
                let (ours, theirs) = if aggregate_on_left {
                    (left, right)
                } else {
                    (right, left)
                };
                // A volatile key would be drawn once for the keys and again
                // for the join
                let Expr::Column(column) = ours else {
                    return None;
                };
                if theirs.is_volatile() {
                    return None;
                }
                let index = aggregated.schema().index_of_column(column).ok()?;
                Some((index, theirs.clone()))
            })
            .collect::<Vec<_>>();
        if keys.is_empty() {
            continue;
        }
        let restriction = Restriction {
            keys_of: other,
            null_equality: join.null_equality,
            config,
        };
        let Some(restricted) = restriction.apply(aggregated, keys)? else {
            continue;
        };
        let mut join = join.clone();
        if aggregate_on_left {
            join.left = Arc::new(restricted);
        } else {
            join.right = Arc::new(restricted);
        }
        return Ok(Some(join));
    }
    Ok(None)
}

/// Whether a join of `join_type` outputs nothing for a row of the input on
/// the left (`left`) or right side that matches no row of the other.
fn drops_unmatched_rows_of(join_type: JoinType, left: bool) -> bool {
    match join_type {
        JoinType::Inner => true,
        JoinType::Left | JoinType::LeftSemi | JoinType::LeftSingle => !left,
        JoinType::Right | JoinType::RightSemi | JoinType::RightSingle => left,
        JoinType::Full
        | JoinType::LeftAnti
        | JoinType::RightAnti
        | JoinType::LeftMark
        | JoinType::RightMark => false,
    }
}

/// Whether `plan` gives the same rows each time it runs and is cheap and
/// selective enough to compute a second time for its keys (module
/// documentation, conditions 3 and "When it pays").
fn is_worth_computing_again(plan: &LogicalPlan) -> bool {
    let mut tables = 0;
    let mut filtered = false;
    let mut repeatable = true;
    let visited = plan.apply(|node| {
        match node {
            LogicalPlan::TableScan(scan) => {
                tables += 1;
                filtered |= !scan.filters.is_empty();
                // Not a recursive query's work table (`Temporary`), which its
                // recursive term may read once, nor a stream (`View`)
                repeatable &=
                    scan.fetch.is_none() && scan.source.table_type() == TableType::Base;
            }
            LogicalPlan::Filter(_) => filtered = true,
            LogicalPlan::Join(join) => {
                filtered |= matches!(
                    join.join_type,
                    JoinType::LeftSemi
                        | JoinType::RightSemi
                        | JoinType::LeftAnti
                        | JoinType::RightAnti
                );
            }
            LogicalPlan::Projection(_) | LogicalPlan::SubqueryAlias(_) => {}
            _ => repeatable = false,
        }
        node.apply_expressions(|expr| {
            repeatable &= !expr.is_volatile() && !contains_subquery(expr);
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(if repeatable {
            TreeNodeRecursion::Continue
        } else {
            TreeNodeRecursion::Stop
        })
    });
    visited.is_ok() && repeatable && filtered && tables <= MAX_TABLES_OF_KEYS
}

/// Restricting an aggregate to the keys of `keys_of`.
struct Restriction<'a> {
    /// The join's other input.
    keys_of: &'a LogicalPlan,
    null_equality: NullEquality,
    config: &'a dyn OptimizerConfig,
}

impl Restriction<'_> {
    /// `plan` with the aggregate it passes its group keys up from restricted
    /// to the keys of [`Self::keys_of`], or `None` where it has no such
    /// aggregate. `keys` pairs the index of a column of `plan` with the
    /// expression of [`Self::keys_of`] the join equates it to.
    fn apply(
        &self,
        plan: &LogicalPlan,
        keys: Vec<(usize, Expr)>,
    ) -> Result<Option<LogicalPlan>> {
        // The index in `input`'s schema of each key column of `plan` that is
        // a column of `input` passed through by name
        let passed_through = |exprs: &[Expr], input: &LogicalPlan| {
            keys.iter()
                .filter_map(|(index, theirs)| {
                    let column = column_of(exprs.get(*index)?)?;
                    let index = input.schema().index_of_column(column).ok()?;
                    Some((index, theirs.clone()))
                })
                .collect::<Vec<_>>()
        };
        let restricted = match plan {
            LogicalPlan::Projection(projection) => {
                let keys = passed_through(&projection.expr, &projection.input);
                self.apply(&projection.input, keys)?
                    .map(|input| {
                        Projection::try_new_with_schema(
                            projection.expr.clone(),
                            Arc::new(input),
                            Arc::clone(&projection.schema),
                        )
                        .map(LogicalPlan::Projection)
                    })
                    .transpose()?
            }
            LogicalPlan::SubqueryAlias(alias) => self
                .apply(&alias.input, keys)?
                .map(|input| {
                    SubqueryAlias::try_new(Arc::new(input), alias.alias.clone())
                        .map(LogicalPlan::SubqueryAlias)
                })
                .transpose()?,
            LogicalPlan::Filter(filter) => self
                .apply(&filter.input, keys)?
                .map(|input| {
                    Filter::try_new(filter.predicate.clone(), Arc::new(input))
                        .map(LogicalPlan::Filter)
                })
                .transpose()?,
            LogicalPlan::Aggregate(aggregate) => {
                self.restrict_aggregate(aggregate, keys)?
            }
            _ => None,
        };
        Ok(restricted)
    }

    /// `aggregate` over its input semi-joined to the keys, or `None` where
    /// no key is one of its plain group keys or its input is already joined
    /// on them.
    fn restrict_aggregate(
        &self,
        aggregate: &Aggregate,
        keys: Vec<(usize, Expr)>,
    ) -> Result<Option<LogicalPlan>> {
        let grouping_sets = aggregate
            .group_expr
            .iter()
            .any(|expr| matches!(expr, Expr::GroupingSet(_)));
        if grouping_sets || is_joined_on_group_keys(aggregate) {
            return Ok(None);
        }
        // A volatile group key would be computed once by the semi join and
        // again by the aggregate
        let keys = keys
            .into_iter()
            .filter_map(|(index, theirs)| {
                let group = aggregate.group_expr.get(index)?;
                (!group.is_volatile()).then(|| (group.clone(), theirs))
            })
            .collect::<Vec<_>>();
        if keys.is_empty() {
            return Ok(None);
        }
        let input = self.semi_join(Arc::clone(&aggregate.input), keys)?;
        Aggregate::try_new_with_schema(
            Arc::new(input),
            aggregate.group_expr.clone(),
            aggregate.aggr_expr.clone(),
            Arc::clone(&aggregate.schema),
        )
        .map(|aggregate| Some(LogicalPlan::Aggregate(aggregate)))
    }

    /// `input` semi-joined to the keys of [`Self::keys_of`]: `keys` pairs an
    /// expression of `input` with the expression of the keys it must equal.
    fn semi_join(
        &self,
        input: Arc<LogicalPlan>,
        keys: Vec<(Expr, Expr)>,
    ) -> Result<LogicalPlan> {
        let alias = self.config.alias_generator().next("__join_keys");
        // The keys under their own names where those are distinct columns
        let own_names = keys
            .iter()
            .map(|(_, theirs)| match theirs {
                Expr::Column(column) => Some(column.name.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|names| {
                let mut distinct = names.clone();
                distinct.sort();
                distinct.dedup();
                distinct.len() == names.len()
            });
        let names = own_names
            .unwrap_or_else(|| (1..=keys.len()).map(|i| format!("key_{i}")).collect());
        let projection =
            keys.iter()
                .zip(&names)
                .map(|((_, theirs), name)| match theirs {
                    Expr::Column(column) if &column.name == name => theirs.clone(),
                    _ => theirs.clone().alias(name),
                });
        let keys_plan = LogicalPlanBuilder::from(self.keys_of.clone())
            .project(projection)?
            .alias(alias.as_str())?
            .build()?;
        let on = keys
            .into_iter()
            .zip(names)
            .map(|((ours, _), name)| {
                let key = Column::new(Some(TableReference::bare(alias.as_str())), name);
                (ours, Expr::Column(key))
            })
            .collect();
        Join::try_new(
            input,
            Arc::new(keys_plan),
            on,
            None,
            JoinType::LeftSemi,
            JoinConstraint::On,
            self.null_equality,
            false,
        )
        .map(LogicalPlan::Join)
    }
}

/// Whether `aggregate`'s input, under projections, is already an inner or
/// semi join on some of its group keys: restricted to keys by this rule, by
/// a dependent join's domain, or as written.
fn is_joined_on_group_keys(aggregate: &Aggregate) -> bool {
    let mut input = aggregate.input.as_ref();
    while let LogicalPlan::Projection(projection) = input {
        input = &projection.input;
    }
    match input {
        LogicalPlan::Join(join)
            if matches!(
                join.join_type,
                JoinType::Inner | JoinType::LeftSemi | JoinType::RightSemi
            ) =>
        {
            join.on.iter().any(|(left, right)| {
                aggregate.group_expr.contains(left)
                    || aggregate.group_expr.contains(right)
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::DataType;
    use datafusion_common::config::ConfigOptions;
    use datafusion_common::{JoinType, Result};
    use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, cast, col, lit};
    use datafusion_functions_aggregate::sum::sum;

    use super::RestrictAggregateToJoinKeys;
    use crate::OptimizerContext;
    use crate::fork_test_util::{optimized_by, random, table};

    /// `plan` as [`RestrictAggregateToJoinKeys`] alone rewrites it, in as
    /// many passes as the optimizer makes: the rewrite happens once.
    fn rewritten(plan: LogicalPlan) -> Result<String> {
        rewritten_with(plan, true)
    }

    /// Fails unless [`RestrictAggregateToJoinKeys`] leaves `plan` as it is.
    fn assert_left_alone(plan: LogicalPlan) -> Result<()> {
        let before = plan.display_indent().to_string();
        assert_eq!(rewritten(plan)?, before);
        Ok(())
    }

    /// `plan` as [`RestrictAggregateToJoinKeys`] rewrites it with
    /// `datafusion.optimizer.restrict_aggregate_to_join_keys` set to `on`.
    fn rewritten_with(plan: LogicalPlan, on: bool) -> Result<String> {
        let mut options = ConfigOptions::new();
        options.optimizer.restrict_aggregate_to_join_keys = on;
        let context = OptimizerContext::new_with_config_options(Arc::new(options))
            .with_max_passes(3);
        let optimized = optimized_by(RestrictAggregateToJoinKeys::new(), plan, &context)?;
        Ok(optimized.display_indent().to_string())
    }

    /// `SELECT k, sum(v) AS total FROM s GROUP BY k`, aliased `a`.
    fn totals() -> Result<LogicalPlan> {
        table("s")?
            .aggregate([col("s.k")], [sum(col("s.v")).alias("total")])?
            .alias("a")?
            .build()
    }

    /// `o [WHERE o.v > 0]` joined by `join_type` to [`totals`] on
    /// `o.k = a.k`.
    fn joined(join_type: JoinType, outer: LogicalPlanBuilder) -> Result<LogicalPlan> {
        outer
            .join_with_expr_keys(
                totals()?,
                join_type,
                (vec![col("o.k")], vec![col("a.k")]),
                None,
            )?
            .build()
    }

    fn filtered_outer() -> Result<LogicalPlanBuilder> {
        table("o")?.filter(col("o.v").gt(lit(0)))
    }

    #[test]
    fn an_aggregate_is_computed_for_the_keys_of_a_filtered_side() -> Result<()> {
        let plan = joined(JoinType::Inner, filtered_outer()?)?;
        insta::assert_snapshot!(rewritten(plan)?, @r"
            Inner Join: o.k = a.k
              Filter: o.v > Int32(0)
                TableScan: o
              SubqueryAlias: a
                Aggregate: groupBy=[[s.k]], aggr=[[sum(s.v) AS total]]
                  LeftSemi Join: s.k = __join_keys_1.k
                    TableScan: s
                    SubqueryAlias: __join_keys_1
                      Projection: o.k
                        Filter: o.v > Int32(0)
                          TableScan: o
            ");
        Ok(())
    }

    #[test]
    fn the_rule_is_off_by_default() -> Result<()> {
        let plan = joined(JoinType::Inner, filtered_outer()?)?;
        let before = plan.display_indent().to_string();
        assert_eq!(rewritten_with(plan, false)?, before);
        Ok(())
    }

    #[test]
    fn keys_reach_the_aggregate_through_projections_and_having() -> Result<()> {
        let subquery = table("s")?
            .aggregate([col("s.k"), col("s.v")], [sum(col("s.v")).alias("total")])?
            .filter(col("total").gt(lit(10)))?
            .project([col("total"), col("s.v").alias("w"), col("s.k")])?
            .alias("a")?
            .build()?;
        let plan = filtered_outer()?
            .join_with_expr_keys(
                subquery,
                JoinType::LeftSemi,
                (
                    vec![col("o.k"), col("o.v") + lit(1)],
                    vec![col("a.k"), col("a.w")],
                ),
                None,
            )?
            .build()?;
        insta::assert_snapshot!(rewritten(plan)?, @r"
            LeftSemi Join: o.k = a.k, o.v + Int32(1) = a.w
              Filter: o.v > Int32(0)
                TableScan: o
              SubqueryAlias: a
                Projection: total, s.v AS w, s.k
                  Filter: total > Int32(10)
                    Aggregate: groupBy=[[s.k, s.v]], aggr=[[sum(s.v) AS total]]
                      LeftSemi Join: s.k = __join_keys_1.key_1, s.v = __join_keys_1.key_2
                        TableScan: s
                        SubqueryAlias: __join_keys_1
                          Projection: o.k AS key_1, o.v + Int32(1) AS key_2
                            Filter: o.v > Int32(0)
                              TableScan: o
            ");
        Ok(())
    }

    /// The joins that output or mark the aggregate's unmatched rows, and
    /// other sides that are not the same rows twice or not worth a second
    /// computation.
    #[test]
    fn other_joins_are_left_alone() -> Result<()> {
        let limited = filtered_outer()?.limit(0, Some(10))?;
        let cases = [
            // the aggregate's rows are preserved
            joined(JoinType::Right, filtered_outer()?)?,
            joined(JoinType::Full, filtered_outer()?)?,
            // its unmatched rows are output or marked
            joined(JoinType::LeftAnti, filtered_outer()?)?,
            joined(JoinType::LeftMark, filtered_outer()?)?,
            // the other side keeps every row: no gain
            joined(JoinType::Inner, table("o")?)?,
            // the other side may give other rows a second time
            joined(
                JoinType::Inner,
                table("o")?.filter(col("o.v").gt(random() * lit(10.0)))?,
            )?,
            joined(JoinType::Inner, limited)?,
            // the other side reads more tables than is worth reading twice
            joined(
                JoinType::Inner,
                filtered_outer()?
                    .cross_join(table("p")?.build()?)?
                    .cross_join(table("q")?.build()?)?,
            )?,
        ];
        cases.into_iter().try_for_each(assert_left_alone)
    }

    /// An aggregate that already reads only rows joined to keys.
    #[test]
    fn an_aggregate_joined_on_its_keys_is_left_alone() -> Result<()> {
        let restricted = table("s")?
            .join(
                table("t")?.build()?,
                JoinType::LeftSemi,
                (vec!["s.k"], vec!["t.k"]),
                None,
            )?
            .aggregate([col("s.k")], [sum(col("s.v")).alias("total")])?
            .alias("a")?
            .build()?;
        let plan = filtered_outer()?
            .join_with_expr_keys(
                restricted,
                JoinType::Inner,
                (vec![col("o.k")], vec![col("a.k")]),
                None,
            )?
            .build()?;
        assert_left_alone(plan)
    }

    /// A volatile key, on either side, would be drawn twice.
    #[test]
    fn volatile_keys_are_left_alone() -> Result<()> {
        let drawn = || cast(random(), DataType::Int32);
        let by_drawn_key = table("s")?
            .aggregate([drawn().alias("k")], [sum(col("s.v")).alias("total")])?
            .alias("a")?
            .build()?;
        let cases = [
            filtered_outer()?
                .join_with_expr_keys(
                    totals()?,
                    JoinType::Inner,
                    (vec![col("o.k") + drawn()], vec![col("a.k")]),
                    None,
                )?
                .build()?,
            filtered_outer()?
                .join_with_expr_keys(
                    by_drawn_key,
                    JoinType::Inner,
                    (vec![col("o.k")], vec![col("a.k")]),
                    None,
                )?
                .build()?,
        ];
        cases.into_iter().try_for_each(assert_left_alone)
    }

    #[test]
    fn grouping_sets_are_left_alone() -> Result<()> {
        let rollup = table("s")?
            .aggregate(
                [Expr::GroupingSet(datafusion_expr::GroupingSet::Rollup(
                    vec![col("s.k")],
                ))],
                [sum(col("s.v")).alias("total")],
            )?
            .alias("a")?
            .build()?;
        let plan = filtered_outer()?
            .join_with_expr_keys(
                rollup,
                JoinType::Inner,
                (vec![col("o.k")], vec![col("a.k")]),
                None,
            )?
            .build()?;
        assert_left_alone(plan)
    }
}
