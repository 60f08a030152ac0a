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

//! Equalities between an expression and one of its own parts.
//!
//! A filter `coalesce(a, b) = b` (the key of a `NATURAL FULL JOIN` compared
//! with one side's column) would put `coalesce(a, b)` and `b` in one class.
//! Normalizing an expression replaces each of its parts that is in a class
//! with the class's first member, bottom up: `b` inside `coalesce(a, b)`
//! becomes `coalesce(a, b)`, giving `coalesce(a, coalesce(a, b))`, which is
//! in no class. The normal form of the class's own member then differs from
//! the member, so an ordering on it never matches the same ordering
//! normalized again, and the sanity checker refused plans the optimizer had
//! found sorted (inherited from 55.2.0: a window ordered by such a key).
//! Such an equality is left out of the equivalences: they only serve to
//! avoid work, and without it nothing is assumed.

use std::sync::Arc;

use datafusion_common::tree_node::TreeNode;

use crate::PhysicalExpr;

/// Whether one of `members`, the expressions a class would hold, has
/// another of them as a proper part.
pub(super) fn holds_own_part(members: &[&Arc<dyn PhysicalExpr>]) -> bool {
    members.iter().any(|outer| {
        members.iter().any(|inner| {
            !Arc::ptr_eq(outer, inner)
                && outer != inner
                && outer
                    .exists(|part| Ok(part == *inner))
                    .expect("the closure never fails")
        })
    })
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::Result;

    use super::*;
    use crate::equivalence::EquivalenceGroup;
    use crate::expressions::{BinaryExpr, col};
    use datafusion_expr::Operator;

    #[test]
    fn an_expression_equal_to_its_own_part_makes_no_class() -> Result<()> {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
        ]);
        let (a, b) = (col("a", &schema)?, col("b", &schema)?);
        let sum: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            Arc::clone(&a),
            Operator::Plus,
            Arc::clone(&b),
        ));
        let mut group = EquivalenceGroup::default();
        group.add_equal_conditions(Arc::clone(&sum), Arc::clone(&b));
        assert!(group.is_empty());
        // The normal form of an expression is its own normal form again
        let normal = group.normalize_expr(Arc::clone(&sum));
        assert!(group.normalize_expr(Arc::clone(&normal)) == normal);
        // Through another class: `a = b`, then `a + b = a`
        group.add_equal_conditions(Arc::clone(&a), Arc::clone(&b));
        group.add_equal_conditions(Arc::clone(&sum), Arc::clone(&a));
        assert_eq!(
            group.iter().map(|class| class.len()).collect::<Vec<_>>(),
            [2]
        );
        Ok(())
    }
}
