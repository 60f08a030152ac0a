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

//! The frame of a window whose `OVER` clause writes none.
//!
//! SQL gives such a window the whole partition without `ORDER BY`, and with
//! one the rows up to the current row's last peer: `RANGE BETWEEN UNBOUNDED
//! PRECEDING AND CURRENT ROW`, which the planner writes as `ROWS` where the
//! ordering has no ties (its first column key is unique in the input), as
//! the two frames are then the same. The planner gives a window this frame,
//! and a column label leaves out a frame that is this one, so both take it
//! from here.

use datafusion_common::{DFSchema, Dependency};
use datafusion_expr::{Expr, SortExpr, WindowFrame};

/// The frame of a window ordered by `order_by`, over an input of `schema`,
/// that writes none.
pub(crate) fn implicit_window_frame(
    order_by: &[SortExpr],
    schema: &DFSchema,
) -> WindowFrame {
    if order_by.is_empty() {
        return WindowFrame::new(None);
    }
    // The first key that is a column of the input, or no column at all,
    // tells whether ties are possible
    let strict = order_by
        .iter()
        .find_map(|sort| {
            let Expr::Column(column) = &sort.expr else {
                return Some(false);
            };
            let index = schema.index_of_column(column).ok()?;
            Some(schema.functional_dependencies().iter().any(|dependency| {
                dependency.source_indices == vec![index]
                    && dependency.mode == Dependency::Single
            }))
        })
        .unwrap_or(false);
    WindowFrame::new(Some(strict))
}
