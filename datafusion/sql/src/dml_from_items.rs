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

//! The `FROM` items of `UPDATE t ... FROM ...` and the `USING` items of
//! `DELETE FROM t USING ...`, joined with the target `t`.
//!
//! SQL scopes the target apart from those items: `t` is visible in `SET` and
//! `WHERE`, but not to a `LATERAL` item among them, which sees only the
//! items before it (PostgreSQL: "invalid reference to FROM-clause entry for
//! table t"). Planned as one `FROM t, ...` list, a `LATERAL` item read the
//! target's columns, and the statement changed rows that PostgreSQL and
//! DuckDB refuse to change. The items are planned as a list of their own and
//! then joined with the target.

use datafusion_common::Result;
use datafusion_expr::{LogicalPlan, LogicalPlanBuilder};
use sqlparser::ast::TableWithJoins;

use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `target` joined with `items`, the `FROM` of an `UPDATE` or the
    /// `USING` of a `DELETE`; the target alone where there are none.
    pub(crate) fn plan_dml_from_items(
        &self,
        target: TableWithJoins,
        items: Vec<TableWithJoins>,
        planner_context: &mut PlannerContext,
    ) -> Result<LogicalPlan> {
        let target = self.plan_table_with_joins(target, planner_context)?;
        if items.is_empty() {
            return Ok(target);
        }
        let items = self.plan_from_tables(items, planner_context)?;
        crate::name_scopes::check_distinct_items(target.schema(), items.schema())?;
        LogicalPlanBuilder::from(target).cross_join(items)?.build()
    }
}
