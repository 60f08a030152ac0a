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

//! The equalities of columns that hold in every input of a `UnionExec`.
//!
//! The union of `SELECT k AS a, k AS b FROM t` and `SELECT v, v FROM u` has
//! `a = b` in every row, since each input has. The union's equivalence
//! properties kept no equality, so an ordering of each input that a
//! requirement is satisfied by only through its equality (`[a DESC]` for
//! `ORDER BY a DESC, b`, which is what the sort of each input is reduced
//! to) did not satisfy the requirement above the union, and the sanity
//! checker refused the plan of `... UNION ALL ... ORDER BY 1 DESC, 2`.
//!
//! An equality that holds in both of two inputs holds in their union; the
//! union keeps those.

use std::sync::Arc;

use super::EquivalenceProperties;
use crate::PhysicalExpr;

/// The pairs of expressions equal in both `lhs` and `rhs` (of one schema):
/// each member of a class of `lhs` paired with the first member, where
/// `rhs` has the two equal too.
pub(super) fn common_equalities(
    lhs: &EquivalenceProperties,
    rhs: &EquivalenceProperties,
) -> Vec<(Arc<dyn PhysicalExpr>, Arc<dyn PhysicalExpr>)> {
    let rhs_group = rhs.eq_group();
    let mut equalities = vec![];
    for class in lhs.eq_group().iter() {
        let members: Vec<&Arc<dyn PhysicalExpr>> = class.iter().collect();
        for (index, first) in members.iter().enumerate() {
            for other in &members[index + 1..] {
                let equal_in_rhs = rhs_group.normalize_expr(Arc::clone(first))
                    == rhs_group.normalize_expr(Arc::clone(other));
                if equal_in_rhs {
                    equalities.push((Arc::clone(first), Arc::clone(other)));
                }
            }
        }
    }
    equalities
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::Result;
    use datafusion_physical_expr_common::sort_expr::{
        LexOrdering, PhysicalSortExpr, PhysicalSortRequirement,
    };

    use super::*;
    use crate::equivalence::calculate_union;
    use crate::expressions::col;

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
            Field::new("c", DataType::Int32, true),
        ]))
    }

    /// An input sorted by `a DESC` in which `a` equals `equal_to_a`.
    fn input(equal_to_a: &str) -> Result<EquivalenceProperties> {
        let schema = schema();
        let a = col("a", &schema)?;
        let mut properties = EquivalenceProperties::new_with_orderings(
            Arc::clone(&schema),
            [
                LexOrdering::new([PhysicalSortExpr::new_default(Arc::clone(&a)).desc()])
                    .unwrap(),
            ],
        );
        properties.add_equal_conditions(a, col(equal_to_a, &schema)?)?;
        Ok(properties)
    }

    /// Whether the union of `inputs` satisfies `a DESC, b ASC`.
    fn union_sorted_by_a_desc_b(inputs: Vec<EquivalenceProperties>) -> Result<bool> {
        let schema = schema();
        let union = calculate_union(inputs, Arc::clone(&schema))?;
        union.ordering_satisfy_requirement([
            PhysicalSortRequirement::from(
                PhysicalSortExpr::new_default(col("a", &schema)?).desc(),
            ),
            PhysicalSortRequirement::from(PhysicalSortExpr::new_default(col(
                "b", &schema,
            )?)),
        ])
    }

    #[test]
    fn an_equality_of_every_input_holds_in_the_union() -> Result<()> {
        assert!(union_sorted_by_a_desc_b(vec![input("b")?, input("b")?])?);
        Ok(())
    }

    #[test]
    fn an_equality_of_one_input_does_not() -> Result<()> {
        // b equals a on the left only: within equal a, b is in no order
        assert!(!union_sorted_by_a_desc_b(vec![input("b")?, input("c")?])?);
        Ok(())
    }
}
