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

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{
    Column, DFSchema, NullEquality, Result, ScalarValue, TableReference, not_impl_err,
    plan_datafusion_err,
};
use datafusion_expr::expr::{Exists, InSubquery, SetComparison};
use datafusion_expr::logical_plan::{
    Aggregate, Filter, Join, JoinType, Projection, SkipType, Sort, Subquery,
    SubqueryAlias, Window,
};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{
    BinaryExpr, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Operator, lit, when,
};
use datafusion_functions_aggregate::count::count;

use crate::dependent_join::{
    DependentJoin, Domain, Tagged, aggregate_below_renames, empty_input_value,
    filters_into_subquery, lateral_parts, lateral_side, refuse_outer_aggregates,
    replace_outer, stop_when,
};
use crate::optimizer::ApplyOrder;
use crate::push_down_filter::PushDownFilter;
use crate::subquery_uniqueness::unique_on;
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
        LogicalPlan::Join(join) => rewrite_join(join, alias_generator),
        LogicalPlan::Sort(sort) if sort_reads_below_input(&sort)? => {
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
            rewrite_node(normalized.data, alias_generator).map(Transformed::yes)
        }
        plan => Ok(Transformed::no(plan)),
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

/// The columns of `input_schemas` that `subquery` reads as outer columns,
/// at any depth.
fn correlated_columns(
    subquery: &Subquery,
    input_schemas: &[&DFSchema],
) -> Result<Vec<Column>> {
    Ok(free_outer_columns(&subquery.subquery)?
        .into_iter()
        .filter(|column| input_schemas.iter().any(|schema| schema.has_column(column)))
        .collect())
}

/// The outer columns `plan` reads from outside it: its own outer
/// references, and those of its subqueries that no operator between
/// provides.
fn free_outer_columns(plan: &LogicalPlan) -> Result<BTreeSet<Column>> {
    let mut free = BTreeSet::new();
    plan.apply(|node| {
        match node {
            // A lateral subquery reads its outer columns from the join above
            // it, which takes them out below
            LogicalPlan::Subquery(_) => return Ok(TreeNodeRecursion::Jump),
            LogicalPlan::Join(join) => {
                if let Some(lateral) = lateral_side(&join.right) {
                    let provided = join.left.schema();
                    for column in free_outer_columns(&lateral.subquery)? {
                        if !provided.has_column(&column) {
                            free.insert(column);
                        }
                    }
                }
            }
            _ => {}
        }
        let provided: Vec<&DFSchema> = node
            .inputs()
            .iter()
            .map(|input| input.schema().as_ref())
            .collect();
        node.apply_expressions(|expr| {
            expr.apply(|expr| {
                match expr {
                    Expr::OuterReferenceColumn(_, column) => {
                        free.insert(column.clone());
                    }
                    Expr::ScalarSubquery(subquery)
                    | Expr::Exists(Exists { subquery, .. })
                    | Expr::InSubquery(InSubquery { subquery, .. })
                    | Expr::SetComparison(SetComparison { subquery, .. }) => {
                        for column in free_outer_columns(&subquery.subquery)? {
                            if !provided.iter().any(|schema| schema.has_column(&column)) {
                                free.insert(column);
                            }
                        }
                    }
                    _ => {}
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    Ok(free)
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

/// Whether `input` holds an outer reference, other than in a lateral
/// subquery (which a join inside `input` binds).
fn correlated_below(input: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    input.apply(|plan| {
        if matches!(plan, LogicalPlan::Subquery(_)) {
            return Ok(TreeNodeRecursion::Jump);
        }
        found = plan.contains_outer_reference();
        Ok(stop_when(found))
    })?;
    Ok(found)
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

/// Whether `subquery` reads outer columns that `outer` does not have: it is
/// nested in another subquery and correlated past it. The shape-specific
/// rules would join it to `outer` with a condition on a column out of
/// scope; this rule decorrelates the enclosing subquery as a whole.
pub(crate) fn correlated_beyond(
    subquery: &LogicalPlan,
    outer: &DFSchema,
) -> Result<bool> {
    Ok(free_outer_columns(subquery)?
        .iter()
        .any(|column| !outer.has_column(column)))
}

/// Whether [`DecorrelatePredicateSubquery`] must leave `conjunct`, a
/// conjunct of a filter over an input of schema `outer`, to this rule.
///
/// Its semi, anti and mark joins answer an `IN` with true or false: right
/// where the conjunct keeps only rows for which `IN` is true, so that NULL
/// reads as false, and wrong where NULL must be told from false: a
/// `NOT IN`, or an `IN` under `NOT`, `IS NULL` or any operator but `AND`
/// and `OR`. Its null-aware anti join tells them apart for an uncorrelated
/// `x NOT IN` whose needle is NULL where its columns are (not for
/// `NULLIF(c, c)` over a column `c` that is never NULL) and for no
/// correlated one: NULL in the subquery's values for one outer row must
/// not decide for the others. These go to the mark join of [`join_in`],
/// which counts the subquery's rows and non-NULL values per outer value.
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

/// `subquery`, the subquery of a set comparison (`x > ANY (subquery)`)
/// over an input of schema `outer`, under a fresh alias where it outputs a
/// column under a name `outer` also has.
///
/// [`RewriteSetComparison`] compares `x`, as an outer reference, with the
/// subquery's column in a filter over the subquery. In `salary > ANY
/// (SELECT salary FROM emp ...)` over `emp`, both are `emp.salary`, and
/// once the comparison is pulled out of the subquery into a join the two
/// can no longer be told apart. Under an alias of its own, the subquery's
/// column is named apart from the outer one. Its value is also named apart
/// from the columns it reads, as for `IN` ([`in_values_named_apart`]).
///
/// [`RewriteSetComparison`]: crate::rewrite_set_comparison::RewriteSetComparison
pub(crate) fn named_apart(
    subquery: Subquery,
    outer: &DFSchema,
    alias_generator: &AliasGenerator,
) -> Result<Subquery> {
    let subquery = value_named_apart(subquery)?;
    let schema = subquery.subquery.schema();
    let clashes = schema.iter().any(|(qualifier, field)| {
        qualifier.is_some_and(|qualifier| {
            outer.has_column_with_qualified_name(qualifier, field.name())
        })
    });
    if !clashes {
        return Ok(subquery);
    }
    let aliased = LogicalPlanBuilder::from(Arc::unwrap_or_clone(subquery.subquery))
        .alias(alias_generator.next("__set_comparison"))?
        .build()?;
    Ok(Subquery {
        subquery: Arc::new(aliased),
        ..subquery
    })
}

/// `expr` with the value of each `IN` subquery in it named apart from the
/// columns the subquery reads, where the two share a name.
///
/// Type coercion casts the value of `x IN (SELECT s.v ...)` to the type of
/// `x`: `CAST(s.v AS Int64)`, whose output keeps the name `s.v`. Pulling a
/// correlated filter that reads `s.v` (`WHERE s.v < o.k`) out of the
/// subquery adds `s.v` to the same projection: two outputs of one name, which
/// the projection refuses. Aliased to its own text, the value is told apart.
pub(crate) fn in_values_named_apart(expr: Expr) -> Result<Expr> {
    expr.transform(|expr| match expr {
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => Ok(Transformed::yes(Expr::InSubquery(InSubquery {
            expr,
            subquery: value_named_apart(subquery)?,
            negated,
        }))),
        other => Ok(Transformed::no(other)),
    })
    .data()
}

fn value_named_apart(subquery: Subquery) -> Result<Subquery> {
    let LogicalPlan::Projection(projection) = subquery.subquery.as_ref() else {
        return Ok(subquery);
    };
    let [value] = projection.expr.as_slice() else {
        return Ok(subquery);
    };
    if matches!(value, Expr::Column(_) | Expr::Alias(_)) {
        return Ok(subquery);
    }
    let name = value.schema_name().to_string();
    if !projection
        .input
        .schema()
        .columns()
        .iter()
        .any(|column| column.flat_name() == name)
    {
        return Ok(subquery);
    }
    let renamed = Projection::try_new(
        vec![value.clone().alias(value.to_string())],
        Arc::clone(&projection.input),
    )?;
    Ok(Subquery {
        subquery: Arc::new(LogicalPlan::Projection(renamed)),
        ..subquery
    })
}

/// Whether [`PushDownFilter`] must keep `filter` where it is: it holds a
/// correlated subquery, and its input renames the columns the subquery
/// reads as outer references (an alias or a projection). Below it, they
/// would name columns that are not there.
pub(crate) fn renames_for_correlated_subquery(filter: &Filter) -> Result<bool> {
    if !matches!(
        filter.input.as_ref(),
        LogicalPlan::SubqueryAlias(_) | LogicalPlan::Projection(_)
    ) {
        return Ok(false);
    }
    filter.predicate.exists(|expr| {
        Ok(match expr {
            Expr::ScalarSubquery(subquery)
            | Expr::Exists(Exists { subquery, .. })
            | Expr::InSubquery(InSubquery { subquery, .. })
            | Expr::SetComparison(SetComparison { subquery, .. }) => {
                !free_outer_columns(&subquery.subquery)?.is_empty()
            }
            _ => false,
        })
    })
}

/// `plan` with each of its subqueries that correlates in a join's `ON`
/// normalized by [`PushDownFilter`], where that moves the correlation out of
/// every `ON`: the shape-specific rules then pull it up in the next pass, as
/// they do without this rule (which runs before `PushDownFilter`).
fn push_correlation_out_of_joins(
    plan: LogicalPlan,
    config: &dyn OptimizerConfig,
) -> Result<Transformed<LogicalPlan>> {
    let correlated_on = |plan: &LogicalPlan| {
        plan.exists(|node| {
            Ok(
                matches!(node, LogicalPlan::Join(Join { filter: Some(filter), .. })
                if filter.contains_outer()),
            )
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

/// Whether the shape-specific rules must leave a subquery containing `node`
/// to this rule: `node` holds a subquery that reads columns from beyond
/// `node` (a correlation two or more levels deep, which pulling up the outer
/// subquery would leave unbound), or `node` is a derived table whose
/// correlation reads a column it does not output (they cannot pull that up
/// through its alias), or a window with a correlation below it (a correlated
/// filter pulled above a window changes the rows the window sees), or an
/// aggregate over grouping sets with a correlation below it (pulled above
/// it, the filter drops the row of the empty grouping set an outer row
/// without input rows has), or an aggregate of outer columns only (which
/// SQL evaluates in the outer query: this rule refuses it), or a join with
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
        LogicalPlan::Aggregate(Aggregate {
            group_expr, input, ..
        }) if matches!(group_expr.as_slice(), [Expr::GroupingSet(_)]) => {
            return correlated_below(input);
        }
        LogicalPlan::Aggregate(aggregate)
            if refuse_outer_aggregates(aggregate).is_err() =>
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
    let provided: Vec<&DFSchema> = node
        .inputs()
        .iter()
        .map(|input| input.schema().as_ref())
        .collect();
    let mut reads_past = false;
    node.apply_expressions(|expr| {
        expr.apply(|expr| {
            if let Expr::ScalarSubquery(subquery)
            | Expr::Exists(Exists { subquery, .. })
            | Expr::InSubquery(InSubquery { subquery, .. })
            | Expr::SetComparison(SetComparison { subquery, .. }) = expr
            {
                reads_past =
                    free_outer_columns(&subquery.subquery)?
                        .iter()
                        .any(|column| {
                            !provided.iter().any(|schema| schema.has_column(column))
                        });
            }
            Ok(stop_when(reads_past))
        })
    })?;
    Ok(reads_past)
}

/// For a join of type `join_type`, whether a correlated filter must stay on
/// its left side, and on its right side: it can be pulled above the join
/// only out of a side whose rows the join outputs as they are. Out of the
/// other side (the right of a left join, semi, anti or mark join, either
/// side of a full join) it would drop rows the join keeps, NULL-extended or
/// not: a `LEFT JOIN (... WHERE i = o.i)` becomes an inner join, and the
/// right side of `EXCEPT` a filter on its result.
fn correlation_stays_below(join_type: JoinType) -> (bool, bool) {
    match join_type {
        JoinType::Inner => (false, false),
        JoinType::Left
        | JoinType::LeftSemi
        | JoinType::LeftAnti
        | JoinType::LeftMark
        | JoinType::LeftSingle => (false, true),
        JoinType::Right
        | JoinType::RightSemi
        | JoinType::RightAnti
        | JoinType::RightMark
        | JoinType::RightSingle => (true, false),
        JoinType::Full => (true, true),
    }
}

/// Whether a column of `left` and one of `right` have the same name.
fn shares_a_column_name(left: &LogicalPlan, right: &LogicalPlan) -> bool {
    let right = right.schema();
    left.schema()
        .fields()
        .iter()
        .any(|field| right.has_column_with_unqualified_name(field.name()))
}

/// Whether a subquery in `sort`'s keys reads columns its input does not
/// have: `ORDER BY` a subquery over a `SELECT` list that leaves out the outer
/// columns it reads, which the SQL planner resolves below the list.
fn sort_reads_below_input(sort: &Sort) -> Result<bool> {
    let LogicalPlan::Projection(projection) = sort.input.as_ref() else {
        return Ok(false);
    };
    let below = projection.input.schema();
    let mut reads_below = false;
    for key in &sort.expr {
        key.expr.apply(|expr| {
            if let Expr::ScalarSubquery(subquery)
            | Expr::Exists(Exists { subquery, .. })
            | Expr::InSubquery(InSubquery { subquery, .. }) = expr
            {
                reads_below |=
                    free_outer_columns(&subquery.subquery)?
                        .iter()
                        .any(|column| {
                            !projection.schema.has_column(column)
                                && below.has_column(column)
                        });
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    Ok(reads_below)
}

/// `sort` over its input `SELECT` list widened with every column below it,
/// so that the subqueries in its keys find the outer columns they read.
fn widen_sort_input(sort: Sort) -> Result<LogicalPlan> {
    let LogicalPlan::Projection(projection) = Arc::unwrap_or_clone(sort.input) else {
        return not_impl_err!("ORDER BY a subquery over this input");
    };
    let mut exprs = projection.expr;
    for column in projection.input.schema().columns() {
        if !projection.schema.has_column(&column) {
            exprs.push(Expr::Column(column));
        }
    }
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
    let original_input = plan.inputs()[0].clone();
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
                    }) if conjunct_ins.contains(&expr) => {
                        join_in(needle, subquery, &input, false, alias_generator)?
                    }
                    _ => join_subquery(&expr, &input, alias_generator)?,
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
        LogicalPlan::Filter(_) => LogicalPlanBuilder::from(input)
            .filter(exprs.into_iter().next().expect("a predicate"))?
            .project(original_columns)?
            .build()?,
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
        other => return not_impl_err!("subqueries in {}", other.display()),
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
/// `input`, and returns the join and the expression that reads its value.
fn join_subquery(
    expr: &Expr,
    input: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    match expr {
        Expr::ScalarSubquery(subquery) => {
            join_scalar_subquery(subquery, input, alias_generator)
        }
        Expr::Exists(Exists { subquery, negated }) => {
            let (joined, mark) = join_exists(subquery, input, alias_generator)?;
            Ok((joined, if *negated { !mark } else { mark }))
        }
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => {
            let (joined, found) = join_in(expr, subquery, input, true, alias_generator)?;
            Ok((joined, if *negated { !found } else { found }))
        }
        other => not_impl_err!("subquery expression {other}"),
    }
}

/// A subquery split into the projections and aliases at its top (which do
/// not change its rows) and the rest.
struct Split<'a> {
    /// Top first.
    top: Vec<&'a LogicalPlan>,
    body: &'a LogicalPlan,
}

fn split_top(plan: &LogicalPlan) -> Split<'_> {
    let mut top = vec![];
    let mut body = plan;
    while let LogicalPlan::Projection(Projection { input, .. })
    | LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) = body
    {
        // A subquery in a projection reads the columns below it: it stays
        // in the body, where they are
        if body.expressions().iter().any(contains_subquery) {
            break;
        }
        top.push(body);
        body = input;
    }
    Split { top, body }
}

/// The body of a subquery evaluated for every outer value it reads (or as
/// it is, if it reads none), its columns renamed apart under a fresh alias.
struct Decorrelated {
    plan: LogicalPlan,
    alias: String,
    /// Each column of the tagged body, and its name under the alias.
    names: Vec<(Column, String)>,
    /// The outer columns of the input, and the tags standing for them.
    outer: Vec<Column>,
    tags: Vec<Column>,
    unique: bool,
    /// See [`Tagged::non_null_tags`].
    non_null_tags: bool,
}

/// `body` tagged with the outer values of `input` it reads, and those outer
/// columns.
fn tag_body(
    body: &LogicalPlan,
    input: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(Tagged, Vec<Column>)> {
    let outer = correlated_in_plan(body, input)?;
    let tagged = if outer.is_empty() {
        Tagged {
            plan: body.clone(),
            tags: vec![],
            unique: body.max_rows().is_some_and(|rows| rows <= 1),
            non_null_tags: true,
        }
    } else {
        let domain = Domain::new(input, outer.clone(), alias_generator)?;
        DependentJoin::new(&domain, alias_generator).push(body)?
    };
    Ok((tagged, outer))
}

impl Decorrelated {
    fn new(
        body: &LogicalPlan,
        input: &LogicalPlan,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        let (tagged, outer) = tag_body(body, input, alias_generator)?;
        Self::aliased(tagged, outer, alias_generator)
    }

    /// `tagged` under a fresh alias, each column renamed apart (a body that
    /// joins tables may hold two columns of one name).
    fn aliased(
        mut tagged: Tagged,
        outer: Vec<Column>,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        // A body without columns (`EXISTS (SELECT outer.c)`, whose projection
        // is at the top) still has rows: one column of its own to join
        if tagged.plan.schema().fields().is_empty() {
            tagged.plan = LogicalPlanBuilder::from(tagged.plan)
                .project([lit(true).alias("__row")])?
                .build()?;
        }
        let alias = alias_generator.next("__subquery");
        let names: Vec<(Column, String)> = tagged
            .plan
            .schema()
            .columns()
            .into_iter()
            .enumerate()
            .map(|(index, column)| (column, format!("{alias}_{index}")))
            .collect();
        let plan = LogicalPlanBuilder::from(tagged.plan)
            .project(
                names
                    .iter()
                    .map(|(column, name)| Expr::Column(column.clone()).alias(name)),
            )?
            .alias(alias.clone())?
            .build()?;
        let renamed = |column: &Column| -> Result<Column> {
            let (_, name) = names
                .iter()
                .find(|(original, _)| original == column)
                .ok_or_else(|| plan_datafusion_err!("no tag column {column}"))?;
            Ok(Column::new(Some(alias.clone()), name))
        };
        let tags = tagged
            .tags
            .iter()
            .map(renamed)
            .collect::<Result<Vec<_>>>()?;
        // Under NULL-safe equality a NULL value is a value: only a plan that
        // is unique on non-NULL tags is known to be unique
        let unique = tagged.unique
            || ((tagged.non_null_tags
                || tags.iter().all(|tag| !nullable_column(&plan, tag)))
                && unique_on(&plan, &tags));
        Ok(Self {
            plan,
            alias,
            names,
            outer,
            tags,
            unique,
            non_null_tags: tagged.non_null_tags,
        })
    }

    /// `input` joined to this on the outer columns, NULL-safe where it
    /// matters ([`outer_key_equality`]).
    fn join(
        self,
        input: &LogicalPlan,
        join_type: JoinType,
        filter: Option<Expr>,
    ) -> Result<LogicalPlan> {
        // An uncorrelated subquery joins every row
        let filter = match filter {
            None if self.outer.is_empty() => Some(lit(true)),
            filter => filter,
        };
        let null_equality = outer_key_equality(
            input,
            &self.outer,
            &self.plan,
            &self.tags,
            self.non_null_tags,
        );
        LogicalPlanBuilder::from(input.clone())
            .join_detailed(
                self.plan,
                join_type,
                (self.outer, self.tags),
                filter,
                null_equality,
            )?
            .build()
    }

    /// A column of the tagged body, as the join outputs it.
    fn column(&self, column: &Column) -> Result<Expr> {
        let (_, name) = self
            .names
            .iter()
            .find(|(original, _)| original == column)
            .ok_or_else(|| plan_datafusion_err!("no column {column} in the subquery"))?;
        Ok(Expr::Column(Column::new(Some(self.alias.clone()), name)))
    }

    /// The mark a mark join adds.
    fn mark(&self) -> Expr {
        Expr::Column(Column::new(Some(self.alias.clone()), "mark"))
    }
}

/// How outer columns of `input` meet the tags of `tagged` standing for them.
///
/// NULL-safe: the subquery run for a NULL outer value has an answer of its
/// own, tagged NULL. Where no pair of an outer column and its tag can both be
/// NULL, plain equality gives the same rows, and is the join a user would
/// write by hand (and the one the physical join serves best).
fn outer_key_equality(
    input: &LogicalPlan,
    outer: &[Column],
    tagged: &LogicalPlan,
    tags: &[Column],
    non_null_tags: bool,
) -> NullEquality {
    let no_null_pair = non_null_tags
        || outer.iter().zip(tags).all(|(outer, tag)| {
            !nullable_column(input, outer) || !nullable_column(tagged, tag)
        });
    if no_null_pair {
        NullEquality::NullEqualsNothing
    } else {
        NullEquality::NullEqualsNull
    }
}

/// Whether `column` of `plan` may hold NULL (true where it is not found).
fn nullable_column(plan: &LogicalPlan, column: &Column) -> bool {
    !plan
        .schema()
        .qualified_field_from_column(column)
        .is_ok_and(|(_, field)| !field.is_nullable())
}

/// The columns of `input` that `plan` reads as outer columns.
fn correlated_in_plan(plan: &LogicalPlan, input: &LogicalPlan) -> Result<Vec<Column>> {
    let schema = input.schema();
    Ok(free_outer_columns(plan)?
        .into_iter()
        .filter(|column| schema.has_column(column))
        .collect())
}

fn join_scalar_subquery(
    subquery: &Subquery,
    input: &LogicalPlan,
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
            decorrelate_scalar_aggregate(aggregate, input, alias_generator)?;
        let joined = decorrelated.join(input, JoinType::Left, None)?;
        let value = evaluate_top(&top, values, &input_columns)?;
        return Ok((joined, value));
    }

    let (mut tagged, outer) = tag_body(body, input, alias_generator)?;
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
    input: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(Decorrelated, Vec<(Column, Expr)>)> {
    refuse_outer_aggregates(aggregate)?;
    let outer = correlated_in_plan(&LogicalPlan::Aggregate(aggregate.clone()), input)?;
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
        let domain = Domain::new(input, outer.clone(), alias_generator)?;
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
    let matched = Column::new_unqualified(alias_generator.next("__matched"));
    let mut group_expr: Vec<Expr> =
        tagged.tags.iter().cloned().map(Expr::Column).collect();
    group_expr.push(lit(true).alias(&matched.name));
    let grouped = aggregate_below_renames(tagged.plan, group_expr, aggr_expr)?;
    let tags = tagged
        .tags
        .iter()
        .map(|tag| Column::new(tag.relation.clone(), &tag.name))
        .collect();
    let decorrelated = Decorrelated::aliased(
        Tagged {
            plan: grouped,
            tags,
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
            let value = if empty.is_null() {
                value
            } else {
                when(unmatched.clone(), lit(empty)).otherwise(value)?
            };
            Ok((name, value))
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
            _ => unreachable!("the top holds projections and aliases"),
        };
    }
    let (_, value) = values
        .into_iter()
        .next()
        .ok_or_else(|| plan_datafusion_err!("a subquery without columns"))?;
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

fn join_exists(
    subquery: &Subquery,
    input: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    // Projections do not change whether a row exists
    let Split { body, .. } = split_top(&subquery.subquery);
    let decorrelated = Decorrelated::new(body, input, alias_generator)?;
    let mark = decorrelated.mark();
    let joined = decorrelated.join(input, JoinType::LeftMark, None)?;
    Ok((joined, mark))
}

/// `needle IN (subquery)` joined to `input`; with `null_answers` false, a
/// NULL answer may read as false.
fn join_in(
    needle: &Expr,
    subquery: &Subquery,
    input: &LogicalPlan,
    null_answers: bool,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    let plan = subquery.subquery.as_ref();
    let value_column = plan.schema().columns()[0].clone();
    let decorrelated = Decorrelated::new(plan, input, alias_generator)?;
    let value = decorrelated.column(&value_column)?;
    let needle_nullable = needle.nullable(input.schema())?;
    let value_nullable = plan.schema().field(0).is_nullable();
    // The subquery's rows, and its non-NULL values, per outer value
    let counts = if null_answers && (needle_nullable || value_nullable) {
        let rows = Column::new_unqualified("rows");
        let values = Column::new_unqualified("values");
        let counted = LogicalPlanBuilder::from(decorrelated.plan.clone())
            .aggregate(
                decorrelated.tags.iter().cloned().map(Expr::Column),
                [
                    count(lit(1)).alias(&rows.name),
                    count(value.clone()).alias(&values.name),
                ],
            )?
            .build()?;
        let counts = Decorrelated::aliased(
            Tagged {
                plan: counted,
                tags: decorrelated.tags.clone(),
                unique: true,
                non_null_tags: decorrelated.non_null_tags,
            },
            decorrelated.outer.clone(),
            alias_generator,
        )?;
        let (rows, values) = (counts.column(&rows)?, counts.column(&values)?);
        Some((counts, rows, values))
    } else {
        None
    };
    let mark = decorrelated.mark();
    let found = needle.clone().eq(value);
    let joined = decorrelated.join(input, JoinType::LeftMark, Some(found))?;
    let Some((counts, rows, values)) = counts else {
        return Ok((joined, mark));
    };
    let joined = counts.join(&joined, JoinType::Left, None)?;
    // x IN (...) is true on a match; false on an empty subquery; NULL if x
    // or a value of the subquery is NULL; false otherwise
    let answer = when(mark, lit(true))
        .when(
            rows.clone().is_null().or(rows.clone().eq(lit(0i64))),
            lit(false),
        )
        .when(
            needle.clone().is_null().or(values.lt(rows)),
            lit(ScalarValue::Boolean(None)),
        )
        .otherwise(lit(false))?;
    Ok((joined, answer))
}

/// Rewrites a lateral join whose right side reads the left, and a join
/// whose condition holds a subquery.
fn rewrite_join(
    join: Join,
    alias_generator: &AliasGenerator,
) -> Result<Transformed<LogicalPlan>> {
    if let Some(plan) = rewrite_lateral(&join, alias_generator)? {
        return Ok(Transformed::yes(plan));
    }
    let Some(filter) = &join.filter else {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    };
    let schemas = [join.left.schema().as_ref(), join.right.schema().as_ref()];
    if !filter.exists(|expr| to_rewrite(expr, &schemas))? {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    }
    if join.join_type == JoinType::Inner {
        // The condition of an inner join is a filter above it
        let condition = filter.clone();
        let unfiltered = LogicalPlan::Join(Join {
            filter: None,
            ..join
        });
        let filtered = LogicalPlan::Filter(Filter::try_new(
            condition,
            Arc::new(unfiltered.recompute_schema()?),
        )?);
        return rewrite_node(filtered, alias_generator).map(Transformed::yes);
    }
    if let Some(plan) = condition_on_sides(&join, alias_generator)? {
        return Ok(Transformed::yes(plan));
    }
    not_impl_err!(
        "A subquery in the condition of a {} join that reads both of its \
         sides cannot be decorrelated; write it as a subquery in a derived \
         table joined to it",
        join.join_type
    )
}

/// An outer join whose condition holds subqueries, `x LEFT JOIN y ON x.a =
/// y.a AND EXISTS (SELECT ... WHERE z.b = x.b)`: each conjunct holding one
/// that reads the columns of one side only (or of neither) is computed on
/// that side, a column of each of its rows, and the condition reads the
/// column. A conjunct over the columns of one row of a side has the same
/// value for every pair that row is in, so the join matches the same pairs
/// and NULL-extends the same rows (a NULL conjunct matches no pair, as
/// before). The side's subqueries are then subqueries of a `SELECT` list,
/// decorrelated as those are; the columns are dropped above the join. `None`
/// where a conjunct with a subquery reads both sides.
fn condition_on_sides(
    join: &Join,
    alias_generator: &AliasGenerator,
) -> Result<Option<LogicalPlan>> {
    let Some(filter) = &join.filter else {
        return Ok(None);
    };
    let (left_schema, right_schema) = (join.left.schema(), join.right.schema());
    let schemas = [left_schema.as_ref(), right_schema.as_ref()];
    let columns = |schema: &DFSchema| -> Vec<Expr> {
        schema.columns().into_iter().map(Expr::Column).collect()
    };
    let (mut left_exprs, mut right_exprs) = (columns(left_schema), columns(right_schema));
    let mut condition = vec![];
    for conjunct in split_conjunction(filter) {
        if !conjunct.exists(|expr| to_rewrite(expr, &schemas))? {
            condition.push(conjunct.clone());
            continue;
        }
        let read = columns_read(conjunct)?;
        let reads = |schema: &DFSchema| read.iter().any(|c| schema.has_column(c));
        let side_exprs = match (reads(left_schema), reads(right_schema)) {
            (_, false) => &mut left_exprs,
            (false, true) => &mut right_exprs,
            (true, true) => return Ok(None),
        };
        let name = alias_generator.next("__join_condition");
        side_exprs.push(conjunct.clone().alias(&name));
        condition.push(Expr::Column(Column::new_unqualified(name)));
    }
    let side = |input: &Arc<LogicalPlan>, exprs: Vec<Expr>| -> Result<Arc<LogicalPlan>> {
        if exprs.len() == input.schema().fields().len() {
            return Ok(Arc::clone(input));
        }
        let computed = LogicalPlanBuilder::from(Arc::unwrap_or_clone(Arc::clone(input)))
            .project(exprs)?
            .build()?;
        Ok(Arc::new(rewrite_node(computed, alias_generator)?))
    };
    let joined = LogicalPlan::Join(Join::try_new(
        side(&join.left, left_exprs)?,
        side(&join.right, right_exprs)?,
        join.on.clone(),
        conjunction(condition),
        join.join_type,
        join.join_constraint,
        join.null_equality,
        join.null_aware,
    )?);
    let plan = LogicalPlanBuilder::from(joined)
        .project(columns(&join.schema))?
        .build()?;
    Ok(Some(plan))
}

/// The columns `expr` reads: its own, and the outer columns of the
/// subqueries in it.
fn columns_read(expr: &Expr) -> Result<BTreeSet<Column>> {
    let mut read: BTreeSet<Column> = expr.column_refs().into_iter().cloned().collect();
    expr.apply(|expr| {
        if let Expr::ScalarSubquery(subquery)
        | Expr::Exists(Exists { subquery, .. })
        | Expr::InSubquery(InSubquery { subquery, .. })
        | Expr::SetComparison(SetComparison { subquery, .. }) = expr
        {
            read.extend(free_outer_columns(&subquery.subquery)?);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(read)
}

/// `left JOIN LATERAL (subquery)`: the subquery evaluated for every outer
/// value it reads, joined to the left on them.
fn rewrite_lateral(
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
    let condition = conjunction(
        join.on
            .iter()
            .map(|(left, right)| {
                let op = match join.null_equality {
                    NullEquality::NullEqualsNothing => Operator::Eq,
                    NullEquality::NullEqualsNull => Operator::IsNotDistinctFrom,
                };
                Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(left.clone()),
                    op,
                    Box::new(right.clone()),
                ))
            })
            .chain(join.filter.clone()),
    );
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
