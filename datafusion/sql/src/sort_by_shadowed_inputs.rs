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
//! DataFusion refuses as ambiguous. So the output column takes a name of
//! its own while the query is sorted (the keys that read it read that
//! name), and gets its name back in a projection above the sort. The items
//! are computed once, as they are without the sort: a volatile item
//! (`random() AS r`) shows the value the rows were sorted by.
//!
//! A key of `SELECT DISTINCT` that the select list does not output is
//! refused, as upstream and PostgreSQL refuse it.

use std::sync::Arc;

use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, DFSchema, HashMap, HashSet, Result};
use datafusion_expr::expr::Sort;
use datafusion_expr::{Distinct, Expr, LogicalPlan, Projection};

/// `plan`, a select list, sorted by `sorts` with `sort`, where a key may
/// read a `FROM` column that an output column's name shadows.
pub(crate) fn sort_by_shadowed_inputs(
    plan: LogicalPlan,
    sorts: Vec<Sort>,
    sort: impl FnOnce(LogicalPlan, Vec<Sort>) -> Result<LogicalPlan>,
) -> Result<LogicalPlan> {
    let output = Arc::clone(plan.schema());
    let mut shadowed = HashSet::new();
    for key in &sorts {
        shadowed_names(&key.expr, &output, &mut shadowed)?;
    }
    // Only a column the select list's input has can be added to it (not
    // one below an `unnest`): upstream's error names the others
    let input_has_read_columns = select_list(&plan).is_some_and(|projection| {
        sorts.iter().all(|key| {
            key.expr.column_refs().into_iter().all(|column| {
                column.relation.is_none()
                    || !shadowed.contains(&column.name)
                    || projection.input.schema().has_column(column)
            })
        })
    });
    if shadowed.is_empty() || !input_has_read_columns {
        return sort(plan, sorts);
    }
    let (plan, renamed) = match plan {
        LogicalPlan::Projection(projection) => {
            let (projection, renamed) = renamed_items(projection, &shadowed)?;
            (LogicalPlan::Projection(projection), renamed)
        }
        LogicalPlan::Distinct(Distinct::All(input)) => {
            match Arc::unwrap_or_clone(input) {
                LogicalPlan::Projection(projection) => {
                    let (projection, renamed) = renamed_items(projection, &shadowed)?;
                    let input = Arc::new(LogicalPlan::Projection(projection));
                    (LogicalPlan::Distinct(Distinct::All(input)), renamed)
                }
                input => {
                    let plan = LogicalPlan::Distinct(Distinct::All(Arc::new(input)));
                    return sort(plan, sorts);
                }
            }
        }
        plan => return sort(plan, sorts),
    };

    // Keys read a renamed output column under its new name
    let new_names: HashMap<&str, &str> = renamed
        .iter()
        .map(|(new, old)| (old.as_str(), new.as_str()))
        .collect();
    let sorts = sorts
        .into_iter()
        .map(|key| {
            let expr = key
                .expr
                .clone()
                .transform(|expr| match &expr {
                    Expr::Column(column) if column.relation.is_none() => {
                        match new_names.get(column.name.as_str()) {
                            Some(new) => Ok(Transformed::yes(Expr::Column(
                                Column::new_unqualified(*new),
                            ))),
                            None => Ok(Transformed::no(expr)),
                        }
                    }
                    _ => Ok(Transformed::no(expr)),
                })?
                .data;
            Ok(key.with_expr(expr))
        })
        .collect::<Result<Vec<_>>>()?;
    let sorted = sort(plan, sorts)?;

    // Each renamed column gets its name back
    let named = sorted
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            match renamed.get(field.name()) {
                Some(old) if qualifier.is_none() => column.alias(old),
                _ => column,
            }
        })
        .collect();
    Ok(LogicalPlan::Projection(Projection::try_new(
        named,
        Arc::new(sorted),
    )?))
}

/// The projection of `plan`, a select list, where it has one.
fn select_list(plan: &LogicalPlan) -> Option<&Projection> {
    match plan {
        LogicalPlan::Projection(projection) => Some(projection),
        LogicalPlan::Distinct(Distinct::All(input)) => match input.as_ref() {
            LogicalPlan::Projection(projection) => Some(projection),
            _ => None,
        },
        _ => None,
    }
}

/// `projection` with each unqualified output column named in `shadowed`
/// under a name no other column has, and the new names with the old.
fn renamed_items(
    projection: Projection,
    shadowed: &HashSet<String>,
) -> Result<(Projection, HashMap<String, String>)> {
    // Names of the list and of its input, which a sort may add to the list
    let mut taken: HashSet<String> = projection
        .schema
        .fields()
        .iter()
        .chain(projection.input.schema().fields())
        .map(|field| field.name().clone())
        .collect();
    let mut renamed = HashMap::new();
    let items = projection
        .expr
        .into_iter()
        .zip(projection.schema.iter())
        .map(|(item, (qualifier, field))| {
            if qualifier.is_some() || !shadowed.contains(field.name()) {
                return item;
            }
            let new = fresh_name(field.name(), &taken);
            taken.insert(new.clone());
            renamed.insert(new.clone(), field.name().clone());
            item.unalias().alias(new)
        })
        .collect();
    Ok((Projection::try_new(items, projection.input)?, renamed))
}

/// Adds to `names` the name of each column that `key`, or a subquery in it
/// at any depth, reads from `FROM` where an unqualified column of `output`
/// has that name.
fn shadowed_names(
    key: &Expr,
    output: &DFSchema,
    names: &mut HashSet<String>,
) -> Result<()> {
    let mut note = |column: &Column| {
        let shadowed = column.relation.is_some()
            && !output.has_column(column)
            && output.iter().any(|(qualifier, field)| {
                qualifier.is_none() && field.name() == &column.name
            });
        if shadowed {
            names.insert(column.name.clone());
        }
    };
    key.apply(|expr| {
        let subquery = match expr {
            Expr::Column(column) => {
                note(column);
                None
            }
            Expr::ScalarSubquery(subquery) => Some(subquery),
            Expr::Exists(exists) => Some(&exists.subquery),
            Expr::InSubquery(in_subquery) => Some(&in_subquery.subquery),
            Expr::SetComparison(comparison) => Some(&comparison.subquery),
            _ => None,
        };
        if let Some(subquery) = subquery {
            // Outer references of the subquery and of those inside it
            subquery.subquery.apply_with_subqueries(|node| {
                node.apply_expressions(|expr| {
                    expr.apply(|expr| {
                        if let Expr::OuterReferenceColumn(_, column) = expr {
                            note(column);
                        }
                        Ok(TreeNodeRecursion::Continue)
                    })
                })
            })?;
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(())
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
