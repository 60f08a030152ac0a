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

//! A subquery's output named apart from the columns of the outer query and
//! from the columns it reads, where upstream's rules would join the two
//! under one name.

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{Column, DFSchema, HashMap, Result};
use datafusion_expr::expr::InSubquery;
use datafusion_expr::logical_plan::{Projection, Subquery};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

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

/// Whether a column of `cols`, read by a condition pulled out of a
/// subquery, is an output of the subquery's plan `schema` neither under its
/// own name nor as the one output of its unqualified name. Pulled up past
/// an alias (`JOIN t1 AS x4 ON x4.k = o.w`, the condition pushed below `x4`
/// as `t1.k = o.w`), `t1.k` is output as `x4.k`; requalified by its name
/// alone it read another output `k` of the subquery (`x3.k` in `IN (SELECT
/// x3.k ...)`), and the join compared the wrong column without an error.
pub(crate) fn read_under_ambiguous_names(
    cols: &BTreeSet<Column>,
    schema: &DFSchema,
) -> bool {
    cols.iter().any(|col| {
        schema.maybe_index_of_column(col).is_none()
            && schema
                .fields()
                .iter()
                .filter(|field| field.name() == &col.name)
                .count()
                != 1
    })
}

/// `expr`, a join condition pulled out of a subquery, reading the
/// subquery's columns `cols` under its alias: each column as the aliased
/// plan `after` names the column at its place in `before`, the subquery's
/// plan.
///
/// Aliasing a plan whose columns share a name (`FROM t3, t1` has two `k`)
/// renames all but the first (`t3.k AS k:1`); requalifying the condition's
/// columns by name alone read `t1.k` for both, and the join compared the
/// wrong column without an error. A column not in `before` keeps upstream's
/// requalification by name.
pub(crate) fn requalified_by_place(
    expr: Expr,
    cols: &BTreeSet<Column>,
    before: &DFSchema,
    after: &DFSchema,
    alias: &str,
) -> Result<Expr> {
    let renamed: HashMap<Column, Column> = cols
        .iter()
        .map(|col| {
            let at_place = before
                .maybe_index_of_column(col)
                .filter(|_| before.fields().len() == after.fields().len())
                .map(|index| Column::from(after.qualified_field(index)));
            let renamed = at_place.unwrap_or_else(|| Column::new(Some(alias), &col.name));
            (col.clone(), renamed)
        })
        .collect();
    expr.transform(|expr| match expr {
        Expr::Column(column) => match renamed.get(&column) {
            Some(renamed) => Ok(Transformed::yes(Expr::Column(renamed.clone()))),
            None => Ok(Transformed::no(Expr::Column(column))),
        },
        other => Ok(Transformed::no(other)),
    })
    .data()
}
