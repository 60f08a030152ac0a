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

//! Aggregates in a subquery that read only the columns of an enclosing
//! query: `SELECT (SELECT sum(o.x)) FROM o`.
//!
//! SQL computes an aggregate in the query whose columns its arguments read
//! (the innermost one, when they read several): `sum(o.x)` above is an
//! aggregate of the outer query, which therefore returns one row, and for
//! the subquery it is a value of the outer row, like an outer column.
//! PostgreSQL and DuckDB plan it so. The subquery is planned while the
//! enclosing `SELECT` list is, before that query knows its aggregates, so
//! the work is split in three steps:
//!
//! 1. [`SqlToRel::aggregate_or_outer_reference`]: a call whose columns are
//!    all outer is planned as an outer reference to a column of the `SELECT`
//!    it belongs to, and the aggregate (its columns of that query made
//!    plain) is recorded for that `SELECT`. The column's name is the
//!    aggregate's with a number of its own (`sum(o.x) #1`), so that no
//!    column of a query in between can be taken for it.
//! 2. [`SqlToRel::add_outer_aggregates`]: the `SELECT` adds the aggregates
//!    recorded for it that its `SELECT` list, `HAVING`, `QUALIFY`, `ORDER BY`
//!    or `DISTINCT ON` read, through their subqueries, to its own
//!    aggregation, under the column's name; read from its `FROM`, `WHERE` or
//!    `GROUP BY`, where SQL allows no aggregate, they are an error, as
//!    `WHERE sum(x) > 1` is.
//! 3. [`SqlToRel::refuse_misplaced_outer_aggregates`]: a recorded aggregate
//!    that the statement still reads but no `SELECT` computes is an error.
//!
//! The record lives in the [`PlannerContext`] and is shared by all its
//! clones (every query plans in a clone of its parent's). It knows the
//! `SELECT`s being planned: a `SELECT` planned while the stack of outer
//! schemas holds `n` of them pushes its `FROM` schema at index `n` for its
//! subqueries, so an aggregate whose columns resolve at index `n` belongs to
//! the innermost `SELECT` being planned at that level. A `LATERAL` item
//! shares that index with the `FROM` items to its left
//! ([`OuterAggregates::enter_lateral`]): an aggregate of those is one of
//! the `FROM` clause it sits in, an error.
//!
//! Where no `SELECT` can take the aggregate (an `UPDATE`'s `SET` plans no
//! `SELECT` around its subquery), it stays in the subquery, and the
//! optimizer refuses it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, DFSchema, DFSchemaRef, Result, plan_err};
use datafusion_expr::expr::{AggregateFunction, Alias};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan};

use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

/// What one statement's planning knows of aggregates of outer columns,
/// shared by every clone of its [`PlannerContext`].
#[derive(Debug, Clone, Default)]
pub struct OuterAggregates(Arc<Mutex<State>>);

#[derive(Debug, Default)]
struct State {
    /// The number the next `SELECT` or recorded aggregate takes.
    next_number: usize,
    /// The `SELECT`s being planned, outermost first.
    selects: Vec<SelectLevel>,
    /// The `LATERAL` items being planned: the index of the outer schema
    /// they share with the `FROM` items to their left, and those items.
    laterals: Vec<(usize, DFSchemaRef)>,
    recorded: Vec<OuterAggregate>,
}

#[derive(Debug)]
struct SelectLevel {
    number: usize,
    /// The index its subqueries push its `FROM` schema at.
    level: usize,
}

#[derive(Debug)]
struct OuterAggregate {
    /// The number of the `SELECT` that computes it.
    select: usize,
    /// The aggregate, reading that query's columns as plain columns.
    aggregate: Expr,
    /// The aggregate as the subquery wrote it, reading outer references.
    written: Expr,
    /// The name of the column the subquery reads it as.
    name: String,
    /// Whether its `SELECT` computes it.
    placed: bool,
}

impl OuterAggregates {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        // Every change is a single push, removal or flag: a panic elsewhere
        // while the lock is held leaves no half-made state
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Marks a `SELECT` as being planned, its subqueries pushing its `FROM`
    /// schema at index `level`, until the returned value is dropped.
    pub(crate) fn open_select(&self, level: usize) -> SelectBeingPlanned {
        let number = self.with(|state| {
            let number = state.next_number;
            state.next_number += 1;
            state.selects.push(SelectLevel { number, level });
            number
        });
        SelectBeingPlanned {
            aggregates: self.clone(),
            number,
        }
    }

    /// Marks a `LATERAL` item as being planned, with `left`, the `FROM`
    /// items to its left, in the outer schema at `index`, until the
    /// returned value is dropped.
    pub(crate) fn enter_lateral(
        &self,
        index: usize,
        left: DFSchemaRef,
    ) -> LateralBeingPlanned {
        self.with(|state| state.laterals.push((index, left)));
        LateralBeingPlanned {
            aggregates: self.clone(),
        }
    }

    /// The names and aggregates recorded for the `SELECT` `number`.
    fn of_select(&self, number: usize) -> Vec<(String, Expr)> {
        self.with(|state| {
            state
                .recorded
                .iter()
                .filter(|r| r.select == number)
                .map(|r| (r.name.clone(), r.aggregate.clone()))
                .collect()
        })
    }
}

/// A `SELECT` being planned ([`OuterAggregates::open_select`]).
pub(crate) struct SelectBeingPlanned {
    aggregates: OuterAggregates,
    number: usize,
}

impl Drop for SelectBeingPlanned {
    fn drop(&mut self) {
        let number = self.number;
        self.aggregates
            .with(|state| state.selects.retain(|s| s.number != number));
    }
}

/// A `LATERAL` item being planned ([`OuterAggregates::enter_lateral`]).
pub(crate) struct LateralBeingPlanned {
    aggregates: OuterAggregates,
}

impl Drop for LateralBeingPlanned {
    fn drop(&mut self) {
        self.aggregates.with(|state| {
            state.laterals.pop();
        });
    }
}

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `aggregate`, planned in a query whose input is `schema`, or, where
    /// its arguments read only columns of enclosing queries, an outer
    /// reference to it as a column of the innermost of them (step 1 of the
    /// [module docs](self)).
    pub(crate) fn aggregate_or_outer_reference(
        &self,
        aggregate: AggregateFunction,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let aggregate = Expr::AggregateFunction(aggregate);
        let recorded = planner_context.outer_aggregates().clone();
        refuse_nested(&aggregate, &recorded)?;
        let outer_schemas = planner_context.outer_queries_schemas();
        let Some(level) = outer_level(&aggregate, schema, outer_schemas)? else {
            return Ok(aggregate);
        };
        let level_schema = Arc::clone(&outer_schemas[level]);
        let at_level = aggregate
            .clone()
            .transform(|expr| match expr {
                Expr::OuterReferenceColumn(_, column)
                    if level_schema.has_column(&column) =>
                {
                    Ok(Transformed::yes(Expr::Column(column)))
                }
                expr => Ok(Transformed::no(expr)),
            })?
            .data;
        let beside_lateral = recorded.with(|state| {
            state.laterals.iter().any(|(index, left)| {
                *index == level && reads_any_column_of(&at_level, left)
            })
        });
        if beside_lateral {
            return misplaced(&at_level);
        }
        let Some(select) = recorded.with(|state| {
            state
                .selects
                .iter()
                .rev()
                .find(|s| s.level == level)
                .map(|s| s.number)
        }) else {
            return Ok(aggregate);
        };
        let (_, field) = at_level.to_field(&level_schema)?;
        let name = recorded.with(|state| {
            if let Some(known) = state
                .recorded
                .iter()
                .find(|r| r.select == select && r.aggregate == at_level)
            {
                return known.name.clone();
            }
            let name = format!("{} #{}", at_level.schema_name(), state.next_number);
            state.next_number += 1;
            state.recorded.push(OuterAggregate {
                select,
                aggregate: at_level,
                written: aggregate,
                name: name.clone(),
                placed: false,
            });
            name
        });
        let field = Arc::new(field.as_ref().clone().with_name(name.clone()));
        Ok(Expr::OuterReferenceColumn(
            field,
            Column::new_unqualified(name),
        ))
    }

    /// [`Self::aggregate_or_outer_reference`] of an aggregate an
    /// [`ExprPlanner`] planned (`count(*)` is one, aliased to its name as
    /// written); any other expression as it is.
    ///
    /// [`ExprPlanner`]: datafusion_expr::planner::ExprPlanner
    pub(crate) fn planned_aggregate_or_outer_reference(
        &self,
        planned: Expr,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        match planned {
            Expr::AggregateFunction(aggregate) => {
                self.aggregate_or_outer_reference(aggregate, schema, planner_context)
            }
            Expr::Alias(Alias {
                expr,
                relation,
                name,
                metadata,
            }) if matches!(*expr, Expr::AggregateFunction(_)) => {
                let expr = self.planned_aggregate_or_outer_reference(
                    *expr,
                    schema,
                    planner_context,
                )?;
                Ok(Expr::Alias(Alias {
                    expr: Box::new(expr),
                    relation,
                    name,
                    metadata,
                }))
            }
            expr => Ok(expr),
        }
    }

    /// Adds to `aggr_exprs`, the aggregates of the `SELECT` `select`, the
    /// aggregates recorded for it that the subqueries in `clauses` read;
    /// fails where `input` (its `FROM` and `WHERE`) or `group_by` read one
    /// (step 2 of the [module docs](self)).
    pub(crate) fn add_outer_aggregates<'a>(
        &self,
        select: &SelectBeingPlanned,
        clauses: impl IntoIterator<Item = &'a Expr>,
        input: &LogicalPlan,
        group_by: &[Expr],
        aggr_exprs: &mut Vec<Expr>,
    ) -> Result<()> {
        let recorded = select.aggregates.of_select(select.number);
        if recorded.is_empty() {
            return Ok(());
        }
        let first_read = |read: &HashSet<String>| {
            recorded
                .iter()
                .find(|(name, _)| read.contains(name))
                .map(|(_, aggregate)| aggregate.to_string())
        };
        // `sum((SELECT sum(x)))`: an aggregate of this query in a subquery
        // in an argument of another
        for outer in aggr_exprs.iter() {
            let mut read = HashSet::new();
            outer_names_in_subqueries(outer, &mut read)?;
            if let (Some(inner), Expr::AggregateFunction(outer)) =
                (first_read(&read), outer)
            {
                return nested(outer, &inner);
            }
        }
        let mut forbidden = HashSet::new();
        collect_outer_names(input, &mut forbidden)?;
        for expr in group_by {
            outer_names_in_subqueries(expr, &mut forbidden)?;
        }
        if let Some(aggregate) = first_read(&forbidden) {
            return misplaced(&aggregate);
        }
        let mut read = HashSet::new();
        for expr in clauses {
            outer_names_in_subqueries(expr, &mut read)?;
        }
        for (name, aggregate) in &recorded {
            if read.contains(name) {
                aggr_exprs.push(aggregate.clone().alias(name));
            }
        }
        select.aggregates.with(|state| {
            for entry in state.recorded.iter_mut() {
                if entry.select == select.number && read.contains(&entry.name) {
                    entry.placed = true;
                }
            }
        });
        Ok(())
    }

    /// Fails when `plan`, a whole statement, reads an aggregate of outer
    /// columns that no `SELECT` computes (step 3 of the
    /// [module docs](self)).
    pub(crate) fn refuse_misplaced_outer_aggregates(
        &self,
        plan: &LogicalPlan,
        planner_context: &PlannerContext,
    ) -> Result<()> {
        let unplaced: Vec<(String, String)> =
            planner_context.outer_aggregates().with(|state| {
                state
                    .recorded
                    .iter()
                    .filter(|r| !r.placed)
                    .map(|r| (r.name.clone(), r.aggregate.to_string()))
                    .collect()
            });
        if unplaced.is_empty() {
            return Ok(());
        }
        let mut read = HashSet::new();
        collect_outer_names(plan, &mut read)?;
        match unplaced.iter().find(|(name, _)| read.contains(name)) {
            Some((_, aggregate)) => misplaced(aggregate),
            None => Ok(()),
        }
    }

    /// `plan` with each outer reference to an aggregate a `SELECT` computes
    /// replaced by the aggregate as written, for the labels, which show a
    /// subquery as its SQL; `None` when no subquery reads one.
    pub(crate) fn with_outer_aggregates_written(
        &self,
        plan: &LogicalPlan,
        planner_context: &PlannerContext,
    ) -> Result<Option<LogicalPlan>> {
        let placed: Vec<(String, Expr)> =
            planner_context.outer_aggregates().with(|state| {
                state
                    .recorded
                    .iter()
                    .filter(|r| r.placed)
                    .map(|r| (r.name.clone(), r.written.clone()))
                    .collect()
            });
        if placed.is_empty() {
            return Ok(None);
        }
        let written = plan.clone().transform_down_with_subqueries(|node| {
            node.map_expressions(|expr| {
                expr.transform(|expr| match &expr {
                    Expr::OuterReferenceColumn(_, column)
                        if column.relation.is_none() =>
                    {
                        match placed.iter().find(|(name, _)| name == &column.name) {
                            Some((_, aggregate)) => {
                                Ok(Transformed::yes(aggregate.clone()))
                            }
                            None => Ok(Transformed::no(expr)),
                        }
                    }
                    // The planner's name of the aggregate, which an item that
                    // is just the aggregate keeps as its alias, is not SQL
                    Expr::Alias(alias)
                        if placed.iter().any(|(name, aggregate)| {
                            *name == alias.name && *aggregate == *alias.expr
                        }) =>
                    {
                        Ok(Transformed::yes(alias.expr.as_ref().clone()))
                    }
                    _ => Ok(Transformed::no(expr)),
                })
            })
        })?;
        Ok(written.transformed.then_some(written.data))
    }
}

/// Fails when `aggregate` reads an aggregate of an enclosing query, as
/// `max(sum(o.x))` does in a subquery of `o`: SQL nests no aggregate call.
fn refuse_nested(aggregate: &Expr, recorded: &OuterAggregates) -> Result<()> {
    let mut read = HashSet::new();
    insert_outer_names(aggregate, &mut read)?;
    let inner = recorded.with(|state| {
        state
            .recorded
            .iter()
            .find(|r| read.contains(&r.name))
            .map(|r| r.aggregate.to_string())
    });
    match (inner, aggregate) {
        (Some(inner), Expr::AggregateFunction(outer)) => nested(outer, &inner),
        _ => Ok(()),
    }
}

fn nested(outer: &AggregateFunction, inner: &str) -> Result<()> {
    plan_err!(
        "Aggregate function calls cannot be nested: {} reads {inner}",
        outer.func.name()
    )
}

fn misplaced<T>(aggregate: &impl std::fmt::Display) -> Result<T> {
    plan_err!(
        "The aggregate {aggregate} in a subquery reads only columns of an \
         enclosing query, so SQL computes it in that query, where it may \
         appear in the SELECT list, HAVING or ORDER BY but not in FROM, WHERE, \
         JOIN ON, GROUP BY or other clauses"
    )
}

/// The index, in `outer_schemas`, of the query whose aggregate `aggregate`
/// is, planned over `schema`: the innermost that one of its columns belongs
/// to, when every column it reads, also in the subqueries of its
/// arguments, is an outer one. `None` when it reads a column of its own
/// query or none at all.
fn outer_level(
    aggregate: &Expr,
    schema: &DFSchema,
    outer_schemas: &[DFSchemaRef],
) -> Result<Option<usize>> {
    let mut level: Option<usize> = None;
    let mut own_query = false;
    // The innermost level of `column` and `level`, `None` for a column of
    // no enclosing query
    let outer_column = |column: &Column, level: Option<usize>| {
        let index = outer_schemas.iter().rposition(|s| s.has_column(column))?;
        Some(level.map_or(index, |l| l.max(index)))
    };
    aggregate.apply(|expr| {
        match expr {
            Expr::Column(_) => own_query = true,
            // Not a column of an enclosing query: an outer aggregate, which
            // `refuse_nested` reports
            Expr::OuterReferenceColumn(_, column) => match outer_column(column, level) {
                Some(innermost) => level = Some(innermost),
                None => own_query = true,
            },
            expr => {
                if let Some(subquery) = subquery_plan(expr) {
                    // A column the subquery reads from outside is one of
                    // this query's, of an enclosing one's, or of a query
                    // inside the subquery itself
                    let mut columns = vec![];
                    subquery.apply_with_subqueries(|node| {
                        node.apply_expressions(|expr| {
                            expr.apply(|expr| {
                                if let Expr::OuterReferenceColumn(_, column) = expr {
                                    columns.push(column.clone());
                                }
                                Ok(TreeNodeRecursion::Continue)
                            })
                        })
                    })?;
                    for column in &columns {
                        if schema.has_column(column) {
                            own_query = true;
                        } else if let Some(innermost) = outer_column(column, level) {
                            level = Some(innermost);
                        }
                    }
                }
            }
        }
        Ok(if own_query {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(if own_query { None } else { level })
}

fn reads_any_column_of(expr: &Expr, schema: &DFSchema) -> bool {
    expr.exists(|expr| {
        Ok(matches!(expr, Expr::Column(column) if schema.has_column(column)))
    })
    .unwrap_or(false)
}

/// Adds to `names` the name of each unqualified outer reference read by the
/// subqueries in `expr`, at any depth.
fn outer_names_in_subqueries(expr: &Expr, names: &mut HashSet<String>) -> Result<()> {
    expr.apply(|expr| {
        if let Some(subquery) = subquery_plan(expr) {
            collect_outer_names(subquery, names)?;
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(())
}

fn subquery_plan(expr: &Expr) -> Option<&LogicalPlan> {
    match expr {
        Expr::ScalarSubquery(subquery) => Some(&subquery.subquery),
        Expr::Exists(exists) => Some(&exists.subquery.subquery),
        Expr::InSubquery(in_subquery) => Some(&in_subquery.subquery.subquery),
        Expr::SetComparison(comparison) => Some(&comparison.subquery.subquery),
        _ => None,
    }
}

/// Adds to `names` the name of each unqualified outer reference in `plan`
/// and its subqueries.
fn collect_outer_names(plan: &LogicalPlan, names: &mut HashSet<String>) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            insert_outer_names(expr, names)?;
            Ok(TreeNodeRecursion::Continue)
        })
    })?;
    Ok(())
}

/// Adds to `names` the name of each unqualified outer reference in `expr`
/// (not in its subqueries): the names of outer aggregates.
fn insert_outer_names(expr: &Expr, names: &mut HashSet<String>) -> Result<()> {
    expr.apply(|expr| {
        if let Expr::OuterReferenceColumn(_, column) = expr
            && column.relation.is_none()
        {
            names.insert(column.name.clone());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(())
}
