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

//! The error for a subquery the optimizer left correlated.
//!
//! The physical planner runs only uncorrelated subqueries: a correlated one
//! must be turned into joins by the optimizer first. Where no rule could
//! (a correlation that passes through a shape none rewrites yet), the
//! physical planner used to report the logical expression it met, in
//! `Debug` form, or "undecorrelated Subquery". This error says what the
//! user wrote instead: the columns of the enclosing query the subquery
//! reads, never a column the planner made up.

use datafusion_common::DataFusionError;

use crate::Expr;

/// The error for a correlated subquery left in a plan, that reads
/// `outer_references` (outer reference column expressions).
pub fn undecorrelated_subquery_error<'a>(
    outer_references: impl IntoIterator<Item = &'a Expr>,
) -> DataFusionError {
    let mut names: Vec<String> = vec![];
    for reference in outer_references {
        // A column the optimizer named stands for one of the user's
        if let Expr::OuterReferenceColumn(_, column) = reference
            && !column.name.starts_with("__")
            && !names.contains(&column.flat_name())
        {
            names.push(column.flat_name());
        }
    }
    let reads = if names.is_empty() {
        "columns of an enclosing query".to_string()
    } else {
        format!("{} of an enclosing query", names.join(", "))
    };
    DataFusionError::NotImplemented(format!(
        "A correlated subquery that reads {reads} is in a position or of a \
         shape that cannot be decorrelated yet; rewrite it as a join"
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field};
    use datafusion_common::Column;

    use super::*;

    #[test]
    fn names_the_users_columns_only() {
        let reference = |relation: &str, name: &str| {
            Expr::OuterReferenceColumn(
                Arc::new(Field::new(name, DataType::Int32, true)),
                Column::new(Some(relation), name),
            )
        };
        let error = undecorrelated_subquery_error(&[
            reference("o", "k"),
            reference("__domain_instance_2", "__domain_1_0"),
            reference("o", "k"),
        ])
        .to_string();
        assert!(error.contains("reads o.k of an enclosing query"), "{error}");
        assert!(!error.contains("__domain"), "{error}");

        let error = undecorrelated_subquery_error(&[reference("__d", "__domain_1_0")])
            .to_string();
        assert!(
            error.contains("reads columns of an enclosing query"),
            "{error}"
        );
    }
}
