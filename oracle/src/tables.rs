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

//! Small random tables, loaded into SQLite and into DataFusion.
//!
//! Every table has the integer columns `k`, `v` and `w` over a few values,
//! so that correlations match often, with NULLs, rows repeated, and now and
//! then no row at all. In DataFusion each table is a `MemTable` of a random
//! number of partitions and batch size, under a random `target_partitions`
//! and `batch_size`.

use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::{SessionConfig, SessionContext};
use rand::Rng;
use rand::rngs::StdRng;

/// The tables' names.
pub const TABLES: [&str; 3] = ["t0", "t1", "t2"];
/// The columns of every table.
pub const COLUMNS: [&str; 3] = ["k", "v", "w"];

/// A row: `k`, `v`, `w`.
pub type Values = [Option<i32>; 3];

/// A table and its rows.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: &'static str,
    pub rows: Vec<Values>,
}

/// How DataFusion holds the tables and runs the queries.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub target_partitions: usize,
    pub batch_size: usize,
    /// The partitions of each `MemTable`, its rows dealt round-robin.
    pub partitions: usize,
    /// Rows per batch in a partition.
    pub batch_rows: usize,
}

impl Layout {
    pub fn random(rng: &mut StdRng) -> Self {
        Self {
            target_partitions: rng.random_range(1..=4),
            batch_size: rng.random_range(1..=8),
            partitions: rng.random_range(1..=3),
            batch_rows: rng.random_range(1..=4),
        }
    }
}

/// How the fork runs the queries: the tables' [`Layout`], and the
/// settings an oracle must run in both states.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub layout: Layout,
    /// Hash joins partitioned by their keys even for the tiny tables here
    /// (which the planner otherwise collects into one partition).
    pub partitioned_joins: bool,
    /// `datafusion.optimizer.restrict_aggregate_to_join_keys`, off by
    /// default.
    pub restrict_aggregate_to_join_keys: bool,
}

impl Options {
    /// A random layout, each setting on about half the time.
    pub fn random(rng: &mut StdRng) -> Self {
        Self {
            layout: Layout::random(rng),
            partitioned_joins: rng.random_bool(0.5),
            restrict_aggregate_to_join_keys: rng.random_bool(0.5),
        }
    }

    /// A session configured as these options say.
    pub fn session_config(&self) -> SessionConfig {
        let mut config = SessionConfig::new()
            .with_target_partitions(self.layout.target_partitions)
            .with_batch_size(self.layout.batch_size)
            .set_bool(
                "datafusion.optimizer.restrict_aggregate_to_join_keys",
                self.restrict_aggregate_to_join_keys,
            );
        if self.partitioned_joins {
            config = config
                .set_usize(
                    "datafusion.optimizer.hash_join_single_partition_threshold",
                    0,
                )
                .set_usize(
                    "datafusion.optimizer.hash_join_single_partition_threshold_rows",
                    0,
                );
        }
        config
    }
}

/// The three tables.
#[derive(Debug, Clone)]
pub struct Database {
    pub tables: Vec<Table>,
}

impl Database {
    pub fn random(rng: &mut StdRng) -> Self {
        let tables = TABLES
            .iter()
            .map(|&name| {
                let len = if rng.random_bool(0.15) {
                    0
                } else {
                    rng.random_range(1..=8)
                };
                let mut rows: Vec<Values> = Vec::with_capacity(len);
                for _ in 0..len {
                    if !rows.is_empty() && rng.random_bool(0.25) {
                        let repeated = rows[rng.random_range(0..rows.len())];
                        rows.push(repeated);
                    } else {
                        rows.push([value(rng), value(rng), value(rng)]);
                    }
                }
                Table { name, rows }
            })
            .collect();
        Self { tables }
    }

    /// The tables in a new in-memory SQLite database.
    pub fn sqlite(&self) -> rusqlite::Result<rusqlite::Connection> {
        let connection = rusqlite::Connection::open_in_memory()?;
        for table in &self.tables {
            connection.execute(
                &format!("CREATE TABLE {} (k INT, v INT, w INT)", table.name),
                [],
            )?;
            let mut insert = connection
                .prepare(&format!("INSERT INTO {} VALUES (?1, ?2, ?3)", table.name))?;
            for [k, v, w] in &table.rows {
                insert.execute((k, v, w))?;
            }
        }
        Ok(connection)
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

fn value(rng: &mut StdRng) -> Option<i32> {
    if rng.random_bool(0.2) {
        None
    } else {
        Some(rng.random_range(-1..=4))
    }
}

pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|name| Field::new(*name, DataType::Int32, true))
            .collect::<Vec<_>>(),
    ))
}

fn mem_table(table: &Table, layout: Layout) -> Result<MemTable> {
    let schema = schema();
    let mut partitions: Vec<Vec<Values>> = vec![vec![]; layout.partitions];
    for (index, row) in table.rows.iter().enumerate() {
        partitions[index % layout.partitions].push(*row);
    }
    let batches = partitions
        .iter()
        .map(|rows| {
            rows.chunks(layout.batch_rows)
                .map(|chunk| {
                    let columns = (0..COLUMNS.len())
                        .map(|column| {
                            Arc::new(
                                chunk
                                    .iter()
                                    .map(|row| row[column])
                                    .collect::<Int32Array>(),
                            ) as _
                        })
                        .collect();
                    Ok(RecordBatch::try_new(Arc::clone(&schema), columns)?)
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    MemTable::try_new(schema, batches)
}
