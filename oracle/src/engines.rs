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

//! Running a query on each engine, and its rows as a multiset.
//!
//! Every value the queries return is an integer, a boolean or NULL: SQLite
//! answers a boolean with 1 or 0, so DataFusion's booleans are read as
//! integers too, and the classes of DataFusion's columns (integer or
//! boolean) are checked against what the query computes.

use datafusion::arrow::array::{Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use rusqlite::types::ValueRef;

/// A row of a result.
pub type Row = Vec<Option<i64>>;

/// The rows of `sql` on SQLite, in its order.
pub fn sqlite_rows(
    connection: &rusqlite::Connection,
    sql: &str,
) -> rusqlite::Result<Vec<Row>> {
    let mut statement = connection.prepare(sql)?;
    let width = statement.column_count();
    let rows = statement.query_map([], |row| {
        (0..width)
            .map(|index| match row.get_ref(index)? {
                ValueRef::Null => Ok(None),
                ValueRef::Integer(value) => Ok(Some(value)),
                other => Err(rusqlite::Error::InvalidColumnType(
                    index,
                    format!("{other:?}"),
                    other.data_type(),
                )),
            })
            .collect::<rusqlite::Result<Row>>()
    })?;
    rows.collect()
}

/// What a column of a result holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Integer,
    Boolean,
    /// Any other type; its values are read as integers where they cast.
    Other,
}

/// The rows of `sql` on DataFusion, in its order.
pub async fn datafusion_rows(ctx: &SessionContext, sql: &str) -> Result<Vec<Row>> {
    Ok(datafusion_typed_rows(ctx, sql).await?.1)
}

/// The classes of the columns of `sql` on DataFusion, and its rows in its
/// order (booleans as 1 and 0, as SQLite gives them).
pub async fn datafusion_typed_rows(
    ctx: &SessionContext,
    sql: &str,
) -> Result<(Vec<Class>, Vec<Row>)> {
    let frame = ctx.sql(sql).await?;
    let classes = frame
        .schema()
        .fields()
        .iter()
        .map(|field| match field.data_type() {
            data_type if data_type.is_integer() => Class::Integer,
            DataType::Boolean => Class::Boolean,
            _ => Class::Other,
        })
        .collect();
    let batches = frame.collect().await?;
    let mut rows = vec![];
    for batch in batches {
        let columns = batch
            .columns()
            .iter()
            .map(|column| {
                let column = cast(column, &DataType::Int64)?;
                column
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .cloned()
                    .ok_or_else(|| DataFusionError::Internal("not Int64".into()))
            })
            .collect::<Result<Vec<_>>>()?;
        for index in 0..batch.num_rows() {
            rows.push(
                columns
                    .iter()
                    .map(|column| column.is_valid(index).then(|| column.value(index)))
                    .collect(),
            );
        }
    }
    Ok((classes, rows))
}

/// `rows` as a multiset: sorted.
pub fn multiset(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort();
    rows
}

/// A panic caught while running a query, as the error the tests report.
pub fn panic_error(panic: &(dyn std::any::Any + Send)) -> String {
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    format!("panicked: {message}")
}
