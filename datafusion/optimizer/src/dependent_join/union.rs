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

//! The dependent join pushed through a union, each branch tagged on its
//! own, and through `VALUES` whose rows read outer columns: a row is its
//! expressions evaluated over the domain.

use std::sync::Arc;

use datafusion_common::Column;
use datafusion_common::Result;
use datafusion_expr::logical_plan::{Union, Values};
use datafusion_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder};

use super::{DependentJoin, Tagged};

impl DependentJoin<'_> {
    pub(super) fn push_union(&self, union: &Union) -> Result<Tagged> {
        let mut inputs = vec![];
        let mut tag_names = vec![];
        let mut non_null_tags = true;
        for input in &union.inputs {
            let tagged = self.push(input)?;
            non_null_tags &= tagged.non_null_tags;
            // Every branch lists its own columns, then the tags, in order
            let mut exprs: Vec<Expr> = input
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect();
            if tag_names.is_empty() {
                let alias = self.alias_generator.next("__domain_tag");
                tag_names = (0..tagged.tags.len())
                    .map(|i| format!("{alias}_{i}"))
                    .collect();
            }
            exprs.extend(
                tagged
                    .tag_exprs()
                    .into_iter()
                    .zip(&tag_names)
                    .map(|(tag, name)| tag.alias(name)),
            );
            inputs.push(Arc::new(
                LogicalPlanBuilder::from(tagged.plan)
                    .project(exprs)?
                    .build()?,
            ));
        }
        let plan = LogicalPlan::Union(Union::try_new_with_loose_types(inputs)?);
        Ok(Tagged {
            plan,
            tags: tag_names.into_iter().map(Column::new_unqualified).collect(),
            unique: false,
            non_null_tags,
        })
    }

    /// `VALUES` whose rows read outer columns, `(VALUES (o.x), (1))`: a row
    /// is its expressions over the domain, one row for each domain value,
    /// and several rows are the `UNION ALL` of each alone.
    pub(super) fn push_values(&self, values: &Values) -> Result<Tagged> {
        let row_alone = |row: &Vec<Expr>| {
            LogicalPlan::Values(Values {
                schema: Arc::clone(&values.schema),
                values: vec![row.clone()],
            })
        };
        let [row] = values.values.as_slice() else {
            let rows = values.values.iter().map(|row| Arc::new(row_alone(row)));
            let union = Union::try_new_with_loose_types(rows.collect())?;
            return self.push_union(&union);
        };
        let (domain, tags) = self.domain_instance()?;
        let mut exprs = row
            .iter()
            .zip(values.schema.iter())
            .map(|(expr, (qualifier, field))| {
                let expr = self.on_tags(expr, &tags, &[])?;
                Ok(expr
                    .cast_to(field.data_type(), domain.schema())?
                    .alias_qualified(qualifier.cloned(), field.name()))
            })
            .collect::<Result<Vec<_>>>()?;
        exprs.extend(tags.iter().cloned().map(Expr::Column));
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(domain).project(exprs)?.build()?,
            tags,
            unique: true,
            non_null_tags: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlanBuilder, col, lit};

    use crate::fork_test_util::{outer, pushed, rows_of_key, table};

    #[test]
    fn each_branch_of_a_union_is_tagged() -> Result<()> {
        let correlated = table("t")?
            .filter(col("t.v").eq(outer("v")))?
            .project([col("t.k")])?
            .build()?;
        let subquery = rows_of_key()?
            .project([col("s.k")])?
            .union(correlated)?
            .build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Union
              Projection: s.k, __domain_instance_2.__domain_1_0 AS __domain_tag_3_0, __domain_instance_2.__domain_1_1 AS __domain_tag_3_1
                Projection: s.k, __domain_instance_2.__domain_1_0, __domain_instance_2.__domain_1_1
                  Filter: s.k = __domain_instance_2.__domain_1_0
                    Cross Join:
                      TableScan: s
                      SubqueryAlias: __domain_instance_2
                        Aggregate: groupBy=[[__domain_1_0, __domain_1_1]], aggr=[[]]
                          Projection: o.k AS __domain_1_0, o.v AS __domain_1_1
                            TableScan: o
              Projection: t.k, __domain_instance_4.__domain_1_0 AS __domain_tag_3_0, __domain_instance_4.__domain_1_1 AS __domain_tag_3_1
                Projection: t.k, __domain_instance_4.__domain_1_0, __domain_instance_4.__domain_1_1
                  Filter: t.v = __domain_instance_4.__domain_1_1
                    Cross Join:
                      TableScan: t
                      SubqueryAlias: __domain_instance_4
                        Aggregate: groupBy=[[__domain_1_0, __domain_1_1]], aggr=[[]]
                          Projection: o.k AS __domain_1_0, o.v AS __domain_1_1
                            TableScan: o
            tags: [__domain_tag_3_0, __domain_tag_3_1]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn values_reading_outer_columns_are_rows_of_the_domain() -> Result<()> {
        let subquery =
            LogicalPlanBuilder::values(vec![vec![outer("k")], vec![lit(1)]])?.build()?;
        insta::assert_snapshot!(pushed(subquery)?, @r"
            Union
              Projection: column1, __domain_instance_2.__domain_1_0 AS __domain_tag_3_0
                Projection: __domain_instance_2.__domain_1_0 AS column1, __domain_instance_2.__domain_1_0
                  SubqueryAlias: __domain_instance_2
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.k AS __domain_1_0
                        TableScan: o
              Projection: column1, __domain_instance_4.__domain_1_0 AS __domain_tag_3_0
                Cross Join:
                  Values: (Int32(1))
                  SubqueryAlias: __domain_instance_4
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.k AS __domain_1_0
                        TableScan: o
            tags: [__domain_tag_3_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }
}
