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

//! A result as typed values, from DataFusion and from PostgreSQL.
//!
//! Each column has a [`Class`] (integer, boolean, text, list of integers),
//! and two results agree only where their classes do: a column that should
//! be text and came back an integer is wrong, however its values compare.
//! Widths are not compared (PostgreSQL's `count` is a `bigint` and `1 + 1`
//! an `integer`; DataFusion's are both `Int64`).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int64Array, RecordBatch,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::error::{DataFusionError, Result};
use tokio_postgres::types::Type;

/// What a column holds, as far as the comparison cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Integer,
    Boolean,
    Text,
    IntegerList,
}

/// A value of a row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Integer(i64),
    Boolean(bool),
    Text(String),
    IntegerList(Vec<Option<i64>>),
}

/// A result: its columns' classes and its rows, in the order they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedRows {
    pub classes: Vec<Class>,
    pub rows: Vec<Vec<Value>>,
}

impl TypedRows {
    /// The rows as a multiset: sorted.
    pub fn sorted(mut self) -> Self {
        self.rows.sort();
        self
    }
}

/// The result DataFusion returned as `batches` of `schema`'s fields.
pub fn from_batches(fields: &[Arc<Field>], batches: &[RecordBatch]) -> Result<TypedRows> {
    let classes = fields
        .iter()
        .map(|field| arrow_class(field.data_type()))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = vec![];
    for batch in batches {
        let columns = batch
            .columns()
            .iter()
            .zip(&classes)
            .map(|(column, class)| arrow_values(column, *class))
            .collect::<Result<Vec<_>>>()?;
        for index in 0..batch.num_rows() {
            rows.push(columns.iter().map(|values| values[index].clone()).collect());
        }
    }
    Ok(TypedRows { classes, rows })
}

fn arrow_class(data_type: &DataType) -> Result<Class> {
    Ok(match data_type {
        data_type if data_type.is_integer() => Class::Integer,
        // DataFusion adds an unsigned and a signed integer (`cardinality`
        // returns UInt64) as a decimal of no fraction; its values are
        // integers, and compared as such
        DataType::Decimal128(_, 0) => Class::Integer,
        DataType::Boolean => Class::Boolean,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Class::Text,
        DataType::List(field) | DataType::LargeList(field)
            if field.data_type().is_integer()
                || matches!(field.data_type(), DataType::Decimal128(_, 0)) =>
        {
            Class::IntegerList
        }
        other => {
            return Err(DataFusionError::NotImplemented(format!(
                "the oracle compares no {other} column"
            )));
        }
    })
}

fn arrow_values(column: &ArrayRef, class: Class) -> Result<Vec<Value>> {
    let valid = |index| column.is_valid(index);
    Ok(match class {
        Class::Integer => {
            let integers = cast(column, &DataType::Int64)?;
            // (a decimal of no fraction, too)
            let integers =
                integers.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            (0..column.len())
                .map(|i| valid(i).then(|| Value::Integer(integers.value(i))))
                .map(|value| value.unwrap_or(Value::Null))
                .collect()
        }
        Class::Boolean => {
            let booleans = column
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| DataFusionError::Internal("not Boolean".into()))?;
            (0..column.len())
                .map(|i| {
                    if valid(i) {
                        Value::Boolean(booleans.value(i))
                    } else {
                        Value::Null
                    }
                })
                .collect()
        }
        Class::Text => {
            let text = cast(column, &DataType::Utf8)?;
            let text = text.as_string::<i32>();
            (0..column.len())
                .map(|i| {
                    if valid(i) {
                        Value::Text(text.value(i).to_string())
                    } else {
                        Value::Null
                    }
                })
                .collect()
        }
        Class::IntegerList => {
            let list = cast(
                column,
                &DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true))),
            )?;
            let list = list.as_list::<i32>();
            (0..column.len())
                .map(|i| {
                    if !valid(i) {
                        return Value::Null;
                    }
                    let items = list.value(i);
                    let items = items
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .expect("cast to a list of Int64");
                    Value::IntegerList(
                        (0..items.len())
                            .map(|j| items.is_valid(j).then(|| items.value(j)))
                            .collect(),
                    )
                })
                .collect()
        }
    })
}

/// The result PostgreSQL returned as `rows` (of `columns`' types, which a
/// result without rows still has).
pub fn from_postgres(
    types: &[Type],
    rows: &[tokio_postgres::Row],
) -> std::result::Result<TypedRows, String> {
    let classes = types
        .iter()
        .map(postgres_class)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut values = vec![];
    for row in rows {
        let mut out = Vec::with_capacity(classes.len());
        for (index, (class, type_)) in classes.iter().zip(types).enumerate() {
            out.push(postgres_value(row, index, *class, type_)?);
        }
        values.push(out);
    }
    Ok(TypedRows {
        classes,
        rows: values,
    })
}

fn postgres_class(type_: &Type) -> std::result::Result<Class, String> {
    Ok(match *type_ {
        Type::INT2 | Type::INT4 | Type::INT8 => Class::Integer,
        Type::BOOL => Class::Boolean,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => Class::Text,
        Type::INT2_ARRAY | Type::INT4_ARRAY | Type::INT8_ARRAY => Class::IntegerList,
        ref other => return Err(format!("the oracle compares no {other} column")),
    })
}

fn postgres_value(
    row: &tokio_postgres::Row,
    index: usize,
    class: Class,
    type_: &Type,
) -> std::result::Result<Value, String> {
    let error = |e: tokio_postgres::Error| e.to_string();
    Ok(match (class, type_) {
        (Class::Integer, &Type::INT2) => {
            optional(row.try_get::<_, Option<i16>>(index).map_err(error)?, |v| {
                Value::Integer(v.into())
            })
        }
        (Class::Integer, &Type::INT4) => {
            optional(row.try_get::<_, Option<i32>>(index).map_err(error)?, |v| {
                Value::Integer(v.into())
            })
        }
        (Class::Integer, _) => optional(
            row.try_get::<_, Option<i64>>(index).map_err(error)?,
            Value::Integer,
        ),
        (Class::Boolean, _) => optional(
            row.try_get::<_, Option<bool>>(index).map_err(error)?,
            Value::Boolean,
        ),
        (Class::Text, _) => optional(
            row.try_get::<_, Option<String>>(index).map_err(error)?,
            Value::Text,
        ),
        (Class::IntegerList, &Type::INT8_ARRAY) => optional(
            row.try_get::<_, Option<Vec<Option<i64>>>>(index)
                .map_err(error)?,
            Value::IntegerList,
        ),
        (Class::IntegerList, &Type::INT2_ARRAY) => optional(
            row.try_get::<_, Option<Vec<Option<i16>>>>(index)
                .map_err(error)?,
            |items| {
                Value::IntegerList(items.into_iter().map(|v| v.map(i64::from)).collect())
            },
        ),
        (Class::IntegerList, _) => optional(
            row.try_get::<_, Option<Vec<Option<i32>>>>(index)
                .map_err(error)?,
            |items| {
                Value::IntegerList(items.into_iter().map(|v| v.map(i64::from)).collect())
            },
        ),
    })
}

fn optional<T>(value: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
    value.map_or(Value::Null, f)
}
