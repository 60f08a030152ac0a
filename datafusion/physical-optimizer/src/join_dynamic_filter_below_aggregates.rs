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

//! [`JoinDynamicFilterBelowAggregates`] evaluates a hash join's dynamic
//! filter on the input of an aggregate on the join's probe side, grouped by
//! the join keys, so that only the groups the join can match are computed.
//! It runs where `datafusion.optimizer.join_dynamic_filter_below_aggregates`
//! is set (on by default).
//!
//! A correlated subquery that aggregates per key, such as TPC-H q20's
//! quantity shipped per part and supplier, decorrelates to a join against an
//! aggregate of the whole inner table:
//!
//! ```text
//! HashJoinExec: mode=Partitioned, join_type=LeftSemi, on=[(ps_partkey, l_partkey), (ps_suppkey, l_suppkey)]
//!   (the few partsupp rows the query keeps)
//!   AggregateExec: mode=FinalPartitioned, gby=[l_partkey, l_suppkey], aggr=[sum(l_quantity)]
//!     RepartitionExec: partitioning=Hash([l_partkey, l_suppkey], 2)
//!       AggregateExec: mode=Partial, gby=[l_partkey, l_suppkey], aggr=[sum(l_quantity)]
//!         FilterExec: l_shipdate >= 1994-01-01 AND l_shipdate < 1995-01-01
//!           DataSourceExec: (lineitem)
//! ```
//!
//! The join's dynamic filter (`enable_join_dynamic_filter_pushdown`) holds
//! the build side's keys once the build side is read, and filter pushdown
//! carries it down through the aggregate to the scan. But only a scan that
//! accepts filters keeps it (parquet does; an in-memory table does not), and
//! no `FilterExec` takes it in after the plan is optimized. So the filter is
//! dropped, the join never fills it, and every group of the table is
//! computed, to be thrown away by the join. This rule places the filter in
//! the `FilterExec` below the first aggregate on the way down that reads
//! rows rather than partial states (or in a new one there), where nothing
//! below that aggregate holds the filter already. (A parquet scan holds it
//! also where it only prunes row groups by it, as with `pushdown_filters`
//! off, the default: the rule then leaves the plan as it is, and the
//! aggregate reads the rows of each row group the scan keeps.)
//!
//! ```text
//!       AggregateExec: mode=Partial, gby=[l_partkey, l_suppkey], aggr=[sum(l_quantity)]
//!         FilterExec: l_shipdate >= ... AND DynamicFilter [ l_partkey, l_suppkey IN (build keys) ]
//! ```
//!
//! It is the magic set that `restrict_aggregate_to_join_keys` plans (see
//! `datafusion/optimizer/src/restrict_aggregate_to_join_keys.rs`), decided
//! at run time: the build side is read once, not twice, and where it holds
//! every key the filter costs one lookup per input row and drops nothing.
//! Ballista's sessions set `enable_dynamic_filter_pushdown` off, which sets
//! the join's option off too, so the rule does nothing there.
//!
//! # When the rows stay the same
//!
//! Let `J` be a hash join with probe-side keys `p`, and `A` an aggregate
//! with `GROUP BY` keys `g` over input `I`, reached from `J`'s probe input
//! through nodes that pass every row on unchanged (repartitions, merges of
//! partitions without a limit, and projections in which each key is a
//! column), so that each `p_i` is the column of a key `g_i` that is itself
//! a column of `I`, of the same type and nullability.
//!
//! 1. `J` has a dynamic filter only where upstream's hash join allows one
//!    (`allow_join_dynamic_filter_pushdown`): the probe side is not
//!    preserved, so a probe row whose keys no build row matches under the
//!    join's null equality adds nothing to the output; the filter keeps
//!    such rows where NULLs may match, and a null-aware anti join with a
//!    nullable build key gets no filter. Dropping the unmatched probe rows
//!    early is what upstream already does at a parquet scan.
//! 2. The filter's value on a row depends on the row's key values alone (in
//!    a partitioned join it routes a row to its partition's keys by the hash
//!    or the range of those values, as the partitioning before the join
//!    does, not by the partition it runs in; its hash lookup may keep a row whose keys no
//!    build row has, never drop one that some build row matches). So on `I`
//!    it keeps or drops each row by its values of `g`: it keeps or drops
//!    whole groups. A kept group has the same rows, and the same aggregate
//!    values, as before; a dropped group's output row has keys `J` matches
//!    with nothing, by 1.
//! 3. That needs every output row of `A` to be one whole group of `I`. An
//!    aggregate with grouping sets (`ROLLUP`, `CUBE`) also outputs rows that
//!    span several key values, and one with a limit (as `LIMIT` pushed into
//!    `DISTINCT` or a top-k aggregation) outputs only some groups, chosen
//!    from all of them: both are left alone.
//! 4. Between a final and a partial aggregate the rows are partial states,
//!    one or more per group, keyed by the same columns; the filter goes
//!    below the partial aggregate, the one that reads rows of `I`.
//! 5. Rule 2 needs the filter to take as equal the key values that the
//!    aggregate and the join take as equal. Floating point keys are where
//!    that has failed: `0.0` and `-0.0` are one group and match each other
//!    in the join, but an `IN` list finds values by their bits, so a list
//!    of the build keys dropped the `-0.0` rows of the group that `0.0`
//!    keeps, changing that group's aggregate values. The join no longer
//!    lists such keys (see `datafusion_physical_plan::joins::key_value_sets`),
//!    and this rule still takes only keys whose equal values have equal
//!    bits (booleans, integers, decimals, strings, binaries, dates, times,
//!    timestamps and durations, and dictionaries of them), of the same
//!    type on both sides of the join, so that its rows do not rest on how
//!    the join chooses to describe its keys.
//!
//! The filter is `true` until the join has read its whole build side (in
//! every partition; in a partitioned join, a partition that stops early
//! leaves its own branch `true`), then holds the build side's keys, and
//! never changes again. Rows read before
//! then pass unfiltered, so a query gets the same rows whether the filter
//! is filled or not: it only saves work.
//!
//! A filter above the aggregate, such as `HAVING`, stops the walk, though
//! it keeps or drops whole groups too. Through it, TPC-H q18's `IN (SELECT
//! l_orderkey ... HAVING sum(l_quantity) > 300)` would look up each of
//! `lineitem`'s rows among the keys of every order, and drop none: where
//! the filter drops nothing it costs a lookup per row, and passing `HAVING`
//! wants that cost measured first.

use std::sync::Arc;

use datafusion_common::Result;
use datafusion_common::config::ConfigOptions;
use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_physical_expr::expressions::Column;
use datafusion_physical_expr::{PhysicalExpr, conjunction};
use datafusion_physical_plan::aggregates::{AggregateExec, AggregateInputMode};
use datafusion_physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion_physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion_physical_plan::joins::HashJoinExec;
use datafusion_physical_plan::joins::key_value_sets::equal_keys_have_equal_bits;
use datafusion_physical_plan::projection::ProjectionExec;
use datafusion_physical_plan::repartition::RepartitionExec;
use datafusion_physical_plan::{
    ChildrenPropertiesMode, ExecutionPlan, ReplaceChildrenOptions,
};

use crate::PhysicalOptimizerRule;

/// Evaluates a hash join's dynamic filter below an aggregate on the join's
/// probe side that is grouped by the join keys. See the [module
/// documentation](self) for why and when.
#[derive(Debug, Default)]
pub struct JoinDynamicFilterBelowAggregates {}

impl JoinDynamicFilterBelowAggregates {
    pub fn new() -> Self {
        Self::default()
    }
}

impl PhysicalOptimizerRule for JoinDynamicFilterBelowAggregates {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let options = &config.optimizer;
        if !options.join_dynamic_filter_below_aggregates
            || !options.enable_join_dynamic_filter_pushdown
        {
            return Ok(plan);
        }
        let batch_size = config.execution.batch_size.into();
        plan.transform_up(|plan| {
            let Some(join) = plan.downcast_ref::<HashJoinExec>() else {
                return Ok(Transformed::no(plan));
            };
            // A hash join produces one dynamic filter, over its probe keys
            let Some(filter) = join.dynamic_expressions_produced().pop() else {
                return Ok(Transformed::no(plan));
            };
            let Some(keys) = column_indices(filter.children()) else {
                return Ok(Transformed::no(plan));
            };
            // Rule 5: the build side's keys fill the filter
            let (build_schema, probe_schema) =
                (join.left().schema(), join.right().schema());
            let key_types_alike = join.on().iter().zip(&keys).all(|((build, _), &k)| {
                let probe_type = probe_schema.field(k).data_type();
                build.data_type(&build_schema).ok().as_ref() == Some(probe_type)
                    && equal_keys_have_equal_bits(probe_type)
            });
            if !key_types_alike {
                return Ok(Transformed::no(plan));
            }
            let placement = FilterPlacement { filter, batch_size };
            match placement.below_aggregate(join.right(), &keys)? {
                Some(probe) => {
                    let children = vec![Arc::clone(join.left()), probe];
                    Ok(Transformed::yes(with_children(plan, children)?))
                }
                None => Ok(Transformed::no(plan)),
            }
        })
        .data()
    }

    fn name(&self) -> &str {
        "JoinDynamicFilterBelowAggregates"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// One join's dynamic filter, on its way down the join's probe side.
struct FilterPlacement {
    filter: Arc<dyn PhysicalExpr>,
    batch_size: usize,
}

impl FilterPlacement {
    /// `plan` with the filter below the aggregate that groups `plan`'s
    /// output columns `keys`, or `None` where no such aggregate is reached
    /// through nodes that pass rows on unchanged (rules 3 and 4 of the module
    /// documentation), or where a node below it holds the filter already.
    fn below_aggregate(
        &self,
        plan: &Arc<dyn ExecutionPlan>,
        keys: &[usize],
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let (input, input_keys) = if let Some(aggregate) =
            plan.downcast_ref::<AggregateExec>()
        {
            let group_by = aggregate.group_expr();
            if group_by.has_grouping_set() || aggregate.limit_options().is_some() {
                return Ok(None);
            }
            let group_exprs: Vec<_> = group_by.expr().iter().map(|(e, _)| e).collect();
            let Some(input_keys) = columns_of(keys, &group_exprs) else {
                return Ok(None);
            };
            if aggregate.mode().input_mode() == AggregateInputMode::Raw {
                // Where a scan below takes the filter, or the rule ran before
                if self.is_in_plan(aggregate.input())? {
                    return Ok(None);
                }
                let filtered = self.filter_rows(aggregate.input(), &input_keys)?;
                return Ok(Some(with_children(Arc::clone(plan), vec![filtered])?));
            }
            (Arc::clone(aggregate.input()), input_keys)
        } else if let Some(projection) = plan.downcast_ref::<ProjectionExec>() {
            let exprs: Vec<_> = projection.expr().iter().map(|p| &p.expr).collect();
            let Some(input_keys) = columns_of(keys, &exprs) else {
                return Ok(None);
            };
            (Arc::clone(projection.input()), input_keys)
        } else if passes_rows_unchanged(plan) {
            (Arc::clone(plan.children()[0]), keys.to_vec())
        } else {
            return Ok(None);
        };
        let Some(input) = self.below_aggregate(&input, &input_keys)? else {
            return Ok(None);
        };
        Ok(Some(with_children(Arc::clone(plan), vec![input])?))
    }

    /// `input` with only the rows whose columns `keys` pass the filter:
    /// the filter joins the predicate of a `FilterExec` that `input` is, or
    /// a new `FilterExec` above `input`.
    fn filter_rows(
        &self,
        input: &Arc<dyn ExecutionPlan>,
        keys: &[usize],
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let Some(existing) = input.downcast_ref::<FilterExec>()
            && existing.fetch().is_none()
        {
            let input_keys = keys_below_filter(existing, keys);
            let key_filter = self.on_columns(existing.input(), &input_keys)?;
            let predicate = conjunction([Arc::clone(existing.predicate()), key_filter]);
            let filtered = FilterExecBuilder::from(existing)
                .with_predicate(predicate)
                .build()?;
            return Ok(Arc::new(filtered));
        }
        let filtered =
            FilterExecBuilder::new(self.on_columns(input, keys)?, Arc::clone(input))
                .with_batch_size(self.batch_size)
                .build()?;
        Ok(Arc::new(filtered))
    }

    /// The filter over the columns `keys` of `plan`'s output. It shares its
    /// state with the join's, so the join fills in this copy too.
    fn on_columns(
        &self,
        plan: &Arc<dyn ExecutionPlan>,
        keys: &[usize],
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let schema = plan.schema();
        let columns = keys
            .iter()
            .map(|&i| Arc::new(Column::new(schema.field(i).name(), i)) as _)
            .collect();
        Arc::clone(&self.filter).with_new_children(columns)
    }

    /// Whether a node of `plan` holds this filter (as any copy of it).
    fn is_in_plan(&self, plan: &Arc<dyn ExecutionPlan>) -> Result<bool> {
        let Some(id) = self.filter.expression_id() else {
            return Ok(false);
        };
        let mut found = false;
        plan.apply(|node| {
            node.apply_expressions(&mut |root| {
                root.apply(|expr| {
                    found = expr.expression_id() == Some(id);
                    Ok(stop_if(found))
                })
            })?;
            Ok(stop_if(found))
        })?;
        Ok(found)
    }
}

/// `plan` over new `children`, its properties computed again.
fn with_children(
    plan: Arc<dyn ExecutionPlan>,
    children: Vec<Arc<dyn ExecutionPlan>>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let options = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);
    plan.replace_children(children, options)
}

fn stop_if(found: bool) -> TreeNodeRecursion {
    if found {
        TreeNodeRecursion::Stop
    } else {
        TreeNodeRecursion::Continue
    }
}

/// The input columns of a filter's output columns `keys`, through its
/// projection.
fn keys_below_filter(filter: &FilterExec, keys: &[usize]) -> Vec<usize> {
    match filter.projection() {
        Some(projection) => keys.iter().map(|k| projection[*k]).collect(),
        None => keys.to_vec(),
    }
}

/// Nodes with one input whose rows, all of them, they output unchanged and
/// in the same columns.
fn passes_rows_unchanged(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.is::<RepartitionExec>()
        || (plan.is::<CoalescePartitionsExec>() && plan.fetch().is_none())
}

/// The column indices of `exprs`, or `None` unless each is a column.
fn column_indices(exprs: Vec<&Arc<dyn PhysicalExpr>>) -> Option<Vec<usize>> {
    exprs
        .into_iter()
        .map(|expr| expr.downcast_ref::<Column>().map(Column::index))
        .collect()
}

/// For each output column in `keys` of a node that computes its output
/// columns as `exprs`, the input column it is, or `None` unless each is a
/// column.
fn columns_of(keys: &[usize], exprs: &[&Arc<dyn PhysicalExpr>]) -> Option<Vec<usize>> {
    let key_exprs = keys
        .iter()
        .map(|&k| exprs.get(k).copied())
        .collect::<Option<Vec<_>>>()?;
    column_indices(key_exprs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter_pushdown::FilterPushdown;
    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion_common::{JoinType, NullEquality, ScalarValue};
    use datafusion_expr::Operator;
    use datafusion_physical_expr::expressions::{BinaryExpr, lit};
    use datafusion_physical_plan::Partitioning;
    use datafusion_physical_plan::aggregates::{
        AggregateMode, LimitOptions, PhysicalGroupBy,
    };
    use datafusion_physical_plan::displayable;
    use datafusion_physical_plan::empty::EmptyExec;
    use datafusion_physical_plan::joins::PartitionMode;
    use insta::assert_snapshot;

    fn scan(columns: &[&str]) -> Arc<dyn ExecutionPlan> {
        let fields: Vec<_> = columns
            .iter()
            .map(|name| Field::new(*name, DataType::Int32, true))
            .collect();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        Arc::new(EmptyExec::new(schema))
    }

    fn col(name: &str, plan: &Arc<dyn ExecutionPlan>) -> Arc<dyn PhysicalExpr> {
        let index = plan.schema().index_of(name).unwrap();
        Arc::new(Column::new(name, index))
    }

    fn group_by(keys: &[&str], input: &Arc<dyn ExecutionPlan>) -> PhysicalGroupBy {
        PhysicalGroupBy::new_single(
            keys.iter()
                .map(|key| (col(key, input), key.to_string()))
                .collect(),
        )
    }

    /// `SELECT keys FROM input GROUP BY keys`, in `mode` alone.
    fn aggregate(
        mode: AggregateMode,
        group_by: PhysicalGroupBy,
        input: Arc<dyn ExecutionPlan>,
    ) -> Arc<dyn ExecutionPlan> {
        let schema = input.schema();
        Arc::new(
            AggregateExec::try_new(mode, group_by, vec![], vec![], input, schema)
                .unwrap(),
        )
    }

    /// `SELECT keys FROM input GROUP BY keys`, a partial and a final step.
    fn two_step_aggregate(
        keys: &[&str],
        input: Arc<dyn ExecutionPlan>,
    ) -> Arc<dyn ExecutionPlan> {
        let partial = aggregate(AggregateMode::Partial, group_by(keys, &input), input);
        aggregate(AggregateMode::Final, group_by(keys, &partial), partial)
    }

    fn hash_join(
        build: Arc<dyn ExecutionPlan>,
        probe: Arc<dyn ExecutionPlan>,
        on: &[(&str, &str)],
        join_type: JoinType,
    ) -> Arc<dyn ExecutionPlan> {
        let on = on
            .iter()
            .map(|(b, p)| (col(b, &build), col(p, &probe)))
            .collect();
        Arc::new(
            HashJoinExec::try_new(
                build,
                probe,
                on,
                None,
                &join_type,
                None,
                PartitionMode::CollectLeft,
                NullEquality::NullEqualsNothing,
                false,
            )
            .unwrap(),
        )
    }

    /// The same join, both inputs hash partitioned on the keys.
    fn partitioned_hash_join(
        build: Arc<dyn ExecutionPlan>,
        probe: Arc<dyn ExecutionPlan>,
        on: &[(&str, &str)],
    ) -> Arc<dyn ExecutionPlan> {
        let hashed = |input: Arc<dyn ExecutionPlan>, keys: Vec<&str>| {
            let exprs = keys.iter().map(|key| col(key, &input)).collect();
            let partitioning = Partitioning::Hash(exprs, 2);
            Arc::new(RepartitionExec::try_new(input, partitioning).unwrap())
                as Arc<dyn ExecutionPlan>
        };
        let build = hashed(build, on.iter().map(|(b, _)| *b).collect());
        let probe = hashed(probe, on.iter().map(|(_, p)| *p).collect());
        let on = on
            .iter()
            .map(|(b, p)| (col(b, &build), col(p, &probe)))
            .collect();
        Arc::new(
            HashJoinExec::try_new(
                build,
                probe,
                on,
                None,
                &JoinType::Inner,
                None,
                PartitionMode::Partitioned,
                NullEquality::NullEqualsNothing,
                false,
            )
            .unwrap(),
        )
    }

    /// `input` filtered by `column > 0` (a `HAVING`, above an aggregate).
    fn positive(column: &str, input: Arc<dyn ExecutionPlan>) -> FilterExecBuilder {
        let predicate =
            Arc::new(BinaryExpr::new(col(column, &input), Operator::Gt, lit(0)));
        FilterExecBuilder::new(predicate, input)
    }

    /// The plan after filter pushdown gives the joins their dynamic filters
    /// and the rule places them.
    fn optimized_plan(
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Arc<dyn ExecutionPlan> {
        let plan = FilterPushdown::new_post_optimization()
            .optimize(plan, config)
            .unwrap();
        JoinDynamicFilterBelowAggregates::new()
            .optimize(plan, config)
            .unwrap()
    }

    fn optimized_with(plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> String {
        let plan = optimized_plan(plan, config);
        displayable(plan.as_ref()).indent(true).to_string()
    }

    fn optimized(plan: Arc<dyn ExecutionPlan>) -> String {
        optimized_with(plan, &ConfigOptions::default())
    }

    /// The columns a dynamic filter in a `FilterExec` of the optimized
    /// `plan` reads, which its display does not show until it is filled.
    fn filtered_columns(plan: Arc<dyn ExecutionPlan>) -> Vec<String> {
        let plan = optimized_plan(plan, &ConfigOptions::default());
        let mut columns = vec![];
        plan.apply(|node| {
            if let Some(filter) = node.downcast_ref::<FilterExec>() {
                filter.predicate().apply(|expr| {
                    if expr.expression_id().is_some() {
                        columns.extend(expr.children().iter().map(|c| c.to_string()));
                    }
                    Ok(TreeNodeRecursion::Continue)
                })?;
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .unwrap();
        columns
    }

    #[test]
    fn filter_goes_below_partial_aggregate() {
        let probe = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let plan = hash_join(scan(&["a", "b"]), probe, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(Arc::clone(&plan)), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Final, gby=[k@0 as k], aggr=[]
            AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
              FilterExec: DynamicFilter [ empty ]
                EmptyExec
        ");
        assert_eq!(filtered_columns(plan), ["k@0"]);
    }

    #[test]
    fn filter_joins_existing_filter_and_its_projection() {
        let input = scan(&["v", "k", "w"]);
        let predicate = Arc::new(BinaryExpr::new(col("w", &input), Operator::Gt, lit(0)));
        let filter = FilterExecBuilder::new(predicate, input)
            .apply_projection(Some(vec![1, 0]))
            .unwrap()
            .build()
            .unwrap();
        let probe = two_step_aggregate(&["k", "v"], Arc::new(filter));
        let plan = hash_join(
            scan(&["a", "b"]),
            probe,
            &[("b", "v"), ("a", "k")],
            JoinType::LeftSemi,
        );
        assert_snapshot!(optimized(Arc::clone(&plan)), @r"
        HashJoinExec: mode=CollectLeft, join_type=LeftSemi, on=[(b@1, v@1), (a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Final, gby=[k@0 as k, v@1 as v], aggr=[]
            AggregateExec: mode=Partial, gby=[k@0 as k, v@1 as v], aggr=[]
              FilterExec: w@2 > 0 AND DynamicFilter [ empty ], projection=[k@1, v@0]
                EmptyExec
        ");
        // The keys (v, k) in the join's order, below the filter's projection
        assert_eq!(filtered_columns(plan), ["v@0", "k@1"]);
    }

    #[test]
    fn filter_follows_key_through_projection() {
        let aggregated = two_step_aggregate(&["k", "v"], scan(&["k", "v"]));
        let projection = ProjectionExec::try_new(
            vec![
                (col("v", &aggregated), "v2".to_string()),
                (col("k", &aggregated), "k2".to_string()),
            ],
            aggregated,
        )
        .unwrap();
        let plan = hash_join(
            scan(&["a"]),
            Arc::new(projection),
            &[("a", "k2")],
            JoinType::Inner,
        );
        assert_snapshot!(optimized(Arc::clone(&plan)), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k2@1)]
          EmptyExec
          ProjectionExec: expr=[v@1 as v2, k@0 as k2]
            AggregateExec: mode=Final, gby=[k@0 as k, v@1 as v], aggr=[]
              AggregateExec: mode=Partial, gby=[k@0 as k, v@1 as v], aggr=[]
                FilterExec: DynamicFilter [ empty ]
                  EmptyExec
        ");
        assert_eq!(filtered_columns(plan), ["k@0"]);
    }

    #[test]
    fn filter_goes_below_partitioned_aggregate_of_partitioned_join() {
        let input = scan(&["k", "v"]);
        let partial = aggregate(AggregateMode::Partial, group_by(&["k"], &input), input);
        let repartitioned = Arc::new(
            RepartitionExec::try_new(
                Arc::clone(&partial),
                Partitioning::Hash(vec![col("k", &partial)], 2),
            )
            .unwrap(),
        );
        let probe = aggregate(
            AggregateMode::FinalPartitioned,
            group_by(&["k"], &(Arc::clone(&repartitioned) as _)),
            repartitioned,
        );
        let plan = partitioned_hash_join(scan(&["a"]), probe, &[("a", "k")]);
        assert_snapshot!(optimized(Arc::clone(&plan)), @r"
        HashJoinExec: mode=Partitioned, join_type=Inner, on=[(a@0, k@0)]
          RepartitionExec: partitioning=Hash([a@0], 2), input_partitions=1
            EmptyExec
          RepartitionExec: partitioning=Hash([k@0], 2), input_partitions=2
            AggregateExec: mode=FinalPartitioned, gby=[k@0 as k], aggr=[]
              RepartitionExec: partitioning=Hash([k@0], 2), input_partitions=1
                AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
                  FilterExec: DynamicFilter [ empty ]
                    EmptyExec
        ");
        assert_eq!(filtered_columns(plan), ["k@0"]);
    }

    #[test]
    fn filter_stays_clear_of_a_limit_below_the_aggregate() {
        // A filter with a limit below the aggregate: the filter goes above
        // it, not into it
        let input = scan(&["k", "v"]);
        let limited = Arc::new(positive("v", input).with_fetch(Some(5)).build().unwrap());
        let probe = two_step_aggregate(&["k", "v"], limited);
        let plan = hash_join(scan(&["a"]), probe, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(Arc::clone(&plan)), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Final, gby=[k@0 as k, v@1 as v], aggr=[]
            AggregateExec: mode=Partial, gby=[k@0 as k, v@1 as v], aggr=[]
              FilterExec: DynamicFilter [ empty ]
                FilterExec: v@1 > 0, fetch=5
                  EmptyExec
        ");
        assert_eq!(filtered_columns(plan), ["k@0"]);
    }

    #[test]
    fn having_is_left_alone() {
        let aggregated = two_step_aggregate(&["k", "v"], scan(&["k", "v"]));
        let having = Arc::new(positive("v", aggregated).build().unwrap());
        let plan = hash_join(scan(&["a"]), having, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          FilterExec: v@1 > 0
            AggregateExec: mode=Final, gby=[k@0 as k, v@1 as v], aggr=[]
              AggregateExec: mode=Partial, gby=[k@0 as k, v@1 as v], aggr=[]
                EmptyExec
        ");
    }

    #[test]
    fn merge_with_a_limit_is_left_alone() {
        let aggregated = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let merged =
            Arc::new(CoalescePartitionsExec::new(aggregated).with_fetch(Some(3)));
        let plan = hash_join(scan(&["a"]), merged, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          CoalescePartitionsExec: fetch=3
            AggregateExec: mode=Final, gby=[k@0 as k], aggr=[]
              AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
                EmptyExec
        ");
    }

    #[test]
    fn computed_key_is_left_alone() {
        let aggregated = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let plus_one = Arc::new(BinaryExpr::new(
            col("k", &aggregated),
            Operator::Plus,
            lit(1),
        ));
        let projection =
            ProjectionExec::try_new(vec![(plus_one as _, "k1".to_string())], aggregated)
                .unwrap();
        let plan = hash_join(
            scan(&["a"]),
            Arc::new(projection),
            &[("a", "k1")],
            JoinType::Inner,
        );
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k1@0)]
          EmptyExec
          ProjectionExec: expr=[k@0 + 1 as k1]
            AggregateExec: mode=Final, gby=[k@0 as k], aggr=[]
              AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
                EmptyExec
        ");
    }

    #[test]
    fn float_keys_are_left_alone() {
        let fields = vec![
            Field::new("k", DataType::Float64, true),
            Field::new("v", DataType::Int32, true),
        ];
        let input: Arc<dyn ExecutionPlan> =
            Arc::new(EmptyExec::new(Arc::new(Schema::new(fields))));
        let probe = two_step_aggregate(&["k"], input);
        let build: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(Arc::new(
            Schema::new(vec![Field::new("a", DataType::Float64, true)]),
        )));
        let plan = hash_join(build, probe, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Final, gby=[k@0 as k], aggr=[]
            AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
              EmptyExec
        ");
    }

    #[test]
    fn grouping_sets_are_left_alone() {
        let input = scan(&["k", "v"]);
        let rollup = PhysicalGroupBy::new(
            vec![(col("k", &input), "k".to_string())],
            vec![(lit(ScalarValue::Int32(None)), "k".to_string())],
            vec![vec![false], vec![true]],
            true,
        );
        let probe = aggregate(AggregateMode::Single, rollup, input);
        let plan = hash_join(scan(&["a"]), probe, &[("a", "k")], JoinType::Inner);
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Single, gby=[(k@0 as k), (NULL as k)], aggr=[]
            EmptyExec
        ");
    }

    #[test]
    fn aggregate_with_limit_is_left_alone() {
        let input = scan(&["k", "v"]);
        let limited = AggregateExec::try_new(
            AggregateMode::Single,
            group_by(&["k"], &input),
            vec![],
            vec![],
            Arc::clone(&input),
            input.schema(),
        )
        .unwrap()
        .with_limit_options(Some(LimitOptions::new(10)));
        let plan = hash_join(
            scan(&["a"]),
            Arc::new(limited),
            &[("a", "k")],
            JoinType::Inner,
        );
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Inner, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Single, gby=[k@0 as k], aggr=[], lim=[10]
            EmptyExec
        ");
    }

    #[test]
    fn join_that_keeps_unmatched_probe_rows_is_left_alone() {
        let probe = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let plan = hash_join(scan(&["a"]), probe, &[("a", "k")], JoinType::Right);
        assert_snapshot!(optimized(plan), @r"
        HashJoinExec: mode=CollectLeft, join_type=Right, on=[(a@0, k@0)]
          EmptyExec
          AggregateExec: mode=Final, gby=[k@0 as k], aggr=[]
            AggregateExec: mode=Partial, gby=[k@0 as k], aggr=[]
              EmptyExec
        ");
    }

    #[test]
    fn option_off_changes_nothing() {
        let probe = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let plan = hash_join(scan(&["a"]), probe, &[("a", "k")], JoinType::Inner);
        let mut config = ConfigOptions::default();
        config.optimizer.join_dynamic_filter_below_aggregates = false;
        let pushdown_only = FilterPushdown::new_post_optimization()
            .optimize(Arc::clone(&plan), &config)
            .unwrap();
        assert_eq!(
            optimized_with(plan, &config),
            displayable(pushdown_only.as_ref()).indent(true).to_string()
        );
    }

    #[test]
    fn second_run_changes_nothing() {
        let probe = two_step_aggregate(&["k"], scan(&["k", "v"]));
        let plan = hash_join(scan(&["a"]), probe, &[("a", "k")], JoinType::Inner);
        let config = ConfigOptions::default();
        let plan = FilterPushdown::new_post_optimization()
            .optimize(plan, &config)
            .unwrap();
        let rule = JoinDynamicFilterBelowAggregates::new();
        let once = rule.optimize(plan, &config).unwrap();
        let twice = rule.optimize(Arc::clone(&once), &config).unwrap();
        assert_eq!(
            displayable(once.as_ref()).indent(true).to_string(),
            displayable(twice.as_ref()).indent(true).to_string()
        );
    }
}
