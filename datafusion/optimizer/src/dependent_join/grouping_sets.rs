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

//! An aggregate over `GROUPING SETS`, `ROLLUP` or `CUBE` written as the
//! union of one plain aggregate per grouping set.
//!
//! `GROUP BY GROUPING SETS ((a), ())` is the union of `GROUP BY a` and of
//! the aggregate without `GROUP BY`, each row padded with NULL for the
//! columns its set leaves out and tagged with the set's `__grouping_id`
//! (the value `grouping()` reads). The empty set `()` yields a row even
//! where the input is empty, like any aggregate without `GROUP BY`.
//!
//! The dependent join needs this form: it groups each aggregate also by
//! the outer values, and `GROUP BY ()` grouped by them has no row for an
//! outer value without input rows, where the subquery has one (the "count
//! bug"; pulling a correlated filter above a grouping-sets aggregate loses
//! the same row). Its aggregate without `GROUP BY` gives every outer value
//! its row, so the union does.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion_common::{Result, ScalarValue, not_impl_err};
use datafusion_expr::logical_plan::{Aggregate, Union};
use datafusion_expr::{Expr, GroupingSet, LogicalPlan, LogicalPlanBuilder, lit};
use datafusion_functions_aggregate::count::count;

/// `aggregate` as a union of plain aggregates, if it groups by grouping
/// sets; see the [module documentation](self).
pub(crate) fn grouping_sets_as_union(
    aggregate: &Aggregate,
) -> Result<Option<LogicalPlan>> {
    let [Expr::GroupingSet(grouping_set)] = aggregate.group_expr.as_slice() else {
        return Ok(None);
    };
    let columns = grouping_set.distinct_expr();
    let sets = grouping_sets(grouping_set, &columns)?;
    // Each set is `__grouping_id`'s bitmask of the columns it leaves out
    // (the first column the highest bit), with the ordinal of a set that
    // occurs again above them
    let masks: Vec<Vec<bool>> = sets
        .iter()
        .map(|set| columns.iter().map(|column| !set.contains(column)).collect())
        .collect();
    let mut occurrences: HashMap<&[bool], u64> = HashMap::new();
    let ordinals: Vec<u64> = masks
        .iter()
        .map(|mask| {
            let seen = occurrences.entry(mask.as_slice()).or_default();
            *seen += 1;
            *seen - 1
        })
        .collect();
    let max_ordinal = ordinals.iter().copied().max().unwrap_or(0) as usize;
    let id_type = Aggregate::grouping_id_type(columns.len(), max_ordinal);
    let schema = &aggregate.schema;
    let width = columns.len();

    let mut branches = Vec::with_capacity(sets.len());
    for ((set, mask), ordinal) in sets.iter().zip(&masks).zip(ordinals) {
        // An aggregate needs an aggregate expression or a group: the empty
        // set of an aggregate without any counts its rows, and drops the count
        let mut aggr_expr = aggregate.aggr_expr.clone();
        if aggr_expr.is_empty() && set.is_empty() {
            aggr_expr.push(count(lit(1)).alias("__grouping_set_rows"));
        }
        let grouped = LogicalPlanBuilder::from(aggregate.input.as_ref().clone())
            .aggregate(set.iter().map(|expr| (*expr).clone()), aggr_expr)?
            .build()?;
        let grouped_columns = grouped.schema().columns();
        let mut exprs = Vec::with_capacity(schema.fields().len());
        for (index, column) in columns.iter().enumerate() {
            let (qualifier, field) = schema.qualified_field(index);
            let value = match set.iter().position(|expr| expr == column) {
                Some(position) => Expr::Column(grouped_columns[position].clone()),
                None => lit(ScalarValue::try_from(field.data_type())?),
            };
            exprs.push(value.alias_qualified(qualifier.cloned(), field.name()));
        }
        let semantic = mask
            .iter()
            .fold(0u64, |id, &left_out| (id << 1) | u64::from(left_out));
        let id = ScalarValue::UInt64(Some(semantic | (ordinal << width)));
        exprs.push(lit(id.cast_to(&id_type)?).alias(Aggregate::INTERNAL_GROUPING_ID));
        for (offset, _) in aggregate.aggr_expr.iter().enumerate() {
            let (qualifier, field) = schema.qualified_field(width + 1 + offset);
            let value = Expr::Column(grouped_columns[set.len() + offset].clone());
            exprs.push(value.alias_qualified(qualifier.cloned(), field.name()));
        }
        branches.push(Arc::new(
            LogicalPlanBuilder::from(grouped).project(exprs)?.build()?,
        ));
    }
    let union = match branches.len() {
        1 => Arc::unwrap_or_clone(branches.remove(0)),
        _ => LogicalPlan::Union(Union::try_new_with_loose_types(branches)?),
    };
    let named_alike = union
        .schema()
        .iter()
        .zip(schema.iter())
        .all(|((q1, f1), (q2, f2))| q1 == q2 && f1.name() == f2.name());
    if named_alike {
        return Ok(Some(union));
    }
    // Under the aggregate's own column names
    let renamed = union
        .schema()
        .columns()
        .into_iter()
        .zip(schema.iter())
        .map(|(column, (qualifier, field))| {
            Expr::Column(column).alias_qualified(qualifier.cloned(), field.name())
        })
        .collect::<Vec<_>>();
    Ok(Some(
        LogicalPlanBuilder::from(union).project(renamed)?.build()?,
    ))
}

/// The grouping sets of `grouping_set`, each a list of `columns`.
fn grouping_sets<'a>(
    grouping_set: &'a GroupingSet,
    columns: &[&'a Expr],
) -> Result<Vec<Vec<&'a Expr>>> {
    Ok(match grouping_set {
        // A set that lists an expression twice groups by it once
        GroupingSet::GroupingSets(sets) => sets
            .iter()
            .map(|set| unique(&set.iter().collect::<Vec<_>>()))
            .collect(),
        GroupingSet::Rollup(exprs) | GroupingSet::Cube(exprs)
            if exprs.len() != unique(columns).len() =>
        {
            return not_impl_err!(
                "ROLLUP or CUBE of an expression listed twice in a correlated subquery"
            );
        }
        GroupingSet::Rollup(exprs) => (0..=exprs.len())
            .rev()
            .map(|len| exprs[..len].iter().collect())
            .collect(),
        GroupingSet::Cube(exprs) => (0..1u64 << exprs.len())
            .rev()
            .map(|present| {
                exprs
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| present & (1 << (exprs.len() - 1 - index)) != 0)
                    .map(|(_, expr)| expr)
                    .collect()
            })
            .collect(),
    })
}

fn unique<'a>(exprs: &[&'a Expr]) -> Vec<&'a Expr> {
    let mut unique: Vec<&Expr> = vec![];
    for expr in exprs {
        if !unique.contains(expr) {
            unique.push(expr);
        }
    }
    unique
}
