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

//! Where a recursive query may read itself.
//!
//! The recursive term of `WITH RECURSIVE r AS (... UNION ...)` reads the
//! rows the previous iteration added to `r`, through one work table that
//! the physical plan hands to its single scan. A scan inside a subquery
//! expression is planned apart from that term and never receives the work
//! table: it failed at run time with an internal error. As PostgreSQL does,
//! such a query is refused while planning, naming the query.

use std::sync::Arc;

use datafusion_common::tree_node::TreeNodeRecursion;
use datafusion_common::{Result, plan_err};
use datafusion_expr::{LogicalPlan, TableSource};

/// Refuses `recursive_term` if it reads `work_table`, the work table of the
/// recursive query `name`, inside a subquery expression.
pub(crate) fn check_no_self_reference_in_subquery(
    name: &str,
    recursive_term: &LogicalPlan,
    work_table: &Arc<dyn TableSource>,
) -> Result<()> {
    let scans_work_table = |plan: &LogicalPlan| {
        matches!(plan, LogicalPlan::TableScan(scan)
            if Arc::ptr_eq(&scan.source, work_table))
    };
    let mut in_subquery = false;
    recursive_term.apply_with_subqueries(|node| {
        node.apply_subqueries(|subquery| {
            subquery.apply_with_subqueries(|inner| {
                in_subquery |= scans_work_table(inner);
                Ok(stop_when(in_subquery))
            })?;
            Ok(stop_when(in_subquery))
        })?;
        Ok(stop_when(in_subquery))
    })?;
    if in_subquery {
        return plan_err!(
            "Recursive reference to query {name} must not appear within a subquery"
        );
    }
    Ok(())
}

fn stop_when(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
}
