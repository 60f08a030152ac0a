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

//! Oracles for the fork that are not DataFusion.
//!
//! A randomized test that checks DataFusion against DataFusion (a query
//! against its own substituted, uncorrelated form) cannot see a bug both
//! share. The tests of this crate check the fork against:
//!
//! - **SQLite**, a second engine (compiled from its C source by the
//!   `rusqlite` crate's `bundled` feature), which runs a correlated
//!   subquery once per outer row: the same random SQL on both, the rows
//!   compared as multisets ([`engines`]);
//! - **ternary logic partitioning** (SQLancer's TLP), on the fork alone: for
//!   a predicate `p`, the rows `WHERE p`, `WHERE NOT p` and `WHERE p IS
//!   NULL` together are the table's rows, each once.
//!
//! - **PostgreSQL**, a real server started for the test ([`postgres`]):
//!   random queries of the relational core (names across query levels,
//!   `USING` and `NATURAL` joins, set operations, arrays, `LATERAL`, rows,
//!   `UPDATE ... FROM` and `DELETE ... USING`; [`relational_queries`]) over
//!   tables with text and arrays ([`relational_tables`]), compared as typed
//!   values ([`typed_rows`]), in order where the query orders.
//!
//! [`positions`] writes queries for the fork alone, with subqueries nested
//! in every position, which must answer or fail cleanly, never panic.
//!
//! The queries come from [`generator`], over small random tables with
//! NULLs, duplicates and empty tables ([`tables`]), laid out in random
//! partitions and batches.

pub mod engines;
pub mod generator;
pub mod positions;
pub mod postgres;
pub mod relational_queries;
pub mod relational_tables;
pub mod tables;
pub mod typed_rows;
