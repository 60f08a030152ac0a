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

//! The column a `USING` or `NATURAL` join makes of each of its keys.
//!
//! `a FULL JOIN b USING (k)` has one column `k`, and SQL defines its value:
//! `a.k` for an inner or left join, `b.k` for a right join, and
//! `COALESCE(a.k, b.k)` for a full join, the key of whichever side has the
//! row. `a.k` and `b.k` remain each side's own key, NULL where that side
//! has no row. DataFusion keeps both sides' keys in the join's schema and
//! read an unqualified `k` as the left one, which is NULL on the rows only
//! the right side has, in every clause and in `SELECT *` (whose `k` also
//! took the position, and the value, of whichever side's name sorts first).
//!
//! Here the SQL planner records, for the `SELECT` being planned, each key a
//! `USING` or `NATURAL` join merges: its name, the columns of the two sides
//! it merges, and its value. An unqualified name that matches exactly those
//! columns reads the value ([`crate::name_scopes`]), from that query level
//! or, as an outer reference, from a subquery inside it; `SELECT *` shows it
//! once, at its left side's place; and a later join `USING` the same name
//! joins on it, so that `a FULL JOIN b USING (k) FULL JOIN c USING (k)`
//! matches `c.k` with `COALESCE(a.k, b.k)`. Each `SELECT` has its own
//! record, so the `USING` of a subquery or derived table is not read by the
//! query around it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use datafusion_common::{Column, JoinType, Result, internal_err, plan_err};
use datafusion_expr::select_expr::SelectExpr;
use datafusion_expr::utils::expand_wildcard;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, when};

use crate::duplicate_output_names::OutputKeys;
use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

/// The merged columns of the `SELECT`s being planned, innermost last.
#[derive(Debug, Clone, Default)]
pub struct MergedColumns(Arc<Mutex<Vec<Vec<MergedColumn>>>>);

/// A key a `USING` or `NATURAL` join merges.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MergedColumn {
    name: String,
    /// The keys of the join's inputs it merges, the left side's first (a
    /// join of joins merges more than two).
    sides: Vec<Column>,
    /// What the name reads, as SQL defines it for the join type.
    value: Expr,
}

/// The merged columns of one `SELECT`, recorded until this is dropped.
pub(crate) struct SelectScope(MergedColumns);

impl Drop for SelectScope {
    fn drop(&mut self) {
        self.0.with(|scopes| scopes.pop());
    }
}

impl MergedColumns {
    fn with<T>(&self, f: impl FnOnce(&mut Vec<Vec<MergedColumn>>) -> T) -> T {
        // Every change is a single push or replacement: a panic elsewhere
        // while the lock is held leaves no half-made state
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Starts the record of a `SELECT`'s merged columns.
    pub(crate) fn open_select(&self) -> SelectScope {
        self.with(|scopes| scopes.push(vec![]));
        SelectScope(self.clone())
    }

    /// The value of the merged column `name` whose sides are exactly
    /// `columns`, the columns of one query level that have that name, in the
    /// innermost `SELECT` that has one.
    pub(crate) fn value_of(&self, name: &str, columns: &[Column]) -> Option<Expr> {
        let columns: HashSet<&Column> = columns.iter().collect();
        self.with(|scopes| {
            scopes.iter().rev().flatten().find_map(|merged| {
                (merged.name == name
                    && merged.sides.len() == columns.len()
                    && merged.sides.iter().all(|side| columns.contains(side)))
                .then(|| merged.value.clone())
            })
        })
    }

    /// The merged columns of the innermost `SELECT`.
    fn of_select(&self) -> Vec<MergedColumn> {
        self.with(|scopes| scopes.last().cloned().unwrap_or_default())
    }

    /// Records `merged` for the innermost `SELECT`, in place of the merged
    /// columns whose sides it merges again. Outside a `SELECT` (the `FROM`
    /// of an `UPDATE`) there is no record, and the name stays ambiguous.
    fn record(&self, merged: MergedColumn) {
        self.with(|scopes| {
            if let Some(scope) = scopes.last_mut() {
                scope.retain(|old| {
                    old.name != merged.name
                        || !old.sides.iter().all(|side| merged.sides.contains(side))
                });
                scope.push(merged);
            }
        })
    }
}

/// A key of one input of a `USING` join: the column, or the merged column
/// of an earlier `USING` join inside that input.
struct Side {
    value: Expr,
    sides: Vec<Column>,
}

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `left <join_type> JOIN right USING (names)`, or a `NATURAL` join on
    /// the `names` the two sides share.
    pub(crate) fn plan_using_join(
        &self,
        left: LogicalPlan,
        right: LogicalPlan,
        join_type: JoinType,
        names: &[String],
        planner_context: &mut PlannerContext,
    ) -> Result<LogicalPlan> {
        let merged_columns = planner_context.merged_columns().clone();
        let keys = names.iter().map(Column::from_name).collect::<Vec<_>>();
        let in_both = |name: &String| {
            left.schema().has_column_with_unqualified_name(name)
                && right.schema().has_column_with_unqualified_name(name)
        };
        if !names.iter().all(in_both) {
            // Upstream's join reports the missing key
            return LogicalPlanBuilder::from(left)
                .join_using(right, join_type, keys)?
                .build();
        }
        let mut merged = Vec::with_capacity(names.len());
        let mut joined_as_upstream_does = true;
        for name in names {
            let keys = planner_context.output_keys();
            let left_side = side(&left, name, &merged_columns, keys)?;
            let right_side = side(&right, name, &merged_columns, keys)?;
            joined_as_upstream_does &=
                is_key_upstream_picks(&left, name, &left_side.value)?
                    && is_key_upstream_picks(&right, name, &right_side.value)?;
            merged.push((name, left_side, right_side));
        }

        let plan = if joined_as_upstream_does {
            LogicalPlanBuilder::from(left)
                .join_using(right, join_type, keys)?
                .build()?
        } else {
            // A key merged by an earlier right or full join is not one
            // side's column: join on its value
            let on = merged
                .iter()
                .map(|(_, left_side, right_side)| {
                    left_side.value.clone().eq(right_side.value.clone())
                })
                .collect::<Vec<_>>();
            LogicalPlanBuilder::from(left)
                .join_on(right, join_type, on)?
                .build()?
        };

        for (name, left_side, right_side) in merged {
            let value = match join_type {
                JoinType::Inner | JoinType::Left => left_side.value,
                JoinType::Right => right_side.value,
                JoinType::Full => {
                    when(left_side.value.clone().is_not_null(), left_side.value)
                        .otherwise(right_side.value)?
                }
                // A semi or anti join has one side's columns: nothing merges
                _ => continue,
            };
            let sides = left_side
                .sides
                .into_iter()
                .chain(right_side.sides)
                .collect();
            merged_columns.record(MergedColumn {
                name: name.clone(),
                sides,
                value,
            });
        }
        Ok(plan)
    }

    /// The names a `NATURAL` join of `left` and `right` joins on: those both
    /// sides have, each once, in the order `SELECT *` shows `left`'s columns
    /// (the keys a `USING` join inside it merged first), as SQL orders the
    /// keys of the join's own output.
    pub(crate) fn natural_join_names(
        &self,
        left: &LogicalPlan,
        right: &LogicalPlan,
        planner_context: &PlannerContext,
    ) -> Vec<String> {
        let merged = planner_context.merged_columns().of_select();
        let in_left: Vec<&MergedColumn> = merged
            .iter()
            .filter(|m| m.sides.iter().all(|side| left.schema().has_column(side)))
            .collect();
        let left_names = star_order(left, &in_left)
            .into_iter()
            .map(|entry| match entry {
                StarColumn::Column(column) => column.name,
                StarColumn::Merged(merged) => merged.name.clone(),
            })
            // Columns no join accounts for (none, in the plans the SQL
            // planner makes) after the others
            .chain(left.schema().fields().iter().map(|f| f.name().clone()));
        let mut names: Vec<String> = vec![];
        for name in left_names {
            if right.schema().has_column_with_unqualified_name(&name)
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
        names
    }

    /// The columns of `join`, a parenthesized join that has an alias: those
    /// `SELECT *` over it shows, each merged key once, as its value.
    ///
    /// The alias hides the tables inside the join, so nothing outside can
    /// tell its sides' keys apart: `(a FULL JOIN b USING (k)) j` has one
    /// column `j.k`, the key of whichever side has the row, and `SELECT *`
    /// over it shows `k` once.
    pub(crate) fn aliased_join_columns(
        &self,
        join: LogicalPlan,
        planner_context: &PlannerContext,
    ) -> Result<LogicalPlan> {
        let merged = planner_context.merged_columns().of_select();
        let merges_here = merged
            .iter()
            .any(|m| m.sides.iter().all(|side| join.schema().has_column(side)));
        if !merges_here {
            return Ok(join);
        }
        let columns = expand_wildcard(join.schema(), &join, None)?;
        let columns = with_merged_columns(&columns, &join, &merged);
        LogicalPlanBuilder::from(join).project(columns)?.build()
    }

    /// The select list with each `*` over merged columns written out: each
    /// merged column once, at its left side's place, as its value.
    pub(crate) fn merged_columns_in_wildcards(
        &self,
        select_exprs: Vec<SelectExpr>,
        plan: &LogicalPlan,
        planner_context: &PlannerContext,
    ) -> Result<Vec<SelectExpr>> {
        let merged = planner_context.merged_columns().of_select();
        if merged.is_empty() {
            return Ok(select_exprs);
        }
        let mut written = Vec::with_capacity(select_exprs.len());
        for select_expr in select_exprs {
            match select_expr {
                // `REPLACE` and `RENAME` name the columns upstream's
                // expansion gives, which the builder applies
                SelectExpr::Wildcard(options)
                    if options.replace.is_none() && options.rename.is_none() =>
                {
                    let columns = expand_wildcard(plan.schema(), plan, Some(&options))?;
                    written.extend(
                        with_merged_columns(&columns, plan, &merged)
                            .into_iter()
                            .map(SelectExpr::Expression),
                    );
                }
                other => written.push(other),
            }
        }
        Ok(written)
    }
}

/// The key `name` of `input`: its merged column, if an earlier `USING`
/// join inside it merged one, or its one column of that name. An error
/// where two columns of `input` have that name, one of them under a key
/// ([`OutputKeys::is_repeated`]).
fn side(
    input: &LogicalPlan,
    name: &str,
    merged_columns: &MergedColumns,
    keys: &OutputKeys,
) -> Result<Side> {
    let columns = input.schema().columns_with_unqualified_name(name);
    match columns.as_slice() {
        [] => internal_err!("USING column {name} is not in the join's input"),
        [_] if keys.is_repeated(input.schema(), None, name) => plan_err!(
            "USING column {name} is ambiguous: the join's input has two columns of that name"
        ),
        [column] => Ok(Side {
            value: Expr::Column(column.clone()),
            sides: vec![column.clone()],
        }),
        _ => match merged_columns.value_of(name, &columns) {
            Some(value) => Ok(Side {
                value,
                sides: columns,
            }),
            None => plan_err!(
                "USING column {name} is ambiguous: the join's input has {}",
                columns
                    .iter()
                    .map(|c| c.flat_name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

/// Whether `value`, the key `name` of `input`, is the column upstream's
/// `join_using` joins on: then the join is planned as upstream plans it.
fn is_key_upstream_picks(input: &LogicalPlan, name: &str, value: &Expr) -> Result<bool> {
    let Expr::Column(column) = value else {
        return Ok(false);
    };
    let picked = Column::from_name(name).normalize_with_schemas_and_ambiguity_check(
        &[&[input.schema()]],
        &input.using_columns()?,
    );
    Ok(picked.is_ok_and(|picked| &picked == column))
}

/// `columns`, a `*` expanded, with each merged column once, as its value,
/// in the order SQL gives a join's columns: the keys it merges first, then
/// the other columns of its left input, then those of its right input.
fn with_merged_columns(
    columns: &[Expr],
    plan: &LogicalPlan,
    merged: &[MergedColumn],
) -> Vec<Expr> {
    let schema = plan.schema();
    // A merged column of this SELECT whose sides are all in the plan: a
    // join of its FROM clause, not one inside a derived table
    let in_plan: Vec<&MergedColumn> = merged
        .iter()
        .filter(|m| m.sides.iter().all(|side| schema.has_column(side)))
        .collect();
    // What the expansion keeps (`EXCLUDE` and `EXCEPT` leave some out);
    // of a merged column's sides it keeps one, not always the first
    let expanded: HashSet<Column> = columns
        .iter()
        .filter_map(|expr| match expr {
            Expr::Column(column) => Some(column.clone()),
            _ => None,
        })
        .collect();
    let mut order = star_order(plan, &in_plan);
    // Columns no join accounts for (none, in the plans the SQL planner
    // makes) keep their place after the others
    for column in schema.columns() {
        if !order.iter().any(|entry| entry.is_column(&column))
            && !in_plan.iter().any(|m| m.sides.contains(&column))
        {
            order.push(StarColumn::Column(column));
        }
    }
    order
        .into_iter()
        .filter_map(|entry| match entry {
            StarColumn::Column(column) => {
                expanded.contains(&column).then_some(Expr::Column(column))
            }
            StarColumn::Merged(merged) => {
                if !merged.sides.iter().any(|side| expanded.contains(side)) {
                    return None;
                }
                Some(match &merged.value {
                    Expr::Column(value) if value.name == merged.name => {
                        merged.value.clone()
                    }
                    value => value.clone().alias(&merged.name),
                })
            }
        })
        .collect()
}

/// A column of `SELECT *` over joins: a column of an input, or a key a
/// `USING` join merged.
enum StarColumn<'a> {
    Column(Column),
    Merged(&'a MergedColumn),
}

impl StarColumn<'_> {
    fn is_column(&self, column: &Column) -> bool {
        matches!(self, StarColumn::Column(c) if c == column)
    }

    fn stands_for(&self, merged: &MergedColumn) -> bool {
        match self {
            StarColumn::Column(column) => merged.sides.contains(column),
            StarColumn::Merged(other) => other.name == merged.name,
        }
    }
}

/// The columns of `plan`, the `FROM` clause of a `SELECT`, in the order SQL
/// shows them: at each join, the keys it merges (those of `merged` with
/// sides in both inputs) in the order it names them, then its left input's
/// columns, then its right input's.
fn star_order<'a>(
    plan: &LogicalPlan,
    merged: &[&'a MergedColumn],
) -> Vec<StarColumn<'a>> {
    match plan {
        LogicalPlan::Join(join) => {
            let (left, right) = (join.left.schema(), join.right.schema());
            let here: Vec<&'a MergedColumn> = merged
                .iter()
                .filter(|m| {
                    m.sides.iter().any(|side| left.has_column(side))
                        && m.sides.iter().any(|side| right.has_column(side))
                })
                .copied()
                .collect();
            let inputs = star_order(&join.left, merged)
                .into_iter()
                .chain(star_order(&join.right, merged));
            here.iter()
                .map(|m| StarColumn::Merged(m))
                .chain(inputs.filter(|entry| !here.iter().any(|m| entry.stands_for(m))))
                .collect()
        }
        LogicalPlan::Filter(filter) => star_order(&filter.input, merged),
        other => other
            .schema()
            .columns()
            .into_iter()
            .map(StarColumn::Column)
            .collect(),
    }
}
