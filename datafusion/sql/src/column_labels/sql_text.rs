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

//! The SQL text of an expression, as a column label shows it.
//!
//! A label must never read as a different expression than the one typed, and
//! never read worse than the name it replaces. [`Expr::human_display`] is
//! written for plan displays and falls short of that in ways a reader of a
//! result header notices: a unary minus over a sum (`(- c + 1)`), comparisons
//! chained without parentheses, function names where SQL has syntax
//! (`array_element(a, 1)` for `a[1]`), Rust debug text for intervals, and
//! `(<subquery>)`. So labels have their own renderer:
//!
//! - Parentheses follow SQL's precedence as the parser reads it back, by the
//!   table [`Expr::human_display`] uses too ([`sql_binding`]): comparisons
//!   and other predicates do not chain, `+`/`-` and `*`/`/` associate to the
//!   left, a unary minus binds tighter than any operator. Where a precedence
//!   is in doubt, the operand is parenthesized: a redundant pair never
//!   changes the reading.
//! - The planner turns some syntax into function calls; the ones that are the
//!   syntax and nothing else are written back as it: `a[1]`, `a[1:2]`,
//!   `s['f']`, `[1, 2]`. Other calls keep their function name, which is the
//!   exact reading (`EXTRACT` becomes the public `date_part`, `arr || arr`
//!   becomes `array_concat`, `array_append` or `array_prepend` by type).
//! - Literals are values, without the type wrappers of the planner's names:
//!   a float keeps its decimal point (`2.0`: the planner keeps no trace of
//!   how it was typed, and `2` would read as integer division), intervals and
//!   date/time strings read as the typed literals they are
//!   (`INTERVAL '1 day'`, `DATE '2020-01-01'`), and a string is shown bare
//!   when it is one word (`foo`), quoted otherwise (`'x%'`, `','`, `''`),
//!   so that it cannot read as an operator or vanish.
//! - Subqueries of every kind show their SQL, unparsed from the plan.
//!
//! Rendering returns `None` for what it cannot show faithfully (a subquery
//! the unparser rejects, a window function outside a window node); the column
//! then keeps its current name.
//!
//! [`sql_binding`]: datafusion_expr::sql_binding

use std::fmt::Write;
use std::ops::ControlFlow;

use arrow::datatypes::DataType;
use datafusion_common::ScalarValue;
use datafusion_common::tree_node::TreeNode;
use datafusion_expr::expr::{
    AggregateFunction, AggregateFunctionParams, Alias, Between, BinaryExpr, Case, Cast,
    Exists, HigherOrderFunction, InList, InSubquery, Lambda, LambdaVariable, Like,
    Placeholder, ScalarFunction, SetComparison, Sort, TryCast, Unnest,
};
use datafusion_expr::sql_binding::{
    Binding, Side, operand_needs_parentheses, operator_binding,
};
use datafusion_expr::{Expr, GroupingSet, LogicalPlan, Operator, Subquery};

use crate::expr::array_subquery::is_array_subquery;
use sqlparser::ast::{self, VisitMut, VisitorMut};

use crate::unparser::Unparser;

/// The label text of `expr`, or `None` when part of it cannot be shown.
pub(super) fn sql_text(expr: &Expr) -> Option<String> {
    let mut out = String::new();
    write_expr(&mut out, expr)?;
    Some(out)
}

/// `expr` as typed where it is the `count(Int64(1))` the planner makes of
/// `count(*)`, an aggregate or a window function: `count` over a wildcard,
/// which [`sql_text`] writes as `count(*)`. Any other expression unchanged.
pub(super) fn count_over_wildcard(expr: Expr) -> Expr {
    let counts_one = |name: &str, args: &[Expr]| {
        name == "count" && matches!(args, [Expr::Literal(ScalarValue::Int64(Some(1)), _)])
    };
    #[expect(deprecated)]
    let wildcard = || Expr::Wildcard {
        qualifier: None,
        options: Box::default(),
    };
    match expr {
        Expr::AggregateFunction(AggregateFunction { func, params })
            if counts_one(func.name(), &params.args) =>
        {
            let params = AggregateFunctionParams {
                args: vec![wildcard()],
                ..params
            };
            Expr::AggregateFunction(AggregateFunction { func, params })
        }
        Expr::WindowFunction(mut window)
            if counts_one(window.fun.name(), &window.params.args) =>
        {
            window.params.args = vec![wildcard()];
            Expr::WindowFunction(window)
        }
        expr => expr,
    }
}

/// Whether `name` is the planner's alias for `expr`, a `count(*)` written as
/// `count(1)`: the name `expr` would have with the call as typed.
pub(super) fn is_count_star_alias(expr: &Expr, name: &str) -> bool {
    const PLANNED: &str = "count(Int64(1))";
    if !name.starts_with("count(*)") {
        return false;
    }
    let schema_name = expr.schema_name().to_string();
    schema_name.starts_with(PLANNED)
        && name.strip_prefix("count(*)") == schema_name.strip_prefix(PLANNED)
}

/// The label text of a sort key: `DESC` and a `NULLS` clause only where they
/// differ from SQL's defaults (`ASC`; `NULLS LAST` after `ASC`, `NULLS FIRST`
/// after `DESC`).
pub(super) fn sort_text(sort: &Sort) -> Option<String> {
    let mut out = sql_text(&sort.expr)?;
    out.push_str(match (sort.asc, sort.nulls_first) {
        (true, false) => "",
        (true, true) => " NULLS FIRST",
        (false, true) => " DESC",
        (false, false) => " DESC NULLS LAST",
    });
    Some(out)
}

/// How tightly `expr` binds, as the labels write it.
fn binding(expr: &Expr) -> Binding {
    match expr {
        Expr::BinaryExpr(BinaryExpr { op, .. }) => operator_binding(op),
        Expr::Not(_) => Binding::Not,
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotTrue(_)
        | Expr::IsNotFalse(_)
        | Expr::IsNotUnknown(_)
        | Expr::Between(_)
        | Expr::Like(_)
        | Expr::SimilarTo(_)
        | Expr::InList(_)
        | Expr::InSubquery(_)
        | Expr::SetComparison(_)
        | Expr::Exists(_) => Binding::Predicate,
        Expr::Negative(_) => Binding::Unary,
        Expr::Literal(value, _) if is_negative_number(value) => Binding::Unary,
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            if typed_literal_keyword(expr, field.data_type()).is_some() {
                Binding::Atom
            } else {
                binding(expr)
            }
        }
        Expr::Lambda(_) => Binding::Lambda,
        Expr::Alias(Alias { expr, .. }) => binding(expr),
        _ => Binding::Atom,
    }
}

/// Writes `operand` of an operator that binds as `outer`, in parentheses when
/// `needs_parens` says so for its own binding.
fn write_operand(
    out: &mut String,
    operand: &Expr,
    needs_parens: impl Fn(Binding) -> bool,
) -> Option<()> {
    if needs_parens(binding(operand)) {
        out.push('(');
        write_expr(out, operand)?;
        out.push(')');
    } else {
        write_expr(out, operand)?;
    }
    Some(())
}

/// Writes the operand of a predicate form (`IS NULL`, `LIKE`, `IN`, ...):
/// parenthesized when it is itself a predicate or binds more loosely.
fn write_predicate_operand(out: &mut String, operand: &Expr) -> Option<()> {
    write_operand(out, operand, |b| b <= Binding::Predicate)
}

fn write_list(out: &mut String, exprs: &[Expr]) -> Option<()> {
    for (i, expr) in exprs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, expr)?;
    }
    Some(())
}

fn write_expr(out: &mut String, expr: &Expr) -> Option<()> {
    match expr {
        Expr::Column(column) => out.push_str(&column.name),
        Expr::OuterReferenceColumn(_, column) => out.push_str(&column.name),
        // An alias inside an expression is the planner's (a top-level one
        // names the column and stops the trace): its name is a schema name,
        // so the expression is shown.
        Expr::Alias(Alias { expr, .. }) => write_expr(out, expr)?,
        Expr::Literal(value, _) => out.push_str(&literal_text(value)),
        Expr::ScalarVariable(_, names) => out.push_str(&names.join(".")),
        Expr::Placeholder(Placeholder { id, .. }) => out.push_str(id),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let same_operator =
                |operand: &Expr| matches!(operand, Expr::BinaryExpr(b) if b.op == *op);
            write_operand(out, left, |b| {
                operand_needs_parentheses(op, Side::Left, b, same_operator(left))
            })?;
            write!(out, " {} ", operator_text(op)).ok()?;
            write_operand(out, right, |b| {
                operand_needs_parentheses(op, Side::Right, b, same_operator(right))
            })?;
        }
        Expr::Not(inner) => {
            out.push_str("NOT ");
            write_predicate_operand(out, inner)?;
        }
        Expr::Negative(inner) => {
            out.push('-');
            let mut operand = String::new();
            write_expr(&mut operand, inner)?;
            // `- -1` must not become `--1`, which starts a comment.
            if binding(inner) < Binding::Unary || operand.starts_with('-') {
                write!(out, "({operand})").ok()?;
            } else {
                out.push_str(&operand);
            }
        }
        Expr::IsNull(inner) => write_postfix(out, inner, "IS NULL")?,
        Expr::IsNotNull(inner) => write_postfix(out, inner, "IS NOT NULL")?,
        Expr::IsTrue(inner) => write_postfix(out, inner, "IS TRUE")?,
        Expr::IsFalse(inner) => write_postfix(out, inner, "IS FALSE")?,
        Expr::IsUnknown(inner) => write_postfix(out, inner, "IS UNKNOWN")?,
        Expr::IsNotTrue(inner) => write_postfix(out, inner, "IS NOT TRUE")?,
        Expr::IsNotFalse(inner) => write_postfix(out, inner, "IS NOT FALSE")?,
        Expr::IsNotUnknown(inner) => write_postfix(out, inner, "IS NOT UNKNOWN")?,
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            write_predicate_operand(out, expr)?;
            out.push_str(if *negated {
                " NOT BETWEEN "
            } else {
                " BETWEEN "
            });
            write_predicate_operand(out, low)?;
            out.push_str(" AND ");
            write_predicate_operand(out, high)?;
        }
        Expr::Like(like) => {
            let keyword = if like.case_insensitive {
                "ILIKE"
            } else {
                "LIKE"
            };
            write_pattern_match(out, like, keyword)?;
        }
        Expr::SimilarTo(like) => write_pattern_match(out, like, "SIMILAR TO")?,
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            write_predicate_operand(out, expr)?;
            out.push_str(if *negated { " NOT IN (" } else { " IN (" });
            write_list(out, list)?;
            out.push(')');
        }
        Expr::Case(Case {
            expr,
            when_then_expr,
            else_expr,
        }) => {
            out.push_str("CASE");
            if let Some(operand) = expr {
                out.push(' ');
                write_expr(out, operand)?;
            }
            for (when, then) in when_then_expr {
                out.push_str(" WHEN ");
                write_expr(out, when)?;
                out.push_str(" THEN ");
                write_expr(out, then)?;
            }
            if let Some(otherwise) = else_expr {
                out.push_str(" ELSE ");
                write_expr(out, otherwise)?;
            }
            out.push_str(" END");
        }
        // CAST is left out of labels, as it is out of today's names; a cast
        // string literal to a date/time type is the typed literal SQL writes.
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            match (
                typed_literal_keyword(expr, field.data_type()),
                expr.as_ref(),
            ) {
                (Some(keyword), Expr::Literal(value, _)) => {
                    let text = string_value(value)?;
                    write!(out, "{keyword} {}", quoted(text)).ok()?;
                }
                _ => write_expr(out, expr)?,
            }
        }
        Expr::ScalarFunction(ScalarFunction { func, args }) => {
            write_function(out, func.name(), args)?
        }
        Expr::AggregateFunction(aggregate) => write_aggregate(out, aggregate)?,
        // A window function is labeled where its window node computes it.
        Expr::WindowFunction(_) => return None,
        Expr::ScalarSubquery(subquery) => {
            write!(out, "({})", subquery_text(subquery)?).ok()?;
        }
        Expr::Exists(Exists { subquery, negated }) => {
            let keyword = if *negated { "NOT EXISTS" } else { "EXISTS" };
            write!(out, "{keyword} ({})", subquery_text(subquery)?).ok()?;
        }
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => {
            write_predicate_operand(out, expr)?;
            let keyword = if *negated { "NOT IN" } else { "IN" };
            write!(out, " {keyword} ({})", subquery_text(subquery)?).ok()?;
        }
        Expr::SetComparison(SetComparison {
            expr,
            subquery,
            op,
            quantifier,
        }) => {
            write_predicate_operand(out, expr)?;
            let query = subquery_text(subquery)?;
            write!(out, " {} {quantifier} ({query})", operator_text(op)).ok()?;
        }
        #[expect(deprecated)]
        Expr::Wildcard { qualifier, .. } => match qualifier {
            Some(qualifier) => write!(out, "{qualifier}.*").ok()?,
            None => out.push('*'),
        },
        Expr::GroupingSet(set) => write_grouping_set(out, set)?,
        Expr::Unnest(Unnest { expr, outer }) => {
            out.push_str(if *outer { "unnest_outer(" } else { "unnest(" });
            write_expr(out, expr)?;
            out.push(')');
        }
        Expr::HigherOrderFunction(HigherOrderFunction { func, args }) => {
            write_call(out, func.name(), args)?
        }
        Expr::Lambda(Lambda { params, body }) => {
            match params.as_slice() {
                [param] => out.push_str(param),
                params => write!(out, "({})", params.join(", ")).ok()?,
            }
            out.push_str(" -> ");
            write_expr(out, body)?;
        }
        Expr::LambdaVariable(LambdaVariable { name, .. }) => out.push_str(name),
    }
    Some(())
}

fn write_postfix(out: &mut String, operand: &Expr, suffix: &str) -> Option<()> {
    write_predicate_operand(out, operand)?;
    out.push(' ');
    out.push_str(suffix);
    Some(())
}

fn write_pattern_match(out: &mut String, like: &Like, keyword: &str) -> Option<()> {
    write_predicate_operand(out, &like.expr)?;
    out.push(' ');
    if like.negated {
        out.push_str("NOT ");
    }
    out.push_str(keyword);
    out.push(' ');
    write_predicate_operand(out, &like.pattern)?;
    if let Some(escape) = like.escape_char {
        write!(out, " ESCAPE {}", quoted(&escape.to_string())).ok()?;
    }
    Some(())
}

fn write_call(out: &mut String, name: &str, args: &[Expr]) -> Option<()> {
    out.push_str(name);
    out.push('(');
    write_list(out, args)?;
    out.push(')');
    Some(())
}

/// A scalar function call, or the syntax the planner made it from.
fn write_function(out: &mut String, name: &str, args: &[Expr]) -> Option<()> {
    let indexed =
        |out: &mut String, base: &Expr| write_operand(out, base, |b| b < Binding::Atom);
    match (name, args) {
        // `a[i]`
        ("array_element", [base, index]) => {
            indexed(out, base)?;
            out.push('[');
            write_expr(out, index)?;
            out.push(']');
        }
        // `a[lo:hi]`, `a[lo:hi:stride]`; the planner adds a stride of 1.
        ("array_slice", [base, low, high, rest @ ..]) if rest.len() <= 1 => {
            indexed(out, base)?;
            out.push('[');
            write_expr(out, low)?;
            out.push(':');
            write_expr(out, high)?;
            match rest {
                [Expr::Literal(stride, _)] if is_one(stride) => {}
                [stride] => {
                    out.push(':');
                    write_expr(out, stride)?;
                }
                _ => {}
            }
            out.push(']');
        }
        // `s['f']`, `s['f']['g']`, `m[k]`: a field name is quoted as typed.
        ("get_field", [base, keys @ ..]) if !keys.is_empty() => {
            indexed(out, base)?;
            for key in keys {
                match key {
                    Expr::Literal(value, _) if string_value(value).is_some() => {
                        write!(out, "[{}]", quoted(string_value(value)?)).ok()?;
                    }
                    key => {
                        out.push('[');
                        write_expr(out, key)?;
                        out.push(']');
                    }
                }
            }
        }
        // `[1, 2]`
        ("make_array", items) => {
            out.push('[');
            write_list(out, items)?;
            out.push(']');
        }
        (name, args) => write_call(out, name, args)?,
    }
    Some(())
}

/// `name([DISTINCT ]args[ ORDER BY keys])[ IGNORE NULLS][ FILTER (WHERE f)]`,
/// or `name(args) WITHIN GROUP (ORDER BY key)` for an ordered-set aggregate,
/// whose sort key the planner prepends to its arguments.
fn write_aggregate(out: &mut String, aggregate: &AggregateFunction) -> Option<()> {
    let AggregateFunction { func, params } = aggregate;
    let AggregateFunctionParams {
        args,
        distinct,
        filter,
        order_by,
        null_treatment,
    } = params;
    let within_group = func.supports_within_group_clause() && !order_by.is_empty();
    out.push_str(func.name());
    out.push('(');
    if *distinct {
        out.push_str("DISTINCT ");
    }
    if within_group {
        write_list(out, args.get(1..).unwrap_or_default())?;
    } else {
        write_list(out, args)?;
    }
    let keys = order_by
        .iter()
        .map(sort_text)
        .collect::<Option<Vec<_>>>()?
        .join(", ");
    if within_group {
        write!(out, ") WITHIN GROUP (ORDER BY {keys})").ok()?;
    } else {
        if !order_by.is_empty() {
            write!(out, " ORDER BY {keys}").ok()?;
        }
        out.push(')');
    }
    if let Some(null_treatment) = null_treatment {
        write!(out, " {null_treatment}").ok()?;
    }
    if let Some(filter) = filter {
        out.push_str(" FILTER (WHERE ");
        write_expr(out, filter)?;
        out.push(')');
    }
    Some(())
}

fn write_grouping_set(out: &mut String, set: &GroupingSet) -> Option<()> {
    match set {
        GroupingSet::Rollup(exprs) | GroupingSet::Cube(exprs) => {
            let keyword = if matches!(set, GroupingSet::Rollup(_)) {
                "ROLLUP"
            } else {
                "CUBE"
            };
            write!(out, "{keyword} (").ok()?;
            write_list(out, exprs)?;
            out.push(')');
        }
        GroupingSet::GroupingSets(lists) => {
            out.push_str("GROUPING SETS (");
            for (i, exprs) in lists.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('(');
                write_list(out, exprs)?;
                out.push(')');
            }
            out.push(')');
        }
    }
    Some(())
}

/// The SQL of a subquery's plan: DuckDB's choice for a label, and the only
/// one that fits every kind (`EXISTS`, `IN`, `= ANY`, scalar).
///
/// None for a plan the unparser does not write back as the SQL it was
/// planned from: an `unnest`, whose columns it writes under the planner's
/// names (`UNNEST(make_array(outer_ref(o.x)))`), and `ARRAY(subquery)`,
/// which it writes as the aggregate it is planned as.
fn subquery_text(subquery: &Subquery) -> Option<String> {
    let plan = subquery.subquery.as_ref();
    let unnests = plan
        .exists(|node| Ok(matches!(node, LogicalPlan::Unnest(_))))
        .ok()?;
    if unnests || is_array_subquery(plan) {
        return None;
    }
    let mut statement = Unparser::default()
        .with_pretty(true)
        .plan_to_sql(plan)
        .ok()?;
    // The unparser writes the planner's `count(*)` as what it plans into,
    // and every sort key's NULL ordering
    let _ = statement.visit(&mut AsTyped);
    Some(statement.to_string())
}

/// Rewrites each select item `count(1) AS "count(*)"`, which the unparser
/// writes for the planner's form of `count(*)` (also over a window), back
/// into `count(*)`, and drops the defaults the unparser writes out: each
/// sort key's `ASC`, and its NULL ordering where it is the default (`NULLS
/// LAST` ascending, `NULLS FIRST` descending), in `ORDER BY`, in a window
/// and in an aggregate, and a window's frame where it is the one the window
/// has without one.
struct AsTyped;

impl VisitorMut for AsTyped {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut ast::Query) -> ControlFlow<()> {
        count_star_items(query.body.as_mut());
        if let Some(ast::OrderBy {
            kind: ast::OrderByKind::Expressions(keys),
            ..
        }) = &mut query.order_by
        {
            keys.iter_mut().for_each(drop_sort_defaults);
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut ast::Expr) -> ControlFlow<()> {
        let ast::Expr::Function(function) = expr else {
            return ControlFlow::Continue(());
        };
        if let ast::FunctionArguments::List(list) = &mut function.args {
            for clause in &mut list.clauses {
                if let ast::FunctionArgumentClause::OrderBy(keys) = clause {
                    keys.iter_mut().for_each(drop_sort_defaults);
                }
            }
        }
        function
            .within_group
            .iter_mut()
            .for_each(drop_sort_defaults);
        if let Some(ast::WindowType::WindowSpec(window)) = &mut function.over {
            window.order_by.iter_mut().for_each(drop_sort_defaults);
            if window
                .window_frame
                .as_ref()
                .is_some_and(|frame| is_default_frame(frame, !window.order_by.is_empty()))
            {
                window.window_frame = None;
            }
        }
        ControlFlow::Continue(())
    }
}

/// Drops the direction of `key` where it is the default (`ASC`), and its
/// NULL ordering where that is the direction's default.
fn drop_sort_defaults(key: &mut ast::OrderByExpr) {
    let descending = key.options.asc == Some(false);
    if key.options.nulls_first == Some(descending) {
        key.options.nulls_first = None;
    }
    if key.options.asc == Some(true) {
        key.options.asc = None;
    }
}

/// Whether `frame` is the frame a window has where none is written: up to
/// the current row's peers with an `ORDER BY` (`RANGE BETWEEN UNBOUNDED
/// PRECEDING AND CURRENT ROW`), the whole partition without one.
fn is_default_frame(frame: &ast::WindowFrame, ordered: bool) -> bool {
    use ast::{WindowFrameBound, WindowFrameUnits};
    let from_start = matches!(frame.start_bound, WindowFrameBound::Preceding(None));
    let to_current = matches!(frame.end_bound, Some(WindowFrameBound::CurrentRow));
    let to_end = matches!(frame.end_bound, Some(WindowFrameBound::Following(None)));
    if ordered {
        from_start && to_current && frame.units == WindowFrameUnits::Range
    } else {
        from_start
            && to_end
            && matches!(
                frame.units,
                WindowFrameUnits::Rows | WindowFrameUnits::Range
            )
    }
}

fn count_star_items(body: &mut ast::SetExpr) {
    match body {
        ast::SetExpr::Select(select) => {
            for item in &mut select.projection {
                let ast::SelectItem::ExprWithAlias { expr, alias } = item else {
                    continue;
                };
                let ast::Expr::Function(function) = expr else {
                    continue;
                };
                let ast::FunctionArguments::List(list) = &mut function.args else {
                    continue;
                };
                let counts_one = (alias.value == "count(*)"
                    || alias.value.starts_with("count(*) "))
                    && function.name.to_string().eq_ignore_ascii_case("count")
                    && matches!(
                        list.args.as_slice(),
                        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                            ast::Expr::Value(value)
                        ))] if value.value == ast::Value::Number("1".to_string(), false)
                    );
                if counts_one {
                    list.args =
                        vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)];
                    *item = ast::SelectItem::UnnamedExpr(expr.clone());
                }
            }
        }
        ast::SetExpr::SetOperation { left, right, .. } => {
            count_star_items(left);
            count_star_items(right);
        }
        _ => {}
    }
}

fn operator_text(op: &Operator) -> String {
    match op {
        // Displayed as `BIT_XOR`; the operator typed in SQL is `^`.
        Operator::BitwiseXor => "^".to_string(),
        op => op.to_string(),
    }
}

/// The keyword of the typed literal that a cast of a string literal to
/// `data_type` is (`DATE '2020-01-01'`), if there is one.
fn typed_literal_keyword(expr: &Expr, data_type: &DataType) -> Option<&'static str> {
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    string_value(value)?;
    match data_type {
        DataType::Date32 | DataType::Date64 => Some("DATE"),
        DataType::Time32(_) | DataType::Time64(_) => Some("TIME"),
        DataType::Timestamp(_, _) => Some("TIMESTAMP"),
        DataType::Interval(_) => Some("INTERVAL"),
        _ => None,
    }
}

fn string_value(value: &ScalarValue) -> Option<&str> {
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s),
        ScalarValue::Dictionary(_, inner) => string_value(inner),
        _ => None,
    }
}

fn is_one(value: &ScalarValue) -> bool {
    matches!(
        value,
        ScalarValue::Int64(Some(1))
            | ScalarValue::Int32(Some(1))
            | ScalarValue::UInt64(Some(1))
    )
}

fn is_negative_number(value: &ScalarValue) -> bool {
    let zero = ScalarValue::new_zero(&value.data_type());
    match zero {
        Ok(zero) if value.data_type().is_numeric() && !value.is_null() => {
            value.partial_cmp(&zero) == Some(std::cmp::Ordering::Less)
        }
        _ => false,
    }
}

/// `'text'`, with single quotes doubled.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A literal as a value: see the module documentation.
fn literal_text(value: &ScalarValue) -> String {
    if value.is_null() {
        return "NULL".to_string();
    }
    if let Some(text) = string_value(value) {
        let one_word =
            !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_');
        return if one_word {
            text.to_string()
        } else {
            quoted(text)
        };
    }
    match value {
        // `{:?}` keeps the decimal point of a whole number (`2.0`).
        ScalarValue::Float16(Some(v)) => format!("{v:?}"),
        ScalarValue::Float32(Some(v)) => format!("{v:?}"),
        ScalarValue::Float64(Some(v)) => format!("{v:?}"),
        ScalarValue::IntervalYearMonth(Some(months)) => {
            interval_text(i64::from(*months), 0, 0)
        }
        ScalarValue::IntervalDayTime(Some(v)) => {
            interval_text(0, i64::from(v.days), i64::from(v.milliseconds) * 1_000_000)
        }
        ScalarValue::IntervalMonthDayNano(Some(v)) => {
            interval_text(i64::from(v.months), i64::from(v.days), v.nanoseconds)
        }
        ScalarValue::Date32(_) | ScalarValue::Date64(_) => format!("DATE '{value}'"),
        ScalarValue::Time32Second(_)
        | ScalarValue::Time32Millisecond(_)
        | ScalarValue::Time64Microsecond(_)
        | ScalarValue::Time64Nanosecond(_) => format!("TIME '{value}'"),
        ScalarValue::TimestampSecond(..)
        | ScalarValue::TimestampMillisecond(..)
        | ScalarValue::TimestampMicrosecond(..)
        | ScalarValue::TimestampNanosecond(..) => format!("TIMESTAMP '{value}'"),
        ScalarValue::Binary(Some(bytes))
        | ScalarValue::LargeBinary(Some(bytes))
        | ScalarValue::BinaryView(Some(bytes))
        | ScalarValue::FixedSizeBinary(_, Some(bytes)) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
            format!("X'{hex}'")
        }
        ScalarValue::Dictionary(_, inner) => literal_text(inner),
        value => value.to_string(),
    }
}

/// `INTERVAL '1 year 2 months 3 days 4 hours 5 minutes 6.5 seconds'`, with
/// only the parts that are not zero.
fn interval_text(months: i64, days: i64, nanoseconds: i64) -> String {
    const NANOS_PER_SECOND: i64 = 1_000_000_000;
    let mut parts = Vec::new();
    let mut part = |value: i64, unit: &str| {
        if value != 0 {
            let plural = if value.abs() == 1 { "" } else { "s" };
            parts.push(format!("{value} {unit}{plural}"));
        }
    };
    part(months / 12, "year");
    part(months % 12, "month");
    part(days, "day");
    part(nanoseconds / (3600 * NANOS_PER_SECOND), "hour");
    part(nanoseconds / (60 * NANOS_PER_SECOND) % 60, "minute");
    let seconds = nanoseconds % (60 * NANOS_PER_SECOND);
    if seconds % NANOS_PER_SECOND == 0 {
        part(seconds / NANOS_PER_SECOND, "second");
    } else {
        let sign = if seconds < 0 { "-" } else { "" };
        let seconds = seconds.abs();
        let fraction = format!("{:09}", seconds % NANOS_PER_SECOND);
        parts.push(format!(
            "{sign}{}.{} seconds",
            seconds / NANOS_PER_SECOND,
            fraction.trim_end_matches('0')
        ));
    }
    if parts.is_empty() {
        parts.push("0 seconds".to_string());
    }
    format!("INTERVAL '{}'", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{Field, IntervalMonthDayNano};
    use datafusion_expr::{col, lit};

    use super::*;

    fn text(expr: Expr) -> String {
        sql_text(&expr).unwrap()
    }

    #[test]
    fn parentheses_follow_sql_precedence() {
        let (a, b, c) = (col("a"), col("b"), col("c"));
        assert_eq!(text(-(c.clone() + lit(1))), "-(c + 1)");
        assert_eq!(text(-c.clone()), "-c");
        assert_eq!(text(-lit(-1)), "-(-1)");
        assert_eq!(text(c.clone() - lit(-1)), "c - -1");
        assert_eq!(text(c.clone().gt(lit(1)).eq(b.clone())), "(c > 1) = b");
        assert_eq!(text(b.clone().eq(c.clone().gt(lit(1)))), "b = (c > 1)");
        assert_eq!(text(!c.clone().gt(lit(1))), "NOT (c > 1)");
        assert_eq!(text(!(a.clone().and(b.clone()))), "NOT (a AND b)");
        assert_eq!(text(a.clone().and(b.clone()).or(c.clone())), "a AND b OR c");
        assert_eq!(
            text(a.clone().and(b.clone().or(c.clone()))),
            "a AND (b OR c)"
        );
        assert_eq!(text(a.clone() - (b.clone() - c.clone())), "a - (b - c)");
        assert_eq!(text((a.clone() - b.clone()) - c.clone()), "a - b - c");
        assert_eq!(text((a.clone() + b.clone()).is_null()), "a + b IS NULL");
        assert_eq!(text(a.clone().eq(b.clone()).is_null()), "(a = b) IS NULL");
        assert_eq!(
            text(a.clone().between(b.clone(), c.clone())),
            "a BETWEEN b AND c"
        );
        let xor = Expr::BinaryExpr(BinaryExpr::new(
            Box::new(a.clone()),
            Operator::BitwiseXor,
            Box::new(b.clone()),
        ));
        assert_eq!(text(xor), "a ^ b");
        let concat = Expr::BinaryExpr(BinaryExpr::new(
            Box::new(a.clone()),
            Operator::StringConcat,
            Box::new(b.clone()),
        ));
        let shifted = Expr::BinaryExpr(BinaryExpr::new(
            Box::new(concat.clone()),
            Operator::BitwiseShiftLeft,
            Box::new(lit(1)),
        ));
        // Two different operators of the same binding: parenthesized.
        assert_eq!(text(shifted), "(a || b) << 1");
    }

    #[test]
    fn literals_read_as_values() {
        assert_eq!(text(lit(2.0_f64)), "2.0");
        assert_eq!(text(lit(2.5_f64)), "2.5");
        assert_eq!(text(lit(ScalarValue::Decimal128(Some(250), 10, 2))), "2.50");
        assert_eq!(text(lit(1.5_f32)), "1.5");
        assert_eq!(text(lit("foo")), "foo");
        assert_eq!(text(lit("x%")), "'x%'");
        assert_eq!(text(lit("")), "''");
        assert_eq!(text(lit("it's")), "'it''s'");
        assert_eq!(text(lit(ScalarValue::Utf8(None))), "NULL");
        assert_eq!(text(lit(true)), "true");
        assert_eq!(
            text(lit(ScalarValue::IntervalMonthDayNano(Some(
                IntervalMonthDayNano::new(14, 1, 7_200_000_000_000)
            )))),
            "INTERVAL '1 year 2 months 1 day 2 hours'"
        );
        assert_eq!(
            text(lit(ScalarValue::IntervalMonthDayNano(Some(
                IntervalMonthDayNano::new(0, 0, -1_500_000_000)
            )))),
            "INTERVAL '-1.5 seconds'"
        );
        let date = Expr::Cast(Cast::new(Box::new(lit("2020-01-01")), DataType::Date32));
        assert_eq!(text(date), "DATE '2020-01-01'");
        let cast = Expr::Cast(Cast::new(Box::new(col("c")), DataType::Float64));
        assert_eq!(text(cast), "c");
        assert_eq!(
            text(lit(ScalarValue::Binary(Some(vec![1, 171])))),
            "X'01AB'"
        );
    }

    /// Forms a query's result cannot show without more setup: parameters,
    /// variables, grouping sets, lambdas, wildcards.
    #[test]
    fn forms_beyond_a_select_item() {
        let placeholder =
            Expr::Placeholder(Placeholder::new_with_field("$1".into(), None));
        assert_eq!(text(placeholder + lit(1)), "$1 + 1");
        let variable = Expr::ScalarVariable(
            Arc::new(Field::new("v", DataType::Int64, true)),
            vec!["@x".to_string()],
        );
        assert_eq!(text(variable), "@x");
        let rollup = Expr::GroupingSet(GroupingSet::Rollup(vec![col("a"), col("b")]));
        assert_eq!(text(rollup), "ROLLUP (a, b)");
        let sets =
            Expr::GroupingSet(GroupingSet::GroupingSets(vec![vec![col("a")], vec![]]));
        assert_eq!(text(sets), "GROUPING SETS ((a), ())");
        let lambda = Expr::Lambda(Lambda::new(vec!["v".to_string()], col("v") + lit(1)));
        assert_eq!(text(lambda), "v -> v + 1");
        #[expect(deprecated)]
        let wildcard = Expr::Wildcard {
            qualifier: None,
            options: Box::default(),
        };
        assert_eq!(text(wildcard), "*");
        assert_eq!(text(Expr::Unnest(Unnest::new(col("arr")))), "unnest(arr)");
        // A planner alias inside an expression shows what it aliases.
        assert_eq!(text(col("a").alias("x") + lit(1)), "a + 1");
    }
}
