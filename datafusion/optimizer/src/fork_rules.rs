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

//! The fork's logical optimizer rules, and where each runs among
//! upstream's.
//!
//! [`Optimizer::new`](crate::Optimizer::new) builds upstream's list of rules
//! and passes it through [`with_fork_rules`], which places each rule of ours
//! next to the upstream rule it must run before or after. Each placement
//! below says why it sits there. The places are named by upstream's rule
//! names (`OptimizerRule::name`), so that upstream's list stays as upstream
//! wrote it; the `rule_order` test shows the whole list.

use std::sync::Arc;

use crate::OptimizerRule;
use crate::decorrelate_subqueries::DecorrelateSubqueries;
use crate::narrow_single_join::NarrowSingleJoin;
use crate::ordered_string_agg::OrderedStringAggAsArrayAgg;
use crate::restrict_aggregate_to_join_keys::RestrictAggregateToJoinKeys;
use crate::subquery_to_window::SubqueryToWindow;
use crate::update_old_values::UpdateOldValues;

type Rule = Arc<dyn OptimizerRule + Send + Sync>;

/// Where a rule of ours runs in each optimizer pass.
enum Place {
    /// Before every other rule.
    First,
    /// Right before the rule of this name.
    Before(&'static str),
    /// Right after the rule of this name.
    After(&'static str),
}

/// The fork's rules, in the order they are placed (a rule may be placed
/// next to one placed before it).
fn placements() -> Vec<(Place, Rule)> {
    vec![
        // It appends the old value of every column to an UPDATE's
        // projection, for the physical planner's UPDATE by value: before
        // any rule moves or prunes those columns
        (Place::First, Arc::new(UpdateOldValues::new())),
        // It turns a correlated aggregate over the outer query's own table
        // into a window, so it must see the subquery before upstream's
        // rules join it back
        (
            Place::Before("decorrelate_predicate_subquery"),
            Arc::new(SubqueryToWindow::new()),
        ),
        // Upstream's three decorrelation rules keep the plans they make;
        // this one takes every correlated subquery they leave (the
        // hand-off in `correlation::handoff`)
        (
            Place::After("decorrelate_lateral_join"),
            Arc::new(DecorrelateSubqueries::new()),
        ),
        // It shrinks a single join's lookup side by the filters above the
        // join, so it runs once they are pushed down to it
        (
            Place::After("push_down_filter"),
            Arc::new(NarrowSingleJoin::new()),
        ),
        // It decides by the filters on a join's keys, pushed down and
        // narrowed by the two rules before it
        (
            Place::After("narrow_single_join"),
            Arc::new(RestrictAggregateToJoinKeys::new()),
        ),
        // It rewrites an aggregation's aggregates once the rules that
        // rewrite aggregations into others (distinct ones, constant keys)
        // have made theirs
        (
            Place::After("eliminate_group_by_constant"),
            Arc::new(OrderedStringAggAsArrayAgg::new()),
        ),
    ]
}

/// `upstream`'s rules with the fork's rules in their places.
///
/// Every place names a rule of the pinned upstream version (the
/// `rule_order` test shows them); a version that renamed one would fail
/// that test, and here would panic when the optimizer is built, before any
/// query runs.
pub(crate) fn with_fork_rules(upstream: Vec<Rule>) -> Vec<Rule> {
    let mut rules = upstream;
    for (place, rule) in placements() {
        let index = match place {
            Place::First => 0,
            Place::Before(name) => position(&rules, name),
            Place::After(name) => position(&rules, name) + 1,
        };
        rules.insert(index, rule);
    }
    rules
}

fn position(rules: &[Rule], name: &str) -> usize {
    rules
        .iter()
        .position(|rule| rule.name() == name)
        .unwrap_or_else(|| panic!("no optimizer rule named {name} to place a rule by"))
}

#[cfg(test)]
mod tests {
    use crate::Optimizer;

    /// The whole list, upstream's and ours (marked), in the order a pass
    /// runs them.
    #[test]
    fn rule_order() {
        let ours = [
            "update_old_values",
            "subquery_to_window",
            "decorrelate_subqueries",
            "narrow_single_join",
            "restrict_aggregate_to_join_keys",
            "ordered_string_agg_as_array_agg",
        ];
        let names: Vec<String> = Optimizer::new()
            .rules
            .iter()
            .map(|rule| {
                let name = rule.name();
                if ours.contains(&name) {
                    format!("{name} (fork)")
                } else {
                    name.to_string()
                }
            })
            .collect();
        insta::assert_snapshot!(names.join("\n"), @r"
        update_old_values (fork)
        rewrite_set_comparison
        optimize_unions
        unions_to_filter
        simplify_expressions
        replace_distinct_aggregate
        eliminate_join
        subquery_to_window (fork)
        decorrelate_predicate_subquery
        scalar_subquery_to_join
        decorrelate_lateral_join
        decorrelate_subqueries (fork)
        extract_equijoin_predicate
        eliminate_duplicated_expr
        eliminate_filter
        eliminate_cross_join
        eliminate_limit
        propagate_empty_relation
        filter_null_join_keys
        eliminate_outer_join
        push_down_limit
        push_down_filter
        narrow_single_join (fork)
        restrict_aggregate_to_join_keys (fork)
        single_distinct_aggregation_to_group_by
        eliminate_group_by_constant
        ordered_string_agg_as_array_agg (fork)
        common_sub_expression_eliminate
        extract_leaf_expressions
        push_down_leaf_projections
        optimize_projections
        ");
    }
}
