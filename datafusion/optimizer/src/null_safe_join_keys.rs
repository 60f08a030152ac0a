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

//! The equalities of a NULL-safe join's filter, taken as keys.
//!
//! The decorrelation joins a subquery's rows back to the outer rows on its
//! tags, NULL-safely where a tag may be NULL (`outer_key_equality`): the
//! subquery run for a NULL outer value has an answer of its own. `o.x IN
//! (SELECT s.x ...)` adds `o.x = s.x`, which must not match two NULLs, and
//! upstream keeps such an equality in the join's filter. The hash join then
//! evaluates it over every row of the subquery with the outer row's tags,
//! which, where few tags have many rows, is the product of both sides.
//!
//! Every pair that satisfies `l = r` also has `l` NULL-safely equal to `r`:
//! the equality may be a NULL-safe key too, as long as the filter keeps it
//! for the pair of two NULLs, which the key matches and the filter does not.
//! Where `l` or `r` is never NULL the filter need not keep it, and where no
//! pair of keys can both be NULL, the join is a plain one: a join needs
//! NULL-safe keys only where both sides may be NULL.
//!
//! Whether a column may be NULL is what the schema says, unless an operator
//! above drops its NULLs: a filter `x = 5` keeps no row where `x` is NULL, an
//! inner join on `a = b` none where `a` or `b` is, and a mark join's mark is
//! true only for a row whose keys matched. A subquery nested in another is
//! decorrelated after it, and its join, or the filter on its mark, often
//! drops every NULL tag of the outer one.

use std::collections::{HashMap, HashSet};

use datafusion_common::tree_node::Transformed;
use datafusion_common::{Column, DFSchema, NullEquality};
use datafusion_expr::logical_plan::{Join, JoinType};
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, Operator};

/// `join`, if NULL-safe, with `filter_keys`, the equalities of its filter
/// between its sides, as keys; `rest` is the rest of its filter.
pub(crate) fn null_safe_join_keys(
    mut join: Join,
    filter_keys: Vec<(Expr, Expr)>,
    rest: Option<Expr>,
) -> Transformed<Join> {
    // A NULL-aware anti join reads NULL keys itself
    if join.null_equality != NullEquality::NullEqualsNull
        || join.null_aware
        || filter_keys.is_empty()
    {
        return Transformed::no(join);
    }
    let left = NonNull::of(&join.left);
    let right = NonNull::of(&join.right);
    let never_both_null = |(l, r): &(Expr, Expr)| {
        left.holds(l, join.left.schema()) || right.holds(r, join.right.schema())
    };
    if join.on.iter().all(never_both_null) {
        join.null_equality = NullEquality::NullEqualsNothing;
        for key in filter_keys {
            if !join.on.contains(&key) {
                join.on.push(key);
            }
        }
        join.filter = rest;
        return Transformed::yes(join);
    }
    // A volatile equality would be evaluated twice, as a key and in the
    // filter: it stays in the filter alone
    let (volatile, filter_keys): (Vec<_>, Vec<_>) = filter_keys
        .into_iter()
        .partition(|(l, r)| l.is_volatile() || r.is_volatile());
    let new_keys: Vec<(Expr, Expr)> = filter_keys
        .iter()
        .filter(|key| !join.on.contains(key))
        .cloned()
        .collect();
    if new_keys.is_empty() {
        return Transformed::no(join);
    }
    let kept = filter_keys
        .into_iter()
        .filter(|key| !never_both_null(key))
        .chain(volatile)
        .map(|(l, r)| l.eq(r));
    join.filter = conjunction(rest.into_iter().chain(kept));
    join.on.extend(new_keys);
    Transformed::yes(join)
}

/// What a plan's operators guarantee about NULLs in its output.
#[derive(Debug, Default)]
struct NonNull {
    /// The columns that hold no NULL.
    columns: HashSet<Column>,
    /// For the mark of a mark join: the columns that hold no NULL in the
    /// rows where the mark is true.
    when_true: HashMap<Column, HashSet<Column>>,
}

impl NonNull {
    fn of(plan: &LogicalPlan) -> Self {
        let mut facts = match plan {
            LogicalPlan::Filter(filter) => {
                let mut facts = Self::of(&filter.input);
                for conjunct in split_conjunction(&filter.predicate) {
                    facts.keep_rows_where(conjunct);
                }
                facts
            }
            LogicalPlan::Projection(projection) => {
                let renames = projection
                    .expr
                    .iter()
                    .zip(projection.schema.columns())
                    .filter_map(|(expr, output)| {
                        Some((renamed_column(expr)?.clone(), output))
                    })
                    .collect::<Vec<_>>();
                Self::of(&projection.input).renamed(&renames)
            }
            LogicalPlan::SubqueryAlias(alias) => {
                let renames = alias
                    .input
                    .schema()
                    .columns()
                    .into_iter()
                    .zip(alias.schema.columns())
                    .collect::<Vec<_>>();
                Self::of(&alias.input).renamed(&renames)
            }
            LogicalPlan::Sort(sort) => Self::of(&sort.input),
            LogicalPlan::Limit(limit) => Self::of(&limit.input),
            LogicalPlan::Repartition(repartition) => Self::of(&repartition.input),
            // A grouping set makes a group column NULL in the rows of the sets
            // without it
            LogicalPlan::Aggregate(aggregate)
                if !aggregate
                    .group_expr
                    .iter()
                    .any(|expr| matches!(expr, Expr::GroupingSet(_))) =>
            {
                let renames = aggregate
                    .group_expr
                    .iter()
                    .zip(aggregate.schema.columns())
                    .filter_map(|(expr, output)| {
                        Some((renamed_column(expr)?.clone(), output))
                    })
                    .collect::<Vec<_>>();
                Self::of(&aggregate.input).renamed(&renames)
            }
            LogicalPlan::Join(join) => Self::of_join(join),
            _ => Self::default(),
        };
        for (qualifier, field) in plan.schema().iter() {
            if !field.is_nullable() {
                facts.columns.insert(Column::from((qualifier, field)));
            }
        }
        facts
    }

    fn of_join(join: &Join) -> Self {
        // Under plain equality a NULL key matches nothing
        let matched_keys = |left: bool| -> HashSet<Column> {
            if join.null_equality != NullEquality::NullEqualsNothing {
                return HashSet::new();
            }
            join.on
                .iter()
                .filter_map(|(l, r)| column_of(if left { l } else { r }))
                .cloned()
                .collect()
        };
        // A matched pair satisfies the filter: its columns that the filter
        // compares hold no NULL
        let filtered = || {
            let mut filtered = Self::default();
            if let Some(filter) = &join.filter {
                for conjunct in split_conjunction(filter) {
                    filtered.keep_rows_where(conjunct);
                }
            }
            filtered.columns
        };
        let (left, right) = (Self::of(&join.left), Self::of(&join.right));
        let mark = || join.schema.columns().last().cloned();
        match join.join_type {
            JoinType::Inner => {
                let mut columns = left.columns;
                columns.extend(right.columns);
                columns.extend(matched_keys(true));
                columns.extend(matched_keys(false));
                columns.extend(filtered());
                Self {
                    columns,
                    when_true: HashMap::new(),
                }
            }
            JoinType::LeftSemi | JoinType::RightSemi => {
                let is_left = join.join_type == JoinType::LeftSemi;
                let mut kept = if is_left { left } else { right };
                kept.columns.extend(matched_keys(is_left));
                let side = if is_left { &join.left } else { &join.right };
                kept.columns.extend(
                    filtered()
                        .into_iter()
                        .filter(|column| side.schema().has_column(column)),
                );
                kept
            }
            JoinType::LeftMark | JoinType::RightMark => {
                let is_left = join.join_type == JoinType::LeftMark;
                let mut kept = if is_left { left } else { right };
                if let Some(mark) = mark() {
                    let side = if is_left { &join.left } else { &join.right };
                    let mut matched = matched_keys(is_left);
                    matched.extend(
                        filtered()
                            .into_iter()
                            .filter(|column| side.schema().has_column(column)),
                    );
                    kept.when_true.insert(mark, matched);
                }
                kept
            }
            JoinType::Left | JoinType::LeftAnti | JoinType::LeftSingle => Self {
                columns: left.columns,
                when_true: left.when_true,
            },
            JoinType::Right | JoinType::RightAnti | JoinType::RightSingle => Self {
                columns: right.columns,
                when_true: right.when_true,
            },
            JoinType::Full => Self::default(),
        }
    }

    /// The facts after a filter that keeps the rows where `conjunct` is
    /// true.
    fn keep_rows_where(&mut self, conjunct: &Expr) {
        match conjunct {
            Expr::Column(column) => {
                if let Some(columns) = self.when_true.get(column) {
                    self.columns.extend(columns.iter().cloned());
                }
                self.columns.insert(column.clone());
            }
            Expr::IsTrue(expr) => {
                if let Some(column) = column_of(expr) {
                    self.keep_rows_where(&Expr::Column(column.clone()));
                }
            }
            // Not a true mark: a false one is not NULL either
            Expr::IsNotNull(expr) => {
                if let Some(column) = column_of(expr) {
                    self.columns.insert(column.clone());
                }
            }
            // A comparison with NULL is never true
            Expr::BinaryExpr(binary)
                if matches!(
                    binary.op,
                    Operator::Eq
                        | Operator::NotEq
                        | Operator::Lt
                        | Operator::LtEq
                        | Operator::Gt
                        | Operator::GtEq
                ) =>
            {
                for side in [&binary.left, &binary.right] {
                    if let Some(column) = column_of(side) {
                        self.columns.insert(column.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// The facts of a plan whose output column `output` is input column
    /// `input`, for each pair of `renames`.
    fn renamed(self, renames: &[(Column, Column)]) -> Self {
        let rename = |columns: &HashSet<Column>| -> HashSet<Column> {
            renames
                .iter()
                .filter(|(input, _)| columns.contains(input))
                .map(|(_, output)| output.clone())
                .collect()
        };
        let mut when_true = HashMap::new();
        for (input, output) in renames {
            if let Some(columns) = self.when_true.get(input) {
                when_true.insert(output.clone(), rename(columns));
            }
        }
        Self {
            columns: rename(&self.columns),
            when_true,
        }
    }

    /// Whether `expr`, over the plan of `schema`, never evaluates to NULL.
    fn holds(&self, expr: &Expr, schema: &DFSchema) -> bool {
        match expr {
            Expr::Column(column) if self.columns.contains(column) => true,
            expr => matches!(expr.nullable(schema), Ok(false)),
        }
    }
}

/// The column that `expr` is, under an alias.
fn renamed_column(expr: &Expr) -> Option<&Column> {
    match expr {
        Expr::Column(column) => Some(column),
        Expr::Alias(alias) => renamed_column(&alias.expr),
        _ => None,
    }
}

/// The column that `expr` is, or is a cast or alias of: NULL where the
/// column is.
fn column_of(expr: &Expr) -> Option<&Column> {
    match expr {
        Expr::Column(column) => Some(column),
        Expr::Alias(alias) => column_of(&alias.expr),
        Expr::Cast(cast) => column_of(&cast.expr),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlanBuilder, col, lit};

    use super::*;
    use crate::OptimizerContext;
    use crate::extract_equijoin_predicate::ExtractEquijoinPredicate;
    use crate::fork_test_util::{optimized_by, table};

    /// `o` joined to `right` on `o.k` NULL-safely equal to `right_key`,
    /// with `filter`, after [`ExtractEquijoinPredicate`]: the plan, then how
    /// the join matches NULL keys.
    fn extracted(right: LogicalPlan, right_key: &str, filter: Expr) -> Result<String> {
        let plan = LogicalPlanBuilder::from(table("o")?.build()?)
            .join_detailed(
                right,
                JoinType::LeftMark,
                (vec![Column::from("o.k")], vec![Column::from(right_key)]),
                Some(filter),
                NullEquality::NullEqualsNull,
            )?
            .build()?;
        let context = OptimizerContext::new().with_max_passes(1);
        let optimized = optimized_by(ExtractEquijoinPredicate::new(), plan, &context)?;
        let LogicalPlan::Join(join) = &optimized else {
            return Ok(optimized.display_indent().to_string());
        };
        Ok(format!(
            "{}\n{:?}",
            optimized.display_indent(),
            join.null_equality
        ))
    }

    /// `o` joined as [`extracted`] does to `sub`: `s` mark-joined to `t` on
    /// `k`, filtered by `predicate` on the mark, `s.k` renamed `key`.
    fn joined_to_mark_filtered(predicate: Expr) -> Result<String> {
        let right = table("s")?
            .join(
                table("t")?.build()?,
                JoinType::LeftMark,
                (vec!["s.k"], vec!["t.k"]),
                None,
            )?
            .filter(predicate)?
            .project(vec![col("s.k").alias("key"), col("s.v")])?
            .alias("sub")?
            .build()?;
        extracted(right, "sub.key", col("o.v").eq(col("sub.v")))
    }

    #[test]
    fn a_key_a_filter_keeps_non_null_makes_the_join_plain() -> Result<()> {
        let right = table("s")?.filter(col("s.k").gt(lit(0)))?.build()?;
        let plan = extracted(right, "s.k", col("o.v").eq(col("s.v")))?;
        insta::assert_snapshot!(plan, @r"
        LeftMark Join: o.k = s.k, o.v = s.v
          TableScan: o
          Filter: s.k > Int32(0)
            TableScan: s
        NullEqualsNothing
        ");
        Ok(())
    }

    #[test]
    fn an_equality_is_a_null_safe_key_and_stays_in_the_filter() -> Result<()> {
        let right = table("s")?.build()?;
        let plan = extracted(right, "s.k", col("o.v").eq(col("s.v")))?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = s.k, o.v = s.v Filter: o.v = s.v
              TableScan: o
              TableScan: s
            NullEqualsNull
            ");
        Ok(())
    }

    #[test]
    fn a_true_mark_keeps_its_join_keys_non_null() -> Result<()> {
        // `s WHERE s.k IN (SELECT t.k FROM t)`, as a mark join decorrelates it
        let plan = joined_to_mark_filtered(col("t.mark"))?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = sub.key, o.v = sub.v
              TableScan: o
              SubqueryAlias: sub
                Projection: s.k AS key, s.v
                  Filter: t.mark
                    LeftMark Join: s.k = t.k
                      TableScan: s
                      TableScan: t
            NullEqualsNothing
            ");
        Ok(())
    }

    #[test]
    fn a_left_join_keeps_the_null_keys_of_its_right_side() -> Result<()> {
        let filtered = table("s")?.filter(col("s.k").gt(lit(0)))?.build()?;
        let right = table("t")?
            .join(filtered, JoinType::Left, (vec!["t.v"], vec!["s.v"]), None)?
            .build()?;
        let plan = extracted(right, "s.k", col("o.v").eq(col("t.v")))?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = s.k, o.v = t.v Filter: o.v = t.v
              TableScan: o
              Left Join: t.v = s.v
                TableScan: t
                Filter: s.k > Int32(0)
                  TableScan: s
            NullEqualsNull
            ");
        Ok(())
    }

    #[test]
    fn without_an_equality_to_take_the_join_stays_null_safe() -> Result<()> {
        let right = table("s")?.filter(col("s.k").gt(lit(0)))?.build()?;
        let plan = extracted(right, "s.k", col("o.v").lt(col("s.v")))?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = s.k Filter: o.v < s.v
              TableScan: o
              Filter: s.k > Int32(0)
                TableScan: s
            NullEqualsNull
            ");
        Ok(())
    }

    #[test]
    fn a_null_safe_key_of_a_never_null_side_leaves_the_filter() -> Result<()> {
        let right = table("s")?.filter(col("s.v").gt(lit(0)))?.build()?;
        let filter = col("o.v").eq(col("s.v")).and(col("o.k").eq(col("s.v")));
        let plan = extracted(right, "s.k", filter)?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = s.k, o.v = s.v, o.k = s.v
              TableScan: o
              Filter: s.v > Int32(0)
                TableScan: s
            NullEqualsNull
            ");
        Ok(())
    }

    #[test]
    fn a_mark_that_is_not_null_keeps_nothing_non_null() -> Result<()> {
        // A false mark is not NULL either: `s.k` may still be
        let plan = joined_to_mark_filtered(col("t.mark").is_not_null())?;
        insta::assert_snapshot!(plan, @r"
            LeftMark Join: o.k = sub.key, o.v = sub.v Filter: o.v = sub.v
              TableScan: o
              SubqueryAlias: sub
                Projection: s.k AS key, s.v
                  Filter: t.mark IS NOT NULL
                    LeftMark Join: s.k = t.k
                      TableScan: s
                      TableScan: t
            NullEqualsNull
            ");
        Ok(())
    }
}
