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

//! An `ORDER BY` that reads a `FROM` column whose name an output column
//! also has: `SELECT a AS b FROM t ORDER BY b + 0` sorts by `t.b` (see
//! [`crate::name_scopes::order_by_key_schema`]), as do `ORDER BY t.b` and
//! `ORDER BY (SELECT b)`.
//!
//! A sort key that the select list does not compute is computed by the
//! select list's projection, as an extra column removed after the sort.
//! An extra column `t.b` beside the output column `b` makes a schema that
//! DataFusion refuses as ambiguous, so such a key is read another way:
//!
//! - where an item of the select list is that very column under another
//!   name (`SELECT t.b AS b`), the key reads the item;
//! - else the projection computes the whole key under a name of its own,
//!   removed after the sort as the other extra columns are.
//!
//! `SELECT DISTINCT` keeps only the first way: a key it does not output
//! is refused, as upstream and PostgreSQL refuse it.

use std::collections::HashSet;

use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{Column, DFSchema, Result};
use datafusion_expr::expr::{Alias, Exists, InSubquery, SetComparison, Sort};
use datafusion_expr::{Distinct, Expr, LogicalPlan, Projection};

/// `plan`, a select list, sorted by `sorts` with `sort`, where a key may
/// read a `FROM` column that an output column's name shadows.
pub(crate) fn sort_by_shadowed_inputs(
    plan: LogicalPlan,
    sorts: Vec<Sort>,
    sort: impl FnOnce(LogicalPlan, Vec<Sort>) -> Result<LogicalPlan>,
) -> Result<LogicalPlan> {
    let projection = match &plan {
        LogicalPlan::Projection(projection) => projection,
        LogicalPlan::Distinct(Distinct::All(input)) => match input.as_ref() {
            LogicalPlan::Projection(projection) => projection,
            _ => return sort(plan, sorts),
        },
        _ => return sort(plan, sorts),
    };
    let output = plan.schema().as_ref().clone();
    let mut reads = false;
    for key in &sorts {
        reads |= reads_shadowed(&key.expr, &output)?;
    }
    if !reads {
        return sort(plan, sorts);
    }

    // A key reads the item that outputs its column under another name.
    let identities: Vec<(Column, Expr)> = projection
        .expr
        .iter()
        .enumerate()
        .filter_map(|(index, item)| match item {
            Expr::Alias(Alias { expr, .. }) => match expr.as_ref() {
                Expr::Column(column) if is_shadowed(column, &output) => Some((
                    column.clone(),
                    Expr::Column(Column::from(output.qualified_field(index))),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let sorts = sorts
        .into_iter()
        .map(|sort| {
            let expr = replace_columns(sort.expr.clone(), |column| {
                identities
                    .iter()
                    .find(|(c, _)| c == column)
                    .map(|(_, item)| item.clone())
            })?;
            Ok(sort.with_expr(expr))
        })
        .collect::<Result<Vec<_>>>()?;
    let LogicalPlan::Projection(Projection {
        expr: items, input, ..
    }) = plan
    else {
        return sort(plan, sorts);
    };

    // The projection computes each key that still reads such a column.
    let mut names: HashSet<String> =
        output.fields().iter().map(|f| f.name().clone()).collect();
    let mut extra_items = vec![];
    let sorts = sorts
        .into_iter()
        .map(|sort| {
            if !reads_shadowed(&sort.expr, &output)? {
                return Ok(sort);
            }
            let key = replace_columns(sort.expr.clone(), |column| {
                output
                    .index_of_column(column)
                    .ok()
                    .map(|index| items[index].clone().unalias())
            })?;
            let name = fresh_name(&key.schema_name().to_string(), &names);
            names.insert(name.clone());
            extra_items.push(key.alias(name.clone()));
            Ok(sort.with_expr(Expr::Column(Column::new_unqualified(name))))
        })
        .collect::<Result<Vec<_>>>()?;
    let has_extra_items = !extra_items.is_empty();
    let extended =
        Projection::try_new(items.into_iter().chain(extra_items).collect(), input)?;
    let sorted = sort(LogicalPlan::Projection(extended), sorts)?;
    if !has_extra_items {
        return Ok(sorted);
    }
    let output_columns = output.columns().into_iter().map(Expr::Column).collect();
    Ok(LogicalPlan::Projection(Projection::try_new(
        output_columns,
        sorted.into(),
    )?))
}

/// Whether `column` is a `FROM` column that `output` lacks and whose name
/// is the name of an unqualified column of `output`.
fn is_shadowed(column: &Column, output: &DFSchema) -> bool {
    column.relation.is_some()
        && !output.has_column(column)
        && output
            .iter()
            .any(|(qualifier, field)| qualifier.is_none() && field.name() == &column.name)
}

/// Whether `key`, or a subquery in it, reads a shadowed column.
fn reads_shadowed(key: &Expr, output: &DFSchema) -> Result<bool> {
    key.exists(|expr| {
        Ok(match expr {
            Expr::Column(column) => is_shadowed(column, output),
            Expr::ScalarSubquery(subquery)
            | Expr::Exists(Exists { subquery, .. })
            | Expr::InSubquery(InSubquery { subquery, .. })
            | Expr::SetComparison(SetComparison { subquery, .. }) => {
                subquery.outer_ref_columns.iter().any(|outer| {
                    matches!(outer, Expr::OuterReferenceColumn(_, column)
                        if is_shadowed(column, output))
                })
            }
            _ => false,
        })
    })
}

/// `expr` with each column that `replacement` maps replaced.
fn replace_columns(
    expr: Expr,
    replacement: impl Fn(&Column) -> Option<Expr>,
) -> Result<Expr> {
    expr.transform(|expr| match &expr {
        Expr::Column(column) => match replacement(column) {
            Some(replaced) => Ok(Transformed::yes(replaced)),
            None => Ok(Transformed::no(expr)),
        },
        _ => Ok(Transformed::no(expr)),
    })
    .map(|transformed| transformed.data)
}

/// `name`, or `name` with a number, whichever `taken` does not have.
fn fresh_name(name: &str, taken: &HashSet<String>) -> String {
    let mut candidate = name.to_string();
    let mut n = 0;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{name} ({n})");
    }
    candidate
}
