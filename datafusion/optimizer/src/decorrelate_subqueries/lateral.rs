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

//! `left JOIN LATERAL (subquery)`, the subquery correlated to the left side
//! in a way upstream's [`DecorrelateLateralJoin`] does not pull up: the
//! subquery evaluated for every value of the left side it reads, joined to
//! the left side on them.
//!
//! [`DecorrelateLateralJoin`]: crate::decorrelate_lateral_join::DecorrelateLateralJoin

use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::spans::Spans;
use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, NullEquality, Result};
use datafusion_expr::logical_plan::{Join, JoinType, Subquery};
use datafusion_expr::utils::conjunction;
use datafusion_expr::{BinaryExpr, Expr, LogicalPlan, LogicalPlanBuilder, Operator};

use super::decorrelated::outer_key_equality;
use crate::correlation::handoff::correlated_beyond;
use crate::correlation::lateral::{filters_into_subquery, lateral_parts, lateral_side};
use crate::correlation::{correlated_in_plan, free_outer_columns};
use crate::dependent_join::{DependentJoin, Domain};

/// `left JOIN LATERAL (subquery)`: the subquery evaluated for every outer
/// value it reads, joined to the left on them.
pub(super) fn rewrite_lateral(
    join: &Join,
    alias_generator: &AliasGenerator,
) -> Result<Option<LogicalPlan>> {
    if !matches!(join.join_type, JoinType::Inner | JoinType::Left) {
        return Ok(None);
    }
    if lateral_side(&join.right).is_none() {
        return Ok(None);
    }
    let right = filters_into_subquery(join.right.as_ref().clone())?;
    let Some((subquery, alias)) = lateral_parts(&right) else {
        return Ok(None);
    };
    let alias = alias.cloned();
    let body = subquery.subquery.as_ref();
    // A rewrite may have removed every outer reference the SQL had (`CASE
    // WHEN true THEN 1 ELSE x.k END` folded to `1`): the item is a derived
    // table, and the join an ordinary one
    if free_outer_columns(body)?.is_empty() {
        return uncorrelated(join, right).map(Some);
    }
    // Correlated to a column beyond the join's left side: not decorrelated
    if correlated_in_plan(body, &join.left)?.is_empty()
        || correlated_beyond(body, join.left.schema())?
    {
        return Ok(None);
    }
    let outer = correlated_in_plan(body, &join.left)?;
    let domain = Domain::new(&join.left, outer.clone(), alias_generator)?;
    let tagged = DependentJoin::new(&domain, alias_generator).push(body)?;
    // The right side keeps its name: its alias, or the subquery's own
    let (plan, tags) = match alias {
        Some(alias) => {
            let tags = tagged
                .tags
                .iter()
                .map(|tag| Column::new(Some(alias.clone()), &tag.name))
                .collect::<Vec<_>>();
            (
                LogicalPlanBuilder::from(tagged.plan)
                    .alias(alias)?
                    .build()?,
                tags,
            )
        }
        None => (tagged.plan, tagged.tags),
    };
    let columns: Vec<Expr> = join
        .schema
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let null_equality =
        outer_key_equality(&join.left, &outer, &plan, &tags, tagged.non_null_tags);
    // The join's own condition, with the equalities a rule moved into its
    // keys, reads the two sides under the same names as before
    let condition = condition_of(join);
    let joined = LogicalPlanBuilder::from(join.left.as_ref().clone())
        .join_detailed(
            plan,
            join.join_type,
            (outer, tags),
            condition,
            null_equality,
        )?
        .project(columns)?
        .build()?;
    Ok(Some(joined))
}

/// The whole condition of `join`: its key equalities and its filter.
fn condition_of(join: &Join) -> Option<Expr> {
    let op = match join.null_equality {
        NullEquality::NullEqualsNothing => Operator::Eq,
        NullEquality::NullEqualsNull => Operator::IsNotDistinctFrom,
    };
    conjunction(
        join.on
            .iter()
            .map(|(left, right)| {
                Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(left.clone()),
                    op,
                    Box::new(right.clone()),
                ))
            })
            .chain(join.filter.clone()),
    )
}

/// `l, r1 JOIN LATERAL (subquery reading l) ON p` as `l, LATERAL (SELECT *
/// FROM r1 JOIN LATERAL (subquery) ON p)`: the join on the right of `join`
/// made the lateral subquery of `join` when a lateral item in it reads
/// `l`, the left side of `join`.
///
/// A `LATERAL` item may read any `FROM` item to its left, also one outside
/// the join it is the right side of: `join`'s left side is the nearest
/// level that holds the column, and [`rewrite_lateral`] evaluates the whole
/// right side for each value of `l` it reads, the inner lateral item among
/// it. The right side's rows and columns are the same for every row of
/// `l`, whether read as a join or as a subquery; `join` keeps its type
/// (inner or left) and its condition.
pub(super) fn right_side_as_lateral(join: &Join) -> Result<Option<Join>> {
    let Some(right) = reassociable(&join.right) else {
        return Ok(None);
    };
    if !matches!(join.join_type, JoinType::Inner | JoinType::Left)
        || !reads_across(right, &join.left)?
    {
        return Ok(None);
    }
    let body = Arc::clone(&join.right);
    let lateral = LogicalPlan::Subquery(Subquery {
        outer_ref_columns: body.all_out_ref_exprs(),
        subquery: body,
        spans: Spans::new(),
    });
    let mut wrapped = join.clone();
    wrapped.right = Arc::new(lateral);
    Ok(Some(wrapped))
}

/// Whether a lateral item in the tree of inner and left joins `join` reads
/// a column of `outer`.
fn reads_across(join: &Join, outer: &LogicalPlan) -> Result<bool> {
    if let Some(subquery) = lateral_side(&join.right)
        && !correlated_in_plan(&subquery.subquery, outer)?.is_empty()
    {
        return Ok(true);
    }
    if let Some(left) = reassociable(&join.left)
        && reads_across(left, outer)?
    {
        return Ok(true);
    }
    match reassociable(&join.right) {
        Some(right) => reads_across(right, outer),
        None => Ok(false),
    }
}

/// `plan` as a join whose lateral items [`right_side_as_lateral`] looks
/// into.
fn reassociable(plan: &LogicalPlan) -> Option<&Join> {
    match plan {
        LogicalPlan::Join(join)
            if matches!(join.join_type, JoinType::Inner | JoinType::Left)
                && !join.null_aware =>
        {
            Some(join)
        }
        _ => None,
    }
}

/// `join` with its `LATERAL` right side `right`, whose subquery reads no
/// outer column, as a join of that subquery's plan under the same alias and
/// filters.
fn uncorrelated(join: &Join, right: LogicalPlan) -> Result<LogicalPlan> {
    let right = right
        .transform_down(|node| match node {
            LogicalPlan::Subquery(subquery) => Ok(Transformed::new(
                subquery.subquery.as_ref().clone(),
                true,
                TreeNodeRecursion::Jump,
            )),
            node => Ok(Transformed::no(node)),
        })?
        .data
        .recompute_schema()?;
    Ok(LogicalPlan::Join(Join::try_new(
        Arc::clone(&join.left),
        Arc::new(right),
        join.on.clone(),
        join.filter.clone(),
        join.join_type,
        join.join_constraint,
        join.null_equality,
        join.null_aware,
    )?))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::Result;
    use datafusion_common::spans::Spans;
    use datafusion_expr::logical_plan::Subquery;
    use datafusion_expr::{
        ExprFunctionExt, JoinType, LogicalPlan, LogicalPlanBuilder, col,
    };
    use datafusion_functions_window::expr_fn::row_number;

    use crate::fork_test_util::decorrelated;
    use crate::fork_test_util::{outer, rows_of_key, table};

    /// `LATERAL (body) alias`, as the SQL planner writes it.
    fn lateral(alias: &str, body: LogicalPlan) -> Result<LogicalPlan> {
        let subquery = LogicalPlan::Subquery(Subquery {
            outer_ref_columns: body.all_out_ref_exprs(),
            subquery: Arc::new(body),
            spans: Spans::new(),
        });
        LogicalPlanBuilder::from(subquery).alias(alias)?.build()
    }

    /// `SELECT o.v AS x FROM t LIMIT 1`.
    fn first_outer_v() -> Result<LogicalPlan> {
        table("t")?
            .project([outer("v").alias("x")])?
            .limit(0, Some(1))?
            .build()
    }

    #[test]
    fn a_lateral_subquery_is_joined_on_the_values_it_reads() -> Result<()> {
        // LATERAL (SELECT s.v, row_number() OVER (ORDER BY s.v) FROM s
        // WHERE s.k = o.k): a window over a correlation, which upstream's
        // rule does not pull up
        let numbered = row_number()
            .order_by(vec![col("s.v").sort(true, false)])
            .build()?
            .alias("n");
        let body = rows_of_key()?
            .window([numbered])?
            .project([col("s.v"), col("n")])?
            .build()?;
        let lateral = lateral("l", body)?;
        let plan = table("o")?.cross_join(lateral)?.build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v, l.v, l.n
              Inner Join: o.k = l.__domain_tag_2_0
                TableScan: o
                SubqueryAlias: l
                  Projection: s.v, n, __domain_tag_2_0
                    WindowAggr: windowExpr=[[row_number() PARTITION BY [__domain_tag_2_0] ORDER BY [s.v ASC NULLS LAST] ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS n]]
                      Projection: s.k, s.v, s.k AS __domain_tag_2_0
                        Filter: s.k IS NOT NULL
                          TableScan: s
            ");
        Ok(())
    }

    #[test]
    fn a_lateral_item_reading_beyond_its_join_takes_the_join_along() -> Result<()> {
        // o, s JOIN LATERAL (SELECT o.v AS x) l ON s.v = l.x: the lateral
        // item reads o, outside the join it is the right side of
        let lateral = lateral("l", first_outer_v()?)?;
        let right = table("s")?
            .join_on(lateral, JoinType::Inner, [col("s.v").eq(col("l.x"))])?
            .build()?;
        let plan = table("o")?.cross_join(right)?.build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v, s.k, s.v, l.x
              Inner Join: o.v = l.__domain_1_0
                TableScan: o
                Inner Join:  Filter: s.v = l.x
                  TableScan: s
                  SubqueryAlias: l
                    Projection: x, __domain_instance_2.__domain_1_0
                      Filter: __row_number_3 <= UInt64(1)
                        WindowAggr: windowExpr=[[row_number() PARTITION BY [__domain_instance_2.__domain_1_0] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS __row_number_3]]
                          Projection: __domain_instance_2.__domain_1_0 AS x, __domain_instance_2.__domain_1_0
                            Cross Join:
                              TableScan: t
                              SubqueryAlias: __domain_instance_2
                                Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                                  Projection: o.v AS __domain_1_0
                                    TableScan: o
        ");
        Ok(())
    }

    #[test]
    fn the_domain_of_a_cross_join_is_taken_from_the_side_read() -> Result<()> {
        // o, s, LATERAL (SELECT o.v AS x FROM t LIMIT 1) l: the values of
        // o.v are those of o alone, without the product with s
        let lateral = lateral("l", first_outer_v()?)?;
        let plan = table("o")?
            .cross_join(table("s")?.build()?)?
            .cross_join(lateral)?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v, s.k, s.v, l.x
              Inner Join: o.v = l.__domain_1_0
                Cross Join:
                  TableScan: o
                  TableScan: s
                SubqueryAlias: l
                  Projection: x, __domain_instance_2.__domain_1_0
                    Filter: __row_number_3 <= UInt64(1)
                      WindowAggr: windowExpr=[[row_number() PARTITION BY [__domain_instance_2.__domain_1_0] RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS __row_number_3]]
                        Projection: __domain_instance_2.__domain_1_0 AS x, __domain_instance_2.__domain_1_0
                          Cross Join:
                            TableScan: t
                            SubqueryAlias: __domain_instance_2
                              Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                                Projection: o.v AS __domain_1_0
                                  TableScan: o
        ");
        Ok(())
    }

    #[test]
    fn a_lateral_subquery_without_outer_references_left_is_a_derived_table() -> Result<()>
    {
        // LATERAL (SELECT CASE WHEN true THEN 1 ELSE o.k END AS u), after
        // the CASE was folded: the subquery still lists o.k
        let body = LogicalPlanBuilder::empty(true)
            .project([datafusion_expr::lit(1).alias("u")])?
            .build()?;
        let subquery = LogicalPlan::Subquery(Subquery {
            outer_ref_columns: vec![outer("k")],
            subquery: Arc::new(body),
            spans: Spans::new(),
        });
        let lateral = LogicalPlanBuilder::from(subquery).alias("l")?.build()?;
        let plan = table("o")?
            .join_on(lateral, JoinType::Left, [col("l.u").eq(col("o.k"))])?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Left Join:  Filter: l.u = o.k
              TableScan: o
              SubqueryAlias: l
                Projection: Int32(1) AS u
                  EmptyRelation: rows=1
            ");
        Ok(())
    }
}
