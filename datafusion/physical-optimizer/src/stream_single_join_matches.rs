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

//! [`StreamSingleJoinMatches`] lets a single join (`LeftSingle`,
//! `RightSingle`) emit its matched rows as it finds them wherever its
//! output is read to the end.
//!
//! A single join fails the query when a row of its preserved side matches a
//! second time. By default it holds each matched row back until every row
//! that could match it has been seen ([`SingleJoinOutput::Held`]): a
//! consumer that stops reading early, such as a `LIMIT` above the join,
//! would otherwise return a row whose second match the join never reached,
//! where PostgreSQL fails. Held rows cost memory: with the outer side built
//! (`LeftSingle`), every matched row with the probe side's columns, up to
//! several times the hash table the outer join with the same answer holds
//! (issue 39: a lookup of 2,000,000 rows needed four times that join's
//! memory pool).
//!
//! Where every operator above the join reads its input to the end, the join
//! reads its probe side to the end too, and a second match fails the query
//! before it completes, whenever the row was emitted. There the rule sets
//! [`SingleJoinOutput::Streamed`], and the join holds only the bitmap of
//! matched rows it checks.
//!
//! # When an operator reads its input to the end
//!
//! An operator stops reading its input early only to return a limited
//! number of rows, which it reports by [`ExecutionPlan::fetch`] (a `LIMIT`,
//! a sort or merge with a fetch, a join or filter a fetch was pushed into);
//! an aggregate pushed a limit (`DISTINCT ... LIMIT`) does not report it
//! there, and counts as one too. Such an operator holds every single join
//! below it back, and so does a single join with a fetch of its own.
//!
//! Other operators stop reading an input early only where they return none
//! of its remaining rows: a join whose other input is empty (PostgreSQL does
//! not evaluate a subquery for a row it never reaches either), and a merge
//! join whose other input is exhausted. A merge join reads an input in the
//! order of its keys; a single join claims no output order but that of its
//! probe side when the outer side is probed (`RightSingle`), where a second
//! match of a row comes out right after the first, with the same key, so the
//! merge reads it before it stops.
//!
//! The rule runs last among the default rules: a rule after it that added a
//! limit would leave a streamed join under it, and so would a rule a user
//! adds to the session's physical optimizer after the defaults. A plan that
//! does not pass through the optimizer holds back; the setting is
//! serialized with the join, so a plan Ballista's executors decode keeps it.

use std::sync::Arc;

use datafusion_common::Result;
use datafusion_common::config::ConfigOptions;
use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_physical_plan::ExecutionPlan;
use datafusion_physical_plan::aggregates::AggregateExec;
use datafusion_physical_plan::joins::{
    HashJoinExec, NestedLoopJoinExec, NestedLoopJoinExecBuilder, SingleJoinOutput,
    is_single_join,
};

use crate::PhysicalOptimizerRule;

/// Streams the matches of each single join whose output is read to the
/// end; see the [module docs](self).
#[derive(Debug, Default)]
pub struct StreamSingleJoinMatches;

impl StreamSingleJoinMatches {
    pub fn new() -> Self {
        Self
    }
}

impl PhysicalOptimizerRule for StreamSingleJoinMatches {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(place_output(plan, true)?.data)
    }

    fn name(&self) -> &str {
        "StreamSingleJoinMatches"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Sets the output of each single join in `plan`, whose output is
/// `read_to_end` by its consumer or not.
fn place_output(
    plan: Arc<dyn ExecutionPlan>,
    read_to_end: bool,
) -> Result<Transformed<Arc<dyn ExecutionPlan>>> {
    let input_read_to_end = read_to_end && !stops_reading_early(plan.as_ref());
    let plan = plan.map_children(|child| place_output(child, input_read_to_end))?;
    let output = if input_read_to_end {
        SingleJoinOutput::Streamed
    } else {
        SingleJoinOutput::Held
    };
    plan.transform_data(|plan| with_single_join_output(plan, output))
}

/// Whether `plan` may stop reading its inputs before their end.
fn stops_reading_early(plan: &dyn ExecutionPlan) -> bool {
    plan.fetch().is_some()
        || plan
            .downcast_ref::<AggregateExec>()
            .is_some_and(|aggregate| aggregate.limit_options().is_some())
}

/// `plan` with `output`, if it is a single join whose output differs.
fn with_single_join_output(
    plan: Arc<dyn ExecutionPlan>,
    output: SingleJoinOutput,
) -> Result<Transformed<Arc<dyn ExecutionPlan>>> {
    if let Some(join) = plan.downcast_ref::<HashJoinExec>()
        && is_single_join(*join.join_type())
        && join.single_join_output() != output
    {
        let join = join
            .builder()
            .with_single_join_output(output)
            .build_exec()?;
        return Ok(Transformed::yes(join));
    }
    if let Some(join) = plan.downcast_ref::<NestedLoopJoinExec>()
        && is_single_join(*join.join_type())
        && join.single_join_output() != output
    {
        let join = NestedLoopJoinExecBuilder::from(join)
            .with_single_join_output(output)
            .build()?;
        return Ok(Transformed::yes(Arc::new(join)));
    }
    Ok(Transformed::no(plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion_common::{JoinType, NullEquality};
    use datafusion_physical_expr::PhysicalExpr;
    use datafusion_physical_expr::expressions::Column;
    use datafusion_physical_plan::aggregates::{
        AggregateMode, LimitOptions, PhysicalGroupBy,
    };
    use datafusion_physical_plan::coalesce_partitions::CoalescePartitionsExec;
    use datafusion_physical_plan::displayable;
    use datafusion_physical_plan::empty::EmptyExec;
    use datafusion_physical_plan::joins::PartitionMode;
    use datafusion_physical_plan::limit::GlobalLimitExec;
    use datafusion_physical_plan::sorts::sort::SortExec;
    use insta::assert_snapshot;

    fn scan(columns: &[&str]) -> Arc<dyn ExecutionPlan> {
        let fields: Vec<_> = columns
            .iter()
            .map(|name| Field::new(*name, DataType::Int32, true))
            .collect();
        Arc::new(EmptyExec::new(Arc::new(Schema::new(fields))))
    }

    fn col(name: &str, plan: &Arc<dyn ExecutionPlan>) -> Arc<dyn PhysicalExpr> {
        let index = plan.schema().index_of(name).unwrap();
        Arc::new(Column::new(name, index))
    }

    /// `outer_t` (`k`, `id`) single-joined to `side` (`sk`, `v`) on `k = sk`.
    fn lookup(join_type: JoinType) -> HashJoinExec {
        let (outer, side) = (scan(&["k", "id"]), scan(&["sk", "v"]));
        let on = vec![(col("k", &outer), col("sk", &side))];
        HashJoinExec::try_new(
            outer,
            side,
            on,
            None,
            &join_type,
            None,
            PartitionMode::CollectLeft,
            NullEquality::NullEqualsNothing,
            false,
        )
        .unwrap()
    }

    fn nested_loop_lookup() -> Arc<dyn ExecutionPlan> {
        let (outer, side) = (scan(&["k", "id"]), scan(&["sk", "v"]));
        Arc::new(
            NestedLoopJoinExec::try_new(outer, side, None, &JoinType::LeftSingle, None)
                .unwrap(),
        )
    }

    fn limit(input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        Arc::new(GlobalLimitExec::new(input, 0, Some(10)))
    }

    fn optimized(plan: Arc<dyn ExecutionPlan>) -> String {
        let plan = StreamSingleJoinMatches::new()
            .optimize(plan, &ConfigOptions::default())
            .unwrap();
        displayable(plan.as_ref()).indent(true).to_string()
    }

    #[test]
    fn single_join_built_by_hand_holds_its_matches() {
        let plan = Arc::new(lookup(JoinType::LeftSingle));
        assert_eq!(plan.single_join_output(), SingleJoinOutput::Held);
        assert_snapshot!(displayable(plan.as_ref()).indent(true), @r"
        HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)], holds_matches
          EmptyExec
          EmptyExec
        ");
    }

    #[test]
    fn output_read_to_end_streams_matches() {
        let plan = Arc::new(lookup(JoinType::LeftSingle));
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)]
          EmptyExec
          EmptyExec
        ");
        let plan = Arc::new(lookup(JoinType::RightSingle));
        let plan = Arc::new(CoalescePartitionsExec::new(plan));
        assert_snapshot!(optimized(plan), @r"
        CoalescePartitionsExec
          HashJoinExec: mode=CollectLeft, join_type=RightSingle, on=[(k@0, sk@0)]
            EmptyExec
            EmptyExec
        ");
        assert_snapshot!(optimized(nested_loop_lookup()), @r"
        NestedLoopJoinExec: join_type=LeftSingle
          EmptyExec
          EmptyExec
        ");
    }

    #[test]
    fn limit_above_holds_matches() {
        // however far above the join
        let plan = Arc::new(lookup(JoinType::LeftSingle));
        let plan = Arc::new(CoalescePartitionsExec::new(plan));
        assert_snapshot!(optimized(limit(plan)), @r"
        GlobalLimitExec: skip=0, fetch=10
          CoalescePartitionsExec
            HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)], holds_matches
              EmptyExec
              EmptyExec
        ");
        assert_snapshot!(optimized(limit(nested_loop_lookup())), @r"
        GlobalLimitExec: skip=0, fetch=10
          NestedLoopJoinExec: join_type=LeftSingle, holds_matches
            EmptyExec
            EmptyExec
        ");
    }

    #[test]
    fn fetch_in_the_join_holds_matches() {
        let plan = lookup(JoinType::RightSingle)
            .builder()
            .with_fetch(Some(5))
            .build_exec()
            .unwrap();
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=RightSingle, on=[(k@0, sk@0)], fetch=5, holds_matches
          EmptyExec
          EmptyExec
        ");
    }

    #[test]
    fn sort_with_a_fetch_holds_matches() {
        let plan: Arc<dyn ExecutionPlan> = Arc::new(lookup(JoinType::LeftSingle));
        let ordering = [datafusion_physical_expr::PhysicalSortExpr::new_default(
            col("id", &plan),
        )]
        .into();
        let sort = SortExec::new(ordering, Arc::clone(&plan));
        assert_snapshot!(optimized(Arc::new(sort.clone())), @r"
        SortExec: expr=[id@1 ASC], preserve_partitioning=[false]
          HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)]
            EmptyExec
            EmptyExec
        ");
        assert_snapshot!(optimized(Arc::new(sort.with_fetch(Some(1)))), @r"
        SortExec: TopK(fetch=1), expr=[id@1 ASC], preserve_partitioning=[false]
          HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)], holds_matches
            EmptyExec
            EmptyExec
        ");
    }

    #[test]
    fn aggregate_with_a_limit_holds_matches() {
        let plan: Arc<dyn ExecutionPlan> = Arc::new(lookup(JoinType::LeftSingle));
        let group_by = PhysicalGroupBy::new_single(vec![(col("v", &plan), "v".into())]);
        let schema = plan.schema();
        let distinct = AggregateExec::try_new(
            AggregateMode::Single,
            group_by,
            vec![],
            vec![],
            plan,
            schema,
        )
        .unwrap();
        let limited = distinct.with_new_limit_options(Some(LimitOptions::new(3)));
        assert_snapshot!(optimized(Arc::new(distinct)), @r"
        AggregateExec: mode=Single, gby=[v@3 as v], aggr=[]
          HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)]
            EmptyExec
            EmptyExec
        ");
        assert_snapshot!(optimized(Arc::new(limited)), @r"
        AggregateExec: mode=Single, gby=[v@3 as v], aggr=[], lim=[3]
          HashJoinExec: mode=CollectLeft, join_type=LeftSingle, on=[(k@0, sk@0)], holds_matches
            EmptyExec
            EmptyExec
        ");
    }

    #[test]
    fn a_limit_removed_streams_again() {
        let held = StreamSingleJoinMatches::new()
            .optimize(limit(nested_loop_lookup()), &ConfigOptions::default())
            .unwrap();
        let join = Arc::clone(held.children()[0]);
        assert_snapshot!(optimized(join), @r"
        NestedLoopJoinExec: join_type=LeftSingle
          EmptyExec
          EmptyExec
        ");
    }
}
