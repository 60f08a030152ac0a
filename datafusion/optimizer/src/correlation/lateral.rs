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

//! The right side of a `LATERAL` join, as the SQL planner writes it: a
//! [`LogicalPlan::Subquery`], under the alias of the `FROM` item, with the
//! filters the optimizer may have pushed between the two.

use std::sync::Arc;

use datafusion_common::{Column, DFSchema, Result, TableReference};
use datafusion_expr::logical_plan::{Filter, Subquery, SubqueryAlias};
use datafusion_expr::utils::find_out_reference_exprs;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

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

/// The right side `plan` of a `LATERAL` join as a derived table: its
/// subquery's plan under its alias, for a lateral item that reads no
/// column of the join's left side.
pub(crate) fn lateral_as_derived_table(plan: LogicalPlan) -> Result<LogicalPlan> {
    match filters_into_subquery(plan)? {
        LogicalPlan::Subquery(subquery) => Ok(Arc::unwrap_or_clone(subquery.subquery)),
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            match Arc::unwrap_or_clone(input) {
                LogicalPlan::Subquery(subquery) => {
                    LogicalPlanBuilder::from(Arc::unwrap_or_clone(subquery.subquery))
                        .alias(alias)?
                        .build()
                }
                other => LogicalPlanBuilder::from(other).alias(alias)?.build(),
            }
        }
        other => Ok(other),
    }
}

/// Whether `correlation`, the condition upstream's pull-up took out of the
/// `LATERAL` item `subquery`, reads a column of the item that the join
/// cannot read under the item's alias: one that `right`, the item's
/// rewritten plan under its alias, does not output, or, before the alias,
/// one whose name `inner`, the rewritten plan's schema, has twice.
///
/// The pull-up leaves the item's columns named as the tables below the
/// item's derived tables name them: in `LATERAL (SELECT x4.w FROM (SELECT w
/// FROM t3 WHERE w = x1.w) x4) l2` the condition came out as `t3.w =
/// x1.w`, which the join cannot read under `l2` (`No field named t3.w`;
/// DataFusion 55.2.0 too). And the alias renames all but the first of
/// columns of one name, while the condition is requalified by name alone:
/// in `LATERAL (SELECT a.w, b.w FROM t3 a, t3 b WHERE b.w = x1.w) l2` it
/// read `a.w`, and the join compared the wrong column without an error
/// (DataFusion 55.2.0 too). The dependent join keeps the outer references
/// apart from the item's columns.
pub(crate) fn reads_unplaced_column(
    correlation: &Expr,
    subquery: &Subquery,
    inner: &DFSchema,
    right: &DFSchema,
) -> bool {
    let outer: Vec<&Column> = subquery
        .outer_ref_columns
        .iter()
        .filter_map(|reference| match reference {
            Expr::OuterReferenceColumn(_, column) => Some(column),
            _ => None,
        })
        .collect();
    let repeated = |column: &Column| {
        inner
            .fields()
            .iter()
            .filter(|field| field.name() == &column.name)
            .count()
            > 1
    };
    correlation.column_refs().into_iter().any(|column| {
        !outer.contains(&column) && (repeated(column) || !right.has_column(column))
    })
}
