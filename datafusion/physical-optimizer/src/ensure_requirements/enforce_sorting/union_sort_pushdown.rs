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

//! Whether a sort may move below a `UnionExec`, into each of its inputs.
//!
//! Sort pushdown sends a requirement above a union to every input, and a
//! merge above the union then relies on the union's ordering. But the
//! union's ordering is what its equivalence properties can prove of all
//! inputs together, and each input's sort is reduced by what holds in that
//! input alone: `SELECT s AS a, s AS b, s AS c ... UNION ALL SELECT 'c',
//! 'b', 'b' ... ORDER BY a, b DESC, c` sorts the first input by `a` only
//! and the second not at all. Each input is sorted as required, but no
//! single ordering of the union says so, and the sanity checker refused
//! the plan (DataFusion 55.2.0).
//!
//! So the requirement moves below the union only where the union of its
//! inputs, each sorted as required, is found sorted as required; otherwise
//! the sort stays above the union.

use std::sync::Arc;

use datafusion_common::Result;
use datafusion_physical_expr::calculate_union;
use datafusion_physical_expr_common::sort_expr::{LexRequirement, PhysicalSortExpr};
use datafusion_physical_plan::{ExecutionPlan, ExecutionPlanProperties};

/// Whether `union`, each of its inputs sorted by `required`, is found
/// sorted by `required`.
pub(crate) fn union_keeps_ordering(
    union: &Arc<dyn ExecutionPlan>,
    required: &LexRequirement,
) -> Result<bool> {
    let sorted_inputs = union
        .children()
        .into_iter()
        .map(|input| {
            let mut properties = input.equivalence_properties().clone();
            properties.reorder(required.iter().cloned().map(PhysicalSortExpr::from))?;
            Ok(properties)
        })
        .collect::<Result<Vec<_>>>()?;
    calculate_union(sorted_inputs, union.schema())?
        .ordering_satisfy_requirement(required.iter().cloned())
}
