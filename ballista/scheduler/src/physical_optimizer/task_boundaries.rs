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

//! What a DataFusion plan relies on that Ballista's stages and tasks break,
//! and how both planners (static and adaptive) keep it.
//!
//! DataFusion optimizes a plan for one process. Ballista then cuts it at its
//! exchanges into stages, and each stage into tasks that may run on different
//! executors. Three things the single-process plan relies on do not survive
//! that cut by themselves:
//!
//! - **State shared by the partitions of an operator.** A
//!   [`NestedLoopJoinExec`] collects its build (left) side once and shares it,
//!   with a bitmap of the matched build rows, between all its probe
//!   partitions; the last partition to finish emits the rows decided by that
//!   bitmap: unmatched rows of a left outer join, semi and anti rows, and the
//!   rows of a `LeftSingle` join, whose duplicate check is the bitmap too. In
//!   Ballista every task collects its own copy of the build side, so each task
//!   would emit those rows for its own probe slice: rows repeat, and a
//!   second match found in another task goes unnoticed. Such a join runs its
//!   probe side in one task ([`needs_one_probe_task`]). Hash joins have the
//!   same hazard; Ballista already keeps them off broadcasts
//!   ([`collect_left_broadcast_safe`]).
//! - **Order within a partition.** DataFusion may keep rows ordered across a
//!   hash repartition (`preserve_order`) and then drop a sort above it; an
//!   operator above a join that keeps its probe order relies on the same
//!   thing. A shuffle reads each partition's rows from many map tasks in no
//!   particular order, so wherever a planner swaps an operator for a shuffle
//!   or reshapes a join, the order the original promised is restored with a
//!   sort of each partition ([`keep_ordering`]).
//! - **An empty input of a join.** Adaptive planning replaces a stage found
//!   empty by an `EmptyExec`, which cannot claim the hash partitioning a
//!   partitioned join requires of it. When the join keeps its empty side (an
//!   outer or single join), a repartition is planned over the `EmptyExec`,
//!   becomes a new stage, runs, is found empty, and so on forever. The hash
//!   exchanges that feed a join stay in place (`join_hash_inputs` in the
//!   adaptive planner's `optimizer_rule::join_inputs`).
//!
//! [`collect_left_broadcast_safe`]: super::join_selection::collect_left_broadcast_safe

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::joins::NestedLoopJoinExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, ExecutionPlan, ExecutionPlanProperties,
    ReplaceChildrenOptions,
};

use super::join_selection::collect_left_broadcast_safe;

/// Whether `plan` is a nested loop join that must read all of its probe side
/// in one task: its join type emits rows on behalf of the build side, and its
/// probe side has more than one partition.
pub(crate) fn needs_one_probe_task(plan: &Arc<dyn ExecutionPlan>) -> bool {
    let Some(join) = plan.downcast_ref::<NestedLoopJoinExec>() else {
        return false;
    };
    !collect_left_broadcast_safe(*join.join_type())
        && join.right().output_partitioning().partition_count() > 1
}

/// `join` (see [`needs_one_probe_task`]) with its probe side coalesced into
/// one partition, so that one task sees every probe row.
pub(crate) fn with_one_probe_task(
    join: &Arc<dyn ExecutionPlan>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let children = join.children();
    let left = Arc::clone(children[0]);
    let right: Arc<dyn ExecutionPlan> =
        Arc::new(CoalescePartitionsExec::new(Arc::clone(children[1])));
    let single_task = Arc::clone(join).replace_children(
        vec![left, right],
        ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
    )?;
    keep_ordering(join, single_task)
}

/// `replacement`, which stands in for `original` in a plan that was optimized
/// around `original`'s properties, sorted within each partition if
/// `original` promised an order that `replacement` does not keep.
pub(crate) fn keep_ordering(
    original: &Arc<dyn ExecutionPlan>,
    replacement: Arc<dyn ExecutionPlan>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(ordering) = original.output_ordering() else {
        return Ok(replacement);
    };
    if replacement
        .equivalence_properties()
        .ordering_satisfy(ordering.clone())?
    {
        return Ok(replacement);
    }
    Ok(Arc::new(
        SortExec::new(ordering.clone(), replacement).with_preserve_partitioning(true),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::common::{JoinSide, JoinType};
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{BinaryExpr, Column, col};
    use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
    use datafusion::physical_plan::joins::utils::{ColumnIndex, JoinFilter};
    use datafusion::physical_plan::repartition::RepartitionExec;
    use datafusion::physical_plan::{Partitioning, displayable};

    /// An empty in-memory scan of one column `a`, ordered by it or not.
    fn scan(partitions: usize, sorted: bool) -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
        let mut source =
            MemorySourceConfig::try_new(&vec![vec![]; partitions], schema.clone(), None)
                .unwrap();
        if sorted {
            source = source
                .try_with_sort_information(vec![a_ordering(&schema)])
                .unwrap();
        }
        DataSourceExec::from_data_source(source)
    }

    fn a_ordering(schema: &Schema) -> LexOrdering {
        LexOrdering::new([PhysicalSortExpr::new_default(col("a", schema).unwrap())])
            .unwrap()
    }

    fn nested_loop_join(
        join_type: JoinType,
        probe_partitions: usize,
    ) -> Arc<dyn ExecutionPlan> {
        let left = scan(1, false);
        let right = scan(probe_partitions, false);
        let intermediate = Arc::new(Schema::new(vec![
            Field::new("l", DataType::Int64, true),
            Field::new("r", DataType::Int64, true),
        ]));
        let filter = JoinFilter::new(
            Arc::new(BinaryExpr::new(
                Arc::new(Column::new("l", 0)),
                Operator::Lt,
                Arc::new(Column::new("r", 1)),
            )),
            vec![
                ColumnIndex {
                    index: 0,
                    side: JoinSide::Left,
                },
                ColumnIndex {
                    index: 0,
                    side: JoinSide::Right,
                },
            ],
            intermediate,
        );
        Arc::new(
            NestedLoopJoinExec::try_new(left, right, Some(filter), &join_type, None)
                .unwrap(),
        )
    }

    #[test]
    fn joins_that_emit_build_rows_read_their_probe_side_in_one_task() {
        for join_type in [
            JoinType::Left,
            JoinType::Full,
            JoinType::LeftSemi,
            JoinType::LeftAnti,
            JoinType::LeftMark,
            JoinType::LeftSingle,
        ] {
            let join = nested_loop_join(join_type, 4);
            assert!(needs_one_probe_task(&join), "{join_type:?}");
            let rewritten = with_one_probe_task(&join).unwrap();
            assert_eq!(rewritten.output_partitioning().partition_count(), 1);
            assert!(rewritten.children()[1].is::<CoalescePartitionsExec>());
            // Already one probe partition: nothing to do
            assert!(!needs_one_probe_task(&rewritten), "{join_type:?}");
        }
    }

    #[test]
    fn probe_driven_joins_keep_their_probe_partitions() {
        for join_type in [
            JoinType::Inner,
            JoinType::Right,
            JoinType::RightSemi,
            JoinType::RightAnti,
            JoinType::RightMark,
            JoinType::RightSingle,
        ] {
            assert!(
                !needs_one_probe_task(&nested_loop_join(join_type, 4)),
                "{join_type:?}"
            );
        }
    }

    #[test]
    fn a_shuffle_that_loses_the_order_is_sorted_again() {
        let sorted = scan(2, true);
        let schema = sorted.schema();
        let keep_order = Arc::new(
            RepartitionExec::try_new(
                Arc::clone(&sorted),
                Partitioning::Hash(vec![col("a", &schema).unwrap()], 3),
            )
            .unwrap()
            .with_preserve_order(),
        ) as Arc<dyn ExecutionPlan>;
        assert!(keep_order.output_ordering().is_some());
        // A stand-in that keeps the partitioning but not the order
        let shuffle = Arc::new(
            RepartitionExec::try_new(
                sorted,
                Partitioning::Hash(vec![col("a", &schema).unwrap()], 3),
            )
            .unwrap(),
        ) as Arc<dyn ExecutionPlan>;
        let kept = keep_ordering(&keep_order, Arc::clone(&shuffle)).unwrap();
        let shown = displayable(kept.as_ref()).indent(true).to_string();
        assert!(
            shown.starts_with("SortExec: expr=[a@0 ASC], preserve_partitioning=[true]"),
            "{shown}"
        );
        assert_eq!(kept.output_partitioning().partition_count(), 3);
        // An order kept is left alone, and so is a plan without one
        let again = keep_ordering(&keep_order, Arc::clone(&keep_order)).unwrap();
        assert!(Arc::ptr_eq(&again, &keep_order));
        let unordered = keep_ordering(&shuffle, Arc::clone(&shuffle)).unwrap();
        assert!(Arc::ptr_eq(&unordered, &shuffle));
    }
}
