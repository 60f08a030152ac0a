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

//! How tightly SQL binds its operators, for writing an expression as SQL
//! text that reads back as the same expression.
//!
//! [`Operator::precedence`] orders the comparisons on two levels (`=` below
//! `<`), which SQL parsers do not: `a = b < c` reads back as `(a = b) < c`.
//! Text meant to be read as SQL follows SQL's reading instead: comparisons
//! and the other predicates do not chain, `+`/`-` and `*`/`/` associate to
//! the left, `AND` and `OR` either way, and any other infix operator only
//! with itself. Where a reading is in doubt, the operand is parenthesized: a
//! redundant pair never changes it.
//!
//! Both writers of SQL text use this one table: [`Expr::human_display`] and
//! the readable column labels of `datafusion-sql`.
//!
//! [`Expr::human_display`]: crate::Expr::human_display

use crate::Operator;

/// How tightly an expression binds, loosest first. An operand that binds
/// less tightly than its operator is parenthesized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Binding {
    /// A lambda: parenthesized wherever it is an operand.
    Lambda,
    Or,
    And,
    Not,
    /// Comparisons, `LIKE`, `IN`, `BETWEEN`, `IS ...`: these do not chain.
    Predicate,
    /// Every other infix operator (`||`, `&`, `<<`, `@>`, ...).
    OtherOperator,
    Additive,
    Multiplicative,
    /// A unary minus, and a negative number.
    Unary,
    /// Columns, literals, calls, `CASE`, subqueries, index access.
    Atom,
}

/// How tightly `op` binds.
pub fn operator_binding(op: &Operator) -> Binding {
    match op {
        Operator::Or => Binding::Or,
        Operator::And => Binding::And,
        Operator::Eq
        | Operator::NotEq
        | Operator::Lt
        | Operator::LtEq
        | Operator::Gt
        | Operator::GtEq
        | Operator::IsDistinctFrom
        | Operator::IsNotDistinctFrom
        | Operator::LikeMatch
        | Operator::ILikeMatch
        | Operator::NotLikeMatch
        | Operator::NotILikeMatch
        | Operator::RegexMatch
        | Operator::RegexIMatch
        | Operator::RegexNotMatch
        | Operator::RegexNotIMatch => Binding::Predicate,
        Operator::Plus | Operator::Minus => Binding::Additive,
        Operator::Multiply | Operator::Divide | Operator::Modulo => {
            Binding::Multiplicative
        }
        _ => Binding::OtherOperator,
    }
}

/// The side of a binary operator an operand is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// Whether an operand that binds as `operand`, on `side` of binary operator
/// `op`, needs parentheses; `same_operator` where the operand is itself an
/// application of `op`.
pub fn operand_needs_parentheses(
    op: &Operator,
    side: Side,
    operand: Binding,
    same_operator: bool,
) -> bool {
    let own = operator_binding(op);
    if operand != own {
        return operand < own;
    }
    match side {
        // On the left, an operand of the same binding may stay bare where
        // the operators associate to the left; among the other operators,
        // only a repeat of the same one is known to.
        Side::Left => {
            !(matches!(
                own,
                Binding::Or | Binding::And | Binding::Additive | Binding::Multiplicative
            ) || (own == Binding::OtherOperator && same_operator))
        }
        // On the right, only `AND` and `OR` may repeat bare: `a - (b - c)`.
        Side::Right => !matches!(own, Binding::Or | Binding::And),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `outer` with an operand `inner` on `side` needs parentheses.
    fn parens(outer: Operator, side: Side, inner: Operator) -> bool {
        operand_needs_parentheses(&outer, side, operator_binding(&inner), outer == inner)
    }

    #[test]
    fn comparisons_do_not_chain() {
        // `(a = b) < c`, `a = (b < c)`: never bare
        assert!(parens(Operator::Lt, Side::Left, Operator::Eq));
        assert!(parens(Operator::Eq, Side::Right, Operator::Lt));
    }

    #[test]
    fn arithmetic_associates_to_the_left() {
        assert!(!parens(Operator::Minus, Side::Left, Operator::Minus));
        assert!(parens(Operator::Minus, Side::Right, Operator::Minus));
        assert!(!parens(Operator::Plus, Side::Right, Operator::Multiply));
        assert!(parens(Operator::Multiply, Side::Left, Operator::Plus));
    }

    #[test]
    fn and_or_associate_either_way() {
        assert!(!parens(Operator::And, Side::Right, Operator::And));
        assert!(parens(Operator::And, Side::Right, Operator::Or));
        assert!(!parens(Operator::Or, Side::Left, Operator::And));
    }

    #[test]
    fn other_operators_chain_only_with_themselves() {
        assert!(!parens(
            Operator::StringConcat,
            Side::Left,
            Operator::StringConcat
        ));
        assert!(parens(
            Operator::StringConcat,
            Side::Left,
            Operator::BitwiseAnd
        ));
        assert!(parens(
            Operator::StringConcat,
            Side::Right,
            Operator::StringConcat
        ));
    }
}
