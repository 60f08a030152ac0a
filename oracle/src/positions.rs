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

//! Random queries with subqueries nested in every position a query has,
//! for DataFusion alone.
//!
//! [`crate::generator`] writes only what SQLite answers alike, so that the
//! two engines can be compared. This one writes what SQLite has no form
//! for (`UNNEST`, `ARRAY(...)`, `LATERAL`, row-valued `IN`, `ANY` / `ALL`)
//! and places a subquery, up to three levels deep, in each position of a
//! query: the `SELECT` list, `WHERE`, `HAVING`, the `ON` of an inner or
//! outer join, `ORDER BY`, `GROUP BY`, either branch of a set operation, a
//! `LATERAL` derived table, the array of an `UNNEST` and a row of
//! `VALUES`. Each level reads columns of any level around it.
//!
//! Its queries have no oracle: some are refused (a shape the fork does not
//! run), some fail at run time (a scalar subquery that returns two rows).
//! What the test built on it asserts is that each query answers with rows
//! or with an error a user can read, never a panic, an internal error, or
//! an error that names a column the planner made up.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::tables::{COLUMNS, TABLES};

/// Where the query places its subquery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Position {
    SelectList,
    Where,
    Having,
    JoinOn,
    OrderBy,
    GroupBy,
    SetOperation,
    Lateral,
    Unnest,
    Values,
}

pub const POSITIONS: [Position; 10] = [
    Position::SelectList,
    Position::Where,
    Position::Having,
    Position::JoinOn,
    Position::OrderBy,
    Position::GroupBy,
    Position::SetOperation,
    Position::Lateral,
    Position::Unnest,
    Position::Values,
];

/// A name in scope and the columns it can be read by.
#[derive(Debug, Clone)]
struct Source {
    name: String,
    columns: &'static [&'static str],
}

/// The columns of a table, and of a group (its key only).
const TABLE_COLUMNS: &[&str] = &COLUMNS;
const KEY_ONLY: &[&str] = &["k"];
/// A derived table of ours has the one column `c`.
const DERIVED_COLUMNS: &[&str] = &["c"];

pub struct PositionGenerator {
    rng: StdRng,
    names: usize,
}

/// The levels of subqueries a query holds at most.
pub const MAX_DEPTH: usize = 3;

impl PositionGenerator {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            names: 0,
        }
    }

    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.rng
    }

    /// A query of one column `c` with a subquery at a random position,
    /// nested `MAX_DEPTH` levels at most.
    pub fn query(&mut self) -> (Position, String) {
        let position = POSITIONS[self.rng.random_range(0..POSITIONS.len())];
        (position, self.query_at(position))
    }

    /// A query with a subquery (of nested subqueries, at random positions)
    /// at `position`.
    pub fn query_at(&mut self, position: Position) -> String {
        let depth = self.rng.random_range(1..=MAX_DEPTH);
        self.select(&[], position, depth, false)
    }

    /// `SELECT ... AS c FROM ...` under the sources `outer`, with a
    /// subquery of `depth` levels at most at `position`; with `one_row`, an
    /// aggregate without `GROUP BY` (where the position allows it).
    fn select(
        &mut self,
        outer: &[Source],
        position: Position,
        depth: usize,
        one_row: bool,
    ) -> String {
        let inner = depth.saturating_sub(1);
        let (source, mut from) = self.table_source();
        let mut scope = outer.to_vec();
        scope.push(source.clone());
        let name = source.name.clone();
        match position {
            Position::JoinOn => {
                let (right, right_from) = self.table_source();
                let kind = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]
                    [self.rng.random_range(0..4)];
                let mut both = scope.clone();
                both.push(right.clone());
                // An outer join's condition reads one side, or both
                let on_scope = if kind == "JOIN" || self.rng.random_bool(0.3) {
                    both.clone()
                } else if self.rng.random_bool(0.5) {
                    scope.clone()
                } else {
                    let mut right_only = outer.to_vec();
                    right_only.push(right.clone());
                    right_only
                };
                let condition = self.subquery_predicate(&on_scope, inner);
                from = format!(
                    "{from} {kind} {right_from} ON {name}.k = {}.k AND {condition}",
                    right.name
                );
                scope = both;
            }
            Position::Lateral => {
                let one_row = self.rng.random_bool(0.5);
                let body = self.select_any(&scope, inner, one_row);
                let lateral = self.fresh("l");
                from = if self.rng.random_bool(0.5) {
                    format!("{from} CROSS JOIN LATERAL ({body}) {lateral}")
                } else {
                    format!("{from} LEFT JOIN LATERAL ({body}) {lateral} ON true")
                };
                scope.push(Source {
                    name: lateral,
                    columns: DERIVED_COLUMNS,
                });
            }
            Position::Unnest => {
                // An array of the row's columns and a subquery, unnested
                // beside the table
                let element = self.subquery_value(&scope, inner);
                let column = self.column(&scope);
                let unnested = self.fresh("u");
                from = format!(
                    "{from} CROSS JOIN unnest(make_array({column}, {element})) AS {unnested}(c)"
                );
                scope.push(Source {
                    name: unnested,
                    columns: DERIVED_COLUMNS,
                });
            }
            Position::Values => {
                let first = self.subquery_value(&scope, inner);
                let second = self.value(&scope, 0);
                let values = self.fresh("x");
                from = format!(
                    "{from} CROSS JOIN LATERAL (VALUES ({first}), ({second})) AS {values}(c)"
                );
                scope.push(Source {
                    name: values,
                    columns: DERIVED_COLUMNS,
                });
            }
            _ => {}
        }
        // Nested subqueries elsewhere, now and then
        let filter = if position == Position::Where {
            format!(" WHERE {}", self.subquery_predicate(&scope, inner))
        } else if self.rng.random_bool(0.4) {
            let extra = self.rng.random_range(0..=inner);
            format!(" WHERE {}", self.predicate(&scope, extra))
        } else {
            String::new()
        };
        match position {
            Position::Having => {
                let mut grouped = outer.to_vec();
                grouped.push(Source {
                    name: name.clone(),
                    columns: KEY_ONLY,
                });
                let having = self.subquery_predicate(&grouped, inner);
                let value = if self.rng.random_bool(0.5) {
                    "count(*)".to_string()
                } else {
                    format!("{name}.k")
                };
                format!(
                    "SELECT {value} AS c FROM {from}{filter} GROUP BY {name}.k HAVING {having}"
                )
            }
            Position::GroupBy => {
                let key = self.subquery_value(&scope, inner);
                let key = format!("({key}) + 0");
                let value = ["count(*)", "min(c)", "max(c)"][self.rng.random_range(0..3)];
                // `c` is the key; min(c) reads it as a column of the group
                if value == "count(*)" {
                    format!("SELECT count(*) AS c FROM {from}{filter} GROUP BY {key}")
                } else {
                    format!(
                        "SELECT {value} AS c FROM (SELECT {key} AS c FROM {from}{filter}) g GROUP BY c"
                    )
                }
            }
            Position::OrderBy => {
                let order = self.subquery_value(&scope, inner);
                let value = self.column(&scope);
                let limit = if one_row || self.rng.random_bool(0.5) {
                    " LIMIT 1"
                } else {
                    ""
                };
                // `+ 0`: a bare integer would name a column by its position
                format!(
                    "SELECT {value} AS c FROM {from}{filter} ORDER BY ({order}) + 0{limit}"
                )
            }
            Position::SetOperation => {
                let operator = ["UNION ALL", "UNION", "EXCEPT", "INTERSECT"]
                    [self.rng.random_range(0..4)];
                let left = self.value(&scope, 0);
                let (right, right_from) = self.table_source();
                let mut right_scope = outer.to_vec();
                right_scope.push(right);
                let right_value = self.value(&right_scope, 0);
                let right_filter = self.subquery_predicate(&right_scope, inner);
                let body = format!(
                    "SELECT {left} AS c FROM {from}{filter} {operator} SELECT {right_value} FROM {right_from} WHERE {right_filter}"
                );
                if one_row {
                    let set = self.fresh("s");
                    format!("SELECT max({set}.c) AS c FROM ({body}) {set}")
                } else {
                    body
                }
            }
            _ => {
                let value = if position == Position::SelectList {
                    self.subquery_value(&scope, inner)
                } else {
                    self.value(&scope, 0)
                };
                if one_row {
                    let aggregate =
                        ["max", "min", "sum", "count"][self.rng.random_range(0..4)];
                    format!("SELECT {aggregate}({value}) AS c FROM {from}{filter}")
                } else {
                    format!("SELECT {value} AS c FROM {from}{filter}")
                }
            }
        }
    }

    /// A query of one column at a random position, `depth` levels of
    /// subqueries at most.
    fn select_any(&mut self, outer: &[Source], depth: usize, one_row: bool) -> String {
        let position = if depth == 0 {
            // No subquery inside: positions that need none
            [Position::SelectList, Position::OrderBy, Position::GroupBy]
                [self.rng.random_range(0..3)]
        } else {
            POSITIONS[self.rng.random_range(0..POSITIONS.len())]
        };
        if depth == 0 {
            self.plain_select(outer, position, one_row)
        } else {
            self.select(outer, position, depth, one_row)
        }
    }

    /// A query of one column with no subquery, correlated to `outer`.
    fn plain_select(
        &mut self,
        outer: &[Source],
        position: Position,
        one_row: bool,
    ) -> String {
        let (source, from) = self.table_source();
        let mut scope = outer.to_vec();
        scope.push(source.clone());
        let value = self.value(&scope, 0);
        let filter = if self.rng.random_bool(0.8) {
            format!(" WHERE {}", self.predicate(&scope, 0))
        } else {
            String::new()
        };
        match position {
            Position::GroupBy if !one_row => format!(
                "SELECT {}.k AS c FROM {from}{filter} GROUP BY {}.k",
                source.name, source.name
            ),
            Position::OrderBy => {
                let order = self.value(&scope, 0);
                format!(
                    "SELECT {value} AS c FROM {from}{filter} ORDER BY ({order}) + 0 LIMIT 1"
                )
            }
            _ if one_row => {
                let aggregate =
                    ["max", "min", "sum", "count"][self.rng.random_range(0..4)];
                format!("SELECT {aggregate}({value}) AS c FROM {from}{filter}")
            }
            _ => format!("SELECT {value} AS c FROM {from}{filter}"),
        }
    }

    /// A value that holds a subquery (of `depth` levels at most) where
    /// `depth` allows one, else a plain value.
    fn subquery_value(&mut self, scope: &[Source], depth: usize) -> String {
        self.value_of(scope, depth, true)
    }

    /// A predicate that holds a subquery where `depth` allows one.
    fn subquery_predicate(&mut self, scope: &[Source], depth: usize) -> String {
        self.predicate_of(scope, depth, true)
    }

    fn value(&mut self, scope: &[Source], depth: usize) -> String {
        self.value_of(scope, depth, false)
    }

    fn predicate(&mut self, scope: &[Source], depth: usize) -> String {
        self.predicate_of(scope, depth, false)
    }

    /// An integer expression over `scope`, possibly NULL.
    fn value_of(&mut self, scope: &[Source], depth: usize, subquery: bool) -> String {
        if depth == 0 || !(subquery || self.rng.random_bool(0.2)) {
            return match self.rng.random_range(0..10) {
                0..=5 => self.column(scope),
                6 => self.literal(),
                7 => format!("({} + {})", self.column(scope), self.literal()),
                8 => format!("COALESCE({}, {})", self.column(scope), self.literal()),
                _ => "CAST(NULL AS INT)".to_string(),
            };
        }
        let inner = depth - 1;
        match self.rng.random_range(0..12) {
            // One row by construction
            0..=4 => format!("({})", self.select_any(scope, inner, true)),
            // Any number of rows: more than one fails at run time
            5 => format!("({})", self.select_any(scope, inner, false)),
            6 => format!(
                "cardinality(ARRAY({}))",
                self.select_any(scope, inner, false)
            ),
            7 => {
                let set = self.fresh("s");
                format!(
                    "(SELECT count({set}.c) FROM ({}) {set})",
                    self.select_any(scope, inner, false)
                )
            }
            8 => {
                let element = self.value_of(scope, inner, true);
                let unnested = self.fresh("u");
                format!(
                    "(SELECT max({unnested}.c) FROM unnest(make_array({}, {element})) AS {unnested}(c))",
                    self.column(scope)
                )
            }
            9 => {
                let row = self.value_of(scope, inner, true);
                let values = self.fresh("x");
                format!(
                    "(SELECT min({values}.c) FROM (VALUES ({}), ({row})) AS {values}(c))",
                    self.column(scope)
                )
            }
            10 => format!(
                "(CASE WHEN {} THEN {} ELSE {} END)",
                self.predicate_of(scope, depth, true),
                self.column(scope),
                self.literal()
            ),
            _ => format!(
                "({} + {})",
                self.value_of(scope, depth, true),
                self.column(scope)
            ),
        }
    }

    /// A boolean expression over `scope`, possibly NULL.
    fn predicate_of(&mut self, scope: &[Source], depth: usize, subquery: bool) -> String {
        if depth == 0 || !(subquery || self.rng.random_bool(0.2)) {
            let op = ["=", "<>", "<", ">=", "IS NOT DISTINCT FROM"]
                [self.rng.random_range(0..5)];
            return format!("({} {op} {})", self.column(scope), self.value(scope, 0));
        }
        let inner = depth - 1;
        match self.rng.random_range(0..12) {
            0..=1 => format!("(EXISTS ({}))", self.select_any(scope, inner, false)),
            2 => format!("(NOT EXISTS ({}))", self.select_any(scope, inner, false)),
            3..=4 => format!(
                "({} IN ({}))",
                self.value(scope, 0),
                self.select_any(scope, inner, false)
            ),
            5 => format!(
                "({} NOT IN ({}))",
                self.value(scope, 0),
                self.select_any(scope, inner, false)
            ),
            6 => {
                let op = ["=", "<>", "<", ">="][self.rng.random_range(0..4)];
                let quantifier = if self.rng.random_bool(0.5) {
                    "ANY"
                } else {
                    "ALL"
                };
                // Each ANY / ALL is planned as several copies of its
                // subquery: one level inside it at most
                let body = self.select_any(scope, inner.min(1), false);
                format!("({} {op} {quantifier} ({body}))", self.value(scope, 0))
            }
            7 => {
                // A row compared with a subquery of two columns
                let (source, from) = self.table_source();
                let mut inner_scope = scope.to_vec();
                inner_scope.push(source.clone());
                let filter = self.predicate_of(&inner_scope, inner, true);
                format!(
                    "(({}, {}) IN (SELECT {}.k, {}.v FROM {from} WHERE {filter}))",
                    self.column(scope),
                    self.value(scope, 0),
                    source.name,
                    source.name
                )
            }
            8 => format!(
                "({} {} {})",
                self.column(scope),
                ["=", "<", ">="][self.rng.random_range(0..3)],
                self.value_of(scope, depth, true)
            ),
            9 => format!("(NOT {})", self.predicate_of(scope, depth, true)),
            _ => {
                let connective = if self.rng.random_bool(0.5) {
                    "AND"
                } else {
                    "OR"
                };
                format!(
                    "({} {connective} {})",
                    self.predicate_of(scope, depth, true),
                    self.predicate(scope, 0)
                )
            }
        }
    }

    /// A column of a source in `scope`: the innermost most often, else any
    /// enclosing one (a correlation).
    fn column(&mut self, scope: &[Source]) -> String {
        let Some(innermost) = scope.last() else {
            return self.literal();
        };
        let source = if self.rng.random_bool(0.5) {
            innermost
        } else {
            &scope[self.rng.random_range(0..scope.len())]
        };
        let column = source.columns[self.rng.random_range(0..source.columns.len())];
        format!("{}.{column}", source.name)
    }

    /// A table under a fresh alias.
    fn table_source(&mut self) -> (Source, String) {
        let table = TABLES[self.rng.random_range(0..TABLES.len())];
        let name = self.fresh("a");
        let from = format!("{table} {name}");
        (
            Source {
                name,
                columns: TABLE_COLUMNS,
            },
            from,
        )
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn literal(&mut self) -> String {
        self.rng.random_range(-1..=4).to_string()
    }
}
