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

//! `x IN (subquery)` joined back with a mark join on the outer values and
//! `x` equal to the subquery's value; where NULLs can occur, with the count
//! of the subquery's rows and non-NULL values per outer value as well, for
//! SQL's three-valued answer.

use datafusion_common::alias::AliasGenerator;
use datafusion_common::{Column, Result, ScalarValue, internal_err};
use datafusion_expr::logical_plan::{JoinType, Subquery};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, lit, when};
use datafusion_functions_aggregate::count::count;

use super::decorrelated::Decorrelated;
use crate::dependent_join::Tagged;

/// `needle IN (subquery)` joined to `input`, its outer values those of
/// `outer_rows` (see `decorrelated::tag_body`); with `null_answers` false, a
/// NULL answer may read as false.
pub(super) fn join_in(
    needle: &Expr,
    subquery: &Subquery,
    input: &LogicalPlan,
    outer_rows: &LogicalPlan,
    null_answers: bool,
    alias_generator: &AliasGenerator,
) -> Result<(LogicalPlan, Expr)> {
    let plan = subquery.subquery.as_ref();
    let Some(value_column) = plan.schema().columns().into_iter().next() else {
        return internal_err!("An IN subquery without columns");
    };
    let decorrelated = Decorrelated::new(plan, outer_rows, alias_generator)?;
    let value = decorrelated.column(&value_column)?;
    let needle_nullable = needle.nullable(input.schema())?;
    let value_nullable = plan.schema().field(0).is_nullable();
    // The subquery's rows, and its non-NULL values, per outer value
    let counts = if null_answers && (needle_nullable || value_nullable) {
        let rows = Column::new_unqualified("rows");
        let values = Column::new_unqualified("values");
        let counted = LogicalPlanBuilder::from(decorrelated.plan.clone())
            .aggregate(
                decorrelated.tags.iter().cloned().map(Expr::Column),
                [
                    count(lit(1)).alias(&rows.name),
                    count(value.clone()).alias(&values.name),
                ],
            )?
            .build()?;
        let counts = Decorrelated::aliased(
            Tagged {
                plan: counted,
                tags: decorrelated.tags.clone(),
                unique: true,
                non_null_tags: decorrelated.non_null_tags,
            },
            decorrelated.outer.clone(),
            alias_generator,
        )?;
        let (rows, values) = (counts.column(&rows)?, counts.column(&values)?);
        Some((counts, rows, values))
    } else {
        None
    };
    let mark = decorrelated.mark();
    let found = needle.clone().eq(value);
    let joined = decorrelated.join(input, JoinType::LeftMark, Some(found))?;
    let Some((counts, rows, values)) = counts else {
        return Ok((joined, mark));
    };
    let joined = counts.join(&joined, JoinType::Left, None)?;
    // x IN (...) is true on a match; false on an empty subquery; NULL if x
    // or a value of the subquery is NULL; false otherwise
    let answer = when(mark, lit(true))
        .when(
            rows.clone().is_null().or(rows.clone().eq(lit(0i64))),
            lit(false),
        )
        .when(
            needle.clone().is_null().or(values.lt(rows)),
            lit(ScalarValue::Boolean(None)),
        )
        .otherwise(lit(false))?;
    Ok((joined, answer))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlan, col, in_subquery};

    use crate::fork_test_util::decorrelated;
    use crate::fork_test_util::{rows_of_key, table};

    /// `s.v` of the rows of `s` whose `k` is `o.k`.
    fn values_of_key() -> Result<Arc<LogicalPlan>> {
        Ok(Arc::new(rows_of_key()?.project([col("s.v")])?.build()?))
    }

    #[test]
    fn in_answers_null_from_the_counts_of_rows_and_values() -> Result<()> {
        let plan = table("o")?
            .project([in_subquery(col("o.v"), values_of_key()?).alias("found")])?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: CASE WHEN __subquery_3.mark THEN Boolean(true) WHEN __subquery_4.__subquery_4_1 IS NULL OR __subquery_4.__subquery_4_1 = Int64(0) THEN Boolean(false) WHEN o.v IS NULL OR __subquery_4.__subquery_4_2 < __subquery_4.__subquery_4_1 THEN Boolean(NULL) ELSE Boolean(false) END AS found
              Left Join: o.k = __subquery_4.__subquery_4_0
                LeftMark Join: o.k = __subquery_3.__subquery_3_1 Filter: o.v = __subquery_3.__subquery_3_0
                  TableScan: o
                  SubqueryAlias: __subquery_3
                    Projection: s.v AS __subquery_3_0, __domain_tag_2_0 AS __subquery_3_1
                      Projection: s.v, __domain_tag_2_0
                        Projection: s.k, s.v, s.k AS __domain_tag_2_0
                          Filter: s.k IS NOT NULL
                            TableScan: s
                SubqueryAlias: __subquery_4
                  Projection: __subquery_3.__subquery_3_1 AS __subquery_4_0, rows AS __subquery_4_1, values AS __subquery_4_2
                    Aggregate: groupBy=[[__subquery_3.__subquery_3_1]], aggr=[[count(Int32(1)) AS rows, count(__subquery_3.__subquery_3_0) AS values]]
                      SubqueryAlias: __subquery_3
                        Projection: s.v AS __subquery_3_0, __domain_tag_2_0 AS __subquery_3_1
                          Projection: s.v, __domain_tag_2_0
                            Projection: s.k, s.v, s.k AS __domain_tag_2_0
                              Filter: s.k IS NOT NULL
                                TableScan: s
            ");
        Ok(())
    }

    #[test]
    fn in_as_a_conjunct_needs_no_null_answer() -> Result<()> {
        let plan = table("o")?
            .filter(in_subquery(col("o.v"), values_of_key()?))?
            .build()?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v
              Filter: __subquery_3.mark
                LeftMark Join: o.k = __subquery_3.__subquery_3_1 Filter: o.v = __subquery_3.__subquery_3_0
                  TableScan: o
                  SubqueryAlias: __subquery_3
                    Projection: s.v AS __subquery_3_0, __domain_tag_2_0 AS __subquery_3_1
                      Projection: s.v, __domain_tag_2_0
                        Projection: s.k, s.v, s.k AS __domain_tag_2_0
                          Filter: s.k IS NOT NULL
                            TableScan: s
            ");
        Ok(())
    }
}
