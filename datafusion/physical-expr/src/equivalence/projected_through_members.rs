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

//! Projecting a column the projection drops through an expression equal to
//! it that the projection keeps the inputs of.
//!
//! After `FilterExec: CAST(c AS Int32) = v`, the columns `v` and
//! `CAST(c AS Int32)` are one class. A projection that keeps `c` but drops
//! `v` (the filter's own `projection=[c]`, which `ProjectionPushdown` adds
//! after the distribution was enforced) projected `v` to nothing: only a
//! member the projection lists as a whole, or an expression whose parts it
//! lists, was projected, and `v` is neither. So a hash partitioning on `v`,
//! which `EnforceDistribution` had accepted above the filter as one on
//! `CAST(c AS Int32)`, became unknown below the same join, and the sanity
//! checker refused the plan it had accepted (found by the PostgreSQL
//! oracle: a correlated `IN` whose subquery's `HAVING` equates a count with
//! a grouping column). Here `v` projects to `CAST(c' AS Int32)`: every row
//! the class describes has the two equal, so the projected expression
//! orders and partitions the rows as `v` did.

use std::sync::Arc;

use crate::PhysicalExpr;
use crate::equivalence::EquivalenceClass;

/// `expr` projected as another member of its `class` that has parts, by
/// `project_member`, the projection of such a member through its parts.
pub(super) fn project_through_equal_member(
    class: Option<&EquivalenceClass>,
    expr: &Arc<dyn PhysicalExpr>,
    project_member: impl Fn(&Arc<dyn PhysicalExpr>) -> Option<Arc<dyn PhysicalExpr>>,
) -> Option<Arc<dyn PhysicalExpr>> {
    class?
        .iter()
        .filter(|member| *member != expr && !member.children().is_empty())
        .find_map(project_member)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion_common::Result;

    use super::*;
    use crate::equivalence::{EquivalenceGroup, ProjectionMapping};
    use crate::expressions::{CastExpr, Column, col};
    use crate::{EquivalenceProperties, Partitioning};

    /// A schema, a column of it and an expression of another column.
    type ColumnAndExpression = (SchemaRef, Arc<dyn PhysicalExpr>, Arc<dyn PhysicalExpr>);

    /// `v`, `c` and `CAST(c AS Int32)`, `v` equal to the cast as a filter
    /// `CAST(c AS Int32) = v` makes it, and the projection that keeps `c`.
    fn filtered() -> Result<ColumnAndExpression> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("v", DataType::Int32, true),
            Field::new("c", DataType::Int64, false),
        ]));
        let v = col("v", &schema)?;
        let cast: Arc<dyn PhysicalExpr> =
            Arc::new(CastExpr::new(col("c", &schema)?, DataType::Int32, None));
        Ok((schema, v, cast))
    }

    #[test]
    fn a_dropped_column_projects_as_an_equal_kept_expression() -> Result<()> {
        let (schema, v, cast) = filtered()?;
        let mut group = EquivalenceGroup::default();
        group.add_equal_conditions(Arc::clone(&cast), Arc::clone(&v));
        let keep_c = ProjectionMapping::from_indices(&[1], &schema)?;
        let projected_cast: Arc<dyn PhysicalExpr> = Arc::new(CastExpr::new(
            Arc::new(Column::new("c", 0)),
            DataType::Int32,
            None,
        ));
        assert_eq!(
            group.project_expr(&keep_c, &v),
            Some(Arc::clone(&projected_cast))
        );
        assert_eq!(
            group.project_expressions(&keep_c, [&v]).collect::<Vec<_>>(),
            [Some(projected_cast)]
        );
        // Without the equality, `v` is gone
        let alone = EquivalenceGroup::default();
        assert_eq!(alone.project_expr(&keep_c, &v), None);
        Ok(())
    }

    #[test]
    fn a_hash_partitioning_survives_the_projection() -> Result<()> {
        let (schema, v, cast) = filtered()?;
        let mut properties = EquivalenceProperties::new(Arc::clone(&schema));
        properties.add_equal_conditions(Arc::clone(&cast), Arc::clone(&v))?;
        let keep_c = ProjectionMapping::from_indices(&[1], &schema)?;
        let partitioning = Partitioning::Hash(vec![v], 4);
        let Partitioning::Hash(exprs, 4) = partitioning.project(&keep_c, &properties)
        else {
            panic!("not a hash partitioning");
        };
        assert_eq!(exprs.len(), 1);
        assert_eq!(exprs[0].to_string(), "CAST(c@0 AS Int32)");
        Ok(())
    }
}
