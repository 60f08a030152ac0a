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

//! `IS [NOT] DISTINCT FROM` binds tighter than `AND`, `OR` and `NOT`.
//!
//! sqlparser 0.62 parses the right operand of `IS [NOT] DISTINCT FROM` as a
//! whole expression, so `a IS DISTINCT FROM b AND c` became `a IS DISTINCT
//! FROM (b AND c)`. Over booleans that is a wrong answer without an error
//! (`true IS DISTINCT FROM false AND false` was true; PostgreSQL says
//! false), and over other types a confusing one ("Cannot infer common
//! argument type for logical boolean operation Int32 AND Boolean").
//!
//! The parse keeps each parenthesized expression as `Expr::Nested`, and an
//! operator parsed by precedence never has, as its right operand, an
//! unparenthesized operator that binds as loosely as it does or more
//! loosely. Where the tree has one, the operand was swallowed by `IS
//! DISTINCT FROM`, and [`reassociate`] rotates it back, bottom up, by
//! PostgreSQL's precedence (`IS` above `NOT` above `AND` above `OR`; the
//! `IS` forms associate to the left):
//!
//! ```text
//! a IS DISTINCT FROM (b AND c)   =>  (a IS DISTINCT FROM b) AND c
//! x AND (a IS DISTINCT FROM b) OR c  =>  (x AND a IS DISTINCT FROM b) OR c
//! NOT (a IS DISTINCT FROM b AND c)   =>  (NOT a IS DISTINCT FROM b) AND c
//! a IS DISTINCT FROM (b IS NULL)     =>  (a IS DISTINCT FROM b) IS NULL
//! ```
//!
//! (The parentheses above show the trees; a query that writes them keeps
//! its meaning.) The rotated tree prints as the SQL typed, so column labels
//! are unchanged.
//!
//! The planner does this to each statement and expression it is given, not
//! the parser alone, so that a statement a program parsed with sqlparser
//! itself is read right too. A tree built by hand with an operator of
//! lower precedence as a right operand, and no `Nested` around it, is read
//! as it prints (`a AND b OR c`), as DataFusion's unparser, which writes
//! such operands nested, never builds.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr as SQLExpr, Query, Statement, UnaryOperator, VisitMut,
    VisitorMut,
};
use sqlparser::tokenizer::Span;

/// `statement` with each operand that `IS [NOT] DISTINCT FROM` swallowed
/// put back in its place.
pub(crate) fn reassociate_statement(statement: &mut Statement) {
    let _ = statement.visit(&mut Reassociate);
}

/// `query` with each operand that `IS [NOT] DISTINCT FROM` swallowed put
/// back in its place.
pub(crate) fn reassociate_query(query: &mut Query) {
    let _ = query.visit(&mut Reassociate);
}

/// `expr` with each operand that `IS [NOT] DISTINCT FROM` swallowed put
/// back in its place.
pub(crate) fn reassociate(expr: &mut SQLExpr) {
    let _ = expr.visit(&mut Reassociate);
}

struct Reassociate;

impl VisitorMut for Reassociate {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut SQLExpr) -> ControlFlow<()> {
        if swallowed_operand(expr) {
            let taken = std::mem::replace(expr, placeholder());
            *expr = rotated(taken);
        }
        ControlFlow::Continue(())
    }
}

/// How tightly an operator binds, where it matters here: PostgreSQL's
/// order, which sqlparser's precedence values follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Binding {
    Or,
    And,
    Not,
    Is,
}

fn binding(expr: &SQLExpr) -> Option<Binding> {
    match expr {
        SQLExpr::BinaryOp {
            op: BinaryOperator::Or,
            ..
        } => Some(Binding::Or),
        SQLExpr::BinaryOp {
            op: BinaryOperator::And,
            ..
        } => Some(Binding::And),
        SQLExpr::UnaryOp {
            op: UnaryOperator::Not,
            ..
        } => Some(Binding::Not),
        SQLExpr::IsDistinctFrom(..)
        | SQLExpr::IsNotDistinctFrom(..)
        | SQLExpr::IsNull(_)
        | SQLExpr::IsNotNull(_)
        | SQLExpr::IsTrue(_)
        | SQLExpr::IsNotTrue(_)
        | SQLExpr::IsFalse(_)
        | SQLExpr::IsNotFalse(_)
        | SQLExpr::IsUnknown(_)
        | SQLExpr::IsNotUnknown(_) => Some(Binding::Is),
        _ => None,
    }
}

/// Whether `expr` holds an operand that a parse by precedence would have
/// left outside it: as the right operand of a left-associative operator,
/// one binding as loosely or more loosely (a prefix `NOT` there has no left
/// operand to give back, and stays); as the operand of `NOT`, one binding
/// more loosely.
fn swallowed_operand(expr: &SQLExpr) -> bool {
    match expr {
        SQLExpr::BinaryOp {
            op: BinaryOperator::Or | BinaryOperator::And,
            right,
            ..
        }
        | SQLExpr::IsDistinctFrom(_, right)
        | SQLExpr::IsNotDistinctFrom(_, right) => {
            let prefix_not = matches!(
                right.as_ref(),
                SQLExpr::UnaryOp {
                    op: UnaryOperator::Not,
                    ..
                }
            );
            match (binding(right), binding(expr)) {
                (Some(inner), Some(outer)) => !prefix_not && inner <= outer,
                _ => false,
            }
        }
        SQLExpr::UnaryOp {
            op: UnaryOperator::Not,
            expr: operand,
        } => binding(operand).is_some_and(|inner| inner < Binding::Not),
        _ => false,
    }
}

/// `expr` with its swallowed operand's operator lifted above it: the
/// operand's leftmost operand takes the operand's place in `expr`, and the
/// result takes that operand's place in the lifted operator.
#[cfg_attr(feature = "recursive_protection", recursive::recursive)]
fn rotated(expr: SQLExpr) -> SQLExpr {
    type Rebuild = Box<dyn FnOnce(SQLExpr) -> SQLExpr>;
    // The operator swallowed, and `expr` with a hole where it was
    let (swallowed, rebuild): (SQLExpr, Rebuild) = match expr {
        SQLExpr::BinaryOp { left, op, right } => (
            *right,
            Box::new(move |right| SQLExpr::BinaryOp {
                left,
                op,
                right: Box::new(right),
            }),
        ),
        SQLExpr::IsDistinctFrom(left, right) => (
            *right,
            Box::new(move |right| SQLExpr::IsDistinctFrom(left, Box::new(right))),
        ),
        SQLExpr::IsNotDistinctFrom(left, right) => (
            *right,
            Box::new(move |right| SQLExpr::IsNotDistinctFrom(left, Box::new(right))),
        ),
        SQLExpr::UnaryOp { op, expr } => (
            *expr,
            Box::new(move |expr| SQLExpr::UnaryOp {
                op,
                expr: Box::new(expr),
            }),
        ),
        other => return other,
    };
    // The swallowed operator's leftmost operand, and the operator with a
    // hole there
    type Reassemble = Box<dyn FnOnce(Box<SQLExpr>) -> SQLExpr>;
    let (leftmost, reassemble): (SQLExpr, Reassemble) = match swallowed {
        SQLExpr::BinaryOp { left, op, right } => (
            *left,
            Box::new(move |left| SQLExpr::BinaryOp { left, op, right }),
        ),
        SQLExpr::IsDistinctFrom(left, right) => (
            *left,
            Box::new(move |left| SQLExpr::IsDistinctFrom(left, right)),
        ),
        SQLExpr::IsNotDistinctFrom(left, right) => (
            *left,
            Box::new(move |left| SQLExpr::IsNotDistinctFrom(left, right)),
        ),
        SQLExpr::IsNull(operand) => (*operand, Box::new(SQLExpr::IsNull)),
        SQLExpr::IsNotNull(operand) => (*operand, Box::new(SQLExpr::IsNotNull)),
        SQLExpr::IsTrue(operand) => (*operand, Box::new(SQLExpr::IsTrue)),
        SQLExpr::IsNotTrue(operand) => (*operand, Box::new(SQLExpr::IsNotTrue)),
        SQLExpr::IsFalse(operand) => (*operand, Box::new(SQLExpr::IsFalse)),
        SQLExpr::IsNotFalse(operand) => (*operand, Box::new(SQLExpr::IsNotFalse)),
        SQLExpr::IsUnknown(operand) => (*operand, Box::new(SQLExpr::IsUnknown)),
        SQLExpr::IsNotUnknown(operand) => (*operand, Box::new(SQLExpr::IsNotUnknown)),
        // `swallowed_operand` admits no other operator; put it back as it was
        other => return rebuild(other),
    };
    // The leftmost operand goes back into `expr`, which may in turn have
    // swallowed part of it
    let mut inner = rebuild(leftmost);
    if swallowed_operand(&inner) {
        inner = rotated(inner);
    }
    reassemble(Box::new(inner))
}

fn placeholder() -> SQLExpr {
    SQLExpr::Identifier(sqlparser::ast::Ident::with_span(Span::empty(), ""))
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;

    use super::*;

    fn parsed(sql: &str) -> SQLExpr {
        let mut expr = Parser::new(&GenericDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap();
        reassociate(&mut expr);
        expr
    }

    /// The tree with every operator parenthesized.
    fn tree(expr: &SQLExpr) -> String {
        match expr {
            SQLExpr::BinaryOp { left, op, right } => {
                format!("({} {op} {})", tree(left), tree(right))
            }
            SQLExpr::UnaryOp { op, expr } => format!("({op} {})", tree(expr)),
            SQLExpr::IsDistinctFrom(left, right) => {
                format!("({} IS DISTINCT FROM {})", tree(left), tree(right))
            }
            SQLExpr::IsNotDistinctFrom(left, right) => {
                format!("({} IS NOT DISTINCT FROM {})", tree(left), tree(right))
            }
            SQLExpr::IsNull(operand) => format!("({} IS NULL)", tree(operand)),
            SQLExpr::IsTrue(operand) => format!("({} IS TRUE)", tree(operand)),
            SQLExpr::Nested(inner) => format!("[{}]", tree(inner)),
            other => other.to_string(),
        }
    }

    #[test]
    fn operands_swallowed_by_is_distinct_from_go_back() {
        let cases = [
            (
                "a IS DISTINCT FROM b AND c",
                "((a IS DISTINCT FROM b) AND c)",
            ),
            (
                "a IS NOT DISTINCT FROM b OR c AND d",
                "((a IS NOT DISTINCT FROM b) OR (c AND d))",
            ),
            (
                "a IS DISTINCT FROM b AND c OR d",
                "(((a IS DISTINCT FROM b) AND c) OR d)",
            ),
            (
                "x AND a IS DISTINCT FROM b OR c",
                "((x AND (a IS DISTINCT FROM b)) OR c)",
            ),
            (
                "x OR a IS DISTINCT FROM b AND c",
                "(x OR ((a IS DISTINCT FROM b) AND c))",
            ),
            (
                "NOT a IS DISTINCT FROM b AND c",
                "((NOT (a IS DISTINCT FROM b)) AND c)",
            ),
            (
                "a IS DISTINCT FROM b IS NULL",
                "((a IS DISTINCT FROM b) IS NULL)",
            ),
            (
                "a IS DISTINCT FROM b IS NOT DISTINCT FROM c",
                "((a IS DISTINCT FROM b) IS NOT DISTINCT FROM c)",
            ),
            (
                "a IS DISTINCT FROM b IS TRUE AND c",
                "(((a IS DISTINCT FROM b) IS TRUE) AND c)",
            ),
            // Tighter operators stay in the operand, as in PostgreSQL
            ("a IS DISTINCT FROM b = c", "(a IS DISTINCT FROM (b = c))"),
            ("a IS DISTINCT FROM b + 1", "(a IS DISTINCT FROM (b + 1))"),
            // A prefix NOT has no left operand to give back
            ("a IS DISTINCT FROM NOT b", "(a IS DISTINCT FROM (NOT b))"),
            ("x AND NOT a OR b", "((x AND (NOT a)) OR b)"),
            // Parentheses keep their meaning
            (
                "a IS DISTINCT FROM (b AND c)",
                "(a IS DISTINCT FROM [(b AND c)])",
            ),
            (
                "NOT (a IS DISTINCT FROM b AND c)",
                "(NOT [((a IS DISTINCT FROM b) AND c)])",
            ),
            // Trees parsed right are left as they are
            ("a AND b OR c AND d", "((a AND b) OR (c AND d))"),
            ("NOT a AND NOT b", "((NOT a) AND (NOT b))"),
            ("a = b IS NULL", "((a = b) IS NULL)"),
        ];
        for (sql, expected) in cases {
            assert_eq!(tree(&parsed(sql)), expected, "{sql}");
        }
    }

    /// Nested inside functions and subqueries too, and printed as typed.
    #[test]
    fn reassociated_everywhere_and_printed_as_typed() {
        let sql = "coalesce(a IS DISTINCT FROM b AND c, EXISTS (SELECT 1 WHERE x IS NOT DISTINCT FROM y OR z))";
        let expr = parsed(sql);
        assert_eq!(expr.to_string(), sql);
        let SQLExpr::Function(function) = &expr else {
            panic!("a function: {expr:?}");
        };
        // Both operands went back, in the argument and in the subquery
        let text = format!("{function:?}");
        assert!(text.contains("BinaryOp { left: IsDistinctFrom("), "{text}");
        assert!(
            text.contains("BinaryOp { left: IsNotDistinctFrom("),
            "{text}"
        );
    }
}
