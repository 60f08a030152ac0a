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

//! The equivalences of an input that still hold after an outer join pads
//! its rows with NULLs.
//!
//! An outer join emits a row of its preserved side that matched nothing
//! with NULL in every column of the other side. A column that is constant
//! in that other side (`SELECT k, 1 AS c FROM t`, or a filter `c = 1`) is
//! no longer constant in the join's output: it is `1` or NULL. The join's
//! equivalence properties kept the constant, so the sort of `... RIGHT JOIN
//! ... ORDER BY c, w` dropped `c` as constant and returned the NULL rows of
//! `c` among the others, ordered by `w` alone (inherited from 55.2.0: its
//! left side's classes were kept whole, so a `RIGHT` or `FULL` join, or a
//! `LEFT` join its inputs swapped, lost the order).
//!
//! Of a class of equal expressions of the padded side, the columns stay
//! equal: in a padded row each of them is NULL, which sorts and hashes as
//! one value. Its constant value does not hold, nor does any other member:
//! a literal, a scalar subquery (a filter `(SELECT max(x) FROM u) = c` puts
//! one in `c`'s class), or an expression such as `coalesce(c, 0)`, which is
//! not NULL where its column is.

use super::EquivalenceClass;
use datafusion_common::JoinType;

use crate::expressions::Column;

/// Which of the left and right inputs of `join_type` may have their columns
/// padded with NULLs in the output.
pub(super) fn padded_sides(join_type: &JoinType) -> (bool, bool) {
    match join_type {
        JoinType::Left | JoinType::LeftSingle => (false, true),
        JoinType::Right | JoinType::RightSingle => (true, false),
        JoinType::Full => (true, true),
        JoinType::Inner
        | JoinType::LeftSemi
        | JoinType::LeftAnti
        | JoinType::LeftMark
        | JoinType::RightSemi
        | JoinType::RightAnti
        | JoinType::RightMark => (false, false),
    }
}

/// `class` of an input whose rows may be padded with NULLs: its columns
/// alone, not constant.
pub(super) fn padded(class: EquivalenceClass) -> EquivalenceClass {
    let EquivalenceClass { exprs, .. } = class;
    let columns = exprs
        .into_iter()
        .filter(|expr| expr.downcast_ref::<Column>().is_some());
    EquivalenceClass::new(columns)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::equivalence::{AcrossPartitions, EquivalenceGroup};
    use crate::expressions::{BinaryExpr, lit};
    use crate::physical_expr::PhysicalExpr;
    use datafusion_common::ScalarValue;
    use datafusion_expr::Operator;

    fn col(name: &str, index: usize) -> Arc<dyn PhysicalExpr> {
        Arc::new(Column::new(name, index))
    }

    /// `a` (left, index 0) and `c` (right, index 0, so 1 in the join), each
    /// constant on its side; the join has no `ON` equality.
    fn constants_after(join_type: JoinType) -> Vec<String> {
        let mut left = EquivalenceClass::new([col("a", 0)]);
        left.constant =
            Some(AcrossPartitions::Uniform(Some(ScalarValue::Int64(Some(1)))));
        let left = EquivalenceGroup::new([left]);
        let right =
            EquivalenceGroup::new([EquivalenceClass::new([col("c", 0), lit(1i64)])]);
        let joined = left.join(&right, &join_type, 1, &[]).unwrap();
        let mut constants: Vec<String> = joined
            .iter()
            .filter(|class| class.constant.is_some())
            .flat_map(|class| class.iter().map(|expr| expr.to_string()))
            .filter(|name| name != "1")
            .collect();
        constants.sort();
        constants
    }

    #[test]
    fn only_the_preserved_side_keeps_its_constants() {
        assert_eq!(constants_after(JoinType::Inner), ["a@0", "c@1"]);
        assert_eq!(constants_after(JoinType::Left), ["a@0"]);
        assert_eq!(constants_after(JoinType::LeftSingle), ["a@0"]);
        assert_eq!(constants_after(JoinType::Right), ["c@1"]);
        assert_eq!(constants_after(JoinType::RightSingle), ["c@1"]);
        assert!(constants_after(JoinType::Full).is_empty());
    }

    #[test]
    fn a_padded_class_keeps_its_columns() {
        let c_plus_one: Arc<dyn PhysicalExpr> =
            Arc::new(BinaryExpr::new(col("c", 0), Operator::Plus, lit(1i64)));
        let class =
            EquivalenceClass::new([c_plus_one, col("c", 0), col("d", 1), lit(1i64)]);
        let padded = padded(class);
        assert!(padded.constant.is_none());
        let members: Vec<String> = padded.iter().map(|e| e.to_string()).collect();
        assert_eq!(members, ["c@0", "d@1"]);
    }
}
