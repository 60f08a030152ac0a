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

//! [`DecorrelateSubqueries`] decorrelates every correlated subquery that the
//! shape-specific rules leave, through a dependent join.
//!
//! [`ScalarSubqueryToJoin`], [`DecorrelatePredicateSubquery`] and
//! [`DecorrelateLateralJoin`] run first and keep their plans for the shapes
//! they handle: a subquery whose correlation is an equality that can be
//! pulled above its operators. This rule takes the rest: an outer column in
//! the subquery's `SELECT` list or in a `JOIN ... ON` inside it, a `LIMIT`
//! (top-N per outer row), a non-equality correlation under an aggregate,
//! correlation inside a derived table or two levels deep, and subqueries in
//! any position (`ORDER BY`, `GROUP BY`, aggregate and window arguments, a
//! join's `ON`, `EXISTS` and `IN` in an expression), as well as `LATERAL`
//! subqueries the lateral rule cannot pull up.
//!
//! For a subquery in an operator over input `I`, the subquery is evaluated
//! for every value of the outer columns it reads by a dependent join (the
//! crate's private `dependent_join` module), and the result joined to `I`
//! on those columns with NULL-safe equality:
//!
//! - a scalar subquery with a single join ([`JoinType::LeftSingle`]), which
//!   fails on a second row, or a left join where each outer value has at
//!   most one row;
//! - `EXISTS` with a mark join;
//! - `x IN (subquery)` with a mark join on the correlation and `x` equal to
//!   the subquery's value, and, where NULLs can occur, the count of the
//!   subquery's rows and non-NULL values per outer value, for SQL's
//!   three-valued answer;
//! - a `LATERAL` subquery with an inner or left join.
//!
//! The projections at the top of a scalar subquery are evaluated above the
//! join, where the outer columns are at hand, so that they need no dependent
//! join; over an aggregate without `GROUP BY`, they see the aggregates of an
//! empty input where no row matched.
//!
//! [`ScalarSubqueryToJoin`]: crate::scalar_subquery_to_join::ScalarSubqueryToJoin
//! [`DecorrelatePredicateSubquery`]: crate::decorrelate_predicate_subquery::DecorrelatePredicateSubquery
//! [`DecorrelateLateralJoin`]: crate::decorrelate_lateral_join::DecorrelateLateralJoin
//! [`JoinType::LeftSingle`]: datafusion_expr::JoinType::LeftSingle

mod decorrelated;
mod exists;
mod in_subquery;
mod join_condition;
mod lateral;
mod scalar;

use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{
    Column, DFSchema, Result, internal_datafusion_err, internal_err,
};
use datafusion_expr::expr::{Exists, InSubquery};
use datafusion_expr::logical_plan::{Aggregate, Join, Sort, Subquery, Window};
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

use self::exists::join_exists;
use self::in_subquery::join_in;
use self::join_condition::rewrite_join_condition;
use self::lateral::{rewrite_lateral, right_side_as_lateral};
use self::scalar::join_scalar_subquery;
use crate::correlation::{correlated_columns, free_outer_columns, stop_when};
use crate::optimizer::ApplyOrder;
use crate::push_down_filter::PushDownFilter;
use crate::{OptimizerConfig, OptimizerRule};

/// Decorrelates the correlated subqueries the other rules leave, through a
/// dependent join. See the [module documentation](self).
#[derive(Default, Debug)]
pub struct DecorrelateSubqueries {}

impl DecorrelateSubqueries {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self::default()
    }
}

impl OptimizerRule for DecorrelateSubqueries {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let refreshed = refresh_outer_ref_columns(plan)?;
        let mut rewritten = rewrite_plan(refreshed.data, config)?;
        rewritten.transformed |= refreshed.transformed;
        Ok(rewritten)
    }

    fn name(&self) -> &str {
        "decorrelate_subqueries"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }
}

/// The rule's rewrite of one node. See the [module documentation](self).
fn rewrite_plan(
    plan: LogicalPlan,
    config: &dyn OptimizerConfig,
) -> Result<Transformed<LogicalPlan>> {
    let alias_generator = config.alias_generator().as_ref();
    match plan {
        LogicalPlan::Join(join) => {
            if let Some(wrapped) = right_side_as_lateral(&join)?
                && let Some(plan) = rewrite_lateral(&wrapped, alias_generator)?
            {
                return Ok(Transformed::yes(plan));
            }
            match rewrite_lateral(&join, alias_generator)? {
                Some(plan) => Ok(Transformed::yes(plan)),
                None => rewrite_join_condition(join, alias_generator),
            }
        }
        LogicalPlan::Sort(sort) if !columns_read_below_input(&sort)?.is_empty() => {
            let schema = Arc::clone(sort.input.schema());
            let widened = widen_sort_input(sort)?;
            let columns = schema.columns().into_iter().map(Expr::Column);
            LogicalPlanBuilder::from(rewrite_node(widened, alias_generator)?)
                .project(columns)?
                .build()
                .map(Transformed::yes)
        }
        plan if plan.inputs().len() == 1 && has_subquery_to_rewrite(&plan)? => {
            let normalized = push_correlation_out_of_joins(plan, config)?;
            if normalized.transformed {
                return Ok(normalized);
            }
            let plan = plain_conjuncts_first(normalized.data)?;
            rewrite_node(plan, alias_generator).map(Transformed::yes)
        }
        plan => Ok(Transformed::no(plan)),
    }
}

/// `plan`, if a filter whose conjuncts hold subqueries to rewrite beside
/// others that hold none, as the filter of the ones over the filter of the
/// others: the subqueries then take the values they read from the rows
/// that pass the others, not from the whole input.
///
/// `a, b WHERE a.k = b.k AND EXISTS (... a.x ... b.y ...)` evaluates the
/// subquery for the pairs `(a.x, b.y)` of the join, not of the cross join
/// (a product of the two tables, before the optimizer moves `a.k = b.k`
/// into a join). A row that fails a conjunct fails the filter whatever the
/// subquery's answer for it.
fn plain_conjuncts_first(plan: LogicalPlan) -> Result<LogicalPlan> {
    let LogicalPlan::Filter(filter) = plan else {
        return Ok(plan);
    };
    let input_schemas = [filter.input.schema().as_ref()];
    let mut with_subqueries = vec![];
    let mut plain = vec![];
    for conjunct in split_conjunction(&filter.predicate) {
        if conjunct.exists(|expr| to_rewrite(expr, &input_schemas))? {
            with_subqueries.push(conjunct.clone());
        } else {
            plain.push(conjunct.clone());
        }
    }
    // The domain evaluates the input below a second time: a volatile
    // conjunct there would keep other rows than the filter does
    if plain.iter().any(Expr::is_volatile) {
        return Ok(LogicalPlan::Filter(filter));
    }
    match (conjunction(plain), conjunction(with_subqueries)) {
        (Some(plain), Some(with_subqueries)) => {
            LogicalPlanBuilder::from(Arc::unwrap_or_clone(filter.input))
                .filter(plain)?
                .filter(with_subqueries)?
                .build()
        }
        _ => Ok(LogicalPlan::Filter(filter)),
    }
}

/// The kinds of operator whose expressions may hold a subquery to rewrite.
fn rewrites_expressions(plan: &LogicalPlan) -> bool {
    matches!(
        plan,
        LogicalPlan::Projection(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Window(_)
            | LogicalPlan::Sort(_)
    )
}

/// Whether `plan`'s own expressions hold a subquery this rule rewrites.
fn has_subquery_to_rewrite(plan: &LogicalPlan) -> Result<bool> {
    if !rewrites_expressions(plan) {
        return Ok(false);
    }
    let input_schemas: Vec<&DFSchema> = plan
        .inputs()
        .iter()
        .map(|input| input.schema().as_ref())
        .collect();
    let mut found = false;
    plan.apply_expressions(|expr| {
        found = expr.exists(|expr| to_rewrite(expr, &input_schemas))?;
        Ok(stop_when(found))
    })?;
    Ok(found)
}

/// Whether `expr` is a subquery this rule rewrites in an operator over
/// inputs of `input_schemas`: a correlated one, or an `EXISTS` or `IN` (the
/// physical planner runs only uncorrelated scalar subqueries).
fn to_rewrite(expr: &Expr, input_schemas: &[&DFSchema]) -> Result<bool> {
    Ok(match expr {
        Expr::ScalarSubquery(subquery) => {
            !correlated_columns(subquery, input_schemas)?.is_empty()
        }
        Expr::Exists(_) | Expr::InSubquery(_) => true,
        _ => false,
    })
}

/// `plan` with the outer reference columns of each scalar subquery in its
/// expressions narrowed to those it reads from outside: the planner lists
/// those of a `LATERAL` join inside it too, which the join provides. The
/// physical planner runs a scalar subquery with none as uncorrelated; one
/// listing a column it does not read would stay in the plan.
fn refresh_outer_ref_columns(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    plan.map_expressions(|expr| {
        expr.transform_down(|expr| {
            let Expr::ScalarSubquery(subquery) = expr else {
                return Ok(Transformed::no(expr));
            };
            let free = free_outer_columns(&subquery.subquery)?;
            let stale = |reference: &Expr| {
                matches!(reference, Expr::OuterReferenceColumn(_, column)
                    if !free.contains(column))
            };
            if !subquery.outer_ref_columns.iter().any(stale) {
                return Ok(Transformed::no(Expr::ScalarSubquery(subquery)));
            }
            let outer_ref_columns = subquery
                .outer_ref_columns
                .iter()
                .filter(|reference| !stale(reference))
                .cloned()
                .collect();
            Ok(Transformed::yes(Expr::ScalarSubquery(Subquery {
                outer_ref_columns,
                ..subquery
            })))
        })
    })
}

/// `plan` with each of its subqueries that correlates in a join's `ON`
/// normalized by [`PushDownFilter`], where that moves the correlation out of
/// every `ON` and into no table scan: the shape-specific rules then pull it
/// up in the next pass, as they do without this rule (which runs before
/// `PushDownFilter`). A scan that took a correlated filter would hold an
/// outer reference no rule can take out.
fn push_correlation_out_of_joins(
    plan: LogicalPlan,
    config: &dyn OptimizerConfig,
) -> Result<Transformed<LogicalPlan>> {
    let correlated_on = |plan: &LogicalPlan| {
        plan.exists(|node| {
            Ok(match node {
                LogicalPlan::Join(Join {
                    filter: Some(filter),
                    ..
                }) => filter.contains_outer(),
                LogicalPlan::TableScan(scan) => {
                    scan.filters.iter().any(Expr::contains_outer)
                }
                _ => false,
            })
        })
    };
    plan.map_subqueries(|subquery| {
        let LogicalPlan::Subquery(subquery) = subquery else {
            return Ok(Transformed::no(subquery));
        };
        if !correlated_on(&subquery.subquery)? {
            return Ok(Transformed::no(LogicalPlan::Subquery(subquery)));
        }
        let push_down = PushDownFilter::new();
        let pushed = Arc::unwrap_or_clone(Arc::clone(&subquery.subquery))
            .transform_down(|node| push_down.rewrite(node, config))?
            .data;
        if correlated_on(&pushed)? {
            return Ok(Transformed::no(LogicalPlan::Subquery(subquery)));
        }
        Ok(Transformed::yes(LogicalPlan::Subquery(Subquery {
            subquery: Arc::new(pushed),
            ..subquery
        })))
    })
}

/// The columns below `sort`'s input `SELECT` list that the subqueries in
/// its keys read from beyond them, and that the list does not output.
fn columns_read_below_input(sort: &Sort) -> Result<Vec<Column>> {
    let LogicalPlan::Projection(projection) = sort.input.as_ref() else {
        return Ok(vec![]);
    };
    let below = projection.input.schema();
    let mut read = vec![];
    for key in &sort.expr {
        key.expr.apply(|expr| {
            if let Expr::ScalarSubquery(subquery)
            | Expr::Exists(Exists { subquery, .. })
            | Expr::InSubquery(InSubquery { subquery, .. }) = expr
            {
                for column in free_outer_columns(&subquery.subquery)? {
                    if !projection.schema.has_column(&column)
                        && below.has_column(&column)
                        && !read.contains(&column)
                    {
                        read.push(column);
                    }
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    Ok(read)
}

/// `sort` over its input `SELECT` list widened with the columns below it
/// that the subqueries in its keys read ([`columns_read_below_input`]).
/// Only those: another column below may share its name with an output
/// column of the list (`SELECT b AS a FROM t ORDER BY (SELECT b)`), which
/// one schema cannot hold beside it.
fn widen_sort_input(sort: Sort) -> Result<LogicalPlan> {
    let read = columns_read_below_input(&sort)?;
    let LogicalPlan::Projection(projection) = Arc::unwrap_or_clone(sort.input) else {
        return internal_err!(
            "A sort whose keys read below its input is over a projection"
        );
    };
    let mut exprs = projection.expr;
    exprs.extend(read.into_iter().map(Expr::Column));
    let input = LogicalPlanBuilder::from(Arc::unwrap_or_clone(projection.input))
        .project(exprs)?
        .build()?;
    Ok(LogicalPlan::Sort(Sort {
        expr: sort.expr,
        input: Arc::new(input),
        fetch: sort.fetch,
    }))
}

/// Rewrites the subqueries in the expressions of `plan`, an operator with
/// one input: each is joined to the input, and its value read from the
/// join. The operator keeps its output schema.
fn rewrite_node(
    plan: LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<LogicalPlan> {
    let [original_input] = plan.inputs()[..] else {
        return internal_err!(
            "Subqueries rewritten in an operator of one input, not {}",
            plan.display()
        );
    };
    let original_input = original_input.clone();
    let input_schemas = [original_input.schema().as_ref()];
    let mut input = original_input.clone();
    // In a filter, `x IN (subquery)` as a conjunct keeps only rows where it
    // is true: its NULL answer need not be told from false
    let conjunct_ins: Vec<Expr> = match &plan {
        LogicalPlan::Filter(filter) => split_conjunction(&filter.predicate)
            .into_iter()
            .filter(|conjunct| {
                matches!(
                    conjunct,
                    Expr::InSubquery(InSubquery { negated: false, .. })
                )
            })
            .cloned()
            .collect(),
        _ => vec![],
    };
    // Bottom up: a subquery inside the value of another, `(SELECT ...) IN
    // (SELECT ...)`, is joined first, so that the other's join reads its
    // value as a column
    let exprs = plan
        .expressions()
        .into_iter()
        .map(|expr| {
            expr.transform_up(|expr| {
                if !to_rewrite(&expr, &input_schemas)? {
                    return Ok(Transformed::no(expr));
                }
                let (joined, value) = match &expr {
                    Expr::InSubquery(InSubquery {
                        expr: needle,
                        subquery,
                        negated: false,
                    }) if conjunct_ins.contains(&expr) => join_in(
                        needle,
                        subquery,
                        &input,
                        &original_input,
                        false,
                        alias_generator,
                    )?,
                    _ => join_subquery(&expr, &input, &original_input, alias_generator)?,
                };
                input = joined;
                Ok(Transformed::yes(value))
            })
            .data()
        })
        .collect::<Result<Vec<_>>>()?;
    let original_columns: Vec<Expr> = original_input
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let output_names = plan.schema().columns();
    let named = |exprs: Vec<Expr>, names: &[Column]| -> Vec<Expr> {
        exprs
            .into_iter()
            .zip(names)
            .map(|(expr, name)| keep_name(expr, name))
            .collect()
    };
    let plan = match plan {
        LogicalPlan::Projection(_) => LogicalPlanBuilder::from(input)
            .project(named(exprs, &output_names))?
            .build()?,
        LogicalPlan::Filter(_) => {
            let [predicate] = <[Expr; 1]>::try_from(exprs).map_err(|exprs| {
                internal_datafusion_err!("A filter of {} predicates", exprs.len())
            })?;
            LogicalPlanBuilder::from(input)
                .filter(predicate)?
                .project(original_columns)?
                .build()?
        }
        LogicalPlan::Sort(Sort { expr, fetch, .. }) => {
            let sort = expr
                .into_iter()
                .zip(exprs)
                .map(|(sort, expr)| datafusion_expr::SortExpr { expr, ..sort })
                .collect::<Vec<_>>();
            LogicalPlanBuilder::from(input)
                .sort_with_limit(sort, fetch)?
                .project(original_columns)?
                .build()?
        }
        LogicalPlan::Aggregate(Aggregate { group_expr, .. }) => {
            let mut exprs = named(exprs, &output_names);
            let aggr_expr = exprs.split_off(group_expr.len());
            LogicalPlan::Aggregate(Aggregate::try_new(Arc::new(input), exprs, aggr_expr)?)
        }
        LogicalPlan::Window(Window {
            input: old_input, ..
        }) => {
            let first = old_input.schema().fields().len();
            let window_expr = named(exprs, &output_names[first..]);
            let columns: Vec<Expr> =
                output_names.iter().cloned().map(Expr::Column).collect();
            LogicalPlanBuilder::from(input)
                .window(window_expr)?
                .project(columns)?
                .build()?
        }
        other => {
            return internal_err!(
                "Subqueries rewritten in an operator that holds none: {}",
                other.display()
            );
        }
    };
    Ok(plan)
}

/// `expr` named `name`, as the operator's parent reads it.
fn keep_name(expr: Expr, name: &Column) -> Expr {
    let (relation, current) = expr.qualified_name();
    if current == name.name && relation == name.relation {
        expr
    } else {
        expr.unalias()
            .alias_qualified(name.relation.clone(), name.name.clone())
    }
}

/// Joins the subquery `expr` (a scalar subquery, `EXISTS` or `IN`) to
/// `input`, its outer values those of `outer_rows` (the operator's input
/// before any of its subqueries was joined), and returns the join and the
/// expression that reads its value.
fn join_subquery(
    expr: &Expr,
    input: &LogicalPlan,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    match expr {
        Expr::ScalarSubquery(subquery) => {
            join_scalar_subquery(subquery, input, outer_rows, alias_generator)
        }
        Expr::Exists(Exists { subquery, negated }) => {
            let (joined, mark) =
                join_exists(subquery, input, outer_rows, alias_generator)?;
            Ok((joined, if *negated { !mark } else { mark }))
        }
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => {
            let (joined, found) =
                join_in(expr, subquery, input, outer_rows, true, alias_generator)?;
            Ok((joined, if *negated { !found } else { found }))
        }
        other => internal_err!("Not a subquery to join: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::DataType;
    use datafusion_common::tree_node::TreeNode;
    use datafusion_common::{JoinType, Result};
    use datafusion_expr::{
        Expr, LogicalPlan, col, exists, in_subquery, lit, out_ref_col, scalar_subquery,
    };
    use datafusion_functions_aggregate::sum::sum;

    use super::DecorrelateSubqueries;
    use crate::OptimizerContext;
    use crate::fork_test_util::{decorrelated, optimized_by};
    use crate::fork_test_util::{outer, rows_of_key, table};

    #[test]
    fn a_subquery_in_an_aggregate_argument_is_joined_below_it() -> Result<()> {
        let lookup = rows_of_key()?.project([col("s.v")])?.build()?;
        let plan = table("o")?
            .aggregate(
                [col("o.v")],
                [sum(scalar_subquery(Arc::new(lookup))).alias("total")],
            )?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Aggregate: groupBy=[[o.v]], aggr=[[sum(__subquery_4.__subquery_4_1) AS total]]
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

    /// `o WHERE EXISTS (SELECT 1 FROM s WHERE s.v IN (SELECT o.k FROM t JOIN
    /// u ON u.v > s.v))`, its tables taking filters into their scans.
    #[test]
    fn a_correlated_join_condition_stays_out_of_a_scan() -> Result<()> {
        let values = table("t")?
            .join_on(
                table("u")?.build()?,
                JoinType::Inner,
                [col("u.v").gt(out_ref_col(DataType::Int32, "s.v"))],
            )?
            .project([outer("k")])?
            .build()?;
        let exists_body = table("s")?
            .filter(in_subquery(col("s.v"), Arc::new(values)))?
            .project([lit(1)])?
            .build()?;
        let plan = table("o")?.filter(exists(Arc::new(exists_body)))?.build()?;
        let context = OptimizerContext::new().with_max_passes(3);
        let optimized = optimized_by(DecorrelateSubqueries::new(), plan, &context)?;
        let scan_filters_read_outer = optimized.exists(|node| {
            Ok(matches!(node, LogicalPlan::TableScan(scan)
                if scan.filters.iter().any(Expr::contains_outer)))
        })?;
        assert!(!scan_filters_read_outer, "{}", optimized.display_indent());
        assert!(!optimized.contains_outer_reference());
        Ok(())
    }

    /// `o WHERE EXISTS (s WHERE s.k > o.k) OR EXISTS (t WHERE t.k > o.k)`:
    /// the second subquery's domain is the distinct `o.k` of `o`, not of the
    /// first subquery's join (which made the plan double with each
    /// subquery of one expression).
    #[test]
    fn a_subquery_takes_its_domain_from_the_rows_the_other_conjuncts_keep() -> Result<()>
    {
        // o, s WHERE o.k = s.k AND EXISTS (SELECT 1 FROM t WHERE t.v >
        // o.v + s.v): the pairs of the join, not of the product
        let subquery = table("t")?
            .filter(col("t.v").gt(outer("v") + out_ref_col(DataType::Int32, "s.v")))?
            .project([lit(1)])?
            .build()?;
        let plan = table("o")?
            .cross_join(table("s")?.build()?)?
            .filter(col("o.k").eq(col("s.k")).and(exists(Arc::new(subquery))))?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v, s.k, s.v
              Filter: __subquery_3.mark
                LeftMark Join: o.v = __subquery_3.__subquery_3_0, s.v = __subquery_3.__subquery_3_1
                  Filter: o.k = s.k
                    Cross Join:
                      TableScan: o
                      TableScan: s
                  SubqueryAlias: __subquery_3
                    Projection: __domain_instance_2.__domain_1_0 AS __subquery_3_0, __domain_instance_2.__domain_1_1 AS __subquery_3_1
                      Aggregate: groupBy=[[__domain_instance_2.__domain_1_0, __domain_instance_2.__domain_1_1]], aggr=[[]]
                        Filter: t.v > __domain_instance_2.__domain_1_0 + __domain_instance_2.__domain_1_1
                          Cross Join:
                            TableScan: t
                            SubqueryAlias: __domain_instance_2
                              Aggregate: groupBy=[[__domain_1_0, __domain_1_1]], aggr=[[]]
                                Projection: o.v AS __domain_1_0, s.v AS __domain_1_1
                                  Filter: o.k = s.k
                                    Cross Join:
                                      TableScan: o
                                      TableScan: s
            ");
        Ok(())
    }

    #[test]
    fn each_subquery_takes_its_domain_from_the_operator_input() -> Result<()> {
        let above = |table_name: &str| -> Result<Arc<LogicalPlan>> {
            Ok(Arc::new(
                table(table_name)?
                    .filter(col(format!("{table_name}.k")).gt(outer("k")))?
                    .project([lit(1)])?
                    .build()?,
            ))
        };
        let plan = table("o")?
            .filter(exists(above("s")?).or(exists(above("t")?)))?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v
              Filter: __subquery_3.mark OR __subquery_6.mark
                LeftMark Join: o.k = __subquery_6.__subquery_6_0
                  LeftMark Join: o.k = __subquery_3.__subquery_3_0
                    TableScan: o
                    SubqueryAlias: __subquery_3
                      Projection: __domain_instance_2.__domain_1_0 AS __subquery_3_0
                        Aggregate: groupBy=[[__domain_instance_2.__domain_1_0]], aggr=[[]]
                          Filter: s.k > __domain_instance_2.__domain_1_0
                            Cross Join:
                              TableScan: s
                              SubqueryAlias: __domain_instance_2
                                Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                                  Projection: o.k AS __domain_1_0
                                    TableScan: o
                  SubqueryAlias: __subquery_6
                    Projection: __domain_instance_5.__domain_4_0 AS __subquery_6_0
                      Aggregate: groupBy=[[__domain_instance_5.__domain_4_0]], aggr=[[]]
                        Filter: t.k > __domain_instance_5.__domain_4_0
                          Cross Join:
                            TableScan: t
                            SubqueryAlias: __domain_instance_5
                              Aggregate: groupBy=[[__domain_4_0]], aggr=[[]]
                                Projection: o.k AS __domain_4_0
                                  TableScan: o
            ");
        Ok(())
    }

    #[test]
    fn a_subquery_in_order_by_is_joined_below_the_sort() -> Result<()> {
        let lookup = rows_of_key()?.project([col("s.v")])?.build()?;
        let plan = table("o")?
            .sort([scalar_subquery(Arc::new(lookup)).sort(true, false)])?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v
              Sort: __subquery_4.__subquery_4_1 ASC NULLS LAST
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
