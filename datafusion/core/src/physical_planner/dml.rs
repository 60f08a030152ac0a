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

//! How a `DELETE` or an `UPDATE` reaches its table.
//!
//! A [`TableProvider`] takes a `DELETE` as filters over its own columns
//! ([`TableProvider::delete_from`]) and an `UPDATE` as those filters and
//! assignments ([`TableProvider::update`]); an empty filter list means the
//! statement has no `WHERE`. The planner can read the filters off the plan
//! only while it is a filter over the table. Once the optimizer has made it
//! anything else (a subquery decorrelated into a join, a `WHERE false`
//! folded into an empty relation, a `LIMIT`, common subexpressions moved
//! below the filter), reading the `Filter` nodes finds some or none of the
//! predicate, and handing that over changed rows the statement does not
//! name (every row, where none was found). So the statement reaches the
//! table one of two ways:
//!
//! - **As written**: the plan is a filter over the table, and its filters
//!   and assignments go to the provider as they are.
//! - **By value**: any other plan runs, and yields the rows to change (and,
//!   for an `UPDATE`, their new values; see the optimizer rule
//!   `update_old_values`). The provider gets a filter that holds for
//!   exactly the rows whose values are among them, and assignments that
//!   look up their new values ([`target_rows`]). The rows are found before
//!   any changes, so a subquery reading the table itself sees it as the
//!   statement found it.
//!
//! Rows with equal values are told apart by nothing, but a deterministic
//! predicate holds for all of them or for none, so handing them over by
//! value changes exactly the rows it names. A `LIMIT` or a volatile
//! function may choose among equal rows: there, the rows found are checked
//! against the table, and the statement fails if it would change more rows
//! of a value than it chose.
//!
//! Either way the provider is called when the plan runs ([`DmlExec`]), not
//! while it is planned: `EXPLAIN DELETE` changes nothing.

mod exec;
mod target_rows;

use std::sync::Arc;

use arrow::compute::can_cast_types;
use arrow::datatypes::SchemaRef;
use datafusion_catalog::TableProvider;
use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{
    Result, TableReference, internal_err, not_impl_datafusion_err, not_impl_err, plan_err,
};
use datafusion_expr::logical_plan::{Filter, Projection, SubqueryAlias, TableScan};
use datafusion_expr::{Expr, JoinType, LogicalPlan, WriteOp, cast};
use datafusion_physical_plan::ExecutionPlan;
use datafusion_session::Session;

use crate::execution::context::SessionState;

pub(crate) use exec::DmlExec;

use super::{extract_dml_filters, extract_update_assignments};

/// The rows a `DELETE` or an `UPDATE` changes, as its [`DmlExec`] hands
/// them to the provider.
#[derive(Debug, Clone)]
pub(crate) enum Changes {
    /// Filters and assignments over the table's columns, as written.
    AsWritten {
        filters: Vec<Expr>,
        assignments: Vec<(String, Expr)>,
    },
    /// The rows `rows` yields, handed over by value.
    ByValue {
        rows: Arc<dyn ExecutionPlan>,
        layout: Layout,
        /// Whether the plan may choose among rows of equal values (a
        /// `LIMIT`, a volatile function): the rows found are then checked
        /// against the table.
        may_choose: bool,
        /// Whether the plan may yield a row of the table more than once (an
        /// `UPDATE ... FROM` whose `FROM` has two rows that match it): the
        /// rows found are then counted against the table.
        may_repeat: bool,
    },
}

/// Where the rows of a [`Changes::ByValue`] plan hold what the provider
/// needs.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The position of each of the table's columns' old value.
    pub(crate) old: Vec<usize>,
    /// Each column the statement assigns, and the position of its new
    /// value.
    pub(crate) new: Vec<(String, usize)>,
}

/// The plan of `op`, a `DELETE` or an `UPDATE` of `table_name` whose
/// (optimized) input plan is `input`, and `input_exec` its physical plan.
pub(super) fn plan_dml(
    op: &WriteOp,
    table_name: &TableReference,
    provider: Arc<dyn TableProvider>,
    input: &Arc<LogicalPlan>,
    input_exec: Arc<dyn ExecutionPlan>,
    session_state: &dyn Session,
) -> Result<Arc<dyn ExecutionPlan>> {
    let table = provider.schema();
    let changes = match op {
        WriteOp::Delete => delete_changes(table_name, &table, input, input_exec)?,
        WriteOp::Update => update_changes(table_name, &table, input, input_exec)?,
        other => return internal_err!("{other} is not a DELETE or an UPDATE"),
    };
    let session = session_state
        .as_any()
        .downcast_ref::<SessionState>()
        .ok_or_else(|| {
            not_impl_datafusion_err!(
                "{op} outside a SessionState on table '{table_name}'"
            )
        })?;
    Ok(Arc::new(DmlExec::new(
        op.clone(),
        table_name.clone(),
        provider,
        Arc::new(session.clone()),
        changes,
    )?))
}

fn delete_changes(
    table_name: &TableReference,
    table: &SchemaRef,
    input: &Arc<LogicalPlan>,
    input_exec: Arc<dyn ExecutionPlan>,
) -> Result<Changes> {
    if filters_the_table(input, table_name)? {
        return Ok(Changes::AsWritten {
            filters: extract_dml_filters(input, table_name)?,
            assignments: vec![],
        });
    }
    let width = table.fields().len();
    check_values(input, table, 0, table_name, Values::Old)?;
    Ok(Changes::ByValue {
        rows: input_exec,
        layout: Layout {
            old: (0..width).collect(),
            new: vec![],
        },
        may_choose: may_choose_among_equal_rows(input)?,
        // A row deleted twice is deleted
        may_repeat: false,
    })
}

fn update_changes(
    table_name: &TableReference,
    table: &SchemaRef,
    input: &Arc<LogicalPlan>,
    input_exec: Arc<dyn ExecutionPlan>,
) -> Result<Changes> {
    let width = table.fields().len();
    let input_width = input.schema().fields().len();
    if input_width == width {
        // Without the optimizer, no old values: only as written
        if let LogicalPlan::Projection(projection) = input.as_ref()
            && !any_subquery(&projection.expr)?
            && filters_the_table(&projection.input, table_name)?
        {
            return update_as_written(input, table, table_name);
        }
        return not_impl_err!(
            "UPDATE on table '{table_name}' with a subquery or a FROM, with the \
             optimizer off (datafusion.optimizer.max_passes = 0)"
        );
    }
    if input_width != 2 * width {
        return internal_err!(
            "UPDATE on table '{table_name}' of {width} columns over an input of \
             {input_width}"
        );
    }
    check_values(input, table, 0, table_name, Values::New)?;
    check_values(input, table, width, table_name, Values::Old)?;
    // The new values and the old ones, in the table's order
    let assigned: Vec<usize> = match input.as_ref() {
        LogicalPlan::Projection(projection) => {
            let (new, old) = projection.expr.split_at(width);
            let as_written =
                Projection::try_new(new.to_vec(), Arc::clone(&projection.input))?;
            if !any_subquery(new)? && filters_the_table(&projection.input, table_name)? {
                let as_written = Arc::new(LogicalPlan::Projection(as_written));
                return update_as_written(&as_written, table, table_name);
            }
            // A new value that is the old one assigns nothing
            (0..width)
                .filter(|&i| new[i].clone().unalias() != old[i].clone().unalias())
                .collect()
        }
        _ => (0..width).collect(),
    };
    Ok(Changes::ByValue {
        rows: input_exec,
        layout: Layout {
            old: (width..2 * width).collect(),
            new: assigned
                .into_iter()
                .map(|i| (table.field(i).name().clone(), i))
                .collect(),
        },
        may_choose: may_choose_among_equal_rows(input)?,
        may_repeat: may_repeat_rows(input)?,
    })
}

/// Whether `plan` is filters over a scan of `table_name` and nothing else:
/// the plan whose `Filter` nodes are the statement's `WHERE`.
fn filters_the_table(plan: &LogicalPlan, table_name: &TableReference) -> Result<bool> {
    Ok(match plan {
        LogicalPlan::Filter(Filter {
            predicate, input, ..
        }) => !contains_subquery(predicate)? && filters_the_table(input, table_name)?,
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) => {
            filters_the_table(input, table_name)?
        }
        LogicalPlan::TableScan(TableScan {
            table_name: scanned,
            filters,
            fetch,
            ..
        }) => {
            scanned.resolved_eq(table_name) && fetch.is_none() && !any_subquery(filters)?
        }
        _ => false,
    })
}

/// Whether `plan` may keep some rows of a value and drop others of the
/// same value: a `LIMIT` (also as a scan's fetch) or a volatile function.
fn may_choose_among_equal_rows(plan: &LogicalPlan) -> Result<bool> {
    let mut chooses = false;
    plan.apply_with_subqueries(|node| {
        chooses = match node {
            LogicalPlan::Limit(_) => true,
            LogicalPlan::TableScan(scan) => scan.fetch.is_some(),
            node => {
                let mut volatile = false;
                node.apply_expressions(|expr| {
                    volatile = expr.is_volatile();
                    Ok(stop_when(volatile))
                })?;
                volatile
            }
        };
        Ok(stop_when(chooses))
    })?;
    Ok(chooses)
}

/// Whether `plan` may yield a row of its input more than once: it joins
/// rows to several others (the `FROM` of an `UPDATE`). The joins a
/// subquery becomes (semi, anti, single, mark joins, and outer joins to an
/// aggregate by the join key) yield each row at most once, but telling an
/// outer join of a subquery from one of the `FROM` is not worth the
/// risk: any inner or outer join makes the rows found counted.
fn may_repeat_rows(plan: &LogicalPlan) -> Result<bool> {
    let mut repeats = false;
    plan.apply(|node| {
        repeats = matches!(node, LogicalPlan::Join(join) if matches!(
            join.join_type,
            JoinType::Inner | JoinType::Left | JoinType::Right | JoinType::Full
        ));
        Ok(stop_when(repeats))
    })?;
    Ok(repeats)
}

/// The `UPDATE` whose input `as_written` is the SQL planner's projection of
/// the new values over filters over the table, as written: each assignment
/// cast to its column's type (type coercion may widen a value the planner
/// did not cast, such as a `CASE` over columns of two types).
fn update_as_written(
    as_written: &Arc<LogicalPlan>,
    table: &SchemaRef,
    table_name: &TableReference,
) -> Result<Changes> {
    let schema = as_written.schema();
    let assignments = extract_update_assignments(as_written)?
        .into_iter()
        .map(|(column, value)| {
            let target = table.field_with_name(&column)?.data_type();
            let (_, produced) = schema.qualified_field_with_unqualified_name(&column)?;
            let value = if produced.data_type() == target {
                value
            } else {
                cast(value, target.clone())
            };
            Ok((column, value))
        })
        .collect::<Result<_>>()?;
    Ok(Changes::AsWritten {
        filters: extract_dml_filters(as_written, table_name)?,
        assignments,
    })
}

/// Which values of a row [`check_values`] checks.
#[derive(Debug, Clone, Copy)]
enum Values {
    /// As the table holds them: of the column's type.
    Old,
    /// Of a type that casts to the column's.
    New,
}

/// Checks that the columns of `input` from `first` on are the old or the
/// new values of the columns of `table`.
fn check_values(
    input: &LogicalPlan,
    table: &SchemaRef,
    first: usize,
    table_name: &TableReference,
    values: Values,
) -> Result<()> {
    let fields = input.schema().fields();
    for (index, field) in table.fields().iter().enumerate() {
        let Some(value) = fields.get(first + index) else {
            return internal_err!(
                "no value for column {} of '{table_name}'",
                field.name()
            );
        };
        let (value_type, column_type) = (value.data_type(), field.data_type());
        match values {
            Values::Old if value_type != column_type => {
                return internal_err!(
                    "the old value of column {} of '{table_name}' is {value_type}, \
                     not {column_type}",
                    field.name()
                );
            }
            Values::New if !can_cast_types(value_type, column_type) => {
                return plan_err!(
                    "UPDATE of table '{table_name}' cannot assign a value of type \
                     {value_type} to column {} of type {column_type}",
                    field.name()
                );
            }
            _ => {}
        }
    }
    Ok(())
}

fn contains_subquery(expr: &Expr) -> Result<bool> {
    expr.exists(|expr| {
        Ok(matches!(
            expr,
            Expr::ScalarSubquery(_)
                | Expr::Exists(_)
                | Expr::InSubquery(_)
                | Expr::SetComparison(_)
        ))
    })
}

fn any_subquery(exprs: &[Expr]) -> Result<bool> {
    for expr in exprs {
        if contains_subquery(expr)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn stop_when(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
}
