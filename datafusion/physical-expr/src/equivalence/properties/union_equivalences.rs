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
//!
//! An equality of one input still orders the union where the other input
//! orders the same columns another way. In the union of `SELECT a, s AS
//! c2, s AS c3 FROM t` and `SELECT a, s, 'd' FROM t`, both sorted by `c2
//! DESC`, each input is sorted by `c2 DESC, c3 DESC`: the first because
//! `c3` equals `c2`, the second because `c3` is constant. The union's
//! orderings are found among the orderings each input offers the other;
//! an input offered only its normal forms (`[c2 DESC]`, its equal `c3`
//! removed), so `ORDER BY 2 DESC, 3 DESC` over the union was refused by the
//! sanity checker. So an input also offers each ordering with the members
//! of its expressions' equivalence classes written out after them.

use std::sync::Arc;

use arrow::compute::SortOptions;
use datafusion_physical_expr_common::sort_expr::{LexOrdering, PhysicalSortExpr};

use super::EquivalenceProperties;
use crate::PhysicalExpr;

/// The orderings `source` offers the other inputs of a union: its normal
/// orderings, and each with the other members of its expressions'
/// equivalence classes inserted right after them, all in the direction of
/// their equal or all in one of the four directions (within ties of an
/// expression, an expression equal to it is constant, so any direction
/// holds).
pub(super) fn offered_orderings(source: &EquivalenceProperties) -> Vec<LexOrdering> {
    let own: Vec<LexOrdering> = source.oeq_cache.normal_cls.clone().into_iter().collect();
    let mut offered = own.clone();
    let directions = [false, true].into_iter().flat_map(|descending| {
        [false, true].map(|nulls_first| {
            Some(SortOptions {
                descending,
                nulls_first,
            })
        })
    });
    let directions: Vec<Option<SortOptions>> =
        std::iter::once(None).chain(directions).collect();
    for ordering in &own {
        for direction in &directions {
            if let Some(written_out) = with_equal_members(source, ordering, *direction)
                && !offered.contains(&written_out)
            {
                offered.push(written_out);
            }
        }
    }
    offered
}

/// `ordering` with the other members of each expression's equivalence
/// class after it, sorted in `direction` (where `None`, in the direction of
/// the expression they equal), or `None` if no expression has one.
fn with_equal_members(
    source: &EquivalenceProperties,
    ordering: &LexOrdering,
    direction: Option<SortOptions>,
) -> Option<LexOrdering> {
    let mut sort_exprs: Vec<PhysicalSortExpr> = vec![];
    let mut inserted = false;
    for sort_expr in ordering.iter() {
        sort_exprs.push(sort_expr.clone());
        let Some(class) = source.eq_group().get_equivalence_class(&sort_expr.expr) else {
            continue;
        };
        let options = direction.unwrap_or(sort_expr.options);
        for member in class.iter() {
            if !sort_exprs.iter().any(|written| written.expr.eq(member)) {
                sort_exprs.push(PhysicalSortExpr::new(Arc::clone(member), options));
                inserted = true;
            }
        }
    }
    inserted.then(|| LexOrdering::new(sort_exprs)).flatten()
}

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

    /// An input sorted by `a DESC` in which `b` is constant.
    fn input_of_constant_b() -> Result<EquivalenceProperties> {
        let schema = schema();
        let a = col("a", &schema)?;
        let mut properties = EquivalenceProperties::new_with_orderings(
            Arc::clone(&schema),
            [LexOrdering::new([PhysicalSortExpr::new_default(a).desc()]).unwrap()],
        );
        properties.add_constants([crate::ConstExpr::from(col("b", &schema)?)])?;
        Ok(properties)
    }

    #[test]
    fn an_equality_of_one_input_orders_it_where_the_other_is_constant() -> Result<()> {
        // Left: b equals a; right: b is constant. Both are sorted by
        // a DESC, b in any direction
        let inputs = || {
            Ok::<_, datafusion_common::DataFusionError>(vec![
                input("b")?,
                input_of_constant_b()?,
            ])
        };
        assert!(union_sorted_by_a_desc_b(inputs()?)?);
        let mut reversed = inputs()?;
        reversed.reverse();
        assert!(union_sorted_by_a_desc_b(reversed)?);
        // Where neither holds for the right, the union is not
        assert!(!union_sorted_by_a_desc_b(vec![input("b")?, input("c")?])?);
        Ok(())
    }

    #[test]
    fn an_equality_of_one_input_does_not() -> Result<()> {
        // b equals a on the left only: within equal a, b is in no order
        assert!(!union_sorted_by_a_desc_b(vec![input("b")?, input("c")?])?);
        Ok(())
    }
}
