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

//! The dependent join pushed through a join inside the subquery: into each
//! side that reads outer columns or keeps its unmatched rows, the two sides
//! meeting only within a tag; and into the left side of a `LATERAL` join
//! whose right side reads outer columns, which then reads them from the
//! left side's tags.

use std::sync::Arc;

use datafusion_common::{Column, NullEquality, Result, internal_err};
use datafusion_expr::logical_plan::{Join, JoinType, Subquery, SubqueryAlias};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit, when};

use super::{DependentJoin, Tagged, not_distinct};
use crate::correlation::lateral::{
    filters_into_subquery, lateral_as_derived_table, lateral_side,
};
use crate::correlation::{
    correlated_in_plan, free_outer_columns, outer_sides, replace_in_subquery,
};

impl DependentJoin<'_> {
    pub(super) fn push_join(&self, join: &Join) -> Result<Tagged> {
        if let Some(subquery) = lateral_side(&join.right)
            && matches!(join.join_type, JoinType::Inner | JoinType::Left)
            && self.reads_outer(&join.right)?
        {
            let reads_domain_only = free_outer_columns(&subquery.subquery)?
                .iter()
                .all(|column| self.domain.index_of(column).is_some());
            if !reads_domain_only
                || !correlated_in_plan(&subquery.subquery, &join.left)?.is_empty()
            {
                return self.push_lateral(join);
            }
            // A lateral item that reads outer columns only is a derived
            // table reading them: the domain goes to it, not to the left
            let mut derived = join.clone();
            derived.right =
                Arc::new(lateral_as_derived_table(join.right.as_ref().clone())?);
            return self.push_join(&derived);
        }
        let left_reads = self.reads_outer(&join.left)?;
        let right_reads = self.reads_outer(&join.right)?;
        // A side whose rows make the output needs its own tags, and so does
        // a side that reads outer columns; at least one side is tagged
        let (left_outer, right_outer) = outer_sides(join.join_type);
        let push_right = right_outer || right_reads;
        let push_left = left_outer || left_reads || !push_right;
        let left = push_left.then(|| self.push(&join.left)).transpose()?;
        let right = push_right.then(|| self.push(&join.right)).transpose()?;
        // The tags of the output come from the side it keeps
        let keeps_right = right_outer && !left_outer;
        let tagged_side = match (&left, &right) {
            (_, Some(right)) if keeps_right => right,
            (Some(left), _) => left,
            (None, Some(right)) => right,
            (None, None) => return internal_err!("A join with neither side tagged"),
        };
        // A side whose tags are kept is never NULL-extended (full joins below)
        let (tags, non_null_tags) = (tagged_side.tags.clone(), tagged_side.non_null_tags);

        // The join condition, on the tags; rows of the two sides meet only
        // within a tag
        let key_equality = |l: Expr, r: Expr| match join.null_equality {
            NullEquality::NullEqualsNothing => l.eq(r),
            NullEquality::NullEqualsNull => not_distinct(l, r),
        };
        let scope = [
            Arc::clone(join.left.schema()),
            Arc::clone(join.right.schema()),
        ];
        let mut condition = vec![];
        for (l, r) in &join.on {
            condition.push(key_equality(
                self.on_tags(l, &tags, &scope)?,
                self.on_tags(r, &tags, &scope)?,
            ));
        }
        if let Some(filter) = &join.filter {
            condition.push(self.on_tags(filter, &tags, &scope)?);
        }
        if let (Some(left), Some(right)) = (&left, &right) {
            for (l, r) in left.tags.iter().zip(&right.tags) {
                condition.push(not_distinct(
                    Expr::Column(l.clone()),
                    Expr::Column(r.clone()),
                ));
            }
        }
        let side = |tagged: &Option<Tagged>, plan: &Arc<LogicalPlan>| {
            tagged
                .as_ref()
                .map_or_else(|| plan.as_ref().clone(), |tagged| tagged.plan.clone())
        };
        // A join without condition (an outer join a rule made of one whose
        // condition was `true`) matches every pair
        if condition.is_empty() {
            condition.push(lit(true));
        }
        let plan = LogicalPlanBuilder::from(side(&left, &join.left))
            .join_on(side(&right, &join.right), join.join_type, condition)?
            .build()?;
        let plan = mark_named_as_before(join, plan)?;
        if join.join_type != JoinType::Full {
            return Ok(Tagged {
                plan,
                tags,
                unique: false,
                non_null_tags,
            });
        }
        // Either side may be missing from a row of a full join: its tags are
        // those of the side present
        let (Some(left), Some(right)) = (left, right) else {
            return internal_err!("A full join with a side not tagged");
        };
        let tag_alias = self.alias_generator.next("__domain_tag");
        let mut exprs: Vec<Expr> = plan
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        let mut tags = vec![];
        for (index, (l, r)) in left.tags.iter().zip(&right.tags).enumerate() {
            let name = format!("{tag_alias}_{index}");
            let present = when(
                Expr::Column(l.clone()).is_not_null(),
                Expr::Column(l.clone()),
            )
            .otherwise(Expr::Column(r.clone()))?;
            exprs.push(present.alias(&name));
            tags.push(Column::new_unqualified(name));
        }
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(plan).project(exprs)?.build()?,
            tags,
            unique: false,
            non_null_tags: left.non_null_tags && right.non_null_tags,
        })
    }

    /// A `LATERAL` join inside the subquery whose lateral side reads outer
    /// columns of the domain as well as its left side's (`FROM t a2 CROSS
    /// JOIN unnest(make_array(o.k, a2.k))`, `o` outer): the domain is pushed
    /// into the left side, and the lateral side reads the outer columns
    /// from the left side's tags instead, as it reads the left side's own
    /// columns. For a left row tagged `d`, the lateral side then gives the
    /// rows it gives for that row under the outer value `d`, which is what
    /// the join gave for `d`. The join stays a lateral join, now correlated
    /// to its left side only, for the rule to decorrelate as any other.
    fn push_lateral(&self, join: &Join) -> Result<Tagged> {
        let left = self.push(&join.left)?;
        // A column of the left side hides an outer one of the same name
        let left_scope = [Arc::clone(join.left.schema())];
        let to_tag = |column: &Column| {
            self.domain
                .index_of(column)
                .map(|index| Expr::Column(left.tags[index].clone()))
        };
        let right = lateral_on_tags(join.right.as_ref().clone(), &|subquery| {
            Ok(replace_in_subquery(subquery, &to_tag, &left_scope)?.data)
        })?;
        let scope = [
            Arc::clone(join.left.schema()),
            Arc::clone(join.right.schema()),
        ];
        let on = join
            .on
            .iter()
            .map(|(l, r)| {
                Ok((
                    self.on_tags(l, &left.tags, &scope)?,
                    self.on_tags(r, &left.tags, &scope)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let filter = join
            .filter
            .as_ref()
            .map(|filter| self.on_tags(filter, &left.tags, &scope))
            .transpose()?;
        let plan = LogicalPlan::Join(Join::try_new(
            Arc::new(left.plan),
            Arc::new(right),
            on,
            filter,
            join.join_type,
            join.join_constraint,
            join.null_equality,
            join.null_aware,
        )?);
        Ok(Tagged {
            plan,
            tags: left.tags,
            unique: false,
            non_null_tags: left.non_null_tags,
        })
    }
}

/// `plan`, the tagged `join`, with the mark column of a mark join under the
/// name it had: the mark takes the qualifier of the side it marks, if that
/// side has one, and a tagged side joins the domain's alias to its own
/// (`__subquery_1.mark` would become `mark`), while the operators above
/// read the mark by its former name.
fn mark_named_as_before(join: &Join, plan: LogicalPlan) -> Result<LogicalPlan> {
    if !matches!(join.join_type, JoinType::LeftMark | JoinType::RightMark) {
        return Ok(plan);
    }
    let (Some(before), Some(after)) =
        (join.schema.columns().pop(), plan.schema().columns().pop())
    else {
        return internal_err!("A mark join without columns");
    };
    if before == after {
        return Ok(plan);
    }
    let mut exprs: Vec<Expr> = plan
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    exprs.pop();
    exprs.push(Expr::Column(after).alias_qualified(before.relation, before.name));
    LogicalPlanBuilder::from(plan).project(exprs)?.build()
}

/// The right side `plan` of a `LATERAL` join, its filters moved into its
/// subquery ([`filters_into_subquery`]) and the subquery rewritten by
/// `rewrite`.
fn lateral_on_tags(
    plan: LogicalPlan,
    rewrite: &dyn Fn(Subquery) -> Result<Subquery>,
) -> Result<LogicalPlan> {
    match filters_into_subquery(plan)? {
        LogicalPlan::Subquery(subquery) => Ok(LogicalPlan::Subquery(rewrite(subquery)?)),
        LogicalPlan::SubqueryAlias(SubqueryAlias { input, alias, .. }) => {
            match Arc::unwrap_or_clone(input) {
                LogicalPlan::Subquery(subquery) => {
                    LogicalPlanBuilder::from(LogicalPlan::Subquery(rewrite(subquery)?))
                        .alias(alias)?
                        .build()
                }
                other => internal_err!(
                    "A LATERAL side under its alias is a subquery, not {}",
                    other.display()
                ),
            }
        }
        other => internal_err!("A LATERAL side is a subquery, not {}", other.display()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::{JoinConstraint, JoinType, NullEquality, Result};
    use datafusion_expr::logical_plan::Join;
    use datafusion_expr::{LogicalPlan, col};

    use crate::fork_test_util::{outer, pushed, table};

    /// `s JOIN_TYPE (t WHERE t.v = o.v) ON s.k = t.k`.
    fn join_of_correlated_right(join_type: JoinType) -> Result<LogicalPlan> {
        let right = table("t")?.filter(col("t.v").eq(outer("v")))?.build()?;
        table("s")?
            .join(right, join_type, (vec!["s.k"], vec!["t.k"]), None)?
            .build()
    }

    #[test]
    fn an_inner_join_is_tagged_on_the_side_that_reads_outer_columns() -> Result<()> {
        insta::assert_snapshot!(pushed(join_of_correlated_right(JoinType::Inner)?)?, @r"
            Inner Join:  Filter: s.k = t.k
              TableScan: s
              Projection: t.k, t.v, t.v AS __domain_tag_2_0
                Filter: t.v IS NOT NULL
                  TableScan: t
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    #[test]
    fn a_preserved_side_is_tagged_too() -> Result<()> {
        insta::assert_snapshot!(pushed(join_of_correlated_right(JoinType::Left)?)?, @r"
            Left Join:  Filter: s.k = t.k AND __domain_instance_2.__domain_1_0 IS NOT DISTINCT FROM __domain_tag_3_0
              Cross Join:
                TableScan: s
                SubqueryAlias: __domain_instance_2
                  Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                    Projection: o.v AS __domain_1_0
                      TableScan: o
              Projection: t.k, t.v, t.v AS __domain_tag_3_0
                Filter: t.v IS NOT NULL
                  TableScan: t
            tags: [__domain_instance_2.__domain_1_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn an_outer_join_without_condition_matches_every_pair_of_a_tag() -> Result<()> {
        // `(s WHERE s.v = o.v) LEFT JOIN t` whose condition a rule dropped as
        // `true`: no keys, no filter
        let left = table("s")?.filter(col("s.v").eq(outer("v")))?.build()?;
        let join = Join::try_new(
            Arc::new(left),
            Arc::new(table("t")?.build()?),
            vec![],
            None,
            JoinType::Left,
            JoinConstraint::On,
            NullEquality::NullEqualsNothing,
            false,
        )?;
        insta::assert_snapshot!(pushed(LogicalPlan::Join(join))?, @r"
            Left Join:  Filter: Boolean(true)
              Projection: s.k, s.v, s.v AS __domain_tag_2_0
                Filter: s.v IS NOT NULL
                  TableScan: s
              TableScan: t
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: true
            ");
        Ok(())
    }

    /// `s LEFT MARK JOIN (u WHERE u.v < o.v) ON s.k = u.k`, `u` an alias
    /// of `t`: the marked side joins the domain, whose alias is another
    /// qualifier, so the mark would lose `u`. The projection names it
    /// `u.mark` again (an alias displays without its qualifier).
    #[test]
    fn a_mark_keeps_its_name() -> Result<()> {
        let right = table("t")?
            .alias("u")?
            .filter(col("u.v").lt(outer("v")))?
            .build()?;
        let join = table("s")?
            .join(right, JoinType::LeftMark, (vec!["s.k"], vec!["u.k"]), None)?
            .build()?;
        insta::assert_snapshot!(pushed(join)?, @r"
            Projection: s.k, s.v, __domain_instance_2.__domain_1_0, mark AS mark
              LeftMark Join:  Filter: s.k = u.k AND __domain_instance_2.__domain_1_0 IS NOT DISTINCT FROM __domain_instance_3.__domain_1_0
                Cross Join:
                  TableScan: s
                  SubqueryAlias: __domain_instance_2
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.v AS __domain_1_0
                        TableScan: o
                Filter: u.v < __domain_instance_3.__domain_1_0
                  Cross Join:
                    SubqueryAlias: u
                      TableScan: t
                    SubqueryAlias: __domain_instance_3
                      Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                        Projection: o.v AS __domain_1_0
                          TableScan: o
            tags: [__domain_instance_2.__domain_1_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn a_full_join_takes_the_tags_of_the_side_present() -> Result<()> {
        insta::assert_snapshot!(pushed(join_of_correlated_right(JoinType::Full)?)?, @r"
            Projection: s.k, s.v, __domain_instance_2.__domain_1_0, t.k, t.v, __domain_tag_3_0, CASE WHEN __domain_instance_2.__domain_1_0 IS NOT NULL THEN __domain_instance_2.__domain_1_0 ELSE __domain_tag_3_0 END AS __domain_tag_4_0
              Full Join:  Filter: s.k = t.k AND __domain_instance_2.__domain_1_0 IS NOT DISTINCT FROM __domain_tag_3_0
                Cross Join:
                  TableScan: s
                  SubqueryAlias: __domain_instance_2
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.v AS __domain_1_0
                        TableScan: o
                Projection: t.k, t.v, t.v AS __domain_tag_3_0
                  Filter: t.v IS NOT NULL
                    TableScan: t
            tags: [__domain_tag_4_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }
}
