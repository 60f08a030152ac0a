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

//! [`OrderedStringAggAsArrayAgg`] computes an ordered `string_agg` as the
//! `array_agg` of its values in that order, joined, where the aggregation
//! also orders other values another way.
//!
//! `string_agg(s, ',' ORDER BY s)` needs its input sorted by `s`: it
//! requires the ordering of the aggregation's input, as `nth_value` does. An
//! aggregation holds one input, sorted one way, so two such aggregates
//! ordered differently (`string_agg(s, ',' ORDER BY s), string_agg(s, ','
//! ORDER BY v)`, which PostgreSQL and DuckDB answer) were refused:
//! `Conflicting ordering requirements in aggregate functions is not
//! supported`. `array_agg` sorts the values of each group itself, in any
//! order, so
//!
//! ```text
//! string_agg(x, d ORDER BY o) FILTER (WHERE f)
//!   = array_to_string(array_agg(x ORDER BY o) FILTER (WHERE f AND x IS NOT NULL), d)
//! ```
//!
//! (cast back to `string_agg`'s type): `string_agg` skips NULL values and
//! is NULL where no value is left, and `array_agg` of no rows is NULL,
//! which `array_to_string` keeps. The rule rewrites each ordered
//! `string_agg` of an aggregation whose order-requiring aggregates have
//! two orderings neither of which a sort by the other (or by its reverse)
//! satisfies. It leaves the aggregation as it is where the other order is
//! compatible, where the delimiter is not a string literal, where the
//! value is volatile (the filter reads it a second time), and for
//! `string_agg(DISTINCT ...)`.

use std::sync::Arc;

use datafusion_common::tree_node::Transformed;
use datafusion_common::{Column, Result, ScalarValue};
use datafusion_expr::expr::{AggregateFunction, AggregateFunctionParams, ScalarFunction};
use datafusion_expr::logical_plan::Aggregate;
use datafusion_expr::{
    AggregateUDF, Expr, LogicalPlan, LogicalPlanBuilder, ScalarUDF, SortExpr, cast,
};

use crate::optimizer::ApplyOrder;
use crate::{OptimizerConfig, OptimizerRule};

/// See the module documentation.
#[derive(Default, Debug)]
pub struct OrderedStringAggAsArrayAgg {}

impl OrderedStringAggAsArrayAgg {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self {}
    }
}

impl OptimizerRule for OrderedStringAggAsArrayAgg {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Aggregate(aggregate) = plan else {
            return Ok(Transformed::no(plan));
        };
        let functions = config.function_registry().and_then(|registry| {
            Some((
                registry.udaf("array_agg").ok()?,
                registry.udf("array_to_string").ok()?,
            ))
        });
        match functions {
            Some((array_agg, array_to_string))
                if has_conflicting_orderings(&aggregate)
                    && aggregate
                        .aggr_expr
                        .iter()
                        .any(|expr| as_array_agg(expr, &array_agg).is_some()) =>
            {
                rewrite(aggregate, &array_agg, &array_to_string, config)
                    .map(Transformed::yes)
            }
            _ => Ok(Transformed::no(LogicalPlan::Aggregate(aggregate))),
        }
    }

    fn name(&self) -> &str {
        "ordered_string_agg_as_array_agg"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }
}

/// The aggregate function of `expr`, under any alias.
fn aggregate_function(expr: &Expr) -> Option<&AggregateFunction> {
    match expr {
        Expr::AggregateFunction(function) => Some(function),
        Expr::Alias(alias) => aggregate_function(&alias.expr),
        _ => None,
    }
}

/// Whether two of `aggregate`'s aggregates require orderings of its input
/// that no one sort satisfies: neither is a prefix of the other, nor of the
/// other reversed.
fn has_conflicting_orderings(aggregate: &Aggregate) -> bool {
    let orderings: Vec<&[SortExpr]> = aggregate
        .aggr_expr
        .iter()
        .filter_map(aggregate_function)
        .filter(|function| {
            function.func.order_sensitivity().hard_requires()
                && !function.params.order_by.is_empty()
        })
        .map(|function| function.params.order_by.as_slice())
        .collect();
    orderings.iter().enumerate().any(|(i, a)| {
        orderings[i + 1..].iter().any(|b| {
            let reversed: Vec<SortExpr> = b.iter().map(SortExpr::reverse).collect();
            !(is_prefix(a, b)
                || is_prefix(b, a)
                || is_prefix(a, &reversed)
                || is_prefix(&reversed, a))
        })
    })
}

fn is_prefix(short: &[SortExpr], long: &[SortExpr]) -> bool {
    short.len() <= long.len() && short.iter().zip(long).all(|(a, b)| a == b)
}

/// `string_agg(x, d ORDER BY o) FILTER (WHERE f)` as the `array_agg` it is
/// computed from, and its delimiter; `None` for any other aggregate.
fn as_array_agg(expr: &Expr, array_agg: &Arc<AggregateUDF>) -> Option<(Expr, Expr)> {
    let function = aggregate_function(expr)?;
    let AggregateFunctionParams {
        args,
        distinct,
        filter,
        order_by,
        null_treatment,
    } = &function.params;
    if function.func.name() != "string_agg" || *distinct || order_by.is_empty() {
        return None;
    }
    let [value, delimiter] = args.as_slice() else {
        return None;
    };
    // The filter below reads the value a second time
    if value.is_volatile() {
        return None;
    }
    let Expr::Literal(
        ScalarValue::Utf8(Some(_))
        | ScalarValue::LargeUtf8(Some(_))
        | ScalarValue::Utf8View(Some(_)),
        _,
    ) = delimiter
    else {
        return None;
    };
    let present = value.clone().is_not_null();
    let filter = match filter {
        Some(filter) => filter.as_ref().clone().and(present),
        None => present,
    };
    let values = Expr::AggregateFunction(AggregateFunction::new_udf(
        Arc::clone(array_agg),
        vec![value.clone()],
        false,
        Some(Box::new(filter)),
        order_by.clone(),
        *null_treatment,
    ));
    Some((values, delimiter.clone()))
}

/// `aggregate` with each ordered `string_agg` computed from an `array_agg`,
/// under a projection that joins the values and keeps every column's name.
fn rewrite(
    aggregate: Aggregate,
    array_agg: &Arc<AggregateUDF>,
    array_to_string: &Arc<ScalarUDF>,
    config: &dyn OptimizerConfig,
) -> Result<LogicalPlan> {
    // The group keys (and a grouping set's id) come first
    let group_columns = aggregate.schema.fields().len() - aggregate.aggr_expr.len();
    let mut aggr_expr = Vec::with_capacity(aggregate.aggr_expr.len());
    let mut delimiters = Vec::with_capacity(aggregate.aggr_expr.len());
    for expr in &aggregate.aggr_expr {
        match as_array_agg(expr, array_agg) {
            Some((values, delimiter)) => {
                let name = config.alias_generator().next("__ordered_values");
                aggr_expr.push(values.alias(name));
                delimiters.push(Some(delimiter));
            }
            None => {
                aggr_expr.push(expr.clone());
                delimiters.push(None);
            }
        }
    }
    let old_schema = Arc::clone(&aggregate.schema);
    let computed = LogicalPlan::Aggregate(Aggregate::try_new(
        aggregate.input,
        aggregate.group_expr,
        aggr_expr,
    )?);
    let new_schema = Arc::clone(computed.schema());
    let columns = (0..old_schema.fields().len()).map(|i| {
        let (qualifier, field) = old_schema.qualified_field(i);
        let column = Expr::Column(Column::from(new_schema.qualified_field(i)));
        let value = match i
            .checked_sub(group_columns)
            .and_then(|aggregate| delimiters[aggregate].clone())
        {
            Some(delimiter) => cast(
                Expr::ScalarFunction(ScalarFunction::new_udf(
                    Arc::clone(array_to_string),
                    vec![column, delimiter],
                )),
                field.data_type().clone(),
            ),
            None => column,
        };
        value.alias_qualified(qualifier.cloned(), field.name())
    });
    LogicalPlanBuilder::from(computed).project(columns)?.build()
}
