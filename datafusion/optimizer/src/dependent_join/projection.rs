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

//! The dependent join pushed through a projection: its expressions read
//! their outer references from the tags, which it passes on.

use std::sync::Arc;

use datafusion_common::Result;
use datafusion_expr::LogicalPlanBuilder;
use datafusion_expr::logical_plan::Projection;

use super::{DependentJoin, Tagged};

impl DependentJoin<'_> {
    pub(super) fn push_projection(&self, projection: &Projection) -> Result<Tagged> {
        if let Some(first) = self.push_first_row_value(projection)? {
            return self.project(projection, first);
        }
        let input = self.push(&projection.input)?;
        self.project(projection, input)
    }

    /// `projection` over `input`, the tagged form of its input.
    fn project(&self, projection: &Projection, input: Tagged) -> Result<Tagged> {
        let scope = [Arc::clone(projection.input.schema())];
        let mut exprs = projection
            .expr
            .iter()
            .zip(projection.schema.columns())
            .map(|(expr, name)| self.named_on_tags(expr, &name, &input.tags, &scope))
            .collect::<Result<Vec<_>>>()?;
        exprs.extend(input.tag_exprs());
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(input.plan)
                .project(exprs)?
                .build()?,
            tags: input.tags,
            unique: input.unique,
            non_null_tags: input.non_null_tags,
        })
    }
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::col;

    use crate::fork_test_util::{outer, pushed, rows_of_key};

    #[test]
    fn an_outer_column_in_the_select_list_reads_the_tag() -> Result<()> {
        let subquery = rows_of_key()?
            .project([(col("s.v") + outer("v")).alias("w")])?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Projection: s.v + __domain_instance_2.__domain_1_1 AS w, __domain_instance_2.__domain_1_0, __domain_instance_2.__domain_1_1
              Filter: s.k = __domain_instance_2.__domain_1_0
                Cross Join:
                  TableScan: s
                  SubqueryAlias: __domain_instance_2
                    Aggregate: groupBy=[[__domain_1_0, __domain_1_1]], aggr=[[]]
                      Projection: o.k AS __domain_1_0, o.v AS __domain_1_1
                        TableScan: o
            tags: [__domain_instance_2.__domain_1_0, __domain_instance_2.__domain_1_1]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }
}
