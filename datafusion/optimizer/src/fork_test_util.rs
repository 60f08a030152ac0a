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

//! What the tests of the fork's rules share: the tables they plan over,
//! and a rule run alone over a plan.
//!
//! The tables are `o` (the outer query), `s` and `t`, each of nullable
//! `Int32` columns `k` and `v` (others where a test names its columns).
//! A test shows the plan a rule makes with `insta`'s inline snapshots, as
//! upstream's rules do with `assert_optimized_plan_eq_snapshot!`.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use datafusion_common::Result;
use datafusion_common::alias::AliasGenerator;
use datafusion_expr::logical_plan::table_scan;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, col, out_ref_col};

use crate::correlation::correlated_in_plan;
use crate::decorrelate_subqueries::DecorrelateSubqueries;
use crate::dependent_join::{DependentJoin, Domain};
use crate::{Optimizer, OptimizerContext, OptimizerRule};

/// A call of a volatile function without arguments, like `random()`.
pub(crate) fn random() -> Expr {
    let udf = datafusion_expr::ScalarUDF::new_from_impl(RandomUdf::new());
    Expr::ScalarFunction(datafusion_expr::expr::ScalarFunction::new_udf(
        Arc::new(udf),
        vec![],
    ))
}

/// A volatile function without arguments, like `random()`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RandomUdf {
    signature: datafusion_expr::Signature,
}

impl RandomUdf {
    fn new() -> Self {
        Self {
            signature: datafusion_expr::Signature::nullary(
                datafusion_expr::Volatility::Volatile,
            ),
        }
    }
}

impl datafusion_expr::ScalarUDFImpl for RandomUdf {
    fn name(&self) -> &str {
        "random"
    }

    fn signature(&self) -> &datafusion_expr::Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(
        &self,
        _: datafusion_expr::ScalarFunctionArgs,
    ) -> Result<datafusion_expr::ColumnarValue> {
        datafusion_common::internal_err!("only planned")
    }
}

/// A scan of table `name`, of columns `k` and `v`.
pub(crate) fn table(name: &str) -> Result<LogicalPlanBuilder> {
    table_of(name, &["k", "v"])
}

/// `s WHERE s.k = o.k`: the rows of `s` of the outer row's key.
pub(crate) fn rows_of_key() -> Result<LogicalPlanBuilder> {
    table("s")?.filter(col("s.k").eq(outer("k")))
}

/// An outer reference to `column` of table `o`.
pub(crate) fn outer(column: &str) -> Expr {
    out_ref_col(DataType::Int32, format!("o.{column}").as_str())
}

/// `subquery` evaluated for every value of the columns of `o` it reads,
/// as [`DependentJoin::push`] tags it: the plan, then its tags and what
/// is known of them.
pub(crate) fn pushed(subquery: LogicalPlan) -> Result<String> {
    let outer_plan = table("o")?.build()?;
    let alias_generator = AliasGenerator::new();
    let outer = correlated_in_plan(&subquery, &outer_plan)?;
    let domain = Domain::new(&outer_plan, outer, &alias_generator)?;
    let tagged = DependentJoin::new(&domain, &alias_generator).push(&subquery)?;
    let tags: Vec<String> = tagged.tags.iter().map(ToString::to_string).collect();
    Ok(format!(
        "{}\ntags: [{}]; unique: {}; non-NULL tags: {}",
        tagged.plan.display_indent(),
        tags.join(", "),
        tagged.unique,
        tagged.non_null_tags
    ))
}

/// A scan of table `name`, of nullable `Int32` `columns`.
pub(crate) fn table_of(name: &str, columns: &[&str]) -> Result<LogicalPlanBuilder> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|column| Field::new(*column, DataType::Int32, true))
        .collect();
    table_scan(Some(name), &Schema::new(fields), None)
}

/// `plan` after `rule` alone, in as many passes as `context` allows.
pub(crate) fn optimized_by(
    rule: impl OptimizerRule + Send + Sync + 'static,
    plan: LogicalPlan,
    context: &OptimizerContext,
) -> Result<LogicalPlan> {
    let rules: Vec<Arc<dyn OptimizerRule + Send + Sync>> = vec![Arc::new(rule)];
    Optimizer::with_rules(rules).optimize(plan, context, |_, _| {})
}

/// `plan` as [`DecorrelateSubqueries`] alone rewrites it, in one pass.
pub(crate) fn decorrelated(plan: LogicalPlan) -> Result<String> {
    let context = OptimizerContext::new().with_max_passes(1);
    let optimized = optimized_by(DecorrelateSubqueries::new(), plan, &context)?;
    Ok(optimized.display_indent().to_string())
}
