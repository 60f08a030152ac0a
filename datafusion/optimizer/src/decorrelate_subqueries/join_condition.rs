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

//! A subquery in a join's `ON`: in an inner join's condition it is a
//! subquery of a filter above the join; in an outer join's, one that reads
//! the columns of one side is computed on that side, and in a left or
//! right join's, one that reads both is computed for each combination of
//! the columns it reads, which the side the join does not preserve takes;
//! a full join is the left join and the right side's unmatched rows.

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion_common::alias::AliasGenerator;
use datafusion_common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion_common::{
    Column, DFSchema, NullEquality, Result, ScalarValue, not_impl_err,
};
use datafusion_expr::logical_plan::{Filter, Join, JoinType, Union};
use datafusion_expr::subquery_exprs::subquery_of;
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, Operator, binary_expr};

use super::{plain_conjuncts_first, rewrite_node, to_rewrite};
use crate::correlation::free_outer_columns;

/// Rewrites a join whose condition holds a subquery.
pub(super) fn rewrite_join_condition(
    join: Join,
    alias_generator: &AliasGenerator,
) -> Result<Transformed<LogicalPlan>> {
    let Some(filter) = &join.filter else {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    };
    let schemas = [join.left.schema().as_ref(), join.right.schema().as_ref()];
    if !filter.exists(|expr| to_rewrite(expr, &schemas))? {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    }
    if join.join_type == JoinType::Inner {
        // The condition of an inner join is a filter above it
        let condition = filter.clone();
        let unfiltered = LogicalPlan::Join(Join {
            filter: None,
            ..join
        });
        let filtered = LogicalPlan::Filter(Filter::try_new(
            condition,
            Arc::new(unfiltered.recompute_schema()?),
        )?);
        return rewrite_node(plain_conjuncts_first(filtered)?, alias_generator)
            .map(Transformed::yes);
    }
    if let Some(plan) = condition_on_sides(&join, alias_generator)? {
        return Ok(Transformed::yes(plan));
    }
    if let Some(plan) = condition_on_pairs(&join, alias_generator)? {
        return Ok(Transformed::yes(plan));
    }
    if let Some(plan) = full_join_on_pairs(&join, alias_generator)? {
        return Ok(Transformed::yes(plan));
    }
    not_impl_err!(
        "A subquery in the condition of a {} join that reads both of its \
         sides cannot be decorrelated; write it as a subquery in a derived \
         table joined to it",
        join.join_type
    )
}

/// An outer join whose condition holds subqueries, `x LEFT JOIN y ON x.a =
/// y.a AND EXISTS (SELECT ... WHERE z.b = x.b)`: each conjunct holding one
/// that reads the columns of one side only (or of neither) is computed on
/// that side, a column of each of its rows, and the condition reads the
/// column. A conjunct over the columns of one row of a side has the same
/// value for every pair that row is in, so the join matches the same pairs
/// and NULL-extends the same rows (a NULL conjunct matches no pair, as
/// before). The side's subqueries are then subqueries of a `SELECT` list,
/// decorrelated as those are; the columns are dropped above the join. `None`
/// where a conjunct with a subquery reads both sides.
fn condition_on_sides(
    join: &Join,
    alias_generator: &AliasGenerator,
) -> Result<Option<LogicalPlan>> {
    let Some(filter) = &join.filter else {
        return Ok(None);
    };
    let (left_schema, right_schema) = (join.left.schema(), join.right.schema());
    let schemas = [left_schema.as_ref(), right_schema.as_ref()];
    let columns = |schema: &DFSchema| -> Vec<Expr> {
        schema.columns().into_iter().map(Expr::Column).collect()
    };
    let (mut left_exprs, mut right_exprs) = (columns(left_schema), columns(right_schema));
    let mut condition = vec![];
    for conjunct in split_conjunction(filter) {
        if !conjunct.exists(|expr| to_rewrite(expr, &schemas))? {
            condition.push(conjunct.clone());
            continue;
        }
        let read = columns_read(conjunct)?;
        let reads = |schema: &DFSchema| read.iter().any(|c| schema.has_column(c));
        let side_exprs = match (reads(left_schema), reads(right_schema)) {
            (_, false) => &mut left_exprs,
            (false, true) => &mut right_exprs,
            (true, true) => return Ok(None),
        };
        let name = alias_generator.next("__join_condition");
        side_exprs.push(conjunct.clone().alias(&name));
        condition.push(Expr::Column(Column::new_unqualified(name)));
    }
    let side = |input: &Arc<LogicalPlan>, exprs: Vec<Expr>| -> Result<Arc<LogicalPlan>> {
        if exprs.len() == input.schema().fields().len() {
            return Ok(Arc::clone(input));
        }
        let computed = LogicalPlanBuilder::from(Arc::unwrap_or_clone(Arc::clone(input)))
            .project(exprs)?
            .build()?;
        Ok(Arc::new(rewrite_node(computed, alias_generator)?))
    };
    let joined = LogicalPlan::Join(Join::try_new(
        side(&join.left, left_exprs)?,
        side(&join.right, right_exprs)?,
        join.on.clone(),
        conjunction(condition),
        join.join_type,
        join.join_constraint,
        join.null_equality,
        join.null_aware,
    )?);
    let plan = LogicalPlanBuilder::from(joined)
        .project(columns(&join.schema))?
        .build()?;
    Ok(Some(plan))
}

/// A left or right join whose condition holds a subquery that reads both
/// sides, `t1 LEFT JOIN t2 ON t1.k = t2.k AND t1.a IN (SELECT a FROM t3
/// WHERE t3.b > t2.b)`: the conjuncts that hold subqueries are evaluated
/// once for each distinct combination of the columns they read among the
/// pairs the other conjuncts match (an inner join), and the side the join
/// does not preserve takes each combination its rows are in.
///
/// For a left join, the right side becomes `t2 JOIN conditions ON t2.b =
/// conditions.t2_b`, and the condition reads `t1.a = conditions.t1_a AND
/// conditions.value`. A pair of rows the other conjuncts match meets the
/// one row of `conditions` of its combination (they are distinct, and
/// compared NULL-safe), whose value is the conjuncts' for the pair; any
/// other row of `conditions` differs in a column of the preserved side. So
/// the join matches the same pairs, and NULL-extends the same rows of the
/// preserved side. A right join is the same the other way round, and so
/// are semi and anti joins, which return the rows of the preserved side
/// that some (or no) row of the other matches; a full join preserves both
/// sides and is left (`None`).
fn condition_on_pairs(
    join: &Join,
    alias_generator: &AliasGenerator,
) -> Result<Option<LogicalPlan>> {
    let Some(filter) = &join.filter else {
        return Ok(None);
    };
    let preserves_left = match join.join_type {
        JoinType::Left | JoinType::LeftSemi | JoinType::LeftAnti => true,
        JoinType::Right | JoinType::RightSemi | JoinType::RightAnti => false,
        _ => return Ok(None),
    };
    let (left_schema, right_schema) = (join.left.schema(), join.right.schema());
    let schemas = [left_schema.as_ref(), right_schema.as_ref()];
    let mut plain = vec![];
    let mut with_subqueries = vec![];
    let mut read = BTreeSet::new();
    for conjunct in split_conjunction(filter) {
        if conjunct.exists(|expr| to_rewrite(expr, &schemas))? {
            read.extend(columns_read(conjunct)?);
            with_subqueries.push(conjunct.clone());
        } else {
            plain.push(conjunct.clone());
        }
    }
    // The other conjuncts are evaluated twice, for the combinations and in
    // the join: a volatile one would match other pairs each time
    if plain.iter().any(Expr::is_volatile) {
        return Ok(None);
    }
    let Some(evaluated) = conjunction(with_subqueries) else {
        return Ok(None);
    };
    let read: Vec<Column> = read
        .into_iter()
        .filter(|column| {
            left_schema.has_column(column) || right_schema.has_column(column)
        })
        .collect();
    // The combinations of the columns read among the pairs the other
    // conjuncts match, and the conjuncts' value for each
    let pairs = LogicalPlan::Join(Join::try_new(
        Arc::clone(&join.left),
        Arc::clone(&join.right),
        join.on.clone(),
        conjunction(plain.clone()),
        JoinType::Inner,
        join.join_constraint,
        join.null_equality,
        false,
    )?);
    let combinations = LogicalPlanBuilder::from(pairs)
        .aggregate(read.iter().cloned().map(Expr::Column), Vec::<Expr>::new())?
        .build()?;
    let prefix = alias_generator.next("__condition");
    let names: Vec<String> = (0..read.len()).map(|i| format!("{prefix}_{i}")).collect();
    let value_name = format!("{prefix}_value");
    let exprs = read
        .iter()
        .zip(&names)
        .map(|(column, name)| Expr::Column(column.clone()).alias(name))
        .chain([evaluated.alias(&value_name)]);
    let conditions = LogicalPlanBuilder::from(combinations)
        .project(exprs)?
        .build()?;
    let conditions = rewrite_node(conditions, alias_generator)?;
    let conditions = LogicalPlanBuilder::from(conditions)
        .alias(prefix.as_str())?
        .build()?;
    let of_conditions = |name: &str| Column::new(Some(prefix.as_str()), name);
    // The side the join does not preserve takes the combinations its rows
    // are in; the condition compares the preserved side's columns
    let unpreserved_schema = if preserves_left {
        right_schema
    } else {
        left_schema
    };
    let (mut unpreserved_keys, mut preserved_keys) = (vec![], vec![]);
    for (column, name) in read.iter().zip(&names) {
        let pair = (column.clone(), of_conditions(name));
        if unpreserved_schema.has_column(column) {
            unpreserved_keys.push(pair);
        } else {
            preserved_keys.push(pair);
        }
    }
    let unpreserved = if preserves_left {
        &join.right
    } else {
        &join.left
    };
    let with_conditions = LogicalPlanBuilder::from(unpreserved.as_ref().clone())
        .join_detailed(
            conditions,
            JoinType::Inner,
            unpreserved_keys.into_iter().unzip(),
            None,
            NullEquality::NullEqualsNull,
        )?
        .build()?;
    let condition = conjunction(
        plain
            .into_iter()
            .chain(preserved_keys.into_iter().map(|(column, of_conditions)| {
                binary_expr(
                    Expr::Column(column),
                    Operator::IsNotDistinctFrom,
                    Expr::Column(of_conditions),
                )
            }))
            .chain([Expr::Column(of_conditions(&value_name))]),
    );
    let (left, right) = if preserves_left {
        (join.left.as_ref().clone(), with_conditions)
    } else {
        (with_conditions, join.right.as_ref().clone())
    };
    let joined = LogicalPlan::Join(Join::try_new(
        Arc::new(left),
        Arc::new(right),
        join.on.clone(),
        condition,
        join.join_type,
        join.join_constraint,
        join.null_equality,
        false,
    )?);
    let columns = join.schema.columns().into_iter().map(Expr::Column);
    Ok(Some(
        LogicalPlanBuilder::from(joined).project(columns)?.build()?,
    ))
}

/// A full join whose condition holds a subquery that reads both sides, `t1
/// FULL JOIN t2 ON t1.a IN (SELECT a FROM t3 WHERE t2.a > 1)`: the left
/// join on the same condition, which returns every matched pair and every
/// row of the left side, and then the rows of the right side that no row
/// of the left matches (a right anti join on the condition), NULL-extended
/// on the left. Both are [`condition_on_pairs`]; a row of the right side
/// is tested on its own, so its duplicates stay.
fn full_join_on_pairs(
    join: &Join,
    alias_generator: &AliasGenerator,
) -> Result<Option<LogicalPlan>> {
    if join.join_type != JoinType::Full {
        return Ok(None);
    }
    // Each half evaluates the condition on its own: a volatile one could
    // match a right row in one and not in the other
    if let Some(filter) = &join.filter
        && calls_volatile(filter)?
    {
        return Ok(None);
    }
    let of_type = |join_type| {
        Join::try_new(
            Arc::clone(&join.left),
            Arc::clone(&join.right),
            join.on.clone(),
            join.filter.clone(),
            join_type,
            join.join_constraint,
            join.null_equality,
            false,
        )
    };
    let Some(with_left_rows) =
        condition_on_pairs(&of_type(JoinType::Left)?, alias_generator)?
    else {
        return Ok(None);
    };
    let Some(unmatched_right) =
        condition_on_pairs(&of_type(JoinType::RightAnti)?, alias_generator)?
    else {
        return Ok(None);
    };
    // Both inputs under names of their own: a union's columns are
    // unqualified, and the join's have a name on each side
    let prefix = alias_generator.next("__full_join");
    let name = |index: usize| format!("{prefix}_{index}");
    let left_columns = join.left.schema().columns();
    let mut with_left_rows_exprs = vec![];
    let mut unmatched_right_exprs = vec![];
    let mut restored = vec![];
    for (index, (qualifier, field)) in join.schema.iter().enumerate() {
        let column = Column::new(qualifier.cloned(), field.name());
        with_left_rows_exprs.push(Expr::Column(column.clone()).alias(name(index)));
        unmatched_right_exprs.push(if left_columns.contains(&column) {
            Expr::Literal(ScalarValue::try_from(field.data_type())?, None)
                .alias(name(index))
        } else {
            Expr::Column(column).alias(name(index))
        });
        restored.push(
            Expr::Column(Column::new_unqualified(name(index)))
                .alias_qualified(qualifier.cloned(), field.name()),
        );
    }
    let with_left_rows = LogicalPlanBuilder::from(with_left_rows)
        .project(with_left_rows_exprs)?
        .build()?;
    let unmatched_right = LogicalPlanBuilder::from(unmatched_right)
        .project(unmatched_right_exprs)?
        .build()?;
    // A column is nullable where it is in either input: every column of a
    // full join
    let union =
        Union::try_new(vec![Arc::new(with_left_rows), Arc::new(unmatched_right)])?;
    let plan = LogicalPlanBuilder::from(LogicalPlan::Union(union))
        .project(restored)?
        .build()?;
    Ok(Some(plan))
}

/// Whether `expr`, or the plan of a subquery in it, calls a volatile
/// function.
fn calls_volatile(expr: &Expr) -> Result<bool> {
    expr.exists(|expr| {
        let Some(subquery) = subquery_of(expr) else {
            return Ok(expr.is_volatile_node());
        };
        let mut found = false;
        subquery.subquery.apply_with_subqueries(|node| {
            found = node.expressions().iter().any(Expr::is_volatile);
            Ok(if found {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })?;
        Ok(found)
    })
}

/// The columns `expr` reads: its own, and the outer columns of the
/// subqueries in it.
fn columns_read(expr: &Expr) -> Result<BTreeSet<Column>> {
    let mut read: BTreeSet<Column> = expr.column_refs().into_iter().cloned().collect();
    expr.apply(|expr| {
        if let Some(subquery) = subquery_of(expr) {
            read.extend(free_outer_columns(&subquery.subquery)?);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(read)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::DataType;
    use datafusion_common::{JoinType, Result};
    use datafusion_expr::{col, exists, out_ref_col};

    use crate::fork_test_util::decorrelated;
    use crate::fork_test_util::table;

    /// `o JOIN_TYPE t ON o.k = t.k AND EXISTS (SELECT * FROM s WHERE s.v =
    /// t.v)`.
    fn join_on_exists(join_type: JoinType) -> Result<datafusion_expr::LogicalPlan> {
        let subquery = table("s")?
            .filter(col("s.v").eq(out_ref_col(DataType::Int32, "t.v")))?
            .build()?;
        let condition = col("o.k").eq(col("t.k")).and(exists(Arc::new(subquery)));
        table("o")?
            .join_on(table("t")?.build()?, join_type, [condition])?
            .build()
    }

    /// `o JOIN_TYPE t ON o.k = t.k AND EXISTS (SELECT * FROM s WHERE s.v =
    /// o.v + t.v)`: a subquery reading both sides.
    fn join_on_exists_of_both_sides(
        join_type: JoinType,
    ) -> Result<datafusion_expr::LogicalPlan> {
        let subquery =
            table("s")?
                .filter(col("s.v").eq(out_ref_col(DataType::Int32, "o.v")
                    + out_ref_col(DataType::Int32, "t.v")))?
                .build()?;
        let condition = col("o.k").eq(col("t.k")).and(exists(Arc::new(subquery)));
        table("o")?
            .join_on(table("t")?.build()?, join_type, [condition])?
            .build()
    }

    #[test]
    fn an_inner_join_condition_is_a_filter_above_the_join() -> Result<()> {
        insta::assert_snapshot!(decorrelated(join_on_exists(JoinType::Inner)?)?, @r"
            Projection: o.k, o.v, t.k, t.v
              Filter: __subquery_3.mark
                LeftMark Join: t.v = __subquery_3.__subquery_3_2
                  Filter: o.k = t.k
                    Cross Join:
                      TableScan: o
                      TableScan: t
                  SubqueryAlias: __subquery_3
                    Projection: s.k AS __subquery_3_0, s.v AS __subquery_3_1, __domain_tag_2_0 AS __subquery_3_2
                      Projection: s.k, s.v, s.v AS __domain_tag_2_0
                        Filter: s.v IS NOT NULL
                          TableScan: s
        ");
        Ok(())
    }

    #[test]
    fn an_outer_join_condition_is_computed_on_the_side_it_reads() -> Result<()> {
        insta::assert_snapshot!(decorrelated(join_on_exists(JoinType::Left)?)?, @r"
            Projection: o.k, o.v, t.k, t.v
              Left Join:  Filter: o.k = t.k AND __join_condition_1
                TableScan: o
                Projection: t.k, t.v, __subquery_4.mark AS __join_condition_1
                  LeftMark Join: t.v = __subquery_4.__subquery_4_2
                    TableScan: t
                    SubqueryAlias: __subquery_4
                      Projection: s.k AS __subquery_4_0, s.v AS __subquery_4_1, __domain_tag_3_0 AS __subquery_4_2
                        Projection: s.k, s.v, s.v AS __domain_tag_3_0
                          Filter: s.v IS NOT NULL
                            TableScan: s
            ");
        Ok(())
    }

    #[test]
    fn an_outer_join_condition_reading_both_sides_is_computed_per_combination()
    -> Result<()> {
        let plan = join_on_exists_of_both_sides(JoinType::Left)?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: o.k, o.v, t.k, t.v
              Left Join:  Filter: o.k = t.k AND o.v IS NOT DISTINCT FROM __condition_1.__condition_1_0 AND __condition_1.__condition_1_value
                TableScan: o
                Inner Join: t.v = __condition_1.__condition_1_1
                  TableScan: t
                  SubqueryAlias: __condition_1
                    Projection: o.v AS __condition_1_0, t.v AS __condition_1_1, __subquery_4.mark AS __condition_1_value
                      LeftMark Join: o.v = __subquery_4.__subquery_4_0, t.v = __subquery_4.__subquery_4_1
                        Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                          Inner Join:  Filter: o.k = t.k
                            TableScan: o
                            TableScan: t
                        SubqueryAlias: __subquery_4
                          Projection: __domain_instance_3.__domain_2_0 AS __subquery_4_0, __domain_instance_3.__domain_2_1 AS __subquery_4_1
                            Aggregate: groupBy=[[__domain_instance_3.__domain_2_0, __domain_instance_3.__domain_2_1]], aggr=[[]]
                              Filter: s.v = __domain_instance_3.__domain_2_0 + __domain_instance_3.__domain_2_1
                                Cross Join:
                                  TableScan: s
                                  SubqueryAlias: __domain_instance_3
                                    Aggregate: groupBy=[[__domain_2_0, __domain_2_1]], aggr=[[]]
                                      Projection: o.v AS __domain_2_0, t.v AS __domain_2_1
                                        Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                                          Inner Join:  Filter: o.k = t.k
                                            TableScan: o
                                            TableScan: t
            ");
        Ok(())
    }

    #[test]
    fn a_full_join_condition_reading_both_sides_is_the_left_join_and_the_unmatched_right_rows()
    -> Result<()> {
        let plan = join_on_exists_of_both_sides(JoinType::Full)?;
        insta::assert_snapshot!(decorrelated(plan)?, @r"
            Projection: __full_join_9_0 AS k, __full_join_9_1 AS v, __full_join_9_2 AS k, __full_join_9_3 AS v
              Union
                Projection: o.k AS __full_join_9_0, o.v AS __full_join_9_1, t.k AS __full_join_9_2, t.v AS __full_join_9_3
                  Projection: o.k, o.v, t.k, t.v
                    Left Join:  Filter: o.k = t.k AND o.v IS NOT DISTINCT FROM __condition_1.__condition_1_0 AND __condition_1.__condition_1_value
                      TableScan: o
                      Inner Join: t.v = __condition_1.__condition_1_1
                        TableScan: t
                        SubqueryAlias: __condition_1
                          Projection: o.v AS __condition_1_0, t.v AS __condition_1_1, __subquery_4.mark AS __condition_1_value
                            LeftMark Join: o.v = __subquery_4.__subquery_4_0, t.v = __subquery_4.__subquery_4_1
                              Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                                Inner Join:  Filter: o.k = t.k
                                  TableScan: o
                                  TableScan: t
                              SubqueryAlias: __subquery_4
                                Projection: __domain_instance_3.__domain_2_0 AS __subquery_4_0, __domain_instance_3.__domain_2_1 AS __subquery_4_1
                                  Aggregate: groupBy=[[__domain_instance_3.__domain_2_0, __domain_instance_3.__domain_2_1]], aggr=[[]]
                                    Filter: s.v = __domain_instance_3.__domain_2_0 + __domain_instance_3.__domain_2_1
                                      Cross Join:
                                        TableScan: s
                                        SubqueryAlias: __domain_instance_3
                                          Aggregate: groupBy=[[__domain_2_0, __domain_2_1]], aggr=[[]]
                                            Projection: o.v AS __domain_2_0, t.v AS __domain_2_1
                                              Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                                                Inner Join:  Filter: o.k = t.k
                                                  TableScan: o
                                                  TableScan: t
                Projection: Int32(NULL) AS __full_join_9_0, Int32(NULL) AS __full_join_9_1, t.k AS __full_join_9_2, t.v AS __full_join_9_3
                  Projection: t.k, t.v
                    RightAnti Join:  Filter: o.k = t.k AND t.v IS NOT DISTINCT FROM __condition_5.__condition_5_1 AND __condition_5.__condition_5_value
                      Inner Join: o.v = __condition_5.__condition_5_0
                        TableScan: o
                        SubqueryAlias: __condition_5
                          Projection: o.v AS __condition_5_0, t.v AS __condition_5_1, __subquery_8.mark AS __condition_5_value
                            LeftMark Join: o.v = __subquery_8.__subquery_8_0, t.v = __subquery_8.__subquery_8_1
                              Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                                Inner Join:  Filter: o.k = t.k
                                  TableScan: o
                                  TableScan: t
                              SubqueryAlias: __subquery_8
                                Projection: __domain_instance_7.__domain_6_0 AS __subquery_8_0, __domain_instance_7.__domain_6_1 AS __subquery_8_1
                                  Aggregate: groupBy=[[__domain_instance_7.__domain_6_0, __domain_instance_7.__domain_6_1]], aggr=[[]]
                                    Filter: s.v = __domain_instance_7.__domain_6_0 + __domain_instance_7.__domain_6_1
                                      Cross Join:
                                        TableScan: s
                                        SubqueryAlias: __domain_instance_7
                                          Aggregate: groupBy=[[__domain_6_0, __domain_6_1]], aggr=[[]]
                                            Projection: o.v AS __domain_6_0, t.v AS __domain_6_1
                                              Aggregate: groupBy=[[o.v, t.v]], aggr=[[]]
                                                Inner Join:  Filter: o.k = t.k
                                                  TableScan: o
                                                  TableScan: t
                      TableScan: t
            ");
        Ok(())
    }
}
