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

//! Chooses the join a decorrelated scalar subquery is joined with.
//!
//! A scalar subquery returns at most one row for each outer row. When the
//! decorrelated subquery is known to match at most one row per outer row, a
//! plain [`JoinType::Left`] is exact, and the optimizer may simplify it
//! further (into an inner or semi join when a filter rejects its NULLs).
//! Otherwise [`JoinType::LeftSingle`] keeps the scalar semantics: a second
//! matching row is an error at run time.
//!
//! The proof looks for a set of the subquery's output columns that is unique
//! (no two rows agree on all of them) and that the join filter fixes by
//! equality to an expression over the outer plan alone. Unique sets come from
//! the schema's functional dependencies (declared keys, `GROUP BY`) and are
//! carried up through projections, filters and joins whose other side is
//! unique on its join keys. An inequality fixes nothing.

use std::collections::BTreeSet;

use datafusion_common::{Column, DFSchema, Dependency, NullEquality};
use datafusion_expr::logical_plan::{Join, JoinType, LogicalPlan};
use datafusion_expr::utils::split_conjunction;
use datafusion_expr::{BinaryExpr, Expr, Operator};

use crate::correlation::equality_sides;

/// A set of output column indices on which a plan is unique. The empty set
/// means the plan returns at most one row.
type UniqueKey = BTreeSet<usize>;

/// The join type for a decorrelated scalar subquery `subquery` (already
/// aliased) joined onto an outer plan with `join_filter`.
pub(crate) fn scalar_subquery_join_type(
    subquery: &LogicalPlan,
    join_filter: Option<&Expr>,
) -> JoinType {
    let fixed = fixed_columns(subquery.schema(), join_filter);
    if unique_keys(subquery)
        .iter()
        .any(|key| key.is_subset(&fixed))
    {
        JoinType::Left
    } else {
        JoinType::LeftSingle
    }
}

/// Whether `plan` has at most one row for each value of `columns`.
pub(crate) fn unique_on(plan: &LogicalPlan, columns: &[Column]) -> bool {
    let schema = plan.schema();
    let fixed: UniqueKey = columns
        .iter()
        .filter_map(|column| schema.maybe_index_of_column(column))
        .collect();
    unique_keys(plan).iter().any(|key| key.is_subset(&fixed))
}

/// Indices of the subquery's columns that `join_filter` equates with an
/// expression that does not read the subquery.
fn fixed_columns(subquery_schema: &DFSchema, join_filter: Option<&Expr>) -> UniqueKey {
    let Some(filter) = join_filter else {
        return UniqueKey::new();
    };
    let is_inner = |column: &Column| subquery_schema.has_column(column);
    let reads_inner = |expr: &Expr| expr.column_refs().into_iter().any(is_inner);
    let mut fixed = UniqueKey::new();
    for conjunct in split_conjunction(filter) {
        for (side, other) in equality_sides(conjunct) {
            if let Some(column) = column_of(side)
                && !reads_inner(other)
                && let Some(index) = subquery_schema.maybe_index_of_column(column)
            {
                fixed.insert(index);
            }
        }
    }
    fixed
}

/// The unique keys of `plan`'s output.
fn unique_keys(plan: &LogicalPlan) -> Vec<UniqueKey> {
    if plan.max_rows().is_some_and(|max_rows| max_rows <= 1) {
        return vec![UniqueKey::new()];
    }
    let mut keys: Vec<UniqueKey> = plan
        .schema()
        .functional_dependencies()
        .iter()
        .filter(|dependence| dependence.mode == Dependency::Single)
        .map(|dependence| dependence.source_indices.iter().copied().collect())
        .collect();
    keys.extend(derived_unique_keys(plan));
    keys
}

/// Unique keys the schema's functional dependencies do not record: those
/// carried through a join whose other side matches at most one row.
fn derived_unique_keys(plan: &LogicalPlan) -> Vec<UniqueKey> {
    match plan {
        LogicalPlan::Projection(projection) => {
            let input_keys = unique_keys(&projection.input);
            let input_schema = projection.input.schema();
            // Output index of each input column the projection passes through
            let passed: Vec<(usize, usize)> = projection
                .expr
                .iter()
                .enumerate()
                .filter_map(|(output, expr)| {
                    let input = input_schema.maybe_index_of_column(column_of(expr)?)?;
                    Some((input, output))
                })
                .collect();
            input_keys
                .into_iter()
                .filter_map(|key| {
                    key.iter()
                        .map(|input| {
                            passed
                                .iter()
                                .find(|(from, _)| from == input)
                                .map(|(_, output)| *output)
                        })
                        .collect::<Option<UniqueKey>>()
                })
                .collect()
        }
        LogicalPlan::Filter(filter) => unique_keys(&filter.input),
        LogicalPlan::SubqueryAlias(alias) => unique_keys(&alias.input),
        LogicalPlan::Sort(sort) => unique_keys(&sort.input),
        LogicalPlan::Limit(limit) => unique_keys(&limit.input),
        LogicalPlan::Join(join) => join_unique_keys(join),
        // Grouping by a constant (such as the count bug's `__always_true`)
        // splits no group
        LogicalPlan::Aggregate(aggregate)
            if !aggregate
                .group_expr
                .iter()
                .any(|expr| matches!(expr, Expr::GroupingSet(_))) =>
        {
            let key = aggregate
                .group_expr
                .iter()
                .enumerate()
                .filter(|(_, expr)| !is_literal(expr))
                .map(|(index, _)| index)
                .collect();
            vec![key]
        }
        _ => vec![],
    }
}

/// A join keeps the unique keys of one side when every row of that side
/// matches at most one row of the other side.
fn join_unique_keys(join: &Join) -> Vec<UniqueKey> {
    let left_len = join.left.schema().fields().len();
    // Equijoin keys, including equalities between the sides still in the filter
    let reads = |plan: &LogicalPlan, expr: &Expr| {
        column_of(expr).is_some_and(|column| plan.schema().has_column(column))
    };
    let mut on: Vec<(&Expr, &Expr)> = join.on.iter().map(|(l, r)| (l, r)).collect();
    for conjunct in join.filter.iter().flat_map(split_conjunction) {
        if let Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) = conjunct
        {
            if reads(&join.left, left) && reads(&join.right, right) {
                on.push((left, right));
            } else if reads(&join.left, right) && reads(&join.right, left) {
                on.push((right, left));
            }
        }
    }
    // Each side's keys, computed once: nested joins would otherwise repeat
    // the walk of every input below them
    let (left_keys, right_keys) = (unique_keys(&join.left), unique_keys(&join.right));
    // Where NULL keys match each other, a key holding several NULLs (a
    // nullable `UNIQUE`) does not make a side unique on its join keys
    let nulls_match = join.null_equality == NullEquality::NullEqualsNull;
    let unique_on = |plan: &LogicalPlan, keys: &[UniqueKey], on: Vec<&Expr>| {
        let schema = plan.schema();
        let on: UniqueKey = on
            .into_iter()
            .filter_map(|expr| schema.maybe_index_of_column(column_of(expr)?))
            .collect();
        keys.iter().any(|key| {
            key.is_subset(&on)
                && (!nulls_match
                    || key.iter().all(|&index| !schema.field(index).is_nullable()))
        })
    };
    let keeps_left = matches!(
        join.join_type,
        JoinType::Inner | JoinType::Left | JoinType::LeftSingle
    ) && unique_on(
        &join.right,
        &right_keys,
        on.iter().map(|(_, r)| *r).collect(),
    );
    let keeps_right =
        matches!(
            join.join_type,
            JoinType::Inner | JoinType::Right | JoinType::RightSingle
        ) && unique_on(&join.left, &left_keys, on.iter().map(|(l, _)| *l).collect());

    let mut keys = vec![];
    if keeps_right {
        keys.extend(
            right_keys
                .into_iter()
                .map(|key| key.into_iter().map(|index| index + left_len).collect()),
        );
    }
    if keeps_left {
        keys.extend(left_keys);
    }
    keys
}

fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(..) => true,
        Expr::Alias(alias) => is_literal(&alias.expr),
        _ => false,
    }
}

/// The column `expr` reads as a whole, looking through aliases.
pub(crate) fn column_of(expr: &Expr) -> Option<&Column> {
    match expr {
        Expr::Column(column) => Some(column),
        Expr::Alias(alias) => column_of(&alias.expr),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::{Constraint, Constraints, Result};
    use datafusion_expr::logical_plan::builder::table_source_with_constraints;
    use datafusion_expr::logical_plan::table_scan;
    use datafusion_expr::{LogicalPlanBuilder, col, lit, out_ref_col};

    use super::*;

    /// `customer(c_custkey, c_name, c_nationkey)`, with `c_custkey` its primary
    /// key when `keyed`.
    fn customer(keyed: bool) -> Result<LogicalPlanBuilder> {
        let schema = Schema::new(vec![
            Field::new("c_custkey", DataType::Int64, false),
            Field::new("c_name", DataType::Utf8, true),
            Field::new("c_nationkey", DataType::Int64, true),
        ]);
        let constraints = if keyed {
            Constraints::new_unverified(vec![Constraint::PrimaryKey(vec![0])])
        } else {
            Constraints::default()
        };
        let source = table_source_with_constraints(&schema, constraints);
        LogicalPlanBuilder::scan("customer", source, None)
    }

    fn join_type(subquery: LogicalPlan, filter: Expr) -> Result<JoinType> {
        let aliased = LogicalPlanBuilder::from(subquery).alias("sq")?.build()?;
        Ok(scalar_subquery_join_type(&aliased, Some(&filter)))
    }

    fn outer_key() -> Expr {
        out_ref_col(DataType::Int64, "orders.o_custkey")
    }

    #[test]
    fn key_fixed_by_equality_needs_no_single_join() -> Result<()> {
        let subquery = customer(true)?.build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::Left);
        Ok(())
    }

    #[test]
    fn key_survives_extra_predicate_and_projection() -> Result<()> {
        let subquery = customer(true)?
            .filter(col("c_name").not_eq(lit("x")))?
            .project(vec![col("c_name"), col("c_custkey")])?
            .build()?;
        let filter = col("sq.c_custkey")
            .eq(outer_key())
            .and(col("sq.c_name").not_eq(lit("y")));
        assert_eq!(join_type(subquery, filter)?, JoinType::Left);
        Ok(())
    }

    #[test]
    fn no_key_needs_single_join() -> Result<()> {
        let subquery = customer(false)?.build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn key_under_inequality_proves_nothing() -> Result<()> {
        let subquery = customer(true)?.build()?;
        let filter = col("sq.c_custkey").lt(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn key_equated_with_inner_column_proves_nothing() -> Result<()> {
        let subquery = customer(true)?.build()?;
        let filter = col("sq.c_custkey").eq(col("sq.c_nationkey"));
        assert_eq!(join_type(subquery, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn key_dropped_by_projection_proves_nothing() -> Result<()> {
        let subquery = customer(true)?
            .project(vec![col("c_name"), col("c_nationkey")])?
            .build()?;
        let filter = col("sq.c_nationkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn group_by_fixed_columns_needs_no_single_join() -> Result<()> {
        let subquery = customer(false)?
            .aggregate(vec![col("c_custkey")], Vec::<Expr>::new())?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::Left);

        let subquery = customer(false)?
            .aggregate(vec![col("c_custkey"), col("c_name")], Vec::<Expr>::new())?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn constant_group_by_splits_no_group() -> Result<()> {
        let subquery = customer(false)?
            .aggregate(
                vec![col("c_custkey"), lit(true).alias("__always_true")],
                Vec::<Expr>::new(),
            )?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(subquery, filter)?, JoinType::Left);
        Ok(())
    }

    /// `nation(n_nationkey, n_name)` with `n_nationkey` a nullable `UNIQUE`.
    fn nation_with_nullable_unique_key() -> Result<LogicalPlan> {
        let schema = Schema::new(vec![
            Field::new("n_nationkey", DataType::Int64, true),
            Field::new("n_name", DataType::Utf8, true),
        ]);
        let constraints = Constraints::new_unverified(vec![Constraint::Unique(vec![0])]);
        let source = table_source_with_constraints(&schema, constraints);
        LogicalPlanBuilder::scan("nation", source, None)?.build()
    }

    #[test]
    fn nullable_unique_side_is_not_unique_where_nulls_match() -> Result<()> {
        let join = |null_equality| -> Result<LogicalPlan> {
            customer(true)?
                .join_detailed(
                    nation_with_nullable_unique_key()?,
                    JoinType::Inner,
                    (vec!["c_nationkey"], vec!["n_nationkey"]),
                    None,
                    null_equality,
                )?
                .build()
        };
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(
            join_type(join(NullEquality::NullEqualsNothing)?, filter.clone())?,
            JoinType::Left
        );
        // Several NULL nation keys all match a customer's NULL nation key
        assert_eq!(
            join_type(join(NullEquality::NullEqualsNull)?, filter)?,
            JoinType::LeftSingle
        );
        Ok(())
    }

    #[test]
    fn unnest_repeats_the_key() -> Result<()> {
        let schema = Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new_list("arr", Field::new_list_field(DataType::Int64, true), true),
        ]);
        let constraints =
            Constraints::new_unverified(vec![Constraint::PrimaryKey(vec![0])]);
        let source = table_source_with_constraints(&schema, constraints);
        let unnested = LogicalPlanBuilder::scan("s", source, None)?
            .unnest_column("arr")?
            .build()?;
        let filter = col("sq.k").eq(outer_key());
        assert_eq!(join_type(unnested, filter)?, JoinType::LeftSingle);
        Ok(())
    }

    #[test]
    fn key_carried_through_join_with_unique_side() -> Result<()> {
        let nation = table_scan(
            Some("nation"),
            &Schema::new(vec![
                Field::new("n_nationkey", DataType::Int64, false),
                Field::new("n_name", DataType::Utf8, true),
            ]),
            None,
        )?
        .aggregate(vec![col("n_nationkey")], Vec::<Expr>::new())?
        .build()?;
        let joined = customer(true)?
            .join(
                nation.clone(),
                JoinType::Inner,
                (vec!["c_nationkey"], vec!["n_nationkey"]),
                None,
            )?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(joined, filter)?, JoinType::Left);

        // An equality within one side equates nothing with the other
        let same_side = customer(true)?
            .join_on(
                nation.clone(),
                JoinType::Inner,
                vec![col("n_nationkey").eq(col("n_nationkey"))],
            )?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(same_side, filter)?, JoinType::LeftSingle);

        // The nation side is unique on a key equated in the join filter
        let in_filter = customer(true)?
            .join_on(
                nation.clone(),
                JoinType::Inner,
                vec![col("c_nationkey").eq(col("n_nationkey"))],
            )?
            .build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(in_filter, filter)?, JoinType::Left);

        // The nation side is not unique on a join with no keys
        let crossed = customer(true)?.cross_join(nation)?.build()?;
        let filter = col("sq.c_custkey").eq(outer_key());
        assert_eq!(join_type(crossed, filter)?, JoinType::LeftSingle);
        Ok(())
    }
}
