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

//! Random queries with subqueries, spelled for DataFusion and for SQLite.
//!
//! The generator writes SQL whose answer both engines define alike:
//!
//! - subqueries in `WHERE`, the `SELECT` list, `HAVING`, `ORDER BY` and a
//!   `ON` of an inner, left, right or full join (an outer join's over one
//!   side); `EXISTS`, `NOT EXISTS`, `IN`, `NOT IN`, `ANY`, `ALL` and
//!   scalar subqueries, nested, correlated by equality and non-equality to
//!   any enclosing query, over correlated derived tables, and under the
//!   name of the outer query's table (an unaliased self-reference, which
//!   hides the outer table inside the subquery);
//! - a scalar subquery only as an aggregate without `GROUP BY` (SQLite
//!   returns the first of two rows where DataFusion fails), and EXISTS and
//!   IN over aggregates, with and without `GROUP BY`; in a grouped query,
//!   such an aggregate plus an aggregate of the grouped query's columns
//!   only, which SQL makes an aggregate of that query;
//! - integers only, no division (integer division differs), no `LIMIT`
//!   (ties), and results compared as multisets (NULL ordering differs);
//!   where the query orders, its key is selected too, and the test checks
//!   the fork's order against it;
//! - SQLite has no `ANY` / `ALL`: there, `x op ANY (SELECT e FROM f WHERE
//!   p)` is the standard's definition, `CASE WHEN EXISTS (SELECT 1 FROM f
//!   WHERE p AND x op e) THEN 1 WHEN EXISTS (SELECT 1 FROM f WHERE p AND (x
//!   op e) IS NULL) THEN NULL ELSE 0 END` (and `ALL` alike), the
//!   subquery's table under an alias of its own so that `x` keeps reading
//!   the outer one.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::tables::{COLUMNS, TABLES};

/// One query, as each engine reads it.
#[derive(Debug, Clone)]
pub struct Sql {
    pub datafusion: String,
    pub sqlite: String,
}

impl Sql {
    fn both(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            datafusion: text.clone(),
            sqlite: text,
        }
    }
}

/// `format!` over [`Sql`] pieces: the same template for both engines.
macro_rules! sql {
    ($template:literal $(, $piece:expr)* $(,)?) => {
        Sql {
            datafusion: format!($template $(, $piece.datafusion)*),
            sqlite: format!($template $(, $piece.sqlite)*),
        }
    };
}

/// A table or derived table in a `FROM`, by the name its columns are read
/// under in each engine's text.
#[derive(Debug, Clone)]
struct Source {
    datafusion: String,
    sqlite: String,
    /// The source of a grouped query, in `HAVING`: only `k` may be read.
    grouped: bool,
}

/// The sources of the enclosing queries, outermost first.
#[derive(Debug, Clone, Default)]
struct Scope {
    sources: Vec<Source>,
}

impl Scope {
    fn with(&self, source: Source) -> Self {
        let mut sources = self.sources.clone();
        sources.push(source);
        Self { sources }
    }

    /// The sources a column reference can reach, innermost first: an inner
    /// source hides an outer one of the same name.
    fn visible(&self) -> Vec<&Source> {
        let mut visible: Vec<&Source> = vec![];
        for source in self.sources.iter().rev() {
            if !visible
                .iter()
                .any(|seen| seen.datafusion == source.datafusion)
            {
                visible.push(source);
            }
        }
        visible
    }

    fn innermost(&self) -> Option<&Source> {
        self.sources.last()
    }
}

/// The shapes of the outer query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Where,
    SelectList,
    Having,
    OrderBy,
    JoinOn,
    /// A table joined to another on its key, compared with an aggregate of
    /// the table's rows of that key: TPC-H q17's shape, which
    /// `SubqueryToWindow` computes as a window where both read the same rows.
    SameRows,
}

pub struct Generator {
    rng: StdRng,
    names: usize,
    /// A table no source may read (the target of an `UPDATE`'s `SET`).
    avoid: Option<&'static str>,
}

const COMPARISONS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];

impl Generator {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            names: 0,
            avoid: None,
        }
    }

    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.rng
    }

    /// A random query of a random shape.
    pub fn query(&mut self) -> (Shape, Sql) {
        let shape = match self.rng.random_range(0..11) {
            0..=3 => Shape::Where,
            4..=5 => Shape::SelectList,
            6..=7 => Shape::Having,
            8 => Shape::OrderBy,
            9 => Shape::JoinOn,
            _ => Shape::SameRows,
        };
        (shape, self.query_of(shape))
    }

    pub fn query_of(&mut self, shape: Shape) -> Sql {
        let (source, from) = self.table_source(false);
        let scope = Scope::default().with(source.clone());
        let name = Sql {
            datafusion: source.datafusion.clone(),
            sqlite: source.sqlite.clone(),
        };
        match shape {
            Shape::Where => {
                let predicate = self.predicate(&scope, 2, 2);
                sql!(
                    "SELECT {}.k AS c0, {}.v AS c1, {}.w AS c2 FROM {} WHERE {}",
                    name,
                    name,
                    name,
                    from,
                    predicate
                )
            }
            Shape::SelectList => {
                let value = self.scalar(&scope, 2);
                let predicate = self.predicate(&scope, 2, 1);
                sql!(
                    "SELECT {}.k AS c0, {} AS c1, {} AS c2 FROM {}",
                    name,
                    value,
                    predicate,
                    from
                )
            }
            Shape::Having => {
                let filter = if self.rng.random_bool(0.5) {
                    let predicate = self.predicate(&scope, 1, 1);
                    sql!(" WHERE {}", predicate)
                } else {
                    Sql::both("")
                };
                let grouped = Scope::default().with(Source {
                    grouped: true,
                    ..source
                });
                let having = self.predicate(&grouped, 2, 1);
                let value = self.scalar(&grouped, 1);
                sql!(
                    "SELECT {}.k AS c0, count(*) AS c1, {} AS c2 FROM {}{} GROUP BY {}.k HAVING {}",
                    name,
                    value,
                    from,
                    filter,
                    name,
                    having
                )
            }
            Shape::OrderBy => {
                // `+ 0`: a bare integer would name a column by its position.
                // The key is selected too, so that the test can check the
                // order of the rows, which the comparison with SQLite (rows
                // as multisets) does not see
                let order = self.scalar(&scope, 2);
                let order = sql!("({} + 0)", order);
                sql!(
                    "SELECT {}.k AS c0, {}.v AS c1, {} AS c2 FROM {} ORDER BY {}",
                    name,
                    name,
                    order,
                    from,
                    order
                )
            }
            Shape::JoinOn => {
                let (right, right_from) = self.aliased_source();
                let right_name = Sql {
                    datafusion: right.datafusion.clone(),
                    sqlite: right.sqlite.clone(),
                };
                let both = scope.with(right.clone());
                // An inner join's ON reads both sides; an outer join's holds
                // the keys and subqueries over one side
                let (kind, on) = if self.rng.random_bool(0.5) {
                    ("JOIN", self.predicate(&both, 2, 1))
                } else {
                    let kinds = ["LEFT JOIN", "RIGHT JOIN", "FULL JOIN"];
                    let kind = kinds[self.rng.random_range(0..kinds.len())];
                    let side = if self.rng.random_bool(0.5) {
                        scope.clone()
                    } else {
                        Scope::default().with(right)
                    };
                    let one_side = self.predicate(&side, 2, 1);
                    let on = sql!("{}.k = {}.k AND {}", name, right_name, one_side);
                    (kind, on)
                };
                sql!(
                    "SELECT {}.k AS c0, {}.v AS c1, {}.k AS c2 FROM {} {} {} ON {}",
                    name,
                    name,
                    right_name,
                    from,
                    Sql::both(kind),
                    right_from,
                    on
                )
            }
            Shape::SameRows => self.same_rows(),
        }
    }

    /// `SELECT ... FROM t a, u b WHERE a.k = b.k AND a.v <op> (SELECT
    /// agg(x.v) FROM t x WHERE x.k = b.k)`, with a predicate on `a` and the
    /// same on `x` (the rows of a key are the same in both), on one of them
    /// only, or on neither, and now and then the subquery correlated to `a`
    /// itself; the aggregate one that repeated rows do not change (`min`,
    /// `max`, `avg`) or one they do (`sum`, `count`).
    fn same_rows(&mut self) -> Sql {
        let (table, other) = (self.table(), self.table());
        let (a, b, x) = (self.fresh("a"), self.fresh("a"), self.fresh("a"));
        let aggregates = ["min", "max", "avg", "sum", "count"];
        let aggregate = aggregates[self.rng.random_range(0..aggregates.len())];
        let op = self.comparison_op();
        let bound = self.literal();
        let (outer_local, inner_local) = match self.rng.random_range(0..4) {
            0 | 1 => (true, true),
            2 => (true, false),
            _ => (false, self.rng.random_bool(0.5)),
        };
        let local = |name: &str, on: bool| {
            if on {
                format!(" AND {name}.w > {bound}")
            } else {
                String::new()
            }
        };
        let other_only = if self.rng.random_bool(0.5) {
            format!(" AND {b}.v IS NOT NULL")
        } else {
            String::new()
        };
        let correlated = if self.rng.random_bool(0.8) { &b } else { &a };
        Sql::both(format!(
            "SELECT {a}.k AS c0, {a}.v AS c1, {b}.w AS c2 FROM {table} {a}, {other} {b} \
             WHERE {a}.k = {b}.k{}{other_only} AND {a}.v {op} \
             (SELECT {aggregate}({x}.v) FROM {table} {x} WHERE {x}.k = {correlated}.k{})",
            local(&a, outer_local),
            local(&x, inner_local),
        ))
    }

    /// A random boolean expression over `scope`, possibly NULL: `depth`
    /// levels of subqueries at most, `connectives` of `AND`, `OR`, `NOT`.
    pub fn predicate_over(&mut self, table: &'static str, depth: usize) -> Sql {
        let scope = Scope::default().with(Source {
            datafusion: table.to_string(),
            sqlite: table.to_string(),
            grouped: false,
        });
        self.predicate(&scope, depth, 2)
    }

    /// A value for `SET v = ...` of an `UPDATE` of `table`, whose
    /// subqueries do not read `table`.
    pub fn assigned_value(&mut self, table: &'static str) -> Sql {
        let scope = Scope::default().with(Source {
            datafusion: table.to_string(),
            sqlite: table.to_string(),
            grouped: false,
        });
        self.avoid = Some(table);
        let value = self.scalar(&scope, 1);
        self.avoid = None;
        value
    }

    fn predicate(&mut self, scope: &Scope, depth: usize, connectives: usize) -> Sql {
        let choice = self.rng.random_range(0..100);
        match choice {
            0..=29 => self.comparison(scope, depth),
            30..=37 => {
                let value = self.scalar(scope, depth);
                if self.rng.random_bool(0.5) {
                    sql!("({} IS NULL)", value)
                } else {
                    sql!("({} IS NOT NULL)", value)
                }
            }
            38..=43 if connectives > 0 => {
                let inner = self.predicate(scope, depth, connectives - 1);
                sql!("(NOT {})", inner)
            }
            44..=59 if connectives > 0 => {
                let left = self.predicate(scope, depth, connectives - 1);
                let right = self.predicate(scope, depth, connectives - 1);
                if choice < 52 {
                    sql!("({} AND {})", left, right)
                } else {
                    sql!("({} OR {})", left, right)
                }
            }
            60..=71 if depth > 0 => self.exists(scope, depth),
            72..=85 if depth > 0 => self.in_subquery(scope, depth),
            86..=99 if depth > 0 => self.quantified(scope),
            _ => self.comparison(scope, depth),
        }
    }

    fn comparison(&mut self, scope: &Scope, depth: usize) -> Sql {
        let left = self.scalar(scope, depth);
        let right = self.scalar(scope, depth);
        let op = Sql::both(self.comparison_op());
        sql!("({} {} {})", left, op, right)
    }

    fn comparison_op(&mut self) -> &'static str {
        COMPARISONS[self.rng.random_range(0..COMPARISONS.len())]
    }

    /// `[NOT] EXISTS (...)` over a body that selects a constant, an
    /// aggregate without `GROUP BY` (one row, always), or groups.
    fn exists(&mut self, scope: &Scope, depth: usize) -> Sql {
        let (_, inner, from, filter) = self.subquery_from(scope, depth, false);
        let inner_name = source_name(&inner);
        let body = match self.rng.random_range(0..10) {
            0..=5 => sql!("SELECT 1 FROM {}{}", from, filter),
            6..=7 => sql!("SELECT count(*) FROM {}{}", from, filter),
            8 => {
                let threshold = Sql::both(self.rng.random_range(0..3).to_string());
                sql!(
                    "SELECT count(*) FROM {}{} HAVING count(*) = {}",
                    from,
                    filter,
                    threshold
                )
            }
            _ => sql!(
                "SELECT {}.k FROM {}{} GROUP BY {}.k HAVING count(*) > 1",
                inner_name,
                from,
                filter,
                inner_name
            ),
        };
        if self.rng.random_bool(0.3) {
            sql!("(NOT EXISTS ({}))", body)
        } else {
            sql!("(EXISTS ({}))", body)
        }
    }

    /// `x [NOT] IN (SELECT e ...)`.
    fn in_subquery(&mut self, scope: &Scope, depth: usize) -> Sql {
        let needle = self.scalar(scope, depth - 1);
        let (inner_scope, _, from, filter) = self.subquery_from(scope, depth, false);
        let body = if self.rng.random_bool(0.15) {
            sql!("SELECT count(*) FROM {}{}", from, filter)
        } else {
            let value = self.scalar(&inner_scope, 0);
            sql!("SELECT {} FROM {}{}", value, from, filter)
        };
        if self.rng.random_bool(0.45) {
            sql!("({} NOT IN ({}))", needle, body)
        } else {
            sql!("({} IN ({}))", needle, body)
        }
    }

    /// `x op ANY (...)` or `x op ALL (...)`; in SQLite, their definition.
    ///
    /// DataFusion plans each as two or three `EXISTS` over copies of the
    /// subquery, so the subquery holds no further subquery here: nested,
    /// they take seconds to plan in a debug build.
    fn quantified(&mut self, scope: &Scope) -> Sql {
        // SQLite's form evaluates the needle inside the subquery, where an
        // aggregate of the grouped query it reads is out of place
        let needle = match self.rng.random_range(0..3) {
            0 => Sql::both(self.literal()),
            1 => self.column(scope),
            _ => {
                let column = self.column(scope);
                let literal = Sql::both(self.literal());
                sql!("({} + {})", column, literal)
            }
        };
        let (inner_scope, _, from, filter) = self.subquery_from(scope, 1, true);
        let value = self.scalar(&inner_scope, 0);
        let op = self.comparison_op();
        let any = self.rng.random_bool(0.5);
        let quantifier = if any { "ANY" } else { "ALL" };
        let datafusion = format!(
            "({} {op} {quantifier} (SELECT {} FROM {}{}))",
            needle.datafusion, value.datafusion, from.datafusion, filter.datafusion
        );
        let condition = if filter.sqlite.is_empty() {
            String::new()
        } else {
            format!(
                "{} AND ",
                filter.sqlite.trim_start().trim_start_matches("WHERE ")
            )
        };
        let compared = format!("({} {op} {})", needle.sqlite, value.sqlite);
        let exists = |test: &str| {
            format!(
                "EXISTS (SELECT 1 FROM {} WHERE {condition}{test})",
                from.sqlite
            )
        };
        let sqlite = if any {
            format!(
                "(CASE WHEN {} THEN 1 WHEN {} THEN NULL ELSE 0 END)",
                exists(&compared),
                exists(&format!("{compared} IS NULL"))
            )
        } else {
            format!(
                "(CASE WHEN {} THEN 0 WHEN {} THEN NULL ELSE 1 END)",
                exists(&format!("NOT {compared}")),
                exists(&format!("{compared} IS NULL"))
            )
        };
        Sql { datafusion, sqlite }
    }

    /// The `FROM` of a subquery under `scope` (a table, or now and then a
    /// correlated derived table or a join of two), the scope inside it, its
    /// first source, and its `WHERE` (or nothing). With `apart_in_sqlite`,
    /// SQLite's text names the subquery's table apart from every outer one.
    fn subquery_from(
        &mut self,
        scope: &Scope,
        depth: usize,
        apart_in_sqlite: bool,
    ) -> (Scope, Source, Sql, Sql) {
        let (source, mut from) = if depth > 1 && self.rng.random_bool(0.15) {
            self.derived_source(scope, depth - 1)
        } else {
            self.table_source(apart_in_sqlite)
        };
        let mut inner = scope.with(source.clone());
        // A join inside the subquery, its `ON` reading both sides and the
        // outer queries (a correlation on the null-supplying side of a LEFT
        // JOIN among them)
        if self.rng.random_bool(0.15) {
            let (right, right_from) = self.aliased_source();
            inner = inner.with(right);
            let on = self.predicate(&inner, 0, 1);
            let kind = Sql::both(if self.rng.random_bool(0.5) {
                "JOIN"
            } else {
                "LEFT JOIN"
            });
            from = sql!("{} {} {} ON {}", from, kind, right_from, on);
        }
        let filter = if self.rng.random_bool(0.85) {
            let predicate = self.predicate(&inner, depth - 1, 1);
            sql!(" WHERE {}", predicate)
        } else {
            Sql::both("")
        };
        (inner, source, from, filter)
    }

    /// `(SELECT a.k, a.v, a.w FROM t a WHERE p) d`, `p` correlated to
    /// `scope`, now and then a set operation of two such selections.
    fn derived_source(&mut self, scope: &Scope, depth: usize) -> (Source, Sql) {
        let selection = |generator: &mut Self| {
            let (inner, from) = generator.aliased_source();
            let inner_name = source_name(&inner);
            let predicate = generator.predicate(&scope.with(inner), depth, 1);
            sql!(
                "SELECT {}.k, {}.v, {}.w FROM {} WHERE {}",
                inner_name,
                inner_name,
                inner_name,
                from,
                predicate
            )
        };
        let mut body = selection(self);
        if self.rng.random_bool(0.3) {
            let operator = Sql::both(
                ["UNION ALL", "UNION", "EXCEPT", "INTERSECT"]
                    [self.rng.random_range(0..4)],
            );
            let other = selection(self);
            body = sql!("{} {} {}", body, operator, other);
        }
        let name = self.fresh("d");
        let from = sql!("({}) {}", body, Sql::both(name.clone()));
        let source = Source {
            datafusion: name.clone(),
            sqlite: name,
            grouped: false,
        };
        (source, from)
    }

    /// A table under its own name (now and then) or an alias; with
    /// `apart_in_sqlite`, always an alias in SQLite's text.
    fn table_source(&mut self, apart_in_sqlite: bool) -> (Source, Sql) {
        let table = self.table();
        let datafusion = if self.rng.random_bool(0.4) {
            table.to_string()
        } else {
            self.fresh("a")
        };
        let sqlite = if apart_in_sqlite && datafusion == table {
            self.fresh("s")
        } else {
            datafusion.clone()
        };
        let item = |name: &str| {
            if name == table {
                table.to_string()
            } else {
                format!("{table} {name}")
            }
        };
        let from = Sql {
            datafusion: item(&datafusion),
            sqlite: item(&sqlite),
        };
        let source = Source {
            datafusion,
            sqlite,
            grouped: false,
        };
        (source, from)
    }

    fn aliased_source(&mut self) -> (Source, Sql) {
        let table = self.table();
        let name = self.fresh("a");
        let source = Source {
            datafusion: name.clone(),
            sqlite: name.clone(),
            grouped: false,
        };
        (source, Sql::both(format!("{table} {name}")))
    }

    fn table(&mut self) -> &'static str {
        loop {
            let table = TABLES[self.rng.random_range(0..TABLES.len())];
            if Some(table) != self.avoid {
                return table;
            }
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    /// A random integer expression over `scope`, possibly NULL, with
    /// `depth` levels of subqueries at most.
    fn scalar(&mut self, scope: &Scope, depth: usize) -> Sql {
        let grouped_level = scope.innermost().is_some_and(|source| source.grouped);
        match self.rng.random_range(0..100) {
            0..=11 if grouped_level => self.grouped_aggregate(scope),
            0..=39 => self.column(scope),
            40..=47 => Sql::both(self.literal()),
            48..=55 => {
                let column = self.column(scope);
                let literal = Sql::both(self.literal());
                sql!("({} + {})", column, literal)
            }
            56..=61 => {
                let column = self.column(scope);
                let literal = Sql::both(self.literal());
                sql!("COALESCE({}, {})", column, literal)
            }
            62..=66 => {
                let column = self.column(scope);
                let literal = Sql::both(self.literal());
                sql!("NULLIF({}, {})", column, literal)
            }
            67..=70 => Sql {
                datafusion: "CAST(NULL AS INT)".into(),
                sqlite: "NULL".into(),
            },
            71..=76 if depth > 0 => {
                let condition = self.predicate(scope, depth - 1, 1);
                let then = self.scalar(scope, depth - 1);
                let otherwise = self.scalar(scope, depth - 1);
                sql!(
                    "(CASE WHEN {} THEN {} ELSE {} END)",
                    condition,
                    then,
                    otherwise
                )
            }
            77..=99 if depth > 0 => self.aggregate_subquery(scope, depth),
            _ => self.column(scope),
        }
    }

    /// `(SELECT agg(...) FROM ... WHERE ...)`: one row, always.
    fn aggregate_subquery(&mut self, scope: &Scope, depth: usize) -> Sql {
        let (inner_scope, inner, from, filter) = self.subquery_from(scope, depth, false);
        let inner_name = source_name(&inner);
        // The argument reads the subquery's own table: an aggregate of outer
        // columns only is one of the outer query in SQL
        let aggregate = match self.rng.random_range(0..5) {
            0 => Sql::both("count(*)"),
            choice => {
                let column = Sql::both(COLUMNS[self.rng.random_range(0..COLUMNS.len())]);
                let argument = if self.rng.random_bool(0.7) {
                    sql!("{}.{}", inner_name, column)
                } else {
                    let other = self.scalar(&inner_scope, 0);
                    sql!("({}.{} + {})", inner_name, column, other)
                };
                let function = ["count", "sum", "min", "max"][choice - 1];
                sql!("{}({})", Sql::both(function), argument)
            }
        };
        // Beside it, at times, an aggregate of an enclosing grouped query's
        // columns only, which that query computes
        let aggregate = match inner_scope
            .visible()
            .into_iter()
            .find(|source| source.grouped)
            .cloned()
        {
            Some(grouped) if self.rng.random_bool(0.3) => {
                let name = source_name(&grouped);
                let column = Sql::both(COLUMNS[self.rng.random_range(0..COLUMNS.len())]);
                let function =
                    ["count", "sum", "min", "max"][self.rng.random_range(0..4)];
                sql!(
                    "({} + {}({}.{}))",
                    aggregate,
                    Sql::both(function),
                    name,
                    column
                )
            }
            _ => aggregate,
        };
        sql!("(SELECT {} FROM {}{})", aggregate, from, filter)
    }

    /// An aggregate of the grouped query `scope` is the innermost level of.
    fn grouped_aggregate(&mut self, scope: &Scope) -> Sql {
        let source = scope.innermost().expect("a grouped level");
        let name = source_name(source);
        let column = Sql::both(COLUMNS[self.rng.random_range(0..COLUMNS.len())]);
        match self.rng.random_range(0..4) {
            0 => Sql::both("count(*)"),
            1 => sql!("sum({}.{})", name, column),
            2 => sql!("min({}.{})", name, column),
            _ => sql!("count({}.{})", name, column),
        }
    }

    /// A column of a source `scope` reaches: mostly the innermost, else any
    /// enclosing one (a correlation).
    fn column(&mut self, scope: &Scope) -> Sql {
        let visible = scope.visible();
        if visible.is_empty() {
            return Sql::both(self.literal());
        }
        let source = if self.rng.random_bool(0.55) {
            visible[0]
        } else {
            visible[self.rng.random_range(0..visible.len())]
        };
        let column = if source.grouped {
            "k"
        } else {
            COLUMNS[self.rng.random_range(0..COLUMNS.len())]
        };
        let name = source_name(source);
        sql!("{}.{}", name, Sql::both(column))
    }

    fn literal(&mut self) -> String {
        self.rng.random_range(-1..=4).to_string()
    }
}

fn source_name(source: &Source) -> Sql {
    Sql {
        datafusion: source.datafusion.clone(),
        sqlite: source.sqlite.clone(),
    }
}
