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

//! A subquery's body evaluated for every outer value it reads, ready to be
//! joined back to the plan it is correlated to.
//!
//! Every join back (scalar, `EXISTS`, `IN`) joins the same thing: the body
//! tagged by the [dependent join](crate::dependent_join), its columns
//! renamed apart under a fresh alias, on the outer columns equal to their
//! tags. Only the join type and the expression that reads the answer
//! differ.

use datafusion_common::alias::AliasGenerator;
use datafusion_common::{Column, NullEquality, Result, internal_datafusion_err};
use datafusion_expr::logical_plan::{JoinType, Projection, SubqueryAlias};
use datafusion_expr::subquery_exprs::contains_subquery;
use datafusion_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit};

use crate::correlation::correlated_in_plan;
use crate::dependent_join::{DependentJoin, Domain, Tagged};
use crate::subquery_uniqueness::unique_on;

/// A subquery split into the projections and aliases at its top (which do
/// not change its rows) and the rest.
pub(super) struct Split<'a> {
    /// Top first.
    pub(super) top: Vec<&'a LogicalPlan>,
    pub(super) body: &'a LogicalPlan,
}

pub(super) fn split_top(plan: &LogicalPlan) -> Split<'_> {
    let mut top = vec![];
    let mut body = plan;
    while let LogicalPlan::Projection(Projection { input, .. })
    | LogicalPlan::SubqueryAlias(SubqueryAlias { input, .. }) = body
    {
        // A subquery in a projection reads the columns below it: it stays
        // in the body, where they are
        if body.expressions().iter().any(contains_subquery) {
            break;
        }
        top.push(body);
        body = input;
    }
    Split { top, body }
}

/// The body of a subquery evaluated for every outer value it reads (or as
/// it is, if it reads none), its columns renamed apart under a fresh alias.
pub(super) struct Decorrelated {
    pub(super) plan: LogicalPlan,
    pub(super) alias: String,
    /// Each column of the tagged body, and its name under the alias.
    pub(super) names: Vec<(Column, String)>,
    /// The outer columns of the input, and the tags standing for them.
    pub(super) outer: Vec<Column>,
    pub(super) tags: Vec<Column>,
    pub(super) unique: bool,
    /// See [`Tagged::non_null_tags`].
    pub(super) non_null_tags: bool,
}

/// `body` tagged with the outer values it reads of `outer_rows`, and those
/// outer columns.
///
/// `outer_rows` is the input of the operator the subquery is in, before any
/// other subquery of that operator was joined to it: the outer columns are
/// its columns, and the joins of the other subqueries add no values of
/// them. Taking the domain from the input with those joins made each
/// subquery's plan hold the plans of all joined before it, doubling the
/// plan with each subquery of one expression.
pub(super) fn tag_body(
    body: &LogicalPlan,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(Tagged, Vec<Column>)> {
    let (tagged, outer, _) = tag_body_crossing(body, outer_rows, alias_generator)?;
    Ok((tagged, outer))
}

/// [`tag_body`], and whether the body crossed a part of itself with the
/// domain ([`DependentJoin::crossed_domain`]).
fn tag_body_crossing(
    body: &LogicalPlan,
    outer_rows: &LogicalPlan,
    alias_generator: &AliasGenerator,
) -> Result<(Tagged, Vec<Column>, bool)> {
    let outer = correlated_in_plan(body, outer_rows)?;
    if outer.is_empty() {
        let tagged = Tagged {
            plan: body.clone(),
            tags: vec![],
            unique: body.max_rows().is_some_and(|rows| rows <= 1),
            non_null_tags: true,
        };
        return Ok((tagged, outer, false));
    }
    let domain = Domain::new(outer_rows, outer.clone(), alias_generator)?;
    let dependent_join = DependentJoin::new(&domain, alias_generator);
    let tagged = dependent_join.push(body)?;
    Ok((tagged, outer, dependent_join.crossed_domain()))
}

impl Decorrelated {
    /// See [`tag_body`] for `outer_rows`.
    pub(super) fn new(
        body: &LogicalPlan,
        outer_rows: &LogicalPlan,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        let (tagged, outer) = tag_body(body, outer_rows, alias_generator)?;
        Self::aliased(tagged, outer, alias_generator)
    }

    /// [`Self::new`] for a subquery whose rows matter only by whether one
    /// exists (`EXISTS`).
    ///
    /// Where the body crossed a part of itself with the domain, each outer
    /// value may carry as many rows as that part has (`EXISTS (SELECT 1 FROM
    /// b WHERE b.x = o.x AND EXISTS (... o.y ...))` crosses `b` with the
    /// values of `(o.x, o.y)`). One row per tag is enough: deduplicated, the
    /// join back finds each outer row's one match, instead of passing every
    /// row of its tag.
    pub(super) fn new_for_existence(
        body: &LogicalPlan,
        outer_rows: &LogicalPlan,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        let (mut tagged, outer, crossed_domain) =
            tag_body_crossing(body, outer_rows, alias_generator)?;
        if crossed_domain && !tagged.unique {
            tagged.plan = LogicalPlanBuilder::from(tagged.plan)
                .aggregate(
                    tagged.tags.iter().cloned().map(Expr::Column),
                    Vec::<Expr>::new(),
                )?
                .build()?;
            tagged.unique = true;
        }
        Self::aliased(tagged, outer, alias_generator)
    }

    /// `tagged` under a fresh alias, each column renamed apart (a body that
    /// joins tables may hold two columns of one name).
    pub(super) fn aliased(
        mut tagged: Tagged,
        outer: Vec<Column>,
        alias_generator: &AliasGenerator,
    ) -> Result<Self> {
        // A body without columns (`EXISTS (SELECT outer.c)`, whose projection
        // is at the top) still has rows: one column of its own to join
        if tagged.plan.schema().fields().is_empty() {
            tagged.plan = LogicalPlanBuilder::from(tagged.plan)
                .project([lit(true).alias("__row")])?
                .build()?;
        }
        let alias = alias_generator.next("__subquery");
        let names: Vec<(Column, String)> = tagged
            .plan
            .schema()
            .columns()
            .into_iter()
            .enumerate()
            .map(|(index, column)| (column, format!("{alias}_{index}")))
            .collect();
        let plan = LogicalPlanBuilder::from(tagged.plan)
            .project(
                names
                    .iter()
                    .map(|(column, name)| Expr::Column(column.clone()).alias(name)),
            )?
            .alias(alias.clone())?
            .build()?;
        let renamed = |column: &Column| -> Result<Column> {
            let (_, name) = names
                .iter()
                .find(|(original, _)| original == column)
                .ok_or_else(|| {
                    internal_datafusion_err!(
                        "No tag column {column} in the decorrelated subquery"
                    )
                })?;
            Ok(Column::new(Some(alias.clone()), name))
        };
        let tags = tagged
            .tags
            .iter()
            .map(renamed)
            .collect::<Result<Vec<_>>>()?;
        // Under NULL-safe equality a NULL value is a value: only a plan that
        // is unique on non-NULL tags is known to be unique
        let unique = tagged.unique
            || ((tagged.non_null_tags
                || tags.iter().all(|tag| !nullable_column(&plan, tag)))
                && unique_on(&plan, &tags));
        Ok(Self {
            plan,
            alias,
            names,
            outer,
            tags,
            unique,
            non_null_tags: tagged.non_null_tags,
        })
    }

    /// `input` joined to this on the outer columns, NULL-safe where it
    /// matters ([`outer_key_equality`]).
    pub(super) fn join(
        self,
        input: &LogicalPlan,
        join_type: JoinType,
        filter: Option<Expr>,
    ) -> Result<LogicalPlan> {
        // An uncorrelated subquery joins every row
        let filter = match filter {
            None if self.outer.is_empty() => Some(lit(true)),
            filter => filter,
        };
        let null_equality = outer_key_equality(
            input,
            &self.outer,
            &self.plan,
            &self.tags,
            self.non_null_tags,
        );
        LogicalPlanBuilder::from(input.clone())
            .join_detailed(
                self.plan,
                join_type,
                (self.outer, self.tags),
                filter,
                null_equality,
            )?
            .build()
    }

    /// A column of the tagged body, as the join outputs it.
    pub(super) fn column(&self, column: &Column) -> Result<Expr> {
        let (_, name) = self
            .names
            .iter()
            .find(|(original, _)| original == column)
            .ok_or_else(|| {
                internal_datafusion_err!(
                    "No column {column} in the decorrelated subquery"
                )
            })?;
        Ok(Expr::Column(Column::new(Some(self.alias.clone()), name)))
    }

    /// The mark a mark join adds.
    pub(super) fn mark(&self) -> Expr {
        Expr::Column(Column::new(Some(self.alias.clone()), "mark"))
    }
}

/// How outer columns of `input` meet the tags of `tagged` standing for them.
///
/// NULL-safe: the subquery run for a NULL outer value has an answer of its
/// own, tagged NULL. Where no pair of an outer column and its tag can both be
/// NULL, plain equality gives the same rows, and is the join a user would
/// write by hand (and the one the physical join serves best).
pub(super) fn outer_key_equality(
    input: &LogicalPlan,
    outer: &[Column],
    tagged: &LogicalPlan,
    tags: &[Column],
    non_null_tags: bool,
) -> NullEquality {
    let no_null_pair = non_null_tags
        || outer.iter().zip(tags).all(|(outer, tag)| {
            !nullable_column(input, outer) || !nullable_column(tagged, tag)
        });
    if no_null_pair {
        NullEquality::NullEqualsNothing
    } else {
        NullEquality::NullEqualsNull
    }
}

/// Whether `column` of `plan` may hold NULL (true where it is not found).
fn nullable_column(plan: &LogicalPlan, column: &Column) -> bool {
    !plan
        .schema()
        .qualified_field_from_column(column)
        .is_ok_and(|(_, field)| !field.is_nullable())
}
