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

//! Properties of a node whose range nothing computes.
//!
//! [`EquivalenceProperties::get_expr_properties`] computes the properties of
//! an expression bottom up, each node from its children's. It asked a leaf
//! other than a column or a literal (the value of an uncorrelated scalar
//! subquery, which says it is constant) nothing, and gave it
//! [`ExprProperties::new_unknown`], whose range is the unbounded range of
//! type `Null`, as is the range of a function without [`evaluate_bounds`].
//! A comparison or an arithmetic operator above such a node then fails to
//! combine that range with its other operand's, and the failure discarded
//! all that was known of the whole expression, even that an ordering sorts
//! by exactly that expression: a sort by `CASE WHEN k < (SELECT count(*)
//! FROM t) THEN k END` did not satisfy its own ordering, and the sanity
//! checker refused the plan.
//!
//! Here every node other than a column or a literal is asked for its
//! properties, a range of type `Null` becomes the unbounded range of the
//! node's own type, and a node whose properties fail to compute is unknown
//! alone, not its ancestors.
//!
//! [`EquivalenceProperties::get_expr_properties`]: super::EquivalenceProperties::get_expr_properties
//! [`evaluate_bounds`]: datafusion_expr::ScalarUDFImpl::evaluate_bounds

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};
use datafusion_expr::interval_arithmetic::Interval;
use datafusion_expr::sort_properties::ExprProperties;

use crate::PhysicalExpr;

/// The properties of `expr` from those of its `children` (none for a
/// leaf): what [`PhysicalExpr::get_properties`] gives, or unknown where it
/// fails, with a range of type `Null` replaced by the unbounded range of
/// `expr`'s type.
pub(super) fn properties_from_children(
    expr: &Arc<dyn PhysicalExpr>,
    children: &[ExprProperties],
    schema: &Schema,
) -> ExprProperties {
    let mut properties = expr
        .get_properties(children)
        .unwrap_or_else(|_| ExprProperties::new_unknown());
    if properties.range.data_type() == DataType::Null
        && let Ok(data_type) = expr.data_type(schema)
        && data_type != DataType::Null
        && let Ok(range) = Interval::make_unbounded(&data_type)
    {
        properties.range = range;
    }
    properties
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::Field;
    use datafusion_common::Result;
    use datafusion_expr::Operator;
    use datafusion_expr::physical_planning_context::{
        ScalarSubqueryResults, SubqueryIndex,
    };
    use datafusion_physical_expr_common::sort_expr::{
        LexOrdering, PhysicalSortExpr, PhysicalSortRequirement,
    };

    use super::*;
    use crate::EquivalenceProperties;
    use crate::expressions::{BinaryExpr, CaseExpr, CastExpr, col};
    use crate::scalar_subquery::ScalarSubqueryExpr;

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![Field::new("k", DataType::Int32, true)]))
    }

    /// The value of an uncorrelated scalar subquery of type Int64.
    fn subquery_value() -> Arc<dyn PhysicalExpr> {
        Arc::new(ScalarSubqueryExpr::new(
            DataType::Int64,
            false,
            SubqueryIndex::new(0),
            ScalarSubqueryResults::new(1),
        ))
    }

    /// Whether input sorted by `ordering` satisfies a requirement of it.
    fn satisfies_itself(ordering: Arc<dyn PhysicalExpr>) -> Result<bool> {
        let properties = EquivalenceProperties::new_with_orderings(
            schema(),
            [
                LexOrdering::new([PhysicalSortExpr::new_default(Arc::clone(&ordering))])
                    .unwrap(),
            ],
        );
        properties
            .ordering_satisfy_requirement([PhysicalSortRequirement::new(ordering, None)])
    }

    #[test]
    fn a_sort_by_a_case_reading_a_subquery_satisfies_itself() -> Result<()> {
        let schema = schema();
        let k = col("k", &schema)?;
        let k_as_int64: Arc<dyn PhysicalExpr> =
            Arc::new(CastExpr::new(Arc::clone(&k), DataType::Int64, None));
        // CASE WHEN CAST(k AS Int64) < (SELECT ...) THEN k END
        let when: Arc<dyn PhysicalExpr> =
            Arc::new(BinaryExpr::new(k_as_int64, Operator::Lt, subquery_value()));
        let case: Arc<dyn PhysicalExpr> =
            Arc::new(CaseExpr::try_new(None, vec![(when, k)], None)?);
        assert!(satisfies_itself(case)?);
        Ok(())
    }

    #[test]
    fn a_subquery_value_is_typed_and_constant() -> Result<()> {
        let properties = EquivalenceProperties::new(schema());
        let value = properties.get_expr_properties(subquery_value());
        assert_eq!(value.range.data_type(), DataType::Int64);
        assert_eq!(
            value.sort_properties,
            datafusion_expr::sort_properties::SortProperties::Singleton
        );
        Ok(())
    }
}
