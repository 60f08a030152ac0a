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

//! What an aggregate's output keeps of its input's properties under
//! `GROUPING SETS`, `ROLLUP` and `CUBE`.
//!
//! Each grouping set replaces the keys it leaves out by NULL, so a key's
//! column holds the key's value only in the rows of the sets that hold it.
//! Such a column inherits nothing of the key: a constant key
//! (`GROUPING SETS (('a'), ())`) is not constant in the output, and an input
//! hash-partitioned on a key is not partitioned on its column. Were it
//! constant, the final aggregate would take its input as sorted on it and
//! emit a group each time the NULL rows interrupt the others, splitting one
//! group into several.
//!
//! Nor is the output ordered as the input, even on the keys every set
//! holds: each batch's rows are grouped set by set, so the groups of the
//! second set come after those of the first for every key. For the same
//! reason the aggregate does not stream groups over an input sorted on such
//! a key (it emitted a group of one set while the key's rows went on, and
//! the key's group came back twice, its count split).
//!
//! Nor are the keys distinct in the output by themselves: `ROLLUP (k, k)`
//! outputs each `k` twice, and a set's NULL may meet a key's own NULL. Only
//! with `__grouping_id` are they distinct.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use datafusion_common::Result;
use datafusion_expr::Aggregate;
use datafusion_physical_expr::equivalence::ProjectionMapping;
use datafusion_physical_expr::projection::ProjectionTargets;

use super::PhysicalGroupBy;

/// The mapping from the input's expressions to the aggregate's key columns,
/// of the keys that no grouping set replaces by NULL.
pub(super) fn key_mapping(
    group_by: &PhysicalGroupBy,
    input_schema: &SchemaRef,
) -> Result<ProjectionMapping> {
    let mapping = ProjectionMapping::try_new(group_by.expr().to_vec(), input_schema)?;
    if !group_by.has_grouping_set() {
        return Ok(mapping);
    }
    let nulled = group_by.exprs_nullable();
    Ok(mapping
        .iter()
        .filter_map(|(source, targets)| {
            let kept: Vec<_> = targets
                .iter()
                .filter(|(_, index)| !nulled.get(*index).copied().unwrap_or(true))
                .cloned()
                .collect();
            (!kept.is_empty())
                .then(|| (Arc::clone(source), ProjectionTargets::from(kept)))
        })
        .collect())
}

/// Whether an aggregate whose output is `schema` and whose keys `mapping`
/// maps computes grouping sets: its output has a `__grouping_id` that no
/// key is (the final aggregate of grouping sets has it as a key).
pub(super) fn computes_grouping_sets(
    mapping: &ProjectionMapping,
    schema: &Schema,
) -> bool {
    let Ok(grouping_id) = schema.index_of(Aggregate::INTERNAL_GROUPING_ID) else {
        return false;
    };
    !mapping
        .values()
        .any(|targets| targets.iter().any(|(_, index)| *index == grouping_id))
}
