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

//! [`DeduplicateExistenceSide`] groups the side of a semi, anti or mark
//! hash join that is only tested for a match, on the columns the join
//! reads from it, before the join, where the join has a filter and that
//! side is its build side. It runs
//! where `datafusion.optimizer.deduplicate_existence_join_input` is set (on
//! by default).
//!
//! `EXISTS (SELECT 1 FROM tenk1 l1 WHERE l1.four = l0.four AND l1.ten <
//! l0.twenty)` is a semi join on `four` with the filter `ten < twenty`. The
//! hash join pairs each outer row with every inner row of its key and
//! evaluates the filter on each pair: with four values of `four`, 10,000
//! outer rows met 2,500 inner rows each, 25 million evaluations, where the
//! inner side holds only 20 distinct pairs `(four, ten)`. (Without a
//! filter the hash join takes each row's first match itself, see
//! `hash_join/first_match.rs`.)
//!
//! ```text
//! HashJoinExec: mode=CollectLeft, join_type=RightSemi, on=[(four@0, four@0)], filter=ten@0 < twenty@1
//!   AggregateExec: mode=Partial, gby=[four@0 as four, ten@1 as ten], aggr=[]
//!     (the inner rows)
//!   (the outer rows)
//! ```
//!
//! # When the answer stays the same
//!
//! A semi join keeps the rows of its output side that match at least one
//! row of the other side, an anti join those that match none, and a mark
//! join marks each one with whether it matches. Whether a row matches
//! depends on the other side only through the values the join reads from
//! it: its key columns and the columns of the filter. Two rows of that side
//! equal in all of those columns match the same rows, so dropping one of
//! them changes no answer; NULLs are kept as values, so a side that held a
//! NULL key still does, and an empty side stays empty. The join outputs no
//! column of that side, so its projection is unchanged.
//!
//! Equal must mean the same here: the rule groups only columns whose equal
//! values have equal bits (not floats, whose `-0.0` the aggregate keeps as
//! `0.0`, and `1 / x` tells apart), and leaves a join with a volatile filter
//! or key alone, as fewer pairs would draw fewer random values.
//!
//! The aggregate is a partial one: it needs no second phase, as duplicates
//! it leaves are harmless, and it stops grouping and passes rows on where
//! it finds few duplicates (`skip_partial_aggregation_probe_ratio_threshold`).
//! It is placed below a merge of partitions, to group each partition in
//! parallel, and nowhere that would change the partitioning the join
//! requires. A tested probe side is left alone (see `tested_build_side`):
//! grouping it cost more than it saved on TPC-H q21.

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion_common::config::ConfigOptions;
use datafusion_common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion_common::{HashMap, JoinSide, JoinType, Result, internal_err};
use datafusion_physical_expr::PhysicalExpr;
use datafusion_physical_expr::expressions::Column;
use datafusion_physical_expr::utils::collect_columns;
use datafusion_physical_expr_common::physical_expr::is_volatile;
use datafusion_physical_plan::aggregates::{
    AggregateExec, AggregateMode, PhysicalGroupBy,
};
use datafusion_physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion_physical_plan::joins::HashJoinExec;
use datafusion_physical_plan::joins::key_value_sets::equal_keys_have_equal_bits;
use datafusion_physical_plan::joins::utils::{ColumnIndex, JoinFilter};
use datafusion_physical_plan::{
    ChildrenPropertiesMode, ExecutionPlan, ReplaceChildrenOptions,
};

use crate::PhysicalOptimizerRule;
use crate::sanity_checker::check_plan_sanity;

/// Groups the tested side of a semi, anti or mark hash join with a filter
/// on the columns the join reads. See the [module documentation](self).
#[derive(Debug, Default)]
pub struct DeduplicateExistenceSide {}

impl DeduplicateExistenceSide {
    /// The rule; it acts where the session's options set it on.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PhysicalOptimizerRule for DeduplicateExistenceSide {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !config.optimizer.deduplicate_existence_join_input {
            return Ok(plan);
        }
        plan.transform_up(|plan| {
            let Some(join) = plan.downcast_ref::<HashJoinExec>() else {
                return Ok(Transformed::no(plan));
            };
            match deduplicated(join, config)? {
                Some(join) => Ok(Transformed::yes(join)),
                None => Ok(Transformed::no(plan)),
            }
        })
        .data()
    }

    fn name(&self) -> &str {
        "DeduplicateExistenceSide"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// The side of `join_type` that is only tested for a match, where it is the
/// build side: the hash join builds on the left.
///
/// A tested probe side (`LeftSemi`, `LeftAnti`, `LeftMark`) is left alone.
/// It is often the large side, and where it holds few duplicates the
/// aggregate's first rows and the pass of every later row cost more than
/// the lookups they save: TPC-H q21's two joins on `lineitem`'s order and
/// supplier keys took 10% longer at SF1 (1.101, medians of 6 paired
/// rounds).
fn tested_build_side(join_type: JoinType) -> Option<JoinSide> {
    match join_type {
        JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => {
            Some(JoinSide::Left)
        }
        _ => None,
    }
}

/// `join` with its tested side grouped, or `None` where the rule does not
/// apply or would break the join's requirements.
fn deduplicated(
    join: &HashJoinExec,
    config: &ConfigOptions,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(filter) = join.filter() else {
        return Ok(None);
    };
    let Some(side) = tested_build_side(*join.join_type()) else {
        return Ok(None);
    };
    let tested = match side {
        JoinSide::Left => join.left(),
        JoinSide::Right | JoinSide::None => join.right(),
    };
    // Grouped already, by this rule (a plan optimized twice) or the query
    let merged = tested
        .downcast_ref::<CoalescePartitionsExec>()
        .filter(|merge| merge.fetch().is_none());
    let below_merge = merged.map(|merge| merge.input()).unwrap_or(tested);
    if below_merge.is::<AggregateExec>() {
        return Ok(None);
    }
    // A volatile filter or key is evaluated once per pair: fewer pairs would
    // draw fewer times
    let keys = join.on().iter().map(|(left, right)| match side {
        JoinSide::Left => left,
        JoinSide::Right | JoinSide::None => right,
    });
    if is_volatile(filter.expression()) || keys.clone().any(is_volatile) {
        return Ok(None);
    }

    // The columns the join reads from the tested side, in their order
    let mut read = BTreeSet::new();
    for key in keys {
        read.extend(collect_columns(key).iter().map(Column::index));
    }
    read.extend(
        filter
            .column_indices()
            .iter()
            .filter(|column| column.side == side)
            .map(|column| column.index),
    );
    // Grouping keeps one row of equal values: that row must be the others'
    // twin, which a float's `-0.0` and `0.0` are not (the aggregate keeps
    // `0.0`, and `1 / x` tells them apart). Two columns of one name would
    // give the aggregate's output two fields of one name. And without a
    // column read, the aggregate would be a global one, of one row.
    let schema = tested.schema();
    let fields: Vec<_> = read.iter().map(|&index| schema.field(index)).collect();
    let names: BTreeSet<_> = fields.iter().map(|field| field.name()).collect();
    if fields.is_empty()
        || names.len() < fields.len()
        || !fields
            .iter()
            .all(|field| equal_keys_have_equal_bits(field.data_type()))
    {
        return Ok(None);
    }
    // Each read column's place among the aggregate's
    let place: HashMap<usize, usize> = read
        .iter()
        .enumerate()
        .map(|(place, &index)| (index, place))
        .collect();

    let group_by = read
        .iter()
        .map(|&index| {
            let name = schema.field(index).name();
            (
                Arc::new(Column::new(name, index)) as Arc<dyn PhysicalExpr>,
                name.clone(),
            )
        })
        .collect();
    let group_by = PhysicalGroupBy::new_single(group_by);
    let grouped = |input: &Arc<dyn ExecutionPlan>| -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(AggregateExec::try_new(
            AggregateMode::Partial,
            group_by.clone(),
            vec![],
            vec![],
            Arc::clone(input),
            input.schema(),
        )?))
    };
    // Below a merge of partitions, where each partition can be grouped in
    // parallel
    let new_tested = match merged {
        Some(merge) => Arc::clone(tested).replace_children(
            vec![grouped(merge.input())?],
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )?,
        None => grouped(tested)?,
    };

    let renumbered = |expr: &Arc<dyn PhysicalExpr>| {
        Arc::clone(expr)
            .transform(|expr| match expr.downcast_ref::<Column>() {
                Some(column) => match place.get(&column.index()) {
                    Some(&place) => Ok(Transformed::yes(Arc::new(Column::new(
                        column.name(),
                        place,
                    )) as _)),
                    None => internal_err!("join key column {column} not grouped"),
                },
                None => Ok(Transformed::no(expr)),
            })
            .data()
    };
    let on = join
        .on()
        .iter()
        .map(|(left, right)| match side {
            JoinSide::Left => Ok((renumbered(left)?, Arc::clone(right))),
            JoinSide::Right | JoinSide::None => {
                Ok((Arc::clone(left), renumbered(right)?))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let column_indices = filter
        .column_indices()
        .iter()
        .map(|column| ColumnIndex {
            index: if column.side == side {
                place[&column.index]
            } else {
                column.index
            },
            side: column.side,
        })
        .collect();
    let filter = JoinFilter::new(
        Arc::clone(filter.expression()),
        column_indices,
        Arc::clone(filter.schema()),
    );
    let children = match side {
        JoinSide::Left => vec![new_tested, Arc::clone(join.right())],
        JoinSide::Right | JoinSide::None => vec![Arc::clone(join.left()), new_tested],
    };
    let new_join = join
        .builder()
        .with_new_children(children)?
        .with_on(on)
        .with_filter(Some(filter))
        .reset_state()
        .build_exec()?;
    // The grouped side must still be partitioned and ordered as the join
    // requires. It is where the partitioning's expressions are of columns
    // the aggregate keeps; where the aggregate cannot say so (its output
    // partitioning unknown), the join stays as it was: the rule only
    // speeds a plan up, and the plan without it is right
    if check_plan_sanity(&new_join, &config.optimizer).is_err() {
        return Ok(None);
    }
    Ok(Some(new_join))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion_common::NullEquality;
    use datafusion_expr::Operator;
    use datafusion_physical_expr::expressions::BinaryExpr;
    use datafusion_physical_plan::Partitioning;
    use datafusion_physical_plan::displayable;
    use datafusion_physical_plan::empty::EmptyExec;
    use datafusion_physical_plan::joins::PartitionMode;
    use datafusion_physical_plan::repartition::RepartitionExec;
    use insta::assert_snapshot;

    fn scan(columns: &[&str], partitions: usize) -> Arc<dyn ExecutionPlan> {
        let fields: Vec<_> = columns
            .iter()
            .map(|name| Field::new(*name, DataType::Int32, true))
            .collect();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        Arc::new(EmptyExec::new(schema).with_partitions(partitions))
    }

    fn col(name: &str, plan: &Arc<dyn ExecutionPlan>) -> Arc<dyn PhysicalExpr> {
        let index = plan.schema().index_of(name).unwrap();
        Arc::new(Column::new(name, index))
    }

    /// `left.l_col < right.r_col` as a join filter.
    fn less_than(
        (left, l_col): (&Arc<dyn ExecutionPlan>, &str),
        (right, r_col): (&Arc<dyn ExecutionPlan>, &str),
    ) -> JoinFilter {
        let l_index = left.schema().index_of(l_col).unwrap();
        let r_index = right.schema().index_of(r_col).unwrap();
        let schema = Schema::new(vec![
            left.schema().field(l_index).clone(),
            right.schema().field(r_index).clone(),
        ]);
        let expression = Arc::new(BinaryExpr::new(
            Arc::new(Column::new(l_col, 0)),
            Operator::Lt,
            Arc::new(Column::new(r_col, 1)),
        ));
        JoinFilter::new(
            expression,
            vec![
                ColumnIndex {
                    index: l_index,
                    side: JoinSide::Left,
                },
                ColumnIndex {
                    index: r_index,
                    side: JoinSide::Right,
                },
            ],
            Arc::new(schema),
        )
    }

    fn hash_join(
        left: Arc<dyn ExecutionPlan>,
        right: Arc<dyn ExecutionPlan>,
        on: (&str, &str),
        filter: Option<JoinFilter>,
        join_type: JoinType,
        mode: PartitionMode,
    ) -> Arc<dyn ExecutionPlan> {
        let on = vec![(col(on.0, &left), col(on.1, &right))];
        Arc::new(
            HashJoinExec::try_new(
                left,
                right,
                on,
                filter,
                &join_type,
                None,
                mode,
                NullEquality::NullEqualsNothing,
                false,
            )
            .unwrap(),
        )
    }

    /// `inner` joined to `outer` on `k`, filtered by `inner.x < outer.y`:
    /// `EXISTS (SELECT 1 FROM inner WHERE inner.k = outer.k AND inner.x <
    /// outer.y)` with the inner side built.
    fn tested_join(
        inner: Arc<dyn ExecutionPlan>,
        outer: Arc<dyn ExecutionPlan>,
        join_type: JoinType,
        mode: PartitionMode,
    ) -> Arc<dyn ExecutionPlan> {
        let filter = less_than((&inner, "x"), (&outer, "y"));
        hash_join(inner, outer, ("k", "k"), Some(filter), join_type, mode)
    }

    /// The optimized plan, and each join's filter column indices, which the
    /// plan's display does not show.
    fn optimized_with(plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> String {
        let plan = DeduplicateExistenceSide::new()
            .optimize(plan, config)
            .unwrap();
        let mut text = displayable(plan.as_ref()).indent(true).to_string();
        plan.apply(|node| {
            if let Some(filter) = node
                .downcast_ref::<HashJoinExec>()
                .and_then(HashJoinExec::filter)
            {
                let columns: Vec<_> = filter
                    .column_indices()
                    .iter()
                    .map(|column| format!("{:?}@{}", column.side, column.index))
                    .collect();
                text.push_str(&format!("filter reads {}\n", columns.join(", ")));
            }
            Ok(datafusion_common::tree_node::TreeNodeRecursion::Continue)
        })
        .unwrap();
        text
    }

    fn optimized(plan: Arc<dyn ExecutionPlan>) -> String {
        optimized_with(plan, &ConfigOptions::default())
    }

    /// `EXISTS (SELECT 1 FROM inner WHERE inner.k = outer.k AND inner.x <
    /// outer.y)` with the inner side built: the inner side is grouped on
    /// `k` and `x`, below the merge of its partitions, and the join reads
    /// them at their new places.
    #[test]
    fn right_semi_join_groups_its_build_side_below_the_merge() {
        let inner = scan(&["z", "k", "x"], 2);
        let inner = Arc::new(CoalescePartitionsExec::new(inner)) as _;
        let outer = scan(&["id", "k", "y"], 1);
        let plan = tested_join(
            inner,
            outer,
            JoinType::RightSemi,
            PartitionMode::CollectLeft,
        );
        assert_snapshot!(optimized(plan), @r"
            HashJoinExec: mode=CollectLeft, join_type=RightSemi, on=[(k@0, k@1)], filter=x@0 < y@1
              CoalescePartitionsExec
                AggregateExec: mode=Partial, gby=[k@1 as k, x@2 as x], aggr=[]
                  EmptyExec
              EmptyExec
            filter reads Left@1, Right@2
            ");
    }

    /// Both sides hash partitioned on the key: the aggregate over the
    /// tested side keeps that partitioning.
    #[test]
    fn partitioned_join_keeps_its_partitioning() {
        let hashed = |input: Arc<dyn ExecutionPlan>| {
            let partitioning = Partitioning::Hash(vec![col("k", &input)], 2);
            Arc::new(RepartitionExec::try_new(input, partitioning).unwrap())
                as Arc<dyn ExecutionPlan>
        };
        let inner = hashed(scan(&["x", "k", "z"], 1));
        let outer = hashed(scan(&["id", "k", "y"], 1));
        let plan = tested_join(
            inner,
            outer,
            JoinType::RightMark,
            PartitionMode::Partitioned,
        );
        assert_snapshot!(optimized(plan), @r"
            HashJoinExec: mode=Partitioned, join_type=RightMark, on=[(k@1, k@1)], filter=x@0 < y@1
              AggregateExec: mode=Partial, gby=[x@0 as x, k@1 as k], aggr=[]
                RepartitionExec: partitioning=Hash([k@1], 2), input_partitions=1
                  EmptyExec
              RepartitionExec: partitioning=Hash([k@1], 2), input_partitions=1
                EmptyExec
            filter reads Left@0, Right@2
            ");
    }

    /// Joins the rule leaves as they are: without a filter (the hash join
    /// takes first matches itself), an inner join (the side's rows are
    /// output), a tested side that is the probe side, a tested side that is
    /// an aggregate already, and the option off.
    #[test]
    fn joins_left_as_they_are() {
        let outer = scan(&["id", "k", "y"], 1);
        let inner = scan(&["k", "x"], 1);
        let filter = || Some(less_than((&inner, "x"), (&outer, "y")));
        let unchanged = |plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions| {
            let before = displayable(plan.as_ref()).indent(true).to_string();
            let after = DeduplicateExistenceSide::new()
                .optimize(plan, config)
                .unwrap();
            before == displayable(after.as_ref()).indent(true).to_string()
        };
        let join =
            |left: Arc<dyn ExecutionPlan>, filter: Option<JoinFilter>, join_type| {
                hash_join(
                    left,
                    Arc::clone(&outer),
                    ("k", "k"),
                    filter,
                    join_type,
                    PartitionMode::CollectLeft,
                )
            };
        let defaults = ConfigOptions::default();
        let without_filter = join(Arc::clone(&inner), None, JoinType::RightSemi);
        assert!(unchanged(without_filter, &defaults));
        let inner_join = join(Arc::clone(&inner), filter(), JoinType::Inner);
        assert!(unchanged(inner_join, &defaults));
        // `NOT EXISTS` with the inner side probed
        let probed = hash_join(
            Arc::clone(&outer),
            Arc::clone(&inner),
            ("k", "k"),
            Some(less_than((&outer, "y"), (&inner, "x"))),
            JoinType::LeftAnti,
            PartitionMode::CollectLeft,
        );
        assert!(unchanged(probed, &defaults));
        let grouped = Arc::new(
            AggregateExec::try_new(
                AggregateMode::Partial,
                PhysicalGroupBy::new_single(vec![
                    (col("k", &inner), "k".to_string()),
                    (col("x", &inner), "x".to_string()),
                ]),
                vec![],
                vec![],
                Arc::clone(&inner),
                inner.schema(),
            )
            .unwrap(),
        );
        let over_aggregate = join(grouped, filter(), JoinType::RightSemi);
        assert!(unchanged(over_aggregate, &defaults));
        let mut off = ConfigOptions::default();
        off.optimizer.deduplicate_existence_join_input = false;
        let semi = join(Arc::clone(&inner), filter(), JoinType::RightSemi);
        assert!(unchanged(Arc::clone(&semi), &off));
        assert!(!unchanged(semi, &defaults));
    }
}
