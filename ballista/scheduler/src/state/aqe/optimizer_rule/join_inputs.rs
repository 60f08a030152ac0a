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

//! The hash exchanges that feed a join, which [`PropagateEmptyExecRule`]
//! leaves in place when they turn out empty.
//!
//! An `EmptyExec` in place of an empty exchange cannot claim the hash
//! partitioning a partitioned join requires of its input. When the join
//! keeps its empty side (an outer join, a single join), the next replan plans
//! a repartition over the `EmptyExec`, which becomes a new stage, runs, is
//! found empty and replaced again: the job never finishes. The empty exchange
//! itself is a valid, already resolved input, and a join that an empty side
//! does remove is still removed, from the exchange's exact statistics.
//!
//! [`PropagateEmptyExecRule`]: super::PropagateEmptyExecRule

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_plan::ExecutionPlan;

use crate::state::aqe::execution_plan::ExchangeExec;

/// The plan ids of the hash exchanges in `plan` that are an input of an
/// operator with two inputs (a join).
pub(crate) fn join_hash_inputs(plan: &Arc<dyn ExecutionPlan>) -> HashSet<usize> {
    let mut ids = HashSet::new();
    plan.apply(|node| {
        let children = node.children();
        if children.len() == 2 {
            for child in children {
                if let Some(exchange) = child.downcast_ref::<ExchangeExec>()
                    && exchange.is_hash_partitioned()
                {
                    ids.insert(exchange.plan_id);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("the visit cannot fail");
    ids
}
