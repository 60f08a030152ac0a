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
//! Where the qualifiers would be the same as well, the projection fails as
//! before.

use std::collections::HashSet;

use datafusion_common::{DFSchema, TableReference};
use datafusion_expr::Expr;
use datafusion_expr::select_expr::SelectExpr;

/// `exprs`, a `SELECT` list over `input`, with each unaliased scalar subquery
/// whose name another item of the list also has qualified by its own
/// column's qualifier, where that makes its name unique.
pub(crate) fn scalar_subqueries_named_apart(
    exprs: Vec<SelectExpr>,
    input: &DFSchema,
) -> Vec<SelectExpr> {
    let names = list_names(&exprs, input);
    exprs
        .into_iter()
        .map(|item| match item {
            SelectExpr::Expression(expr @ Expr::ScalarSubquery(_)) => {
                SelectExpr::Expression(named_apart(expr, &names))
            }
            item => item,
        })
        .collect()
}

/// `subquery`, qualified by its column's qualifier if its name clashes with
/// another of `names` and the qualified name does not.
fn named_apart(subquery: Expr, names: &[(Option<TableReference>, String)]) -> Expr {
    let Expr::ScalarSubquery(inner) = &subquery else {
        return subquery;
    };
    let (_, name) = subquery.qualified_name();
    let clashes = names.iter().filter(|(_, other)| *other == name).count() > 1;
    match inner.subquery.schema().qualified_field(0).0.cloned() {
        Some(qualifier)
            if clashes && !names.contains(&(Some(qualifier.clone()), name.clone())) =>
        {
            subquery.alias_qualified(Some(qualifier), name)
        }
        _ => subquery,
    }
}

/// The qualified names of the columns `exprs` produces, a wildcard standing
/// for every column of `input` it may name.
fn list_names(
    exprs: &[SelectExpr],
    input: &DFSchema,
) -> Vec<(Option<TableReference>, String)> {
    let mut names = vec![];
    let mut seen_input = HashSet::new();
    for item in exprs {
        match item {
            SelectExpr::Expression(expr) => {
                names.push(expr.qualified_name());
            }
            SelectExpr::Wildcard(_) | SelectExpr::QualifiedWildcard(..) => {
                for (qualifier, field) in input.iter() {
                    let name = (qualifier.cloned(), field.name().clone());
                    if seen_input.insert(name.clone()) {
                        names.push(name);
                    }
                }
            }
        }
    }
    names
}
