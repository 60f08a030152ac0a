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

//! Readable column labels from Rust: turn on
//! `datafusion.sql_parser.pretty_column_names` in the [`SessionConfig`] and
//! the unaliased columns of a SQL query get readable names.
//!
//! ```text
//! cargo run -p datafusion --example pretty_column_names
//! ```

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::error::Result;
use datafusion::prelude::*;

/// Runs a query with the option on and returns the printed result.
async fn labeled_result() -> Result<String> {
    let config =
        SessionConfig::new().set_bool("datafusion.sql_parser.pretty_column_names", true);
    let ctx = SessionContext::new_with_config(config);
    ctx.sql("CREATE TABLE sales (region VARCHAR, amount INT) AS VALUES ('north', 10), ('south', 25), ('north', 5)")
        .await?
        .collect()
        .await?;

    let df = ctx
        .sql(
            "SELECT region, sum(amount) * 2, count(*), \
             rank() OVER (ORDER BY sum(amount) DESC) \
             FROM sales GROUP BY region ORDER BY region",
        )
        .await?;
    Ok(pretty_format_batches(&df.collect().await?)?.to_string())
}

#[tokio::main]
async fn main() -> Result<()> {
    println!("{}", labeled_result().await?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn prints_labeled_headers() {
        let printed = labeled_result().await.unwrap();
        insta::assert_snapshot!(printed, @r"
        +--------+-----------------+----------+-----------------------------------------+
        | region | sum(amount) * 2 | count(*) | rank() OVER (ORDER BY sum(amount) DESC) |
        +--------+-----------------+----------+-----------------------------------------+
        | north  | 30              | 2        | 2                                       |
        | south  | 50              | 1        | 1                                       |
        +--------+-----------------+----------+-----------------------------------------+
        ");
    }
}
