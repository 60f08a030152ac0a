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

//! `EXISTS (subquery)` joined back with a mark join: the mark is true for
//! an outer row whose values have a row of the subquery.

use datafusion_common::Result;
use datafusion_common::alias::AliasGenerator;
use datafusion_expr::logical_plan::{JoinType, Subquery};
use datafusion_expr::{Expr, LogicalPlan};

use super::decorrelated::{Decorrelated, Split, split_top};

pub(super) fn join_exists(
    subquery: &Subquery,
    input: &LogicalPlan,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    // Projections do not change whether a row exists
    let Split { body, .. } = split_top(&subquery.subquery);
    let decorrelated =
        Decorrelated::new_for_existence(body, outer_rows, alias_generator)?;
    let mark = decorrelated.mark();
    let joined = decorrelated.join(input, JoinType::LeftMark, None)?;
    Ok((joined, mark))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::Result;
    use datafusion_expr::{col, exists, lit};

    use crate::fork_test_util::decorrelated;
    use crate::fork_test_util::{rows_of_key, table};

    #[test]
    fn exists_is_the_mark_of_a_mark_join() -> Result<()> {
        let subquery = rows_of_key()?.build()?;
        let plan = table("o")?
            .filter(exists(Arc::new(subquery)).or(col("o.v").eq(lit(1))))?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v
              Filter: __subquery_3.mark OR o.v = Int32(1)
                LeftMark Join: o.k = __subquery_3.__subquery_3_2
                  TableScan: o
                  SubqueryAlias: __subquery_3
                    Projection: s.k AS __subquery_3_0, s.v AS __subquery_3_1, __domain_tag_2_0 AS __subquery_3_2
                      Projection: s.k, s.v, s.k AS __domain_tag_2_0
                        Filter: s.k IS NOT NULL
                          TableScan: s
            ");
        Ok(())
    }
}
