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

//! The dependent join pushed through an aggregate: it is also grouped by
//! the tags. An aggregate without `GROUP BY` has a row for every tag, the
//! aggregates of an empty input where no input row has it
//! ([`count_bug`](super::count_bug)); one over grouping sets is first
//! written as a union of plain aggregates ([`grouping_sets`](super::grouping_sets)).

use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{Column, NullEquality, Result, internal_err};
use datafusion_expr::logical_plan::{Aggregate, JoinType, Projection};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::grouping_set_to_exprlist;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

use super::count_bug::{compensated, empty_input_value, match_indicator};
use super::grouping_sets::grouping_sets_as_union;
use super::{DependentJoin, Tagged};
use crate::correlation::refuse_outer_aggregates;

impl DependentJoin<'_> {
    pub(super) fn push_aggregate(&self, aggregate: &Aggregate) -> Result<Tagged> {
        if let Some(union) = grouping_sets_as_union(aggregate)? {
            return self.push(&union);
        }
        refuse_outer_aggregates(aggregate)?;
        let input = self.push(&aggregate.input)?;
        let scope = [Arc::clone(aggregate.input.schema())];
        let names = aggregate.schema.columns();
        // An expression grouped by twice is one column of the aggregate
        let group_exprs = grouping_set_to_exprlist(&aggregate.group_expr)?;
        let group_len = group_exprs.len();
        if names.len() != group_len + aggregate.aggr_expr.len() {
            return internal_err!(
                "aggregate of {group_len} groups and {} aggregates has {} columns",
                aggregate.aggr_expr.len(),
                names.len()
            );
        }
        let mut group_expr = group_exprs
            .into_iter()
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
        let (match_indicator, matched) = match_indicator(self.alias_generator);
        group_expr.push(match_indicator);
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
            Expr::Column(Column::new(Some(grouped_alias.clone()), &matched.name))
                .is_null();
        let mut exprs = vec![];
        for (expr, name) in aggregate.aggr_expr.iter().zip(&names[group_len..]) {
            let value =
                Expr::Column(Column::new(Some(grouped_alias.clone()), &name.name));
            let empty = empty_input_value(expr, aggregate.input.schema())?;
            let value = compensated(value, unmatched.clone(), empty)?;
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
                None => internal_err!("No column {column} in the projection it reads"),
            },
            _ => Ok(Transformed::no(expr)),
        })
        .data()
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{Expr, GroupingSet, col};
    use datafusion_functions_aggregate::count::count;
    use datafusion_functions_aggregate::sum::sum;

    use crate::fork_test_util::{pushed, rows_of_key};

    #[test]
    fn group_by_is_also_by_the_tags() -> Result<()> {
        let subquery = rows_of_key()?
            .aggregate([col("s.v")], [sum(col("s.k"))])?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.v, s.k AS __domain_tag_2_0, sum(s.k)
              Aggregate: groupBy=[[s.v, s.k]], aggr=[[sum(s.k)]]
                Filter: s.k IS NOT NULL
                  TableScan: s
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn without_group_by_every_tag_has_a_row() -> Result<()> {
        let subquery = rows_of_key()?
            .aggregate(Vec::<Expr>::new(), [count(col("s.v")), sum(col("s.v"))])?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: CASE WHEN __grouped_4.__matched_3 IS NULL THEN Int64(0) ELSE __grouped_4.count(s.v) END AS count(s.v), __grouped_4.sum(s.v) AS sum(s.v), __domain_instance_5.__domain_1_0
              Left Join: __domain_instance_5.__domain_1_0 = __grouped_4.__domain_tag_2_0
                SubqueryAlias: __domain_instance_5
                  Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                    Projection: o.k AS __domain_1_0
                      TableScan: o
                SubqueryAlias: __grouped_4
                  Projection: s.k AS __domain_tag_2_0, __matched_3, count(s.v), sum(s.v)
                    Aggregate: groupBy=[[s.k, Boolean(true) AS __matched_3]], aggr=[[count(s.v), sum(s.v)]]
                      Filter: s.k IS NOT NULL
                        TableScan: s
            tags: [__domain_instance_5.__domain_1_0]; unique: true; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn grouping_sets_are_a_union_of_aggregates() -> Result<()> {
        let sets = GroupingSet::GroupingSets(vec![vec![col("s.v")], vec![]]);
        let subquery = rows_of_key()?
            .aggregate([Expr::GroupingSet(sets)], [count(col("s.v"))])?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: v AS v, __grouping_id AS __grouping_id, count(s.v) AS count(s.v), __domain_tag_3_0
              Union
                Projection: s.v, __grouping_id, count(s.v), __domain_tag_2_0 AS __domain_tag_3_0
                  Projection: s.v AS v, UInt8(0) AS __grouping_id, count(s.v) AS count(s.v), __domain_tag_2_0
                    Projection: s.v, s.k AS __domain_tag_2_0, count(s.v)
                      Aggregate: groupBy=[[s.v, s.k]], aggr=[[count(s.v)]]
                        Filter: s.k IS NOT NULL
                          TableScan: s
                Projection: s.v, __grouping_id, count(s.v), __domain_instance_7.__domain_1_0 AS __domain_tag_3_0
                  Projection: Int32(NULL) AS v, UInt8(1) AS __grouping_id, count(s.v) AS count(s.v), __domain_instance_7.__domain_1_0
                    Projection: CASE WHEN __grouped_6.__matched_5 IS NULL THEN Int64(0) ELSE __grouped_6.count(s.v) END AS count(s.v), __domain_instance_7.__domain_1_0
                      Left Join: __domain_instance_7.__domain_1_0 = __grouped_6.__domain_tag_4_0
                        SubqueryAlias: __domain_instance_7
                          Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                            Projection: o.k AS __domain_1_0
                              TableScan: o
                        SubqueryAlias: __grouped_6
                          Projection: s.k AS __domain_tag_4_0, __matched_5, count(s.v)
                            Aggregate: groupBy=[[s.k, Boolean(true) AS __matched_5]], aggr=[[count(s.v)]]
                              Filter: s.k IS NOT NULL
                                TableScan: s
            tags: [__domain_tag_3_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }
}
