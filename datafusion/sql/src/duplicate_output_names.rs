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
//!    repeated name. The key stands for that item everywhere in the plan,
//!    and a derived table or CTE exposes it. Lists without a repeated name
//!    are planned as before.
//!
//!    The name itself then finds the first item, so a reference by the name
//!    that two different items answer is refused as ambiguous
//!    ([`OutputKeys::is_repeated`]): `SELECT x FROM (SELECT a AS x, b AS x)
//!    s` and `SELECT a AS x, b AS x FROM t ORDER BY x` are errors, as in
//!    PostgreSQL, and so is a `USING` join on such a name. A key of an item
//!    equal to the first of its name reads the same value (`SELECT a, a ...
//!    ORDER BY a`). Upstream's `SubqueryAlias` gives a repeated name of a
//!    derived table (`SELECT x.a, y.a` in `FROM (...) s`) a key `a:1` of its
//!    own making, which counts as a repeat too; before, `s.a` silently read
//!    the first of the two.
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

use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, DFSchema, Result, TableReference, plan_err};
use datafusion_expr::expr::Alias;
use datafusion_expr::select_expr::SelectExpr;
use datafusion_expr::utils::{expand_qualified_wildcard, expand_wildcard};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, Projection, SubqueryAlias};

/// The keys given to repeated output names while a statement is planned,
/// each with the name it stands for. Shared by the statement's nested
/// queries, so that a key a derived table exposes is shown by its name too.
#[derive(Debug, Clone, Default)]
pub struct OutputKeys(Arc<Mutex<Registry>>);

/// The keys of one statement.
#[derive(Debug, Default)]
struct Registry {
    /// The keys [`OutputKeys::apart`] gave, by key.
    keys: HashMap<String, KeyFor>,
    /// The keys upstream's `SubqueryAlias` gave the repeated names of a
    /// derived table, by the table's name and the key, each with the name
    /// it stands for ([`OutputKeys::record_derived_table_keys`]).
    derived: HashMap<(TableReference, String), String>,
}

/// What a key given by [`OutputKeys::apart`] stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeyFor {
    /// The name the column shows.
    name: String,
    /// Whether the item is equal to the first item of that name, so that
    /// the name reads the same value whichever of the two it finds.
    repeats_first: bool,
}

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
        let mut guard = self.0.lock().unwrap();
        let registry = &mut guard.keys;
        // A key is a name no item of the list has, before or after it, and
        // no other list of the statement uses for another name
        let listed: HashSet<String> = names
            .iter()
            .flat_map(|((_, name), schema_name)| [name.clone(), schema_name.clone()])
            .collect();
        let free = |key: &String,
                    stands_for: &KeyFor,
                    taken: &[Name],
                    keys: &HashSet<String>,
                    registry: &HashMap<String, KeyFor>| {
            !keys.contains(key)
                && !listed.contains(key)
                && !taken.iter().any(|(_, n)| n == key)
                && registry.get(key).is_none_or(|known| known == stands_for)
        };
        // The first item of each shown name, which a reference finds
        let mut first_of_name: HashMap<String, Expr> = HashMap::new();
        for (expr, ((_, name), _)) in items.iter().zip(&names) {
            first_of_name
                .entry(name.clone())
                .or_insert_with(|| unaliased(expr).clone());
        }
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
                        let stands_for = KeyFor {
                            repeats_first: first_of_name
                                .get(&name.1)
                                .is_some_and(|first| first == unaliased(&expr)),
                            name: name.1,
                        };
                        let key = (1..)
                            .map(|n| format!("{schema_name}:{n}"))
                            .find(|key| free(key, &stands_for, &taken, &keys, registry))
                            .expect("an unbounded range has a free key");
                        registry.insert(key.clone(), stands_for);
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
        drop(guard);
        apart
    }

    /// The name each column of `schema` shows: `Some` for a key given by
    /// [`Self::apart`] or by upstream's `SubqueryAlias`, `None` for a column
    /// that shows its own name.
    pub(crate) fn shown_names(&self, schema: &DFSchema) -> Vec<Option<String>> {
        let registry = self.0.lock().unwrap();
        schema
            .iter()
            .map(|(qualifier, field)| registry.stands_for(qualifier, field.name()))
            .map(|key| key.map(|key| key.name))
            .collect()
    }

    /// Whether the name `name` of `schema`, of the `FROM` item `qualifier`
    /// where the reference is qualified, is repeated: beside the column the
    /// name finds, `schema` has a key of the same qualifier that stands for
    /// it, of an item that may differ from the column found. The reference
    /// is then ambiguous, as PostgreSQL says, rather than the first column.
    ///
    /// An unqualified name that finds a column of the `FROM` clause is not
    /// made ambiguous by a key of the select list (`SELECT a, b AS a ...
    /// GROUP BY a` groups by the column `a`).
    pub(crate) fn is_repeated(
        &self,
        schema: &DFSchema,
        qualifier: Option<&TableReference>,
        name: &str,
    ) -> bool {
        // Most statements have no key: no lookup of the schema then
        {
            let registry = self.0.lock().unwrap();
            if registry.keys.is_empty() && registry.derived.is_empty() {
                return false;
            }
        }
        let found = match qualifier {
            Some(qualifier) => schema.qualified_field_with_name(Some(qualifier), name),
            None => schema.qualified_field_with_unqualified_name(name),
        };
        let Ok((found_qualifier, _)) = found else {
            return false;
        };
        let registry = self.0.lock().unwrap();
        schema.iter().any(|(field_qualifier, field)| {
            let same_item = match (found_qualifier, field_qualifier) {
                (None, None) => true,
                (Some(found), Some(other)) => other.resolved_eq(found),
                _ => false,
            };
            same_item
                && registry
                    .stands_for(field_qualifier, field.name())
                    .is_some_and(|key| key.name == name && !key.repeats_first)
        })
    }

    /// Records the keys upstream's `SubqueryAlias` gave in `relation`, a
    /// `FROM` item just planned: a derived table, a CTE or a `LATERAL` item
    /// whose select list repeats a name (`SELECT x.a, y.a`) keeps the second
    /// as `a:1`, which [`Self::is_repeated`] and [`Self::shown_names`] then
    /// know for the name it stands for.
    pub(crate) fn record_derived_table_keys(&self, relation: &LogicalPlan) {
        let mut registry = self.0.lock().unwrap();
        let _ = relation.apply(|node| {
            if let LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) = node
                && let LogicalPlan::Projection(Projection { expr, .. }) = input.as_ref()
            {
                for expr in expr {
                    if let Expr::Alias(Alias { expr, name, .. }) = expr
                        && let Expr::Column(column) = expr.as_ref()
                        && is_numbered_key(name, &column.name)
                    {
                        registry
                            .derived
                            .insert((alias.clone(), name.clone()), column.name.clone());
                    }
                }
            }
            Ok(TreeNodeRecursion::Continue)
        });
    }
}

impl Registry {
    /// What the column `name` of qualifier `qualifier` stands for, where it
    /// is a key.
    fn stands_for(
        &self,
        qualifier: Option<&TableReference>,
        name: &str,
    ) -> Option<KeyFor> {
        if let Some(key) = self.keys.get(name) {
            return Some(key.clone());
        }
        let derived = self.derived.get(&(qualifier?.clone(), name.to_string()))?;
        Some(KeyFor {
            name: derived.clone(),
            repeats_first: false,
        })
    }
}

/// Whether `key` is `name` with a `:n` suffix, as upstream's
/// `unique_field_aliases` and [`OutputKeys::apart`] make keys.
fn is_numbered_key(key: &str, name: &str) -> bool {
    key.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(':'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `expr` without its alias.
fn unaliased(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(Alias { expr, .. }) => expr,
        expr => expr,
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
        .find_map(|field| registry.keys.get(field.name()))
    {
        Some(key) => plan_err!("column \"{}\" specified more than once", key.name),
        None => Ok(()),
    }
}

/// Whether `alias` is a key [`OutputKeys::apart`] gave `expr`: the name of
/// `expr` with a `:n` suffix. What the key stands for is then `expr` itself.
pub(crate) fn is_key_for(expr: &Expr, alias: &str) -> bool {
    is_numbered_key(alias, &expr.schema_name().to_string())
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
