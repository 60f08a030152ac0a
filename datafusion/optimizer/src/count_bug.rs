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

//! Count-bug compensation for a correlated scalar subquery over an aggregate
//! without `GROUP BY`, and a `HAVING` that reads the outer query.
//!
//! Decorrelating `(SELECT count(*) FROM s WHERE s.k = o.k)` groups the
//! aggregate by `s.k` and left-joins it to the outer query. An outer row
//! whose key has no group gets `NULL` from the join, where the subquery
//! would have counted an empty input and returned `0`. The compensation
//! tells the two apart by the `__always_true` column of the joined side:
//! `NULL` means no group, and then the value is the aggregate of an empty
//! input.
//!
//! A `HAVING` breaks that distinction when it is put into the join
//! condition: a group the `HAVING` rejects also leaves `__always_true` NULL,
//! and would be compensated to `0` where the answer is `NULL`. So a `HAVING`
//! over such an aggregate is never part of the join. It is pulled above the
//! join ([`PullUpCorrelatedExpr::pull_up_having_expr`]) and evaluated in the
//! compensation: on the joined aggregate where a group matched, and on the
//! aggregate of an empty input (with the outer row's values) where none did.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{Column, DFSchemaRef, Result, ScalarValue};
use datafusion_expr::logical_plan::Filter;
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, lit, when};

use crate::analyzer::type_coercion::TypeCoercionRewriter;
use crate::decorrelate::{ExprResultMap, PullUpCorrelatedExpr, UN_MATCHED_ROW_INDICATOR};
use crate::utils::evaluates_to_null;

impl PullUpCorrelatedExpr {
    /// Pulls a `HAVING` that reads outer columns out of the subquery when
    /// its input is an aggregate that needs count-bug compensation. Returns
    /// the plan that replaces `filter`, or `None` when it does not apply.
    pub(crate) fn pull_up_correlated_having(
        &mut self,
        filter: &Filter,
    ) -> Result<Option<LogicalPlan>> {
        if !self.need_handle_count_bug || !filter.predicate.contains_outer() {
            return Ok(None);
        }
        let Some(empty_results) =
            self.collected_count_expr_map.get(filter.input.as_ref())
        else {
            return Ok(None);
        };
        if !needs_compensation(empty_results)? {
            // Every aggregate is NULL on an empty input: a rejected group and
            // a missing one both read NULL, so the join condition can hold it
            return Ok(None);
        }
        if self.pull_up_having_expr.is_some() {
            // A second aggregate level with its own pulled-up HAVING
            self.can_pull_up = false;
            return Ok(None);
        }
        self.pull_up_having_expr = Some(filter.predicate.clone());
        Ok(Some(filter.input.as_ref().clone()))
    }
}

/// Whether any of `empty_results` differs from NULL, so that an unmatched
/// outer row must read it rather than the join's NULL.
fn needs_compensation(empty_results: &ExprResultMap) -> Result<bool> {
    for result in empty_results.values() {
        if !evaluates_to_null(result.clone(), result.column_refs())? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The count-bug compensation of a decorrelated scalar subquery joined as
/// `subquery_alias`: for each of its output columns that needs one, the
/// expression that replaces the column above the join.
///
/// * `empty_results` - each output column's value over an empty input, for
///   the columns computed from the aggregate.
/// * `having` - the pulled-up `HAVING`, over the subquery's columns and, if
///   correlated, outer references.
/// * `collected_results` - the results over an empty input of each plan of
///   the decorrelated `subquery` that has some, as the pull-up collected them.
/// * `value_column` - the name of the subquery's value column.
/// * `outer_schema` - the schema of the outer plan the subquery is joined to.
///
/// Returns `None` when the subquery cannot be compensated.
pub(crate) fn compensation_exprs(
    empty_results: &ExprResultMap,
    having: Option<&Expr>,
    collected_results: &datafusion_common::HashMap<LogicalPlan, ExprResultMap>,
    subquery: &LogicalPlan,
    value_column: &str,
    subquery_alias: &str,
    outer_schema: &DFSchemaRef,
) -> Result<Option<HashMap<Column, Expr>>> {
    let having = match having {
        Some(having) => {
            // The HAVING reads the aggregate's output columns
            let Some(aggregate_results) = aggregate_below(subquery)
                .and_then(|aggregate| collected_results.get(aggregate))
            else {
                return Ok(None);
            };
            if !empty_results.contains_key(value_column) {
                // The value does not read the aggregate (a constant): its
                // value over an empty input is not known here
                return Ok(None);
            }
            Some(joined_having(having, subquery_alias, aggregate_results)?)
        }
        None => None,
    };

    // The columns above the join as a matched group sees them: the
    // subquery's keep their own nullability, not the outer join's
    let matched_schema = Arc::new(outer_schema.join(subquery.schema())?);
    let mut rewriter = TypeCoercionRewriter {
        schema: &matched_schema,
    };
    let unmatched =
        Expr::Column(Column::new(Some(subquery_alias), UN_MATCHED_ROW_INDICATOR))
            .is_null();

    let mut names: Vec<&String> = empty_results.keys().collect();
    names.sort_unstable();
    let mut compensations = HashMap::new();
    for name in names {
        let column = Column::new(Some(subquery_alias), name);
        let value = Expr::Column(column.clone());
        let empty_result = empty_results[name].clone();
        let compensation = match &having {
            None => {
                // An aggregate that is NULL on an empty input reads the
                // join's NULL unchanged
                if evaluates_to_null(empty_result.clone(), empty_result.column_refs())? {
                    continue;
                }
                when(unmatched.clone(), empty_result).otherwise(value)?
            }
            Some(JoinedHaving {
                on_group,
                on_empty_input,
            }) => {
                // No group matched: the aggregate of an empty input, if the
                // HAVING keeps it
                let empty_value = match on_empty_input {
                    Some(keeps_empty) => when(keeps_empty.clone(), empty_result)
                        .otherwise(lit(ScalarValue::Null))?,
                    None => empty_result,
                };
                // A group matched: its value, if the HAVING keeps it
                let rejected = if on_group.nullable(matched_schema.as_ref())? {
                    on_group.clone().is_not_true()
                } else {
                    !on_group.clone()
                };
                when(unmatched.clone(), empty_value)
                    .when(rejected, lit(ScalarValue::Null))
                    .otherwise(value)?
            }
        };
        compensations.insert(column, compensation.rewrite(&mut rewriter).data()?);
    }
    Ok(Some(compensations))
}

/// The aggregate a decorrelated subquery computes its value from: the first
/// one below its projections and aliases.
fn aggregate_below(plan: &LogicalPlan) -> Option<&LogicalPlan> {
    match plan {
        LogicalPlan::Aggregate(_) => Some(plan),
        LogicalPlan::Projection(_) | LogicalPlan::SubqueryAlias(_) => {
            aggregate_below(plan.inputs().first()?)
        }
        _ => None,
    }
}

/// A pulled-up `HAVING` as evaluated above the join.
struct JoinedHaving {
    /// Over the joined group's columns and the outer row
    on_group: Expr,
    /// Over an empty input's aggregates and the outer row, when the `HAVING`
    /// reads the outer row. An uncorrelated `HAVING` is pulled up only when
    /// it keeps the empty input's row, so it needs no such test.
    on_empty_input: Option<Expr>,
}

/// `having` above the join, given the results of the aggregate it filters
/// over an empty input.
fn joined_having(
    having: &Expr,
    subquery_alias: &str,
    empty_results: &ExprResultMap,
) -> Result<JoinedHaving> {
    let correlated = having.contains_outer();
    let on_group = having
        .clone()
        .transform(|expr| {
            Ok(match expr {
                Expr::Column(column) => Transformed::yes(Expr::Column(Column::new(
                    Some(subquery_alias),
                    column.name,
                ))),
                Expr::OuterReferenceColumn(_, column) => {
                    Transformed::yes(Expr::Column(column))
                }
                _ => Transformed::no(expr),
            })
        })
        .data()?;
    let on_empty_input = if correlated {
        Some(
            having
                .clone()
                .transform(|expr| {
                    Ok(match expr {
                        Expr::Column(column) => {
                            Transformed::yes(match empty_results.get(&column.name) {
                                Some(result) => result.clone(),
                                None => Expr::Column(Column::new(
                                    Some(subquery_alias),
                                    column.name,
                                )),
                            })
                        }
                        Expr::OuterReferenceColumn(_, column) => {
                            Transformed::yes(Expr::Column(column))
                        }
                        _ => Transformed::no(expr),
                    })
                })
                .data()?,
        )
    } else {
        None
    };
    Ok(JoinedHaving {
        on_group,
        on_empty_input,
    })
}
