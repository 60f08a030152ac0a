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

//! Which correlated subqueries upstream's shape-specific rules leave to
//! [`DecorrelateSubqueries`]: the one contract between the two.
//!
//! [`ScalarSubqueryToJoin`], [`DecorrelatePredicateSubquery`] and
//! [`DecorrelateLateralJoin`] run first. They decorrelate a subquery by
//! pulling its correlated filters above its operators into the condition of
//! a join, which is right only where every operator between passes a
//! filtered row through unchanged. Each asks this module before it rewrites
//! a subquery, and leaves the ones it names, whole, to the dependent join:
//!
//! - [`leave_to_dependent_join`], asked of every operator of the subquery
//!   by the pull-up ([`PullUpCorrelatedExpr`]);
//! - [`leave_conjunct_to_dependent_join`], asked of each conjunct of a
//!   filter by [`DecorrelatePredicateSubquery`], for the answers its semi
//!   and anti joins cannot give;
//! - [`leave_subquery_to_dependent_join`], asked by both of the whole
//!   subquery: one correlated past the plan it would be joined to, or one
//!   whose plans or columns the pull-up would confuse
//!   ([`pull_up_confuses`], which the lateral rule asks too).
//!
//! [`pins_correlated_subquery`] is the same kind of promise made to
//! [`PushDownFilter`]: it keeps a filter with a correlated subquery where
//! the columns the subquery reads are, until the subquery is decorrelated.
//!
//! [`DecorrelateSubqueries`]: crate::decorrelate_subqueries::DecorrelateSubqueries
//! [`ScalarSubqueryToJoin`]: crate::scalar_subquery_to_join::ScalarSubqueryToJoin
//! [`DecorrelatePredicateSubquery`]: crate::decorrelate_predicate_subquery::DecorrelatePredicateSubquery
//! [`DecorrelateLateralJoin`]: crate::decorrelate_lateral_join::DecorrelateLateralJoin
//! [`PullUpCorrelatedExpr`]: crate::decorrelate::PullUpCorrelatedExpr
//! [`PushDownFilter`]: crate::push_down_filter::PushDownFilter

use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, DFSchema, Result};
use datafusion_expr::expr::{Exists, InSubquery};
use datafusion_expr::logical_plan::{
    Aggregate, Filter, JoinType, Projection, SkipType, SubqueryAlias, Window,
};
use datafusion_expr::subquery_exprs::{contains_subquery, subquery_of};
use datafusion_expr::utils::{find_out_reference_exprs, split_conjunction};
use datafusion_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};

use super::lateral::lateral_side;
use super::{
    correlated_below, free_outer_columns, outer_only_aggregate, outer_sides,
    read_past_inputs, stop_when,
};

/// Whether the shape-specific rules must leave a subquery containing `node`
/// to the dependent join: `node` holds a subquery that reads columns from beyond
/// `node` (a correlation two or more levels deep, which pulling up the outer
/// subquery would leave unbound), or `node` is a derived table whose
/// correlation reads a column it does not output (they cannot pull that up
/// through its alias), or a window with a correlation below it (a correlated
/// filter pulled above a window changes the rows the window sees), or an
/// aggregate over grouping sets with a correlation below it (pulled above
/// it, the filter drops the row of the empty grouping set an outer row
/// without input rows has), or an aggregate of outer columns only (which
/// SQL evaluates in the outer query: the dependent join refuses it), or a
/// join with
/// a correlation below a side whose rows it does not output as they are
/// ([`correlation_stays_below`]) or below both sides with a column name in
/// common, or an `OFFSET` above a correlation (they drop
/// the limit of an `EXISTS` subquery, which is right only without an
/// offset).
pub(crate) fn leave_to_dependent_join(node: &LogicalPlan) -> Result<bool> {
    match node {
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) => {
            return correlates_dropped_column(input);
        }
        LogicalPlan::Window(Window { input, .. }) => return correlated_below(input),
        LogicalPlan::Projection(projection) if pulled_up_column_clashes(projection)? => {
            return Ok(true);
        }
        LogicalPlan::Aggregate(Aggregate {
            group_expr, input, ..
        }) if matches!(group_expr.as_slice(), [Expr::GroupingSet(_)]) => {
            return correlated_below(input);
        }
        LogicalPlan::Aggregate(aggregate)
            if outer_only_aggregate(aggregate)?.is_some() =>
        {
            return Ok(true);
        }
        LogicalPlan::Join(join) => {
            // A lateral join inside the subquery whose lateral side reads
            // the subquery's outer columns: no filter here holds them
            if let Some(lateral) = lateral_side(&join.right) {
                let provided = join.left.schema();
                if free_outer_columns(&lateral.subquery)?
                    .iter()
                    .any(|column| !provided.has_column(column))
                {
                    return Ok(true);
                }
            }
            let (left_only, right_only) = correlation_stays_below(join.join_type);
            let (left, right) = (
                correlated_below(&join.left)?,
                correlated_below(&join.right)?,
            );
            // Correlated on both sides, the columns pulled up from each are
            // renamed under the subquery's alias by their names only: `s1.i`
            // and `s2.i` would become one column
            let same_names =
                left && right && shares_a_column_name(&join.left, &join.right);
            if (right_only && right) || (left_only && left) || same_names {
                return Ok(true);
            }
        }
        LogicalPlan::Limit(limit)
            if !matches!(limit.get_skip_type()?, SkipType::Literal(0)) =>
        {
            return correlated_below(&limit.input);
        }
        _ => {}
    }
    Ok(!read_past_inputs(node)?.is_empty())
}

/// Whether the pull-up would add to `projection` a column whose name its
/// output already has in a form that cannot stand beside it: a column that
/// a correlated filter below reads, which the projection does not output,
/// named like an output column without qualifier, or without a qualifier
/// itself. `SELECT 1 AS c FROM ... LATERAL (VALUES ...) x(c) WHERE o.v <
/// x.c` would output `c` and `x.c`, which are ambiguous; `CAST(max(v) AS
/// BIGINT)` is named `max(v)`, like the aggregate a `HAVING max(v) > o.x`
/// below reads.
fn pulled_up_column_clashes(projection: &Projection) -> Result<bool> {
    let output = projection.schema.as_ref();
    Ok(pulled_up_columns(&projection.input)?.iter().any(|column| {
        // The pull-up adds a column the projection does not output as it is
        let added = !projection
            .expr
            .iter()
            .any(|expr| matches!(expr, Expr::Column(output) if output == column));
        added
            && output.iter().any(|(qualifier, field)| {
                field.name() == &column.name
                    && (qualifier.is_none()
                        || column.relation.is_none()
                        || qualifier == column.relation.as_ref())
            })
    }))
}

/// The columns the correlated filters of `plan` read, as the pull-up names
/// them above `plan`: under the alias of each derived table they are in.
fn pulled_up_columns(plan: &LogicalPlan) -> Result<Vec<Column>> {
    let mut columns = vec![];
    match plan {
        LogicalPlan::Subquery(_) => return Ok(columns),
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            for column in pulled_up_columns(input)? {
                columns.push(Column::new(Some(alias.clone()), column.name));
            }
            return Ok(columns);
        }
        LogicalPlan::Filter(filter) => {
            for conjunct in split_conjunction(&filter.predicate) {
                if conjunct.contains_outer() {
                    columns.extend(conjunct.column_refs().into_iter().cloned());
                }
            }
        }
        _ => {}
    }
    for input in plan.inputs() {
        columns.extend(pulled_up_columns(input)?);
    }
    Ok(columns)
}

/// For a join of type `join_type`, whether a correlated filter must stay on
/// its left side, and on its right side: it can be pulled above the join
/// only out of a side whose rows the join outputs as they are, which is so
/// where the other side is no [`outer_sides`] of the join. Out of the
/// other side (the right of a left join, semi, anti or mark join, either
/// side of a full join) it would drop rows the join keeps, NULL-extended or
/// not: a `LEFT JOIN (... WHERE i = o.i)` becomes an inner join, and the
/// right side of `EXCEPT` a filter on its result. (The negation of
/// upstream's `lr_is_preserved` in `push_down_filter.rs`.)
fn correlation_stays_below(join_type: JoinType) -> (bool, bool) {
    let (left_outer, right_outer) = outer_sides(join_type);
    (right_outer, left_outer)
}

/// Whether a column of `left` and one of `right` have the same name.
fn shares_a_column_name(left: &LogicalPlan, right: &LogicalPlan) -> bool {
    let right = right.schema();
    left.schema()
        .fields()
        .iter()
        .any(|field| right.has_column_with_unqualified_name(field.name()))
}

/// Whether a predicate below `input` relates an outer reference to a column
/// that `input` does not output (a derived table whose `SELECT` list drops
/// the column its correlation reads).
fn correlates_dropped_column(input: &LogicalPlan) -> Result<bool> {
    let output = input.schema();
    let mut dropped = false;
    input.apply(|plan| {
        if matches!(plan, LogicalPlan::Subquery(_)) {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let LogicalPlan::Filter(filter) = plan {
            for conjunct in split_conjunction(&filter.predicate) {
                if conjunct.contains_outer() {
                    dropped |= conjunct
                        .column_refs()
                        .iter()
                        .any(|column| !output.has_column(column));
                }
            }
        }
        Ok(stop_when(dropped))
    })?;
    Ok(dropped)
}

/// Whether the shape-specific rules must leave `subquery`, to be joined to
/// a plan of schema `outer`, whole to the dependent join: where it is
/// [`correlated_beyond`] `outer`, or where the pull-up would confuse two
/// plans or two columns in it ([`pull_up_confuses`]).
pub(crate) fn leave_subquery_to_dependent_join(
    subquery: &LogicalPlan,
    outer: &DFSchema,
) -> Result<bool> {
    Ok(correlated_beyond(subquery, outer)? || pull_up_confuses(subquery)?)
}

/// Whether the pull-up would confuse two equal plans of `subquery`
/// ([`pull_up_confuses_equal_plans`]) or an outer column with one of the
/// subquery's own ([`outer_column_taken_for_inner`]).
pub(crate) fn pull_up_confuses(subquery: &LogicalPlan) -> Result<bool> {
    Ok(
        pull_up_confuses_equal_plans(subquery)?
            || outer_column_taken_for_inner(subquery)?,
    )
}

/// Whether an outer column that a correlated filter of `subquery` reads has
/// the name of a column the pull-up takes for the subquery's own: one of
/// the input of a correlated filter, or a correlated column as the pull-up
/// names it under a derived table's alias. The pull-up strips the outer
/// references of the conditions it pulls up and requalifies, under the
/// subquery's alias, every column of the subquery's it collected, from all
/// its filters at once: in `EXISTS (SELECT 1 FROM (SELECT t1.k FROM t1 WHERE
/// t1.k = t2.z) x WHERE x.k < t1.k)` the outer `t1.k` became the subquery's
/// `k`, and the subquery was never true (DataFusion 55.2.0 too). The
/// dependent join keeps outer references apart from columns.
fn outer_column_taken_for_inner(subquery: &LogicalPlan) -> Result<bool> {
    let mut outer_columns: Vec<Column> = vec![];
    let mut own_columns: Vec<Column> = pulled_up_columns(subquery)?;
    subquery.apply(|plan| {
        if matches!(plan, LogicalPlan::Subquery(_)) {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let LogicalPlan::Filter(filter) = plan {
            let mut correlated = false;
            for conjunct in split_conjunction(&filter.predicate) {
                if !conjunct.contains_outer() {
                    continue;
                }
                correlated = true;
                for reference in find_out_reference_exprs(conjunct) {
                    if let Expr::OuterReferenceColumn(_, column) = reference {
                        outer_columns.push(column);
                    }
                }
            }
            if correlated {
                own_columns.extend(filter.input.schema().columns());
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(outer_columns
        .iter()
        .any(|column| own_columns.contains(column)))
}

/// Whether a correlated filter of `subquery` reads an input that occurs in
/// `subquery` more than once (`(SELECT * FROM t WHERE t.v < o.v) a, (SELECT
/// k FROM t) b`: the scan of `t` twice). The pull-up records the columns a
/// correlation reads against the plan left where its filter was, by value:
/// the other occurrence would be taken to output them too, and the columns
/// named under its alias.
fn pull_up_confuses_equal_plans(subquery: &LogicalPlan) -> Result<bool> {
    let mut filtered: Vec<&LogicalPlan> = vec![];
    subquery.apply(|plan| {
        if matches!(plan, LogicalPlan::Subquery(_)) {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let LogicalPlan::Filter(filter) = plan
            && filter.predicate.contains_outer()
        {
            filtered.push(filter.input.as_ref());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    for input in filtered {
        let mut occurrences = 0;
        subquery.apply(|plan| {
            if matches!(plan, LogicalPlan::Subquery(_)) {
                return Ok(TreeNodeRecursion::Jump);
            }
            if plan == input {
                occurrences += 1;
            }
            Ok(stop_when(occurrences > 1))
        })?;
        if occurrences > 1 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `subquery` reads outer columns that `outer` does not have: it is
/// nested in another subquery and correlated past it. The shape-specific
/// rules would join it to `outer` with a condition on a column out of
/// scope; the dependent join decorrelates the enclosing subquery as a whole.
pub(crate) fn correlated_beyond(
    subquery: &LogicalPlan,
    outer: &DFSchema,
) -> Result<bool> {
    Ok(free_outer_columns(subquery)?
        .iter()
        .any(|column| !outer.has_column(column)))
}

/// Whether [`DecorrelatePredicateSubquery`] must leave `conjunct`, a
/// conjunct of a filter over an input of schema `outer`, to the dependent join.
///
/// Its semi, anti and mark joins answer an `IN` with true or false: right
/// where the conjunct keeps only rows for which `IN` is true, so that NULL
/// reads as false, and wrong where NULL must be told from false: a
/// `NOT IN`, or an `IN` under `NOT`, `IS NULL` or any operator but `AND`
/// and `OR`. Its null-aware anti join tells them apart for an uncorrelated
/// `x NOT IN` whose needle is NULL where its columns are (not for
/// `NULLIF(c, c)` over a column `c` that is never NULL) and for no
/// correlated one: NULL in the subquery's values for one outer row must
/// not decide for the others. These go to the dependent join's mark join
/// for `IN`, which counts the subquery's rows and non-NULL values per outer
/// value.
///
/// It also pulls a correlation above an aggregate without `GROUP BY`,
/// which returns one row on an empty input: `EXISTS (SELECT count(*) ...
/// WHERE s.k = o.k)` is true for every outer row, the semi join true only
/// where a row matches. The dependent join groups by the outer values and
/// gives the others the aggregates of an empty input.
///
/// And it leaves a subquery whose join condition would hold a subquery,
/// which no rule decorrelates: an `IN` whose value holds one, `(SELECT ...)
/// IN (SELECT ...)`, and an `EXISTS` or `IN` with a correlated condition that
/// holds one, `EXISTS (SELECT 1 FROM s WHERE o.x NOT IN (SELECT ...))`. The
/// dependent join evaluates the inner subquery as it goes.
///
/// [`DecorrelatePredicateSubquery`]: crate::decorrelate_predicate_subquery::DecorrelatePredicateSubquery
pub(crate) fn leave_conjunct_to_dependent_join(
    conjunct: &Expr,
    outer: &DFSchema,
) -> Result<bool> {
    let condition_holds_subquery = conjunct.exists(|expr| {
        Ok(match expr {
            Expr::InSubquery(InSubquery { expr, subquery, .. }) => {
                contains_subquery(expr)
                    || correlated_condition_holds_subquery(&subquery.subquery)?
            }
            Expr::Exists(Exists { subquery, .. }) => {
                correlated_condition_holds_subquery(&subquery.subquery)?
            }
            _ => false,
        })
    })?;
    if condition_holds_subquery {
        return Ok(true);
    }
    let mut over_scalar_aggregate = false;
    conjunct.apply(|expr| {
        if let Expr::Exists(Exists { subquery, .. })
        | Expr::InSubquery(InSubquery { subquery, .. }) = expr
        {
            over_scalar_aggregate =
                scalar_aggregate_over_correlation(&subquery.subquery)?;
        }
        Ok(stop_when(over_scalar_aggregate))
    })?;
    if over_scalar_aggregate {
        return Ok(true);
    }
    match conjunct {
        // The shapes the semi and anti joins take
        Expr::InSubquery(in_subquery) => {
            in_needs_null_answer(in_subquery, true, true, outer)
        }
        Expr::Not(inner) => match inner.as_ref() {
            Expr::InSubquery(in_subquery) => {
                let negated = InSubquery {
                    negated: !in_subquery.negated,
                    ..in_subquery.clone()
                };
                in_needs_null_answer(&negated, true, true, outer)
            }
            _ => embedded_in_needs_null_answer(conjunct, true, outer),
        },
        _ => embedded_in_needs_null_answer(conjunct, true, outer),
    }
}

/// Whether a filter of `plan` (not of a subquery in it) has a conjunct that
/// reads an outer column and holds a subquery: the conjunct upstream's rules
/// would pull up into a join condition.
fn correlated_condition_holds_subquery(plan: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    plan.apply(|node| {
        if let LogicalPlan::Filter(filter) = node {
            found = split_conjunction(&filter.predicate)
                .into_iter()
                .any(|conjunct| conjunct.contains_outer() && contains_subquery(conjunct));
        }
        Ok(stop_when(found))
    })?;
    Ok(found)
}

/// Whether an `IN` in `expr` must answer NULL, where `expr` itself reads
/// NULL as false if `positive`.
fn embedded_in_needs_null_answer(
    expr: &Expr,
    positive: bool,
    outer: &DFSchema,
) -> Result<bool> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And | Operator::Or,
            right,
        }) if positive => Ok(embedded_in_needs_null_answer(left, true, outer)?
            || embedded_in_needs_null_answer(right, true, outer)?),
        Expr::InSubquery(in_subquery) => {
            in_needs_null_answer(in_subquery, positive, false, outer)
        }
        _ => {
            // Below any other operator, NULL and false differ
            let mut needs = false;
            expr.apply(|expr| {
                if let Expr::InSubquery(in_subquery) = expr {
                    needs = in_needs_null_answer(in_subquery, false, false, outer)?;
                }
                Ok(stop_when(needs))
            })?;
            Ok(needs)
        }
    }
}

/// Whether the anti join of a `NOT IN` whose comparison `in_predicate`
/// (`needle = value`, the value the first column of `subquery`) reads
/// `outer` must be null-aware: where the needle or the value may be NULL.
/// A correlation's NULL matches no row, as in `NOT EXISTS`, so its columns
/// do not count (counted, they made a `NOT IN` of two non-null sides
/// null-aware with two keys, which the hash join refuses).
pub(crate) fn not_in_may_answer_null(
    in_predicate: &Expr,
    outer: &DFSchema,
    subquery: &DFSchema,
) -> Result<bool> {
    let Expr::BinaryExpr(BinaryExpr {
        left: needle,
        op: Operator::Eq,
        ..
    }) = in_predicate
    else {
        return Ok(true);
    };
    let value_nullable = subquery
        .fields()
        .first()
        .is_none_or(|field| field.is_nullable());
    Ok(value_nullable || needle.nullable(outer)?)
}

/// Whether `in_subquery` must answer NULL where it is not true: under an
/// operator that tells NULL from false (not `positive`), or negated.
/// `top` where it is the conjunct itself, which an anti join takes.
fn in_needs_null_answer(
    in_subquery: &InSubquery,
    positive: bool,
    top: bool,
    outer: &DFSchema,
) -> Result<bool> {
    let InSubquery {
        expr: needle,
        subquery,
        negated,
    } = in_subquery;
    let value_nullable = subquery
        .subquery
        .schema()
        .fields()
        .first()
        .is_none_or(|field| field.is_nullable());
    if !needle.nullable(outer)? && !value_nullable {
        return Ok(false);
    }
    if positive && !negated {
        return Ok(false);
    }
    // The null-aware anti join: uncorrelated, and a needle whose NULLs are
    // those of its column
    let null_aware = top
        && free_outer_columns(&subquery.subquery)?.is_empty()
        && matches!(needle.as_ref(), Expr::Column(_));
    Ok(!null_aware)
}

/// Whether `plan` holds an aggregate without `GROUP BY` with an outer
/// reference below it.
fn scalar_aggregate_over_correlation(plan: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    plan.apply(|node| {
        match node {
            LogicalPlan::Subquery(_) => return Ok(TreeNodeRecursion::Jump),
            LogicalPlan::Aggregate(aggregate) if aggregate.group_expr.is_empty() => {
                found = correlated_below(&aggregate.input)?;
            }
            _ => {}
        }
        Ok(stop_when(found))
    })?;
    Ok(found)
}

/// Whether [`PushDownFilter`] must keep `filter` where it is: it holds a
/// subquery that reads columns as outer references that, pushed down, it
/// could lose. A column of the filter's input: a join below would take the
/// filter to the side that has the columns it reads outside its subqueries,
/// which may not be the side the subquery reads. Or any column, where the
/// input renames columns (an alias or a projection): below it, the names the
/// subquery reads would be ones that are not there.
///
/// Such a filter waits for the subquery to be decorrelated, in a later pass.
///
/// [`PushDownFilter`]: crate::push_down_filter::PushDownFilter
pub(crate) fn pins_correlated_subquery(filter: &Filter) -> Result<bool> {
    let input = filter.input.schema();
    let renames = matches!(
        filter.input.as_ref(),
        LogicalPlan::SubqueryAlias(_) | LogicalPlan::Projection(_)
    );
    filter.predicate.exists(|expr| match subquery_of(expr) {
        Some(subquery) => Ok(free_outer_columns(&subquery.subquery)?
            .iter()
            .any(|column| renames || input.has_column(column))),
        None => Ok(false),
    })
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlan, LogicalPlanBuilder, col};

    use super::{pull_up_confuses, pull_up_confuses_equal_plans};
    use crate::fork_test_util::{outer, table};

    /// `s WHERE s.v < outer_ref(t.k)`
    fn filter_reading_outer(outer_table: &str) -> Result<LogicalPlan> {
        let outer_k = datafusion_expr::out_ref_col(
            arrow::datatypes::DataType::Int32,
            format!("{outer_table}.k").as_str(),
        );
        table("s")?.filter(col("s.v").lt(outer_k))?.build()
    }

    #[test]
    fn an_outer_column_named_like_one_of_the_subquery_confuses_the_pull_up() -> Result<()>
    {
        // The outer s.k beside the inner s.k: the pull-up would read one
        // for the other
        assert!(pull_up_confuses(&filter_reading_outer("s")?)?);
        assert!(!pull_up_confuses(&filter_reading_outer("o")?)?);
        // Read in one filter, named by the pull-up in another: `(SELECT s.k
        // FROM s WHERE s.k = o.k) x WHERE x.k < x.v`, the outer reference
        // here to a table named x
        let inner = table("s")?
            .filter(col("s.k").eq(outer("k")))?
            .project([col("s.k"), col("s.v")])?
            .alias("x")?;
        let outer_x_v =
            datafusion_expr::out_ref_col(arrow::datatypes::DataType::Int32, "x.v");
        let plan = inner.filter(col("x.k").lt(outer_x_v))?.build()?;
        assert!(pull_up_confuses(&plan)?);
        Ok(())
    }

    /// `(SELECT * FROM s WHERE s.v < o.v) a CROSS JOIN (SELECT k FROM
    /// second) b`
    fn correlated_beside(second: &str) -> Result<LogicalPlan> {
        let a = table("s")?
            .filter(col("s.v").lt(outer("v")))?
            .alias("a")?
            .build()?;
        let b = table(second)?
            .project(vec![col(format!("{second}.k"))])?
            .alias("b")?
            .build()?;
        LogicalPlanBuilder::from(a).cross_join(b)?.build()
    }

    #[test]
    fn a_correlated_filter_over_a_plan_read_twice_is_left() -> Result<()> {
        assert!(pull_up_confuses_equal_plans(&correlated_beside("s")?)?);
        assert!(!pull_up_confuses_equal_plans(&correlated_beside("t")?)?);
        Ok(())
    }
}
