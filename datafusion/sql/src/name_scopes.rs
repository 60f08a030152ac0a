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

//! Which query level a name belongs to.
//!
//! SQL reads a name in the innermost query level that has it:
//!
//! - An unqualified `c` is a column of the innermost level with a column
//!   `c`. If that level has two, the name is ambiguous there, unless a
//!   `USING` or `NATURAL` join merged them ([`crate::merged_columns`]); it
//!   is never a column of a level further out.
//! - A qualified `x.c` is a column of the innermost level with a `FROM`
//!   item named `x`. If that item has no column `c`, there is no such
//!   column; it is never the `x.c` of a level further out.
//! - The `FROM` items to the left of a `LATERAL` item are a level of their
//!   own, inside the level of the query whose `FROM` clause holds them.
//! - Two `FROM` items of one level never share a name: `FROM t x, u x` is
//!   refused, as PostgreSQL refuses it ("table name specified more than
//!   once"), rather than letting `x.c` mean whichever item has a `c`.
//! - In `ORDER BY`, a bare name of exactly one output column is that column,
//!   whatever the `FROM` clause has of that name.
//! - A name that two columns of one `FROM` item (or of the select list, in
//!   `ORDER BY`) share is ambiguous, qualified or not, although the planner
//!   keeps the second under a key of its own
//!   ([`crate::duplicate_output_names`]).
//!
//! DataFusion's planner looked outwards whenever the level being planned had
//! no *unambiguous* match, so a name that a subquery's own join made
//! ambiguous (`SELECT f1 FROM s b JOIN s c USING (f1)`, inside a query over
//! another `s`) read the outer query's column, and `x.c` read an outer `x`
//! whose name the subquery's own `x` hides. Both answered without an error.
//! The identifier planner (`expr/identifier.rs`) asks this module
//! first, and goes on as before where it has nothing to say.

use std::sync::Arc;

use datafusion_common::error::add_possible_columns_to_diag;
use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{
    Column, DFSchema, Diagnostic, Result, SchemaError, Span, TableReference, plan_err,
    schema_err,
};
use datafusion_expr::Expr;

use sqlparser::ast::{
    Expr as SQLExpr, Ident, ObjectName, ObjectNamePart, SelectItem,
    SelectItemQualifiedWildcardKind, WildcardAdditionalOptions,
};

use crate::planner::{IdentNormalizer, PlannerContext};

/// What one query level has for an unqualified name.
enum Found {
    /// Exactly one column (or one unqualified among several).
    One(Expr),
    /// The column a `USING` join merged, read as its value.
    Merged(Expr),
    /// No column of that name.
    None,
}

/// The column an unqualified `name` reads, where it is not the one column
/// of that name of `schema`, the level being planned: the value of a merged
/// column of this level, or a column of the innermost outer level that has
/// the name. An error if the innermost level with the name has several.
/// `None` where no level has it, or this level has exactly one: the caller
/// plans those as it always did. `span`, where the planner collects spans,
/// is the name's place in the SQL, for the error's diagnostic.
pub(crate) fn unqualified_name(
    name: &str,
    span: Option<Span>,
    schema: &DFSchema,
    planner_context: &PlannerContext,
) -> Result<Option<Expr>> {
    match in_level(name, span, schema, planner_context)? {
        Found::One(_) => return Ok(None),
        Found::Merged(value) => return Ok(Some(value)),
        Found::None => {}
    }
    for outer in planner_context.outer_schemas_iter() {
        match in_level(name, span, outer, planner_context)? {
            Found::One(column) | Found::Merged(column) => {
                return as_outer_reference(column, outer).map(Some);
            }
            Found::None => {}
        }
    }
    Ok(None)
}

/// The column a qualified `qualifier.name` reads, where `schema`, the level
/// being planned, has no such column: none, if this level has a `FROM` item
/// named `qualifier` (the planner then reports the missing column), or the
/// column of the innermost outer level with such an item. `None` where no
/// level has an item of that name: the caller goes on as it always did
/// (the name may be a field of a struct column). `span` is as for
/// [`unqualified_name`].
pub(crate) fn qualified_name(
    ids: &[String],
    span: Option<Span>,
    schema: &DFSchema,
    planner_context: &PlannerContext,
) -> Result<Option<Expr>> {
    let [qualifier, name] = ids else {
        return Ok(None);
    };
    let qualifier = TableReference::bare(qualifier.as_str());
    let not_found = || {
        let mut column = Column::new(Some(qualifier.clone()), name);
        if let Some(span) = span {
            column.spans_mut().add_span(span);
        }
        Expr::Column(column)
    };
    let keys = planner_context.output_keys();
    let reference = || format!("{}.{name}", qualifier.table());
    if has_item(schema, &qualifier) {
        if keys.is_repeated(schema, Some(&qualifier), name) {
            return repeated_name_error(&reference(), span);
        }
        return Ok(Some(not_found()));
    }
    for outer in planner_context.outer_schemas_iter() {
        if let Ok((found_qualifier, field)) =
            outer.qualified_field_with_name(Some(&qualifier), name)
        {
            if keys.is_repeated(outer, Some(&qualifier), name) {
                return repeated_name_error(&reference(), span);
            }
            return Ok(Some(Expr::OuterReferenceColumn(
                Arc::clone(field),
                Column::from((found_qualifier, field)),
            )));
        }
        if has_item(outer, &qualifier) {
            return Ok(Some(not_found()));
        }
    }
    Ok(None)
}

/// An error where `ids`, a qualified name `x.c` of the level `schema`, is
/// ambiguous: the `FROM` item `x` has two columns `c`, one of them under a
/// key (see the module doc).
pub(crate) fn refuse_repeated_name(
    ids: &[String],
    span: Option<Span>,
    schema: &DFSchema,
    planner_context: &PlannerContext,
) -> Result<()> {
    let [qualifier, name] = ids else {
        return Ok(());
    };
    let qualifier = TableReference::bare(qualifier.as_str());
    if planner_context
        .output_keys()
        .is_repeated(schema, Some(&qualifier), name)
    {
        return repeated_name_error(&format!("{}.{name}", qualifier.table()), span);
    }
    Ok(())
}

/// `projection` with each `x.*` whose `x` is no `FROM` item of this level,
/// of schema `schema`, but one of an enclosing level (a `FROM` item to the
/// left of a `LATERAL` item, or of an outer query) written out as the
/// item's columns `x.c1 AS c1, x.c2 AS c2, ...`, which read that level's
/// columns as any qualified name does, under their own names. Upstream's planner looked for `x` in this level
/// only (`Invalid qualifier x`); PostgreSQL's `join.sql` selects `ss1.*`
/// of the `LATERAL` item to the left.
pub(crate) fn outer_wildcards_expanded(
    projection: Vec<SelectItem>,
    schema: &DFSchema,
    normalizer: &IdentNormalizer,
    planner_context: &PlannerContext,
) -> Vec<SelectItem> {
    let mut expanded = Vec::with_capacity(projection.len());
    for item in projection {
        let columns = match &item {
            SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(name),
                options,
            ) if *options == WildcardAdditionalOptions::default() => {
                outer_item_columns(name, schema, normalizer, planner_context)
            }
            _ => None,
        };
        match columns {
            Some(columns) => expanded.extend(columns),
            None => expanded.push(item),
        }
    }
    expanded
}

/// The columns of the `FROM` item `name` of the innermost enclosing level
/// that has one, as select items, where this level, of schema `schema`,
/// has none.
fn outer_item_columns(
    name: &ObjectName,
    schema: &DFSchema,
    normalizer: &IdentNormalizer,
    planner_context: &PlannerContext,
) -> Option<Vec<SelectItem>> {
    let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() else {
        return None;
    };
    let qualifier = TableReference::bare(normalizer.normalize(ident.clone()));
    if has_item(schema, &qualifier) {
        return None;
    }
    let outer = planner_context
        .outer_schemas_iter()
        .find(|outer| has_item(outer, &qualifier))?;
    let columns = outer
        .iter()
        .filter(|(q, _)| q.is_some_and(|q| q.resolved_eq(&qualifier)))
        .map(|(_, field)| SelectItem::ExprWithAlias {
            expr: SQLExpr::CompoundIdentifier(vec![
                Ident::with_quote('"', qualifier.table()),
                Ident::with_quote('"', field.name()),
            ]),
            alias: Ident::with_quote('"', field.name()),
        })
        .collect();
    Some(columns)
}

/// Refuses to join `left` and `right`, two `FROM` items of one level, when
/// they share a name: a qualified column could then read either.
pub(crate) fn check_distinct_items(left: &DFSchema, right: &DFSchema) -> Result<()> {
    for (qualifier, _) in right.iter() {
        if let Some(qualifier) = qualifier
            && has_item(left, qualifier)
        {
            return plan_err!(
                "table name \"{}\" specified more than once",
                qualifier.table()
            );
        }
    }
    Ok(())
}

/// The schema an `ORDER BY` key is read in: `output`, the select list,
/// where the key is a bare name of exactly one output column; else
/// `combined`, the select list and the `FROM` clause together, where the
/// key is a bare name; else `inputs_first`, where a name of a `FROM`
/// column reads that column, even if an output column has that name too.
///
/// SQL reads a bare name as the output column before it looks at the
/// `FROM` clause, where the name may be ambiguous: `SELECT a.k FROM a, b
/// ORDER BY k` sorts by `a.k`, although `a` and `b` both have a `k`.
/// A name inside an expression is an input column, as in `WHERE`:
/// `SELECT a AS b FROM t ORDER BY b + 0` sorts by `t.b`, as PostgreSQL
/// does. An output name that no `FROM` column has stays readable in an
/// expression, as DataFusion has always allowed (`ORDER BY b * 2`).
pub(crate) fn order_by_key_schema<'a>(
    key: &SQLExpr,
    normalizer: &IdentNormalizer,
    output: &'a DFSchema,
    combined: &'a DFSchema,
    inputs_first: &'a DFSchema,
) -> &'a DFSchema {
    let mut bare = key;
    while let SQLExpr::Nested(inner) = bare {
        bare = inner;
    }
    match bare {
        SQLExpr::Identifier(ident)
            if output
                .columns_with_unqualified_name(&normalizer.normalize(ident.clone()))
                .len()
                == 1 =>
        {
            output
        }
        SQLExpr::Identifier(_) => combined,
        _ => inputs_first,
    }
}

/// What the level `schema` has for the unqualified `name`.
fn in_level(
    name: &str,
    span: Option<Span>,
    schema: &DFSchema,
    planner_context: &PlannerContext,
) -> Result<Found> {
    if let Ok((qualifier, field)) = schema.qualified_field_with_unqualified_name(name) {
        if planner_context
            .output_keys()
            .is_repeated(schema, None, name)
        {
            return repeated_name_error(name, span);
        }
        return Ok(Found::One(Expr::Column(Column::from((qualifier, field)))));
    }
    let columns = schema.columns_with_unqualified_name(name);
    if columns.is_empty() {
        return Ok(Found::None);
    }
    match planner_context.merged_columns().value_of(name, &columns) {
        Some(value) => Ok(Found::Merged(value)),
        None => {
            let field = Column::new_unqualified(name);
            let mut diagnostic =
                Diagnostic::new_error(format!("column '{name}' is ambiguous"), span);
            add_possible_columns_to_diag(&mut diagnostic, &field, &columns);
            schema_err!(SchemaError::AmbiguousReference {
                field: Box::new(field),
            })
            .map_err(|error| error.with_diagnostic(diagnostic))
        }
    }
}

/// The error for `reference`, a name that two columns share (see
/// [`crate::duplicate_output_names::OutputKeys::is_repeated`]).
fn repeated_name_error<T>(reference: &str, span: Option<Span>) -> Result<T> {
    let message = format!("column reference \"{reference}\" is ambiguous");
    let diagnostic = Diagnostic::new_error(message.clone(), span).with_help(
        "two columns have this name: give them names of their own with AS",
        None,
    );
    plan_err!("{message}").map_err(|error| error.with_diagnostic(diagnostic))
}

/// Whether the level `schema` has a `FROM` item named `qualifier`.
fn has_item(schema: &DFSchema, qualifier: &TableReference) -> bool {
    schema
        .iter()
        .any(|(q, _)| q.is_some_and(|q| q.resolved_eq(qualifier)))
}

/// `expr`, the columns of the outer level `outer`, as a subquery reads them.
pub(crate) fn as_outer_reference(expr: Expr, outer: &DFSchema) -> Result<Expr> {
    expr.transform(|e| match e {
        Expr::Column(column) => {
            let (_, field) = outer.qualified_field_from_column(&column)?;
            Ok(Transformed::yes(Expr::OuterReferenceColumn(
                Arc::clone(field),
                column,
            )))
        }
        other => Ok(Transformed::no(other)),
    })
    .map(|transformed| transformed.data)
}
