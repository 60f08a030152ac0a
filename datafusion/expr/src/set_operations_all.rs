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

//! `INTERSECT ALL` and `EXCEPT ALL`: set operations over multisets.
//!
//! A row that the left input has `m` times and the right input `n` times
//! (rows compared as `IS NOT DISTINCT FROM`) is in `INTERSECT ALL`
//! `min(m, n)` times and in `EXCEPT ALL` `max(m - n, 0)` times. A semi or
//! anti join on the rows alone gets neither: the semi join keeps all `m`
//! copies when `n > 0`, the anti join none of them (apache/datafusion#12955,
//! #12956).
//!
//! Numbering the copies gets both. `row_number() OVER (PARTITION BY every
//! column)` gives the copies of a row on each side the numbers `1..=m` and
//! `1..=n`; a join on the columns *and* the number pairs the `i`-th copy on
//! the left with the `i`-th on the right. The left copies that find a
//! partner, those numbered up to `min(m, n)`, are the intersection (a semi
//! join); those that find none, numbered past `n`, are the difference (an
//! anti join). DuckDB plans these operators the same way.
//!
//! The `row_number` window function lives in `datafusion-functions-window`,
//! which this crate cannot depend on, so each caller (the SQL planner, the
//! `DataFrame`, the Substrait consumer) passes the one it has registered.

use std::sync::Arc;

use datafusion_common::{Column, JoinType, NullEquality, Result, ScalarValue, plan_err};

use crate::expr::WindowFunction;
use crate::logical_plan::builder::requalify_sides_if_needed;
use crate::{Expr, LogicalPlan, LogicalPlanBuilder, WindowUDF, lit};

/// The name of the column that numbers the copies of a row on each side.
/// It never leaves the plan: the result is projected to the left's columns.
const OCCURRENCE: &str = "__set_operation_occurrence";

/// `left INTERSECT ALL right`.
pub fn intersect_all(
    left: LogicalPlan,
    right: LogicalPlan,
    row_number: Arc<WindowUDF>,
) -> Result<LogicalPlan> {
    set_operation_all(left, right, JoinType::LeftSemi, row_number)
}

/// `left EXCEPT ALL right`.
pub fn except_all(
    left: LogicalPlan,
    right: LogicalPlan,
    row_number: Arc<WindowUDF>,
) -> Result<LogicalPlan> {
    set_operation_all(left, right, JoinType::LeftAnti, row_number)
}

fn set_operation_all(
    left: LogicalPlan,
    right: LogicalPlan,
    join_type: JoinType,
    row_number: Arc<WindowUDF>,
) -> Result<LogicalPlan> {
    let left_len = left.schema().fields().len();
    let right_len = right.schema().fields().len();
    if left_len != right_len {
        return plan_err!(
            "INTERSECT/EXCEPT query must have the same number of columns. Left is {left_len} and right is {right_len}."
        );
    }
    // Both sides may read one table: tell their columns apart
    let (left, right, _) = requalify_sides_if_needed(
        LogicalPlanBuilder::from(left),
        LogicalPlanBuilder::from(right),
    )?;
    let (left, right) = (left.build()?, right.build()?);
    let left_columns = left.schema().columns();
    let right_columns = right.schema().columns();
    let keys = |columns: Vec<Column>| {
        columns
            .into_iter()
            .chain([Column::from_name(OCCURRENCE)])
            .collect::<Vec<_>>()
    };
    let keys = (keys(left_columns.clone()), keys(right_columns));
    LogicalPlanBuilder::from(numbered(left, Arc::clone(&row_number))?)
        .join_detailed(
            numbered(right, row_number)?,
            join_type,
            keys,
            None,
            NullEquality::NullEqualsNull,
        )?
        .project(left_columns.into_iter().map(Expr::Column))?
        .build()
}

/// `plan` with a last column, [`OCCURRENCE`], that numbers the copies of
/// each of its rows from 1.
///
/// The copies are the rows equal under `IS NOT DISTINCT FROM`, as the join
/// compares them: a float column partitions as itself plus zero, which makes
/// `-0.0` the `0.0` it equals (the window's partitions otherwise tell them
/// apart, by their order).
fn numbered(plan: LogicalPlan, row_number: Arc<WindowUDF>) -> Result<LogicalPlan> {
    let every_column = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            if field.data_type().is_floating() {
                Ok(column + lit(ScalarValue::new_zero(field.data_type())?))
            } else {
                Ok(column)
            }
        })
        .collect::<Result<_>>()?;
    let mut occurrence = WindowFunction::new(row_number, vec![]);
    occurrence.params.partition_by = every_column;
    let occurrence = Expr::from(occurrence).alias(OCCURRENCE);
    LogicalPlanBuilder::from(plan)
        .window(vec![occurrence])?
        .build()
}
