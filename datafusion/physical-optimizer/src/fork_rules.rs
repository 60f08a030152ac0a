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

//! The fork's physical optimizer rules, and where each runs among
//! upstream's.
//!
//! [`PhysicalOptimizer::new`](crate::optimizer::PhysicalOptimizer::new)
//! builds upstream's list of rules and passes it through
//! [`with_fork_rules`], which places each rule of ours by the upstream rule
//! it must follow, so that upstream's list stays as upstream wrote it. The
//! `rule_order` test shows the whole list.

use std::sync::Arc;

use crate::PhysicalOptimizerRule;
use crate::combine_partial_final_agg::CombinePartialFinalAggregate;
use crate::deduplicate_existence_side::DeduplicateExistenceSide;
use crate::filter_pushdown::FilterPushdown;
use crate::join_dynamic_filter_below_aggregates::JoinDynamicFilterBelowAggregates;
use crate::stream_single_join_matches::StreamSingleJoinMatches;

type Rule = Arc<dyn PhysicalOptimizerRule + Send + Sync>;

/// `upstream`'s rules with the fork's rules in their places.
///
/// The place names a rule of the pinned upstream version (the `rule_order`
/// test shows it); a version that renamed it would fail that test, and
/// here would panic when the optimizer is built, before any query runs.
pub(crate) fn with_fork_rules(upstream: Vec<Rule>) -> Vec<Rule> {
    let mut rules = upstream;
    // It adds a partial aggregate below a join: so it runs once the join's
    // sides, mode and input partitioning are settled, and after partial and
    // final aggregates were paired, so that no rule takes its aggregate for
    // the first phase of another
    let combine = CombinePartialFinalAggregate::new();
    let index = after(&rules, combine.name());
    rules.insert(index, Arc::new(DeduplicateExistenceSide::new()));
    // It evaluates the join dynamic filters that filter pushdown could not
    // place below aggregates grouped by the join keys: so it runs after the
    // last filter pushdown, which places the dynamic filters, and which no
    // rule after it may move (see `FilterPushdownPhase`)
    let last_filter_pushdown = FilterPushdown::new_post_optimization();
    let index = after(&rules, last_filter_pushdown.name());
    rules.insert(index, Arc::new(JoinDynamicFilterBelowAggregates::new()));
    // It decides, for each single join, whether anything above it may stop
    // reading early: so it runs last, when no rule can add a limit above
    rules.push(Arc::new(StreamSingleJoinMatches::new()));
    rules
}

/// The index right after the rule named `name`.
fn after(rules: &[Rule], name: &str) -> usize {
    rules
        .iter()
        .position(|rule| rule.name() == name)
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("no physical optimizer rule named {name}"))
}

#[cfg(test)]
mod tests {
    use crate::optimizer::PhysicalOptimizer;

    /// The whole list, upstream's and ours (marked), in the order they run.
    #[test]
    fn rule_order() {
        let names: Vec<String> = PhysicalOptimizer::new()
            .rules
            .iter()
            .map(|rule| match rule.name() {
                name @ ("DeduplicateExistenceSide"
                | "JoinDynamicFilterBelowAggregates"
                | "StreamSingleJoinMatches") => format!("{name} (fork)"),
                name => name.to_string(),
            })
            .collect();
        insta::assert_snapshot!(names.join("\n"), @r"
        OutputRequirements
        aggregate_statistics
        join_selection
        LimitedDistinctAggregation
        FilterPushdown
        WindowTopN
        EnsureRequirements
        CombinePartialFinalAggregate
        DeduplicateExistenceSide (fork)
        OptimizeAggregateOrder
        ProjectionPushdown
        OutputRequirements
        LimitAggregation
        LimitPushPastWindows
        HashJoinBuffering
        LimitPushdown
        TopKRepartition
        ProjectionPushdown
        PushdownSort
        EnsureCooperative
        FilterPushdown(Post)
        JoinDynamicFilterBelowAggregates (fork)
        SanityCheckPlan
        StreamSingleJoinMatches (fork)
        ");
    }
}
