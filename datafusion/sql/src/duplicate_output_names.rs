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

//! Output columns that share a name.
//!
//! SQL lets a `SELECT` list name two columns alike: `SELECT a + 1, a + 1`,
//! `SELECT a AS x, b AS x`, `SELECT CAST(a AS DOUBLE), a::VARCHAR` (a cast
//! keeps its column's name), `SELECT t.*, t.*`. PostgreSQL, DuckDB and SQLite
//! return both columns. DataFusion's planner finds a column by its name, so
//! each column of a projection needs a name of its own, and such a list
//! failed to plan ("Projections require unique expression names").
//!
//! Two steps keep the lookup unambiguous and still show the names as typed:
//!
//! 1. While a `SELECT` list is planned ([`OutputKeys::apart`]), an item whose
//!    name an earlier item already has is aliased to a key of its own, its
//!    name with a `:n` suffix, as upstream's `SubqueryAlias` renames a
//!    repeated name. The key stands for that item everywhere in the plan:
//!    `ORDER BY`, `GROUP BY` or `HAVING` by the name find the first item, as
//!    they do when the items are equal; a derived table or CTE exposes the
//!    key. Lists without a repeated name are planned as before.
//! 2. At the top of a query statement ([`OutputKeys::shown_names`] and
//!    [`rename_output`]), each key becomes the name it stands for again.
//!    Output columns that share a name are told apart by their qualifiers,
//!    as a join's `t1.a` and `t2.a` are: a column's own qualifier where no
//!    other column of that name has it, otherwise `#n`, its position. The
//!    result shows the names; only a lookup by name above the statement (a
//!    DataFrame call) meets the qualifiers, and an unqualified name of such a
//!    column is ambiguous there, as it is in SQL.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use datafusion_common::{Column, DFSchema, Result, TableReference, plan_err};
use datafusion_expr::expr::Alias;
use datafusion_expr::select_expr::SelectExpr;
use datafusion_expr::utils::{expand_qualified_wildcard, expand_wildcard};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, Projection};

/// The keys given to repeated output names while a statement is planned,
/// each with the name it stands for. Shared by the statement's nested
/// queries, so that a key a derived table exposes is shown by its name too.
#[derive(Debug, Clone, Default)]
pub struct OutputKeys(Arc<Mutex<HashMap<String, String>>>);

/// A column's name, with its qualifier if it has one.
type Name = (Option<TableReference>, String);

impl OutputKeys {
    /// `exprs`, a `SELECT` list over `input`, with each item whose name an
    /// earlier item has aliased to a key of its own. Wildcards are expanded
    /// where a name they produce repeats; a list with no repeated name is
    /// returned unchanged.
    ///
    /// In a set operation's later branch, whose names the first branch's
    /// (`first_branch`) replace, a repeated item takes the first branch's name
    /// at its position where that is free, as upstream names such a branch's
    /// unnamed items.
    pub(crate) fn apart(
        &self,
        exprs: Vec<SelectExpr>,
        input: &LogicalPlan,
        first_branch: Option<&DFSchema>,
    ) -> Vec<SelectExpr> {
        // A scalar subquery beside a column of its name can take its own
        // column's qualifier instead, which keeps the name as it was (not in
        // a later branch of a set operation, whose names are the first's)
        let exprs = if first_branch.is_none() {
            crate::expr::subquery_column_names::scalar_subqueries_named_apart(
                exprs, input,
            )
        } else {
            exprs
        };
        let Some(items) = expanded(&exprs, input) else {
            return exprs;
        };
        let names: Vec<(Name, String)> = items
            .iter()
            .enumerate()
            .map(|(i, expr)| {
                let name = match first_branch.and_then(|schema| schema.fields().get(i)) {
                    // The projection of a later branch names such an item
                    // after the first branch's column
                    Some(field) if !matches!(expr, Expr::Column(_) | Expr::Alias(_)) => {
                        (None, field.name().clone())
                    }
                    _ => output_name(expr, input.schema()),
                };
                (name, expr.schema_name().to_string())
            })
            .collect();
        if !has_repeat(&names) {
            return exprs;
        }

        let mut taken: Vec<Name> = Vec::with_capacity(items.len());
        let mut keys: HashSet<String> = HashSet::new();
        let mut registry = self.0.lock().unwrap();
        // A key is a name no item of the list has, before or after it, and
        // no other list of the statement uses for another name
        let listed: HashSet<String> = names
            .iter()
            .flat_map(|((_, name), schema_name)| [name.clone(), schema_name.clone()])
            .collect();
        let free = |key: &String,
                    stands_for: &str,
                    taken: &[Name],
                    keys: &HashSet<String>,
                    registry: &HashMap<String, String>| {
            !keys.contains(key)
                && !listed.contains(key)
                && !taken.iter().any(|(_, n)| n == key)
                && registry.get(key).is_none_or(|name| name == stands_for)
        };
        let apart = items
            .into_iter()
            .zip(names)
            .enumerate()
            .map(|(i, (expr, (name, schema_name)))| {
                if !clashes(&name, &schema_name, &taken, &keys) {
                    taken.push(name);
                    keys.insert(schema_name);
                    return SelectExpr::Expression(expr);
                }
                let first_branch_name = first_branch
                    .and_then(|schema| schema.fields().get(i))
                    .map(|field| field.name().clone())
                    .filter(|key| {
                        !keys.contains(key) && !taken.iter().any(|(_, n)| n == key)
                    });
                let key = match first_branch_name {
                    Some(key) => key,
                    None => {
                        let key = (1..)
                            .map(|n| format!("{schema_name}:{n}"))
                            .find(|key| free(key, &name.1, &taken, &keys, &registry))
                            .expect("an unbounded range has a free key");
                        registry.insert(key.clone(), name.1);
                        key
                    }
                };
                taken.push((None, key.clone()));
                keys.insert(key.clone());
                // The key replaces a name the user gave, which it stands for
                let expr = match expr {
                    Expr::Alias(Alias { expr, .. }) => *expr,
                    expr => expr,
                };
                SelectExpr::Expression(expr.alias(key))
            })
            .collect();
        drop(registry);
        apart
    }

    /// The name each column of `schema` shows: `Some` for a key given by
    /// [`Self::apart`], `None` for a column that shows its own name.
    pub(crate) fn shown_names(&self, schema: &DFSchema) -> Vec<Option<String>> {
        let registry = self.0.lock().unwrap();
        schema
            .fields()
            .iter()
            .map(|field| registry.get(field.name()).cloned())
            .collect()
    }
}

/// Refuses a table or view whose columns would be named by `schema`, when
/// one of them is a key [`OutputKeys::apart`] gave a repeated name: a
/// table's columns need names of their own, as PostgreSQL also requires (a
/// column list on the statement names them instead). Two columns of one
/// name that a join gives (`SELECT x.a, y.a`) are left to the table's own
/// checks, as upstream leaves them.
pub(crate) fn refuse_shared_names(keys: &OutputKeys, schema: &DFSchema) -> Result<()> {
    let registry = keys.0.lock().unwrap();
    match schema
        .fields()
        .iter()
        .find_map(|field| registry.get(field.name()))
    {
        Some(name) => plan_err!("column \"{name}\" specified more than once"),
        None => Ok(()),
    }
}

/// Whether `alias` is a key [`OutputKeys::apart`] gave `expr`: the name of
/// `expr` with a `:n` suffix. What the key stands for is then `expr` itself.
pub(crate) fn is_key_for(expr: &Expr, alias: &str) -> bool {
    alias.rsplit_once(':').is_some_and(|(name, n)| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && expr.schema_name().to_string() == name
    })
}

/// Renames the output columns of `plan` to `names` (`None` keeps a column's
/// name), telling apart columns that then share a name by their qualifiers
/// (see the module doc). Returns `plan` unchanged when nothing is renamed and
/// no names are shared.
pub(crate) fn rename_output(
    plan: LogicalPlan,
    names: &[Option<String>],
) -> Result<LogicalPlan> {
    let schema = Arc::clone(plan.schema());
    let mut columns: Vec<Name> = schema
        .iter()
        .zip(names)
        .map(|((qualifier, field), name)| match name {
            Some(name) => (None, name.clone()),
            None => (qualifier.cloned(), field.name().clone()),
        })
        .collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for (_, name) in &columns {
        *uses.entry(name.as_str()).or_default() += 1;
    }
    let shared: HashSet<String> = uses
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(name, _)| name.to_string())
        .collect();
    if names.iter().all(Option::is_none) && shared.is_empty() {
        return Ok(plan);
    }
    // Each column of a shared name keeps its own qualifier if it is the
    // first of that name to have it; the others are qualified by position
    let mut seen: HashSet<Name> = HashSet::new();
    for (i, column) in columns.iter_mut().enumerate() {
        if !shared.contains(&column.1) {
            continue;
        }
        if column.0.is_none() || seen.contains(column) {
            column.0 = Some(TableReference::bare(format!("#{}", i + 1)));
        }
        seen.insert(column.clone());
    }

    let old_names: Vec<Name> = schema
        .iter()
        .map(|(qualifier, field)| (qualifier.cloned(), field.name().clone()))
        .collect();
    if columns == old_names {
        return Ok(plan);
    }
    let renamed_schema = {
        let fields = schema
            .iter()
            .zip(&columns)
            .map(|((_, field), (qualifier, name))| {
                let field = if field.name() == name {
                    Arc::clone(field)
                } else {
                    Arc::new(field.as_ref().clone().with_name(name))
                };
                (qualifier.clone(), field)
            })
            .collect();
        let renamed = DFSchema::new_with_metadata(fields, schema.metadata().clone())?
            .with_functional_dependencies(schema.functional_dependencies().clone())?;
        Arc::new(renamed)
    };
    let rename =
        |expr: Expr, (qualifier, name): &Name, (old_qualifier, old_name): Name| {
            if *qualifier == old_qualifier && *name == old_name {
                return expr;
            }
            let expr = match expr {
                Expr::Alias(Alias { expr, .. }) => *expr,
                expr => expr,
            };
            expr.alias_qualified(qualifier.clone(), name)
        };
    let projection = match plan {
        // Rename in the query's own projection rather than stack another.
        LogicalPlan::Projection(Projection { expr, input, .. }) => {
            let exprs = expr
                .into_iter()
                .zip(&columns)
                .zip(old_names)
                .map(|((e, new), old)| rename(e, new, old));
            Projection::try_new_with_schema(exprs.collect(), input, renamed_schema)?
        }
        plan => {
            let exprs = old_names.into_iter().zip(&columns).map(|(old, new)| {
                let column = Expr::Column(Column::new(old.0.clone(), old.1.clone()));
                rename(column, new, old)
            });
            Projection::try_new_with_schema(
                exprs.collect(),
                Arc::new(plan),
                renamed_schema,
            )?
        }
    };
    Ok(LogicalPlan::Projection(projection))
}

/// The items of `exprs` with wildcards expanded as the projection expands
/// them; `None` where that is not known here (a `RENAME`, `ILIKE` or
/// `REPLACE` option, or a wildcard that does not expand, which the
/// projection reports).
fn expanded(exprs: &[SelectExpr], input: &LogicalPlan) -> Option<Vec<Expr>> {
    let mut items = vec![];
    for item in exprs {
        match item {
            SelectExpr::Expression(expr) => items.push(expr.clone()),
            SelectExpr::Wildcard(options) => {
                if options.rename.is_some()
                    || options.ilike.is_some()
                    || options.replace.is_some()
                {
                    return None;
                }
                items.extend(expand_wildcard(input.schema(), input, Some(options)).ok()?)
            }
            SelectExpr::QualifiedWildcard(qualifier, options) => {
                if options.rename.is_some()
                    || options.ilike.is_some()
                    || options.replace.is_some()
                {
                    return None;
                }
                items.extend(
                    expand_qualified_wildcard(qualifier, input.schema(), Some(options))
                        .ok()?,
                )
            }
        }
    }
    Some(items)
}

/// The qualifier and name of the column `expr` produces over `schema`, as
/// the projection's schema will have them.
fn output_name(expr: &Expr, schema: &DFSchema) -> Name {
    match expr.to_field(schema) {
        Ok((qualifier, field)) => (qualifier, field.name().clone()),
        Err(_) => expr.qualified_name(),
    }
}

/// Whether a projection of columns named `names` (each with its
/// expression's schema name) would fail for a repeated name.
fn has_repeat(names: &[(Name, String)]) -> bool {
    let mut taken = vec![];
    let mut keys = HashSet::new();
    names.iter().any(|(name, schema_name)| {
        let repeat = clashes(name, schema_name, &taken, &keys);
        taken.push(name.clone());
        keys.insert(schema_name.clone());
        repeat
    })
}

/// Whether a column `name`, of an expression whose schema name is
/// `schema_name`, clashes with the columns `taken` before it: a projection
/// requires distinct schema names, and its schema distinct qualified names,
/// none of them also unqualified.
fn clashes(
    name: &Name,
    schema_name: &str,
    taken: &[Name],
    keys: &HashSet<String>,
) -> bool {
    keys.contains(schema_name)
        || taken.iter().any(|(qualifier, other)| {
            *other == name.1
                && (qualifier.is_none() || name.0.is_none() || *qualifier == name.0)
        })
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_expr::logical_plan::builder::table_scan;
    use datafusion_expr::{col, lit};

    use super::*;

    fn scan() -> LogicalPlan {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
        ]);
        table_scan(Some("t"), &schema, None)
            .unwrap()
            .build()
            .unwrap()
    }

    fn exprs(items: &[SelectExpr]) -> Vec<String> {
        items
            .iter()
            .map(|item| match item {
                SelectExpr::Expression(expr) => expr.to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn repeated_names_get_keys_and_others_are_untouched() {
        let input = scan();
        let keys = OutputKeys::default();
        let distinct = vec![col("t.a").into(), (col("t.a") + lit(1_i64)).into()];
        assert_eq!(
            exprs(&keys.apart(distinct.clone(), &input, None)),
            exprs(&distinct)
        );

        let list = vec![
            (col("t.a") + lit(1_i64)).into(),
            (col("t.a") + lit(1_i64)).into(),
            col("t.a").alias("x").into(),
            col("t.b").alias("x").into(),
            col("t.b").into(),
        ];
        assert_eq!(
            exprs(&keys.apart(list, &input, None)),
            [
                "t.a + Int64(1)",
                "t.a + Int64(1) AS t.a + Int64(1):1",
                "t.a AS x",
                "t.b AS x:1",
                "t.b",
            ]
        );
    }

    #[test]
    fn wildcards_expand_where_their_names_repeat() {
        let input = scan();
        let keys = OutputKeys::default();
        let list = vec![
            SelectExpr::QualifiedWildcard("t".into(), Default::default()),
            SelectExpr::QualifiedWildcard("t".into(), Default::default()),
        ];
        assert_eq!(
            exprs(&keys.apart(list, &input, None)),
            ["t.a", "t.b", "t.a AS t.a:1", "t.b AS t.b:1"]
        );
        let shown: Vec<_> = ["t.a:1", "t.b:1", "a"]
            .into_iter()
            .map(|name| {
                let fields = vec![Field::new(name, DataType::Int64, true)];
                keys.shown_names(&DFSchema::try_from(Schema::new(fields)).unwrap())
            })
            .collect();
        assert_eq!(
            shown,
            [
                vec![Some("a".to_string())],
                vec![Some("b".to_string())],
                vec![None]
            ]
        );
    }

    #[test]
    fn keys_are_recognized_by_their_expression() {
        let expr = col("t.a") + lit(1_i64);
        assert!(is_key_for(&expr, "t.a + Int64(1):1"));
        assert!(is_key_for(&expr, "t.a + Int64(1):12"));
        assert!(!is_key_for(&expr, "t.a + Int64(1):"));
        assert!(!is_key_for(&expr, "t.a + Int64(1):x"));
        assert!(!is_key_for(&expr, "a + 1:1"));
    }

    #[test]
    fn shared_names_are_told_apart_by_qualifiers() -> Result<()> {
        let plan = datafusion_expr::LogicalPlanBuilder::from(scan())
            .project(vec![col("t.a"), col("t.b"), col("t.a") + lit(1_i64)])?
            .build()?;
        let names = |plan: &LogicalPlan| -> Vec<String> {
            plan.schema()
                .iter()
                .map(|(q, f)| match q {
                    Some(q) => format!("{q}.{}", f.name()),
                    None => f.name().clone(),
                })
                .collect()
        };
        let a = || Some("a".to_string());
        let renamed = rename_output(plan.clone(), &[None, a(), None])?;
        assert_eq!(names(&renamed), ["t.a", "#2.a", "t.a + Int64(1)"]);
        let renamed = rename_output(plan.clone(), &[a(), a(), a()])?;
        assert_eq!(names(&renamed), ["#1.a", "#2.a", "#3.a"]);
        // The schema built by renaming is the one the expressions give
        let LogicalPlan::Projection(projection) = &renamed else {
            panic!("expected a projection, got {renamed}");
        };
        let derived =
            Projection::try_new(projection.expr.clone(), Arc::clone(&projection.input))?;
        assert_eq!(projection.schema, derived.schema);
        // Nothing shared and nothing renamed: the plan is unchanged
        assert_eq!(rename_output(plan.clone(), &[None, None, None])?, plan);
        Ok(())
    }
}
