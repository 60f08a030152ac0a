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

//! Readable labels for the output columns of a SQL query
//! (`datafusion.sql_parser.pretty_column_names`).
//!
//! An unaliased `SELECT` item is named after [`Expr::schema_name`], which is
//! also the key the planner uses to find the column again: it must be
//! unambiguous, so it carries type wrappers and qualifiers
//! (`t.a + Int64(1)`). Those make poor column headers, and shortening the key
//! itself would make distinct expressions collide.
//!
//! Instead, once the whole query is planned, each output column is traced
//! down the plan to the expression that produced it, which is rendered as SQL
//! by [`sql_text()`]: literals as values, columns unqualified,
//! operators parenthesized as SQL reads them, windows as `name(args) OVER
//! (...)` without default parts. The topmost projection
//! then aliases each column to its label (the query's own, when it is on top;
//! otherwise one added above the plan). The keys inside the plan never change,
//! so name resolution, `ORDER BY`/`HAVING` references, views and the DataFrame
//! API behave exactly as they do without the option.
//!
//! The trace follows field indexes, not names (see [`label_for`]). A column
//! keeps its current name when the trace cannot see its origin or when the
//! outermost `SELECT` names it explicitly. Two columns may get one label
//! (`t1.a + 1` and `t2.a + 1` are both `a + 1`): SQL allows two output
//! columns of one name, and [`crate::duplicate_output_names`] tells them
//! apart by their qualifiers, so the option never makes a working query
//! fail.

use std::collections::HashSet;

use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{Column, DFSchema, Result, ScalarValue};
use datafusion_expr::expr::{Alias, Case, Sort, WindowFunction, WindowFunctionParams};
use datafusion_expr::logical_plan::{
    Aggregate, Distinct, Join, JoinType, Projection, Window,
};
use datafusion_expr::{Expr, LogicalPlan, WindowFrame, WindowFrameBound};
use sqlparser::ast::{Query, SelectItem, SetExpr};

use crate::duplicate_output_names::{is_key_for, refuse_shared_names, rename_output};
use crate::expr::implicit_window_frame::implicit_window_frame;
use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

mod sql_text;
mod typed_items;
use sql_text::{count_over_wildcard, is_count_star_alias, sort_text, sql_text};
use typed_items::rewritten_item_texts;

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// Plans a top-level query statement, then labels its output columns when
    /// `pretty_column_names` is set.
    pub(crate) fn query_statement_to_plan(
        &self,
        query: Query,
        planner_context: &mut PlannerContext,
    ) -> Result<LogicalPlan> {
        let named = self.options.pretty_column_names.then(|| {
            (
                self.named_select_columns(&query),
                rewritten_item_texts(&query),
            )
        });
        let plan = self.query_to_plan(query, planner_context)?;
        // `SELECT ... INTO` names a table's columns, not a result's
        if let LogicalPlan::Ddl(ddl) = &plan {
            for input in ddl.inputs() {
                refuse_shared_names(planner_context.output_keys(), input.schema())?;
            }
            return Ok(plan);
        }
        let keys = planner_context.output_keys().shown_names(plan.schema());
        let Some((named, mut rewritten)) = named else {
            return rename_output(plan, &keys);
        };
        // Labels show an aggregate of outer columns as it was written
        let shown = self.with_outer_aggregates_written(&plan, planner_context)?;
        // and a select item the planner rewrote as its SQL text
        if rewritten.len() != keys.len() {
            rewritten = vec![None; keys.len()];
        }
        let names = column_labels(&plan, shown.as_ref(), &named)
            .into_iter()
            .zip(rewritten)
            .zip(keys)
            .map(|((label, typed), key)| typed.or(label).or(key))
            .collect::<Vec<_>>();
        rename_output(plan, &names)
    }

    /// The names of plain column references in the outermost `SELECT` list
    /// (of the first branch, for a set operation): the user typed these
    /// names, so they are kept.
    fn named_select_columns(&self, query: &Query) -> HashSet<String> {
        let mut body = query.body.as_ref();
        loop {
            match body {
                SetExpr::Select(select) => {
                    return select
                        .projection
                        .iter()
                        .filter_map(|item| match item {
                            SelectItem::UnnamedExpr(
                                sqlparser::ast::Expr::Identifier(ident),
                            ) => Some(self.ident_normalizer.normalize(ident.clone())),
                            SelectItem::UnnamedExpr(
                                sqlparser::ast::Expr::CompoundIdentifier(idents),
                            ) => idents.last().map(|ident| {
                                self.ident_normalizer.normalize(ident.clone())
                            }),
                            _ => None,
                        })
                        .collect();
                }
                SetExpr::SetOperation { left, .. } => body = left,
                SetExpr::Query(query) => body = query.body.as_ref(),
                _ => return HashSet::new(),
            }
        }
    }
}

/// The readable label of each output column of `plan`, `None` where the
/// column keeps its current name.
///
/// `named` holds the names typed as plain column references in the outermost
/// `SELECT`; such columns keep their names. The labels are traced in
/// `shown` where given: `plan` with some expressions inside its subqueries
/// written as the user wrote them. Two columns may get one label, as SQL
/// allows two output columns of one name ([`rename_output`] tells them
/// apart).
pub(crate) fn column_labels(
    plan: &LogicalPlan,
    shown: Option<&LogicalPlan>,
    named: &HashSet<String>,
) -> Vec<Option<String>> {
    let top_exprs = top_projection_exprs(plan);
    plan.schema()
        .fields()
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let typed = top_exprs
                .and_then(|exprs| exprs.get(i))
                .is_some_and(|e| matches!(e, Expr::Column(c) if named.contains(&c.name)));
            if typed {
                return None;
            }
            label_for(shown.unwrap_or(plan), i).filter(|label| label != field.name())
        })
        .collect()
}

/// Renames each output column of `plan` to its readable label: by aliasing
/// the expressions of the query's own projection when it is on top, and
/// otherwise in a projection added on top. Returns `plan` unchanged when no
/// label differs from the current name.
#[cfg(test)]
fn apply_column_labels(
    plan: LogicalPlan,
    shown: Option<&LogicalPlan>,
    named: &HashSet<String>,
) -> Result<LogicalPlan> {
    let labels = column_labels(&plan, shown, named);
    rename_output(plan, &labels)
}

/// The expressions of the projection that produces the query's output
/// columns, seen through the nodes that pass columns through unchanged.
fn top_projection_exprs(plan: &LogicalPlan) -> Option<&[Expr]> {
    match plan {
        LogicalPlan::Projection(Projection { expr, .. }) => Some(expr),
        LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_)
        | LogicalPlan::Filter(_)
        | LogicalPlan::Distinct(Distinct::All(_))
        | LogicalPlan::Union(_) => top_projection_exprs(plan.inputs().first()?),
        _ => None,
    }
}

/// The readable label of output column `index` of `plan`, or `None` when its
/// origin cannot be traced.
///
/// The trace follows the column down the plan by field index:
///
/// | node | step |
/// | --- | --- |
/// | `Projection` | the expression at `index`: an alias stops the trace with its name, a column continues into the input, anything else is rendered with each column in it traced |
/// | `Aggregate`, `Window` | render the grouping, aggregate or window expression at `index` |
/// | `SubqueryAlias`, `Filter`, `Sort`, `Limit`, `Distinct::All` | the input, same index |
/// | `Join` (`ON`, `USING`, `NATURAL`) | the side that owns `index` |
/// | `Union` | the first branch, which names SQL's output |
/// | `TableScan` | the plain column name |
/// | anything else (`Distinct::On`, `Unnest`, `RecursiveQuery`, `Values`, ...) | `None` |
///
/// The trace never looks columns up by their label, so it does not depend on
/// how each node qualifies its fields.
pub fn label_for(plan: &LogicalPlan, index: usize) -> Option<String> {
    match trace(plan, index)? {
        // A plain name, as most columns of a wide query are: no rendering.
        Expr::Column(Column {
            relation: None,
            name,
            ..
        }) => Some(name),
        expr => sql_text(&expr),
    }
}

/// The expression that produced column `index` of `plan`, rewritten so that
/// its display is the column's label: every column in it is replaced by the
/// traced expression of that column, and an alias or a rendered window
/// function appears as an unqualified column named after the label.
fn trace(plan: &LogicalPlan, index: usize) -> Option<Expr> {
    match plan {
        LogicalPlan::Projection(Projection { expr, input, .. }) => {
            match expr.get(index)? {
                // The planner's alias that names a `count(1)` as typed,
                // `count(*)`, is shown with the call rendered.
                alias @ Expr::Alias(Alias { expr, name, .. })
                    if is_count_star_alias(expr, name) =>
                {
                    Some(labeled(&sql_text(&resolve_columns(alias, input)?)?))
                }
                // A key the planner gave a repeated name stands for its
                // expression
                Expr::Alias(Alias { expr, name, .. }) if is_key_for(expr, name) => {
                    resolve_columns(expr, input)
                }
                Expr::Alias(Alias { name, .. }) => Some(labeled(name)),
                Expr::Column(column) => {
                    trace(input, index_of_column(input.schema(), column, index)?)
                }
                other => resolve_columns(other, input),
            }
        }
        LogicalPlan::Aggregate(aggregate) => trace_aggregate(aggregate, index),
        LogicalPlan::Window(Window {
            input, window_expr, ..
        }) => {
            let input_len = input.schema().fields().len();
            if index < input_len {
                return trace(input, index);
            }
            match window_expr.get(index - input_len)? {
                Expr::Alias(Alias { name, .. }) => Some(labeled(name)),
                expr => Some(labeled(&window_label(expr, input)?)),
            }
        }
        LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Filter(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_)
        | LogicalPlan::Distinct(Distinct::All(_)) => trace(plan.inputs()[0], index),
        LogicalPlan::Join(join) => trace_join(join, index),
        LogicalPlan::Union(union) => trace(union.inputs.first()?, index),
        LogicalPlan::TableScan(_) => {
            Some(labeled(plan.schema().fields().get(index)?.name()))
        }
        _ => None,
    }
}

fn trace_aggregate(aggregate: &Aggregate, index: usize) -> Option<Expr> {
    let group_exprs = match aggregate.group_expr.as_slice() {
        [Expr::GroupingSet(set)] => set.distinct_expr(),
        exprs => exprs.iter().collect(),
    };
    // For grouping sets, the internal grouping id follows the grouping
    // columns: it has no label, and `group_expr_len` counts it.
    let expr = match group_exprs.get(index) {
        Some(expr) => *expr,
        None => {
            let aggr_index = index.checked_sub(aggregate.group_expr_len().ok()?)?;
            aggregate.aggr_expr.get(aggr_index)?
        }
    };
    match expr {
        Expr::Alias(Alias { name, .. }) => Some(labeled(name)),
        expr => resolve_columns(expr, &aggregate.input),
    }
}

fn trace_join(join: &Join, index: usize) -> Option<Expr> {
    // A `USING` or `NATURAL` join outputs both sides' columns, as any join:
    // the merged key is an expression of them in the projection above
    // (see `merged_columns.rs`)
    let left_len = join.left.schema().fields().len();
    let right_len = join.right.schema().fields().len();
    match join.join_type {
        JoinType::Inner
        | JoinType::Left
        | JoinType::Right
        | JoinType::Full
        | JoinType::LeftSingle
        | JoinType::RightSingle => {
            if index < left_len {
                trace(&join.left, index)
            } else {
                trace(&join.right, index - left_len)
            }
        }
        JoinType::LeftSemi | JoinType::LeftAnti => trace(&join.left, index),
        JoinType::RightSemi | JoinType::RightAnti => trace(&join.right, index),
        // The mark column follows the preserved side's columns.
        JoinType::LeftMark => (index < left_len).then(|| trace(&join.left, index))?,
        JoinType::RightMark => (index < right_len).then(|| trace(&join.right, index))?,
    }
}

/// The index of `column` in `schema`, trying `hint` first: a projection
/// that passes its input through (`SELECT *`) keeps each column in place, and
/// a lookup by name is a scan of the schema.
fn index_of_column(schema: &DFSchema, column: &Column, hint: usize) -> Option<usize> {
    if hint < schema.fields().len() {
        let (qualifier, field) = schema.qualified_field(hint);
        if field.name() == &column.name
            && column
                .relation
                .as_ref()
                .is_none_or(|r| qualifier == Some(r))
        {
            return Some(hint);
        }
    }
    schema.maybe_index_of_column(column)
}

/// A column named after `label`, which a label shows as it is.
fn labeled(label: &str) -> Expr {
    Expr::Column(Column::new_unqualified(label))
}

/// The name `k` of the key a `FULL JOIN ... USING (k)` or `NATURAL FULL
/// JOIN` merges, as the SQL planner writes it (`merged_columns.rs`): `CASE
/// WHEN l.k IS NOT NULL THEN l.k ELSE r.k END`, where `l.k` may itself be
/// the key of an earlier full join. `None` for any other expression.
fn merged_key_name(expr: &Expr) -> Option<String> {
    let name = |side: &Expr| match side {
        Expr::Column(column) => Some(column.name.clone()),
        side => merged_key_name(side),
    };
    let Expr::Case(Case {
        expr: None,
        when_then_expr,
        else_expr: Some(otherwise),
    }) = expr
    else {
        return None;
    };
    let [(when, then)] = when_then_expr.as_slice() else {
        return None;
    };
    match when.as_ref() {
        Expr::IsNotNull(tested) if tested == then => {
            let (left, right) = (name(then)?, name(otherwise)?);
            (left == right).then_some(left)
        }
        _ => None,
    }
}

/// Replaces every column in `expr`, a column of `input`, by its traced
/// expression, and the planner's `count(*)` by the call as typed. `None`
/// when any of them cannot be traced.
fn resolve_columns(expr: &Expr, input: &LogicalPlan) -> Option<Expr> {
    let schema = input.schema();
    expr.clone()
        .transform_down(|e| {
            let traced = match e {
                // Told apart by the planner's alias, before its columns are
                // replaced: the count it names may be computed below
                Expr::Alias(Alias { expr, name, .. })
                    if is_count_star_alias(&expr, &name) =>
                {
                    match *expr {
                        Expr::Column(column) => schema
                            .maybe_index_of_column(&column)
                            .and_then(|i| trace_count_star(input, i)),
                        other => resolve_columns(&count_over_wildcard(other), input),
                    }
                }
                Expr::Column(column) => schema
                    .maybe_index_of_column(&column)
                    .and_then(|i| trace(input, i)),
                // The key a full join's `USING` or `NATURAL` merges is the
                // name typed
                case @ Expr::Case(_) => match merged_key_name(&case) {
                    Some(name) => Some(labeled(&name)),
                    None => return Ok(Transformed::no(case)),
                },
                other => return Ok(Transformed::no(other)),
            };
            match traced {
                // Resolved already: not to be resolved again
                Some(traced) => {
                    Ok(Transformed::new(traced, true, TreeNodeRecursion::Jump))
                }
                None => datafusion_common::plan_err!("untraceable column"),
            }
        })
        .data()
        .ok()
}

/// Column `index` of `plan`, which the planner named `count(*)`, as
/// [`trace`] gives it, with the count it computes (an aggregate or a window
/// function) shown as typed ([`count_over_wildcard`]).
fn trace_count_star(plan: &LogicalPlan, index: usize) -> Option<Expr> {
    match plan {
        LogicalPlan::Projection(Projection { expr, input, .. }) => {
            match expr.get(index)? {
                Expr::Column(column) => trace_count_star(
                    input,
                    index_of_column(input.schema(), column, index)?,
                ),
                expr => {
                    let expr = count_over_wildcard(expr.clone().unalias());
                    resolve_columns(&expr, input)
                }
            }
        }
        LogicalPlan::Aggregate(aggregate) => {
            let aggr_index = index.checked_sub(aggregate.group_expr_len().ok()?)?;
            let expr = aggregate.aggr_expr.get(aggr_index)?.clone().unalias();
            resolve_columns(&count_over_wildcard(expr), &aggregate.input)
        }
        LogicalPlan::Window(Window {
            input, window_expr, ..
        }) => {
            let input_len = input.schema().fields().len();
            if index < input_len {
                return trace_count_star(input, index);
            }
            let expr = window_expr.get(index - input_len)?.clone().unalias();
            Some(labeled(&window_label(&count_over_wildcard(expr), input)?))
        }
        LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Filter(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_) => trace_count_star(plan.inputs()[0], index),
        plan => trace(plan, index),
    }
}

/// Renders a window function as `name(args) OVER (PARTITION BY ... ORDER BY
/// ... frame)`, leaving out each part that equals its default:
///
/// - the frame, when it is the one the planner gives a window that writes
///   none ([`implicit_window_frame`]);
/// - constant `ORDER BY` keys, which the planner adds for a `RANGE` frame
///   without `ORDER BY` and which do not change the result;
/// - `ASC`, and `NULLS LAST`/`NULLS FIRST` after `ASC`/`DESC` respectively;
/// - empty `PARTITION BY` and `ORDER BY` lists.
fn window_label(expr: &Expr, input: &LogicalPlan) -> Option<String> {
    let Expr::WindowFunction(window) = expr else {
        return None;
    };
    let WindowFunction {
        fun,
        params:
            WindowFunctionParams {
                args,
                partition_by,
                order_by,
                window_frame,
                filter,
                null_treatment,
                distinct,
            },
    } = window.as_ref();

    let default_frame = implicit_window_frame(order_by, input.schema());
    let frame_is_default = window_frame.units == default_frame.units
        && window_frame.start_bound == default_frame.start_bound
        && window_frame.end_bound == default_frame.end_bound;

    let args = render_list(args, input)?;
    let mut label = format!(
        "{}({}{args})",
        fun.name(),
        if *distinct { "DISTINCT " } else { "" }
    );
    if let Some(null_treatment) = null_treatment {
        label.push_str(&format!(" {null_treatment}"));
    }
    if let Some(filter) = filter {
        let filter = sql_text(&resolve_columns(filter, input)?)?;
        label.push_str(&format!(" FILTER (WHERE {filter})"));
    }

    let mut over = Vec::new();
    if !partition_by.is_empty() {
        over.push(format!(
            "PARTITION BY {}",
            render_list(partition_by, input)?
        ));
    }
    let keys = order_by
        .iter()
        .filter(|sort| !matches!(sort.expr, Expr::Literal(..)))
        .map(|sort| render_sort(sort, input))
        .collect::<Option<Vec<_>>>()?;
    if !keys.is_empty() {
        over.push(format!("ORDER BY {}", keys.join(", ")));
    }
    if !frame_is_default {
        over.push(render_frame(window_frame));
    }
    label.push_str(&format!(" OVER ({})", over.join(" ")));
    Some(label)
}

fn render_list(exprs: &[Expr], input: &LogicalPlan) -> Option<String> {
    let rendered = exprs
        .iter()
        .map(|e| sql_text(&resolve_columns(e, input)?))
        .collect::<Option<Vec<_>>>()?;
    Some(rendered.join(", "))
}

fn render_sort(sort: &Sort, input: &LogicalPlan) -> Option<String> {
    sort_text(&Sort {
        expr: resolve_columns(&sort.expr, input)?,
        ..sort.clone()
    })
}

fn render_frame(frame: &WindowFrame) -> String {
    let bound = |bound: &WindowFrameBound| match bound {
        WindowFrameBound::CurrentRow => "CURRENT ROW".to_string(),
        WindowFrameBound::Preceding(n) if n.is_null() => {
            "UNBOUNDED PRECEDING".to_string()
        }
        WindowFrameBound::Following(n) if n.is_null() => {
            "UNBOUNDED FOLLOWING".to_string()
        }
        WindowFrameBound::Preceding(n) => format!("{} PRECEDING", plain(n)),
        WindowFrameBound::Following(n) => format!("{} FOLLOWING", plain(n)),
    };
    format!(
        "{} BETWEEN {} AND {}",
        frame.units,
        bound(&frame.start_bound),
        bound(&frame.end_bound)
    )
}

/// A frame offset as SQL writes it: `1`, not `UInt64(1)`.
fn plain(value: &ScalarValue) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_expr::logical_plan::builder::{LogicalPlanBuilder, table_scan};
    use datafusion_expr::{col, lit, when};
    use datafusion_functions_aggregate::expr_fn::sum;

    use super::*;

    fn scan(name: &str, columns: &[&str]) -> LogicalPlanBuilder {
        let schema = Schema::new(
            columns
                .iter()
                .map(|c| Field::new(*c, DataType::Int64, true))
                .collect::<Vec<_>>(),
        );
        table_scan(Some(name), &schema, None).unwrap()
    }

    /// A column of relation `qualifier` whose name may hold dots.
    fn qcol(qualifier: &str, name: &str) -> Expr {
        Expr::Column(Column::new(Some(qualifier), name))
    }

    fn labels(plan: &LogicalPlan) -> Vec<Option<String>> {
        (0..plan.schema().fields().len())
            .map(|i| label_for(plan, i))
            .collect()
    }

    fn some(labels: &[&str]) -> Vec<Option<String>> {
        labels.iter().map(|l| Some(l.to_string())).collect()
    }

    #[test]
    fn projection_alias_stops_and_expressions_render() -> Result<()> {
        let plan = scan("t", &["a", "b"])
            .project(vec![
                (col("t.a") + lit(1_i64)).alias("x"),
                col("t.a") + lit(1_i64),
                col("b"),
            ])?
            .build()?;
        assert_eq!(labels(&plan), some(&["x", "a + 1", "b"]));
        Ok(())
    }

    #[test]
    fn pass_through_nodes_keep_the_index() -> Result<()> {
        let plan = scan("t", &["a", "b"])
            .project(vec![col("b") * lit(2_i64), col("a")])?
            .alias("s")?
            .filter(col("s.a").gt(lit(0_i64)))?
            .sort(vec![col("s.a").sort(true, false)])?
            .limit(0, Some(5))?
            .distinct()?
            .build()?;
        assert_eq!(labels(&plan), some(&["b * 2", "a"]));
        Ok(())
    }

    #[test]
    fn columns_inside_expressions_are_traced_with_precedence() -> Result<()> {
        // The inner column is `a + b`; multiplied outside, it needs parentheses.
        let plan = scan("t", &["a", "b"])
            .project(vec![col("t.a") + col("t.b")])?
            .alias("s")?
            .project(vec![qcol("s", "t.a + t.b") * lit(3_i64)])?
            .build()?;
        assert_eq!(labels(&plan), some(&["(a + b) * 3"]));
        Ok(())
    }

    #[test]
    fn aggregate_renders_group_and_aggregate_expressions() -> Result<()> {
        let plan = scan("t", &["a", "b"])
            .aggregate(vec![col("t.b") + lit(1_i64)], vec![sum(col("t.a"))])?
            .build()?;
        assert_eq!(labels(&plan), some(&["b + 1", "sum(a)"]));
        Ok(())
    }

    #[test]
    fn join_follows_the_side_that_owns_the_index() -> Result<()> {
        let right = scan("u", &["c", "d"])
            .project(vec![col("c"), col("d") - lit(1_i64)])?
            .build()?;
        let plan = scan("t", &["a", "b"])
            .project(vec![col("a"), col("b") + lit(1_i64)])?
            .join_on(
                right.clone(),
                JoinType::Inner,
                vec![col("t.a").eq(col("u.c"))],
            )?
            .build()?;
        assert_eq!(labels(&plan), some(&["a", "b + 1", "c", "d - 1"]));

        let semi = scan("t", &["a", "b"])
            .join_on(right, JoinType::RightSemi, vec![col("t.a").eq(col("u.c"))])?
            .build()?;
        assert_eq!(labels(&semi), some(&["c", "d - 1"]));
        Ok(())
    }

    #[test]
    fn using_join_columns_are_traced_to_their_side() -> Result<()> {
        let right = scan("u", &["a", "d"]).build()?;
        let using = scan("t", &["a", "b"]).join_using(
            right,
            JoinType::Full,
            vec![Column::from_name("a")],
        )?;
        // The merged key, as the SQL planner writes it for a FULL join
        let key = when(col("t.a").is_not_null(), col("t.a")).otherwise(col("u.a"))?;
        let plan = using
            .project(vec![key + lit(1_i64), col("t.b") - col("u.d")])?
            .build()?;
        assert_eq!(labels(&plan), some(&["a + 1", "b - d"]));

        // A CASE of that shape over two different columns is not a key
        let typed = scan("t", &["a", "b"])
            .join_using(
                scan("u", &["a", "d"]).build()?,
                JoinType::Inner,
                vec![Column::from_name("a")],
            )?
            .project(vec![
                when(col("t.a").is_not_null(), col("u.a")).otherwise(col("t.a"))?,
            ])?
            .build()?;
        assert_eq!(
            labels(&typed),
            some(&["CASE WHEN a IS NOT NULL THEN a ELSE a END"])
        );
        Ok(())
    }

    #[test]
    fn values_and_unknown_nodes_are_not_traced() -> Result<()> {
        let values = LogicalPlanBuilder::values(vec![vec![lit(1_i64)]])?
            .project(vec![col("column1") + lit(1_i64)])?
            .build()?;
        // The column inside the expression cannot be traced: no label at all.
        assert_eq!(labels(&values), vec![None]);
        Ok(())
    }

    #[test]
    fn union_takes_names_from_the_first_branch() -> Result<()> {
        let first = scan("t", &["a"]).project(vec![col("a") + lit(1_i64)])?;
        let second = scan("u", &["c"])
            .project(vec![col("c") * lit(2_i64)])?
            .build()?;
        let plan = first.union(second)?.build()?;
        assert_eq!(labels(&plan), some(&["a + 1"]));
        Ok(())
    }

    #[test]
    fn labeling_adds_a_projection_only_when_a_name_changes() -> Result<()> {
        let unchanged = scan("t", &["a", "b"]).build()?;
        let labeled = apply_column_labels(unchanged.clone(), None, &HashSet::new())?;
        assert_eq!(labeled, unchanged);

        let plan = scan("t", &["a", "b"])
            .project(vec![col("a"), col("t.b") + lit(1_i64)])?
            .build()?;
        let labeled = apply_column_labels(plan, None, &HashSet::new())?;
        // The labels go into the query's own projection.
        let LogicalPlan::Projection(projection) = &labeled else {
            panic!("expected a labeled projection, got {labeled}");
        };
        assert_eq!(projection.expr[0], col("t.a"));
        assert_eq!(projection.expr[1], (col("t.b") + lit(1_i64)).alias("b + 1"));
        assert!(matches!(
            projection.input.as_ref(),
            LogicalPlan::TableScan(_)
        ));
        // The schema built by renaming is the one the expressions give.
        let derived =
            Projection::try_new(projection.expr.clone(), Arc::clone(&projection.input))?;
        assert_eq!(projection.schema, derived.schema);

        // Over another node, a projection of the columns is added on top.
        let sorted = scan("t", &["a", "b"])
            .project(vec![col("t.b") + lit(1_i64)])?
            .sort(vec![col("t.b + Int64(1)").sort(true, false)])?
            .build()?;
        let labeled = apply_column_labels(sorted, None, &HashSet::new())?;
        let LogicalPlan::Projection(projection) = &labeled else {
            panic!("expected a labeling projection, got {labeled}");
        };
        assert_eq!(projection.expr[0], col("t.b + Int64(1)").alias("b + 1"));
        let derived =
            Projection::try_new(projection.expr.clone(), Arc::clone(&projection.input))?;
        assert_eq!(projection.schema, derived.schema);
        Ok(())
    }

    #[test]
    fn named_columns_keep_their_names_and_labels_may_repeat() -> Result<()> {
        let inner = scan("t", &["a", "b"])
            .project(vec![
                col("t.a") + lit(1_i64),
                col("t.b") + lit(1_i64),
                col("t.b"),
            ])?
            .alias("s")?;
        let plan = inner
            .project(vec![
                qcol("s", "t.a + Int64(1)"),
                qcol("s", "t.b + Int64(1)"),
                (col("s.b") + lit(1_i64)).alias("b + 1"),
            ])?
            .build()?;
        // Column 0 is typed by name; column 1's label is column 2's alias.
        let named = HashSet::from(["t.a + Int64(1)".to_string()]);
        let labeled = apply_column_labels(plan.clone(), None, &named)?;
        let names: Vec<_> = labeled
            .schema()
            .iter()
            .map(|(qualifier, field)| {
                (qualifier.map(|q| q.to_string()), field.name().clone())
            })
            .collect();
        let q = |s: &str| Some(s.to_string());
        assert_eq!(
            names,
            [
                (q("s"), "t.a + Int64(1)".to_string()),
                (q("#2"), "b + 1".to_string()),
                (q("#3"), "b + 1".to_string()),
            ]
        );
        // The schema built by renaming is the one the expressions give.
        let LogicalPlan::Projection(projection) = &labeled else {
            panic!("expected a labeled projection, got {labeled}");
        };
        let derived =
            Projection::try_new(projection.expr.clone(), Arc::clone(&projection.input))?;
        assert_eq!(projection.schema, derived.schema);
        Ok(())
    }
}
