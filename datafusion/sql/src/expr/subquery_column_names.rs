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

//! The name of a scalar subquery in a `SELECT` list, apart from the other
//! columns of the list.
//!
//! A scalar subquery's column is named after the subquery's own column,
//! without its qualifier: `(SELECT i FROM integers i2)` is `i`. Beside a
//! column `i1.i` of the outer query, or a second subquery of a column `i`,
//! that name is ambiguous, and the projection failed to plan (`Schema
//! contains qualified field name i1.i and unqualified field name i which
//! would be ambiguous`), though SQL allows two output columns named `i` and
//! PostgreSQL and DuckDB answer. Such a subquery keeps its column's qualifier
//! too (`i2.i`): the output is still shown as `i`, and the names differ.
//! Where the qualifiers would be the same as well, the subquery's column gets
//! a key of its own instead ([`crate::duplicate_output_names`]).
//!
//! Only a list whose names clash is changed, so every list that planned
//! before plans as it did. The qualifier is not taken where a relation of the
//! outer query has it too: `ORDER BY i2.i` must still name that relation's
//! column. In a set operation's later branches the names come from the first
//! branch, and nothing is changed there.

use std::collections::HashSet;

use datafusion_common::TableReference;
use datafusion_expr::select_expr::SelectExpr;
use datafusion_expr::utils::{expand_qualified_wildcard, expand_wildcard};
use datafusion_expr::{Expr, LogicalPlan};

/// A column's name, with its qualifier if it has one.
type Name = (Option<TableReference>, String);

/// `exprs`, a `SELECT` list over `input`, with each unaliased scalar subquery
/// whose name another item of the list also has qualified by its own
/// column's qualifier, where that makes its name unique.
pub(crate) fn scalar_subqueries_named_apart(
    exprs: Vec<SelectExpr>,
    input: &LogicalPlan,
) -> Vec<SelectExpr> {
    let Some(mut names) = list_names(&exprs, input) else {
        return exprs;
    };
    let outer_qualifiers: HashSet<TableReference> = input
        .schema()
        .iter()
        .filter_map(|(qualifier, _)| qualifier.cloned())
        .collect();
    exprs
        .into_iter()
        .map(|item| match item {
            SelectExpr::Expression(expr @ Expr::ScalarSubquery(_)) => {
                SelectExpr::Expression(named_apart(expr, &mut names, &outer_qualifiers))
            }
            item => item,
        })
        .collect()
}

/// `subquery`, qualified by its column's qualifier if its name is not the
/// only one of `names` and the qualified name is, updating `names`.
fn named_apart(
    subquery: Expr,
    names: &mut [Name],
    outer_qualifiers: &HashSet<TableReference>,
) -> Expr {
    let Expr::ScalarSubquery(inner) = &subquery else {
        return subquery;
    };
    let Some(qualifier) = inner.subquery.schema().qualified_field(0).0.cloned() else {
        return subquery;
    };
    let name = subquery.qualified_name();
    let qualified = (Some(qualifier.clone()), name.1.clone());
    let clashes = names.iter().filter(|(_, other)| *other == name.1).count() > 1;
    if !clashes || names.contains(&qualified) || outer_qualifiers.contains(&qualifier) {
        return subquery;
    }
    if let Some(entry) = names.iter_mut().find(|entry| **entry == name) {
        *entry = qualified;
    }
    subquery.alias_qualified(Some(qualifier), name.1)
}

/// The names of the columns `exprs` produces, wildcards expanded as the
/// projection expands them; `None` where that is not known here (a `RENAME`
/// or `ILIKE` option, or a wildcard that does not expand, which the
/// projection reports).
fn list_names(exprs: &[SelectExpr], input: &LogicalPlan) -> Option<Vec<Name>> {
    let mut names = vec![];
    for item in exprs {
        let expanded = match item {
            SelectExpr::Expression(expr) => vec![expr.clone()],
            SelectExpr::Wildcard(options) => {
                if options.rename.is_some() || options.ilike.is_some() {
                    return None;
                }
                expand_wildcard(input.schema(), input, Some(options)).ok()?
            }
            SelectExpr::QualifiedWildcard(qualifier, options) => {
                if options.rename.is_some() || options.ilike.is_some() {
                    return None;
                }
                expand_qualified_wildcard(qualifier, input.schema(), Some(options))
                    .ok()?
            }
        };
        names.extend(expanded.iter().map(Expr::qualified_name));
    }
    Some(names)
}
