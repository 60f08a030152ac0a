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

//! [`SubqueryToWindow`] computes a correlated aggregate subquery that reads
//! the same rows as the outer query as a window aggregate over the outer
//! query's rows: one pass, no second scan, no join back.
//!
//! TPC-H q17 compares each lineitem of a part with the average quantity of
//! all the lineitems of that part:
//!
//! ```sql
//! SELECT sum(l_extendedprice) FROM lineitem, part
//! WHERE p_partkey = l_partkey AND p_brand = 'Brand#23'
//!   AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem
//!                     WHERE l_partkey = p_partkey)
//! ```
//!
//! The outer query's rows with `p_partkey = x` are the lineitems of part
//! `x`, each joined to the part rows of key `x`: the subquery's rows for `x`,
//! each as many times as the part has rows. So the subquery is
//! `0.2 * avg(l_quantity) OVER (PARTITION BY l_partkey)` over the outer
//! rows, before the comparison filters them (Zuzarte et al., "WinMagic:
//! Subquery Elimination Using Window Aggregation", SIGMOD 2003).
//!
//! The rewrite holds when, with the subquery's tables `S` mapped each to the
//! one table of the outer query that scans the same source (its `S'`) and
//! `R` the outer query's other tables:
//!
//! 1. the outer query and the subquery are inner joins of their tables
//!    under conjunctive predicates, the subquery an aggregate without `GROUP
//!    BY` (under a projection of it);
//! 2. the outer predicates that read only `S'` are the subquery's own
//!    predicates: the rows of `S'` are the rows of `S`;
//! 3. the subquery's correlation is equalities `S.c = R.k`, and the outer
//!    predicates that read both `S'` and `R` are those same equalities: for
//!    each key `x`, the outer rows are each row of `S` with `c = x` joined to
//!    each row of `R` with `k = x`, every `S` row as many times as `R` has
//!    rows for `x`, and at least once where any outer row has key `x`;
//! 4. each aggregate gives the same value where every row is repeated the
//!    same number of times: `min`, `max` and `avg`, without `DISTINCT` or
//!    `ORDER BY` (`sum` and `count` would multiply).
//!
//! An outer row always has rows of `S` for its key (itself among them), so
//! no empty-input value (the count bug) arises; a NULL key matches no row in
//! either form. The window is computed over the outer rows under every outer
//! predicate that holds no subquery, and the predicates that hold one
//! (the rewritten comparison among them) filter above it.
//!
//! [`SubqueryToWindow`] runs before the rules that decorrelate subqueries
//! into joins, and leaves every other subquery to them.

use std::collections::{BTreeSet, HashMap, HashSet};

use datafusion_common::tree_node::{
    Transformed, TransformedResult, TreeNode, TreeNodeRecursion,
};
use datafusion_common::{Column, JoinType, Result, TableReference, internal_err};
use datafusion_expr::expr::{AggregateFunction, WindowFunction, WindowFunctionParams};
use datafusion_expr::logical_plan::{Aggregate, Filter, Join, Projection, Subquery};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::utils::{conjunction, split_conjunction};
use datafusion_expr::{
    BinaryExpr, Expr, LogicalPlan, LogicalPlanBuilder, Operator, WindowFrame,
    WindowFunctionDefinition,
};

use crate::correlation::equality_sides;
use crate::optimizer::ApplyOrder;
use crate::{OptimizerConfig, OptimizerRule};

/// Rewrites a correlated aggregate subquery over the outer query's own rows
/// into a window aggregate. See the [module documentation](self).
#[derive(Default, Debug)]
pub struct SubqueryToWindow {}

impl SubqueryToWindow {
    #[expect(missing_docs)]
    pub fn new() -> Self {
        Self::default()
    }
}

impl OptimizerRule for SubqueryToWindow {
    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Filter(filter) = plan else {
            return Ok(Transformed::no(plan));
        };
        if !contains_subquery(&filter.predicate) {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        }
        match windowed(&filter, config)? {
            Some(plan) => Ok(Transformed::yes(plan)),
            None => Ok(Transformed::no(LogicalPlan::Filter(filter))),
        }
    }

    fn name(&self) -> &str {
        "subquery_to_window"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }
}

/// An inner join of tables under conjunctive predicates: a `FROM` list with
/// its `WHERE`, or `JOIN ... ON`s.
struct JoinOfTables<'a> {
    /// Each table under the name the query reads it by.
    tables: Vec<(TableReference, &'a LogicalPlan)>,
    predicates: Vec<Expr>,
}

/// The tables of `plan`, an inner join tree, and its join predicates; `None`
/// where `plan` is anything else.
fn join_of_tables(plan: &LogicalPlan) -> Option<JoinOfTables<'_>> {
    let mut join = JoinOfTables {
        tables: vec![],
        predicates: vec![],
    };
    collect_tables(plan, &mut join).then_some(join)
}

fn collect_tables<'a>(plan: &'a LogicalPlan, join: &mut JoinOfTables<'a>) -> bool {
    match plan {
        LogicalPlan::Join(Join {
            left,
            right,
            on,
            filter,
            join_type: JoinType::Inner,
            null_equality,
            ..
        }) if on.is_empty()
            || *null_equality == datafusion_common::NullEquality::NullEqualsNothing =>
        {
            join.predicates
                .extend(on.iter().map(|(l, r)| l.clone().eq(r.clone())));
            if let Some(filter) = filter {
                join.predicates
                    .extend(split_conjunction(filter).into_iter().cloned());
            }
            collect_tables(left, join) && collect_tables(right, join)
        }
        LogicalPlan::TableScan(scan)
            if scan.filters.is_empty() && scan.fetch.is_none() =>
        {
            join.tables.push((scan.table_name.clone(), plan));
            true
        }
        LogicalPlan::SubqueryAlias(alias) if !alias.input.contains_outer_reference() => {
            join.tables
                .push((alias.alias.clone(), alias.input.as_ref()));
            true
        }
        _ => false,
    }
}

/// A scalar subquery this rule computes as a window: `top(aggregates)` over
/// an aggregate without `GROUP BY` of a join of tables.
struct AggregateSubquery<'a> {
    /// The projection over the aggregate, if any.
    top: Option<&'a Projection>,
    aggregate: &'a Aggregate,
    body: JoinOfTables<'a>,
}

fn aggregate_subquery(subquery: &Subquery) -> Option<AggregateSubquery<'_>> {
    let (top, below) = match subquery.subquery.as_ref() {
        LogicalPlan::Projection(projection) => {
            (Some(projection), projection.input.as_ref())
        }
        plan => (None, plan),
    };
    let LogicalPlan::Aggregate(aggregate) = below else {
        return None;
    };
    if !aggregate.group_expr.is_empty() {
        return None;
    }
    let (predicates, tables) = match aggregate.input.as_ref() {
        LogicalPlan::Filter(Filter {
            predicate, input, ..
        }) => (
            split_conjunction(predicate).into_iter().cloned().collect(),
            input.as_ref(),
        ),
        plan => (vec![], plan),
    };
    let mut body = join_of_tables(tables)?;
    body.predicates.extend(predicates);
    Some(AggregateSubquery {
        top,
        aggregate,
        body,
    })
}

/// Whether an aggregate has the same value where each of its input rows is
/// repeated the same number of times (condition 4).
fn repeat_insensitive(expr: &Expr) -> bool {
    match expr.clone().unalias() {
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            matches!(func.name(), "min" | "max" | "avg")
                && !params.distinct
                && params.order_by.is_empty()
                && params.null_treatment.is_none()
                && params.filter.is_none()
        }
        _ => false,
    }
}

/// `filter` with its subquery computed as a window, where the rewrite holds.
fn windowed(
    filter: &Filter,
    config: &dyn OptimizerConfig,
) -> Result<Option<LogicalPlan>> {
    let Some(outer) = join_of_tables(&filter.input) else {
        return Ok(None);
    };
    let conjuncts: Vec<&Expr> = split_conjunction(&filter.predicate);
    // Where a predicate is volatile, moving it below the window changes how
    // often it runs. A join condition holding a subquery (`JOIN ... ON q <
    // (SELECT ...)`) stays below the window and would narrow the rows it
    // sees, where the subquery sees them all
    if conjuncts
        .iter()
        .chain(&outer.predicates.iter().collect::<Vec<_>>())
        .any(|c| c.is_volatile())
        || outer.predicates.iter().any(contains_subquery)
    {
        return Ok(None);
    }
    // The conjunct `x <op> (subquery)` whose subquery is rewritten: the first
    // that qualifies
    for (index, conjunct) in conjuncts.iter().enumerate() {
        let Some(subquery) = compared_subquery(conjunct) else {
            continue;
        };
        let Some(rewrite) = window_of(subquery, &outer, &conjuncts, index)? else {
            continue;
        };
        return build(filter, &conjuncts, index, subquery, &rewrite, config).map(Some);
    }
    Ok(None)
}

/// The scalar subquery `conjunct` compares with, if it is `x <op>
/// (subquery)` or `(subquery) <op> x` for a comparison `op`.
fn compared_subquery(conjunct: &Expr) -> Option<&Subquery> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = conjunct else {
        return None;
    };
    if !matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
    ) {
        return None;
    }
    match (left.as_ref(), right.as_ref()) {
        (Expr::ScalarSubquery(subquery), other)
        | (other, Expr::ScalarSubquery(subquery))
            if !contains_subquery(other) =>
        {
            Some(subquery)
        }
        _ => None,
    }
}

/// What the window needs: the partition keys, over the outer rows, and the
/// aggregates and top projection with the subquery's tables renamed to the
/// outer query's.
struct Rewrite {
    partition_by: Vec<Expr>,
    aggregates: Vec<Expr>,
    top: Option<Vec<Expr>>,
    /// The subquery's aggregate output columns.
    aggregate_columns: Vec<Column>,
}

/// The window that computes `subquery`, the `index`th of the outer
/// filter's `conjuncts`, over the rows of `outer`; `None` where one of the
/// module's four conditions fails. The steps follow the conditions.
fn window_of(
    subquery: &Subquery,
    outer: &JoinOfTables<'_>,
    conjuncts: &[&Expr],
    index: usize,
) -> Result<Option<Rewrite>> {
    // Condition 1 (its shape) and 4 (its aggregates)
    let Some(inner) = aggregate_subquery(subquery) else {
        return Ok(None);
    };
    if !aggregates_repeat_insensitive(subquery, &inner) {
        return Ok(None);
    }
    let Some(mapping) = TableMapping::new(&inner.body, outer) else {
        return Ok(None);
    };
    // Conditions 2 and 3, the subquery's side
    let Some(own) = subquery_predicates(&inner, &mapping)? else {
        return Ok(None);
    };
    // Conditions 2 and 3, the outer query's side: the same predicates
    let other_conjuncts = conjuncts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, conjunct)| *conjunct);
    let (outer_local, crossing) =
        outer_predicates(outer.predicates.iter().chain(other_conjuncts), &mapping);
    if outer_local != own.local || crossing != own.correlation {
        return Ok(None);
    }

    let aggregates = inner
        .aggregate
        .aggr_expr
        .iter()
        .map(|expr| mapping.rename(expr))
        .collect::<Result<Vec<_>>>()?;
    // Renamed first: an outer reference names an outer table, which may
    // share its name with a table of the subquery
    let top = inner
        .top
        .map(|projection| {
            projection
                .expr
                .iter()
                .map(|expr| strip_outer(&mapping.rename(expr)?))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let aggregate_columns = inner.aggregate.schema.columns();
    Ok(Some(Rewrite {
        partition_by: own.partition_by,
        aggregates,
        top,
        aggregate_columns,
    }))
}

/// Whether each aggregate of `inner` gives the same value over its rows
/// each repeated (condition 4), and the subquery reads nothing that
/// repetition would change.
fn aggregates_repeat_insensitive(subquery: &Subquery, inner: &AggregateSubquery) -> bool {
    // A volatile aggregate argument would be evaluated once per repeated
    // row (`max(v * random())` draws more often); an aggregate of outer
    // columns would see, per key, the values of every outer row of the
    // key; a subquery in the projection reads its own scope
    !has_volatile(&subquery.subquery)
        && inner.aggregate.aggr_expr.iter().all(repeat_insensitive)
        && !inner.aggregate.aggr_expr.iter().any(Expr::contains_outer)
        && !inner
            .top
            .is_some_and(|top| top.expr.iter().any(contains_subquery))
}

/// Each table of the subquery (`S`) and the one outer table over the same
/// plan (its `S'`).
struct TableMapping {
    renames: HashMap<TableReference, TableReference>,
    /// The outer tables some subquery table maps to.
    mapped: BTreeSet<TableReference>,
}

impl TableMapping {
    /// `None` where a subquery table has no outer table over the same plan,
    /// or several, or shares one with another subquery table.
    fn new(body: &JoinOfTables<'_>, outer: &JoinOfTables<'_>) -> Option<Self> {
        let mut renames = HashMap::new();
        let mut mapped = BTreeSet::new();
        for (name, plan) in &body.tables {
            let same: Vec<&TableReference> = outer
                .tables
                .iter()
                .filter(|(_, outer_plan)| same_source(plan, outer_plan))
                .map(|(outer_name, _)| outer_name)
                .collect();
            let [outer_name] = same.as_slice() else {
                return None;
            };
            if !mapped.insert((*outer_name).clone()) {
                return None;
            }
            renames.insert(name.clone(), (*outer_name).clone());
        }
        Some(Self { renames, mapped })
    }

    /// `expr` with the subquery's tables renamed to the outer query's.
    fn rename(&self, expr: &Expr) -> Result<Expr> {
        rename_tables(expr, &self.renames)
    }

    /// Whether `expr` reads the mapped outer tables (`S'`), and whether it
    /// reads any other column.
    fn reads_mapped(&self, expr: &Expr) -> (bool, bool) {
        let mut mapped_side = false;
        let mut other_side = false;
        for column in expr.column_refs() {
            match &column.relation {
                Some(relation) if self.mapped.contains(relation) => mapped_side = true,
                _ => other_side = true,
            }
        }
        (mapped_side, other_side)
    }
}

/// The subquery's predicates, renamed to the outer tables and normalized:
/// its own, and its correlation equalities with the window's partition
/// keys.
struct SubqueryPredicates {
    local: HashSet<Expr>,
    correlation: HashSet<Expr>,
    partition_by: Vec<Expr>,
}

/// `inner`'s predicates split as [`SubqueryPredicates`]; `None` where one
/// holds a subquery, or reads the outer query other than by an equality of
/// a column of a table the window can partition by (condition 3), or where
/// none is correlated.
fn subquery_predicates(
    inner: &AggregateSubquery,
    mapping: &TableMapping,
) -> Result<Option<SubqueryPredicates>> {
    let mut local = HashSet::new();
    let mut correlation = HashSet::new();
    let mut partition_by = vec![];
    for predicate in &inner.body.predicates {
        if contains_subquery(predicate) {
            return Ok(None);
        }
        if !predicate.contains_outer() {
            local.insert(normalized(mapping.rename(predicate)?));
            continue;
        }
        let Some((inner_column, outer_column)) = correlation_equality(predicate) else {
            return Ok(None);
        };
        // The window puts two keys in one partition where they are the same
        // value, the join where they are equal: for floats not the same
        // (`0.0 = -0.0`, NaN). An equality of two types holds a cast, and is
        // not a correlation equality
        let (_, key_field) = inner
            .aggregate
            .input
            .schema()
            .qualified_field_from_column(&inner_column)?;
        if key_field.data_type().is_floating() {
            return Ok(None);
        }
        let inner_column = mapping.rename(&Expr::Column(inner_column))?;
        let outer_side = Expr::Column(outer_column.clone());
        // The outer column belongs to the outer query's other tables
        if mapping.reads_mapped(&outer_side).0 {
            return Ok(None);
        }
        correlation.insert(normalized(inner_column.clone().eq(outer_side)));
        partition_by.push(inner_column);
    }
    if partition_by.is_empty() {
        return Ok(None);
    }
    Ok(Some(SubqueryPredicates {
        local,
        correlation,
        partition_by,
    }))
}

/// The outer predicates that hold no subquery, normalized: those that read
/// only the mapped tables (to be the subquery's own), and those that read
/// them and the other tables (to be its correlation).
fn outer_predicates<'a>(
    predicates: impl Iterator<Item = &'a Expr>,
    mapping: &TableMapping,
) -> (HashSet<Expr>, HashSet<Expr>) {
    let mut outer_local = HashSet::new();
    let mut crossing = HashSet::new();
    for predicate in predicates {
        if contains_subquery(predicate) {
            continue;
        }
        match mapping.reads_mapped(predicate) {
            (true, false) => {
                outer_local.insert(normalized(predicate.clone()));
            }
            (true, true) => {
                crossing.insert(normalized(predicate.clone()));
            }
            _ => {}
        }
    }
    (outer_local, crossing)
}

/// Whether two table plans read the same rows: the same scan, or the same
/// plan under another alias.
fn same_source(inner: &LogicalPlan, outer: &LogicalPlan) -> bool {
    match (inner, outer) {
        (LogicalPlan::TableScan(a), LogicalPlan::TableScan(b)) => {
            a.table_name == b.table_name
                && a.source.schema() == b.source.schema()
                && a.projection == b.projection
                && a.filters.is_empty()
                && b.filters.is_empty()
                && a.fetch.is_none()
                && b.fetch.is_none()
        }
        // A plan with a volatile expression, or a limit (which rows it
        // keeps is not fixed without an order), may give other rows each
        // time
        (a, b) => a == b && !has_volatile(a) && !has_limit(a),
    }
}

fn has_limit(plan: &LogicalPlan) -> bool {
    plan.exists(|node| {
        Ok(match node {
            LogicalPlan::Limit(_) => true,
            LogicalPlan::TableScan(scan) => scan.fetch.is_some(),
            _ => false,
        })
    })
    .unwrap_or(true)
}

fn has_volatile(plan: &LogicalPlan) -> bool {
    plan.exists(|node| {
        let mut volatile = false;
        node.apply_expressions(|expr| {
            volatile |= expr.is_volatile();
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(volatile)
    })
    .unwrap_or(true)
}

/// `inner = outer_ref(outer)` (either way round), for columns.
fn correlation_equality(predicate: &Expr) -> Option<(Column, Column)> {
    equality_sides(predicate).find_map(|sides| match sides {
        (Expr::Column(inner), Expr::OuterReferenceColumn(_, outer)) => {
            Some((inner.clone(), outer.clone()))
        }
        _ => None,
    })
}

/// `predicate` with the operands of an equality in one order, so that `a =
/// b` and `b = a` compare equal. Predicates are compared as expressions, not
/// as text: `a - (b - c)` displays as `a - b - c` does.
fn normalized(predicate: Expr) -> Expr {
    match predicate {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) if right.to_string() < left.to_string() => {
            Expr::BinaryExpr(BinaryExpr::new(right, Operator::Eq, left))
        }
        other => other,
    }
}

/// `expr` with each column of a subquery table renamed to the outer table.
fn rename_tables(
    expr: &Expr,
    renames: &HashMap<TableReference, TableReference>,
) -> Result<Expr> {
    expr.clone()
        .transform(|expr| match &expr {
            Expr::Column(Column {
                relation: Some(relation),
                name,
                ..
            }) => match renames.get(relation) {
                Some(outer) => Ok(Transformed::yes(Expr::Column(Column::new(
                    Some(outer.clone()),
                    name,
                )))),
                None => Ok(Transformed::no(expr)),
            },
            _ => Ok(Transformed::no(expr)),
        })
        .data()
}

/// `expr` with its outer references read as the outer query's columns.
fn strip_outer(expr: &Expr) -> Result<Expr> {
    expr.clone()
        .transform(|expr| match expr {
            Expr::OuterReferenceColumn(_, column) => {
                Ok(Transformed::yes(Expr::Column(column)))
            }
            expr => Ok(Transformed::no(expr)),
        })
        .data()
}

/// The plan of `filter` with the subquery of its conjunct `index` computed
/// by the window `rewrite` describes.
fn build(
    filter: &Filter,
    conjuncts: &[&Expr],
    index: usize,
    subquery: &Subquery,
    rewrite: &Rewrite,
    config: &dyn OptimizerConfig,
) -> Result<LogicalPlan> {
    let alias_generator = config.alias_generator();
    // The window sees the outer rows under every predicate that holds no
    // subquery; the others filter above it
    let (mut above, below): (Vec<Expr>, Vec<Expr>) = conjuncts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, conjunct)| (*conjunct).clone())
        .partition(contains_subquery);
    let mut rows = LogicalPlanBuilder::from(filter.input.as_ref().clone());
    if let Some(predicate) = conjunction(below) {
        rows = rows.filter(predicate)?;
    }
    let names: Vec<String> = rewrite
        .aggregates
        .iter()
        .map(|_| alias_generator.next("__window_aggregate"))
        .collect();
    let window_expr = rewrite
        .aggregates
        .iter()
        .zip(&names)
        .map(|(aggregate, name)| {
            let Expr::AggregateFunction(AggregateFunction { func, params }) =
                aggregate.clone().unalias()
            else {
                return internal_err!("Not an aggregate: {aggregate}");
            };
            let window = WindowFunction {
                fun: WindowFunctionDefinition::AggregateUDF(func),
                params: WindowFunctionParams {
                    args: params.args,
                    partition_by: rewrite.partition_by.clone(),
                    order_by: vec![],
                    window_frame: WindowFrame::new(None),
                    filter: None,
                    null_treatment: None,
                    distinct: false,
                },
            };
            Ok(Expr::WindowFunction(Box::new(window)).alias(name))
        })
        .collect::<Result<Vec<_>>>()?;
    let windowed = rows.window(window_expr)?;

    // The subquery's value, read from the window's columns
    let window_column = |column: &Column| {
        rewrite
            .aggregate_columns
            .iter()
            .position(|aggregate| aggregate == column)
            .map(|i| Expr::Column(Column::new_unqualified(&names[i])))
    };
    let value = match rewrite.top.as_deref() {
        Some([value]) => value
            .clone()
            .unalias()
            .transform(|expr| match &expr {
                Expr::Column(column) => match window_column(column) {
                    Some(window) => Ok(Transformed::yes(window)),
                    None => Ok(Transformed::no(expr)),
                },
                _ => Ok(Transformed::no(expr)),
            })
            .data()?,
        None if names.len() == 1 => Expr::Column(Column::new_unqualified(&names[0])),
        _ => return internal_err!("A scalar subquery of more than one column"),
    };
    let compared = conjuncts[index]
        .clone()
        .transform(|expr| match &expr {
            Expr::ScalarSubquery(s) if s == subquery => {
                Ok(Transformed::yes(value.clone()))
            }
            _ => Ok(Transformed::no(expr)),
        })
        .data()?;
    above.insert(0, compared);
    let Some(predicate) = conjunction(above) else {
        return internal_err!("No predicate above the window");
    };
    let columns = filter
        .input
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column);
    windowed.filter(predicate)?.project(columns)?.build()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion_common::Result;
    use datafusion_expr::{Expr, LogicalPlan, col, lit, scalar_subquery};
    use datafusion_functions_aggregate::average::avg;
    use datafusion_functions_aggregate::min_max::min;
    use datafusion_functions_aggregate::sum::sum;

    use super::SubqueryToWindow;
    use crate::OptimizerContext;
    use crate::fork_test_util::{optimized_by, outer, table};

    /// `plan` as [`SubqueryToWindow`] alone rewrites it.
    fn rewritten(plan: LogicalPlan) -> Result<String> {
        let context = OptimizerContext::new().with_max_passes(1);
        let optimized = optimized_by(SubqueryToWindow::new(), plan, &context)?;
        Ok(optimized.display_indent().to_string())
    }

    /// `SELECT * FROM s, o WHERE o.k = s.k AND o.v > 0 [AND outer_extra] AND
    /// s.v < (SELECT aggregate FROM s WHERE s.k = o.k [AND inner_extra])`
    fn same_rows(
        aggregate: Expr,
        inner_extra: Option<Expr>,
        outer_extra: Option<Expr>,
    ) -> Result<LogicalPlan> {
        let mut inner_predicate = col("s.k").eq(outer("k"));
        if let Some(extra) = inner_extra {
            inner_predicate = inner_predicate.and(extra);
        }
        let subquery = table("s")?
            .filter(inner_predicate)?
            .aggregate(Vec::<Expr>::new(), [aggregate])?
            .build()?;
        let mut predicate = col("o.k")
            .eq(col("s.k"))
            .and(col("o.v").gt(lit(0)))
            .and(col("s.v").lt(scalar_subquery(Arc::new(subquery))));
        if let Some(extra) = outer_extra {
            predicate = predicate.and(extra);
        }
        table("s")?
            .cross_join(table("o")?.build()?)?
            .filter(predicate)?
            .build()
    }

    #[test]
    fn an_aggregate_of_the_outer_rows_of_a_key_is_a_window() -> Result<()> {
        let plan = same_rows(avg(col("s.v")), None, None)?;
        insta::assert_snapshot!(rewritten(plan)?, @r"
            Projection: s.k, s.v, o.k, o.v
              Filter: s.v < __window_aggregate_1
                WindowAggr: windowExpr=[[avg(s.v) PARTITION BY [s.k] ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING AS __window_aggregate_1]]
                  Filter: o.k = s.k AND o.v > Int32(0)
                    Cross Join:
                      TableScan: s
                      TableScan: o
            ");
        Ok(())
    }

    #[test]
    fn the_same_predicate_on_both_sides_keeps_the_rows_the_same() -> Result<()> {
        let plan = same_rows(
            min(col("s.v")),
            Some(col("s.v").gt(lit(1))),
            Some(col("s.v").gt(lit(1))),
        )?;
        insta::assert_snapshot!(rewritten(plan)?, @r"
            Projection: s.k, s.v, o.k, o.v
              Filter: s.v < __window_aggregate_1
                WindowAggr: windowExpr=[[min(s.v) PARTITION BY [s.k] ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING AS __window_aggregate_1]]
                  Filter: o.k = s.k AND o.v > Int32(0) AND s.v > Int32(1)
                    Cross Join:
                      TableScan: s
                      TableScan: o
            ");
        Ok(())
    }

    /// The cases where the window would not see the subquery's rows, or
    /// would see them repeated where that changes the aggregate.
    #[test]
    fn other_rows_are_left_to_the_joins() -> Result<()> {
        let cases = [
            // sum adds each row once per outer row of the key
            same_rows(sum(col("s.v")), None, None)?,
            // the subquery reads rows the outer query does not have
            same_rows(avg(col("s.v")), None, Some(col("s.v").gt(lit(1))))?,
            // the outer query has rows the subquery does not read
            same_rows(avg(col("s.v")), Some(col("s.v").gt(lit(1))), None)?,
            // the outer rows of a key depend on more than the key
            same_rows(avg(col("s.v")), None, Some(col("o.v").lt(col("s.v"))))?,
            // a correlation that is not an equality
            same_rows(avg(col("s.v")), Some(col("s.v").lt(outer("v"))), None)?,
        ];
        for plan in cases {
            let before = plan.display_indent().to_string();
            assert_eq!(rewritten(plan)?, before);
        }
        Ok(())
    }
}
