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

//! A scalar subquery joined back: with a single join, which fails on a
//! second row, or a left join where each outer value has at most one row.
//!
//! The projections at the top of the subquery are evaluated above the
//! join, where the outer columns are at hand, so that they need no
//! dependent join; over an aggregate without `GROUP BY`, they see the
//! aggregates of an empty input where no row matched.

use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{
    Column, Result, ScalarValue, TableReference, internal_datafusion_err, internal_err,
};
use datafusion_expr::logical_plan::{Aggregate, JoinType, Subquery};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, lit, when};

use super::decorrelated::{Decorrelated, Split, split_top, tag_body};
use super::keep_name;
use crate::correlation::{correlated_in_plan, refuse_outer_aggregates, replace_outer};
use crate::dependent_join::aggregate_below_renames;
use crate::dependent_join::count_bug::{compensated, empty_input_value, match_indicator};
use crate::dependent_join::{DependentJoin, Domain, Tagged};

pub(super) fn join_scalar_subquery(
    subquery: &Subquery,
    input: &LogicalPlan,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    let Split { top, body } = split_top(&subquery.subquery);
    let input_columns: Vec<Column> = input.schema().columns();

    // Over an aggregate without GROUP BY, the subquery has a row for every
    // outer row: the aggregate is grouped by the outer values, and where no
    // input row matched, the projections above read the aggregates of an
    // empty input
    if let LogicalPlan::Aggregate(aggregate) = body
        && aggregate.group_expr.is_empty()
    {
        let (decorrelated, values) =
            decorrelate_scalar_aggregate(aggregate, outer_rows, alias_generator)?;
        let joined = decorrelated.join(input, JoinType::Left, None)?;
        let value = evaluate_top(&top, values, &input_columns)?;
        return Ok((joined, value));
    }

    let (mut tagged, outer) = tag_body(body, outer_rows, alias_generator)?;
    // A column that is never NULL where a row matched
    let matched = Column::new_unqualified(alias_generator.next("__matched"));
    tagged.plan = LogicalPlanBuilder::from(tagged.plan.clone())
        .project(
            tagged
                .plan
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .chain([lit(true).alias(&matched.name)]),
        )?
        .build()?;
    let decorrelated = Decorrelated::aliased(tagged, outer, alias_generator)?;
    let join_type = if decorrelated.unique {
        JoinType::Left
    } else {
        JoinType::LeftSingle
    };
    let values = body
        .schema()
        .columns()
        .into_iter()
        .map(|column| Ok((column.clone(), decorrelated.column(&column)?)))
        .collect::<Result<Vec<_>>>()?;
    let found = decorrelated.column(&matched)?.is_not_null();
    let subquery_alias = TableReference::bare(decorrelated.alias.clone());
    let joined = decorrelated.join(input, join_type, None)?;
    let value = evaluate_top(&top, values, &input_columns)?;
    let value = match value {
        // A column of the subquery is NULL where no row matched; anything
        // else (an outer column, an expression) must be made NULL there
        Expr::Column(column) if column.relation.as_ref() == Some(&subquery_alias) => {
            Expr::Column(column)
        }
        value => {
            let null = ScalarValue::try_from(value.get_type(joined.schema())?)?;
            when(found, value).otherwise(lit(null))?
        }
    };
    Ok((joined, value))
}

/// An aggregate without `GROUP BY` grouped by the outer values it reads,
/// and the value of each of its columns after the join: the aggregate of an
/// empty input where no group matched.
fn decorrelate_scalar_aggregate(
    aggregate: &Aggregate,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(Decorrelated, Vec<(Column, Expr)>)> {
    refuse_outer_aggregates(aggregate)?;
    let outer =
        correlated_in_plan(&LogicalPlan::Aggregate(aggregate.clone()), outer_rows)?;
    let names = aggregate.schema.columns();
    let (tagged, aggr_expr) = if outer.is_empty() {
        (
            Tagged {
                plan: aggregate.input.as_ref().clone(),
                tags: vec![],
                unique: false,
                non_null_tags: true,
            },
            aggregate.aggr_expr.clone(),
        )
    } else {
        let domain = Domain::new(outer_rows, outer.clone(), alias_generator)?;
        let dependent = DependentJoin::new(&domain, alias_generator);
        let tagged = dependent.push(&aggregate.input)?;
        let aggr_expr = aggregate
            .aggr_expr
            .iter()
            .zip(&names)
            .map(|(expr, name)| {
                let scope = [Arc::clone(aggregate.input.schema())];
                Ok(keep_name(
                    dependent.on_tags(expr, &tagged.tags, &scope)?,
                    name,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        (tagged, aggr_expr)
    };
    let (match_indicator, matched) = match_indicator(alias_generator);
    let mut group_expr: Vec<Expr> =
        tagged.tags.iter().cloned().map(Expr::Column).collect();
    group_expr.push(match_indicator);
    let grouped = aggregate_below_renames(tagged.plan, group_expr, aggr_expr)?;
    let decorrelated = Decorrelated::aliased(
        Tagged {
            plan: grouped,
            tags: tagged.tags,
            unique: true,
            non_null_tags: tagged.non_null_tags,
        },
        outer,
        alias_generator,
    )?;
    let unmatched = decorrelated.column(&matched)?.is_null();
    let values = aggregate
        .aggr_expr
        .iter()
        .zip(names)
        .map(|(expr, name)| {
            let value = decorrelated.column(&Column::new_unqualified(&name.name))?;
            let empty = empty_input_value(expr, aggregate.input.schema())?;
            Ok((name, compensated(value, unmatched.clone(), empty)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((decorrelated, values))
}

/// The value of the subquery's single output column, computed above the
/// join from `values` (each column of the body as the join outputs it)
/// through the projections and aliases of `top`, with outer references read
/// from the input.
fn evaluate_top(
    top: &[&LogicalPlan],
    values: Vec<(Column, Expr)>,
    input_columns: &[Column],
) -> Result<Expr> {
    let mut values = values;
    for node in top.iter().rev() {
        values = match node {
            LogicalPlan::Projection(projection) => projection
                .expr
                .iter()
                .zip(projection.schema.columns())
                .map(|(expr, name)| Ok((name, substitute(expr, &values, input_columns)?)))
                .collect::<Result<Vec<_>>>()?,
            LogicalPlan::SubqueryAlias(alias) => values
                .into_iter()
                .map(|(column, value)| {
                    (Column::new(Some(alias.alias.clone()), column.name), value)
                })
                .collect(),
            other => {
                return internal_err!(
                    "The top of a subquery holds projections and aliases, not {}",
                    other.display()
                );
            }
        };
    }
    let (_, value) = values
        .into_iter()
        .next()
        .ok_or_else(|| internal_datafusion_err!("A scalar subquery without columns"))?;
    Ok(value.unalias())
}

/// `expr` of a projection at the top of a subquery, over the values of the
/// columns of its input, and reading its outer references from the outer
/// input.
fn substitute(
    expr: &Expr,
    values: &[(Column, Expr)],
    input_columns: &[Column],
) -> Result<Expr> {
    let expr = expr
        .clone()
        .transform_up(|expr| match &expr {
            Expr::Column(column) => {
                match values.iter().find(|(name, _)| name == column) {
                    Some((_, value)) => Ok(Transformed::yes(value.clone())),
                    None => Ok(Transformed::no(expr)),
                }
            }
            _ => Ok(Transformed::no(expr)),
        })
        .data()?;
    let expr = replace_outer(
        &expr,
        &|column| {
            input_columns
                .contains(column)
                .then(|| Expr::Column(column.clone()))
        },
        &[],
    )?;
    Ok(expr.unalias_nested().data)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::Result;
    use datafusion_expr::{Expr, LogicalPlan, col, scalar_subquery};
    use datafusion_functions_aggregate::count::count;

    use crate::fork_test_util::decorrelated;
    use crate::fork_test_util::{outer, rows_of_key, table};

    /// `SELECT o.k, (subquery) AS x FROM o`.
    fn select_subquery(subquery: LogicalPlan) -> Result<LogicalPlan> {
        table("o")?
            .project([col("o.k"), scalar_subquery(Arc::new(subquery)).alias("x")])?
            .build()
    }

    #[test]
    fn an_aggregate_reads_its_empty_input_value_where_no_group_matched() -> Result<()> {
        let subquery = table("s")?
            .filter(col("s.v").lt(outer("v")))?
            .aggregate(Vec::<Expr>::new(), [count(col("s.v"))])?
            .build()?;
        insta::assert_snapshot!(decorrelated(select_subquery(subquery)?)?, @r"
            Projection: o.k, CASE WHEN __subquery_4.__subquery_4_1 IS NULL THEN Int64(0) ELSE __subquery_4.__subquery_4_2 END AS x
              Left Join: o.v = __subquery_4.__subquery_4_0
                TableScan: o
                SubqueryAlias: __subquery_4
                  Projection: __domain_instance_2.__domain_1_0 AS __subquery_4_0, __matched_3 AS __subquery_4_1, count(s.v) AS __subquery_4_2
                    Aggregate: groupBy=[[__domain_instance_2.__domain_1_0, Boolean(true) AS __matched_3]], aggr=[[count(s.v)]]
                      Filter: s.v < __domain_instance_2.__domain_1_0
                        Cross Join:
                          TableScan: s
                          SubqueryAlias: __domain_instance_2
                            Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                              Projection: o.v AS __domain_1_0
                                TableScan: o
            ");
        Ok(())
    }

    #[test]
    fn rows_not_known_unique_are_a_single_join() -> Result<()> {
        let subquery = rows_of_key()?.project([col("s.v")])?.build()?;
        insta::assert_snapshot!(decorrelated(select_subquery(subquery)?)?, @r"
            Projection: o.k, __subquery_4.__subquery_4_1 AS x
              LeftSingle Join: o.k = __subquery_4.__subquery_4_2
                TableScan: o
                SubqueryAlias: __subquery_4
                  Projection: s.k AS __subquery_4_0, s.v AS __subquery_4_1, __domain_tag_2_0 AS __subquery_4_2, __matched_3 AS __subquery_4_3
                    Projection: s.k, s.v, __domain_tag_2_0, Boolean(true) AS __matched_3
                      Projection: s.k, s.v, s.k AS __domain_tag_2_0
                        Filter: s.k IS NOT NULL
                          TableScan: s
            ");
        Ok(())
    }

    #[test]
    fn the_select_list_is_evaluated_above_the_join() -> Result<()> {
        let subquery = rows_of_key()?.project([col("s.v") + outer("v")])?.build()?;
        insta::assert_snapshot!(decorrelated(select_subquery(subquery)?)?, @r"
            Projection: o.k, CASE WHEN __subquery_4.__subquery_4_3 IS NOT NULL THEN __subquery_4.__subquery_4_1 + o.v ELSE Int32(NULL) END AS x
              LeftSingle Join: o.k = __subquery_4.__subquery_4_2
                TableScan: o
                SubqueryAlias: __subquery_4
                  Projection: s.k AS __subquery_4_0, s.v AS __subquery_4_1, __domain_tag_2_0 AS __subquery_4_2, __matched_3 AS __subquery_4_3
                    Projection: s.k, s.v, __domain_tag_2_0, Boolean(true) AS __matched_3
                      Projection: s.k, s.v, s.k AS __domain_tag_2_0
                        Filter: s.k IS NOT NULL
                          TableScan: s
            ");
        Ok(())
    }
}
