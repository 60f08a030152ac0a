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

//! A `UNION`'s column is nullable where a column of any of its inputs is.
//!
//! `LogicalPlan::recompute_schema` kept a union's schema as it was while its
//! inputs kept their widths, so a rewrite of an input that made a column
//! nullable left the union promising a column without NULLs. A correlated
//! `(SELECT count(...) ...)` is such a column: never NULL as a subquery,
//! it becomes a `CASE` over a left join after decorrelation, whose NULLs
//! only the logical planner can rule out. The physical union derives its
//! schema from its inputs, and the physical planner then refused the plan
//! with an internal error ("Physical input schema should be the same as the
//! one converted from logical input schema"). The schema kept now takes each
//! column's nullability from the inputs again.

use std::sync::Arc;

use datafusion_common::{DFSchema, DFSchemaRef, Result};

use crate::LogicalPlan;

/// `schema`, a union's, with each column nullable where a column of the
/// same position of any of `inputs` is; `schema` itself where none differs.
pub fn with_input_nullability(
    schema: DFSchemaRef,
    inputs: &[Arc<LogicalPlan>],
) -> Result<DFSchemaRef> {
    let nullable: Vec<bool> = (0..schema.fields().len())
        .map(|index| {
            inputs.iter().any(|input| {
                input
                    .schema()
                    .fields()
                    .get(index)
                    .is_some_and(|field| field.is_nullable())
            })
        })
        .collect();
    let unchanged = schema
        .fields()
        .iter()
        .zip(&nullable)
        .all(|(field, nullable)| field.is_nullable() == *nullable);
    if unchanged {
        return Ok(schema);
    }
    let fields = schema
        .iter()
        .zip(nullable)
        .map(|((qualifier, field), nullable)| {
            (
                qualifier.cloned(),
                Arc::new(field.as_ref().clone().with_nullable(nullable)),
            )
        })
        .collect();
    let rebuilt = DFSchema::new_with_metadata(fields, schema.metadata().clone())?
        .with_functional_dependencies(schema.functional_dependencies().clone())?;
    Ok(Arc::new(rebuilt))
}
