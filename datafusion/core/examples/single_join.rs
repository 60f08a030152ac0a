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

//! Looking an attribute up with a correlated scalar subquery.
//!
//! A correlated scalar subquery without an aggregate runs as a single join:
//! one row per outer row, NULL where nothing matches, and the error
//! `Scalar subquery returned more than one row` where a second row matches.
//! A declared primary key lets the planner prove the lookup unique and use a
//! plain left join instead.
//!
//! Run with `cargo run --example single_join`.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;
use datafusion::prelude::*;

const LOOKUP: &str = "SELECT o_orderkey, \
     (SELECT c_name FROM customer WHERE c_custkey = o_custkey) AS c_name \
     FROM orders ORDER BY o_orderkey";

async fn context(customer_key: &str) -> Result<SessionContext> {
    let ctx = SessionContext::new();
    ctx.sql(&format!(
        "CREATE TABLE customer(c_custkey INT {customer_key}, c_name TEXT) AS VALUES \
         (1, 'alice'), (2, 'bob'), (3, 'carol')"
    ))
    .await?
    .collect()
    .await?;
    ctx.sql(
        "CREATE TABLE orders(o_orderkey INT, o_custkey INT) AS VALUES \
         (100, 1), (101, 3), (102, 5)",
    )
    .await?
    .collect()
    .await?;
    Ok(ctx)
}

/// The plan's join line, e.g. `LeftSingle Join: ...`.
async fn join_line(ctx: &SessionContext) -> Result<String> {
    let plan = ctx.sql(LOOKUP).await?.into_optimized_plan()?;
    let plan = plan.display_indent().to_string();
    Ok(plan
        .lines()
        .find(|line| line.contains("Join"))
        .map(|line| line.trim().to_string())
        .unwrap_or_default())
}

/// Runs the lookup without a key, with a duplicate, and with a key, and
/// returns what it printed.
async fn lookups() -> Result<String> {
    let mut out = vec![];

    // Without a key the lookup is a single join
    let ctx = context("").await?;
    out.push(join_line(&ctx).await?);
    let batches = ctx.sql(LOOKUP).await?.collect().await?;
    out.push(pretty_format_batches(&batches)?.to_string());

    // A second customer 3 makes order 101's lookup ambiguous
    ctx.sql("INSERT INTO customer VALUES (3, 'carla')")
        .await?
        .collect()
        .await?;
    let error = ctx.sql(LOOKUP).await?.collect().await.unwrap_err();
    out.push(error.strip_backtrace());

    // With a declared key the planner proves the lookup unique: a left join
    let ctx = context("PRIMARY KEY").await?;
    out.push(join_line(&ctx).await?);
    Ok(out.join("\n"))
}

#[tokio::main]
async fn main() -> Result<()> {
    println!("{}", lookups().await?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn prints_lookups() {
        let printed = lookups().await.unwrap();
        insta::assert_snapshot!(printed, @r"
        LeftSingle Join: orders.o_custkey = __scalar_sq_1.c_custkey
        +------------+--------+
        | o_orderkey | c_name |
        +------------+--------+
        | 100        | alice  |
        | 101        | carol  |
        | 102        |        |
        +------------+--------+
        Execution error: Scalar subquery returned more than one row
        Left Join: orders.o_custkey = __scalar_sq_1.c_custkey
        ");
    }
}
