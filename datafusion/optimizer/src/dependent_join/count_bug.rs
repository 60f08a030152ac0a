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

//! The count bug: the value an aggregate without `GROUP BY` has for an
//! outer value that no input row has.
//!
//! Decorrelating `(SELECT count(*) FROM s WHERE s.k = o.k)` groups the
//! aggregate by the outer values (by `s.k`, or by the tags of the
//! [dependent join](super)) and left-joins it back. An outer row whose value
//! has no group gets `NULL` from the join, where the subquery would have
//! counted an empty input and returned `0`. Every decorrelation of such an
//! aggregate gives its groups a column that is never `NULL` in a group (the
//! dependent join's `__matched`, upstream's `__always_true`), and
//! [`compensated`] reads the aggregate of an empty input where the join
//! left that column `NULL`.
//!
//! Upstream's pull-up ([`ScalarSubqueryToJoin`]) adds a case of its own: a
//! `HAVING` that reads the outer query breaks the distinction when it is put
//! into the join condition, as a group the `HAVING` rejects also leaves the
//! column `NULL`, and would be compensated to `0` where the answer is
//! `NULL`. So a `HAVING` over such an aggregate is never part of the join:
//! the pull-up lifts it above the join ([`is_correlated_having`]), and
//! [`compensation_exprs`] evaluates it in the compensation: on the joined
//! aggregate where a group matched, and on the aggregate of an empty input
//! (with the outer row's values) where none did.
//!
//! [`ScalarSubqueryToJoin`]: crate::scalar_subquery_to_join::ScalarSubqueryToJoin

use std::collections::HashMap;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{Column, DFSchemaRef, Result, ScalarValue};
use datafusion_expr::expr::{AggregateFunction, Alias};
use datafusion_expr::logical_plan::Filter;
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, lit, when};

use crate::analyzer::type_coercion::TypeCoercionRewriter;
use crate::utils::evaluates_to_null;

/// Each output expression's value over an empty input, by name, as
/// upstream's pull-up collects it (its `ExprResultMap`).
type EmptyResults = datafusion_common::HashMap<String, Expr>;

/// A column for an aggregate grouped by the outer values that is `true` in
/// every group, so that it reads `NULL` after the left join back exactly
/// where an outer value had no input rows: the expression to add to the
/// grouping, and the column it names.
pub(crate) fn match_indicator(alias_generator: &AliasGenerator) -> (Expr, Column) {
    let name = alias_generator.next("__matched");
    (lit(true).alias(&name), Column::new_unqualified(name))
}

/// The value an outer row reads for an aggregate that the join back gives
/// as `value`: `empty_value`, the aggregate over an empty input, where
/// `unmatched` says no group matched. An aggregate whose value over an
/// empty input is `NULL` reads the join's `NULL` unchanged.
pub(crate) fn compensated(
    value: Expr,
    unmatched: Expr,
    empty_value: Expr,
) -> Result<Expr> {
    if evaluates_to_null(empty_value.clone(), empty_value.column_refs())? {
        return Ok(value);
    }
    when(unmatched, empty_value).otherwise(value)
}

/// The value of aggregate expression `expr`, over an input of `schema`, for
/// an empty input.
pub(crate) fn empty_input_value(expr: &Expr, schema: &DFSchemaRef) -> Result<Expr> {
    match expr {
        Expr::Alias(Alias { expr, .. }) => empty_input_value(expr, schema),
        Expr::AggregateFunction(AggregateFunction { func, .. }) => {
            let data_type = expr.get_type(schema)?;
            Ok(lit(func.default_value(&data_type)?))
        }
        _ => Ok(lit(ScalarValue::Null)),
    }
}

/// Whether `filter`, met by upstream's pull-up in a subquery it decorrelates
/// with count-bug compensation, is a `HAVING` that reads the outer query over
/// an aggregate that needs compensation: `empty_results` are the results of
/// the filter's input over an empty input, if the pull-up collected them.
/// Such a filter is lifted above the join, not put into its condition.
pub(crate) fn is_correlated_having(
    filter: &Filter,
    empty_results: Option<&EmptyResults>,
) -> Result<bool> {
    match empty_results {
        Some(empty_results) if filter.predicate.contains_outer() => {
            needs_compensation(empty_results)
        }
        _ => Ok(false),
    }
}

/// Whether any of `empty_results` differs from NULL, so that an unmatched
/// outer row must read it rather than the join's NULL.
fn needs_compensation(empty_results: &EmptyResults) -> Result<bool> {
    for result in empty_results.values() {
        if !evaluates_to_null(result.clone(), result.column_refs())? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A scalar subquery as upstream's pull-up decorrelated and joined it.
pub(crate) struct PulledUpSubquery<'a> {
    /// The decorrelated subquery.
    pub(crate) plan: &'a LogicalPlan,
    /// The alias it is joined under.
    pub(crate) alias: &'a str,
    /// The name of its value column.
    pub(crate) value_column: &'a str,
    /// The name of its column that is never `NULL` in a group.
    pub(crate) match_indicator: &'a str,
}

/// The count-bug compensation of `subquery`: for each of its output columns
/// that needs one, the expression that replaces the column above the join.
///
/// * `empty_results` - each output column's value over an empty input, for
///   the columns computed from the aggregate.
/// * `having` - the pulled-up `HAVING`, over the subquery's columns and, if
///   correlated, outer references.
/// * `collected_results` - the results over an empty input of each plan of
///   the decorrelated subquery that has some, as the pull-up collected them.
/// * `outer_schema` - the schema of the outer plan the subquery is joined to.
///
/// Returns `None` when the subquery cannot be compensated, which leaves it
/// to the dependent join.
pub(crate) fn compensation_exprs(
    subquery: &PulledUpSubquery<'_>,
    empty_results: &EmptyResults,
    having: Option<&Expr>,
    collected_results: &datafusion_common::HashMap<LogicalPlan, EmptyResults>,
    outer_schema: &DFSchemaRef,
) -> Result<Option<HashMap<Column, Expr>>> {
    let subquery_alias = subquery.alias;
    let having = match having {
        Some(having) => {
            // The HAVING reads the aggregate's output columns
            let Some(aggregate_results) = aggregate_below(subquery.plan)
                .and_then(|aggregate| collected_results.get(aggregate))
            else {
                return Ok(None);
            };
            if !empty_results.contains_key(subquery.value_column) {
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
    let matched_schema = Arc::new(outer_schema.join(subquery.plan.schema())?);
    let mut rewriter = TypeCoercionRewriter {
        schema: &matched_schema,
    };
    let unmatched =
        Expr::Column(Column::new(Some(subquery_alias), subquery.match_indicator))
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
                let compensation =
                    compensated(value.clone(), unmatched.clone(), empty_result)?;
                if compensation == value {
                    continue;
                }
                compensation
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
    empty_results: &EmptyResults,
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

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{col, lit};
    use datafusion_functions_aggregate::count::count;
    use datafusion_functions_aggregate::sum::sum;

    use super::*;
    use crate::fork_test_util::table;

    fn schema() -> Result<DFSchemaRef> {
        Ok(Arc::clone(table("s")?.build()?.schema()))
    }

    #[test]
    fn a_count_of_no_rows_is_zero_and_a_sum_null() -> Result<()> {
        let schema = schema()?;
        let count_value = empty_input_value(&count(col("s.v")).alias("n"), &schema)?;
        let sum_value = empty_input_value(&sum(col("s.v")), &schema)?;
        let not_aggregate = empty_input_value(&col("s.v"), &schema)?;
        insta::assert_snapshot!(
            format!("{count_value}\n{sum_value}\n{not_aggregate}"),
            @r"
            Int64(0)
            Int64(NULL)
            NULL
            "
        );
        Ok(())
    }

    #[test]
    fn only_a_value_not_null_over_no_rows_is_compensated() -> Result<()> {
        let unmatched = col("__matched").is_null();
        let count_value = compensated(col("n"), unmatched.clone(), lit(0i64))?;
        let sum_value =
            compensated(col("total"), unmatched, lit(ScalarValue::Int64(None)))?;
        insta::assert_snapshot!(format!("{count_value}\n{sum_value}"), @r"
            CASE WHEN __matched IS NULL THEN Int64(0) ELSE n END
            total
            ");
        Ok(())
    }

    #[test]
    fn a_having_reading_the_outer_query_is_lifted_where_a_value_is_compensated()
    -> Result<()> {
        let input = Arc::new(table("s")?.build()?);
        let correlated = Filter::try_new(
            col("s.v").gt(crate::fork_test_util::outer("v")),
            Arc::clone(&input),
        )?;
        let local = Filter::try_new(col("s.v").gt(lit(1)), input)?;
        let mut counted = EmptyResults::default();
        counted.insert("n".to_string(), lit(0i64));
        let mut summed = EmptyResults::default();
        summed.insert("total".to_string(), lit(ScalarValue::Int64(None)));
        assert!(is_correlated_having(&correlated, Some(&counted))?);
        assert!(!is_correlated_having(&correlated, Some(&summed))?);
        assert!(!is_correlated_having(&correlated, None)?);
        assert!(!is_correlated_having(&local, Some(&counted))?);
        Ok(())
    }
}
