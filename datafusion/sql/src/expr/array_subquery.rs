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

//! `ARRAY(subquery)`: the values of a one-column subquery as a list, in the
//! order of its `ORDER BY`, `[]` where it returns no row (PostgreSQL and
//! DuckDB answer so; a list, not NULL).
//!
//! It is planned as the scalar subquery
//!
//! ```text
//! (SELECT CASE WHEN a IS NULL THEN [] ELSE a END
//!  FROM (SELECT array_agg(v ORDER BY k) AS a FROM <subquery without its SELECT list>))
//! ```
//!
//! where `v` is the subquery's one value and `k` its sort keys: the list is
//! ordered by what `array_agg` is told, whatever the plan below it does with
//! the sort. A `LIMIT` stays where it is, so it still picks the first rows
//! in that order. The optimizer decorrelates it as any scalar subquery over
//! an aggregate, and an outer row without rows gets the `[]` of an empty
//! input.

use std::sync::Arc;

use arrow::array::{ListArray, new_empty_array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::DataType;
use datafusion_common::{Result, ScalarValue, internal_err, plan_err};
use datafusion_expr::expr::AggregateFunction;
use datafusion_expr::logical_plan::{Limit, Projection, Sort};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, SortExpr, lit, when};
use sqlparser::ast::{Function, FunctionArguments, ObjectNamePart, Query};

use crate::planner::{ContextProvider, PlannerContext, SqlToRel};
use datafusion_common::DFSchema;

/// The name of the list column of the planned subquery.
const LIST_COLUMN: &str = "array";

/// The subquery of `function` if it is `ARRAY(subquery)`.
pub(crate) fn array_subquery(function: &Function) -> Option<&Query> {
    let FunctionArguments::Subquery(query) = &function.args else {
        return None;
    };
    match function.name.0.as_slice() {
        [ObjectNamePart::Identifier(name)]
            if name.value.eq_ignore_ascii_case("array") =>
        {
            Some(query)
        }
        _ => None,
    }
}

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `ARRAY(query)` in an expression over `schema`.
    pub(crate) fn plan_array_subquery(
        &self,
        query: Query,
        schema: &DFSchema,
        planner_context: &mut PlannerContext,
    ) -> Result<Expr> {
        let Expr::ScalarSubquery(mut subquery) =
            self.parse_scalar_subquery(query, schema, planner_context)?
        else {
            return internal_err!("a scalar subquery is planned as one");
        };
        let Some(array_agg) = self.context_provider.get_aggregate_meta("array_agg")
        else {
            return plan_err!("ARRAY(subquery) needs the aggregate function array_agg");
        };
        let (input, value, order_by) = ordered_rows(subquery.subquery.as_ref())?;
        let aggregate = Expr::AggregateFunction(AggregateFunction::new_udf(
            array_agg,
            vec![value],
            false,
            None,
            order_by,
            None,
        ));
        let aggregated = LogicalPlanBuilder::from(input)
            .aggregate(Vec::<Expr>::new(), [aggregate.alias(LIST_COLUMN)])?
            .build()?;
        let list = Expr::Column(aggregated.schema().columns()[0].clone());
        let empty = empty_list(aggregated.schema().field(0).data_type())?;
        let plan = LogicalPlanBuilder::from(aggregated)
            .project([when(list.clone().is_null(), lit(empty))
                .otherwise(list)?
                .alias(LIST_COLUMN)])?
            .build()?;
        subquery.subquery = Arc::new(plan);
        Ok(Expr::ScalarSubquery(subquery))
    }
}

/// Whether `plan` is the plan of an `ARRAY(subquery)`.
pub(crate) fn is_array_subquery(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Projection(Projection { expr, input, .. }) = plan else {
        return false;
    };
    let LogicalPlan::Aggregate(aggregate) = input.as_ref() else {
        return false;
    };
    let named_list = |exprs: &[Expr]| matches!(exprs, [Expr::Alias(alias)] if alias.name == LIST_COLUMN);
    let array_agg = matches!(aggregate.aggr_expr.as_slice(),
        [Expr::Alias(alias)] if matches!(alias.expr.as_ref(),
            Expr::AggregateFunction(f) if f.func.name() == "array_agg"));
    named_list(expr)
        && named_list(&aggregate.aggr_expr)
        && array_agg
        && aggregate.group_expr.is_empty()
}

/// The rows of the one-column `plan`, its value over them, and the order of
/// its `ORDER BY` over them: the plan below its `SELECT` list where that
/// list sits on the sort (`SELECT v ... ORDER BY k`, `k` not selected), the
/// plan itself otherwise.
fn ordered_rows(plan: &LogicalPlan) -> Result<(LogicalPlan, Expr, Vec<SortExpr>)> {
    let (rows, value) = match plan {
        LogicalPlan::Projection(Projection { expr, input, .. })
            if sorted(input).is_some() =>
        {
            let [value] = expr.as_slice() else {
                return internal_err!("ARRAY(subquery) of more than one column");
            };
            (input.as_ref(), value.clone().unalias())
        }
        // `SELECT v ... ORDER BY k LIMIT n`, `k` not selected: the limit
        // taken of the sorted rows, then the value computed of each
        LogicalPlan::Limit(limit) => match limit.input.as_ref() {
            LogicalPlan::Projection(Projection { expr, input, .. })
                if sorted(input).is_some() =>
            {
                let [value] = expr.as_slice() else {
                    return internal_err!("ARRAY(subquery) of more than one column");
                };
                let rows = LogicalPlan::Limit(Limit {
                    input: Arc::clone(input),
                    ..limit.clone()
                });
                let order_by = sorted(input).map(|sort| sort.expr.clone());
                return Ok((rows, value.clone().unalias(), order_by.unwrap_or_default()));
            }
            _ => (plan, Expr::Column(plan.schema().columns()[0].clone())),
        },
        plan => (plan, Expr::Column(plan.schema().columns()[0].clone())),
    };
    let order_by = sorted(rows)
        .map(|sort| sort.expr.clone())
        .unwrap_or_default();
    Ok((rows.clone(), value, order_by))
}

/// The sort at the top of `plan`, under a `LIMIT` if there is one.
fn sorted(plan: &LogicalPlan) -> Option<&Sort> {
    match plan {
        LogicalPlan::Sort(sort) => Some(sort),
        LogicalPlan::Limit(Limit { input, .. }) => match input.as_ref() {
            LogicalPlan::Sort(sort) => Some(sort),
            _ => None,
        },
        _ => None,
    }
}

/// An empty list of `list_type`, the type `array_agg` returns.
fn empty_list(list_type: &DataType) -> Result<ScalarValue> {
    let DataType::List(field) = list_type else {
        return internal_err!("array_agg returns a list, not {list_type}");
    };
    let empty = ListArray::new(
        Arc::clone(field),
        OffsetBuffer::from_lengths([0]),
        new_empty_array(field.data_type()),
        None,
    );
    Ok(ScalarValue::List(Arc::new(empty)))
}
