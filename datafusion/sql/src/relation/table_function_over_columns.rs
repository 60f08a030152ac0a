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

//! A table function in `FROM` whose arguments read columns:
//! `FROM t, generate_series(1, t.n)`, `(SELECT count(*) FROM range(o.n))`.
//!
//! A table function is a [`TableProvider`] made once, at planning, from
//! constant arguments, so it cannot take a value that changes from row to
//! row. As in PostgreSQL and DuckDB, a function call in `FROM` may read the
//! `FROM` items to its left (it is lateral) and the enclosing query's
//! columns; the series functions do that here by what they are:
//! `generate_series(a, b)` and `range(a, b)` as a table are the `unnest` of
//! the list their scalar form returns, a column `value`, with no row for a
//! NULL argument. That plan reads the columns as outer references, which the
//! optimizer decorrelates as it does any correlated relation. Any other
//! table function over a column fails with an error that names it.
//!
//! [`TableProvider`]: https://docs.rs/datafusion/latest/datafusion/catalog/trait.TableProvider.html

use std::sync::Arc;

use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{
    Column, DFSchema, Result, TableReference, UnnestOptions, plan_err,
};
use datafusion_expr::expr::ScalarFunction;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder};

use crate::planner::{ContextProvider, SqlToRel};

/// The table functions that are the `unnest` of their scalar form.
const SERIES_FUNCTIONS: [&str; 2] = ["generate_series", "range"];

/// The name of the column a series table function returns.
const SERIES_COLUMN: &str = "value";

impl<S: ContextProvider> SqlToRel<'_, S> {
    /// The plan of table function `name` called with `args`, if an argument
    /// reads a column, under `scan_name`, the name its scan would have;
    /// `None` for constant arguments.
    pub(crate) fn table_function_over_columns(
        &self,
        name: &str,
        args: &[Expr],
        scan_name: TableReference,
    ) -> Result<Option<LogicalPlan>> {
        let mut columns_read = args.iter().map(first_column_read);
        let Some(column) = columns_read.find_map(Result::transpose).transpose()? else {
            return Ok(None);
        };
        let lowercase = name.to_ascii_lowercase();
        let scalar = SERIES_FUNCTIONS
            .contains(&lowercase.as_str())
            .then(|| self.context_provider.get_function_meta(&lowercase))
            .flatten();
        let Some(scalar) = scalar else {
            return plan_err!(
                "Table function {name} reads column {column}: the arguments \
                 of a table function must be constants"
            );
        };
        let series = Expr::ScalarFunction(ScalarFunction::new_udf(scalar, args.to_vec()));
        let plan = LogicalPlanBuilder::empty(true)
            .project([series.alias(SERIES_COLUMN)])?
            .unnest_column_with_options(
                Column::new_unqualified(SERIES_COLUMN),
                UnnestOptions::new().with_preserve_nulls(false),
            )?
            .alias(scan_name)?
            .build()?;
        Ok(Some(plan))
    }
}

/// `args`, planned against the enclosing query's schema `outer` (a
/// `LATERAL` function call), with the columns they read as the outer
/// references they are.
pub(crate) fn outer_references(args: Vec<Expr>, outer: &DFSchema) -> Result<Vec<Expr>> {
    args.into_iter()
        .map(|arg| {
            arg.transform(|expr| match expr {
                Expr::Column(column) => {
                    let (_, field) = outer.qualified_field_from_column(&column)?;
                    Ok(Transformed::yes(Expr::OuterReferenceColumn(
                        Arc::clone(field),
                        column,
                    )))
                }
                other => Ok(Transformed::no(other)),
            })
            .data()
        })
        .collect()
}

/// The first column `expr` reads. The arguments are planned over no
/// columns of their own, so a column they read is an outer reference; an
/// `Expr::Column` is a name that no column has, which upstream hands to the
/// function as it is (`parquet_metadata("file.parquet")` reads it as a
/// path).
fn first_column_read(expr: &Expr) -> Result<Option<Column>> {
    let mut found = None;
    expr.apply(|expr| {
        if let Expr::OuterReferenceColumn(_, column) = expr {
            found = Some(column.clone());
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(found)
}
