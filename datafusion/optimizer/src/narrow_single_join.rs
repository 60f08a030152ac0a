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

//! [`NarrowSingleJoin`] lets a filter on a looked-up value shrink the lookup
//! side of a single join without weakening its duplicate check.
//!
//! In `WHERE (SELECT c_name FROM customer WHERE c_custkey = o_custkey) = 'x'`
//! the filter cannot be pushed into the subquery side of the single join:
//! the join must see every match of an outer row to fail on a second one,
//! and a pushed filter would hide the rows it rejects. The join then builds
//! on the whole subquery side and emits every outer row, to keep a few.
//!
//! A filter that rejects NULL in the looked-up columns removes every outer
//! row whose match it rejects, and every outer row without a match. So the
//! lookup side may drop the rows the filter rejects, as long as the rows a
//! duplicate check needs stay: those of the join keys that occur more than
//! once. The lookup side becomes
//!
//! ```text
//! lookup rows WHERE filter OR join key occurs twice
//! ```
//!
//! where the keys that occur twice come from one grouped pass over the
//! lookup side (usually no row), joined back to it. An outer row with two
//! matches finds both still there and fails as before; an outer row with one
//! match sees it or, if the filter rejects it, NULL, which the filter above
//! (kept as it is) rejects just the same. The join's own non-equality filter
//! is unaffected: every row of a duplicated key stays.
//!
//! The lookup side is read twice, so it must return the same rows each time:
//! one with a volatile expression or a `LIMIT` is left as it is.

use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{Column, NullEquality, Result, TableReference};
use datafusion_expr::logical_plan::{Filter, Join, JoinConstraint, JoinType};
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit};
use datafusion_functions_aggregate::count::count_all;

use crate::optimizer::ApplyOrder;
use crate::utils::is_restrict_null_predicate;
use crate::{OptimizerConfig, OptimizerRule};
use datafusion_expr::subquery_exprs::contains_subquery;

/// The alias of the keys that occur more than once on a lookup side; it also
/// marks a lookup side as already narrowed.
const DUPLICATE_KEYS: &str = "__single_join_duplicate_keys";
/// The column that is non-NULL where a lookup row's key is duplicated.
const DUPLICATED: &str = "__duplicated";
/// The row count per key.
const ROWS_PER_KEY: &str = "__rows_per_key";

/// Narrows the lookup side of a single join under a filter that rejects
/// NULL in the looked-up columns; see the [module docs](self).
#[derive(Default, Debug)]
pub struct NarrowSingleJoin {}

impl NarrowSingleJoin {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self::default()
    }
}

impl OptimizerRule for NarrowSingleJoin {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Filter(filter) = plan else {
            return Ok(Transformed::no(plan));
        };
        let LogicalPlan::Join(join) = filter.input.as_ref() else {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        };
        let lookup = match join.join_type {
            JoinType::LeftSingle => &join.right,
            JoinType::RightSingle => &join.left,
            _ => return Ok(Transformed::no(LogicalPlan::Filter(filter))),
        };
        if join.on.is_empty() || is_narrowed(lookup) || !is_repeatable(lookup)? {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        }
        let narrowing = narrowing_predicate(&filter, lookup)?;
        let Some(narrowing) = narrowing else {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        };

        let mut join = join.clone();
        let keys = join
            .on
            .iter()
            .map(|(left, right)| match join.join_type {
                JoinType::LeftSingle => right.clone(),
                _ => left.clone(),
            })
            .collect::<Vec<_>>();
        let narrowed = Arc::new(narrow(
            Arc::clone(lookup),
            &keys,
            narrowing,
            join.null_equality,
            config.alias_generator(),
        )?);
        match join.join_type {
            JoinType::LeftSingle => join.right = narrowed,
            _ => join.left = narrowed,
        }
        Filter::try_new(filter.predicate, Arc::new(LogicalPlan::Join(join)))
            .map(|filter| Transformed::yes(LogicalPlan::Filter(filter)))
    }

    fn name(&self) -> &str {
        "narrow_single_join"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }
}

/// The conjuncts of `filter` that read only the lookup side and reject a
/// row whose looked-up columns are all NULL.
fn narrowing_predicate(filter: &Filter, lookup: &LogicalPlan) -> Result<Option<Expr>> {
    let schema = lookup.schema();
    let mut narrowing = vec![];
    for conjunct in split_conjunction(&filter.predicate) {
        let columns = conjunct.column_refs();
        if columns.is_empty()
            || !columns.iter().all(|column| schema.has_column(column))
            || conjunct.is_volatile()
            || conjunct.contains_outer()
            || contains_subquery(conjunct)
        {
            continue;
        }
        // An expression the NULL evaluation cannot handle narrows nothing.
        if let Ok(true) = is_restrict_null_predicate(conjunct.clone(), columns) {
            narrowing.push(conjunct.clone());
        }
    }
    Ok(conjunction(narrowing))
}

/// Whether `lookup` returns the same rows each time it runs, as the narrowed
/// side reads it twice: no volatile expression, and no `LIMIT`, which may
/// keep different rows each time.
fn is_repeatable(lookup: &LogicalPlan) -> Result<bool> {
    let unrepeatable = lookup.exists(|plan| {
        Ok(matches!(plan, LogicalPlan::Limit(_))
            || plan.expressions().iter().any(Expr::is_volatile))
    })?;
    Ok(!unrepeatable)
}

/// Whether `lookup` was narrowed already, by an earlier pass.
fn is_narrowed(lookup: &LogicalPlan) -> bool {
    match lookup {
        LogicalPlan::Projection(projection) => is_narrowed(&projection.input),
        LogicalPlan::Filter(filter) => is_narrowed(&filter.input),
        LogicalPlan::Join(join) => matches!(
            join.left.as_ref(),
            LogicalPlan::SubqueryAlias(alias)
                if alias.alias.table().starts_with(DUPLICATE_KEYS)
        ),
        _ => false,
    }
}

/// `lookup` restricted to the rows that pass `narrowing` and the rows whose
/// `keys` occur more than once, with the same schema.
fn narrow(
    lookup: Arc<LogicalPlan>,
    keys: &[Expr],
    narrowing: Expr,
    null_equality: NullEquality,
    alias_generator: &Arc<AliasGenerator>,
) -> Result<LogicalPlan> {
    let columns = lookup
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect::<Vec<_>>();
    let alias = alias_generator.next(DUPLICATE_KEYS);
    let key_names = (0..keys.len())
        .map(|i| format!("__key_{i}"))
        .collect::<Vec<_>>();
    let group = keys
        .iter()
        .zip(&key_names)
        .map(|(key, name)| key.clone().alias(name));
    let duplicate_columns = key_names
        .iter()
        .map(|name| Expr::Column(Column::new_unqualified(name)))
        .chain([lit(true).alias(DUPLICATED)]);
    let duplicate_keys = LogicalPlanBuilder::from(Arc::clone(&lookup))
        .aggregate(group, [count_all().unalias().alias(ROWS_PER_KEY)])?
        .filter(Expr::Column(Column::new_unqualified(ROWS_PER_KEY)).gt(lit(1_i64)))?
        .project(duplicate_columns)?
        .alias(alias.as_str())?
        .build()?;

    let qualified = |name: &str| {
        Expr::Column(Column::new(
            Some(TableReference::bare(alias.as_str())),
            name,
        ))
    };
    let on = key_names
        .iter()
        .zip(keys)
        .map(|(name, key)| (qualified(name), key.clone()))
        .collect();
    // The duplicate keys, usually none, are the build side.
    let marked = Join::try_new(
        Arc::new(duplicate_keys),
        lookup,
        on,
        None,
        JoinType::Right,
        JoinConstraint::On,
        null_equality,
        false,
    )?;
    LogicalPlanBuilder::from(LogicalPlan::Join(marked))
        .filter(narrowing.or(qualified(DUPLICATED).is_not_null()))?
        .project(columns)?
        .build()
}

#[cfg(test)]
mod tests {
    use datafusion_expr::{col, lit};

    use super::*;
    use crate::OptimizerContext;
    use crate::assert_optimized_plan_eq_snapshot;
    use crate::fork_test_util::{optimized_by, random, table};

    macro_rules! assert_optimized_plan_equal {
        (
            $plan:expr,
            @ $expected:literal $(,)?
        ) => {{
            let optimizer_ctx = OptimizerContext::new().with_max_passes(2);
            let rules: Vec<Arc<dyn crate::OptimizerRule + Send + Sync>> =
                vec![Arc::new(NarrowSingleJoin::new())];
            assert_optimized_plan_eq_snapshot!(
                optimizer_ctx,
                rules,
                $plan,
                @ $expected,
            )
        }};
    }

    /// `o ⟕single s ON o.k = s.k`, filtered by `predicate`.
    fn filtered_lookup(join_type: JoinType, predicate: Expr) -> Result<LogicalPlan> {
        let outer = table("o")?.build()?;
        let lookup = table("s")?.build()?;
        let (left, right, keys) = match join_type {
            JoinType::LeftSingle => (outer, lookup, (vec!["o.k"], vec!["s.k"])),
            _ => (lookup, outer, (vec!["s.k"], vec!["o.k"])),
        };
        LogicalPlanBuilder::from(left)
            .join(right, join_type, keys, None)?
            .filter(predicate)?
            .build()
    }

    /// The rule leaves `plan` as it is.
    fn assert_unchanged(plan: LogicalPlan) -> Result<()> {
        let optimized = optimized_by(
            NarrowSingleJoin::new(),
            plan.clone(),
            &OptimizerContext::new(),
        )?;
        assert_eq!(optimized, plan);
        Ok(())
    }

    #[test]
    fn filter_on_looked_up_value_narrows_the_lookup_side() -> Result<()> {
        let plan = filtered_lookup(JoinType::LeftSingle, col("s.v").eq(lit(3)))?;
        // Two passes: the second leaves the narrowed side alone.
        assert_optimized_plan_equal!(plan, @r"
        Filter: s.v = Int32(3)
          LeftSingle Join: o.k = s.k
            TableScan: o
            Projection: s.k, s.v
              Filter: s.v = Int32(3) OR __single_join_duplicate_keys_1.__duplicated IS NOT NULL
                Right Join: __single_join_duplicate_keys_1.__key_0 = s.k
                  SubqueryAlias: __single_join_duplicate_keys_1
                    Projection: __key_0, Boolean(true) AS __duplicated
                      Filter: __rows_per_key > Int64(1)
                        Aggregate: groupBy=[[s.k AS __key_0]], aggr=[[count(Int64(1)) AS __rows_per_key]]
                          TableScan: s
                  TableScan: s
        ")
    }

    #[test]
    fn right_single_join_narrows_its_left_side() -> Result<()> {
        let predicate = col("s.v").gt(lit(3)).and(col("o.v").lt(col("s.v")));
        let plan = filtered_lookup(JoinType::RightSingle, predicate)?;
        // Only the conjunct on the lookup side narrows it.
        assert_optimized_plan_equal!(plan, @r"
        Filter: s.v > Int32(3) AND o.v < s.v
          RightSingle Join: s.k = o.k
            Projection: s.k, s.v
              Filter: s.v > Int32(3) OR __single_join_duplicate_keys_1.__duplicated IS NOT NULL
                Right Join: __single_join_duplicate_keys_1.__key_0 = s.k
                  SubqueryAlias: __single_join_duplicate_keys_1
                    Projection: __key_0, Boolean(true) AS __duplicated
                      Filter: __rows_per_key > Int64(1)
                        Aggregate: groupBy=[[s.k AS __key_0]], aggr=[[count(Int64(1)) AS __rows_per_key]]
                          TableScan: s
                  TableScan: s
            TableScan: o
        ")
    }

    #[test]
    fn filters_that_keep_null_or_read_the_outer_side_do_not_narrow() -> Result<()> {
        for predicate in [
            col("s.v").is_null(),
            col("s.v").eq(lit(3)).or(col("o.v").eq(lit(1))),
            col("o.v").lt(col("s.v")),
            lit(true),
        ] {
            let plan = filtered_lookup(JoinType::LeftSingle, predicate)?;
            assert_unchanged(plan)?;
        }
        Ok(())
    }

    #[test]
    fn lookups_that_may_change_between_reads_are_not_narrowed() -> Result<()> {
        let outer = table("o")?.build()?;
        let random = random();
        let lookups = [
            table("s")?.limit(0, Some(3))?.build()?,
            table("s")?.filter(random.lt(lit(0.5)))?.build()?,
        ];
        for lookup in lookups {
            let plan = LogicalPlanBuilder::from(outer.clone())
                .join(
                    lookup,
                    JoinType::LeftSingle,
                    (vec!["o.k"], vec!["s.k"]),
                    None,
                )?
                .filter(col("s.v").eq(lit(3)))?
                .build()?;
            assert_unchanged(plan)?;
        }
        Ok(())
    }

    #[test]
    fn other_joins_are_left_alone() -> Result<()> {
        let outer = table("o")?.build()?;
        let plan = table("s")?
            .join(outer, JoinType::Left, (vec!["s.k"], vec!["o.k"]), None)?
            .filter(col("o.v").eq(lit(3)))?
            .build()?;
        assert_unchanged(plan)?;
        Ok(())
    }
}
