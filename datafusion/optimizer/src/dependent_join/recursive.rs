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

//! The dependent join pushed through a recursive query, `WITH RECURSIVE r
//! AS (static UNION [ALL] recursive)` whose terms read outer columns.
//!
//! Evaluated for one outer row, the query starts from that row's static
//! rows and iterates on them alone. For every domain value at once, each
//! row of the work table carries the tags it was derived for: the static
//! term is tagged as any plan, and the recursive term reads its tags from
//! the work table, whose schema gains the tag columns. Two rows of
//! different outer values then never meet, and `UNION` removes duplicates
//! within one outer value only, as the per-row evaluation does.
//!
//! The widened work table is a [`TaggedWorkTable`]: the physical planner
//! plans its scan as the work table of the enclosing recursive query.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use datafusion_common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion_common::{Column, Result, TableReference, not_impl_err};
use datafusion_expr::logical_plan::{JoinType, RecursiveQuery};
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, TableSource, TableType};

use super::{DependentJoin, Tagged, not_distinct};
use crate::correlation::lateral::lateral_side;

/// The work table of a recursive query that the dependent join widened
/// with tag columns: the recursive query's own columns, then the tags.
///
/// It stands in for the `CteWorkTable` the SQL planner created, whose
/// schema lacks the tags; its scan is planned as that table's would be.
#[derive(Debug)]
pub struct TaggedWorkTable {
    name: String,
    schema: SchemaRef,
}

impl TaggedWorkTable {
    /// The name of the recursive query whose work table this is.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The recursive query's columns, then the tags.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

impl TableSource for TaggedWorkTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }
}

/// A work table the recursive term being pushed reads: its tagged scan
/// replaces every scan of the original.
#[derive(Debug, Clone)]
pub(super) struct WorkTable {
    name: String,
    scan: Tagged,
}

impl WorkTable {
    /// Whether `plan` is a scan of this work table.
    ///
    /// Inside its recursive term, the query's name refers to the work table
    /// (a table of that name is out of reach unless qualified), and the
    /// SQL planner scans it as a temporary table.
    fn is_scanned_by(&self, plan: &LogicalPlan) -> bool {
        matches!(plan, LogicalPlan::TableScan(scan)
            if is_scan_of(plan, &self.name)
                && scan.source.table_type() == TableType::Temporary)
    }
}

/// Whether `plan` scans a table of the name the SQL planner gives the work
/// table of the recursive query `name` (it parses the name as a table
/// reference, as [`LogicalPlanBuilder::scan`] does).
fn is_scan_of(plan: &LogicalPlan, name: &str) -> bool {
    matches!(plan, LogicalPlan::TableScan(scan)
        if scan.table_name == TableReference::from(name))
}

impl DependentJoin<'_> {
    pub(super) fn push_recursive_query(&self, query: &RecursiveQuery) -> Result<Tagged> {
        if scans_within_subqueries(&query.recursive_term, |plan| {
            is_scan_of(plan, &query.name)
        })? {
            return not_impl_err!(
                "Correlated recursive query {} reading itself in a subquery \
                 cannot be decorrelated",
                query.name
            );
        }
        let tag_alias = self.alias_generator.next("__domain_tag");
        let static_term = self.only_domain_tags(self.push(&query.static_term)?)?;
        let static_term = with_named_tags(&query.static_term, static_term, &tag_alias)?;

        let fields = static_term
            .plan
            .schema()
            .fields()
            .iter()
            .map(|field| field.as_ref().clone().with_nullable(true))
            .collect::<Vec<_>>();
        let source = Arc::new(TaggedWorkTable {
            name: query.name.clone(),
            schema: Arc::new(Schema::new(fields)),
        });
        let scan =
            LogicalPlanBuilder::scan(query.name.as_str(), source, None)?.build()?;
        let work_table = WorkTable {
            name: query.name.clone(),
            scan: Tagged {
                plan: scan,
                tags: static_term
                    .tags
                    .iter()
                    .map(|tag| Column::new(Some(query.name.as_str()), &tag.name))
                    .collect(),
                unique: false,
                non_null_tags: static_term.non_null_tags,
            },
        };
        if !tags_come_from(&query.recursive_term, &work_table)? {
            return not_impl_err!(
                "Correlated recursive query {} whose recursive term makes rows \
                 without reading its previous rows cannot be decorrelated",
                query.name
            );
        }
        let recursive_term = self
            .reading_work_table(work_table)
            .push(&query.recursive_term)?;
        let recursive_term =
            with_named_tags(&query.recursive_term, recursive_term, &tag_alias)?;

        let non_null_tags = static_term.non_null_tags && recursive_term.non_null_tags;
        let plan = LogicalPlanBuilder::from(static_term.plan)
            .to_recursive_query(
                query.name.clone(),
                recursive_term.plan,
                query.is_distinct,
            )?
            .build()?;
        Ok(Tagged {
            plan,
            tags: static_term.tags,
            unique: false,
            non_null_tags,
        })
    }

    /// The rows of `tagged` whose tags are values of the domain.
    ///
    /// A static term tagged by an equality (`WHERE e.src = o.id`) tags its
    /// rows with every value of `e.src`: harmless where the final join
    /// drops them, but in a recursion they would be iterated for values no
    /// outer row has, possibly without end.
    fn only_domain_tags(&self, tagged: Tagged) -> Result<Tagged> {
        let (domain, domain_tags) = self.domain_instance()?;
        let on = tagged
            .tags
            .iter()
            .zip(domain_tags)
            .map(|(tag, domain_tag)| {
                not_distinct(Expr::Column(tag.clone()), Expr::Column(domain_tag))
            });
        Ok(Tagged {
            plan: LogicalPlanBuilder::from(tagged.plan)
                .join_on(domain, JoinType::LeftSemi, on)?
                .build()?,
            ..tagged
        })
    }

    /// Refuses a limit over a recursive query that reads outer columns, as
    /// before such a query was decorrelated: per outer row, the limit stops
    /// the recursion once it has its rows, but a per-tag limit needs every
    /// row of the recursion first, and a recursion without end would not end.
    pub(super) fn check_no_limit_over_recursion(
        &self,
        input: &LogicalPlan,
    ) -> Result<()> {
        let correlated_recursion = input.exists(|node| {
            Ok(matches!(node, LogicalPlan::RecursiveQuery(_))
                && self.reads_outer(node)?)
        })?;
        if correlated_recursion {
            return not_impl_err!(
                "Correlated subquery with a LIMIT over a correlated recursive query \
                 cannot be decorrelated"
            );
        }
        Ok(())
    }

    /// The tagged scan of a work table, if `plan` is a scan of one the
    /// recursive term being pushed reads.
    pub(super) fn work_table_scan(&self, plan: &LogicalPlan) -> Option<Tagged> {
        self.work_tables
            .iter()
            .find(|work_table| work_table.is_scanned_by(plan))
            .map(|work_table| work_table.scan.clone())
    }

    /// Whether `plan` scans a work table whose tags it must carry.
    pub(super) fn reads_work_table(&self, plan: &LogicalPlan) -> Result<bool> {
        if self.work_tables.is_empty() {
            return Ok(false);
        }
        plan.exists(|node| Ok(self.work_table_scan(node).is_some()))
    }
}

/// Whether every row `recursive_term` makes for a tag derives from a row of
/// `work_table` with that tag, so that the recursion of an outer value ends
/// when its previous iteration made no row, as it does per outer row.
///
/// A branch that does not read the work table, an aggregate without `GROUP
/// BY` or the preserved side of an outer join without it would make rows
/// for every outer value at each iteration. A `LATERAL` item reading the
/// work table would read it untagged.
fn tags_come_from(recursive_term: &LogicalPlan, work_table: &WorkTable) -> Result<bool> {
    let reads =
        |plan: &LogicalPlan| plan.exists(|node| Ok(work_table.is_scanned_by(node)));
    if work_table.is_scanned_by(recursive_term) {
        return Ok(true);
    }
    if !reads(recursive_term)? {
        return Ok(false);
    }
    let from = |plan: &LogicalPlan| tags_come_from(plan, work_table);
    match recursive_term {
        LogicalPlan::Projection(_)
        | LogicalPlan::Filter(_)
        | LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_)
        | LogicalPlan::Distinct(_)
        | LogicalPlan::Window(_)
        | LogicalPlan::Unnest(_) => from(recursive_term.inputs()[0]),
        LogicalPlan::Aggregate(aggregate) => {
            Ok(!aggregate.group_expr.is_empty() && from(&aggregate.input)?)
        }
        LogicalPlan::Join(join) => {
            if lateral_side(&join.right).is_some() && reads(&join.right)? {
                return Ok(false);
            }
            let (left, right) = (from(&join.left)?, from(&join.right)?);
            Ok(match join.join_type {
                JoinType::Inner => left || right,
                JoinType::Left
                | JoinType::LeftSemi
                | JoinType::LeftAnti
                | JoinType::LeftMark
                | JoinType::LeftSingle => left,
                JoinType::Right
                | JoinType::RightSemi
                | JoinType::RightAnti
                | JoinType::RightMark
                | JoinType::RightSingle => right,
                JoinType::Full => left && right,
            })
        }
        LogicalPlan::Union(union) => {
            for input in &union.inputs {
                if !from(input)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// `term`, the tagged form of `original`, projected to the columns of
/// `original` and then the tags, named `{tag_alias}_{i}`: both terms of
/// the recursive query have this schema.
fn with_named_tags(
    original: &LogicalPlan,
    term: Tagged,
    tag_alias: &str,
) -> Result<Tagged> {
    let mut exprs: Vec<Expr> = original
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let names: Vec<String> = (0..term.tags.len())
        .map(|i| format!("{tag_alias}_{i}"))
        .collect();
    exprs.extend(
        term.tag_exprs()
            .into_iter()
            .zip(&names)
            .map(|(tag, name)| tag.alias(name)),
    );
    Ok(Tagged {
        plan: LogicalPlanBuilder::from(term.plan)
            .project(exprs)?
            .build()?,
        tags: names.into_iter().map(Column::new_unqualified).collect(),
        unique: term.unique,
        non_null_tags: term.non_null_tags,
    })
}

/// Whether a subquery expression inside `plan` holds a node `is_match`
/// accepts: such nodes are met when walking into subqueries, and not
/// otherwise.
fn scans_within_subqueries(
    plan: &LogicalPlan,
    is_match: impl Fn(&LogicalPlan) -> bool,
) -> Result<bool> {
    let mut everywhere = 0;
    plan.apply_with_subqueries(|node| {
        everywhere += usize::from(is_match(node));
        Ok(TreeNodeRecursion::Continue)
    })?;
    let mut outside_subqueries = 0;
    plan.apply(|node| {
        outside_subqueries += usize::from(is_match(node));
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(everywhere > outside_subqueries)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion_common::Result;
    use datafusion_expr::{LogicalPlan, LogicalPlanBuilder, TableSource, TableType};
    use datafusion_expr::{col, lit};

    use crate::fork_test_util::{outer, pushed, table};

    /// The work table the SQL planner scans in a recursive term.
    #[derive(Debug)]
    struct WorkTableSource(SchemaRef);

    impl TableSource for WorkTableSource {
        fn schema(&self) -> SchemaRef {
            Arc::clone(&self.0)
        }

        fn table_type(&self) -> TableType {
            TableType::Temporary
        }
    }

    fn work_table(name: &str) -> Result<LogicalPlanBuilder> {
        let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        LogicalPlanBuilder::scan(name, Arc::new(WorkTableSource(Arc::new(schema))), None)
    }

    /// `WITH RECURSIVE r(a) AS (SELECT 1 UNION [ALL] recursive_term)`.
    fn recursive_from_one(
        recursive_term: LogicalPlan,
        distinct: bool,
    ) -> Result<LogicalPlan> {
        LogicalPlanBuilder::empty(true)
            .project([lit(1).alias("a")])?
            .to_recursive_query("r".to_string(), recursive_term, distinct)?
            .build()
    }

    /// `WITH RECURSIVE r(a) AS (SELECT o.k UNION SELECT a - 1 FROM r WHERE a > 1)`
    fn countdown_from_outer_key() -> Result<LogicalPlan> {
        let recursive_term = work_table("r")?
            .filter(col("r.a").gt(lit(1)))?
            .project([(col("r.a") - lit(1)).alias("a")])?
            .build()?;
        LogicalPlanBuilder::empty(true)
            .project([outer("k").alias("a")])?
            .to_recursive_query("r".to_string(), recursive_term, true)?
            .build()
    }

    #[test]
    fn the_work_table_carries_the_tags_of_the_static_rows() -> Result<()> {
        insta::assert_snapshot!(pushed(countdown_from_outer_key()?)?, @r"
            RecursiveQuery: is_distinct=true
              Projection: a, __domain_instance_3.__domain_1_0 AS __domain_tag_2_0
                LeftSemi Join:  Filter: __domain_instance_3.__domain_1_0 IS NOT DISTINCT FROM __domain_instance_4.__domain_1_0
                  Projection: __domain_instance_3.__domain_1_0 AS a, __domain_instance_3.__domain_1_0
                    Cross Join:
                      EmptyRelation: rows=1
                      SubqueryAlias: __domain_instance_3
                        Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                          Projection: o.k AS __domain_1_0
                            TableScan: o
                  SubqueryAlias: __domain_instance_4
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.k AS __domain_1_0
                        TableScan: o
              Projection: a, r.__domain_tag_2_0 AS __domain_tag_2_0
                Projection: r.a - Int32(1) AS a, r.__domain_tag_2_0
                  Filter: r.a > Int32(1)
                    TableScan: r
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn a_recursive_term_reading_outer_columns_reads_them_from_the_work_table()
    -> Result<()> {
        let recursive_term = work_table("r")?
            .join_on(
                table("t")?.build()?,
                datafusion_expr::JoinType::Inner,
                [col("t.k").eq(col("r.a"))],
            )?
            .filter(col("t.v").lt(outer("v")))?
            .project([col("t.v").alias("a")])?
            .build()?;
        let query = recursive_from_one(recursive_term, false)?;
        insta::assert_snapshot!(pushed(query)?, @r"
            RecursiveQuery: is_distinct=false
              Projection: a, __domain_instance_3.__domain_1_0 AS __domain_tag_2_0
                LeftSemi Join:  Filter: __domain_instance_3.__domain_1_0 IS NOT DISTINCT FROM __domain_instance_4.__domain_1_0
                  Cross Join:
                    Projection: Int32(1) AS a
                      EmptyRelation: rows=1
                    SubqueryAlias: __domain_instance_3
                      Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                        Projection: o.v AS __domain_1_0
                          TableScan: o
                  SubqueryAlias: __domain_instance_4
                    Aggregate: groupBy=[[__domain_1_0]], aggr=[[]]
                      Projection: o.v AS __domain_1_0
                        TableScan: o
              Projection: a, r.__domain_tag_2_0 AS __domain_tag_2_0
                Projection: t.v AS a, r.__domain_tag_2_0
                  Filter: t.v < r.__domain_tag_2_0
                    Inner Join:  Filter: t.k = r.a
                      TableScan: r
                      TableScan: t
            tags: [__domain_tag_2_0]; unique: false; non-NULL tags: false
            ");
        Ok(())
    }

    #[test]
    fn a_recursive_term_with_a_branch_not_reading_the_work_table_is_refused() -> Result<()>
    {
        let from_work_table = work_table("r")?
            .filter(col("r.a").lt(outer("v")))?
            .build()?;
        let constant = LogicalPlanBuilder::empty(true)
            .project([lit(10).alias("a")])?
            .build()?;
        let recursive_term = LogicalPlanBuilder::from(from_work_table)
            .union(constant)?
            .build()?;
        let query = recursive_from_one(recursive_term, true)?;
        let error = pushed(query).unwrap_err().strip_backtrace();
        assert!(
            error.contains("makes rows without reading its previous rows"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn a_work_table_read_in_a_subquery_is_refused() -> Result<()> {
        let in_subquery = Arc::new(work_table("r")?.build()?);
        let recursive_term = table("t")?
            .filter(datafusion_expr::expr_fn::exists(Arc::clone(&in_subquery)))?
            .filter(col("t.v").lt(outer("v")))?
            .project([col("t.v").alias("a")])?
            .build()?;
        let query = recursive_from_one(recursive_term, false)?;
        let error = pushed(query).unwrap_err().strip_backtrace();
        assert!(
            error.contains("reading itself in a subquery cannot be decorrelated"),
            "{error}"
        );
        Ok(())
    }
}
