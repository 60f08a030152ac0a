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

//! Whether a `WHEN` can be true where its `THEN` is NULL, decided from the
//! predicate's shape.
//!
//! `CASE WHEN w = v THEN v ELSE 2 END` is never NULL: where `v` is NULL,
//! `w = v` is NULL, not true, and the `THEN` is never taken. The logical
//! planner proves this with bounds over three-valued logic
//! (`predicate_bounds` in the expr crate). The physical `CaseExpr` put a
//! NULL in the `WHEN` in place of the `THEN` and evaluated it over no
//! columns, which fails wherever the `WHEN` reads another column (`w`),
//! and took the branch as reachable. The two then disagreed on the
//! column's nullability, and the physical planner refused an aggregate
//! over it with an internal error ("Physical input schema should be the
//! same as the one converted from logical input schema"). This analysis
//! is what the constant evaluation falls back to: a structural proof, over
//! the operators whose NULL behaviour does not depend on the other values.

use crate::PhysicalExpr;
use crate::expressions::{BinaryExpr, CastExpr, Literal, NegativeExpr, NotExpr};
use crate::expressions::{IsNotNullExpr, TryCastExpr};
use datafusion_expr::Operator;

/// Whether `predicate`, a `WHEN` with NULL literals in place of its
/// `THEN`, can never be true.
pub(super) fn never_true(predicate: &dyn PhysicalExpr) -> bool {
    if certainly_null(predicate) {
        return true;
    }
    if let Some(literal) = predicate.downcast_ref::<Literal>() {
        return matches!(
            literal.value(),
            datafusion_common::ScalarValue::Boolean(Some(false))
        );
    }
    if let Some(binary) = predicate.downcast_ref::<BinaryExpr>() {
        let (left, right) = (binary.left().as_ref(), binary.right().as_ref());
        return match binary.op() {
            Operator::And => never_true(left) || never_true(right),
            Operator::Or => never_true(left) && never_true(right),
            _ => false,
        };
    }
    if let Some(is_not_null) = predicate.downcast_ref::<IsNotNullExpr>() {
        return certainly_null(is_not_null.arg().as_ref());
    }
    false
}

/// Whether `expr` is NULL whatever its columns hold.
fn certainly_null(expr: &dyn PhysicalExpr) -> bool {
    if let Some(literal) = expr.downcast_ref::<Literal>() {
        return literal.value().is_null();
    }
    if let Some(binary) = expr.downcast_ref::<BinaryExpr>() {
        return binary.op().returns_null_on_null()
            && (certainly_null(binary.left().as_ref())
                || certainly_null(binary.right().as_ref()));
    }
    if let Some(not) = expr.downcast_ref::<NotExpr>() {
        return certainly_null(not.arg().as_ref());
    }
    if let Some(negative) = expr.downcast_ref::<NegativeExpr>() {
        return certainly_null(negative.arg().as_ref());
    }
    if let Some(cast) = expr.downcast_ref::<CastExpr>() {
        return certainly_null(cast.expr().as_ref());
    }
    if let Some(cast) = expr.downcast_ref::<TryCastExpr>() {
        return certainly_null(cast.expr().as_ref());
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::ScalarValue;

    use super::*;
    use crate::expressions::{binary, col, is_not_null, lit, not};

    fn schema() -> Schema {
        Schema::new(vec![Field::new("w", DataType::Int32, true)])
    }

    fn null() -> Arc<dyn PhysicalExpr> {
        lit(ScalarValue::Int32(None))
    }

    fn compare(op: Operator) -> Arc<dyn PhysicalExpr> {
        binary(col("w", &schema()).unwrap(), op, null(), &schema()).unwrap()
    }

    #[test]
    fn a_comparison_with_null_is_never_true() {
        assert!(never_true(compare(Operator::Eq).as_ref()));
        assert!(never_true(compare(Operator::Lt).as_ref()));
        // IS NOT DISTINCT FROM NULL holds for a NULL w
        assert!(!never_true(compare(Operator::IsNotDistinctFrom).as_ref()));
    }

    #[test]
    fn and_needs_one_or_needs_both() {
        let and =
            binary(compare(Operator::Eq), Operator::And, lit(true), &schema()).unwrap();
        assert!(never_true(and.as_ref()));
        let or =
            binary(compare(Operator::Eq), Operator::Or, lit(true), &schema()).unwrap();
        assert!(!never_true(or.as_ref()));
    }

    #[test]
    fn not_of_unknown_is_unknown_but_not_of_false_is_true() {
        assert!(never_true(not(compare(Operator::Eq)).unwrap().as_ref()));
        assert!(!never_true(not(lit(false)).unwrap().as_ref()));
        assert!(never_true(is_not_null(null()).unwrap().as_ref()));
    }
}
