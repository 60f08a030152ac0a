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

//! [`DmlExec`]: a `DELETE` or an `UPDATE`, handed to its table provider
//! when the plan runs.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion_catalog::TableProvider;
use datafusion_common::tree_node::TreeNodeRecursion;
use datafusion_common::{Result, TableReference, internal_err};
use datafusion_execution::{SendableRecordBatchStream, TaskContext};
use datafusion_expr::WriteOp;
use datafusion_physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion_physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion_physical_plan::stream::RecordBatchStreamAdapter;
use datafusion_physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    execute_stream,
};
use futures::{StreamExt, TryStreamExt};

use super::Changes;
use super::target_rows::TargetRows;
use crate::execution::context::SessionState;

/// Applies a `DELETE` or an `UPDATE` when it runs: finds the rows to change
/// (for [`Changes::ByValue`], by running its one child), calls the table
/// provider's [`TableProvider::delete_from`] or [`TableProvider::update`],
/// and runs the plan the provider returns, whose output (the count of rows
/// changed) is this plan's.
///
/// The provider is called only here, as the plan runs, and never while it
/// is planned: a provider such as `MemTable` changes its rows in the call
/// itself, which `EXPLAIN` would otherwise do.
pub(crate) struct DmlExec {
    op: WriteOp,
    table_name: TableReference,
    provider: Arc<dyn TableProvider>,
    /// The session the statement was planned in, which the provider is
    /// called with.
    session: Arc<SessionState>,
    changes: Changes,
    properties: Arc<PlanProperties>,
}

/// The statement and its table, not the session: an error that shows a plan
/// (as `datafusion-proto` does for a node it cannot serialize) would print
/// every function and option of the session.
impl fmt::Debug for DmlExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DmlExec")
            .field("op", &self.op)
            .field("table_name", &self.table_name)
            .finish_non_exhaustive()
    }
}

impl DmlExec {
    pub(crate) fn new(
        op: WriteOp,
        table_name: TableReference,
        provider: Arc<dyn TableProvider>,
        session: Arc<SessionState>,
        changes: Changes,
    ) -> Result<Self> {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "count",
            DataType::UInt64,
            false,
        )]));
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Ok(Self {
            op,
            table_name,
            provider,
            session,
            changes,
            properties: Arc::new(properties),
        })
    }

    /// Finds the rows to change, calls the provider, and runs its plan.
    async fn apply(
        op: WriteOp,
        table_name: TableReference,
        provider: Arc<dyn TableProvider>,
        session: Arc<SessionState>,
        changes: Changes,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let (filters, assignments) = match changes {
            Changes::AsWritten {
                filters,
                assignments,
            } => (filters, assignments),
            Changes::ByValue {
                rows,
                layout,
                may_choose,
                may_repeat,
            } => {
                let target_rows = TargetRows::find(
                    rows,
                    &layout,
                    &provider.schema(),
                    &table_name,
                    &context,
                )
                .await?;
                if may_choose || may_repeat {
                    target_rows
                        .check_against_table(
                            &provider,
                            session.as_ref(),
                            &context,
                            may_choose,
                        )
                        .await?;
                }
                let target_rows = Arc::new(target_rows);
                let schema = provider.schema();
                (
                    vec![TargetRows::filter(&target_rows, &schema)],
                    TargetRows::assignments(&target_rows, &layout, &schema),
                )
            }
        };
        let plan = match op {
            WriteOp::Delete => provider.delete_from(session.as_ref(), filters).await,
            WriteOp::Update => {
                provider
                    .update(session.as_ref(), assignments, filters)
                    .await
            }
            other => return internal_err!("DmlExec for {other}"),
        }
        .map_err(|e| e.context(format!("{op} operation on table '{table_name}'")))?;
        execute_stream(plan, context)
    }
}

impl DisplayAs for DmlExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, "DmlExec: op={}, table={}", self.op, self.table_name)?;
                match &self.changes {
                    Changes::AsWritten {
                        filters,
                        assignments,
                    } => {
                        if !assignments.is_empty() {
                            let assignments = assignments
                                .iter()
                                .map(|(column, value)| format!("{column} = {value}"))
                                .collect::<Vec<_>>();
                            write!(f, ", assignments=[{}]", assignments.join(", "))?;
                        }
                        if !filters.is_empty() {
                            let filters = filters
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>();
                            write!(f, ", filters=[{}]", filters.join(", "))?;
                        }
                        Ok(())
                    }
                    Changes::ByValue { .. } => write!(f, ", rows=by value"),
                }
            }
            DisplayFormatType::TreeRender => {
                writeln!(f, "op={}", self.op)?;
                write!(f, "table={}", self.table_name)
            }
        }
    }
}

impl ExecutionPlan for DmlExec {
    fn name(&self) -> &str {
        "DmlExec"
    }

    fn schema(&self) -> SchemaRef {
        Arc::clone(self.properties.eq_properties.schema())
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        match &self.changes {
            Changes::AsWritten { .. } => vec![],
            Changes::ByValue { rows, .. } => vec![rows],
        }
    }

    /// The rows are gathered into one place: more partitions only split them
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.children().len()]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let changes = match (&self.changes, children.as_slice()) {
            (Changes::AsWritten { .. }, []) => self.changes.clone(),
            (
                Changes::ByValue {
                    layout,
                    may_choose,
                    may_repeat,
                    ..
                },
                [rows],
            ) => Changes::ByValue {
                rows: Arc::clone(rows),
                layout: layout.clone(),
                may_choose: *may_choose,
                may_repeat: *may_repeat,
            },
            _ => {
                return internal_err!(
                    "DmlExec with {} children: {}",
                    children.len(),
                    self.children().len()
                );
            }
        };
        Ok(Arc::new(Self {
            op: self.op.clone(),
            table_name: self.table_name.clone(),
            provider: Arc::clone(&self.provider),
            session: Arc::clone(&self.session),
            changes,
            properties: Arc::clone(&self.properties),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("DmlExec has one partition, not {partition}");
        }
        let applied = Self::apply(
            self.op.clone(),
            self.table_name.clone(),
            Arc::clone(&self.provider),
            Arc::clone(&self.session),
            self.changes.clone(),
            context,
        );
        let stream = futures::stream::once(applied).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream.boxed(),
        )))
    }
}
