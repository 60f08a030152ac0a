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

//! Expressions whose nullability is their children's.
//!
//! Whether a `CASE` can be NULL depends on whether each `WHEN` can be true
//! where its `THEN` is NULL, and `predicate_bounds` answers that by asking,
//! at each node of the predicate, first whether the node is nullable (a
//! walk of its whole subtree) and then whether each child can be NULL (the
//! same question one level down). A `CASE` nested in the predicate of the
//! next was therefore asked for its nullability twice per level above it:
//! planning `CASE WHEN (CASE WHEN ... END) > 0 THEN ...` fourteen levels
//! deep took 20 seconds in a debug build, and each level tripled it.
//!
//! For the expressions listed here the first question adds nothing: each is
//! nullable exactly where one of its children is (as
//! [`ExprSchemable::nullable`] computes it) and NULL wherever one of its
//! children is. If none of the children is nullable, each child's own
//! answer is "never NULL", so asking the children alone gives the answer
//! the node's nullability would have given, in time that grows with the
//! depth instead of doubling with it.
//!
//! [`ExprSchemable::nullable`]: crate::ExprSchemable::nullable

use crate::{BinaryExpr, Expr};

/// Whether `expr` is NULL exactly where one of its children is, and
/// nullable exactly where one of them is: the nodes whose nullability
/// `predicate_bounds` can take from their children instead of asking for
/// it.
pub(crate) fn null_where_a_child_is(expr: &Expr) -> bool {
    match expr {
        // `nullable` is `left || right`, and the operator returns NULL when
        // either side is NULL
        Expr::BinaryExpr(BinaryExpr { op, .. }) => op.returns_null_on_null(),
        // `nullable` is the child's, and so is NULL
        Expr::Alias(_) | Expr::Cast(_) | Expr::Negative(_) | Expr::Not(_) => true,
        // `nullable` is `expr || pattern`; the escape character is not an
        // expression
        Expr::Like(_) | Expr::SimilarTo(_) => true,
        // A strict function returns NULL where an argument is NULL, but its
        // nullability is its return field's, which may say more; `TRY_CAST`
        // is NULL where the cast fails; the rest are asked as before
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::{DFSchema, Result};

    use crate::{ExprSchemable, Operator, binary_expr, case, col, lit, when};

    fn schema() -> DFSchema {
        DFSchema::try_from(Schema::new(vec![
            Field::new("k", DataType::Int32, true),
            Field::new("n", DataType::Int32, false),
        ]))
        .unwrap()
    }

    /// `CASE WHEN (<depth - 1>) > level THEN then ELSE n END`, `depth` deep.
    fn nested_in_predicate(depth: usize, then: crate::Expr) -> Result<crate::Expr> {
        (0..depth).try_fold(col("n"), |inner, level| {
            when(inner.gt(lit(level as i32)), then.clone()).otherwise(col("n"))
        })
    }

    #[test]
    fn nullability_of_nested_cases() -> Result<()> {
        let schema = schema();
        // A nullable THEN reachable where its predicate is true
        assert!(nested_in_predicate(3, col("k"))?.nullable(&schema)?);
        // Only non-nullable branches
        assert!(!nested_in_predicate(3, col("n"))?.nullable(&schema)?);
        // `WHEN k IS NOT NULL THEN CAST(k AS BIGINT)`: the NULL of the THEN
        // is unreachable
        let guarded = when(
            col("k").is_not_null(),
            col("k").cast_to(&DataType::Int64, &schema)?,
        )
        .otherwise(lit(0i64))?;
        assert!(!guarded.nullable(&schema)?);
        // `WHEN k + 1 > 0 THEN k`: where k is NULL the predicate is NULL, so
        // the THEN's NULL is unreachable
        let strict = when((col("k") + lit(1)).gt(lit(0)), col("k")).otherwise(lit(0))?;
        assert!(!strict.nullable(&schema)?);
        // `WHEN k IS DISTINCT FROM 1 THEN k`: true where k is NULL
        let distinct = when(
            binary_expr(col("k"), Operator::IsDistinctFrom, lit(1)),
            col("k"),
        )
        .otherwise(lit(0))?;
        assert!(distinct.nullable(&schema)?);
        // `CASE k WHEN 1 THEN k`: with an operand every THEN is reachable
        let with_operand = case(col("k")).when(lit(1), col("k")).otherwise(lit(0))?;
        assert!(with_operand.nullable(&schema)?);
        Ok(())
    }

    /// Each level used to ask for the nullability of the levels below it
    /// twice: 24 levels took 30 seconds in a debug build, 25 twice that.
    #[test]
    fn nested_cases_take_time_linear_in_depth() -> Result<()> {
        let schema = schema();
        let expr = nested_in_predicate(24, col("k"))?;
        let start = Instant::now();
        assert!(expr.nullable(&schema)?);
        let (_, field) = expr.to_field(&schema)?;
        assert!(field.is_nullable());
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "took {:?}",
            start.elapsed()
        );
        Ok(())
    }
}
