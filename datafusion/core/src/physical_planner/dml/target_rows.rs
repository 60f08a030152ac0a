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

//! [`TargetRows`]: the rows a `DELETE` or an `UPDATE` changes, found by
//! running its plan, and handed to the table provider by their values.
//!
//! Each row found is kept as its old values in the row format (where NULL
//! is a value like any other, so equal means "not distinct"), with the new
//! values of the columns an `UPDATE` assigns. The provider evaluates the
//! filter `is_target_row(c1, ..., cn)` over its own columns, true for a row
//! whose values are among those found, and each assignment
//! `target_row_value(c1, ..., cn)`, that row's new value.

use std::hash::{Hash, Hasher};
use std::mem::size_of;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt32Array};
use arrow::compute::{CastOptions, cast_with_options, concat, take};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::row::{RowConverter, Rows, SortField};
use arrow::util::display::array_value_to_string;
use datafusion_catalog::TableProvider;
use datafusion_common::{
    Column, HashMap, Result, TableReference, exec_datafusion_err, exec_err, internal_err,
};
use datafusion_execution::TaskContext;
use datafusion_execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion_physical_plan::{ExecutionPlan, execute_stream};
use datafusion_session::Session;
use futures::StreamExt;

use super::Layout;

/// A cast that fails on a value the target type cannot hold.
const STRICT: CastOptions<'static> = CastOptions {
    safe: false,
    format_options: arrow::util::display::FormatOptions::new(),
};

/// The rows a statement changes: see the [module documentation](self).
#[derive(Debug)]
pub(crate) struct TargetRows {
    table_name: TableReference,
    /// Converts the table's columns, of these types, to the row format.
    converter: RowConverter,
    types: Vec<DataType>,
    /// Each row found, as its old values in the row format: the position of
    /// its new values, and how many rows of these values were found.
    found: HashMap<Box<[u8]>, (u32, u32)>,
    /// The new values of each column assigned, by position.
    new_values: Vec<ArrayRef>,
    /// Accounts for the memory of `found` and `new_values`.
    _reservation: MemoryReservation,
}

impl TargetRows {
    /// Runs `rows` and keeps the rows it yields, laid out as `layout` says,
    /// for the table `table`.
    pub(crate) async fn find(
        rows: Arc<dyn ExecutionPlan>,
        layout: &Layout,
        table: &SchemaRef,
        table_name: &TableReference,
        context: &Arc<TaskContext>,
    ) -> Result<Self> {
        let converter = RowConverter::new(
            table
                .fields()
                .iter()
                .map(|field| SortField::new(field.data_type().clone()))
                .collect(),
        )?;
        let reservation = MemoryConsumer::new(format!("TargetRows[{table_name}]"))
            .register(context.memory_pool());
        // The new values of the rows found in the row format, to tell whether
        // two rows of equal old values agree on them (none for a DELETE)
        let new_converter = if layout.new.is_empty() {
            None
        } else {
            let fields = layout
                .new
                .iter()
                .map(|(name, _)| {
                    let data_type = table.field_with_name(name)?.data_type().clone();
                    Ok(SortField::new(data_type))
                })
                .collect::<Result<_>>()?;
            Some(RowConverter::new(fields)?)
        };
        let mut new_rows: Option<Rows> = None;
        let mut found: HashMap<Box<[u8]>, (u32, u32)> = HashMap::new();
        let mut new_batches: Vec<Vec<ArrayRef>> = vec![];
        let mut position: u32 = 0;
        let mut stream = execute_stream(rows, Arc::clone(context))?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let old: Vec<ArrayRef> = layout
                .old
                .iter()
                .map(|&index| Arc::clone(batch.column(index)))
                .collect();
            // Cast to the column's type, failing where a value does not fit
            let new: Vec<ArrayRef> = layout
                .new
                .iter()
                .map(|(name, index)| {
                    let column_type = table.field_with_name(name)?.data_type();
                    Ok(cast_with_options(
                        batch.column(*index),
                        column_type,
                        &STRICT,
                    )?)
                })
                .collect::<Result<_>>()?;
            let old_rows = converter.convert_columns(&old)?;
            let batch_new_rows = match &new_converter {
                Some(new_converter) => Some(new_converter.convert_columns(&new)?),
                None => None,
            };
            let first = new_rows.as_ref().map_or(0, |rows| rows.num_rows());
            let mut grown: usize =
                new.iter().map(|array| array.get_array_memory_size()).sum();
            for (offset, row) in old_rows.iter().enumerate() {
                if let Some((earlier, count)) = found.get_mut(row.as_ref()) {
                    *count += 1;
                    if let Some(batch_new_rows) = &batch_new_rows {
                        let earlier = *earlier as usize;
                        let earlier_new = match &new_rows {
                            Some(rows) if earlier < first => rows.row(earlier),
                            _ => batch_new_rows.row(earlier - first),
                        };
                        if earlier_new != batch_new_rows.row(offset) {
                            return exec_err!(
                                "UPDATE on table '{table_name}' would give the row {} \
                                 two different new values",
                                row_text(&converter, row.as_ref())?
                            );
                        }
                    }
                } else {
                    grown += row.as_ref().len() + size_of::<(Box<[u8]>, (u32, u32))>();
                    found.insert(Box::from(row.as_ref()), (position, 1));
                }
                position = position.checked_add(1).ok_or_else(|| {
                    exec_datafusion_err!(
                        "{} rows or more to change in table '{table_name}'",
                        u32::MAX
                    )
                })?;
            }
            if let Some(batch_new_rows) = batch_new_rows {
                grown += batch_new_rows.size();
                match &mut new_rows {
                    Some(rows) => batch_new_rows.iter().for_each(|row| rows.push(row)),
                    None => new_rows = Some(batch_new_rows),
                }
            }
            reservation.try_grow(grown)?;
            new_batches.push(new);
        }
        let new_values = (0..layout.new.len())
            .map(|column| {
                let arrays: Vec<&dyn arrow::array::Array> = new_batches
                    .iter()
                    .map(|batch| batch[column].as_ref())
                    .collect();
                if arrays.is_empty() {
                    let (name, _) = &layout.new[column];
                    let data_type = table.field_with_name(name)?.data_type();
                    return Ok(arrow::array::new_empty_array(data_type));
                }
                Ok(concat(&arrays)?)
            })
            .collect::<Result<Vec<_>>>()?;
        // The new values are kept as arrays; their rows were only compared
        let compared = new_rows.map_or(0, |rows| rows.size());
        reservation.shrink(compared.min(reservation.size()));
        Ok(Self {
            table_name: table_name.clone(),
            converter,
            types: table
                .fields()
                .iter()
                .map(|field| field.data_type().clone())
                .collect(),
            found,
            new_values,
            _reservation: reservation,
        })
    }

    /// Checks the rows found against the table: that no row was found more
    /// often than the table holds it (a join matched it twice, and which
    /// match gives its new values is not defined), and, where the plan
    /// `may_choose`, that every row whose values are among those found was
    /// found (a `LIMIT` or a volatile function that kept some rows of a
    /// value and dropped others would otherwise change them all).
    pub(crate) async fn check_against_table(
        &self,
        provider: &Arc<dyn TableProvider>,
        session: &dyn Session,
        context: &Arc<TaskContext>,
        may_choose: bool,
    ) -> Result<()> {
        let scan = provider.scan(session, None, &[], None).await?;
        let mut in_table: HashMap<&[u8], u32> = HashMap::new();
        let mut stream = execute_stream(scan, Arc::clone(context))?;
        while let Some(batch) = stream.next().await {
            let rows = self.converter.convert_columns(batch?.columns())?;
            for row in rows.iter() {
                if let Some((key, _)) = self.found.get_key_value(row.as_ref()) {
                    *in_table.entry(key.as_ref()).or_default() += 1;
                }
            }
        }
        for (key, (_, found)) in &self.found {
            let in_table = in_table.get(key.as_ref()).copied().unwrap_or(0);
            if *found > in_table {
                return exec_err!(
                    "UPDATE on table '{}' matches the row {} with {} rows of its FROM: \
                     which one gives its new values is not defined, and no row changed",
                    self.table_name,
                    row_text(&self.converter, key)?,
                    found / in_table.max(1)
                );
            }
            if may_choose && in_table != *found {
                return exec_err!(
                    "Cannot tell apart the rows to change in table '{}': {found} of \
                     {in_table} rows with equal values were chosen (by a LIMIT or a \
                     volatile function), and the table can change only all of them",
                    self.table_name
                );
            }
        }
        Ok(())
    }

    /// The filter that holds for exactly the rows found, over the columns of
    /// the table `table`.
    pub(crate) fn filter(target_rows: &Arc<Self>, table: &SchemaRef) -> Expr {
        let udf = TargetRowUdf {
            rows: Arc::clone(target_rows),
            value: None,
            signature: Signature::variadic_any(Volatility::Volatile),
        };
        ScalarUDF::new_from_impl(udf).call(table_columns(table))
    }

    /// The assignments of the columns `layout` assigns, over the columns of
    /// the table `table`: each row's new value.
    pub(crate) fn assignments(
        target_rows: &Arc<Self>,
        layout: &Layout,
        table: &SchemaRef,
    ) -> Vec<(String, Expr)> {
        layout
            .new
            .iter()
            .enumerate()
            .map(|(column, (name, _))| {
                let udf = TargetRowUdf {
                    rows: Arc::clone(target_rows),
                    value: Some(column),
                    signature: Signature::variadic_any(Volatility::Volatile),
                };
                let value = ScalarUDF::new_from_impl(udf).call(table_columns(table));
                (name.clone(), value)
            })
            .collect()
    }

    /// The position of each row of `columns` among the rows found, if found.
    fn positions(&self, columns: &[ArrayRef]) -> Result<UInt32Array> {
        let types = columns.iter().map(|column| column.data_type());
        if !types.eq(self.types.iter()) {
            return internal_err!(
                "the columns of table '{}' changed while it was being changed",
                self.table_name
            );
        }
        let rows = self.converter.convert_columns(columns)?;
        Ok(rows
            .iter()
            .map(|row| self.found.get(row.as_ref()).map(|(position, _)| *position))
            .collect())
    }
}

fn table_columns(table: &SchemaRef) -> Vec<Expr> {
    table
        .fields()
        .iter()
        .map(|field| Expr::Column(Column::new_unqualified(field.name())))
        .collect()
}

/// `is_target_row(c1, ..., cn)` (with `value` `None`), or
/// `target_row_value(c1, ..., cn)` of the `value`-th column assigned.
#[derive(Debug)]
struct TargetRowUdf {
    rows: Arc<TargetRows>,
    value: Option<usize>,
    signature: Signature,
}

impl PartialEq for TargetRowUdf {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows) && self.value == other.value
    }
}

impl Eq for TargetRowUdf {}

impl Hash for TargetRowUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.rows).hash(state);
        self.value.hash(state);
    }
}

impl ScalarUDFImpl for TargetRowUdf {
    fn name(&self) -> &str {
        match self.value {
            None => "is_target_row",
            Some(_) => "target_row_value",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.value {
            None => DataType::Boolean,
            Some(column) => self.rows.new_values[column].data_type().clone(),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let columns = ColumnarValue::values_to_arrays(&args.args)?;
        let positions = self.rows.positions(&columns)?;
        let result: ArrayRef = match self.value {
            None => Arc::new(
                positions
                    .iter()
                    .map(|position| Some(position.is_some()))
                    .collect::<BooleanArray>(),
            ),
            Some(column) => take(&self.rows.new_values[column], &positions, None)?,
        };
        Ok(ColumnarValue::Array(result))
    }
}

/// The values of `row`, a row of the table in `converter`'s row format, as
/// an error shows them: `(1, NULL, x)`.
fn row_text(converter: &RowConverter, row: &[u8]) -> Result<String> {
    let parser = converter.parser();
    let columns = converter.convert_rows([parser.parse(row)])?;
    let values = columns
        .iter()
        .map(|column| array_value_to_string(column, 0))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(format!("({})", values.join(", ")))
}
