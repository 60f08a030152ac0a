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

//! Labels of the outermost `SELECT` items that the planner writes as other
//! expressions: a row compared with a row or a row subquery, a row `IN` a
//! subquery or a list of rows, a row compared with `ANY`/`ALL` of a
//! subquery, and `ARRAY(subquery)`.
//!
//! A row `IN` a subquery is planned as a `CASE` over two `EXISTS`, and
//! `ARRAY(subquery)` as an aggregate in a scalar subquery: the expression
//! a label is traced to ([`super::label_for`]) is the rewrite, not what the
//! user typed. For these items the label is the item's SQL text instead,
//! as the parser read it.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr as SQLExpr, Query, SelectItem, SetExpr, visit_expressions};

use crate::expr::array_subquery::array_subquery;
use crate::expr::row_comparison::{
    is_row_between, is_row_compared_with_rows, is_row_comparison, is_row_in_list,
    is_row_subquery_comparison,
};

/// The SQL text of each item of the outermost `SELECT` list (of the first
/// branch, for a set operation) that the planner rewrites, `None` for the
/// others; empty where the list has a wildcard, whose columns the items do
/// not number.
pub(super) fn rewritten_item_texts(query: &Query) -> Vec<Option<String>> {
    let mut body = query.body.as_ref();
    let select = loop {
        match body {
            SetExpr::Select(select) => break select,
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(query) => body = query.body.as_ref(),
            _ => return vec![],
        }
    };
    let mut texts = vec![];
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(expr) => {
                texts.push(is_rewritten(expr).then(|| expr.to_string()))
            }
            SelectItem::ExprWithAlias { .. } => texts.push(None),
            // A wildcard, or an item of several aliases, is several columns
            SelectItem::Wildcard(_)
            | SelectItem::QualifiedWildcard(..)
            | SelectItem::ExprWithAliases { .. } => return vec![],
        }
    }
    texts
}

/// Whether `expr` holds a form the planner writes as another expression.
fn is_rewritten(expr: &SQLExpr) -> bool {
    visit_expressions(expr, |expr| {
        let rewritten = match expr {
            SQLExpr::InSubquery { expr, subquery, .. } => {
                is_row_compared_with_rows(expr, subquery)
            }
            SQLExpr::InList { expr, list, .. } => is_row_in_list(expr, list),
            SQLExpr::Between {
                expr, low, high, ..
            } => is_row_between(expr, low, high),
            SQLExpr::BinaryOp { left, op, right } => {
                is_row_comparison(left, op, right)
                    || is_row_subquery_comparison(left, op, right)
            }
            SQLExpr::AnyOp { left, right, .. } | SQLExpr::AllOp { left, right, .. } => {
                matches!(right.as_ref(), SQLExpr::Subquery(subquery)
                    if is_row_compared_with_rows(left, subquery))
            }
            SQLExpr::Function(function) => array_subquery(function).is_some(),
            _ => false,
        };
        if rewritten {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;

    use super::rewritten_item_texts;

    fn texts(sql: &str) -> Vec<Option<String>> {
        let statements = Parser::parse_sql(&GenericDialect {}, sql).unwrap();
        let [Statement::Query(query)] = statements.as_slice() else {
            panic!("not one query: {sql}");
        };
        rewritten_item_texts(query)
    }

    #[test]
    fn rewritten_items_are_labelled_as_typed() {
        assert_eq!(
            texts(
                "SELECT a, (a, b) IN (SELECT b, a FROM t x), NOT (a, b) = (1, 2), \
                 ARRAY(SELECT b FROM t ORDER BY b DESC) AS l, (a, b) IN ((1, 2)), a + 1, \
                 ROW(a, b) IN (SELECT b, a FROM t), row(a, b) >= ALL (SELECT b, a FROM t), \
                 row(a) IN (SELECT b FROM t), row(a, b) = ANY (SELECT s FROM t), \
                 (a, b) NOT BETWEEN ROW(1, 2) AND (3, 4), (a, b) BETWEEN s AND (3, 4) \
                 FROM t"
            ),
            vec![
                None,
                Some("(a, b) IN (SELECT b, a FROM t x)".to_string()),
                Some("NOT (a, b) = (1, 2)".to_string()),
                None,
                Some("(a, b) IN ((1, 2))".to_string()),
                None,
                Some("ROW(a, b) IN (SELECT b, a FROM t)".to_string()),
                Some("row(a, b) >= ALL(SELECT b, a FROM t)".to_string()),
                None,
                None,
                Some("(a, b) NOT BETWEEN ROW(1, 2) AND (3, 4)".to_string()),
                None,
            ]
        );
    }

    #[test]
    fn a_wildcard_leaves_every_item_to_the_trace() {
        assert!(texts("SELECT *, (a, b) IN (SELECT b, a FROM t) FROM t").is_empty());
    }
}
