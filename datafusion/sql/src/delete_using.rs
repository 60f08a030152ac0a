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

//! `DELETE FROM t USING d WHERE ...`: the rows of `t` for which some rows of
//! the `USING` items make the `WHERE` hold, as PostgreSQL defines it.
//!
//! It is planned as the join of `t` with the `USING` items, filtered by the
//! `WHERE` and projected to `t`'s columns: the rows of `t` that the join
//! keeps, once for each combination that matches. The physical planner
//! hands such a plan to the table by value (`physical_planner/dml.rs` in
//! the core crate), where a row found twice is deleted once.

use std::sync::Arc;

use datafusion_common::{Column, DFSchema, Result, not_impl_err, plan_err};
use datafusion_expr::logical_plan::builder::project;
use datafusion_expr::{
    Expr, LogicalPlan, LogicalPlanBuilder, WriteOp, dml::DmlStatement,
};
use sqlparser::ast::{Expr as SQLExpr, FromTable, TableFactor, TableWithJoins};

use crate::planner::{ContextProvider, PlannerContext, SqlToRel};

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// `DELETE FROM <from> USING <using> [WHERE <selection>]`.
    pub(crate) fn delete_using_to_plan(
        &self,
        from: FromTable,
        using: Vec<TableWithJoins>,
        selection: Option<SQLExpr>,
        limit: Option<&SQLExpr>,
    ) -> Result<LogicalPlan> {
        if limit.is_some() {
            return not_impl_err!("DELETE ... USING with a LIMIT");
        }
        let (FromTable::WithFromKeyword(mut target)
        | FromTable::WithoutKeyword(mut target)) = from;
        let target = match (target.pop(), target.is_empty()) {
            (Some(target), true) if target.joins.is_empty() => target,
            _ => return plan_err!("DELETE ... USING deletes from one table"),
        };
        let TableFactor::Table { name, alias, .. } = &target.relation else {
            return plan_err!("DELETE ... USING deletes from a table");
        };
        let table_ref = self.object_name_to_table_reference(name.clone())?;
        let table_source = self.context_provider.get_table_source(table_ref.clone())?;
        // The target's columns, as the statement names them
        let target_name = match alias {
            Some(alias) => datafusion_common::TableReference::bare(
                self.ident_normalizer.normalize(alias.name.clone()),
            ),
            None => table_ref.clone(),
        };
        let target_schema =
            DFSchema::try_from_qualified_schema(target_name, &table_source.schema())?;

        let mut planner_context = PlannerContext::new();
        let joined = self.plan_dml_from_items(target, using, &mut planner_context)?;
        let selected = match selection {
            None => joined,
            Some(selection) => {
                let predicate =
                    self.sql_to_expr(selection, joined.schema(), &mut planner_context)?;
                LogicalPlanBuilder::from(joined)
                    .filter(predicate)?
                    .build()?
            }
        };
        let rows = project(
            selected,
            target_schema
                .iter()
                .map(|(qualifier, field)| Expr::Column(Column::from((qualifier, field)))),
        )?;
        Ok(LogicalPlan::Dml(DmlStatement::new(
            table_ref,
            table_source,
            WriteOp::Delete,
            Arc::new(rows),
        )))
    }
}
