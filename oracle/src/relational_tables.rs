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

//! Small random tables for the PostgreSQL differential, loaded into both.
//!
//! Three tables whose columns share names, so that `NATURAL` and `USING`
//! joins have keys, and an unqualified name is ambiguous or not depending
//! on which tables a query level joins:
//!
//! ```text
//! t1 (k INT, v INT, s TEXT)
//! t2 (k INT, v INT, w INT)
//! t3 (k INT, w INT, a INT[])
//! ```
//!
//! Values are drawn from a few, with NULLs, repeated rows, empty tables,
//! empty and NULL arrays, and NULLs inside arrays. In DataFusion each table
//! is a `MemTable` laid out as a [`Layout`] says.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, Int32Array, Int32Builder, ListBuilder, RecordBatch, StringArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use rand::Rng;
use rand::rngs::StdRng;

use crate::tables::{Layout, Options};

/// A value of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Integer(Option<i32>),
    Text(Option<&'static str>),
    IntegerList(Option<Vec<Option<i32>>>),
}

/// The kind of a column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Integer,
    Text,
    IntegerList,
}

/// A table: its name, columns and rows.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    pub rows: Vec<Vec<Cell>>,
}

/// The three tables' names and columns.
pub const SCHEMAS: [(&str, &[(&str, Kind)]); 3] = [
    (
        "t1",
        &[
            ("k", Kind::Integer),
            ("v", Kind::Integer),
            ("s", Kind::Text),
        ],
    ),
    (
        "t2",
        &[
            ("k", Kind::Integer),
            ("v", Kind::Integer),
            ("w", Kind::Integer),
        ],
    ),
    (
        "t3",
        &[
            ("k", Kind::Integer),
            ("w", Kind::Integer),
            ("a", Kind::IntegerList),
        ],
    ),
];

const TEXTS: [&str; 3] = ["a", "b", "c"];

/// The three tables.
#[derive(Debug, Clone)]
pub struct Database {
    pub tables: Vec<Table>,
}

impl Database {
    pub fn random(rng: &mut StdRng) -> Self {
        let tables = SCHEMAS
            .iter()
            .map(|&(name, columns)| {
                let len = if rng.random_bool(0.12) {
                    0
                } else {
                    rng.random_range(1..=7)
                };
                let mut rows: Vec<Vec<Cell>> = Vec::with_capacity(len);
                for _ in 0..len {
                    if !rows.is_empty() && rng.random_bool(0.25) {
                        let repeated = rows[rng.random_range(0..rows.len())].clone();
                        rows.push(repeated);
                    } else {
                        rows.push(
                            columns.iter().map(|(_, kind)| cell(rng, *kind)).collect(),
                        );
                    }
                }
                Table {
                    name,
                    columns,
                    rows,
                }
            })
            .collect();
        Self { tables }
    }

    /// The SQL that makes the tables on PostgreSQL, dropping any of their
    /// names first.
    pub fn postgres_script(&self) -> String {
        let mut script = String::new();
        for table in &self.tables {
            let columns = table
                .columns
                .iter()
                .map(|(name, kind)| format!("{name} {}", postgres_type(*kind)))
                .collect::<Vec<_>>()
                .join(", ");
            script.push_str(&format!(
                "DROP TABLE IF EXISTS {0}; CREATE TABLE {0} ({columns});\n",
                table.name
            ));
            if !table.rows.is_empty() {
                let rows = table
                    .rows
                    .iter()
                    .map(|row| {
                        let values = row.iter().map(postgres_literal).collect::<Vec<_>>();
                        format!("({})", values.join(", "))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                script.push_str(&format!("INSERT INTO {} VALUES {rows};\n", table.name));
            }
        }
        script
    }

    /// The tables in a new DataFusion session run as `options` say.
    pub fn datafusion(&self, options: Options) -> Result<SessionContext> {
        let ctx = SessionContext::new_with_config(options.session_config());
        for table in &self.tables {
            ctx.register_table(table.name, Arc::new(mem_table(table, options.layout)?))?;
        }
        Ok(ctx)
    }
}

fn cell(rng: &mut StdRng, kind: Kind) -> Cell {
    match kind {
        Kind::Integer => Cell::Integer(integer(rng)),
        Kind::Text => Cell::Text(
            (!rng.random_bool(0.2)).then(|| TEXTS[rng.random_range(0..TEXTS.len())]),
        ),
        Kind::IntegerList => Cell::IntegerList(if rng.random_bool(0.15) {
            None
        } else {
            let len = rng.random_range(0..=3);
            Some((0..len).map(|_| integer(rng)).collect())
        }),
    }
}

fn integer(rng: &mut StdRng) -> Option<i32> {
    (!rng.random_bool(0.2)).then(|| rng.random_range(-1..=3))
}

fn postgres_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Integer => "INT",
        Kind::Text => "TEXT",
        Kind::IntegerList => "INT[]",
    }
}

fn postgres_literal(cell: &Cell) -> String {
    let integer =
        |value: &Option<i32>| value.map_or("NULL".to_string(), |v| v.to_string());
    match cell {
        Cell::Integer(value) => integer(value),
        Cell::Text(value) => value.map_or("NULL".to_string(), |v| format!("'{v}'")),
        Cell::IntegerList(None) => "NULL".to_string(),
        Cell::IntegerList(Some(items)) => format!(
            "ARRAY[{}]::INT[]",
            items.iter().map(integer).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn schema(table: &Table) -> SchemaRef {
    Arc::new(Schema::new(
        table
            .columns
            .iter()
            .map(|(name, kind)| {
                let data_type = match kind {
                    Kind::Integer => DataType::Int32,
                    Kind::Text => DataType::Utf8,
                    Kind::IntegerList => DataType::List(Arc::new(Field::new_list_field(
                        DataType::Int32,
                        true,
                    ))),
                };
                Field::new(*name, data_type, true)
            })
            .collect::<Vec<_>>(),
    ))
}

fn column(rows: &[&Vec<Cell>], index: usize, kind: Kind) -> ArrayRef {
    match kind {
        Kind::Integer => Arc::new(
            rows.iter()
                .map(|row| match &row[index] {
                    Cell::Integer(value) => *value,
                    _ => None,
                })
                .collect::<Int32Array>(),
        ),
        Kind::Text => Arc::new(
            rows.iter()
                .map(|row| match &row[index] {
                    Cell::Text(value) => *value,
                    _ => None,
                })
                .collect::<StringArray>(),
        ),
        Kind::IntegerList => {
            let mut builder = ListBuilder::new(Int32Builder::new());
            for row in rows {
                match &row[index] {
                    Cell::IntegerList(Some(items)) => {
                        builder.values().extend(items.iter().copied());
                        builder.append(true);
                    }
                    _ => builder.append(false),
                }
            }
            Arc::new(builder.finish())
        }
    }
}

fn mem_table(table: &Table, layout: Layout) -> Result<MemTable> {
    let schema = schema(table);
    let mut partitions: Vec<Vec<&Vec<Cell>>> = vec![vec![]; layout.partitions];
    for (index, row) in table.rows.iter().enumerate() {
        partitions[index % layout.partitions].push(row);
    }
    let batches = partitions
        .iter()
        .map(|rows| {
            rows.chunks(layout.batch_rows)
                .map(|chunk| {
                    let columns = table
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(index, (_, kind))| column(chunk, index, *kind))
                        .collect();
                    Ok(RecordBatch::try_new(Arc::clone(&schema), columns)?)
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    MemTable::try_new(schema, batches)
}
